"""A compiled chunk's graph called without Dynamo's per-call work (the per-tensor fused path, `FusedPlan`).

A call of a `torch.compile`d function runs Dynamo's frame evaluation, its guards over every input and the
bytecode that flattens the arguments, then AOT Autograd's wrapper, then Inductor's graph. Over a chunk of
16 small tensors on 2 cores that is about 180 µs, of which the graph with its wrapper takes about 80
(torch 2.13). A `FusedPlan` passes the same parameters and state, step after step, and checks that itself
(`FusedPlan.fits`); so once Dynamo has traced a graph, the plan calls the graph that Inductor compiled, with
the arguments formed as Dynamo's bytecode forms them:

    Inductor   the `torch.compile` backend that keeps each graph it compiles, with the call that traced it
    Graph      how one graph's arguments are formed from a call's (each tensor by its place, each symbolic
               size from the first tensor dimension that carries it, each integer the chain's closure
               holds as traced), and `Graph.admits`, the checks that stand in for Dynamo's guards
    Compiled   the compiled function: called as Dynamo calls it, and `Compiled.graph_for`

`Graph.admits` runs once per chunk of a plan: the dtype, device, rank, contiguity and requires_grad of each
tensor, each static size, each symbol's sizes equal and at least 2 (a size 0 or 1 goes through Dynamo), every
guard the trace put on the sizes true for them (`Graph._guards_hold`: a branch on a shape, a size Inductor
specialised), no tensor given twice and no storage shared between two tensors. Per step the plan checks only
the gradients, which are new tensors each step (`grads_own`). A graph that cannot be formed this way (a name
Dynamo gave that is not a place in the arguments, a size that is an expression) is never called directly; nor
is one under a dispatch or torch-function mode, or inside a Dynamo trace: those calls go through Dynamo.

Measured side by side on 2 cores (benchmarks/bench_optimizers.py's parameters, 25M float32 in 100 or 1,000
tensors): oneflow.AdamW fused per tensor ran at 0.83x torch's fused AdamW's speed with 100 tensors and 0.69x
with 1,000 through Dynamo; called directly, at 0.94x and 0.89x.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Sequence

import torch
from torch.utils._pytree import tree_leaves

from optreg.stages.openmp import gil_free_kernels

#: the names of the compiled step's arguments, in order (`execute._compiled`'s `step_chunk`)
ARGUMENTS = ("params", "u", "states", "packed", "extra")

_PLACE = re.compile(r"l_(%s)((?:_\d+)*)_" % "|".join(ARGUMENTS))

_TRACING = threading.local()


class Unformable(Exception):
    """A graph whose arguments `Graph` cannot form."""


def _place(name: str) -> str | None:
    """Dynamo's name of a tensor argument as a Python expression over the arguments: l_states_1_3_ → states[1][3]."""
    m = _PLACE.fullmatch(name)
    if m is None:
        return None
    return m.group(1) + "".join(f"[{i}]" for i in m.group(2).split("_")[1:])


def _hint(value: Any) -> int:
    """An integer argument's value as traced; of a SymInt, its hint (`int()` would add a guard that
    specialises it to this value)."""
    return value.node.hint if isinstance(value, torch.SymInt) else int(value)


def _symbol(value: Any) -> str | None:
    """The symbol of a symbolic size or integer (None for an int); an expression is `Unformable`."""
    if not isinstance(value, torch.SymInt):
        return None
    expr = value.node._expr        # as traced: a size Inductor specialised keeps its symbol (and its guard)
    if not expr.is_Symbol:
        raise Unformable(f"a size {expr} that is an expression")
    return str(expr)


class Graph:
    """One graph that Dynamo traced for a compiled step, the function Inductor compiled for it, and how to
    form that function's arguments from a call's (`form`)."""

    def __init__(self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any], fn: Any, args: tuple) -> None:
        self.fn = fn
        placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
        fakes = [node.meta.get("example_value") for node in placeholders]
        #: per tensor argument: its index in the formed arguments, dtype, device, requires_grad and per
        #: dimension an int or a symbol
        self.tensors: list[tuple[int, torch.dtype, torch.device, bool, tuple[Any, ...]]] = []
        first: dict[str, str] = {}     # symbol → the first tensor dimension that carries it
        items: list[str | None] = []
        self.shape_env = None
        for i, (node, fake) in enumerate(zip(placeholders, fakes)):
            if isinstance(fake, torch.Tensor):
                place = _place(node.name)
                if place is None:
                    raise Unformable(f"an argument {node.name} that is not a place in {ARGUMENTS}")
                dims = tuple(_symbol(s) or _hint(s) for s in fake.size())
                for d, s in enumerate(dims):
                    if isinstance(s, str):
                        first.setdefault(s, f"{place}.size({d})")
                self.tensors.append((i, fake.dtype, fake.device, fake.requires_grad, dims))
                self.shape_env = fake.fake_mode.shape_env
            items.append(place if isinstance(fake, torch.Tensor) else None)
        #: per integer the call does not carry: (symbol or None, its value as traced)
        self.constants: list[tuple[str | None, int]] = []
        for i, (node, fake, example) in enumerate(zip(placeholders, fakes, example_inputs)):
            if items[i] is not None:
                continue
            if not isinstance(fake, (int, torch.SymInt)) or isinstance(fake, bool):
                raise Unformable(f"an argument {node.name} of type {type(fake).__name__}")
            symbol = _symbol(fake)
            if symbol in first and not node.name.startswith("l_"):
                items[i] = first[symbol]
            else:                  # an integer of the chain's closure (`layout`), the same every call
                self.constants.append((symbol, _hint(example)))
                items[i] = repr(_hint(example))
        if not self.tensors or self.shape_env is None or self.shape_env.deferred_runtime_asserts:
            raise Unformable("no tensor, or assertions on data-dependent sizes")
        #: the function from a call's arguments to the graph's (what Dynamo's bytecode does, without guards)
        self.form = eval(f"lambda {', '.join(ARGUMENTS)}=(): [{', '.join(items)}]")  # noqa: S307 (our own text)
        formed = self.form(*args)
        if len(formed) != len(example_inputs) or not all(
                a is b if isinstance(b, torch.Tensor) else a == _hint(b) for a, b in zip(formed, example_inputs)):
            raise Unformable("the formed arguments are not the ones Dynamo passed")
        if not self.admits(args):
            raise Unformable("the tracing call itself is not admitted")

    def admits(self, args: tuple) -> bool:
        """Whether a call with `args` meets what the graph was traced for (Dynamo's guards, for the tensors a
        plan passes): see the module's docstring."""
        try:
            formed = self.form(*args)
        except (IndexError, TypeError, AttributeError):   # another structure: a 0-d tensor where it had sizes
            return False
        sizes: dict[str, int] = {}
        for i, dtype, device, requires_grad, dims in self.tensors:
            t = formed[i]
            if (type(t) is not torch.Tensor or t.dtype != dtype or t.device != device
                    or t.requires_grad != requires_grad or t.dim() != len(dims) or not t.is_contiguous()):
                return False
            for s, n in zip(dims, t.shape):
                if isinstance(s, int):
                    if n != s:
                        return False
                elif n < 2 or sizes.setdefault(s, n) != n:
                    return False
        for symbol, value in self.constants:
            if symbol is not None and sizes.setdefault(symbol, value) != value:
                return False
        if not self._guards_hold(sizes):
            return False
        tensors = [t for t in tree_leaves(args) if isinstance(t, torch.Tensor)]
        storages = {t.untyped_storage().data_ptr() for t in tensors}
        return len(storages) == len(tensors) and len({id(t) for t in tensors}) == len(tensors)

    def _guards_hold(self, sizes: dict[str, int]) -> bool:
        """Every guard the trace put on the sizes, true for these sizes: a branch on a shape (Adafactor's
        factoring), a size Inductor specialised (Eq(s0, 16)), two sizes the operations made equal."""
        import sympy

        values: dict[Any, Any] = {}
        for guard in self.shape_env.guards:
            for symbol in guard.expr.free_symbols:
                if symbol not in values:
                    values[symbol] = self._value(symbol, sizes)
                if values[symbol] is None:
                    return False
            if guard.expr.xreplace(values) is not sympy.true:
                return False
        return True

    def _value(self, symbol: Any, sizes: dict[str, int]) -> Any:
        """A symbol's value: a size of this call's tensors, or what the trace replaced it with, in those
        sizes (None when neither gives one)."""
        if str(symbol) in sizes:
            return sizes[str(symbol)]
        replaced = self.shape_env.replace(symbol)
        if replaced == symbol:
            return None
        replaced = replaced.xreplace({s: sizes[str(s)] for s in replaced.free_symbols if str(s) in sizes})
        return None if replaced.free_symbols else replaced

    def __call__(self, args: tuple) -> Any:
        return self.fn(*self.form(*args))


def grads_own(grads: Sequence[torch.Tensor]) -> bool:
    """Whether a step's gradients, new tensors each step, may go to a chunk's graph admitted once
    (`Graph.admits`): plain tensors that own their storage, not views, which may share one (DDP's
    gradient_as_bucket_view). Their dtype, device and shape are their parameters' (autograd's rule)."""
    return all(type(g) is torch.Tensor and g._base is None for g in grads)


class Inductor(torch._TorchCompileInductorWrapper):
    """torch.compile's Inductor backend (the same options and compile) that hands each graph it compiles,
    with its example inputs, to the `Compiled` call that traced it; `gpu`: more options for a graph whose
    inputs are on a GPU (`on_gpu`)."""

    def __init__(self, mode, options: dict[str, Any], dynamic: bool, gpu: dict[str, Any] | None = None) -> None:
        super().__init__(mode, options, dynamic)
        self.gpu = dict(gpu or {})

    def __call__(self, gm, example_inputs, **kwargs):
        if self.gpu and on_gpu(example_inputs):
            from torch._inductor.compile_fx import compile_fx

            fn = compile_fx(gm, example_inputs, config_patches={**self.config, **self.gpu})
        else:
            fn = super().__call__(gm, example_inputs, **kwargs)
        traced = getattr(_TRACING, "graphs", None)
        if traced is not None:
            traced.append((gm, list(example_inputs), fn))
        return fn


def on_gpu(example_inputs) -> bool:
    """Whether a graph's inputs are on a GPU (any tensor on a device other than the CPU and the meta device)."""
    return any(isinstance(x, torch.Tensor) and x.device.type not in ("cpu", "meta") for x in example_inputs)


class Compiled:
    """A chunk's step compiled with `torch.compile` (dynamic shapes, fullgraph, Inductor with `options`, and
    `gpu` beside them for a graph on a GPU), which keeps a `Graph` for each graph Dynamo traces through it."""

    def __init__(self, step_chunk, options: dict[str, Any], gpu: dict[str, Any] | None = None) -> None:
        self.fn = torch.compile(step_chunk, dynamic=True, fullgraph=True,
                                backend=Inductor(None, options, True, gpu))
        self.graphs: list[Graph] = []

    def __call__(self, *args):
        outer = getattr(_TRACING, "graphs", None)
        _TRACING.graphs = traced = []
        try:
            with gil_free_kernels():   # the kernels a trace loads let go of the interpreter's lock
                out = self.fn(*args)
        finally:
            _TRACING.graphs = outer
        for gm, example_inputs, fn in traced:
            try:
                self.graphs.append(Graph(gm, example_inputs, fn, args))
            except Unformable:
                pass
        return out

    def graph_for(self, args: tuple) -> Graph | None:
        """The one graph that admits `args` (None when none does, or more than one)."""
        found = [g for g in list(self.graphs) if g.admits(args)]
        return found[0] if len(found) == 1 else None

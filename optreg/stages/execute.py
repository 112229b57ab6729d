"""The three executions of a chain over one param group: eager, foreach and fused.

    eager    per tensor, Python-float scalars (the default; what torch calls the single-tensor path);
             on a CPU, the small tensors shared among torch's threads (`run_eager`)
    foreach  every tensor of a (dtype, device) bucket at once with `torch._foreach_*`
    fused    the chain compiled with `torch.compile` (Inductor: C++/OpenMP on a CPU, Triton on a
             GPU), traced per tensor over chunks of CHUNK tensors with dynamic shapes, so that a
             model's many shapes share one compiled kernel; host scalars are packed into one tensor
             so that a changing lr or step does not recompile. One compile per chain, static
             settings and dtype; Inductor's on-disk cache keeps it across processes. The compile runs
             in the background while the steps run eager (`Compile`).
"""

from __future__ import annotations

import contextlib
import functools
import numbers
import operator
import os
import queue
import sys
import threading
import time
import warnings
from typing import Any, Mapping, Sequence

import torch

from optreg.errors import ConfigError
from optreg.stages.chain import Batch, Chain
from optreg.stages.direct import Compiled, grads_own
from optreg.stages.openmp import one_thread, share
from optreg.stages.state_codec import BLOCK_SIZE, is_scale, whole_blocks
from optreg.stages.ops import (EAGER, EAGER_LOOPS, FOREACH, PLAIN, PLAIN_EAGER, STACKED, TRACED, Rows, Stacked, Traced,
                               row_squares, rows_of_ones, unobserved)

#: tensors per compiled call under `fused`: the call overhead is paid once per chunk (a larger
#: chunk compiles longer; OPTREG_FUSED_CHUNK overrides it, e.g. 1 in a test suite)
CHUNK = int(os.environ.get("OPTREG_FUSED_CHUNK", "16"))

_LOCK = threading.Lock()
_COMPILED: dict[Any, Any] = {}
_SCRATCH: dict[Any, torch.Tensor] = {}


# ---------------------------------------------------------------------------------------------
# host scalars
# ---------------------------------------------------------------------------------------------


def _is_scalar(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def split_hp(hp: Mapping[str, Any]) -> tuple[tuple[tuple[str, Any], ...], tuple[tuple[str, Any], ...], list[float]]:
    """(static items, layout, values): numbers (and tuples of numbers) go into one packed tensor,
    everything else (flags, strings, None) is static and part of the compile key."""
    static, layout, values = [], [], []
    for key in sorted(hp):
        v = hp[key]
        if _is_scalar(v):
            layout.append((key, len(values)))
            values.append(float(v))
        elif isinstance(v, (tuple, list)) and v and all(_is_scalar(x) for x in v):
            layout.append((key, tuple(range(len(values), len(values) + len(v)))))
            values.extend(float(x) for x in v)
        elif v is None or isinstance(v, (bool, str)) or (isinstance(v, tuple) and all(
                x is None or isinstance(x, (bool, str)) for x in v)):
            static.append((key, v))
        # other values (schedules, callables) are configuration the chain does not read
    return tuple(static), tuple(layout), values


# ---------------------------------------------------------------------------------------------
# eager and foreach
# ---------------------------------------------------------------------------------------------


#: eager runs consecutive small tensors together, up to this many elements per call of the chain: the Python
#: cost of a stage is paid once for them, and temporaries stay small (a float32 one of 1 MiB: a core's L2 cache
#: on the machines measured). Measured side by side on 2 cores (AMD EPYC, AVX-512), one thread, 1,000 tensors of
#: 25,000 elements after an OpenMP team's region: 1 << 18 stepped oneflow.SGD, AdamW and Adagrad in 0.93x, 0.96x
#: and 0.99x the time of 1 << 16 (the bound before), 1 << 20 in 0.93x, 1.06x and 1.01x
EAGER_ELEMENTS = 1 << 18

#: ATen runs an element-wise operation on one thread below this many elements (at::internal::GRAIN_SIZE)
GRAIN = 32768


def run_eager(chain: Chain, params: Sequence[torch.Tensor], grads: Sequence[torch.Tensor],
              states: Sequence[Mapping[str, torch.Tensor]], hp: Mapping[str, Any]) -> None:
    """Per tensor (torch's single-tensor loop): a large tensor alone, small neighbours with the same
    dtype and state names together, each tensor through the same operations as alone (a stage may
    hand a batch scalars formed for its dtype: `Stage.scalar`; a batch of plain CPU tensors in C++ loops:
    `EagerLoops`), on the calling thread.

    Not taken: the tensors below GRAIN, which ATen steps on one thread, shared among Python threads (each
    on one OpenMP thread, the same operations, the same numbers). Up to 2026-12-07 eager did so once they held
    a million elements; measured side by side on 2 cores (AMD EPYC, AVX-512, torch 2.13), 1,000 tensors of 25,000
    elements, it took 1.05-1.12x the time of one thread for oneflow.SGD, AdamW and Adagrad, whether the step
    came after an OpenMP team's region (whose idle thread spins on the other core for a few ms, as after a
    backward pass) or after 30 ms of rest: both threads held the interpreter's lock between their many small
    kernels and mostly waited on each other. (A bare Python loop of the same kernels on two threads took 0.7x
    the time of one, but only after rest.) The earlier gains (1.3-1.8x torch's for-loop) were measured while
    libgomp throttled every team (`_compile_loop`), torch's for-loop included."""
    names = chain.state_names
    # plain CPU tensors outside any mode: checked here, not per operation (`PlainEager`), and a batch loops over
    # its tensors in C++ (`EagerLoops`); a subclass (DTensor, say) or a mode that sees each operation: `Eager`
    plain = unobserved() and all(type(p) in PLAIN and p.is_cpu for p in params) and all(type(g) in PLAIN for g in grads)
    alone, loops = (PLAIN_EAGER, EAGER_LOOPS) if plain else (EAGER, EAGER)
    start, n = 0, len(params)
    while start < n:
        first = states[start]
        keys, dtype = first.keys(), params[start].dtype
        end, size = start + 1, params[start].numel()
        # neighbours join while they fit, with the same dtype and the same state names (a cheap test per
        # tensor: this loop runs every step over every tensor)
        while end < n:
            size += params[end].numel()
            if size > EAGER_ELEMENTS or params[end].dtype != dtype or states[end].keys() != keys:
                break
            end += 1
        if end == start + 1:  # a tensor alone (the common case of a large one), without the slices
            chain.apply(Batch([params[start]], [grads[start]], {k: [first[k]] for k in names if k in first},
                              hp, alone))
        else:
            chain.apply(Batch(list(params[start:end]), list(grads[start:end]),
                              {k: [st[k] for st in states[start:end]] for k in names if k in first}, hp, loops))
        start = end


def run_foreach(chain: Chain, params: Sequence[torch.Tensor], grads: Sequence[torch.Tensor],
                states: Sequence[Mapping[str, torch.Tensor]], hp: Mapping[str, Any]) -> None:
    names = chain.state_names
    for idx in _buckets(params, states, names, by_shape=False):
        chain.apply(Batch([params[i] for i in idx], [grads[i] for i in idx],
                          {n: [states[i][n] for i in idx] for n in names if n in states[idx[0]]}, hp, FOREACH))


def _buckets(params, states, names, by_shape: bool, bounds: Sequence[int] = ()) -> list[list[int]]:
    """Indices of tensors that can share one call: same dtype, device, the same state names (and
    the same shape kind when the chain needs shapes; whether a tensor has fewer elements than each of `bounds`)."""
    out: dict[Any, list[int]] = {}
    for i, p in enumerate(params):
        st = states[i]
        key = (p.dtype, p.device, tuple(n for n in names if n in st),
               tuple((st[n].dtype, st[n].device, st[n].dim() == 0) for n in names if n in st))
        if by_shape:
            key += (p.dim(), tuple(st[n].dim() for n in names if n in st))
        if bounds:
            key += tuple(p.numel() < b for b in bounds)
        out.setdefault(key, []).append(i)
    return list(out.values())


# ---------------------------------------------------------------------------------------------
# compiles in the background
# ---------------------------------------------------------------------------------------------


#: "background" (the default): a fused step runs eager until its compile, started on its first step in a thread
#: of its own, is ready; "wait": the first step compiles and waits (OPTREG_COMPILE overrides it)
COMPILE = os.environ.get("OPTREG_COMPILE", "background")

#: a compile still running after this many seconds says so, once
SLOW = 1.0

_QUEUE: "queue.Queue[Compile]" = queue.Queue()
_WORKER: list[threading.Thread] = []   # the compile thread while it runs (`_compile_loop`)
_EXIT_HOOK: list[bool] = []   # whether `_at_exit` is registered
_STARTED: list["Compile"] = []

#: Python's thread switch interval while a compile runs (`sys.setswitchinterval`; restored when none is left):
#: the step's thread, which hands the interpreter to the compile's tracing during each kernel, gets it back
#: after this long instead of the default 5 ms, which a step of a thousand kernels would wait for each time.
#: Measured on 2 cores (AMD EPYC), 25M float32 parameters in 100 tensors, a fresh process and a cold cache, each
#: chain once: the eager steps while the compile ran took 0.57-0.70 s at 1e-5 against 1.45-2.14 s at 2e-4
#: (mindspore.AdaFactor), 0.34-0.38 against 1.17-1.26 (cerebras.Lamb), 0.20-0.22 against 0.53-0.55
#: (oneflow.AdamW); the first step 1.35, 1.32, 0.78 s against 2.66, 1.59, 1.35; the compile finished after
#: 40, 46, 39 s against 39, 55, 35
SWITCH = 1e-5
_SWITCH_SAVED: list[float] = []
#: set at interpreter exit: the compile in flight finishes, the queued ones are dropped (`_at_exit`)
_CLOSING = threading.Event()


class Compile:
    """The compile of a fused step's functions, in the background: `job` calls them once on stand-ins of the
    step's tensors (`standins`: same sizes, strides, dtypes and aliasing, other memory), which traces and
    compiles them for exactly those tensors; until it has, `ready()` is False and the step runs eager (the
    executions agree within 1e-6; the state is the same tensors, so a checkpoint resumes either way).
    Compiles run one at a time in one thread; an error in one is raised by the next `ready()`."""

    def __init__(self, what: str, job) -> None:
        self.what = what
        self.job = job
        self.done = threading.Event()
        self.error: BaseException | None = None
        self.started: float | None = None
        self.said = False

    def ready(self) -> bool:
        """Whether the step can call the compiled functions now (starting the compile on the first call)."""
        if self.done.is_set():
            if self.error is not None:
                raise self.error
            return True
        if COMPILE == "wait":
            return True
        if self.started is None:
            self.started = time.perf_counter()
            _STARTED.append(self)
            with _LOCK:
                if not _SWITCH_SAVED:
                    _SWITCH_SAVED.append(sys.getswitchinterval())
                    sys.setswitchinterval(min(SWITCH, _SWITCH_SAVED[0]))
                _QUEUE.put(self)
                if not _WORKER:   # none, or the last one has ended (`_compile_loop`)
                    if not _EXIT_HOOK:   # registered at the first compile: it runs before the hooks of the
                        import atexit    # script's that came earlier (atexit's order), which may await it

                        atexit.register(_at_exit)
                        _EXIT_HOOK.append(True)
                    _WORKER.append(threading.Thread(target=_compile_loop, name="optreg-compile", daemon=True))
                    _WORKER[0].start()
        elif not self.said and time.perf_counter() - self.started > SLOW:
            self.said = True
            warnings.warn(f"optreg: compiling {self.what} with torch.compile in the background "
                          f"({time.perf_counter() - self.started:.0f} s so far); the steps run eager until it is ready",
                          RuntimeWarning, stacklevel=5)
        return False

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the compile (started or not) to finish; whether it has (True at once when compiles are not
        run in the background: the step compiles)."""
        if self.ready():
            return True
        return self.done.wait(timeout)


def wait_compiles(timeout: float | None = None) -> bool:
    """Wait for every compile started in the background so far; whether they have all finished."""
    deadline = None if timeout is None else time.perf_counter() + timeout
    for task in list(_STARTED):
        left = None if deadline is None else max(0.0, deadline - time.perf_counter())
        if not task.done.wait(left):
            return False
    _STARTED[:] = [t for t in _STARTED if not t.done.is_set()]
    return True


def _at_exit() -> None:
    """At interpreter exit: let the compile in flight finish and drop the queued ones. A daemon thread stopped
    inside the compiler's C++ aborts the process ("terminate called without an active exception"), so a script
    that ends while a compile runs waits for that one compile instead."""
    _CLOSING.set()
    for task in list(_STARTED):
        task.done.wait()


def _compile_loop() -> None:
    """The compile thread: each queued compile in turn (its one call on the stand-ins traces and compiles the
    functions, then runs them once), and it ends when none is left; the next compile starts a new one (`ready`).

    Ending matters: the call's OpenMP team outlives it while its thread lives, and its idle threads count among
    libgomp's managed threads, which then exceed the cores; libgomp throttles the spinning of every team between
    parallel regions then, the main thread's too, so each of a step's many regions wakes sleeping threads.
    Measured on 2 cores (AMD EPYC, torch 2.13), a fused oneflow.LAMB step over 32 tensors of 250,000 elements
    took 17.8-20.3 ms after a compile in a thread that lived on against 10.3-10.4 ms after one on the main thread
    (the same generated code: one Inductor cache entry). The call cannot run on one OpenMP thread instead: Dynamo
    guards on the thread count, and the step would trace again."""
    while True:
        task = _QUEUE.get()
        if _CLOSING.is_set():   # exiting: nothing will step with it
            task.job = None
            task.done.set()
            continue
        try:
            hold()
            with torch.no_grad(), _shape_settings():
                task.job()
        except BaseException as exc:  # noqa: BLE001 - handed to the step that waits for it
            task.error = exc
        finally:
            task.job = None   # it holds the first step's gradients
            with _LOCK:
                last = _QUEUE.empty()
                if last:
                    if _SWITCH_SAVED:
                        sys.setswitchinterval(_SWITCH_SAVED.pop())
                    _WORKER.clear()   # this thread ends: a compile queued from now on starts another
            task.done.set()
        if last:
            return


def hold() -> None:
    """Run by the compile thread before each compile (a test replaces it to hold a compile back)."""


def standins(obj: Any, memo: dict | None = None) -> Any:
    """`obj` (tensors in lists, tuples and dicts) with each tensor replaced by one of the same sizes, strides,
    dtype and storage offset on memory of its own, tensors that share a storage sharing the stand-in's, and
    Dynamo's marks (static sizes) kept: a compiled call on them is traced as it would be on the originals."""
    memo = {} if memo is None else memo
    if isinstance(obj, torch.Tensor):
        storage = obj.untyped_storage()
        key = (storage.data_ptr(), storage.nbytes(), obj.device)
        twin = memo.get(key)
        if twin is None:
            twin = memo[key] = torch.zeros(storage.nbytes(), dtype=torch.uint8, device=obj.device).untyped_storage()
        out = torch.empty(0, dtype=obj.dtype, device=obj.device)
        out.set_(twin, obj.storage_offset(), obj.shape, obj.stride())
        out.__dict__.update(obj.__dict__)
        return out
    if isinstance(obj, (list, tuple)):
        return type(obj)(standins(x, memo) for x in obj)
    if isinstance(obj, dict):
        return {k: standins(v, memo) for k, v in obj.items()}
    return obj


# ---------------------------------------------------------------------------------------------
# fused
# ---------------------------------------------------------------------------------------------


def compile_unavailable() -> str | None:
    """Why `torch.compile` cannot run here, or None when it can."""
    try:
        import torch._dynamo  # noqa: F401
        import torch._inductor  # noqa: F401
    except Exception as exc:  # pragma: no cover - depends on the torch build
        return f"torch.compile is not available in this torch build ({exc})"
    if not torch._dynamo.is_dynamo_supported():  # pragma: no cover - depends on the Python version
        return "torch.compile does not support this Python version"
    import shutil
    import sys

    if sys.platform.startswith("win") and shutil.which("cl") is None:  # pragma: no cover
        return "Inductor needs a C++ compiler (cl.exe) on the PATH"
    if not sys.platform.startswith("win") and shutil.which("g++") is None and shutil.which("c++") is None \
            and shutil.which("clang++") is None:
        return "Inductor needs a C++ compiler (g++ or clang++) on the PATH to compile for the CPU"
    return None


def check_fused() -> None:
    """ConfigError at `fused` when the chain cannot be compiled here (never a silent fallback)."""
    why = compile_unavailable()
    if why is not None:
        raise ConfigError(f"fused=True compiles the update with torch.compile, which cannot run here: {why}; "
                          f"use foreach=True or the default eager execution", "fused")


def _compiled(chain: Chain, static: tuple, layout: tuple, names: tuple[str, ...], flat: bool, width: int,
              part: str = ""):
    """The compiled chain over `width` tensors (CHUNK; 1 for a contiguous group's flat buffers, which is
    the same function as a chunk of one tensor).

    part="before": the chain's update is written into a buffer passed after the scalars (`run_rows`)
    part="rows":   over a contiguous group's rows (`Rows`), with the row owners and the parameter count
    part="stacked": over stacks of same-shape slices of a contiguous group (`Stacked`)
    part="recompute": as "", compiled to compute an element-wise value again in each loop that reads it
                   (`_compile`): a plan's chunks of large CPU tensors under a chain with reductions
    otherwise (and stacked), a call over a factored moment's matrices passes the vector of ones of their
    rows after the scalars (`Traced.row_ones`)
    """
    key = (chain.key(), static, layout, names, flat, width, part)
    fn = _COMPILED.get(key)
    if fn is not None:
        return fn
    with _LOCK:
        fn = _COMPILED.get(key)
        if fn is None:
            fixed = dict(static)

            def step_chunk(params, u, states, packed, extra=()):
                hp = dict(fixed)
                for name, where in layout:
                    hp[name] = tuple(packed[i] for i in where) if isinstance(where, tuple) else packed[where]
                ops = STACKED if part.startswith("stacked") else TRACED
                if part == "rows":
                    owner, count, ones, *sums = extra
                    ops = Rows(owner, count, ones, tuple(zip((u[0], params[0]), sums)))
                elif part != "before" and extra:   # over matrices: the ones of their rows (`Traced.row_ones`)
                    ops = (Stacked if part.startswith("stacked") else Traced)(extra[0])
                b = Batch(list(params), list(u), dict(zip(names, (list(s) for s in states))), hp, ops)
                chain.apply(b)
                if part == "before":
                    out, ones = extra
                    # times a (rows, 1) column of ones: Inductor then keeps the update's loop over (rows, BLOCK)
                    # and fuses into it the row sums of squares that the norms take (over a flattened loop
                    # they would be passes of their own, and the update a buffer allocated anew)
                    update = b.u[0] * ones
                    out.copy_(update)
                    return row_squares(update), row_squares(b.params[0])

            # a code object of its own: Dynamo keeps its compiled entries (and its recompile limit, 8) per
            # code object, which every chain's step_chunk would otherwise share
            step_chunk.__code__ = step_chunk.__code__.replace()
            fn = _compile(step_chunk, recompute=part == "recompute")
            _COMPILED[key] = fn
    return fn


def _compile(step_chunk, recompute: bool = False):
    """`torch.compile` of a chain's traced step, whole (fullgraph: a read of a tensor's value into Python,
    which would break the graph, is an error), with dynamic shapes; a `FusedPlan` calls its graphs directly
    (`Compiled.graph_for`).

    dynamic_threads: every loop gets an OpenMP region and the runtime decides; otherwise Inductor decides from
    the sizes of the first call and a bucket that starts small stays serial. cpp.threads: the thread count
    Inductor writes the code for (`codegen_threads`). size_asserts off: the layout of every input is checked
    already, by Dynamo's guards each call, or, called directly, by `Graph.admits` once per chunk of a plan whose
    tensors stay the same (`FusedPlan.fits`).

    recompute: Inductor's realize_reads_threshold at REALIZE_READS instead of its 4 (how many loops may read an
    element-wise value before Inductor stores it in a buffer of its own). A LAMB's update is read by its norm and
    by the step: stored, it is a temporary as large as the chunk's tensors, which glibc's malloc gives back to the
    system after each call and each call pages in again; computed again, the step makes as many passes over
    memory, with the same numbers bit for bit. Measured side by side on 2 cores (AMD EPYC): a fused oneflow.LAMB
    step over 100 tensors of 250,000 elements took 0.51x the time, cerebras.Lamb 0.54x; AdamW, mindspore.LARS and
    the Adafactors the same time. Over 1,000 tensors of 26,600 elements (one thread a chunk) oneflow.LAMB took
    1.19x as long, and Inductor failed to compile a contiguous group's rows with it: so only a plan's chunks of
    tensors at or above `recompute_from` on a CPU compile this way.

    combo_kernels (`GPU`, for a graph on a GPU only): Inductor joins the kernels of a chunk's tensors, which share
    no data, into few launches (up to 8 kernels a launch). Its scheduler leaves a CPU's loops as they are, but its
    pass over them made the test suite's compiles slower (tests/test_contiguous.py on a cold cache: 431 s against
    387). Measured on NVIDIA H200s (torch 2.11, Triton 3.6), 250M float32 parameters, fused per tensor in chunks
    of 16, before and after: over 1,000 tensors oneflow.AdamW 12.1-12.6 ms against 32.7, the LAMBs 34-48 ms
    against 75-90, the Adafactors 72-77 against 135-195; over 100 tensors the LAMBs and Adafactors 4.0-15.9 ms
    against 8.8-30.0, oneflow.AdamW 1.86-2.95 ms against 2.26 (README, "On a GPU"; `benchmarks/bench_gpu.py
    --inductor combo_kernels=True`)."""
    options = {"cpp.dynamic_threads": True, "cpp.threads": codegen_threads(), "size_asserts": False}
    if recompute:
        options["realize_reads_threshold"] = REALIZE_READS
    return Compiled(step_chunk, options, GPU)


#: Inductor's options for a fused compile of a graph on a GPU, beside the others (`_compile`)
GPU = {"combo_kernels": True}


#: Inductor's realize_reads_threshold where a chain compiles to compute its values again (`_compile`)
REALIZE_READS = 16


def codegen_threads() -> int:
    """The thread count Inductor generates a compiled step's CPU code for: torch's, at least 2, whatever the
    calling thread's OpenMP limit when it compiles (`optreg.stages.openmp`).

    Under `cpp.dynamic_threads` Inductor opens each loop's parallel region with the runtime's team, but still
    writes the code for `torch.get_num_threads()` as it is at the compile: for one thread it leaves out the
    `omp single` around a store that one thread must make (an Adafactor's step count: each thread of a team of
    two added one), and Inductor's cache key leaves the count out. A chunk of small tensors first compiled on
    one thread (`FusedPlan.shared`) then stepped wrongly wherever its graph ran on two, in this process or from
    the cache in another (torch 2.13)."""
    return max(2, torch.get_num_threads())


def alias(buffer: torch.Tensor, start: int, size: Sequence[int], stride: Sequence[int]) -> torch.Tensor:
    """A strided view of `buffer` that is not an autograd view (every tensor of a compiled call: `flat_alias`)."""
    out = torch.empty(0, dtype=buffer.dtype, device=buffer.device)
    return out.set_(buffer.untyped_storage(), buffer.storage_offset() + start, tuple(size), tuple(stride))


def flat_alias(t: torch.Tensor) -> torch.Tensor:
    """A 1-D tensor on `t`'s memory that is not an autograd view (a 0-d tensor: `t.detach()`).

    Every tensor of a compiled call must look alike to Dynamo's guards: views carry their base, whose
    rank and requires_grad would differ between a matrix, a vector and the padding, and each
    difference would recompile the chain.
    """
    if t.dim() == 0:
        return t.detach()
    return alias(t, 0, (t.numel(),), (1,))


def block_alias(t: torch.Tensor, scale: bool = False) -> torch.Tensor:
    """A tensor whose state int8 stores in blocks, as (blocks, BLOCK_SIZE) rows (its size a multiple of
    BLOCK_SIZE), not an autograd view, the row length static: a compiled step's loops then keep the rows, and
    a block's scale is its row's (`state_codec`); block scales (`scale`) flat, a 0-d tensor detached."""
    if t.dim() == 0 or scale:
        return flat_alias(t)
    out = alias(t, 0, (t.numel() // BLOCK_SIZE, BLOCK_SIZE), (BLOCK_SIZE, 1))
    torch._dynamo.mark_static(out, 1)
    return out


def _scratch(like: torch.Tensor, slot: int, which: int, flat: bool, blocked: bool = False) -> torch.Tensor:
    """A small tensor that pads a chunk (its updates are thrown away); in int8 blocks (`block_alias`), one
    block (1, BLOCK_SIZE) and its one scale (1,)."""
    shape = () if like.dim() == 0 else ((2,) if flat else (2,) * like.dim())
    if blocked and like.dim():
        shape = (1, BLOCK_SIZE) if like.dim() == 2 else (1,)
    key = (like.dtype, like.device, shape, slot, which)
    t = _SCRATCH.get(key)
    if t is None:
        t = _SCRATCH[key] = torch.ones(shape, dtype=like.dtype, device=like.device)
    return t


def shared_below(chain: Chain, hp: Mapping[str, Any]) -> int:
    """Elements below which a CPU chunk of the chain's compiled step runs on one OpenMP thread, the chunks shared
    among Python threads (`optreg.stages.openmp`): GRAIN per loop of the chain's reductions (`Chain.reductions`),
    the bound from which a chunk computes its values again (`recompute_from`); 0 (never) for an element-wise
    chain."""
    return GRAIN * chain.reductions(hp)


def recompute_from(chain: Chain, hp: Mapping[str, Any]) -> int:
    """Elements from which a chunk of the chain's compiled step on a CPU computes its values again rather than
    store them (`_compile`, recompute): where the chunks stop being shared (`shared_below`), 0 (never) for an
    element-wise chain."""
    return shared_below(chain, hp)


class FusedPlan:
    """How one param group's tensors go through the compiled chain: buckets of tensors that share a
    compiled function, split into chunks of CHUNK, with the flat views of the parameters and state
    and the padding made once. Reused while the group's tensors and state stay the same objects."""

    def __init__(self, chain: Chain, params: Sequence[torch.Tensor], states: Sequence[Mapping[str, torch.Tensor]],
                 hp: Mapping[str, Any], flat: bool) -> None:
        self.flat = flat
        self.warm = False
        self.compile: Compile | None = None
        self.params = list(params)
        self.states = [dict(st) for st in states]
        self.ptrs = list(map(_data_ptr, params))
        # what `fits` compares, flat: each state's number of entries, then every state's keys and values in order
        self.state_lengths = list(map(len, states))
        self.state_keys = [k for st in states for k in st]
        self.state_values = [v for st in states for v in st.values()]
        static, layout, _ = split_hp(hp)
        self.static = static
        names = chain.state_names
        keep = [i for i, p in enumerate(params) if p.numel() > 0]
        # eager: what a compiled call cannot view (`_flattenable`), and int8 state under a chain that needs shapes
        # (Adafactor), whose blocks a (rows, cols) matrix does not fill row by row (`state_codec._structured`)
        self.eager = [i for i in keep if (not _flattenable(params[i], states[i]) if flat
                                          else any(is_scale(k) for k in states[i]))]
        odd = set(self.eager)
        keep = [i for i in keep if i not in odd]
        sub_p, sub_s = [params[i] for i in keep], [states[i] for i in keep]
        # per chunk: its function, parameter indices, parameters, states, padding gradients, and the vector of
        # ones that gives matrices their rows of ones (`Traced.row_ones`) in a factored moment's chain
        self.chunks: list[tuple[Any, list[int], list[torch.Tensor], list[list[torch.Tensor]], list[torch.Tensor],
                                torch.Tensor | None]] = []
        self.devices: list[torch.device] = []
        #: per chunk, whether its tensors are viewed in int8 blocks (`block_alias`)
        self.blocked: list[bool] = []
        #: per chunk, whether it runs on one OpenMP thread, shared among Python threads (`optreg.stages.openmp`):
        #: a CPU chunk whose tensors are all below `shared_below` elements, which the buckets keep apart from the
        #: larger ones (a call through Dynamo, which traces, stays on the calling thread, on one OpenMP thread)
        self.shared: list[bool] = []
        #: per chunk, the graph it calls directly (`Compiled.graph_for`) and how many graphs its function had
        #: when that was looked up (a new one, which Dynamo traced since, is looked at again)
        self.graphs: list[tuple[int, Any]] = []
        below = shared_below(chain, hp)
        for bucket in _buckets(sub_p, sub_s, names, by_shape=not flat, bounds=(below,)):
            first = keep[bucket[0]]
            present = tuple(n for n in names if n in states[first])
            blocked = flat and any(is_scale(n) for n in present)
            view = self._viewer(blocked)
            # a CPU bucket of small tensors is shared among threads (`self.shared`); one of large tensors under a
            # chain with reductions computes its values again rather than store them (`_compile`)
            on_cpu = params[first].device.type == "cpu"
            shared = on_cpu and params[first].numel() < below
            large = bool(below) and on_cpu and not shared
            fn = _compiled(chain, static, layout, present, flat, CHUNK, "recompute" if large else "")
            p0 = view(params[first])
            chunks = []
            for start in range(0, len(bucket), CHUNK):
                idx = [keep[j] for j in bucket[start:start + CHUNK]]
                pad = CHUNK - len(idx)
                ps = [view(params[i]) for i in idx] + [_scratch(p0, k, 0, flat, blocked) for k in range(pad)]
                ss = [[view(states[i][n], is_scale(n)) for i in idx] +
                      [_scratch(view(states[first][n], is_scale(n)), k, 2 + j, flat, blocked) for k in range(pad)]
                      for j, n in enumerate(present)]
                us_pad = [_scratch(p0, k, 1, flat, blocked) for k in range(pad)]
                chunks.append((fn, idx, ps, ss, us_pad))
            # the scratch tensors that pad a chunk, (2, …, 2), have rows of their own
            ones = rows_of_ones([p for chunk in chunks for p in chunk[2]]) if chain.shaped and not flat else None
            self.chunks += [(*chunk, ones) for chunk in chunks]
            self.devices += [p0.device] * len(chunks)
            self.blocked += [blocked] * len(chunks)
            self.shared += [shared] * len(chunks)
        self.graphs = [(-1, None)] * len(self.chunks)

    def _view(self, t: torch.Tensor, scale: bool = False) -> torch.Tensor:
        return flat_alias(t) if self.flat else t.detach()

    def _viewer(self, blocked: bool):
        """How a chunk's tensors are viewed: in int8 blocks, flat, or as they are."""
        return block_alias if blocked else self._view

    def fits(self, params: Sequence[torch.Tensor], states: Sequence[Mapping[str, torch.Tensor]],
             static: tuple, flat: bool) -> bool:
        """Whether the plan still describes these tensors (same objects, storage, state and flags). Run every
        step, over every tensor: the comparisons run in C (`map`); over 1,000 tensors on 2 cores they took
        0.37-0.65 ms a step against 0.76-2.1 ms as generators of Python comparisons. A state whose entries were
        only reordered does not fit (a new plan)."""
        return (flat == self.flat and static == self.static and len(params) == len(self.params)
                and all(map(operator.is_, params, self.params))
                and list(map(_data_ptr, params)) == self.ptrs
                and list(map(len, states)) == self.state_lengths
                and [k for st in states for k in st] == self.state_keys
                and all(map(operator.is_, [v for st in states for v in st.values()], self.state_values)))

    def run(self, chain: Chain, grads: Sequence[torch.Tensor], hp: Mapping[str, Any], values: list[float]) -> None:
        """One step; `values` are the host scalars of `hp` as `split_hp` lists them. Until the compile of the
        plan's functions is ready (`Compile`), the step runs eager."""
        if self.compile is None:
            calls = list(self._calls(grads, values))
            self.compile = Compile(f"{chain.describe()} for {len(self.params)} tensors (fused=True)",
                                   lambda: [fn(*standins(args)) for fn, args, _ in calls])
        if not self.compile.ready():
            run_eager(chain, self.params, grads, self.states, hp)
            return
        if self.eager:
            run_eager(chain, [self.params[i] for i in self.eager], [grads[i] for i in self.eager],
                      [self.states[i] for i in self.eager], hp)
        # the shape settings matter when Dynamo traces, which a plan's first run does; patching the
        # config on every step would cost more than the step's own Python
        settings = contextlib.nullcontext() if self.warm else _shape_settings()
        direct = unobserved()  # a call Dynamo traces, or a mode sees, goes through Dynamo
        shared = []   # the chunks that call their graph directly, on one OpenMP thread each (`self.shared`)
        limit = None  # one OpenMP thread while a chunk of small tensors goes through Dynamo
        try:
            with settings:
                for k, (fn, args, owned) in enumerate(list(self._calls(grads, values, direct))):
                    graph = self._graph(k, fn, args) if direct and owned else None
                    if self.shared[k] and graph is not None:
                        shared.append(functools.partial(graph, args))
                        continue
                    if self.shared[k] and limit is None:
                        limit = one_thread()
                    elif not self.shared[k] and limit is not None:
                        limit.restore_original_limits()
                        limit = None
                    if graph is not None:
                        graph(args)
                    else:
                        fn(*args)
        finally:
            if limit is not None:
                limit.restore_original_limits()
        share(shared)
        self.warm = True

    def _graph(self, k: int, fn, args: tuple):
        """The graph chunk k calls directly, without Dynamo (`direct`), or None."""
        graphs = getattr(fn, "graphs", None)
        if graphs is None:
            return None
        seen, graph = self.graphs[k]
        if graph is None and seen != len(graphs):
            self.graphs[k] = (len(graphs), fn.graph_for(args))
            graph = self.graphs[k][1]
        return graph

    def _calls(self, grads: Sequence[torch.Tensor], values: list[float], direct: bool = False):
        """(compiled function, its arguments, whether every gradient is a plain tensor that owns its storage)
        for each chunk, one step's (the last: `direct.grads_own`). A chunk that calls its graph directly
        (`direct`, and a graph found) gets its gradients as plain views, which Dynamo never sees: a third of
        the cost of the aliases its guards need (`flat_alias`)."""
        packed: dict[torch.device, torch.Tensor] = {}
        for k, ((fn, idx, ps, ss, us_pad, ones), device, blocked) in enumerate(
                zip(self.chunks, self.devices, self.blocked)):
            scalars = packed.get(device)
            if scalars is None:
                scalars = packed[device] = _packed(values, device)
            gs = [grads[i] for i in idx]
            owned = grads_own(gs)
            if direct and owned and not blocked and self.graphs[k][1] is not None:
                view = _flat if self.flat else _itself
            else:
                view = self._viewer(blocked)
            us = [view(g if g.is_contiguous() else g.contiguous()) for g in gs]
            yield fn, (ps, us + us_pad if us_pad else us, ss, scalars,
                       *([(ones,)] if ones is not None else [])), owned


_data_ptr = torch.Tensor.data_ptr


def _itself(t: torch.Tensor) -> torch.Tensor:
    """A gradient as a chunk's graph over shaped tensors reads it (`FusedPlan._calls`, called directly)."""
    return t


def _flat(t: torch.Tensor) -> torch.Tensor:
    """A gradient as a chunk's graph reads it flat (0-d stays 0-d, as `flat_alias` keeps it)."""
    return t if t.dim() <= 1 else t.ravel()


def _packed(values: list[float], device: torch.device) -> torch.Tensor:
    """This step's host scalars as one tensor (float64 on a CPU, float32 on an accelerator).

    On a CUDA device they travel from pinned host memory with `non_blocking=True`: a copy from pageable
    memory waits for the stream (a host synchronisation every step, seen under
    `torch.cuda.set_sync_debug_mode("error")`); torch's caching host allocator keeps the pinned block
    until the copy has run."""
    if device.type == "cpu":
        return torch.tensor(values, dtype=torch.float64)
    if device.type == "cuda":
        return torch.tensor(values, dtype=torch.float32, pin_memory=True).to(device, non_blocking=True)
    return torch.tensor(values, dtype=torch.float32, device=device)


def _shape_settings():
    """The symbolic-shape settings a compiled chain is traced with (they matter only when Dynamo traces)."""
    import torch.fx.experimental._config as shape_config

    return shape_config.patch(use_duck_shape=False, backed_size_oblivious=True)


_WARM: set[Any] = set()


def run_flat(mode: str, chain: Chain, param: torch.Tensor, grad: torch.Tensor,
             state: Mapping[str, list[torch.Tensor]], hp: Mapping[str, Any]) -> None:
    """One call of the chain over a contiguous group's flat buffers (1-D tensors; a 0-d state is the
    bucket's shared value) in `mode`: eager and foreach run the ATen operations over the whole buffer,
    fused one compiled kernel."""
    if mode != "fused":
        chain.apply(Batch([param], [grad], {n: list(v) for n, v in state.items()}, hp,
                          FOREACH if mode == "foreach" else EAGER))
        return
    static, layout, values = split_hp(hp)
    names = tuple(state)
    fn = _compiled(chain, static, layout, names, True, width=1)
    view = block_alias if any(map(is_scale, names)) else flat_alias
    args = ([view(param)], [view(grad)], [[view(v[0], is_scale(n)) if view is block_alias else flat_alias(v[0])]
                                          for n, v in state.items()], _packed(values, param.device))
    _call(fn, param.dtype, *args)


#: a contiguous group's slices start at multiples of BLOCK elements (`optreg.stages.contiguous`)
BLOCK = 1024


def row_alias(t: torch.Tensor) -> torch.Tensor:
    """A flat buffer as (rows, BLOCK), not an autograd view, its row length static for Dynamo (Inductor
    then indexes rows without dividing); a 0-d tensor: `t.detach()`."""
    if t.dim() == 0:
        return t.detach()
    out = alias(t, 0, (t.numel() // BLOCK, BLOCK), (BLOCK, 1))
    torch._dynamo.mark_static(out, 1)
    return out


def run_rows(chain: Chain, param: torch.Tensor, grad: torch.Tensor, state: Mapping[str, list[torch.Tensor]],
             scratch: torch.Tensor, ones: torch.Tensor, owner: torch.Tensor, count: torch.Tensor,
             hp: Mapping[str, Any]) -> None:
    """A chain whose per-tensor reductions are norms (LAMB) over a contiguous group's flat buffers, fused:
    the buffers viewed as rows of BLOCK elements, each parameter whole rows, a norm the root of the sum
    of its rows' squares (`Rows`). Two compiled calls: the stages before the first norm write the update
    into `scratch` and return the row sums of squares of the update and of the parameters in the same
    loop (`ones` is a (rows, 1) column of ones that keeps the loop over rows); the rest read the update
    and take those sums for the norms of the two. (In one call Inductor would allocate the update afresh
    every step, and on a CPU the page faults of a new full-size buffer cost more than the pass it saves.)

    Traffic per step: read g, the state and w, write the state and the update; read the update and w,
    write w: three passes more than the element-wise chain.
    """
    before, after = chain.around_norms()
    static, layout, values = split_hp(hp)
    names = tuple(state)
    packed = _packed(values, param.device)
    params, u = [row_alias(param)], [row_alias(grad)]
    states = [[flat_alias(v[0]) if is_scale(n) else row_alias(v[0])] for n, v in state.items()]
    sums: tuple = ()
    torch._dynamo.mark_static(ones, 1)   # a column: its size 1 is not a dynamic size
    if before:
        out = row_alias(scratch)
        sums = _call(_compiled(before, static, layout, names, True, 1, "before"), param.dtype,
                     params, u, states, packed, (out, ones))
        u = [out]
    _call(_compiled(after, static, layout, names, True, 1, "rows"), param.dtype,
          params, u, states, packed, (owner, count, ones, *sums))


def run_stacked(chain: Chain, stacks: Sequence[tuple], hp: Mapping[str, Any], warm: bool = False) -> None:
    """A chain that needs shapes (Adafactor) over a contiguous group's slices stacked by shape, fused: one
    compiled call per stack of B same-shape parameters, the parameters, gradients and state (B, *shape)
    views of their buffers (`Bucket.stacks`). A stack is a few MB, so the passes that a factored moment
    makes over a matrix after the first find it in the cache."""
    static, layout, values = split_hp(hp)
    packed = None
    # a plan's first run traces each rank, dtype and pattern of sizes 1 under the shape settings (`warm`:
    # it has run); each rank of stack has a compiled function (and recompile budget) of its own
    with contextlib.nullcontext() if warm else _shape_settings():
        for names, params, grads, states, stacked, ones in stacks:
            if packed is None:
                packed = _packed(values, params.device)
            fn = _compiled(chain, static, layout, names, False, 1, f"stacked{params.dim()}" if stacked else "")
            fn([params], [grads], [[v] for v in states], packed, *([(ones,)] if ones is not None else []))


def _call(fn, dtype: torch.dtype, *args):
    """A compiled call, its first (the trace) under the shape settings."""
    key = (id(fn), dtype)
    with contextlib.nullcontext() if key in _WARM else _shape_settings():
        out = fn(*args)
    _WARM.add(key)
    return out


def run_fused(chain: Chain, params: Sequence[torch.Tensor], grads: Sequence[torch.Tensor],
              states: Sequence[Mapping[str, torch.Tensor]], hp: Mapping[str, Any], *, flat: bool = True,
              plan: FusedPlan | None = None) -> FusedPlan:
    """Compiled execution (tensors that cannot be viewed flat run eager); returns the plan for reuse."""
    static, _, values = split_hp(hp)
    if plan is None or not plan.fits(params, states, static, flat):
        plan = FusedPlan(chain, params, states, hp, flat)
    plan.run(chain, grads, hp, values)
    return plan


def _flattenable(p: torch.Tensor, st: Mapping[str, torch.Tensor]) -> bool:
    """Whether the parameter and its full-size state can be viewed flat (a gradient that cannot is
    made contiguous when the step runs); with int8 state, in whole blocks (`block_alias`)."""
    tensors = [p, *(v for k, v in st.items() if isinstance(v, torch.Tensor) and v.dim() > 0 and not is_scale(k))]
    blocks_ok = whole_blocks(p) or not any(is_scale(k) for k in st)
    return blocks_ok and all(t.is_contiguous() and t.shape == p.shape for t in tensors)


def execute(mode: str, chain: Chain, params, grads, states, hp, plan: FusedPlan | None = None) -> FusedPlan | None:
    """Run `chain` over one group's tensors in `mode` ("eager", "foreach" or "fused"); under fused,
    returns the plan to hand back next step."""
    if not params:
        return plan
    if mode == "fused":
        return run_fused(chain, params, grads, states, hp, flat=not chain.needs_shape(hp), plan=plan)
    elif mode == "foreach":
        run_foreach(chain, params, grads, states, hp)
    else:
        run_eager(chain, params, grads, states, hp)

"""List-of-tensor operations that stages are written against, in three executions.

A stage is written once against `Ops`; what runs depends on the execution:

    Eager     one tensor at a time (lists of length 1), Python-float scalars: torch's per-tensor loop
              (a float32 CPU tensor's scalar operands as cached 0-d tensors: `_operand`); over a batch of
              small CPU tensors, the same kernels looped in C++ (`EagerLoops`)
    Foreach   the whole list at once with `torch._foreach_*` (few kernel launches)
    Traced    per tensor, scalars as 0-d tensors: the form `torch.compile` traces for `fused=True`

A scalar argument is a number, a 0-d tensor, or a list with one of those per tensor (per-parameter
state such as Cerebras' `beta1_power`). `alpha=` / `value=` multipliers that are tensors become a
multiplication, because torch takes only numbers there.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import torch

Tensors = list  # list[torch.Tensor]


def _pick(s: Any, i: int) -> Any:
    return s[i] if isinstance(s, (list, tuple)) else s


def _is_number(s: Any) -> bool:
    return isinstance(s, (float, int)) or isinstance(s, numbers.Number)


def _is_list(s: Any) -> bool:
    """Whether `s` gives each tensor its own value (a list or tuple, as `_pick` reads it)."""
    return isinstance(s, (list, tuple))


def _each_(op: Any, xs: Tensors, s: Any) -> Tensors:
    """op(x, s) in place for each x, with each tensor's own s where `s` is a list."""
    if _is_list(s):
        for x, v in zip(xs, s):
            op(x, v)
    else:
        for x in xs:
            op(x, s)
    return xs


class Ops:
    """Per-tensor loop over lists (the Eager and Traced executions)."""

    name = "eager"
    #: whether the operations are traced for torch.compile (a stage may then pick a form that fuses better)
    compiled = False

    # -- arithmetic, in place -----------------------------------------------------------------
    # The loops below take a shortcut for the common case, one scalar (a number) for every tensor: the same
    # operations, without picking each tensor's scalar (the Python cost of eager on a model of many tensors).

    def mul_(self, xs: Tensors, s: Any) -> Tensors:
        return _each_(torch.Tensor.mul_, xs, s)

    def add_(self, xs: Tensors, ys: Any, alpha: Any = 1.0) -> Tensors:
        """x += alpha * y (y a tensor list, or a scalar added to every element when alpha is 1)."""
        if _is_number(alpha) and _is_list(ys):
            if alpha != 1.0:
                for x, y in zip(xs, ys):
                    x.add_(y, alpha=alpha)
            else:
                for x, y in zip(xs, ys):
                    x.add_(y)
            return xs
        for i, x in enumerate(xs):
            y, a = _pick(ys, i), _pick(alpha, i)
            if _is_number(a):
                x.add_(y, alpha=a) if a != 1.0 else x.add_(y)
            else:
                x.add_(y * a)
        return xs

    def addcmul_(self, xs: Tensors, ys: Tensors, zs: Tensors, value: Any = 1.0) -> Tensors:
        if _is_number(value):
            for x, y, z in zip(xs, ys, zs):
                x.addcmul_(y, z, value=value)
            return xs
        for i, x in enumerate(xs):
            v = _pick(value, i)
            if _is_number(v):
                x.addcmul_(ys[i], zs[i], value=v)
            else:
                x.add_(ys[i] * zs[i] * v)
        return xs

    def addcdiv_(self, xs: Tensors, ys: Tensors, zs: Tensors, value: Any = 1.0) -> Tensors:
        if _is_number(value):
            for x, y, z in zip(xs, ys, zs):
                x.addcdiv_(y, z, value=value)
            return xs
        for i, x in enumerate(xs):
            v = _pick(value, i)
            if _is_number(v):
                x.addcdiv_(ys[i], zs[i], value=v)
            else:
                x.add_(ys[i] / zs[i] * v)
        return xs

    def lerp_(self, xs: Tensors, ys: Tensors, weight: Any) -> Tensors:
        for i, x in enumerate(xs):
            x.lerp_(ys[i], _pick(weight, i))
        return xs

    def div_(self, xs: Tensors, ys: Any) -> Tensors:
        return _each_(torch.Tensor.div_, xs, ys)

    def maximum_(self, xs: Tensors, ys: Tensors) -> Tensors:
        for x, y in zip(xs, ys):
            torch.maximum(x, y, out=x)
        return xs

    def copy_(self, xs: Tensors, ys: Tensors) -> Tensors:
        for x, y in zip(xs, ys):
            x.copy_(y)
        return xs

    def clamp_(self, xs: Tensors, lo: Any = None, hi: Any = None) -> Tensors:
        for i, x in enumerate(xs):
            x.clamp_(_pick(lo, i), _pick(hi, i))
        return xs

    def sqrt_(self, xs: Tensors) -> Tensors:
        for x in xs:
            x.sqrt_()
        return xs

    def neg_(self, xs: Tensors) -> Tensors:
        for x in xs:
            x.neg_()
        return xs

    # -- out of place ---------------------------------------------------------------------------
    def clone(self, xs: Tensors) -> Tensors:
        return [x.clone() for x in xs]

    def mul(self, xs: Tensors, s: Any) -> Tensors:
        return [x * _pick(s, i) for i, x in enumerate(xs)]

    def add(self, xs: Tensors, ys: Any, alpha: Any = 1.0) -> Tensors:
        """x + alpha * y as new tensors (one pass: the same kernel as clone-then-add_)."""
        out = []
        for i, x in enumerate(xs):
            y, a = _pick(ys, i), _pick(alpha, i)
            out.append(torch.add(x, y, alpha=a) if _is_number(a) else x + y * a)
        return out

    def sqrt(self, xs: Tensors) -> Tensors:
        return [x.sqrt() for x in xs]

    def abs(self, xs: Tensors) -> Tensors:
        return [x.abs() for x in xs]

    def reciprocal(self, xs: Tensors) -> Tensors:
        return [x.reciprocal() for x in xs]

    def sign(self, xs: Tensors) -> Tensors:
        return [x.sign() for x in xs]

    def copysign_one(self, xs: Tensors) -> Tensors:
        """copysign(1, x): ±1 by each element's sign bit (+1 at +0, -1 at -0), where sign() gives 0 at ±0."""
        return [torch.ones_like(x).copysign_(x) for x in xs]

    def positive_sign(self, xs: Tensors) -> Tensors:
        """1 where x > 0, else -1 (at ±0 and NaN too), in each x's dtype."""
        return [(x > 0).to(x.dtype).mul_(2.0).sub_(1.0) for x in xs]

    def div(self, xs: Tensors, ys: Any) -> Tensors:
        return [x / y for x, y in zip(xs, ys)] if _is_list(ys) else [x / ys for x in xs]

    def norm(self, xs: Tensors) -> Tensors:
        """The 2-norm of each tensor, as 0-d tensors."""
        return [torch.linalg.vector_norm(x) for x in xs]

    def where(self, conds: Tensors, xs: Any, ys: Any) -> Tensors:
        return [torch.where(c, _pick(xs, i), _pick(ys, i)) for i, c in enumerate(conds)]

    # -- scalars --------------------------------------------------------------------------------
    def realize(self, values: list) -> list:
        """Per-tensor scalars, as they are (the Traced execution makes them buffers)."""
        return list(values)

    def realize_factors(self, values: list) -> list:
        """A factored moment's row or column factors, as they are (`Traced.realize_factors`)."""
        return self.realize(values)

    def scalar(self, value: Any) -> Any:
        """A host scalar as this execution passes it (a float here)."""
        return value


#: float host scalars already formed as 0-d float32 tensors (`Eager`), cleared when it holds this many
_SCALARS_KEPT = 256
_SCALARS: dict[float, torch.Tensor] = {}

#: the tensor types whose operations are ATen's as they are (a subclass, DTensor say, may run collectives inside
#: an operation, and has its own rules for the operands it meets)
PLAIN = (torch.Tensor, torch.nn.Parameter)


def unobserved() -> bool:
    """Whether an operation called here runs as it is: not traced by Dynamo, and seen by no dispatch or
    torch-function mode (thread-local: another thread would not see them)."""
    return not (torch.compiler.is_compiling() or torch._C._len_torch_dispatch_stack()
                or torch._C._is_torch_function_mode_enabled())


def _operand(x: torch.Tensor, s: Any) -> Any:
    """The host scalar `s` as a float32 CPU tensor `x` takes it as an operand, fastest: a cached 0-d float32
    tensor. ATen rounds a Python float to float32 there anyway (a cast per call: 3 µs of a 4.7 µs `mul_`);
    the 0-d tensor holds that rounding, so the numbers are the same bit for bit. Anything else stays as it
    is: another dtype or device, a tensor subclass, an int, a zero (whose sign a key would lose), a
    non-finite value, and a call that Dynamo traces or that a dispatch or function mode sees."""
    if type(s) is not float or x.dtype is not torch.float32 or type(x) not in PLAIN or not x.is_cpu \
            or not 0.0 < abs(s) < math.inf or not unobserved():
        return s
    t = _SCALARS.get(s)
    if t is None:
        if len(_SCALARS) >= _SCALARS_KEPT:  # values that change every step (a bias correction)
            _SCALARS.clear()
        with torch.inference_mode(False):
            t = _SCALARS[s] = torch.tensor(s, dtype=torch.float32, device="cpu")
    return t


def _plain_operand(x: torch.Tensor, s: Any) -> Any:
    """`_operand` for a plain CPU tensor outside Dynamo and any mode (`PlainEager`: checked once a step)."""
    if type(s) is not float or x.dtype is not torch.float32 or not 0.0 < abs(s) < math.inf:
        return s
    t = _SCALARS.get(s)
    return t if t is not None else _operand(x, s)


def _in_place(op: Any, xs: Tensors, s: Any, operand: Any = _operand) -> Tensors:
    """op(x, s) in place for each x: a scalar `s` as `operand` forms it for x, a list's values as they are."""
    if type(s) is list or type(s) is tuple:
        return _each_(op, xs, s)
    for x in xs:
        op(x, operand(x, s))
    return xs


def _out_of_place(op: Any, xs: Tensors, s: Any, operand: Any = _operand) -> Tensors:
    """op(x, s) as a new tensor for each x, `s` as in `_in_place`."""
    if type(s) is list or type(s) is tuple:
        return [op(x, v) for x, v in zip(xs, s)]
    return [op(x, operand(x, s)) for x in xs]


class Eager(Ops):
    """The eager execution: `Ops`, with a float host scalar in a tensor operand's place (a multiplier, a
    divisor, a number added) passed as `operand` forms it (`_operand`), and the common calls (one scalar for
    every tensor, a list of tensors) tested first: eager pays this Python between every two kernels."""

    operand = staticmethod(_operand)

    def mul_(self, xs, s):
        return _in_place(torch.Tensor.mul_, xs, s, self.operand)

    def div_(self, xs, s):
        return _in_place(torch.Tensor.div_, xs, s, self.operand)

    def mul(self, xs, s):
        return _out_of_place(torch.mul, xs, s, self.operand)

    def div(self, xs, ys):
        return _out_of_place(torch.div, xs, ys, self.operand)

    def add_(self, xs, ys, alpha=1.0):
        if type(alpha) is float:
            if type(ys) is list:
                if alpha == 1.0:
                    for x, y in zip(xs, ys):
                        x.add_(y)
                else:
                    for x, y in zip(xs, ys):
                        x.add_(y, alpha=alpha)
                return xs
            if alpha == 1.0 and type(ys) is not tuple:
                operand = self.operand
                for x in xs:
                    x.add_(operand(x, ys))
                return xs
        return super().add_(xs, ys, alpha)


class PlainEager(Eager):
    """`Eager` over plain CPU tensors outside Dynamo and any dispatch or function mode, which
    `execute.run_eager` checks once a step: a scalar operand without those checks per call (`_plain_operand`)."""

    operand = staticmethod(_plain_operand)


class EagerLoops(PlainEager):
    """`PlainEager` over a batch of small neighbours (`execute.run_eager`): the common list operations as
    `torch._foreach_*` calls, which on a CPU loop over the tensors in C++ through the kernel each tensor would get
    alone (ATen's slow path), so the numbers are Eager's bit for bit without a Python call and a hold of the
    interpreter's lock per tensor; any other form of a call is Eager's (new tensors come as a list, as there).
    Measured side by side on 2 cores (AMD EPYC, AVX-512, torch 2.13): oneflow.SGD over 1,000 tensors of 25,000
    elements, 10 tensors a batch, in 0.90x the time of Python's loops (15.0 ms against 16.6; torch's for-loop SGD
    17.8)."""

    def mul_(self, xs, s):
        if type(s) is float:
            torch._foreach_mul_(xs, self.operand(xs[0], s))
            return xs
        return super().mul_(xs, s)

    def div_(self, xs, s):
        if type(s) is float:
            torch._foreach_div_(xs, self.operand(xs[0], s))
            return xs
        return super().div_(xs, s)

    def mul(self, xs, s):
        if type(s) is float:
            return list(torch._foreach_mul(xs, self.operand(xs[0], s)))
        return super().mul(xs, s)

    def add_(self, xs, ys, alpha=1.0):
        if type(ys) is list and type(alpha) is float:
            torch._foreach_add_(xs, ys, alpha=alpha)
            return xs
        return super().add_(xs, ys, alpha)

    def add(self, xs, ys, alpha=1.0):
        if type(ys) is list and type(alpha) is float:
            return list(torch._foreach_add(xs, ys, alpha=alpha))
        return super().add(xs, ys, alpha)

    def addcmul_(self, xs, ys, zs, value=1.0):
        if type(value) is float:
            torch._foreach_addcmul_(xs, ys, zs, value=value)
            return xs
        return super().addcmul_(xs, ys, zs, value)

    def addcdiv_(self, xs, ys, zs, value=1.0):
        if type(value) is float:
            torch._foreach_addcdiv_(xs, ys, zs, value=value)
            return xs
        return super().addcdiv_(xs, ys, zs, value)

    def lerp_(self, xs, ys, weight):
        if type(weight) is float:
            torch._foreach_lerp_(xs, ys, weight)
            return xs
        return super().lerp_(xs, ys, weight)

    def div(self, xs, ys):
        if type(ys) is list:
            return list(torch._foreach_div(xs, ys))
        return super().div(xs, ys)

    def sqrt_(self, xs):
        torch._foreach_sqrt_(xs)
        return xs

    def sqrt(self, xs):
        return list(torch._foreach_sqrt(xs))

    def copy_(self, xs, ys):
        torch._foreach_copy_(xs, ys)
        return xs


#: optreg's operators that a compiled chain calls as they are, opaque to Inductor (`_opaque`)
_LIBRARY = torch.library.Library("optreg", "DEF")


def _opaque(schema: str, impl, fake) -> None:
    """The operator `optreg::<schema>`, which Inductor calls as it is: `impl` on every backend, `fake` when
    Dynamo traces. Registered on the dispatcher directly: a `torch.library.custom_op` adds its Python
    autograd layer to every call (30 µs against 13 on 2 cores)."""
    name = schema.split("(")[0]
    _LIBRARY.define(schema)
    _LIBRARY.impl(name, impl, "CompositeExplicitAutograd")
    torch.library.register_fake(f"optreg::{name}", fake, lib=_LIBRARY)


class Traced(Ops):
    """The per-tensor loop as `torch.compile` traces it: host scalars arrive as 0-d tensors.

    `row_ones`, for a call over matrices (a factored moment's tensors), is a vector of ones
    (`rows_of_ones`) that gives each matrix (or stack of them) x a (…, 1, C) row of ones of x's own sizes:
    `add_` takes its alpha as ones·alpha, so the loops that write the state and the parameters keep the
    (…, R, C) shape of the loop that reads the factors and Inductor fuses them. Flattened, it would not:
    MindSpore AdaFactor's new first moment went through a full-size buffer, allocated every call, and a
    copy."""

    name = "fused"
    row_ones: torch.Tensor | None = None

    def __init__(self, row_ones: torch.Tensor | None = None) -> None:
        self.row_ones = row_ones

    def add_(self, xs, ys, alpha=1.0):
        if self.row_ones is not None and isinstance(ys, (list, tuple)):
            alpha = [self._row_of_ones(x) * _pick(alpha, i) if x.dim() >= 2 else _pick(alpha, i)
                     for i, x in enumerate(xs)]
        return super().add_(xs, ys, alpha)

    def _row_of_ones(self, x: torch.Tensor) -> torch.Tensor:
        """x's (…, 1, C) row of ones, in x's precision and float32 at least (an alpha keeps its precision)."""
        lead, cols = x.shape[:-2], x.shape[-1]
        ones = self.row_ones[:math.prod(lead) * cols].view(*lead, 1, cols)
        return ones.to(torch.promote_types(x.dtype, torch.float32))

    def norm(self, xs):
        """The 2-norm of each tensor, √Σx² (`sum_squares`, in float32 at least), in Inductor's loops: the sum
        of squares of an update joins the loop that forms it, that of an input (the parameters) takes one pass
        over it. As an opaque call of ATen's norm (`torch._foreach_norm`) each norm was a pass of its own, and
        ATen's norm of a float32 tensor does not share the work between threads: a fused LAMB step over 100
        tensors took 1.2-1.3× as long (2 cores, measured side by side)."""
        return [sum_squares(x).sqrt().to(x.dtype) for x in xs]

    def realize(self, values):
        """Values computed once per call (per-tensor scalars, a factored moment's factors) into buffers
        that Inductor does not recompute for every element of the tensors that read them (`realized`)."""
        return [realized(v) if isinstance(v, torch.Tensor) else v for v in values]

    def realize_factors(self, values):
        """A factored moment's factors as buffers: each the max of 16 copies of itself along a new last
        dimension (exact), computed once per call without the dispatch of an opaque copy per tensor (the
        form that trips Inductor 2.13's outer-loop fusion on other vectors, `realized`, fuses here)."""
        return [v.unsqueeze(-1).expand(*v.shape, 16).amax(-1) if isinstance(v, torch.Tensor) else v
                for v in values]

    compiled = True

    def member_sum(self, t, like):
        """The sum of `t` over a tensor of the call (`like`): all of it, a 0-d tensor."""
        return t.sum()

    def member_numel(self, like):
        """The number of elements of a tensor of the call."""
        return like.numel()

    def rms(self, xs):
        """The root mean square of each tensor, its squares summed along the last dimension first
        (`sum_squares`)."""
        return [(sum_squares(x) / x.numel()).sqrt().to(x.dtype) for x in xs]

    def mul_(self, xs, s):
        """As eager: a host scalar times a 0-d state (Cerebras' beta powers) in the state's precision
        (a packed float64 scalar would otherwise promote the product to float64 before rounding)."""
        for i, x in enumerate(xs):
            v = _pick(s, i)
            if isinstance(v, torch.Tensor) and x.dim() == 0 and v.dtype != x.dtype:
                v = v.to(torch.promote_types(x.dtype, torch.float32))
            x.mul_(v)
        return xs

    def lerp_(self, xs, ys, weight):
        for i, x in enumerate(xs):
            w = _pick(weight, i)
            x.lerp_(ys[i], w) if _is_number(w) else x.add_((ys[i] - x) * w)
        return xs

    def div(self, xs, ys):
        """x / y; by a per-tensor value (a scalar, or one that broadcasts from shape (n, 1, …, 1)), x times
        its reciprocal, computed once: a vector division less per element, within an ulp of the quotient."""
        out = []
        for i, x in enumerate(xs):
            inverse = self._inverse(x, _pick(ys, i))
            out.append(x * inverse if inverse is not None else x / _pick(ys, i))
        return out

    def div_(self, xs, ys):
        for i, x in enumerate(xs):
            inverse = self._inverse(x, _pick(ys, i))
            x.mul_(inverse) if inverse is not None else x.div_(_pick(ys, i))
        return xs

    def _inverse(self, x, y):
        """1 / y when y is a per-tensor value for x (None otherwise): a scalar's is loop-invariant, which
        the C++ compiler hoists; a (n, 1, …, 1) value's is computed once into a buffer (`realize`)."""
        if _is_number(y):
            return 1.0 / y if y != 0 else None
        if not isinstance(y, torch.Tensor) or not y.is_floating_point() \
                or (y.dim() and (y.dim() != x.dim() or not _per_member_shape(y))):
            return None
        inverse = torch.reciprocal(y.to(torch.promote_types(y.dtype, torch.float32)))  # a float16 one overflows
        return inverse if y.dim() == 0 else self.realize([inverse])[0]


def realized(v: torch.Tensor) -> torch.Tensor:
    """`v` as a buffer of its own under Inductor: a 0-d value the max of 16 copies of itself (exact), a
    vector an opaque copy (`optreg::materialize`; over stacks, and a factored moment's factors,
    `Traced.realize_factors`)."""
    if v.dim() == 0:
        return v.reshape(1).expand(16).amax()
    return torch.ops.optreg.materialize(v)


def _per_member_shape(v: torch.Tensor) -> bool:
    """Whether `v` is (n, 1, …, 1) with at least two dimensions, its 1s static: a size that Dynamo traces
    as a symbol is not compared, which would guard on it (and recompile for each pattern of sizes 1)."""
    from torch.fx.experimental.symbolic_shapes import statically_known_true

    return v.dim() >= 2 and all(statically_known_true(n == 1) for n in v.shape[1:])


def _materialize(x: torch.Tensor) -> torch.Tensor:
    """A copy that Inductor cannot look into, so that what computes `x` runs once, into a buffer (the
    max-of-copies form that 0-d values take trips Inductor 2.13's CPU outer-loop fusion on vectors:
    `KeyError` in `try_outer_loop_fusion_with_local_buf`)."""
    return x.clone()


_opaque("materialize(Tensor x) -> Tensor", _materialize, torch.empty_like)


def sum_squares(x: torch.Tensor, keep: int = 0) -> torch.Tensor:
    """Σ x² over all but the first `keep` dimensions, in float32 (float64 for float64), the last dimension
    first: as a chain of row sums Inductor makes one vectorized loop over rows, several times faster on
    a CPU than its loop for a reduction over several dimensions at once."""
    s = x * x
    acc = torch.float64 if x.dtype == torch.float64 else torch.float32
    if s.dim() <= keep:
        return s.to(acc)
    s = s.sum(-1, dtype=acc)
    while s.dim() > keep:
        s = s.sum(-1)
    return s


class Stacked(Traced):
    """The Traced execution over stacks of same-shape tensors (a contiguous group's slices viewed as one
    (B, *shape) tensor, `optreg.stages.contiguous`): a per-tensor reduction reduces each of the B
    tensors, and per-tensor values are (B, 1, …, 1) tensors that broadcast over their stack (a stack of
    matrices: its row of ones (B, …, 1, C))."""

    name = "fused, stacked"

    def norm(self, xs):
        return [_per_member(sum_squares(x, keep=1), x).sqrt().to(x.dtype) for x in xs]

    def rms(self, xs):
        return [(_per_member(sum_squares(x, keep=1), x) / x[0].numel()).sqrt().to(x.dtype) for x in xs]

    def member_sum(self, t, like):
        """The sum of `t` over each member of the stack `like`, as (B, 1, …, 1)."""
        while t.dim() > 1:
            t = t.sum(-1)
        return _per_member(t, like)

    def member_numel(self, like):
        return like[0].numel()

    def realize(self, values):
        """Each value as a factor is (`Traced.realize_factors`): over stacks, where an opaque copy
        (`optreg::materialize`) costs a dispatch per stack, Inductor 2.13's outer-loop fusion does not fail."""
        return self.realize_factors(values)


def rows_of_ones(tensors: Sequence[torch.Tensor]) -> torch.Tensor | None:
    """The vector of ones (`Traced.row_ones`) that gives each matrix among `tensors` (or stack of them, all
    on one device) its (…, 1, C) row of ones; None when none has two dimensions."""
    sizes = [t.numel() // t.shape[-2] for t in tensors if t.dim() >= 2 and t.shape[-2] > 0]
    return torch.ones(max(sizes), device=tensors[0].device) if sizes else None


def _per_member(v: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """A (B,) vector of per-member values as (B, 1, …, 1), to broadcast over the stack `x`."""
    return v.reshape(v.shape[0], *([1] * (x.dim() - 1)))


def row_squares(x: torch.Tensor) -> torch.Tensor:
    """The sum of squares of each row of a (rows, BLOCK) buffer, in float32 (float64 for float64)."""
    return (x * x).sum(1, dtype=torch.float64 if x.dtype == torch.float64 else torch.float32)


class Rows(Traced):
    """The Traced execution over a contiguous group's buffers viewed as (rows, BLOCK), every parameter
    whole rows (`optreg.stages.contiguous`): a norm is the root of the sum of its parameter's rows'
    squares (summed in float64), handed back per row as a (rows, 1) column; `owner` holds each row's
    parameter index and `count` has one element per parameter. Padding is zero and adds nothing.

    `known` pairs tensors of the call with their row sums of squares (`row_squares`) taken by an earlier
    call in the loop that wrote them (`run_rows`); the norm of another tensor sums its rows here.

    `ones` is a (rows, 1) column of ones: `add_` takes a host-scalar alpha as the column ones·alpha, so the
    last update's loop keeps the (rows, BLOCK) shape of the loops that read the per-row norms and Inductor
    fuses them (flattened, it would not: the state would go through a new full-size buffer and a copy).
    """

    name = "fused, rows"

    def __init__(self, owner: torch.Tensor, count: torch.Tensor, ones: torch.Tensor,
                 known: tuple[tuple[torch.Tensor, torch.Tensor], ...] = ()) -> None:
        self.owner = owner
        self.count = count
        self.ones = ones
        self.known = known

    def add_(self, xs, ys, alpha=1.0):
        if isinstance(alpha, torch.Tensor) and alpha.dim() == 0 and isinstance(ys, (list, tuple)):
            alpha = self.ones.to(torch.promote_types(self.ones.dtype, torch.float32)) * alpha
        return super().add_(xs, ys, alpha)

    def norm(self, xs):
        out = []
        for x in xs:
            rows = next((sums for t, sums in self.known if t is x), None)
            if rows is None:
                rows = row_squares(x)
            sums = torch.zeros(self.count.shape[0], dtype=torch.float64, device=x.device)
            sums = sums.index_add(0, self.owner, rows.to(torch.float64))
            out.append(sums.sqrt().to(x.dtype)[self.owner].unsqueeze(1))
        return out

    def realize(self, values):
        """A per-row column is kept as a buffer (the max of 16 copies of itself, exact) instead of being
        recomputed for every element; 0-d values as in Traced."""
        return [v.expand(-1, 16).amax(1, keepdim=True) if isinstance(v, torch.Tensor) and v.dim() == 2
                else Traced.realize(self, [v])[0] for v in values]


class Foreach(Ops):
    """The whole list at once with `torch._foreach_*` operations."""

    name = "foreach"

    def mul_(self, xs, s):
        torch._foreach_mul_(xs, s)
        return xs

    def add_(self, xs, ys, alpha=1.0):
        if not isinstance(ys, (list, tuple)):  # scalar (or 0-d tensor) added everywhere
            torch._foreach_add_(xs, ys if _is_number(alpha) and alpha == 1.0 else self._scaled_scalar(ys, alpha))
            return xs
        if _is_number(alpha):
            torch._foreach_add_(xs, ys, alpha=alpha)
        else:
            torch._foreach_add_(xs, torch._foreach_mul(ys, alpha))
        return xs

    @staticmethod
    def _scaled_scalar(y, alpha):
        return y * alpha

    def addcmul_(self, xs, ys, zs, value=1.0):
        if _is_number(value) or isinstance(value, (list, tuple)) and all(_is_number(v) for v in value):
            torch._foreach_addcmul_(xs, ys, zs, value)
        else:
            torch._foreach_add_(xs, torch._foreach_mul_(torch._foreach_mul(ys, zs), value))
        return xs

    def addcdiv_(self, xs, ys, zs, value=1.0):
        if _is_number(value) or isinstance(value, (list, tuple)) and all(_is_number(v) for v in value):
            torch._foreach_addcdiv_(xs, ys, zs, value)
        else:
            torch._foreach_add_(xs, torch._foreach_mul_(torch._foreach_div(ys, zs), value))
        return xs

    def lerp_(self, xs, ys, weight):
        if _is_number(weight):
            torch._foreach_lerp_(xs, ys, weight)
        else:
            super().lerp_(xs, ys, weight)
        return xs

    def div_(self, xs, ys):
        torch._foreach_div_(xs, ys)
        return xs

    def maximum_(self, xs, ys):
        torch._foreach_maximum_(xs, ys)
        return xs

    def copy_(self, xs, ys):
        torch._foreach_copy_(xs, ys)
        return xs

    def clamp_(self, xs, lo=None, hi=None):
        if lo is not None:
            torch._foreach_clamp_min_(xs, lo)
        if hi is not None:
            torch._foreach_clamp_max_(xs, hi)
        return xs

    def sqrt_(self, xs):
        torch._foreach_sqrt_(xs)
        return xs

    def neg_(self, xs):
        torch._foreach_neg_(xs)
        return xs

    def clone(self, xs):
        return [x.clone() for x in xs]

    def add(self, xs, ys, alpha=1.0):
        if isinstance(ys, (list, tuple)) and _is_number(alpha):
            return list(torch._foreach_add(xs, ys, alpha=alpha))
        return self.add_(self.clone(xs), ys, alpha)

    def mul(self, xs, s):
        return list(torch._foreach_mul(xs, s))

    def sqrt(self, xs):
        return list(torch._foreach_sqrt(xs))

    def abs(self, xs):
        return list(torch._foreach_abs(xs))

    def reciprocal(self, xs):
        return list(torch._foreach_reciprocal(xs))

    def sign(self, xs):
        return list(torch._foreach_sign(xs))

    def div(self, xs, ys):
        return list(torch._foreach_div(xs, ys))

    def norm(self, xs):
        return list(torch._foreach_norm(xs))


EAGER, FOREACH, TRACED, STACKED = Eager(), Foreach(), Traced(), Stacked()
PLAIN_EAGER, EAGER_LOOPS = PlainEager(), EagerLoops()


def as_list(values: Sequence[Any]) -> list[Any]:
    return list(values)


def _rsub_eager(self, xs, s):
    """s - x for each x (a new list)."""
    return [_pick(s, i) - x for i, x in enumerate(xs)]


def _rsub_foreach(self, xs, s):
    out = torch._foreach_neg(xs)
    torch._foreach_add_(out, s)
    return list(out)


Ops.rsub = _rsub_eager  # type: ignore[attr-defined]
Foreach.rsub = _rsub_foreach  # type: ignore[attr-defined]


def _smap_eager(self, fn, *lists):
    """fn over per-tensor 0-d tensors (norms, say), one call per tensor: a new list."""
    return [fn(*args) for args in zip(*lists)]


def _smap_foreach(self, fn, *lists):
    """fn over per-tensor 0-d tensors, once on their stacked vector (few launches): a new list."""
    if not lists or not lists[0]:
        return []
    return list(torch.unbind(fn(*(torch.stack(list(xs)) for xs in lists))))


def _rms_eager(self, xs):
    """The root mean square of each tensor, as 0-d tensors."""
    return [x.square().mean().sqrt() for x in xs]


def _rms_foreach(self, xs):
    return [n / (x.numel() ** 0.5) for n, x in zip(torch._foreach_norm(xs), xs)]


Ops.smap = _smap_eager  # type: ignore[attr-defined]
Foreach.smap = _smap_foreach  # type: ignore[attr-defined]
Ops.rms = _rms_eager  # type: ignore[attr-defined]
Foreach.rms = _rms_foreach  # type: ignore[attr-defined]


# -- adagrad_rmsprop family: per-tensor host scalars, powers, comparisons ------------------------


def _host_scalars_eager(self, xs):
    """Per-tensor 0-d state (Cerebras' float32 `step`) as Python floats where it is in host memory, as torch's
    eager and foreach paths read it (`_get_value`); on an accelerator, where a read would wait for the device,
    0-d float64 tensors (float32 where the device has no float64), which the stages compute with as traced
    (torch's `capturable` form); traced, the 0-d tensors themselves."""
    return [float(x) if on_host(x) else x.to(_device_float(x.device)) for x in xs]


def on_host(x: torch.Tensor) -> bool:
    """Whether reading `x` into a Python number is a read of host memory, not a wait for a device."""
    return x.device.type == "cpu"


def _device_float(device: torch.device) -> torch.dtype:
    return torch.float32 if device.type == "mps" else torch.float64


def _host_scalars_traced(self, xs):
    return list(xs)


def _pow_eager(self, xs, e):
    """x ** e for each x (a new list)."""
    return [x.pow(_pick(e, i)) for i, x in enumerate(xs)]


def _pow_foreach(self, xs, e):
    return list(torch._foreach_pow(xs, e))


def _gt_eager(self, xs, s):
    """x > s for each x (boolean tensors, a new list)."""
    return [x > _pick(s, i) for i, x in enumerate(xs)]


Ops.host_scalars = _host_scalars_eager  # type: ignore[attr-defined]
Traced.host_scalars = _host_scalars_traced  # type: ignore[attr-defined]
Ops.pow = _pow_eager  # type: ignore[attr-defined]
Foreach.pow = _pow_foreach  # type: ignore[attr-defined]
Ops.gt = _gt_eager  # type: ignore[attr-defined]
Foreach.gt = _gt_eager  # type: ignore[attr-defined]


# -- adam family: a per-tensor choice between two computations ------------------------------------


def _select(self, conds, on, off):
    """Per tensor, `on(idx)` where the condition holds and `off(idx)` elsewhere (a new list); `on` and
    `off` compute the lists for the tensor indices `idx`. Host conditions (bools: eager, foreach) run
    each computation only on its own tensors; traced (0-d tensors) both run and `torch.where` picks."""
    if all(isinstance(c, bool) for c in conds):
        out: list = [None] * len(conds)
        for flag, fn in ((True, on), (False, off)):
            idx = [i for i, c in enumerate(conds) if c is flag]
            for i, x in zip(idx, fn(idx) if idx else ()):
                out[i] = x
        return out
    idx = list(range(len(conds)))
    return [torch.where(c, x, y) for c, x, y in zip(conds, on(idx), off(idx))]


Ops.select = _select  # type: ignore[attr-defined]

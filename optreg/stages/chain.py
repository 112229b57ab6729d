"""Stages and chains: an optimizer's update rule as a short list of small per-tensor transformations.

In the manner of optax's gradient transformations: a stage owns its state, reads its
hyperparameters from the param group, and transforms the update `u` (which starts as the gradient)
or the parameter. A chain runs its stages in order over a `Batch` of tensors of one param group.

    AdamW (Cerebras) = [AdamMoments, BiasCorrection(counter="power"), AdamDirection(eps="hat"), DecoupledDecay, ApplyLR]

Every stage is written once against `optreg.stages.ops.Ops`, so the same code runs eager (per
tensor), foreach (multi-tensor) and fused (compiled with torch.compile).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Literal, Mapping

import torch

from optreg.stages.ops import Ops
from optreg.stages.state_codec import close_state, narrow_, open_state, scale_name, widen, widened


@dataclass(slots=True)
class Batch:
    """One step of one param group over a list of tensors (a chunk of it under `fused`).

    params   the parameters, updated in place by the last stage
    u        the update being built; starts as the gradient (a fresh tensor the chain may overwrite)
    state    per-parameter state by name, one list entry per tensor
    hp       the group's hyperparameters and this step's host scalars (`lr`, `step`, `bc1`, ...):
             Python numbers, or 0-d tensors under `fused`
    ops      the execution's operations
    slots    values that one stage hands to a later one (Adam's numerator and denominator)
    """

    params: list[torch.Tensor]
    u: list[torch.Tensor]
    state: Mapping[str, list[torch.Tensor]]
    hp: Mapping[str, Any]
    ops: Ops
    slots: dict[str, Any] = field(default_factory=dict)


class Stage:
    """One per-tensor transformation. Subclasses set `state_names` and override what they need.

    init(p, group)        this stage's state tensors of parameter `p` (zeros, ones, ...)
    host(group, hp)       add this step's host-side scalars to `hp` (from the step count, say)
    apply(batch)          the transformation, in place

    Rules that keep one stage correct in all three executions: branch in `apply` only on flags
    (bools, strings: `host` derives them, e.g. `hp["l2_on"] = wd != 0`), since numbers arrive as
    0-d tensors under `fused`; treat `b.u` as read-only and assign a new list (it starts as the
    user's `p.grad`); write state and parameters in place through `b.ops`.

    `scalars` says how the stage's host scalars reach tensors below float64 (a setting of the stages
    that have host scalars):

        "native"   Python floats; torch rounds a scalar to float32 where a float32 tensor takes it, so a
                   derived one (1 - β) is the float32 rounding of its float64 value
        "float32"  as kernels with C++ `float` attributes form them (OneFlow): from float32
                   hyperparameters in float32 arithmetic (1 - 0.999f = 9.9998713e-4, not 1e-3); `host`
                   records these forms under `key + F32` and `apply` reads them through `scalar()`.
                   float64 tensors keep the native values.
    """

    #: names of the per-parameter state this stage owns (in `init`'s order)
    state_names: ClassVar[tuple[str, ...]] = ()
    #: state names that have the parameter's shape (Cerebras `state_names_to_sparsify`)
    sparsify: ClassVar[tuple[str, ...]] = ()
    #: the state that the group's `state_dtype` stores in fewer bytes, each with its 8-bit map: "signed"
    #: (a first moment) or "unsigned" (never negative: a second moment); the rest stays as it is
    #: (counters, powers, factored moments, step sizes: `optreg.stages.state_codec`)
    shrinks: ClassVar[Mapping[str, str]] = {}
    #: whether the stage needs the tensor's own shape (factored moments); a chain without such a
    #: stage runs on flattened tensors under `fused`
    shape_aware: ClassVar[bool] = False
    #: whether the stage reduces each tensor to a value (a norm): a chain with such a stage does not run
    #: over a whole contiguous group at once (`Chain.flat`)
    per_tensor: ClassVar[bool] = False
    #: whether the stage's per-tensor reductions are 2-norms (`ops.norm`) and nothing else, which a
    #: contiguous group's fused step takes as sums of whole rows (`Chain.segmented`)
    norms_only: ClassVar[bool] = False
    #: whether the stage is written for stacks of same-shape tensors as well (a leading batch dimension,
    #: its reductions through `ops.rms` / `ops.norm`, per-tensor values (B, 1, …, 1): `ops.Stacked`); None:
    #: when it is element-wise (`stacks`)
    stackable: ClassVar[bool | None] = None
    #: "native" or "float32" (see above); an instance setting of the stages that take it
    scalars: str = "native"
    #: whether the stage writes the user's gradient (`p.grad`) in place, as Cerebras' Rprop does: a step then
    #: moves the gradient twice (the benchmarks' roofline counts it)
    writes_grad: bool = False

    def needs_shape(self, hp: Mapping[str, Any]) -> bool:
        """Whether this step needs the tensors' own shapes (a stage may depend on a group flag)."""
        return self.shape_aware

    def stacks(self, hp: Mapping[str, Any]) -> bool:
        """Whether this step can run over a stack of same-shape tensors (`Chain.stacked`)."""
        if self.stackable is not None:
            return self.stackable
        return not self.needs_shape(hp) and not self.per_tensor

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        return {}

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        """Per-step scalars computed on the host from the group (bias corrections, say)."""

    def apply(self, b: Batch) -> None:
        raise NotImplementedError

    def scalar(self, b: Batch, key: str) -> Any:
        """`b.hp[key]` as this stage hands it to the batch's tensors (one dtype per batch): its float32
        form for tensors below float64 when the stage's scalars are "float32"."""
        if self.scalars == "float32" and b.params[0].dtype != torch.float64:
            return b.hp[key + F32]
        return b.hp[key]

    def record32(self, hp: dict[str, Any], forms: Callable[[], Mapping[str, Any]]) -> None:
        """Record the float32 forms of host scalars (`record32(hp, lambda: {"eps": f32(eps)})`) when the setting
        asks for them; `forms` is not called otherwise (so a traced step never rounds a symbolic lr)."""
        if self.scalars == "float32":
            for key, value in forms().items():
                hp[key + F32] = value

    def __repr__(self) -> str:
        """`Name(setting=value)` with the settings that differ from the constructor's defaults."""
        import inspect

        defaults = {n: p.default for n, p in inspect.signature(type(self).__init__).parameters.items()}
        fields = {k: v for k, v in vars(self).items()
                  if not k.startswith("_") and (k not in defaults or defaults[k] != v)}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in fields.items())})"


Scalars = Literal["native", "float32"]

#: the suffix of a host scalar's float32 form in `hp`
F32 = "@f32"


def check_scalars(scalars: str) -> str:
    if scalars not in ("native", "float32"):
        raise ValueError(f"scalars must be 'native' or 'float32', got {scalars!r}")
    return scalars


def zeros(p: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(p, memory_format=torch.preserve_format)


def scalar_state(value: float, p: torch.Tensor) -> torch.Tensor:
    """A 0-d state tensor in the parameter's precision (at least float32)."""
    return torch.tensor(value, dtype=torch.promote_types(p.dtype, torch.float32), device=p.device)


class Chain(tuple):
    """An ordered tuple of stages; `init`, `host` and `apply` run each stage's in turn."""

    def __new__(cls, *stages: Stage) -> "Chain":
        return super().__new__(cls, stages)

    def __reduce__(self) -> tuple:
        """Copies and pickles rebuild the chain from its stages (the caches formed from them are left out)."""
        return type(self), tuple(self)

    @property
    def state_names(self) -> tuple[str, ...]:
        """Every stage's state names, then the block scales of the state that int8 stores (`shrinks`); made once (a
        step reads them)."""
        names = self.__dict__.get("_state_names")
        if names is None:
            names = tuple(n for s in self for n in s.state_names)
            names = self.__dict__["_state_names"] = names + tuple(scale_name(n) for n in self.shrinks)
        return names

    @property
    def shrinks(self) -> dict[str, str]:
        """The state that `state_dtype` stores in fewer bytes, with its 8-bit map (`Stage.shrinks`)."""
        maps = self.__dict__.get("_shrinks")
        if maps is None:
            maps = self.__dict__["_shrinks"] = {n: kind for s in self for n, kind in s.shrinks.items()}
        return maps

    @property
    def sparsify(self) -> tuple[str, ...]:
        return tuple(n for s in self for n in s.sparsify)

    def needs_shape(self, hp: Mapping[str, Any]) -> bool:
        return any(s.needs_shape(hp) for s in self)

    @property
    def writes_grad(self) -> bool:
        """Whether a stage writes the user's gradient in place (`Stage.writes_grad`)."""
        return any(s.writes_grad for s in self)

    @property
    def shaped(self) -> bool:
        """Whether a stage always needs shapes (Adafactor's factored moments): a contiguous group never runs
        the chain by rows, and packs its slices without padding."""
        return any(s.shape_aware for s in self)

    def flat(self, hp: Mapping[str, Any]) -> bool:
        """Whether the chain is element-wise this step, so that it can run over a whole contiguous group
        as one tensor (no shapes, no per-tensor reductions)."""
        return not self.needs_shape(hp) and not any(s.per_tensor for s in self)

    def reductions(self, hp: Mapping[str, Any]) -> int:
        """How many loops of its own per tensor the chain's reductions take in the compiled step this step
        (`optreg.stages.openmp`): one for its norm stages together (`norms_only`: the sum of squares of an update
        joins the loop that forms it, that of an input, the parameters or LARS' gradient, takes a pass of its
        own, however many stages take norms), one for each other stage that reduces a tensor to values (an
        RMS, a factored moment)."""
        norms = any(s.per_tensor and s.norms_only for s in self)
        return int(norms) + sum(1 for s in self if (s.per_tensor and not s.norms_only) or s.needs_shape(hp))

    def segmented(self, hp: Mapping[str, Any]) -> bool:
        """Whether the chain's only per-tensor reductions are norms this step (LAMB), so that a contiguous
        group's fused step can run it over the whole group with a norm per parameter's rows."""
        return not self.needs_shape(hp) and all(s.norms_only for s in self if s.per_tensor)

    def stacked(self, hp: Mapping[str, Any]) -> bool:
        """Whether the chain needs shapes this step and every stage can run over stacks of same-shape
        tensors (Adafactor's factored moments), so that a contiguous group's fused step runs it over its
        slices stacked by shape."""
        return self.needs_shape(hp) and all(s.stacks(hp) for s in self)

    def around_norms(self) -> tuple["Chain", "Chain"]:
        """(the stages before the first per-tensor stage, the rest), formed once: `run_rows` runs them as
        two calls, which share the host scalars but not `Batch.slots` (a later stage must not read a slot
        that an earlier one set before the split; the three LAMBs' do not)."""
        parts = self.__dict__.get("_parts")
        if parts is None:
            first = next((i for i, s in enumerate(self) if s.per_tensor), len(self))
            parts = self.__dict__["_parts"] = (Chain(*self[:first]), Chain(*self[first:]))
        return parts

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        state: dict[str, torch.Tensor] = {}
        for stage in self:
            state.update(stage.init(p, group))
        return state

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> dict[str, Any]:
        for stage in self:
            stage.host(group, hp)
        return hp

    def apply(self, b: Batch) -> None:
        """Each stage in turn; state stored in fewer bytes (`state_dtype`) is decoded for the stages and
        encoded back after them (inside the compiled step under `fused`); under "float32" and "int8" (whose
        state decodes into float32) the stages of a half-precision batch run on float32 copies of its parameters
        and gradients, and the parameters take the result rounded once."""
        opened = halves = None
        if b.hp.get("state_dtype"):
            maps = self.shrinks
            b.state, opened = open_state(maps, b.state, b.params)
            if widened(b.params, b.hp):
                halves = b.params
                b.params, b.u = widen(halves), widen(b.u)
        for stage in self:
            stage.apply(b)
        if opened:
            close_state(maps, b.state, opened)
        if halves is not None:
            narrow_(halves, b.params)
            b.params = halves

    def describe(self) -> str:
        """The stages in order, with their settings: `CoupledDecay → AdamMoments → AdamDirection(eps='hat')`."""
        return " → ".join(repr(s).removesuffix("()") for s in self)

    def key(self) -> str:
        """A stable identity for compile caches: the stages and their settings (formed once: a chain's
        stages are set when its optimizer class is defined)."""
        key = self.__dict__.get("_key")
        if key is None:
            key = self.__dict__["_key"] = repr(tuple(self))
        return key


Transform = Callable[[Batch], None]

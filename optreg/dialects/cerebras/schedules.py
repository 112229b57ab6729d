"""Cerebras' lr schedulers (cerebras.pytorch.optim.lr_scheduler, cerebras_pytorch 2.10) as closed forms.

Every Cerebras schedule is absolute: it sets the lr itself and ignores the optimizer's lr. Cerebras
evaluates these forms in float32 on the device; here they are float64, except PolynomialLR (and LinearLR),
computed in float32 as Cerebras does, where float32's 1 - t/T visibly differs on long warmups.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Literal, Mapping, Optional, Sequence

from optreg.core.float32 import f32
from optreg.errors import Collector
from optreg.schedules.engine import (ABSOLUTE, Chained, DecayPeriod, DecaysOverTotalIters, Delegate, Schedule,
                                      Sequential, SpansTotalIters, anneal, check, check_milestones, check_number,
                                      derive_milestones, half_cosine)
from optreg.dialects.cerebras.schedulers import WD_TWINS
from optreg.dialects.torch.torch_forms import (CyclicOptions, cyclic_scale, cyclic_value, one_cycle_phases,
                                               one_cycle_value)

StepFunction = Callable[[int], float]


@dataclass(frozen=True)
class CerebrasSchedule(Schedule):
    """Absolute; a chain normalises a later stage by its initial_learning_rate (Cerebras' initial_val)."""

    values = ABSOLUTE

    @property
    def initial_value(self) -> float:
        return getattr(self, "initial_learning_rate", None) or self(0)


def _positive(errors: Collector, name: str, value: int) -> None:
    check_number(errors, value, name, low=1)


@dataclass(frozen=True)
class ConstantLR(SpansTotalIters, CerebrasSchedule):
    """lr = learning_rate; total_iters only sets the stage length in a SequentialLR."""

    learning_rate: float
    total_iters: Optional[int] = None

    def __call__(self, step: int) -> float:
        return self.learning_rate

    @property
    def initial_value(self) -> float:
        return self.learning_rate


@dataclass(frozen=True)
class PolynomialLR(DecaysOverTotalIters, CerebrasSchedule):
    """lr = end for t >= T, else (init - end)·(1 - t/(T·a))^power + end, a = ⌈(t+1)/T⌉ if cycle else 1;
    computed in float32, as Cerebras computes it.

    The t >= T clamp comes first, and for t < T a = 1, so `cycle` never changes a value (as in Cerebras).
    """

    initial_learning_rate: float
    end_learning_rate: float
    total_iters: int
    power: float = 1.0
    cycle: bool = False

    def __call__(self, step: int) -> float:
        """In float32, each operation rounded, as Cerebras' `_get_closed_form` computes it with float32 tensors:
        a warmup from 0 over a million steps starts at end·(1 - t/T), where float32's 1 - t/T keeps few digits."""
        if step >= self.total_iters:
            return f32(self.end_learning_rate)
        a = math.ceil(f32((step + 1) / self.total_iters)) if self.cycle else 1.0
        fraction = f32(1.0 - f32(step / f32(self.total_iters * a)))
        scaled = f32(f32(fraction ** self.power) * f32(self.initial_learning_rate - self.end_learning_rate))
        return f32(scaled + f32(self.end_learning_rate))


@dataclass(frozen=True)
class ExponentialLR(DecayPeriod, CerebrasSchedule):
    """lr = init·decay_rate^(t/T) (⌊t/T⌋ when staircase), the Keras ExponentialDecay form: it goes on falling
    past T, which is no end (no length; a SequentialLR stage of T steps).

    Args:
        total_iters: the decay period T: the lr is multiplied by decay_rate every T steps, and goes on falling
            after them (not an end); a stage of T steps in a SequentialLR, whose milestones sum them
    """

    initial_learning_rate: float
    total_iters: int
    decay_rate: float
    staircase: bool = False

    def __call__(self, step: int) -> float:
        power = step // self.total_iters if self.staircase else step / self.total_iters
        return self.initial_learning_rate * self.decay_rate ** power


@dataclass(frozen=True)
class InverseExponentialTimeDecayLR(DecayPeriod, CerebrasSchedule):
    """lr = init / (1 + decay_rate·(t^k/T)) (⌊t^k/T⌋ when staircase), Keras InverseTimeDecay: it goes on falling
    past T, which is no end (no length; a SequentialLR stage of T steps).

    Args:
        total_iters: the decay period T (t^k/T in the denominator): the lr goes on falling after T steps (not an
            end); a stage of T steps in a SequentialLR, whose milestones sum them
    """

    initial_learning_rate: float
    step_exponent: int
    total_iters: int
    decay_rate: float
    staircase: bool = False

    def __call__(self, step: int) -> float:
        alpha = float(step) ** self.step_exponent / self.total_iters
        if self.staircase:
            alpha = math.floor(alpha)
        return self.initial_learning_rate / (1.0 + self.decay_rate * alpha)


@dataclass(frozen=True)
class InverseSquareRootDecayLR(CerebrasSchedule):
    """lr = init·scale/√max(t, warmup_steps): flat before warmup_steps (no ramp)."""

    initial_learning_rate: float = 1.0
    scale: float = 1.0
    warmup_steps: int = 1

    def problems(self, errors: Collector) -> None:
        _positive(errors, "warmup_steps", self.warmup_steps)

    def __call__(self, step: int) -> float:
        return self.scale / math.sqrt(max(self.warmup_steps, step)) * self.initial_learning_rate


@dataclass(frozen=True)
class CosineDecayLR(DecaysOverTotalIters, CerebrasSchedule):
    """lr = end + (init - end)·½(1 + cos(π min(t, T)/T)), Keras CosineDecay."""

    initial_learning_rate: float
    end_learning_rate: float
    total_iters: int

    def __call__(self, step: int) -> float:
        progress = min(step, self.total_iters) / self.total_iters
        return anneal(self.initial_learning_rate, self.end_learning_rate, half_cosine(progress))


@dataclass(frozen=True)
class CosineAnnealingLR(CerebrasSchedule):
    """lr = η_min + (init - η_min)·½(1 + cos(π t/T_max)); no clamp (rises again after T_max, like torch)."""

    initial_learning_rate: float
    T_max: int
    eta_min: float = 0.0

    def problems(self, errors: Collector) -> None:
        _positive(errors, "T_max", self.T_max)

    def __call__(self, step: int) -> float:
        return anneal(self.initial_learning_rate, self.eta_min, half_cosine(step / self.T_max))


@dataclass(frozen=True)
class CosineAnnealingWarmRestarts(CerebrasSchedule):
    """Cerebras' restart form: T_cur = t for t < T_0, else ⌊t/T_0⌋·T_0 - T_0; T_mult must be 1.

    Cerebras' closed form subtracts T_0 from the cycle start instead of taking t mod T_0, so after the
    first cycle the lr holds init for a whole cycle, then η_min for the next, alternately. That is a
    bug in cerebras_pytorch (2.10 included); it is reproduced as written.
    """

    initial_learning_rate: float
    T_0: int
    T_mult: int = 1
    eta_min: float = 0.0

    def problems(self, errors: Collector) -> None:
        _positive(errors, "T_0", self.T_0)
        check(errors, self.T_mult == 1, "T_mult", f"Cerebras supports only T_mult = 1, got {self.T_mult}")

    def __call__(self, step: int) -> float:
        t_cur = step if step < self.T_0 else (step // self.T_0) * self.T_0 - self.T_0
        return anneal(self.initial_learning_rate, self.eta_min, half_cosine(t_cur / self.T_0))


@dataclass(frozen=True)
class StepLR(CerebrasSchedule):
    """lr = init·γ^⌊t/step_size⌋."""

    initial_learning_rate: float
    step_size: int
    gamma: float

    def problems(self, errors: Collector) -> None:
        _positive(errors, "step_size", self.step_size)

    def __call__(self, step: int) -> float:
        return self.initial_learning_rate * self.gamma ** (step // self.step_size)


@dataclass(frozen=True)
class MultiStepLR(CerebrasSchedule):
    """lr = init·γ^(number of milestones <= t)."""

    initial_learning_rate: float
    gamma: float
    milestones: Sequence[int]

    def __post_init__(self) -> None:
        object.__setattr__(self, "milestones", tuple(sorted(self.milestones)))
        super().__post_init__()

    def __call__(self, step: int) -> float:
        return self.initial_learning_rate * self.gamma ** bisect.bisect_right(self.milestones, step)


@dataclass(frozen=True)
class PiecewiseConstantLR(CerebrasSchedule):
    """lr = learning_rates[k] on [milestones[k-1], milestones[k]); len(learning_rates) = len(milestones) + 1."""

    learning_rates: Sequence[float]
    milestones: Sequence[int]

    def problems(self, errors: Collector) -> None:
        check(errors, len(self.learning_rates) == len(self.milestones) + 1, "learning_rates",
              f"expected {len(self.milestones) + 1} values (one more than milestones), got {len(self.learning_rates)}")
        errors.extend(check_milestones(list(self.milestones), len(self.milestones) + 1))

    def __call__(self, step: int) -> float:
        return self.learning_rates[bisect.bisect_right(self.milestones, step)]

    @property
    def initial_value(self) -> float:
        return self.learning_rates[0]


@dataclass(frozen=True)
class LambdaLR(CerebrasSchedule):
    """lr = init·λ(t).

    Cerebras' LambdaLR takes its lambdas from a subclass (the un-subclassed defaults are demo
    placeholders); here λ is the `lr_lambda` option, a registered function name or an expression.
    """

    initial_learning_rate: float
    lr_lambda: StepFunction

    def __call__(self, step: int) -> float:
        return self.initial_learning_rate * float(self.lr_lambda(step))


@dataclass(frozen=True)
class MultiplicativeLR(CerebrasSchedule):
    """lr = init·coefficient^t (a closed form; torch's MultiplicativeLR is a running product)."""

    initial_learning_rate: float
    coefficient: float

    def __call__(self, step: int) -> float:
        return self.coefficient ** step * self.initial_learning_rate


@dataclass(frozen=True)
class CyclicLR(CyclicOptions, CerebrasSchedule):
    """torch's triangular CLR on absolute values, without momentum or scale_fn; the mode fixes the scale
    mode (triangular/triangular2: per cycle, exp_range: per iteration) as in torch."""

    scale_mode: Literal["cycle", "iterations"] = "cycle"

    def problems(self, errors: Collector) -> None:
        _positive(errors, "step_size_up", self.step_size_up)
        check(errors, self.step_size_down is None or self.step_size_down >= 1, "step_size_down",
              f"must be >= 1, got {self.step_size_down}")
        check(errors, self.base_lr <= self.max_lr, "max_lr", f"must be >= base_lr ({self.base_lr}), got {self.max_lr}")

    def __call__(self, step: int) -> float:
        down = self.step_size_down if self.step_size_down is not None else self.step_size_up
        scale, reads = cyclic_scale(self.mode, self.gamma, None, self.scale_mode)
        return cyclic_value(step, self.base_lr, self.max_lr, self.step_size_up, down, scale, reads)

    @property
    def initial_value(self) -> float:
        return self.base_lr


@dataclass(frozen=True)
class OneCycleLR(CerebrasSchedule):
    """torch's 1cycle phases from an explicit initial_learning_rate (= max_lr/div_factor in torch) up to
    max_lr and down to initial_learning_rate/final_div_factor; no momentum. Past total_steps the last
    phase's formula continues (Cerebras does not raise)."""

    initial_learning_rate: float
    max_lr: float
    total_steps: int = 1000
    pct_start: float = 0.3
    final_div_factor: float = 1e4
    three_phase: bool = False
    anneal_strategy: Literal["cos", "linear"] = "cos"

    def problems(self, errors: Collector) -> None:
        _positive(errors, "total_steps", self.total_steps)
        check_number(errors, self.pct_start, "pct_start", 0, 1)
        check(errors, self.initial_learning_rate <= self.max_lr, "max_lr",
              f"must be >= initial_learning_rate ({self.initial_learning_rate}), got {self.max_lr}")

    def __call__(self, step: int) -> float:
        low = self.initial_learning_rate / self.final_div_factor
        phases = one_cycle_phases(self.initial_learning_rate, self.max_lr, low, self.total_steps,
                                  self.pct_start, self.three_phase)
        return one_cycle_value(step, phases, self.anneal_strategy)


@dataclass(frozen=True)
class SequentialLR(Delegate):
    """Cerebras SequentialLR (cerebras_pytorch 2.10 SequentialScheduler): lr(t) = s_k(t - M_{k-1}) for
    M_{k-1} <= t < M_k (M_{-1} = 0): stage k starts at its milestone on its own step counter, which
    SequentialScheduler.increment_last_epoch advances only once t > M_{k-1}.

    milestones default to the running sums of the stages' total_iters; given ones may differ from them (a
    stage is cut short, or holds its formula past its length). Stages may jump in value at a milestone
    (Cerebras' PiecewiseConstantLR is a SequentialLR of constants).
    """

    values = ABSOLUTE
    schedulers: Sequence[Schedule]
    milestones: Optional[Sequence[int]] = None

    checks_stage_keys: ClassVar[bool] = True   # Cerebras' rule (`_same_key`), not build.check_stage_key's

    def problems(self, errors: Collector) -> None:
        _same_key(self, self.schedulers, errors)

    def build(self) -> Schedule:
        milestones = derive_milestones(self.schedulers) if self.milestones is None else list(self.milestones)
        return Sequential(self.schedulers, milestones, "local")


@dataclass(frozen=True)
class ChainedLR(Delegate):
    """Cerebras ChainedLR / ChainedScheduler: s_0(t)·∏_{k>=1} s_k(t)/s_k.initial_learning_rate."""

    values = ABSOLUTE
    schedulers: Sequence[Schedule]

    checks_stage_keys: ClassVar[bool] = True   # Cerebras' rule (`_same_key`), not build.check_stage_key's

    def problems(self, errors: Collector) -> None:
        _same_key(self, self.schedulers, errors)

    def build(self) -> Schedule:
        return Chained(self.schedulers)


def param_group_key(schedule: Any) -> str:
    """The param-group key a Cerebras schedule drives: `lr`, or `weight_decay` for the `*WD` twins."""
    return getattr(schedule, "param_group_key", "lr")


def _same_key(combinator: Any, stages: Sequence[Any], errors: Collector) -> None:
    """Cerebras' SequentialScheduler / ChainedScheduler refuse stages that drive another param-group key."""
    key = param_group_key(combinator)
    for i, stage in enumerate(stages):
        check(errors, param_group_key(stage) == key, f"schedulers.{i}",
              f"{type(combinator).__name__} drives {key!r}; this stage ({type(stage).__name__}) drives "
              f"{param_group_key(stage)!r}")


def group_scale(group: Mapping[str, Any]) -> float:
    """A group's factor under ScalePerParamLR / ScalePerParamWD: `adjust_learning_rate`, else `adjust_val`, else 1
    (cerebras_pytorch 2.10 ScalePerParamScheduler reads both keys for the lr and the weight decay alike)."""
    return float(group.get("adjust_learning_rate", group.get("adjust_val", 1.0)))


@dataclass(frozen=True)
class Scaled:
    """An absolute schedule times one group's factor (cerebras.pytorch ScalePerParamLR / ScalePerParamWD)."""

    schedule: Any
    scale: float

    values = ABSOLUTE

    def bind(self, bases, default):
        return Scaled(self.schedule.bind(bases, default), self.scale)

    def apply(self, step: int, base: float) -> float:
        return self.schedule.apply(step, base) * self.scale

    def __call__(self, step: int) -> float:
        return self.apply(step, 1.0)

    @property
    def length(self):
        return self.schedule.length


@dataclass(frozen=True)
class ScalePerParamLR(Delegate):
    """Cerebras ScalePerParamLR (ScalePerParamScheduler): group i gets s(t)·scale_i, scale_i = the group's
    `adjust_learning_rate` (else `adjust_val`, else 1), read when the scheduler is built (muP's per-layer lr)."""

    values = ABSOLUTE
    scheduler: Schedule

    checks_stage_keys: ClassVar[bool] = True   # Cerebras' rule (`_same_key`), not build.check_stage_key's

    def problems(self, errors: Collector) -> None:
        _same_key(self, [self.scheduler], errors)

    def build(self) -> Schedule:
        return self.scheduler

    def per_group(self, group: Mapping[str, Any]) -> Scaled:
        """The schedule one parameter group follows."""
        return Scaled(self.scheduler, group_scale(group))


class WeightDecaySchedule:
    """Mixin of the `*WD` twins (cerebras.pytorch.optim.weight_decay_scheduler, cerebras_pytorch 2.10): the lr
    class's closed form driving each group's `weight_decay` (Cerebras' `param_group_key`)."""

    param_group_key: ClassVar[str] = "weight_decay"


def _weight_decay_twin(name: str, lr_class: type) -> type:
    doc = f"cerebras.pytorch.optim.weight_decay_scheduler.{name}: {lr_class.__name__}'s closed form on weight_decay."
    return dataclass(frozen=True)(type(name, (WeightDecaySchedule, lr_class), {"__doc__": doc,
                                                                              "__module__": __name__}))


for _wd, _lr in WD_TWINS.items():
    globals()[_wd] = _weight_decay_twin(_wd, globals()[_lr])


__all__ = ["ConstantLR", "PolynomialLR", "ExponentialLR", "InverseExponentialTimeDecayLR",
           "InverseSquareRootDecayLR", "CosineDecayLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
           "StepLR", "MultiStepLR", "PiecewiseConstantLR", "LambdaLR", "MultiplicativeLR", "CyclicLR",
           "OneCycleLR", "SequentialLR", "ChainedLR", "ScalePerParamLR", *WD_TWINS]

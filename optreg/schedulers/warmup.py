"""The warmup family in the vocabulary users type: HF `get_scheduler` names (transformers 4.5x
optimization.py), timm's cycle schedulers (timm 1.0 timm/scheduler) and NeMo's policies
(nemo/core/optim/lr_scheduler.py, NeMo 2.x).

All are factor-valued (they scale each group's base lr); timm and NeMo also read the base itself
(their lr_min / min_lr are absolute), which `apply(step, base)` handles. Step counts that are parts of
a total (HF num_warmup_steps, timm warmup_t) may be given as a fraction of that total: 0.05 means
ceil(0.05·total) steps (HF rounds warmup_ratio up the same way).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Literal, Optional, Sequence, Union

from optreg.errors import Collector, ConfigError
from optreg.schedulers.engine import ABSOLUTE, Schedule, check

Steps = Union[int, float]


def resolve_steps(value: Steps | None, total: int | None, name: str, total_name: str) -> int | None:
    """An int step count as is; a float in [0, 1) as ceil(value·total); a whole float >= 1 as an int.

    ConfigError (at `name`) for a fraction without a total, a negative count, or a non-whole float >= 1.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise ConfigError(f"expected a step count or a fraction, got {value!r}", name)
    if isinstance(value, int):
        if value < 0:
            raise ConfigError(f"must be >= 0, got {value}", name)
        return value
    if 0 <= value < 1:
        if total is None:
            raise ConfigError(f"a fraction ({value}) needs {total_name} to count from", name)
        return math.ceil(round(value * total, 9))  # round first: 0.05·300 is 15.000000000000002
    if value >= 1 and float(value).is_integer():
        return int(value)
    raise ConfigError(f"expected a step count (int) or a fraction in [0, 1), got {value!r}", name)


# ---------------------------------------------------------------------------------------------------
# HF transformers get_scheduler
# ---------------------------------------------------------------------------------------------------
def hf_warmup(step: int, warmup: int) -> float:
    """HF linear warmup factor t/max(1, W), 0 at t = 0."""
    return float(step) / float(max(1, warmup))


@dataclass(frozen=True)
class HFSchedule(Schedule):
    """Shared HF plumbing: num_warmup_steps (int or fraction) resolved against num_training_steps."""

    def __post_init__(self) -> None:
        for name in ("num_warmup_steps", "num_decay_steps", "num_stable_steps"):
            if hasattr(self, name):
                total = getattr(self, "num_training_steps", None)
                object.__setattr__(self, name, resolve_steps(getattr(self, name), total, name, "num_training_steps"))
        super().__post_init__()

    def problems(self, errors: Collector) -> None:
        total = getattr(self, "num_training_steps", None)
        check(errors, total is None or total >= 1, "num_training_steps", f"must be >= 1, got {total}")

    @property
    def length(self) -> int | None:
        return getattr(self, "num_training_steps", None)


@dataclass(frozen=True)
class Constant(HFSchedule):
    """HF constant: factor 1."""

    def __call__(self, step: int) -> float:
        return 1.0


@dataclass(frozen=True)
class ConstantWithWarmup(HFSchedule):
    """HF constant_with_warmup: t/W during warmup, then 1."""

    num_warmup_steps: Steps

    def __call__(self, step: int) -> float:
        return hf_warmup(step, self.num_warmup_steps) if step < self.num_warmup_steps else 1.0


@dataclass(frozen=True)
class Linear(HFSchedule):
    """HF linear: warmup, then max(0, (T - t)/(T - W))."""

    num_warmup_steps: Steps
    num_training_steps: int

    def __call__(self, step: int) -> float:
        w, total = self.num_warmup_steps, self.num_training_steps
        if step < w:
            return hf_warmup(step, w)
        return max(0.0, float(total - step) / float(max(1, total - w)))


@dataclass(frozen=True)
class Cosine(HFSchedule):
    """HF cosine: warmup, then max(0, ½(1 + cos(2π·num_cycles·p))), p = (t - W)/(T - W)."""

    num_warmup_steps: Steps
    num_training_steps: int
    num_cycles: float = 0.5

    def __call__(self, step: int) -> float:
        w, total = self.num_warmup_steps, self.num_training_steps
        if step < w:
            return hf_warmup(step, w)
        progress = float(step - w) / float(max(1, total - w))
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(self.num_cycles) * 2.0 * progress)))


@dataclass(frozen=True)
class CosineWithRestarts(HFSchedule):
    """HF cosine_with_restarts: warmup, then ½(1 + cos(π·((n·p) mod 1))) until p = 1, then 0."""

    num_warmup_steps: Steps
    num_training_steps: int
    num_cycles: int = 1

    def __call__(self, step: int) -> float:
        w, total = self.num_warmup_steps, self.num_training_steps
        if step < w:
            return hf_warmup(step, w)
        progress = float(step - w) / float(max(1, total - w))
        if progress >= 1.0:
            return 0.0
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * ((float(self.num_cycles) * progress) % 1.0))))


@dataclass(frozen=True)
class Polynomial(HFSchedule):
    """HF polynomial: warmup, then [(l0 - lr_end)(1 - p)^power + lr_end]/l0, lr_end/l0 past T.

    l0 is the optimizer's default lr (optimizer.defaults["lr"]), not the group's: HF reads it that
    way, so groups with another lr end at lr_end·(their lr/l0). It is taken from the optimizer when
    the scheduler is built, unless lr_init is given.
    """

    num_warmup_steps: Steps
    num_training_steps: int
    lr_end: float = 1e-7
    power: float = 1.0
    lr_init: Optional[float] = None

    def problems(self, errors: Collector) -> None:
        super().problems(errors)
        check(errors, self.lr_init is None or self.lr_init > self.lr_end, "lr_end",
              f"must be smaller than the initial lr ({self.lr_init}), got {self.lr_end}")

    def bind(self, bases: Sequence[float], default: float | None) -> Schedule:
        if self.lr_init is not None or default is None:
            return self
        return dataclasses.replace(self, lr_init=default)

    def __call__(self, step: int) -> float:
        if self.lr_init is None:
            raise ConfigError("needs the optimizer's lr (lr_init) to be evaluated outside an optimizer", "lr_init")
        w, total, l0 = self.num_warmup_steps, self.num_training_steps, self.lr_init
        if step < w:
            return hf_warmup(step, w)
        if step > total:
            return self.lr_end / l0
        remaining = 1 - (step - w) / (total - w)
        return ((l0 - self.lr_end) * remaining ** self.power + self.lr_end) / l0


@dataclass(frozen=True)
class InverseSqrt(HFSchedule):
    """HF inverse_sqrt: warmup, then 1/√((t + τ - W)/τ); τ = timescale, default W (10 000 if W = 0)."""

    num_warmup_steps: Steps
    timescale: Optional[int] = None

    def __call__(self, step: int) -> float:
        w = self.num_warmup_steps
        if step < w:
            return hf_warmup(step, w)
        timescale = self.timescale if self.timescale is not None else (w or 10_000)
        return 1.0 / math.sqrt((step + timescale - w) / timescale)


@dataclass(frozen=True)
class CosineWithMinLR(HFSchedule):
    """HF cosine_with_min_lr: warmup, then max(0, c·(1 - r) + r), c the HF cosine factor and r = min_lr_rate
    (or min_lr / optimizer.defaults["lr"]); exactly one of min_lr and min_lr_rate."""

    num_warmup_steps: Steps
    num_training_steps: int
    num_cycles: float = 0.5
    min_lr: Optional[float] = None
    min_lr_rate: Optional[float] = None

    def problems(self, errors: Collector) -> None:
        super().problems(errors)
        given = (self.min_lr is not None) + (self.min_lr_rate is not None)
        check(errors, given < 2, "min_lr", "give min_lr or min_lr_rate, not both")
        check(errors, given > 0, "min_lr_rate", "give min_lr or min_lr_rate")

    def bind(self, bases: Sequence[float], default: float | None) -> Schedule:
        if self.min_lr is None:
            return self
        if not default:
            raise ConfigError("min_lr needs the optimizer's default lr (> 0) to become a rate", "min_lr")
        return dataclasses.replace(self, min_lr=None, min_lr_rate=self.min_lr / default)

    def rate(self) -> float:
        if self.min_lr_rate is None:
            raise ConfigError("min_lr needs the optimizer's lr: give min_lr_rate to evaluate outside an optimizer",
                              "min_lr")
        return self.min_lr_rate

    def __call__(self, step: int) -> float:
        w, total, r = self.num_warmup_steps, self.num_training_steps, self.rate()
        if step < w:
            return hf_warmup(step, w)
        progress = float(step - w) / float(max(1, total - w))
        factor = 0.5 * (1.0 + math.cos(math.pi * float(self.num_cycles) * 2.0 * progress))
        return max(0.0, factor * (1 - r) + r)


@dataclass(frozen=True)
class CosineWarmupWithMinLR(CosineWithMinLR):
    """HF cosine_warmup_with_min_lr: warmup (t+1)/W (or r_w + (1 - r_w)·t/(W - 1) with warmup_lr_rate),
    then the min-lr cosine on p = (t - W + 1)/(T - W)."""

    warmup_lr_rate: Optional[float] = None

    def __call__(self, step: int) -> float:
        t, w, total, r = float(step), float(self.num_warmup_steps), float(self.num_training_steps), self.rate()
        if t < w:
            if self.warmup_lr_rate is None:
                return (t + 1.0) / max(1.0, w)
            rw = float(self.warmup_lr_rate)
            return rw + (1.0 - rw) * t / max(1, w - 1)
        progress = (t - w + 1.0) / max(1.0, total - w)
        factor = 0.5 * (1.0 + math.cos(math.pi * self.num_cycles * 2.0 * progress))
        return max(0, factor * (1 - r) + r)


def _wsd_shape(kind: str, progress: float, rising: bool, num_cycles: float) -> float:
    if kind == "linear":
        return progress if rising else 1.0 - progress
    if kind == "cosine":
        if rising:
            return 0.5 * (1.0 - math.cos(math.pi * progress))
        return 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress))
    return 1.0 - math.sqrt(1.0 - progress) if rising else 1.0 - math.sqrt(progress)


@dataclass(frozen=True)
class WarmupStableDecay(HFSchedule):
    """HF warmup_stable_decay: ramp into [r, 1] over W, 1 for the stable steps, decay into [r, 1] over
    D, then r (r = min_lr_ratio). Stable steps default to T - W - D."""

    num_warmup_steps: Steps
    num_decay_steps: Steps
    num_training_steps: Optional[int] = None
    num_stable_steps: Optional[Steps] = None
    warmup_type: Literal["linear", "cosine", "1-sqrt"] = "linear"
    decay_type: Literal["linear", "cosine", "1-sqrt"] = "cosine"
    min_lr_ratio: float = 0.0
    num_cycles: float = 0.5

    def problems(self, errors: Collector) -> None:
        super().problems(errors)
        check(errors, self.num_training_steps is not None or self.num_stable_steps is not None,
              "num_training_steps", "give num_training_steps or num_stable_steps")
        for name in ("warmup_type", "decay_type"):
            value = getattr(self, name)
            check(errors, value in ("linear", "cosine", "1-sqrt"), name,
                  f"must be 'linear', 'cosine' or '1-sqrt', got {value!r}")

    @property
    def stable(self) -> int:
        if self.num_stable_steps is not None:
            return self.num_stable_steps
        return self.num_training_steps - self.num_warmup_steps - self.num_decay_steps

    @property
    def length(self) -> int:
        return self.num_warmup_steps + self.stable + self.num_decay_steps

    def __call__(self, step: int) -> float:
        w, s, d, r = self.num_warmup_steps, self.stable, self.num_decay_steps, self.min_lr_ratio
        if step < w:
            progress = float(step) / float(max(1, w))
            return max(0.0, _wsd_shape(self.warmup_type, progress, True, self.num_cycles) * (1.0 - r) + r)
        if step < w + s:
            return 1.0
        if step < w + s + d:
            progress = float(step - w - s) / float(max(1, d))
            return max(0.0, _wsd_shape(self.decay_type, progress, False, self.num_cycles) * (1.0 - r) + r)
        return r


# ---------------------------------------------------------------------------------------------------
# timm cycle schedulers
# ---------------------------------------------------------------------------------------------------
def timm_cycle(t: float, t_initial: int, cycle_mul: float) -> tuple[int, float, float]:
    """(cycle i, t within it, cycle length) as timm computes them (a float log when cycle_mul != 1)."""
    if cycle_mul != 1:
        i = math.floor(math.log(1 - t / t_initial * (1 - cycle_mul), cycle_mul))
        t_i = cycle_mul ** i * t_initial
        t_curr = t - (1 - cycle_mul ** i) / (1 - cycle_mul) * t_initial
        return i, t_curr, t_i
    i = t // t_initial
    return int(i), t - t_initial * i, t_initial


@dataclass(frozen=True)
class TimmCycle(Schedule):
    """timm's cycle scheduler shell: linear warmup from warmup_lr_init to the base lr over warmup_t,
    then cycles; in cycle i the peak is base·cycle_decay^i; lr_min once i >= cycle_limit.

    warmup_prefix: the cycles start after the warmup (t - warmup_t), else at step 0. lr_min and
    warmup_lr_init are absolute values; the peak is the group's base lr.
    """

    def __post_init__(self) -> None:
        object.__setattr__(self, "warmup_t", resolve_steps(self.warmup_t, self.t_initial, "warmup_t", "t_initial"))
        super().__post_init__()

    def problems(self, errors: Collector) -> None:
        check(errors, self.t_initial >= 1, "t_initial", f"must be >= 1, got {self.t_initial}")
        check(errors, self.cycle_mul > 0, "cycle_mul", f"must be > 0, got {self.cycle_mul}")

    def shape(self, t_curr: float, t_i: float) -> float:
        """The cycle's shape in [0, 1]: 1 at the cycle's start."""
        raise NotImplementedError

    def warmup_target(self, base: float) -> float:
        return base

    def apply(self, step: int, base: float) -> float:
        if step < self.warmup_t:
            return self.warmup_lr_init + step * ((self.warmup_target(base) - self.warmup_lr_init) / self.warmup_t)
        return self.cycles(step, base)

    def cycles(self, t: int, base: float) -> float:
        if self.warmup_prefix:
            t = t - self.warmup_t
        i, t_curr, t_i = timm_cycle(t, self.t_initial, self.cycle_mul)
        if i >= self.cycle_limit:
            return self.lr_min
        peak = base * self.cycle_decay ** i
        return self.lr_min + (peak - self.lr_min) * self.shape(t_curr, t_i)

    @property
    def length(self) -> int:
        if self.cycle_mul == 1:
            cycles = self.t_initial * max(1, self.cycle_limit)
        else:
            n = max(1, self.cycle_limit)
            cycles = int(math.floor(-self.t_initial * (self.cycle_mul ** n - 1) / (1 - self.cycle_mul)))
        return cycles + self.warmup_t if self.warmup_prefix else cycles


@dataclass(frozen=True)
class TimmCosine(TimmCycle):
    """timm CosineLRScheduler: lr_min + (peak - lr_min)·½(1 + cos(π·t_curr^k/t_i^k)). Noise is not reproduced."""

    t_initial: int
    lr_min: float = 0.0
    cycle_mul: float = 1.0
    cycle_decay: float = 1.0
    cycle_limit: int = 1
    warmup_t: Steps = 0
    warmup_lr_init: float = 0.0
    warmup_prefix: bool = False
    k_decay: float = 1.0

    def shape(self, t_curr: float, t_i: float) -> float:
        k = self.k_decay
        return 0.5 * (1 + math.cos(math.pi * t_curr ** k / t_i ** k))


@dataclass(frozen=True)
class TimmPoly(TimmCycle):
    """timm PolyLRScheduler: lr_min + (peak - lr_min)·(1 - t_curr^k/t_i^k)^power."""

    t_initial: int
    power: float = 0.5
    lr_min: float = 0.0
    cycle_mul: float = 1.0
    cycle_decay: float = 1.0
    cycle_limit: int = 1
    warmup_t: Steps = 0
    warmup_lr_init: float = 0.0
    warmup_prefix: bool = False
    k_decay: float = 1.0

    def shape(self, t_curr: float, t_i: float) -> float:
        k = self.k_decay
        return (1 - t_curr ** k / t_i ** k) ** self.power


@dataclass(frozen=True)
class TimmTanh(TimmCycle):
    """timm TanhLRScheduler: lr_min + (peak - lr_min)·½(1 - tanh(lb(1 - x) + ub·x)), x = t_curr/t_i.
    Without warmup_prefix the warmup ramps to the curve's value at warmup_t, as timm does."""

    t_initial: int
    lb: float = -7.0
    ub: float = 3.0
    lr_min: float = 0.0
    cycle_mul: float = 1.0
    cycle_decay: float = 1.0
    cycle_limit: int = 1
    warmup_t: Steps = 0
    warmup_lr_init: float = 0.0
    warmup_prefix: bool = False

    def problems(self, errors: Collector) -> None:
        super().problems(errors)
        check(errors, self.lb < self.ub, "ub", f"must be > lb ({self.lb}), got {self.ub}")

    def shape(self, t_curr: float, t_i: float) -> float:
        x = t_curr / t_i
        return 0.5 * (1 - math.tanh(self.lb * (1.0 - x) + self.ub * x))

    def warmup_target(self, base: float) -> float:
        return base if self.warmup_prefix else self.cycles(self.warmup_t, base)


@dataclass(frozen=True)
class TimmStep(Schedule):
    """timm StepLRScheduler: warmup, then base·decay_rate^⌊t/decay_t⌋ (t counted after the warmup by default)."""

    decay_t: float
    decay_rate: float = 1.0
    warmup_t: int = 0
    warmup_lr_init: float = 0.0
    warmup_prefix: bool = True

    def problems(self, errors: Collector) -> None:
        check(errors, self.decay_t > 0, "decay_t", f"must be > 0, got {self.decay_t}")

    def decays(self, t: int) -> int:
        return int(t // self.decay_t)

    def apply(self, step: int, base: float) -> float:
        if step < self.warmup_t:
            return self.warmup_lr_init + step * ((base - self.warmup_lr_init) / self.warmup_t)
        t = step - self.warmup_t if self.warmup_prefix else step
        return base * self.decay_rate ** self.decays(t)


@dataclass(frozen=True)
class TimmMultiStep(TimmStep):
    """timm MultiStepLRScheduler: warmup, then base·decay_rate^(number of decay_t <= t)."""

    decay_t: Sequence[int]

    def problems(self, errors: Collector) -> None:
        for i in range(1, len(self.decay_t)):
            if not self.decay_t[i] > self.decay_t[i - 1]:
                errors.add("decay_t", f"must be strictly increasing, got {list(self.decay_t)}")
                break

    def decays(self, t: int) -> int:
        import bisect

        return bisect.bisect_right(list(self.decay_t), t)


# ---------------------------------------------------------------------------------------------------
# NeMo policies
# ---------------------------------------------------------------------------------------------------
def _count(steps: int | None, ratio: float | None, max_steps: int | None, name: str) -> int:
    """NeMo's `X_steps` or int(`X_ratio`·max_steps) (exactly one may be given), 0 when neither."""
    if steps is not None and ratio is not None:
        raise ConfigError(f"give {name}_steps or {name}_ratio, not both", f"{name}_ratio")
    if steps is not None:
        if steps < 0:
            raise ConfigError(f"must be >= 0, got {steps}", f"{name}_steps")
        return steps
    if ratio is not None:
        if max_steps is None:
            raise ConfigError(f"{name}_ratio needs max_steps", f"{name}_ratio")
        return int(ratio * max_steps)
    return 0


@dataclass(frozen=True)
class NeMoPolicy(Schedule):
    """NeMo WarmupPolicy: warmup b·(t+1)/(W+1) while t <= W, min_lr past max_steps, else `decay`.

    W = warmup_steps or int(warmup_ratio·max_steps). Each group uses its own base lr, except where
    NeMo uses the first group's (noted on those classes).
    """

    def __post_init__(self) -> None:
        object.__setattr__(self, "_warmup", _count(self.warmup_steps, self.warmup_ratio, self.max_steps, "warmup"))
        super().__post_init__()

    @property
    def W(self) -> int:
        return self.__dict__["_warmup"]

    def problems(self, errors: Collector) -> None:
        check(errors, self.max_steps is None or self.max_steps >= 1, "max_steps", f"must be >= 1, got {self.max_steps}")

    def warmup(self, step: int, base: float) -> float:
        return base * (step + 1) / (self.W + 1)

    def decay(self, step: int, base: float) -> float:
        return base

    def in_warmup(self, step: int) -> bool:
        return self.W > 0 and step <= self.W

    def apply(self, step: int, base: float) -> float:
        if self.in_warmup(step):
            return self.warmup(step, base)
        if self.max_steps is not None and step > self.max_steps:
            return self.min_lr
        return self.decay(step, base)

    def bind(self, bases: Sequence[float], default: float | None) -> Schedule:
        if any(b < self.min_lr for b in bases) and self.checks_min:
            raise ConfigError(f"a parameter group's lr ({min(bases)}) is below min_lr ({self.min_lr})", "min_lr")
        clone = dataclasses.replace(self)
        object.__setattr__(clone, "_first", bases[0] if bases else 1.0)
        return clone

    checks_min = False

    @property
    def first_base(self) -> float | None:
        return self.__dict__.get("_first")

    @property
    def length(self) -> int | None:
        return self.max_steps


@dataclass(frozen=True)
class WarmupPolicy(NeMoPolicy):
    """NeMo WarmupPolicy: warmup, then the base lr; min_lr past max_steps (None: no end)."""

    warmup_steps: Optional[int] = None
    warmup_ratio: Optional[float] = None
    max_steps: Optional[int] = None
    min_lr: float = 0.0


@dataclass(frozen=True)
class NeMoHoldPolicy(NeMoPolicy):
    """NeMo WarmupHoldPolicy shell: warmup, then the base lr while W <= t < W + hold, then `decay`."""

    def __post_init__(self) -> None:
        hold = _count(self.hold_steps, self.hold_ratio, self.max_steps, "hold")
        given = self.hold_steps is not None or self.hold_ratio is not None
        object.__setattr__(self, "_hold", hold)
        super().__post_init__()
        object.__setattr__(self, "_hold_end", hold + self.W if given else 0)

    @property
    def hold_end(self) -> int:
        return self.__dict__["_hold_end"]

    def apply(self, step: int, base: float) -> float:
        if self.in_warmup(step):
            return self.warmup(step, base)
        if self.W <= step < self.hold_end:
            return base
        if step > self.max_steps:
            return self.min_lr
        return self.decay(step, base)


@dataclass(frozen=True)
class WarmupHoldPolicy(NeMoHoldPolicy):
    """NeMo WarmupHoldPolicy: warmup, hold the base lr, then keep it; min_lr past max_steps."""

    max_steps: int
    warmup_steps: Optional[int] = None
    warmup_ratio: Optional[float] = None
    hold_steps: Optional[int] = None
    hold_ratio: Optional[float] = None
    min_lr: float = 0.0


@dataclass(frozen=True)
class SquareAnnealing(NeMoPolicy):
    """NeMo SquareAnnealing: max(b·((M' - s)/M')², min_lr), s = t - W, M' = max_steps - W."""

    max_steps: int
    min_lr: float = 1e-5
    warmup_steps: Optional[int] = None
    warmup_ratio: Optional[float] = None

    def decay(self, step: int, base: float) -> float:
        s, m = step - self.W, self.max_steps - self.W
        return max(base * ((m - s) / m) ** 2, self.min_lr)


@dataclass(frozen=True)
class SquareRootAnnealing(NeMoPolicy):
    """NeMo SquareRootAnnealing: max(b·√((M - t)/M), min_lr) on the raw step and max_steps (NeMo does not
    subtract the warmup here, unlike SquareAnnealing; kept)."""

    max_steps: int
    min_lr: float = 0.0
    warmup_steps: Optional[int] = None
    warmup_ratio: Optional[float] = None

    def decay(self, step: int, base: float) -> float:
        return max(base * ((self.max_steps - step) / self.max_steps) ** 0.5, self.min_lr)


@dataclass(frozen=True)
class CosineAnnealing(NeMoPolicy):
    """NeMo CosineAnnealing: warmup, (b - min_lr)·½(1 + cos(π s/M')) + min_lr on s = t - W, M' = max_steps - W.

    With constant_steps (or constant_ratio) > 0 it is Megatron's schedule instead: warmup b·t/W,
    cosine to min_lr over max_steps - W - C steps, then min_lr; that variant uses the first group's base
    lr for every group (NeMo's behaviour). A base lr below min_lr is an error, as in NeMo.
    """

    max_steps: int
    min_lr: float = 0.0
    warmup_steps: Optional[int] = None
    warmup_ratio: Optional[float] = None
    constant_steps: Optional[int] = None
    constant_ratio: Optional[float] = None

    checks_min = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "_constant",
                           _count(self.constant_steps, self.constant_ratio, self.max_steps, "constant"))
        super().__post_init__()

    @property
    def C(self) -> int:
        return self.__dict__["_constant"]

    def megatron(self, step: int) -> float:
        peak = self.first_base if self.first_base is not None else 1.0
        decay_steps = self.max_steps - (self.C + self.W)
        if self.W > 0 and step <= self.W:
            return peak * float(step) / float(self.W)
        if step > self.W + decay_steps:
            return self.min_lr
        ratio = float(step - self.W) / float(decay_steps)
        return self.min_lr + 0.5 * (math.cos(math.pi * ratio) + 1.0) * (peak - self.min_lr)

    def apply(self, step: int, base: float) -> float:
        if self.C == 0:
            return super().apply(step, base)
        decay_steps = self.max_steps - (self.C + self.W)
        if self.W > 0 and step <= self.W:
            return self.megatron(step)
        if self.W + decay_steps < step <= self.max_steps:
            return self.megatron(step)
        if step > self.max_steps:
            return self.min_lr
        return self.megatron(step)

    def decay(self, step: int, base: float) -> float:
        s, m = step - self.W, self.max_steps - self.W
        return (base - self.min_lr) * 0.5 * (1 + math.cos(math.pi * s / m)) + self.min_lr


@dataclass(frozen=True)
class NoamAnnealing(Schedule):
    """NeMo NoamAnnealing (Noam formula, b is a scale, not a peak): with t' = max(1, t),
    b·d_model^-½·min(t'^-½, t'·W^-1.5) (b·d_model^-½·t'^-½ without warmup); max(·, min_lr) once t' > W."""

    d_model: int
    warmup_steps: Optional[int] = None
    warmup_ratio: Optional[float] = None
    max_steps: Optional[int] = None
    min_lr: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "_warmup", _count(self.warmup_steps, self.warmup_ratio, self.max_steps, "warmup"))
        super().__post_init__()

    def problems(self, errors: Collector) -> None:
        check(errors, self.d_model >= 1, "d_model", f"must be >= 1, got {self.d_model}")

    def bind(self, bases: Sequence[float], default: float | None) -> Schedule:
        if any(b < self.min_lr for b in bases):
            raise ConfigError(f"a parameter group's lr ({min(bases)}) is below min_lr ({self.min_lr})", "min_lr")
        return self

    def apply(self, step: int, base: float) -> float:
        t, w = max(1, step), self.__dict__["_warmup"]
        scale = self.d_model ** (-0.5)
        mult = scale * min(t ** (-0.5), t * (w ** (-1.5))) if w > 0 else scale * t ** (-0.5)
        out = base * mult
        return max(out, self.min_lr) if t > w else out

    @property
    def length(self) -> int | None:
        return self.max_steps


@dataclass(frozen=True)
class NoamHoldAnnealing(NeMoHoldPolicy):
    """NeMo NoamHoldAnnealing: warmup, hold, then max(b·max(1, W^r)/max(1, (t - H)^r), min_lr), r = decay_rate,
    H the hold steps. Needs warmup steps."""

    max_steps: int
    decay_rate: float = 0.5
    min_lr: float = 0.0
    warmup_steps: Optional[int] = None
    warmup_ratio: Optional[float] = None
    hold_steps: Optional[int] = None
    hold_ratio: Optional[float] = None

    def problems(self, errors: Collector) -> None:
        super().problems(errors)
        check(errors, bool(self.warmup_steps) or bool(self.warmup_ratio), "warmup_steps",
              "NoamHoldAnnealing needs warmup steps")

    def decay(self, step: int, base: float) -> float:
        hold = self.hold_end - self.W if self.hold_end > 0 else 0
        t_warmup = max(1, self.W ** self.decay_rate)
        t_hold = max(1, (step - hold) ** self.decay_rate)
        return max(base * t_warmup / t_hold, self.min_lr)


@dataclass(frozen=True)
class WarmupAnnealing(NeMoPolicy):
    """NeMo WarmupAnnealing: linear decay min_lr + (1 - (t - W)/(M - W))·(b₀ - min_lr), with b₀ the first
    group's base lr for every group (NeMo's behaviour)."""

    max_steps: int
    min_lr: float = 0.0
    warmup_steps: Optional[int] = None
    warmup_ratio: Optional[float] = None

    def decay(self, step: int, base: float) -> float:
        first = self.first_base if self.first_base is not None else base
        mult = (step - self.W) / (self.max_steps - self.W)
        return self.min_lr + (1 - mult) * (first - self.min_lr)


@dataclass(frozen=True)
class InverseSquareRootAnnealing(NeMoPolicy):
    """NeMo InverseSquareRootAnnealing: warmup, then b/√((t + 1)/(W + 1)); min_lr past max_steps."""

    max_steps: int
    min_lr: float = 0.0
    warmup_steps: Optional[int] = None
    warmup_ratio: Optional[float] = None

    def decay(self, step: int, base: float) -> float:
        return base / ((step + 1) / (self.W + 1)) ** 0.5


@dataclass(frozen=True)
class T5InverseSquareRootAnnealing(Schedule):
    """NeMo T5InverseSquareRootAnnealing (absolute, ignores the base lr): 1/√constant_steps while
    t <= constant_steps, min_lr past max_steps, else 1/√t."""

    values = ABSOLUTE
    max_steps: int
    constant_steps: int
    min_lr: float = 0.0

    def problems(self, errors: Collector) -> None:
        check(errors, self.constant_steps >= 1, "constant_steps", f"must be >= 1, got {self.constant_steps}")

    def __call__(self, step: int) -> float:
        if step <= self.constant_steps:
            return 1 / (self.constant_steps ** 0.5)
        if step > self.max_steps:
            return self.min_lr
        return 1 / (step ** 0.5)

    @property
    def length(self) -> int:
        return self.max_steps


def nemo_poly_decay(base: float, step: int, decay_steps: int, power: float, min_lr: float, cycle: bool) -> float:
    """NeMo _poly_decay: (b - min_lr)(1 - s/D')^power + min_lr; cycle: D' = D·⌈s/D⌉ (1 at s = 0), else s = min(s, D)."""
    if cycle:
        multiplier = 1.0 if step == 0 else math.ceil(step / decay_steps)
        decay_steps *= multiplier
    else:
        step = min(step, decay_steps)
    p = step / decay_steps
    return (base - min_lr) * math.pow(1.0 - p, power) + min_lr


@dataclass(frozen=True)
class PolynomialDecayAnnealing(NeMoPolicy):
    """NeMo PolynomialDecayAnnealing: warmup, then poly decay on s = t - W over max_steps - W."""

    max_steps: int
    min_lr: float = 0.0
    power: float = 1.0
    cycle: bool = False
    warmup_steps: Optional[int] = None
    warmup_ratio: Optional[float] = None

    def decay(self, step: int, base: float) -> float:
        return nemo_poly_decay(base, step - self.W, self.max_steps - self.W, self.power, self.min_lr, self.cycle)


@dataclass(frozen=True)
class PolynomialHoldDecayAnnealing(NeMoHoldPolicy):
    """NeMo PolynomialHoldDecayAnnealing: warmup, hold, then poly decay on t - (W + H) over
    max_steps - max(W, W + H)."""

    max_steps: int
    min_lr: float = 0.0
    power: float = 1.0
    cycle: bool = False
    warmup_steps: Optional[int] = None
    warmup_ratio: Optional[float] = None
    hold_steps: Optional[int] = None
    hold_ratio: Optional[float] = None

    def decay(self, step: int, base: float) -> float:
        return nemo_poly_decay(base, step - self.hold_end, self.max_steps - max(self.W, self.hold_end),
                               self.power, self.min_lr, self.cycle)


HF_SCHEDULES = {
    "linear": Linear, "cosine": Cosine, "cosine_with_restarts": CosineWithRestarts, "polynomial": Polynomial,
    "constant": Constant, "constant_with_warmup": ConstantWithWarmup, "inverse_sqrt": InverseSqrt,
    "cosine_with_min_lr": CosineWithMinLR, "cosine_warmup_with_min_lr": CosineWarmupWithMinLR,
    "warmup_stable_decay": WarmupStableDecay,
}
TIMM_SCHEDULES = {"cosine": TimmCosine, "poly": TimmPoly, "tanh": TimmTanh, "step": TimmStep,
                  "multistep": TimmMultiStep}
NEMO_SCHEDULES = {cls.__name__: cls for cls in (
    WarmupPolicy, WarmupHoldPolicy, SquareAnnealing, SquareRootAnnealing, CosineAnnealing, NoamAnnealing,
    NoamHoldAnnealing, WarmupAnnealing, InverseSquareRootAnnealing, T5InverseSquareRootAnnealing,
    PolynomialDecayAnnealing, PolynomialHoldDecayAnnealing)}

__all__ = ["resolve_steps", "HF_SCHEDULES", "TIMM_SCHEDULES", "NEMO_SCHEDULES",
           *(c.__name__ for c in HF_SCHEDULES.values()), *(c.__name__ for c in TIMM_SCHEDULES.values()),
           *NEMO_SCHEDULES]

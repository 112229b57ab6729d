"""timm's cycle schedulers (timm 1.0 timm/scheduler) as closed forms.

Factor-valued, but lr_min and warmup_lr_init are absolute, which `apply(step, base)` handles; warmup_t may
be a fraction of t_initial.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass
from typing import Sequence

from optreg.errors import Collector
from optreg.schedules.engine import Schedule, Steps, check, check_number, resolve_steps


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
    warmup_lr_init are absolute values; the peak is the group's base lr. These settings are keyword-only and
    follow each scheduler's own leading options, as timm's signatures list them.
    """

    _: KW_ONLY
    lr_min: float = 0.0
    cycle_mul: float = 1.0
    cycle_decay: float = 1.0
    cycle_limit: int = 1
    warmup_t: Steps = 0
    warmup_lr_init: float = 0.0
    warmup_prefix: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "warmup_t", resolve_steps(self.warmup_t, self.t_initial, "warmup_t", "t_initial"))
        super().__post_init__()

    def problems(self, errors: Collector) -> None:
        check_number(errors, self.t_initial, "t_initial", low=1)
        check_number(errors, self.cycle_mul, "cycle_mul", above=0)

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
    k_decay: float = 1.0

    def shape(self, t_curr: float, t_i: float) -> float:
        k = self.k_decay
        return 0.5 * (1 + math.cos(math.pi * t_curr ** k / t_i ** k))


@dataclass(frozen=True)
class TimmPoly(TimmCycle):
    """timm PolyLRScheduler: lr_min + (peak - lr_min)·(1 - t_curr^k/t_i^k)^power."""

    t_initial: int
    power: float = 0.5
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
        check_number(errors, self.decay_t, "decay_t", above=0)

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

        return bisect.bisect_right(self.decay_t, t)


TIMM_SCHEDULES = {"cosine": TimmCosine, "poly": TimmPoly, "tanh": TimmTanh, "step": TimmStep,
                  "multistep": TimmMultiStep}

__all__ = ["TIMM_SCHEDULES", *(c.__name__ for c in TIMM_SCHEDULES.values())]

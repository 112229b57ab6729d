"""DeepSpeed's lr schedules (deepspeed/runtime/lr_schedules.py, DeepSpeed 0.19) as closed forms.

DeepSpeed's schedulers act at construction: with last_batch_iteration = -1 the constructor writes the value
for iteration -1 into the optimizer, and the engine calls `step()` after every optimizer step. So the lr the
optimizer uses at optimizer step s (0-based) is DeepSpeed's value at iteration i = s - 1, which every schedule
here evaluates (`ds_iteration`). The warmups are `warmup_gamma`; the values are absolute (warmup_min_lr /
warmup_max_lr, cycle_min_lr / cycle_max_lr, lr_range_test_min_lr) except WarmupCosineLR (a factor of the
optimizer's lr) and WarmupLR without warmup_max_lr (up to each group's lr).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal, Optional

from optreg.errors import Collector
from optreg.schedules.engine import ABSOLUTE, Schedule, anneal, check, half_cosine

WarmupType = Literal["log", "linear"]


def ds_iteration(step: int) -> int:
    """DeepSpeed's last_batch_iteration when the optimizer takes its step `step` (the constructor's -1 first)."""
    return step - 1


def warmup_gamma(iteration: int, warmup_steps: int, kind: str) -> float:
    """DeepSpeed's warmup fraction at `iteration` for W = max(2, warmup_num_steps): log(i + 1)/log(W) ("log") or
    i/W ("linear") while i < W, then 1; 0 before the first step (i < 0, the constructor's value)."""
    if iteration < 0:
        return 0.0
    w = max(2, warmup_steps)
    if iteration < w:
        return math.log(iteration + 1) / math.log(w) if kind == "log" else iteration / w
    return 1.0


class DeepSpeedSchedule(Schedule):
    """Shared checks: counts >= 1 (warmup_num_steps >= 0: DeepSpeed warms up over max(2, warmup_num_steps), so 0
    and 1 are 2) and a known warmup_type (DeepSpeed warns on another and uses log; refused)."""

    def problems(self, errors: Collector) -> None:
        for name, low in (("warmup_num_steps", 0), ("total_num_steps", 1), ("lr_range_test_step_size", 1),
                          ("cycle_first_step_size", 1)):
            value = getattr(self, name, None)
            check(errors, value is None or value >= low, name, f"must be >= {low}, got {value}")
        kind = getattr(self, "warmup_type", "log")
        check(errors, kind in ("log", "linear"), "warmup_type",
              f"must be 'log' or 'linear', got {kind!r} (DeepSpeed falls back to log with a warning)")


@dataclass(frozen=True)
class WarmupLR(DeepSpeedSchedule):
    """DeepSpeed WarmupLR: min + (max - min)·γ(i), γ the log or linear warmup, 1 after it; max = warmup_max_lr,
    or each group's own lr when not given (DeepSpeed's default None)."""

    values: ClassVar[str] = ABSOLUTE
    warmup_min_lr: float = 0.0
    warmup_max_lr: Optional[float] = None
    warmup_num_steps: int = 1000
    warmup_type: WarmupType = "log"

    def gamma(self, iteration: int) -> float:
        return warmup_gamma(iteration, self.warmup_num_steps, self.warmup_type)

    def apply(self, step: int, base: float) -> float:
        top = self.warmup_max_lr if self.warmup_max_lr is not None else base
        return anneal(top, self.warmup_min_lr, self.gamma(ds_iteration(step)))

    def __call__(self, step: int) -> float:
        return self.apply(step, 1.0)


@dataclass(frozen=True, kw_only=True)
class WarmupDecayLR(WarmupLR):
    """DeepSpeed WarmupDecayLR: WarmupLR's warmup, then γ = max(0, (T - i)/max(1, T - W)) (linear to warmup_min_lr
    at total_num_steps); warmup_max_lr defaults to 0.001."""

    total_num_steps: int
    warmup_max_lr: Optional[float] = 0.001

    def gamma(self, iteration: int) -> float:
        w = max(2, self.warmup_num_steps)
        if iteration < w:
            return warmup_gamma(iteration, self.warmup_num_steps, self.warmup_type)
        return max(0.0, float(self.total_num_steps - iteration) / float(max(1.0, self.total_num_steps - w)))

    @property
    def length(self) -> int | None:
        return self.total_num_steps


@dataclass(frozen=True)
class WarmupCosineLR(DeepSpeedSchedule):
    """DeepSpeed WarmupCosineLR, a factor of each group's lr: r + (1 - r)·γ(i) in the warmup (r =
    warmup_min_ratio), then max(0, c + (1 - c)·½(1 + cos(π·min(1, p)))) with p = (i - W + 1)/max(1, T - W) and
    c = cos_min_ratio; 0 before the first step."""

    total_num_steps: int
    warmup_min_ratio: float = 0.0
    warmup_num_steps: int = 1000
    cos_min_ratio: float = 0.0001
    warmup_type: WarmupType = "log"

    def __call__(self, step: int) -> float:
        i, w = ds_iteration(step), max(2, self.warmup_num_steps)
        if i < 0:
            return 0.0
        if i < w:
            return anneal(1.0, self.warmup_min_ratio, warmup_gamma(i, self.warmup_num_steps, self.warmup_type))
        progress = min(1.0, (i - w + 1) / max(1, self.total_num_steps - w))
        return max(0.0, anneal(1.0, self.cos_min_ratio, half_cosine(progress)))

    @property
    def length(self) -> int | None:
        return self.total_num_steps


@dataclass(frozen=True)
class LRRangeTest(DeepSpeedSchedule):
    """DeepSpeed LRRangeTest: min_lr·(1 + rate·x), x = (i + 1)/size, or floor((i + 1)/size) with staircase."""

    values: ClassVar[str] = ABSOLUTE
    lr_range_test_min_lr: float = 1e-3
    lr_range_test_step_size: int = 2000
    lr_range_test_step_rate: float = 1.0
    lr_range_test_staircase: bool = False

    def __call__(self, step: int) -> float:
        x = float(ds_iteration(step) + 1) / self.lr_range_test_step_size
        if self.lr_range_test_staircase:
            x = math.floor(x)
        return self.lr_range_test_min_lr * (1 + self.lr_range_test_step_rate * x)


@dataclass(frozen=True)
class OneCycle(DeepSpeedSchedule):
    """DeepSpeed OneCycle: the lr runs one triangular cycle min → max over cycle_first_step_size, back over
    cycle_second_step_size (staircased by the stair counts), then min/(1 + decay_lr_rate·k/decay_step_size) on the
    k-th step after the cycle (min without decay).

    With cycle_momentum (DeepSpeed's default) and an optimizer with `betas`, betas[0] moves the other way on the
    same scale factor s: max_mom - (max_mom - min_mom)·s in the cycle, then max_mom·(1 + decay_mom_rate·k /
    decay_step_size) (max_mom without decay, unbounded as in DeepSpeed), and betas[1] is set to 0.99 throughout.
    The constructor writes (cycle_min_mom, 0.99), so the first optimizer step uses cycle_min_mom although the
    cycle's own value there is cycle_max_mom (DeepSpeed 0.19's `_initialize_momentum`). Driven by
    `OneCycleScheduler` (`adapter_class`); without betas DeepSpeed disables the cycling with a warning, and so does
    it."""

    values: ClassVar[str] = ABSOLUTE
    cycle_min_lr: float
    cycle_max_lr: float
    decay_lr_rate: float = 0.0
    cycle_first_step_size: int = 2000
    cycle_second_step_size: Optional[int] = None
    cycle_first_stair_count: int = 0
    cycle_second_stair_count: Optional[int] = None
    decay_step_size: int = 0
    cycle_momentum: bool = True
    cycle_min_mom: float = 0.8
    cycle_max_mom: float = 0.9
    decay_mom_rate: float = 0.0

    #: what DeepSpeed's momentum cycling writes as betas[1]
    BETA2: ClassVar[float] = 0.99

    @property
    def adapter_class(self):
        """The scheduler class that drives this schedule (lr and betas), or None: the lr alone (ScheduleLR)."""
        if not self.cycle_momentum:
            return None
        from optreg.dialects.deepspeed.momentum import OneCycleScheduler

        return OneCycleScheduler

    @property
    def sizes(self) -> tuple[float, float]:
        first = float(self.cycle_first_step_size)
        return first, float(self.cycle_second_step_size) if self.cycle_second_step_size is not None else first

    def scale(self, iteration: int) -> float:
        """DeepSpeed's _get_scale_factor at last_batch_iteration `iteration`."""
        first, second = self.sizes
        total, batch = first + second, iteration + 1
        cycle = math.floor(1 + batch / total)
        x = 1.0 + batch / total - cycle
        ratio = first / total
        if x <= ratio:
            factor, stairs = x / ratio, self.cycle_first_stair_count
        else:
            stairs = self.cycle_first_stair_count if self.cycle_second_stair_count is None \
                else self.cycle_second_stair_count
            factor = (x - 1) / (ratio - 1)
        if stairs > 0:
            within = batch % total
            position = within * stairs / first if within <= first else (total - within) * stairs / second
            factor = math.floor(position) / stairs
        return factor

    def __call__(self, step: int) -> float:
        i = ds_iteration(step)
        total = sum(self.sizes)
        if i < total:
            return self.cycle_min_lr + (self.cycle_max_lr - self.cycle_min_lr) * self.scale(i)
        if math.isclose(self.decay_step_size, 0) or math.isclose(self.decay_lr_rate, 0):
            return self.cycle_min_lr
        return self.cycle_min_lr / (1 + self.decay_lr_rate * (i - total + 1) / self.decay_step_size)

    def beta1(self, step: int) -> float:
        """betas[0] at optimizer step `step` under cycle_momentum (DeepSpeed's get_mom at iteration step - 1)."""
        i = ds_iteration(step)
        if i < 0:
            return self.cycle_min_mom
        total = sum(self.sizes)
        if i < total:
            return self.cycle_max_mom - (self.cycle_max_mom - self.cycle_min_mom) * self.scale(i)
        if math.isclose(self.decay_step_size, 0) or math.isclose(self.decay_mom_rate, 0):
            return self.cycle_max_mom
        return self.cycle_max_mom * (1 + self.decay_mom_rate * (i - total + 1) / self.decay_step_size)

    @property
    def length(self) -> int | None:
        return None


DS_SCHEDULES = {"WarmupLR": WarmupLR, "WarmupDecayLR": WarmupDecayLR, "WarmupCosineLR": WarmupCosineLR,
                "LRRangeTest": LRRangeTest, "OneCycle": OneCycle}

__all__ = ["DS_SCHEDULES", "ds_iteration", "warmup_gamma", *DS_SCHEDULES]

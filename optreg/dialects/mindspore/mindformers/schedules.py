"""MindFormers' learning-rate schedules (mindformers.core.lr.lr_schedule, MindFormers dev 2025, on MindSpore 2.x) as
closed forms.

Absolute-valued, like MindSpore's cells: the optimizer's step t uses value(t), t = 0, 1, ... Warmup and decay lengths
given as ratios are resolved as MindFormers' `_get_lr_steps` does: steps = int(total_steps·ratio) (a ratio wins
over the steps). MindFormers evaluates in float32: where its terms cancel near lr_end (the decays of
CosineWithWarmUpLR, PolynomialWithWarmUpLR, WarmUpStableDecayLR, CosineAnnealingLR, CosineAnnealingWarmRestarts)
these forms repeat its float32 operations in its order (within 1e-6 relative of MindFormers on MindSpore 2.10 at
every recorded step); the others, float64 there, agree within 1e-6 relative too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Optional

from optreg.core.float32 import f32
from optreg.core.models import MISSING_OPTION
from optreg.errors import Collector
from optreg.schedules.engine import ABSOLUTE, Schedule, anneal, check, half_cosine


def lr_steps(steps: Optional[int], ratio: Optional[float], total_steps: Optional[int]) -> int:
    """MindFormers' `_get_lr_steps`: int(total_steps·ratio) when a ratio is given, else the steps."""
    if ratio is None:
        return steps or 0
    return int((total_steps or 0) * ratio)


def linear_warmup(step: int, warmup: int, start: float, end: float) -> float:
    """start + (end - start)·t/W (MindFormers' warmup branch, taken while t < W)."""
    return start + (end - start) * step / warmup


def f32_cosine_anneal(low: float, span: float, angle: float) -> float:
    """low + span·max(0, ½(1 + cos(angle))) in float32 as MindFormers' cells compute it: each operation on a
    float32 tensor rounded to float32, a Python float operand cast to float32 first, cos correctly rounded."""
    percent = max(0.0, 0.5 * f32(1.0 + f32(math.cos(angle))))
    return f32(f32(low) + f32(f32(span) * percent))


def f32_angle(cur: float, length: float) -> float:
    """π·cur/length as MindFormers' annealing cells compute it on float32 tensors: (π·cur)/length."""
    return f32(f32(f32(math.pi) * cur) / length)


@dataclass(frozen=True)
class MindFormersSchedule(Schedule):
    """The options every MindFormers warmup schedule shares."""

    values = ABSOLUTE

    def _problems(self, errors: Collector, needs_total: bool) -> None:
        warmup_steps = getattr(self, "warmup_steps", None)
        warmup_ratio = getattr(self, "warmup_ratio", None)
        if warmup_ratio is None and warmup_steps is None:
            errors.add("warmup_steps", "required: warmup_steps or warmup_ratio (MindFormers refuses neither)")
        if (needs_total or warmup_ratio is not None) and self.total_steps is None:
            # as a required option: left to a run without a length, planning says so (core.loop.run_length_said)
            errors.add("total_steps", MISSING_OPTION)

    @property
    def warmup(self) -> int:
        return lr_steps(getattr(self, "warmup_steps", None), getattr(self, "warmup_ratio", None), self.total_steps)

    @property
    def length(self) -> int | None:
        return self.total_steps

    #: the option that sets `length`; the rows leave it undeclared (a warmup longer than it passes, as in
    #: MindFormers), and this names it instead: left out or null, it is the run length (optreg.core.loop.fill_length),
    #: and the schedule linter's advice names it
    length_option: ClassVar[str] = "total_steps"


@dataclass(frozen=True)
class ConstantWarmUpLR(MindFormersSchedule):
    """lr_init + (lr - lr_init)·t/W for t < W, then lr."""

    learning_rate: float
    warmup_steps: Optional[int] = None
    warmup_lr_init: float = 0.0
    warmup_ratio: Optional[float] = None
    total_steps: Optional[int] = None

    def problems(self, errors: Collector) -> None:
        self._problems(errors, needs_total=False)

    def __call__(self, step: int) -> float:
        w = self.warmup
        return linear_warmup(step, w, self.warmup_lr_init, self.learning_rate) if step < w else self.learning_rate


@dataclass(frozen=True)
class LinearWithWarmUpLR(MindFormersSchedule):
    """Linear warmup for t < W, then lr·max(0, (T - t)/max(1, T - W))."""

    learning_rate: float
    total_steps: Optional[int] = None
    warmup_steps: Optional[int] = None
    warmup_lr_init: float = 0.0
    warmup_ratio: Optional[float] = None

    def problems(self, errors: Collector) -> None:
        self._problems(errors, needs_total=True)

    def __call__(self, step: int) -> float:
        w, total = self.warmup, self.total_steps
        if step < w:
            return linear_warmup(step, w, self.warmup_lr_init, self.learning_rate)
        return self.learning_rate * max(0.0, (total - step) / max(1, total - w))


@dataclass(frozen=True)
class CosineWithWarmUpLR(MindFormersSchedule):
    """lr_end from t >= D (decay_steps, default T, or int(T·decay_ratio)); linear warmup for t < W; then
    lr_end + (lr - lr_end)·max(0, ½(1 + cos(2π·cycles·(t - W)/max(1, T - W))))."""

    learning_rate: float
    warmup_steps: Optional[int] = 0
    total_steps: Optional[int] = None
    num_cycles: float = 0.5
    lr_end: float = 0.0
    warmup_lr_init: float = 0.0
    warmup_ratio: Optional[float] = None
    decay_steps: Optional[int] = None
    decay_ratio: Optional[float] = None

    def problems(self, errors: Collector) -> None:
        self._problems(errors, needs_total=True)

    @property
    def decay(self) -> int:
        steps = max(1, self.decay_steps) if self.decay_steps is not None else max(1, self.total_steps or 0)
        return lr_steps(steps, self.decay_ratio, self.total_steps)

    def __call__(self, step: int) -> float:
        w = self.warmup
        if step >= self.decay:
            return self.lr_end
        if step < w:
            return linear_warmup(step, w, self.warmup_lr_init, self.learning_rate)
        progress = f32(f32(step - w) / f32(max(1, self.total_steps - w)))
        return f32_cosine_anneal(self.lr_end, f32(f32(self.learning_rate) - f32(self.lr_end)),
                                 f32(f32(math.pi * self.num_cycles * 2.0) * progress))


@dataclass(frozen=True)
class CosineWithRestartsAndWarmUpLR(MindFormersSchedule):
    """lr_end from t >= D (decay_steps, default T); linear warmup for t < W; then with p = (t - W)/max(1, T - W):
    lr_end + (lr - lr_end)·max(0, ½(1 + cos(π·((cycles·p) mod 1)))) while p < 1, else 0."""

    learning_rate: float
    warmup_steps: Optional[int] = None
    total_steps: Optional[int] = None
    num_cycles: float = 1.0
    lr_end: float = 0.0
    warmup_lr_init: float = 0.0
    warmup_ratio: Optional[float] = None
    decay_steps: Optional[int] = None

    def problems(self, errors: Collector) -> None:
        self._problems(errors, needs_total=True)

    def __call__(self, step: int) -> float:
        w = self.warmup
        decay = max(1, self.decay_steps) if self.decay_steps is not None else max(1, self.total_steps)
        if step >= decay:
            return self.lr_end
        if step < w:
            return linear_warmup(step, w, self.warmup_lr_init, self.learning_rate)
        progress = (step - w) / max(1, self.total_steps - w)
        if progress >= 1.0:
            return 0.0
        return anneal(self.learning_rate, self.lr_end, max(0.0, half_cosine((self.num_cycles * progress) % 1.0)))


@dataclass(frozen=True)
class PolynomialWithWarmUpLR(MindFormersSchedule):
    """Linear warmup for t < W; lr_end for t > T; else (lr - lr_end)·(1 - (t - W)/D)^power + lr_end, D =
    decay_steps (default max(1, T - W))."""

    learning_rate: float
    total_steps: Optional[int] = None
    warmup_steps: Optional[int] = None
    lr_end: float = 1e-7
    power: float = 1.0
    warmup_lr_init: float = 0.0
    warmup_ratio: Optional[float] = None
    decay_steps: Optional[int] = None

    def problems(self, errors: Collector) -> None:
        self._problems(errors, needs_total=True)
        check(errors, self.learning_rate > self.lr_end, "lr_end",
              f"must be smaller than learning_rate ({self.learning_rate}), got {self.lr_end}")
        if self.total_steps is not None and self.decay_steps is not None:
            check(errors, self.decay_steps >= self.total_steps - self.warmup, "decay_steps",
                  f"must be >= total_steps - warmup ({self.total_steps - self.warmup}), got {self.decay_steps}: "
                  f"MindFormers raises a negative number to `power` past the decay's end")

    def __call__(self, step: int) -> float:
        w = self.warmup
        if step < w:
            return linear_warmup(step, w, self.warmup_lr_init, self.learning_rate)
        if step > self.total_steps:
            return self.lr_end
        decay = max(1, self.decay_steps) if self.decay_steps is not None else max(1, self.total_steps - w)
        remaining = f32(1 - f32(f32(step - w) / f32(decay)))   # float32, in MindFormers' order of operations
        lr = f32(self.learning_rate)
        value = f32(f32(f32(lr - f32(self.lr_end)) * f32(remaining ** self.power)) + f32(self.lr_end))
        return f32(lr * f32(value / lr))


@dataclass(frozen=True)
class WarmUpStableDecayLR(MindFormersSchedule):
    """Linear warmup for t < W; lr for t < S (decay_start_steps, or int(T·decay_start_ratio)); then
    lr - (lr - lr_end)·(t - S)/(T - S), not clamped past T."""

    learning_rate: float
    lr_end: float = 1e-7
    warmup_steps: Optional[int] = None
    warmup_lr_init: float = 0.0
    warmup_ratio: Optional[float] = None
    total_steps: Optional[int] = None
    decay_start_steps: Optional[int] = None
    decay_start_ratio: Optional[float] = None

    def problems(self, errors: Collector) -> None:
        self._problems(errors, needs_total=True)
        check(errors, self.learning_rate > self.lr_end, "lr_end",
              f"must be smaller than learning_rate ({self.learning_rate}), got {self.lr_end}")
        if self.decay_start_steps is None and self.decay_start_ratio is None:
            errors.add("decay_start_steps", "required: decay_start_steps or decay_start_ratio")
        elif self.total_steps is not None and self.decay_start >= self.total_steps:
            errors.add("decay_start_steps", f"must be < total_steps ({self.total_steps}), got {self.decay_start}")

    @property
    def decay_start(self) -> int:
        return lr_steps(self.decay_start_steps, self.decay_start_ratio, self.total_steps)

    def __call__(self, step: int) -> float:
        w, start = self.warmup, self.decay_start
        if step < w:
            return linear_warmup(step, w, self.warmup_lr_init, self.learning_rate)
        if step < start:
            return self.learning_rate
        percent = f32(f32(step - start) / f32(self.total_steps - start))   # float32, as MindFormers
        return f32(f32(self.learning_rate) - f32(f32(f32(self.learning_rate) - f32(self.lr_end)) * percent))


@dataclass(frozen=True)
class ConstantWithCoolDownLR(MindFormersSchedule):
    """Linear warmup for t < W; lr for K keep_steps; a cosine from lr to lr_end1 over D decay_steps
    (max(0, ½(1 + cos(2π·cycles·p)))); lr_end1 for final_steps; then lr_end2 (default lr_end1)."""

    learning_rate: float
    warmup_steps: Optional[int] = None
    warmup_lr_init: float = 0.0
    warmup_ratio: Optional[float] = None
    keep_steps: int = 0
    decay_steps: Optional[int] = None
    decay_ratio: Optional[float] = None
    total_steps: Optional[int] = None
    num_cycles: float = 0.5
    lr_end1: float = 0.0
    final_steps: int = 0
    lr_end2: Optional[float] = None

    def problems(self, errors: Collector) -> None:
        self._problems(errors, needs_total=self.decay_steps is None or self.decay_ratio is not None)

    def __call__(self, step: int) -> float:
        w, keep, final = self.warmup, max(0, self.keep_steps), max(0, self.final_steps)
        decay = max(1, self.decay_steps) if self.decay_steps is not None else max(1, self.total_steps)
        decay = lr_steps(decay, self.decay_ratio, self.total_steps)
        if step < w:
            return linear_warmup(step, w, self.warmup_lr_init, self.learning_rate)
        if step < w + keep:
            return self.learning_rate
        if step < w + keep + decay:
            progress = (step - keep - w) / decay
            return anneal(self.learning_rate, self.lr_end1,
                          max(0.0, half_cosine(self.num_cycles * 2.0 * progress)))
        if step < w + keep + decay + final:
            return self.lr_end1
        return self.lr_end2 if self.lr_end2 else self.lr_end1   # MindFormers: `lr_end2 or lr_end1`

    @property
    def length(self) -> int | None:
        return self.total_steps


@dataclass(frozen=True)
class CosineAnnealingLR(Schedule):
    """eta_min + (base_lr - eta_min)·max(0, ½(1 + cos(π t/t_max))); rises again after t_max."""

    values = ABSOLUTE
    base_lr: float
    t_max: int
    eta_min: float = 0.0

    def __call__(self, step: int) -> float:
        return f32_cosine_anneal(self.eta_min, self.base_lr - self.eta_min, f32_angle(step, self.t_max))

    @property
    def length(self) -> int:
        return self.t_max


@dataclass(frozen=True)
class CosineAnnealingWarmRestarts(Schedule):
    """SGDR: eta_min + (base_lr - eta_min)·½(1 + cos(π T_cur/T_i)), cycle i of t_0·t_mult^i steps."""

    values = ABSOLUTE
    base_lr: float
    t_0: int
    t_mult: int = 1
    eta_min: float = 0.0

    def __call__(self, step: int) -> float:
        t_cur, t_i = step, self.t_0
        if step >= self.t_0 and self.t_mult == 1:
            t_cur = step % self.t_0
        elif step >= self.t_0:   # MindFormers' cycle index, in float32: floor(log(t/t_0·(t_mult - 1) + 1) / log t_mult)
            x = f32(f32(f32(step / self.t_0) * f32(self.t_mult - 1.0)) + 1.0)
            q = self.t_mult ** math.floor(f32(f32(math.log(x)) / f32(math.log(self.t_mult))))
            t_cur, t_i = step - self.t_0 * (1 - q) / (1 - self.t_mult), self.t_0 * q
        return f32_cosine_anneal(self.eta_min, self.base_lr - self.eta_min, f32_angle(t_cur, t_i))


#: the warmup family: total_steps -1 (or absent) is the run length
WARMUP_FAMILY = ("ConstantWarmUpLR", "LinearWithWarmUpLR", "CosineWithWarmUpLR", "CosineWithRestartsAndWarmUpLR",
                 "PolynomialWithWarmUpLR", "WarmUpStableDecayLR", "ConstantWithCoolDownLR")
NAMES = (*WARMUP_FAMILY, "CosineAnnealingLR", "CosineAnnealingWarmRestarts")

"""The HF transformers `get_scheduler` schedules (transformers 4.5x optimization.py) as closed forms.

Factor-valued: each scales the group's base lr. num_warmup_steps (and the decay/stable counts) may be
a fraction of num_training_steps: 0.05 means ceil(0.05·total) steps (HF rounds warmup_ratio up the same way).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Literal, Optional, Sequence

from optreg.errors import Collector, ConfigError, show
from optreg.schedules.engine import Schedule, Steps, check, resolve_steps


def hf_warmup(step: int, warmup: int) -> float:
    """HF linear warmup factor t/max(1, W), 0 at t = 0."""
    return float(step) / float(max(1, warmup))


@dataclass(frozen=True)
class HFSchedule(Schedule):
    """Shared HF plumbing: num_warmup_steps (int or fraction) resolved against num_training_steps. A warmup
    starts at 0 (`hf_warmup`), as transformers' does: the linter leaves it be."""

    zero_start_by_design = True

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

    zero_start_by_design = False   # nonzero at step 0 unless warmup_lr_rate is 0, which the user chose
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
                  f"must be 'linear', 'cosine' or '1-sqrt', got {show(value)}")

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


HF_SCHEDULES = {
    "linear": Linear, "cosine": Cosine, "cosine_with_restarts": CosineWithRestarts, "polynomial": Polynomial,
    "constant": Constant, "constant_with_warmup": ConstantWithWarmup, "inverse_sqrt": InverseSqrt,
    "cosine_with_min_lr": CosineWithMinLR, "cosine_warmup_with_min_lr": CosineWarmupWithMinLR,
    "warmup_stable_decay": WarmupStableDecay,
}

__all__ = ["HF_SCHEDULES", *(c.__name__ for c in HF_SCHEDULES.values())]

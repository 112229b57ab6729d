"""NeMo's warmup/annealing policies (nemo/core/optim/lr_scheduler.py, NeMo 2.x) as closed forms.

Factor-valued except T5InverseSquareRootAnnealing; min_lr is absolute, which `apply(step, base)` handles.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import KW_ONLY, dataclass
from typing import Optional, Sequence

from optreg.errors import Collector, ConfigError
from optreg.schedules.engine import ABSOLUTE, Schedule, check, check_number


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
    NeMo uses the first group's (noted on those classes). The warmup (and, on hold policies, the hold) settings
    are keyword-only, as NeMo's signatures make every option.
    """

    _: KW_ONLY
    warmup_steps: Optional[int] = None
    warmup_ratio: Optional[float] = None

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

    max_steps: Optional[int] = None
    min_lr: float = 0.0


@dataclass(frozen=True)
class NeMoHoldPolicy(NeMoPolicy):
    """NeMo WarmupHoldPolicy shell: warmup, then the base lr while W <= t < W + hold, then `decay`."""

    _: KW_ONLY
    hold_steps: Optional[int] = None
    hold_ratio: Optional[float] = None

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
    min_lr: float = 0.0


@dataclass(frozen=True)
class SquareAnnealing(NeMoPolicy):
    """NeMo SquareAnnealing: max(b·((M' - s)/M')², min_lr), s = t - W, M' = max_steps - W."""

    max_steps: int
    min_lr: float = 1e-5

    def decay(self, step: int, base: float) -> float:
        s, m = step - self.W, self.max_steps - self.W
        return max(base * ((m - s) / m) ** 2, self.min_lr)


@dataclass(frozen=True)
class SquareRootAnnealing(NeMoPolicy):
    """NeMo SquareRootAnnealing: max(b·√((M - t)/M), min_lr) on the raw step and max_steps (NeMo does not
    subtract the warmup here, unlike SquareAnnealing; kept)."""

    max_steps: int
    min_lr: float = 0.0

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
        check_number(errors, self.d_model, "d_model", low=1)

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

    def problems(self, errors: Collector) -> None:
        super().problems(errors)
        check(errors, bool(self.warmup_steps) or bool(self.warmup_ratio), "warmup_steps",
              "NoamHoldAnnealing needs warmup steps: set warmup_steps or warmup_ratio (the fraction of max_steps)")

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

    def decay(self, step: int, base: float) -> float:
        first = self.first_base if self.first_base is not None else base
        mult = (step - self.W) / (self.max_steps - self.W)
        return self.min_lr + (1 - mult) * (first - self.min_lr)


@dataclass(frozen=True)
class InverseSquareRootAnnealing(NeMoPolicy):
    """NeMo InverseSquareRootAnnealing: warmup, then b/√((t + 1)/(W + 1)); min_lr past max_steps."""

    max_steps: int
    min_lr: float = 0.0

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
        check_number(errors, self.constant_steps, "constant_steps", low=1)

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

    def decay(self, step: int, base: float) -> float:
        return nemo_poly_decay(base, step - self.hold_end, self.max_steps - max(self.W, self.hold_end),
                               self.power, self.min_lr, self.cycle)


NEMO_SCHEDULES = {cls.__name__: cls for cls in (
    WarmupPolicy, WarmupHoldPolicy, SquareAnnealing, SquareRootAnnealing, CosineAnnealing, NoamAnnealing,
    NoamHoldAnnealing, WarmupAnnealing, InverseSquareRootAnnealing, T5InverseSquareRootAnnealing,
    PolynomialDecayAnnealing, PolynomialHoldDecayAnnealing)}

__all__ = ["NEMO_SCHEDULES", *(c.__name__ for c in NEMO_SCHEDULES.values())]

"""MindSpore's learning-rate schedules (mindspore.nn, 2.x): the LearningRateSchedule cells as closed forms,
and the dynamic-lr functions, which return the per-step list a MindSpore optimizer takes as learning_rate.

All values are absolute. The list schedules (`Dynamic*`, registered under the functions' own names:
`exponential_decay_lr` builds DynamicExponentialDecayLR) evaluate list[min(step, len - 1)]: past the
end they hold the last value (MindSpore's optimizer gathers past the end of its lr tensor, which is
not defined behaviour).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Sequence

from optreg.errors import Collector
from optreg.schedules.engine import ABSOLUTE, Schedule, anneal, check, check_number, half_cosine


# ---------------------------------------------------------------------------------------------------
# nn.learning_rate_schedule
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MindSporeSchedule(Schedule):
    values = ABSOLUTE


def _decay_problems(errors: Collector, decay_steps: int) -> None:
    check_number(errors, decay_steps, "decay_steps", low=1)


@dataclass(frozen=True)
class _DecayLR(MindSporeSchedule):
    """The options MindSpore's three step-decay schedules share (learning_rate, decay_rate, decay_steps, is_stair)."""

    learning_rate: float
    decay_rate: float
    decay_steps: int
    is_stair: bool = False

    def problems(self, errors: Collector) -> None:
        _decay_problems(errors, self.decay_steps)


@dataclass(frozen=True)
class ExponentialDecayLR(_DecayLR):
    """lr = learning_rate·decay_rate^p, p = t/decay_steps (⌊t/decay_steps⌋ when is_stair)."""

    def __call__(self, step: int) -> float:
        p = step // self.decay_steps if self.is_stair else step / self.decay_steps
        return self.learning_rate * self.decay_rate ** p


@dataclass(frozen=True)
class NaturalExpDecayLR(_DecayLR):
    """lr = learning_rate·e^(-decay_rate·p) with p = t, or ⌊t/decay_steps⌋·decay_steps when is_stair.

    MindSpore documents p = t/decay_steps but its construct() never divides by decay_steps; the
    implemented behaviour is reproduced (a bug in MindSpore, kept for faithfulness).
    """

    def __call__(self, step: int) -> float:
        p = (step // self.decay_steps) * self.decay_steps if self.is_stair else step
        return self.learning_rate * math.e ** (-self.decay_rate * p)


@dataclass(frozen=True)
class InverseDecayLR(_DecayLR):
    """lr = learning_rate/(1 + decay_rate·p), p = t/decay_steps (floored when is_stair)."""

    def __call__(self, step: int) -> float:
        p = step // self.decay_steps if self.is_stair else step / self.decay_steps
        return self.learning_rate / (1 + self.decay_rate * p)


@dataclass(frozen=True)
class CosineDecayLR(MindSporeSchedule):
    """lr = min_lr + ½(max_lr - min_lr)(1 + cos(π·min(t, D)/D))."""

    min_lr: float
    max_lr: float
    decay_steps: int

    def problems(self, errors: Collector) -> None:
        _decay_problems(errors, self.decay_steps)
        check(errors, self.min_lr < self.max_lr, "max_lr", f"must be > min_lr ({self.min_lr}), got {self.max_lr}")

    def __call__(self, step: int) -> float:
        return anneal(self.max_lr, self.min_lr, half_cosine(min(step, self.decay_steps) / self.decay_steps))

    @property
    def length(self) -> int:
        return self.decay_steps


@dataclass(frozen=True)
class PolynomialDecayLR(MindSporeSchedule):
    """lr = (learning_rate - end)·(1 - t'/D')^power + end; t' = min(t, D), D' = D, or with
    update_decay_steps t' = t, D' = D·max(⌈t/D⌉, 1)."""

    learning_rate: float
    end_learning_rate: float
    decay_steps: int
    power: float
    update_decay_steps: bool = False

    def problems(self, errors: Collector) -> None:
        _decay_problems(errors, self.decay_steps)

    def __call__(self, step: int) -> float:
        decay = self.decay_steps
        if self.update_decay_steps:
            decay = decay * max(math.ceil(step / decay), 1)
        else:
            step = min(step, decay)
        delta = self.learning_rate - self.end_learning_rate
        return delta * (1.0 - step / decay) ** self.power + self.end_learning_rate

    @property
    def length(self) -> int:
        return self.decay_steps


@dataclass(frozen=True)
class WarmUpLR(MindSporeSchedule):
    """lr = learning_rate·min(t, W)/W: starts at 0, reaches learning_rate at W and holds."""

    learning_rate: float
    warmup_steps: int

    def problems(self, errors: Collector) -> None:
        check_number(errors, self.warmup_steps, "warmup_steps", low=1)

    def __call__(self, step: int) -> float:
        return self.learning_rate * (min(step, self.warmup_steps) / self.warmup_steps)

    @property
    def length(self) -> int:
        return self.warmup_steps


# ---------------------------------------------------------------------------------------------------
# nn.dynamic_lr: plain functions returning the per-step list (epoch-granular: e = ⌊i/step_per_epoch⌋)
# ---------------------------------------------------------------------------------------------------
def _epoch(i: int, step_per_epoch: int) -> int:
    return math.floor(i / step_per_epoch)


def _exponential(i, learning_rate, decay_rate, step_per_epoch, decay_epoch, is_stair):
    epoch = _epoch(i, step_per_epoch)
    p = math.floor(epoch / decay_epoch) if is_stair else epoch / decay_epoch
    return learning_rate * decay_rate ** p


def _natural_exp(i, learning_rate, decay_rate, step_per_epoch, decay_epoch, is_stair):
    epoch = _epoch(i, step_per_epoch)
    if is_stair:
        epoch = math.floor(epoch / decay_epoch) * decay_epoch
    return learning_rate * math.e ** (-decay_rate * epoch)


def _inverse(i, learning_rate, decay_rate, step_per_epoch, decay_epoch, is_stair):
    epoch = _epoch(i, step_per_epoch)
    if is_stair:
        return learning_rate / (1 + decay_rate * math.floor(epoch / decay_epoch))
    return learning_rate / (1 + decay_rate * epoch / decay_epoch)


def _cosine(i, min_lr, max_lr, step_per_epoch, decay_epoch):
    epoch = min(_epoch(i, step_per_epoch), decay_epoch)
    return min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * epoch / decay_epoch))


def _polynomial(i, learning_rate, end_learning_rate, step_per_epoch, decay_epoch, power, update_decay_epoch):
    epoch = _epoch(i, step_per_epoch)
    if update_decay_epoch:
        decay = decay_epoch * max(math.ceil(epoch / decay_epoch), 1)
    else:
        decay, epoch = decay_epoch, min(epoch, decay_epoch)
    return (learning_rate - end_learning_rate) * (1 - epoch / decay) ** power + end_learning_rate


def _warmup(i, learning_rate, step_per_epoch, warmup_epoch):
    return learning_rate * min(_epoch(i, step_per_epoch), warmup_epoch) / warmup_epoch


def piecewise_constant_lr(milestone: Sequence[int], learning_rates: Sequence[float]) -> list[float]:
    """y[i] = learning_rates[k] for i in [milestone[k-1], milestone[k]); length milestone[-1]."""
    lr: list[float] = []
    last = 0
    for item, value in zip(milestone, learning_rates):
        lr += [value] * (item - last)
        last = item
    return lr


def exponential_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False):
    """lr·decay_rate^(e/decay_epoch) (⌊e/decay_epoch⌋ when is_stair)."""
    return [_exponential(i, learning_rate, decay_rate, step_per_epoch, decay_epoch, is_stair)
            for i in range(total_step)]


def natural_exp_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False):
    """lr·e^(-decay_rate·e); with is_stair e becomes ⌊e/decay_epoch⌋·decay_epoch."""
    return [_natural_exp(i, learning_rate, decay_rate, step_per_epoch, decay_epoch, is_stair)
            for i in range(total_step)]


def inverse_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False):
    """lr/(1 + decay_rate·e/decay_epoch) (the ratio floored when is_stair)."""
    return [_inverse(i, learning_rate, decay_rate, step_per_epoch, decay_epoch, is_stair) for i in range(total_step)]


def cosine_decay_lr(min_lr, max_lr, total_step, step_per_epoch, decay_epoch):
    """min_lr + ½(max_lr - min_lr)(1 + cos(π·min(e, decay_epoch)/decay_epoch))."""
    return [_cosine(i, min_lr, max_lr, step_per_epoch, decay_epoch) for i in range(total_step)]


def polynomial_decay_lr(learning_rate, end_learning_rate, total_step, step_per_epoch, decay_epoch, power,
                        update_decay_epoch=False):
    """(lr - end)(1 - e'/D')^power + end; e' = min(e, D), or with update_decay_epoch e' = e and
    D' = D·max(⌈e/D⌉, 1)."""
    return [_polynomial(i, learning_rate, end_learning_rate, step_per_epoch, decay_epoch, power, update_decay_epoch)
            for i in range(total_step)]


def warmup_lr(learning_rate, total_step, step_per_epoch, warmup_epoch):
    """lr·min(e, warmup_epoch)/warmup_epoch."""
    return [_warmup(i, learning_rate, step_per_epoch, warmup_epoch) for i in range(total_step)]


# ---------------------------------------------------------------------------------------------------
# the dynamic-lr lists as schedules
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DynamicList(MindSporeSchedule):
    """value(step) = table[min(step, len(table) - 1)] over the list a dynamic-lr function returns.

    Entry i is computed when asked for (`entry(i)`, the same expression as the list's), so a total_step of
    millions costs nothing to build; the entries a run starts and ends with are computed (and so checked) at
    construction."""

    def table(self) -> list[float]:
        return [self.entry(i) for i in range(self.length)]

    def entry(self, i: int) -> float:
        raise NotImplementedError

    def __post_init__(self) -> None:
        super().__post_init__()
        from optreg.core.types import MAX_FLOAT
        from optreg.errors import ConfigError

        if self.length < 1:
            raise ConfigError("the learning-rate list is empty",
                              "milestone" if hasattr(self, "milestone") else "total_step")
        for i in sorted({0, 1, 2, self.length // 2, self.length - 1}):  # the formulas are monotone in i
            if i < self.length:
                value = float(self.entry(i))
                if not abs(value) <= MAX_FLOAT:
                    where = next(n for n in ("learning_rate", "max_lr", "learning_rates") if hasattr(self, n))
                    raise ConfigError(f"entry {i} of the learning-rate list is {value:g}, beyond ±{MAX_FLOAT:g}",
                                      where)

    def __call__(self, step: int) -> float:
        return float(self.entry(min(step, self.length - 1)))

    @property
    def length(self) -> int:
        return self.total_step


def _epoch_problems(errors: Collector, total_step: int, step_per_epoch: int, epochs: int, name: str) -> None:
    check_number(errors, total_step, "total_step", low=1)
    check_number(errors, step_per_epoch, "step_per_epoch", low=1)
    check_number(errors, epochs, name, low=1)


@dataclass(frozen=True)
class DynamicPiecewiseConstantLR(DynamicList):
    """piecewise_constant_lr(milestone, learning_rates) as a schedule."""

    milestone: Sequence[int]
    learning_rates: Sequence[float]

    def problems(self, errors: Collector) -> None:
        check(errors, len(self.milestone) == len(self.learning_rates), "learning_rates",
              f"expected {len(self.milestone)} values (one per milestone), got {len(self.learning_rates)}")
        for i, m in enumerate(self.milestone):
            check(errors, m >= 1, f"milestone[{i}]", f"must be >= 1, got {m}")
        for i in range(1, len(self.milestone)):
            if self.milestone[i] < self.milestone[i - 1]:
                errors.add("milestone", f"must be increasing, got {list(self.milestone)}")
                break

    def entry(self, i: int) -> float:
        k = bisect.bisect_right(self.milestone, i)
        return float(self.learning_rates[min(k, len(self.learning_rates) - 1)])

    @property
    def length(self) -> int:
        return self.milestone[-1] if self.milestone else 0


@dataclass(frozen=True)
class DynamicExponentialDecayLR(DynamicList):
    """exponential_decay_lr(...) as a schedule."""

    learning_rate: float
    decay_rate: float
    total_step: int
    step_per_epoch: int
    decay_epoch: int
    is_stair: bool = False

    def problems(self, errors: Collector) -> None:
        _epoch_problems(errors, self.total_step, self.step_per_epoch, self.decay_epoch, "decay_epoch")

    def entry(self, i: int) -> float:
        return _exponential(i, self.learning_rate, self.decay_rate, self.step_per_epoch, self.decay_epoch,
                            self.is_stair)


@dataclass(frozen=True)
class DynamicNaturalExpDecayLR(DynamicExponentialDecayLR):
    """natural_exp_decay_lr(...) as a schedule."""

    def entry(self, i: int) -> float:
        return _natural_exp(i, self.learning_rate, self.decay_rate, self.step_per_epoch, self.decay_epoch,
                            self.is_stair)


@dataclass(frozen=True)
class DynamicInverseDecayLR(DynamicExponentialDecayLR):
    """inverse_decay_lr(...) as a schedule."""

    def entry(self, i: int) -> float:
        return _inverse(i, self.learning_rate, self.decay_rate, self.step_per_epoch, self.decay_epoch,
                        self.is_stair)


@dataclass(frozen=True)
class DynamicCosineDecayLR(DynamicList):
    """cosine_decay_lr(...) as a schedule."""

    min_lr: float
    max_lr: float
    total_step: int
    step_per_epoch: int
    decay_epoch: int

    def problems(self, errors: Collector) -> None:
        _epoch_problems(errors, self.total_step, self.step_per_epoch, self.decay_epoch, "decay_epoch")
        check(errors, self.min_lr < self.max_lr, "max_lr", f"must be > min_lr ({self.min_lr}), got {self.max_lr}")

    def entry(self, i: int) -> float:
        return _cosine(i, self.min_lr, self.max_lr, self.step_per_epoch, self.decay_epoch)


@dataclass(frozen=True)
class DynamicPolynomialDecayLR(DynamicList):
    """polynomial_decay_lr(...) as a schedule."""

    learning_rate: float
    end_learning_rate: float
    total_step: int
    step_per_epoch: int
    decay_epoch: int
    power: float
    update_decay_epoch: bool = False

    def problems(self, errors: Collector) -> None:
        _epoch_problems(errors, self.total_step, self.step_per_epoch, self.decay_epoch, "decay_epoch")

    def entry(self, i: int) -> float:
        return _polynomial(i, self.learning_rate, self.end_learning_rate, self.step_per_epoch, self.decay_epoch,
                           self.power, self.update_decay_epoch)


@dataclass(frozen=True)
class DynamicWarmupLR(DynamicList):
    """warmup_lr(...) as a schedule."""

    learning_rate: float
    total_step: int
    step_per_epoch: int
    warmup_epoch: int

    def problems(self, errors: Collector) -> None:
        _epoch_problems(errors, self.total_step, self.step_per_epoch, self.warmup_epoch, "warmup_epoch")

    def entry(self, i: int) -> float:
        return _warmup(i, self.learning_rate, self.step_per_epoch, self.warmup_epoch)


DYNAMIC_LR = {
    "piecewise_constant_lr": piecewise_constant_lr, "exponential_decay_lr": exponential_decay_lr,
    "natural_exp_decay_lr": natural_exp_decay_lr, "inverse_decay_lr": inverse_decay_lr,
    "cosine_decay_lr": cosine_decay_lr, "polynomial_decay_lr": polynomial_decay_lr, "warmup_lr": warmup_lr,
}

__all__ = ["ExponentialDecayLR", "NaturalExpDecayLR", "InverseDecayLR", "CosineDecayLR", "PolynomialDecayLR",
           "WarmUpLR", "DYNAMIC_LR", *DYNAMIC_LR, "DynamicList", "DynamicPiecewiseConstantLR",
           "DynamicExponentialDecayLR", "DynamicNaturalExpDecayLR", "DynamicInverseDecayLR", "DynamicCosineDecayLR",
           "DynamicPolynomialDecayLR", "DynamicWarmupLR"]

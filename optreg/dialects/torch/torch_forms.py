"""Closed forms of torch.optim.lr_scheduler (torch 2.13), with torch's option names.

The torch dialect builds the real torch classes; these closed forms exist so that torch schedules can
be composed (Sequential/Chained), plotted and resumed exactly. Where torch updates recursively
(lr_t = lr_{t-1}·ratio) the closed form is the value the recursion is meant to produce; the
difference is float rounding, measured in tests/test_schedule_torch.py.

ReduceLROnPlateau has no closed form (it reacts to a metric) and is not here.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Callable, Literal, Optional, Sequence

from optreg.errors import Collector, show
from optreg.schedules.engine import (ABSOLUTE, Chained, Delegate, Schedule, Sequential, SpansTotalIters, anneal,
                                      check, check_number, half_cosine, sgdr_cycle)

StepFunction = Callable[[int], float]


@dataclass(frozen=True)
class LambdaLR(Schedule):
    """factor = λ(t)."""

    lr_lambda: StepFunction

    def __call__(self, step: int) -> float:
        return float(self.lr_lambda(step))


@dataclass(frozen=True)
class MultiplicativeLR(Schedule):
    """lr_t = lr_{t-1}·λ(t), i.e. base·∏_{k=1..t} λ(k) (multiplied in torch's order).

    The product has no closed form; it is accumulated once per base and remembered, so evaluating
    steps in order costs one λ call each.
    """

    lr_lambda: StepFunction
    _memo: dict = field(init=False, repr=False, compare=False, default_factory=dict)

    def apply(self, step: int, base: float) -> float:
        values = self._memo.setdefault(base, [base])
        while len(values) <= step:
            values.append(values[-1] * float(self.lr_lambda(len(values))))
        return values[step]

    def __getstate__(self) -> dict:
        return {"lr_lambda": self.lr_lambda}

    def __setstate__(self, state: dict) -> None:
        object.__setattr__(self, "lr_lambda", state["lr_lambda"])
        object.__setattr__(self, "_memo", {})


@dataclass(frozen=True)
class StepLR(Schedule):
    """factor = γ^⌊t/step_size⌋."""

    step_size: int
    gamma: float = 0.1

    def problems(self, errors: Collector) -> None:
        check_number(errors, self.step_size, "step_size", low=1)

    def __call__(self, step: int) -> float:
        return self.gamma ** (step // self.step_size)


@dataclass(frozen=True)
class MultiStepLR(Schedule):
    """factor = γ^(number of milestones <= t); a repeated milestone counts once per repetition."""

    milestones: Sequence[int]
    gamma: float = 0.1

    def __post_init__(self) -> None:
        object.__setattr__(self, "milestones", tuple(sorted(self.milestones)))
        super().__post_init__()

    def __call__(self, step: int) -> float:
        return self.gamma ** bisect.bisect_right(self.milestones, step)


@dataclass(frozen=True)
class ConstantLR(SpansTotalIters, Schedule):
    """factor = `factor` for t < total_iters, then 1."""

    factor: float = 1.0 / 3
    total_iters: int = 5

    def problems(self, errors: Collector) -> None:
        check_number(errors, self.factor, "factor", 0, 1)

    def __call__(self, step: int) -> float:
        return self.factor if step < self.total_iters else 1.0


@dataclass(frozen=True)
class HeldConstantLR(ConstantLR):
    """torch's ConstantLR: `ConstantLR`, except that with total_iters 0 the factor holds at every step, as torch
    2.13's recursion gives (it sets base·factor at step 0 and undoes it only at step total_iters, which it never
    reaches again). OneFlow's ConstantLR computes the closed form, base_lr there (`ConstantLR`)."""

    def __call__(self, step: int) -> float:
        return self.factor if self.total_iters == 0 else super().__call__(step)


@dataclass(frozen=True)
class LinearLR(SpansTotalIters, Schedule):
    """factor = s + (e - s)·min(t, T)/T; with T = 0, s at every step, as torch 2.13's recursion gives (it sets
    base·s at step 0 and leaves the lr alone past T, so it never reaches e)."""

    start_factor: float = 1.0 / 3
    end_factor: float = 1.0
    total_iters: int = 5

    def __call__(self, step: int) -> float:
        if self.total_iters == 0:
            return self.start_factor
        if step >= self.total_iters:
            return self.end_factor
        return self.start_factor + (self.end_factor - self.start_factor) * step / self.total_iters


@dataclass(frozen=True)
class ExponentialLR(Schedule):
    """factor = γ^t."""

    gamma: float

    def __call__(self, step: int) -> float:
        return self.gamma ** step


@dataclass(frozen=True)
class PolynomialLR(SpansTotalIters, Schedule):
    """factor = (1 - min(t, T)/T)^power: ends at 0, except with T = 0: 1 at every step, as torch 2.13's recursion
    gives (it leaves the lr alone at step 0 and past T, so it never decays)."""

    total_iters: int = 5
    power: float = 1.0

    def __call__(self, step: int) -> float:
        if self.total_iters == 0:
            return 1.0
        if step >= self.total_iters:
            return 0.0
        return (1.0 - step / self.total_iters) ** self.power


@dataclass(frozen=True)
class CosineAnnealingLR(Schedule):
    """lr = η_min + (b - η_min)·½(1 + cos(π t/T_max)); no clamp: past T_max it rises again (period 2·T_max)."""

    T_max: int
    eta_min: float = 0.0

    def problems(self, errors: Collector) -> None:
        check_number(errors, self.T_max, "T_max", low=1)

    def apply(self, step: int, base: float) -> float:
        return anneal(base, self.eta_min, half_cosine(step / self.T_max))

    @property
    def length(self) -> int:
        return self.T_max


@dataclass(frozen=True)
class CosineAnnealingWarmRestarts(Schedule):
    """lr = η_min + (b - η_min)·½(1 + cos(π T_cur/T_i)); restart every T_i steps, T_i ← T_i·T_mult."""

    T_0: int
    T_mult: int = 1
    eta_min: float = 0.0

    def problems(self, errors: Collector) -> None:
        check_number(errors, self.T_0, "T_0", low=1)
        check_number(errors, self.T_mult, "T_mult", low=1)

    def apply(self, step: int, base: float) -> float:
        _, t_cur, t_i = sgdr_cycle(step, self.T_0, self.T_mult)
        return anneal(base, self.eta_min, half_cosine(t_cur / t_i))


def cyclic_scale(mode: str, gamma: float, scale_fn: Optional[StepFunction], scale_mode: str):
    """(scale function, what it reads: 'cycle' or 'iterations') as torch's CyclicLR picks them."""
    if scale_fn is not None:
        return scale_fn, scale_mode
    if mode == "triangular":
        return (lambda x: 1.0), "cycle"
    if mode == "triangular2":
        return (lambda x: 1.0 / (2.0 ** (x - 1))), "cycle"
    return (lambda x: gamma ** x), "iterations"


def cyclic_value(step: int, base_lr: float, max_lr: float, up: int, down: int, scale, scale_mode: str) -> float:
    """CLR: triangle of height max_lr - base_lr over up + down steps, scaled by scale(cycle or step)."""
    total = float(up + down)
    ratio = up / total
    cycle = math.floor(1 + step / total)
    x = 1.0 + step / total - cycle
    height = x / ratio if x <= ratio else (x - 1) / (ratio - 1)
    amplitude = (max_lr - base_lr) * height
    return base_lr + amplitude * scale(cycle if scale_mode == "cycle" else step)


@dataclass(frozen=True)
class CyclicOptions:
    """torch's CyclicLR options, which Cerebras' CyclicLR takes too (declared once)."""

    base_lr: float
    max_lr: float
    step_size_up: int = 2000
    step_size_down: Optional[int] = None
    mode: Literal["triangular", "triangular2", "exp_range"] = "triangular"
    gamma: float = 1.0


@dataclass(frozen=True)
class CyclicLR(CyclicOptions, Schedule):
    """Cyclical LR (absolute): base_lr + (max_lr - base_lr)·triangle(t)·scale; torch's momentum cycling is
    a separate schedule on key "momentum" here."""

    values = ABSOLUTE
    scale_fn: Optional[StepFunction] = None
    scale_mode: Literal["cycle", "iterations"] = "cycle"

    def problems(self, errors: Collector) -> None:
        check(errors, self.mode in ("triangular", "triangular2", "exp_range") or self.scale_fn is not None,
              "mode", f"must be triangular, triangular2 or exp_range, got {show(self.mode)}")
        check_number(errors, self.step_size_up, "step_size_up", low=1)
        check(errors, self.step_size_down is None or self.step_size_down >= 1, "step_size_down",
              f"must be >= 1, got {self.step_size_down}")

    def __call__(self, step: int) -> float:
        down = self.step_size_down if self.step_size_down is not None else self.step_size_up
        scale, reads = cyclic_scale(self.mode, self.gamma, self.scale_fn, self.scale_mode)
        return cyclic_value(step, self.base_lr, self.max_lr, self.step_size_up, down, scale, reads)


def one_cycle_phases(initial: float, peak: float, low: float, total: int, pct_start: float, three_phase: bool):
    """[(end_step, start value, end value)] of the 1cycle policy, as torch lays them out."""
    if three_phase:
        return [(float(pct_start * total) - 1, initial, peak),
                (float(2 * pct_start * total) - 2, peak, initial),
                (total - 1, initial, low)]
    return [(float(pct_start * total) - 1, initial, peak), (total - 1, peak, low)]


def one_cycle_value(step: int, phases, strategy: str) -> float:
    """Anneal within the phase that owns `step` (cos: end + (start-end)/2·(1+cos π p); linear)."""
    start_step = 0.0
    for i, (end_step, start, end) in enumerate(phases):
        if step <= end_step or i == len(phases) - 1:
            pct = (step - start_step) / (end_step - start_step)
            if strategy == "cos":
                return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
            return (end - start) * pct + start
        start_step = end_step
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class OneCycleLR(Schedule):
    """1cycle (absolute): max_lr/div_factor → max_lr → max_lr/(div_factor·final_div_factor).

    Like torch, stepping past total_steps raises ValueError.
    """

    values = ABSOLUTE
    max_lr: float
    total_steps: Optional[int] = None
    epochs: Optional[int] = None
    steps_per_epoch: Optional[int] = None
    pct_start: float = 0.3
    anneal_strategy: Literal["cos", "linear"] = "cos"
    div_factor: float = 25.0
    final_div_factor: float = 1e4
    three_phase: bool = False

    def problems(self, errors: Collector) -> None:
        check(errors, self.total_steps is not None or (self.epochs is not None and self.steps_per_epoch is not None),
              "total_steps", "give total_steps, or epochs and steps_per_epoch")
        check_number(errors, self.pct_start, "pct_start", 0, 1)
        check(errors, self.anneal_strategy in ("cos", "linear"), "anneal_strategy",
              f"must be 'cos' or 'linear', got {show(self.anneal_strategy)}")

    @property
    def length(self) -> int:
        return self.total_steps if self.total_steps is not None else self.epochs * self.steps_per_epoch

    def __call__(self, step: int) -> float:
        total = self.length
        if step > total:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is {total}")
        initial = self.max_lr / self.div_factor
        phases = one_cycle_phases(initial, self.max_lr, initial / self.final_div_factor, total,
                                  self.pct_start, self.three_phase)
        return one_cycle_value(step, phases, self.anneal_strategy)


@dataclass(frozen=True)
class SequentialLR(Delegate):
    """torch SequentialLR: each scheduler restarts at its milestone on its own (local) step."""

    schedulers: Sequence[Schedule]
    milestones: Optional[Sequence[int]] = None

    def build(self) -> Schedule:
        return Sequential(self.schedulers, self.milestones, "local")


@dataclass(frozen=True)
class ChainedScheduler(Delegate):
    """torch ChainedScheduler: every scheduler applies at the same step; chainable factors multiply."""

    schedulers: Sequence[Schedule]

    def build(self) -> Schedule:
        return Chained(self.schedulers)


TORCH_FORMS: dict[str, type[Schedule]] = {
    **{cls.__name__: cls
       for cls in (LambdaLR, MultiplicativeLR, StepLR, MultiStepLR, LinearLR, ExponentialLR, PolynomialLR,
                   CosineAnnealingLR, CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR, SequentialLR,
                   ChainedScheduler)},
    "ConstantLR": HeldConstantLR,
}

__all__ = ["TORCH_FORMS", *TORCH_FORMS]

"""OneFlow's lr schedulers (oneflow.optim.lr_scheduler, master 2025-08) as closed forms.

OneFlow's own schedulers are closed forms `get_lr(base_lr, step)`; those identical to torch's
(ConstantLR, LinearLR, StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, LambdaLR,
MultiplicativeLR, ChainedScheduler) are the torch forms. The ones below differ.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Literal, Optional, Sequence, Union

from optreg.errors import Collector, ConfigError, show
from optreg.schedules.engine import (Delegate, Schedule, Sequential, anneal, check, check_number, half_cosine,
                                      require_schedules, sgdr_cycle)
from optreg.dialects.torch.torch_forms import ConstantLR, LinearLR


@dataclass(frozen=True)
class PolynomialLR(Schedule):
    """lr = (b - end)·(1 - t'/D')^power + end.

    cycle=False: t' = min(t, D), D' = D. cycle=True: t' = max(t, 1), D' = D·⌈t'/D⌉, so step 0
    already sits one step into the decay (OneFlow's behaviour, kept).
    """

    decay_batch: int
    end_learning_rate: float = 0.0001
    power: float = 1.0
    cycle: bool = False

    def problems(self, errors: Collector) -> None:
        check_number(errors, self.decay_batch, "decay_batch", low=1)

    def apply(self, step: int, base: float) -> float:
        decay = self.decay_batch
        if self.cycle:
            step = max(step, 1)
            decay = decay * math.ceil(step / decay)
        else:
            step = min(step, decay)
        return (base - self.end_learning_rate) * (1 - step / decay) ** self.power + self.end_learning_rate

    @property
    def length(self) -> int:
        return self.decay_batch


@dataclass(frozen=True)
class CosineDecayLR(Schedule):
    """factor = (1 - α)·½(1 + cos(π t/D)) + α for t < D, then α (α is a ratio of the base lr)."""

    decay_steps: int
    alpha: float = 0.0

    def problems(self, errors: Collector) -> None:
        check_number(errors, self.decay_steps, "decay_steps", low=1)

    def __call__(self, step: int) -> float:
        if step >= self.decay_steps:
            return self.alpha
        return (1 - self.alpha) * half_cosine(step / self.decay_steps) + self.alpha

    @property
    def length(self) -> int:
        return self.decay_steps


@dataclass(frozen=True)
class CosineAnnealingWarmRestarts(Schedule):
    """SGDR with cycle decay: η_min + (b·decay_rate^i - η_min)·½(1 + cos(π T_cur/T_i)) in cycle i;
    η_min once i >= restart_limit (0: unlimited)."""

    T_0: int
    T_mult: int = 1
    eta_min: float = 0.0
    decay_rate: float = 1.0
    restart_limit: int = 0

    def problems(self, errors: Collector) -> None:
        check_number(errors, self.T_0, "T_0", low=1)
        check_number(errors, self.T_mult, "T_mult", low=1)

    def apply(self, step: int, base: float) -> float:
        cycle, t_cur, t_i = sgdr_cycle(step, self.T_0, self.T_mult)
        if self.restart_limit > 0 and cycle >= self.restart_limit:
            return self.eta_min
        return anneal(base * self.decay_rate ** cycle, self.eta_min, half_cosine(t_cur / t_i))


@dataclass(frozen=True)
class SequentialLR(Delegate):
    """OneFlow SequentialLR: stage k sees the global step unless interval_rescaling[k-1] is true
    (torch's SequentialLR restarts every stage; OneFlow's default does not)."""

    schedulers: Sequence[Schedule]
    milestones: Optional[Sequence[int]] = None
    interval_rescaling: Union[bool, Sequence[bool]] = False

    def build(self) -> Schedule:
        n = len(require_schedules(self.schedulers))
        flags = self.interval_rescaling
        if isinstance(flags, bool):
            flags = [flags] * max(n - 1, 0)
        elif len(flags) != n - 1:
            raise ConfigError(f"expected a bool or {n - 1} bools (one per milestone), got {len(flags)}",
                              "interval_rescaling")
        return Sequential(self.schedulers, self.milestones, ["local" if f else "global" for f in flags])


@dataclass(frozen=True)
class WarmupLR(Schedule):
    """Warmup in front of `scheduler` (or alone): SequentialLR([warmup, scheduler], [warmup_iters]).

    linear: factor goes warmup_factor → 1 over warmup_iters (→ scheduler(b, W)/b when warmup_prefix is
    false, so the ramp meets the main curve; OneFlow then requires equal base lrs in all groups).
    constant: factor warmup_factor for warmup_iters steps. warmup_prefix: the scheduler restarts at W.
    """

    scheduler: Optional[Schedule] = None
    warmup_factor: float = 1.0 / 3
    warmup_iters: int = 5
    warmup_method: Literal["linear", "constant"] = "linear"
    warmup_prefix: bool = False
    _by_base: dict = field(init=False, repr=False, compare=False, default_factory=dict)

    def problems(self, errors: Collector) -> None:
        check(errors, self.warmup_method in ("linear", "constant"), "warmup_method",
              f"must be 'linear' or 'constant', got {show(self.warmup_method)}")
        check(errors, self.scheduler is not None or self.warmup_iters > 0, "warmup_iters",
              "must be > 0 when there is no scheduler to warm up")
        check_number(errors, self.warmup_iters, "warmup_iters", low=0)
        check(errors, self.scheduler is None or isinstance(self.scheduler, Schedule), "scheduler",
              f"expected a schedule, got {show(self.scheduler)}")

    def _warmup(self, base: float) -> Schedule:
        if self.warmup_method == "constant":
            return ConstantLR(self.warmup_factor, self.warmup_iters)
        end = 1.0
        if self.scheduler is not None and not self.warmup_prefix and base != 0:
            end = self.scheduler.apply(self.warmup_iters, base) / base
        return LinearLR(self.warmup_factor, end, self.warmup_iters)

    def _sequence(self, base: float) -> Schedule:
        if self.warmup_iters <= 0:
            return self.scheduler
        if self.scheduler is None:
            return self._warmup(base)
        restart = "local" if self.warmup_prefix else "global"
        return Sequential([self._warmup(base), self.scheduler], [self.warmup_iters], restart)

    def apply(self, step: int, base: float) -> float:
        sequence = self._by_base.get(base)
        if sequence is None:
            sequence = self._by_base[base] = self._sequence(base)
        return sequence.apply(step, base)

    @property
    def length(self) -> int | None:
        if self.scheduler is None:
            return self.warmup_iters
        inner = self.scheduler.length
        if inner is None:
            return None
        return self.warmup_iters + inner if self.warmup_prefix else max(self.warmup_iters, inner)

    def bind(self, bases: Sequence[float], default: float | None) -> Schedule:
        if (self.warmup_method == "linear" and self.scheduler is not None and not self.warmup_prefix
                and any(not math.isclose(b, bases[0]) for b in bases)):
            raise ConfigError("the parameter groups have different base learning rates; OneFlow's linear "
                              "warmup into a scheduler needs them equal (or set warmup_prefix)", "warmup_method")
        scheduler = self.scheduler.bind(bases, default) if self.scheduler is not None else None
        return dataclasses.replace(self, scheduler=scheduler)


__all__ = ["PolynomialLR", "CosineDecayLR", "CosineAnnealingWarmRestarts", "SequentialLR", "WarmupLR"]

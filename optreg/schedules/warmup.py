"""`warmup:` on any schedule: W steps that lead up to the schedule's first value, then the schedule.

With v0 the schedule's value at its own step 0 and s = start_factor·v0 (or start_value), for t < W:

    linear       s + (v0 - s)·t/W         (torch LinearLR(start_factor, 1.0, total_iters=W) before the schedule)
    constant     s                        (torch ConstantLR(factor, total_iters=W))
    exponential  s·(v0/s)^(t/W)           (geometric from s to v0)

and from W on schedule(t - W): the schedule's counts start after the warmup, as a `sequential` of the two with the
milestone W gives it (torch SequentialLR, MMEngine's warmup + `begin: W`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Literal, Optional, Sequence

from pydantic import BaseModel, ConfigDict, model_validator

from optreg.core.types import NonNegFloat, NonNegInt, number
from optreg.schedules.engine import ABSOLUTE, MIXED, Schedule

KINDS = ("linear", "constant", "exponential")
DEFAULT_START_FACTOR = 0.001


class WarmupSpec(BaseModel):
    """`scheduler.warmup:` W = `steps`, or ceil(ratio × run length); it starts at start_factor × the schedule's first
    value (default 0.001) or at start_value; `type` linear (default), constant or exponential."""

    model_config = ConfigDict(extra="forbid")

    steps: Optional[NonNegInt] = None
    ratio: Optional[number(gt=0, lt=1)] = None
    start_factor: Optional[number(ge=0, le=1)] = None
    start_value: Optional[NonNegFloat] = None
    type: Literal["linear", "constant", "exponential"] = "linear"

    @model_validator(mode="after")
    def _one_each(self) -> "WarmupSpec":
        if (self.steps is None) == (self.ratio is None):
            raise ValueError("give one of steps (a count) and ratio (a fraction of the run)")
        if self.start_factor is not None and self.start_value is not None:
            raise ValueError("give one of start_factor (times the schedule's first value) and start_value")
        return self

    def length(self, run_steps: int | None) -> int | None:
        """W: steps, or ceil(ratio × run) (None when the ratio has no run to count from)."""
        if self.steps is not None:
            return self.steps
        return None if run_steps is None else math.ceil(round(self.ratio * run_steps, 9))


@dataclass(frozen=True)
class Warmup(Schedule):
    """`steps` warmup steps of `type` from s to the schedule's first value v0, then `schedule(t - steps)`."""

    schedule: Schedule
    steps: int
    type: str = "linear"
    start_factor: float | None = None
    start_value: float | None = None

    def __post_init__(self) -> None:
        values = self.schedule.values
        if self.start_value is not None and values != ABSOLUTE:
            values = MIXED   # an absolute start before factors of each group's lr
        object.__setattr__(self, "values", values)

    def start(self, first: float) -> float:
        """s: start_value, or start_factor × the schedule's first value."""
        if self.start_value is not None:
            return self.start_value
        factor = DEFAULT_START_FACTOR if self.start_factor is None else self.start_factor
        return factor * first

    def apply(self, step: int, base: float) -> float:
        if step >= self.steps:
            return self.schedule.apply(step - self.steps, base)
        first = self.schedule.apply(0, base)
        s = self.start(first)
        if self.type == "constant":
            return s
        if self.type == "exponential":
            return s * (first / s) ** (step / self.steps)
        return s + (first - s) * step / self.steps

    def __call__(self, step: int) -> float:
        return self.apply(step, 1.0)

    @property
    def length(self) -> int | None:
        length = self.schedule.length
        return None if length is None else self.steps + length

    def bind(self, bases: Sequence[float], default: float | None) -> "Warmup":
        return dataclasses.replace(self, schedule=self.schedule.bind(bases, default))


__all__ = ["Warmup", "WarmupSpec", "KINDS", "DEFAULT_START_FACTOR"]

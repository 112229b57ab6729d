"""Epoch-based schedules, with MMEngine's meaning (mmengine 0.10 `ParamScheduler(by_epoch=...)`,
`build_iter_from_epoch`).

A schedule written in epochs (`by_epoch: true`, steps_per_epoch E) is stepped once per epoch by MMEngine's runner,
so at optimizer step t it gives f(⌊t / E⌋): `EpochStepped`. With `convert_to_iter_based: true` it is converted to
iterations instead: its step counts (`COUNTS`: T_max, step_size, milestones, total_iters, T_0, ...) are multiplied by
E and it changes every step; rates (gamma, eta_min, factors) are not rescaled, as `build_iter_from_epoch` does.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from optreg.schedules.engine import Schedule

#: option names that are step counts, across the dialects' vocabularies (each multiplied by E on conversion)
COUNTS = frozenset({
    "T_max", "T_0", "step_size", "milestones", "total_iters", "total_steps",             # torch / OneFlow / Cerebras
    "decay_steps", "decay_batch", "total_step",                                          # OneFlow / MindSpore
    "t_initial", "decay_t", "warmup_t",                                                    # timm
    "num_training_steps", "num_warmup_steps", "num_decay_steps", "num_stable_steps",      # Hugging Face
    "max_steps", "warmup_steps", "hold_steps", "constant_steps",                          # NeMo, MindSpore
})


def scale_counts(values: Mapping[str, Any], factor: int, skip: Sequence[str] = ()) -> dict[str, Any]:
    """`values` with every step count (`COUNTS`, an int or a list of ints) multiplied by `factor`; a fraction
    (HF's num_warmup_steps 0.1) and the keys in `skip` are left as they are."""
    out = dict(values)
    for key, value in values.items():
        if key not in COUNTS or key in skip:
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            out[key] = value * factor
        elif isinstance(value, (list, tuple)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            out[key] = type(value)(v * factor for v in value)
    return out


@dataclass(frozen=True)
class EpochStepped(Schedule):
    """value(t) = inner(⌊t / steps_per_epoch⌋): a schedule counted in epochs, changing at epoch boundaries
    (MMEngine's by_epoch=True: its runner steps the scheduler after each epoch)."""

    inner: Schedule
    steps_per_epoch: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", self.inner.values)

    def apply(self, step: int, base: float) -> float:
        return self.inner.apply(step // self.steps_per_epoch, base)

    def __call__(self, step: int) -> float:
        return self.inner(step // self.steps_per_epoch)

    @property
    def length(self) -> int | None:
        length = self.inner.length
        return None if length is None else length * self.steps_per_epoch

    @property
    def stage_length(self) -> int | None:
        length = self.inner.stage_length
        return None if length is None else length * self.steps_per_epoch

    def bind(self, bases: Sequence[float], default: float | None) -> "EpochStepped":
        return dataclasses.replace(self, inner=self.inner.bind(bases, default))


__all__ = ["COUNTS", "scale_counts", "EpochStepped"]

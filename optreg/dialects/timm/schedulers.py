"""The timm dialect's schedulers: timm.scheduler's cycle schedulers.

Factor-valued: each scales the group's base lr. warmup_t of the cycle schedulers accepts a fraction in
[0, 1) of t_initial: 0.05 means ceil(0.05·t_initial) steps.
"""

from __future__ import annotations

from typing import Any, Union

from optreg.core.entry import scheduler
from optreg.core.types import Bool, Float, NonNegFloat, NonNegInt, PosFloat, PosInt, number

MOD = "optreg.dialects.timm.schedules"
SRC = "timm 1.0 timm/scheduler"

Fraction = number(ge=0, lt=1)
Steps = Union[NonNegInt, Fraction]                    # a count, or a fraction of the total


def _timm(name: str, target: str, doc: str, **kw: Any):
    return scheduler("timm", name, f"{MOD}:{target}", doc, source=SRC, values="factor",
                     notes=("lr_min and warmup_lr_init are absolute; the peak is the group's base lr.",
                            "Noise (noise_range_t, noise_pct, noise_std, noise_seed) is not reproduced.",
                            "t is the scheduler's step count (timm's epoch or num_updates).",
                            *kw.pop("notes", ())), **kw)


TIMM_CYCLE = {"t_initial": PosInt, "lr_min": NonNegFloat, "cycle_mul": PosFloat, "cycle_decay": PosFloat,
              "cycle_limit": NonNegInt, "warmup_t": Steps, "warmup_lr_init": NonNegFloat, "warmup_prefix": Bool}

ROWS = [
    _timm("cosine", "TimmCosine",
          "Cosine cycles with warmup: lr_min + (base·decay^i - lr_min)·½(1 + cos(π t^k/T_i^k)).",
          length="t_initial", aliases=("CosineLRScheduler",), types={**TIMM_CYCLE, "k_decay": PosFloat}),
    _timm("poly", "TimmPoly", "Polynomial cycles with warmup: lr_min + (peak - lr_min)(1 - t^k/T_i^k)^power.",
          length="t_initial", aliases=("PolyLRScheduler",),
          types={**TIMM_CYCLE, "power": NonNegFloat, "k_decay": PosFloat}),
    _timm("tanh", "TimmTanh", "Tanh cycles with warmup: lr_min + (peak - lr_min)·½(1 - tanh(lb(1-x) + ub·x)).",
          length="t_initial", aliases=("TanhLRScheduler",), types={**TIMM_CYCLE, "lb": Float, "ub": Float},
          notes=("Without warmup_prefix the warmup ramps to the curve's value at warmup_t (timm's behaviour).",)),
    _timm("step", "TimmStep", "Warmup, then base·decay_rate^⌊t/decay_t⌋.", aliases=("StepLRScheduler",),
          types={"decay_t": number(ge=1), "decay_rate": number(gt=0, le=1), "warmup_t": NonNegInt, "warmup_lr_init": NonNegFloat,
                 "warmup_prefix": Bool}),
    _timm("multistep", "TimmMultiStep", "Warmup, then base·decay_rate^(number of decay_t <= t).",
          aliases=("MultiStepLRScheduler",),
          types={"decay_t": list[NonNegInt], "decay_rate": number(gt=0, le=1), "warmup_t": NonNegInt,
                 "warmup_lr_init": NonNegFloat, "warmup_prefix": Bool}),
]

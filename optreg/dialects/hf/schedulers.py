"""The hf dialect's schedulers: transformers `get_scheduler` names.

Factor-valued: each scales the group's base lr. num_warmup_steps, num_decay_steps and num_stable_steps
accept a fraction in [0, 1) of the total: 0.05 means ceil(0.05·total) steps.
"""

from __future__ import annotations

from typing import Any, Literal, Optional, Union

from optreg.core.entry import scheduler
from optreg.core.types import NonNegFloat, NonNegInt, PosFloat, PosInt, UnitFloat, number

MOD = "optreg.dialects.hf.schedules"
SRC = "transformers 4.5x src/transformers/optimization.py (get_scheduler)"
TORCH = "torch.optim.lr_scheduler"

Fraction = number(ge=0, lt=1)
Steps = Union[NonNegInt, Fraction]                    # a count, or a fraction of the total
ShapeKind = Literal["linear", "cosine", "1-sqrt"]
HF_WARMUP = ("Warmup is t/max(1, W): the factor is 0 at step 0.",)


def _hf(name: str, target: str, doc: str, notes: tuple[str, ...] = HF_WARMUP, **kw: Any):
    return scheduler("hf", name, f"{MOD}:{target}", doc, source=SRC, values="factor", notes=notes, **kw)


WARMUP_TOTAL = {"num_warmup_steps": Steps, "num_training_steps": PosInt}

ROWS = [
    _hf("linear", "Linear", "Linear warmup, then linear decay to 0 at num_training_steps.",
        length="num_training_steps", types=WARMUP_TOTAL),
    _hf("cosine", "Cosine", "Linear warmup, then ½(1 + cos(2π·num_cycles·p)) on p = (t - W)/(T - W).",
        length="num_training_steps", types={**WARMUP_TOTAL, "num_cycles": NonNegFloat}),
    _hf("cosine_with_restarts", "CosineWithRestarts",
        "Linear warmup, then num_cycles hard-restarted cosines; 0 past T.",
        length="num_training_steps", types={**WARMUP_TOTAL, "num_cycles": PosInt}),
    _hf("polynomial", "Polynomial", "Linear warmup, then polynomial decay from the optimizer's lr to lr_end.",
        length="num_training_steps",
        types={**WARMUP_TOTAL, "lr_end": NonNegFloat, "power": NonNegFloat, "lr_init": Optional[PosFloat]},
        notes=(*HF_WARMUP, "The decay is relative to optimizer.defaults['lr'] (lr_init), not to each group's lr: "
                           "HF's behaviour, kept; lr_init overrides it.", "lr_end must be below the initial lr.")),
    _hf("constant", "Constant", "Factor 1.", notes=()),
    _hf("constant_with_warmup", "ConstantWithWarmup", "Linear warmup, then factor 1.",
        types={"num_warmup_steps": Steps}),
    _hf("inverse_sqrt", "InverseSqrt", "Linear warmup, then 1/√((t + τ - W)/τ), τ = timescale (default W).",
        types={"num_warmup_steps": Steps, "timescale": Optional[PosInt]}),
    _hf("cosine_with_min_lr", "CosineWithMinLR", "Linear warmup, then cosine down to min_lr (or min_lr_rate·lr).",
        length="num_training_steps",
        types={**WARMUP_TOTAL, "num_cycles": NonNegFloat, "min_lr": Optional[NonNegFloat],
               "min_lr_rate": Optional[UnitFloat]},
        notes=(*HF_WARMUP, "min_lr is divided by optimizer.defaults['lr'] (HF's behaviour); give exactly one of "
                           "min_lr and min_lr_rate.")),
    _hf("cosine_warmup_with_min_lr", "CosineWarmupWithMinLR",
        "Warmup (t+1)/W (or from warmup_lr_rate), then cosine on (t - W + 1)/(T - W) down to min_lr.",
        length="num_training_steps",
        types={**WARMUP_TOTAL, "num_cycles": NonNegFloat, "min_lr": Optional[NonNegFloat],
               "min_lr_rate": Optional[UnitFloat], "warmup_lr_rate": Optional[UnitFloat]},
        notes=("This warmup is nonzero at step 0.",)),
    _hf("warmup_stable_decay", "WarmupStableDecay",
        "Warmup into [r, 1], stable at 1, decay into [r, 1], then r = min_lr_ratio.", length="num_training_steps",
        types={"num_warmup_steps": Steps, "num_decay_steps": Steps, "num_training_steps": Optional[PosInt],
               "num_stable_steps": Optional[Steps], "warmup_type": ShapeKind, "decay_type": ShapeKind,
               "min_lr_ratio": UnitFloat, "num_cycles": NonNegFloat},
        notes=("Stable steps default to num_training_steps - num_warmup_steps - num_decay_steps; give "
               "num_training_steps or num_stable_steps.",)),
    scheduler("hf", "reduce_lr_on_plateau", f"{TORCH}:ReduceLROnPlateau",
              "torch ReduceLROnPlateau (HF passes its kwargs through).", source=SRC, values="factor",
              types={"mode": Literal["min", "max"], "factor": number(ge=0, lt=1)}),
]

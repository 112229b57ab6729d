"""The nemo dialect's schedulers: NeMo's AVAILABLE_SCHEDULERS (its warmup/annealing policies and the torch
schedulers it re-exports). Factor-valued except T5InverseSquareRootAnnealing.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from optreg.core.entry import scheduler
from optreg.core.types import Bool, NonNegFloat, NonNegInt, PosFloat, PosInt, StepFn, UnitFloat, number

MOD = "optreg.dialects.nemo.schedules"
SRC = "NeMo 2.x nemo/core/optim/lr_scheduler.py"
TORCH = "torch.optim.lr_scheduler"


def _nemo(name: str, doc: str, notes: tuple[str, ...] = (), **kw: Any):
    return scheduler("nemo", name, f"{MOD}:{name}", doc, source=SRC, values=kw.pop("values", "factor"),
                     notes=("warmup_ratio gives int(warmup_ratio·max_steps) warmup steps (give one of "
                            "warmup_steps and warmup_ratio); NeMo's warmup factor is (t+1)/(W+1).", *notes), **kw)


NEMO_WARMUP = {"warmup_steps": Optional[NonNegInt], "warmup_ratio": Optional[UnitFloat], "max_steps": PosInt,
               "min_lr": NonNegFloat}
NEMO_HOLD = {**NEMO_WARMUP, "hold_steps": Optional[NonNegInt], "hold_ratio": Optional[UnitFloat]}

ROWS = [
    _nemo("WarmupPolicy", "Warmup, then the base lr; min_lr past max_steps.", length="max_steps",
          types={**NEMO_WARMUP, "max_steps": Optional[PosInt]}),
    _nemo("WarmupHoldPolicy", "Warmup, hold the base lr for hold_steps, keep it; min_lr past max_steps.",
          length="max_steps", types=NEMO_HOLD),
    _nemo("SquareAnnealing", "Warmup, then max(b·((M' - s)/M')², min_lr).", length="max_steps", types=NEMO_WARMUP),
    _nemo("SquareRootAnnealing", "Warmup, then max(b·√((M - t)/M), min_lr).", length="max_steps", types=NEMO_WARMUP,
          notes=("Uses the raw step and max_steps (the warmup is not subtracted), as NeMo does.",)),
    _nemo("CosineAnnealing", "Warmup, then cosine from b to min_lr over max_steps - W (Megatron-style with "
                             "constant_steps).", length="max_steps",
          types={**NEMO_WARMUP, "constant_steps": Optional[NonNegInt], "constant_ratio": Optional[UnitFloat]},
          notes=("With constant_steps the first group's base lr is used for every group (NeMo's behaviour).",
                 "A base lr below min_lr is an error, as in NeMo.")),
    _nemo("NoamAnnealing", "b·d_model^-½·min(t^-½, t·W^-1.5) with t = max(1, step): b is a scale, not a peak.",
          types={"d_model": PosInt, "warmup_steps": Optional[NonNegInt], "warmup_ratio": Optional[UnitFloat],
                 "max_steps": Optional[PosInt], "min_lr": NonNegFloat},
          notes=("min_lr applies only after the warmup.",)),
    _nemo("NoamHoldAnnealing", "Warmup, hold, then b·W^r/(t - H)^r (r = decay_rate), at least min_lr.",
          length="max_steps", types={**NEMO_HOLD, "decay_rate": PosFloat}),
    _nemo("WarmupAnnealing", "Warmup, then linear decay from the base lr to min_lr at max_steps.", length="max_steps",
          types=NEMO_WARMUP, notes=("Decays from the first group's base lr for every group (NeMo's behaviour).",)),
    _nemo("InverseSquareRootAnnealing", "Warmup, then b/√((t + 1)/(W + 1)).", length="max_steps", types=NEMO_WARMUP),
    _nemo("T5InverseSquareRootAnnealing", "1/√constant_steps up to constant_steps, then 1/√t (ignores the base lr).",
          length="max_steps", values="absolute",
          types={"max_steps": PosInt, "constant_steps": PosInt, "min_lr": NonNegFloat},
          notes=("Absolute: the optimizer's lr is not used. Only constant_steps is accepted (NeMo's "
                 "constant_ratio path fails with a TypeError).",)),
    _nemo("PolynomialDecayAnnealing", "Warmup, then (b - min_lr)(1 - s/D)^power + min_lr on s = t - W.",
          length="max_steps", types={**NEMO_WARMUP, "power": NonNegFloat, "cycle": Bool}),
    _nemo("PolynomialHoldDecayAnnealing", "Warmup, hold, then polynomial decay from the hold's end.",
          length="max_steps", types={**NEMO_HOLD, "power": NonNegFloat, "cycle": Bool}),
    scheduler("nemo", "StepLR", f"{TORCH}:StepLR", "torch StepLR (re-exported by NeMo).", source=SRC, values="factor"),
    scheduler("nemo", "ExponentialLR", f"{TORCH}:ExponentialLR", "torch ExponentialLR (re-exported by NeMo).",
              source=SRC, values="factor"),
    scheduler("nemo", "ReduceLROnPlateau", f"{TORCH}:ReduceLROnPlateau",
              "torch ReduceLROnPlateau (re-exported by NeMo).",
              source=SRC, values="factor",
              types={"mode": Literal["min", "max"], "factor": number(ge=0, lt=1)}),
    scheduler("nemo", "CyclicLR", f"{TORCH}:CyclicLR", "torch CyclicLR (re-exported by NeMo).", source=SRC,
              values="absolute", types={"mode": Literal["triangular", "triangular2", "exp_range"],
                                      "scale_fn": Optional[StepFn]}),
]

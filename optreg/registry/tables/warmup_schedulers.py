"""The warmup family in users' own vocabulary: dialects hf (transformers get_scheduler names), timm
(timm.scheduler cycle schedulers) and nemo (NeMo's AVAILABLE_SCHEDULERS).

Factor-valued: each scales the group's base lr. Where a count is part of a total (HF
num_warmup_steps/num_decay_steps/num_stable_steps, timm warmup_t) a fraction in [0, 1) is accepted:
0.05 means ceil(0.05·total) steps.
"""

from __future__ import annotations

from typing import Any, Literal, Optional, Union

from optreg.registry.entry import scheduler
from optreg.schemas.types import Bool, Float, NonNegFloat, NonNegInt, PosFloat, PosInt, StepFn, UnitFloat, number

MOD = "optreg.schedulers.warmup"
HF = "transformers 4.5x src/transformers/optimization.py (get_scheduler)"
TIMM = "timm 1.0 timm/scheduler"
NEMO = "NeMo 2.x nemo/core/optim/lr_scheduler.py"
TORCH = "torch.optim.lr_scheduler"

Fraction = number(ge=0, lt=1)
Steps = Union[NonNegInt, Fraction]                    # a count, or a fraction of the total
ShapeKind = Literal["linear", "cosine", "1-sqrt"]
HF_WARMUP = ("Warmup is t/max(1, W): the factor is 0 at step 0.",)


def _hf(name: str, target: str, doc: str, notes: tuple[str, ...] = HF_WARMUP, **kw: Any):
    return scheduler("hf", name, f"{MOD}:{target}", doc, source=HF, values="factor", notes=notes, **kw)


def _timm(name: str, target: str, doc: str, **kw: Any):
    return scheduler("timm", name, f"{MOD}:{target}", doc, source=TIMM, values="factor",
                     notes=("lr_min and warmup_lr_init are absolute; the peak is the group's base lr.",
                            "Noise (noise_range_t, noise_pct, noise_std, noise_seed) is not reproduced.",
                            "t is the scheduler's step count (timm's epoch or num_updates).",
                            *kw.pop("notes", ())), **kw)


def _nemo(name: str, doc: str, notes: tuple[str, ...] = (), **kw: Any):
    return scheduler("nemo", name, f"{MOD}:{name}", doc, source=NEMO, values=kw.pop("values", "factor"),
                     notes=("warmup_ratio gives int(warmup_ratio·max_steps) warmup steps (give one of "
                            "warmup_steps and warmup_ratio); NeMo's warmup factor is (t+1)/(W+1).", *notes), **kw)


WARMUP_TOTAL = {"num_warmup_steps": Steps, "num_training_steps": PosInt}
NEMO_WARMUP = {"warmup_steps": Optional[NonNegInt], "warmup_ratio": Optional[UnitFloat], "max_steps": PosInt,
               "min_lr": NonNegFloat}
NEMO_HOLD = {**NEMO_WARMUP, "hold_steps": Optional[NonNegInt], "hold_ratio": Optional[UnitFloat]}
TIMM_CYCLE = {"t_initial": PosInt, "lr_min": NonNegFloat, "cycle_mul": PosFloat, "cycle_decay": PosFloat,
              "cycle_limit": NonNegInt, "warmup_t": Steps, "warmup_lr_init": NonNegFloat, "warmup_prefix": Bool}

ROWS = [
    # ---- HF get_scheduler -------------------------------------------------------------------------
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
        "Warmup into [r, 1], stable at 1, decay into [r, 1], then r = min_lr_ratio.",
        types={"num_warmup_steps": Steps, "num_decay_steps": Steps, "num_training_steps": Optional[PosInt],
               "num_stable_steps": Optional[Steps], "warmup_type": ShapeKind, "decay_type": ShapeKind,
               "min_lr_ratio": UnitFloat, "num_cycles": NonNegFloat},
        notes=("Stable steps default to num_training_steps - num_warmup_steps - num_decay_steps; give "
               "num_training_steps or num_stable_steps.",)),
    scheduler("hf", "reduce_lr_on_plateau", f"{TORCH}:ReduceLROnPlateau",
              "torch ReduceLROnPlateau (HF passes its kwargs through).", source=HF, values="factor",
              types={"mode": Literal["min", "max"], "factor": number(ge=0, lt=1)}),
    # ---- timm ---------------------------------------------------------------------------------------
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
          types={"decay_t": PosFloat, "decay_rate": PosFloat, "warmup_t": NonNegInt, "warmup_lr_init": NonNegFloat,
                 "warmup_prefix": Bool}),
    _timm("multistep", "TimmMultiStep", "Warmup, then base·decay_rate^(number of decay_t <= t).",
          aliases=("MultiStepLRScheduler",),
          types={"decay_t": list[NonNegInt], "decay_rate": PosFloat, "warmup_t": NonNegInt,
                 "warmup_lr_init": NonNegFloat, "warmup_prefix": Bool}),
    # ---- NeMo ---------------------------------------------------------------------------------------
    _nemo("WarmupPolicy", "Warmup, then the base lr; min_lr past max_steps.",
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
    scheduler("nemo", "StepLR", f"{TORCH}:StepLR", "torch StepLR (re-exported by NeMo).", source=NEMO, values="factor"),
    scheduler("nemo", "ExponentialLR", f"{TORCH}:ExponentialLR", "torch ExponentialLR (re-exported by NeMo).",
              source=NEMO, values="factor"),
    scheduler("nemo", "ReduceLROnPlateau", f"{TORCH}:ReduceLROnPlateau",
              "torch ReduceLROnPlateau (re-exported by NeMo).",
              source=NEMO, values="factor",
              types={"mode": Literal["min", "max"], "factor": number(ge=0, lt=1)}),
    scheduler("nemo", "CyclicLR", f"{TORCH}:CyclicLR", "torch CyclicLR (re-exported by NeMo).", source=NEMO,
              values="factor", types={"mode": Literal["triangular", "triangular2", "exp_range"],
                                      "scale_fn": Optional[StepFn]}),
]


"""The cerebras dialect's schedulers (cerebras.pytorch.optim.lr_scheduler, cerebras_pytorch 2.10).

Absolute-valued: each sets the lr itself. The YAML forms (legacy `learning_rate:` lists and the current
`schedulers:` list) are converted to these by optreg.dialects.cerebras.forms.to_spec.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal, Optional

from optreg.core.entry import Rule, scheduler
from optreg.core.types import Bool, IncreasingInts, NonNegFloat, NonNegInt, PosFloat, PosInt, StepFn, UnitFloat

SRC = "cerebras_pytorch 2.10 cerebras.pytorch.optim.lr_scheduler"
LR_PATH = "cerebras.pytorch.optim.lr_scheduler."
WD_PATH = "cerebras.pytorch.optim.weight_decay_scheduler."
MOD = "optreg.dialects.cerebras.schedules"
NESTED = list[dict[str, Any]]
F32 = "Cerebras evaluates the closed form in float32 on the device; optreg uses float64."

INIT_END = {"initial_learning_rate": NonNegFloat, "end_learning_rate": NonNegFloat, "total_iters": PosInt}


def _row(name: str, doc: str, target: str | None = None, notes: tuple[str, ...] = (), **kw: Any):
    return scheduler("cerebras", name, f"{MOD}:{target or name}", doc, source=SRC, values="absolute",
                     class_path=LR_PATH + name, notes=(*notes, F32), **kw)


ROWS = [
    _row("ConstantLR", "lr = learning_rate (total_iters: the stage length inside a SequentialLR).",
         length="total_iters",
         types={"learning_rate": NonNegFloat, "total_iters": Optional[PosInt]}),
    _row("PolynomialLR", "lr = end for t >= T, else (init - end)·(1 - t/T)^power + end.", length="total_iters",
         types={**INIT_END, "power": NonNegFloat, "cycle": Bool},
         notes=("cycle has no effect: Cerebras applies the t >= total_iters clamp first and, below it, "
                "⌈(t+1)/T⌉ = 1 (a Cerebras bug, reproduced).",)),
    _row("LinearLR", "lr = init + (end - init)·min(t, T)/T (PolynomialLR with power 1).", target="PolynomialLR",
         fixed={"power": 1.0}, length="total_iters", types={**INIT_END, "cycle": Bool},
         notes=("cycle has no effect (see PolynomialLR).",)),
    _row("ExponentialLR", "lr = init·decay_rate^(t/T) (⌊t/T⌋ with staircase).", length="total_iters",
         types={"initial_learning_rate": NonNegFloat, "total_iters": PosInt, "decay_rate": PosFloat,
                "staircase": Bool}),
    _row("InverseExponentialTimeDecayLR", "lr = init/(1 + decay_rate·t^k/T) (floored with staircase).",
         length="total_iters",
         types={"initial_learning_rate": NonNegFloat, "step_exponent": NonNegInt, "total_iters": PosInt,
                "decay_rate": NonNegFloat, "staircase": Bool}),
    _row("InverseSquareRootDecayLR", "lr = init·scale/√max(t, warmup_steps), flat (no ramp) before warmup_steps.",
         types={"initial_learning_rate": NonNegFloat, "scale": NonNegFloat, "warmup_steps": PosInt},
         notes=("warmup_steps must be >= 1 (0 would divide by zero at step 0).",)),
    _row("CosineDecayLR", "lr = end + (init - end)·½(1 + cos(π·min(t, T)/T)).", length="total_iters", types=INIT_END),
    _row("CosineAnnealingLR", "lr = η_min + (init - η_min)·½(1 + cos(πt/T_max)); rises again after T_max.",
         types={"initial_learning_rate": NonNegFloat, "T_max": PosInt, "eta_min": NonNegFloat}),
    _row("CosineAnnealingWarmRestarts", "Cosine restarts every T_0 steps, as Cerebras computes T_cur.",
         types={"initial_learning_rate": NonNegFloat, "T_0": PosInt, "T_mult": PosInt, "eta_min": NonNegFloat},
         notes=("T_mult must be 1 (Cerebras raises otherwise).",
                "Cerebras computes T_cur = ⌊t/T_0⌋·T_0 - T_0 after the first cycle instead of t mod T_0, so "
                "the lr alternates between initial_learning_rate and eta_min for whole cycles; this bug is "
                "reproduced as written.")),
    _row("StepLR", "lr = init·γ^⌊t/step_size⌋.",
         types={"initial_learning_rate": NonNegFloat, "step_size": PosInt, "gamma": PosFloat}),
    _row("MultiStepLR", "lr = init·γ^(number of milestones <= t).",
         types={"initial_learning_rate": NonNegFloat, "gamma": PosFloat, "milestones": IncreasingInts}),
    _row("PiecewiseConstantLR", "lr = learning_rates[k] on [milestones[k-1], milestones[k]).",
         types={"learning_rates": list[NonNegFloat], "milestones": IncreasingInts},
         rules=(Rule("learning_rates", ("learning_rates", "milestones"), lambda v, m: len(v) == len(m) + 1,
                     "expected one more learning rate than milestones"),)),
    _row("LambdaLR", "lr = init·λ(t).",
         types={"initial_learning_rate": NonNegFloat, "lr_lambda": StepFn},
         notes=("Cerebras takes λ from a subclass (its default lambdas are demo placeholders); here λ is the "
                "lr_lambda option, a registered function name or an expression in `step`.",)),
    _row("MultiplicativeLR", "lr = init·coefficient^t.",
         types={"initial_learning_rate": NonNegFloat, "coefficient": PosFloat}),
    _row("CyclicLR", "Triangular cycles between base_lr and max_lr (no momentum, no scale_fn).",
         types={"base_lr": NonNegFloat, "max_lr": NonNegFloat, "step_size_up": PosInt,
                "step_size_down": Optional[PosInt], "mode": Literal["triangular", "triangular2", "exp_range"],
                "gamma": PosFloat},
         rules=(Rule("max_lr", ("base_lr", "max_lr"), lambda b, m: b <= m, "must be >= base_lr"),),
         notes=("The mode fixes the scale mode (exp_range: per iteration, others: per cycle), as torch does "
                "without scale_fn; scale_mode is accepted and ignored, as in Cerebras.",)),
    _row("OneCycleLR", "1cycle from initial_learning_rate to max_lr and down to initial/final_div_factor.",
         types={"initial_learning_rate": NonNegFloat, "max_lr": NonNegFloat, "total_steps": PosInt,
                "pct_start": UnitFloat, "final_div_factor": PosFloat, "three_phase": Bool,
                "anneal_strategy": Literal["cos", "linear"]},
         rules=(Rule("max_lr", ("initial_learning_rate", "max_lr"), lambda i, m: i <= m,
                     "must be >= initial_learning_rate"),),
         notes=("No momentum cycling. Past total_steps the last phase's formula continues (torch raises).",)),
    _row("SequentialLR", "lr = s_k(t - M_{k-1}) on [M_{k-1}, M_k): each stage from its milestone on its own step.",
         types={"schedulers": NESTED, "milestones": Optional[IncreasingInts]},
         notes=("milestones default to the running sums of the stages' total_iters; given milestones may differ "
                "from them, as cerebras.pytorch's SequentialLR accepts (the modelzoo trainer's config validator "
                "compute_milestones refuses a mismatch; optreg follows the class).",
                "Stages may jump in value at a milestone (Cerebras' PiecewiseConstantLR is built from such "
                "constants); nothing requires a stage to end where the next one starts.")),
    _row("ChainedLR", "lr = s_0(t)·∏_{k>=1} s_k(t)/s_k.initial_learning_rate.", aliases=("ChainedScheduler",),
         types={"schedulers": NESTED}),
    _row("ScalePerParamLR", "lr of group i = s(t)·adjust_learning_rate_i (else the group's adjust_val, else 1).",
         types={"scheduler": dict[str, Any]},
         notes=("Each group's factor is read once, when the scheduler is built, as Cerebras reads it; the wrapped "
                "scheduler must drive the lr (Cerebras' ScalePerParamLR wraps an LRScheduler).",)),
]


WD_SRC = "cerebras_pytorch 2.10 cerebras.pytorch.optim.weight_decay_scheduler"


def _weight_decay_row(wd_name: str):
    """A `*WD` scheduler's row from its lr twin's (`CosineDecayWD` from `CosineDecayLR`): the same closed form and
    checks under Cerebras' generic option names (initial_val, end_val, val, vals, base_val, max_val), driving each
    group's weight_decay."""
    from optreg.dialects.cerebras.forms import WD_RENAMES

    lr_names = {row.name: row for row in ROWS}
    lr = lr_names.get(wd_name[:-2]) or lr_names[wd_name[:-2] + "LR"]
    rename = {wd: lr_opt for wd, lr_opt in WD_RENAMES.items() if lr_opt in lr.types}
    back = {lr_opt: wd for wd, lr_opt in rename.items()}

    def spelled(text: str) -> str:
        for lr_opt, wd in back.items():
            text = text.replace(lr_opt, wd)
        return text

    return replace(
        lr, name=wd_name, target=f"{MOD}:{wd_name}", aliases=(), class_path=WD_PATH + wd_name, source=WD_SRC,
        doc=spelled(lr.doc).replace("lr = ", "wd = ").replace("lr of group", "wd of group"), rename=rename,
        types={back.get(k, k): v for k, v in lr.types.items()},
        rules=tuple(replace(r, path=back.get(r.path, r.path), fields=tuple(back.get(f, f) for f in r.fields),
                            message=spelled(r.message)) for r in lr.rules),
        notes=(f"{lr.name}'s closed form on each group's weight_decay; the options are Cerebras' generic names"
               + (f" ({', '.join(f'{wd} for {opt}' for wd, opt in rename.items())})" if rename else "")
               + ". Every group is driven, those with weight_decay 0 too, as Cerebras does (param_group_tags "
                 "select groups in a Model Zoo config).", *map(spelled, lr.notes)))


#: each weight-decay scheduler of cerebras_pytorch 2.10 -> the lr scheduler whose closed form it shares (`schedules.py`)
WD_TWINS = {"ConstantWD": "ConstantLR", "PolynomialWD": "PolynomialLR", "LinearWD": "PolynomialLR",
            "ExponentialWD": "ExponentialLR", "InverseExponentialTimeDecayWD": "InverseExponentialTimeDecayLR",
            "InverseSquareRootDecayWD": "InverseSquareRootDecayLR", "CosineDecayWD": "CosineDecayLR",
            "SequentialWD": "SequentialLR", "PiecewiseConstantWD": "PiecewiseConstantLR",
            "MultiStepWD": "MultiStepLR", "StepWD": "StepLR", "CosineAnnealingWD": "CosineAnnealingLR",
            "LambdaWD": "LambdaLR", "CosineAnnealingWarmRestartsWD": "CosineAnnealingWarmRestarts",
            "MultiplicativeWD": "MultiplicativeLR", "ChainedWD": "ChainedLR", "CyclicWD": "CyclicLR",
            "OneCycleWD": "OneCycleLR", "ScalePerParamWD": "ScalePerParamLR"}

ROWS += [_weight_decay_row(name) for name in WD_TWINS]

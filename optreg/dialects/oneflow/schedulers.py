"""The oneflow dialect's schedulers (oneflow.optim.lr_scheduler): closed forms from the schedule engine.

OneFlow calls last_epoch `last_step` (an alias the builder resolves). Factor-valued, like torch.
"""

from __future__ import annotations

from typing import Any, Literal, Optional, Union

from optreg.core.entry import scheduler
from optreg.core.types import (Bool, IncreasingInts, NonNegFloat, NonNegInt, PosFloat, PosInt,
                                  StepFn, UnitFloat, number)

SRC = "OneFlow master (2025-08) oneflow.optim.lr_scheduler"
FORMS = "optreg.dialects.torch.torch_forms"
OWN = "optreg.dialects.oneflow.schedules"
NESTED = list[dict[str, Any]]


def _row(name: str, target: str, doc: str, **kw: Any):
    return scheduler("oneflow", name, target, doc, source=SRC, values="factor", **kw)


ROWS = [
    _row("ConstantLR", f"{FORMS}:ConstantLR", "lr = base_lr · (factor if t < total_iters else 1).",
         length="total_iters", types={"factor": UnitFloat, "total_iters": NonNegInt}),
    _row("LinearLR", f"{FORMS}:LinearLR", "lr = base_lr · (s + (e - s)·min(t, T)/T).", length="total_iters",
         types={"start_factor": UnitFloat, "end_factor": UnitFloat, "total_iters": PosInt},
         notes=("start_factor may be 0 (OneFlow checks [0, 1]; torch requires > 0).",)),
    _row("StepLR", f"{FORMS}:StepLR", "lr = base_lr · γ^⌊t/step_size⌋.",
         types={"step_size": PosInt, "gamma": PosFloat}),
    _row("MultiStepLR", f"{FORMS}:MultiStepLR", "lr = base_lr · γ^(number of milestones <= t).",
         types={"milestones": IncreasingInts, "gamma": PosFloat},
         notes=("milestones must be strictly increasing (OneFlow asserts it; torch counts repeats).",)),
    _row("ExponentialLR", f"{FORMS}:ExponentialLR", "lr = base_lr · γ^t.", types={"gamma": PosFloat}),
    _row("PolynomialLR", f"{OWN}:PolynomialLR",
         "lr = (base_lr - end)·(1 - t'/D')^power + end; cycle: D' = D·⌈max(t,1)/D⌉.", length="decay_batch",
         types={"decay_batch": PosInt, "end_learning_rate": NonNegFloat, "power": NonNegFloat, "cycle": Bool},
         notes=("end_learning_rate is absolute while the start is the group's base lr.",
                "With cycle=True step 0 is evaluated as step 1 (OneFlow's max(t, 1)); kept.",
                "Older OneFlow releases named decay_batch `steps`.")),
    _row("CosineDecayLR", f"{OWN}:CosineDecayLR",
         "lr = base_lr·((1 - α)·½(1 + cos(πt/D)) + α) for t < D, then base_lr·α.", length="decay_steps",
         types={"decay_steps": PosInt, "alpha": UnitFloat},
         notes=("alpha is a ratio of the base lr (TF style), not an absolute minimum.",)),
    _row("CosineAnnealingLR", f"{FORMS}:CosineAnnealingLR",
         "lr = η_min + (base_lr - η_min)·½(1 + cos(πt/T_max)); rises again after T_max.", length="T_max",
         types={"T_max": PosInt, "eta_min": NonNegFloat}),
    _row("CosineAnnealingWarmRestarts", f"{OWN}:CosineAnnealingWarmRestarts",
         "SGDR: η_min + (base_lr·decay_rate^i - η_min)·½(1 + cos(π T_cur/T_i)); η_min after restart_limit cycles.",
         types={"T_0": PosInt, "T_mult": PosInt, "eta_min": NonNegFloat, "decay_rate": PosFloat,
                "restart_limit": NonNegInt},
         notes=("Cycle boundaries are computed in integers; OneFlow takes a float log, which misplaces a "
                "restart by one step where the log is inexact (e.g. T_mult=10 at step T_0·111).",)),
    _row("LambdaLR", f"{FORMS}:LambdaLR", "lr = base_lr · λ(t).", types={"lr_lambda": StepFn}),
    _row("MultiplicativeLR", f"{FORMS}:MultiplicativeLR", "lr_t = lr_{t-1} · λ(t) (base_lr·∏λ(k)).",
         types={"lr_lambda": StepFn}),
    scheduler("oneflow", "ReduceLROnPlateau", "torch.optim.lr_scheduler:ReduceLROnPlateau",
              "lr ← max(lr·factor, min_lr) after `patience` epochs without improvement; step(metric).",
              source=SRC, values="factor",
              types={"mode": Literal["min", "max"], "factor": number(ge=0, lt=1)},
              notes=("Numerically identical to torch's; builds torch.optim.lr_scheduler.ReduceLROnPlateau.",)),
    _row("SequentialLR", f"{OWN}:SequentialLR",
         "Stages switch at milestones; each stage sees the GLOBAL step unless interval_rescaling is true.",
         types={"schedulers": NESTED, "milestones": Optional[IncreasingInts],
                "interval_rescaling": Union[Bool, list[Bool]]},
         notes=("OneFlow's default differs from torch: interval_rescaling=False evaluates every stage at the "
                "global step; true restarts the stage at its milestone (torch's behaviour).",
                "milestones are derived from the stages' lengths when omitted.")),
    _row("ChainedScheduler", f"{FORMS}:ChainedScheduler",
         "lr = s_n(… s_1(base_lr, t) …, t): every scheduler applied at the same step.",
         types={"schedulers": NESTED}),
    _row("WarmupLR", f"{OWN}:WarmupLR",
         "Warmup (linear from warmup_factor, or constant) for warmup_iters steps in front of `scheduler`.",
         types={"scheduler": Optional[dict[str, Any]], "warmup_factor": UnitFloat, "warmup_iters": NonNegInt,
                "warmup_method": Literal["linear", "constant"], "warmup_prefix": Bool},
         notes=("A linear warmup without warmup_prefix ends at scheduler(base_lr, W)/base_lr so it meets the "
                "main curve; OneFlow then requires every group to have the same base lr.",
                "`scheduler` is a nested scheduler spec (OneFlow's scheduler_or_optimizer).")),
]

"""MindFormers' lr schedules as rows of the mindspore dialect (closed forms in `schedules.py`).

MindFormers registers them beside MindSpore's cells (mindformers.core.lr); `mindspore.nn` has no schedule of
these names, so they answer to their own names in the mindspore dialect, and to `mindformers.core.lr.<Name>`.
The warmup family declares no length option: MindFormers accepts a warmup longer than
total_steps (the decay then never starts), which optreg's check of a schedule's own warmup would refuse. Their
`length` is still total_steps, named by their closed forms (`length_option`): left out or null (a Hydra group
file's), it is the run length, as a declared length is (optreg.core.loop.fill_length), and a warmup longer than
the run passes.
"""

from __future__ import annotations

from typing import Any, Optional

from optreg.core.entry import scheduler
from optreg.core.types import NonNegFloat, NonNegInt, PosFloat, PosInt, UnitFloat

SRC = "MindFormers dev (2025) mindformers.core.lr.lr_schedule, on MindSpore 2.10"
MOD = "optreg.dialects.mindspore.mindformers.schedules"
F32 = "MindFormers evaluates in float32; optreg uses float64."
RATIO = "A ratio wins over the steps: steps = int(total_steps·ratio) (MindFormers' _get_lr_steps)."
WARMUP = {"learning_rate": NonNegFloat, "warmup_steps": Optional[NonNegInt], "warmup_lr_init": NonNegFloat,
          "warmup_ratio": Optional[UnitFloat], "total_steps": Optional[PosInt]}


LONG_WARMUP = "A warmup longer than total_steps passes, as in MindFormers (what follows the warmup then never starts)."


def _row(name: str, doc: str, types: dict[str, Any] | None = None, notes: tuple[str, ...] = (), **kw: Any):
    return scheduler("mindspore", name, f"{MOD}:{name}", doc, source=SRC, values="absolute",
                     class_path=f"mindformers.core.lr.{name}", types={**WARMUP, **(types or {})},
                     notes=(*notes, *(() if kw.get("length") else (LONG_WARMUP,)), F32), **kw)


ROWS = [
    _row("ConstantWarmUpLR", "lr_init + (lr - lr_init)·t/W for t < W, then lr.", notes=(RATIO,)),
    _row("LinearWithWarmUpLR", "Linear warmup, then lr·max(0, (T - t)/max(1, T - W)).", notes=(RATIO,)),
    _row("CosineWithWarmUpLR", "Linear warmup, then lr_end + (lr - lr_end)·max(0, ½(1 + cos(2π·cycles·p))), "
                               "p = (t - W)/(T - W); lr_end from decay_steps on.",
         types={"num_cycles": PosFloat, "lr_end": NonNegFloat, "decay_steps": Optional[PosInt],
                "decay_ratio": Optional[UnitFloat]}, notes=(RATIO,)),
    _row("CosineWithRestartsAndWarmUpLR", "Linear warmup, then cosine restarts: lr_end + (lr - lr_end)·½(1 + "
                                          "cos(π·((cycles·p) mod 1))); 0 once p reaches 1.",
         types={"num_cycles": PosFloat, "lr_end": NonNegFloat, "decay_steps": Optional[PosInt]},
         notes=(RATIO, "Past the cosine's end MindFormers returns 0, not lr_end (kept).")),
    _row("PolynomialWithWarmUpLR", "Linear warmup, then (lr - lr_end)·(1 - (t - W)/D)^power + lr_end; lr_end past T.",
         types={"lr_end": NonNegFloat, "power": PosFloat, "decay_steps": Optional[PosInt]}, notes=(RATIO,)),
    _row("WarmUpStableDecayLR", "Linear warmup, lr until decay_start, then a line to lr_end at T (not clamped "
                                "after T).",
         types={"lr_end": NonNegFloat, "decay_start_steps": Optional[NonNegInt],
                "decay_start_ratio": Optional[UnitFloat]},
         notes=(RATIO, "With warmup 0 MindFormers' stable phase computes lr·t/t, NaN at step 0; optreg gives lr.")),
    _row("ConstantWithCoolDownLR", "Linear warmup, lr for keep_steps, a cosine to lr_end1 over decay_steps, lr_end1 "
                                   "for final_steps, then lr_end2.",
         types={"keep_steps": NonNegInt, "decay_steps": Optional[PosInt], "decay_ratio": Optional[UnitFloat],
                "num_cycles": PosFloat, "lr_end1": NonNegFloat, "final_steps": NonNegInt,
                "lr_end2": Optional[NonNegFloat]}, notes=(RATIO,)),
    scheduler("mindspore", "CosineAnnealingLR", f"{MOD}:CosineAnnealingLR",
              "MindFormers': eta_min + (base_lr - eta_min)·½(1 + cos(π t/t_max)), absolute.", source=SRC,
              values="absolute", class_path="mindformers.core.lr.CosineAnnealingLR", length="t_max",
              types={"base_lr": NonNegFloat, "t_max": PosInt, "eta_min": NonNegFloat},
              notes=("MindFormers' (mindspore.nn has none; mindspore.experimental's is the factor-valued torch "
                     "class).", F32)),
    scheduler("mindspore", "CosineAnnealingWarmRestarts", f"{MOD}:CosineAnnealingWarmRestarts",
              "MindFormers' SGDR: eta_min + (base_lr - eta_min)·½(1 + cos(π T_cur/T_i)), absolute.", source=SRC,
              values="absolute", class_path="mindformers.core.lr.CosineAnnealingWarmRestarts",
              types={"base_lr": NonNegFloat, "t_0": PosInt, "t_mult": PosInt, "eta_min": NonNegFloat},
              notes=("Cycle boundaries in integers; MindFormers takes a float log for t_mult > 1.", F32)),
]

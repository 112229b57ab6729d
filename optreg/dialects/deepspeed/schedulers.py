"""The deepspeed dialect's schedulers: the `scheduler.type` names of a ds_config (deepspeed.runtime.lr_schedules).

Each is evaluated as DeepSpeed's engine drives it: the constructor's value first, then one `step()` after every
optimizer step (`schedules.ds_iteration`).
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from optreg.core.entry import scheduler
from optreg.core.types import Bool, NonNegFloat, NonNegInt, PosInt, UnitFloat

MOD = "optreg.dialects.deepspeed.schedules"
SRC = "DeepSpeed 0.19 deepspeed/runtime/lr_schedules.py"
CONSTRUCTION = ("DeepSpeed's constructor sets the lr of iteration -1: the first optimizer step uses warmup_min_lr "
                "(0 for WarmupCosineLR), and step s uses the value of iteration s - 1.",)
#: warmup_num_steps: any count DeepSpeed reads as W = max(2, warmup_num_steps), 0 (no warmup asked) included
WARMUP = {"warmup_min_lr": NonNegFloat, "warmup_max_lr": Optional[NonNegFloat], "warmup_num_steps": NonNegInt,
          "warmup_type": Literal["log", "linear"]}


def _ds(name: str, doc: str, values: str = "absolute", notes: tuple[str, ...] = (), **kw: Any):
    return scheduler("deepspeed", name, f"{MOD}:{name}", doc, source=SRC, values=values,
                     class_path=f"deepspeed.runtime.lr_schedules.{name}", notes=(*CONSTRUCTION, *notes), **kw)


ROWS = [
    _ds("WarmupLR", "min + (max - min)·γ: γ = log(i + 1)/log(W) or i/W for i < W = max(2, warmup_num_steps), then 1.",
        types=WARMUP, notes=("Without warmup_max_lr the warmup rises to each group's lr.",)),
    _ds("WarmupDecayLR", "WarmupLR's warmup, then linear decay to warmup_min_lr at total_num_steps.",
        length="total_num_steps", types={**WARMUP, "total_num_steps": PosInt}),
    _ds("WarmupCosineLR", "Factor: warmup from warmup_min_ratio to 1, then cosine to cos_min_ratio at "
                          "total_num_steps.", values="factor", length="total_num_steps",
        types={"total_num_steps": PosInt, "warmup_min_ratio": UnitFloat, "warmup_num_steps": NonNegInt,
               "cos_min_ratio": UnitFloat, "warmup_type": Literal["log", "linear"]},
        notes=("Not reproduced: over several param groups DeepSpeed's constructor sets only the first group's lr to "
               "0 (get_lr() at iteration -1 returns [0.0], which update_lr zips with the groups), so the others take "
               "the first optimizer step at their own lr; optreg's schedule gives every group 0 there, and from the "
               "second step on the two agree.",)),
    _ds("LRRangeTest", "min_lr·(1 + rate·(i + 1)/size), floored to whole intervals with staircase.",
        types={"lr_range_test_min_lr": NonNegFloat, "lr_range_test_step_size": PosInt,
               "lr_range_test_step_rate": NonNegFloat, "lr_range_test_staircase": Bool}),
    _ds("OneCycle", "One triangular cycle between cycle_min_lr and cycle_max_lr, then inverse-time decay of the "
                    "minimum; betas[0] cycles the other way (cycle_momentum).",
        types={"cycle_min_lr": NonNegFloat, "cycle_max_lr": NonNegFloat, "decay_lr_rate": NonNegFloat,
               "cycle_first_step_size": PosInt, "cycle_second_step_size": Optional[NonNegInt],
               "cycle_first_stair_count": NonNegInt, "cycle_second_stair_count": Optional[NonNegInt],
               "decay_step_size": NonNegInt, "cycle_momentum": Bool, "cycle_min_mom": UnitFloat,
               "cycle_max_mom": UnitFloat, "decay_mom_rate": NonNegFloat},
        notes=("cycle_momentum (default true) cycles betas[0] inversely between cycle_max_mom and cycle_min_mom "
               "and sets betas[1] to 0.99; an optimizer without betas is left alone (DeepSpeed warns).",
               "The constructor writes (cycle_min_mom, 0.99): the first step uses cycle_min_mom.")),
]

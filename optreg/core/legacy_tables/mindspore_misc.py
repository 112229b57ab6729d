"""MindSpore rows of FTRL and LARS."""

from __future__ import annotations

from typing import Optional

from optreg.core.entry import optimizer
from optreg.core.types import Bool, NonNegFloat, StrictFloat, StrictNonNegFloat, StrictPosFloat, strict_number
from optreg.dialects.mindspore.vocabulary import GC_NOTE, MINDSPORE, PIPELINE_NOTE

LARS_FILTER = Optional[list[str]]

ROWS = [
    optimizer(
        "mindspore", "FTRL", "optreg.optimizers.mindspore:FTRL",
        "FTRL-Proximal: n' = n + g², z += g - (n'^-p - n^-p)/lr·w, w = (sign(z)·l1 - z)/(n'^-p/lr + 2·l2) if |z| > l1 else 0.",
        types={
            "initial_accum": StrictNonNegFloat,
            "learning_rate": StrictPosFloat,
            "lr_power": strict_number(le=0),
            "l1": StrictNonNegFloat,
            "l2": StrictNonNegFloat,
            "use_locking": Bool,
            "loss_scale": StrictPosFloat,
            "weight_decay": NonNegFloat,
        },
        bind="optreg.dialects.mindspore.groups:bind_ftrl",
        source=MINDSPORE + ".FTRL (ApplyFtrl / SparseApplyFtrl)",
        notes=(
            PIPELINE_NOTE,
            "Without groups every parameter is decayed (FTRL sets all decay flags), unlike the other optimizers.",
            "learning_rate must be a float > 0 (MindSpore's code checks positivity; the docs say 'zero or positive', "
            "but lr = 0 divides by zero). A dynamic or per-group learning rate is refused, as MindSpore does.",
            "Sparse gradients update only the rows they touch (duplicates summed). use_locking has no numeric effect.",
            GC_NOTE,
        ),
    ),
    optimizer(
        "mindspore", "LARS", "optreg.optimizers.lars:LARS",
        "LARS wrapper: c = coefficient·‖w‖/(‖g‖ + wd·‖w‖ + epsilon) (min(c/lr, 1) with use_clip); g = c·(g + wd·w); then the inner optimizer steps.",
        types={"epsilon": StrictFloat, "coefficient": StrictFloat, "use_clip": Bool, "lars_filter": LARS_FILTER},
        source=MINDSPORE + ".LARS (LARSUpdate)",
        notes=(
            "Wraps another optimizer, given as a nested `optimizer:` spec (or an optimizer object in Python).",
            "lars_filter is a list of glob patterns of parameter names EXCLUDED from LARS (default '*LayerNorm*', "
            "'*bias*', MindSpore's default lambda); in Python a callable name -> bool (True: apply LARS) is accepted. "
            "Excluded parameters get neither LARS scaling nor weight decay.",
            "LARS takes over the inner optimizer's weight decay (kept as lars_weight_decay; the inner groups run with "
            "weight_decay = 0) and its loss scale (gradients are divided once, here), as MindSpore does.",
            "use_clip=True with a dynamic learning rate that differs between groups is refused, as MindSpore does.",
        ),
    ),
]

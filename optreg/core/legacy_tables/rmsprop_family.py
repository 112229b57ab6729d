"""RMSProp rows of the OneFlow, Cerebras and MindSpore dialects (one implementation: optimizers.rmsprop.RMSprop)."""

from __future__ import annotations

from optreg.core.entry import Rule, optimizer
from optreg.dialects.mindspore.vocabulary import (BIND, GC_NOTE, GROUPS_NOTE, LR_NOTE, MINDSPORE, MS_LEARNING_RATE,
                                                   PIPELINE_NOTE)
from optreg.core.options import ONEFLOW_GROUP_KEYS
from optreg.core.types import NonNegFloat, PosFloat, StrictNonNegFloat, StrictPosFloat

TARGET = "optreg.optimizers.rmsprop:RMSprop"

ROWS = [
    optimizer(
        "oneflow", "RMSprop", TARGET,
        "RMSprop: r = αr + (1-α)g'², w -= lr·g'/√(r + ε) (centered: √(r - G² + ε)), g' = g + wd·w.",
        defaults={"lr": 1e-3},
        types={"alpha": NonNegFloat},
        rules=(Rule("momentum", ("momentum",), lambda m: m == 0,
                    "OneFlow RMSprop does not support momentum > 0 (it asserts momentum == 0)"),),
        fixed={"eps_inside_sqrt": True, "set_to_none": False},
        hidden=("maximize", "use_locking", "initial_square_avg", "lr_in_momentum", "loss_scale", "coupled_decay",
                "preinit"),
        group_keys=ONEFLOW_GROUP_KEYS,
        source="OneFlow master (2025-08) oneflow.optim.RMSprop, kernel RmsPropUpdateFunctor",
        notes=(
            "eps is added inside the square root: w -= lr·g/√(r + ε) (torch: g/(√r + ε)).",
            "momentum must be 0: OneFlow asserts it; the option exists only to be refused with a clear message.",
            "lr defaults to 1e-3 as in OneFlow's signature (its docstring says 1e-2).",
            "Per-group clip_grad_max_norm / clip_grad_norm_type with optimizer.clip_grad(); zero_grad() "
            "defaults to set_to_none=False.",
        ),
    ),
    optimizer(
        "cerebras", "RMSprop", TARGET,
        "RMSprop: v = αv + (1-α)g², w -= lr·g/(√v + ε); momentum b = μb + g/(√v+ε), w -= lr·b.",
        types={"alpha": NonNegFloat},
        fixed={"preinit": True},
        hidden=("maximize", "use_locking", "eps_inside_sqrt", "initial_square_avg", "lr_in_momentum", "loss_scale",
                "coupled_decay", "set_to_none"),
        source="cerebras.pytorch 2.x (2.10.0 source) cerebras.pytorch.optim.RMSprop",
        notes=(
            "Numerically torch.optim.RMSprop (eps outside the square root); Cerebras has no maximize option.",
            "preinitialize() allocates square_avg (and momentum_buffer / grad_avg when used) in the constructor.",
        ),
    ),
    optimizer(
        "mindspore", "RMSProp", TARGET,
        "RMSProp: s = ρs + (1-ρ)g² (s₀ = 1), m = βm + lr·g/√(s + ε), w -= m (centered: √(s - ḡ² + ε)).",
        rename={"learning_rate": "lr", "decay": "alpha", "epsilon": "eps"},
        defaults={"learning_rate": 0.1, "decay": 0.9, "epsilon": 1e-10},
        types={"learning_rate": MS_LEARNING_RATE, "decay": StrictNonNegFloat, "momentum": StrictNonNegFloat,
               "epsilon": StrictPosFloat, "weight_decay": NonNegFloat, "loss_scale": PosFloat},
        fixed={"eps_inside_sqrt": True, "initial_square_avg": 1.0, "lr_in_momentum": True, "coupled_decay": True},
        hidden=("maximize", "preinit", "set_to_none"),
        bind=BIND,
        source=MINDSPORE + ".RMSProp (ApplyRMSProp / ApplyCenteredRMSProp)",
        notes=(
            "The mean square starts at 1 (MindSpore initialises the `mean_square` slot with ones); torch starts at 0.",
            "eps is added inside the square root, and the learning rate sits inside the momentum buffer "
            "(m = βm + lr·g/√(s+ε); w -= m): with a changing lr this differs from torch's w -= lr·b.",
            "centered follows the documented formula; MindSpore's CPU kernel skips the update where "
            "s - ḡ² + ε <= 0, which exact arithmetic never reaches (s ≥ ḡ² always, as s₀ = 1 ≥ 0).",
            "decay has no upper bound (MindSpore checks only decay ≥ 0); decay, momentum and epsilon must be "
            "floats (an int is refused, as MindSpore raises TypeError). use_locking has no numeric effect.",
            PIPELINE_NOTE,
            GROUPS_NOTE,
            GC_NOTE,
            LR_NOTE,
        ),
    ),
]

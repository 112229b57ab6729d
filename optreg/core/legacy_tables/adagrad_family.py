"""Adagrad rows of the OneFlow, Cerebras and MindSpore dialects (optimizers.adagrad: Adagrad, ProximalAdagrad)."""

from __future__ import annotations

from optreg.core.entry import optimizer
from optreg.dialects.mindspore.vocabulary import (BIND, GC_NOTE, GROUPS_NOTE, LR_NOTE, MINDSPORE, MS_LEARNING_RATE,
                                                   PIPELINE_NOTE)
from optreg.core.options import ONEFLOW_GROUP_KEYS
from optreg.core.types import Float, NonNegFloat, PosFloat, StrictNonNegFloat

TARGET = "optreg.optimizers.adagrad:Adagrad"

ROWS = [
    optimizer(
        "oneflow", "Adagrad", TARGET,
        "Adagrad: S += g'², lr_t = lr/(1 + (t-1)·lr_decay), w -= lr_t·g'/(√S + ε), t = optimizer-wide step.",
        defaults={"lr": 1e-3},
        types={"lr_decay": Float},
        fixed={"set_to_none": False},
        hidden=("maximize", "update_slots", "eps_inside_sqrt", "loss_scale", "coupled_decay", "preinit",
                "enable_global_step"),
        group_keys=ONEFLOW_GROUP_KEYS,
        source="OneFlow master (2025-08) oneflow.optim.Adagrad, kernel AdagradUpdateFunctor",
        notes=(
            "t in the lr decay is OneFlow's single optimizer-wide step (state['step'] + 1): it also counts "
            "steps in which a parameter had no gradient, where torch counts each parameter's own steps.",
            "eps is added after the square root, as OneFlow's kernel does; its docstring writes √(S + ε).",
            "lr_decay is not range-checked, as in OneFlow. Per-group clip_grad_max_norm / clip_grad_norm_type "
            "with optimizer.clip_grad(); zero_grad() defaults to set_to_none=False.",
        ),
    ),
    optimizer(
        "cerebras", "Adagrad", TARGET,
        "Adagrad: s += g², w -= lr/(1 + (t-1)·lr_decay) · g/(√s + ε), t = the parameter's own step.",
        defaults={"eps": 1e-6},
        fixed={"preinit": True, "enable_global_step": True},
        hidden=("update_slots", "eps_inside_sqrt", "loss_scale", "coupled_decay", "set_to_none"),
        source="cerebras.pytorch 2.x (2.10.0 source) cerebras.pytorch.optim.Adagrad",
        notes=(
            "Numerically torch.optim.Adagrad; eps defaults to 1e-6 as in Cerebras' signature (its parameter "
            "list says 1e-10). A group's own initial_accumulator_value fills its accumulator, as in Cerebras "
            "(torch 2.x fills every group's with the constructor's value).",
            "The step t is the float32 state['step'] that enable_global_step keeps per parameter "
            "(increment_global_step); preinitialize() allocates `sum` (filled with initial_accumulator_value) "
            "and `step`; state_names_to_sparsify() = ['sum'].",
        ),
    ),
    optimizer(
        "mindspore", "Adagrad", TARGET,
        "Adagrad (ApplyAdagrad): h += g² (if update_slots), w -= lr·g/√h, h₀ = accum; no ε.",
        rename={"learning_rate": "lr", "accum": "initial_accumulator_value"},
        defaults={"learning_rate": 1e-3, "accum": 0.1},
        types={"learning_rate": MS_LEARNING_RATE, "accum": StrictNonNegFloat, "weight_decay": NonNegFloat,
               "loss_scale": PosFloat},
        fixed={"eps": 0.0, "lr_decay": 0.0, "coupled_decay": True},
        hidden=("maximize", "eps_inside_sqrt", "preinit", "enable_global_step", "set_to_none"),
        bind=BIND,
        source=MINDSPORE + ".Adagrad (ApplyAdagrad)",
        notes=(
            "Follows the documented ApplyAdagrad formula w -= lr·g/√h, with no ε (the class docstring's "
            "h += g is a typo for g²). MindSpore's CPU kernel divides by √(h + 1e-6) instead; a zero "
            "gradient with accum = 0 gives 0/0 here as in the documented formula.",
            "update_slots=False keeps h at its start value accum, as documented; MindSpore 2.10's CPU kernel "
            "accumulates g² regardless (its recorded trajectory equals update_slots=True). accum must be a "
            "float ≥ 0 (an int is refused, as MindSpore raises TypeError).",
            PIPELINE_NOTE,
            GROUPS_NOTE,
            GC_NOTE,
            LR_NOTE,
        ),
    ),
    optimizer(
        "mindspore", "ProximalAdagrad", "optreg.optimizers.adagrad:ProximalAdagrad",
        "ProximalAdagrad (FOBOS): a += g², v = w - lr·g/√a, w = sign(v)/(1 + lr·l2) · max(|v| - lr·l1, 0).",
        rename={"learning_rate": "lr", "accum": "initial_accumulator_value"},
        types={"learning_rate": MS_LEARNING_RATE, "accum": StrictNonNegFloat, "l1": StrictNonNegFloat,
               "l2": StrictNonNegFloat, "weight_decay": NonNegFloat, "loss_scale": PosFloat},
        fixed={"coupled_decay": True},
        hidden=("adaptive_shrink", "preinit", "set_to_none"),
        bind=BIND,
        source=MINDSPORE + ".ProximalAdagrad (ApplyProximalAdagrad)",
        notes=(
            "Follows the documented formula, which shrinks by lr·l1 and divides by 1 + lr·l2. MindSpore 2.10's "
            "CPU kernel (like TF's ApplyProximalAdagrad code) uses the adaptive step lr/√a in both places; the "
            "implementation's adaptive_shrink knob gives that form, and the test checks it against the recorded "
            "MindSpore trajectory.",
            "accum, l1 and l2 must be floats ≥ 0 (an int is refused, as MindSpore raises TypeError). "
            "use_locking has no numeric effect.",
            PIPELINE_NOTE,
            GROUPS_NOTE,
            GC_NOTE,
            LR_NOTE,
        ),
    ),
]

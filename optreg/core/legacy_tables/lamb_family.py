"""LAMB rows of the OneFlow, Cerebras and MindSpore dialects (one implementation: optimizers.lamb.Lamb)."""

from __future__ import annotations

from optreg.core.entry import Rule, optimizer
from optreg.dialects.mindspore.vocabulary import BIND, GC_NOTE, GROUPS_NOTE, LR_NOTE, MINDSPORE, MS_LEARNING_RATE
from optreg.core.options import ONEFLOW_GROUP_KEYS
from optreg.core.types import NonNegFloat, StrictOpenUnit, StrictPosFloat

LAMB = "optreg.optimizers.lamb:Lamb"
NO_AMSGRAD = Rule("amsgrad", ("amsgrad",), lambda a: not a, "LAMB does not support amsgrad")

ROWS = [
    optimizer(
        "oneflow", "LAMB", LAMB,
        "LAMB: u = m̂/(√v̂ + eps); trust ratio ‖w‖/‖u‖ (1 if a norm is 0); w -= lr·tr·(u + wd·w) (adam_w_mode).",
        rename={"adam_w_mode": "decoupled_weight_decay", "do_bias_correction": "bias_correction"},
        defaults={"eps": 1e-8},
        rules=(NO_AMSGRAD,),
        fixed={"trust_on": "adam", "set_to_none": False},
        hidden=("adam", "weight_norm_clip", "trust_clip", "loss_scale", "preinit"),
        group_keys=ONEFLOW_GROUP_KEYS,
        source="OneFlow master (2025-08) oneflow.optim.LAMB, kernels LambGradFunctor / LambUpdateFunctor",
        notes=(
            "The trust ratio is computed on the Adam direction u without the decay term (apex and timm include it) "
            "and is never clipped; adam_w_mode=False adds weight_decay·w to the gradient (L2) instead.",
            "Bias correction uses the optimizer-wide step (do_bias_correction=False: none). amsgrad=True is refused, "
            "as OneFlow raises. Per-group clip_grad via optimizer.clip_grad(); zero_grad() defaults to "
            "set_to_none=False.",
        ),
    ),
    optimizer(
        "cerebras", "Lamb", LAMB,
        "Lamb (no bias correction): r = m/(√v + eps) + wd·w; tr = min(‖w‖, 10)/‖r‖ (1 if a norm is 0; 1 with adam=True); w -= lr·tr·r.",
        fixed={"bias_correction": False, "decoupled_weight_decay": True, "trust_on": "update",
               "weight_norm_clip": 10.0, "preinit": True},
        hidden=("amsgrad", "trust_clip", "loss_scale", "set_to_none"),
        source="cerebras.pytorch 2.x (modelzoo R1.9.1 Lamb, after torch_optimizer.Lamb) cerebras.pytorch.optim.Lamb",
        notes=(
            "Equal to torch_optimizer.Lamb: ‖w‖ is clamped to [0, 10] before the ratio; m and v are not debiased. "
            "eps defaults to 1e-6 (the docstring says 1e-8; the signature is 1e-6).",
            "preinitialize() allocates exp_avg and exp_avg_sq; state_names_to_sparsify() = ['exp_avg', 'exp_avg_sq'].",
        ),
    ),
    optimizer(
        "mindspore", "Lamb", "optreg.optimizers.mindspore:Lamb",
        "Lamb: m̂ = m/(1-β1ᵗ), v̂ = v/(1-β2ᵗ), r = m̂/(√v̂ + eps) + wd·w; w -= lr·‖w‖/‖r‖·r.",
        types={"learning_rate": MS_LEARNING_RATE, "beta1": StrictOpenUnit, "beta2": StrictOpenUnit,
               "eps": StrictPosFloat, "weight_decay": NonNegFloat},
        bind=BIND,
        source=MINDSPORE + ".Lamb",
        notes=(
            "Follows the documented formula, with the trust ratio 1 when ‖w‖ or ‖r‖ is 0. MindSpore 1.6's "
            "GPU/CPU Python path differs in three details not in the docs (it clips the trust ratio to [0, 10], "
            "measures ‖m̂·rsqrt(v̂ + eps) + wd·w‖ with eps inside the root, and keeps wd·w in that norm even for "
            "undecayed parameters); MindSpore 2.x has no CPU kernel for Lamb. The docs' 'm/β1ᵗ' is read as m/(1-β1ᵗ).",
            "t is the optimizer-wide step (1 on the first step). learning_rate is required. No loss_scale option.",
            GROUPS_NOTE,
            GC_NOTE,
            LR_NOTE,
        ),
    ),
]

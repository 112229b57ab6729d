"""Adam-family rows of the OneFlow, Cerebras and MindSpore dialects (optimizers.adam, optimizers.mindspore)."""

from __future__ import annotations

from optreg.core.entry import optimizer
from optreg.core.options import ONEFLOW_GROUP_KEYS
from optreg.dialects.mindspore.vocabulary import (BIND, GC_NOTE, GROUPS_NOTE, LR_NOTE, MINDSPORE, MS_LEARNING_RATE,
                                                   PIPELINE_NOTE)
from optreg.core.types import Bool, NonNegFloat, PosFloat, StrictOpenUnit, StrictPosFloat

ADAM = "optreg.optimizers.adam:Adam"
ONEFLOW = "OneFlow master (2025-08) oneflow.optim, kernel AdamUpdateFunctor"
CEREBRAS = "cerebras.pytorch 2.x (modelzoo R1.9.1 AdamBase / 2.10.0) cerebras.pytorch.optim"

ONEFLOW_HIDDEN = ("maximize", "nesterov", "lazy", "offload", "loss_scale", "preinit")
CEREBRAS_HIDDEN = ("maximize", "nesterov", "lazy", "offload", "loss_scale", "set_to_none")
ONEFLOW_NOTES = (
    "Bias correction uses OneFlow's single optimizer-wide step, which advances on every step() even for "
    "parameters that got no gradient (torch counts per parameter).",
    "Per-group clip_grad_max_norm and clip_grad_norm_type: optimizer.clip_grad() clips each group by its own norm. "
    "zero_grad() defaults to set_to_none=False.",
    "contiguous_params and fused (memory-layout switches with no numeric effect) are not options.",
)
CEREBRAS_CKPT = (
    "State: exp_avg, exp_avg_sq (max_exp_avg_sq), beta1_power/beta2_power (float, initialised to the betas and "
    "multiplied after use) and a float32 step, all allocated by preinitialize(); state_names_to_sparsify() = "
    "['exp_avg', 'exp_avg_sq', 'max_exp_avg_sq'].",
    "load_state_dict accepts checkpoints of torch.optim.Adam/AdamW and Hugging Face AdamW (a per-parameter step s) "
    "and continues at step s+1: beta_power = beta**(s+1). Cerebras' own loader sets beta**s, which repeats step "
    "s's bias correction; we continue as the writer would. torch Adam/AdamW load our state dicts (the step is kept).",
)
MS_TYPES = {
    "learning_rate": MS_LEARNING_RATE,
    "beta1": StrictOpenUnit,
    "beta2": StrictOpenUnit,
    "eps": StrictPosFloat,
    "use_locking": Bool,
    "use_nesterov": Bool,
    "weight_decay": NonNegFloat,
    "loss_scale": PosFloat,
}
MS_ADAM_NOTES = (
    "eps outside the bias correction: w -= lr·√(1-β2ᵗ)/(1-β1ᵗ)·m/(√v + eps) (torch puts eps after dividing v by "
    "1-β2ᵗ); t is the optimizer-wide step.",
    PIPELINE_NOTE,
    GROUPS_NOTE,
    GC_NOTE,
    LR_NOTE,
    "use_locking is accepted and has no numeric effect. int values for beta1, beta2, eps are refused (MindSpore "
    "raises TypeError); int learning_rate, weight_decay and loss_scale are converted.",
)

ROWS = [
    optimizer(
        "oneflow", "Adam", ADAM,
        "Adam: w -= lr/bc1 · m/(√v/√bc2 + eps), L2 weight decay; bc = 1 - βᵗ with the optimizer-wide step.",
        rename={"do_bias_correction": "bias_correction"},
        fixed={"eps_mode": "torch", "counter": "global", "decoupled_weight_decay": False, "set_to_none": False},
        hidden=ONEFLOW_HIDDEN,
        group_keys=ONEFLOW_GROUP_KEYS,
        source=ONEFLOW + ".Adam",
        notes=("Numerically torch.optim.Adam when every parameter gets a gradient every step; "
               "do_bias_correction=False sets bc1 = bc2 = 1.",) + ONEFLOW_NOTES,
    ),
    optimizer(
        "oneflow", "AdamW", ADAM,
        "AdamW: w -= lr·(m̂/(√v̂ + eps) + wd·w) with the optimizer-wide step.",
        rename={"do_bias_correction": "bias_correction"},
        fixed={"eps_mode": "torch", "counter": "global", "decoupled_weight_decay": True, "set_to_none": False},
        hidden=ONEFLOW_HIDDEN,
        group_keys=ONEFLOW_GROUP_KEYS,
        source=ONEFLOW + ".AdamW",
        notes=("Numerically torch.optim.AdamW when every parameter gets a gradient every step; weight_decay "
               "defaults to 0 (torch 0.01).",) + ONEFLOW_NOTES,
    ),
    optimizer(
        "cerebras", "Adam", ADAM,
        "Adam (eps-hat): u = m/(√v + eps)·√(1-β2ᵗ)/(1-β1ᵗ); w -= lr·u; weight_decay is L2 (added to g).",
        defaults={"eps": 1e-6},
        fixed={"eps_mode": "hat", "counter": "power", "decoupled_weight_decay": False, "bias_correction": True,
               "preinit": True},
        hidden=CEREBRAS_HIDDEN,
        source=CEREBRAS + ".Adam",
        notes=("eps is added before the bias correction (eps-hat form), so no constant torch eps reproduces it; "
               "equal to torch.optim.Adam only when eps = 0. eps defaults to 1e-6 (torch 1e-8). amsgrad takes the "
               "max of the raw v.",) + CEREBRAS_CKPT,
    ),
    optimizer(
        "cerebras", "AdamW", ADAM,
        "AdamW (eps-hat): u = m/(√v + eps)·√(1-β2ᵗ)/(1-β1ᵗ) (no correction if correct_bias=False); w -= lr·(u + wd·w).",
        rename={"correct_bias": "bias_correction"},
        defaults={"eps": 1e-6},
        fixed={"eps_mode": "hat", "counter": "power", "decoupled_weight_decay": True, "preinit": True},
        hidden=CEREBRAS_HIDDEN,
        source=CEREBRAS + ".AdamW",
        notes=("eps-hat form: equal to torch.optim.AdamW only when eps = 0 (and correct_bias=True). "
               "correct_bias=False equals MindSpore AdamWeightDecay. Hugging Face AdamW decays with the "
               "post-update weight; this (Cerebras) decays with the pre-update weight.",) + CEREBRAS_CKPT,
    ),
    optimizer(
        "cerebras", "Adamax", "optreg.optimizers.adam:Adamax",
        "Adamax: m = β1m + (1-β1)g, u = max(β2u, |g| + eps), w -= lr/(1-β1ᵗ)·m/u.",
        defaults={"lr": 1e-3, "eps": 1e-6},
        fixed={"preinit": True},
        source=CEREBRAS + ".Adamax",
        notes=("Numerically torch.optim.Adamax; defaults lr = 1e-3 and eps = 1e-6 (torch 2e-3, 1e-8). "
               "β1ᵗ is the running float beta1_power state; state_names_to_sparsify() = ['exp_avg', 'exp_inf'].",),
    ),
    optimizer(
        "cerebras", "NAdam", "optreg.optimizers.adam:NAdam",
        "NAdam: w -= lr·[(1-μₜ)/(1-Πₜ)·g + μₜ₊₁/(1-Π')·m]/(√(v/bc2) + eps), Π' = Πₜ·μₜ·μₜ₊₁.",
        fixed={"extra_mu": True, "preinit": True},
        source=CEREBRAS + ".NAdam",
        notes=("Differs from torch.optim.NAdam: Cerebras' mu_product_next multiplies μₜ twice "
               "(Πₜ·μₜ·μₜ₊₁; torch Πₜ·μₜ₊₁). The knob extra_mu=False gives torch's NAdam exactly.",
               "t is the float32 per-parameter state['step'] (enable_global_step); mu_product is preinitialized to 1."),
    ),
    optimizer(
        "cerebras", "RAdam", "optreg.optimizers.adam:RAdam",
        "RAdam: rectified Adam step when ρₜ > 5, otherwise w -= lr·m/(1-β1ᵗ).",
        defaults={"eps": 1e-6},
        fixed={"preinit": True},
        source=CEREBRAS + ".RAdam",
        notes=("Numerically torch.optim.RAdam; eps defaults to 1e-6 (torch 1e-8). t is the float32 per-parameter "
               "state['step'].",),
    ),
    optimizer(
        "mindspore", "Adam", "optreg.optimizers.mindspore:Adam",
        "Adam: m, v EMAs; lr_t = lr·√(1-β2ᵗ)/(1-β1ᵗ); w -= lr_t·m/(√v + eps) (nesterov: (β1m + (1-β1)g) instead of m).",
        types=MS_TYPES,
        hidden=("lazy", "offload"),
        bind=BIND,
        source=MINDSPORE + ".Adam (Adam / FusedSparseAdam kernels)",
        notes=MS_ADAM_NOTES + ("A sparse gradient is applied as its dense equivalent (m and v decay everywhere).",),
    ),
    optimizer(
        "mindspore", "LazyAdam", "optreg.optimizers.mindspore:Adam",
        "LazyAdam: Adam on dense gradients; a sparse gradient updates m, v and w only on the rows it touches.",
        types=MS_TYPES,
        fixed={"lazy": True},
        hidden=("offload",),
        bind=BIND,
        source=MINDSPORE + ".LazyAdam (FusedSparseLazyAdam)",
        notes=MS_ADAM_NOTES + (
            "Sparse gradients (nn.Embedding(sparse=True)): duplicate rows are summed, then only those rows of m, v, w "
            "change, with the optimizer-wide bias correction.",
        ),
    ),
    optimizer(
        "mindspore", "AdamOffload", "optreg.optimizers.mindspore:Adam",
        "AdamOffload: Adam whose state lives on the CPU; the step direction is computed there and w += delta runs on the parameter's device.",
        types=MS_TYPES,
        fixed={"offload": True},
        hidden=("lazy",),
        bind=BIND,
        source=MINDSPORE + ".AdamOffload (AdamNoUpdateParam on CPU)",
        notes=MS_ADAM_NOTES + (
            "Numerically Adam; grad_centralization is ignored, as AdamOffload skips it. On a CPU-only machine state "
            "and parameters share the CPU.",
        ),
    ),
    optimizer(
        "mindspore", "AdamWeightDecay", "optreg.optimizers.mindspore:AdamWeightDecay",
        "AdamWeightDecay: u = m/(√v + eps) (no bias correction); u += wd·w where decayed; w -= lr·u.",
        types={k: v for k, v in MS_TYPES.items() if k not in ("use_locking", "use_nesterov", "loss_scale")},
        bind=BIND,
        source=MINDSPORE + ".AdamWeightDecay",
        notes=(
            "No bias correction and decoupled decay: equal to Cerebras AdamW(correct_bias=False). No loss_scale "
            "option (MindSpore leaves loss scaling to the caller); grad_centralization is ignored, as MindSpore's "
            "AdamWeightDecay never centralises.",
            GROUPS_NOTE,
            LR_NOTE,
        ),
    ),
]

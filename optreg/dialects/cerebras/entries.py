"""The cerebras dialect's optimizer entries: one row per optimizer; each class (with its chain) lives in
the family module beside this file. Targets are strings, so that reading the registry imports no torch."""

from __future__ import annotations

from dataclasses import replace

from optreg.core.entry import Rule, optimizer
from optreg.core.options import CEREBRAS_GROUP_KEYS

#: shown by describe() for every Cerebras optimizer
FLOAT64 = ("float64 parameters: Cerebras keeps its scalars (beta powers, bias corrections, step counters, "
           "constants) in float32 whatever the parameter's dtype; optreg computes them in the parameter's precision "
           "(float64 for float64 parameters; the per-parameter step stays float32), so a float64 run differs from "
           "Cerebras' in the float32 rounding of those scalars.")

# adam family
ADAM_CEREBRAS = "cerebras.pytorch 2.x (modelzoo R1.9.1 AdamBase / 2.10.0) cerebras.pytorch.optim"
ADAM_CEREBRAS_CKPT = (
    "State: exp_avg, exp_avg_sq (max_exp_avg_sq), beta1_power/beta2_power (float, initialised to the betas and "
    "multiplied after use) and a float32 step, all allocated by preinitialize(); state_names_to_sparsify() = "
    "['exp_avg', 'exp_avg_sq', 'max_exp_avg_sq'].",
    "load_state_dict accepts checkpoints of torch.optim.Adam/AdamW and Hugging Face AdamW (a per-parameter step s) "
    "and continues at step s+1: beta_power = beta**(s+1). Cerebras' own loader sets beta**s, which repeats step "
    "s's bias correction; we continue as the writer would. torch Adam/AdamW load our state dicts (the step is kept).",
)

ROWS = [
    # -- adam family --
    optimizer(
        "cerebras", "Adam", "optreg.dialects.cerebras.adam:Adam",
        "Adam (eps-hat): u = m/(√v + eps)·√(1-β2ᵗ)/(1-β1ᵗ); w -= lr·u; weight_decay is L2 (added to g).",
        source=ADAM_CEREBRAS + ".Adam",
        notes=("eps is added before the bias correction (eps-hat form), so no constant torch eps reproduces it; "
               "equal to torch.optim.Adam only when eps = 0. eps defaults to 1e-6 (torch 1e-8). amsgrad takes the "
               "max of the raw v.",
               "A param group's own weight_decay is ignored: every group decays with the constructor's weight_decay "
               "(Cerebras' Adam makes it every group's l2_regularization_rate and drops the group's weight_decay; "
               "a Cerebras bug, reproduced). The group's weight_decay shows the value applied; a group that sets "
               "another value gets a UserWarning.") + ADAM_CEREBRAS_CKPT,
    ),
    optimizer(
        "cerebras", "AdamW", "optreg.dialects.cerebras.adam:AdamW",
        "AdamW (eps-hat): u = m/(√v + eps)·√(1-β2ᵗ)/(1-β1ᵗ) (no correction if correct_bias=False); w -= lr·(u + wd·w).",
        source=ADAM_CEREBRAS + ".AdamW",
        notes=("eps-hat form: equal to torch.optim.AdamW only when eps = 0 (and correct_bias=True). "
               "correct_bias=False equals MindSpore AdamWeightDecay. Hugging Face AdamW decays with the "
               "post-update weight; this (Cerebras) decays with the pre-update weight.",
               "weight_decay and correct_bias are read per param group, as Cerebras' AdamBase.step does (a group's "
               "own weight_decay applies, unlike cerebras.Adam).") + ADAM_CEREBRAS_CKPT,
    ),
    optimizer(
        "cerebras", "Adamax", "optreg.dialects.cerebras.adam:Adamax",
        "Adamax: m = β1m + (1-β1)g, u = max(β2u, |g| + eps), w -= lr/(1-β1ᵗ)·m/u.",
        source=ADAM_CEREBRAS + ".Adamax",
        notes=("Numerically torch.optim.Adamax; defaults lr = 1e-3 and eps = 1e-6 (torch 2e-3, 1e-8). "
               "β1ᵗ is the running float beta1_power state; state_names_to_sparsify() = ['exp_avg', 'exp_inf'].",),
    ),
    optimizer(
        "cerebras", "NAdam", "optreg.dialects.cerebras.adam:NAdam",
        "NAdam: w -= lr·[(1-μₜ)/(1-Πₜ)·g + μₜ₊₁/(1-Π')·m]/(√(v/bc2) + eps), Π' = Πₜ·μₜ·μₜ₊₁.",
        source=ADAM_CEREBRAS + ".NAdam",
        notes=("Differs from torch.optim.NAdam: Cerebras' mu_product_next multiplies μₜ twice "
               "(Πₜ·μₜ·μₜ₊₁; torch Πₜ·μₜ₊₁). The stage setting NAdamDirection(extra_mu=False) gives torch's NAdam "
               "exactly.",
               "t is the float32 per-parameter state['step'] (enable_global_step); mu_product is preinitialized to 1."),
    ),
    optimizer(
        "cerebras", "RAdam", "optreg.dialects.cerebras.adam:RAdam",
        "RAdam: rectified Adam step when ρₜ > 5, otherwise w -= lr·m/(1-β1ᵗ).",
        source=ADAM_CEREBRAS + ".RAdam",
        notes=("Numerically torch.optim.RAdam; eps defaults to 1e-6 (torch 1e-8). t is the float32 per-parameter "
               "state['step'].",),
    ),
    # -- sgd family --
    optimizer(
        "cerebras", "SGD", "optreg.dialects.cerebras.sgd:SGD",
        "SGD with momentum: buf = μ·buf + (1-dampening)·g' (buf₀ = 0), g' = g + wd·w; "
        "w -= lr·(g' + μ·buf if nesterov else buf).",
        rules=(Rule("nesterov", ("nesterov", "momentum", "dampening"), lambda n, m, d: not n or (m > 0 and d == 0),
                    "nesterov requires momentum > 0 and dampening = 0"),),
        source="cerebras.pytorch 2.x (2.10.0 source) cerebras.pytorch.optim.SGD",
        notes=(
            "lr has no default (required), as in Cerebras.",
            "The momentum buffer is preinitialized to 0, so the first step is damped: buf₁ = (1-dampening)·g "
            "(torch sets buf₁ = g). Identical to torch.optim.SGD when dampening = 0.",
            "preinitialize() allocates momentum_buffer in the constructor; "
            "state_names_to_sparsify() = ['momentum_buffer'].",
        ),
    ),
    optimizer(
        "cerebras", "Adadelta", "optreg.dialects.cerebras.misc:Adadelta",
        "Adadelta: v = ρv + (1-ρ)g², Δ = √(u+ε)/√(v+ε)·g, u = ρu + (1-ρ)Δ², w -= lr·Δ.",
        source="cerebras.pytorch 2.x (2.10.0 source) cerebras.pytorch.optim.Adadelta",
        notes=("Numerically torch.optim.Adadelta. preinitialize() allocates square_avg and acc_delta; "
               "state_names_to_sparsify() = ['square_avg', 'acc_delta'].",),
    ),
    optimizer(
        "cerebras", "ASGD", "optreg.dialects.cerebras.misc:ASGD",
        "Averaged SGD: w = w·(1-λη) - η·g, η = lr/(1 + λ·lr·t)^α, running average ax from step t0 on.",
        source="cerebras.pytorch 2.x (2.10.0 source) cerebras.pytorch.optim.ASGD",
        notes=("Numerically torch.optim.ASGD. t is the float32 per-parameter state['step'] "
               "(enable_global_step); preinitialize() allocates eta (= lr), mu (= 1) and ax; "
               "state_names_to_sparsify() = ['ax'].",),
    ),
    optimizer(
        "cerebras", "Rprop", "optreg.dialects.cerebras.misc:Rprop",
        "Rprop: step sizes × η+ on sign agreement, × η- (and g = 0) on a sign flip, clamped; w -= step·sign(g).",
        rules=(Rule("etas", ("etas",), lambda e: 0 < e[0] < 1 < e[1], "must satisfy 0 < etaminus < 1 < etaplus"),
               Rule("step_sizes", ("step_sizes",), lambda s: s[0] <= s[1], "min step size must be <= max")),
        source="cerebras.pytorch 2.x (2.10.0 source) cerebras.pytorch.optim.Rprop",
        notes=(
            "Numerically torch.optim.Rprop; lr defaults to 1e-3 (torch 1e-2); no maximize option.",
            "step() zeroes p.grad in place where the gradient's sign flipped, as Cerebras' step does.",
            "etas must satisfy 0 < etaminus < 1 < etaplus (Cerebras does not check; it detects a flip by "
            "comparing the step multiplier with etaminus, which equals torch's sign test only inside these bounds).",
            "preinitialize() allocates prev and step_size (= lr); state_names_to_sparsify() = ['prev', 'step_size'].",
        ),
    ),
    optimizer(
        "cerebras", "Lion", "optreg.dialects.cerebras.misc:Lion",
        "Lion: w = w·(1 - lr·wd), w -= lr·sign(β1·m + (1-β1)·g), m = β2·m + (1-β2)·g.",
        source="cerebras.pytorch 2.x (2.10.0 source) cerebras.pytorch.optim.Lion",
        notes=(
            "Lion (Chen et al. 2023, after google/automl's lion_pytorch): the sign of the interpolation with β1 is "
            "the update, the momentum is kept with β2; weight decay multiplies the weight by 1 - lr·wd before it. "
            "Defaults lr = 1e-4, betas = (0.9, 0.99); no maximize option.",
            "preinitialize() allocates exp_avg in the constructor; state_names_to_sparsify() = ['exp_avg'].",
        ),
    ),
    # -- adagrad_rmsprop family --
    optimizer(
        "cerebras", "Adagrad", "optreg.dialects.cerebras.adagrad_rmsprop:Adagrad",
        "Adagrad: s += g², w -= lr/(1 + (t-1)·lr_decay) · g/(√s + ε), t = the parameter's own step.",
        source="cerebras.pytorch 2.x (2.10.0 source) cerebras.pytorch.optim.Adagrad",
        notes=(
            "Numerically torch.optim.Adagrad; eps defaults to 1e-6 as in Cerebras' signature (its parameter "
            "list says 1e-10). A group's own initial_accumulator_value fills its accumulator, as in Cerebras "
            "(torch 2.x fills every group's with the constructor's value).",
            "The step t is the float32 state['step'] kept per parameter (increment_global_step); "
            "preinitialize() allocates `sum` (filled with initial_accumulator_value) and `step`; "
            "state_names_to_sparsify() = ['sum'].",
        ),
    ),
    optimizer(
        "cerebras", "RMSprop", "optreg.dialects.cerebras.adagrad_rmsprop:RMSprop",
        "RMSprop: v = αv + (1-α)g², w -= lr·g/(√v + ε); momentum b = μb + g/(√v+ε), w -= lr·b.",
        source="cerebras.pytorch 2.x (2.10.0 source) cerebras.pytorch.optim.RMSprop",
        notes=(
            "Numerically torch.optim.RMSprop (eps outside the square root); Cerebras has no maximize option.",
            "preinitialize() allocates square_avg (and momentum_buffer / grad_avg when used) in the constructor.",
        ),
    ),
    # -- lamb family --
    optimizer(
        "cerebras", "Lamb", "optreg.dialects.cerebras.lamb:Lamb",
        "Lamb (no bias correction): r = m/(√v + eps) + wd·w; tr = min(‖w‖, 10)/‖r‖ (1 if a norm is 0; 1 with "
        "adam=True); w -= lr·tr·r.",
        source="cerebras.pytorch 2.x (modelzoo R1.9.1 Lamb, after torch_optimizer.Lamb) cerebras.pytorch.optim.Lamb",
        notes=(
            "Equal to torch_optimizer.Lamb: ‖w‖ is clamped to [0, 10] before the ratio; m and v are not debiased. "
            "eps defaults to 1e-6 (the docstring says 1e-8; the signature is 1e-6).",
            "preinitialize() allocates exp_avg and exp_avg_sq; state_names_to_sparsify() = ['exp_avg', 'exp_avg_sq'].",
        ),
    ),
    optimizer(
        "cerebras", "Adafactor", "optreg.dialects.cerebras.adafactor:Adafactor",
        "Adafactor (HF form) with a manual lr: α = lr·max(eps2, RMS(w)) if scale_parameter; factored second moment; "
        "w -= wd·α·w, then w -= U.",
        rules=(
            Rule("clip_threshold", ("clip_threshold",), lambda c: c == 1.0, "only clip_threshold=1.0 is supported"),
            Rule("beta1", ("beta1",), lambda b: b is None, "only beta1=None is supported"),
            Rule("relative_step", ("relative_step",), lambda r: not r, "relative_step=True is not supported"),
            Rule("warmup_init", ("warmup_init",), lambda w: not w, "warmup_init=True is not supported"),
        ),
        source="cerebras.pytorch 2.x (modelzoo R1.9.1 Adafactor, from HF transformers) "
               "cerebras.pytorch.optim.Adafactor",
        notes=(
            "Cerebras refuses clip_threshold != 1.0, beta1 != None, relative_step=True and warmup_init=True "
            "(ValueError there, ConfigError here); lr is required (2.x).",
            "t is the per-parameter float step; decay_rate is the negative exponent (-0.8). Differs from "
            "torch.optim.Adafactor (eps1 added to g², lr scaled by RMS(w), first moment on the scaled update).",
        ),
    ),
]

ROWS = [replace(row, notes=(*row.notes, FLOAT64), group_keys={**row.group_keys, **CEREBRAS_GROUP_KEYS})
        for row in ROWS]

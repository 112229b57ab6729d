"""The mindspore dialect's optimizer entries: one row per optimizer; each class (with its chain) lives in
the family module beside this file. Targets are strings, so that reading the registry imports no torch."""

from __future__ import annotations

from typing import Optional

from optreg.core.entry import Rule, optimizer
from optreg.dialects.mindspore.vocabulary import (BIND, BIND_DECAY_ALL, BIND_FTRL, GC_NOTE, GROUPS_NOTE, LR_NOTE,
                                                   MINDSPORE, PIPELINE_NOTE)

# adam family

ADAM_MS_NOTES = (
    "eps outside the bias correction: w -= lr·√(1-β2ᵗ)/(1-β1ᵗ)·m/(√v + eps) (torch puts eps after dividing v by "
    "1-β2ᵗ); t is the optimizer-wide step.",
    PIPELINE_NOTE,
    GROUPS_NOTE,
    GC_NOTE,
    LR_NOTE,
    "use_locking is accepted and has no numeric effect. int values for beta1, beta2, eps are refused (MindSpore "
    "raises TypeError); int learning_rate, weight_decay and loss_scale are converted.",
)

THOR_NOTES = (
    "Takes the model, not parameters: configure_optimizer('mindspore.thor', model, ...) or build(config, model); "
    "no param_groups. Hooks on each nn.Linear, nn.Conv2d (groups=1) and nn.Embedding whose weight is trained "
    "(exact types, as MindSpore converts nn.Dense / nn.Conv2d / nn.Embedding) record the layer's input a and output "
    "gradient D in the steps k with k % frequency == 0 (forward with gradients enabled, then backward, then "
    "step()); those steps recompute A⁻¹ and G⁻¹, the others reuse them (stale), as ModelThor runs its 'train0' "
    "step and then frequency - 1 'train1' steps. remove_hooks() takes the hooks off.",
    "Statistics follow the docs' A = E[a aᵀ], G = E[D Dᵀ] over examples, and over output positions for a "
    "convolution (rows: the layer's im2col patches at its own padding, stride and dilation), as MindSpore's "
    "Ascend kernels compute them. MindSpore's GPU layers differ in two places, read as slips: DenseThor divides "
    "xᵀx by in_channels (inputs_shape[0] of the product) instead of the batch, and Conv2dThor averages patches and "
    "output gradients over the batch before the outer product.",
    "Normalisation and damping follow MindSpore's code (both backends), not the docs' λ: G is multiplied by "
    "batch_size²/loss_scale² (D is the gradient of the loss as scaled and averaged by the caller), each factor is "
    "damped by √λ (A ⊗ G + √λ(A ⊕ G) + λ: the Kronecker product is damped by about λ), a convolution with L "
    "output positions per example gets √(λ/L) and each inverse scaled by 1/√L (KFC's L·A ⊗ G), and an "
    "Embedding's A is the id count: A⁻¹ = 1/(count/batch_size + √λ).",
    "Dense and Conv factors are inverted by Cholesky in 128×128 diagonal blocks (MindSpore's split_dim 128; a "
    "factor of at most 128 rows whole); an Embedding's G whole (GPU). A factor that is not positive definite "
    "(damping 0) falls back to the pseudo-inverse; non-finite statistics give NaN, as the kernels do.",
    "LayerNorm parameters get g / (g²/batch_size + √λ) every step (MindSpore's _process_layernorm); biases, "
    "BatchNorm and other parameters the plain gradient. Then g += weight_decay·w where decay_filter keeps the "
    "name, ClipByNorm to 1.0 per tensor with enable_clip_grad, and ApplyMomentum (use_nesterov as on GPU; "
    "ThorAscend has no nesterov).",
    "decay_filter: glob patterns of parameter names weight decay skips (default none: MindSpore's default "
    "`lambda x: x.name not in []` decays every parameter, biases and norms included); in Python a callable "
    "name -> bool (True: decay). No beta/gamma rule.",
    "learning_rate and damping: a number, a per-step list or 1-D tensor (step k uses entry k; past the end it "
    "raises IndexError, as MindSpore's Gather does), or an absolute schedule; damping is read at the refresh steps "
    "(and every step when the model has a LayerNorm). damping may be 0 (MindSpore checks nothing).",
    "frequency must be an int >= 2, momentum a float >= 0 (ints refused, as MindSpore raises TypeError), "
    "loss_scale > 0, weight_decay >= 0, batch_size an int >= 1. split_indices (strictly increasing A/G layer "
    "indices, each below the number of hooked layers) only sets MindSpore's all-reduce fusion groups in "
    "distributed runs; it has no numeric effect here (allreduce_groups() lists the groups). Sparse gradients "
    "are refused. A⁻¹ and G⁻¹ live in the state of each layer's weight: a checkpoint resumes exactly, also "
    "between refreshes.",
)

ROWS = [
    # -- adam family --
    optimizer(
        "mindspore", "Adam", "optreg.dialects.mindspore.adam:Adam",
        "Adam: m, v EMAs; lr_t = lr·√(1-β2ᵗ)/(1-β1ᵗ); w -= lr_t·m/(√v + eps) (nesterov: (β1m + (1-β1)g) instead of m).",
        bind=BIND,
        source=MINDSPORE + ".Adam (Adam / FusedSparseAdam kernels)",
        notes=ADAM_MS_NOTES + ("A sparse gradient is applied as its dense equivalent (m and v decay everywhere).",),
    ),
    optimizer(
        "mindspore", "LazyAdam", "optreg.dialects.mindspore.adam:LazyAdam",
        "LazyAdam: Adam on dense gradients; a sparse gradient updates m, v and w only on the rows it touches.",
        bind=BIND,
        source=MINDSPORE + ".LazyAdam (FusedSparseLazyAdam)",
        notes=ADAM_MS_NOTES + (
            "Sparse gradients (nn.Embedding(sparse=True)): duplicate rows are summed, then only those rows of m, v, w "
            "change, with the optimizer-wide bias correction.",
        ),
    ),
    optimizer(
        "mindspore", "AdamOffload", "optreg.dialects.mindspore.adam:AdamOffload",
        "AdamOffload: Adam whose state lives on the CPU; the step direction is computed there and w += delta runs "
        "on the parameter's device.",
        bind=BIND,
        source=MINDSPORE + ".AdamOffload (AdamNoUpdateParam on CPU)",
        notes=ADAM_MS_NOTES + (
            "Numerically Adam; grad_centralization is ignored, as AdamOffload skips it. On a CPU-only machine state "
            "and parameters share the CPU. fused=True needs the parameters on the CPU (the update runs there).",
        ),
    ),
    optimizer(
        "mindspore", "AdamWeightDecay", "optreg.dialects.mindspore.adam:AdamWeightDecay",
        "AdamWeightDecay: u = m/(√v + eps) (no bias correction); u += wd·w where decayed; w -= lr·u.",
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
    # -- sgd family --
    optimizer(
        "mindspore", "Momentum", "optreg.dialects.mindspore.sgd:Momentum",
        "Momentum: v = u·v + g; w -= lr·(g + u·v) if use_nesterov else lr·v.",
        bind=BIND,
        source=MINDSPORE + ".Momentum (ApplyMomentum)",
        notes=(
            "Equal to torch.optim.SGD(momentum=u, dampening=0, nesterov=use_nesterov) on the gradient "
            "g/loss_scale + weight_decay·w (MindSpore's decay_weight, then unscaling).",
            "momentum must be a float: an int is refused, as MindSpore raises TypeError.",
            "use_nesterov follows the documented formula w -= lr·(g + u·v). MindSpore 2.10's CPU ApplyMomentum "
            "kernel ignores use_nesterov (its recorded trajectory is plain momentum); the test keeps that fixture.",
            PIPELINE_NOTE,
            GROUPS_NOTE,
            GC_NOTE,
            LR_NOTE,
        ),
    ),
    optimizer(
        "mindspore", "SGD", "optreg.dialects.mindspore.sgd:SGD",
        "SGD: v = u·v + (1-dampening)·g (v₁ = g); w -= lr·(g + u·v) if nesterov else lr·v.",
        rules=(Rule("nesterov", ("nesterov", "momentum", "dampening"), lambda n, m, d: not n or (m > 0 and d == 0),
                    "nesterov requires momentum > 0 and dampening = 0"),),
        bind=BIND,
        source=MINDSPORE + ".SGD (P.SGD kernel)",
        notes=(
            "Equal to torch.optim.SGD: the kernel's `stat` flag makes the first step set v = g.",
            "weight_decay is added inside the kernel after the gradient is centralised and unscaled: "
            "g' = g/loss_scale + weight_decay·w, per parameter as MindSpore 2.x does (the beta/gamma rule "
            "without groups, the group's value with groups; checked against MindSpore 2.10's CPU kernel). "
            "MindSpore 1.6 applied the constructor's weight_decay to every parameter and ignored group values.",
            "momentum and dampening accept ints (converted to float), as MindSpore's SGD does.",
            GROUPS_NOTE,
            GC_NOTE,
            LR_NOTE,
        ),
    ),
    # -- adagrad_rmsprop family --
    optimizer(
        "mindspore", "Adagrad", "optreg.dialects.mindspore.adagrad_rmsprop:Adagrad",
        "Adagrad (ApplyAdagrad): h += g² (if update_slots), w -= lr·g/√h, h₀ = accum; no ε.",
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
        "mindspore", "ProximalAdagrad", "optreg.dialects.mindspore.adagrad_rmsprop:ProximalAdagrad",
        "ProximalAdagrad (FOBOS): a += g², v = w - lr·g/√a, w = sign(v)/(1 + lr·l2) · max(|v| - lr·l1, 0).",
        bind=BIND,
        source=MINDSPORE + ".ProximalAdagrad (ApplyProximalAdagrad)",
        notes=(
            "Follows the documented formula, which shrinks by lr·l1 and divides by 1 + lr·l2. MindSpore 2.10's "
            "CPU kernel (like TF's ApplyProximalAdagrad code) uses the adaptive step lr/√a in both places; the "
            "stage setting ProximalStep(shrink=\"adaptive\") gives that form, and the test checks it against the "
            "recorded MindSpore trajectory.",
            "accum, l1 and l2 must be floats ≥ 0 (an int is refused, as MindSpore raises TypeError). "
            "use_locking has no numeric effect.",
            PIPELINE_NOTE,
            GROUPS_NOTE,
            GC_NOTE,
            LR_NOTE,
        ),
    ),
    optimizer(
        "mindspore", "RMSProp", "optreg.dialects.mindspore.adagrad_rmsprop:RMSProp",
        "RMSProp: s = ρs + (1-ρ)g² (s₀ = 1), m = βm + lr·g/√(s + ε), w -= m (centered: √(s - ḡ² + ε)).",
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
    optimizer(
        "mindspore", "FTRL", "optreg.dialects.mindspore.ftrl:FTRL",
        "FTRL-Proximal: n' = n + g², z += g - (n'^-p - n^-p)/lr·w, "
        "w = (sign(z)·l1 - z)/(n'^-p/lr + 2·l2) if |z| > l1 else 0.",
        bind=BIND_FTRL,
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
    # -- lamb family --
    optimizer(
        "mindspore", "Lamb", "optreg.dialects.mindspore.lamb:Lamb",
        "Lamb: m̂ = m/(1-β1ᵗ), v̂ = v/(1-β2ᵗ), r = m̂/(√v̂ + eps) + wd·w; w -= lr·‖w‖/‖r‖·r.",
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
    optimizer(
        "mindspore", "AdaFactor", "optreg.dialects.mindspore.adafactor:AdaFactor",
        "AdaFactor (HF form): factored second moment of g² + eps1, update clipped by RMS/clip_threshold, "
        "scaled by ρ·max(eps2, RMS(w)); optional first moment beta1.",
        rules=(
            Rule("learning_rate", ("learning_rate", "relative_step"), lambda lr, rel: not rel,
                 "a manual learning_rate cannot be combined with relative_step=True"),
            Rule("warmup_init", ("warmup_init", "relative_step"), lambda w, rel: not w or rel,
                 "warmup_init=True requires relative_step=True"),
            Rule("relative_step", ("learning_rate", "relative_step"), lambda lr, rel: rel or lr is not None,
                 "a learning_rate is required when relative_step=False", skip_none=False),
        ),
        bind=BIND_DECAY_ALL,
        source=MINDSPORE + ".AdaFactor",
        notes=(
            "decay_rate is the positive exponent: β̂₂ = 1 - t^(-decay_rate) (HF and Cerebras write -0.8). t is the "
            "optimizer-wide step. relative_step: ρ = min(1e-6·t if warmup_init else 1e-2, 1/√t).",
            "beta1 defaults to 0.9 as in MindSpore's signature (the docs print 'Default: None'); 0 or None disables "
            "the first moment. beta1 >= 1 is refused as documented (the code only checks >= 0).",
            "weight_decay applies to every parameter (w -= weight_decay·α·w), with no beta/gamma name filter.",
            "loss_scale divides the gradients, as the base Optimizer documents; MindSpore's AdaFactor code accepts "
            "but never applies it. The update g/√V is invariant to the gradient scale apart from eps1 = 1e-30, so "
            "both agree to rounding.",
            "compression keeps the unfactored second moment in float16. learning_rate=None with "
            "relative_step=False is refused, as MindSpore's constructor refuses it.",
        ),
    ),
    optimizer(
        "mindspore", "LARS", "optreg.dialects.mindspore.lars:LARS",
        "LARS wrapper: c = coefficient·‖w‖/(‖g‖ + wd·‖w‖ + epsilon) (min(c/lr, 1) with use_clip); g = c·(g + wd·w); "
        "then the inner optimizer steps.",
        types={"lars_filter": Optional[list[str]]},
        source=MINDSPORE + ".LARS (LARSUpdate)",
        notes=(
            "Wraps another optimizer, given as a nested `optimizer:` spec (or an optimizer object in Python).",
            "lars_filter is a list of glob patterns of parameter names EXCLUDED from LARS (default '*LayerNorm*', "
            "'*bias*', MindSpore's default lambda); in Python a callable name -> bool (True: apply LARS) is accepted. "
            "Excluded parameters get neither LARS scaling nor weight decay.",
            "LARS takes over the inner optimizer's weight decay (kept as lars_weight_decay; the inner groups run with "
            "weight_decay = 0) and its loss scale (gradients are divided once, here), as MindSpore does.",
            "use_clip=True with a dynamic learning rate that differs between groups is refused, as MindSpore does.",
            "Around an optreg optimizer the rescaling is the first stage of its chain (LarsScale), so it runs in that "
            "optimizer's execution (foreach, fused, contiguous_params) and the gradients are not copied; around any "
            "other optimizer it runs eagerly before the inner step.",
        ),
    ),
    *(optimizer(
        "mindspore", name, f"optreg.dialects.mindspore.adasum:{name}",
        f"AdaSum wrapper ({what}): AdaSum(a, b) = (1 - aᵀb/(2‖a‖²))·a + (1 - aᵀb/(2‖b‖²))·b over the "
        f"data-parallel devices; in one process the inner optimizer's step unchanged.",
        class_path=f"mindspore.nn.{name}",
        source=f"{MINDSPORE}.{name} (nn/optim/adasum.py)",
        notes=(
            "Wraps another optimizer, given as a nested `optimizer:` spec (or an optimizer object in Python).",
            "In one process the AdaSum of the one contribution is itself, so the wrapper steps its inner optimizer "
            "unchanged (weights, state and state dict are the inner optimizer's). MindSpore 2.10 itself refuses "
            "the wrapper outside its semi-/auto-parallel modes on 16 or more devices, a power of two (RuntimeError "
            "'Stand alone mode is not supported to apply adasum'); optreg builds it in one process so that such a "
            "config moves and trains as its inner optimizer does on one device.",
            "Under torch.distributed with more than one process it is refused (a ConfigError at construction and "
            "at step): DDP / FSDP average the gradients before the optimizer sees them, and optreg does not "
            "implement AdaSum's combination across processes.",
            "Deprecated by MindSpore (its 2.9 and 2.10 pages say it will be removed after 2.9).",
        ),
    ) for name, what in (("AdaSumByGradWrapCell", "of the gradients, before the inner step"),
                         ("AdaSumByDeltaWeightWrapCell", "of the weight changes, after each device's inner step"))),
    # -- second order --
    optimizer(
        "mindspore", "thor", "optreg.dialects.mindspore.thor:THOR",
        "THOR: g' = (G + √λI)⁻¹ g (A + √λI)⁻¹ per Linear / Conv2d / Embedding layer (A = E[aaᵀ], G = E[DDᵀ] "
        "recorded by hooks, inverses refreshed every `frequency` steps), then weight decay and ApplyMomentum.",
        hidden=("net",),
        takes_model=True,
        source=MINDSPORE + ".thor (ThorGpu / ThorAscend; DenseThor, Conv2dThor, EmbeddingThor)",
        notes=THOR_NOTES,
    ),
]


def _nn_row(name: str, doc: str, note: str, kernel: str = "", **kw):
    """A mindspore.nn 2.10 row of the misc family: MindSpore's pipeline, groups and lr, then `note`'s algorithm."""
    return optimizer("mindspore", name, f"optreg.dialects.mindspore.misc:{name}", doc, bind=BIND,
                     class_path=f"mindspore.nn.{name}", source=f"{MINDSPORE}.{name}{kernel}",
                     notes=(note, PIPELINE_NOTE, GROUPS_NOTE, GC_NOTE, LR_NOTE), **kw)


def _torch_rules(name: str):
    from optreg.dialects.torch import OPTIMIZERS

    return next(row for row in OPTIMIZERS if row.name == name).rules


ROWS += [
    _nn_row("ASGD", "ASGD: w = w·(1 - λη) - η·g, η = lr/(1 + λ·lr·t)^α, running average ax from step t0 on.",
            "torch.optim.ASGD's algorithm after MindSpore's gradient pipeline (no loss_scale in MindSpore's "
            "signature); lambd, alpha and t0 must be floats in MindSpore (ints raise TypeError)."),
    _nn_row("Rprop", "Rprop: per-element step sizes ×η+ / ×η- on sign agreement / flip, clamped to step_sizes; "
                     "w -= step·sign(g).",
            "torch.optim.Rprop's algorithm after MindSpore's gradient pipeline (no loss_scale in MindSpore's "
            "signature).", rules=_torch_rules("Rprop")),
    _nn_row("AdaMax", "AdaMax (ApplyAdaMax): e = max(β2·e, |g|), w -= lr/(1 - β1ᵗ) · m/(e + eps).",
            "eps is added after the max (TF's ApplyAdaMax); torch.optim.Adamax takes max(β2·e, |g| + eps).",
            " (ApplyAdaMax)"),
    _nn_row("Adadelta", "Adadelta (ApplyAdadelta): v = ρv + (1-ρ)g², u = √(a+ε)/√(v+ε)·g, a = ρa + (1-ρ)u², "
                        "w -= lr·u.",
            "torch.optim.Adadelta's algorithm after MindSpore's gradient pipeline.", " (ApplyAdadelta)"),
]

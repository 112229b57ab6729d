"""The oneflow dialect's optimizer entries: one row per optimizer; each class (with its chain) lives in
the family module beside this file. Targets are strings, so that reading the registry imports no torch."""

from __future__ import annotations

from dataclasses import replace

from optreg.core.entry import Rule, optimizer
from optreg.core.options import ONEFLOW_GROUP_KEYS

#: shown by describe() for every OneFlow optimizer
FLOAT64 = ("float64 parameters: OneFlow hands its scalars (lr, weight decay, betas, bias corrections) to the update "
           "kernels as float32 whatever the parameter's dtype; optreg computes them in the parameter's precision, so a "
           "float64 run differs from OneFlow's in the float32 rounding of those scalars.")

CONTIGUOUS_NOTE = (
    "contiguous_params=True, as in OneFlow, puts each group's parameters, gradients and state in one buffer per "
    "dtype and device (parameters and state become views of it; no numeric effect); an element-wise update then runs "
    "over the whole group at once in each execution, and under fused=True so does LAMB (a norm per parameter from "
    "the rows of its slice, which starts at a multiple of 1024 elements). fused=True compiles the update with "
    "torch.compile (OneFlow's fused kernel has no numeric effect either).")

#: the OneFlow commit whose `support_sparse` properties the rows follow
ONEFLOW_COMMIT = "25c8978c1c8b1371ef6aa4187dae4495bd233c35"

#: shown by describe() for Adam, AdamW and SGD, whose `support_sparse` OneFlow overrides
SPARSE_NOTE = (f"support_sparse is True, as OneFlow's property returns (python/oneflow/nn/optimizer/<name>.py at "
               f"commit {ONEFLOW_COMMIT[:12]}; every other OneFlow optimizer inherits False from "
               "oneflow/optim/optimizer.py): OneFlow uses it in graph mode to update only the rows of an "
               "indexed-slices gradient; a sparse gradient reaches optreg's eager step and is applied as its dense "
               "equivalent.")

# adam family
ADAM_ONEFLOW = "OneFlow master (2025-08) oneflow.optim, kernel AdamUpdateFunctor"
ADAM_ONEFLOW_NOTES = (
    "Bias correction uses OneFlow's single optimizer-wide step, which advances on every step() even for "
    "parameters that got no gradient (torch counts per parameter).",
    "Per-group clip_grad_max_norm and clip_grad_norm_type: optimizer.clip_grad() clips each group by its own norm. "
    "zero_grad() defaults to set_to_none=False.",
    CONTIGUOUS_NOTE,
    SPARSE_NOTE,
    "float32 parameters: the kernel's scalars are formed as OneFlow forms them, from float32 hyperparameters in "
    "float32 (1 - β of a float β: 1 - 0.999f = 9.9998713e-4, not 1e-3; bias corrections rounded to float32, √bc2 "
    "in float32; lr, eps and weight decay reach float32 tensors as float32 scalars); the chain's moment and "
    "bias-correction stages say scalars='float32'.",
)

ROWS = [
    # -- adam family --
    optimizer(
        "oneflow", "Adam", "optreg.dialects.oneflow.adam:Adam",
        "Adam: w -= lr/bc1 · m/(√v/√bc2 + eps), L2 weight decay; bc = 1 - βᵗ with the optimizer-wide step.",
        group_keys=ONEFLOW_GROUP_KEYS,
        source=ADAM_ONEFLOW + ".Adam",
        notes=("Numerically torch.optim.Adam when every parameter gets a gradient every step; "
               "do_bias_correction=False sets bc1 = bc2 = 1.",) + ADAM_ONEFLOW_NOTES,
    ),
    optimizer(
        "oneflow", "AdamW", "optreg.dialects.oneflow.adam:AdamW",
        "AdamW: w -= lr·(m̂/(√v̂ + eps) + wd·w) with the optimizer-wide step.",
        group_keys=ONEFLOW_GROUP_KEYS,
        source=ADAM_ONEFLOW + ".AdamW",
        notes=("Numerically torch.optim.AdamW when every parameter gets a gradient every step; weight_decay "
               "defaults to 0 (torch 0.01).",) + ADAM_ONEFLOW_NOTES,
    ),
    # -- sgd family --
    optimizer(
        "oneflow", "SGD", "optreg.dialects.oneflow.sgd:SGD",
        "SGD with momentum: V = βV + (1-dampening)·g' (V₀ = 0), g' = g + wd·w; w -= lr·(g' + βV if nesterov else V).",
        group_keys=ONEFLOW_GROUP_KEYS,
        source="OneFlow master (2025-08) oneflow.optim.SGD, kernel MomentumUpdateFunctor",
        notes=(
            "The momentum buffer starts at 0, so the first step is already damped: V₁ = (1-dampening)·g "
            "(torch sets V₁ = g). Identical to torch.optim.SGD when dampening = 0.",
            "maximize acts only when momentum > 0 and then flips the sign of the whole update, L2 term "
            "included (OneFlow's kernel uses +lr instead of -lr); with momentum = 0 it is ignored with a warning.",
            "nesterov is not validated against momentum/dampening, as in OneFlow.",
            "Per-group clip_grad_max_norm and clip_grad_norm_type: optimizer.clip_grad() clips each group by "
            "its own norm. zero_grad() defaults to set_to_none=False.",
            SPARSE_NOTE,
            CONTIGUOUS_NOTE,
        ),
    ),
    # -- adagrad_rmsprop family --
    optimizer(
        "oneflow", "Adagrad", "optreg.dialects.oneflow.adagrad_rmsprop:Adagrad",
        "Adagrad: S += g'², lr_t = lr/(1 + (t-1)·lr_decay), w -= lr_t·g'/(√S + ε), t = optimizer-wide step.",
        group_keys=ONEFLOW_GROUP_KEYS,
        source="OneFlow master (2025-08) oneflow.optim.Adagrad, kernel AdagradUpdateFunctor",
        notes=(
            "t in the lr decay is OneFlow's single optimizer-wide step (state['step'] + 1): it also counts "
            "steps in which a parameter had no gradient, where torch counts each parameter's own steps.",
            "eps is added after the square root, as OneFlow's kernel does; its docstring writes √(S + ε).",
            "lr_decay must be >= 0: OneFlow does not check it, but a negative one makes lr_t grow, change sign "
            "and divide by zero at step 1 + 1/|lr_decay|. Per-group clip_grad_max_norm / clip_grad_norm_type "
            "with optimizer.clip_grad(); zero_grad() defaults to set_to_none=False.",
        ),
    ),
    optimizer(
        "oneflow", "RMSprop", "optreg.dialects.oneflow.adagrad_rmsprop:RMSprop",
        "RMSprop: r = αr + (1-α)g'², w -= lr·g'/√(r + ε) (centered: √(r - G² + ε)), g' = g + wd·w.",
        rules=(Rule("momentum", ("momentum",), lambda m: m == 0,
                    "OneFlow RMSprop does not support momentum > 0 (it asserts momentum == 0)"),),
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
    # -- misc family --
    optimizer(
        "oneflow", "Adadelta", "optreg.dialects.oneflow.misc:Adadelta",
        "Adadelta: v = ρv + (1-ρ)g'², Δ = √(u+ε)/√(v+ε)·g', u = ρu + (1-ρ)Δ², w -= lr·Δ, g' = g + wd·w.",
        group_keys=ONEFLOW_GROUP_KEYS,
        source="OneFlow 0.9.0 oneflow.optim.Adadelta, kernel AdadeltaUpdateFunctor",
        notes=(
            "Numerically torch.optim.Adadelta (weight_decay is L2, added to the gradient); the defaults are torch's "
            "(lr 1.0, rho 0.9, eps 1e-6), not the docstring's (lr 1e-3, rho 0.0, eps 1e-10).",
            "maximize=True: OneFlow 0.9.0's constructor asserts it is False (its graph mode would add the decay "
            "before the negation); its eager kernel, which a param group's maximize reaches, negates the gradient "
            "before the L2 term, and so does optreg, for the constructor's option as for a group's.",
            "The constructor allocates the state of every parameter (zeros; OneFlow names it square_avgs / "
            "acc_deltas, optreg square_avg / acc_delta, as torch). Per-group clip_grad_max_norm / "
            "clip_grad_norm_type with optimizer.clip_grad(); zero_grad() defaults to set_to_none=False.",
        ),
    ),
    # -- lamb family --
    optimizer(
        "oneflow", "LAMB", "optreg.dialects.oneflow.lamb:LAMB",
        "LAMB: u = m̂/(√v̂ + eps); trust ratio ‖w‖/‖u‖ (1 if a norm is 0); w -= lr·tr·(u + wd·w) (adam_w_mode).",
        rules=(Rule("amsgrad", ("amsgrad",), lambda a: not a, "LAMB does not support amsgrad"),),
        group_keys=ONEFLOW_GROUP_KEYS,
        source="OneFlow master (2025-08) oneflow.optim.LAMB, kernels LambGradFunctor / LambUpdateFunctor",
        notes=(
            "The trust ratio is computed on the Adam direction u without the decay term (apex and timm include it) "
            "and is never clipped; adam_w_mode=False adds weight_decay·w to the gradient (L2) instead.",
            "So with weight_decay > 0 and gradients near 0 (about 1e-20: u ≈ g/eps), ‖w‖/‖u‖ is huge and multiplies "
            "the decay term too: the first step moves w by lr·(‖w‖/‖u‖)·(u + weight_decay·w), many times w itself, "
            "and w reaches inf / NaN within a few steps, eager and fused alike, as in OneFlow's kernel "
            "(LambLRFunctor, LambUpdateFunctor).",
            "Bias correction uses the optimizer-wide step (do_bias_correction=False: none). amsgrad=True is refused, "
            "as OneFlow raises. Per-group clip_grad via optimizer.clip_grad(); zero_grad() defaults to "
            "set_to_none=False.",
        ),
    ),
]

ROWS = [replace(row, notes=(*row.notes, FLOAT64)) for row in ROWS]

ROWS.append(optimizer(
    "oneflow", "LBFGS", "optreg.dialects.oneflow.lbfgs:LBFGS",
    "L-BFGS (one parameter group, needs a closure): two-loop recursion over history_size pairs; fixed step lr "
    "(min(1, 1/‖g‖₁)·lr first) or OneFlow's strong-Wolfe line search.",
    single_group=True, class_path="oneflow.optim.LBFGS",
    source=f"OneFlow master (commit {ONEFLOW_COMMIT[:12]}) oneflow.optim.LBFGS, python/oneflow/nn/optimizer/lbfgs.py",
    rules=(Rule("line_search_fn", ("line_search_fn",), lambda f: f in (None, "strong_wolfe"),
                "must be None or 'strong_wolfe'"),),
    notes=(
        "Not in the OneFlow 0.9.0 release (the one that installs from the package index); reproduced from its source.",
        "Without a line search it is torch.optim.LBFGS's algorithm step for step (the tests compare the two); the "
        "defaults differ: lr 1e-3 (torch 1) and max_eval = 1.25·max_iter unrounded (torch ⌊5·max_iter/4⌋, so with "
        "max_iter = 3 torch stops after 2 iterations and OneFlow runs 3).",
        "line_search_fn='strong_wolfe' is OneFlow's own search, not torch's: quadratic interpolation (torch: "
        "cubic), always up to 25 evaluations (torch: max_eval minus those spent), bracketing goes on past a "
        "non-negative slope, no insufficient-progress safeguard, and a zoom trial that fails the sufficient "
        "decrease still becomes the bracket's low end. Trajectories differ from torch's.",
        "The state keeps OneFlow's names (old_diffs, old_step_size, ro, H_diag, alpha, d, t, prev_flat_grad, "
        "prev_loss, func_evals, n_iter). zero_grad() defaults to set_to_none=False; support_sparse is False; "
        "contiguous_params has no numeric effect. float64 parameters are computed in float64.",
    ),
))

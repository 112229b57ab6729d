"""Cerebras rows of Adadelta, ASGD and Rprop (optimizers.adadelta / asgd / rprop)."""

from __future__ import annotations

from optreg.core.entry import Rule, optimizer

CEREBRAS = "cerebras.pytorch 2.x (2.10.0 source) cerebras.pytorch.optim"

ROWS = [
    optimizer(
        "cerebras", "Adadelta", "optreg.optimizers.adadelta:Adadelta",
        "Adadelta: v = ρv + (1-ρ)g², Δ = √(u+ε)/√(v+ε)·g, u = ρu + (1-ρ)Δ², w -= lr·Δ.",
        fixed={"preinit": True},
        hidden=("set_to_none",),
        source=CEREBRAS + ".Adadelta",
        notes=("Numerically torch.optim.Adadelta. preinitialize() allocates square_avg and acc_delta; "
               "state_names_to_sparsify() = ['square_avg', 'acc_delta'].",),
    ),
    optimizer(
        "cerebras", "ASGD", "optreg.optimizers.asgd:ASGD",
        "Averaged SGD: w = w·(1-λη) - η·g, η = lr/(1 + λ·lr·t)^α, running average ax from step t0 on.",
        fixed={"preinit": True},
        hidden=("set_to_none",),
        source=CEREBRAS + ".ASGD",
        notes=("Numerically torch.optim.ASGD. t is the float32 per-parameter state['step'] "
               "(enable_global_step); preinitialize() allocates eta (= lr), mu (= 1) and ax; "
               "state_names_to_sparsify() = ['ax'].",),
    ),
    optimizer(
        "cerebras", "Rprop", "optreg.optimizers.rprop:Rprop",
        "Rprop: step sizes × η+ on sign agreement, × η- (and g = 0) on a sign flip, clamped; w -= step·sign(g).",
        defaults={"lr": 1e-3},
        rules=(Rule("etas", ("etas",), lambda e: 0 < e[0] < 1 < e[1], "must satisfy 0 < etaminus < 1 < etaplus"),
               Rule("step_sizes", ("step_sizes",), lambda s: s[0] <= s[1], "min step size must be <= max")),
        fixed={"preinit": True, "mask_grad_in_place": True},
        hidden=("maximize", "set_to_none"),
        source=CEREBRAS + ".Rprop",
        notes=(
            "Numerically torch.optim.Rprop; lr defaults to 1e-3 (torch 1e-2); no maximize option.",
            "step() zeroes p.grad in place where the gradient's sign flipped, as Cerebras' step does.",
            "etas must satisfy 0 < etaminus < 1 < etaplus (Cerebras does not check; it detects a flip by "
            "comparing the step multiplier with etaminus, which equals torch's sign test only inside these bounds).",
            "preinitialize() allocates prev and step_size (= lr); state_names_to_sparsify() = ['prev', 'step_size'].",
        ),
    ),
]

"""SGD-family rows of the OneFlow, Cerebras and MindSpore dialects (one implementation: optimizers.sgd.SGD)."""

from __future__ import annotations

import inspect

from optreg.core.entry import Rule, optimizer
from optreg.dialects.mindspore.vocabulary import (BIND, GC_NOTE, GROUPS_NOTE, LR_NOTE, MINDSPORE, MS_LEARNING_RATE,
                                                   PIPELINE_NOTE)
from optreg.core.options import ONEFLOW_GROUP_KEYS
from optreg.core.types import Float, NonNegFloat, PosFloat, StrictNonNegFloat

TARGET = "optreg.optimizers.sgd:SGD"
REQUIRED = inspect.Parameter.empty

ONEFLOW = "OneFlow master (2025-08) oneflow.optim.SGD, kernel MomentumUpdateFunctor"
CEREBRAS = "cerebras.pytorch 2.x (2.10.0 source) cerebras.pytorch.optim.SGD"

NESTEROV = Rule("nesterov", ("nesterov", "momentum", "dampening"), lambda n, m, d: not n or (m > 0 and d == 0),
                "nesterov requires momentum > 0 and dampening = 0")
BASE_KNOBS = ("loss_scale", "coupled_decay", "preinit", "set_to_none")

ROWS = [
    optimizer(
        "oneflow", "SGD", TARGET,
        "SGD with momentum: V = βV + (1-dampening)·g' (V₀ = 0), g' = g + wd·w; w -= lr·(g' + βV if nesterov else V).",
        types={"dampening": Float},
        fixed={"zero_init_buffer": True, "maximize_flips_update": True, "set_to_none": False},
        hidden=("loss_scale", "coupled_decay", "preinit"),
        group_keys=ONEFLOW_GROUP_KEYS,
        source=ONEFLOW,
        notes=(
            "The momentum buffer starts at 0, so the first step is already damped: V₁ = (1-dampening)·g "
            "(torch sets V₁ = g). Identical to torch.optim.SGD when dampening = 0.",
            "maximize acts only when momentum > 0 and then flips the sign of the whole update, L2 term "
            "included (OneFlow's kernel uses +lr instead of -lr); with momentum = 0 it is ignored with a warning.",
            "nesterov is not validated against momentum/dampening, as in OneFlow.",
            "Per-group clip_grad_max_norm and clip_grad_norm_type: optimizer.clip_grad() clips each group by "
            "its own norm. zero_grad() defaults to set_to_none=False. support_sparse is True: a sparse "
            "gradient is applied as its dense equivalent.",
            "OneFlow's contiguous_params and fused (memory-layout switches with no numeric effect) are not options.",
        ),
    ),
    optimizer(
        "cerebras", "SGD", TARGET,
        "SGD with momentum: buf = μ·buf + (1-dampening)·g' (buf₀ = 0), g' = g + wd·w; w -= lr·(g' + μ·buf if nesterov else buf).",
        defaults={"lr": REQUIRED},
        types={"dampening": Float},
        rules=(NESTEROV,),
        fixed={"zero_init_buffer": True, "preinit": True},
        hidden=("maximize_flips_update", "loss_scale", "coupled_decay", "set_to_none"),
        source=CEREBRAS,
        notes=(
            "lr has no default (required), as in Cerebras.",
            "The momentum buffer is preinitialized to 0, so the first step is damped: buf₁ = (1-dampening)·g "
            "(torch sets buf₁ = g). Identical to torch.optim.SGD when dampening = 0.",
            "preinitialize() allocates momentum_buffer in the constructor; state_names_to_sparsify() = ['momentum_buffer'].",
        ),
    ),
    optimizer(
        "mindspore", "Momentum", TARGET,
        "Momentum: v = u·v + g; w -= lr·(g + u·v) if use_nesterov else lr·v.",
        rename={"learning_rate": "lr", "use_nesterov": "nesterov"},
        defaults={"learning_rate": REQUIRED, "momentum": REQUIRED},
        types={"learning_rate": MS_LEARNING_RATE, "momentum": StrictNonNegFloat, "weight_decay": NonNegFloat,
               "loss_scale": PosFloat},
        fixed={"coupled_decay": True},
        hidden=("dampening", "maximize", "zero_init_buffer", "maximize_flips_update", "preinit", "set_to_none"),
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
        "mindspore", "SGD", TARGET,
        "SGD: v = u·v + (1-dampening)·g (v₁ = g); w -= lr·(g + u·v) if nesterov else lr·v.",
        rename={"learning_rate": "lr"},
        defaults={"learning_rate": 0.1},
        types={"learning_rate": MS_LEARNING_RATE, "momentum": NonNegFloat, "dampening": NonNegFloat,
               "weight_decay": NonNegFloat, "loss_scale": PosFloat},
        rules=(NESTEROV,),
        hidden=("maximize", "zero_init_buffer", "maximize_flips_update", "coupled_decay", "preinit", "set_to_none"),
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
]

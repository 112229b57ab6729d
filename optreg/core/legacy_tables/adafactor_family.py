"""AdaFactor rows of the MindSpore and Cerebras dialects (one implementation: optimizers.adafactor.AdaFactor)."""

from __future__ import annotations

from typing import Optional

from optreg.core.entry import Rule, optimizer
from optreg.dialects.mindspore.vocabulary import BIND_DECAY_ALL, MINDSPORE, MS_LEARNING_RATE
from optreg.core.types import Float, NonNegFloat, StrictNonNegFloat, StrictOpenUnit, number


ROWS = [
    optimizer(
        "mindspore", "AdaFactor", "optreg.optimizers.mindspore:AdaFactor",
        "AdaFactor (HF form): factored second moment of g² + eps1, update clipped by RMS/clip_threshold, "
        "scaled by ρ·max(eps2, RMS(w)); optional first moment beta1.",
        types={
            "learning_rate": Optional[MS_LEARNING_RATE],
            "eps": tuple[StrictNonNegFloat, StrictNonNegFloat],
            "clip_threshold": StrictNonNegFloat,
            "decay_rate": StrictOpenUnit,
            "beta1": Optional[number(ge=0, lt=1)],
            "weight_decay": number(ge=0, lt=1),
            "loss_scale": number(gt=0),
        },
        rules=(
            Rule("learning_rate", ("learning_rate", "relative_step"), lambda lr, rel: not rel,
                 "a manual learning_rate cannot be combined with relative_step=True"),
            Rule("warmup_init", ("warmup_init", "relative_step"), lambda w, rel: not w or rel,
                 "warmup_init=True requires relative_step=True"),
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
            "relative_step=False is refused when the optimizer is built.",
        ),
    ),
    optimizer(
        "cerebras", "Adafactor", "optreg.optimizers.adafactor:AdaFactor",
        "Adafactor (HF form) with a manual lr: α = lr·max(eps2, RMS(w)) if scale_parameter; factored second moment; w -= wd·α·w, then w -= U.",
        defaults={"lr": __import__("inspect").Parameter.empty, "relative_step": False},
        types={"decay_rate": Float, "beta1": Optional[Float], "weight_decay": NonNegFloat,
               "eps": tuple[NonNegFloat, NonNegFloat]},
        rules=(
            Rule("clip_threshold", ("clip_threshold",), lambda c: c == 1.0, "only clip_threshold=1.0 is supported"),
            Rule("beta1", ("beta1",), lambda b: b is None, "only beta1=None is supported"),
            Rule("relative_step", ("relative_step",), lambda r: not r, "relative_step=True is not supported"),
            Rule("warmup_init", ("warmup_init",), lambda w: not w, "warmup_init=True is not supported"),
        ),
        fixed={"decay_rate_sign": 1, "counter": "param", "preinit": True},
        hidden=("compression", "loss_scale"),
        source="cerebras.pytorch 2.x (modelzoo R1.9.1 Adafactor, from HF transformers) cerebras.pytorch.optim.Adafactor",
        notes=(
            "Cerebras refuses clip_threshold != 1.0, beta1 != None, relative_step=True and warmup_init=True "
            "(ValueError there, ConfigError here); lr is required (2.x).",
            "t is the per-parameter float step; decay_rate is the negative exponent (-0.8). Differs from "
            "torch.optim.Adafactor (eps1 added to g², lr scaled by RMS(w), first moment on the scaled update).",
        ),
    ),
]

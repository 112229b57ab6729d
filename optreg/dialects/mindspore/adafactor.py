"""MindSpore's AdaFactor as a chain of stages."""

from __future__ import annotations

from typing import Any, Optional

from optreg.core.types import Bool, OptionalBool, StateDtype, StrictNonNegFloat, StrictOpenUnit, number
from optreg.dialects.cerebras.adafactor import _check
from optreg.dialects.mindspore.groups import resolve_groups
from optreg.dialects.mindspore.vocabulary import MS_LEARNING_RATE
from optreg.stages.adafactor import (AdafactorClock, ClipByRMS, FactoredSecondMoment, RelativeScale,
                                     ScaledDecayApply, UpdateMomentum)
from optreg.stages.chain import Chain
from optreg.stages.gradient import Centralize, Unscale
from optreg.stages.optimizer import ChainOptimizer


class AdaFactor(ChainOptimizer):
    """mindspore.nn.AdaFactor (1.6 - 2.x): HF AdaFactor with the optimizer-wide step t,

        β̂2 = 1 - t^(-decay_rate) (decay_rate = +0.8);  ρ = min(1e-6·t or 1e-2, 1/√t) if relative_step, else lr
        α = ρ·max(eps2, RMS(w)) if scale_parameter;  U = α·g·rsqrt(V̂)/max(1, RMS/clip_threshold)
        m = β1·m + (1-β1)·U (beta1 0.9; 0/None: off);  w -= wd·α·w;  w -= U

    Weight decay on every parameter; `compression` keeps the unfactored moment in float16;
    `loss_scale` divides the gradients.
    """

    chain = Chain(Centralize(), Unscale(), AdafactorClock("global", decay_rate="positive"), FactoredSecondMoment(),
                  ClipByRMS(), RelativeScale(), UpdateMomentum(), ScaledDecayApply())

    def __init__(self, params: Any, learning_rate: Optional[MS_LEARNING_RATE] = None,
                 eps: tuple[StrictNonNegFloat, StrictNonNegFloat] = (1e-30, 1e-3),
                 clip_threshold: StrictNonNegFloat = 1.0, decay_rate: StrictOpenUnit = 0.8,
                 beta1: Optional[number(ge=0, lt=1)] = 0.9, weight_decay: number(ge=0, lt=1) = 0.0,
                 scale_parameter: Bool = True, relative_step: Bool = True, warmup_init: Bool = False,
                 compression: Bool = False, loss_scale: number(gt=0) = 1.0, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        _check(learning_rate, decay_rate, relative_step, warmup_init, sign=1.0)
        defaults = dict(lr=learning_rate, eps=tuple(eps),
                        clip_threshold=clip_threshold, decay_rate=decay_rate, beta1=beta1,
                        weight_decay=weight_decay, scale_parameter=scale_parameter,
                        relative_step=relative_step, warmup_init=warmup_init, compression=compression,
                        loss_scale=loss_scale)
        super().__init__(resolve_groups(params, weight_decay, learning_rate, decay_all=True, carried=defaults),
                         defaults, foreach=foreach, fused=fused, contiguous_params=contiguous_params,
                         state_dtype=state_dtype, loss_scale=loss_scale)

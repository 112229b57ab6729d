"""MindSpore's Lamb as a chain of stages."""

from __future__ import annotations

from typing import Any

from optreg.core.types import Bool, NonNegFloat, OptionalBool, StateDtype, StrictOpenUnit, StrictPosFloat
from optreg.dialects.mindspore.adam import adam_groups
from optreg.dialects.mindspore.vocabulary import MS_LEARNING_RATE
from optreg.stages.adam import AdamDirection, AdamMoments, BiasCorrection
from optreg.stages.apply import ApplyLR, DecoupledDecay
from optreg.stages.chain import Chain
from optreg.stages.gradient import Centralize
from optreg.stages.optimizer import ChainOptimizer
from optreg.stages.trust import TrustRatio


class Lamb(ChainOptimizer):
    """mindspore.nn.Lamb (1.6 - 2.x) as documented, t the optimizer-wide step:

        r = m̂/(√v̂ + eps) + wd·w,  m̂ = m/(1-β1ᵗ), v̂ = v/(1-β2ᵗ);  w -= lr·‖w‖/‖r‖·r  (ratio 1 if a norm is 0)

    Groups follow MindSpore (beta/gamma names undecayed, per-group lr, grad_centralization).
    """

    chain = Chain(Centralize(), AdamMoments(), BiasCorrection("global"), AdamDirection("torch"), DecoupledDecay(),
                  TrustRatio("update"), ApplyLR())

    def __init__(self, params: Any, learning_rate: MS_LEARNING_RATE, beta1: StrictOpenUnit = 0.9,
                 beta2: StrictOpenUnit = 0.999, eps: StrictPosFloat = 1e-6, weight_decay: NonNegFloat = 0.0, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        groups, defaults = adam_groups(params, learning_rate, beta1, beta2, eps, weight_decay)
        super().__init__(groups, defaults, foreach=foreach, fused=fused, contiguous_params=contiguous_params,
                         state_dtype=state_dtype)

"""Cerebras' Lamb as a chain of stages."""

from __future__ import annotations

from typing import Any

from optreg.core.types import Betas, Bool, NonNegFloat, OptionalBool, StateDtype
from optreg.stages.adam import AdamDirection, AdamMoments
from optreg.stages.apply import ApplyLR, DecoupledDecay
from optreg.stages.chain import Chain
from optreg.stages.optimizer import ChainOptimizer
from optreg.stages.trust import TrustRatio


class Lamb(ChainOptimizer):
    """cerebras.pytorch.optim.Lamb (2.x; modelzoo R1.9.1, after torch_optimizer.Lamb), no bias correction:

        r = m/(√v + eps) + wd·w;  tr = min(‖w‖, 10)/‖r‖ (1 if a norm is 0; 1 with adam=True);  w -= lr·tr·r

    State is allocated in the constructor (preinitialize()).
    """

    chain = Chain(AdamMoments(), AdamDirection("torch"), DecoupledDecay(),
                  TrustRatio("update", weight_norm_clip=10.0, off="adam"), ApplyLR())
    #: Cerebras' state_names_to_sparsify() (no amsgrad state in Lamb)
    sparsify_states = ("exp_avg", "exp_avg_sq")

    def __init__(self, params: Any, lr: NonNegFloat = 1e-3, betas: Betas = (0.9, 0.999), eps: NonNegFloat = 1e-6,
                 weight_decay: NonNegFloat = 0.0, adam: Bool = False, *, foreach: OptionalBool = None,
                 fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, adam=adam),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params,
                         state_dtype=state_dtype, preinit=True)

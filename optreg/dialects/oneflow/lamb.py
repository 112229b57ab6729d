"""OneFlow's LAMB as a chain of stages."""

from __future__ import annotations

from typing import Any

from optreg.core.types import Betas, Bool, NonNegFloat, OptionalBool, StateDtype
from optreg.dialects.oneflow.adam import SCALARS
from optreg.stages.adam import AdamDirection, AdamMoments, BiasCorrection
from optreg.stages.apply import ApplyLR, DecoupledDecay
from optreg.stages.chain import Chain
from optreg.stages.gradient import CoupledDecay
from optreg.stages.optimizer import ChainOptimizer
from optreg.stages.trust import DirectionNorm, TrustRatio


class LAMB(ChainOptimizer):
    """oneflow.optim.LAMB (OneFlow master 2025-08; LambGradFunctor / LambUpdateFunctor):

        u = m̂/(√v̂ + eps)  (torch eps placement; no correction with do_bias_correction=False)
        tr = ‖w‖/‖u‖ (1 if a norm is 0; u without the decay term);  w -= lr·tr·(u + wd·w)

    adam_w_mode=False adds wd·w to the gradient (L2) instead of the update. The step count is
    optimizer-wide; zero_grad() defaults to set_to_none=False; per-group clip_grad. Scalars as
    OneFlow's kernels form them for tensors below float64 (float32 β, 1 - β, bias corrections, eps,
    weight decay, lr).
    """

    chain = Chain(CoupledDecay(unless="adam_w_mode"), AdamMoments(scalars=SCALARS),
                  BiasCorrection("global", "do_bias_correction", scalars=SCALARS),
                  AdamDirection("torch"), DirectionNorm(),
                  DecoupledDecay(when="adam_w_mode"), TrustRatio("direction"), ApplyLR())

    def __init__(self, params: Any, lr: NonNegFloat = 1e-3, betas: Betas = (0.9, 0.999), eps: NonNegFloat = 1e-8,
                 weight_decay: NonNegFloat = 0.0, adam_w_mode: Bool = True, do_bias_correction: Bool = True,
                 amsgrad: Bool = False, *, foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        if amsgrad:
            raise ValueError("LAMB does not support amsgrad (OneFlow raises RuntimeError)")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      adam_w_mode=adam_w_mode, do_bias_correction=do_bias_correction,
                                      amsgrad=amsgrad),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype,
                         set_to_none=False)

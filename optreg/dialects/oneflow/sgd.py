"""OneFlow's SGD as a chain of stages."""

from __future__ import annotations

import warnings
from typing import Any

from optreg.core.types import Bool, Float, NonNegFloat, OptionalBool, StateDtype
from optreg.stages.apply import ApplyLR
from optreg.stages.chain import Chain
from optreg.stages.gradient import CoupledDecay
from optreg.stages.optimizer import ChainOptimizer
from optreg.stages.sgd import FlipUpdate, Momentum


class SGD(ChainOptimizer):
    """oneflow.optim.SGD (OneFlow master 2025-08, kernel MomentumUpdateFunctor):

        g' = g + wd·w;  V = β·V + (1-dampening)·g' (V₀ = 0);  w -= lr·(g' + β·V if nesterov else V)

    maximize flips the sign of the whole update when momentum > 0 and is ignored (with a warning)
    otherwise. zero_grad() defaults to set_to_none=False; per-group clip_grad; sparse gradients are
    applied as their dense equivalent.
    """

    chain = Chain(CoupledDecay(), Momentum(start="zero"), FlipUpdate(), ApplyLR())
    supports_sparse = True

    def __init__(self, params: Any, lr: NonNegFloat = 1e-3, momentum: NonNegFloat = 0.0, dampening: Float = 0.0,
                 weight_decay: NonNegFloat = 0.0, nesterov: Bool = False, maximize: Bool = False, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype,
                         set_to_none=False)
        if any(g["maximize"] and not g["momentum"] for g in self.param_groups):
            warnings.warn("maximize has an effect only when momentum > 0 (OneFlow SGD)", UserWarning, stacklevel=2)

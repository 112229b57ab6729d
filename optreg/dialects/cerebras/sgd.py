"""Cerebras' SGD as a chain of stages."""

from __future__ import annotations

from typing import Any

from optreg.core.types import Bool, Float, NonNegFloat, OptionalBool, StateDtype
from optreg.stages.apply import ApplyLR
from optreg.stages.chain import Chain
from optreg.stages.gradient import CoupledDecay, Maximize
from optreg.stages.optimizer import ChainOptimizer
from optreg.stages.sgd import Momentum


class SGD(ChainOptimizer):
    """cerebras.pytorch.optim.SGD (cerebras.pytorch 2.x, 2.10.0 source):

        g' = ±g + wd·w;  buf = μ·buf + (1-dampening)·g' (buf₀ = 0);  w -= lr·(g' + μ·buf if nesterov else buf)

    The momentum buffer is preinitialized to zero in the constructor (`preinitialize()`), so the first
    step is damped; `state_names_to_sparsify()` = ['momentum_buffer'].
    """

    chain = Chain(Maximize(), CoupledDecay(), Momentum(start="zero"), ApplyLR())
    supports_sparse = True

    def __init__(self, params: Any, lr: NonNegFloat, momentum: NonNegFloat = 0.0, dampening: Float = 0.0,
                 weight_decay: NonNegFloat = 0.0, nesterov: Bool = False, maximize: Bool = False, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params,
                         state_dtype=state_dtype, preinit=True)

"""Cerebras' Adagrad and RMSprop as chains of stages (torch's numerics, state preinitialized)."""

from __future__ import annotations

from typing import Any

from optreg.core.types import Bool, NonNegFloat, OptionalBool, StateDtype
from optreg.stages.adagrad import Accumulate, AdagradStep, LRDecay
from optreg.stages.chain import Chain
from optreg.stages.gradient import CoupledDecay, Maximize
from optreg.stages.optimizer import ChainOptimizer
from optreg.stages.rmsprop import MeanSquare, RMSDenominator, RMSStep


class Adagrad(ChainOptimizer):
    """cerebras.pytorch.optim.Adagrad (cerebras.pytorch 2.x, 2.10.0 source), numerically torch.optim.Adagrad:

        g' = ±g + wd·w;  s += g'²;  w -= lr/(1 + (t-1)·lr_decay) · g'/(√s + eps)

    t is the parameter's own float32 `state["step"]` (increment_global_step); preinitialize() allocates
    `sum` (filled with the group's initial_accumulator_value) and `step`.
    """

    chain = Chain(Maximize(), CoupledDecay(), Accumulate(), LRDecay("own"), AdagradStep("outside"))

    def __init__(self, params: Any, lr: NonNegFloat = 1e-2, lr_decay: NonNegFloat = 0.0,
                 weight_decay: NonNegFloat = 0.0, initial_accumulator_value: NonNegFloat = 0.0,
                 eps: NonNegFloat = 1e-6, maximize: Bool = False, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, eps=eps,
                                      maximize=maximize),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params,
                         state_dtype=state_dtype, preinit=True)


class RMSprop(ChainOptimizer):
    """cerebras.pytorch.optim.RMSprop (cerebras.pytorch 2.x, 2.10.0 source), numerically torch.optim.RMSprop:

        g' = g + wd·w;  v = α·v + (1-α)·g'²;  w -= lr·g'/(√v + eps)   (centered: √(v - ḡ²) + eps)
        momentum μ > 0:  b = μ·b + g'/(√v + eps);  w -= lr·b

    No maximize option; preinitialize() allocates square_avg (and momentum_buffer / grad_avg when used).
    """

    chain = Chain(CoupledDecay(), MeanSquare(), RMSDenominator("outside"), RMSStep())
    #: Cerebras' own order of `state_names_to_sparsify()`
    sparsify_states = ("square_avg", "momentum_buffer", "grad_avg")

    def __init__(self, params: Any, lr: NonNegFloat = 1e-2, alpha: NonNegFloat = 0.99, eps: NonNegFloat = 1e-8,
                 weight_decay: NonNegFloat = 0.0, momentum: NonNegFloat = 0.0, centered: Bool = False, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params,
                         state_dtype=state_dtype, preinit=True)

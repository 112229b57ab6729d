"""OneFlow's Adagrad and RMSprop as chains of stages."""

from __future__ import annotations

from typing import Any

from optreg.core.types import Bool, NonNegFloat, OptionalBool, StateDtype
from optreg.errors import ConfigError
from optreg.stages.adagrad import Accumulate, AdagradStep, LRDecay
from optreg.stages.chain import Chain
from optreg.stages.gradient import CoupledDecay
from optreg.stages.optimizer import ChainOptimizer
from optreg.stages.rmsprop import MeanSquare, RMSDenominator, RMSStep


class Adagrad(ChainOptimizer):
    """oneflow.optim.Adagrad (OneFlow master 2025-08; AdagradUpdateFunctor):

        g' = g + wd·w;  S += g'²;  w -= lr/(1 + (t-1)·lr_decay) · g'/(√S + eps)

    t is the optimizer-wide step (it also counts steps in which a parameter had no gradient);
    zero_grad() defaults to set_to_none=False; per-group clip_grad.
    """

    chain = Chain(CoupledDecay(), Accumulate(), LRDecay("global"), AdagradStep("outside"))

    def __init__(self, params: Any, lr: NonNegFloat = 1e-3, lr_decay: NonNegFloat = 0.0,
                 weight_decay: NonNegFloat = 0.0,
                 initial_accumulator_value: NonNegFloat = 0.0, eps: NonNegFloat = 1e-10, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, eps=eps),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype,
                         set_to_none=False)


class RMSprop(ChainOptimizer):
    """oneflow.optim.RMSprop (OneFlow master 2025-08; RmsPropUpdateFunctor):

        g' = g + wd·w;  r = α·r + (1-α)·g'²;  w -= lr·g'/√(r + eps)   (centered: √(r - Ḡ² + eps))

    eps inside the root; momentum must be 0 (OneFlow asserts it); zero_grad() defaults to
    set_to_none=False; per-group clip_grad.
    """

    chain = Chain(CoupledDecay(), MeanSquare(), RMSDenominator("inside"), RMSStep())

    def __init__(self, params: Any, lr: NonNegFloat = 1e-3, alpha: NonNegFloat = 0.99, eps: NonNegFloat = 1e-8,
                 weight_decay: NonNegFloat = 0.0, momentum: NonNegFloat = 0.0, centered: Bool = False, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        if momentum != 0:
            raise ConfigError("OneFlow RMSprop does not support momentum > 0 (it asserts momentum == 0)", "momentum")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype,
                         set_to_none=False)

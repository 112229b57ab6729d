"""MindSpore's Adagrad, ProximalAdagrad and RMSProp as chains of stages.

Each chain starts with MindSpore's gradient pipeline (nn.Optimizer 1.6 - 2.x): `decay_weight` on the
still loss-scaled gradient, `gradients_centralization` for the groups that ask for it, `scale_grad`.
The classes take torch-style param groups (any option per group); MindSpore's group semantics (the
beta/gamma weight-decay rule, order_params) come from the registry rows' bind
(`optreg.dialects.mindspore.groups:bind`), as before.
"""

from __future__ import annotations

from typing import Any

from optreg.core.types import Bool, NonNegFloat, OptionalBool, PosFloat, StateDtype, StrictNonNegFloat, StrictPosFloat
from optreg.dialects.mindspore.vocabulary import MS_LEARNING_RATE
from optreg.stages.adagrad import Accumulate, AdagradStep, ProximalStep
from optreg.stages.chain import Chain
from optreg.stages.gradient import Centralize, CoupledDecay, Unscale
from optreg.stages.optimizer import ChainOptimizer
from optreg.stages.rmsprop import MeanSquare, RMSDenominator, RMSStep

PIPELINE = (CoupledDecay(loss_scaled=True), Centralize(), Unscale())


class Adagrad(ChainOptimizer):
    """mindspore.nn.Adagrad (1.6 - 2.x; ApplyAdagrad), the documented formula:

        h += g² (if update_slots), h₀ = accum;  w -= lr·g/√h   (no ε)
    """

    chain = Chain(*PIPELINE, Accumulate("sum", "accum", flag="update_slots"), AdagradStep("none"))

    def __init__(self, params: Any, accum: StrictNonNegFloat = 0.1, learning_rate: MS_LEARNING_RATE = 0.001,
                 update_slots: Bool = True, loss_scale: PosFloat = 1.0, weight_decay: NonNegFloat = 0.0, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params,
                         dict(lr=learning_rate, accum=accum, update_slots=update_slots, loss_scale=loss_scale,
                              weight_decay=weight_decay),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype,
                         loss_scale=loss_scale)


class ProximalAdagrad(ChainOptimizer):
    """mindspore.nn.ProximalAdagrad (1.6 - 2.x; ApplyProximalAdagrad, FOBOS), the documented formula:

        a += g² (a₀ = accum);  v = w - lr·g/√a;  w = sign(v)/(1 + lr·l2) · max(|v| - lr·l1, 0)

    use_locking has no numeric effect.
    """

    chain = Chain(*PIPELINE, Accumulate("accum", "accum"), ProximalStep("lr"))

    def __init__(self, params: Any, accum: StrictNonNegFloat = 0.1, learning_rate: MS_LEARNING_RATE = 0.001,
                 l1: StrictNonNegFloat = 0.0, l2: StrictNonNegFloat = 0.0, use_locking: Bool = False,
                 loss_scale: PosFloat = 1.0, weight_decay: NonNegFloat = 0.0, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params,
                         dict(lr=learning_rate, accum=accum, l1=l1, l2=l2, use_locking=use_locking,
                              loss_scale=loss_scale, weight_decay=weight_decay),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype,
                         loss_scale=loss_scale)


class RMSProp(ChainOptimizer):
    """mindspore.nn.RMSProp (1.6 - 2.x; ApplyRMSProp / ApplyCenteredRMSProp):

        s = ρ·s + (1-ρ)·g² (s₀ = 1);  m = β·m + lr·g/√(s + ε);  w -= m
        centered: ḡ = ρ·ḡ + (1-ρ)·g and √(s - ḡ² + ε)

    ε inside the root, the lr inside the momentum buffer; use_locking has no numeric effect.
    """

    chain = Chain(*PIPELINE, MeanSquare("decay", init=1.0), RMSDenominator("inside", "epsilon"),
                  RMSStep(lr_in_momentum=True))

    def __init__(self, params: Any, learning_rate: MS_LEARNING_RATE = 0.1, decay: StrictNonNegFloat = 0.9,
                 momentum: StrictNonNegFloat = 0.0, epsilon: StrictPosFloat = 1e-10, use_locking: Bool = False,
                 centered: Bool = False, loss_scale: PosFloat = 1.0, weight_decay: NonNegFloat = 0.0, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params,
                         dict(lr=learning_rate, decay=decay, momentum=momentum, epsilon=epsilon,
                              use_locking=use_locking, centered=centered, loss_scale=loss_scale,
                              weight_decay=weight_decay),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype,
                         loss_scale=loss_scale)

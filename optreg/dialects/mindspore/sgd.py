"""MindSpore's SGD and Momentum as chains of stages."""

from __future__ import annotations

from typing import Any

from optreg.core.types import Bool, NonNegFloat, OptionalBool, PosFloat, StateDtype, StrictNonNegFloat
from optreg.dialects.mindspore.groups import resolve_groups
from optreg.dialects.mindspore.vocabulary import MS_LEARNING_RATE
from optreg.stages.apply import ApplyLR
from optreg.stages.chain import Chain
from optreg.stages.gradient import Centralize, CoupledDecay, Unscale
from optreg.stages.optimizer import ChainOptimizer
from optreg.stages.sgd import Momentum as MomentumStage


class Momentum(ChainOptimizer):
    """mindspore.nn.Momentum (1.6 - 2.x, ApplyMomentum):

        g' = (g + wd·loss_scale·w)/loss_scale (decay_weight, grad_centralization, scale_grad)
        v = u·v + g' (v₀ = 0);  w -= lr·(g' + u·v) if use_nesterov else lr·v

    Groups follow MindSpore (beta/gamma names undecayed, per-group lr and weight_decay,
    grad_centralization, order_params); learning_rate may be per-step or a schedule.
    """

    chain = Chain(CoupledDecay(loss_scaled=True), Centralize(), Unscale(),
                  MomentumStage(start="zero", nesterov="use_nesterov"), ApplyLR())
    supports_sparse = True

    def __init__(self, params: Any, learning_rate: MS_LEARNING_RATE, momentum: StrictNonNegFloat,
                 weight_decay: NonNegFloat = 0.0, loss_scale: PosFloat = 1.0, use_nesterov: Bool = False, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        defaults = dict(lr=learning_rate, momentum=momentum, weight_decay=weight_decay, loss_scale=loss_scale,
                        use_nesterov=use_nesterov)
        super().__init__(resolve_groups(params, weight_decay, learning_rate, carried=defaults), defaults,
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype,
                         loss_scale=loss_scale)


class SGD(ChainOptimizer):
    """mindspore.nn.SGD (1.6 - 2.x, P.SGD kernel):

        g' = g/loss_scale + wd·w (decay inside the kernel, after centralisation and unscaling)
        v = u·v + (1-dampening)·g' (v₁ = g', the kernel's `stat` flag);  w -= lr·(g' + u·v) if nesterov else lr·v

    Groups follow MindSpore (see Momentum).
    """

    chain = Chain(Centralize(), Unscale(), CoupledDecay(), MomentumStage(start="grad"), ApplyLR())
    supports_sparse = True

    def __init__(self, params: Any, learning_rate: MS_LEARNING_RATE = 0.1, momentum: NonNegFloat = 0.0,
                 dampening: NonNegFloat = 0.0, weight_decay: NonNegFloat = 0.0, nesterov: Bool = False,
                 loss_scale: PosFloat = 1.0, *, foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        if nesterov and (momentum <= 0.0 or dampening != 0.0):
            raise ValueError("nesterov requires momentum > 0 and dampening = 0")
        defaults = dict(lr=learning_rate, momentum=float(momentum), dampening=float(dampening),
                        weight_decay=weight_decay, nesterov=nesterov, loss_scale=loss_scale)
        super().__init__(resolve_groups(params, weight_decay, learning_rate, carried=defaults), defaults,
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype,
                         loss_scale=loss_scale)

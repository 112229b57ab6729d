"""MindSpore 2.10's mindspore.nn ASGD, Rprop, AdaMax and Adadelta as chains of stages.

Each runs MindSpore's gradient pipeline (nn.Optimizer: decay_weight → gradients_centralization →
scale_grad) and then torch's algorithm of the same name, but AdaMax, whose ApplyAdaMax kernel adds eps after
the max: u = m/(max(β2·e, |g|) + eps)/(1 - β1ᵗ) (torch: e = max(β2·e, |g| + eps)). ASGD and Rprop take no
loss_scale (MindSpore's signatures); their groups follow MindSpore's rules through the rows' bind.
"""

from __future__ import annotations

from typing import Any

from optreg.core.types import Bool, NonNegFloat, OptionalBool, PosFloat, StateDtype, StrictPosFloat
from optreg.dialects.mindspore.vocabulary import MS_LEARNING_RATE
from optreg.stages.adam import AdamaxDirection
from optreg.stages.apply import ApplyLR
from optreg.stages.chain import Chain
from optreg.stages.gradient import Centralize, CoupledDecay, Unscale
from optreg.stages.misc import Adadelta as AdadeltaStage
from optreg.stages.misc import AveragedSGD
from optreg.stages.misc import Rprop as RpropStage
from optreg.stages.optimizer import ChainOptimizer

PIPELINE = (CoupledDecay(loss_scaled=True), Centralize(), Unscale())


class ASGD(ChainOptimizer):
    """mindspore.nn.ASGD (2.10): η₁ = lr; w = w·(1 - λ·η) - η·g; ax = w if μ = 1 else ax + μ·(w - ax);
    η = lr/(1 + λ·lr·t)^α, μ = 1/max(1, t - t0) — torch's ASGD after MindSpore's gradient pipeline."""

    chain = Chain(*PIPELINE, AveragedSGD())

    def __init__(self, params: Any, learning_rate: MS_LEARNING_RATE = 0.1, lambd: NonNegFloat = 1e-4,
                 alpha: NonNegFloat = 0.75, t0: NonNegFloat = 1e6, weight_decay: NonNegFloat = 0.0, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None, contiguous_params: Bool = False,
                 state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=learning_rate, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype)


class Rprop(ChainOptimizer):
    """mindspore.nn.Rprop (2.10): per-element step sizes (starting at lr) grow by η+ where the gradient keeps its
    sign and shrink by η- where it flips (that gradient then counts as 0), clamped to step_sizes; w -= step·sign(g)."""

    chain = Chain(*PIPELINE, RpropStage())

    def __init__(self, params: Any, learning_rate: MS_LEARNING_RATE = 0.1, etas: tuple[PosFloat, PosFloat] = (0.5, 1.2),
                 step_sizes: tuple[NonNegFloat, NonNegFloat] = (1e-6, 50.0), weight_decay: NonNegFloat = 0.0, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None, contiguous_params: Bool = False,
                 state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=learning_rate, etas=tuple(etas), step_sizes=tuple(step_sizes),
                                      weight_decay=weight_decay),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype)


class AdaMax(ChainOptimizer):
    """mindspore.nn.AdaMax (2.10, ApplyAdaMax): m = β1·m + (1-β1)·g;  e = max(β2·e, |g|);
    w -= lr/(1 - β1ᵗ) · m/(e + eps)."""

    chain = Chain(*PIPELINE, AdamaxDirection(eps="after"), ApplyLR())

    def __init__(self, params: Any, learning_rate: MS_LEARNING_RATE = 0.001, beta1: StrictPosFloat = 0.9,
                 beta2: StrictPosFloat = 0.999, eps: StrictPosFloat = 1e-8, weight_decay: NonNegFloat = 0.0,
                 loss_scale: PosFloat = 1.0, *, foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=learning_rate, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay,
                                      loss_scale=loss_scale),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype,
                         loss_scale=loss_scale)


class Adadelta(ChainOptimizer):
    """mindspore.nn.Adadelta (2.10, ApplyAdadelta): v = ρ·v + (1-ρ)·g²;  u = √(a + ε)/√(v + ε)·g;
    a = ρ·a + (1-ρ)·u²;  w -= lr·u."""

    chain = Chain(*PIPELINE, AdadeltaStage(eps="epsilon"), ApplyLR())

    def __init__(self, params: Any, learning_rate: MS_LEARNING_RATE = 1.0, rho: NonNegFloat = 0.9,
                 epsilon: StrictPosFloat = 1e-6, loss_scale: PosFloat = 1.0, weight_decay: NonNegFloat = 0.0, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None, contiguous_params: Bool = False,
                 state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=learning_rate, rho=rho, epsilon=epsilon, loss_scale=loss_scale,
                                      weight_decay=weight_decay),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype,
                         loss_scale=loss_scale)

"""Cerebras' ASGD, Adadelta, Rprop and Lion as chains of stages."""

from __future__ import annotations

from typing import Any

from optreg.core.types import ASGDAlpha, Betas, Bool, Float, NonNegFloat, OptionalBool, StateDtype
from optreg.stages.apply import ApplyLR
from optreg.stages.chain import Chain
from optreg.stages.gradient import CoupledDecay, Maximize
from optreg.stages.misc import AveragedSGD
from optreg.stages.misc import Lion as LionStage
from optreg.stages.misc import Rprop as RpropStage
from optreg.stages.optimizer import ChainOptimizer
from optreg.stages.shared import TorchAdadelta




class ASGD(ChainOptimizer):
    """cerebras.pytorch.optim.ASGD (cerebras.pytorch 2.x, 2.10.0 source), numerically torch.optim.ASGD:

        w = w·(1 - λ·η) - η·g';  ax = running average from step t0 on;  η = lr/(1 + λ·lr·t)^α

    t is the parameter's own float32 `state['step']` (enable_global_step); preinitialize() allocates
    eta (= lr), mu (= 1), ax and step; `state_names_to_sparsify()` = ['ax'].
    """

    chain = Chain(Maximize(), CoupledDecay(), AveragedSGD())

    def __init__(self, params: Any, lr: NonNegFloat = 1e-2, lambd: NonNegFloat = 1e-4, alpha: ASGDAlpha = 0.75,
                 t0: NonNegFloat = 1e6, weight_decay: NonNegFloat = 0.0, maximize: Bool = False, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      maximize=maximize),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params,
                         state_dtype=state_dtype, preinit=True)


class Adadelta(TorchAdadelta):
    """cerebras.pytorch.optim.Adadelta (cerebras.pytorch 2.x, 2.10.0 source), numerically torch.optim.Adadelta:

        v = ρ·v + (1-ρ)·g'²;  Δ = √(u + eps)/√(v + eps)·g';  u = ρ·u + (1-ρ)·Δ²;  w -= lr·Δ

    preinitialize() allocates square_avg and acc_delta (both in `state_names_to_sparsify()`).
    """


class Rprop(ChainOptimizer):
    """cerebras.pytorch.optim.Rprop (cerebras.pytorch 2.x, 2.10.0 source), numerically torch.optim.Rprop:

        step sizes × η+ where the gradient keeps its sign, × η- (and g = 0) where it flips, clamped to
        step_sizes;  w -= step·sign(g)

    lr (default 1e-3) is the initial step size; no maximize. step() zeroes p.grad in place where the
    sign flipped, as Cerebras' step does. preinitialize() allocates prev and step_size.
    """

    chain = Chain(RpropStage(mask_grad=True))

    def __init__(self, params: Any, lr: NonNegFloat = 1e-3, etas: tuple[Float, Float] = (0.5, 1.2),
                 step_sizes: tuple[NonNegFloat, NonNegFloat] = (1e-6, 50.0), *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes)),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params,
                         state_dtype=state_dtype, preinit=True)


class Lion(ChainOptimizer):
    """cerebras.pytorch.optim.Lion (cerebras.pytorch 2.10.0 source; Chen et al. 2023):

        w = w·(1 - lr·wd);  w -= lr·sign(β1·m + (1-β1)·g);  m = β2·m + (1-β2)·g

    preinitialize() allocates exp_avg (zeros); no maximize.
    """

    chain = Chain(LionStage(), ApplyLR())

    def __init__(self, params: Any, lr: NonNegFloat = 1e-4, betas: Betas = (0.9, 0.99), weight_decay: NonNegFloat = 0.0,
                 *, foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), weight_decay=weight_decay),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params,
                         state_dtype=state_dtype, preinit=True)

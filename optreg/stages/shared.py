"""Optimizer classes that two frameworks share to the letter (the same chain and signature), each framework's class
a subclass with its own docstring, source and conventions."""

from __future__ import annotations

from typing import Any

from optreg.core.types import Bool, NonNegFloat, OptionalBool, StateDtype, UnitFloat
from optreg.stages.apply import ApplyLR
from optreg.stages.chain import Chain
from optreg.stages.gradient import CoupledDecay, Maximize
from optreg.stages.misc import Adadelta as AdadeltaStage
from optreg.stages.optimizer import ChainOptimizer


class TorchAdadelta(ChainOptimizer):
    """torch.optim.Adadelta's formula and signature (Cerebras' and OneFlow's Adadelta):

        g' = ±g + wd·w;  v = ρ·v + (1-ρ)·g'²;  Δ = √(u + eps)/√(v + eps)·g';  u = ρ·u + (1-ρ)·Δ²;  w -= lr·Δ

    The constructor allocates every parameter's state (square_avg, acc_delta), as both frameworks do;
    `zero_grad_to_none` is zero_grad()'s default set_to_none, the framework's."""

    chain = Chain(Maximize(), CoupledDecay(), AdadeltaStage(), ApplyLR())
    zero_grad_to_none: bool = True

    def __init__(self, params: Any, lr: NonNegFloat = 1.0, rho: UnitFloat = 0.9, eps: NonNegFloat = 1e-6,
                 weight_decay: NonNegFloat = 0.0, maximize: Bool = False, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype,
                         set_to_none=self.zero_grad_to_none, preinit=True)

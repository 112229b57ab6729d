"""Adadelta (Zeiler 2012), as torch 2.x and Cerebras 2.x compute it."""

from __future__ import annotations

from typing import Any, Iterable

import torch

from optreg.core.optimizer import Optimizer, StepInfo


def adadelta_update(param: torch.Tensor, grad: torch.Tensor, square_avg: torch.Tensor, acc_delta: torch.Tensor, *,
                    lr: float, rho: float, eps: float, weight_decay: float) -> None:
    """One Adadelta step of one tensor, in place.

    g' = g + wd*w;  v = rho*v + (1-rho)*g'^2;  dx = sqrt(u + eps)/sqrt(v + eps) * g';
    u = rho*u + (1-rho)*dx^2;  w <- w - lr*dx.
    """
    if weight_decay:
        grad = grad.add(param, alpha=weight_decay)
    square_avg.mul_(rho).addcmul_(grad, grad, value=1.0 - rho)
    std = square_avg.add(eps).sqrt_()
    delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
    acc_delta.mul_(rho).addcmul_(delta, delta, value=1.0 - rho)
    param.add_(delta, alpha=-lr)


class Adadelta(Optimizer):
    """Adadelta with L2 weight decay and `maximize`; Cerebras' entry turns on `preinit`."""

    sparsify_states = ("square_avg", "acc_delta")

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        maximize: bool = False,
        *,
        preinit: bool = False,
        set_to_none: bool = True,
    ) -> None:
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults, preinit=preinit, set_to_none=set_to_none)

    def init_state(self, p: torch.Tensor, group: dict[str, Any]) -> dict[str, Any]:
        return {"square_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
                "acc_delta": torch.zeros_like(p, memory_format=torch.preserve_format)}

    def update(self, p: torch.Tensor, grad: torch.Tensor, state: dict[str, Any], group: dict[str, Any],
               info: StepInfo) -> None:
        if group["maximize"]:
            grad = -grad
        adadelta_update(p, grad, state["square_avg"], state["acc_delta"], lr=info.lr, rho=group["rho"],
                        eps=group["eps"], weight_decay=group["weight_decay"])

"""SGD with momentum: one implementation whose knobs are the details in which the frameworks differ.

torch / MindSpore SGD and Momentum start the momentum buffer at the first gradient; OneFlow and
Cerebras start it at zero, so their first step is damped by `(1 - dampening)`. OneFlow's `maximize`
flips the sign of the whole update (weight decay included) and only acts when momentum > 0.
"""

from __future__ import annotations

import warnings
from typing import Any, Iterable

import torch

from optreg.core.optimizer import Optimizer, StepInfo


def sgd_update(
    param: torch.Tensor,
    grad: torch.Tensor,
    buf: torch.Tensor | None,
    *,
    lr: float,
    momentum: float,
    dampening: float,
    weight_decay: float,
    nesterov: bool,
    direction: float = -1.0,
) -> torch.Tensor | None:
    """One SGD step of one tensor, in place; returns the momentum buffer (a new one when `buf` is None).

    g' = g + wd*w;  b = g' if `buf` is None else mu*b + (1 - dampening)*g';
    d = g' + mu*b (nesterov), b (momentum > 0) or g';  w <- w + direction*lr*d.
    """
    if weight_decay:
        grad = grad.add(param, alpha=weight_decay)
    if momentum:
        if buf is None:
            buf = grad.clone()
        else:
            buf.mul_(momentum).add_(grad, alpha=1.0 - dampening)
        grad = grad.add(buf, alpha=momentum) if nesterov else buf
    param.add_(grad, alpha=direction * lr)
    return buf


class SGD(Optimizer):
    """SGD with momentum, dampening, Nesterov and L2 weight decay; reproduces torch 2.x, OneFlow,
    Cerebras 2.x and MindSpore SGD / Momentum through its knobs.

    Knobs (keyword-only; a dialect row fixes them):
      zero_init_buffer       the buffer starts at 0, so step 1 gives b = (1 - dampening)*g (OneFlow, Cerebras);
                             otherwise b = g on step 1 (torch, MindSpore).
      maximize_flips_update  `maximize` flips the sign of the update, L2 term included, and only when
                             momentum > 0 (OneFlow's `MomentumUpdateFunctor`); otherwise it negates the gradient.
      loss_scale, coupled_decay, preinit, set_to_none: dialect features of the base class.
    A sparse gradient is applied as its dense equivalent (rows it does not touch see a zero gradient).
    """

    sparsify_states = ("momentum_buffer",)
    supports_sparse = True

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        maximize: bool = False,
        *,
        zero_init_buffer: bool = False,
        maximize_flips_update: bool = False,
        loss_scale: float = 1.0,
        coupled_decay: bool = False,
        preinit: bool = False,
        set_to_none: bool = True,
    ) -> None:
        self.zero_init_buffer = bool(zero_init_buffer)
        self.maximize_flips_update = bool(maximize_flips_update)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize)
        super().__init__(params, defaults, loss_scale=loss_scale, coupled_decay=coupled_decay,
                         preinit=preinit, set_to_none=set_to_none)
        if self.maximize_flips_update and any(g["maximize"] and not g["momentum"] for g in self.param_groups):
            warnings.warn("maximize has an effect only when momentum > 0 (OneFlow SGD)", UserWarning, stacklevel=2)

    def init_state(self, p: torch.Tensor, group: dict[str, Any]) -> dict[str, Any]:
        if group["momentum"] and self.zero_init_buffer:
            return {"momentum_buffer": torch.zeros_like(p, memory_format=torch.preserve_format)}
        return {}

    def update(self, p: torch.Tensor, grad: torch.Tensor, state: dict[str, Any], group: dict[str, Any],
               info: StepInfo) -> None:
        if grad.is_sparse:
            grad = grad.to_dense()
        direction = -1.0
        if group["maximize"]:
            if self.maximize_flips_update:
                direction = 1.0 if group["momentum"] else -1.0
            else:
                grad = -grad
        buf = sgd_update(
            p, grad, state.get("momentum_buffer"),
            lr=info.lr,
            momentum=group["momentum"],
            dampening=group["dampening"],
            weight_decay=0.0 if self.coupled_decay else group["weight_decay"],
            nesterov=group["nesterov"],
            direction=direction,
        )
        if buf is not None:
            state["momentum_buffer"] = buf


"""Rprop (Riedmiller & Braun 1993), as torch 2.x and Cerebras 2.x compute it."""

from __future__ import annotations

from typing import Any, Iterable

import torch

from optreg.core.optimizer import Optimizer, StepInfo


def rprop_update(param: torch.Tensor, grad: torch.Tensor, prev: torch.Tensor, step_size: torch.Tensor, *,
                 etas: tuple[float, float], step_sizes: tuple[float, float]) -> torch.Tensor:
    """One Rprop step of one tensor, in place; returns the sign-flip mask.

    s = g*prev;  eta <- clamp(eta * (eta_plus if s > 0, eta_minus if s < 0, else 1), min_step, max_step);
    g <- 0 where s < 0;  w <- w - eta*sign(g);  prev <- g.
    """
    eta_minus, eta_plus = etas
    sign = grad.mul(prev).sign()
    flipped = sign < 0
    factor = torch.ones_like(step_size).masked_fill_(sign > 0, eta_plus).masked_fill_(flipped, eta_minus)
    step_size.mul_(factor).clamp_(step_sizes[0], step_sizes[1])
    grad = grad.masked_fill(flipped, 0)
    param.addcmul_(grad.sign(), step_size, value=-1.0)
    prev.copy_(grad)
    return flipped


class Rprop(Optimizer):
    """Rprop with `maximize`; reproduces torch 2.x and Cerebras 2.x Rprop.

    Knobs (keyword-only; a dialect row fixes them):
      mask_grad_in_place  also zero `p.grad` where the gradient's sign flipped, as Cerebras' step does
                          (it multiplies `p.grad` in place by the mask); torch works on a copy.
      preinit, set_to_none: dialect features of the base class.
    """

    sparsify_states = ("prev", "step_size")

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50.0),
        maximize: bool = False,
        *,
        mask_grad_in_place: bool = False,
        preinit: bool = False,
        set_to_none: bool = True,
    ) -> None:
        self.mask_grad_in_place = bool(mask_grad_in_place)
        defaults = dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), maximize=maximize)
        super().__init__(params, defaults, preinit=preinit, set_to_none=set_to_none)

    def init_state(self, p: torch.Tensor, group: dict[str, Any]) -> dict[str, Any]:
        return {"prev": torch.zeros_like(p, memory_format=torch.preserve_format),
                "step_size": torch.full_like(p, group["lr"], memory_format=torch.preserve_format)}

    def update(self, p: torch.Tensor, grad: torch.Tensor, state: dict[str, Any], group: dict[str, Any],
               info: StepInfo) -> None:
        if group["maximize"]:
            grad = -grad
        flipped = rprop_update(p, grad, state["prev"], state["step_size"], etas=group["etas"],
                               step_sizes=group["step_sizes"])
        if self.mask_grad_in_place:
            p.grad.masked_fill_(flipped, 0)

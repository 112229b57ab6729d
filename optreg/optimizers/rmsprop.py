"""RMSProp: one implementation whose knobs are the details in which the frameworks differ.

torch and Cerebras divide by `sqrt(v) + eps`; OneFlow and MindSpore by `sqrt(v + eps)`. MindSpore
starts the mean square at 1 (its `mean_square` slot is initialised with ones) and keeps the learning
rate inside the momentum buffer (`m = beta*m + lr*g/sqrt(s + eps); w -= m`), which differs from
torch's `b = beta*b + g/avg; w -= lr*b` only when the learning rate changes between steps.
"""

from __future__ import annotations

from typing import Any, Iterable

import torch

from optreg.core.optimizer import Optimizer, StepInfo


def rmsprop_update(
    param: torch.Tensor,
    grad: torch.Tensor,
    square_avg: torch.Tensor,
    grad_avg: torch.Tensor | None,
    buf: torch.Tensor | None,
    *,
    lr: float,
    alpha: float,
    eps: float,
    weight_decay: float,
    momentum: float,
    eps_inside_sqrt: bool,
    lr_in_momentum: bool,
) -> None:
    """One RMSProp step of one tensor, in place.

    g' = g + wd*w;  v = alpha*v + (1-alpha)*g'^2;  centered (grad_avg given): a = alpha*a + (1-alpha)*g', v~ = v - a^2;
    denom = sqrt(v~ + eps) if eps_inside_sqrt else sqrt(v~) + eps;
    momentum > 0: b = mu*b + [lr*] g'/denom, w <- w - [lr*] b  (lr inside the buffer when lr_in_momentum);
    otherwise w <- w - lr*g'/denom.
    """
    if weight_decay:
        grad = grad.add(param, alpha=weight_decay)
    square_avg.mul_(alpha).addcmul_(grad, grad, value=1.0 - alpha)
    if grad_avg is not None:
        grad_avg.mul_(alpha).add_(grad, alpha=1.0 - alpha)
        var = square_avg.addcmul(grad_avg, grad_avg, value=-1.0)
    else:
        var = square_avg
    denom = var.add(eps).sqrt_() if eps_inside_sqrt else var.sqrt().add_(eps)
    if momentum > 0:
        assert buf is not None
        if lr_in_momentum:
            buf.mul_(momentum).addcdiv_(grad, denom, value=lr)
            param.sub_(buf)
        else:
            buf.mul_(momentum).addcdiv_(grad, denom)
            param.add_(buf, alpha=-lr)
    else:
        param.addcdiv_(grad, denom, value=-lr)


class RMSprop(Optimizer):
    """RMSProp with momentum, centering and L2 weight decay; reproduces torch 2.x / Cerebras 2.x,
    OneFlow and MindSpore RMSProp through its knobs.

    Knobs (keyword-only; a dialect row fixes them):
      eps_inside_sqrt     divide by sqrt(v + eps) (OneFlow, MindSpore) instead of sqrt(v) + eps.
      initial_square_avg  start value of the mean square (MindSpore 1.0; torch, OneFlow, Cerebras 0.0).
      lr_in_momentum      the momentum buffer accumulates lr*g/denom and is subtracted as is (MindSpore).
      use_locking         MindSpore's option; accepted, no numeric effect.
      loss_scale, coupled_decay, preinit, set_to_none: dialect features of the base class.
    """

    sparsify_states = ("square_avg", "momentum_buffer", "grad_avg")

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        maximize: bool = False,
        *,
        use_locking: bool = False,
        eps_inside_sqrt: bool = False,
        initial_square_avg: float = 0.0,
        lr_in_momentum: bool = False,
        loss_scale: float = 1.0,
        coupled_decay: bool = False,
        preinit: bool = False,
        set_to_none: bool = True,
    ) -> None:
        self.use_locking = bool(use_locking)
        self.eps_inside_sqrt = bool(eps_inside_sqrt)
        self.initial_square_avg = float(initial_square_avg)
        self.lr_in_momentum = bool(lr_in_momentum)
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                        centered=centered, maximize=maximize)
        super().__init__(params, defaults, loss_scale=loss_scale, coupled_decay=coupled_decay,
                         preinit=preinit, set_to_none=set_to_none)

    def init_state(self, p: torch.Tensor, group: dict[str, Any]) -> dict[str, Any]:
        state = {"square_avg": torch.full_like(p, self.initial_square_avg, memory_format=torch.preserve_format)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        if group["centered"]:
            state["grad_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        return state

    def update(self, p: torch.Tensor, grad: torch.Tensor, state: dict[str, Any], group: dict[str, Any],
               info: StepInfo) -> None:
        if group["maximize"]:
            grad = -grad
        for name, wanted in (("momentum_buffer", group["momentum"] > 0), ("grad_avg", group["centered"])):
            if wanted and name not in state:  # the group's momentum / centered changed after the state was made
                state[name] = torch.zeros_like(p, memory_format=torch.preserve_format)
        rmsprop_update(
            p, grad, state["square_avg"], state.get("grad_avg") if group["centered"] else None,
            state.get("momentum_buffer"),
            lr=info.lr,
            alpha=group["alpha"],
            eps=group["eps"],
            weight_decay=0.0 if self.coupled_decay else group["weight_decay"],
            momentum=group["momentum"],
            eps_inside_sqrt=self.eps_inside_sqrt,
            lr_in_momentum=self.lr_in_momentum,
        )

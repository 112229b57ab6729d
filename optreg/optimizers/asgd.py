"""Averaged SGD (Polyak & Juditsky 1992), as torch 2.x and Cerebras 2.x compute it."""

from __future__ import annotations

from typing import Any, Iterable

import torch

from optreg.core.optimizer import Optimizer, StepInfo


def _scalar(value: float, p: torch.Tensor) -> torch.Tensor:
    """A 0-d state tensor on p's device: float64 for float64 parameters, float32 otherwise."""
    dtype = torch.float64 if p.dtype == torch.float64 else torch.float32
    return torch.tensor(value, dtype=dtype, device=p.device)


def asgd_update(param: torch.Tensor, grad: torch.Tensor, ax: torch.Tensor, eta: torch.Tensor, mu: torch.Tensor,
                step: float, *, lr: float, lambd: float, alpha: float, t0: float, weight_decay: float) -> None:
    """One ASGD step of one tensor (its `step`-th, 1-based), in place.

    g' = g + wd*w;  w <- w*(1 - lambd*eta) - eta*g';  ax <- w if mu == 1 else ax + mu*(w - ax);
    eta <- lr/(1 + lambd*lr*t)^alpha;  mu <- 1/max(1, t - t0).
    """
    if weight_decay:
        grad = grad.add(param, alpha=weight_decay)
    param.mul_(1.0 - lambd * eta)
    param.addcmul_(grad, eta, value=-1.0)
    if float(mu) == 1.0:
        ax.copy_(param)
    else:
        ax.add_(param.sub(ax).mul_(mu))
    eta.fill_(lr / (1.0 + lambd * lr * step) ** alpha)
    mu.fill_(1.0 / max(1.0, step - t0))


class ASGD(Optimizer):
    """Averaged SGD with L2 weight decay and `maximize`; the averaged parameter is `state[p]["ax"]`.

    Every parameter keeps its own float32 step (`state[p]["step"]`, Cerebras' global step); `eta` and
    `mu` are 0-d tensors (float64 for float64 parameters). Cerebras' entry turns on `preinit`.
    """

    sparsify_states = ("ax",)

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0.0,
        maximize: bool = False,
        *,
        preinit: bool = False,
        set_to_none: bool = True,
    ) -> None:
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults, preinit=preinit, enable_global_step=True, set_to_none=set_to_none)

    def init_state(self, p: torch.Tensor, group: dict[str, Any]) -> dict[str, Any]:
        return {"eta": _scalar(group["lr"], p), "mu": _scalar(1.0, p),
                "ax": torch.zeros_like(p, memory_format=torch.preserve_format)}

    def update(self, p: torch.Tensor, grad: torch.Tensor, state: dict[str, Any], group: dict[str, Any],
               info: StepInfo) -> None:
        if group["maximize"]:
            grad = -grad
        step = float(self.increment_global_step(p))
        asgd_update(p, grad, state["ax"], state["eta"], state["mu"], step, lr=info.lr, lambd=group["lambd"],
                    alpha=group["alpha"], t0=group["t0"], weight_decay=group["weight_decay"])

"""A third-party optreg plugin: sign SGD and a halving schedule, registered through entry points."""

from __future__ import annotations

import torch
from torch.optim.lr_scheduler import LRScheduler


def sign_step(param: torch.Tensor, grad: torch.Tensor, lr: float, weight_decay: float) -> None:
    """w <- w - lr * (sign(g) + weight_decay * w)."""
    param.add_(torch.sign(grad) + weight_decay * param, alpha=-lr)


class SignSGD(torch.optim.Optimizer):
    """Sign SGD: w -= lr * (sign(g) + weight_decay * w)."""

    def __init__(self, params, lr: float = 0.01, weight_decay: float = 0.0):
        super().__init__(params, {"lr": lr, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    sign_step(p, p.grad, group["lr"], group["weight_decay"])
        return loss


class HalvingLR(LRScheduler):
    """lr = base_lr * 0.5 ** (step // every)."""

    def __init__(self, optimizer, every: int = 10, last_epoch: int = -1):
        self.every = every
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * 0.5 ** (self.last_epoch // self.every) for base in self.base_lrs]


def optimizer_rows(registry):
    from optreg.core.entry import optimizer

    return [optimizer("torch", "SignSGD", "optreg_testplugin:SignSGD", "Sign SGD: w -= lr·sign(g).",
                      source="optreg-testplugin 0.1")]


def scheduler_rows(registry):
    from optreg.core.entry import scheduler

    return [scheduler("torch", "HalvingLR", "optreg_testplugin:HalvingLR", "Halves the lr every `every` steps.",
                      values="factor", source="optreg-testplugin 0.1")]

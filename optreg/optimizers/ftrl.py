"""FTRL-Proximal (McMahan et al. 2013) as TensorFlow's / MindSpore's ApplyFtrl.

With accumulator n (starts at initial_accum), linear z (starts at 0), p = lr_power (<= 0):

    n' = n + g^2
    z  = z + g - (n'^(-p) - n^(-p)) / lr * w
    w  = (sign(z) * l1 - z) / (n'^(-p) / lr + 2 * l2)   if |z| > l1, else 0
    n  = n'

Reproduces mindspore.nn.FTRL (1.6 - 2.x): gradients go through MindSpore's pipeline first
(weight decay on every parameter when ungrouped, centralisation, loss-scale division).
"""

from __future__ import annotations

from typing import Any, Iterable

import torch

from optreg.errors import ConfigError
from optreg.core.optimizer import Optimizer


def ftrl_step(p: torch.Tensor, grad: torch.Tensor, accum: torch.Tensor, linear: torch.Tensor, *,
              lr: float, lr_power: float, l1: float, l2: float) -> None:
    """One FTRL-Proximal step on one tensor (see the module docstring)."""
    accum_new = accum + grad * grad
    if lr_power == -0.5:
        sigma = (accum_new.sqrt() - accum.sqrt()) / lr
        quadratic = accum_new.sqrt() / lr + 2.0 * l2
    else:
        sigma = (accum_new.pow(-lr_power) - accum.pow(-lr_power)) / lr
        quadratic = accum_new.pow(-lr_power) / lr + 2.0 * l2
    linear.add_(grad).sub_(sigma * p)
    shrunk = torch.sign(linear) * l1 - linear
    p.copy_(torch.where(linear.abs() > l1, shrunk / quadratic, torch.zeros_like(p)))
    accum.copy_(accum_new)


class FTRL(Optimizer):
    """FTRL-Proximal with MindSpore's gradient pipeline (coupled weight decay, loss scale)."""

    sparsify_states = ("accum", "linear")
    supports_sparse = True

    def __init__(
        self,
        params: Iterable[Any],
        initial_accum: float = 0.1,
        learning_rate: float = 0.001,
        lr_power: float = -0.5,
        l1: float = 0.0,
        l2: float = 0.0,
        use_locking: bool = False,
        loss_scale: float = 1.0,
        weight_decay: float = 0.0,
    ) -> None:
        self.use_locking = bool(use_locking)
        defaults = dict(lr=learning_rate, initial_accum=initial_accum, lr_power=lr_power, l1=l1, l2=l2,
                        weight_decay=weight_decay)
        super().__init__(params, defaults, loss_scale=loss_scale, coupled_decay=True)
        for i, group in enumerate(self.param_groups):
            if group.get("lr_schedule") is not None or group["lr"] != self.defaults["lr"]:
                raise ConfigError(
                    "FTRL supports neither a dynamic learning rate nor per-group learning rates",
                    f"param_groups[{i}].lr" if len(self.param_groups) > 1 else "learning_rate",
                )

    def init_state(self, p, group):
        return {
            "accum": torch.full_like(p, group["initial_accum"], memory_format=torch.preserve_format),
            "linear": torch.zeros_like(p, memory_format=torch.preserve_format),
        }

    def update(self, p, grad, state, group, info) -> None:
        knobs = dict(lr=info.lr, lr_power=group["lr_power"], l1=group["l1"], l2=group["l2"])
        if not grad.is_sparse:
            ftrl_step(p, grad, state["accum"], state["linear"], **knobs)
            return
        # sparse: only the rows the gradient touches (duplicates summed), as SparseApplyFtrl
        grad = grad.coalesce()
        rows = grad.indices()[0]
        w, accum, linear = p[rows], state["accum"][rows], state["linear"][rows]
        ftrl_step(w, grad.values(), accum, linear, **knobs)
        p[rows], state["accum"][rows], state["linear"][rows] = w, accum, linear

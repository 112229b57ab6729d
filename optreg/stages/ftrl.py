"""FTRL-Proximal (McMahan et al. 2013, "Ad Click Prediction"), as TensorFlow's / MindSpore's ApplyFtrl.

With accumulator n (n₀ = initial_accum), linear z (z₀ = 0) and p = lr_power (<= 0):

    n' = n + g²
    z  = z + g - (n'^(-p) - n^(-p)) / lr · w
    w  = (sign(z)·l1 - z) / (n'^(-p)/lr + 2·l2)   if |z| > l1, else 0
    n  = n'
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from optreg.stages.chain import Batch, Stage, zeros


class FtrlProximal(Stage):
    """One FTRL-Proximal step (see the module docstring); MindSpore 1.6 - 2.x nn.FTRL's documented
    ApplyFtrl formula (lr_power = -0.5 takes square roots, as the kernels do)."""

    state_names = ("accum", "linear")
    sparsify = ("accum", "linear")
    shrinks = {"accum": "unsigned", "linear": "signed"}

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        return {"accum": torch.full_like(p, group["initial_accum"], memory_format=torch.preserve_format),
                "linear": zeros(p)}

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        hp["ftrl_sqrt"] = float(group["lr_power"]) == -0.5
        hp["ftrl_neg_power"] = -float(group["lr_power"])

    def apply(self, b: Batch) -> None:
        ops, hp = b.ops, b.hp
        acc, lin, lr = b.state["accum"], b.state["linear"], hp["lr"]
        acc_new = ops.addcmul_(ops.clone(acc), b.u, b.u, value=1.0)
        if hp["ftrl_sqrt"]:
            new_pow, old_pow = ops.sqrt(acc_new), ops.sqrt(acc)
        else:
            new_pow, old_pow = ops.pow(acc_new, hp["ftrl_neg_power"]), ops.pow(acc, hp["ftrl_neg_power"])
        sigma = ops.div_(ops.add_(ops.clone(new_pow), old_pow, alpha=-1.0), lr)
        quadratic = ops.add_(ops.div_(new_pow, lr), 2.0 * hp["l2"])
        ops.add_(ops.add_(lin, b.u), ops.mul_(sigma, b.params), alpha=-1.0)
        shrunk = ops.add_(ops.mul(ops.sign(lin), hp["l1"]), lin, alpha=-1.0)
        ops.copy_(b.params, ops.where(ops.gt(ops.abs(lin), hp["l1"]), ops.div_(shrunk, quadratic), 0.0))
        ops.copy_(acc, acc_new)

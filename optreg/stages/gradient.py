"""The gradient pipeline: stages that turn the raw gradient into the one the rule sees.

MindSpore's order (nn.Optimizer 1.6 - 2.x, `decay_weight` → `gradients_centralization` →
`scale_grad`): the coupled decay is added to the still loss-scaled gradient, then centralised,
then unscaled. torch's order for `maximize` and L2 decay: `g = -g` first, then `g += wd·w`.
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from optreg.stages.chain import Batch, Stage


class Maximize(Stage):
    """`g = -g` when the group's `maximize` is set (torch)."""

    def apply(self, b: Batch) -> None:
        if b.hp.get("maximize"):
            b.u = b.ops.mul(b.u, -1.0)


class CoupledDecay(Stage):
    """L2 weight decay in the gradient: `g += wd·w` (torch, OneFlow, Cerebras).

    loss_scaled=True is MindSpore's `decay_weight`: `g += wd·loss_scale·w` on the gradient that is
    still multiplied by the loss scale (an `Unscale` stage follows).
    unless: a group option that, when true, turns this decay off (OneFlow LAMB `adam_w_mode`: the
    decay is decoupled instead, see `DecoupledDecay(when=...)`).
    """

    def __init__(self, loss_scaled: bool = False, unless: str | None = None) -> None:
        self.loss_scaled = loss_scaled
        self.unless = unless

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        wd = float(group.get("weight_decay", 0.0) or 0.0)
        # not "l2": an option of FTRL, ProximalAdagrad
        hp["coupled_wd"] = wd * float(group.get("loss_scale", 1.0)) if self.loss_scaled else wd
        hp["l2_on"] = wd != 0.0 and not (self.unless is not None and bool(group.get(self.unless)))

    def apply(self, b: Batch) -> None:
        if b.hp["l2_on"]:
            b.u = b.ops.add(b.u, b.params, alpha=b.hp["coupled_wd"])


def centralize(grad: torch.Tensor) -> torch.Tensor:
    """MindSpore's gradient centralisation: `g - mean(g over dims 1..n-1)`, or `g` unchanged.

    MindSpore's code centralises a gradient when it has at least 2 dims and `shape[1] % 16 == 0`
    (the docs say "convolution layers"; the code checks only these two conditions).
    """
    if grad.dim() < 2 or grad.shape[1] % 16 != 0:
        return grad
    return grad - grad.mean(dim=tuple(range(1, grad.dim())), keepdim=True)


class Centralize(Stage):
    """MindSpore's `grad_centralization` for groups that set it (see `centralize`)."""

    def needs_shape(self, hp: Mapping[str, Any]) -> bool:
        return bool(hp.get("grad_centralization"))

    def apply(self, b: Batch) -> None:
        if b.hp.get("grad_centralization"):
            b.u = [centralize(g) for g in b.u]


class Unscale(Stage):
    """`g /= loss_scale` (MindSpore `scale_grad`: multiplies by `1 / loss_scale`)."""

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        hp["inv_loss_scale"] = 1.0 / float(group.get("loss_scale", 1.0))
        hp["unscale_on"] = float(group.get("loss_scale", 1.0)) != 1.0

    def apply(self, b: Batch) -> None:
        if b.hp["unscale_on"]:
            b.u = b.ops.mul(b.u, b.hp["inv_loss_scale"])

"""SGD-family stages: heavy-ball momentum (dampening, Nesterov, where the buffer starts) and OneFlow's
`maximize`, which flips the sign of the whole update.

    buf = μ·buf + (1-dampening)·g;   u = g + μ·buf (Nesterov) or buf       (torch.optim.SGD's form)
"""

from __future__ import annotations

from typing import Any, Literal, Mapping

import torch

from optreg.stages.chain import Batch, Stage, scalar_state, zeros


class Momentum(Stage):
    """buf = μ·buf + (1-dampening)·g; u = g + μ·buf with Nesterov, else u = buf (no-op when μ = 0).

    start="zero": the buffer starts at 0, so buf₁ = (1-dampening)·g (OneFlow MomentumUpdateFunctor,
                  Cerebras 2.x SGD's preinitialized buffer; MindSpore ApplyMomentum, which has no dampening).
    start="grad": buf₁ = g (torch.optim.SGD; MindSpore's SGD kernel with its per-parameter `stat` flag):
                  the zero buffer plus a 0-d `stat` state, 1 until the parameter's first step; the first
                  step takes g exactly (a `where`, only when dampening ≠ 0: with dampening 0 both agree).
    nesterov:     the group option that switches Nesterov (MindSpore Momentum: "use_nesterov").
    The buffer exists for groups with momentum ≠ 0 (as torch, no buffer for plain SGD).
    """

    state_names = ("momentum_buffer", "stat")
    sparsify = ("momentum_buffer",)
    shrinks = {"momentum_buffer": "signed"}

    def __init__(self, start: Literal["zero", "grad"] = "zero", nesterov: str = "nesterov") -> None:
        self.start = start
        self.nesterov = nesterov

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        if not group.get("momentum"):
            return {}
        state = {"momentum_buffer": zeros(p)}
        if self.start == "grad":
            state["stat"] = scalar_state(1.0, p)
        return state

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        dampening = float(group.get("dampening", 0.0) or 0.0)
        hp["momentum_on"] = bool(group.get("momentum"))
        hp["one_minus_dampening"] = 1.0 - dampening
        hp["first_step_exact"] = self.start == "grad" and dampening != 0.0
        hp["nesterov_on"] = bool(group.get(self.nesterov, False))

    def apply(self, b: Batch) -> None:
        hp, ops = b.hp, b.ops
        if not hp["momentum_on"]:
            return
        mu, buf = hp["momentum"], b.state["momentum_buffer"]
        ops.add_(ops.mul_(buf, mu), b.u, alpha=hp["one_minus_dampening"])
        if self.start == "grad":
            stat = b.state["stat"]
            if hp["first_step_exact"]:
                ops.copy_(buf, ops.where([s > 0 for s in stat], b.u, buf))
            ops.mul_(stat, 0.0)
        b.u = ops.add(b.u, buf, alpha=mu) if hp["nesterov_on"] else buf


class FlipUpdate(Stage):
    """OneFlow's `maximize` (MomentumUpdateFunctor, OneFlow master 2025-08): with momentum > 0 the whole
    update changes sign, L2 term included (the kernel steps by +lr); without momentum it has no effect."""

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        hp["flip_on"] = bool(group.get("maximize")) and bool(group.get("momentum"))

    def apply(self, b: Batch) -> None:
        if b.hp["flip_on"]:
            b.u = b.ops.mul(b.u, -1.0)

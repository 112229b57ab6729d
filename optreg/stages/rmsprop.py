"""RMSProp stages: the mean square (and mean gradient when centered), the denominator with eps inside or
outside the root, and the step with or without momentum (lr outside or inside the momentum buffer).

    v = α·v + (1-α)·g²,   w = w - lr · g / (√v + ε)        (Hinton, Lecture 6e; torch.optim.RMSprop)
"""

from __future__ import annotations

from typing import Any, Literal, Mapping

import torch

from optreg.stages.chain import Batch, Stage, zeros


class MeanSquare(Stage):
    """v = α·v + (1-α)·g²; with the group's `centered`, ḡ = α·ḡ + (1-α)·g and var = v - ḡ².

    decay: the option holding α (`alpha`; MindSpore `decay`);
    init:  v₀ (0 in torch, Cerebras, OneFlow; 1 in MindSpore, whose `mean_square` slot starts at ones).
    Slot out: `var` (v, or v - ḡ² when centered).
    """

    state_names = ("square_avg", "grad_avg")
    sparsify = ("square_avg", "grad_avg")
    shrinks = {"square_avg": "unsigned", "grad_avg": "signed"}

    def __init__(self, decay: str = "alpha", init: float = 0.0) -> None:
        self.decay = decay
        self.init_value = init

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        state = {"square_avg": torch.full_like(p, self.init_value, memory_format=torch.preserve_format)}
        if group.get("centered"):
            state["grad_avg"] = zeros(p)
        return state

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        alpha = float(group[self.decay])
        hp["ms_alpha"], hp["ms_one_minus_alpha"] = alpha, 1.0 - alpha
        hp["centered_on"] = bool(group.get("centered"))

    def apply(self, b: Batch) -> None:
        ops, hp = b.ops, b.hp
        v = b.state["square_avg"]
        ops.addcmul_(ops.mul_(v, hp["ms_alpha"]), b.u, b.u, value=hp["ms_one_minus_alpha"])
        if hp["centered_on"]:
            a = b.state["grad_avg"]
            ops.add_(ops.mul_(a, hp["ms_alpha"]), b.u, alpha=hp["ms_one_minus_alpha"])
            b.slots["var"] = ops.addcmul_(ops.clone(v), a, a, value=-1.0)
        else:
            b.slots["var"] = v


class RMSDenominator(Stage):
    """den = √var + ε (eps="outside": torch, Cerebras) or √(var + ε) (eps="inside": OneFlow's
    RmsPropUpdateFunctor, MindSpore ApplyRMSProp); `name` is the option holding ε (MindSpore `epsilon`).
    Slot out: `den`.
    """

    def __init__(self, eps: Literal["outside", "inside"] = "outside", name: str = "eps") -> None:
        self.eps = eps
        self.name = name

    def apply(self, b: Batch) -> None:
        ops, eps = b.ops, b.hp[self.name]
        var = b.slots["var"]
        b.slots["den"] = ops.sqrt_(ops.add(var, eps)) if self.eps == "inside" else ops.add_(ops.sqrt(var), eps)


class RMSStep(Stage):
    """w = w - lr·g/den; with the group's `momentum` μ > 0 a buffer b:

    lr_in_momentum=False: b = μ·b + g/den,     w = w - lr·b     (torch, Cerebras)
    lr_in_momentum=True:  b = μ·b + lr·g/den,  w = w - b        (MindSpore ApplyRMSProp: differs from
                                                                 torch only when the lr changes)
    """

    state_names = ("momentum_buffer",)
    sparsify = ("momentum_buffer",)
    shrinks = {"momentum_buffer": "signed"}

    def __init__(self, lr_in_momentum: bool = False) -> None:
        self.lr_in_momentum = lr_in_momentum

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        return {"momentum_buffer": zeros(p)} if float(group.get("momentum", 0.0) or 0.0) > 0 else {}

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        hp["neg_lr"] = -float(group["lr"])
        hp["momentum_on"] = float(group.get("momentum", 0.0) or 0.0) > 0

    def apply(self, b: Batch) -> None:
        ops, hp, den = b.ops, b.hp, b.slots["den"]
        if not hp["momentum_on"]:
            ops.addcdiv_(b.params, b.u, den, value=hp["neg_lr"])
            return
        buf = ops.mul_(b.state["momentum_buffer"], hp["momentum"])
        if self.lr_in_momentum:
            ops.addcdiv_(buf, b.u, den, value=hp["lr"])
            ops.add_(b.params, buf, alpha=-1.0)
        else:
            ops.addcdiv_(buf, b.u, den)
            ops.add_(b.params, buf, alpha=hp["neg_lr"])

"""Adagrad-family stages: the squared-gradient accumulator, the decaying learning rate, the step
divided by the accumulator's root, and MindSpore's proximal (FOBOS) step.

    s = s + g²,   w = w - lr_t · g / (√s + ε)              (Duchi, Hazan & Singer 2011; torch.optim.Adagrad)
"""

from __future__ import annotations

from typing import Any, Literal, Mapping

import torch

from optreg.stages.chain import Batch, Stage


class Accumulate(Stage):
    """s = s + g² (Adagrad's sum of squared gradients), s₀ = the group's `init` option.

    state: the state's name (`sum`: torch, Cerebras, OneFlow, MindSpore Adagrad; `accum`: MindSpore
           ProximalAdagrad); init: the option holding s₀ (`initial_accumulator_value`, MindSpore `accum`);
    flag:  a group option that switches the accumulation (MindSpore `update_slots`; False keeps s = s₀).
    Slot out: `acc` (s).
    """

    def __init__(self, state: str = "sum", init: str = "initial_accumulator_value", flag: str | None = None) -> None:
        self.state = state
        self.init_option = init
        self.flag = flag
        self.state_names = (state,)
        self.sparsify = (state,)
        self.shrinks = {state: "unsigned"}

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        return {self.state: torch.full_like(p, group[self.init_option], memory_format=torch.preserve_format)}

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        hp["accumulate_on"] = self.flag is None or bool(group.get(self.flag, True))

    def apply(self, b: Batch) -> None:
        acc = b.state[self.state]
        if b.hp["accumulate_on"]:
            b.ops.addcmul_(acc, b.u, b.u, value=1.0)
        b.slots["acc"] = acc


class LRDecay(Stage):
    """lr_t = lr / (1 + (t-1)·lr_decay) into `slots["neg_lr"]` (as -lr_t), torch's Adagrad decay.

    counter="global": t is the optimizer-wide step (OneFlow's `train_step`; a host scalar).
    counter="own":    t is the parameter's own float32 `state["step"]`, advanced here (torch, Cerebras
                      `increment_global_step`); read on the host per tensor as torch does, traced as a tensor.
    """

    def __init__(self, counter: Literal["global", "own"] = "global") -> None:
        self.counter = counter
        self.state_names = ("step",) if counter == "own" else ()

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        if self.counter != "own":
            return {}
        return {"step": torch.tensor(0.0, dtype=torch.float32, device=p.device)}

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        if self.counter == "global":
            hp["neg_clr"] = -(float(group["lr"]) / (1.0 + (hp["step"] - 1) * float(group["lr_decay"])))

    def apply(self, b: Batch) -> None:
        if self.counter == "global":
            b.slots["neg_lr"] = b.hp["neg_clr"]
            return
        ops, hp = b.ops, b.hp
        steps = ops.host_scalars(ops.add_(b.state["step"], 1.0))
        b.slots["neg_lr"] = ops.realize([-(hp["lr"] / (1 + (t - 1) * hp["lr_decay"])) for t in steps])


class AdagradStep(Stage):
    """w = w - lr_t · g / den, with den from slot `acc` and lr_t from slot `neg_lr` (else the group's lr).

    eps="outside": den = √s + ε       (torch, Cerebras, OneFlow's kernel)
    eps="none":    den = √s           (MindSpore ApplyAdagrad: no ε)
    """

    def __init__(self, eps: Literal["outside", "none"] = "outside") -> None:
        self.eps = eps

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        hp["neg_lr"] = -float(group["lr"])

    def apply(self, b: Batch) -> None:
        ops = b.ops
        den = ops.sqrt(b.slots["acc"])
        if self.eps == "outside":
            ops.add_(den, b.hp["eps"])
        neg_lr = b.slots.get("neg_lr", b.hp["neg_lr"])
        ops.addcdiv_(b.params, b.u, den, value=neg_lr)


class ProximalStep(Stage):
    """MindSpore ProximalAdagrad (ApplyProximalAdagrad, FOBOS) after `Accumulate`:
    v = w - lr·g/√a;  w = sign(v)/(1 + s·l2) · max(|v| - s·l1, 0).

    shrink="lr":       s = lr, MindSpore's documented formula (1.6 - 2.x docs)
    shrink="adaptive": s = lr/√a, MindSpore 2.10's CPU kernel and TensorFlow's ApplyProximalAdagrad code
    """

    def __init__(self, shrink: Literal["lr", "adaptive"] = "lr") -> None:
        self.shrink = shrink

    def apply(self, b: Batch) -> None:
        ops, hp = b.ops, b.hp
        # 1/√a, not a ** -0.5: the same value to an ulp, and a compiled step vectorises it (a pow does not)
        rate = ops.mul_(ops.reciprocal(ops.sqrt(b.slots["acc"])), hp["lr"])
        prox = ops.addcmul_(ops.clone(b.params), b.u, rate, value=-1.0)
        if self.shrink == "adaptive":
            shrunk = ops.clamp_(ops.add_(ops.abs(prox), ops.mul(rate, hp["l1"]), alpha=-1.0), 0.0)
            den = ops.add_(ops.mul(rate, hp["l2"]), 1.0)
        else:
            shrunk = ops.clamp_(ops.add_(ops.abs(prox), -(hp["lr"] * hp["l1"])), 0.0)
            den = 1.0 + hp["lr"] * hp["l2"]
        ops.copy_(b.params, ops.div_(ops.mul_(ops.sign(prox), shrunk), den))

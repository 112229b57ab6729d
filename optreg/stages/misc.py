"""Stages of the other per-element rules: Averaged SGD, Adadelta and Rprop (torch 2.x's formulas,
which Cerebras 2.x reproduces), and Lion (Cerebras 2.10)."""

from __future__ import annotations

from typing import Any, Mapping

import torch

from optreg.stages.chain import Batch, Stage, scalar_state, zeros


def _schedule_dtype(t: torch.Tensor) -> torch.dtype:
    """The host computes ASGD's eta and mu in double precision; so do we where the device has float64."""
    return torch.float32 if t.device.type == "mps" else torch.float64


def _div(a: Any, x: torch.Tensor) -> torch.Tensor:
    """a / x with a correctly rounded division (`float / tensor` is `reciprocal() * float` in torch)."""
    return torch.div(x.new_full((), a), x) if isinstance(a, (int, float)) else a / x


class AveragedSGD(Stage):
    """ASGD (Polyak & Juditsky 1992) as torch.optim.ASGD 2.x and Cerebras 2.x ASGD compute it:

        t += 1;  w = w·(1 - λ·η) - η·g;  ax = w if μ = 1 else ax + μ·(w - ax)
        η = lr/(1 + λ·lr·t)^α;  μ = 1/max(1, t - t0)

    t is the parameter's own float32 `step` (Cerebras' global step); `eta` and `mu` are 0-d tensors
    (float64 for float64 parameters), `ax` the running average. The stage updates the parameter.
    """

    state_names = ("step", "eta", "mu", "ax")
    sparsify = ("ax",)
    shrinks = {"ax": "signed"}

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        return {"step": torch.tensor(0.0, dtype=torch.float32, device=p.device),
                "eta": scalar_state(group["lr"], p), "mu": scalar_state(1.0, p), "ax": zeros(p)}

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        hp["lambd_lr"] = float(group["lambd"]) * float(group["lr"])

    def apply(self, b: Batch) -> None:
        ops, hp, st = b.ops, b.hp, b.state
        step, eta, mu, ax = st["step"], st["eta"], st["mu"], st["ax"]
        ops.add_(step, 1.0)
        ops.mul_(b.params, ops.rsub(ops.mul(eta, hp["lambd"]), 1.0))
        ops.addcmul_(b.params, b.u, eta, value=-1.0)
        moved = ops.add_(ops.mul_(ops.add(b.params, ax, alpha=-1.0), mu), ax)
        ops.copy_(ax, ops.where([m == 1.0 for m in mu], b.params, moved))
        t = [s.to(_schedule_dtype(s)) for s in step]
        ops.copy_(eta, [_div(hp["lr"], (1.0 + hp["lambd_lr"] * x) ** hp["alpha"]) for x in t])
        ops.copy_(mu, [(x - hp["t0"]).clamp_min(1.0).reciprocal() for x in t])


class Adadelta(Stage):
    """Adadelta (Zeiler 2012) as torch.optim.Adadelta 2.x and Cerebras 2.x Adadelta:

        v = ρ·v + (1-ρ)·g²;  u = √(a + eps)/√(v + eps)·g;  a = ρ·a + (1-ρ)·u²   (`ApplyLR` follows)

    eps: the group option that holds eps (MindSpore's nn.Adadelta calls it `epsilon`).
    """

    state_names = ("square_avg", "acc_delta")
    sparsify = ("square_avg", "acc_delta")
    shrinks = {"square_avg": "unsigned", "acc_delta": "unsigned"}

    def __init__(self, eps: str = "eps") -> None:
        self.eps = eps

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        return {"square_avg": zeros(p), "acc_delta": zeros(p)}

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        hp["one_minus_rho"] = 1.0 - float(group["rho"])

    def apply(self, b: Batch) -> None:
        ops, hp = b.ops, b.hp
        v, a = b.state["square_avg"], b.state["acc_delta"]
        ops.addcmul_(ops.mul_(v, hp["rho"]), b.u, b.u, value=hp["one_minus_rho"])
        std = ops.sqrt_(ops.add(v, hp[self.eps]))
        delta = ops.mul_(ops.div_(ops.sqrt_(ops.add(a, hp[self.eps])), std), b.u)
        ops.addcmul_(ops.mul_(a, hp["rho"]), delta, delta, value=hp["one_minus_rho"])
        b.u = delta


class Rprop(Stage):
    """Rprop (Riedmiller & Braun 1993) as torch.optim.Rprop 2.x and Cerebras 2.x Rprop:

        s = sign(g·prev);  η = clamp(η·(η+ if s > 0, η- if s < 0, 1 otherwise), min_step, max_step)
        g = 0 where s < 0;  w -= η·sign(g);  prev = g

    The step sizes start at the group's lr. mask_grad=True also zeroes the incoming gradient in place
    where the sign flipped (Cerebras multiplies p.grad by the mask; torch works on a copy): the stage
    must then come first in the chain, so that `u` is the user's gradient. The stage updates the parameter.
    """

    state_names = ("prev", "step_size")
    sparsify = ("prev", "step_size")
    shrinks = {"prev": "signed"}   # the step sizes stay in float32 (each is its own learning rate)

    def __init__(self, mask_grad: bool = False) -> None:
        self.mask_grad = mask_grad

    @property
    def writes_grad(self) -> bool:  # type: ignore[override]
        return self.mask_grad

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        return {"prev": zeros(p), "step_size": torch.full_like(p, group["lr"], memory_format=torch.preserve_format)}

    def apply(self, b: Batch) -> None:
        ops, hp = b.ops, b.hp
        prev, step_size = b.state["prev"], b.state["step_size"]
        eta_minus, eta_plus = hp["etas"]
        lo, hi = hp["step_sizes"]
        s = ops.sign(ops.mul(b.u, prev))
        flipped = [x < 0 for x in s]
        same = ops.rsub(ops.abs(s), 1.0)  # 1 where s = 0 (the other entries are replaced below)
        factor = ops.where([x > 0 for x in s], eta_plus, ops.where(flipped, eta_minus, same))
        ops.clamp_(ops.mul_(step_size, factor), lo, hi)
        g = ops.where(flipped, 0.0, b.u)
        if self.mask_grad:
            ops.copy_(b.u, g)
        ops.addcmul_(b.params, ops.sign(g), step_size, value=-1.0)
        ops.copy_(prev, g)


class Lion(Stage):
    """Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms") as cerebras.pytorch
    2.10's Lion computes it:

        w = w·(1 - lr·wd);  u = sign(β1·m + (1-β1)·g);  m = β2·m + (1-β2)·g     (`ApplyLR` follows)

    The decay factor is formed on the host and multiplies the weight before the update.
    """

    state_names = ("exp_avg",)
    sparsify = ("exp_avg",)
    shrinks = {"exp_avg": "signed"}

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        return {"exp_avg": zeros(p)}

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        wd = float(group.get("weight_decay", 0.0) or 0.0)
        hp["one_minus_beta1"], hp["one_minus_beta2"] = 1.0 - beta1, 1.0 - beta2
        hp["lion_decay_on"] = wd != 0.0
        hp["lion_decay"] = 1.0 - float(group["lr"]) * wd

    def apply(self, b: Batch) -> None:
        ops, hp = b.ops, b.hp
        beta1, beta2 = hp["betas"]
        m, g = b.state["exp_avg"], b.u
        if hp["lion_decay_on"]:
            ops.mul_(b.params, hp["lion_decay"])
        b.u = ops.sign(ops.add(ops.mul(m, beta1), g, alpha=hp["one_minus_beta1"]))
        ops.add_(ops.mul_(m, beta2), g, alpha=hp["one_minus_beta2"])

"""Stages of the other per-element rules: Averaged SGD, Adadelta and Rprop (torch 2.x's formulas,
which Cerebras 2.x reproduces), and Lion (Cerebras 2.10)."""

from __future__ import annotations

from typing import Any, Literal, Mapping

import torch

from optreg.core.float32 import f32
from optreg.stages.chain import Batch, Scalars, Stage, check_scalars, scalar_state, zeros


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

    `sign` is what u is at an interpolation c of exactly ±0 (a gradient and momentum both zero), where
    sign(0) = 0 leaves the weight:
        "sign"      sign(c) (Cerebras);
        "copysign"  copysign(1, c), as DeepSpeed 0.19's CPU kernel (cpu_lion.h) steps -copysign(lr, c): -lr at
                    +0, +lr at -0;
        "positive"  1 where c > 0, else -1, as DeepSpeed 0.19's FusedLion (multi_tensor_lion.cu) steps
                    `c > 0 ? -lr : lr`: +lr at ±0 (and at NaN).
    scalars="float32": β, 1 - β and the decay factor 1 - lr·wd in float32 arithmetic, as the kernels'
    `float` arguments form them (1 - lr·wd in one rounding: DeepSpeed's compiled kernel fuses it).
    steps=True: the stage updates the parameter itself as DeepSpeed's kernels do, w = w·(1 - lr·wd) - lr·u
    in one rounding (an FMA; torch's eager and foreach adds on the CPU are one), and no `ApplyLR` follows.
    """

    state_names = ("exp_avg",)
    sparsify = ("exp_avg",)
    shrinks = {"exp_avg": "signed"}

    def __init__(self, sign: Literal["sign", "copysign", "positive"] = "sign", scalars: Scalars = "native",
                 steps: bool = False) -> None:
        if sign not in ("sign", "copysign", "positive"):
            raise ValueError(f"sign must be 'sign', 'copysign' or 'positive', got {sign!r}")
        self.sign = sign
        self.steps = steps
        self.scalars = check_scalars(scalars)

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        return {"exp_avg": zeros(p)}

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        lr = group["lr"]
        wd = float(group.get("weight_decay", 0.0) or 0.0)
        hp["one_minus_beta1"], hp["one_minus_beta2"] = 1.0 - beta1, 1.0 - beta2
        hp["lion_decay_on"] = wd != 0.0
        hp["lion_decay"] = 1.0 - float(lr) * wd
        hp["neg_lr"] = -float(lr)
        self.record32(hp, lambda: {"betas": (f32(beta1), f32(beta2)), "one_minus_beta1": f32(1.0 - f32(beta1)),
                                   "one_minus_beta2": f32(1.0 - f32(beta2)),
                                   "lion_decay": f32(1.0 - f32(float(lr)) * f32(wd))})   # one rounding: an FMA

    def apply(self, b: Batch) -> None:
        ops, hp = b.ops, b.hp
        beta1, beta2 = self.scalar(b, "betas")
        m, g = b.state["exp_avg"], b.u
        if hp["lion_decay_on"] and not self.steps:
            ops.mul_(b.params, self.scalar(b, "lion_decay"))
        c = ops.add(ops.mul(m, beta1), g, alpha=self.scalar(b, "one_minus_beta1"))
        if self.sign == "copysign":
            b.u = ops.copysign_one(c)
        elif self.sign == "positive":
            b.u = ops.positive_sign(c)
        else:
            b.u = ops.sign(c)
        ops.add_(ops.mul_(m, beta2), g, alpha=self.scalar(b, "one_minus_beta2"))
        if self.steps and hp["lion_decay_on"]:   # fma(w, 1 - lr·wd, -lr·u): DeepSpeed's kernels
            ops.copy_(b.params, ops.add(ops.mul(b.u, hp["neg_lr"]), b.params, alpha=self.scalar(b, "lion_decay")))
        elif self.steps:
            ops.add_(b.params, b.u, alpha=hp["neg_lr"])

"""Adam-family stages: moments, bias correction (optimizer-wide step or per-parameter power state),
eps placement, Adamax's infinity norm, NAdam's momentum schedule, RAdam's rectification.

    m = β1·m + (1-β1)·g,   v = β2·v + (1-β2)·g²            (Kingma & Ba 2015, Algorithm 1)
"""

from __future__ import annotations

import math
from typing import Any, Literal, Mapping

import torch

from optreg.core.float32 import f32
from optreg.stages.chain import Batch, Scalars, Stage, check_scalars, scalar_state, zeros



def _betas32(beta1: float, beta2: float) -> dict[str, Any]:
    """OneFlow's float32 β and 1 - β (1 - 0.999f = 9.9998713e-4)."""
    beta1, beta2 = f32(beta1), f32(beta2)
    return {"betas": (beta1, beta2), "one_minus_beta1": f32(1.0 - beta1), "one_minus_beta2": f32(1.0 - beta2)}

class AdamMoments(Stage):
    """m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g²; with the group's `amsgrad`, v̂ = max(v̂, v).

    m is formed as torch's Adam forms it, m + (1-β1)·(g - m) in one `lerp_` (one pass over m where a
    multiply and an add take two; the same number to an ulp).

    nesterov=True puts MindSpore's `use_nesterov` numerator β1·m + (1-β1)·g in `slots["num"]`
    (read from the group's `use_nesterov` / `nesterov` flag); otherwise the numerator is m.
    amsgrad=False: the algorithm has no amsgrad (Cerebras NAdam, RAdam), or ignores the group's (MindSpore's
    experimental Adam): no `max_exp_avg_sq` among the state names to sparsify, v is never maxed.
    scalars="float32": β and 1 - β in float32 (OneFlow's kernels: `(1 - beta1)` of a float beta1).
    Slots out: `num`, `den_sq` (v or v̂).
    """

    state_names = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
    sparsify = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
    shrinks = {"exp_avg": "signed", "exp_avg_sq": "unsigned", "max_exp_avg_sq": "unsigned"}

    def __init__(self, amsgrad: bool = True, scalars: Scalars = "native") -> None:
        self.amsgrad = amsgrad
        if not amsgrad:
            self.state_names = self.sparsify = ("exp_avg", "exp_avg_sq")
        self.scalars = check_scalars(scalars)

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        state = {"exp_avg": zeros(p), "exp_avg_sq": zeros(p)}
        if self.amsgrad and group.get("amsgrad"):
            state["max_exp_avg_sq"] = zeros(p)
        return state

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        hp["one_minus_beta1"], hp["one_minus_beta2"] = 1.0 - beta1, 1.0 - beta2
        hp["nesterov_on"] = bool(group.get("nesterov", group.get("use_nesterov", False)))
        self.record32(hp, lambda: _betas32(beta1, beta2))

    def apply(self, b: Batch) -> None:
        ops, hp = b.ops, b.hp
        beta1, beta2 = self.scalar(b, "betas")
        one_minus_beta1 = self.scalar(b, "one_minus_beta1")
        m, v = b.state["exp_avg"], b.state["exp_avg_sq"]
        ops.lerp_(m, b.u, one_minus_beta1)
        ops.addcmul_(ops.mul_(v, beta2), b.u, b.u, value=self.scalar(b, "one_minus_beta2"))
        den_sq = v
        if self.amsgrad and hp.get("amsgrad"):
            den_sq = ops.maximum_(b.state["max_exp_avg_sq"], v)
        b.slots["den_sq"] = den_sq
        b.slots["num"] = ops.add(ops.mul(m, beta1), b.u, alpha=one_minus_beta1) if hp["nesterov_on"] else m


class BiasCorrection(Stage):
    """bc1 = 1 - β1ᵗ, bc2 = 1 - β2ᵗ into `slots` (`bc1`, `bc2_sqrt`); no slots when off.

    counter="global": t is the optimizer-wide step (OneFlow, MindSpore; host scalars).
    counter="power":  per-parameter `beta1_power` / `beta2_power` state, initialised to the betas
                      and multiplied by them after use (Cerebras AdamBase), plus a float32 `step`.
    flag:             the group option that switches the correction (OneFlow `do_bias_correction`,
                      Cerebras `correct_bias`); None: always on. Read per group. Off: no slots.
    scalars="float32" (counter="global"): bc1 and bc2 rounded to float32 from their float64 values
                      (OneFlow computes them in Python and hands them to the kernel as floats), √bc2
                      taken in float32.
    """

    state_names = ("step", "beta1_power", "beta2_power")

    def __init__(self, counter: Literal["global", "power"] = "global", flag: str | None = None,
                 scalars: Scalars = "native") -> None:
        self.counter = counter
        self.flag = flag
        self.scalars = check_scalars(scalars)
        if self.scalars != "native" and counter != "global":
            raise ValueError("scalars='float32' needs counter='global' (the power counter keeps its scalars as state)")

    def _on(self, group: Mapping[str, Any]) -> bool:
        return self.flag is None or bool(group.get(self.flag, True))

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        if self.counter != "power":
            return {}
        state = {"step": torch.tensor(0.0, dtype=torch.float32, device=p.device)}
        if self._on(group):
            beta1, beta2 = group["betas"]
            state["beta1_power"] = scalar_state(beta1, p)
            state["beta2_power"] = scalar_state(beta2, p)
        return state

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        on = self._on(group)
        hp["bias_correction_on"] = on
        if self.counter == "global":
            beta1, beta2 = group["betas"]
            t = hp["step"]
            hp["bc1"] = 1.0 - beta1 ** t if on else 1.0
            hp["bc2_sqrt"] = math.sqrt(1.0 - beta2 ** t) if on else 1.0
            self.record32(hp, lambda: {"bc1": f32(hp["bc1"]),
                                        "bc2_sqrt": f32(math.sqrt(f32(1.0 - beta2 ** t))) if on else 1.0})

    def apply(self, b: Batch) -> None:
        if self.counter == "global":
            if b.hp["bias_correction_on"]:
                b.slots["bc1"], b.slots["bc2_sqrt"] = self.scalar(b, "bc1"), self.scalar(b, "bc2_sqrt")
            return
        ops = b.ops
        ops.add_(b.state["step"], 1.0)
        if not b.hp["bias_correction_on"]:
            return  # no slots: AdamDirection applies no correction
        beta1, beta2 = b.hp["betas"]
        b1p, b2p = b.state["beta1_power"], b.state["beta2_power"]
        b.slots["bc1"] = ops.rsub(b1p, 1.0)
        b.slots["bc2_sqrt"] = ops.sqrt(ops.rsub(b2p, 1.0))
        ops.mul_(b1p, beta1)
        ops.mul_(b2p, beta2)


class AdamDirection(Stage):
    """u = Adam's direction from `slots` num, den_sq, bc1, bc2_sqrt.

    eps="torch": u = (num/bc1) / (√den_sq/√bc2 + eps)       (torch, OneFlow)
    eps="hat":   u = (√bc2/bc1) · num / (√den_sq + eps)      (MindSpore, Cerebras, HF: eps before
                                                             the bias correction is folded in)
    """

    def __init__(self, eps: Literal["torch", "hat"] = "torch") -> None:
        self.eps = eps

    def apply(self, b: Batch) -> None:
        ops, s = b.ops, b.slots
        eps = b.hp["eps"]
        # no `bc1` slot (no BiasCorrection stage before, or its flag off): no correction (Cerebras Lamb,
        # MindSpore AdamWeightDecay); the divisions by 1 are skipped
        corrected = "bc1" in s
        denom = ops.sqrt(s["den_sq"])
        if self.eps == "torch":
            if corrected:
                ops.div_(denom, s["bc2_sqrt"])
            ops.add_(denom, eps)
            b.u = ops.div_(ops.div(s["num"], s["bc1"]), denom) if corrected else ops.div(s["num"], denom)
        else:
            ops.add_(denom, eps)
            b.u = ops.div(s["num"], denom)
            if corrected:
                ops.mul_(b.u, _ratio(ops, s["bc2_sqrt"], s["bc1"]))


class ApplyAdam(Stage):
    """Adam's direction, the decoupled decay and the lr in one stage, in the form of torch's
    `_single_tensor_adamw` (torch 2.x), from `slots` num, den_sq, bc1, bc2_sqrt:

        d = √den_sq/√bc2 + eps;   w ← w·(1 - lr·wd);   w ← w - (lr/bc1)·num/d

    decoupled=False: no decay (Adam); True: the group's weight_decay, as `DecoupledDecay` (AdamW).
    Mathematically `AdamDirection("torch") → DecoupledDecay → ApplyLR`, with the direction never stored:
    after `AdamMoments`, AdamW's eager step runs 8 kernels per tensor, as torch's loop does, where those
    three stages make it 10 (tests/test_eager_kernels.py). Its float32 rounding differs from theirs by an
    ulp or so: OneFlow 0.9.0's Adam and AdamW recordings are matched to 2e-7 of the largest weight (with
    the three stages and a multiply-then-add first moment: 2.6e-7; tests/test_oneflow_fixtures.py).
    """

    def __init__(self, decoupled: bool = False) -> None:
        self.decoupled = decoupled

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        lr = float(group["lr"])
        hp["neg_lr"] = -lr
        wd = float(group.get("weight_decay", 0.0) or 0.0) if self.decoupled else 0.0
        hp["decoupled_on"] = wd != 0.0
        hp["decay_factor"] = 1.0 - lr * wd

    def apply(self, b: Batch) -> None:
        ops, s, hp = b.ops, b.slots, b.hp
        corrected = "bc1" in s  # no slot: the correction is off (AdamDirection's rule)
        denom = ops.sqrt(s["den_sq"])
        if corrected:
            ops.div_(denom, s["bc2_sqrt"])
        ops.add_(denom, hp["eps"])
        if hp["decoupled_on"]:
            ops.mul_(b.params, hp["decay_factor"])
        ops.addcdiv_(b.params, s["num"], denom,
                     value=_ratio(ops, hp["neg_lr"], s["bc1"]) if corrected else hp["neg_lr"])


def _ratio(ops, a: Any, b: Any) -> Any:
    """a / b for host scalars or per-tensor lists of 0-d tensors."""
    if isinstance(a, list) or isinstance(b, list):
        n = len(a) if isinstance(a, list) else len(b)
        pick = lambda x, i: x[i] if isinstance(x, list) else x  # noqa: E731
        return [pick(a, i) / pick(b, i) for i in range(n)]
    return a / b


def _sqrt(x: Any) -> Any:
    """√x of a host float (math.sqrt, as the legacy host code) or of a 0-d tensor (traced)."""
    return math.sqrt(x) if isinstance(x, float) else x.sqrt()


def param_step(p: torch.Tensor) -> torch.Tensor:
    """Cerebras' per-parameter step (`enable_global_step`): a float32 0-d tensor."""
    return torch.tensor(0.0, dtype=torch.float32, device=p.device)


class AdamaxDirection(Stage):
    """Adamax (Kingma & Ba 2015, sec. 7.1), as torch.optim.Adamax and Cerebras Adamax (2.x):

        m = β1·m + (1-β1)·g;   e = max(β2·e, |g| + eps);   u = m / e / (1 - β1ᵗ)

    eps="after": MindSpore's ApplyAdaMax (TF's), e = max(β2·e, |g|) and u = m / (e + eps) / (1 - β1ᵗ).
    β1ᵗ is the per-parameter `beta1_power` state (initialised to β1, multiplied by β1 after use).
    """

    state_names = ("exp_avg", "exp_inf", "beta1_power")
    sparsify = ("exp_avg", "exp_inf")
    shrinks = {"exp_avg": "signed", "exp_inf": "unsigned"}

    def __init__(self, eps: Literal["inside", "after"] = "inside") -> None:
        self.eps = eps

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        return {"exp_avg": zeros(p), "exp_inf": zeros(p), "beta1_power": scalar_state(group["betas"][0], p)}

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        hp["one_minus_beta1"] = 1.0 - group["betas"][0]

    def apply(self, b: Batch) -> None:
        ops, hp = b.ops, b.hp
        beta1, beta2 = hp["betas"]
        m, e, b1p = b.state["exp_avg"], b.state["exp_inf"], b.state["beta1_power"]
        ops.add_(ops.mul_(m, beta1), b.u, alpha=hp["one_minus_beta1"])
        if self.eps == "after":
            ops.maximum_(ops.mul_(e, beta2), ops.abs(b.u))
            b.u = ops.div_(ops.div(m, ops.add(e, hp["eps"])), ops.rsub(b1p, 1.0))
        else:
            ops.maximum_(ops.mul_(e, beta2), ops.add_(ops.abs(b.u), hp["eps"]))
            b.u = ops.div_(ops.div(m, e), ops.rsub(b1p, 1.0))
        ops.mul_(b1p, beta1)


class NAdamDirection(Stage):
    """NAdam (Dozat 2016) in torch's form, with the per-parameter float32 `step` t (Cerebras NAdam 2.x):

        μₜ = β1·(1 - ½·0.96^(t·ψ)),  μₜ₊₁ likewise;  Πₜ = Πₜ₋₁·μₜ (state `mu_product`, starts at 1)
        u = [(1-μₜ)/(1-Πₜ)·g + μₜ₊₁/(1-Π')·m] / (√(v/(1-β2ᵗ)) + eps)

    extra_mu=True:  Π' = Πₜ·μₜ·μₜ₊₁ (Cerebras: μₜ twice);  extra_mu=False: Π' = Πₜ·μₜ₊₁ (torch.optim.NAdam).
    Reads m, v from `slots` (AdamMoments before it) and g from `u`; ψ is the group's `momentum_decay`.
    """

    state_names = ("step", "mu_product")

    def __init__(self, extra_mu: bool = True) -> None:
        self.extra_mu = extra_mu

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        return {"step": param_step(p), "mu_product": scalar_state(1.0, p)}

    def apply(self, b: Batch) -> None:
        ops, hp = b.ops, b.hp
        beta1, beta2 = hp["betas"]
        psi = hp["momentum_decay"]
        ts = ops.host_scalars(ops.add_(b.state["step"], 1.0))
        mu = [beta1 * (1.0 - 0.5 * 0.96 ** (t * psi)) for t in ts]
        mu_next = [beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1.0) * psi)) for t in ts]
        prods = ops.host_scalars(ops.mul_(b.state["mu_product"], mu))
        nexts = [p * m * n if self.extra_mu else p * n for p, m, n in zip(prods, mu, mu_next)]
        denom = ops.add_(ops.sqrt_(ops.div(b.slots["den_sq"], ops.realize([1.0 - beta2 ** t for t in ts]))), hp["eps"])
        grad_scale = ops.realize([(1.0 - m) / (1.0 - p) for m, p in zip(mu, prods)])
        momentum_scale = ops.realize([n / (1.0 - p) for n, p in zip(mu_next, nexts)])
        u = ops.mul_(ops.div(b.u, denom), grad_scale)
        b.u = ops.addcdiv_(u, b.slots["num"], denom, value=momentum_scale)


class RAdamDirection(Stage):
    """RAdam (Liu et al. 2020), as torch.optim.RAdam and Cerebras RAdam (2.x), t the per-parameter
    float32 `step`:

        ρ∞ = 2/(1-β2) - 1,   ρₜ = ρ∞ - 2t·β2ᵗ/(1-β2ᵗ)
        ρₜ > 5:  u = r·√(1-β2ᵗ)/(1-β1ᵗ) · m/(√v + eps),  r = √((ρₜ-4)(ρₜ-2)ρ∞ / ((ρ∞-4)(ρ∞-2)ρₜ))
        else:    u = m/(1-β1ᵗ)

    Reads m, v from `slots` (AdamMoments before it).
    """

    state_names = ("step",)

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        return {"step": param_step(p)}

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        rho_inf = 2.0 / (1.0 - group["betas"][1]) - 1.0
        hp["rho_inf"], hp["rho_k"] = rho_inf, (rho_inf - 4.0) * (rho_inf - 2.0)

    def apply(self, b: Batch) -> None:
        ops, hp = b.ops, b.hp
        beta1, beta2 = hp["betas"]
        rho_inf, rho_k = hp["rho_inf"], hp["rho_k"]
        ts = ops.host_scalars(ops.add_(b.state["step"], 1.0))
        bc1 = [1.0 - beta1 ** t for t in ts]
        bc2 = [1.0 - beta2 ** t for t in ts]
        rho = ops.realize([rho_inf - 2.0 * t * beta2 ** t / c for t, c in zip(ts, bc2)])
        bc1 = ops.realize(bc1)
        m, v = b.slots["num"], b.slots["den_sq"]

        def rectified(idx: list[int]) -> list[torch.Tensor]:
            scale = ops.realize([_sqrt((rho[i] - 4.0) * (rho[i] - 2.0) * rho_inf / (rho_k * rho[i])) *
                                 _sqrt(bc2[i]) / bc1[i] for i in idx])
            denom = ops.add_(ops.sqrt([v[i] for i in idx]), hp["eps"])
            return ops.mul_(ops.div([m[i] for i in idx], denom), scale)

        def plain(idx: list[int]) -> list[torch.Tensor]:
            return ops.div([m[i] for i in idx], [bc1[i] for i in idx])

        b.u = ops.select([r > 5.0 for r in rho], rectified, plain)


class Offload(Stage):
    """MindSpore AdamOffload (AdamNoUpdateParam): the direction is computed where the state lives
    (the host); to="state" moves `u` there, to="param" moves it back to the parameter's device."""

    def __init__(self, to: Literal["state", "param"]) -> None:
        self.to = to

    def apply(self, b: Batch) -> None:
        if self.to == "param":
            b.u = [u.to(p.device) for u, p in zip(b.u, b.params)]
        else:
            b.u = [u.to("cpu") for u in b.u]

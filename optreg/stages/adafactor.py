"""Adafactor stages (Shazeer & Stern 2018) in the Hugging Face form that MindSpore and Cerebras reproduce.

    β̂2 = 1 - t^(-decay);  ρ = min(1e-6·t if warmup_init else 1e-2, 1/√t) if relative_step, else lr
    G = g² + eps1;  factored (ndim >= 2): R, C row/column means of G;  U = g·rsqrt(R/mean(R) ⊗ C)
                    otherwise:            V = β̂2·V + (1-β̂2)·G;          U = g·rsqrt(V)
    U = α·U / max(1, RMS(U)/clip_threshold),  α = ρ·max(eps2, RMS(w)) if scale_parameter, else ρ
    m = β1·m + (1-β1)·U, U = m  (beta1 set);   w -= wd·α·w;  w -= U
"""

from __future__ import annotations

from typing import Any, Literal, Mapping

import torch

from optreg.stages.chain import Batch, Stage, zeros


def _relative_step(t: Any, warmup: bool) -> Any:
    """ρ = min(1e-6·t if warmup_init else 1e-2, 1/√t), for a number or a 0-d tensor t."""
    if isinstance(t, torch.Tensor):
        return torch.clamp(t.rsqrt(), max=1e-6 * t) if warmup else torch.clamp(t.rsqrt(), max=1e-2)
    return min(1e-6 * t if warmup else 1e-2, 1.0 / t ** 0.5)


class AdafactorClock(Stage):
    """slots `b2t` = 1 - t^(-decay) and `rho` (relative step size, or the group's lr).

    counter="global": t is the optimizer-wide step (MindSpore AdaFactor; host scalars).
    counter="param":  a per-parameter float32 `step` state (HF / Cerebras Adafactor).
    decay_rate="positive": the group's decay_rate is the exponent (MindSpore 0.8);
    decay_rate="negative": it is minus the exponent (HF / Cerebras -0.8).
    """

    def __init__(self, counter: Literal["global", "param"] = "global",
                 decay_rate: Literal["positive", "negative"] = "positive") -> None:
        self.counter = counter
        self.decay_rate = decay_rate
        self.state_names = ("step",) if counter == "param" else ()

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        if self.counter != "param":
            return {}
        return {"step": torch.tensor(0.0, dtype=torch.float32, device=p.device)}

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        decay = float(group["decay_rate"]) * (1.0 if self.decay_rate == "positive" else -1.0)
        hp["neg_decay"] = -decay
        hp["relative_on"], hp["warmup_on"] = bool(group["relative_step"]), bool(group["warmup_init"])
        if self.counter == "global":
            t = float(hp["step"])
            hp["b2t"] = 1.0 - t ** -decay
            hp["rho"] = _relative_step(t, hp["warmup_on"]) if hp["relative_on"] else float(group["lr"])

    def apply(self, b: Batch) -> None:
        ops, hp = b.ops, b.hp
        if self.counter == "global":
            b.slots["b2t"], b.slots["rho"] = hp["b2t"], hp["rho"]
            return
        steps = ops.add_(b.state["step"], 1.0)
        dtype = torch.promote_types(b.params[0].dtype, torch.float32)
        t = [s.to(dtype) for s in steps]
        b.slots["b2t"] = ops.realize(ops.smap(lambda s: 1.0 - s ** hp["neg_decay"], t))
        b.slots["rho"] = ops.realize(ops.smap(lambda s: _relative_step(s, hp["warmup_on"]), t)) \
            if hp["relative_on"] else hp["lr"]


def _pick(s: Any, i: int) -> Any:
    return s[i] if isinstance(s, (list, tuple)) else s


class FactoredSecondMoment(Stage):
    """u = g·rsqrt(V̂) with Adafactor's second moment of G = g² + eps1 (eps = the group's (eps1, eps2)):
    row and column running means for tensors with >= 2 dims, a full V otherwise (kept in float16
    when the group's `compression` is set: MindSpore). Needs the tensors' shapes."""

    state_names = ("exp_avg_sq_row", "exp_avg_sq_col", "exp_avg_sq")
    sparsify = ("exp_avg_sq",)
    shape_aware = True
    stackable = True

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        if p.dim() >= 2:
            return {"exp_avg_sq_row": p.new_zeros(p.shape[:-1]),
                    "exp_avg_sq_col": p.new_zeros(p.shape[:-2] + p.shape[-1:])}
        dtype = torch.float16 if group.get("compression") else p.dtype
        return {"exp_avg_sq": torch.zeros_like(p, dtype=dtype, memory_format=torch.preserve_format)}

    def apply(self, b: Batch) -> None:
        eps1, b2t, ops = b.hp["eps"][0], b.slots["b2t"], b.ops
        out, rms = [], []
        if "exp_avg_sq_row" in b.state:
            for i, (g, row, col) in enumerate(zip(b.u, b.state["exp_avg_sq_row"], b.state["exp_avg_sq_col"])):
                beta, sq = _moment_scalar(_pick(b2t, i)), g * g + eps1
                row.mul_(beta).add_(sq.mean(dim=-1) * (1.0 - beta))
                # the factors once per call (fused): otherwise Inductor recomputes them for every element
                (r_factor,) = ops.realize_factors([(row / row.mean(dim=-1, keepdim=True)).rsqrt()])
                if ops.compiled:   # Σ r²c²g² for the clipping, from the column pass: Σⱼ cⱼ² Σᵢ rᵢ² gᵢⱼ²
                    acc = torch.promote_types(g.dtype, torch.float32)
                    col_r = (g * g * (r_factor * r_factor).unsqueeze(-1)).sum(dim=-2, dtype=acc)
                col.mul_(beta).add_(sq.mean(dim=-2) * (1.0 - beta))
                (c_factor,) = ops.realize_factors([col.rsqrt()])
                out.append(r_factor.unsqueeze(-1) * c_factor.unsqueeze(-2) * g)
                if ops.compiled:
                    c2 = (c_factor * c_factor).to(acc)
                    rms.append(ops.member_sum(c2 * col_r, g).div(ops.member_numel(g)).sqrt().to(g.dtype))
        else:
            for i, (g, v) in enumerate(zip(b.u, b.state["exp_avg_sq"])):
                beta = _pick(b2t, i)
                v.copy_(v.to(g.dtype) * beta + (g * g + eps1) * (1.0 - beta))
                # the stored moment as a buffer under fused: read by the clipping's reduction and by the update,
                # a stack's (B, n) moment trips Inductor 2.13's CPU outer-loop fusion (`ops.realized`); and
                # read back from the stored tensor, it keeps `compression`'s float16 rounding
                out.append(ops.realize([v])[0].to(g.dtype).rsqrt() * g)
        b.u = out
        if rms:
            b.slots["rms_u"] = (out, rms)


def _moment_scalar(beta: Any) -> Any:
    """A per-tensor scalar as the row and column moments take it: a stack's (B, 1, …, 1) values lose their
    last dimension, which the moments lack (`ops.Stacked`)."""
    return beta.squeeze(-1) if isinstance(beta, torch.Tensor) and beta.dim() > 1 else beta


class ClipByRMS(Stage):
    """u = u / max(1, RMS(u)/clip_threshold) (Adafactor's update clipping, the group's `clip_threshold`);
    fused, RMS(u) of a factored moment's u comes from its column pass (`FactoredSecondMoment`)."""

    per_tensor = True
    stackable = True

    def apply(self, b: Batch) -> None:
        d = b.hp["clip_threshold"]
        of, known = b.slots.pop("rms_u", (None, None))
        rms = known if of is b.u else b.ops.rms(b.u)
        b.u = b.ops.div(b.u, b.ops.smap(lambda r: torch.clamp(r / d, min=1.0), rms))


class RelativeScale(Stage):
    """u = α·u, α = ρ·max(eps2, RMS(w)) with the group's `scale_parameter`, else ρ (ρ from
    `AdafactorClock`); α goes to `slots["alpha"]` for the decay."""

    per_tensor = True
    stackable = True

    def apply(self, b: Batch) -> None:
        ops, rho, eps2 = b.ops, b.slots["rho"], b.hp["eps"][1]
        if b.hp["scale_parameter"]:
            rms = ops.rms(b.params)
            if isinstance(rho, list):
                alpha = ops.smap(lambda r, s: s * torch.clamp(r, min=eps2), rms, rho)
            else:
                alpha = ops.smap(lambda r: rho * torch.clamp(r, min=eps2), rms)
            alpha = ops.realize(alpha)   # fused: once per tensor, not in the update's inner loop
        else:
            alpha = rho
        b.slots["alpha"] = alpha
        b.u = ops.mul(b.u, alpha)


class UpdateMomentum(Stage):
    """m = β1·m + (1-β1)·u, u = m, when the group's `beta1` is set and not 0 (MindSpore; HF: not None)."""

    state_names = ("exp_avg",)
    sparsify = ("exp_avg",)
    shrinks = {"exp_avg": "signed"}

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        return {"exp_avg": zeros(p)} if group.get("beta1") else {}

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        hp["momentum_on"] = bool(group.get("beta1"))
        hp["one_minus_momentum"] = 1.0 - float(group.get("beta1") or 0.0)

    def apply(self, b: Batch) -> None:
        if b.hp["momentum_on"]:
            m = b.ops.add_(b.ops.mul_(b.state["exp_avg"], b.hp["beta1"]), b.u, alpha=b.hp["one_minus_momentum"])
            b.u = m


class ScaledDecayApply(Stage):
    """w -= wd·α·w, then w -= u (Adafactor: the lr is already in u through α)."""

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        hp["scaled_decay_on"] = float(group.get("weight_decay", 0.0) or 0.0) != 0.0

    def apply(self, b: Batch) -> None:
        ops, alpha, wd = b.ops, b.slots["alpha"], b.hp["weight_decay"]
        if b.hp["scaled_decay_on"]:
            scale = [a * wd for a in alpha] if isinstance(alpha, list) else alpha * wd
            ops.add_(b.params, ops.mul(b.params, scale), alpha=-1.0)
        ops.add_(b.params, b.u, alpha=-1.0)

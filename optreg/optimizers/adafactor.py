"""AdaFactor (Shazeer & Stern 2018) in the Hugging Face form that MindSpore and Cerebras reproduce.

With t the step, eps = (eps1, eps2), d = clip_threshold:

    b2t  = 1 - t^(-decay)                      (decay = 0.8 by default)
    rho  = min(1e-6 t if warmup_init else 1e-2, 1/sqrt(t))   if relative_step, else lr
    a    = rho * max(eps2, RMS(w))             if scale_parameter, else rho
    G    = g^2 + eps1
    factored (ndim >= 2):  R = b2t R + (1-b2t) mean_last(G),  C = b2t C + (1-b2t) mean_2nd_last(G)
                           U = g * rsqrt(R / mean_last(R)) (x) rsqrt(C)
    otherwise:             V = b2t V + (1-b2t) G,  U = g * rsqrt(V)
    U    = a * U / max(1, RMS(U) / d)
    m    = beta1 m + (1 - beta1) U,  U = m     if beta1 > 0 (MindSpore) / not None (HF)
    w    = w - weight_decay * a * w - U

Entries: MindSpore AdaFactor (optimizer-wide step, decay_rate given as +0.8, beta1 0.9,
`compression` stores the unfactored second moment in float16) and Cerebras Adafactor (per-parameter
step, decay_rate given as -0.8, manual lr only).
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import torch

from optreg.core.optimizer import Optimizer


def _rms(x: torch.Tensor) -> torch.Tensor:
    return x.square().mean().sqrt()


def adafactor_step(
    p: torch.Tensor,
    grad: torch.Tensor,
    state: dict[str, torch.Tensor],
    *,
    lr: float,
    t: float,
    eps1: float,
    eps2: float,
    clip_threshold: float,
    decay: float,
    beta1: float | None,
    weight_decay: float,
    scale_parameter: bool,
) -> None:
    """One AdaFactor step on one tensor; `lr` is rho (relative or manual), `decay` > 0."""
    alpha = lr * torch.clamp(_rms(p), min=eps2) if scale_parameter else torch.tensor(lr, dtype=p.dtype)
    b2t = 1.0 - t ** (-decay)
    sq = grad.square().add_(eps1)
    if "exp_avg_sq_row" in state:
        row, col = state["exp_avg_sq_row"], state["exp_avg_sq_col"]
        row.mul_(b2t).add_(sq.mean(dim=-1), alpha=1.0 - b2t)
        col.mul_(b2t).add_(sq.mean(dim=-2), alpha=1.0 - b2t)
        r_factor = row.div(row.mean(dim=-1, keepdim=True)).rsqrt_().unsqueeze(-1)
        c_factor = col.rsqrt().unsqueeze(-2)
        update = r_factor.mul(c_factor).mul_(grad)
    else:
        v = state["exp_avg_sq"]
        v_new = v.to(grad.dtype).mul_(b2t).add_(sq, alpha=1.0 - b2t)
        v.copy_(v_new)
        update = v.to(grad.dtype).rsqrt().mul_(grad)
    update.div_(torch.clamp(_rms(update) / clip_threshold, min=1.0)).mul_(alpha)
    if beta1 is not None:
        m = state["exp_avg"]
        m.mul_(beta1).add_(update, alpha=1.0 - beta1)
        update = m
    if weight_decay:
        p.sub_(p.mul(alpha * weight_decay))
    p.sub_(update)


class AdaFactor(Optimizer):
    """AdaFactor with the dialect details as knobs (formula in the module docstring).

    decay_rate           the exponent; `decay_rate_sign=-1` reads it as MindSpore's positive 0.8,
                         `+1` as Cerebras' / HF's negative -0.8 (both mean b2t = 1 - t^-0.8).
    beta1                None or 0 disables the first moment.
    counter              "global": t is the optimizer-wide step (MindSpore); "param": a per-parameter
                         `step` state (Cerebras / HF).
    compression          keep the unfactored second moment in float16 (MindSpore).
    """

    sparsify_states = ("exp_avg", "exp_avg_sq")

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | None = None,
        eps: tuple[float, float] = (1e-30, 1e-3),
        clip_threshold: float = 1.0,
        decay_rate: float = -0.8,
        beta1: float | None = None,
        weight_decay: float = 0.0,
        scale_parameter: bool = True,
        relative_step: bool = True,
        warmup_init: bool = False,
        compression: bool = False,
        *,
        decay_rate_sign: int = 1,
        counter: str = "param",
        loss_scale: float = 1.0,
        preinit: bool = False,
    ) -> None:
        if lr is not None and relative_step:
            raise ValueError("cannot combine a manual lr with relative_step=True")
        if warmup_init and not relative_step:
            raise ValueError("warmup_init=True requires relative_step=True")
        if lr is None and not relative_step:
            raise ValueError("lr is required when relative_step=False")
        self.decay = -decay_rate_sign * decay_rate
        if not self.decay > 0:
            raise ValueError(f"the decay exponent must be > 0, got decay_rate={decay_rate}")
        self.counter = counter
        self.compression = bool(compression)
        defaults = dict(
            lr=0.0 if lr is None else lr, eps=tuple(eps), clip_threshold=clip_threshold, beta1=beta1 or None,
            weight_decay=weight_decay, scale_parameter=scale_parameter, relative_step=relative_step,
            warmup_init=warmup_init,
        )
        super().__init__(params, defaults, loss_scale=loss_scale, preinit=preinit)

    def init_state(self, p, group):
        state: dict[str, Any] = {}
        if group["beta1"] is not None:
            state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        if p.dim() >= 2:
            state["exp_avg_sq_row"] = p.new_zeros(p.shape[:-1])
            state["exp_avg_sq_col"] = p.new_zeros(p.shape[:-2] + p.shape[-1:])
        else:
            dtype = torch.float16 if self.compression else p.dtype
            state["exp_avg_sq"] = torch.zeros_like(p, dtype=dtype, memory_format=torch.preserve_format)
        if self.counter == "param":
            state["step"] = torch.tensor(0.0, dtype=torch.float32, device=p.device)
        return state

    def _rho(self, group: dict[str, Any], t: float, lr: float) -> float:
        if not group["relative_step"]:
            return lr
        min_step = 1e-6 * t if group["warmup_init"] else 1e-2
        return min(min_step, 1.0 / math.sqrt(t))

    def update(self, p, grad, state, group, info) -> None:
        if self.counter == "param":
            state["step"].add_(1.0)
            t = float(state["step"])
        else:
            t = float(info.step)
        eps1, eps2 = group["eps"]
        adafactor_step(
            p, grad, state,
            lr=self._rho(group, t, info.lr), t=t, eps1=eps1, eps2=eps2,
            clip_threshold=group["clip_threshold"], decay=self.decay, beta1=group["beta1"],
            weight_decay=group["weight_decay"], scale_parameter=group["scale_parameter"],
        )

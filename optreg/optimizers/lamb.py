"""LAMB (You et al. 2019), one implementation for the OneFlow, Cerebras and MindSpore entries.

    m = b1 m + (1 - b1) g,   v = b2 v + (1 - b2) g^2
    u = (m / bc1) / (sqrt(v / bc2) + eps)           (bc = 1 without bias correction)
    r = u + wd * w                                   (decoupled decay; 0 when the decay is L2)
    tr = ||w||' / ||trust_on||   with ||w||' = min(||w||, weight_norm_clip) if that clip is set,
         trust_on = u (OneFlow) or r (Cerebras, MindSpore); tr = 1 if either norm is 0;
         tr = min(tr, trust_clip) if set; tr = 1 with adam=True (Cerebras `adam`)
    w -= lr * tr * r

Entries: OneFlow LAMB (bias correction knob, trust ratio on u, adam_w_mode: decoupled or L2),
Cerebras Lamb (no bias correction, ||w|| clamped to [0, 10], trust ratio on r),
MindSpore Lamb (bias correction with the optimizer-wide step, trust ratio on r, as documented).
"""

from __future__ import annotations

from typing import Any, Iterable, Literal

import torch

from optreg.core.optimizer import Optimizer


def lamb_step(
    p: torch.Tensor,
    grad: torch.Tensor,
    exp_avg: torch.Tensor,
    exp_avg_sq: torch.Tensor,
    *,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    bc1: float,
    bc2: float,
    weight_decay: float,
    trust_on: Literal["update", "adam"],
    weight_norm_clip: float | None,
    trust_clip: float | None,
    adam: bool,
) -> None:
    """One LAMB step on one tensor (see the module docstring)."""
    exp_avg.mul_(beta1).add_(grad, alpha=1.0 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
    direction = exp_avg.div(bc1).div_(exp_avg_sq.div(bc2).sqrt_().add_(eps))
    adam_norm = direction.norm() if trust_on == "adam" else None
    if weight_decay:
        direction.add_(p, alpha=weight_decay)
    if adam:
        p.add_(direction, alpha=-lr)
        return
    w_norm = p.norm()
    if weight_norm_clip is not None:
        w_norm = w_norm.clamp(0.0, weight_norm_clip)
    d_norm = adam_norm if adam_norm is not None else direction.norm()
    one = torch.ones_like(w_norm)
    ratio = torch.where((w_norm > 0) & (d_norm > 0), w_norm / d_norm, one)
    if trust_clip is not None:
        ratio = ratio.clamp(max=trust_clip)
    p.add_(direction.mul_(ratio), alpha=-lr)


class Lamb(Optimizer):
    """LAMB with the dialect details as knobs.

    bias_correction      divide m, v by 1 - b^t (t: the optimizer-wide step).
    decoupled_weight_decay
                         True: `wd * w` joins the update r (and the trust ratio); False: L2,
                         `g += wd * w` before the moments (OneFlow adam_w_mode=False).
    trust_on             "update": ||r|| (with the decay term), "adam": ||u|| (OneFlow).
    weight_norm_clip     clamp ||w|| to [0, clip] (Cerebras: 10).
    trust_clip           clamp the trust ratio from above (None: no clamp).
    adam                 trust ratio 1 (Cerebras `adam=True`).
    amsgrad              accepted for OneFlow's signature; True is refused, as OneFlow does.
    """

    sparsify_states = ("exp_avg", "exp_avg_sq")

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        adam: bool = False,
        amsgrad: bool = False,
        *,
        bias_correction: bool = True,
        decoupled_weight_decay: bool = True,
        trust_on: Literal["update", "adam"] = "update",
        weight_norm_clip: float | None = None,
        trust_clip: float | None = None,
        loss_scale: float = 1.0,
        preinit: bool = False,
        set_to_none: bool = True,
    ) -> None:
        if amsgrad:
            raise ValueError("LAMB does not support amsgrad (OneFlow raises RuntimeError)")
        if trust_on not in ("update", "adam"):
            raise ValueError(f"trust_on must be 'update' or 'adam', got {trust_on!r}")
        self.bias_correction = bool(bias_correction)
        self.decoupled = bool(decoupled_weight_decay)
        self.trust_on = trust_on
        self.weight_norm_clip = weight_norm_clip
        self.trust_clip = trust_clip
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, adam=adam)
        super().__init__(
            params, defaults, loss_scale=loss_scale, coupled_decay=not self.decoupled,
            preinit=preinit, set_to_none=set_to_none,
        )

    def init_state(self, p, group):
        return {
            "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
            "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format),
        }

    def update(self, p, grad, state, group, info) -> None:
        beta1, beta2 = group["betas"]
        if self.bias_correction:
            bc1, bc2 = 1.0 - beta1 ** info.step, 1.0 - beta2 ** info.step
        else:
            bc1 = bc2 = 1.0
        lamb_step(
            p, grad, state["exp_avg"], state["exp_avg_sq"],
            lr=info.lr, beta1=beta1, beta2=beta2, eps=group["eps"], bc1=bc1, bc2=bc2,
            weight_decay=group["weight_decay"] if self.decoupled else 0.0,
            trust_on=self.trust_on, weight_norm_clip=self.weight_norm_clip, trust_clip=self.trust_clip,
            adam=group["adam"],
        )

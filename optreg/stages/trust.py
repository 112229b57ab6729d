"""Trust-ratio stages: LAMB's layer-wise ratio ‖w‖/‖u‖ (You et al. 2019) and LARS' gradient
rescaling (You et al. 2017). Both need one norm per tensor (`ops.norm`) and act element-wise
otherwise, so they run on flattened tensors under `fused`.
"""

from __future__ import annotations

from typing import Any, Literal, Mapping

import torch

from optreg.stages.chain import Batch, Stage


class DirectionNorm(Stage):
    """slots["direction_norm"] = ‖u‖ of the Adam direction, taken before a decay term joins u, for
    a later `TrustRatio(norm_of="direction")` (OneFlow LAMB, LambGradFunctor)."""

    per_tensor = True
    norms_only = True

    def apply(self, b: Batch) -> None:
        b.slots["direction_norm"] = b.ops.norm(b.u)


class TrustRatio(Stage):
    """u = tr·u with LAMB's trust ratio, per tensor:

        tr = φ(‖w‖) / ‖x‖    (1 when either norm is 0),   tr = min(tr, trust_clip) if set
        φ(n) = min(n, weight_norm_clip) if set, else n

    norm_of="update":    x is u as it reaches this stage (r = u + wd·w: Cerebras Lamb, MindSpore Lamb)
    norm_of="direction": x is the Adam direction recorded by `DirectionNorm` (OneFlow LAMB)
    weight_norm_clip:    Cerebras / torch_optimizer Lamb clamp ‖w‖ to [0, 10]
    off:                 a group option that sets tr = 1 (Cerebras `adam=True`)
    """

    per_tensor = True
    norms_only = True

    def __init__(self, norm_of: Literal["update", "direction"] = "update", weight_norm_clip: float | None = None,
                 trust_clip: float | None = None, off: str | None = None) -> None:
        if norm_of not in ("update", "direction"):
            raise ValueError(f"norm_of must be 'update' or 'direction', got {norm_of!r}")
        self.norm_of = norm_of
        self.weight_norm_clip = weight_norm_clip
        self.trust_clip = trust_clip
        self.off = off

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        hp["trust_on"] = not (self.off is not None and bool(group.get(self.off)))

    def _ratio(self, w_norm: torch.Tensor, d_norm: torch.Tensor) -> torch.Tensor:
        if self.weight_norm_clip is not None:
            w_norm = w_norm.clamp(0.0, self.weight_norm_clip)
        ratio = torch.where((w_norm > 0) & (d_norm > 0), w_norm / d_norm, torch.ones_like(w_norm))
        return ratio if self.trust_clip is None else ratio.clamp(max=self.trust_clip)

    def apply(self, b: Batch) -> None:
        if not b.hp["trust_on"]:
            return
        ops = b.ops
        d_norm = b.slots["direction_norm"] if self.norm_of == "direction" else ops.norm(b.u)
        b.u = ops.mul(b.u, ops.realize(ops.smap(self._ratio, ops.norm(b.params), d_norm)))


class LarsScale(Stage):
    """MindSpore nn.LARS (1.6 - 2.x, LARSUpdate) gradient rescaling, per tensor:

        g = g / loss_scale
        c = coefficient·‖w‖ / (‖g‖ + wd·‖w‖ + epsilon);   c = min(c/lr, 1) with use_clip
        u = c·(g + wd·w)

    Reads the group's `lars_weight_decay` and `lr`, and the wrapper's settings (`ChainOptimizer.parts`):
    `coefficient`, `epsilon`, `use_clip`, `lars_on` (False for the parameters its filter excludes, which are
    only unscaled) and `lars_inv_loss_scale` (1 / the loss scale LARS takes over).
    """

    per_tensor = True
    norms_only = True

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        wd = float(group.get("lars_weight_decay", 0.0) or 0.0)
        lr = float(hp.get("lr", group.get("lr", 0.0)))
        hp["lars_unscale_on"] = hp["lars_inv_loss_scale"] != 1.0
        hp["lars_wd"], hp["lars_decay_on"] = wd, wd != 0.0
        hp["lars_clip"] = bool(hp.get("use_clip"))
        hp["lars_unit"] = hp["lars_clip"] and lr == 0.0   # c/0 clipped: c = 1
        hp["lars_lr"] = lr if lr else 1.0

    def apply(self, b: Batch) -> None:
        ops, hp = b.ops, b.hp
        if hp["lars_unscale_on"]:
            b.u = ops.mul(b.u, hp["lars_inv_loss_scale"])
        if not hp["lars_on"]:
            return
        coef, eps, wd = hp["coefficient"], hp["epsilon"], hp["lars_wd"]

        def scale(w_norm: torch.Tensor, g_norm: torch.Tensor) -> torch.Tensor:
            c = coef * w_norm / (g_norm + wd * w_norm + eps)
            if hp["lars_unit"]:
                return torch.ones_like(c)
            return torch.clamp(c / hp["lars_lr"], max=1.0) if hp["lars_clip"] else c

        c = ops.smap(scale, ops.norm(b.params), ops.norm(b.u))
        u = ops.add(b.u, b.params, alpha=wd) if hp["lars_decay_on"] else b.u
        b.u = ops.mul(u, c)

"""Adam-family stages: moments, bias correction (optimizer-wide step or per-parameter power state),
eps placement, Adamax's infinity norm, NAdam's momentum schedule, RAdam's rectification.

    m = β1·m + (1-β1)·g,   v = β2·v + (1-β2)·g²            (Kingma & Ba 2015, Algorithm 1)
"""

from __future__ import annotations

import math
from typing import Any, Literal, Mapping

import torch

from optreg.stages.chain import Batch, Stage, scalar_state, zeros


class AdamMoments(Stage):
    """m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g²; with the group's `amsgrad`, v̂ = max(v̂, v).

    nesterov=True puts MindSpore's `use_nesterov` numerator β1·m + (1-β1)·g in `slots["num"]`
    (read from the group's `use_nesterov` / `nesterov` flag); otherwise the numerator is m.
    Slots out: `num`, `den_sq` (v or v̂).
    """

    state_names = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
    sparsify = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")

    def init(self, p: torch.Tensor, group: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        state = {"exp_avg": zeros(p), "exp_avg_sq": zeros(p)}
        if group.get("amsgrad"):
            state["max_exp_avg_sq"] = zeros(p)
        return state

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        beta1, beta2 = group["betas"]
        hp["one_minus_beta1"], hp["one_minus_beta2"] = 1.0 - beta1, 1.0 - beta2
        hp["nesterov_on"] = bool(group.get("nesterov", group.get("use_nesterov", False)))

    def apply(self, b: Batch) -> None:
        ops, hp = b.ops, b.hp
        beta1, beta2 = hp["betas"]
        m, v = b.state["exp_avg"], b.state["exp_avg_sq"]
        ops.add_(ops.mul_(m, beta1), b.u, alpha=hp["one_minus_beta1"])
        ops.addcmul_(ops.mul_(v, beta2), b.u, b.u, value=hp["one_minus_beta2"])
        den_sq = v
        if hp.get("amsgrad"):
            den_sq = ops.maximum_(b.state["max_exp_avg_sq"], v)
        b.slots["den_sq"] = den_sq
        b.slots["num"] = ops.add(ops.mul(m, beta1), b.u, alpha=hp["one_minus_beta1"]) if hp["nesterov_on"] else m


class BiasCorrection(Stage):
    """bc1 = 1 - β1ᵗ, bc2 = 1 - β2ᵗ into `slots` (`bc1`, `bc2_sqrt`), or 1 when off.

    counter="global": t is the optimizer-wide step (OneFlow, MindSpore; host scalars).
    counter="power":  per-parameter `beta1_power` / `beta2_power` state, initialised to the betas
                      and multiplied by them after use (Cerebras AdamBase), plus a float32 `step`.
    flag:             the group option that switches the correction (OneFlow `do_bias_correction`,
                      Cerebras `correct_bias`); None: always on. Read per group.
    """

    state_names = ("step", "beta1_power", "beta2_power")

    def __init__(self, counter: Literal["global", "power"] = "global", flag: str | None = None) -> None:
        self.counter = counter
        self.flag = flag

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

    def apply(self, b: Batch) -> None:
        if self.counter == "global":
            b.slots["bc1"], b.slots["bc2_sqrt"] = b.hp["bc1"], b.hp["bc2_sqrt"]
            return
        ops = b.ops
        ops.add_(b.state["step"], 1.0)
        if not b.hp["bias_correction_on"]:
            b.slots["bc1"] = b.slots["bc2_sqrt"] = 1.0
            return
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
        denom = ops.sqrt(s["den_sq"])
        if self.eps == "torch":
            ops.add_(ops.div_(denom, s["bc2_sqrt"]), b.hp["eps"])
            b.u = ops.div_(ops.div(s["num"], s["bc1"]), denom)
        else:
            ops.add_(denom, b.hp["eps"])
            scale = s["bc2_sqrt"] if isinstance(s["bc1"], float) and s["bc1"] == 1.0 else \
                _ratio(ops, s["bc2_sqrt"], s["bc1"])
            b.u = ops.mul_(ops.div(s["num"], denom), scale)


def _ratio(ops, a: Any, b: Any) -> Any:
    """a / b for host scalars or per-tensor lists of 0-d tensors."""
    if isinstance(a, list) or isinstance(b, list):
        n = len(a) if isinstance(a, list) else len(b)
        pick = lambda x, i: x[i] if isinstance(x, list) else x  # noqa: E731
        return [pick(a, i) / pick(b, i) for i in range(n)]
    return a / b

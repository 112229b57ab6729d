"""Cerebras' Adam family (cerebras.pytorch.optim 2.x; modelzoo R1.9.1 AdamBase / 2.10.0): Adam, AdamW,
Adamax, NAdam, RAdam as chains of stages.

Cerebras' optimizers keep their counters per parameter: Adam/AdamW the running `beta1_power` /
`beta2_power` products (and a float32 `step`), NAdam/RAdam a float32 `step` (`enable_global_step`),
Adamax a `beta1_power`. Every state tensor is allocated by `preinitialize()` in the constructor.
"""

from __future__ import annotations

import warnings
from typing import Any, Iterable

import torch

from optreg.core.types import Betas, Bool, NonNegFloat, OptionalBool, StateDtype
from optreg.stages.adam import (AdamaxDirection, AdamDirection, AdamMoments, BiasCorrection, NAdamDirection,
                                RAdamDirection)
from optreg.stages.apply import ApplyLR, DecoupledDecay
from optreg.stages.chain import Chain
from optreg.stages.gradient import CoupledDecay, Maximize
from optreg.stages.optimizer import ChainOptimizer


#: the warning of cerebras.Adam for a group whose own weight_decay it ignores
WEIGHT_DECAY_IGNORED = ("cerebras.Adam ignores param group {index}'s own weight_decay ({own}) and decays it with the "
                        "constructor's weight_decay ({wd}), as cerebras.pytorch 2.10 does (cerebras.AdamW applies a "
                        "group's own weight_decay)")


class _PowerCounter(ChainOptimizer):
    """Adam/AdamW: loads checkpoints of torch.optim.Adam/AdamW and Hugging Face AdamW too."""

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Our own state dict, or one written by torch Adam/AdamW or HF AdamW (a per-parameter `step` s).

        The next step is s + 1, so the Cerebras state gets `beta_power = beta ** (s + 1)`. (Cerebras'
        own loader sets `beta ** s`, which repeats the bias correction of step s; we continue as the
        writer would.) Group options the dict lacks (torch has no `correct_bias`) keep our values.
        """
        state_dict = from_step_layout(state_dict, bool(self.defaults.get("correct_bias", True)))
        ours = [{k: v for k, v in g.items() if k != "params"} for g in self.param_groups]
        groups = [{**mine, **saved} for mine, saved in zip(ours, state_dict["param_groups"])]
        super().load_state_dict({**state_dict, "param_groups": groups + state_dict["param_groups"][len(groups):]})


def from_step_layout(state_dict: dict[str, Any], bias_correction: bool) -> dict[str, Any]:
    """Add `beta1_power`/`beta2_power` to states that only carry a `step` (torch / HF layout)."""
    groups = state_dict["param_groups"]
    new_state = {}
    for key, st in state_dict["state"].items():
        st = dict(st)
        if "step" in st and "beta1_power" not in st:
            group = next((g for g in groups if key in g["params"]), None)
            step = float(st["step"])
            st["step"] = torch.tensor(step, dtype=torch.float32)
            correct = bias_correction and (group is None or group.get("correct_bias", True))
            if group is not None and correct:
                beta1, beta2 = group["betas"]
                dtype = st["exp_avg"].dtype if isinstance(st.get("exp_avg"), torch.Tensor) else torch.float32
                dtype = torch.promote_types(dtype, torch.float32)
                st["beta1_power"] = torch.tensor(beta1 ** (step + 1), dtype=dtype)
                st["beta2_power"] = torch.tensor(beta2 ** (step + 1), dtype=dtype)
        new_state[key] = st
    out = dict(state_dict)
    out["state"] = new_state
    out["param_groups"] = [{**g, "amsgrad": g.get("amsgrad", False)} for g in groups]
    return out


class Adam(_PowerCounter):
    """cerebras.pytorch.optim.Adam: eps-hat Adam with L2 decay in the gradient,

        g += wd·w;  m, v EMAs;  w -= lr·√(1-β2ᵗ)/(1-β1ᵗ)·m/(√v + eps)   (amsgrad: max of the raw v)

    with β1ᵗ, β2ᵗ the per-parameter running products `beta1_power`, `beta2_power`. wd is the
    constructor's weight_decay in every group (see `add_param_group`).
    """

    chain = Chain(CoupledDecay(), AdamMoments(), BiasCorrection("power"), AdamDirection("hat"), ApplyLR())

    def __init__(self, params: Iterable[Any], lr: NonNegFloat = 1e-3, betas: Betas = (0.9, 0.999),
                 eps: NonNegFloat = 1e-6, weight_decay: NonNegFloat = 0.0, amsgrad: Bool = False, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params,
                         state_dtype=state_dtype, preinit=True)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """The group decays with the constructor's weight_decay, whatever its own (UserWarning if that differs).

        cerebras.pytorch 2.10 Adam passes weight_decay to AdamBase as the default `l2_regularization_rate`,
        which torch's add_param_group puts in every group, and `handle_weight_decay` then drops the group's
        own `weight_decay` (`setdefault` keeps the default): a bug, reproduced. The group's `weight_decay`
        holds the value applied, so the group table, state_dict and every execution agree.
        """
        super().add_param_group({**param_group, "weight_decay": self._constructor_decay(
            param_group, len(getattr(self, "param_groups", ())))})

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """As Adam/AdamW load; a loaded group (a torch Adam checkpoint's) still decays with the constructor's."""
        super().load_state_dict(state_dict)
        for index, group in enumerate(self.param_groups):
            group["weight_decay"] = self._constructor_decay(group, index)

    def _constructor_decay(self, group: dict[str, Any], index: int) -> float:
        wd = self.defaults["weight_decay"]
        own = group.get("weight_decay", wd)
        if own != wd:
            warnings.warn(WEIGHT_DECAY_IGNORED.format(index=index, own=own, wd=wd), UserWarning, stacklevel=3)
        return wd


class AdamW(_PowerCounter):
    """cerebras.pytorch.optim.AdamW: eps-hat Adam with decoupled decay (pre-update weight),

        m, v EMAs;  u = √(1-β2ᵗ)/(1-β1ᵗ)·m/(√v + eps) (no correction if correct_bias=False);  w -= lr·(u + wd·w)
    """

    chain = Chain(AdamMoments(), BiasCorrection("power", "correct_bias"), AdamDirection("hat"), DecoupledDecay(),
                  ApplyLR())

    def __init__(self, params: Iterable[Any], lr: NonNegFloat = 1e-3, betas: Betas = (0.9, 0.999),
                 eps: NonNegFloat = 1e-6, weight_decay: NonNegFloat = 0.0, amsgrad: Bool = False,
                 correct_bias: Bool = True, *, foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      correct_bias=correct_bias), foreach=foreach, fused=fused,
                         contiguous_params=contiguous_params, state_dtype=state_dtype, preinit=True)


class Adamax(ChainOptimizer):
    """cerebras.pytorch.optim.Adamax (= torch.optim.Adamax, other defaults):

        g = ±g + wd·w;  m = β1·m + (1-β1)·g;  e = max(β2·e, |g| + eps);  w -= lr/(1-β1ᵗ)·m/e
    """

    chain = Chain(Maximize(), CoupledDecay(), AdamaxDirection(), ApplyLR())

    def __init__(self, params: Iterable[Any], lr: NonNegFloat = 1e-3, betas: Betas = (0.9, 0.999),
                 eps: NonNegFloat = 1e-6, weight_decay: NonNegFloat = 0.0, maximize: Bool = False, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      maximize=maximize), foreach=foreach, fused=fused,
                         contiguous_params=contiguous_params, state_dtype=state_dtype, preinit=True)


class NAdam(ChainOptimizer):
    """cerebras.pytorch.optim.NAdam: torch's NAdam but Π' = Πₜ·μₜ·μₜ₊₁ (μₜ twice), L2 decay in the gradient,

        w -= lr·[(1-μₜ)/(1-Πₜ)·g + μₜ₊₁/(1-Π')·m]/(√(v/(1-β2ᵗ)) + eps),  t the float32 per-parameter step
    """

    chain = Chain(CoupledDecay(), AdamMoments(amsgrad=False), NAdamDirection(extra_mu=True), ApplyLR())

    def __init__(self, params: Iterable[Any], lr: NonNegFloat = 2e-3, betas: Betas = (0.9, 0.999),
                 eps: NonNegFloat = 1e-8, weight_decay: NonNegFloat = 0.0, momentum_decay: NonNegFloat = 4e-3, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay), foreach=foreach, fused=fused,
                         contiguous_params=contiguous_params, state_dtype=state_dtype, preinit=True)


class RAdam(ChainOptimizer):
    """cerebras.pytorch.optim.RAdam (= torch.optim.RAdam, eps 1e-6): rectified Adam step when ρₜ > 5,
    otherwise w -= lr·m/(1-β1ᵗ); L2 decay in the gradient; t the float32 per-parameter step."""

    chain = Chain(CoupledDecay(), AdamMoments(amsgrad=False), RAdamDirection(), ApplyLR())

    def __init__(self, params: Iterable[Any], lr: NonNegFloat = 1e-3, betas: Betas = (0.9, 0.999),
                 eps: NonNegFloat = 1e-6, weight_decay: NonNegFloat = 0.0, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params,
                         state_dtype=state_dtype, preinit=True)

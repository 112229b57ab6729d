"""Adagrad and ProximalAdagrad.

One Adagrad serves torch-style Adagrad (Cerebras: per-parameter step, eps 1e-6 by default),
OneFlow's (the lr decay counts the optimizer-wide step) and MindSpore's (accumulator starts at
`accum`, no epsilon, `update_slots`). ProximalAdagrad is MindSpore's FOBOS update.
"""

from __future__ import annotations

from typing import Any, Iterable

import torch

from optreg.core.optimizer import Optimizer, StepInfo


def adagrad_update(
    param: torch.Tensor,
    grad: torch.Tensor,
    state_sum: torch.Tensor,
    *,
    clr: float,
    eps: float,
    weight_decay: float,
    update_slots: bool = True,
    eps_inside_sqrt: bool = False,
) -> None:
    """One Adagrad step of one tensor, in place.

    g' = g + wd*w;  s = s + g'^2 (when update_slots);  w <- w - clr*g'/(sqrt(s) + eps)  [or sqrt(s + eps)],
    where clr = lr/(1 + (t-1)*lr_decay) is computed by the caller.
    """
    if weight_decay:
        grad = grad.add(param, alpha=weight_decay)
    if update_slots:
        state_sum.addcmul_(grad, grad, value=1.0)
    std = state_sum.add(eps).sqrt_() if eps_inside_sqrt else state_sum.sqrt().add_(eps)
    param.addcdiv_(grad, std, value=-clr)


def proximal_adagrad_update(param: torch.Tensor, grad: torch.Tensor, accum: torch.Tensor, *, lr: float, l1: float,
                            l2: float, adaptive_shrink: bool = False) -> None:
    """One ProximalAdagrad (FOBOS) step of one tensor, in place.

    a = a + g^2;  v = w - lr*g/sqrt(a);  w <- sign(v)/(1 + s*l2) * max(|v| - s*l1, 0),
    with s = lr (MindSpore's documented formula) or s = lr/sqrt(a) (adaptive_shrink: its CPU kernel, TF's code).
    """
    accum.addcmul_(grad, grad, value=1.0)
    rate = accum.rsqrt().mul_(lr)
    prox = param.addcmul(grad, rate, value=-1.0)
    shrink = rate if adaptive_shrink else lr
    shrunk = prox.abs().sub_(shrink * l1).clamp_(min=0.0)
    param.copy_(prox.sign().mul_(shrunk).div_(1.0 + shrink * l2))


class Adagrad(Optimizer):
    """Adagrad with lr decay and L2 weight decay; reproduces torch 2.x / Cerebras 2.x, OneFlow and
    MindSpore Adagrad through its knobs.

    The step `t` of the lr decay is the parameter's own step when `enable_global_step` (Cerebras keeps a
    float32 `state["step"]` per parameter) and the optimizer-wide step otherwise (OneFlow's `state["step"]`,
    which also advances in steps where the parameter had no gradient).

    Knobs (keyword-only; a dialect row fixes them):
      update_slots     accumulate g^2 (MindSpore `update_slots`; False keeps the accumulator at its start value).
      eps_inside_sqrt  divide by sqrt(s + eps) instead of sqrt(s) + eps.
      loss_scale, coupled_decay, preinit, enable_global_step, set_to_none: dialect features of the base class.
    """

    sparsify_states = ("sum",)

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        maximize: bool = False,
        *,
        update_slots: bool = True,
        eps_inside_sqrt: bool = False,
        loss_scale: float = 1.0,
        coupled_decay: bool = False,
        preinit: bool = False,
        enable_global_step: bool = False,
        set_to_none: bool = True,
    ) -> None:
        self.eps_inside_sqrt = bool(eps_inside_sqrt)
        defaults = dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, eps=eps, maximize=maximize,
                        update_slots=update_slots)
        super().__init__(params, defaults, loss_scale=loss_scale, coupled_decay=coupled_decay, preinit=preinit,
                         enable_global_step=enable_global_step, set_to_none=set_to_none)

    def init_state(self, p: torch.Tensor, group: dict[str, Any]) -> dict[str, Any]:
        return {"sum": torch.full_like(p, group["initial_accumulator_value"], memory_format=torch.preserve_format)}

    def update(self, p: torch.Tensor, grad: torch.Tensor, state: dict[str, Any], group: dict[str, Any],
               info: StepInfo) -> None:
        if group["maximize"]:
            grad = -grad
        step = float(self.increment_global_step(p)) if self.enable_global_step else info.step
        adagrad_update(
            p, grad, state["sum"],
            clr=info.lr / (1.0 + (step - 1.0) * group["lr_decay"]),
            eps=group["eps"],
            weight_decay=0.0 if self.coupled_decay else group["weight_decay"],
            update_slots=group["update_slots"],
            eps_inside_sqrt=self.eps_inside_sqrt,
        )


class ProximalAdagrad(Optimizer):
    """MindSpore ProximalAdagrad (ApplyProximalAdagrad, FOBOS): Adagrad followed by the proximal step
    of l1 / l2 regularisation. The accumulator starts at `initial_accumulator_value` (MindSpore `accum`).

    `use_locking` is MindSpore's option: accepted, no numeric effect. Knob `adaptive_shrink`: shrink by
    the adaptive step lr/sqrt(a) instead of lr, as MindSpore's CPU kernel (and TF's code) does.
    """

    sparsify_states = ("accum",)

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        initial_accumulator_value: float = 0.1,
        l1: float = 0.0,
        l2: float = 0.0,
        weight_decay: float = 0.0,
        *,
        use_locking: bool = False,
        adaptive_shrink: bool = False,
        loss_scale: float = 1.0,
        coupled_decay: bool = False,
        preinit: bool = False,
        set_to_none: bool = True,
    ) -> None:
        self.use_locking = bool(use_locking)
        self.adaptive_shrink = bool(adaptive_shrink)
        defaults = dict(lr=lr, initial_accumulator_value=initial_accumulator_value, l1=l1, l2=l2,
                        weight_decay=weight_decay)
        super().__init__(params, defaults, loss_scale=loss_scale, coupled_decay=coupled_decay, preinit=preinit,
                         set_to_none=set_to_none)

    def init_state(self, p: torch.Tensor, group: dict[str, Any]) -> dict[str, Any]:
        return {"accum": torch.full_like(p, group["initial_accumulator_value"], memory_format=torch.preserve_format)}

    def update(self, p: torch.Tensor, grad: torch.Tensor, state: dict[str, Any], group: dict[str, Any],
               info: StepInfo) -> None:
        if group["weight_decay"] and not self.coupled_decay:
            grad = grad.add(p, alpha=group["weight_decay"])
        proximal_adagrad_update(p, grad, state["accum"], lr=info.lr, l1=group["l1"], l2=group["l2"],
                                adaptive_shrink=self.adaptive_shrink)

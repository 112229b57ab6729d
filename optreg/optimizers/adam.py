"""The Adam family: Adam (with every dialect's variant as a knob), Adamax, NAdam and RAdam.

Adam, one implementation for these dialect entries:

    OneFlow Adam / AdamW              eps_mode="torch", counter="global", do_bias_correction knob
    Cerebras Adam / AdamW             eps_mode="hat",   counter="power" (beta1_power/beta2_power state)
    MindSpore Adam / LazyAdam /       eps_mode="hat",   counter="global", coupled decay in the gradient
      AdamOffload / AdamWeightDecay   pipeline (weight_decay * loss_scale before unscaling), nesterov

    m = b1 m + (1 - b1) g,   v = b2 v + (1 - b2) g^2          (v_max = max(v_max, v) with amsgrad)
    n = m, or b1 m + (1 - b1) g with nesterov (MindSpore use_nesterov)
    eps_mode "torch":  u = (n / bc1) / (sqrt(v) / sqrt(bc2) + eps)
    eps_mode "hat":    u = sqrt(bc2) / bc1 * n / (sqrt(v) + eps)
    decoupled decay:   u += weight_decay * w;   then   w -= lr * u
    bc1 = 1 - b1^t, bc2 = 1 - b2^t (both 1 without bias correction)
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Literal

import torch

from optreg.core.optimizer import Optimizer, StepInfo


# ---------------------------------------------------------------------------------------------
# per-tensor rules
# ---------------------------------------------------------------------------------------------


def adam_direction(
    grad: torch.Tensor,
    exp_avg: torch.Tensor,
    exp_avg_sq: torch.Tensor,
    max_exp_avg_sq: torch.Tensor | None,
    *,
    beta1: float,
    beta2: float,
    eps: float,
    bc1: float,
    bc2: float,
    eps_hat: bool,
    nesterov: bool,
) -> torch.Tensor:
    """Update the moments in place and return the Adam direction `u` (before lr and decay)."""
    exp_avg.mul_(beta1).add_(grad, alpha=1.0 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
    second = exp_avg_sq
    if max_exp_avg_sq is not None:
        torch.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        second = max_exp_avg_sq
    first = exp_avg.mul(beta1).add_(grad, alpha=1.0 - beta1) if nesterov else exp_avg
    if eps_hat:
        return first.div(second.sqrt().add_(eps)).mul_(math.sqrt(bc2) / bc1)
    return first.div(bc1).div_(second.sqrt().div_(math.sqrt(bc2)).add_(eps))


def adam_step(
    p: torch.Tensor,
    grad: torch.Tensor,
    exp_avg: torch.Tensor,
    exp_avg_sq: torch.Tensor,
    max_exp_avg_sq: torch.Tensor | None,
    *,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    bc1: float,
    bc2: float,
    weight_decay: float,
    eps_hat: bool,
    nesterov: bool,
) -> None:
    """One dense Adam step on one tensor: `w -= lr * (u + weight_decay * w)` (decay 0 when coupled)."""
    update = adam_direction(
        grad, exp_avg, exp_avg_sq, max_exp_avg_sq,
        beta1=beta1, beta2=beta2, eps=eps, bc1=bc1, bc2=bc2, eps_hat=eps_hat, nesterov=nesterov,
    )
    if weight_decay:
        update.add_(p.to(update.device), alpha=weight_decay)
    p.add_(update.to(p.device), alpha=-lr)


def lazy_adam_step(
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
    eps_hat: bool,
    nesterov: bool,
) -> None:
    """Lazy Adam on a sparse COO gradient: only the rows it touches update m, v and w.

    Duplicate rows are summed first (MindSpore's FusedSparseLazyAdam); the bias correction is the
    optimizer's, not per row.
    """
    grad = grad.coalesce()
    rows = grad.indices()[0]
    values = grad.values()
    m = exp_avg[rows]
    v = exp_avg_sq[rows]
    update = adam_direction(
        values, m, v, None,
        beta1=beta1, beta2=beta2, eps=eps, bc1=bc1, bc2=bc2, eps_hat=eps_hat, nesterov=nesterov,
    )
    exp_avg[rows] = m
    exp_avg_sq[rows] = v
    p.index_add_(0, rows.to(p.device), update.to(p.device), alpha=-lr)


# ---------------------------------------------------------------------------------------------
# Adam
# ---------------------------------------------------------------------------------------------


def _scalar(value: float, p: torch.Tensor) -> torch.Tensor:
    """A 0-d state tensor in the parameter's precision (at least float32)."""
    return torch.tensor(value, dtype=torch.promote_types(p.dtype, torch.float32), device=p.device)


class Adam(Optimizer):
    """Adam with the dialect details as knobs (see the module docstring for the formula).

    eps_mode            "torch": eps added to sqrt(v_hat); "hat": eps added to sqrt(v) before the
                        bias correction is folded into the step size (MindSpore, Cerebras, HF).
    bias_correction     False: bc1 = bc2 = 1 (OneFlow do_bias_correction, Cerebras correct_bias,
                        MindSpore AdamWeightDecay).
    decoupled_weight_decay
                        True: `w -= lr * (u + wd * w)` (AdamW); False: `g += wd * w` in the
                        gradient pipeline (L2, MindSpore order: before unscaling the loss scale).
    counter             "global": t is the optimizer-wide step (OneFlow, MindSpore);
                        "power": per-parameter `beta1_power` / `beta2_power` state, initialised to
                        the betas and multiplied after use (Cerebras), plus a float32 `step`.
    nesterov            MindSpore use_nesterov: numerator `b1 m + (1 - b1) g`.
    lazy                sparse gradients update only the rows they touch (MindSpore LazyAdam);
                        otherwise a sparse gradient is made dense.
    offload             state lives on the CPU and the direction is computed there; only
                        `w += delta` runs on the parameter's device (MindSpore AdamOffload).
    """

    supports_sparse = True
    sparsify_states = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        eps_mode: Literal["torch", "hat"] = "torch",
        bias_correction: bool = True,
        decoupled_weight_decay: bool = False,
        counter: Literal["global", "power"] = "global",
        nesterov: bool = False,
        lazy: bool = False,
        offload: bool = False,
        loss_scale: float = 1.0,
        preinit: bool = False,
        set_to_none: bool = True,
    ) -> None:
        if eps_mode not in ("torch", "hat"):
            raise ValueError(f"eps_mode must be 'torch' or 'hat', got {eps_mode!r}")
        if counter not in ("global", "power"):
            raise ValueError(f"counter must be 'global' or 'power', got {counter!r}")
        self.eps_hat = eps_mode == "hat"
        self.bias_correction = bool(bias_correction)
        self.decoupled = bool(decoupled_weight_decay)
        self.counter = counter
        self.nesterov = bool(nesterov)
        self.lazy = bool(lazy)
        self.offload = bool(offload)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad)
        super().__init__(
            params,
            defaults,
            maximize=maximize,
            loss_scale=loss_scale,
            coupled_decay=not self.decoupled,
            preinit=preinit,
            set_to_none=set_to_none,
        )

    def init_state(self, p: torch.Tensor, group: dict[str, Any]) -> dict[str, Any]:
        device = torch.device("cpu") if self.offload else p.device
        state: dict[str, Any] = {
            "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format, device=device),
            "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format, device=device),
        }
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format, device=device)
        if self.counter == "power":
            beta1, beta2 = group["betas"]
            state["step"] = torch.tensor(0.0, dtype=torch.float32, device=p.device)
            if self.bias_correction:
                state["beta1_power"] = _scalar(beta1, p)
                state["beta2_power"] = _scalar(beta2, p)
        return state

    def _corrections(self, state: dict[str, Any], group: dict[str, Any], info: StepInfo) -> tuple[float, float]:
        """(bc1, bc2) for this step; advances the per-parameter counters in "power" mode."""
        beta1, beta2 = group["betas"]
        if self.counter == "power":
            state["step"].add_(1.0)
            if not self.bias_correction:
                return 1.0, 1.0
            b1p, b2p = state["beta1_power"], state["beta2_power"]
            bc1, bc2 = 1.0 - float(b1p), 1.0 - float(b2p)
            b1p.mul_(beta1)
            b2p.mul_(beta2)
            return bc1, bc2
        if not self.bias_correction:
            return 1.0, 1.0
        return 1.0 - beta1 ** info.step, 1.0 - beta2 ** info.step

    def update(self, p, grad, state, group, info) -> None:
        beta1, beta2 = group["betas"]
        bc1, bc2 = self._corrections(state, group, info)
        common = dict(lr=info.lr, beta1=beta1, beta2=beta2, eps=group["eps"], bc1=bc1, bc2=bc2,
                      eps_hat=self.eps_hat, nesterov=self.nesterov)
        if grad.is_sparse and self.lazy and not group["amsgrad"] and not self.decoupled:
            lazy_adam_step(p, grad.to(state["exp_avg"].device), state["exp_avg"], state["exp_avg_sq"], **common)
            return
        if grad.is_sparse:
            grad = grad.to_dense()
        adam_step(
            p,
            grad.to(state["exp_avg"].device),
            state["exp_avg"],
            state["exp_avg_sq"],
            state.get("max_exp_avg_sq"),
            weight_decay=group["weight_decay"] if self.decoupled else 0.0,
            **common,
        )

    # -- checkpoints from torch.optim.Adam / AdamW and Hugging Face AdamW (Cerebras counter) ----

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load our own state dict, or one written by torch Adam/AdamW or HF AdamW ("power" counter).

        Those store a per-parameter `step` s (steps taken); the next step is s + 1, so the
        Cerebras-style state gets `beta_power = beta ** (s + 1)`. (Cerebras' own loader sets
        `beta ** s`, which repeats the bias correction of step s; we continue as the writer would.)
        """
        if self.counter == "power":
            state_dict = _from_step_layout(state_dict, self.bias_correction)
        super().load_state_dict(state_dict)


def _from_step_layout(state_dict: dict[str, Any], bias_correction: bool) -> dict[str, Any]:
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


# ---------------------------------------------------------------------------------------------
# Adamax, NAdam, RAdam (first-party for the Cerebras dialect)
# ---------------------------------------------------------------------------------------------


def adamax_step(p, grad, exp_avg, exp_inf, *, lr: float, beta1: float, beta2: float, eps: float, bc1: float) -> None:
    """Adamax: `m = b1 m + (1-b1) g; u = max(b2 u, |g| + eps); w -= lr / bc1 * m / u`."""
    exp_avg.mul_(beta1).add_(grad, alpha=1.0 - beta1)
    torch.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
    p.addcdiv_(exp_avg, exp_inf, value=-lr / bc1)


class Adamax(Optimizer):
    """Adamax (Kingma & Ba, sec. 7), with a per-parameter `beta1_power` state (Cerebras Adamax).

    Equal to torch.optim.Adamax with the same arguments; Cerebras' defaults are lr=1e-3, eps=1e-6.
    """

    sparsify_states = ("exp_avg", "exp_inf")

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        maximize: bool = False,
        *,
        preinit: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults, maximize=maximize, coupled_decay=True, preinit=preinit)

    def init_state(self, p, group):
        return {
            "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
            "exp_inf": torch.zeros_like(p, memory_format=torch.preserve_format),
            "beta1_power": _scalar(group["betas"][0], p),
        }

    def update(self, p, grad, state, group, info) -> None:
        beta1, beta2 = group["betas"]
        bc1 = 1.0 - float(state["beta1_power"])
        adamax_step(p, grad, state["exp_avg"], state["exp_inf"], lr=info.lr, beta1=beta1, beta2=beta2,
                    eps=group["eps"], bc1=bc1)
        state["beta1_power"].mul_(beta1)


def nadam_step(p, grad, exp_avg, exp_avg_sq, *, lr: float, beta1: float, beta2: float, eps: float,
               mu: float, mu_next: float, mu_product: float, mu_product_next: float, bc2: float) -> None:
    """NAdam (Dozat 2016, torch form):

    `w -= lr * [(1-mu)/(1-prod_t) g + mu_next/(1-prod_next) m] / (sqrt(v / bc2) + eps)`.
    """
    exp_avg.mul_(beta1).add_(grad, alpha=1.0 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
    denom = exp_avg_sq.div(bc2).sqrt_().add_(eps)
    p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
    p.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - mu_product_next))


class NAdam(Optimizer):
    """NAdam with momentum decay `mu_t = b1 (1 - 0.5 * 0.96^(t * momentum_decay))`.

    extra_mu=False is torch.optim.NAdam (`prod_next = prod_t * mu_{t+1}`); extra_mu=True is
    Cerebras NAdam, whose `mu_product_next = prod_t * mu_t * mu_{t+1}` multiplies mu_t twice.
    The step is a per-parameter float32 `step` (Cerebras enable_global_step).
    """

    sparsify_states = ("exp_avg", "exp_avg_sq")

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum_decay: float = 4e-3,
        *,
        extra_mu: bool = False,
        preinit: bool = False,
    ) -> None:
        self.extra_mu = bool(extra_mu)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay)
        super().__init__(params, defaults, coupled_decay=True, preinit=preinit, enable_global_step=True)

    def init_state(self, p, group):
        return {
            "mu_product": _scalar(1.0, p),
            "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
            "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format),
        }

    def update(self, p, grad, state, group, info) -> None:
        beta1, beta2 = group["betas"]
        t = float(self.increment_global_step(p))
        psi = group["momentum_decay"]
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * psi))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
        state["mu_product"].mul_(mu)
        prod = float(state["mu_product"])
        prod_next = prod * mu * mu_next if self.extra_mu else prod * mu_next
        nadam_step(p, grad, state["exp_avg"], state["exp_avg_sq"], lr=info.lr, beta1=beta1, beta2=beta2,
                   eps=group["eps"], mu=mu, mu_next=mu_next, mu_product=prod, mu_product_next=prod_next,
                   bc2=1.0 - beta2 ** t)


def radam_step(p, grad, exp_avg, exp_avg_sq, *, lr: float, beta1: float, beta2: float, eps: float, t: float) -> None:
    """RAdam (Liu et al. 2019): rectified adaptive step when rho_t > 5, else the un-adapted m_hat."""
    exp_avg.mul_(beta1).add_(grad, alpha=1.0 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
    bc1 = 1.0 - beta1 ** t
    bc2 = 1.0 - beta2 ** t
    rho_inf = 2.0 / (1.0 - beta2) - 1.0
    rho_t = rho_inf - 2.0 * t * beta2 ** t / bc2
    if rho_t > 5.0:
        rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        denom = exp_avg_sq.sqrt().add_(eps)
        p.addcdiv_(exp_avg, denom, value=-lr * rect * math.sqrt(bc2) / bc1)
    else:
        p.add_(exp_avg, alpha=-lr / bc1)


class RAdam(Optimizer):
    """RAdam with a per-parameter float32 `step` (Cerebras RAdam); equal to torch.optim.RAdam."""

    sparsify_states = ("exp_avg", "exp_avg_sq")

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        *,
        preinit: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults, coupled_decay=True, preinit=preinit, enable_global_step=True)

    def init_state(self, p, group):
        return {
            "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
            "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format),
        }

    def update(self, p, grad, state, group, info) -> None:
        beta1, beta2 = group["betas"]
        t = float(self.increment_global_step(p))
        radam_step(p, grad, state["exp_avg"], state["exp_avg_sq"], lr=info.lr, beta1=beta1, beta2=beta2,
                   eps=group["eps"], t=t)

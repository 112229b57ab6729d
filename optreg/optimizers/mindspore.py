"""Classes with MindSpore's names and defaults over the shared implementations."""

from __future__ import annotations

from typing import Any

from optreg.dialects.mindspore.groups import _as_items, _refuse_group_lr, resolve_groups
from optreg.optimizers import adafactor as _adafactor
from optreg.optimizers import adam as _adam
from optreg.optimizers import ftrl as _ftrl
from optreg.optimizers import lamb as _lamb

# ---------------------------------------------------------------------------------------------
# classes with MindSpore's names
# ---------------------------------------------------------------------------------------------


class Adam(_adam.Adam):
    """mindspore.nn.Adam: eps-hat Adam, `lr_t = lr sqrt(1 - b2^t) / (1 - b1^t)`,
    `w -= lr_t m / (sqrt(v) + eps)` (nesterov: `(b1 m + (1 - b1) g)` on top), coupled weight decay
    applied to the scaled gradient before the loss scale is divided out; t is optimizer-wide.

    `use_locking` has no numeric effect. `lazy` (LazyAdam) and `offload` (AdamOffload) are the
    registry rows' knobs.
    """

    def __init__(
        self,
        params: Any,
        learning_rate: Any = 1e-3,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
        use_locking: bool = False,
        use_nesterov: bool = False,
        weight_decay: float = 0.0,
        loss_scale: float = 1.0,
        *,
        lazy: bool = False,
        offload: bool = False,
    ) -> None:
        self.use_locking = bool(use_locking)
        self.centralizes = not offload
        super().__init__(
            resolve_groups(params, weight_decay, learning_rate),
            lr=learning_rate, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay,
            eps_mode="hat", bias_correction=True, decoupled_weight_decay=False, counter="global",
            nesterov=use_nesterov, lazy=lazy, offload=offload, loss_scale=loss_scale,
        )


class AdamWeightDecay(_adam.Adam):
    """mindspore.nn.AdamWeightDecay: no bias correction, `u = m / (sqrt(v) + eps) + wd w`,
    `w -= lr u`; no loss scale, no gradient centralisation."""

    centralizes = False

    def __init__(
        self,
        params: Any,
        learning_rate: Any = 1e-3,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
    ) -> None:
        super().__init__(
            resolve_groups(params, weight_decay, learning_rate),
            lr=learning_rate, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay,
            eps_mode="hat", bias_correction=False, decoupled_weight_decay=True, counter="global",
        )


class Lamb(_lamb.Lamb):
    """mindspore.nn.Lamb as documented: bias-corrected `r = m_hat / (sqrt(v_hat) + eps) + wd w`,
    `w -= lr ||w|| / ||r|| r` (trust ratio 1 when a norm is 0); t is optimizer-wide."""

    def __init__(
        self,
        params: Any,
        learning_rate: Any,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
    ) -> None:
        super().__init__(
            resolve_groups(params, weight_decay, learning_rate),
            lr=learning_rate, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay,
            bias_correction=True, decoupled_weight_decay=True, trust_on="update",
        )


class AdaFactor(_adafactor.AdaFactor):
    """mindspore.nn.AdaFactor: HF AdaFactor with `decay_rate` given as a positive exponent,
    `beta1=0.9` by default (0 or None: no first moment), the optimizer-wide step, weight decay
    on every parameter."""

    def __init__(
        self,
        params: Any,
        learning_rate: float | None = None,
        eps: tuple[float, float] = (1e-30, 1e-3),
        clip_threshold: float = 1.0,
        decay_rate: float = 0.8,
        beta1: float | None = 0.9,
        weight_decay: float = 0.0,
        scale_parameter: bool = True,
        relative_step: bool = True,
        warmup_init: bool = False,
        compression: bool = False,
        loss_scale: float = 1.0,
    ) -> None:
        super().__init__(
            resolve_groups(params, weight_decay, learning_rate, decay_all=True),
            lr=learning_rate, eps=eps, clip_threshold=clip_threshold, decay_rate=decay_rate, beta1=beta1,
            weight_decay=weight_decay, scale_parameter=scale_parameter, relative_step=relative_step,
            warmup_init=warmup_init, compression=compression, decay_rate_sign=-1, counter="global",
            loss_scale=loss_scale,
        )


class FTRL(_ftrl.FTRL):
    """mindspore.nn.FTRL: FTRL-Proximal with weight decay on every parameter when ungrouped."""

    def __init__(
        self,
        params: Any,
        initial_accum: float = 0.1,
        learning_rate: float = 0.001,
        lr_power: float = -0.5,
        l1: float = 0.0,
        l2: float = 0.0,
        use_locking: bool = False,
        loss_scale: float = 1.0,
        weight_decay: float = 0.0,
    ) -> None:
        items = _as_items(params)
        _refuse_group_lr(items)
        super().__init__(
            resolve_groups(items, weight_decay, learning_rate, decay_all=True),
            initial_accum=initial_accum, learning_rate=learning_rate, lr_power=lr_power, l1=l1, l2=l2,
            use_locking=use_locking, loss_scale=loss_scale, weight_decay=weight_decay,
        )

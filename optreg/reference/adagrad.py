"""Numpy references for Adagrad and ProximalAdagrad, one function per framework, from the documented formulas.

Each function takes the parameter `w`, its gradient `g`, a per-parameter `state` dict (mutated) and,
where the formula needs it, the step `t` (1-based) that the framework counts, and returns the new parameter.
"""

from __future__ import annotations

import numpy as np

from optreg.reference.sgd import mindspore_grad


def torch_adagrad(w, g, state, t, *, lr, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0,
                  eps=1e-10, maximize=False):
    """torch.optim.Adagrad (2.x docs), also cerebras.pytorch.optim.Adagrad (t = that parameter's step):
    g <- g + wd*w; lr~ = lr/(1 + (t-1)*lr_decay); s = s + g^2 (s_0 = initial_accumulator_value);
    w <- w - lr~ * g/(sqrt(s) + eps)."""
    if maximize:
        g = -g
    g = g + weight_decay * w
    s = state.get("s", np.full_like(w, initial_accumulator_value)) + g * g
    state["s"] = s
    return w - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s) + eps)


def oneflow_adagrad(w, g, state, t, *, lr, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0,
                    eps=1e-10):
    """oneflow.optim.Adagrad: S_t = S_{t-1} + g'^2 with g' = g + wd*w;
    decay_lr = lr/(1 + (train_step-1)*lr_decay); X_t = X_{t-1} - decay_lr*g'/(sqrt(S_t) + eps).

    `train_step` is the optimizer-wide step (it counts steps in which this parameter had no gradient).
    The docstring writes sqrt(S_t + eps); the kernel (`AdagradUpdateFunctor`) adds eps after the root,
    and this reference follows the kernel.
    """
    g = g + weight_decay * w
    s = state.get("s", np.full_like(w, initial_accumulator_value)) + g * g
    state["s"] = s
    return w - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s) + eps)


def mindspore_adagrad(w, g, state, *, lr, accum=0.1, update_slots=True, weight_decay=0.0, loss_scale=1.0):
    """mindspore.nn.Adagrad (ApplyAdagrad): accum += g*g if update_slots (accum_0 = `accum`);
    w <- w - lr*g/sqrt(accum). No epsilon."""
    g = mindspore_grad(w, g, weight_decay=weight_decay, loss_scale=loss_scale)
    h = state.get("h", np.full_like(w, accum))
    if update_slots:
        h = h + g * g
    state["h"] = h
    return w - lr * g / np.sqrt(h)


def mindspore_proximal_adagrad(w, g, state, *, lr, accum=0.1, l1=0.0, l2=0.0, weight_decay=0.0, loss_scale=1.0):
    """mindspore.nn.ProximalAdagrad (ApplyProximalAdagrad, FOBOS): accum_{t+1} = accum_t + g*g;
    prox_v = w - lr*g/sqrt(accum_{t+1}); w <- sign(prox_v)/(1 + lr*l2) * max(|prox_v| - lr*l1, 0)."""
    g = mindspore_grad(w, g, weight_decay=weight_decay, loss_scale=loss_scale)
    h = state.get("h", np.full_like(w, accum)) + g * g
    state["h"] = h
    prox = w - lr * g / np.sqrt(h)
    return np.sign(prox) / (1 + lr * l2) * np.maximum(np.abs(prox) - lr * l1, 0.0)

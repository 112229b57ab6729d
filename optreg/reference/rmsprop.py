"""Numpy references for RMSProp, one function per framework, from each one's documented formula.

Each function takes the parameter `w`, its gradient `g` and a per-parameter `state` dict (mutated),
and returns the new parameter.
"""

from __future__ import annotations

import numpy as np

from optreg.reference.sgd import mindspore_grad


def torch_rmsprop(w, g, state, *, lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                  maximize=False):
    """torch.optim.RMSprop (2.x docs), also cerebras.pytorch.optim.RMSprop:
    v = alpha*v + (1-alpha)*g^2 (v_0 = 0); centered: g_ave = alpha*g_ave + (1-alpha)*g, v~ = v - g_ave^2;
    b = mu*b + g/(sqrt(v~)+eps), w <- w - lr*b (mu > 0), else w <- w - lr*g/(sqrt(v~)+eps)."""
    if maximize:
        g = -g
    if weight_decay:
        g = g + weight_decay * w
    v = alpha * state.get("v", np.zeros_like(w)) + (1 - alpha) * g * g
    state["v"] = v
    if centered:
        ga = alpha * state.get("ga", np.zeros_like(w)) + (1 - alpha) * g
        state["ga"] = ga
        v = v - ga * ga
    step = g / (np.sqrt(v) + eps)
    if momentum > 0:
        b = momentum * state.get("b", np.zeros_like(w)) + step
        state["b"] = b
        return w - lr * b
    return w - lr * step


def oneflow_rmsprop(w, g, state, *, lr, alpha=0.99, eps=1e-8, weight_decay=0.0, centered=False):
    """oneflow.optim.RMSprop (momentum must be 0): r = alpha*r + (1-alpha)*g'^2 with g' = g + wd*w;
    W <- w - lr*g'/sqrt(r + eps); centered: G = alpha*G + (1-alpha)*g', W <- w - lr*g'/sqrt(r - G^2 + eps)."""
    g = g + weight_decay * w
    r = alpha * state.get("r", np.zeros_like(w)) + (1 - alpha) * g * g
    state["r"] = r
    if centered:
        mg = alpha * state.get("mg", np.zeros_like(w)) + (1 - alpha) * g
        state["mg"] = mg
        r = r - mg * mg
    return w - lr * g / np.sqrt(r + eps)


def mindspore_rmsprop(w, g, state, *, lr, decay=0.9, momentum=0.0, epsilon=1e-10, centered=False,
                      weight_decay=0.0, loss_scale=1.0):
    """mindspore.nn.RMSProp: s_{t+1} = rho*s_t + (1-rho)*g^2 (s_0 = 1, the `mean_square` slot starts at ones);
    m_{t+1} = beta*m_t + lr*g/sqrt(s_{t+1} + eps); w <- w - m_{t+1};
    centered: g_{t+1} = rho*g_t + (1-rho)*g, the denominator is sqrt(s_{t+1} - g_{t+1}^2 + eps)."""
    g = mindspore_grad(w, g, weight_decay=weight_decay, loss_scale=loss_scale)
    s = decay * state.get("s", np.ones_like(w)) + (1 - decay) * g * g
    state["s"] = s
    if centered:
        mg = decay * state.get("mg", np.zeros_like(w)) + (1 - decay) * g
        state["mg"] = mg
        s = s - mg * mg
    m = momentum * state.get("m", np.zeros_like(w)) + lr * g / np.sqrt(s + epsilon)
    state["m"] = m
    return w - m

"""Numpy references for SGD with momentum, one function per framework, from each one's documented formula.

Each function takes the parameter `w`, its gradient `g` and a per-parameter `state` dict (mutated),
and returns the new parameter. `g` is the raw gradient of the loss.
"""

from __future__ import annotations

import numpy as np


def torch_sgd(w, g, state, *, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    """torch.optim.SGD (2.x docs): g <- -g if maximize; g <- g + wd*w;
    b_1 = g, b_t = mu*b_{t-1} + (1-tau)*g; g <- g + mu*b (nesterov) or b; w <- w - lr*g."""
    if maximize:
        g = -g
    if weight_decay:
        g = g + weight_decay * w
    if momentum:
        b = g.copy() if "b" not in state else momentum * state["b"] + (1 - dampening) * g
        state["b"] = b
        g = g + momentum * b if nesterov else b
    return w - lr * g


def oneflow_sgd(w, g, state, *, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    """OneFlow SGD (oneflow.optim.SGD, kernel `MomentumUpdateFunctor`): g' = g + wd*w;
    momentum 0: w <- w - lr*g' (maximize has no effect);
    else V_0 = 0, V_t = beta*V_{t-1} + (1-dampening)*g'; d = g' + beta*V (nesterov) or V;
    w <- w - lr*d, or w + lr*d when maximize."""
    g = g + weight_decay * w
    if not momentum:
        return w - lr * g
    v = momentum * state.get("v", np.zeros_like(w)) + (1 - dampening) * g
    state["v"] = v
    d = g + momentum * v if nesterov else v
    return w + lr * d if maximize else w - lr * d


def cerebras_sgd(w, g, state, *, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    """cerebras.pytorch.optim.SGD (2.x): g <- -g if maximize; g <- g + wd*w;
    buf_0 = 0 (preinitialized), buf = mu*buf + (1-dampening)*g; g <- g + mu*buf (nesterov) or buf; w <- w - lr*g."""
    if maximize:
        g = -g
    g = g + weight_decay * w
    if momentum:
        buf = momentum * state.get("buf", np.zeros_like(w)) + (1 - dampening) * g
        state["buf"] = buf
        g = g + momentum * buf if nesterov else buf
    return w - lr * g


def mindspore_grad(w, g, *, weight_decay=0.0, loss_scale=1.0):
    """The gradient a MindSpore optimizer kernel sees: g / loss_scale + weight_decay * w."""
    return g / loss_scale + weight_decay * w


def mindspore_momentum(w, g, state, *, lr, momentum, use_nesterov=False, weight_decay=0.0, loss_scale=1.0):
    """mindspore.nn.Momentum: v_{t+1} = v_t*u + g;
    nesterov: p <- p - (g*lr + v_{t+1}*u*lr), else p <- p - lr*v_{t+1}; v_0 = 0."""
    g = mindspore_grad(w, g, weight_decay=weight_decay, loss_scale=loss_scale)
    v = state.get("v", np.zeros_like(w)) * momentum + g
    state["v"] = v
    if use_nesterov:
        return w - (g * lr + v * momentum * lr)
    return w - lr * v


def mindspore_sgd(w, g, state, *, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, loss_scale=1.0):
    """mindspore.nn.SGD: v_{t+1} = u*v_t + g*(1-dampening), with v_1 = g on the first step;
    nesterov: p <- p - lr*(g + u*v_{t+1}), else p <- p - lr*v_{t+1}.
    Weight decay is added inside the kernel to every parameter after unscaling: g = g/ls + wd*w."""
    g = g / loss_scale + weight_decay * w
    if not momentum:
        return w - lr * g
    v = g.copy() if "v" not in state else momentum * state["v"] + g * (1 - dampening)
    state["v"] = v
    return w - lr * (g + momentum * v) if nesterov else w - lr * v

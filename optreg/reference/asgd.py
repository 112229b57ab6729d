"""Numpy reference for averaged SGD (torch.optim.ASGD docs; cerebras.pytorch.optim.ASGD is the same formula)."""

from __future__ import annotations

import numpy as np


def torch_asgd(w, g, state, t, *, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, maximize=False):
    """Step t (1-based, counted per parameter), with eta_0 = lr, mu_0 = 1, ax_0 = 0:
    g <- -g if maximize; g <- g + wd*w; w <- w*(1 - lambd*eta) - eta*g;
    ax <- w if mu == 1 else ax + mu*(w - ax);
    eta <- lr/(1 + lambd*lr*t)^alpha; mu <- 1/max(1, t - t0).  The averaged parameter is `state["ax"]`."""
    if maximize:
        g = -g
    if weight_decay:
        g = g + weight_decay * w
    eta = state.get("eta", lr)
    mu = state.get("mu", 1.0)
    w = w * (1 - lambd * eta) - eta * g
    ax = state.get("ax", np.zeros_like(w))
    state["ax"] = w.copy() if mu == 1 else ax + mu * (w - ax)
    state["eta"] = lr / (1 + lambd * lr * t) ** alpha
    state["mu"] = 1 / max(1, t - t0)
    return w

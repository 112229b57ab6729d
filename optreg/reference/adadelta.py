"""Numpy reference for Adadelta (torch.optim.Adadelta docs; cerebras.pytorch.optim.Adadelta is the same formula)."""

from __future__ import annotations

import numpy as np


def torch_adadelta(w, g, state, *, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
    """g <- -g if maximize; g <- g + wd*w; v = rho*v + (1-rho)*g^2;
    dx = sqrt(u + eps)/sqrt(v + eps) * g; u = rho*u + (1-rho)*dx^2; w <- w - lr*dx  (v_0 = u_0 = 0)."""
    if maximize:
        g = -g
    if weight_decay:
        g = g + weight_decay * w
    v = rho * state.get("v", np.zeros_like(w)) + (1 - rho) * g * g
    dx = np.sqrt(state.get("u", np.zeros_like(w)) + eps) / np.sqrt(v + eps) * g
    state["v"] = v
    state["u"] = rho * state.get("u", np.zeros_like(w)) + (1 - rho) * dx * dx
    return w - lr * dx

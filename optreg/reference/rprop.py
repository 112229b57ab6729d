"""Numpy reference for Rprop (torch.optim.Rprop docs; cerebras.pytorch.optim.Rprop is the same formula)."""

from __future__ import annotations

import numpy as np


def torch_rprop(w, g, state, *, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50.0), maximize=False):
    """Per element, with prev_0 = 0 and eta_0 = lr:
    g*prev > 0: eta <- min(eta*eta_plus, max_step);  g*prev < 0: eta <- max(eta*eta_minus, min_step), g <- 0;
    otherwise eta is kept; w <- w - eta*sign(g); prev <- g."""
    if maximize:
        g = -g
    eta_minus, eta_plus = etas
    lo, hi = step_sizes
    prev = state.get("prev", np.zeros_like(w))
    eta = state.get("eta", np.full_like(w, lr))
    product = g * prev
    eta = np.where(product > 0, np.minimum(eta * eta_plus, hi), eta)
    eta = np.where(product < 0, np.maximum(eta * eta_minus, lo), eta)
    g = np.where(product < 0, 0.0, g)
    state["prev"] = g
    state["eta"] = eta
    return w - eta * np.sign(g)

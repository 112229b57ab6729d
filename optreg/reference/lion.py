"""Numpy reference for Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms", Program 1;
cerebras.pytorch.optim.Lion 2.10 documents and computes the same update)."""

from __future__ import annotations

import numpy as np


def lion(w, g, state, *, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
    """w <- w*(1 - lr*wd);  c = beta1*m + (1-beta1)*g;  w <- w - lr*sign(c);  m <- beta2*m + (1-beta2)*g  (m_0 = 0)."""
    beta1, beta2 = betas
    m = state.get("m", np.zeros_like(w))
    w = w * (1.0 - lr * weight_decay)
    w = w - lr * np.sign(beta1 * m + (1.0 - beta1) * g)
    state["m"] = beta2 * m + (1.0 - beta2) * g
    return w

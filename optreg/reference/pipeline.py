"""Reference gradient pipelines (numpy), from the frameworks' documented order of operations.

MindSpore (nn.Optimizer.decay_weight -> gradients_centralization -> scale_grad):

    g = g + weight_decay * loss_scale * w      (coupled decay on the still-scaled gradient)
    g = g - mean(g over axes 1..n-1)           (grouped, grad_centralization, ndim >= 2, shape[1] % 16 == 0)
    g = g * (1 / loss_scale)
"""

from __future__ import annotations

import numpy as np


def centralized(g: np.ndarray) -> np.ndarray:
    """`g - mean(g, axes 1..n-1)` where MindSpore's code centralises, else `g`."""
    if g.ndim < 2 or g.shape[1] % 16 != 0:
        return g
    return g - g.mean(axis=tuple(range(1, g.ndim)), keepdims=True)


def mindspore_grad(g: np.ndarray, w: np.ndarray, *, weight_decay: float = 0.0, loss_scale: float = 1.0,
                   centralize: bool = False, maximize: bool = False) -> np.ndarray:
    """The gradient a MindSpore (or L2-coupled) rule sees; `maximize` negates first."""
    g = -g if maximize else g
    if weight_decay:
        g = g + (weight_decay * loss_scale) * w
    if centralize:
        g = centralized(g)
    if loss_scale != 1.0:
        g = g * (1.0 / loss_scale)
    return g

"""Numpy reference for MindSpore's LARS gradient rescaling (nn.LARS / LARSUpdate docs).

    c = coefficient ||w|| / (||g|| + wd ||w|| + epsilon);   c = min(c / lr, 1) with use_clip
    g = c (g + wd w)
"""

from __future__ import annotations

import numpy as np


def lars_grad(w, g, *, weight_decay, lr, coefficient, epsilon, use_clip):
    w_norm = np.linalg.norm(w)
    c = coefficient * w_norm / (np.linalg.norm(g) + weight_decay * w_norm + epsilon)
    if use_clip:
        c = min(c / lr, 1.0)
    return c * (g + weight_decay * w)

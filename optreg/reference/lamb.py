"""Numpy reference for LAMB, from the documented formulas.

    m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;   m_hat = m / bc1,  v_hat = v / bc2  (bc = 1 if off)
    u = m_hat / (sqrt(v_hat) + eps);  r = u + wd w
    OneFlow:   tr = ||w|| / ||u||                    (1 if a norm is 0)
    Cerebras:  tr = min(||w||, 10) / ||r||           (1 if a norm is 0; no bias correction)
    MindSpore: tr = ||w|| / ||r||                    (documented formula; 1 if a norm is 0)
    w = w - lr tr r
"""

from __future__ import annotations

import numpy as np


def lamb(w, g, m, v, t, *, lr, beta1, beta2, eps, weight_decay=0.0, bias_correction=True,
         trust_on="update", weight_norm_clip=None, adam=False):
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    bc1 = 1 - beta1 ** t if bias_correction else 1.0
    bc2 = 1 - beta2 ** t if bias_correction else 1.0
    u = (m / bc1) / (np.sqrt(v / bc2) + eps)
    r = u + weight_decay * w
    if adam:
        return w - lr * r, m, v
    w_norm = np.linalg.norm(w)
    if weight_norm_clip is not None:
        w_norm = min(w_norm, weight_norm_clip)
    d_norm = np.linalg.norm(u if trust_on == "adam" else r)
    tr = w_norm / d_norm if (w_norm > 0 and d_norm > 0) else 1.0
    return w - lr * tr * r, m, v

"""Numpy reference for FTRL-Proximal (MindSpore nn.FTRL docs / TF ApplyFtrl).

    n' = n + g^2
    z  = z + g - (n'^(-p) - n^(-p)) / lr * w
    w  = (sign(z) l1 - z) / (n'^(-p) / lr + 2 l2)  if |z| > l1  else 0
"""

from __future__ import annotations

import numpy as np


def ftrl(w, g, n, z, *, lr, lr_power, l1, l2):
    n_new = n + g * g
    z = z + g - (n_new ** (-lr_power) - n ** (-lr_power)) / lr * w
    w = np.where(np.abs(z) > l1, (np.sign(z) * l1 - z) / (n_new ** (-lr_power) / lr + 2 * l2), 0.0)
    return w, n_new, z

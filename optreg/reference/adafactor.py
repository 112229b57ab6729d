"""Numpy reference for AdaFactor (HF form used by MindSpore and Cerebras), from the formulas.

    b2t = 1 - t^(-0.8);  rho = min(1e-6 t (warmup) or 1e-2, 1/sqrt(t)) if relative_step else lr
    a = rho max(eps2, RMS(w)) if scale_parameter else rho
    G = g^2 + eps1
    2-D+: R = b2t R + (1-b2t) mean_{-1} G;  C = b2t C + (1-b2t) mean_{-2} G
          U = g / sqrt( (R / mean_{-1} R)[..., None] * C[..., None, :] )
    1-D:  V = b2t V + (1-b2t) G;   U = g / sqrt(V)
    U = a U / max(1, RMS(U) / d);  first moment: m = b1 m + (1-b1) U, U = m
    w = w - wd a w - U
"""

from __future__ import annotations

import math

import numpy as np


def rms(x):
    return float(np.sqrt(np.mean(np.square(x))))


def adafactor(w, g, state, t, *, lr=None, eps=(1e-30, 1e-3), clip_threshold=1.0, decay=0.8, beta1=None,
              weight_decay=0.0, scale_parameter=True, relative_step=True, warmup_init=False):
    """One step; `state` holds R, C (2-D+) or V (1-D) and m (beta1); returns (w, state)."""
    state = dict(state)
    if relative_step:
        rho = min(1e-6 * t if warmup_init else 1e-2, 1 / math.sqrt(t))
    else:
        rho = lr
    a = rho * max(eps[1], rms(w)) if scale_parameter else rho
    b2t = 1 - t ** (-decay)
    G = g * g + eps[0]
    if w.ndim >= 2:
        state["R"] = b2t * state["R"] + (1 - b2t) * G.mean(axis=-1)
        state["C"] = b2t * state["C"] + (1 - b2t) * G.mean(axis=-2)
        r = state["R"] / state["R"].mean(axis=-1, keepdims=True)
        U = g / np.sqrt(r[..., None] * state["C"][..., None, :])
    else:
        state["V"] = b2t * state["V"] + (1 - b2t) * G
        U = g / np.sqrt(state["V"])
    U = a * U / max(1.0, rms(U) / clip_threshold)
    if beta1:
        state["m"] = beta1 * state["m"] + (1 - beta1) * U
        U = state["m"]
    return w - weight_decay * a * w - U, state


def init_state(w, beta1=None):
    state = {}
    if w.ndim >= 2:
        state["R"] = np.zeros(w.shape[:-1])
        state["C"] = np.zeros(w.shape[:-2] + w.shape[-1:])
    else:
        state["V"] = np.zeros_like(w)
    if beta1:
        state["m"] = np.zeros_like(w)
    return state

"""Numpy reference for Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms", Program 1;
cerebras.pytorch.optim.Lion 2.10 documents and computes the same update), and DeepSpeed 0.19's two kernels,
which differ from it only in the step at an interpolation of exactly ±0."""

from __future__ import annotations

import numpy as np


def lion(w, g, state, *, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0, direction=np.sign):
    """w <- w*(1 - lr*wd);  c = beta1*m + (1-beta1)*g;  w <- w - lr*direction(c);  m <- beta2*m + (1-beta2)*g
    (m_0 = 0; direction = sign: 0 at c = 0)."""
    beta1, beta2 = betas
    m = state.get("m", np.zeros_like(w))
    w = w * (1.0 - lr * weight_decay)
    w = w - lr * direction(beta1 * m + (1.0 - beta1) * g)
    state["m"] = beta2 * m + (1.0 - beta2) * g
    return w


def deepspeed_lion(w, g, state, *, lr=1e-3, betas=(0.9, 0.999), weight_decay=0.0):
    """DeepSpeedCPULion (csrc/includes/cpu_lion.h): the step is -copysign(lr, c), -lr at c = +0 and +lr at -0."""
    return lion(w, g, state, lr=lr, betas=betas, weight_decay=weight_decay, direction=lambda c: np.copysign(1.0, c))


def deepspeed_fused_lion(w, g, state, *, lr=1e-3, betas=(0.9, 0.999), weight_decay=0.0):
    """FusedLion (csrc/lion/multi_tensor_lion.cu): the step is `c > 0 ? -lr : lr`, +lr at c = ±0."""
    return lion(w, g, state, lr=lr, betas=betas, weight_decay=weight_decay,
                direction=lambda c: np.where(c > 0, 1.0, -1.0))

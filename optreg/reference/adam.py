"""Numpy references for the Adam family, written from the documented formulas.

adam:   m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  vmax = max(vmax, v) (amsgrad)
        n = m (or b1 m + (1-b1) g, nesterov)
        torch / OneFlow:         u = (n / bc1) / (sqrt(v) / sqrt(bc2) + eps)
        MindSpore / Cerebras:    u = sqrt(bc2) / bc1 * n / (sqrt(v) + eps)
        AdamW (decoupled):       w = w - lr (u + wd w);   otherwise w = w - lr u
adamax: m = b1 m + (1-b1) g;  u = max(b2 u, |g| + eps);  w = w - lr / (1 - b1^t) m / u
nadam:  mu_t = b1 (1 - 0.5 * 0.96^(t psi));  P_t = prod mu_1..t
        w = w - lr (1-mu_t)/(1-P_t) g / d - lr mu_{t+1} / (1-P_next) m / d,  d = sqrt(v/bc2) + eps
        P_next = P_t mu_{t+1} (torch) or P_t mu_t mu_{t+1} (Cerebras)
radam:  rho_inf = 2/(1-b2) - 1;  rho_t = rho_inf - 2 t b2^t / bc2
        rho_t > 5:  w = w - lr r_t m/bc1 * sqrt(bc2) / (sqrt(v) + eps),
                    r_t = sqrt((rho_t-4)(rho_t-2) rho_inf / ((rho_inf-4)(rho_inf-2) rho_t))
        else:       w = w - lr m / bc1
"""

from __future__ import annotations

import math

import numpy as np


def adam(w, g, m, v, vmax, t, *, lr, beta1, beta2, eps, weight_decay=0.0, decoupled=False,
         eps_hat=False, bias_correction=True, nesterov=False):
    """One Adam step; returns (w, m, v, vmax). Coupled decay is the caller's (see pipeline)."""
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    second = v
    if vmax is not None:
        vmax = np.maximum(vmax, v)
        second = vmax
    bc1 = 1 - beta1 ** t if bias_correction else 1.0
    bc2 = 1 - beta2 ** t if bias_correction else 1.0
    n = beta1 * m + (1 - beta1) * g if nesterov else m
    if eps_hat:
        u = math.sqrt(bc2) / bc1 * n / (np.sqrt(second) + eps)
    else:
        u = (n / bc1) / (np.sqrt(second) / math.sqrt(bc2) + eps)
    if decoupled and weight_decay:
        u = u + weight_decay * w
    return w - lr * u, m, v, vmax


def lazy_adam_rows(w, rows, values, m, v, t, *, lr, beta1, beta2, eps, eps_hat=True, nesterov=False):
    """Lazy Adam (MindSpore LazyAdam, sparse): only `rows` (duplicates summed) are updated."""
    w, m, v = w.copy(), m.copy(), v.copy()
    summed: dict[int, np.ndarray] = {}
    for r, val in zip(rows, values):
        summed[int(r)] = summed.get(int(r), 0) + val
    for r, g in summed.items():
        w[r], m[r], v[r], _ = adam(w[r], g, m[r], v[r], None, t, lr=lr, beta1=beta1, beta2=beta2, eps=eps,
                                   eps_hat=eps_hat, nesterov=nesterov)
    return w, m, v


def adamax(w, g, m, u, t, *, lr, beta1, beta2, eps):
    m = beta1 * m + (1 - beta1) * g
    u = np.maximum(beta2 * u, np.abs(g) + eps)
    return w - lr / (1 - beta1 ** t) * m / u, m, u


def nadam(w, g, m, v, prod, t, *, lr, beta1, beta2, eps, momentum_decay, extra_mu=False):
    """Returns (w, m, v, prod) with prod the running product of mu."""
    mu = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
    mu_next = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
    prod = prod * mu
    prod_next = prod * mu * mu_next if extra_mu else prod * mu_next
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    d = np.sqrt(v / (1 - beta2 ** t)) + eps
    w = w - lr * (1 - mu) / (1 - prod) * g / d - lr * mu_next / (1 - prod_next) * m / d
    return w, m, v, prod


def radam(w, g, m, v, t, *, lr, beta1, beta2, eps):
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    bc1, bc2 = 1 - beta1 ** t, 1 - beta2 ** t
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * t * beta2 ** t / bc2
    if rho_t > 5:
        r = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        return w - lr * r * (m / bc1) * math.sqrt(bc2) / (np.sqrt(v) + eps), m, v
    return w - lr * m / bc1, m, v

"""Numpy reference for MindSpore's THOR (mindspore.nn.thor), from the formulas: the Kronecker factors A and G
computed from a layer's recorded inputs and output gradients, their damped inverses, the preconditioned gradient,
weight decay, clipping and ApplyMomentum.

A layer's records are lists (one entry per call of the layer in the step): its inputs (a Linear's (..., in), a
Conv2d's (N, C, H, W), an Embedding's integer ids) and the gradients of the loss with respect to its outputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

SPLIT = 128   # MindSpore inverts Dense / Conv factors by 128×128 diagonal blocks


# ---------------------------------------------------------------------------------------------------------------
# statistics
# ---------------------------------------------------------------------------------------------------------------
def im2col(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int], padding: tuple[int, int],
           dilation: tuple[int, int]) -> np.ndarray:
    """Patches of a (N, C, H, W) input, zero-padded: (N, C·kh·kw, L), the row index c·kh·kw + i·kw + j (the
    weight's (out, C, kh, kw) flattened), positions in row-major order."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    xp = np.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=x.dtype)
    xp[:, :, ph:ph + h, pw:pw + w] = x
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    cols = np.empty((n, c, kh, kw, ho, wo), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i * dh:i * dh + sh * (ho - 1) + 1:sh, j * dw:j * dw + sw * (wo - 1) + 1:sw]
    return cols.reshape(n, c * kh * kw, ho * wo)


def covariance(rows: list[np.ndarray]) -> np.ndarray:
    """Σ r rᵀ / (number of rows) over the rows of every call."""
    stacked = np.concatenate(rows, axis=0)
    return stacked.T @ stacked / stacked.shape[0]


def dense_rows(x: np.ndarray) -> np.ndarray:
    """A Linear's input or output-gradient rows: leading dims flattened."""
    return x.reshape(-1, x.shape[-1])


def conv_input_rows(x: np.ndarray, conv: Mapping[str, Any]) -> tuple[np.ndarray, int]:
    """(rows of patches, one per example and output position; L = positions per example)."""
    cols = im2col(x, conv["kernel"], conv["stride"], conv["padding"], conv["dilation"])
    return cols.transpose(0, 2, 1).reshape(-1, cols.shape[1]), cols.shape[2]


def conv_output_rows(d: np.ndarray) -> np.ndarray:
    """A Conv2d's output gradient (N, O, Ho, Wo) as rows (N·Ho·Wo, O)."""
    return d.transpose(0, 2, 3, 1).reshape(-1, d.shape[1])


# ---------------------------------------------------------------------------------------------------------------
# inverses and preconditioning
# ---------------------------------------------------------------------------------------------------------------
def block_inverse(m: np.ndarray, block: int | None = SPLIT) -> np.ndarray:
    """The inverse of each diagonal block (size `block`, the last smaller), zero elsewhere; None: the whole."""
    n = m.shape[0]
    if block is None or n <= block:
        return np.linalg.inv(m)
    out = np.zeros_like(m)
    for s in range(0, n, block):
        e = min(s + block, n)
        out[s:e, s:e] = np.linalg.inv(m[s:e, s:e])
    return out


def kronecker_inverses(a: np.ndarray, g: np.ndarray, damping: float, batch_size: int, loss_scale: float,
                       positions: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Dense / Conv: A⁻¹ = (A + √(λ/L) I)⁻¹ / √L,  G⁻¹ = (G·bs²/ls² + √(λ/L) I)⁻¹ / √L (L = 1 for Dense)."""
    d = math.sqrt(damping / positions)
    g = g * batch_size ** 2 / loss_scale ** 2
    return (block_inverse(a + d * np.eye(a.shape[0])) / math.sqrt(positions),
            block_inverse(g + d * np.eye(g.shape[0])) / math.sqrt(positions))


def embedding_inverses(counts: np.ndarray, g: np.ndarray, damping: float, batch_size: int,
                       loss_scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Embedding: A⁻¹ = 1/(count/bs + √λ) (a diagonal), G⁻¹ = (G·bs²/ls² + √λ I)⁻¹ (whole)."""
    d = math.sqrt(damping)
    g = g * batch_size ** 2 / loss_scale ** 2
    return 1.0 / (counts / batch_size + d), block_inverse(g + d * np.eye(g.shape[0]), None)


def precondition(kind: str, grad: np.ndarray, a_inv: np.ndarray, g_inv: np.ndarray) -> np.ndarray:
    """Dense / Conv: G⁻¹ g A⁻¹ on the weight as (out, rest); Embedding: diag(A⁻¹) g G⁻¹."""
    if kind == "embedding":
        return (a_inv[:, None] * grad) @ g_inv
    return (g_inv @ grad.reshape(grad.shape[0], -1) @ a_inv).reshape(grad.shape)


def layernorm_gradient(grad: np.ndarray, damping: float, batch_size: int) -> np.ndarray:
    """g / (g²/bs + √λ)."""
    return grad / (grad * grad / batch_size + math.sqrt(damping))


def clip_by_norm(grad: np.ndarray, clip: float = 1.0) -> np.ndarray:
    """g·c / max(‖g‖, c)."""
    return grad * clip / max(float(np.linalg.norm(grad)), clip)


# ---------------------------------------------------------------------------------------------------------------
# one step
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class Layer:
    """A preconditioned layer: kind "dense", "conv" or "embedding", its weight's name, conv geometry or vocab."""

    kind: str
    weight: str
    conv: Mapping[str, Any] = field(default_factory=dict)
    vocab: int = 0


def refresh(layer: Layer, inputs: list[np.ndarray], douts: list[np.ndarray], *, damping: float, batch_size: int,
            loss_scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(A⁻¹, G⁻¹) of one layer from its records of one step."""
    if layer.kind == "embedding":
        counts = sum(np.bincount(ids.reshape(-1), minlength=layer.vocab).astype(np.float64) for ids in inputs)
        return embedding_inverses(counts, covariance([dense_rows(d) for d in douts]), damping, batch_size,
                                  loss_scale)
    if layer.kind == "conv":
        rows = [conv_input_rows(x, layer.conv) for x in inputs]
        positions = sum(r.shape[0] for r, _ in rows) / sum(x.shape[0] for x in inputs)
        return kronecker_inverses(covariance([r for r, _ in rows]), covariance([conv_output_rows(d) for d in douts]),
                                  damping, batch_size, loss_scale, positions)
    return kronecker_inverses(covariance([dense_rows(x) for x in inputs]), covariance([dense_rows(d) for d in douts]),
                              damping, batch_size, loss_scale)


def thor_step(w: dict[str, np.ndarray], grads: dict[str, np.ndarray], records: Mapping[str, Any],
              state: dict[str, Any], k: int, *, layers: list[Layer], layernorm: set[str], lr: float,
              damping: Callable[[int], float], momentum: float, weight_decay: float = 0.0,
              decays: Callable[[str], bool] = lambda name: True, loss_scale: float = 1.0, batch_size: int = 32,
              nesterov: bool = False, clip: bool = False, frequency: int = 100) -> dict[str, np.ndarray]:
    """Step k (0-based) of mindspore.nn.thor on the parameters `w` with raw gradients `grads` (of the loss times
    loss_scale). records[weight] = (inputs, douts) of each layer in this step (needed at refresh steps).
    state holds each layer's A⁻¹, G⁻¹ and each parameter's momentum v. Returns the new parameters."""
    by_weight = {layer.weight: layer for layer in layers}
    if k % frequency == 0:
        for layer in layers:
            if layer.weight in grads:
                inputs, douts = records[layer.weight]
                state[layer.weight] = refresh(layer, inputs, douts, damping=damping(k), batch_size=batch_size,
                                              loss_scale=loss_scale)
    out = dict(w)
    for name, raw in grads.items():
        g = raw / loss_scale
        if name in by_weight:
            a_inv, g_inv = state[name]
            g = precondition(by_weight[name].kind, g, a_inv, g_inv)
        elif name in layernorm:
            g = layernorm_gradient(g, damping(k), batch_size)
        if weight_decay and decays(name):
            g = g + weight_decay * w[name]
        if clip:
            g = clip_by_norm(g)
        v = state.get(("v", name), np.zeros_like(g)) * momentum + g
        state[("v", name)] = v
        out[name] = w[name] - (g * lr + v * momentum * lr if nesterov else lr * v)
    return out

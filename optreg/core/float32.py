"""float32 arithmetic in Python floats: what a framework computes with float32 tensors or C++ `float` arguments."""

from __future__ import annotations

import math

FLOAT32_MAX = 3.4028234663852886e38


def f32(x: float) -> float:
    """x rounded to the nearest float32, as C++ converts a double argument to a `float` parameter.

    An operation on values rounded so, rounded again (`f32(1.0 - f32(b))`), is the float32
    arithmetic's result: float64 holds more than twice float32's precision. Plain float arithmetic, which
    torch.compile traces.
    """
    if x == 0 or not math.isfinite(x):
        return x
    quantum = max(math.frexp(x)[1] - 24, -149)   # 24 significant bits; float32's subnormal step below 2**-126
    y = math.ldexp(round(math.ldexp(x, -quantum)), quantum)   # round(): to nearest, ties to even
    return y if abs(y) <= FLOAT32_MAX else math.copysign(math.inf, y)

"""OneFlow's Adadelta as a chain of stages."""

from __future__ import annotations

from optreg.stages.shared import TorchAdadelta


class Adadelta(TorchAdadelta):
    """oneflow.optim.Adadelta (OneFlow 0.9.0; AdadeltaUpdateFunctor), torch's Adadelta formula:

        g' = ±g + wd·w;  v = ρ·v + (1-ρ)·g'²;  Δ = √(u + eps)/√(v + eps)·g'
        u = ρ·u + (1-ρ)·Δ²;  w -= lr·Δ

    The constructor allocates every parameter's state (square_avg, acc_delta: zeros), as OneFlow's
    does; zero_grad() defaults to set_to_none=False; per-group clip_grad. maximize negates the
    gradient before the L2 term, as the kernel does.
    """

    zero_grad_to_none = False

"""Cerebras' Adafactor as a chain of stages."""

from __future__ import annotations

from typing import Any, Optional

from optreg.core.types import Bool, Float, NegFloat, NonNegFloat, OptionalBool, StateDtype
from optreg.stages.adafactor import (AdafactorClock, ClipByRMS, FactoredSecondMoment, RelativeScale,
                                     ScaledDecayApply, UpdateMomentum)
from optreg.stages.chain import Chain
from optreg.stages.optimizer import ChainOptimizer


class Adafactor(ChainOptimizer):
    """cerebras.pytorch.optim.Adafactor (2.x; modelzoo R1.9.1, from HF transformers), manual lr:

        α = lr·max(eps2, RMS(w)) if scale_parameter;  β̂2 = 1 - t^decay_rate (decay_rate = -0.8)
        factored second moment of g² + eps1;  U = α·U/max(1, RMS(U));  w -= wd·α·w;  w -= U

    t is a per-parameter float32 step; state is allocated in the constructor (preinitialize()).
    """

    chain = Chain(AdafactorClock("param", decay_rate="negative"), FactoredSecondMoment(), ClipByRMS(),
                  RelativeScale(), UpdateMomentum(), ScaledDecayApply())

    def __init__(self, params: Any, lr: NonNegFloat, eps: tuple[NonNegFloat, NonNegFloat] = (1e-30, 1e-3),
                 clip_threshold: Float = 1.0, decay_rate: NegFloat = -0.8, beta1: Optional[Float] = None,
                 weight_decay: NonNegFloat = 0.0, scale_parameter: Bool = True, relative_step: Bool = False,
                 warmup_init: Bool = False, *, foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        _check(lr, decay_rate, relative_step, warmup_init, sign=-1.0)
        super().__init__(params, dict(lr=lr, eps=tuple(eps), clip_threshold=clip_threshold, decay_rate=decay_rate,
                                      beta1=beta1, weight_decay=weight_decay, scale_parameter=scale_parameter,
                                      relative_step=relative_step, warmup_init=warmup_init),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params,
                         state_dtype=state_dtype, preinit=True)


def _check(lr: Any, decay_rate: float, relative_step: bool, warmup_init: bool, sign: float) -> None:
    """The HF checks (ValueError), shared with MindSpore's AdaFactor; sign: how decay_rate gives the exponent."""
    if lr is not None and relative_step:
        raise ValueError("cannot combine a manual lr with relative_step=True")
    if warmup_init and not relative_step:
        raise ValueError("warmup_init=True requires relative_step=True")
    if lr is None and not relative_step:
        raise ValueError("lr is required when relative_step=False")
    if not sign * decay_rate > 0:
        raise ValueError(f"the decay exponent must be > 0, got decay_rate={decay_rate}")

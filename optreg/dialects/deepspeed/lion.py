"""DeepSpeed's Lion kernels as chains of stages: DeepSpeedCPULion (offload_optimizer) and FusedLion (CUDA)."""

from __future__ import annotations

from typing import Any

from optreg.core.types import Betas, Bool, NonNegFloat, OptionalBool, StateDtype
from optreg.stages.chain import Chain
from optreg.stages.misc import Lion as LionStage
from optreg.stages.optimizer import ChainOptimizer


class Lion(ChainOptimizer):
    """deepspeed.ops.lion.DeepSpeedCPULion (DeepSpeed 0.19.8, csrc/includes/cpu_lion.h `Step_AVX`,
    csrc/lion/cpu_lion_impl.cpp `Step_1`), in float32 as the kernel computes it:

        c = β1·m + (1-β1)·g;  w = w·(1 - lr·wd) - copysign(lr, c);  m = β2·m + (1-β2)·g

    copysign, not sign: where c is exactly +0 (a gradient and a momentum both zero) the weight moves by -lr,
    at -0 by +lr. β, 1 - β and 1 - lr·wd are the kernel's float32 values.
    """

    chain = Chain(LionStage(sign="copysign", scalars="float32", steps=True))

    def __init__(self, params: Any, lr: NonNegFloat = 1e-3, betas: Betas = (0.9, 0.999),
                 weight_decay: NonNegFloat = 0.0, *, foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), weight_decay=weight_decay),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype)


class FusedLion(Lion):
    """deepspeed.ops.lion.FusedLion (DeepSpeed 0.19.8, csrc/lion/multi_tensor_lion.cu), the CUDA kernel DeepSpeed
    builds without offload_optimizer, in float32 as the kernel computes it:

        c = β1·m + (1-β1)·g;  w = w·(1 - lr·wd) + (c > 0 ? -lr : lr);  m = β2·m + (1-β2)·g

    At c = ±0 (and NaN) the weight moves by +lr; DeepSpeedCPULion moves it by -lr at +0.
    """

    chain = Chain(LionStage(sign="positive", scalars="float32", steps=True))

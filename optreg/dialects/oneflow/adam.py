"""OneFlow's Adam and AdamW (oneflow.optim, master 2025-08; kernel AdamUpdateFunctor) as chains of stages.

OneFlow counts one optimizer-wide step (it advances for parameters without a gradient too) and its
`zero_grad()` keeps the gradients (`set_to_none=False`). Its kernels take every hyperparameter as a
C++ float: for tensors below float64 the stages that derive scalars form them so (`scalars="float32"`:
float32 β, 1 - β in float32, bias corrections and √bc2 in float32); lr, eps and weight decay reach a
float32 tensor as float32 scalars anyway. The update is applied in the form of torch's single-tensor
AdamW (`ApplyAdam`), which rounds by an ulp or so differently from OneFlow's one-pass kernel and from
a stage per term; the recordings are matched to 2e-7 (with a stage per term: 2.6e-7).

`support_sparse` is True for both, as OneFlow's `Adam.support_sparse` and `AdamW.support_sparse` return
(python/oneflow/nn/optimizer/adam.py and adamw.py at commit 25c8978c1c8b, 2025-08-20); a sparse
gradient is applied as its dense equivalent, as OneFlow's SGD here.
"""

from __future__ import annotations

from typing import Any, Iterable

from optreg.core.types import Betas, Bool, NonNegFloat, OptionalBool, StateDtype
from optreg.stages.adam import AdamMoments, ApplyAdam, BiasCorrection
from optreg.stages.chain import Chain
from optreg.stages.gradient import CoupledDecay
from optreg.stages.optimizer import ChainOptimizer

#: the stage setting of OneFlow's Adam-family chains: scalars formed as its kernels' float attributes
SCALARS = "float32"


class _OneFlowAdamFamily(ChainOptimizer):
    """The signature and settings Adam and AdamW share in OneFlow: sparse gradients applied densely, zero_grad()
    keeping the gradients."""

    supports_sparse = True

    def __init__(self, params: Iterable[Any], lr: NonNegFloat = 1e-3, betas: Betas = (0.9, 0.999),
                 eps: NonNegFloat = 1e-8, weight_decay: NonNegFloat = 0.0, amsgrad: Bool = False,
                 do_bias_correction: Bool = True, *, foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      do_bias_correction=do_bias_correction),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype,
                         set_to_none=False)


class Adam(_OneFlowAdamFamily):
    """oneflow.optim.Adam: torch's Adam with the optimizer-wide step t and L2 decay,

        g += wd·w;  m, v EMAs (amsgrad: v̂ = max(v̂, v));  w -= lr/bc1 · m/(√v̂/√bc2 + eps),  bc = 1 - βᵗ
        (bc1 = bc2 = 1 with do_bias_correction=False)
    """

    chain = Chain(CoupledDecay(), AdamMoments(scalars=SCALARS),
                  BiasCorrection("global", "do_bias_correction", scalars=SCALARS), ApplyAdam())


class AdamW(_OneFlowAdamFamily):
    """oneflow.optim.AdamW: torch's AdamW with the optimizer-wide step t,

        m, v EMAs (amsgrad: v̂ = max(v̂, v));  w -= lr·(m̂/(√v̂ + eps) + wd·w)
    """

    chain = Chain(AdamMoments(scalars=SCALARS), BiasCorrection("global", "do_bias_correction", scalars=SCALARS),
                  ApplyAdam(decoupled=True))

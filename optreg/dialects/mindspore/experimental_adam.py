"""mindspore.experimental.optim.Adam (MindSpore 2.10) as a chain of stages: MindSpore's ApplyAdam kernel."""

from __future__ import annotations

from typing import Any, Iterable

from optreg.core.types import Betas, Bool, NonNegFloat, OptionalBool, StateDtype
from optreg.stages.adam import AdamDirection, AdamMoments, BiasCorrection
from optreg.stages.apply import ApplyLR
from optreg.stages.chain import Chain
from optreg.stages.gradient import CoupledDecay, Maximize
from optreg.stages.optimizer import ChainOptimizer


class ExperimentalAdam(ChainOptimizer):
    """mindspore.experimental.optim.Adam (MindSpore 2.10): the ApplyAdam kernel with the optimizer-wide step t,

        g = -g if maximize;  g += wd·w;  m, v EMAs;  w -= lr·√(1-β2ᵗ)/(1-β1ᵗ) · m/(√v + eps)

    eps is added to √v before the bias correction (nn.Adam's eps-hat form; torch adds it to √v̂), which moves
    the weights by eps·√(1-β2ᵗ)-sized amounts less: 2e-5 of the movement on unit gradients, more on small ones.
    amsgrad is accepted and has no effect: MindSpore allocates max_exp_avg_sq but always calls the kernel's
    plain form.
    """

    chain = Chain(Maximize(), CoupledDecay(), AdamMoments(amsgrad=False), BiasCorrection("global"),
                  AdamDirection("hat"), ApplyLR())

    def __init__(self, params: Iterable[Any], lr: NonNegFloat = 1e-3, betas: Betas = (0.9, 0.999),
                 eps: NonNegFloat = 1e-8, weight_decay: NonNegFloat = 0.0, amsgrad: Bool = False, *,
                 maximize: Bool = False, foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype)

"""MindSpore's Adam family (mindspore.nn 1.6 - 2.x): Adam, LazyAdam, AdamOffload, AdamWeightDecay as
chains of stages.

Each class has MindSpore's signature (`learning_rate`, `beta1`, `beta2`, ...); its groups follow
MindSpore's rules (`resolve_groups`: the beta/gamma weight-decay filter, `order_params`, per-group
`grad_centralization`). The groups keep torch's keys, as MindSpore's are what torch's schedulers
and checkpoints read: `learning_rate` is the groups' `lr` (a number, or a per-step list / schedule kept
in `lr_schedule`) and `beta1`, `beta2` are `betas` (OneCycleLR cycles β1 there).
A class is split into its gradient pipeline (`gradient`) and its rule (`rule`); `chain` is both.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from optreg.core.types import Bool, NonNegFloat, OptionalBool, PosFloat, StateDtype, StrictOpenUnit, StrictPosFloat
from optreg.dialects.mindspore.groups import resolve_groups
from optreg.dialects.mindspore.vocabulary import MS_LEARNING_RATE
from optreg.errors import ConfigError
from optreg.stages.adam import AdamDirection, AdamMoments, BiasCorrection, Offload
from optreg.stages.apply import ApplyLR, DecoupledDecay
from optreg.stages.chain import Batch, Chain
from optreg.stages.execute import run_eager
from optreg.stages.gradient import Centralize, CoupledDecay, Unscale
from optreg.stages.ops import EAGER
from optreg.stages.optimizer import ChainOptimizer
from optreg.stages.state_codec import decoded

#: MindSpore's gradient pipeline (nn.Optimizer: decay_weight → gradients_centralization → scale_grad)
PIPELINE = (CoupledDecay(loss_scaled=True), Centralize(), Unscale())
#: eps-hat Adam with MindSpore's optimizer-wide step
ADAM = (AdamMoments(), BiasCorrection("global"), AdamDirection("hat"), ApplyLR())


class _MindSporeAdam(ChainOptimizer):
    """The signature and sparse-gradient handling shared by Adam, LazyAdam and AdamOffload."""

    gradient: ClassVar[Chain] = Chain(*PIPELINE)
    rule: ClassVar[Chain] = Chain(*ADAM)
    supports_sparse = True

    def __init__(self, params: Any, learning_rate: MS_LEARNING_RATE = 1e-3, beta1: StrictOpenUnit = 0.9,
                 beta2: StrictOpenUnit = 0.999, eps: StrictPosFloat = 1e-8, use_locking: Bool = False,
                 use_nesterov: Bool = False, weight_decay: NonNegFloat = 0.0, loss_scale: PosFloat = 1.0, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        self.use_locking = bool(use_locking)  # accepted, no numeric effect
        defaults = dict(lr=learning_rate, betas=(beta1, beta2), eps=eps, use_locking=use_locking,
                        use_nesterov=use_nesterov, weight_decay=weight_decay, loss_scale=loss_scale)
        super().__init__(resolve_groups(params, weight_decay, learning_rate, carried=defaults), defaults,
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype,
                         loss_scale=loss_scale)

    def prepare_grad(self, p: torch.Tensor, group: dict[str, Any]) -> torch.Tensor:
        """The gradient the rule sees: `p.grad` through the gradient pipeline (MindSpore's order)."""
        return self._pipeline(p, p.grad, self.hyper(group))

    def _pipeline(self, p: torch.Tensor, grad: torch.Tensor, hp: dict[str, Any]) -> torch.Tensor:
        """The gradient stages on a dense gradient, or on the rows of a sparse COO one (MindSpore
        decays, centralises and unscales a RowTensor's values with the weight rows they touch)."""
        if not grad.is_sparse:
            b = Batch([p], [grad], {}, hp, EAGER)
            self.gradient.apply(b)
            return b.u[0]
        idx = grad._indices()
        b = Batch([p[idx[0]]], [grad._values()], {}, hp, EAGER)
        self.gradient.apply(b)
        return torch.sparse_coo_tensor(idx, b.u[0], grad.shape, check_invariants=False)

    def sparse_update(self, p: torch.Tensor, grad: torch.Tensor, state: dict[str, Any], hp: dict[str, Any]) -> None:
        """A sparse gradient through the pipeline row by row, then applied as its dense equivalent."""
        run_eager(self.rule, [p], [self._pipeline(p, grad, hp).to_dense()], [state], hp)


class Adam(_MindSporeAdam):
    """mindspore.nn.Adam: eps-hat Adam with MindSpore's gradient pipeline and optimizer-wide step t,

        g = centralise(g + wd·loss_scale·w) / loss_scale;  m, v EMAs
        w -= lr·√(1-β2ᵗ)/(1-β1ᵗ)·n/(√v + eps),  n = m, or β1·m + (1-β1)·g with use_nesterov
    """

    chain = Chain(*PIPELINE, *ADAM)


class LazyAdam(_MindSporeAdam):
    """mindspore.nn.LazyAdam (FusedSparseLazyAdam): Adam on dense gradients; a sparse gradient (duplicate
    rows summed) updates m, v and w only on the rows it touches, with the optimizer-wide bias correction."""

    chain = Chain(*PIPELINE, *ADAM)

    def sparse_update(self, p: torch.Tensor, grad: torch.Tensor, state: dict[str, Any], hp: dict[str, Any]) -> None:
        grad = self._pipeline(p, grad, hp).coalesce()
        rows = grad.indices()[0]
        with decoded(state, self.chain.shrinks, p) as state:   # rows of state stored in fewer bytes: decoded
            sub = {n: state[n][rows] for n in self.rule.state_names if n in state}
            w = p[rows]
            run_eager(self.rule, [w], [grad.values()], [sub], hp)
            for name, value in sub.items():
                state[name][rows] = value
        p[rows] = w


class AdamOffload(_MindSporeAdam):
    """mindspore.nn.AdamOffload (AdamNoUpdateParam on the CPU): Adam whose state lives on the host; the
    pipeline runs on the parameter's device, the direction on the host, and w -= lr·u on the device.
    MindSpore's AdamOffload skips grad_centralization."""

    gradient = Chain(CoupledDecay(loss_scaled=True), Unscale())
    rule = Chain(Offload("state"), *ADAM[:-1], Offload("param"), ApplyLR())
    chain = Chain(*gradient, *rule)

    def __init__(self, params: Any, learning_rate: MS_LEARNING_RATE = 1e-3, beta1: StrictOpenUnit = 0.9,
                 beta2: StrictOpenUnit = 0.999, eps: StrictPosFloat = 1e-8, use_locking: Bool = False,
                 use_nesterov: Bool = False, weight_decay: NonNegFloat = 0.0, loss_scale: PosFloat = 1.0, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(params, learning_rate, beta1, beta2, eps, use_locking, use_nesterov, weight_decay,
                         loss_scale, foreach=foreach, fused=fused, contiguous_params=contiguous_params,
                         state_dtype=state_dtype)
        if fused and any(p.device.type != "cpu" for g in self.param_groups for p in g["params"]):
            raise ConfigError("AdamOffload computes on the host: fused=True compiles for the parameters' device, "
                              "which is not the CPU here; use foreach=True or the default eager execution", "fused")

    def init_state(self, p: torch.Tensor, group: dict[str, Any]) -> dict[str, Any]:
        return {k: v.to("cpu") for k, v in super().init_state(p, group).items()}


class AdamWeightDecay(ChainOptimizer):
    """mindspore.nn.AdamWeightDecay: no bias correction, decoupled decay where the group decays,

        m, v EMAs;  u = m/(√v + eps) + wd·w;  w -= lr·u      (no loss scale, no gradient centralisation)
    """

    chain = Chain(AdamMoments(), AdamDirection("hat"), DecoupledDecay(), ApplyLR())
    supports_sparse = True

    def __init__(self, params: Any, learning_rate: MS_LEARNING_RATE = 1e-3, beta1: StrictOpenUnit = 0.9,
                 beta2: StrictOpenUnit = 0.999, eps: StrictPosFloat = 1e-6, weight_decay: NonNegFloat = 0.0, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        super().__init__(*adam_groups(params, learning_rate, beta1, beta2, eps, weight_decay), foreach=foreach,
                         fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype)


def adam_groups(params: Any, learning_rate: Any, beta1: float, beta2: float, eps: float,
                weight_decay: float) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(MindSpore's groups, the defaults) of an Adam-family optimizer without loss scale (AdamWeightDecay, Lamb)."""
    defaults = dict(lr=learning_rate, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay)
    return resolve_groups(params, weight_decay, learning_rate, carried=defaults), defaults

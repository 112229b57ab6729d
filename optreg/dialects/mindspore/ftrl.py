"""MindSpore's FTRL as a chain of stages, with a row-only path for sparse gradients."""

from __future__ import annotations

from typing import Any

import torch

from optreg.core.types import (Bool, NonNegFloat, OptionalBool, StateDtype, StrictNonNegFloat, StrictPosFloat,
                               strict_number)
from optreg.dialects.mindspore.groups import _as_items, _refuse_group_lr, resolve_groups
from optreg.errors import ConfigError
from optreg.stages.chain import Batch, Chain
from optreg.stages.ftrl import FtrlProximal
from optreg.stages.gradient import Centralize, CoupledDecay, Unscale
from optreg.stages.ops import EAGER
from optreg.stages.optimizer import ChainOptimizer
from optreg.stages.state_codec import decoded


class FTRL(ChainOptimizer):
    """mindspore.nn.FTRL (1.6 - 2.x; ApplyFtrl / SparseApplyFtrl), FTRL-Proximal:

        n' = n + g²;  z += g - (n'^-p - n^-p)/lr · w;  w = (sign(z)·l1 - z)/(n'^-p/lr + 2·l2) if |z| > l1 else 0

    after MindSpore's gradient pipeline, with weight decay on every parameter when ungrouped. A sparse
    gradient updates only the rows it touches (duplicates summed). No dynamic or per-group lr.
    """

    chain = Chain(CoupledDecay(loss_scaled=True), Centralize(), Unscale(), FtrlProximal())
    supports_sparse = True

    def __init__(self, params: Any, initial_accum: StrictNonNegFloat = 0.1, learning_rate: StrictPosFloat = 0.001,
                 lr_power: strict_number(le=0) = -0.5, l1: StrictNonNegFloat = 0.0, l2: StrictNonNegFloat = 0.0,
                 use_locking: Bool = False, loss_scale: StrictPosFloat = 1.0, weight_decay: NonNegFloat = 0.0, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        items = _as_items(params)
        _refuse_group_lr(items)
        defaults = dict(lr=learning_rate, initial_accum=initial_accum, lr_power=lr_power, l1=l1, l2=l2,
                        use_locking=use_locking, loss_scale=loss_scale, weight_decay=weight_decay)
        super().__init__(resolve_groups(items, weight_decay, learning_rate, decay_all=True, carried=defaults),
                         defaults, foreach=foreach, fused=fused, contiguous_params=contiguous_params,
                         state_dtype=state_dtype, loss_scale=loss_scale)
        for i, group in enumerate(self.param_groups):
            if self.lr_schedule(i) is not None or group["lr"] != self.defaults["lr"]:
                raise ConfigError(
                    "FTRL supports neither a dynamic learning rate nor per-group learning rates",
                    f"param_groups[{i}].lr" if len(self.param_groups) > 1 else "learning_rate",
                )

    def sparse_update(self, p: torch.Tensor, grad: torch.Tensor, state: dict[str, Any], hp: dict[str, Any]) -> None:
        """SparseApplyFtrl: the gradient pipeline on the gradient's (uncoalesced) values, then FTRL on the
        rows they touch, duplicates summed; other rows and their state are untouched."""
        idx = grad._indices()
        pipeline = Batch([p[idx[0]]], [grad._values()], {}, hp, EAGER)
        for stage in self.chain[:-1]:
            stage.apply(pipeline)
        grad = torch.sparse_coo_tensor(idx, pipeline.u[0], grad.shape, check_invariants=False).coalesce()
        rows = grad.indices()[0]
        with decoded(state, self.chain.shrinks, p) as state:   # rows of state stored in fewer bytes: decoded
            w, accum, linear = p[rows], state["accum"][rows], state["linear"][rows]
            self.chain[-1].apply(Batch([w], [grad.values()], {"accum": [accum], "linear": [linear]}, hp, EAGER))
            p[rows], state["accum"][rows], state["linear"][rows] = w, accum, linear

"""LARS (You et al. 2017) as MindSpore's `nn.LARS`: a wrapper that rescales gradients with the
`LarsScale` stage (optreg.stages.trust), then steps another optimizer.

For every parameter that `lars_filter` keeps, with wd the parameter group's weight decay and lr
its learning rate for this step:

    c = coefficient * ||w|| / (||g|| + wd * ||w|| + epsilon)
    c = min(c / lr, 1)            with use_clip
    g = c * (g + wd * w)

Parameters the filter excludes get neither LARS scaling nor weight decay. LARS takes over the
inner optimizer's weight decay and loss scale (as MindSpore does): the inner groups keep their
decay under `lars_weight_decay` and run with `weight_decay = 0`, and gradients are divided by the
loss scale here, once. The inner optimizer then steps on the rescaled gradients; `p.grad` is left
as it was. Reproduces mindspore.nn.LARS (1.6 - 2.x, LARSUpdate op).
"""

from __future__ import annotations

import fnmatch
from typing import Any, Callable, Sequence, Union

import torch

from optreg.core.optimizer import closure_loss, lr_at
from optreg.core.types import Bool, StrictFloat
from optreg.errors import ConfigError
from optreg.stages.chain import Batch
from optreg.stages.ops import EAGER
from optreg.stages.optimizer import ChainOptimizer
from optreg.stages.trust import LarsScale
from optreg.dialects.mindspore.wrapper import Wrapper

LarsFilter = Union[Sequence[str], Callable[[str], bool], None]

DEFAULT_EXCLUDE = ("*LayerNorm*", "*bias*")
"""MindSpore's default filter `'LayerNorm' not in name and 'bias' not in name`, as exclusion globs."""


def keeps(lars_filter: LarsFilter, name: str) -> bool:
    """Whether LARS applies to the parameter called `name`.

    A sequence holds exclusion globs (fnmatch, case-sensitive); a callable gets the name and
    returns True to apply LARS; None applies it everywhere.
    """
    if lars_filter is None:
        return True
    if callable(lars_filter):
        return bool(lars_filter(name))
    return not any(fnmatch.fnmatchcase(name, pattern) for pattern in lars_filter)


class LARS(Wrapper):
    """Layer-wise adaptive rate scaling around `optimizer` (MindSpore nn.LARS 1.6 - 2.x, LARSUpdate).

    A wrapper, not a chain of its own. Around an optreg chain optimizer, the `LarsScale` stage becomes the
    first stage of the inner chain (`ChainOptimizer.prepend`), so the rescaling runs in the inner
    optimizer's execution (eager, foreach, fused, contiguous): each group steps in two parts, the
    parameters `lars_filter` keeps and those it excludes. Around any other optimizer, the gradients of the
    parameters the filter keeps are rescaled eagerly, then the inner optimizer steps on them.

    `param_groups` and `state` are the inner optimizer's own objects, so LR schedulers, `zero_grad`
    and checkpoints see one optimizer. Parameter names come from the groups' `param_names`
    (torch's named-parameter groups); a parameter without a name is matched as "".
    """

    # the nested `optimizer:` that `optreg show`, the JSON Schema and the Hydra group file carry (it is required,
    # so this is an example, not a default): MindSpore's docs example, LARS(nn.Momentum(params, 0.1, 0.9), ...)
    example_optimizer = {"name": "Momentum", "learning_rate": 0.1, "momentum": 0.9}

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        epsilon: StrictFloat = 1e-5,
        coefficient: StrictFloat = 0.001,
        use_clip: Bool = False,
        lars_filter: LarsFilter = DEFAULT_EXCLUDE,
    ) -> None:
        super().__init__(optimizer)
        if isinstance(optimizer, ChainOptimizer) and "_parts" in optimizer.__dict__:
            raise ConfigError(f"this {type(optimizer).__name__} is already wrapped (its chain starts with "
                              f"{optimizer.chain[0]!r}); build a new optimizer to wrap", "optimizer")
        self.epsilon = float(epsilon)
        self.coefficient = float(coefficient)
        self.use_clip = bool(use_clip)
        self.lars_filter = tuple(lars_filter) if isinstance(lars_filter, (list, tuple)) else lars_filter
        if self.use_clip:
            tables = [_lr_schedule(optimizer, i) for i in range(len(optimizer.param_groups))]
            dynamic = [t for t in tables if t is not None]
            specs = {repr(g.get("lr") if t is None else t) for t, g in zip(tables, optimizer.param_groups)}
            if dynamic and len(specs) > 1:
                raise ConfigError(
                    "use_clip=True cannot be combined with a dynamic learning rate that differs between groups",
                    "use_clip",
                )
        # LARS takes over weight decay and the loss scale of the inner optimizer.
        for group in optimizer.param_groups:
            group.setdefault("lars_weight_decay", float(group.get("weight_decay", 0.0) or 0.0))
            if "weight_decay" in group:
                group["weight_decay"] = 0.0
        self.loss_scale = float(getattr(optimizer, "loss_scale", 1.0))
        if hasattr(optimizer, "loss_scale"):
            optimizer.loss_scale = 1.0
        for group in optimizer.param_groups:   # a chain optimizer reads its loss scale from the groups
            if "loss_scale" in group:
                group["loss_scale"] = 1.0
        if "loss_scale" in optimizer.defaults:
            optimizer.defaults["loss_scale"] = 1.0
        self._scale = LarsScale()
        self._flags = [
            [keeps(self.lars_filter, name) for name in _names(group)] for group in optimizer.param_groups
        ]
        self._adopt()
        self._in_chain = isinstance(optimizer, ChainOptimizer)
        if self._in_chain:
            optimizer.prepend(self._scale, self._parts)

    def _settings(self, on: bool) -> dict[str, Any]:
        """What `LarsScale` reads beside the group, for the parameters the filter keeps (`on`) or excludes."""
        return {"coefficient": self.coefficient, "epsilon": self.epsilon, "use_clip": self.use_clip,
                "lars_on": on, "lars_inv_loss_scale": 1.0 / self.loss_scale}

    def _parts(self, index: int, group: dict[str, Any]) -> list[tuple[list[torch.Tensor], dict[str, Any]]]:
        """Group `index` as the parameters the filter keeps and those it excludes, each with its settings."""
        if index >= len(self._flags) or len(self._flags[index]) != len(group["params"]):  # a group added since
            self._flags[index:] = [[keeps(self.lars_filter, n) for n in _names(g)] for g in self.param_groups[index:]]
        flags = self._flags[index]
        parts = []
        for on in (True, False):
            members = [p for p, keep in zip(group["params"], flags) if keep is on]
            if members:
                parts.append((members, self._settings(on)))
        return parts

    def _group_lr(self, index: int, group: dict[str, Any]) -> float:
        """The lr the inner optimizer will use for this step (dynamic lr read at its step index)."""
        table = _lr_schedule(self.optimizer, index)
        if table is not None:
            return lr_at(table, getattr(self.optimizer, "global_step", 0))
        return float(group["lr"])

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        loss = closure_loss(closure)
        if self._in_chain:   # the inner chain rescales, in the parts `_parts` gives
            self.optimizer.step()
            return loss
        saved: list[tuple[torch.Tensor, torch.Tensor]] = []
        for index, group in enumerate(self.param_groups):
            lr = self._group_lr(index, group) if self.use_clip else 0.0
            for members, settings in self._parts(index, group):
                params = [p for p in members if p.grad is not None]
                if not params:
                    continue
                hp = {**settings, "lr": lr}
                self._scale.host(group, hp)
                batch = Batch(params, [p.grad for p in params], {}, hp, EAGER)
                self._scale.apply(batch)
                for p, grad in zip(params, batch.u):
                    if grad is not p.grad:
                        saved.append((p, p.grad))
                        p.grad = grad
        try:
            self.optimizer.step()
        finally:
            for p, grad in saved:
                p.grad = grad
        return loss

    def __repr__(self) -> str:
        return (f"LARS(epsilon={self.epsilon}, coefficient={self.coefficient}, use_clip={self.use_clip}, "
                f"optimizer={self.optimizer!r})")


def _lr_schedule(optimizer: torch.optim.Optimizer, index: int) -> Any:
    """The inner optimizer's dynamic lr of group `index` (None: a fixed lr, or not an optreg optimizer)."""
    lr_schedule = getattr(optimizer, "lr_schedule", None)
    return lr_schedule(index) if callable(lr_schedule) else None


def _names(group: dict[str, Any]) -> list[str]:
    names = group.get("param_names")
    return list(names) if names is not None else [""] * len(group["params"])

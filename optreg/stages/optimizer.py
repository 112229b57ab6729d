"""`ChainOptimizer`: a torch Optimizer whose update rule is a chain of stages.

A subclass declares its chain and its signature; the loop (closure, params without a gradient,
the dialect features of the base class, sparse gradients) and the choice of execution are here:

    class Adam(ChainOptimizer):
        chain = Chain(CoupledDecay(), AdamMoments(), AdamDirection("torch"), ApplyLR())

        def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, *,
                     foreach=None, fused=None):
            super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay),
                             foreach=foreach, fused=fused)

Executions are chosen with torch's option names, per param group: `foreach=True` (multi-tensor
operations), `fused=True` (compiled with torch.compile), otherwise eager (per tensor).
`contiguous_params=True` (OneFlow's option) keeps a group's tensors in flat buffers, so that each
execution runs an element-wise chain over the whole group at once (`optreg.stages.contiguous`).
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Iterable

import torch

from optreg.core.optimizer import Optimizer, closure_loss
from optreg.errors import ConfigError
from optreg.stages.chain import Chain
from optreg.stages.contiguous import Contiguous
from optreg.stages.execute import check_fused, execute, run_eager

#: group keys that are bookkeeping, not hyperparameters a stage reads
_NOT_HP = ("params", "global_step", "param_names", "foreach", "fused", "contiguous_params")


class ChainOptimizer(Optimizer):
    """The loop around a chain; `chain` is a class attribute (a dialect's entry declares it)."""

    chain: ClassVar[Chain] = Chain()

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any], *, foreach: bool | None = None,
                 fused: bool | None = None, contiguous_params: bool = False, **features: Any) -> None:
        if foreach and fused:
            raise ConfigError("give foreach=True or fused=True, not both", "fused")
        if fused:
            check_fused()
        defaults = {**defaults, "foreach": foreach, "fused": fused, "contiguous_params": contiguous_params}
        super().__init__(params, defaults, **features)

    # -- state ----------------------------------------------------------------------------------
    @property
    def sparsify_states(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.chain.sparsify

    def init_state(self, p: torch.Tensor, group: dict[str, Any]) -> dict[str, Any]:
        return self.chain.init(p, group)

    # -- hyperparameters ------------------------------------------------------------------------
    def hyper(self, group: dict[str, Any]) -> dict[str, Any]:
        """What the stages read for this step of `group`: its options, `lr` and the optimizer-wide `step`."""
        hp = {k: v for k, v in group.items() if k not in _NOT_HP}
        hp["step"] = group["global_step"]
        return self.chain.host(group, hp)

    @staticmethod
    def execution(group: dict[str, Any]) -> str:
        return "fused" if group.get("fused") else "foreach" if group.get("foreach") else "eager"

    # -- the loop -------------------------------------------------------------------------------
    def sparse_update(self, p: torch.Tensor, grad: torch.Tensor, state: dict[str, Any], hp: dict[str, Any]) -> None:
        """A sparse COO gradient: applied as its dense equivalent (a subclass may update rows only)."""
        run_eager(self.chain, [p], [grad.to_dense()], [state], hp)

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One step of every group; the optimizer-wide counter advances even for params without grads."""
        loss = closure_loss(closure)
        self.global_step += 1
        plans = self.__dict__.setdefault("_fused_plans", {})
        layouts = self.__dict__.setdefault("_contiguous", {})
        for index, group in enumerate(self.param_groups):
            self._group_lr(index, group)
            layout = layouts.get(index) if group.get("contiguous_params") else None
            if layout is not None and layout.steady(group["params"], self.state) \
                    and layout.rerun(self.execution(group), self.chain, self.hyper(group)):
                continue
            params, grads, states = [], [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                params.append(p)
                grads.append(p.grad)
                states.append(self._state_for(p, group))
            if not params:
                continue
            hp = self.hyper(group)
            dense = []
            for i, g in enumerate(grads):
                if g.is_sparse:
                    if not self.supports_sparse:
                        raise RuntimeError(f"{type(self).__name__} does not support sparse gradients")
                    self.sparse_update(params[i], g, states[i], hp)
                else:
                    dense.append(i)
            if len(dense) < len(params):
                params, grads, states = ([xs[i] for i in dense] for xs in (params, grads, states))
            mode = self.execution(group)
            if group.get("contiguous_params"):
                if layout is None or not layout.fits(group["params"]):
                    layout = layouts[index] = Contiguous(group["params"])
                params, grads, states = layout.step(mode, self.chain, params, grads, states, hp)
            plans[index] = execute(mode, self.chain, params, grads, states, hp, plans.get(index))
        return loss

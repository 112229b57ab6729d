"""`ChainOptimizer`: a torch Optimizer whose update rule is a chain of stages.

A subclass declares its chain and its signature; the loop (closure, params without a gradient,
the dialect features of the base class, sparse gradients) and the choice of execution are here:

    class Adam(ChainOptimizer):
        chain = Chain(CoupledDecay(), AdamMoments(), AdamDirection("torch"), ApplyLR())

        def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, *,
                     foreach=None, fused=None):
            super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay),
                             foreach=foreach, fused=fused)

`state_dtype` (null, "float32", "bfloat16" or "int8"), per param group, stores the state a chain names in its
stages' `shrinks` in fewer bytes, or in float32 over half-precision parameters (`optreg.stages.state_codec`).

Executions are chosen with torch's option names, per param group: `foreach=True` (multi-tensor
operations), `fused=True` (compiled with torch.compile), otherwise eager (per tensor).
`contiguous_params=True` (OneFlow's option) keeps a group's tensors in flat buffers, so that each
execution runs an element-wise chain over the whole group at once (`optreg.stages.contiguous`).
"""

from __future__ import annotations

import operator
from typing import Any, Callable, ClassVar, Iterable

import torch

from optreg.core.optimizer import Optimizer, closure_loss
from optreg.errors import ConfigError
from optreg.stages.chain import Chain, Stage
from optreg.stages.contiguous import Contiguous, eligible
from optreg.stages.execute import BLOCK, check_fused, execute, run_eager
from optreg.stages.state_codec import check_state_dtype, form, store

#: the parameters of a part of a group, and the settings its stages read (`ChainOptimizer.parts`)
Part = tuple[list[torch.Tensor], dict[str, Any]]

#: a gradient's `is_sparse`, read in C over a step's gradients
_IS_SPARSE = operator.attrgetter("is_sparse")
#: group keys that are bookkeeping, not hyperparameters a stage reads
_NOT_HP = ("params", "global_step", "param_names", "foreach", "fused", "contiguous_params")
#: group keys an optimizer keeps when it loads a state dict (the state converts to them)
_OWN = ("state_dtype",)


class ChainOptimizer(Optimizer):
    """The loop around a chain; `chain` is a class attribute (a dialect's entry declares it)."""

    chain: ClassVar[Chain] = Chain()
    transient = ("_fused_plans", "_contiguous")

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any], *, foreach: bool | None = None,
                 fused: bool | None = None, contiguous_params: bool = False, state_dtype: str | None = None,
                 **features: Any) -> None:
        if foreach and fused:
            from optreg.core.validate import FUSED_OR_FOREACH

            raise ConfigError(FUSED_OR_FOREACH.message, FUSED_OR_FOREACH.path)
        if fused:
            check_fused()
        defaults = {**defaults, "foreach": foreach, "fused": fused, "contiguous_params": contiguous_params,
                    "state_dtype": check_state_dtype(state_dtype)}
        super().__init__(params, defaults, **features)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """torch's, with the group's `state_dtype` checked (a ConfigError at `param_groups[i].state_dtype`)."""
        if "state_dtype" in param_group:
            check_state_dtype(param_group["state_dtype"], f"param_groups[{len(self.param_groups)}].state_dtype")
        super().add_param_group(param_group)

    # -- state ----------------------------------------------------------------------------------
    @property
    def sparsify_states(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.chain.sparsify

    def init_state(self, p: torch.Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """The chain's state of `p`, the state it `shrinks` stored as the group's `state_dtype` says."""
        return store(self.chain.init(p, group), self.chain.shrinks, p, self.state_form(p, group))

    def state_form(self, p: torch.Tensor, group: dict[str, Any]) -> str | None:
        """How the group stores `p`'s shrinking state (`state_codec.form`): int8 blocks need no minimum size
        in a contiguous group, whose slices start at block boundaries (a chain that packs slices without
        padding, Adafactor's, aside)."""
        contiguous = bool(group.get("contiguous_params")) and not self.chain.shaped and eligible(p)
        return form(p, group.get("state_dtype"), contiguous)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """The base class's, keeping each group's own `state_dtype`: the loaded state is converted to it
        (a float32 checkpoint into an int8 optimizer, and back)."""
        own = [{k: g[k] for k in _OWN if k in g} for g in self.param_groups]
        state_dict = dict(state_dict)
        saved = dict(state_dict.get("state", {}))
        for group, mine in zip(state_dict.get("param_groups", []), self.param_groups):
            for key, p in zip(group.get("params", []), mine["params"]):
                if saved.get(key):
                    saved[key] = store(dict(saved[key]), self.chain.shrinks, p, self.state_form(p, mine))
        super().load_state_dict({**state_dict, "state": saved})
        for group, keep in zip(self.param_groups, own):
            group.update(keep)

    # -- hyperparameters ------------------------------------------------------------------------
    def hyper(self, group: dict[str, Any], settings: dict[str, Any] | None = None) -> dict[str, Any]:
        """What the stages read for this step of `group`: its options, `lr`, the optimizer-wide `step`, and the
        settings of the part of the group that steps (`parts`)."""
        hp = {k: v for k, v in group.items() if k not in _NOT_HP}
        if settings:
            hp.update(settings)
        hp["step"] = group["global_step"]
        return self.chain.host(group, hp)

    # -- a wrapper's stage ------------------------------------------------------------------------
    def prepend(self, stage: Stage, parts: Callable[[int, dict[str, Any]], list[Part]]) -> None:
        """Run `stage` ahead of this optimizer's chain, in its execution: a wrapper's rule (LARS) as the chain's
        first stage. `parts(index, group)` splits each group into the parameters that step together, each
        list with the settings its stages' `host` reads (a per-parameter choice such as LARS' filter)."""
        self.chain = Chain(stage, *self.chain)
        self._parts = parts

    def parts(self, index: int, group: dict[str, Any]) -> list[Part]:
        """The parameters of group `index` that step together, with their settings: the whole group, unless a
        wrapper splits it (`prepend`)."""
        split = self.__dict__.get("_parts")
        return [(group["params"], {})] if split is None else split(index, group)

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
            for part, (members, settings) in enumerate(self.parts(index, group)):
                self._step_part((index, part), group, members, settings, plans, layouts)
        return loss

    def _step_part(self, key: tuple[int, int], group: dict[str, Any], members: list[torch.Tensor],
                   settings: dict[str, Any], plans: dict[Any, Any], layouts: dict[Any, Contiguous]) -> None:
        """One step of the parameters `members` of `group` (all of it, or a part of it: `parts`)."""
        layout = layouts.get(key) if group.get("contiguous_params") else None
        if layout is not None and layout.steady(members, self.state) \
                and layout.rerun(self.execution(group), self.chain, self.hyper(group, settings)):
            return
        params, grads, states = [], [], []
        state_for = self._state_for
        for p in members:
            g = p.grad
            if g is None:
                continue
            params.append(p)
            grads.append(g)
            states.append(state_for(p, group))
        if not params:
            return
        hp = self.hyper(group, settings)
        if any(map(_IS_SPARSE, grads)):
            dense = []
            for i, g in enumerate(grads):
                if g.is_sparse:
                    if not self.supports_sparse:
                        raise RuntimeError(f"{type(self).__name__} does not support sparse gradients")
                    self.sparse_update(params[i], g, states[i], hp)
                else:
                    dense.append(i)
            params, grads, states = ([xs[i] for i in dense] for xs in (params, grads, states))
        mode = self.execution(group)
        if group.get("contiguous_params"):
            if layout is None or not layout.fits(members):
                layout = layouts[key] = Contiguous(members, align=1 if self.chain.shaped else BLOCK)
            params, grads, states = layout.step(mode, self.chain, params, grads, states, hp)
        plans[key] = execute(mode, self.chain, params, grads, states, hp, plans.get(key))

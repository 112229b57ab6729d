"""The torch scheduler of an MMEngine param_scheduler list that drives more than the lr (ParamSchedulersLR)."""

from __future__ import annotations

from typing import Any

from optreg.dialects.mmengine.schedules import Chain, group_key
from optreg.core.options import FRESH
from optreg.errors import ConfigError
from optreg.schedules.adapter import ScheduleLR, read_key, write_key
from optreg.schedules.engine import INITIAL_KEYS


class ParamSchedulersLR(ScheduleLR):
    """The torch scheduler of a `ParamSchedulers` whose list also drives momentum (`betas[0]`) or weight_decay: the
    lr as ScheduleLR writes it, and each other key's chain, from the value each group had when it was built
    (`initial_momentum`, `initial_beta1`, `initial_weight_decay`), written at every step. Every value is a function
    of the step, so state_dict() / load_state_dict() resume exactly."""

    def __init__(self, optimizer: Any, schedule: Any, *, key: str = "lr", last_epoch: int = FRESH) -> None:
        owner = schedule[0] if isinstance(schedule, (list, tuple)) else schedule
        names = set(optimizer.defaults) | {k for g in optimizer.param_groups for k in g}
        self.others: list[tuple[str, Chain, list[float]]] = []
        for mm_key, chain in owner.chains.items():
            if mm_key == "lr":
                continue
            target = group_key(mm_key, names)
            if target is None:
                raise ConfigError(f"the optimizer ({type(optimizer).__name__}) has no {mm_key} to schedule",
                                  "param_scheduler")
            initial = INITIAL_KEYS[target]
            for group in optimizer.param_groups:
                if last_epoch == FRESH:
                    group.setdefault(initial, float(read_key(group, target)))
            self.others.append((target, chain, [float(g[initial]) for g in optimizer.param_groups]))
        super().__init__(optimizer, schedule, key=key, last_epoch=last_epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        super()._update_lr(epoch)
        for target, chain, bases in self.others:
            for group, base in zip(self.optimizer.param_groups, bases):
                write_key(group, target, chain.apply(self.last_epoch, base))

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "others": [list(bases) for _, _, bases in self.others]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        super().load_state_dict(state_dict)
        self.others = [(target, chain, [float(v) for v in bases])
                       for (target, chain, _), bases in zip(self.others, state_dict.get("others", []))]


__all__ = ["ParamSchedulersLR"]

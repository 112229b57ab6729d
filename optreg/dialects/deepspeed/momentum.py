"""The scheduler of DeepSpeed's OneCycle with momentum cycling: the lr of `schedules.OneCycle` and, in every
parameter group, `betas = (OneCycle.beta1(step), 0.99)` (DeepSpeed 0.19's OneCycle.step writes both betas).

DeepSpeed cycles only an optimizer whose defaults have `betas`; with another it logs "cycle_momentum is disabled"
and drives the lr alone, which this scheduler does too (a warning). Both values are closed forms of the step, so
`state_dict()` / `load_state_dict()` resume exactly (the ScheduleLR contract).
"""

from __future__ import annotations

import warnings
from typing import Any

import torch

from optreg.schedules.adapter import ScheduleLR


class OneCycleScheduler(ScheduleLR):
    """ScheduleLR over DeepSpeed's OneCycle that also writes each group's betas at every step."""

    def __init__(self, optimizer: torch.optim.Optimizer, schedule: Any, *, key: str = "lr",
                 last_epoch: int = -1) -> None:
        self.cycles = "betas" in getattr(optimizer, "defaults", {})
        if not self.cycles:
            warnings.warn(f"cycle_momentum is disabled because optimizer {type(optimizer).__name__} does not "
                          f"support momentum, no betas attribute in defaults (as DeepSpeed's OneCycle)",
                          UserWarning, stacklevel=2)
        super().__init__(optimizer, schedule, key=key, last_epoch=last_epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        super()._update_lr(epoch)
        if self.cycles:
            for group, schedule in zip(self.optimizer.param_groups, self.schedules):
                group["betas"] = (schedule.beta1(self.last_epoch), schedule.BETA2)


__all__ = ["OneCycleScheduler"]

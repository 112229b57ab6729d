"""The base of MindSpore's optimizer wrappers (nn.LARS, nn.AdaSumByGradWrapCell, nn.AdaSumByDeltaWeightWrapCell):
an optimizer around another one.

`param_groups` and `state` are the inner optimizer's own objects, so LR schedulers, `zero_grad` and checkpoints
see one optimizer; the state dict is the inner optimizer's.
"""

from __future__ import annotations

from typing import Any

import torch

from optreg.errors import ConfigError


class Wrapper(torch.optim.Optimizer):
    """An optimizer that steps `optimizer` (the inner one) with something of its own around the step."""

    def __init__(self, optimizer: torch.optim.Optimizer) -> None:
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise ConfigError(f"must be a torch.optim.Optimizer, got {type(optimizer).__name__}", "optimizer")
        self.optimizer = optimizer

    def _adopt(self) -> None:
        """Take the inner optimizer's groups, defaults and state as this optimizer's own objects."""
        torch.optim.Optimizer.__init__(self, self.optimizer.param_groups, self.optimizer.defaults)
        self.param_groups = self.optimizer.param_groups
        self.state = self.optimizer.state

    def __getstate__(self) -> dict[str, Any]:
        """Every attribute (torch's Optimizer keeps only defaults, state and param_groups: a copy would lose the
        inner optimizer and the settings)."""
        return dict(self.__dict__)

    def zero_grad(self, set_to_none: bool | None = None) -> None:
        if set_to_none is None:
            self.optimizer.zero_grad()
        else:
            self.optimizer.zero_grad(set_to_none=set_to_none)

    def state_dict(self) -> dict[str, Any]:
        return self.optimizer.state_dict()

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state_dict)
        self.param_groups = self.optimizer.param_groups
        self.state = self.optimizer.state

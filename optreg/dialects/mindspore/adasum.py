"""MindSpore's AdaSum wrappers (`nn.AdaSumByGradWrapCell`, `nn.AdaSumByDeltaWeightWrapCell`, 1.6 - 2.10) in one
process.

AdaSum (Maleki et al. 2021, "AdaSum: Scaling Distributed Training with Adaptive Summation") combines the
contributions of the data-parallel devices instead of averaging them, pairwise and recursively:

    AdaSum(a, b) = (1 - aᵀb / (2‖a‖²))·a + (1 - aᵀb / (2‖b‖²))·b

ByGrad combines the devices' gradients before the inner optimizer steps; ByDeltaWeight lets each device's inner
optimizer step, then combines the weight changes Δw and sets w = w₀ + AdaSum(Δw₁, ..., Δw_n).

In one process there is one contribution, and the AdaSum of one vector is that vector: both wrappers step the
inner optimizer unchanged. MindSpore 2.10 refuses them outside its semi-/auto-parallel modes on 16 or more devices
(a power of two: "Stand alone mode is not supported to apply adasum"); optreg builds them in one process so that a
config that names one moves here and trains as its inner optimizer does on one device. Across several processes
(torch.distributed), DDP and FSDP have already averaged the gradients before any optimizer sees them, and optreg
does not implement the cross-process combination: a world size above 1 is refused.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch

from optreg.core.optimizer import closure_loss
from optreg.dialects.mindspore.wrapper import Wrapper
from optreg.errors import ConfigError


def adasum_pair(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """AdaSum(a, b) = (1 - aᵀb/(2‖a‖²))·a + (1 - aᵀb/(2‖b‖²))·b; a zero vector contributes nothing to the
    other's coefficient (its own term is zero)."""
    dot = torch.sum(a * b)
    na, nb = torch.sum(a * a), torch.sum(b * b)
    ca = torch.where(na > 0, 1 - dot / (2 * na), torch.ones_like(na))
    cb = torch.where(nb > 0, 1 - dot / (2 * nb), torch.ones_like(nb))
    return ca * a + cb * b


def adasum(contributions: Sequence[torch.Tensor]) -> torch.Tensor:
    """The AdaSum of the devices' contributions, combined pairwise by recursive halving (a power of two of them,
    as MindSpore requires); one contribution is returned as it is."""
    items = list(contributions)
    if not items or len(items) & (len(items) - 1):
        raise ConfigError(f"AdaSum combines a power of two of contributions, got {len(items)}", "optimizer")
    while len(items) > 1:
        items = [adasum_pair(items[i], items[i + 1]) for i in range(0, len(items), 2)]
    return items[0]


def _world_size() -> int:
    dist = torch.distributed
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


class _OneProcessAdaSum(Wrapper):
    """An AdaSum wrapper in one process: the inner optimizer's step (the AdaSum of one contribution is itself)."""

    def __init__(self, optimizer: torch.optim.Optimizer) -> None:
        super().__init__(optimizer)
        self._refuse_processes()
        self._adopt()

    def _refuse_processes(self) -> None:
        world = _world_size()
        if world > 1:
            raise ConfigError(
                f"{type(self).__name__} combines each process's own gradients with AdaSum; in this run of {world} "
                f"processes DDP / FSDP have averaged them already and optreg does not implement the combination "
                f"across processes (in one process it is its inner optimizer): use the inner optimizer",
                "optimizer")

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        self._refuse_processes()
        loss = closure_loss(closure)
        self.optimizer.step()
        return loss

    def __repr__(self) -> str:
        return f"{type(self).__name__}(optimizer={self.optimizer!r})"


class AdaSumByGradWrapCell(_OneProcessAdaSum):
    """mindspore.nn.AdaSumByGradWrapCell (1.6 - 2.10): the inner optimizer steps on the AdaSum of the devices'
    gradients; in one process, on the gradient itself."""

    example_optimizer = {"name": "Momentum", "learning_rate": 0.1, "momentum": 0.9}   # MindSpore's docs example


class AdaSumByDeltaWeightWrapCell(_OneProcessAdaSum):
    """mindspore.nn.AdaSumByDeltaWeightWrapCell (1.6 - 2.10): each device's inner optimizer steps, then
    w = w₀ + AdaSum(Δw₁, ..., Δw_n); in one process, w₀ + Δw: the inner step itself."""

    example_optimizer = {"name": "Momentum", "learning_rate": 0.1, "momentum": 0.9}

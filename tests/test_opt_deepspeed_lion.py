"""DeepSpeed's Lion kernels (deepspeed.Lion = DeepSpeedCPULion, deepspeed.FusedLion) where Lion's interpolation
c = β1·m + (1-β1)·g is exactly ±0, against cerebras.Lion, in the eager, foreach and fused executions: what the
kernels' sources (DeepSpeed 0.19.8 cpu_lion.h, multi_tensor_lion.cu) step there. The recorded trajectories of
DeepSpeedCPULion are replayed in test_format_deepspeed.py."""

from __future__ import annotations

import pytest
import torch

import optreg

LR, WD = 0.25, 0.5
#: the step each row takes at c = +0 and at c = -0, in units of lr (w moves by -lr·u)
AT_ZERO = {"deepspeed.Lion": (1.0, -1.0), "deepspeed.FusedLion": (-1.0, -1.0), "cerebras.Lion": (0.0, 0.0)}
EXECUTIONS = [{}, {"foreach": True}, {"fused": True}]


def _opt(name: str, w: torch.Tensor, execution: dict, weight_decay: float):
    return optreg.build({"optimizer": {"name": name, "lr": LR, "weight_decay": weight_decay, **execution}},
                        [("w", w)]).optimizer


@pytest.mark.parametrize("execution", EXECUTIONS, ids=["eager", "foreach", "fused"])
@pytest.mark.parametrize("weight_decay", [0.0, WD])
@pytest.mark.parametrize("name", sorted(AT_ZERO))
def test_the_step_at_an_interpolation_of_zero(name, weight_decay, execution):
    """Entries 0-1: gradient and momentum +0 or -0 (c = +0, as an unused embedding row has); entry 2: momentum -0
    and gradient -0 (c = -0); entry 3: a gradient of 1 (c > 0), where every row steps -lr."""
    w = torch.tensor([1.0, -2.0, 3.0, 4.0], requires_grad=True)
    opt = _opt(name, w, execution, weight_decay)
    w.grad = torch.tensor([0.0, -0.0, -0.0, 1.0])
    opt.step()
    plus, minus = AT_ZERO[name]
    decay = 1.0 - LR * weight_decay
    want = torch.tensor([1.0 * decay - LR * plus, -2.0 * decay - LR * plus, 3.0 * decay - LR * plus,
                         4.0 * decay - LR])
    assert torch.equal(w.detach(), want), (w, want)
    opt.state[w]["exp_avg"].copy_(torch.tensor([0.0, 0.0, -0.0, 0.0]))
    w.grad = torch.tensor([0.0, 0.0, -0.0, 1.0])
    before = w.detach().clone()
    opt.step()
    assert torch.equal(w.detach()[2], before[2] * decay - LR * minus)

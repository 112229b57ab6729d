"""Flags their frameworks read per param group: Cerebras AdamW's correct_bias (AdamBase.step reads
group["correct_bias"]), OneFlow Adam/AdamW/LAMB's do_bias_correction and LAMB's adam_w_mode (read per group in
oneflow.optim's step). One optimizer with two groups that set a flag differently equals, bit for bit, two
optimizers that each hold one group, in every execution."""

from __future__ import annotations

import pytest
import torch

import optreg

EXECUTIONS = [{}, {"foreach": True}, {"fused": True}]
EXEC_IDS = ["eager", "foreach", "fused"]

# (dialect, optimizer, flag, options shared by every group)
FLAGS = [
    ("cerebras", "AdamW", "correct_bias", {"lr": 0.05, "weight_decay": 0.1}),
    ("oneflow", "Adam", "do_bias_correction", {"lr": 0.05, "weight_decay": 0.1}),
    ("oneflow", "AdamW", "do_bias_correction", {"lr": 0.05, "weight_decay": 0.1}),
    ("oneflow", "LAMB", "do_bias_correction", {"lr": 0.05, "weight_decay": 0.1}),
    ("oneflow", "LAMB", "adam_w_mode", {"lr": 0.05, "weight_decay": 0.1}),
]
FLAG_IDS = [f"{d}.{n}.{f}" for d, n, f, _ in FLAGS]


def _params() -> list[torch.nn.Parameter]:
    g = torch.Generator().manual_seed(0)
    return [torch.nn.Parameter(torch.randn(4, 3, generator=g)), torch.nn.Parameter(torch.randn(6, generator=g))]


def _drive(opts: list[torch.optim.Optimizer], params: list[torch.Tensor], steps: int = 6) -> list[torch.Tensor]:
    for t in range(steps):
        for i, p in enumerate(params):
            g = torch.Generator().manual_seed(100 * t + i)
            p.grad = 0.5 * p.detach() + torch.randn(p.shape, generator=g)
        for opt in opts:
            opt.step()
    return [p.detach().clone() for p in params]


@pytest.mark.parametrize("execution", EXECUTIONS, ids=EXEC_IDS)
@pytest.mark.parametrize("dialect, name, flag, options", FLAGS, ids=FLAG_IDS)
def test_a_flag_set_per_group_equals_separate_optimizers(dialect, name, flag, options, execution):
    def make(groups, **flags):
        return optreg.configure_optimizer(name, groups, dialect=dialect, **options, **flags, **execution)

    grouped = _params()
    opt = make([{"params": [grouped[0]]}, {"params": [grouped[1]], flag: False}])
    assert [g[flag] for g in opt.param_groups] == [True, False]
    together = _drive([opt], grouped)

    apart = _params()
    separate = _drive([make([apart[0]]), make([apart[1]], **{flag: False})], apart)
    for a, b in zip(together, separate):
        assert torch.equal(a, b)

    same = _params()
    unflagged = _drive([make(same)], same)       # both groups with the flag on: the second group differs
    assert torch.equal(unflagged[0], together[0]) and not torch.allclose(unflagged[1], together[1])

"""LiBai's schedulers and its default parameter groups with per-group clipping, recorded on OneFlow 0.9.0 (CPU) by
scripts/record_libai.py, replayed through the libai config format: the lr of every group at every recorded step
within 1e-6 relative, the groups exactly, three AdamW steps (clip_grad() first, as LiBai's trainer) within 1e-5."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import optreg
from fixture_replay import step_and_compare

FIXTURES = Path(__file__).parent / "fixtures" / "libai"
SCHEDULERS = json.loads((FIXTURES / "schedulers.json").read_text())
OPTIMIZERS = json.loads((FIXTURES / "optimizers.json").read_text())
GROUPING = "libai.optim.get_default_optimizer_params"


@pytest.mark.parametrize("case", SCHEDULERS["cases"], ids=lambda c: c["name"])
def test_scheduler_matches_libai(case):
    (lr,) = set(case["group_lrs"])
    args = {k: v for k, v in case["scheduler"].items() if k != "function"}
    config = {"optim": {"_target_": "oneflow.optim.SGD", "lr": lr,
                        "params": {"_target_": GROUPING, "weight_decay_bias": 0.0}},
              "train": {"train_iter": case["train_iter"], "warmup_ratio": case["warmup_ratio"],
                        "scheduler": {"_target_": f"libai.scheduler.{case['scheduler']['function']}", **args}}}
    built = optreg.build(config, torch.nn.Linear(2, 2))
    assert len(built.optimizer.param_groups) == len(case["group_lrs"])
    got = []
    for _ in case["lrs"]:
        got.append([g["lr"] for g in built.optimizer.param_groups])
        built.optimizer.step()
        built.scheduler.step()
    assert got == [pytest.approx(row, rel=1e-6) for row in case["lrs"]]


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 3)
        self.norm = torch.nn.LayerNorm(3)


@pytest.mark.parametrize("case", OPTIMIZERS["cases"], ids=lambda c: c["name"])
def test_default_params_groups_and_steps_match_libai(case):
    model = Net()
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, p in params.items():
            p.copy_(torch.tensor(case["init"][name]).reshape(p.shape))
    config = {"optim": {"_target_": "oneflow.optim.AdamW", **case["optim"],
                        "params": {"_target_": GROUPING, **case["params"]}},
              "train": {"train_iter": 10}}
    built = optreg.build(config, model)
    names = {id(p): n for n, p in params.items()}
    groups = {(frozenset(names[id(p)] for p in g["params"]), g["weight_decay"], g["clip_grad_max_norm"])
              for g in built.optimizer.param_groups if g["params"]}
    assert groups == {(frozenset(g["params"]), g["weight_decay"], g["clip_grad_max_norm"]) for g in case["groups"]}
    step_and_compare(built.optimizer, built.scheduler, params, case["grads"], case["weights"],
                     before_step=built.optimizer.clip_grad)

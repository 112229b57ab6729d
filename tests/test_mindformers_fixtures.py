"""MindFormers' own lr schedules, optimizers and parameter groups, recorded on MindSpore 2.10 (CPU) by
scripts/record_mindformers.py, replayed through the mindformers config format: the lr at every recorded step
within 1e-6 relative (or float32's resolution of the peak lr, where MindFormers' float32 terms cancel), the
groups exactly, three optimizer steps within 1e-5 (float16 parameters: every value as MindSpore rounds it, the
moments in the dtype MindFormers keeps them in)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import optreg
from fixture_replay import stand_in, step_and_compare

FIXTURES = Path(__file__).parent / "fixtures" / "mindformers"
SCHEDULES = json.loads((FIXTURES / "schedules.json").read_text())
OPTIMIZERS = json.loads((FIXTURES / "optimizers.json").read_text())



@pytest.mark.parametrize("case", SCHEDULES["cases"], ids=lambda c: c["name"])
def test_schedule_matches_mindformers(case):
    config = {"optimizer": {"type": "AdamW"}, "lr_schedule": case["lr_schedule"], "runner_config": {},
              "train": {"steps": SCHEDULES["steps"]}}
    built = optreg.build(config, torch.nn.Linear(2, 2))
    got = []
    for _ in case["lrs"]:
        got.append(built.optimizer.param_groups[0]["lr"])
        built.optimizer.step()
        built.scheduler.step()
    # MindFormers computes in float32; optreg's forms of the schedules whose float32 terms cancel near lr_end
    # (the cosines, WarmUpStableDecay) repeat its float32 operations, so every value is within 1e-6 relative
    assert got == pytest.approx(case["lrs"], rel=1e-6)


@pytest.mark.parametrize("case", OPTIMIZERS["cases"], ids=lambda c: c["name"])
def test_optimizer_groups_and_steps_match_mindformers(case):
    dtype = getattr(torch, case["dtype"])
    model = stand_in(case["shapes"], case["init"]).to(dtype)
    config = {"optimizer": case["optimizer"], "runner_config": {}, "train": {"steps": 10}}
    if case["lr_schedule"]:
        config["lr_schedule"] = case["lr_schedule"]
    built = optreg.build(config, model)
    names = {id(p): n for n, p in model.named_parameters()}
    groups = {(frozenset(names[id(p)] for p in g["params"]), g["weight_decay"])
              for g in built.optimizer.param_groups if g["params"]}
    assert groups == {(frozenset(g["params"]), g["weight_decay"]) for g in case["groups"]}
    params = dict(model.named_parameters())
    # float16: every value as MindSpore rounded it (one float16 ulp is 2⁻¹¹ relative; 1e-7 only absorbs the float32
    # decimal form the recording writes)
    step_and_compare(built.optimizer, built.scheduler, params, case["grads"], case["weights"],
                     tolerance=1e-5 if dtype == torch.float32 else 1e-7)
    moments = {str(v.dtype).removeprefix("torch.") for p in params.values() for k, v in built.optimizer.state[p].items()
               if k in ("exp_avg", "exp_avg_sq")}
    assert moments == {m.lower() for m in case["moments"]}

"""A stage of a combinator (`sequential`, `chained`, a dialect's SequentialLR) drives its combinator's key: a stage's
own `key` that differs is an error at the stage's `key`, the same from `optreg validate`, `build` and
`configure_lr_scheduler`; a stage's key equal to its combinator's is accepted and drives that key."""

from __future__ import annotations

import math

import pytest
import torch

import optreg
from optreg.cli import main

REMEDY = ("a stage of {kind} drives {kind}'s key ('{driven}'), not a key of its own: to schedule {key} with this "
          "{kind}, write key: {key} on the {kind} itself and on none of its stages; to schedule {driven} and {key} "
          "side by side, use mmengine.ParamSchedulers (each of its param_scheduler entries drives its own key)")

WD_FILE = """\
optimizer: {name: AdamW, lr: 1.0e-3, weight_decay: 0.1}
scheduler:
  name: chained
  schedulers:
    - {name: CosineAnnealingLR, T_max: 12}
    - {name: oneflow.LinearLR, start_factor: 1.0, end_factor: 0.1, total_iters: 12, key: weight_decay}
train: {steps: 12}
"""


def remedy(kind, key, driven="lr"):
    return REMEDY.format(kind=kind, key=key, driven=driven)


def messages(info):
    return [(e.path, e.message) for e in info.value.errors]


def test_validate_run_and_plot_refuse_a_stage_key_at_its_position(tmp_path, capsys):
    path = tmp_path / "wd.yaml"
    path.write_text(WD_FILE)
    expected = f"{path}:6:85: scheduler.schedulers[1].key: {remedy('chained', 'weight_decay')}\n"
    for command in (["validate"], ["validate", "--model", "optreg.train:TinyMLP"], ["plot", "--csv"], ["run"]):
        assert main([command[0], str(path), *command[1:]]) == 1, command
        captured = capsys.readouterr()
        assert captured.err == expected, command
        assert "lr" not in captured.out, command   # nothing plotted, nothing trained


def test_build_refuses_a_stage_key_and_builds_nothing(tmp_path):
    path = tmp_path / "wd.yaml"
    path.write_text(WD_FILE)
    with pytest.raises(optreg.ConfigError) as info:
        optreg.build(str(path), torch.nn.Linear(2, 2))
    assert messages(info) == [("scheduler.schedulers[1].key", remedy("chained", "weight_decay"))]
    assert str(info.value).startswith(f"{path}:6:85: ")


def _sgd():
    return torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1, momentum=0.9, weight_decay=0.1)


@pytest.mark.parametrize("spec, path, message", [
    ({"name": "sequential", "schedulers": [
        {"name": "oneflow.ConstantLR", "factor": 0.5, "total_iters": 2},
        {"name": "oneflow.LinearLR", "start_factor": 1.0, "end_factor": 0.1, "total_iters": 4, "key": "momentum"}]},
     "schedulers[1].key", remedy("sequential", "momentum")),
    # a stage `key: lr` under a combinator of weight_decay
    ({"name": "chained", "key": "weight_decay", "schedulers": [
        {"name": "oneflow.ExponentialLR", "gamma": 0.9, "key": "lr"}]},
     "schedulers[0].key", remedy("chained", "lr", "weight_decay")),
    # a nested combinator without a key drives its parent's: its stages are checked against that
    ({"name": "sequential", "key": "weight_decay", "schedulers": [
        {"name": "oneflow.ConstantLR", "factor": 0.5, "total_iters": 2},
        {"name": "chained", "schedulers": [{"name": "oneflow.ExponentialLR", "gamma": 0.9, "key": "momentum"}]}]},
     "schedulers[1].schedulers[0].key", remedy("chained", "momentum", "weight_decay")),
    # a dialect's combinator
    ({"name": "oneflow.SequentialLR", "milestones": [2], "schedulers": [
        {"name": "oneflow.ConstantLR", "factor": 0.5, "total_iters": 2},
        {"name": "oneflow.ExponentialLR", "gamma": 0.9, "key": "weight_decay"}]},
     "schedulers[1].key", remedy("oneflow.SequentialLR", "weight_decay")),
    # a torch class as a stage, as any other
    ({"name": "sequential", "schedulers": [
        {"name": "LinearLR", "total_iters": 2, "key": "momentum"},
        {"name": "CosineAnnealingLR", "T_max": 4}]},
     "schedulers[0].key", remedy("sequential", "momentum")),
    # a stage that drives one key only, not written: refused at the stage
    ({"name": "sequential", "schedulers": [
        {"name": "cerebras.CosineDecayWD", "initial_val": 0.1, "end_val": 0.0, "total_iters": 4},
        {"name": "oneflow.ConstantLR", "factor": 1.0, "total_iters": 2}]},
     "schedulers[0]", "CosineDecayWD drives 'weight_decay' only; " + remedy("sequential", "weight_decay")),
])
def test_configure_lr_scheduler_refuses_a_stage_key_that_is_not_its_combinators(spec, path, message):
    opt = _sgd()
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_lr_scheduler(opt, spec)
    assert messages(info) == [(path, message)]
    assert [(g["lr"], g["momentum"], g["weight_decay"]) for g in opt.param_groups] == [(0.1, 0.9, 0.1)]


def _run(scheduler, steps):
    opt = _sgd()
    sched = optreg.configure_lr_scheduler(opt, scheduler)
    seen = []
    for _ in range(steps):
        seen.append((opt.param_groups[0]["lr"], opt.param_groups[0]["weight_decay"]))
        opt.step()
        sched.step()
    return seen


def test_a_stage_key_equal_to_its_combinators_drives_that_key():
    """key: weight_decay on the chained and on a stage: both stages drive weight_decay, the lr stays."""
    stages = [{"name": "CosineAnnealingLR", "T_max": 12},
              {"name": "oneflow.LinearLR", "start_factor": 1.0, "end_factor": 0.1, "total_iters": 12,
               "key": "weight_decay"}]
    got = _run({"name": "chained", "key": "weight_decay", "schedulers": stages}, 13)
    cosine = [0.5 * (1 + math.cos(math.pi * t / 12)) for t in range(13)]
    linear = [1 + (0.1 - 1) * t / 12 for t in range(13)]
    assert [lr for lr, _ in got] == [0.1] * 13
    assert [wd for _, wd in got] == pytest.approx([0.1 * c * f for c, f in zip(cosine, linear)], rel=1e-12,
                                                  abs=1e-15)
    # a stage's key: lr under a combinator that drives the lr (its default): the lr is cosine × linear
    stages[1]["key"] = "lr"
    got = _run({"name": "chained", "schedulers": stages}, 13)
    assert [wd for _, wd in got] == [0.1] * 13
    assert [lr for lr, _ in got] == pytest.approx([0.1 * c * f for c, f in zip(cosine, linear)], rel=1e-12,
                                                  abs=1e-15)
    # a torch class as the stage, its key written the combinator's: the same values
    stages[1] = {"name": "LinearLR", "start_factor": 1.0, "end_factor": 0.1, "total_iters": 12, "key": "weight_decay"}
    got = _run({"name": "chained", "key": "weight_decay", "schedulers": stages}, 13)
    assert [wd for _, wd in got] == pytest.approx([0.1 * c * f for c, f in zip(cosine, linear)], rel=1e-12,
                                                  abs=1e-15)


def test_a_combinator_key_that_is_no_key_is_reported_once_not_for_each_stage():
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_lr_scheduler(_sgd(), {"name": "chained", "key": "wieght_decay", "schedulers": [
            {"name": "oneflow.ExponentialLR", "gamma": 0.9, "key": "weight_decay"},
            {"name": "oneflow.ExponentialLR", "gamma": 0.8, "key": "lr"}]})
    assert messages(info) == [("key", "must be one of lr, momentum, betas[0], betas[1], weight_decay, got "
                                      "'wieght_decay'")]
    assert info.value.errors[0].suggestion == "weight_decay"


TOP_FILE = """\
optimizer: {name: SGD, lr: 0.1, momentum: 0.9}
scheduler: {name: torch.StepLR, step_size: 2, key: momentum}
train: {steps: 6}
"""


def test_a_torch_class_at_the_top_drives_the_lr_only(tmp_path, capsys):
    """A torch class drives the lr (a stage's, its combinator's key): a top-level `key:` naming another key is
    refused at its key by the rule of every schedule that drives one key, from validate, build and
    configure_lr_scheduler alike (it was 'unknown option of torch.StepLR')."""
    path = tmp_path / "top.yaml"
    path.write_text(TOP_FILE)
    message = "torch.StepLR drives 'lr' only, got 'momentum'"
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().err == f"{path}:2:47: scheduler.key: {message}\n"
    with pytest.raises(optreg.ConfigError) as info:
        optreg.build(str(path), torch.nn.Linear(2, 2))
    assert messages(info) == [("scheduler.key", message)]
    opt = _sgd()
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_lr_scheduler(opt, {"name": "torch.StepLR", "step_size": 2, "key": "momentum"})
    assert messages(info) == [("key", message)]
    with pytest.raises(optreg.ConfigError) as info:   # a key that is no key: as a closed form's
        optreg.configure_lr_scheduler(opt, {"name": "torch.StepLR", "step_size": 2, "key": "wieght_decay"})
    assert messages(info) == [("key", "must be one of lr, momentum, betas[0], betas[1], weight_decay, got "
                                      "'wieght_decay'")]
    assert info.value.errors[0].suggestion == "weight_decay"


def test_a_torch_class_at_the_top_takes_key_lr():
    """`key: lr` on a top-level torch class is the key it drives: its lrs are torch's StepLR's."""
    got = _run({"name": "torch.StepLR", "step_size": 2, "gamma": 0.5, "key": "lr"}, 6)
    opt = _sgd()
    theirs = torch.optim.lr_scheduler.StepLR(opt, 2, 0.5)
    expected = []
    for _ in range(6):
        expected.append((opt.param_groups[0]["lr"], opt.param_groups[0]["weight_decay"]))
        opt.step()
        theirs.step()
    assert got == expected

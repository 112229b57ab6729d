"""One plan behind every entry point (issue 25 item 3): `validate` gives build's verdict on every config whose
verdict needs no model, and the conflicts that planning refuses up front (item 7) are refused alike by validate,
build, run and configure_lr_scheduler."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st
from test_fuzz import FUZZ_CI, OPTIMIZER_SPECS, SCHEDULER_SPECS, _model_for, _settings, experiments

import optreg
from optreg import ConfigError
from optreg.cli import main
from optreg.config.experiment import validate_experiment
from optreg.core.build import PER_GROUP
from optreg.core.entry import OPTIMIZER
from optreg.core.groups import settings_table
from optreg.core.registry import REGISTRY
from optreg.train import make_model

MODEL_KEYS = ("param_groups", *settings_table(), "capturable", "differentiable")   # what a verdict may owe the model


def model_free(config: Any) -> bool:
    """A config whose verdict does not depend on the model: no rules over parameter names, no setting that reads
    the model, no flag checked against the parameters' device, an optimizer that takes any parameters."""
    if not isinstance(config, dict) or not isinstance(config.get("optimizer"), dict):
        return True   # refused as a whole, model or not
    section = config["optimizer"]
    if (any(section.get(key) not in (None, False, []) for key in MODEL_KEYS)
            or isinstance(section.get("optimizer"), dict)):
        return False
    try:
        entry = REGISTRY.lookup(OPTIMIZER, section.get("name"), section.get("dialect") or config.get("dialect"))
    except (ConfigError, TypeError):
        return True
    if (entry.bind is not None or REGISTRY.dialect(entry.dialect).default_settings) and \
            _anywhere(config.get("scheduler"), lambda node: any(isinstance(node.get(k), list) for k in PER_GROUP)):
        return False   # a per-group list's length is the number of groups a dialect's rule makes of the model
    return not (entry.accepts or entry.takes_model or "sparse" in entry.name.lower())


def verdict(action) -> bool:
    try:
        action()
    except ConfigError:
        return False
    return True


@st.composite
def unmutated(draw) -> dict[str, Any]:
    """A config drawn from the JSON Schema as it is (the corpus before its hostile edits)."""
    config: dict[str, Any] = {"optimizer": dict(draw(OPTIMIZER_SPECS))}
    if draw(st.booleans()):
        config["scheduler"] = draw(SCHEDULER_SPECS)
    if draw(st.booleans()):
        config["train"] = {"steps": draw(st.integers(1, 5))}
    return config


def _anywhere(config, found) -> bool:
    """Whether `found(mapping)` holds for a mapping anywhere in `config` (an iterative walk: fuzzed configs nest
    deeply)."""
    todo, seen = [config], set()
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            if found(node):
                return True
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return False


def _counts_epochs(config) -> bool:
    """Whether a spec anywhere in `config` says `by_epoch: true`."""
    return _anywhere(config, lambda node: node.get("by_epoch") is True)


def _run_given(config) -> dict:
    """What a caller gives build where the file leaves the run to it: the steps per epoch of a schedule counted in
    epochs (the dataloader's length), and a run length for a warmup given as a ratio of a run the file lacks."""
    extra = {"steps_per_epoch": 2} if _counts_epochs(config) else {}
    if not isinstance(config, dict):
        return extra
    train = config.get("train") if isinstance(config.get("train"), dict) else {}
    ratios: list = []
    _anywhere(config, lambda node: isinstance(node.get("warmup"), dict) and "ratio" in node["warmup"] and
              ratios.append(node["warmup"]["ratio"]))
    if ratios and "steps" not in train and "epochs" not in train:
        extra["total_steps"] = 10
    elif ratios and "steps" not in train and "steps_per_epoch" not in train:
        extra["steps_per_epoch"] = 2
    # a ratio's warmup that takes the whole run given here (ceil(0.9375 × 10) = 10 steps) is build's error, which
    # validate, without that run, cannot see: such a pairing says nothing of the two agreeing
    run = extra.get("total_steps") or (train.get("epochs") if isinstance(train.get("epochs"), int) else 0) * \
        extra.get("steps_per_epoch", 0)
    assume(not run or all(not isinstance(r, (int, float)) or isinstance(r, bool) or
                          math.ceil(round(r * run, 9)) < run for r in ratios))
    return extra


@_settings(FUZZ_CI // 2)
@given(st.one_of(experiments(), unmutated()))
def test_validate_gives_builds_verdict_on_every_model_free_config(config):
    assume(model_free(config))
    ok = verdict(lambda: validate_experiment(config))
    model = _model_for(config)
    # a schedule counted in epochs takes the steps per epoch from build's argument where the file has none (the
    # dataloader's length), a warmup ratio the run length: validate leaves those to build, so build is given what a
    # caller must give it
    extra = _run_given(config)
    assert verdict(lambda: optreg.build(config, model, **extra)) == ok, config


def test_an_empty_per_group_list_is_refused_without_a_model_too():
    """A per-group list of no values is too short for any model: validate refuses it where the number of groups is
    unknown without a model (MindSpore's beta/gamma grouping), as build refuses it with one (the fuzzer's case)."""
    config = {"optimizer": {"name": "Adam", "dialect": "mindspore"},
              "scheduler": {"name": "CyclicLR", "dialect": "torch", "base_lr": 0.0, "max_lr": 0.0, "base_momentum": []}}
    with pytest.raises(ConfigError) as info:
        validate_experiment(config)
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("scheduler.base_momentum", "expected one value per parameter group, got 0")]
    with pytest.raises(ConfigError) as info:
        optreg.build(config, torch.nn.Linear(2, 2))
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("scheduler.base_momentum", "expected one value per parameter group (1), got 0")]


def model():
    return make_model(8, 1, 0)


CONFLICTS = [
    # an absolute schedule over groups whose lr a multiplier scales
    ("optimizer: {name: SGD, lr: 0.1, param_groups: [{params: 'inp.*', lr_mult: 0.5}]}\n"
     "scheduler: {name: cerebras.LinearLR, initial_learning_rate: 0.1, end_learning_rate: 0.01, total_iters: 4}\n",
     "scheduler", "LinearLR sets an absolute lr, the same in every group, which would undo "
                  "optimizer.param_groups[0].lr_mult"),
    # a schedule-valued MindSpore learning_rate with lr_mult
    ("dialect: mindspore\noptimizer:\n  name: Momentum\n  momentum: 0.9\n"
     "  learning_rate: {name: CosineDecayLR, min_lr: 0.01, max_lr: 0.1, decay_steps: 4}\n"
     "  param_groups: [{params: 'inp.*', lr_mult: 0.5}]\n",
     "optimizer.param_groups[0].lr_mult", "cannot scale a lr of CosineDecayLR"),
    # a per-step list shorter than the run the user gave
    ("dialect: mindspore\noptimizer: {name: Momentum, momentum: 0.9, learning_rate: [0.1, 0.05, 0.01]}\n"
     "train: {steps: 5}\n",
     "optimizer.learning_rate", "a per-step list of 3 values is shorter than the run (5 steps"),
    # a dynamic lr and a scheduler that drives the same key
    ("dialect: mindspore\noptimizer: {name: Momentum, momentum: 0.9, learning_rate: [0.1, 0.05, 0.01]}\n"
     "scheduler: {name: torch.StepLR, step_size: 1}\n",
     "scheduler", "StepLR drives lr, but optimizer.learning_rate is a per-step list or schedule"),
    # a rule's own per-step list: named by its key, the same with a model (the rule's group first) and without
    ("dialect: mindspore\noptimizer:\n  name: Momentum\n  momentum: 0.9\n  learning_rate: 0.1\n"
     "  param_groups: [{params: 'inp.*', lr: 0.5}, {params: '*.bias', learning_rate: [0.1, 0.05]}]\n"
     "scheduler: {name: torch.StepLR, step_size: 1}\n",
     "scheduler", "StepLR drives lr, but optimizer.param_groups[1].learning_rate is a per-step list or schedule"),
]


@pytest.mark.parametrize("text, path, message", CONFLICTS)
def test_conflicts_are_refused_up_front_by_validate_build_and_run(text, path, message, tmp_path, capsys):
    file = tmp_path / "c.yaml"
    file.write_text(text)
    for action in (lambda: optreg.load_config(file), lambda: optreg.build(file, model())):
        with pytest.raises(ConfigError) as info:
            action()
        assert [(e.path, e.message[:len(message)]) for e in info.value.errors] == [(path, message)]
        assert info.value.errors[0].location.file == str(file)
    for command in (["validate", str(file)], ["run", str(file)]):
        assert main(command) == 1
        out, err = capsys.readouterr()
        assert out == "" and f"{path}: {message}" in err   # run: before any training output


def test_a_short_list_is_refused_against_the_steps_of_the_command_line(tmp_path, capsys):
    file = tmp_path / "c.yaml"
    file.write_text("dialect: mindspore\noptimizer: {name: SGD, learning_rate: [0.1, 0.05, 0.01]}\n")
    assert main(["validate", str(file)]) == 0     # the default run length (100) is not the user's
    capsys.readouterr()
    assert main(["run", str(file), "--steps", "3"]) == 0
    capsys.readouterr()
    for command in (["run", str(file), "--steps", "4"], ["plot", str(file), "--csv", "--steps", "4"],
                    ["run", str(file), "optimizer.learning_rate=[0.1,0.2]", "--steps", "3"]):
        assert main(command) == 1
        out, err = capsys.readouterr()
        assert out == "" and "optimizer.learning_rate: a per-step list of" in err, command


def test_configure_lr_scheduler_refuses_a_scheduler_over_a_dynamic_lr():
    optimizer = optreg.configure_optimizer("mindspore.Momentum", torch.nn.Linear(2, 2), momentum=0.9,
                                           learning_rate=[0.1, 0.05])
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(optimizer, "StepLR", step_size=1)
    assert info.value.errors[0].path == "scheduler"
    assert info.value.errors[0].message.startswith("StepLR drives lr, but parameter group 0's lr is a per-step")
    # a scheduler of another key is still welcome
    assert optreg.configure_lr_scheduler(optimizer, {"name": "hf.constant", "key": "momentum"}) is not None


DYNAMIC = ("parameter group 0's lr is a per-step list or schedule (a dynamic learning_rate) that the optimizer sets at "
           "every step: the {} would change nothing and the groups would report an lr that is not the one applied; "
           "give a number as the optimizer's lr")


def test_configure_lr_scheduler_refuses_a_number_over_a_dynamic_lr():
    """The README: "a number sets every group's lr". Over a per-step learning_rate the optimizer applies its list
    whatever the group's lr says, so a number is refused as a scheduler is (one check: build.check_static_lr), at
    the argument; the group keeps its lr and the step applies the list's first value. Before, the call returned
    None, the group said 0.5 and the step still used 0.1."""
    model = torch.nn.Linear(2, 2)
    optimizer = optreg.configure_optimizer("mindspore.SGD", model, learning_rate=[0.1, 0.2, 0.3, 0.4])
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(optimizer, 0.5)
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("learning_rate", "a number (0.5) sets every group's lr, but " + DYNAMIC.format("number"))]
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(optimizer, "StepLR", step_size=1)
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("scheduler", "StepLR drives lr, but " + DYNAMIC.format("scheduler") + ", or no scheduler for lr")]
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.1)
    before = model.weight.detach().clone()
    model.weight.grad = torch.ones_like(model.weight)
    optimizer.step()
    assert (before - model.weight.detach()).flatten().tolist() == pytest.approx([0.1] * 4, rel=1e-6)
    # a number over an lr that is a number sets it
    static = optreg.configure_optimizer("mindspore.SGD", model, learning_rate=0.1)
    assert optreg.configure_lr_scheduler(static, 0.5) is None and static.param_groups[0]["lr"] == 0.5


def test_a_wrapper_over_a_dynamic_lr_refuses_a_number_and_a_scheduler():
    """MindSpore LARS steps with its inner optimizer's per-step lr (lars._lr_schedule): configure_lr_scheduler
    refuses a number and a scheduler over it as over the inner optimizer. Before, both were taken and changed
    nothing."""
    optimizer = optreg.configure_optimizer("mindspore.LARS", torch.nn.Linear(2, 2),
                                           optimizer={"name": "SGD", "learning_rate": [0.1, 0.2]})
    for value, options, path in ((0.5, {}, "learning_rate"), ("StepLR", {"step_size": 1}, "scheduler")):
        with pytest.raises(ConfigError) as info:
            optreg.configure_lr_scheduler(optimizer, value, **options)
        assert [e.path for e in info.value.errors] == [path]
        assert DYNAMIC.format("number" if path == "learning_rate" else "scheduler") in info.value.errors[0].message

"""The run around the optimizer: run length, epochs (against MMEngine's recorded curves), warmup (against the
sequential schedule it abbreviates) and gradient clipping (the norm asked for)."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import optreg
from optreg.errors import ConfigError

FIXTURES = Path(__file__).parent / "fixtures" / "mmengine" / "schedulers.json"


class Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 2)
        self.b = nn.Linear(2, 1)


def config(scheduler=None, train=None, lr=0.1, **top):
    out = {"optimizer": {"name": "SGD", "lr": lr / 5, "param_groups": [{"params": "a.*", "lr": lr}]}, **top}
    if scheduler is not None:
        out["scheduler"] = scheduler
    if train is not None:
        out["train"] = train
    return out


def lrs(built, steps):
    """Every group's lr at optimizer steps 0 .. steps-1, the scheduler stepped once per optimizer step."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(steps):
            out.append([g["lr"] for g in built.optimizer.param_groups])
            built.optimizer.step()
            built.scheduler.step()
    return out


def messages(exc_info) -> list[tuple[str, str]]:
    return [(e.path, e.message) for e in exc_info.value.errors]


# ---------------------------------------------------------------------------------------------------
# run length
# ---------------------------------------------------------------------------------------------------
def test_run_length_from_each_source_in_order():
    model = Two()
    assert optreg.build(config(), model).run.steps is None       # nothing given: unknown, not the default
    assert optreg.build(config(train={"steps": 70}), model).run.steps == 70
    built = optreg.build(config(train={"epochs": 4, "steps_per_epoch": 25}), model)
    assert (built.run.steps, built.run.steps_per_epoch, built.run.source) == (100, 25, "train.epochs")
    built = optreg.build(config(train={"epochs": 4}), model, steps_per_epoch=30)
    assert (built.run.steps, built.run.steps_per_epoch) == (120, 30)
    built = optreg.build(config(train={"steps_per_epoch": 30}), model, total_steps=90)
    assert (built.run.steps, built.run.source) == (90, "total_steps=")
    # numpy's integers, as train.steps takes them (they were 'must be an integer >= 1, got np.int64(90)')
    built = optreg.build(config(train={"epochs": 3}), model, total_steps=np.int64(90), steps_per_epoch=np.int32(30))
    assert (built.run.steps, built.run.steps_per_epoch) == (90, 30) and type(built.run.steps) is int


def test_two_run_lengths_that_disagree_are_an_error():
    with pytest.raises(ConfigError) as info:
        optreg.load_config("train: {steps: 1000, epochs: 3, steps_per_epoch: 300}\noptimizer: {name: SGD, lr: 0.1}\n")
    assert messages(info) == [("train.epochs", "train.steps 1000 and train.epochs × steps_per_epoch = 3 × 300 = 900 "
                                               "disagree on the run length; give one")]
    assert str(info.value).startswith("<string>:1:")
    with pytest.raises(ConfigError) as info:
        optreg.build(config(train={"steps": 100}), Two(), total_steps=50)
    assert messages(info) == [("train.steps", "total_steps=50 and train.steps 100 disagree on the run length; "
                                              "give one")]
    with pytest.raises(ConfigError) as info:
        optreg.build(config(train={"steps_per_epoch": 10}), Two(), steps_per_epoch=12)
    assert messages(info) == [("train.steps_per_epoch", "build(steps_per_epoch=12) and train.steps_per_epoch 10 "
                                                        "disagree; give one")]
    assert optreg.load_config("train: {epochs: 3}\noptimizer: {name: SGD, lr: 0.1}\n").run.steps is None


def test_epochs_beside_another_run_length_need_the_steps_per_epoch(tmp_path, capsys):
    """train.epochs beside train.steps (or build(total_steps=)) without the steps per epoch gives no length to agree
    with: an error at train.epochs in validate, run, plot and build alike (the epochs were left unused, with no word);
    with the steps per epoch the two are compared, and --steps replaces both."""
    from optreg.cli import main

    path = tmp_path / "both.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1}\ntrain: {steps: 10, epochs: 2}\n")
    message = ("2 epochs need the steps per epoch to agree with the 10 steps of the run (train.steps or --steps): "
               "give one of train.steps or train.epochs with train.steps_per_epoch (build(..., steps_per_epoch=))")
    for argv in (["validate", str(path)], ["run", str(path)], ["plot", str(path), "--csv"]):
        assert main(argv) == 1, argv
        assert capsys.readouterr().err == f"{path}:2:20: train.epochs: {message}\n", argv
    with pytest.raises(ConfigError) as info:
        optreg.build(str(path), Two())
    assert messages(info) == [("train.epochs", message)]
    assert optreg.build(str(path), Two(), steps_per_epoch=5).run.steps == 10
    with pytest.raises(ConfigError) as info:
        optreg.build(str(path), Two(), steps_per_epoch=4)
    assert messages(info) == [("train.epochs", "train.steps 10 and train.epochs × steps_per_epoch = 2 × 4 = 8 "
                                               "disagree on the run length; give one")]
    assert main(["validate", str(path), "--steps", "3"]) == 0
    assert main(["run", str(path), "--steps", "3"]) == 0
    assert "(after 3 steps)" in capsys.readouterr().out
    with pytest.raises(ConfigError) as info:
        optreg.build(config(train={"epochs": 2}), Two(), total_steps=10)
    assert messages(info) == [("train.epochs", message.replace("train.steps or --steps", "total_steps="))]


def test_cli_steps_replaces_the_files_epochs(tmp_path, capsys):
    from optreg.cli import main

    path = tmp_path / "run.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.05}\ntrain: {epochs: 3, steps_per_epoch: 4, hidden: 8, depth: 1}\n")
    assert main(["run", str(path)]) == 0
    assert "(after 12 steps)" in capsys.readouterr().out
    assert main(["run", str(path), "--steps", "5"]) == 0
    assert "(after 5 steps)" in capsys.readouterr().out
    path.write_text("optimizer: {name: SGD, lr: 0.05}\ntrain: {epochs: 3}\n")
    assert main(["run", str(path)]) == 1
    assert capsys.readouterr().err == (f"{path}:2:9: train.epochs: 3 epochs need the steps per epoch to give a run "
                                       f"length: train.steps_per_epoch or --steps N (build(..., steps_per_epoch=))\n")


def test_a_model_zoo_configs_max_steps_is_its_run_length():
    legacy = {"optimizer": {"optimizer_type": "SGD", "learning_rate": [
        {"scheduler": "Linear", "initial_learning_rate": 0.01, "end_learning_rate": 0.1, "total_iters": 10},
        {"scheduler": "CosineDecay", "initial_learning_rate": 0.1, "end_learning_rate": 0.0, "total_iters": 50}]},
        "runconfig": {"max_steps": 200}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = optreg.build(legacy, Two())
    assert (built.run.steps, built.run.source) == (200, "runconfig.max_steps")
    lint = ("optimizer.learning_rate: the stages span 60 steps, under 0.9 × the 200 steps of the run "
            "(runconfig.max_steps): the schedule ends early; make the lengths of optimizer.learning_rate add up to "
            "200")
    assert lint in built.notes and lint in [str(w.message) for w in caught]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # optreg's own train.steps wins over the format's, without a conflict
        assert optreg.build({**legacy, "train": {"steps": 60}}, Two()).run.steps == 60
    with pytest.raises(ConfigError) as info:
        optreg.build({**legacy, "runconfig": {"max_steps": 0}}, Two())
    assert messages(info) == [("runconfig.max_steps", "must be >= 1, got 0")]


def test_a_length_the_schedule_leaves_out_is_the_run():
    built = optreg.build(config({"name": "CosineAnnealingLR", "eta_min": 0.0}, {"steps": 40}), Two())
    got = lrs(built, 41)
    assert got[20][0] == pytest.approx(0.05, rel=1e-12) and got[40][0] == pytest.approx(0.0, abs=1e-15)
    with pytest.raises(ConfigError) as info:      # no run length: T_max is required, as torch requires it
        optreg.build(config({"name": "CosineAnnealingLR"}), Two())
    assert messages(info)[0][0] == "scheduler.T_max"


@pytest.mark.parametrize("spec, length, written", [
    ({"name": "CosineAnnealingLR", "eta_min": 0.001}, "T_max", 12),
    ({"name": "CosineAnnealingLR", "warmup": {"steps": 4}}, "T_max", 8),          # run − the warmup
    ({"name": "OneCycleLR", "max_lr": 0.2}, "total_steps", 12),
    ({"name": "hf.cosine_with_min_lr", "num_warmup_steps": 3, "min_lr": 0.0}, "num_training_steps", 12),
    ({"name": "LinearLR", "start_factor": 0.5, "warmup": {"steps": 2}}, "total_iters", 10),
])
def test_a_length_written_null_is_one_left_out(spec, length, written):
    """`T_max: None` (a Hydra group file's null) is planned as T_max left out: the run length − the warmup, value
    for value as the length written out; without a run length, the error of one left out."""
    got = [lrs(optreg.build(config({**spec, **extra}), Two(), total_steps=12), 12)
           for extra in ({length: None}, {}, {length: written})]
    assert got[0] == got[1] == got[2] and len({lr for step in got[0] for lr in step}) >= 6
    outcomes = []
    for extra in ({length: None}, {}):
        try:
            outcomes.append(lrs(optreg.build(config({**spec, **extra}), Two()), 12))
        except ConfigError as exc:
            outcomes.append([(e.path, e.message) for e in exc.errors])
    missing = "give total_steps, or epochs and steps_per_epoch" if length == "total_steps" else \
        ("required option is missing: left out or null, the schedule's length comes from the run's length "
         "(train.steps, train.epochs × steps_per_epoch, or build(total_steps=)), and the run has none")
    # LinearLR's total_iters has a default (5), which a length left out keeps when no run gives one
    assert outcomes[0] == outcomes[1] == (lrs(optreg.build(config({**spec, length: 5}), Two()), 12)
                                          if length == "total_iters" else [(f"scheduler.{length}", missing)])


# ---------------------------------------------------------------------------------------------------
# epochs: MMEngine's curves
# ---------------------------------------------------------------------------------------------------
RECORDED = json.loads(FIXTURES.read_text())


@pytest.mark.parametrize("case", RECORDED["cases"], ids=[c["name"] for c in RECORDED["cases"]])
def test_epoch_schedules_follow_mmengine(case):
    E, (lr_a, lr_b) = RECORDED["steps_per_epoch"], RECORDED["group_lrs"]
    spec = {"optimizer": {"name": "SGD", "lr": lr_b, "param_groups": [{"params": "a.*", "lr": lr_a}]},
            "scheduler": case["scheduler"], "train": {"steps": case["steps"], "steps_per_epoch": E}}
    got = lrs(optreg.build(spec, Two()), case["steps"])
    for step, (mine, theirs) in enumerate(zip(got, case["lrs"])):
        assert mine == pytest.approx(theirs, rel=1e-9, abs=0), f"{case['mmengine']} step {step}"


def test_by_epoch_needs_steps_per_epoch_and_convert_needs_by_epoch():
    with pytest.raises(ConfigError) as info:
        optreg.build(config({"name": "StepLR", "step_size": 2, "convert_to_iter_based": True},
                            {"steps_per_epoch": 5}), Two())
    assert messages(info) == [("scheduler.convert_to_iter_based", "convert_to_iter_based converts a schedule "
                                                                  "written in epochs; it needs by_epoch: true")]
    with pytest.raises(ConfigError) as info:
        optreg.build(config({"name": "StepLR", "step_size": 2, "by_epoch": True}), Two())
    assert messages(info) == [("scheduler.by_epoch", "a schedule counted in epochs needs the steps per epoch: "
                                                     "train.steps_per_epoch (in the file, or the override "
                                                     "train.steps_per_epoch=N of optreg run / plot / groups) or "
                                                     "build(..., steps_per_epoch=)")]
    built = optreg.build(config({"name": "StepLR", "step_size": 2, "by_epoch": True}), Two(), steps_per_epoch=5)
    assert [row[0] for row in lrs(built, 11)][8:] == pytest.approx([0.1, 0.1, 0.01])


def test_a_loop_flag_that_is_no_boolean_is_said_as_the_own_forms_boolean(tmp_path, capsys):
    """by_epoch and convert_to_iter_based word a value that is no boolean as every other option of the own form does
    (models.bool_message; they said `must be true or false, got 'yes'`), at their positions."""
    from optreg.cli import main

    path = tmp_path / "loop.yaml"
    path.write_text('optimizer: {name: SGD, lr: 0.1}\n'
                    'scheduler: {name: StepLR, step_size: 2, by_epoch: "yes", convert_to_iter_based: 1}\n')
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{path}:2:41: scheduler.by_epoch: expected true or false, got str 'yes'",
        f"{path}:2:58: scheduler.convert_to_iter_based: expected true or false, got int 1"]


@pytest.mark.parametrize("given, message", [(0, "must be >= 1, got 0"), (np.int64(0), "must be >= 1, got np.int64(0)"),
                                            (1.5, "must be an integer, got 1.5"),
                                            ("x", "expected an integer, got str 'x'"),
                                            (2 ** 60, "must be <= 9007199254740992, got 1152921504606846976"),
                                            (True, "expected a number, got boolean true")])   # was 'got bool True'
def test_a_bad_run_length_given_to_build_is_said_as_train_steps_says_it(given, message):
    """total_steps= and steps_per_epoch= are read by the types of train.steps and train.steps_per_epoch, and word a
    bad value as they do (they said `must be an integer >= 1, got 0`, and had no upper bound)."""
    for key in ("total_steps", "steps_per_epoch"):
        with pytest.raises(ConfigError) as info:
            optreg.build(config(), Two(), **{key: given})
        assert messages(info) == [(key, message)]
    with pytest.raises(ConfigError) as info:
        optreg.build(config(train={"steps": given}), Two())
    assert messages(info) == [("train.steps", message)]


@pytest.mark.parametrize("given", [2.0, "9", np.int64(9)])
def test_a_run_length_given_to_build_takes_what_train_steps_takes(given):
    """build(total_steps=) takes what train.steps takes, the same integer (2.0 and '9' were refused there, read
    by train.steps as the integers they write)."""
    by_call = optreg.build(config(), Two(), total_steps=given).run.steps
    assert by_call == optreg.build(config(train={"steps": given}), Two()).run.steps == int(float(given))
    assert type(by_call) is int


def test_convert_scales_a_sequentials_counts_and_milestones():
    spec = {"name": "sequential", "by_epoch": True, "convert_to_iter_based": True,
            "schedulers": [{"name": "LinearLR", "start_factor": 0.5, "total_iters": 2},
                           {"name": "ExponentialLR", "gamma": 0.9}]}
    got = [row[0] for row in lrs(optreg.build(config(spec, {"steps_per_epoch": 4}), Two()), 12)]
    want = [0.1 * (0.5 + 0.5 * t / 8) for t in range(8)] + [0.1 * 0.9 ** (t - 8) for t in range(8, 12)]
    assert got == pytest.approx(want, rel=1e-12)


# ---------------------------------------------------------------------------------------------------
# warmup
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, stage", [("linear", {"name": "LinearLR", "start_factor": 0.1, "end_factor": 1.0,
                                                     "total_iters": 10}),
                                         ("constant", {"name": "ConstantLR", "factor": 0.1, "total_iters": 10})])
def test_warmup_equals_the_sequential_schedule_it_abbreviates(kind, stage):
    short = config({"name": "CosineAnnealingLR", "eta_min": 0.001,
                    "warmup": {"steps": 10, "start_factor": 0.1, "type": kind}}, {"steps": 100})
    long = config({"name": "sequential", "schedulers": [stage, {"name": "CosineAnnealingLR", "T_max": 90,
                                                                "eta_min": 0.001}]}, {"steps": 100})
    reference = optreg.build(long, Two())
    assert type(reference.scheduler).__name__ == "SequentialLR"     # torch's own
    theirs = lrs(reference, 100)
    mine = lrs(optreg.build(short, Two()), 100)
    for step, (a, b) in enumerate(zip(mine, theirs)):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15), step


def test_exponential_warmup_and_ratio_and_start_value():
    spec = {"name": "ExponentialLR", "gamma": 0.5, "warmup": {"ratio": 0.05, "start_factor": 0.01,
                                                              "type": "exponential"}}
    got = [row[0] for row in lrs(optreg.build(config(spec, {"steps": 80}), Two()), 6)]
    # W = ceil(0.05 × 80) = 4; s = 0.01 × 0.1; s·(v0/s)^(t/W) = 0.001·100^(t/4); then 0.1·0.5^(t - 4)
    assert got == pytest.approx([0.001, 0.001 * 100 ** 0.25, 0.01, 0.001 * 100 ** 0.75, 0.1, 0.05], rel=1e-12)
    spec = {"name": "ExponentialLR", "gamma": 0.5, "warmup": {"steps": 2, "start_value": 0.0}}
    got = lrs(optreg.build(config(spec), Two()), 3)
    assert sum(got, []) == pytest.approx([0.0, 0.0, 0.05, 0.01, 0.1, 0.02], rel=1e-12)


def test_warmup_default_is_linear_from_a_thousandth():
    spec = {"name": "ConstantLR", "factor": 1.0, "warmup": {"steps": 4}}
    got = [row[0] for row in lrs(optreg.build(config(spec), Two()), 5)]
    assert got == pytest.approx([0.0001 + (0.1 - 0.0001) * t / 4 for t in range(4)] + [0.1], rel=1e-12)


def test_warmup_refusals():
    cases = [
        ({"name": "ReduceLROnPlateau", "warmup": {"steps": 5}}, None,
         [("scheduler.warmup", "torch.ReduceLROnPlateau steps on a metric, not on the step count: it takes no "
                               "warmup")]),
        ({"name": "linear", "dialect": "hf", "num_warmup_steps": 2, "num_training_steps": 50,
          "warmup": {"steps": 5}}, None,
         [("scheduler.warmup", "hf.linear has a warmup of its own (num_warmup_steps); set it there and drop "
                               "warmup:")]),
        ({"name": "ExponentialLR", "gamma": 0.9, "warmup": {"ratio": 0.1}}, None,
         [("scheduler.warmup.ratio", "a warmup ratio needs the run length: train.steps, train.epochs × "
                                     "steps_per_epoch, or build(total_steps=)")]),
        ({"name": "CosineAnnealingLR", "warmup": {"steps": 20}}, {"steps": 20},
         [("scheduler.warmup", "a warmup of 20 steps leaves none of the 20-step run to CosineAnnealingLR; shorten "
                               "the warmup")]),
        ({"name": "sequential", "schedulers": [{"name": "ExponentialLR", "gamma": 0.9, "warmup": {"steps": 2}}]},
         None, [("scheduler.schedulers[0].warmup", "warmup applies to the whole schedule: give it once, in the "
                                                   "top-level scheduler section")]),
        ({"name": "ExponentialLR", "gamma": 0.9, "warmup": {"steps": 2, "ratio": 0.1}}, None,
         [("scheduler.warmup", "give one of steps (a count) and ratio (a fraction of the run)")]),
        ({"name": "ExponentialLR", "gamma": 0.9, "warmup": {"steps": 2, "type": "exponential",
                                                             "start_value": 0.0}}, None,
         [("scheduler.warmup.start_value", "an exponential warmup multiplies its start: it must be > 0")]),
    ]
    for scheduler, train, expected in cases:
        with pytest.raises(ConfigError) as info:
            optreg.build(config(scheduler, train), Two())
        assert messages(info) == expected, scheduler


def test_the_loop_keys_of_every_dialect_that_builds_torch_classes():
    """mindspore_experimental's and nemo's StepLR, CosineAnnealingLR, ... build torch's classes, but their dialects
    had no closed forms: a warmup or by_epoch (which their Hydra group files and `optreg show` offer) failed with
    'has no closed form and cannot be composed here'. They run as torch's do. HF's reduce_lr_on_plateau was not
    seen as a scheduler of a metric, and failed so too, as did torch's SWALR, which has no closed form: each is
    refused at the key, as torch's ReduceLROnPlateau is, and `optreg show` no longer offers them the keys."""
    train = {"epochs": 4, "steps_per_epoch": 3}
    for dialect, name, options in [("mindspore_experimental", "CosineAnnealingLR", {"eta_min": 0.001}),
                                   ("nemo", "StepLR", {"step_size": 1, "gamma": 0.5})]:
        for loop in ({"warmup": {"steps": 2, "start_factor": 0.1}}, {"by_epoch": True},
                     {"by_epoch": True, "warmup": {"ratio": 0.25}}):
            theirs = optreg.build(config({"name": name, "dialect": dialect, **options, **loop}, train), Two())
            torch_s = optreg.build(config({"name": name, **options, **loop}, train), Two())
            assert lrs(theirs, 12) == lrs(torch_s, 12), (dialect, loop)
    for loop, key in (({"warmup": {"steps": 2}}, "warmup"), ({"by_epoch": True}, "by_epoch")):
        with pytest.raises(ConfigError) as info:
            optreg.build(config({"name": "hf.reduce_lr_on_plateau", **loop}, train), Two())
        assert messages(info) == [(f"scheduler.{key}", f"hf.reduce_lr_on_plateau steps on a metric, not on the step "
                                                       f"count: it takes no {key}")]
        with pytest.raises(ConfigError) as info:
            optreg.build(config({"name": "SWALR", "swa_lr": 0.05, **loop}, train), Two())
        assert messages(info) == [(f"scheduler.{key}", f"torch.SWALR has no closed form (it runs as torch's class, "
                                                       f"alone): it takes no {key}")]
    assert [n for n in optreg.describe("SWALR").notes if n.startswith(("by_epoch", "warmup"))] == [
        "by_epoch: refused; torch.SWALR has no closed form (it runs as torch's class, alone): it takes no by_epoch",
        "warmup: refused; torch.SWALR has no closed form (it runs as torch's class, alone): it takes no warmup"]


def test_a_scheduler_of_a_metric_takes_no_by_epoch(tmp_path):
    """ReduceLROnPlateau with by_epoch was refused at `scheduler` as having 'no closed form' that 'cannot be composed
    here' (nothing is composed), and with convert_to_iter_based too it passed, its patience left in steps; it is refused
    at by_epoch as a warmup is at warmup, from a file (with its position) and from configure_lr_scheduler alike."""
    refusal = "torch.ReduceLROnPlateau steps on a metric, not on the step count: it takes no by_epoch"
    for spec in ({"name": "ReduceLROnPlateau", "by_epoch": True},
                 {"name": "ReduceLROnPlateau", "by_epoch": True, "convert_to_iter_based": True}):
        with pytest.raises(ConfigError) as info:
            optreg.build(config(spec, {"epochs": 3, "steps_per_epoch": 4}), Two())
        assert messages(info) == [("scheduler.by_epoch", refusal)]
    optimizer = torch.optim.SGD(Two().parameters(), lr=0.1)
    with pytest.raises(ConfigError) as info:   # no steps per epoch either: the refusal alone
        optreg.configure_lr_scheduler(optimizer, {"name": "ReduceLROnPlateau", "by_epoch": True})
    assert messages(info) == [("by_epoch", refusal)]
    path = tmp_path / "plateau.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler: {name: ReduceLROnPlateau, by_epoch: true}\n"
                    "train: {epochs: 3, steps_per_epoch: 4}\n")
    with pytest.raises(ConfigError) as info:
        optreg.load_config(path)
    assert str(info.value) == f"{path}:2:38: scheduler.by_epoch: {refusal}"


@pytest.mark.parametrize("spec, steps, name", [
    ({"name": "CosineAnnealingLR", "T_max": 10, "warmup": {"steps": 30}}, 20, "CosineAnnealingLR"),   # written
    ({"name": "CosineAnnealingLR", "warmup": {"steps": 30}}, 20, "CosineAnnealingLR"),               # left out
    ({"name": "CosineAnnealingLR", "T_max": None, "warmup": {"steps": 20}}, 20, "CosineAnnealingLR"),  # null
    ({"name": "LinearLR", "total_iters": 5, "warmup": {"ratio": 0.99}}, 20, "LinearLR"),        # ⌈19.8⌉ = 20
    ({"name": "ExponentialLR", "gamma": 0.9, "warmup": {"steps": 25}}, 20, "ExponentialLR"),        # no length
    ({"name": "sequential", "schedulers": [{"name": "oneflow.ExponentialLR", "gamma": 0.9}],
      "warmup": {"steps": 20}}, 20, "sequential"),
    ({"name": "CosineAnnealingLR", "warmup": {"steps": 1}}, 1, "CosineAnnealingLR"),   # `1 step`, not `1 steps`
])
def test_a_warmup_of_the_whole_run_is_one_error_whether_or_not_the_length_is_written(spec, steps, name):
    warmup = math.ceil(round(spec["warmup"].get("ratio", 0) * steps, 9)) or spec["warmup"]["steps"]
    with pytest.raises(ConfigError) as info:
        optreg.build(config(spec, {"steps": steps}), Two())
    assert messages(info) == [("scheduler.warmup", f"a warmup of {warmup} step{'s' * (warmup != 1)} leaves none "
                                                   f"of the {steps}-step run to {name}; shorten the warmup")]


def test_validate_refuses_a_warmup_of_the_whole_run_at_its_position_with_no_warning(tmp_path, capsys):
    from optreg.cli import main

    path = tmp_path / "ws2.yaml"
    path.write_text("optimizer: {name: SGD, lr: 1.0}\nscheduler:\n  name: CosineAnnealingLR\n  T_max: 10\n"
                    "  warmup: {steps: 30}\ntrain: {steps: 20}\n")
    expected = (f"{path}:5:3: scheduler.warmup: a warmup of 30 steps leaves none of the 20-step run to "
                f"CosineAnnealingLR; shorten the warmup\n")
    for command in (["validate"], ["plot", "--csv"], ["run"]):
        assert main([command[0], str(path), *command[1:]]) == 1
        assert capsys.readouterr() == ("", expected), command
    # a warmup that leaves 5 steps: the linter's length is that, in steps
    assert main(["validate", str(path), "scheduler.warmup.steps=15"]) == 0
    assert capsys.readouterr().err == (f"{path}:4:3: warning: scheduler.T_max: T_max 10 spans 10 steps, more than the "
                                       f"5 steps of the run after the 15-step warmup (train.steps or --steps): the "
                                       f"schedule never finishes; set scheduler.T_max to 5\n")


def _one_cycle_refusal(why, undo):
    return (f"torch.OneCycleLR cycles the momentum as well as the lr (cycle_momentum: true, its default), but {why} "
            f"it runs as a closed form of the lr alone, which would leave the momentum constant: set "
            f"cycle_momentum: false (the momentum stays the optimizer's), or {undo}")


def test_one_cycle_with_a_warmup_needs_cycle_momentum_false_and_then_is_torchs_after_the_warmup(tmp_path, capsys):
    from optreg.cli import main

    path = tmp_path / "onecycle.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1, momentum: 0.9}\n"
                    "scheduler: {name: OneCycleLR, max_lr: 0.1, warmup: {steps: 2}}\ntrain: {steps: 12}\n")
    refusal = _one_cycle_refusal("with a warmup", "drop warmup:")
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().err == f"{path}:2:1: scheduler: {refusal}\n"
    with pytest.raises(ConfigError) as info:
        optreg.build(str(path), Two())
    assert messages(info) == [("scheduler", refusal)]
    opt = torch.optim.SGD(Two().parameters(), lr=0.1, momentum=0.9)
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(opt, {"name": "OneCycleLR", "max_lr": 0.1, "total_steps": 10,
                                            "warmup": {"steps": 2}})
    assert messages(info) == [("scheduler", refusal)]
    with pytest.raises(ConfigError) as info:
        optreg.build(config({"name": "OneCycleLR", "max_lr": 0.1, "by_epoch": True}, {"steps": 12,
                                                                                       "steps_per_epoch": 3}), Two())
    assert messages(info) == [("scheduler", _one_cycle_refusal("counted in epochs", "drop by_epoch"))]

    # with cycle_momentum: false, the lr rises linearly from 0.001·v0 to v0 = max_lr / div_factor over W = 2 steps,
    # then is torch's OneCycleLR over the run's 10 other steps; the momentum stays 0.9
    built = optreg.build({"optimizer": {"name": "SGD", "lr": 0.1, "momentum": 0.9},
                          "scheduler": {"name": "OneCycleLR", "max_lr": 0.1, "cycle_momentum": False,
                                        "warmup": {"steps": 2}}, "train": {"steps": 12}}, Two())
    got, momenta = [], []
    for _ in range(12):
        got.append(built.optimizer.param_groups[0]["lr"])
        momenta.append(built.optimizer.param_groups[0]["momentum"])
        built.optimizer.step()
        built.scheduler.step()
    reference = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1, momentum=0.9)
    torch_one_cycle = torch.optim.lr_scheduler.OneCycleLR(reference, max_lr=0.1, total_steps=10, cycle_momentum=False)
    theirs = []
    for _ in range(10):
        theirs.append(reference.param_groups[0]["lr"])
        reference.step()
        torch_one_cycle.step()
    v0 = 0.1 / 25
    assert got[:2] == pytest.approx([0.001 * v0, 0.001 * v0 + (v0 - 0.001 * v0) / 2], rel=1e-12)
    assert got[2:] == pytest.approx(theirs, rel=1e-12, abs=1e-15)
    assert momenta == [0.9] * 12


def test_one_cycle_in_a_sequential_of_closed_forms_is_refused_at_its_stage():
    opt = torch.optim.SGD(Two().parameters(), lr=0.1, momentum=0.9)
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(opt, {"name": "sequential", "schedulers": [
            {"name": "oneflow.ConstantLR", "factor": 0.5, "total_iters": 2},
            {"name": "OneCycleLR", "max_lr": 0.1, "total_steps": 10}]})
    assert messages(info) == [("schedulers[1]", _one_cycle_refusal(
        "in this sequential, which is not torch's own (it has a stage of another dialect, a key or restart: global)",
        "give it as a scheduler of its own"))]


# ---------------------------------------------------------------------------------------------------
# gradient clipping
# ---------------------------------------------------------------------------------------------------
def _grads(model, value):
    for p in model.parameters():
        p.grad = torch.full_like(p, value)


def _norm(model, p=2.0):
    return float(torch.linalg.vector_norm(torch.cat([q.grad.reshape(-1) for q in model.parameters()]), p))


@pytest.mark.parametrize("norm_type", [2.0, 1.0, "inf"])
def test_clip_grad_gives_the_norm_asked_for(norm_type):
    model = Two()
    built = optreg.build(config(clip_grad={"max_norm": 0.5, "norm_type": norm_type}), model)
    _grads(model, 3.0)
    before = _norm(model, float(norm_type))
    total = built.clip_gradients(model)
    assert float(total) == pytest.approx(before, rel=1e-6)
    assert _norm(model, float(norm_type)) == pytest.approx(0.5, rel=1e-5)


def _uneven_grads(model, zero):
    """Gradients of different sizes in each tensor, none 0 (a negative order would give a total of 0), but the
    last tensor's all zero with `zero` (an order 0 then counts the others, not every tensor)."""
    torch.manual_seed(0)
    for i, p in enumerate(model.parameters()):
        p.grad = torch.zeros_like(p) if zero and i == 3 else (torch.rand_like(p) + 0.25) * (i + 1) * torch.sign(
            torch.randn_like(p))


@pytest.mark.parametrize("norm_type", [0, "-inf", -math.inf, math.inf, 1, 2, 3.5, -1.5])
def test_clip_grad_takes_every_norm_type_torch_does(norm_type):
    """0 (torch's order-0 norm of the tensors' norms: how many gradients are not all zero), a negative order and
    -inf (the smallest |g|) as torch 2.13's clip_grad_norm_ clips with them: the same gradients and total norm."""
    model, twin = Two(), Two()
    built = optreg.build(config(clip_grad={"max_norm": 0.1, "norm_type": norm_type}), model)
    _uneven_grads(model, float(norm_type) == 0)
    _uneven_grads(twin, float(norm_type) == 0)
    total = built.clip_gradients(model)
    expected = torch.nn.utils.clip_grad_norm_(twin.parameters(), 0.1, float(norm_type))
    assert float(total) == float(expected) > 0.1   # it clips
    for mine, torch_s in zip(model.parameters(), twin.parameters()):
        assert torch.equal(mine.grad, torch_s.grad)


def test_clip_grad_by_value_and_its_errors():
    model = Two()
    built = optreg.build(config(clip_grad={"max_value": 0.25}), model)
    _grads(model, -3.0)
    assert built.clip_gradients(model) is None
    assert all(float(p.grad.min()) == -0.25 and float(p.grad.max()) == -0.25 for p in model.parameters())
    built = optreg.build(config(clip_grad={"max_norm": 1.0, "error_if_nonfinite": True}), model)
    _grads(model, float("nan"))
    with pytest.raises(RuntimeError, match="non-finite"):
        built.clip_gradients(model)
    for bad, expected in [({"max_norm": 1.0, "max_value": 1.0},
                           ("clip_grad", "give one of max_norm (clip the global norm) and max_value (clip each "
                                         "element)")),
                          ({"max_norm": -1.0}, ("clip_grad.max_norm", "must be > 0, got -1.0")),
                          ({"max_norm": 1.0, "norm_type": "l2"},
                           ("clip_grad.norm_type", "expected a number or ±'inf', got 'l2'")),
                          ({"max_norm": 1.0, "norm_type": True},
                           ("clip_grad.norm_type", "expected a number or ±'inf', got boolean true")),
                          ({"max_norm": 1.0, "norm_type": float("nan")},
                           ("clip_grad.norm_type", "must be a number or ±'inf', got nan (torch's clip_grad_norm_ "
                                                   "would make every gradient nan)")),
                          ({"max_norm": 1.0, "norm_type": -1e10},
                           ("clip_grad.norm_type", "must be within ±1e+09 or ±'inf', got -10000000000.0")),
                          ({"max_nrom": 1.0}, None)]:
        with pytest.raises(ConfigError) as info:
            optreg.build(config(clip_grad=bad), model)
        if expected is not None:
            assert messages(info) == [expected]
        else:
            assert messages(info)[0][0] == "clip_grad.max_nrom"


def test_clip_grad_reports_every_problem_and_refuses_norm_options_beside_max_value(tmp_path):
    """A bad norm_type hid every other problem of the section (max_norm -1 went unsaid); norm_type and
    error_if_nonfinite beside max_value were dropped in silence: clip_grad_value_ takes neither, so
    `error_if_nonfinite: true` never raised. Each is an error at its key, in validate as in build."""
    model = Two()
    not_taken = "an option of clipping the global norm (max_norm), which clipping each element (max_value) does " \
                "not take; drop it"
    for bad, expected in [({"max_norm": -1.0, "norm_type": "l2"},
                           [("clip_grad.norm_type", "expected a number or ±'inf', got 'l2'"),
                            ("clip_grad.max_norm", "must be > 0, got -1.0")]),
                          ({"max_value": 0.5, "norm_type": 1.0}, [("clip_grad.norm_type", not_taken)]),
                          ({"max_value": 0.5, "error_if_nonfinite": True, "norm_type": "l2"},
                           [("clip_grad.norm_type", "expected a number or ±'inf', got 'l2'"),
                            ("clip_grad.error_if_nonfinite", not_taken)])]:
        with pytest.raises(ConfigError) as info:
            optreg.build(config(clip_grad=bad), model)
        assert messages(info) == expected
    path = tmp_path / "clip.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1}\nclip_grad: {max_value: 0.5, error_if_nonfinite: true}\n")
    with pytest.raises(ConfigError) as info:
        optreg.load_config(path)
    assert [(e.path, str(e.location)) for e in info.value.errors] == [("clip_grad.error_if_nonfinite",
                                                                       f"{path}:2:29")]


@pytest.mark.parametrize("clip_grad", [{"max_norm": 0.5}, {"max_value": 0.25}])
def test_clip_gradients_takes_what_build_takes_and_a_step_without_gradients(clip_grad):
    """named_parameters(), as build() takes them (it failed: 'tuple' object has no attribute 'grad'), clip as the
    Module does; a step where no parameter has a gradient clips nothing (clip_grad_value_ failed on an empty list)."""
    model, twin = Two(), Two()
    built = optreg.build(config(clip_grad=clip_grad), model)
    for which in (model, twin):
        _grads(which, 3.0)
    built.clip_gradients(model.named_parameters())
    built.clip_gradients(twin)
    for mine, module_s in zip(model.parameters(), twin.parameters()):
        assert torch.equal(mine.grad, module_s.grad) and not torch.equal(mine.grad, torch.full_like(mine, 3.0))
    model.zero_grad(set_to_none=True)
    total = built.clip_gradients(model)
    assert (None if total is None else float(total)) == (0.0 if "max_norm" in clip_grad else None)


# ---------------------------------------------------------------------------------------------------
# the README's worked example
# ---------------------------------------------------------------------------------------------------
def test_the_readmes_training_loop_example():
    import re

    text = (Path(__file__).parent.parent / "README.md").read_text()
    block = re.search(r"<!-- training-loop-example -->\n```yaml\n(.*?)```\n\n(\| steps.*?)\n\n", text, re.S)
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1))
    built = optreg.build(block.group(1), model)
    assert (built.run.steps, built.run.steps_per_epoch) == (20, 4)
    got = [row[0] for row in lrs(built, 20)]
    # by hand: 4 linear warmup steps from 0.1 × 0.1, then the cosine of epoch ⌊(t − 4)/4⌋ with T_max 4 epochs
    c = math.cos(math.pi / 4)
    hand = [0.01, 0.0325, 0.055, 0.0775] + [0.1] * 4 + [0.001 + 0.099 * (1 + c) / 2] * 4 + [0.0505] * 4 + \
        [0.001 + 0.099 * (1 - c) / 2] * 4
    assert got == pytest.approx(hand, rel=1e-12)
    table = [line.split("|")[2] for line in block.group(2).splitlines()[2:]]
    shown = [float(x) for cell in table for x in re.findall(r"^ ?([0-9.]+(?:, [0-9.]+)*)", cell)[0].split(", ")]
    assert shown == pytest.approx(hand[:4] + [hand[4], hand[8], hand[12], hand[16]], abs=5e-7)   # 6 decimals
    for p in model.parameters():
        p.grad = torch.full_like(p, 5.0)
    built.clip_gradients(model)
    assert math.sqrt(sum(float((p.grad ** 2).sum()) for p in model.parameters())) == pytest.approx(1.0, rel=1e-6)


# ---------------------------------------------------------------------------------------------------
# the JSON Schema, Hydra overrides and `optreg show` know the loop's keys
# ---------------------------------------------------------------------------------------------------
def test_schema_covers_the_loop_keys():
    import jsonschema

    validator = jsonschema.Draft7Validator(optreg.json_schema())
    good = {"optimizer": {"name": "SGD", "lr": 0.1},
            "scheduler": {"name": "CosineAnnealingLR", "by_epoch": True, "convert_to_iter_based": True,
                          "warmup": {"ratio": 0.1, "start_value": 0.0, "type": "exponential"}},
            "clip_grad": {"max_norm": 1.0, "norm_type": "inf", "error_if_nonfinite": True},
            "train": {"epochs": 3, "steps_per_epoch": 10}}
    assert list(validator.iter_errors(good)) == []
    for bad in ({"scheduler": {"name": "StepLR", "step_size": 2, "warmup": {"steps": 2, "type": "cosine"}}},
                {"scheduler": {"name": "sequential", "schedulers": [{"name": "StepLR", "step_size": 2}],
                               "by_epoch": "yes"}},
                {"clip_grad": {"max_norm": 1.0, "clip": 2}},
                {"train": {"epochs": 0}}):
        assert list(validator.iter_errors({**good, **bad})), bad


def test_hydra_overrides_reach_the_loop_keys():
    from optreg.cli import _load
    from optreg.config.run import ClipGrad

    experiment = _load(None, ["+clip_grad.max_norm=0.5", "+scheduler.warmup.steps=5", "~train.steps",
                              "train.epochs=2", "train.steps_per_epoch=10"])
    assert experiment.clip == ClipGrad(max_norm=0.5)
    assert (experiment.run.steps, experiment.run.steps_per_epoch) == (20, 10)
    assert experiment.scheduler["warmup"] == {"steps": 5}


def test_a_scheduler_group_file_carries_the_loop_keys_so_plain_overrides_reach_them():
    """Each scheduler group file says by_epoch / convert_to_iter_based false and warmup null (where the schedule
    takes one): a group switch plus a plain override (no `+`) sets them."""
    from optreg.cli import _load

    experiment = _load(None, ["scheduler=cosine_annealing", "scheduler.T_max=4", "scheduler.by_epoch=true",
                              "scheduler.convert_to_iter_based=true", "scheduler.warmup={steps: 10}",
                              "~train.steps", "train.epochs=5", "train.steps_per_epoch=10"])
    assert {k: experiment.scheduler[k] for k in ("by_epoch", "convert_to_iter_based", "warmup")} == \
        {"by_epoch": True, "convert_to_iter_based": True, "warmup": {"steps": 10}}
    from optreg.train import make_model

    built = optreg.build(experiment, make_model(8, 2, 0))   # the quickstart's model (its groups name its norm layers)
    lrs = []
    for _ in range(50):
        lrs.append(built.optimizer.param_groups[0]["lr"])
        built.optimizer.step()
        built.scheduler.step()
    base = lrs[10]   # after the warmup: CosineAnnealingLR with T_max 4 epochs × 10 steps, counted from step 10
    want = [base * (1 + math.cos(math.pi * (t - 10) / 40)) / 2 for t in range(10, 50)]
    assert max(abs(a - b) / b for a, b in zip(lrs[10:], want)) <= 1e-12
    assert lrs[0] == pytest.approx(0.001 * base, rel=1e-12)   # the linear warmup starts at start_factor 0.001
    plain = _load(None, ["scheduler=reduce_lr_on_plateau"])   # no warmup key: it takes none
    assert "warmup" not in plain.scheduler and plain.scheduler["by_epoch"] is False


def test_show_names_the_loop_keys():
    from optreg.core.describe import describe

    notes = describe("CosineAnnealingLR").notes
    assert notes[-3:] == (
        "by_epoch: true counts epochs of train.steps_per_epoch steps (value(t) = f(floor(t / E))); "
        "convert_to_iter_based: true multiplies T_max by E (MMEngine)",
        "warmup: {steps | ratio, start_factor | start_value, type: linear | constant | exponential} in the "
        "top-level spec",
        "T_max left out or null: the run length − the warmup (train.steps, train.epochs × steps_per_epoch, "
        "build(total_steps=))")
    assert describe("linear", "hf").notes[-2] == ("warmup: refused; hf.linear has a warmup of its own "
                                                  "(num_warmup_steps); set it there and drop warmup:")
    # a length its row leaves undeclared (MindFormers' total_steps, named by the closed form) is the run's too; no
    # `warmup:` precedes it (refused), and a warmup of its own longer than it passes
    notes = describe("CosineWithWarmUpLR", "mindspore").notes
    assert notes[-1] == ("total_steps left out or null: the run length (train.steps, train.epochs × steps_per_epoch, "
                         "build(total_steps=))")
    assert "A warmup longer than total_steps passes, as in MindFormers (what follows the warmup then never starts)." \
        in notes


def test_optreg_run_steps_a_metric_driven_schedule_with_the_training_loss():
    """The linter's 'ReduceLROnPlateau in optreg run without a metric' cannot happen: the run's loop gives it each
    step's training loss (and a nested one is refused up front: tests/test_bad_inputs.py)."""
    from optreg.train import make_model, train

    model = make_model(8, 2, 0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
    seen = []
    step = scheduler.step
    scheduler.step = lambda metric: (seen.append(metric), step(metric))
    result = train(model, optimizer, scheduler, 4, 16, 0)
    assert seen == result.losses and len(seen) == 4


def test_a_warning_the_step_gives_prints_once_per_run_as_in_a_python_loop(tmp_path, capsys):
    """OneFlow's clip_grad() warns of a group without its own max norm at every call; Python's default filter shows
    it once, and so does `optreg run` (its loop once changed the filters at each step, which showed it again)."""
    from optreg.cli import main

    config = tmp_path / "c.yaml"
    config.write_text("optimizer:\n  name: oneflow.AdamW\n  param_groups:\n    - params: ['*.bias']\n"
                      "      clip_grad_max_norm: 0.5\n      clip_grad_norm_type: 2.0\n"
                      "scheduler: {name: StepLR, step_size: 2}\ntrain: {steps: 5}\n")
    assert main(["run", str(config)]) == 0
    assert capsys.readouterr().err.count("param group 1 has no clip_grad_max_norm") == 1


def test_optreg_run_reports_the_lrs_each_step_used_as_plot_gives_them(tmp_path, capsys):
    """The run's lrs are those its steps used, as plot's rows: its summary gives the last step's (after it, torch's
    OneCycleLR goes on past its curve: the scheduler's step sets an lr no step uses), per group."""
    from optreg.cli import main
    from optreg.train import make_model, train

    config = tmp_path / "c.yaml"
    config.write_text("optimizer: {name: SGD, lr: 0.1, momentum: 0.9, param_groups: [{params: ['*.bias'], lr: 0.05}]}\n"
                      "scheduler: {name: OneCycleLR, max_lr: [0.01, 0.02], total_steps: 30}\ntrain: {steps: 30}\n")
    assert main(["plot", str(config), "--csv"]) == 0
    rows = [line.split(",") for line in capsys.readouterr().out.strip().splitlines()[1:]]
    plotted = {g: [float(v) for s, gg, k, v in rows if gg == g and k == "lr"] for g in ("0", "1")}
    model = make_model(8, 2, 0)
    built = optreg.build(str(config), model)
    seen = []
    result = train(model, built.optimizer, built.scheduler, 30, 16, 0, on_step=lambda step, loss, lrs: seen.append(lrs))
    assert result.lrs == plotted["0"] and [lrs[1] for lrs in seen] == plotted["1"]
    assert built.optimizer.param_groups[0]["lr"] != plotted["0"][-1]   # the scheduler has gone on past it
    assert main(["run", str(config)]) == 0
    summary = capsys.readouterr().out
    assert f"g0 {plotted['0'][-1]:.4g}" in summary and f"g1 {plotted['1'][-1]:.4g}" in summary, summary


@pytest.mark.parametrize("name", ["LBFGS", "oneflow.LBFGS"])
def test_accumulation_with_an_optimizer_that_needs_a_closure_is_refused_where_the_file_says_it(name, tmp_path):
    """Gradient accumulation steps the optimizer without a closure after the micro-batches (optreg.train); LBFGS
    evaluates the loss again within a step, so the file that asks for both is a ConfigError at the key, not a
    TypeError from the loop; reading it (no model: optreg validate) and build (a model) refuse it alike."""
    path = tmp_path / "lbfgs.yaml"
    path.write_text(f"optimizer:\n  name: {name}\n  lr: 0.5\ntrain:\n  steps: 4\n  accumulation_steps: 2\n")
    for attempt in (lambda: optreg.load_config(str(path)), lambda: optreg.build(str(path), nn.Linear(2, 2))):
        with pytest.raises(ConfigError) as info:
            attempt()
        item = info.value.errors[0]
        assert item.path == "train.accumulation_steps" and "needs one" in item.message, str(info.value)
        assert str(info.value).startswith(f"{path}:6:3:")
    path.write_text(f"optimizer:\n  name: {name}\n  lr: 0.5\ntrain:\n  steps: 4\n  accumulation_steps: 1\n")
    optreg.build(str(path), nn.Linear(2, 2))
    path.write_text("optimizer:\n  name: SGD\n  lr: 0.5\ntrain:\n  steps: 4\n  accumulation_steps: 2\n")
    optreg.build(str(path), nn.Linear(2, 2))


def test_an_invalid_run_is_the_one_problem_said_about_a_length_it_would_give(tmp_path, capsys):
    """A `train:` with errors gives no run length: the schedule's length that the run would have given is not
    also reported missing; an unknown key of a section says so, with its keys or the near one."""
    from optreg.cli import main

    path = tmp_path / "bad_run.yaml"
    lines = ["optimizer: {name: SGD, lr: 0.1}", "scheduler: {name: CosineAnnealingLR, warmup: {step: 2}}",
             "train: {steps: -5, stesp: 3}", "clip_grad: {max_norm: 1, norm_type: 1.0e10}"]
    path.write_text("\n".join(lines) + "\n")

    def at(line: int, key: str) -> str:
        return f"{path}:{line}:{lines[line - 1].index(key + ':') + 1}"

    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{at(3, 'steps')}: train.steps: must be >= 1, got -5",
        f"{at(3, 'stesp')}: train.stesp: unknown key (did you mean 'steps'?)",
        f"{at(4, 'norm_type')}: clip_grad.norm_type: must be within ±1e+09 or ±'inf', got 10000000000.0",
        f"{at(2, 'step')}: scheduler.warmup.step: unknown key (did you mean 'steps'?)"]
    lines[1] = "scheduler: {name: CosineAnnealingLR, warmup: 5}"
    path.write_text("\n".join(lines[:2]) + "\ntrain: {steps: 10}\n")
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{at(2, 'warmup')}: scheduler.warmup: expected a mapping, got int 5"]


def _verdicts(path, capsys, *extra):
    """What `optreg validate`, `optreg plot --csv` and `optreg.build(path, model)` say of a file: (exit status,
    stderr) of each command and build's ConfigError text (or "built")."""
    from optreg.cli import main

    out = []
    for command in (["validate", str(path)], ["plot", str(path), "--csv"]):
        status = main([*command, *extra])
        out.append((status, capsys.readouterr().err))
    try:
        optreg.build(str(path), Two())
        out.append("built")
    except ConfigError as exc:
        out.append(str(exc))
    return out


EPOCHS_NEED = ("a schedule counted in epochs needs the steps per epoch: train.steps_per_epoch (in the file, or the "
               "override train.steps_per_epoch=N of optreg run / plot / groups) or build(..., steps_per_epoch=)")
NO_STEPS_PER_EPOCH = ("train.epochs: 3 epochs need the steps per epoch to give a run length: train.steps_per_epoch or "
                      "--steps N (build(..., steps_per_epoch=))")


@pytest.mark.parametrize("text, errors", [
    ("optimizer: {name: SGD, lr: 0.1}\nscheduler:\n  - {name: StepLR, step_size: 1, by_epoch: true}\n"
     "  - {name: CosineAnnealingLR}\ntrain: {epochs: 3}\n",
     [f"3:34: scheduler.schedulers[0].by_epoch: {EPOCHS_NEED}",
      "4:5: scheduler.schedulers[1].T_max: required option is missing", f"5:9: {NO_STEPS_PER_EPOCH}"]),
    ("optimizer: {name: SGD, lr: 0.1}\nscheduler:\n  - {name: CosineAnnealingLR, T_max: 2, by_epoch: true}\n"
     "  - {name: CosineAnnealingLR}\ntrain: {steps: 30}\n",
     [f"3:41: scheduler.schedulers[0].by_epoch: {EPOCHS_NEED}",
      "4:5: scheduler.schedulers[1].T_max: required option is missing"]),
    ("optimizer: {name: SGD, lr: 0.1, momentun: 0.9}\nscheduler: {name: CosineAnnealingLR}\ntrain: {epochs: 3}\n",
     ["1:33: optimizer.momentun: unknown option of torch.SGD (did you mean 'momentum'?)",
      f"3:9: {NO_STEPS_PER_EPOCH}"]),
    ("optimizer: {name: SGD, lr: 0.1}\nscheduler: {name: CosineAnnealingLR, warmup: {ratio: 0.1}}\n"
     "train: {epochs: 3}\n",
     ["2:47: scheduler.warmup.ratio: a warmup ratio needs the run length: train.steps, train.epochs × "
      "steps_per_epoch, or build(total_steps=)", f"3:9: {NO_STEPS_PER_EPOCH}"]),
], ids=["epochs, a stage in epochs, a stage's length", "a stage in epochs, a stage's length", "an option, epochs",
        "a warmup ratio, epochs"])
def test_every_problem_of_a_runs_length_is_reported_at_once(text, errors, tmp_path, capsys):
    """A run in epochs without its steps per epoch, a schedule (or stage) counted in epochs without them and a stage
    whose length is missing are each reported at their path and position in one run of validate, plot and build
    (validate and plot said the stage's missing length alone, build the epochs' alone; a top-level length the run
    would give is not also missing)."""
    path = tmp_path / "lengths.yaml"
    path.write_text(text)
    said = "".join(f"{path}:{e}\n" for e in errors)
    assert _verdicts(path, capsys) == [(1, said), (1, said), said.rstrip("\n")]


def test_accumulation_over_more_steps_than_the_run_is_an_error(tmp_path, capsys):
    """An optimizer that would never step (accumulation_steps 40 in a 20-step run) is refused at the key, with the
    run length and where it came from, by validate, plot and build alike."""
    path = tmp_path / "acc.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1}\ntrain: {steps: 20, accumulation_steps: 40}\n")
    error = (f"{path}:2:20: train.accumulation_steps: 40 micro-batches per optimizer step are more than the 20 "
             f"steps of the run (train.steps 20): the optimizer would never step; make accumulation_steps at most 20")
    assert _verdicts(path, capsys) == [(1, error + "\n"), (1, error + "\n"), error]
    with pytest.raises(ConfigError) as info:
        optreg.build(config(train={"epochs": 2, "steps_per_epoch": 3, "accumulation_steps": 7}), Two())
    assert messages(info) == [("train.accumulation_steps", "7 micro-batches per optimizer step are more than the 6 "
                                                           "steps of the run (train.epochs × steps_per_epoch = 2 × "
                                                           "3 = 6): the optimizer would never step; make "
                                                           "accumulation_steps at most 6")]
    with pytest.raises(ConfigError) as info:
        optreg.build(config(train={"accumulation_steps": 7}), Two(), total_steps=5)
    assert messages(info) == [("train.accumulation_steps", "7 micro-batches per optimizer step are more than the 5 "
                                                           "steps of the run (total_steps=5): the optimizer would "
                                                           "never step; make accumulation_steps at most 5")]
    assert optreg.build(config(train={"steps": 7, "accumulation_steps": 7}), Two()).run.accumulation == 7
    with pytest.raises(ConfigError) as info:   # the noun agrees with one step (it said "the 1 steps")
        optreg.build(config(train={"accumulation_steps": 2}), Two(), total_steps=1)
    assert messages(info) == [("train.accumulation_steps", "2 micro-batches per optimizer step are more than the 1 "
                                                           "step of the run (total_steps=1): the optimizer would "
                                                           "never step; make accumulation_steps at most 1")]


def test_a_run_that_is_not_a_multiple_of_accumulation_steps_warns_of_the_micro_batches_left(tmp_path, capsys):
    """10 micro-batches with accumulation_steps 4: two optimizer steps, and the last 2 micro-batches' gradients
    are never applied (as optreg.train runs it): a note at train.accumulation_steps in validate and build."""
    from optreg.cli import main

    note = ("train.accumulation_steps: the 10 steps of the run (train.steps or --steps) are not a multiple of "
            "accumulation_steps 4: the last 2 micro-batches make no optimizer step (their gradients are never "
            "applied); make the run a multiple of 4")
    path = tmp_path / "acc.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1}\ntrain: {steps: 10, accumulation_steps: 4}\n")
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().err == f"{path}:2:20: warning: {note}\n"
    with pytest.warns(optreg.ConfigWarning) as caught:
        optreg.build(str(path), Two())
    assert [str(w.message) for w in caught] == [f"{path}:2:20: {note}"]
    assert main(["validate", str(path), "train.steps=12"]) == 0 and capsys.readouterr().err == ""


def test_accumulation_counts_optimizer_steps_in_runs_final_line(tmp_path, capsys):
    """`optreg run --steps` and `plot --steps` count micro-batches (as their help says): under accumulation_steps
    4, 8 steps are 2 optimizer steps, and the CSV has a row for each of the 8."""
    from optreg.cli import main

    path = tmp_path / "acc.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1}\ntrain: {steps: 20, accumulation_steps: 4, hidden: 4, depth: 1}\n")
    assert main(["run", str(path), "--steps", "8"]) == 0
    assert "(after 8 steps, 2 optimizer steps)" in capsys.readouterr().out
    assert main(["plot", str(path), "--steps", "8", "--csv"]) == 0
    assert [line.split(",")[0] for line in capsys.readouterr().out.splitlines()[1:]] == [str(i) for i in range(8)]


def test_a_per_step_lr_list_under_accumulation_is_read_at_the_optimizers_step(tmp_path, capsys):
    """MindSpore's per-step `learning_rate` list is indexed by the optimizer's own step count: under
    accumulation_steps 2, 8 micro-batches are 4 optimizer steps, which apply the list's 4 values, two rows each in
    plot --csv; the lr run's last line names is the one the last step applied (not the group's stale value), and
    validate, plot and build accept the 4 values, refusing 4 for 10 micro-batches (5 optimizer steps)."""
    from optreg.cli import main

    path = tmp_path / "acc.yaml"
    text = ("optimizer: {{name: mindspore.Momentum, momentum: 0.9, learning_rate: [0.1, 0.05, 0.02, 0.01]}}\n"
            "train: {{steps: {}, accumulation_steps: 2, hidden: 4, depth: 1}}\n")
    path.write_text(text.format(8))
    assert main(["plot", str(path), "--csv"]) == 0
    rows = [line.split(",") for line in capsys.readouterr().out.splitlines()[1:]]
    assert [float(row[3]) for row in rows] == [0.1, 0.1, 0.05, 0.05, 0.02, 0.02, 0.01, 0.01]
    assert main(["run", str(path)]) == 0
    assert capsys.readouterr().out.rstrip().endswith("(after 8 steps, 4 optimizer steps)  lr 0.01")
    built = optreg.build(str(path), model := Two())
    for param in model.parameters():
        param.grad = torch.zeros_like(param)
    applied = []
    for _ in range(4):   # the optimizer steps after every second micro-batch
        built.optimizer.step()
        applied.append(built.optimizer.param_groups[0]["lr"])
    assert applied == [0.1, 0.05, 0.02, 0.01]
    path.write_text(text.format(10))
    error = (f"{path}:1:54: optimizer.learning_rate: a per-step list of 4 values is shorter than the run (10 steps: "
             f"train.steps or --steps; 5 optimizer steps of 2 micro-batches); give one value per optimizer step")
    assert main(["validate", str(path)]) == 1 and capsys.readouterr().err.strip() == error
    with pytest.raises(ConfigError) as info:
        optreg.build(str(path), Two())
    assert str(info.value) == error


def test_a_run_that_is_not_a_multiple_of_accumulation_steps_needs_a_list_of_its_full_windows(tmp_path, capsys):
    """5 micro-batches at accumulation_steps 2 make 2 optimizer steps (the 5th micro-batch makes none): validate,
    build, plot and run agree on 5 // 2 = 2, so a per-step list of 2 values is the run's (validate asked for 3), the
    trailing micro-batch shows the last optimizer step's lr, and a list of 1 is refused naming 2 optimizer steps."""
    from optreg.cli import main

    path = tmp_path / "acc.yaml"
    text = ("optimizer: {{name: mindspore.Momentum, momentum: 0.9, learning_rate: {}}}\n"
            "train: {{steps: 5, accumulation_steps: 2, hidden: 4, depth: 1}}\n")
    path.write_text(text.format([0.1, 0.05]))
    note = (f"{path}:2:19: warning: train.accumulation_steps: the 5 steps of the run (train.steps or --steps) are not "
            f"a multiple of accumulation_steps 2: the last micro-batch makes no optimizer step (its gradients are "
            f"never applied); make the run a multiple of 2\n")
    assert main(["validate", str(path)]) == 0 and capsys.readouterr().err == note
    assert main(["plot", str(path), "--csv"]) == 0
    rows = [line.split(",") for line in capsys.readouterr().out.splitlines()[1:]]
    assert [float(row[3]) for row in rows] == [0.1, 0.1, 0.05, 0.05, 0.05]
    assert main(["run", str(path)]) == 0
    assert capsys.readouterr().out.rstrip().endswith("(after 5 steps, 2 optimizer steps)  lr 0.05")
    with pytest.warns(optreg.ConfigWarning):
        built = optreg.build(str(path), model := Two())
    assert built.run.optimizer_steps == 2
    for param in model.parameters():
        param.grad = torch.zeros_like(param)
    applied = []
    for _ in range(2):   # the optimizer steps after the 2nd and the 4th micro-batch
        built.optimizer.step()
        applied.append(built.optimizer.param_groups[0]["lr"])
    assert applied == [0.1, 0.05]
    path.write_text(text.format([0.1]))
    error = (f"{path}:1:54: optimizer.learning_rate: a per-step list of 1 value is shorter than the run (5 steps: "
             f"train.steps or --steps; 2 optimizer steps of 2 micro-batches); give one value per optimizer step")
    assert main(["validate", str(path)]) == 1 and capsys.readouterr().err == error + "\n"


@pytest.mark.parametrize("text, error", [
    ("optimizer: {name: SGD, lr: 0.1}\nscheduler:\n  name: CosineAnnealingLR\n  by_epoch: true\ntrain: {steps: 20}\n",
     "4:3: scheduler.by_epoch: a schedule counted in epochs needs the steps per epoch: train.steps_per_epoch (in the "
     "file, or the override train.steps_per_epoch=N of optreg run / plot / groups) or build(..., steps_per_epoch=)"),
    ("optimizer: {name: SGD, lr: 0.1}\nscheduler:\n  name: StepLR\n  step_size: 2\n  by_epoch: true\n",
     "5:3: scheduler.by_epoch: a schedule counted in epochs needs the steps per epoch: train.steps_per_epoch (in the "
     "file, or the override train.steps_per_epoch=N of optreg run / plot / groups) or build(..., steps_per_epoch=)"),
    ("optimizer: {name: SGD, lr: 0.1}\nscheduler: {name: StepLR, step_size: 5}\ntrain: {epochs: 3}\n",
     "3:9: train.epochs: 3 epochs need the steps per epoch to give a run length: train.steps_per_epoch or --steps N "
     "(build(..., steps_per_epoch=))"),
    ("optim_wrapper:\n  optimizer: {type: AdamW, lr: 0.001}\nparam_scheduler:\n"
     "  - {type: CosineAnnealingLR, by_epoch: true, T_max: 10}\ntrain_cfg: {by_epoch: true, max_epochs: 10}\n",
     "4:31: param_scheduler[0].by_epoch: an epoch-based entry (MMEngine's default) needs the steps per epoch, "
     "MMEngine's len(train_dataloader): train.steps_per_epoch (in the file, or the override "
     "train.steps_per_epoch=N of optreg run / plot / groups) or build(..., steps_per_epoch=)"),
    ("model:\n  optim:\n    name: adamw\n    lr: 1.0e-3\n    sched: {name: CosineAnnealing, warmup_steps: 10}\n"
     "trainer: {max_epochs: 3, devices: 1}\n",
     "6:11: trainer.max_epochs: 3 epochs need the steps per epoch to give a run length: train.steps_per_epoch or "
     "--steps N (build(..., steps_per_epoch=))"),
], ids=["by_epoch", "by_epoch_no_train", "epochs_alone", "mmengine_epochs", "nemo_max_epochs"])
def test_validate_gives_builds_verdict_on_a_run_in_epochs_without_its_steps_per_epoch(text, error, tmp_path,
                                                                                     capsys):
    """validate (no model) refuses what plot and build refuse, with the same message at the same position: a
    schedule or a run counted in epochs needs the steps per epoch, which nothing after validate can give."""
    path = tmp_path / "epochs.yaml"
    path.write_text(text)
    assert _verdicts(path, capsys) == [(1, f"{path}:{error}\n"), (1, f"{path}:{error}\n"), f"{path}:{error}"]
    built = optreg.build(str(path), Two(), steps_per_epoch=4)   # given: each builds
    assert built.run.steps_per_epoch == 4

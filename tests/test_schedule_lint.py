"""The schedule linter: each case with its exact message, the same from validate (read), build and plot."""

from __future__ import annotations

import math
import warnings

import pytest
import torch

import optreg
from optreg.errors import ConfigError


def experiment(scheduler, steps=1000, lr=0.1, **train):
    out = {"optimizer": {"name": "SGD", "lr": lr}, "scheduler": scheduler}
    if steps is not None or train:
        out["train"] = {**({"steps": steps} if steps is not None else {}), **train}
    return out


def build_notes(config, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = optreg.build(config, torch.nn.Linear(2, 2), **kwargs)
    assert [str(w.message) for w in caught if "scheduler" in str(w.message)] == built.notes
    return built.notes


WARNINGS = [
    ("horizon early", experiment({"name": "CosineAnnealingLR", "T_max": 100}),
     "scheduler.T_max: T_max 100 spans 100 steps, under 0.9 × the 1000 steps of the run (train.steps or --steps): "
     "the schedule ends early; set scheduler.T_max to 1000"),
    ("horizon past the run", experiment({"name": "CosineAnnealingLR", "T_max": 2000}),
     "scheduler.T_max: T_max 2000 spans 2000 steps, more than the 1000 steps of the run (train.steps or --steps): "
     "the schedule never finishes; set scheduler.T_max to 1000"),
    ("horizon after a warmup", experiment({"name": "CosineAnnealingLR", "T_max": 50, "warmup": {"steps": 100}}),
     "scheduler.T_max: T_max 50 spans 50 steps, under 0.9 × the 900 steps of the run after the 100-step warmup "
     "(train.steps or --steps): the schedule ends early; set scheduler.T_max to 900"),
    ("horizon in epochs", experiment({"name": "CosineAnnealingLR", "T_max": 20, "by_epoch": True},
                                     epochs=10, steps_per_epoch=100, steps=None),
     "scheduler.T_max: T_max 20 spans 2000 steps, more than the 1000 steps of the run (train.epochs): the "
     "schedule never finishes; set scheduler.T_max to 10 epochs"),
    ("horizon of one epoch", experiment({"name": "CosineAnnealingLR", "T_max": 20, "by_epoch": True},
                                        epochs=1, steps_per_epoch=100, steps=None),
     "scheduler.T_max: T_max 20 spans 2000 steps, more than the 100 steps of the run (train.epochs): the "
     "schedule never finishes; set scheduler.T_max to 1 epoch"),
    ("stages of one epoch", experiment({"name": "chained", "by_epoch": True, "schedulers": [
        {"name": "LinearLR", "start_factor": 0.5, "total_iters": 1}, {"name": "CosineAnnealingLR", "T_max": 20}]},
        epochs=1, steps_per_epoch=100, steps=None),
     "scheduler.schedulers: the stages span 2000 steps, more than the 100 steps of the run (train.epochs): the "
     "schedule never finishes; make the longest of scheduler.schedulers span 1 epoch"),
    ("hf horizon", experiment({"name": "cosine", "dialect": "hf", "num_warmup_steps": 0, "num_training_steps": 900}),
     "scheduler.num_training_steps: num_training_steps 900 spans 900 steps, not the 1000 steps of the run "
     "(train.steps or --steps); set scheduler.num_training_steps to 1000"),
    ("sequential horizon", experiment({"name": "sequential", "schedulers": [
        {"name": "LinearLR", "start_factor": 0.5, "total_iters": 10}, {"name": "CosineAnnealingLR", "T_max": 90}]}),
     "scheduler.schedulers: the stages span 100 steps, under 0.9 × the 1000 steps of the run (train.steps or "
     "--steps): the schedule ends early; make the lengths of scheduler.schedulers add up to 1000"),
    ("chained horizon", experiment({"name": "chained", "schedulers": [
        {"name": "LinearLR", "start_factor": 0.5, "total_iters": 10}, {"name": "CosineAnnealingLR", "T_max": 2000}]}),
     "scheduler.schedulers: the stages span 2000 steps, more than the 1000 steps of the run (train.steps or "
     "--steps): the schedule never finishes; make the longest of scheduler.schedulers span 1000"),
    ("lr 0 first", experiment({"name": "CosineAnnealingLR", "warmup": {"steps": 10, "start_factor": 0}}),
     "scheduler: the lr at step 0 is 0 (group 0's lr 0.1): the first optimizer step updates nothing; start above 0 "
     "(scheduler.warmup.start_factor or .start_value)"),
    ("min at peak", experiment({"name": "CosineAnnealingLR", "eta_min": 0.1}),
     "scheduler.eta_min: eta_min 0.1 is at or above the peak lr 0.1 of group 0: the schedule never decays; lower "
     "scheduler.eta_min below the optimizer's lr"),
    # above the group's lr, the cosine rises to it: the group's lr named, not the floor as the "peak"
    ("min above lr", experiment({"name": "CosineAnnealingLR", "T_max": 1000, "eta_min": 0.3}),
     "scheduler.eta_min: eta_min 0.3 is at or above the lr 0.1, which it rises to, of group 0: the schedule never "
     "decays; lower scheduler.eta_min below the optimizer's lr"),
    # a stage's floor in a sequence, at the stage (it was not checked); a warmup stage's end value is no floor
    ("stage min above lr", experiment({"name": "sequential", "schedulers": [
        {"name": "LinearLR", "start_factor": 0.01, "total_iters": 20},
        {"name": "CosineAnnealingLR", "T_max": 980, "eta_min": 0.3}]}),
     "scheduler.schedulers[1].eta_min: eta_min 0.3 is at or above the lr 0.1, which it rises to, of group 0: the "
     "schedule never decays; lower scheduler.schedulers[1].eta_min below the optimizer's lr"),
    ("lr set twice", experiment({"name": "CosineDecayLR", "dialect": "cerebras", "initial_learning_rate": 0.01,
                                 "end_learning_rate": 0.001, "total_iters": 1000}),
     "scheduler: CosineDecayLR sets the lr itself (0.01 at step 0), which overrides optimizer.lr 0.1; drop "
     "optimizer.lr or make the schedule start or peak at it"),
]


@pytest.mark.parametrize("name, config, message", WARNINGS, ids=[w[0] for w in WARNINGS])
def test_linter_warnings(name, config, message):
    assert build_notes(config) == [message]
    assert optreg.load_config(config if isinstance(config, str) else _yaml(config)).notes == [message]


def test_a_length_advised_in_epochs_agrees_with_its_number_and_is_not_read_as_steps():
    """`set_length` says `1 epoch` (it said `1 epochs`), and SET_LENGTH, which a translated format's notes rewrite
    in the source's unit of steps, finds neither that nor `12 epochs`."""
    from optreg.core.lint import EPOCH, SET_LENGTH, set_length

    assert [set_length("scheduler.T_max", n, EPOCH) for n in (1, 12)] == [
        "set scheduler.T_max to 1 epoch", "set scheduler.T_max to 12 epochs"]
    assert [SET_LENGTH.search(set_length("k", n, unit)) is not None for n in (1, 12) for unit in (EPOCH, "")] == [
        False, True, False, True]


def test_a_framework_s_warmup_from_0_by_design_is_not_linted():
    """HF's warmups start at t/W = 0 whatever their options (transformers' form): no option could start them above
    0, so the linter says nothing; HF's cosine_warmup_with_min_lr starts above 0 unless warmup_lr_rate is set to 0,
    which its user chose, and is linted then."""
    assert build_notes(experiment({"name": "linear", "dialect": "hf", "num_warmup_steps": 10,
                                   "num_training_steps": 1000})) == []
    chosen = build_notes(experiment({"name": "cosine_warmup_with_min_lr", "dialect": "hf", "num_warmup_steps": 10,
                                     "num_training_steps": 1000, "min_lr_rate": 0.1, "warmup_lr_rate": 0.0}))
    assert chosen == ["scheduler: the lr at step 0 is 0 (group 0's lr 0.1): the first optimizer step updates nothing; "
                      "start above 0 (scheduler.num_warmup_steps)"]


def _yaml(config):
    import yaml

    return yaml.safe_dump(config, sort_keys=False)


def test_no_warning_without_a_run_length_or_when_it_fits():
    assert build_notes(experiment({"name": "CosineAnnealingLR", "T_max": 100}, steps=None)) == []
    assert build_notes(experiment({"name": "CosineAnnealingLR", "T_max": 950})) == []
    assert build_notes(experiment({"name": "CosineAnnealingLR", "T_max": 100}, steps=None), total_steps=100) == []


@pytest.mark.parametrize("scheduler", [
    # torch's ChainedScheduler: its stages side by side, 1000 steps (not their sum, 1010)
    {"name": "chained", "schedulers": [{"name": "LinearLR", "start_factor": 0.5, "total_iters": 10},
                                       {"name": "CosineAnnealingLR", "T_max": 1000}]},
    # torch's SequentialLR to its milestone, then its last stage: 1000 steps (not the stages' sum, 1005)
    {"name": "sequential", "milestones": [5], "schedulers": [{"name": "LinearLR", "start_factor": 0.5,
                                                              "total_iters": 10},
                                                             {"name": "CosineAnnealingLR", "T_max": 995}]},
    # optreg's chained with a stage that never ends: the momentum keeps changing over the whole run
    {"name": "chained", "key": "momentum", "schedulers": [{"name": "LinearLR", "start_factor": 0.5, "total_iters": 10},
                                                          {"name": "ExponentialLR", "gamma": 0.999}]},
    # a dialect's chained class, the same
    {"name": "oneflow.ChainedScheduler", "schedulers": [
        {"name": "oneflow.LinearLR", "start_factor": 0.5, "total_iters": 10},
        {"name": "oneflow.ExponentialLR", "gamma": 0.999}]},
], ids=["chained", "milestones", "endless stage", "dialect's chained"])
def test_a_combinator_spans_what_its_closed_form_spans(scheduler):
    """The horizon of torch's combinators is their closed form's (the stages summed was a false warning); a chained
    with a stage without end never ends early."""
    config = experiment(scheduler)
    config["optimizer"]["momentum"] = 0.9
    assert build_notes(config) == []
    assert optreg.load_config(_yaml(config)).notes == []


CEREBRAS_EXP = {"name": "ExponentialLR", "initial_learning_rate": 0.1, "total_iters": 10, "decay_rate": 0.5}
CEREBRAS_LINEAR = {"name": "LinearLR", "initial_learning_rate": 0.1, "end_learning_rate": 0.05, "total_iters": 10}


@pytest.mark.parametrize("scheduler", [
    {"name": "cerebras.ChainedLR", "schedulers": [CEREBRAS_LINEAR, CEREBRAS_EXP]},
    {"name": "cerebras.SequentialLR", "schedulers": [CEREBRAS_LINEAR, {**CEREBRAS_EXP, "initial_learning_rate": 0.05}]},
    {"name": "sequential", "dialect": "cerebras", "schedulers": [CEREBRAS_LINEAR,
                                                                 {**CEREBRAS_EXP, "initial_learning_rate": 0.05}]},
    {**CEREBRAS_EXP, "dialect": "cerebras"},
    {"name": "cerebras.InverseExponentialTimeDecayLR", "initial_learning_rate": 0.1, "step_exponent": 1,
     "total_iters": 10, "decay_rate": 0.5},
], ids=["chained", "SequentialLR", "sequential", "alone", "inverse time"])
def test_cerebras_decay_periods_are_no_end(scheduler):
    """Cerebras' ExponentialLR (init·decay_rate^(t/T)) and InverseExponentialTimeDecayLR go on falling past
    total_iters, a decay period (cerebras_pytorch 2.10's docs: 'decays ... by decay_rate every step'): a schedule
    holding one never ends early (it was counted as total_iters long: 'the stages span 10/20 steps, under 0.9 × the
    1000 steps of the run')."""
    config = experiment(scheduler)
    assert build_notes(config) == []
    assert optreg.load_config(_yaml(config)).notes == []


def test_a_cerebras_decay_period_is_still_a_sequentialLR_stage_of_total_iters_steps(tmp_path, capsys):
    """As a stage before another, ExponentialLR spans total_iters steps (SequentialLR's milestones sum them); the
    last stage's lr goes on falling past its total_iters, as plot --csv gives it, with no note."""
    from optreg.cli import main

    exp = {**CEREBRAS_EXP, "initial_learning_rate": 0.05}
    config = experiment({"name": "cerebras.SequentialLR", "schedulers": [CEREBRAS_EXP, exp]}, steps=40)
    built = optreg.build(config, torch.nn.Linear(2, 2))
    assert built.notes == []
    lrs = []
    for _ in range(40):
        lrs.append(built.optimizer.param_groups[0]["lr"])
        built.optimizer.step()
        built.scheduler.step()
    assert lrs == pytest.approx([0.1 * 0.5 ** (t / 10) for t in range(10)] +
                                [0.05 * 0.5 ** ((t - 10) / 10) for t in range(10, 40)], rel=1e-12)
    path = tmp_path / "exp.yaml"
    path.write_text(_yaml(config))
    assert main(["plot", str(path), "--csv"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert [float(line.split(",")[3]) for line in out.splitlines()[1:]] == pytest.approx(lrs, rel=1e-12)


@pytest.mark.parametrize("end", [1e-5, 1e-3], ids=["falling", "rising"])
def test_an_absolute_schedule_that_starts_at_the_optimizers_lr_in_float32_is_not_linted(end):
    """Cerebras' LinearLR from 3e-4 computes in float32 (3.0000001e-4 at step 0 towards 1e-5, 3.0000007e-4, two
    ulps, towards 1e-3): it starts at optimizer.lr 3e-4, which the warning asked for ('sets the lr itself (0.0003 at
    step 0), which overrides optimizer.lr 0.0003'); an lr 3.1e-4 beside it is still another."""
    config = experiment({"name": "cerebras.LinearLR", "initial_learning_rate": 3e-4, "end_learning_rate": end,
                         "total_iters": 1000}, lr=3e-4)
    assert build_notes(config) == []
    assert optreg.load_config(_yaml(config)).notes == []
    other = experiment(dict(config["scheduler"]), lr=3.1e-4)
    assert [note.split(", which")[1] for note in optreg.load_config(_yaml(other)).notes] == [
        " overrides optimizer.lr 0.00031; drop optimizer.lr or make the schedule start or peak at it"]


def test_hf_warmup_longer_than_the_schedule_is_an_error():
    with pytest.raises(ConfigError) as info:
        optreg.load_config("optimizer: {name: SGD, lr: 0.1}\nscheduler: {name: linear, dialect: hf, "
                           "num_warmup_steps: 10, num_training_steps: 5}\n")
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("scheduler.num_warmup_steps", "a warmup of 10 steps is longer than the schedule (scheduler."
                                       "num_training_steps 5): lower scheduler.num_warmup_steps or raise "
                                       "scheduler.num_training_steps")]
    assert str(info.value).startswith("<string>:2:")


@pytest.mark.parametrize("kind, floor", [("WarmupDecayLR", 0.0), ("WarmupCosineLR", 1e-4 * 1e-3)])
def test_deepspeed_warmup_longer_than_the_schedule_is_a_warning(kind, floor):
    """DeepSpeed lets warmup_num_steps exceed total_num_steps (its decay divides by max(1, T - W)) and warns; so
    does optreg, with the file's keys, and the lr falls to its floor when the warmup ends, as the warning says."""
    config = {"optimizer": {"type": "AdamW", "params": {"lr": 1e-3}},
              "scheduler": {"type": kind, "params": {"total_num_steps": 50, "warmup_num_steps": 100}}}
    built = optreg.build(config, torch.nn.Linear(2, 2))
    assert built.notes == ["scheduler.params.warmup_num_steps: a warmup of 100 steps is longer than the schedule "
                           "(total_num_steps 50): the lr rises for 100 steps, then falls to its floor at once; lower "
                           "warmup_num_steps or raise total_num_steps"]
    lrs = []
    for _ in range(102):
        built.optimizer.step()
        lrs.append(built.optimizer.param_groups[0]["lr"])
        built.scheduler.step()
    assert lrs[100] == pytest.approx(1e-3) and all(a < b for a, b in zip(lrs[1:100], lrs[2:101]))
    assert lrs[101] == pytest.approx(floor, abs=1e-12)
    config["scheduler"]["params"]["warmup_num_steps"] = 50
    assert optreg.build(config, torch.nn.Linear(2, 2)).notes == []


MIXED = {"optimizer": {"name": "AdamW", "lr": 1e-3},
         "scheduler": [{"name": "LinearLR", "total_iters": 3},
                       {"name": "cerebras.CosineDecayLR", "initial_learning_rate": 0.1, "end_learning_rate": 0.0,
                        "total_iters": 5}],
         "train": {"steps": 8}}


def test_an_absolute_stage_of_a_sequential_that_overrides_the_lr_is_a_warning_at_its_path(tmp_path, capsys):
    """A `sequential` of a factor stage (LinearLR scales optimizer.lr) and an absolute one (Cerebras sets the lr
    itself) is not refused: the README refuses an absolute schedule only where it would undo the groups' own lrs
    (lr_mult, layer_decay) and `chained` only because an absolute stage after a factor one has no defined scale;
    in a sequential each stage's values are defined, so the linter's warning for a schedule that sets the lr the
    optimizer section sets too applies to the absolute stage, at its path, with the jump it makes. Before, the lr
    went from 0.00078 to 0.1 without a word (the engine's "mixed" values passed the whole-schedule check)."""
    message = ("scheduler.schedulers[1]: CosineDecayLR sets the lr itself (0.1 at step 3), which overrides "
               "optimizer.lr 0.001 that the other stages scale: the lr goes from 0.000777778 at step 2 to 0.1; make it "
               "start at 0.001 or use a factor schedule (torch, OneFlow, HF, timm)")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = optreg.build(MIXED, torch.nn.Linear(2, 2))
    assert built.notes == [message] and [str(w.message) for w in caught] == [message]
    lrs = []
    for _ in range(5):
        lrs.append(built.optimizer.param_groups[0]["lr"])
        built.optimizer.step()
        built.scheduler.step()
    assert lrs == pytest.approx([1e-3 / 3, 1e-3 * 5 / 9, 1e-3 * 7 / 9, 0.1, 0.05 * (1 + math.cos(math.pi / 5))])
    path = tmp_path / "mixed.yaml"   # the same in a file, as `sequential` with the stages' keys
    path.write_text(_yaml({**MIXED, "scheduler": {"name": "sequential", "schedulers": MIXED["scheduler"]}}))
    assert optreg.load_config(path).notes == [message]
    from optreg.cli import main

    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().err == f"{path}:9:5: warning: {message}\n"   # where the file writes the stage
    # the stage starting at the optimizer's lr: no override, no warning
    fitting = {**MIXED, "scheduler": [MIXED["scheduler"][0], {**MIXED["scheduler"][1], "initial_learning_rate": 1e-3}]}
    assert build_notes(fitting) == []


def test_per_step_list_shorter_than_the_run_names_the_source():
    config = {"optimizer": {"name": "SGD", "dialect": "mindspore", "learning_rate": [0.1, 0.05, 0.01]},
              "train": {"epochs": 2, "steps_per_epoch": 5}}
    with pytest.raises(ConfigError) as info:
        optreg.build(config, torch.nn.Linear(2, 2))
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("optimizer.learning_rate", "a per-step list of 3 values is shorter than the run (10 steps: train.epochs); "
                                    "give one value per step")]


def test_validate_prints_the_warnings(tmp_path, capsys):
    from optreg.cli import main

    path = tmp_path / "short.yaml"
    path.write_text(_yaml(experiment({"name": "CosineAnnealingLR", "T_max": 100})))
    assert main(["validate", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"{path}: ok\n"
    assert captured.err == f"{path}:6:3: warning: {WARNINGS[0][2]}\n"   # where the file writes scheduler.T_max


def test_a_warning_is_at_its_file_position_in_every_command_and_in_build(tmp_path, capsys):
    """validate, run and plot print a note at the position of the key it begins with, as an error is printed, and
    build's warning (`optreg.ConfigWarning`) carries the note and that position; from a dict, no position."""
    from optreg.cli import main
    from optreg.errors import Location

    config = experiment({"name": "CosineAnnealingLR", "T_max": 100}, steps=20)
    note = ("scheduler.T_max: T_max 100 spans 100 steps, more than the 20 steps of the run (train.steps or --steps): "
            "the schedule never finishes; set scheduler.T_max to 20")
    path = tmp_path / "short.yaml"
    path.write_text(_yaml(config))
    line = f"{path}:6:3: warning: {note}\n"
    for argv in (["validate", str(path)], ["run", str(path)], ["plot", str(path), "--csv"]):
        assert main(argv) == 0, argv
        assert capsys.readouterr().err == line, argv
    for given, where in ((str(path), Location(str(path), 6, 3)), (config, None)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            optreg.build(given, torch.nn.Linear(2, 2))
        [warning] = [w.message for w in caught]
        assert isinstance(warning, optreg.ConfigWarning)
        assert (warning.note, warning.location) == (note, where)
        assert str(warning) == (f"{where}: {note}" if where else note)


LINEAR, COSINE = {"name": "LinearLR", "start_factor": 0.1, "total_iters": 5}, {"name": "CosineAnnealingLR", "T_max": 95}
NEVER_RUNS_FIRST = ("scheduler.milestones[0]: milestone 0 starts scheduler.schedulers[1] at the first step: "
                    "scheduler.schedulers[0] (LinearLR) never runs; set the milestone to that stage's length, or "
                    "drop it")
NEVER_RUNS_PAST = ("scheduler.milestones[{k}]: milestone {m} is at or past the end of the 100 steps of the run "
                   "(train.steps or --steps): scheduler.schedulers[{n}] (CosineAnnealingLR) never runs; lower the "
                   "milestone below 100, or drop the stage")


@pytest.mark.parametrize("name, stages, milestones, note, k", [
    ("SequentialLR", [LINEAR, COSINE], [0], NEVER_RUNS_FIRST, 0),
    ("sequential", [LINEAR, COSINE], [0], NEVER_RUNS_FIRST, 0),
    ("SequentialLR", [LINEAR, COSINE], [100], NEVER_RUNS_PAST.format(k=0, m=100, n=1), 0),
    ("sequential", [LINEAR, {"name": "ConstantLR", "factor": 0.5, "total_iters": 5}, COSINE], [5, 120],
     NEVER_RUNS_PAST.format(k=1, m=120, n=2), 1),
])
def test_a_milestone_that_leaves_a_stage_no_step_is_a_warning_at_the_milestone(name, stages, milestones, note, k,
                                                                               tmp_path, capsys):
    """A sequence's milestone at 0 (the first stage never runs) or at or past the run's end (the stage it starts
    never runs) is a warning at the milestone, in validate, plot, run and build alike (it passed without a word:
    only the stages' total length was linted, and not for a milestone at 0); milestones within the run are not."""
    from optreg.cli import main
    from optreg.errors import Location

    config = experiment({"name": name, "schedulers": stages, "milestones": milestones}, steps=100)
    path = tmp_path / "sequence.yaml"
    path.write_text(_yaml(config))
    line = _yaml(config).splitlines().index("  milestones:") + 2 + k   # the milestone's item, `  - 120`
    for argv in (["validate", str(path)], ["run", str(path)], ["plot", str(path), "--csv"]):
        assert main(argv) == 0, argv
        assert f"{path}:{line}:5: warning: {note}\n" in capsys.readouterr().err, argv
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optreg.build(str(path), torch.nn.Linear(2, 2))
    assert [(w.message.note, w.message.location) for w in caught if "milestones" in w.message.note] == \
        [(note, Location(str(path), line, 5))]
    fitting = experiment({"name": name, "schedulers": stages, "milestones": [5, 10][:len(milestones)]}, steps=100)
    assert not [n for n in build_notes(fitting) if "milestones" in n]
    no_run = {**config, "train": {}}   # a first milestone at 0 whatever the run; one past the run's end needs one
    assert [n for n in build_notes(no_run) if "milestones" in n] == ([note] if milestones == [0] else [])


@pytest.mark.parametrize("convert", [False, True])
def test_a_milestone_in_epochs_past_the_run_is_said_in_epochs(convert):
    """A sequence counted in epochs (by_epoch, and converted to iterations or not) writes its milestones in epochs:
    the warning says them, and the run, in epochs."""
    scheduler = {"name": "SequentialLR", "by_epoch": True, "convert_to_iter_based": convert,
                 "schedulers": [{**LINEAR, "total_iters": 2}, {**COSINE, "T_max": 8}], "milestones": [12]}
    notes = build_notes(experiment(scheduler, steps=None, epochs=10, steps_per_epoch=10))
    assert [n for n in notes if "milestones" in n] == [
        "scheduler.milestones[0]: milestone 12 is at or past the end of the 10 epochs of the run (train.epochs): "
        "scheduler.schedulers[1] (CosineAnnealingLR) never runs; lower the milestone below 10, or drop the stage"]


@pytest.mark.parametrize("scheduler, rule, note", [
    ("{name: LambdaLR, lr_lambda: 'min(1, step / 10)'}", "lr: 0.5",
     "5:1: warning: scheduler: the lr at step 0 is 0 (group 0's lr 0.5): the first optimizer step updates nothing; "
     "start above 0 (the schedule's first value)"),
    # the advice names the key that gives the group's lr: the rule's own, or its multiplier (not the optimizer's)
    ("{name: CosineAnnealingLR, T_max: 20, eta_min: 0.01}", "lr: 0.005",
     "5:49: warning: scheduler.eta_min: eta_min 0.01 is at or above the lr 0.005, which it rises to, of group 0: the "
     "schedule never decays; lower scheduler.eta_min below optimizer.param_groups[0].lr"),
    ("{name: CosineAnnealingLR, T_max: 20, eta_min: 0.01}", "lr_mult: 0.05",
     "5:49: warning: scheduler.eta_min: eta_min 0.01 is at or above the lr 0.005, which it rises to, of group 0: the "
     "schedule never decays; lower scheduler.eta_min below the lr that optimizer.param_groups[0].lr_mult gives "
     "group 0"),
])
def test_a_note_numbers_the_groups_without_a_model_as_with_one(scheduler, rule, note, tmp_path, capsys):
    """validate without a model plans one group per rule and then the default one, the order a model's plan has:
    a note that numbers a group says the same with --model and without (it put the default group first, so the
    rule's group 0 was group 1 and group 0 the default's), and as build's warning."""
    from examples.finetune_models import tiny_vit
    from optreg.cli import main

    path = tmp_path / "groups.yaml"
    path.write_text(f"optimizer:\n  name: SGD\n  lr: 0.1\n  param_groups: [{{params: '*.bias', {rule}}}]\n"
                    f"scheduler: {scheduler}\ntrain: {{steps: 20}}\n")
    for model in ([], ["--model", "examples.finetune_models:tiny_vit"]):
        assert main(["validate", str(path), *model]) == 0
        assert capsys.readouterr().err == f"{path}:{note}\n", model
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optreg.build(path, tiny_vit())
    assert [f"{w.message.location.line}:{w.message.location.column}: warning: {w.message.note}"
            for w in caught] == [note]


DEEPSPEED_SHORT = {"optimizer": {"type": "Adam", "params": {"lr": 3e-4}},
                   "scheduler": {"type": "WarmupDecayLR", "params": {"warmup_min_lr": 0, "warmup_max_lr": 3e-4,
                                                                     "warmup_num_steps": 100,
                                                                     "total_num_steps": 300}}}


def test_validate_with_steps_on_a_foreign_file_checks_what_plot_checks(tmp_path, capsys):
    """A run length from --steps reaches a translated file after it is read: validate made its checks and notes for
    the file's own run (none), and said ok where plot warned, or refused an HF warmup longer than the run. The
    notes name the run length as a file's `train:` beside it or `--steps` give it (DeepSpeed's reader reads that
    `train:`, as HF's does), not `total_steps=`. A warmup from 0 up to the optimizer's lr
    (warmup_max_lr = lr, DeepSpeed's usual) agrees with it: no warning that the schedule overrides it."""
    import json

    from optreg.cli import main

    path = tmp_path / "ds.json"
    path.write_text(json.dumps(DEEPSPEED_SHORT, indent=1))
    assert main(["validate", str(path), "--steps", "1000"]) == 0
    said = capsys.readouterr()
    assert main(["plot", str(path), "--steps", "1000", "--csv"]) == 0
    assert said.err == capsys.readouterr().err == (
        f"{path}:14:4: warning: scheduler.params.total_num_steps: total_num_steps 300 spans 300 steps, under 0.9 × "
        f"the 1000 steps of the run (train.steps or --steps): the schedule ends early; set "
        f"scheduler.params.total_num_steps to 1000\n")
    hf = tmp_path / "args.yaml"
    hf.write_text("learning_rate: 2.0e-4\nlr_scheduler_type: linear\nwarmup_steps: 500\nnum_train_epochs: 3\n")
    for command in ("validate", "plot"):
        assert main([command, str(hf), "--steps", "100"]) == 1
        assert capsys.readouterr().err == f"{hf}:3:1: warmup_steps: a warmup of 500 steps is longer than the " \
                                          f"schedule (max_steps 100): lower warmup_steps or raise max_steps\n", command


def test_a_schedule_over_groups_whose_lr_is_unknown_is_linted_without_their_values():
    """Found by the fuzzing suite: under THOR (its lr a per-step table) the groups' lr values are unknown; the
    linter checked each group's first lr and failed on None. It now leaves that check out and keeps the others."""
    import optreg
    from optreg.train import make_model

    config = {"optimizer": {"name": "mindspore.thor", "learning_rate": 0.0, "damping": 0.0, "momentum": 0.0},
              "scheduler": {"name": "ChainedScheduler", "dialect": "torch", "schedulers": [{"name": "ConstantLR"}]},
              "train": {"steps": 1}}
    with pytest.warns(UserWarning, match=r"^scheduler.schedulers: the stages span 5 steps, more than the 1 step of"):
        built = optreg.build(config, make_model(8, 1, 0))
    assert type(built.optimizer).__name__ == "THOR"


NEMO_COSINE = {"model": {"optim": {"name": "adamw", "lr": 0.001, "sched": {"name": "CosineAnnealing",
                                                                          "warmup_steps": 10, "min_lr": 1e-6}}},
               "trainer": {"max_steps": 1000}}
NEMO_NOAM = {"model": {"optim": {"name": "adamw", "lr": 2.0, "sched": {"name": "NoamAnnealing", "d_model": 256,
                                                                      "warmup_steps": 10}}},
             "trainer": {"max_steps": 1000}}


@pytest.mark.parametrize("config, note", [
    (NEMO_COSINE, "trainer.max_steps: max_steps 1000 spans 1000 steps, more than the 3 steps of the run "
                  "(total_steps=): the schedule never finishes; set trainer.max_steps to 3"),
    ("examples/libai/vit_finetune.py",
     "train.train_iter: train_iter 3000 spans 3000 steps, more than the 3 steps of the run (total_steps=): the "
     "schedule never finishes; set train.train_iter to 3"),
    (NEMO_NOAM, None),   # NeMo's Noam decays for ever: its max_steps sets no end
])
def test_a_translated_file_s_note_names_the_key_of_the_file_that_sets_the_length(config, note):
    """A note of a translated format names the key of the file that sets the length, in its path and in its
    advice (NeMo's sched.max_steps is trainer.max_steps; LiBai's schedule spans train.train_iter), not optreg's
    own form's (`scheduler.schedulers`, which neither file has), and in its text the key, not optreg's option (LiBai's
    decay_steps); a schedule whose length no key sets has none."""
    if isinstance(config, str):
        config = str(__import__("pathlib").Path(__file__).resolve().parent.parent / config)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = optreg.build(config, torch.nn.Linear(2, 2), total_steps=3)
    assert built.notes == ([note] if note else [])
    assert [w.message.note for w in caught if isinstance(w.message, optreg.ConfigWarning)] == built.notes


def test_an_absolute_schedule_over_a_rule_s_own_lr_is_a_warning_at_the_rule():
    """Cerebras' and MindSpore's lr schedules set every group's lr: a rule's own lr is never used (an lr_mult, which
    would be undone as well, is refused: build.absolute_over_scaled). Said at the rule's lr, in build as in plot."""
    config = {"optimizer": {"name": "AdamW", "lr": 0.01, "param_groups": [{"params": ["bias"], "lr": 0.05}]},
              "scheduler": {"name": "cerebras.CosineDecayLR", "initial_learning_rate": 0.01,
                            "end_learning_rate": 0.001, "total_iters": 100}}
    message = ("optimizer.param_groups[0].lr: CosineDecayLR sets every group's lr itself (0.01 at step 0), which "
               "replaces this rule's lr 0.05 at every step; drop it, or use a schedule whose values are factors of "
               "each group's lr (torch, OneFlow, HF, timm)")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = optreg.build(config, torch.nn.Linear(2, 2))
    assert built.notes == [message] and [str(w.message) for w in caught] == [message]
    assert [g["lr"] for g in built.optimizer.param_groups] == pytest.approx([0.01, 0.01])   # 0.05 is gone
    factor = {**config, "scheduler": {"name": "CosineAnnealingLR", "T_max": 100}}
    assert optreg.build(factor, torch.nn.Linear(2, 2)).notes == []   # a factor schedule scales the rule's lr
    two = {**config, "optimizer": {**config["optimizer"], "param_groups": [{"params": ["bias"], "lr": 0.05},
                                                                           {"params": ["weight"], "lr": 0.02}]}}
    assert optreg.build(two, torch.nn.Linear(2, 2)).notes == [message.replace(
        "lr 0.05 at every step", "lr 0.05, and those of 1 more (optimizer.param_groups[1]) at every step")]
    split = {**config, "optimizer": {**config["optimizer"], "no_weight_decay": True,
                                     "param_groups": [{"params": ["*"], "lr": 0.05}]}}
    assert optreg.build(split, torch.nn.Linear(2, 2)).notes == [message]   # its two groups (decay, none): one rule


def test_configure_lr_scheduler_warns_of_the_group_lrs_an_absolute_schedule_replaces_as_build_does():
    """configure_lr_scheduler over an optimizer's groups of different lrs: an absolute lr schedule sets one lr for
    all, so each group whose lr differs from it is named in one ConfigWarning (build's words, a group's path); a
    factor schedule, or groups of one lr, say nothing."""
    def groups(*lrs):
        return torch.optim.SGD([{"params": [torch.nn.Parameter(torch.zeros(2))], "lr": lr} for lr in lrs], lr=0.01)

    absolute = {"name": "cerebras.CosineDecayLR", "initial_learning_rate": 0.01, "end_learning_rate": 0.001,
                "total_iters": 100}
    for optimizer, spec, said in [
            (groups(0.05, 0.01, 0.02), absolute, [
                "param_groups[0].lr: CosineDecayLR sets every group's lr itself (0.01 at step 0), which replaces this "
                "group's lr 0.05, and those of 1 more (param_groups[2]) at every step; drop it, or use a schedule "
                "whose values are factors of each group's lr (torch, OneFlow, HF, timm)"]),
            (groups(0.05, 0.01), {"name": "CosineAnnealingLR", "T_max": 100}, []),
            (groups(0.03, 0.03), absolute, [])]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            optreg.configure_lr_scheduler(optimizer, dict(spec))
        assert [str(w.message) for w in caught if isinstance(w.message, optreg.ConfigWarning)] == said
        assert all(w.filename == __file__ for w in caught if isinstance(w.message, optreg.ConfigWarning))


@pytest.mark.parametrize("peak, warned", [(3e-4, False), (1e-4, True)], ids=["peaks-at-lr", "peaks-elsewhere"])
def test_an_absolute_warmup_up_to_the_optimizer_s_lr_agrees_with_it(peak, warned, tmp_path, capsys):
    """DeepSpeed's WarmupDecayLR from 0 up to warmup_max_lr: an optimizer lr equal to the peak is what the schedule
    reaches (the README's ds_config.json warned that it was overridden); one the schedule never takes is."""
    import json

    from optreg.cli import main

    path = tmp_path / "ds.json"
    path.write_text(json.dumps({"optimizer": {"type": "Adam", "params": {"lr": 3e-4}},
                                "scheduler": {"type": "WarmupDecayLR", "params": {
                                    "warmup_min_lr": 0, "warmup_max_lr": peak, "warmup_num_steps": 100,
                                    "total_num_steps": 1000}}}, indent=1))
    assert main(["validate", str(path), "--steps", "1000"]) == 0
    assert capsys.readouterr().err == (
        f"{path}:10:3: warning: scheduler.params: WarmupDecayLR sets the lr itself (0 at step 0, {peak:g} at its "
        f"peak), which overrides optimizer.params.lr 0.0003; drop optimizer.params.lr or make the schedule start or "
        f"peak at it\n" if warned else "")


@pytest.mark.parametrize("peak, warned", [(3e-4, False), (1e-4, True)], ids=["peaks-at-lr", "peaks-elsewhere"])
def test_a_warmup_longer_than_the_run_peaks_where_the_schedule_does(peak, warned, tmp_path, capsys):
    """DeepSpeed's WarmupLR (no length: it holds its peak) over a run shorter than its warmup (`--steps 4` of a
    100-step warmup): its peak is the schedule's, past the run, so a warmup up to the optimizer's lr agrees with it
    (it warned that 3e-05, the run's last value, overrides the lr); one to another value is said with that value."""
    import json

    from optreg.cli import main

    path = tmp_path / "ds.json"
    path.write_text(json.dumps({"optimizer": {"type": "Adam", "params": {"lr": 3e-4}},
                                "scheduler": {"type": "WarmupLR", "params": {
                                    "warmup_min_lr": 0, "warmup_max_lr": peak, "warmup_num_steps": 100,
                                    "warmup_type": "linear"}}}, indent=1))
    assert main(["validate", str(path), "--steps", "4"]) == 0
    assert capsys.readouterr().err == (
        f"{path}:10:3: warning: scheduler.params: WarmupLR sets the lr itself (0 at step 0, {peak:g} at its "
        f"peak), which overrides optimizer.params.lr 0.0003; drop optimizer.params.lr or make the schedule start or "
        f"peak at it\n" if warned else "")


def test_a_warmup_stage_s_end_value_is_no_floor():
    """A Cerebras LinearLR warmup up to the lr in a sequence ends at its end_learning_rate by design (the lightning
    example): no 'never decays' warning at that stage."""
    notes = build_notes(experiment([
        {"LinearLR": {"initial_learning_rate": 0.001, "end_learning_rate": 0.1, "total_iters": 20}},
        {"CosineDecayLR": {"initial_learning_rate": 0.1, "end_learning_rate": 0.0, "total_iters": 980}}]))
    assert not [n for n in notes if "never decays" in n]


def test_a_long_run_finds_the_peak_of_a_warmup_between_its_samples(tmp_path, capsys):
    """The peak over a run of 100,000 steps is sampled every 24 steps: a warmup of 1,001 steps peaks between two
    samples (0.000299982 at step 984), which is no cause to warn that the schedule overrides the lr it reaches."""
    import json

    from optreg.cli import main

    path = tmp_path / "ds.json"
    path.write_text(json.dumps({"optimizer": {"type": "Adam", "params": {"lr": 3e-4}},
                                "scheduler": {"type": "WarmupDecayLR", "params": {
                                    "warmup_min_lr": 0, "warmup_max_lr": 3e-4, "warmup_num_steps": 1001,
                                    "total_num_steps": 100000}}}))
    assert main(["validate", str(path), "--steps", "100000"]) == 0
    assert capsys.readouterr().err == ""


ONE_CYCLE_PAST = ("torch.OneCycleLR fails when stepped past its length ({total}), and the run ({source}) steps it "
                  "{last}; set {key} to {target}")


def test_a_one_cycle_shorter_than_the_run_is_an_error_in_every_command_and_in_build(tmp_path, capsys):
    """torch's OneCycleLR raises when stepped past total_steps: a run that steps it further is refused at the key
    (it was a warning, then run's ValueError after the 10th step), in validate, run, plot and build alike; --steps
    10 fits, --steps 11 does not (plot, which reads no lr past the last step, accepted it)."""
    from optreg.cli import main

    path = tmp_path / "onecycle.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler: {name: OneCycleLR, max_lr: 0.1, total_steps: 10}\n"
                    "train: {steps: 20}\n")
    message = ONE_CYCLE_PAST.format(total="10 steps", source="train.steps or --steps", last="20 times",
                                    key="scheduler.total_steps", target=20)
    for argv in (["validate", str(path)], ["run", str(path)], ["plot", str(path), "--csv"]):
        assert main(argv) == 1, argv
        assert capsys.readouterr().err == f"{path}:2:44: scheduler.total_steps: {message}\n", argv
    with pytest.raises(ConfigError) as info:
        optreg.build(str(path), torch.nn.Linear(2, 2))
    assert [(e.path, e.message) for e in info.value.errors] == [("scheduler.total_steps", message)]
    eleven = message.replace("20", "11")
    for argv in (["run", str(path), "--steps", "11"], ["plot", str(path), "--csv", "--steps", "11"]):
        assert main(argv) == 1, argv
        assert capsys.readouterr().err == f"{path}:2:44: scheduler.total_steps: {eleven}\n", argv
    assert main(["run", str(path), "--steps", "10"]) == 0


def _one_cycle(total, **more):
    return {"name": "OneCycleLR", "max_lr": 0.1, "total_steps": total, "cycle_momentum": False, **more}


@pytest.mark.parametrize("scheduler, train, key, total, last", [
    (_one_cycle(16, warmup={"steps": 3}), {}, "scheduler.total_steps", "16 steps", "17 times"),
    (_one_cycle(4, by_epoch=True), {"steps_per_epoch": 4}, "scheduler.total_steps", "4 epochs", "5 epochs"),
    ({"name": "sequential", "schedulers": [{"name": "LinearLR", "total_iters": 5}, _one_cycle(14)]}, {},
     "scheduler.schedulers[1].total_steps", "14 steps", "15 times"),
    ({"name": "sequential", "restart": "global", "schedulers": [{"name": "LinearLR", "total_iters": 5},
                                                                 _one_cycle(19)]}, {},
     "scheduler.schedulers[1].total_steps", "19 steps", "20 times"),
    ({"name": "SequentialLR", "milestones": [7], "schedulers": [_one_cycle(5), {"name": "LinearLR", "total_iters": 5}]},
     {}, "scheduler.schedulers[0].total_steps", "5 steps", "6 times"),
    ({"name": "ChainedScheduler", "schedulers": [{"name": "LinearLR", "total_iters": 5}, _one_cycle(10)]},
     {"accumulation_steps": 2}, "scheduler.schedulers[1].total_steps", "10 steps", "20 times"),
])
def test_a_one_cycle_is_counted_as_the_run_steps_it(scheduler, train, key, total, last):
    """The steps a OneCycleLR gets: after the warmup, per epoch with by_epoch, a stage within its window (its local
    step, or the global one), side by side every step, each micro-batch under accumulation. One step more of its
    length (each case's next) is what torch's own scheduler takes over the 20-step run without raising."""
    config = experiment(scheduler, steps=20, **train)
    with pytest.raises(ConfigError) as info:
        optreg.build(config, torch.nn.Linear(2, 2))
    target = int(last.split()[0])
    unit = " epochs" if "epochs" in last else ""
    assert [(e.path, e.message) for e in info.value.errors] == [
        (key, ONE_CYCLE_PAST.format(total=total, source="train.steps or --steps", last=last, key=key,
                                    target=f"{target}{unit}"))]
    longer = _yaml(config).replace(f"total_steps: {int(total.split()[0])}", f"total_steps: {target}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = optreg.build(longer, torch.nn.Linear(2, 2))
    for _ in range(20):
        built.optimizer.step()
        built.scheduler.step()


@pytest.mark.parametrize("scheduler, train, total, last", [
    (_one_cycle(1), {}, "1 step", "3 times"),
    (_one_cycle(1, by_epoch=True), {"steps_per_epoch": 4}, "1 epoch", "2 epochs"),
])
def test_a_one_cycle_of_one_step_or_epoch_is_said_in_the_singular(scheduler, train, total, last):
    # its length was "1 steps" and "1 epochs"
    config = experiment(scheduler, steps=3 if not train else 8, **train)
    with pytest.raises(ConfigError) as info:
        optreg.build(config, torch.nn.Linear(2, 2))
    target = last.split()[0] + (" epochs" if train else "")
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("scheduler.total_steps", ONE_CYCLE_PAST.format(total=total, source="train.steps or --steps", last=last,
                                                        key="scheduler.total_steps", target=target))]


def test_the_peak_of_a_schedule_over_a_very_long_run_is_found_in_few_evaluations():
    """The floor check finds a schedule's peak by sampling 4,097 steps, then again within a stride of the best
    sample, finer each round: a run of 10^12 steps takes a few rounds (every step within the first stride took
    37 s for this cosine, minutes for the fuzzer's longer runs); the peak between two samples is still found."""
    from optreg.core.lint import _peak

    class Triangle:   # a warmup to 1.0 at an odd step, then a decay: counts its evaluations
        calls = 0

        def apply(self, t, base):
            self.calls += 1
            if self.calls > 100_000:
                raise ArithmeticError("too many evaluations")
            top = 123_456_789_011
            return base * (t / top if t <= top else 1.0 - (t - top) / 10**13)

    schedule = Triangle()
    assert _peak(schedule, 0.5, 10**12) == 0.5
    assert schedule.calls < 20_000
    notes = build_notes(experiment({"name": "CosineAnnealingLR", "T_max": 10**12, "eta_min": 0.2}, steps=10**12))
    assert notes == ["scheduler.eta_min: eta_min 0.2 is at or above the lr 0.1, which it rises to, of group 0: the "
                     "schedule never decays; lower scheduler.eta_min below the optimizer's lr"]

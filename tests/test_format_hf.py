"""The hf config format: what transformers 5.23's Trainer builds from TrainingArguments files (tests/fixtures/hf,
recorded by scripts/record_hf.py from alignment-handbook recipes and one mapping per schedule / optimizer), the
Trainer's weight-decay rule, refusals and detection."""

from __future__ import annotations

import json
import math
import warnings

import pytest
import torch

import optreg
from optreg.config import formats
from optreg.dialects.hf.groups import hf_no_decay
from optreg.errors import Collector, ConfigError
from optreg.readers import hf as hf_reader
from tests.format_replay import (FIXTURES, STAND_IN, cases, detected, errors_of, read_and_built, replay, sources,
                                  stepped_lrs, unrecorded)

CASES = cases("hf")
CORPUS = FIXTURES / "hf" / "corpus"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_builds_what_the_trainer_builds(case):
    replay("hf", case)


def test_every_corpus_file_is_recorded():
    """The corpus's bitsandbytes recipes (adamw_bnb_8bit, paged_adamw_32bit) included: the bitsandbytes dialect."""
    assert unrecorded("hf") == [] and len(sources("hf")) >= 17
    optims = {c["config"]["optim"] for c in CASES if "config" in c and "optim" in c["config"]}
    assert {"paged_lion_8bit", "ademamix", "adamw_torch_4bit"} <= optims


class Tied(torch.nn.Module):
    """Names and types the Trainer's rule looks at: a LayerNorm subclass, `ln_f` (no norm in the name), a
    `final_layernorm`, an `rmsnorm`-named module, `q_norm` and a weight named `norm`."""

    class MyLN(torch.nn.LayerNorm):
        pass

    def __init__(self):
        super().__init__()
        self.ln_f = self.MyLN(3)
        self.final_layernorm = torch.nn.Linear(3, 3)
        self.block = torch.nn.ModuleDict({"rmsnorm": torch.nn.Linear(3, 3, bias=False),
                                          "q_norm": torch.nn.Linear(3, 3, bias=False),
                                          "enormous": torch.nn.Linear(3, 3, bias=False)})
        self.norm = torch.nn.Parameter(torch.ones(3))


def test_decay_rule_is_the_trainers():
    from transformers import Trainer

    model = Tied()
    want = set(Trainer.get_decay_parameter_names(None, model))
    rule = hf_no_decay(model)
    assert {n for n, _ in model.named_parameters() if not rule(n)} == want
    assert want == {"block.enormous.weight"}   # the LayerNorm subclass, the names with (layer/rms)norm: undecayed


def test_warmup_fraction_is_rounded_as_transformers_rounds_it():
    # 100 × 0.07 = 7.000000000000001 in floats: transformers warms up for its ceiling, 8 steps
    text = json.dumps({"learning_rate": 1e-3, "warmup_steps": 0.07, "max_steps": 100, "lr_scheduler_type": "linear"})
    experiment = optreg.load_config(text + "\n")
    assert experiment.scheduler["num_warmup_steps"] == 8 and experiment.run.steps == 100


@pytest.mark.filterwarnings("ignore::optreg.ConfigWarning")   # the lr at step 0 is 0: the case itself
@pytest.mark.parametrize("run, total", [({"max_steps": 12}, 12), ({"num_train_epochs": 2}, 2 * 6)])
def test_warmup_ratio_1_warms_up_over_the_whole_run(run, total):
    """transformers 4 takes warmup_ratio in [0, 1] (TrainingArguments.__post_init__) and warms up for
    ceil(total·ratio) steps (get_warmup_steps): 1.0 is the whole run, with max_steps or over epochs."""
    from transformers import get_scheduler

    config = {"learning_rate": 1e-3, "lr_scheduler_type": "linear", "warmup_ratio": 1.0, **run}
    built = optreg.build(json.dumps(config) + "\n", STAND_IN.model(), steps_per_epoch=6)
    assert built.scheduler.schedules[0].num_warmup_steps == total
    reference = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1e-3)
    trainers = get_scheduler("linear", reference, num_warmup_steps=math.ceil(total * 1.0), num_training_steps=total)
    want = stepped_lrs(reference, trainers, total)
    assert stepped_lrs(built.optimizer, built.scheduler, total) == pytest.approx(want, rel=1e-12, abs=0)
    assert want[1] == pytest.approx(1e-3 / total) and want[-1] == pytest.approx(1e-3 * (total - 1) / total)


@pytest.mark.parametrize("name", ["constant_with_warmup", "inverse_sqrt"])
def test_a_warmup_ratio_of_a_run_in_epochs_counts_from_the_run_given_beside_the_file(name):
    """constant_with_warmup and inverse_sqrt have no num_training_steps to count a warmup fraction from: over epochs,
    the Trainer counts it from the run (ceil(ratio·epochs × steps per epoch)), which the caller gives; without
    one, the run is missing as it is for any file in epochs (linear's), at num_train_epochs, or at max_steps for
    fractional epochs (it was an error at warmup_ratio)."""
    from transformers import get_scheduler

    for epochs, said in ((2, ("num_train_epochs", "2 epochs need the steps per epoch to give a run length: "
                                                  "train.steps_per_epoch or --steps N (build(..., steps_per_epoch=))")),
                         (2.5, ("max_steps", "the run length, which the file leaves to the trainer: give it with "
                                             "--steps N (optreg validate / run / plot / convert) or build(..., "
                                             "total_steps=N), or the steps per epoch of a run in epochs (build(..., "
                                             "steps_per_epoch=N))"))):
        for schedule in (name, "linear"):
            text = json.dumps({"learning_rate": 1e-3, "lr_scheduler_type": schedule, "num_train_epochs": epochs,
                               "warmup_ratio": 0.1}) + "\n"
            with pytest.raises(ConfigError) as info:
                optreg.build(text, STAND_IN.model())
            assert [(e.path, e.message) for e in info.value.errors] == [said], schedule
    text = json.dumps({"learning_rate": 1e-3, "lr_scheduler_type": name, "num_train_epochs": 2,
                       "warmup_ratio": 0.1}) + "\n"
    reference = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1e-3)
    want = stepped_lrs(reference, get_scheduler(name, reference, num_warmup_steps=3, num_training_steps=30), 30)
    assert want[:4] == pytest.approx([0, 1e-3 / 3, 2e-3 / 3, 1e-3])
    for given in ({"steps_per_epoch": 15}, {"total_steps": 30}):
        built = optreg.build(text, STAND_IN.model(), **given)
        assert stepped_lrs(built.optimizer, built.scheduler, 30) == pytest.approx(want, rel=1e-12, abs=0)


@pytest.mark.parametrize("warmup", [{"warmup_steps": 250}, {"warmup_ratio": 0.1}])
def test_a_warmup_beside_the_constant_schedule_is_reported_unused(warmup):
    """get_scheduler builds `constant` without a warmup: the key was reported exact, as if the Trainer warmed up, and
    a ratio over epochs was refused for want of a run it is never counted from."""
    text = json.dumps({"learning_rate": 1e-5, "lr_scheduler_type": "constant", "num_train_epochs": 2, **warmup})
    built = optreg.build(text + "\n", STAND_IN.model(), steps_per_epoch=5)
    assert stepped_lrs(built.optimizer, built.scheduler, 10) == [1e-5] * 10
    (key,) = warmup
    uses = {u.path: (u.verdict, u.why) for u in built.experiment.report}
    assert uses[key] == ("trainer", "get_scheduler passes no warmup to constant")


def test_a_fraction_of_the_run_in_wsd_kwargs_is_refused_as_transformers_counts_steps():
    """get_wsd_schedule takes num_decay_steps and num_stable_steps as step counts: 0.2 decays over 0.2 of a step and
    the Trainer trains at min_lr_ratio from there. The hf dialect's own form reads it as a fraction of the run (a
    curve the Trainer does not build): from a TrainingArguments file it is an error at the kwarg; a count builds."""
    from transformers import get_scheduler

    config = {"learning_rate": 1e-4, "lr_scheduler_type": "warmup_stable_decay", "max_steps": 50, "warmup_ratio": 0.1,
              "lr_scheduler_kwargs": {"num_decay_steps": 0.2, "min_lr_ratio": 0.1}}
    with pytest.raises(ConfigError) as info:
        optreg.load_config(json.dumps(config) + "\n")
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("lr_scheduler_kwargs.num_decay_steps", "get_scheduler passes num_decay_steps to warmup_stable_decay as a "
                                                "step count, not a fraction of the run (0.2 is under one step): "
                                                "write the count")]
    config["lr_scheduler_kwargs"]["num_decay_steps"] = 10
    built = optreg.build(json.dumps(config) + "\n", STAND_IN.model())
    reference = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1e-4)
    trainers = get_scheduler("warmup_stable_decay", reference, num_warmup_steps=5, num_training_steps=50,
                             scheduler_specific_kwargs={"num_decay_steps": 10, "min_lr_ratio": 0.1})
    assert stepped_lrs(built.optimizer, built.scheduler, 50) == pytest.approx(stepped_lrs(reference, trainers, 50),
                                                                               rel=1e-12, abs=0)


@pytest.mark.parametrize("run, ratio, verdict, why", [
    ({"max_steps": 100}, 0.1, "exact", "transformers 4's ratio, read as transformers 5 reads warmup_steps < 1"),
    ({"max_steps": 100}, 1.0, "exact", "transformers 4's ratio: 1, the whole run"),
    ({"num_train_epochs": 2}, 1.0, "exact", "transformers 4's ratio: 1, the whole run"),
])
def test_the_report_of_warmup_ratio(run, ratio, verdict, why):
    config = {"learning_rate": 1e-3, "lr_scheduler_type": "linear", "warmup_ratio": ratio, **run}
    report = {u.path: u for u in optreg.load_config(json.dumps(config) + "\n").report}
    assert (report["warmup_ratio"].verdict, report["warmup_ratio"].why) == (verdict, why)


@pytest.mark.parametrize("norm, clip", [(0, None), (-1, None), (-0.5, None), (0.5, 0.5)])
def test_max_grad_norm_0_or_below_does_not_clip(norm, clip):
    """The Trainer clips only when `args.max_grad_norm > 0` (transformers 5.23 trainer.py): 0 and below are valid
    and mean no clipping."""
    config = {"learning_rate": 1e-3, "lr_scheduler_type": "constant", "max_steps": 5, "max_grad_norm": norm}
    experiment = optreg.load_config(json.dumps(config) + "\n")
    assert (experiment.clip.max_norm if experiment.clip is not None else None) == clip
    why = {u.path: u.why for u in experiment.report}["max_grad_norm"]
    assert why == ("the global norm" if clip else f"{norm}: no clipping (the Trainer clips when it is > 0)")


@pytest.mark.parametrize("text, value", [("max_grad_norm: .inf", "inf"), ("max_grad_norm: 1.0e+999", "inf")])
def test_an_infinite_max_grad_norm_is_an_error_at_the_key(text, value, tmp_path):
    """max_grad_norm is the own form's clip_grad.max_norm, refused there when it is not finite, and said at the
    key and its position (it said `max_grad_norm.max_norm`)."""
    path = tmp_path / "args.yaml"
    path.write_text(f"learning_rate: 0.001\n{text}\n")
    with pytest.raises(ConfigError) as info:
        optreg.load_config(path)
    assert [str(e) for e in info.value.errors] == [f"{path}:2:1: max_grad_norm: must be a finite number, got {value}"]


@pytest.mark.parametrize("text, key, value", [("warmup_steps: .nan", "warmup_steps", "nan"),
                                             ("warmup_steps: 'inf'", "warmup_steps", "inf"),
                                             ("warmup_ratio: .nan", "warmup_ratio", "nan"),
                                             ("num_train_epochs: .inf", "num_train_epochs", "inf")])
def test_a_warmup_or_epochs_that_is_not_finite_is_an_error_at_the_key(text, key, value, tmp_path):
    """The reader computes the warmup steps and the run from these (int(), ceil()): nan and inf are errors at the
    key (they raised ValueError / OverflowError from int(), or passed as fractional epochs)."""
    path = tmp_path / "args.yaml"
    path.write_text(f"learning_rate: 0.001\nlr_scheduler_type: linear\n{text}\n")
    with pytest.raises(ConfigError) as info:
        optreg.load_config(path)
    assert [str(e) for e in info.value.errors] == [f"{path}:3:1: {key}: must be a finite number, got {value}"]


@pytest.mark.parametrize("config, path, words", [
    ({"learning_rate": 1e-3, "lr_scheduler_type": "warmup_stable_decay", "max_steps": 100},
     "lr_scheduler_kwargs.num_decay_steps", "required option is missing"),   # the key to add, not lr_scheduler_type's
    ({"optim": "galore_adamw", "learning_rate": 1e-3}, "optim", "galore_adamw needs galore-torch; optreg reads: "
                                                                 "adamw_torch, adamw_torch_fused, sgd"),
    ({"optim": "adamw_8bits", "learning_rate": 1e-3}, "optim", "adamw_8bit"),
    ({"optim": "rmsprop_bnb", "optim_args": "alpha=0.9", "learning_rate": 1e-3}, "optim_args",
     "alpha=0.9: the Trainer passes it to bitsandbytes.RMSprop as the string '0.9', which RMSprop cannot use"),
    ({"optim": "adamw_torch_8bit", "optim_args": "block_size=128", "learning_rate": 1e-3}, "optim_args",
     "block_size=128: the Trainer passes it to torchao.AdamW8bit as the string '128'"),
    ({"optim": "ademamix", "optim_args": "alpha=five", "learning_rate": 1e-3}, "optim_args",
     "alpha=five: not a number"),
    ({"optim": "ademamix", "optim_args": "alpha", "learning_rate": 1e-3}, "optim_args", "'alpha': expected key=value"),
    ({"optim": "adamw_torch_4bit", "optim_args": "bf16_stochastic_round=maybe", "learning_rate": 1e-3}, "optim_args",
     "expected true or false"),
    ({"optim": "adafactor", "learning_rate": 1e-3}, "optim", "Adafactor"),
    ({"optim": "adamw_torh", "learning_rate": 1e-3}, "optim", "adamw_torch"),
    ({"lr_scheduler_type": "cosine_with_restart", "learning_rate": 1e-3}, "lr_scheduler_type", "cosine_with_restarts"),
    ({"lr_scheduler_type": "reduce_lr_on_plateau", "learning_rate": 1e-3}, "lr_scheduler_type", "not a step"),
    ({"learning_rate": -1.0, "lr_scheduler_type": "linear"}, "learning_rate", ">= 0"),
    # as MindFormers' warmup_ratio and the own form's bounds say it (it said 'must be in [0, 1], got 1.5')
    ({"learning_rate": 1e-3, "lr_scheduler_type": "cosine", "warmup_ratio": 1.5}, "warmup_ratio",
     "warmup_ratio: must be <= 1, got 1.5"),
    ({"learning_rate": 1e-3, "lr_scheduler_type": "cosine", "warmup_ratio": -0.5}, "warmup_ratio",
     "warmup_ratio: must be >= 0, got -0.5"),
    ({"learning_rate": 1e-3, "lr_scheduler_type": "cosine", "lr_schedular_kwargs": {}}, "lr_schedular_kwargs",
     "lr_scheduler_kwargs"),
    ({"learning_rate": 1e-3, "lr_scheduler_type": "cosine", "max_steps": 10,
      "lr_scheduler_kwargs": {"num_cycles": -1}}, "lr_scheduler_kwargs.num_cycles", ""),
    ({"learning_rate": 1e-3, "lr_scheduler_type": "cosine", "max_steps": 10,
      "lr_scheduler_kwargs": {"num_warmup_steps": 3}}, "lr_scheduler_kwargs.num_warmup_steps", "fails with both"),
])
def test_bad_configs_are_located(config, path, words):
    items = errors_of(config)
    assert path in items and words in str(items[path]), items


def test_a_warmup_longer_than_max_steps_is_said_in_the_file_s_keys():
    """The error names warmup_steps and max_steps, the file's keys (it said num_warmup_steps and num_training_steps,
    the hf schedule's)."""
    items = errors_of({"learning_rate": 1e-3, "lr_scheduler_type": "linear", "max_steps": 5, "warmup_steps": 10})
    assert [(path, e.message) for path, e in items.items()] == [
        ("warmup_steps", "a warmup of 10 steps is longer than the schedule (max_steps 5): lower warmup_steps or raise "
                         "max_steps")]


@pytest.mark.parametrize("key, section, message", [
    ("learning_rate", {"lr": -1}, "must be >= 0, got -1"),
    ("weight_decay", {"weight_decay": -0.5}, "must be >= 0, got -0.5"),
    ("adam_beta1", {"betas": [-1, 0.999]}, "must be >= 0, got -1"),
    ("adam_epsilon", {"eps": -1}, "must be >= 0, got -1"),
    ("learning_rate", {"lr": "fast"}, "expected a number, got str 'fast'"),
])
def test_a_bad_number_says_what_the_own_form_says(key, section, message):
    """A negative learning_rate (weight_decay, beta, eps) says what the own form's option says, not its own words
    (it said `must be a number >= 0.0`)."""
    (own_key, value), = section.items()
    own = errors_of({"optimizer": {"name": "AdamW", "lr": 1e-3, **section}})
    assert [(path, e.message) for path, e in own.items()] == [
        (f"optimizer.{own_key}" + ("[0]" if own_key == "betas" else ""), message)]
    read = errors_of({key: value[0] if own_key == "betas" else value, "lr_scheduler_type": "linear"})
    assert [(path, e.message) for path, e in read.items()] == [(key, message)]


@pytest.mark.parametrize("value, message", [('"x"', "expected an integer, got str 'x' (or -1: the epochs decide)"),
                                            ("2.5", "must be an integer, got 2.5 (or -1: the epochs decide)")])
def test_a_bad_max_steps_says_what_the_own_form_says(value, message, tmp_path):
    """max_steps words a value that is no integer as the own form's options do (models.number_message), the meaning
    of -1 after it as NeMo's and MindFormers' run lengths say theirs (number_message's `also`; it said `(-1: the
    epochs decide)`), at its position."""
    path = tmp_path / "args.json"
    path.write_text('{"learning_rate": 0.001,\n "max_steps": %s}\n' % value)
    with pytest.raises(ConfigError) as info:
        optreg.load_config(path)
    assert [str(e) for e in info.value.errors] == [f"{path}:2:2: max_steps: {message}"]


@pytest.mark.parametrize("value, why", [(-1, "-1: the epochs decide"),
                                        (0, "0: the epochs decide (the Trainer takes max_steps when it is > 0)"),
                                        (-5, "-5: the epochs decide (the Trainer takes max_steps when it is > 0)")])
def test_a_max_steps_of_0_or_below_is_reported_as_the_file_writes_it(value, why):
    """The Trainer runs max_steps when it is > 0 and the epochs otherwise (`if args.max_steps > 0`): any value
    <= 0 leaves the run to num_train_epochs, and the report says the value the file wrote (it said '-1' for 0)."""
    config = {"learning_rate": 1e-3, "lr_scheduler_type": "constant", "max_steps": value, "num_train_epochs": 2}
    experiment = optreg.load_config(json.dumps(config) + "\n")
    assert {u.path: u.why for u in experiment.report}["max_steps"] == why
    assert experiment.run.steps is None


def test_the_optimizers_numbers_are_checked_once_by_the_own_form(tmp_path):
    """learning_rate, weight_decay and adam_* go to the own form as the file gives them (a number's string read as
    the number): checked there alone, each error at the key and position the file has, in the option's order; the
    reader checks none of them, so a key unused by the optimizer (RMSprop's adam_beta1) is no error."""
    errors = Collector()
    data = {"learning_rate": -1, "weight_decay": -0.1, "adam_beta1": 1.5, "adam_beta2": "0.5", "adam_epsilon": "abc"}
    section = hf_reader.read_optimizer(data, [], errors)
    assert not errors and (section["lr"], section["weight_decay"], section["betas"], section["eps"]) == (
        -1, -0.1, [1.5, 0.5], "abc")
    path = tmp_path / "args.json"
    path.write_text('{"output_dir": "out",\n "learning_rate": -1,\n "weight_decay": -0.1,\n "adam_beta1": 1.5,\n'
                    ' "adam_epsilon": "abc",\n "max_steps": 10}\n')
    with pytest.raises(ConfigError) as info:
        optreg.load_config(path)
    assert [str(e) for e in info.value.errors] == [f"{path}:2:2: learning_rate: must be >= 0, got -1",
                                                   f"{path}:4:2: adam_beta1: must be < 1, got 1.5",
                                                   f"{path}:5:2: adam_epsilon: expected a number, got str 'abc'",
                                                   f"{path}:3:2: weight_decay: must be >= 0, got -0.1"]
    unused = optreg.load_config(json.dumps({"optim": "rmsprop_bnb", "learning_rate": 1e-3, "adam_beta1": -1}))
    assert unused.optimizer["name"] == "RMSprop" and "betas" not in unused.optimizer


def test_epochs_take_the_dataloader_length():
    config = CORPUS / "zephyr-7b-beta__sft__config_full.yaml"
    with pytest.raises(ConfigError) as info:
        optreg.build(config, STAND_IN.model())
    assert [(e.path, e.message) for e in info.value.errors] == [   # the run in epochs, and so the schedule's length
        ("num_train_epochs", "1 epoch needs the steps per epoch to give a run length: train.steps_per_epoch or "
                             "--steps N (build(..., steps_per_epoch=))")]
    built = optreg.build(config, STAND_IN.model(), steps_per_epoch=50)
    assert built.run.steps == 50 and built.scheduler.schedules[0].num_training_steps == 50


@pytest.mark.parametrize("command", ["run", "plot"])
def test_a_trainers_epochs_take_the_steps_per_epoch_of_the_run_beside_the_file(command, tmp_path, capsys):
    """optreg's `train:` beside TrainingArguments is read as the own form reads it: train.steps_per_epoch, in the
    file or as an override (`train.steps_per_epoch=N`, `+train.steps_per_epoch=N`), gives num_train_epochs their
    length as build(steps_per_epoch=) does (it was not read: the run said it had none), and train.steps replaces
    them as --steps does; run, plot --csv, validate and build() agree. Without it, the error names it."""
    from optreg.cli import main

    args = "optim: adamw_torch\nlearning_rate: 0.001\nnum_train_epochs: 2\nwarmup_steps: 0.1\n"
    bare, beside = tmp_path / "args.yaml", tmp_path / "beside.yaml"
    bare.write_text(args)
    beside.write_text(args + "train: {steps_per_epoch: 10}\n")
    extra = ["--csv"] if command == "plot" else []
    assert main([command, str(bare), *extra]) == 1
    assert capsys.readouterr().err == (f"{bare}:3:1: num_train_epochs: 2 epochs need the steps per epoch to give a "
                                       f"run length: train.steps_per_epoch or --steps N (build(..., "
                                       f"steps_per_epoch=))\n")
    reference = optreg.build(str(bare), STAND_IN.model(), steps_per_epoch=10)
    assert reference.run.steps == 20 and reference.scheduler.schedules[0].num_training_steps == 20
    lrs = [reference.scheduler.get_last_lr()[0]]
    for _ in range(19):
        reference.optimizer.step()
        reference.scheduler.step()
        lrs.append(reference.scheduler.get_last_lr()[0])
    assert lrs[:3] == pytest.approx([0.0, 1e-3 / 2, 1e-3]) and lrs[-1] == pytest.approx(1e-3 / 18)   # warmup 2
    for argv in ([str(beside)], [str(bare), "train.steps_per_epoch=10"], [str(bare), "+train.steps_per_epoch=10"]):
        assert main(["validate", *argv]) == 0
        assert main([command, *argv, *extra]) == 0
        out = capsys.readouterr().out
        if command == "plot":
            rows = [line.split(",") for line in out.splitlines()[1:] if line.split(",")[1] == "0"]
            assert [float(r[3]) for r in rows] == pytest.approx(lrs), argv
        else:
            assert "(after 20 steps)" in out and f"lr: g0 {lrs[-1]:.4g}" in out, argv
    built = optreg.build(str(beside), STAND_IN.model())
    assert built.run == reference.run and built.scheduler.schedules[0].num_training_steps == 20
    with pytest.raises(ConfigError) as info:
        optreg.build(str(beside), STAND_IN.model(), steps_per_epoch=8)
    assert [str(e) for e in info.value.errors] == [f"{beside}:5:9: train.steps_per_epoch: build(steps_per_epoch=8) "
                                                   f"and train.steps_per_epoch 10 disagree; give one"]
    assert main([command, str(bare), "train.steps=12", *extra]) == 0   # the length given replaces the epochs
    with pytest.raises(ConfigError) as info:   # as the own form's train.epochs × steps_per_epoch
        optreg.build(str(beside), STAND_IN.model(), total_steps=12)
    assert [str(e) for e in info.value.errors] == [f"{beside}:3:1: num_train_epochs: total_steps=12 and "
                                                   f"num_train_epochs × steps_per_epoch = 2 × 10 = 20 disagree on the "
                                                   f"run length; give one"]


@pytest.mark.parametrize("text, fmt", [
    ('{"output_dir": "out", "learning_rate": 0.001}', "hf"),
    ('{"lr_scheduler_type": "cosine"}', "hf"),
    ('{"num_train_epochs": 3}', "hf"),
    ('{"learning_rate": 0.001, "optimizer": {"name": "SGD", "lr": 0.1}}', "optreg"),
    ('{"output_dir": "out", "optimizer": {"name": "SGD", "lr": 0.1}}', "optreg"),
    ('{"train_batch_size": 8, "optimizer": {"type": "Adam", "params": {"lr": 0.1}}}', "deepspeed"),
])
def test_detection(text, fmt):
    assert detected(text) == fmt


TRL_RECORDED = json.loads((FIXTURES / "hf" / "trl.json").read_text())["classes"]


TRL_EXPERIMENTAL_RECORDED = json.loads((FIXTURES / "hf" / "trl.json").read_text())["experimental"]["classes"]


def test_trl_classes_are_the_recorded_ones():
    """The reader's TRL tables are what TRL 1.16's trainers' config classes and TRL's experimental ones (its newest
    source recorded) define (scripts/record_trl.py)."""
    from optreg.readers.hf import TRL_EXPERIMENTAL, TRL_TRAINERS

    for table, recorded in ((TRL_TRAINERS, TRL_RECORDED), (TRL_EXPERIMENTAL, TRL_EXPERIMENTAL_RECORDED)):
        assert {cls: (sorted(fields), own) for cls, (fields, own) in table.items()} == \
            {cls: (rec["fields"], rec["defaults"]) for cls, rec in recorded.items()}


@pytest.mark.parametrize("cls", sorted(TRL_EXPERIMENTAL_RECORDED))
def test_a_recipe_of_an_experimental_trl_class_gets_its_defaults(cls):
    """A recipe with the fields of one of TRL's experimental config classes (all of them, learning_rate and the
    schedule left out) trains at that class's defaults (GOLDConfig 1e-7, OnlineDPOConfig 5e-7, AsyncGRPOConfig's
    constant schedule), not TrainingArguments' (5e-5, linear)."""
    recorded = TRL_EXPERIMENTAL_RECORDED[cls]
    config = {"output_dir": "out", "max_steps": 10, **dict.fromkeys(recorded["fields"])}
    built = optreg.build(config, STAND_IN.model(), format="hf")
    lr = recorded["defaults"].get("learning_rate", 5e-5)
    assert {g["lr"] for g in built.optimizer.param_groups} == {lr}
    for _ in range(5):
        built.optimizer.step()
        built.scheduler.step()
    schedule = recorded["defaults"].get("lr_scheduler_type", "linear")
    assert {g["lr"] for g in built.optimizer.param_groups} == {lr if schedule == "constant" else lr / 2}


@pytest.mark.parametrize("fields, lr, said", [
    ({"max_staleness": 4}, 1e-6, "TRL's AsyncGRPOConfig default"),
    ({"teacher_tokenizer_name_or_path": "t", "lmbda": 0.5}, 1e-7, "TRL's GOLDConfig default"),
    ({"missing_eos_penalty": 1.0, "max_new_tokens": 64, "beta": [0.1]}, 5e-7,
     "the default of each of NashMDConfig, OnlineDPOConfig and XPOConfig"),
    ({"tpo_alpha": 1.0, "beta": 0.1}, 5e-7, "TRL's TPOConfig default"),
], ids=["AsyncGRPO", "GOLD", "OnlineDPO", "TPO"])
def test_an_experimental_trl_recipe_is_read_by_the_fields_that_say_its_class(fields, lr, said):
    """A field no TRL trainer's class has says the experimental class (or classes, where they agree on the defaults)
    that reads the file; the report says which default it got and why."""
    built = optreg.build({"output_dir": "out", "max_steps": 10, **fields}, STAND_IN.model(), format="hf")
    assert {g["lr"] for g in built.optimizer.param_groups} == {lr}
    report = {u.path: (u.verdict, u.why) for u in built.experiment.report}
    verdict, why = report["learning_rate"]
    assert verdict == "exact" and said in why, why
    if "max_staleness" in fields:
        assert report["lr_scheduler_type"] == ("exact", "not given: TRL's AsyncGRPOConfig default 'constant' (the "
                                                        "file has max_staleness: AsyncGRPOConfig's fields)")


@pytest.mark.parametrize("cls", sorted(TRL_RECORDED))
def test_a_file_with_a_trl_class_fields_gets_its_defaults(cls):
    """A recipe that TRL's class reads (it has fields only that class has) and leaves learning_rate out trains at
    that class's default lr, not TrainingArguments' 5e-5."""
    field = TRL_RECORDED[cls]["own_fields"][0]
    config = {"output_dir": "out", "max_steps": 10, "lr_scheduler_type": "constant", field: None}
    built = optreg.build(config, STAND_IN.model(), format="hf")
    assert {g["lr"] for g in built.optimizer.param_groups} == {TRL_RECORDED[cls]["defaults"]["learning_rate"]}
    why = {u.path: (u.verdict, u.why) for u in built.experiment.report}["learning_rate"]
    assert why[0] == "exact" and cls in why[1]
    given = optreg.build({**config, "learning_rate": 0.125}, STAND_IN.model(), format="hf")
    assert {g["lr"] for g in given.optimizer.param_groups} == {0.125}


@pytest.mark.parametrize("extra, said", [
    ({}, "TRL's classes default to"),
    ({"packing": True, "sync_ref_model": False}, "no one TRL class has all of its TRL fields (packing, "
                                                 "sync_ref_model)"),
    ({"max_length": 512}, "SFTConfig, DPOConfig, ORPOConfig, KTOConfig and RewardConfig are the TRL classes that "
                          "have all of the file's TRL fields: max_length; they default to SFTConfig 2e-05, "
                          "DPOConfig 1e-06, ORPOConfig 1e-06, KTOConfig 1e-06, RewardConfig 0.0001"),
], ids=["no class fields", "two classes' fields", "classes that disagree"])
def test_a_file_of_no_one_trl_class_gets_training_arguments_defaults_and_says_so(extra, said):
    """A file whose TRL fields no class has all of, or several classes with different defaults have, is ambiguous:
    TrainingArguments' default, and the report says so and why."""
    config = {"output_dir": "out", "max_steps": 10, "lr_scheduler_type": "constant", **extra}
    built = optreg.build(config, STAND_IN.model(), format="hf")
    assert {g["lr"] for g in built.optimizer.param_groups} == {5e-5}
    verdict, why = {u.path: (u.verdict, u.why) for u in built.experiment.report}["learning_rate"]
    assert verdict == "approximate" and said in why and ("ambiguous" in why) == bool(extra)
    if not extra:
        assert all(f"{cls} {rec['defaults']['learning_rate']!r}" in why for cls, rec in TRL_RECORDED.items())


OPEN_R1_GRPO = """\
# open-r1's recipes/Qwen2.5-1.5B-Instruct/grpo/config_demo.yaml (huggingface/open-r1@1b6fcacd), learning_rate out
model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct
dataset_name: AI-MO/NuminaMath-TIR
num_processes: 7
bf16: true
use_vllm: true
vllm_device: auto
vllm_gpu_memory_utilization: 0.7
gradient_accumulation_steps: 16
log_completions: true
lr_scheduler_type: cosine
max_prompt_length: 512
max_completion_length: 1024
max_steps: -1
num_generations: 7
num_train_epochs: 1
output_dir: data/Qwen2.5-1.5B-Open-R1-GRPO
per_device_train_batch_size: 16
warmup_ratio: 0.1
"""


def test_a_grpo_recipe_without_learning_rate_gets_grpo_configs_default():
    """An open-r1 GRPO recipe (num_generations, use_vllm: fields GRPOConfig and RLOOConfig have, both 1e-6 by
    default) without learning_rate trains at 1e-6, not TrainingArguments' 5e-5 (max_completion_length, which
    ORPOConfig has too, made it ORPOConfig's); a GRPO-only field says GRPOConfig; `--format trl_reward` names
    RewardConfig (1e-4)."""
    built = optreg.build(OPEN_R1_GRPO, STAND_IN.model(), format="hf", steps_per_epoch=20)
    assert {g["initial_lr"] for g in built.optimizer.param_groups} == {1e-6}
    verdict, why = {u.path: (u.verdict, u.why) for u in built.experiment.report}["learning_rate"]
    assert (verdict, why) == ("exact", "not given: 1e-06, the default of each of GRPOConfig and RLOOConfig (the TRL "
                                       "classes that have all of the file's TRL fields: use_vllm, "
                                       "vllm_gpu_memory_utilization, log_completions and 2 more)")
    own = optreg.load_config(OPEN_R1_GRPO + "scale_rewards: group\n", format="hf")
    assert own.optimizer["lr"] == 1e-6 and {u.path: u.why for u in own.report}["learning_rate"] == (
        "not given: TRL's GRPOConfig default 1e-06 (the file has use_vllm, vllm_gpu_memory_utilization, "
        "log_completions and 3 more: GRPOConfig's fields)")
    reward = optreg.load_config("output_dir: out\nmax_steps: 10\nlr_scheduler_type: constant\n", format="trl_reward")
    assert reward.optimizer["lr"] == 1e-4


def test_a_recipes_trl_fields_are_reported_as_its_trl_trainers():
    """A recipe's TRL fields (num_generations, use_vllm) are no model or data arguments of the application: the
    report names the TRL classes that read them, as the learning_rate line does; an application's key stays its."""
    report = {u.path: (u.verdict, u.why) for u in optreg.load_config(OPEN_R1_GRPO, format="hf").report}
    assert report["num_generations"] == ("trainer", "a field of TRL's GRPOConfig and RLOOConfig: the TRL trainer's")
    assert report["max_completion_length"] == report["num_generations"]
    assert report["dataset_name"] == ("trainer", "not a TrainingArguments field: the application's (model or data "
                                                 "arguments)")
    forced = {u.path: u.why for u in optreg.load_config(OPEN_R1_GRPO, format="trl_grpo").report}
    assert forced["max_completion_length"] == "a field of TRL's GRPOConfig: the TRL trainer's"


def test_a_recipe_forced_into_a_trl_class_without_its_fields_is_warned_of(tmp_path, capsys):
    """open-r1's GRPO recipe read with `--format trl_sft` was accepted silently at SFTConfig's learning_rate: its TRL
    fields are another class's, and the reader warns of it at the first, naming the classes that have them and
    their learning_rate defaults; the class that has them reads it without a word."""
    from optreg.cli import main
    from optreg.errors import ConfigWarning

    with pytest.warns(ConfigWarning) as caught:
        optreg.load_config(OPEN_R1_GRPO, format="trl_sft")
    assert [w.message.note for w in caught if isinstance(w.message, ConfigWarning)] == [
        "use_vllm, vllm_gpu_memory_utilization, log_completions and 2 more: not fields of TRL's SFTConfig, whose "
        "defaults format trl_sft applies (learning_rate 2e-05), but of GRPOConfig (learning_rate 1e-06) and "
        "RLOOConfig (learning_rate 1e-06): the file is a recipe of one of them (--format trl_grpo, trl_rloo)"]
    recipe = tmp_path / "grpo.yaml"
    recipe.write_text(OPEN_R1_GRPO)
    assert main(["validate", str(recipe), "--format", "trl_sft", "--steps", "10"]) == 0
    assert capsys.readouterr().err.startswith(f"{recipe}:6:1: warning: use_vllm, vllm_gpu_memory_utilization, ")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        optreg.load_config(OPEN_R1_GRPO, format="trl_grpo")


@pytest.mark.parametrize("cls", sorted(TRL_RECORDED))
def test_a_trl_format_names_the_class_a_file_without_its_fields_is_read_by(cls):
    """A recipe with none of its TRL class's own fields gets that class's defaults when the caller names the class
    (`--format trl_sft`, `format="trl_dpo"`); the name claims no file by itself, and a given lr still wins."""
    from optreg.readers.hf import TRL_NAMES

    name = TRL_NAMES[cls]
    config = {"output_dir": "out", "max_steps": 10, "lr_scheduler_type": "constant"}
    assert formats.detect(config).name == "hf"
    built = optreg.build(config, STAND_IN.model(), format=name)
    assert {g["lr"] for g in built.optimizer.param_groups} == {TRL_RECORDED[cls]["defaults"]["learning_rate"]}
    assert built.experiment.format == name
    verdict, why = {u.path: (u.verdict, u.why) for u in built.experiment.report}["learning_rate"]
    assert verdict == "exact" and f"TRL's {cls} default" in why and f"format {name}" in why
    given = optreg.build({**config, "learning_rate": 0.125}, STAND_IN.model(), format=name)
    assert {g["lr"] for g in given.optimizer.param_groups} == {0.125}


def test_a_note_on_the_schedule_names_a_key_the_file_has():
    """The linter's note on the schedule is at lr_scheduler_kwargs where the file has it (a warmup_lr_rate of 0
    starts cosine_warmup_with_min_lr at lr 0); HF's own warmups start at 0 by design and get no note."""
    import warnings

    config = {"learning_rate": 1e-3, "lr_scheduler_type": "cosine", "warmup_steps": 10, "max_steps": 100}
    chosen = {**config, "lr_scheduler_type": "cosine_warmup_with_min_lr",
              "lr_scheduler_kwargs": {"min_lr_rate": 0.1, "warmup_lr_rate": 0.0}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert optreg.build(config, torch.nn.Linear(2, 2)).notes == []
        notes = optreg.build(chosen, torch.nn.Linear(2, 2)).notes
    assert notes == ["lr_scheduler_kwargs: the lr at step 0 is 0 (group 0's lr 0.001): the first optimizer step "
                     "updates nothing; start above 0 (warmup_steps)"]


@pytest.mark.parametrize("optim", sorted(hf_reader.LIBRARY_OPTIM))
def test_a_library_optim_builds_the_class_and_kwargs_the_trainer_builds(optim, tmp_path):
    """Each bitsandbytes / torchao name against transformers' own `Trainer.get_optimizer_cls_and_kwargs`: the same
    class, every kwarg it passes on each group, and (8-bit state: a 64 × 64 weight, above min_8bit_size and torchao's
    4,096) the same weights after three steps, bit for bit."""
    from transformers import Trainer, TrainingArguments

    args = {"learning_rate": 2e-3, "weight_decay": 0.1, "adam_beta1": 0.85, "adam_beta2": 0.97, "adam_epsilon": 1e-6,
            "optim": optim, "lr_scheduler_type": "constant", "max_steps": 3}
    if "ademamix" in optim:
        args["optim_args"] = "beta3=0.995,alpha=6,t_alpha=20"
    cls, kwargs = Trainer.get_optimizer_cls_and_kwargs(TrainingArguments(output_dir=str(tmp_path), use_cpu=True,
                                                                         report_to=[], **args))
    torch.manual_seed(0)
    ours_net, their_net = torch.nn.Linear(64, 64), torch.nn.Linear(64, 64)
    their_net.load_state_dict(ours_net.state_dict())
    ours = optreg.build(json.dumps(args) + "\n", ours_net).optimizer
    theirs = cls([{"params": [their_net.weight], "weight_decay": 0.1}, {"params": [their_net.bias],
                                                                         "weight_decay": 0.0}], **kwargs)
    assert type(ours) is cls
    grouped = [key for key in kwargs if key in ours.defaults]   # optim_bits, is_paged, block_size: not group keys
    assert "lr" in grouped and ("betas" in grouped) == ("rmsprop" not in optim)
    for group in ours.param_groups:
        for key in grouped:
            got = group[key]
            assert (tuple(got) if isinstance(got, (list, tuple)) else got) == kwargs[key], (key, got, kwargs[key])
    assert [g["weight_decay"] for g in ours.param_groups] == [0.1, 0.0]
    for step in range(3):
        for net in (ours_net, their_net):
            for p in net.parameters():
                p.grad = torch.randn(p.shape, generator=torch.Generator().manual_seed(step + p.dim()))
        ours.step()
        theirs.step()
    assert all(torch.equal(a, b) for a, b in zip(ours_net.parameters(), their_net.parameters()))
    # the state's kind (8-bit or 32-bit, torchao's 4-bit or 8-bit tensors) and paging: the kwargs outside the groups
    kinds = [[(k, type(v).__name__, getattr(v, "dtype", None)) for k, v in sorted(opt.state[p].items())]
             for opt, net in ((ours, ours_net), (theirs, their_net)) for p in net.parameters()]
    assert kinds[:2] == kinds[2:] and any(kinds[0])
    if optim.endswith("_8bit") and "torch" not in optim:   # bitsandbytes' 8-bit state on the 4,096-element weight
        assert torch.uint8 in {dtype for _, _, dtype in kinds[0]}, kinds[0]
    if "is_paged" in kwargs:
        assert ours.is_paged == theirs.is_paged == kwargs["is_paged"]


@pytest.mark.parametrize("optim, args, use, why", [
    ("adamw_torch", "momentum=0.9", "trainer", "the Trainer ignores momentum for adamw_torch"),
    ("sgd", "momentum=0.9,foo=1", "exact", "the Trainer ignores foo for sgd"),
    ("sgd", "momentum=0.9,nesterov=True", "exact", ""),
])
def test_optim_args_report_what_the_trainer_reads(optim, args, use, why):
    """The Trainer reads only its own keys of optim_args for each torch optimizer (none for AdamW)."""
    experiment = optreg.load_config(json.dumps({"learning_rate": 1e-3, "optim": optim, "optim_args": args,
                                                "lr_scheduler_type": "constant", "max_steps": 5}) + "\n")
    row = {u.path: u for u in experiment.report}["optim_args"]
    assert (row.verdict, row.why) == (use, why)


def test_an_error_of_the_reader_does_not_hide_the_schedule_s():
    """Every problem at once: a misspelt TrainingArguments field (the reader's) and a misspelt schedule kwarg."""
    items = errors_of({"learning_rate": 1e-3, "warmup_step": 5, "lr_scheduler_type": "cosine_with_min_lr",
                       "lr_scheduler_kwargs": {"min_lr_rat": 0.1}, "max_steps": 100})
    assert {path: item.suggestion for path, item in items.items()} == {
        "warmup_step": "warmup_steps", "lr_scheduler_kwargs.min_lr_rat": "min_lr_rate"}


def test_build_reports_the_schedule_s_problems_beside_the_reader_s_as_validate_does():
    """build() says the own form's problems beside the reader's, as validate (load_config) does: bad numbers (the own
    form checks them, in its options' order) and a misspelt schedule kwarg, the same errors."""
    text = json.dumps({"learning_rate": 1e-3, "weight_decay": -0.01, "adam_beta2": 1.5, "max_steps": 100,
                       "lr_scheduler_type": "cosine_with_min_lr", "lr_scheduler_kwargs": {"min_lr_rat": 0.1}})
    read, built = read_and_built(text + "\n")
    assert [e[:2] for e in built] == [e[:2] for e in read] == [
        ("adam_beta2", "must be < 1, got 1.5"), ("weight_decay", "must be >= 0, got -0.01"),
        ("lr_scheduler_kwargs.min_lr_rat", "unknown option of hf.cosine_with_min_lr")]


def test_a_merge_key_of_trainingarguments_yaml_is_read_as_hfargumentparser_reads_it(tmp_path):
    # HfArgumentParser's yaml.safe_load merges `<<`; optreg took it for the application's key `<<` and built the
    # Trainer's default learning_rate (5e-5) and scheduler
    path = tmp_path / "args.yaml"
    path.write_text("defaults: &d {learning_rate: 0.001, lr_scheduler_type: constant}\n<<: *d\nmax_steps: 10\n")
    experiment = optreg.load_config(path)
    assert experiment.optimizer["lr"] == 0.001 and experiment.scheduler["name"] == "constant"


def test_the_linter_s_warning_names_the_file_s_key_not_optreg_s_option(tmp_path):
    """A schedule that does not span the run was said as `max_steps: num_training_steps 100 spans ...`: its path was
    the file's key, its text optreg's option (HF's max_steps is get_linear_schedule_with_warmup's num_training_steps);
    both are the file's key now, as the errors' paths and texts are."""
    from optreg.errors import ConfigWarning

    path = tmp_path / "args.yaml"
    path.write_text("learning_rate: 0.001\nlr_scheduler_type: linear\nwarmup_steps: 10\nmax_steps: 100\n")
    with pytest.warns(ConfigWarning) as caught:
        optreg.build(str(path), STAND_IN.model(), total_steps=500)
    assert [(w.message.note, w.message.location.line) for w in caught if isinstance(w.message, ConfigWarning)] == [
        ("max_steps: max_steps 100 spans 100 steps, not the 500 steps of the run (total_steps=); set max_steps to 500",
         4)]

"""Model Zoo configs whole through `optreg.build` / `optreg run`: the two example configs, Model Zoo's grouping and
its opt-out, ScalePerParamLR and tagged groups, what the trainer applies around the optimizer, and the keys
Model Zoo 2.10 refuses (ConfigErrors with the path, the position and what replaced the key)."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
from torch import nn

import optreg
from optreg.config.experiment import validate_experiment
from optreg.config.run import ClipGrad
from optreg.errors import ConfigError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "cerebras"


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)


class Net(nn.Module):
    """decoder.*.dense.weight matches Model Zoo's default `decoder_kernel` lr-adjustment group."""

    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(5, 4)
        self.decoder = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(4, 2, bias=False)


def _names(model, group):
    ids = {id(p): n for n, p in model.named_parameters()}
    return [ids[id(p)] for p in group["params"]]


def _quiet_build(config, model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return optreg.build(config, model)


LEGACY = {"model": {}, "optimizer": {"optimizer_type": "AdamW", "weight_decay": 0.1,
                                     "learning_rate": [{"scheduler": "Linear", "initial_learning_rate": 0.0,
                                                        "end_learning_rate": 1.0, "total_iters": 10},
                                                       {"scheduler": "Constant", "learning_rate": 0.5}]}}


@pytest.mark.parametrize("name", ["legacy_gpt3_mup.yaml", "trainer_llama.yaml"])
def test_optreg_run_runs_the_examples(name):
    result = subprocess.run([sys.executable, "-m", "optreg.cli", "run", str(EXAMPLES / name), "--steps", "6"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "after 6 steps" in result.stdout
    assert "not the optimizer's" in result.stderr and "loss_scaling_factor" in result.stderr


def test_bias_and_norm_parameters_get_no_weight_decay_and_the_schedule_is_absolute():
    model = Net()
    built = _quiet_build(LEGACY, model)
    g = built.optimizer.param_groups
    assert [x["weight_decay"] for x in g] == [0.1, 0.0]
    assert _names(model, g[0]) == ["embedding.weight", "decoder.0.dense.weight", "decoder.1.dense.weight",
                                   "head.weight"]
    assert set(_names(model, g[1])) == {"decoder.0.dense.bias", "decoder.0.norm.weight", "decoder.0.norm.bias",
                                        "decoder.1.dense.bias", "decoder.1.norm.weight", "decoder.1.norm.bias"}
    lrs = []
    for _ in range(12):
        lrs.append(g[0]["lr"])
        built.scheduler.step()
    assert lrs[:3] == pytest.approx([0.0, 0.1, 0.2]) and lrs[10:] == [0.5, 0.5]


def test_modelzoo_groups_false_keeps_one_group():
    config = {**LEGACY, "optimizer": {**LEGACY["optimizer"], "modelzoo_groups": False}}
    built = _quiet_build(config, Net())
    assert len(built.optimizer.param_groups) == 1
    assert built.optimizer.param_groups[0]["weight_decay"] == 0.1


def test_adjust_learning_rate_scales_the_absolute_schedule_per_group():
    config = {**LEGACY, "optimizer": {**LEGACY["optimizer"], "adjust_learning_rate": {"decoder_kernel": 0.25}}}
    model = Net()
    built = _quiet_build(config, model)
    g = built.optimizer.param_groups
    assert [x["adjust_learning_rate"] for x in g] == [0.25, 1.0, 1.0]
    assert _names(model, g[0]) == ["decoder.0.dense.weight", "decoder.1.dense.weight"]
    for _ in range(4):
        built.scheduler.step()
    assert [x["lr"] for x in g] == pytest.approx([0.1, 0.4, 0.4])


def test_an_unknown_adjustment_group_is_an_error_with_a_suggestion():
    config = {**LEGACY, "optimizer": {**LEGACY["optimizer"], "adjust_learning_rate": {"decoder_kernal": 0.5}}}
    with pytest.raises(ConfigError) as info:
        optreg.build(config, Net())
    (error,) = info.value.errors
    assert error.path == "optimizer.adjust_learning_rate.decoder_kernal"
    assert error.suggestion == "decoder_kernel"


def test_a_misspelt_adjustment_group_is_said_by_validate(tmp_path, capsys):
    """`decoder_kernl` passed validate and failed at build only. The config's model section (gpt3 with a muP base)
    gives the model's groups: validate refuses it without the model, as build does, at its key, with the closest
    name. Without that section the model decides the names (its own lr_adjustment_groups, else Model Zoo's
    defaults): validate warns of a name that is not a default group, and `validate --model` refuses it."""
    from optreg.cli import main

    path = tmp_path / "mup.yaml"
    path.write_text((EXAMPLES / "legacy_gpt3_mup.yaml").read_text().replace("decoder_kernel:", "decoder_kernl:"))
    error = (f"{path}:17:5: optimizer.adjust_learning_rate.decoder_kernl: the model has no lr adjustment group "
             f"'decoder_kernl' (its groups: decoder_attention, decoder_input_ffn, decoder_kernel, decoder_output_ffn, "
             f"embedding) (did you mean 'decoder_kernel'?)")
    assert main(["validate", str(path)]) == 1 and capsys.readouterr().err.strip() == error
    with pytest.raises(ConfigError) as info:
        _quiet_build(str(path), Net())
    assert str(info.value) == error
    config = {**LEGACY, "optimizer": {**LEGACY["optimizer"], "adjust_learning_rate": {"decoder_kernl": 0.5}}}
    assert validate_experiment(config).check_final() == [
        "optimizer.adjust_learning_rate.decoder_kernl: not one of Model Zoo's default lr adjustment groups (embedding, "
        "decoder_kernel) (did you mean 'decoder_kernel'?); the model decides the names (its lr_adjustment_groups), "
        "and one that carries no group 'decoder_kernl' fails to build: give the model (validate --model) to check it"]
    path.write_text(path.read_text().replace("model:\n", "unused:\n"))
    assert main(["validate", str(path), "--model", "tests.test_modelzoo_configs:Net"]) == 1
    assert capsys.readouterr().err.strip() == (f"{path}:17:5: optimizer.adjust_learning_rate.decoder_kernl: the "
                                               f"model has no lr adjustment group 'decoder_kernl' (its groups: "
                                               f"decoder_kernel, embedding) (did you mean 'decoder_kernel'?)")


@pytest.mark.parametrize("scale, message", [(-1, "must be >= 0, got -1"), ("x", "expected a number, got str 'x'"),
                                            # it said `a parameter is claimed twice` at optimizer.params[1].params
                                            (1e300, "must be <= 1000000000, got 1e+300")])
def test_an_adjustment_scale_that_is_no_number_is_refused_by_validate_as_by_build(scale, message, tmp_path, capsys):
    """A scale of adjust_learning_rate must be a number >= 0 whatever the model's groups are: validate (no model)
    refuses it as build and plot do, at the same key, in the words of the own form's options (an lr_mult's)."""
    from optreg.cli import main

    path = tmp_path / "mup.yaml"
    path.write_text((EXAMPLES / "legacy_gpt3_mup.yaml").read_text().replace("decoder_kernel: 0.3333333333333333",
                                                                            f"decoder_kernel: {scale}"))
    error = f"{path}:17:5: optimizer.adjust_learning_rate.decoder_kernel: {message}"
    assert main(["validate", str(path)]) == 1 and capsys.readouterr().err.strip() == error
    with pytest.raises(ConfigError) as info:
        _quiet_build(str(path), Net())
    assert str(info.value) == error
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("AdamW", Net(), dialect="cerebras", lr=1e-3,
                                   adjust_learning_rate={"embedding": scale})
    assert str(info.value) == f"adjust_learning_rate.embedding: {message}"


def test_tagged_groups_and_a_weight_decay_schedule_on_one_tag():
    config = {"trainer": {"init": {
        "optimizer": {"AdamW": {"params": [{"params": "*dense.weight", "tag": "wd"}]}},
        "schedulers": [{"CosineDecayWD": {"initial_val": 0.04, "end_val": 0.4, "total_iters": 10,
                                          "param_group_tags": "wd"}},
                       {"ConstantLR": {"learning_rate": 0.01}}]}}}
    model = Net()
    built = _quiet_build(config, model)
    g = built.optimizer.param_groups
    # groups in the order of their first parameter; the tagged group's empty no-decay half is dropped
    assert [sorted(x.get("tags", [])) for x in g] == [[], [], ["wd"]]
    assert _names(model, g[2]) == ["decoder.0.dense.weight", "decoder.1.dense.weight"]
    assert [x["weight_decay"] for x in g] == pytest.approx([0.0, 0.0, 0.04])
    for _ in range(10):
        built.scheduler.step()
    assert [x["weight_decay"] for x in g] == pytest.approx([0.0, 0.0, 0.4])
    assert [x["lr"] for x in g] == [0.01] * 3


def test_a_scheduler_leaves_the_groups_outside_its_tags_alone():
    """A group outside a scheduler's param_group_tags keeps whatever it has: the scheduler neither computes nor
    writes its value (`Keep.keeps`). It used to write it back each step, and a group whose base value is 0 (no
    weight decay) was reset to 0 after a change made by hand."""
    config = {"trainer": {"init": {
        "optimizer": {"AdamW": {"params": [{"params": "*dense.weight", "tag": "wd"}]}},
        "schedulers": [{"CosineDecayWD": {"initial_val": 0.04, "end_val": 0.4, "total_iters": 10,
                                          "param_group_tags": "wd"}},
                       {"ConstantLR": {"learning_rate": 0.01}}]}}}
    built = _quiet_build(config, Net())
    g = built.optimizer.param_groups
    g[0]["weight_decay"] = 0.2   # by hand, on a group the weight-decay schedule does not drive
    for _ in range(3):
        built.scheduler.step()
    assert g[0]["weight_decay"] == 0.2 and g[1]["weight_decay"] == 0.0
    assert g[2]["weight_decay"] == pytest.approx(0.04 + (0.4 - 0.04) * (1 - math.cos(math.pi * 3 / 10)) / 2)


def test_clip_gradients_by_norm():
    config = {**LEGACY, "optimizer": {**LEGACY["optimizer"], "max_gradient_norm": 1.0}}
    model = Net()
    built = _quiet_build(config, model)
    assert built.clip == ClipGrad(max_norm=1.0)   # Model Zoo's max_gradient_norm is optreg's clip_grad.max_norm
    for p in model.parameters():
        p.grad = torch.full_like(p, 10.0)
    built.clip_gradients(model)
    total = torch.sqrt(sum((p.grad ** 2).sum() for p in model.parameters()))
    assert float(total) == pytest.approx(1.0, rel=1e-5)


@pytest.mark.parametrize("clipping, message", [
    # in the own form's words (models.number_message); it said 'must be a number > 0, got -1.0'
    ("max_gradient_norm: -1.0", "4:17: trainer.init.precision.max_gradient_norm: must be > 0, got -1.0"),
    ("max_gradient_value: x", "4:17: trainer.init.precision.max_gradient_value: expected a number, got str 'x'"),
    # the own form's clip_grad bound (run.clip_message); it raised pydantic's ValidationError from ClipGrad
    ("max_gradient_norm: 1.0e+10", "4:17: trainer.init.precision.max_gradient_norm: must be <= 1000000000, got "
                                   "10000000000.0"),
    ("max_gradient_value: .inf", "4:17: trainer.init.precision.max_gradient_value: must be a finite number, got inf"),
    ("max_gradient_norm: 1.0, max_gradient_value: 2.0",
     "4:41: trainer.init.precision.max_gradient_value: both max_gradient_norm and max_gradient_value are given; "
     "Cerebras clips by one"),
])
def test_the_clipping_is_checked_without_the_model_as_with_it(clipping, message, tmp_path, capsys):
    # validate without a model said ok where build refused the value
    from optreg.cli import main

    path = tmp_path / "clip.yaml"
    path.write_text(f"trainer:\n  init:\n    optimizer: {{SGD: {{lr: 0.1}}}}\n    precision: {{{clipping}}}\n")
    assert main(["validate", str(path)]) == 1 and capsys.readouterr().err.strip() == f"{path}:{message}"
    with pytest.raises(ConfigError) as info:
        _quiet_build(str(path), Net())
    assert str(info.value) == f"{path}:{message}"


def test_a_precision_key_that_is_not_a_name_is_noted_at_its_path():
    # a float key raised AttributeError from join_path ('float' object has no attribute 'startswith')
    experiment = optreg.load_config("trainer:\n  init:\n    optimizer: {SGD: {lr: 0.1}}\n    precision: {1.5: true}\n")
    assert experiment.notes == [
        "not the optimizer's: trainer.init.precision.1.5=True. Cerebras' trainer applies them around the optimizer "
        "(the trainer); optreg builds the optimizer and its schedules only"]


@pytest.mark.parametrize("text, message", [
    ("trainer:\n  init:\n    optimizer: {SGD: {lr: 0.1, modelzoo_groups: 1}}\n",
     "3:32: trainer.init.optimizer.SGD.modelzoo_groups: expected true or false, got int 1"),
    ("optimizer: {optimizer_type: SGD, learning_rate: 0.1, modelzoo_groups: 'no'}\n",
     "1:54: optimizer.modelzoo_groups: expected true or false, got str 'no'"),
])
def test_a_bad_modelzoo_groups_is_said_as_the_own_forms_boolean(text, message, tmp_path, capsys):
    # models.bool_message, an own-form boolean's words; it said 'must be true or false, got 1'
    from optreg.cli import main

    path = tmp_path / "groups.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 1 and capsys.readouterr().err.strip() == f"{path}:{message}"
    with pytest.raises(ConfigError) as info:
        _quiet_build(str(path), Net())
    assert str(info.value) == f"{path}:{message}"


def test_keys_around_the_optimizer_are_reported_in_one_warning():
    config = {**LEGACY, "optimizer": {**LEGACY["optimizer"], "loss_scaling_factor": "dynamic",
                                      "log_summaries": True}}
    with pytest.warns(UserWarning) as record:
        optreg.build(config, Net())
    notes = [str(w.message) for w in record if "not the optimizer's" in str(w.message)]
    assert len(notes) == 1
    assert "optimizer.loss_scaling_factor='dynamic'" in notes[0] and "optimizer.log_summaries=True" in notes[0]
    assert "loss scaling" in notes[0]


@pytest.mark.parametrize("text, expected", [
    # a constant is the optimizer's lr and its ConstantLR's: it was at optimizer.lr, the optimizer's line, and once
    # more at the ConstantLR's learning_rate
    ("model: {}\noptimizer:\n  optimizer_type: AdamW\n  learning_rate: -0.1\n",
     [("optimizer.learning_rate", "must be >= 0, got -0.1", 4, 3)]),
    ("trainer:\n  init:\n    optimizer:\n      AdamW:\n        learning_rate: -0.1\n",
     [("trainer.init.optimizer.AdamW.learning_rate", "must be >= 0, got -0.1", 5, 9)]),
])
def test_a_bad_learning_rate_is_said_at_the_key_the_file_writes(tmp_path, text, expected):
    """The optimizer's lr written as Cerebras writes it (learning_rate) has its error there, not at lr."""
    path = tmp_path / "modelzoo.yaml"
    path.write_text(text)
    for check in (lambda: optreg.load_config(path), lambda: _quiet_build(str(path), Net())):
        with pytest.raises(ConfigError) as info:
            check()
        assert [(e.path, e.message, e.location.line, e.location.column) for e in info.value.errors] == expected


AROUND_NOTE = ("Cerebras' trainer applies them around the optimizer ({}); optreg builds the optimizer and its "
               "schedules only")
CLIPS = "; gradient clipping is Built.clip_gradients(model), called between backward() and step()"


@pytest.mark.parametrize("config, notes", [
    ({"trainer": {"init": {"optimizer": {"AdamW": {"lr": 0.1, "loss_scaling_factor": "dynamic", "beta1": 0.9}},
                           "precision": {"enabled": True, "max_gradient_norm": 1.0, "log_loss_scale": True}}}},
     ["trainer.init.optimizer.AdamW.loss_scaling_factor: not an optimizer option; Model Zoo 2.10 ignores it there "
      "(give it under trainer.init.precision)",
      "trainer.init.optimizer.AdamW.beta1: Model Zoo 2.10 ignores it (use betas: [beta1, beta2] (Model Zoo 2.0)); "
      "the default applies",
      "not the optimizer's: trainer.init.precision.enabled=True, trainer.init.precision.log_loss_scale=True. "
      + AROUND_NOTE.format("a loss-scale summary; mixed precision") + CLIPS]),
    ({**LEGACY, "optimizer": {**LEGACY["optimizer"], "loss_scaling_factor": "dynamic", "log_summaries": True}},
     ["not the optimizer's: optimizer.loss_scaling_factor='dynamic', optimizer.log_summaries=True. "
      + AROUND_NOTE.format("loss scaling (cstorch.amp GradScaler); norm summaries")]),
    ({"trainer": {"init": {"optimizer": {"SGD": {"lr": 0.1}}, "sparsity": {"sparsity": 0.75, "algorithm": "rigl"}}}},
     ["not the optimizer's: trainer.init.sparsity={'sparsity': 0.75, 'algorithm': 'rigl'}. " + AROUND_NOTE.format(
         "weight sparsity: cstorch.sparse masks the weights and the optimizer's state, which optreg leaves dense")]),
    ({**LEGACY, "sparsity": {"type": "gmp", "sparsity": 0.5}},
     ["not the optimizer's: sparsity={'type': 'gmp', 'sparsity': 0.5}. " + AROUND_NOTE.format(
         "weight sparsity: cstorch.sparse masks the weights and the optimizer's state, which optreg leaves dense")]),
])
def test_keys_around_the_optimizer_are_the_same_notes_without_the_model_as_with_it(config, notes):
    # validate without a model said nothing of them (nor of a trainer key or a renamed key in the optimizer); a
    # sparsity section (params_gpt3_125m_rigl75.yaml's RigL) was dropped without a word: the run here is dense
    assert validate_experiment(config).check_final() == notes
    with pytest.warns(UserWarning) as record:
        optreg.build(config, Net())
    assert [str(w.message) for w in record] == notes


def test_an_older_steps_key_is_refused_with_its_replacement_and_position(tmp_path):
    # it was at optimizer.learning_rate.SequentialLR.schedulers[0].LinearLR.steps, the learning_rate key's line
    path = tmp_path / "old.yaml"
    path.write_text("model: {}\noptimizer:\n  optimizer_type: AdamW\n  learning_rate:\n"
                    "    - scheduler: Linear\n      initial_learning_rate: 0.0\n      end_learning_rate: 1.0e-4\n"
                    "      steps: 100\n    - scheduler: Constant\n      learning_rate: 1.0e-4\n")
    with pytest.raises(ConfigError) as info:
        optreg.load_config(path)
    error = info.value.errors[0]
    assert (error.path, error.location.line, error.location.column) == ("optimizer.learning_rate[0].steps", 8, 7)
    assert "Model Zoo 2.10 refuses `steps`" in error.message and "total_iters" in error.message
    assert error.suggestion == "total_iters"


LEGACY_SCHEDULES = """model: {}
optimizer:
  optimizer_type: AdamW
  learning_rate:
    - scheduler: Linear
      initial_learning_rate: -1.0
      end_learning_rate: 1.0e-4
      total_iters: 100
    - scheduler: Exponential
      initial_learning_rate: 1.0e-4
      decay_rate: -0.5
      total_iters: 10
"""
TRAINER_SCHEDULES = """trainer:
  init:
    optimizer:
      AdamW: {lr: 0.1, weight_decay: 0.1}
    schedulers:
      - SequentialLR:
          schedulers:
            - LinearLR: {initial_learning_rate: 0.0, end_learning_rate: -0.1, total_iters: 10}
            - ConstantLR: {learning_rate: 0.1}
      - CosineDecayWD:
          initial_val: -1.0
          end_val: 0.0
          total_iters: 10
"""


@pytest.mark.parametrize("text, expected", [
    # a legacy list is read as a SequentialLR of {LinearLR: ...} items: it was at
    # optimizer.learning_rate.SequentialLR.schedulers[0].LinearLR.initial_learning_rate, the list's line
    (LEGACY_SCHEDULES, [("optimizer.learning_rate[0].initial_learning_rate", "must be >= 0, got -1.0", 6, 7),
                        ("optimizer.learning_rate[1].decay_rate", "must be > 0, got -0.5", 11, 7)]),
    # one legacy item is read as {LinearLR: ...}: it was at optimizer.learning_rate.LinearLR.initial_learning_rate
    ("model: {}\noptimizer:\n  optimizer_type: SGD\n  learning_rate:\n    scheduler: Linear\n"
     "    initial_learning_rate: -1.0\n    end_learning_rate: 0.0\n    total_iters: 10\n",
     [("optimizer.learning_rate.initial_learning_rate", "must be >= 0, got -1.0", 6, 5)]),
    # the class's key was left out (trainer.init.schedulers[0].schedulers[0].end_learning_rate), the weight-decay
    # twin's initial_val named by the lr's option it is read as (trainer.init.schedulers[1].initial_learning_rate),
    # and a scheduler after one with an error was not checked
    (TRAINER_SCHEDULES, [("trainer.init.schedulers[0].SequentialLR.schedulers[0].LinearLR.end_learning_rate",
                          "must be >= 0, got -0.1", 8, 54),
                         ("trainer.init.schedulers[1].CosineDecayWD.initial_val", "must be >= 0, got -1.0", 11, 11)]),
])
def test_a_bad_scheduler_value_is_said_at_the_key_the_file_writes(tmp_path, capsys, text, expected):
    """A schedule Model Zoo converts (a legacy learning_rate, a weight-decay twin) or reads as optreg's spec (the
    {Name: {...}} key) has its errors at the file's own path and position, in validate and build alike."""
    from optreg.cli import main

    path = tmp_path / "modelzoo.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        _quiet_build(str(path), Net())
    assert [(e.path, e.message, e.location.line, e.location.column) for e in info.value.errors] == expected
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().err.splitlines() == [f"{path}:{line}:{column}: {p}: {m}"
                                                    for p, m, line, column in expected]


def test_trainer_form_sequential_stage_without_total_iters_is_refused():
    config = {"trainer": {"init": {"optimizer": {"SGD": {}}, "schedulers": [{"SequentialLR": {"schedulers": [
        {"ConstantLR": {"learning_rate": 0.1}}, {"ConstantLR": {"learning_rate": 0.01}}]}}]}}}
    with pytest.raises(ConfigError) as info:
        optreg.build(config, Net())
    assert info.value.errors[0].path == "trainer.init.schedulers[0].SequentialLR.schedulers[0].ConstantLR"
    assert "needs total_iters" in info.value.errors[0].message


def test_a_stage_s_total_iters_misspelt_is_said_at_the_key_written():
    config = {"trainer": {"init": {"optimizer": {"SGD": {}}, "schedulers": [{"SequentialLR": {"schedulers": [
        {"ConstantLR": {"learning_rate": 0.1, "total_iter": 5}}, {"ConstantLR": {"learning_rate": 0.01}}]}}]}}}
    with pytest.raises(ConfigError) as info:
        validate_experiment(config)
    (error,) = info.value.errors
    assert (error.path, error.suggestion) == ("trainer.init.schedulers[0].SequentialLR.schedulers[0].ConstantLR."
                                              "total_iter", "total_iters")
    assert error.message.startswith("every stage of a SequentialLR but the last needs total_iters")


@pytest.mark.parametrize("config, path", [
    ({"trainer": {"init": {"optimizer": {"SGD": {"lr": 0.1}}, "loop": {"max_step": 20}}}},
     "trainer.init.loop.max_step"),
    ({**LEGACY, "runconfig": {"max_step": 20, "num_steps": 5}}, "runconfig.max_step"),
])
def test_the_run_length_misspelt_is_said_at_the_key_written(config, path):
    # it was passed over: the run was left to the other sources (optreg run's 100 steps)
    with pytest.raises(ConfigError) as info:
        validate_experiment(config)
    assert [(e.path, e.message, e.suggestion) for e in info.value.errors] == [
        (path, "unknown key: the run length is max_steps", "max_steps")]


def test_an_unknown_optimizer_option_is_the_same_note_without_the_model_as_with_it():
    # Model Zoo ignores it: build warned, validate without a model said nothing; with the error's did-you-mean
    config = {"trainer": {"init": {"optimizer": {"AdamW": {"lr": 0.1, "weigth_decay": 0.1}}}}}
    note = ("trainer.init.optimizer.AdamW.weigth_decay: unknown option of cerebras.AdamW; ignored (did you mean "
            "'weight_decay'?)")
    assert validate_experiment(config).check_final() == [note]
    with pytest.warns(UserWarning) as record:
        optreg.build(config, Net())
    assert note in [str(w.message) for w in record]


def test_an_unknown_optimizer_option_of_a_file_is_warned_at_its_position_as_an_error_is(tmp_path):
    """Model Zoo's reader reads unknown optimizer keys leniently (unknown_keys="warn", as Model Zoo does): the note
    has the form of an error, file:line:col: path: message, did-you-mean included."""
    path = tmp_path / "mz.yaml"
    path.write_text("trainer:\n  init:\n    optimizer:\n      AdamW:\n        lr: 0.1\n        weigth_decay: 0.1\n")
    with pytest.warns(optreg.ConfigWarning) as record:
        optreg.build(path, Net())
    assert [str(w.message) for w in record] == [
        f"{path}:6:9: trainer.init.optimizer.AdamW.weigth_decay: unknown option of cerebras.AdamW; ignored (did you "
        f"mean 'weight_decay'?)"]


def test_sgd_without_lr_takes_the_schedule():
    config = {"trainer": {"init": {"optimizer": {"SGD": {"momentum": 0.9}},
                                   "schedulers": [{"ConstantLR": {"learning_rate": 0.02}}]}}}
    built = _quiet_build(config, Net())
    assert [g["lr"] for g in built.optimizer.param_groups] == [0.02, 0.02]


def test_configure_optimizer_then_configure_lr_scheduler_as_model_zoo_2_3_called_them():
    """cstorch.optim.configure_optimizer(optimizer_type, params, **section) with the section's learning_rate a
    schedule (a placeholder lr until the scheduler runs), then configure_lr_scheduler(..., adjust_learning_rate)."""
    model = Net()
    section = {"weight_decay": 0.1, "adjust_learning_rate": {"decoder_kernel": 0.5},
               "learning_rate": [{"scheduler": "Linear", "initial_learning_rate": 0.0, "end_learning_rate": 1.0,
                                  "total_iters": 10}, {"scheduler": "Constant", "learning_rate": 1.0}],
               "log_summaries": True}
    with pytest.warns(UserWarning, match="not the optimizer's: log_summaries"):
        optimizer = optreg.configure_optimizer("SGD", model, dialect="cerebras", unknown_keys="warn",
                                               **{k: v for k, v in section.items() if k != "learning_rate"},
                                               learning_rate=section["learning_rate"])
    g = optimizer.param_groups
    assert [x["adjust_learning_rate"] for x in g] == [0.5, 1.0, 1.0]
    assert [x["weight_decay"] for x in g] == [0.1, 0.1, 0.0]
    assert [x["lr"] for x in g] == [0.1] * 3    # the placeholder
    scheduler = optreg.configure_lr_scheduler(optimizer, section["learning_rate"],
                                              adjust_learning_rate=section["adjust_learning_rate"])
    for _ in range(4):
        optimizer.step()
        scheduler.step()
    assert [x["lr"] for x in g] == pytest.approx([0.2, 0.4, 0.4])


def test_a_number_with_adjust_learning_rate_is_the_constant_schedule_model_zoo_2_3_builds():
    """Model Zoo 2.0-2.3's configure_lr_scheduler turns a number into {scheduler: constant, learning_rate: x}, which
    adjust_learning_rate scales per group: the same call with the section's learning_rate a number keeps the muP
    scaling (it was refused, 'a number as learning_rate ... builds no scheduler'); another keyword beside it, which
    Model Zoo's call does not take, is still refused, alone."""
    model = Net()
    adjust = {"decoder_kernel": 0.5}
    optimizer = optreg.configure_optimizer("SGD", model, dialect="cerebras", adjust_learning_rate=adjust,
                                           learning_rate=0.4)
    scheduler = optreg.configure_lr_scheduler(optimizer, 0.4, adjust_learning_rate=adjust)
    for _ in range(2):
        optimizer.step()
        scheduler.step()
    assert [x["lr"] for x in optimizer.param_groups] == pytest.approx([0.2, 0.4, 0.4])
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(optimizer, 0.4, adjust_learning_rate=adjust, T_max=5)
    assert [e.path for e in info.value.errors] == ["T_max"]


def test_configure_lr_scheduler_reads_one_trainer_form_scheduler_with_tags():
    model = Net()
    optimizer = optreg.configure_optimizer("AdamW", model, dialect="cerebras",
                                           params=[{"params": "*dense.weight", "tag": "wd"}])
    scheduler = optreg.configure_lr_scheduler(optimizer, {"ConstantWD": {"val": 0.5, "param_group_tags": "wd"}})
    assert [x["weight_decay"] for x in optimizer.param_groups] == [0.0, 0.0, 0.5]
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(optimizer, {"ConstantLR": {"learning_rate": 0.1, "param_group_tags": "wdd"}})
    assert info.value.errors[0].path == "param_group_tags"
    del scheduler


# --- Model Zoo's grouping in optreg-form configs: the cerebras dialect's default, an explicit setting elsewhere ---
class _Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.ln_f = torch.nn.LayerNorm(4)
        self.embedding = torch.nn.Embedding(5, 4)


def _decays(opt):
    names = {id(p): n for n, p in _Block_model.named_parameters()}
    return sorted((names[id(p)], g["weight_decay"]) for g in opt.param_groups for p in g["params"])


_Block_model = _Block()
_MODELZOO_SPLIT = [("embedding.weight", 0.1), ("ln_f.bias", 0.0), ("ln_f.weight", 0.0), ("proj.bias", 0.0),
                   ("proj.weight", 0.1)]


def test_the_cerebras_dialect_groups_as_model_zoo_by_default_and_opts_out():
    section = {"name": "AdamW", "dialect": "cerebras", "lr": 0.01, "weight_decay": 0.1}
    assert _decays(optreg.build({"optimizer": section}, _Block_model).optimizer) == _MODELZOO_SPLIT
    assert _decays(optreg.configure_optimizer("AdamW", _Block_model, dialect="cerebras", lr=0.01,
                                              weight_decay=0.1)) == _MODELZOO_SPLIT
    off = optreg.build({"optimizer": {**section, "modelzoo_groups": False}}, _Block_model).optimizer
    assert _decays(off) == [(n, 0.1) for n, _ in _MODELZOO_SPLIT]
    assert _decays(optreg.configure_optimizer("AdamW", _Block_model, dialect="cerebras", lr=0.01, weight_decay=0.1,
                                              modelzoo_groups=False)) == [(n, 0.1) for n, _ in _MODELZOO_SPLIT]


def test_other_dialects_take_model_zoo_grouping_when_asked():
    torch_opt = optreg.build({"optimizer": {"name": "AdamW", "lr": 0.01, "weight_decay": 0.1}}, _Block_model)
    assert _decays(torch_opt.optimizer) == [(n, 0.1) for n, _ in _MODELZOO_SPLIT]
    asked = optreg.build({"optimizer": {"name": "AdamW", "lr": 0.01, "weight_decay": 0.1, "modelzoo_groups": True}},
                         _Block_model)
    assert _decays(asked.optimizer) == _MODELZOO_SPLIT
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer("AdamW", list(_Block_model.named_parameters()), lr=0.01, weight_decay=0.1,
                                   modelzoo_groups=True)
    assert info.value.errors[0].path == "modelzoo_groups" and "pass the Module itself" in str(info.value)


def test_adjust_learning_rate_scales_the_lr_schedulers_only():
    """Model Zoo wraps its lr schedulers in ScalePerParamLR when groups carry scales; a weight-decay scheduler
    sets the same weight decay in every group it drives."""
    config = {"trainer": {"init": {
        "optimizer": {"AdamW": {"lr": 0.1, "weight_decay": 0.1, "adjust_learning_rate": {"decoder_kernel": 0.5}}},
        "schedulers": [{"ConstantLR": {"learning_rate": 0.2}}, {"ConstantWD": {"val": 0.3}}]}}}
    model = Net()
    g = _quiet_build(config, model).optimizer.param_groups
    assert [x["adjust_learning_rate"] for x in g] == [0.5, 1.0, 1.0]
    assert [x["lr"] for x in g] == pytest.approx([0.1, 0.2, 0.2])
    assert [x["weight_decay"] for x in g] == pytest.approx([0.3, 0.3, 0.3])


def test_cerebras_adam_loading_a_torch_checkpoint_keeps_the_constructors_weight_decay():
    params = [torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(3))]
    theirs = torch.optim.Adam([{"params": params[:1], "weight_decay": 0.5}, {"params": params[1:]}], lr=0.1,
                              weight_decay=0.1)
    ours = optreg.configure_optimizer("cerebras.Adam", [{"params": params[:1]}, {"params": params[1:]}], lr=0.1,
                                      weight_decay=0.1)
    with pytest.warns(UserWarning, match=r"ignores param group 0's own weight_decay \(0.5\)"):
        ours.load_state_dict(theirs.state_dict())
    assert [g["weight_decay"] for g in ours.param_groups] == [0.1, 0.1]


@pytest.mark.parametrize("text, error", [
    # legacy list: a range the stage's options check, at the item's key (not the canonical spec's
    # `schedulers[1]`, at the list)
    ("optimizer:\n  optimizer_type: SGD\n  learning_rate:\n    - {scheduler: Linear, initial_learning_rate: 0.0, "
     "end_learning_rate: 0.1, total_iters: 5}\n    - scheduler: Linear\n      initial_learning_rate: 0.1\n"
     "      end_learning_rate: 0.0\n      total_iters: 0\n",
     "8:7: optimizer.learning_rate[1].total_iters: must be >= 1, got 0"),
    # legacy mapping: an unknown option at its key (not under the current form's `StepLR`)
    ("optimizer:\n  optimizer_type: SGD\n  learning_rate:\n    scheduler: Step\n    initial_learning_rate: 0.1\n"
     "    step_size: 5\n    gama: 0.5\n",
     "7:5: optimizer.learning_rate.gama: unknown option of Cerebras StepLR (did you mean 'gamma'?)"),
    # trainer form: a stage's range at the stage's key
    ("trainer:\n  init:\n    optimizer: {SGD: {}}\n    schedulers:\n      - SequentialLR:\n          schedulers:\n"
     "            - LinearLR: {initial_learning_rate: 0.0, end_learning_rate: 0.1, total_iters: 5}\n"
     "            - CosineDecayLR: {initial_learning_rate: -0.1, end_learning_rate: 0.0, total_iters: 5}\n",
     "8:31: trainer.init.schedulers[0].SequentialLR.schedulers[1].CosineDecayLR.initial_learning_rate: must be >= 0, "
     "got -0.1"),
], ids=["legacy_list", "legacy_mapping", "trainer_stage"])
def test_a_schedulers_option_is_refused_at_the_files_key(text, error, tmp_path, capsys):
    """An option of a schedule is checked on optreg's canonical spec; validate and build report it at the key the
    file writes, in either form."""
    from optreg.cli import main

    path = tmp_path / "mz.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        _quiet_build(str(path), Net())
    assert str(info.value) == f"{path}:{error}"
    assert main(["validate", str(path), "--steps", "10"]) == 1
    assert capsys.readouterr().err.strip() == f"{path}:{error}"


def test_a_trainer_key_in_the_optimizer_is_noted_at_its_position(tmp_path, capsys):
    """The note on a key of the trainer's precision inside the optimizer section is at the key's line and column, as
    every note that starts with its path is (it started 'PATH is not ...', which carried no position)."""
    from optreg.cli import main

    path = tmp_path / "mz.yaml"
    path.write_text("trainer:\n  init:\n    optimizer:\n      AdamW: {lr: 0.1, loss_scaling_factor: dynamic}\n")
    assert main(["validate", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"{path}:4:24: warning: trainer.init.optimizer.AdamW.loss_scaling_factor: not an optimizer option; Model Zoo "
        f"2.10 ignores it there (give it under trainer.init.precision)"]
    assert captured.out == f"{path}: ok\n"


def test_validate_lints_the_schedules_without_a_model_as_with_one(tmp_path, capsys):
    """The schedule linter's warnings on a Model Zoo file come from validate without --model too (as for optreg's
    own form), the same as with it, for the run its max_steps gives: they came only with --model (build's plan)."""
    from optreg.cli import main

    path = tmp_path / "mz.yaml"
    path.write_text("trainer:\n  init:\n    optimizer: {SGD: {lr: 0.1}}\n    schedulers:\n"
                    "      - LinearLR: {initial_learning_rate: 0.1, end_learning_rate: 0.0, total_iters: 100}\n"
                    "    loop: {max_steps: 50}\n")
    assert main(["validate", str(path)]) == 0
    alone = capsys.readouterr().err.splitlines()
    assert main(["validate", str(path), "--model", "tests.test_modelzoo_configs:_small"]) == 0
    assert capsys.readouterr().err.splitlines() == alone and len(alone) == 1
    assert alone[0].endswith("total_iters 100 spans 100 steps, more than the 50 steps of the run "
                             "(trainer.init.loop.max_steps): the schedule never finishes; set "
                             "trainer.init.schedulers[0].LinearLR.total_iters to 50")


@pytest.mark.parametrize("text, path, line, column, run", [
    # the trainer form: the warning was at trainer.init.schedulers[0].total_iters, the item's position (5:9)
    ("trainer:\n  init:\n    optimizer: {SGD: {lr: 0.1}}\n    schedulers:\n"
     "      - LinearLR: {initial_learning_rate: 0.1, end_learning_rate: 0.01, total_iters: 5}\n"
     "    loop: {max_steps: 20}\n", "trainer.init.schedulers[0].LinearLR.total_iters", 5, 73,
     "trainer.init.loop.max_steps"),
    # a one-item legacy list: it was at optimizer.learning_rate.total_iters, the learning_rate key's position (4:3)
    ("model: {}\noptimizer:\n  optimizer_type: SGD\n  learning_rate:\n"
     "    - {scheduler: Linear, initial_learning_rate: 0.1, end_learning_rate: 0.01, total_iters: 5}\n"
     "runconfig: {max_steps: 20}\n", "optimizer.learning_rate[0].total_iters", 5, 80, "runconfig.max_steps"),
    # a legacy mapping
    ("model: {}\noptimizer:\n  optimizer_type: SGD\n  learning_rate:\n    scheduler: Linear\n"
     "    initial_learning_rate: 0.1\n    end_learning_rate: 0.01\n    total_iters: 5\n"
     "runconfig: {max_steps: 20}\n", "optimizer.learning_rate.total_iters", 8, 5, "runconfig.max_steps"),
], ids=["trainer", "legacy_list", "legacy_mapping"])
def test_a_schedule_s_warning_is_at_the_path_and_position_of_an_error_on_the_same_key(text, path, line, column, run,
                                                                                       tmp_path, capsys):
    """The schedule linter's warning on an option of a schedule Model Zoo converts or reads as optreg's spec is at the
    file's path and position, as an error on that key is (validate with and without --model, build): the warning
    named the converted spec's path."""
    from optreg.cli import main

    file = tmp_path / "mz.yaml"
    file.write_text(text)
    note = (f"{path}: total_iters 5 spans 5 steps, under 0.9 × the 20 steps of the run ({run}): the schedule ends "
            f"early; set {path} to 20")
    for model in ([], ["--model", "tests.test_modelzoo_configs:_small"]):
        assert main(["validate", str(file), *model]) == 0
        assert capsys.readouterr().err.splitlines() == [f"{file}:{line}:{column}: warning: {note}"]
    with pytest.warns(optreg.ConfigWarning) as caught:
        optreg.build(str(file), Net())
    assert [str(w.message) for w in caught if "total_iters" in str(w.message)] == [f"{file}:{line}:{column}: {note}"]
    file.write_text(text.replace("total_iters: 5", "total_iters: -5"))
    assert main(["validate", str(file)]) == 1
    assert capsys.readouterr().err.splitlines() == [f"{file}:{line}:{column}: {path}: must be >= 1, got -5"]


# each went unchecked: build's scheduler failed at its first step past 1e18, a ConfigError without a path
@pytest.mark.parametrize("text, expected", [
    ("trainer:\n  init:\n    optimizer: {SGD: {lr: 0.1}}\n    schedulers:\n      - SequentialLR:\n"
     "          schedulers:\n"
     "            - LinearLR: {initial_learning_rate: 0.0, end_learning_rate: 0.1, total_iters: 5}\n"
     "            - ExponentialLR: {initial_learning_rate: 0.1, decay_rate: 1.0e+9, total_iters: 1}\n",
     "5:9: trainer.init.schedulers[0].SequentialLR: SequentialLR gives no usable lr at step 8 (1e+26)"),
    ("model: {}\noptimizer:\n  optimizer_type: SGD\n  learning_rate:\n"
     "    - {scheduler: Linear, initial_learning_rate: 0.0, end_learning_rate: 0.1, total_iters: 5}\n"
     "    - {scheduler: Exponential, initial_learning_rate: 0.1, decay_rate: 1.0e+9, total_iters: 1}\n",
     "4:3: optimizer.learning_rate: SequentialLR gives no usable lr at step 8 (1e+26)"),
    ("model: {}\noptimizer:\n  optimizer_type: SGD\n  learning_rate:\n    scheduler: Exponential\n"
     "    initial_learning_rate: 0.1\n    decay_rate: 1.0e+9\n    total_iters: 1\n",
     "4:3: optimizer.learning_rate: ExponentialLR gives no usable lr at step 3 (1e+26)"),
], ids=["trainer", "legacy_list", "legacy_mapping"])
def test_a_schedule_s_unusable_values_are_refused_at_the_key_the_file_writes(text, expected, tmp_path, capsys):
    """The values a schedule gives (check_schedule: finite, within bounds at the steps a run starts with) are
    checked for a Model Zoo file, in validate with and without --model and in build, and refused at the key the
    file writes the scheduler with and its position, as its planning errors are."""
    from optreg.cli import main

    path = tmp_path / "mz.yaml"
    path.write_text(text)
    for model in ([], ["--model", "tests.test_modelzoo_configs:_small"]):
        assert main(["validate", str(path), *model]) == 1
        assert capsys.readouterr().err.strip() == f"{path}:{expected}"
    with pytest.raises(ConfigError) as info:
        _quiet_build(str(path), Net())
    assert str(info.value) == f"{path}:{expected}"


def test_a_legacy_list_s_warning_on_the_whole_sequence_is_at_the_list(tmp_path, capsys):
    """A warning about the stages of a several-item legacy learning_rate list together is at the list the file
    writes (optimizer.learning_rate, its key's position), in validate with and without --model and in build: it
    was at optimizer.learning_rate.schedulers, which is no key of the file."""
    from optreg.cli import main

    file = tmp_path / "mz.yaml"
    file.write_text("model: {}\noptimizer:\n  optimizer_type: SGD\n  learning_rate:\n"
                    "    - {scheduler: Linear, initial_learning_rate: 0.0, end_learning_rate: 0.1, total_iters: 5}\n"
                    "    - {scheduler: Linear, initial_learning_rate: 0.1, end_learning_rate: 0.0, total_iters: 95}\n"
                    "runconfig: {max_steps: 50}\n")
    note = ("optimizer.learning_rate: the stages span 100 steps, more than the 50 steps of the run "
            "(runconfig.max_steps): the schedule never finishes; make the lengths of optimizer.learning_rate add "
            "up to 50")
    for model in ([], ["--model", "tests.test_modelzoo_configs:_small"]):
        assert main(["validate", str(file), *model]) == 0
        assert capsys.readouterr().err.splitlines() == [f"{file}:4:3: warning: {note}"]
    with pytest.warns(optreg.ConfigWarning) as caught:
        optreg.build(str(file), Net())
    assert [str(w.message) for w in caught] == [f"{file}:4:3: {note}"]


def _small() -> nn.Module:
    """A model for `optreg validate --model`."""
    return nn.Sequential(nn.Linear(2, 2))

"""Config formats (issue 25 item 2): detection by signature keys, forcing one with format= / --format, JSON files
read as files, and an application's own top-level keys left alone in every entry point (item 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from omegaconf import OmegaConf

import optreg
from optreg.cli import main
from optreg.config import formats
from optreg.errors import ConfigError
from optreg.train import make_model

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "cerebras"
OWN = {"optimizer": {"name": "SGD", "lr": 0.1}}
TRAINER = {"trainer": {"init": {"optimizer": {"SGD": {"lr": 0.2}}}}}
LEGACY = {"optimizer": {"optimizer_type": "SGD", "learning_rate": 0.3}}


def model():
    return make_model(8, 1, 0)


@pytest.mark.parametrize("data, name", [
    (OWN, "optreg"),
    (TRAINER, "modelzoo"),
    ({"trainer": [{"trainer": {"init": {"optimizer": {"SGD": {}}}}}]}, "modelzoo"),
    (LEGACY, "modelzoo_legacy"),                                  # no Model Zoo sections around it needed
    ({**OWN, "trainer": {"max_steps": 3}}, "optreg"),            # a bare trainer: (Lightning, NeMo) claims nothing
    ({"trainer": {"initial": 1}}, "optreg"),
    ({}, "optreg"),
    ({"optimizer": {"type": "AdamW", "params": {"lr": 1e-3}}}, "deepspeed"),
    ({"optimizer": {"name": "AdamW", "params": [{"params": "*.bias"}]}}, "optreg"),   # a list: not DeepSpeed's params
    ({"scheduler": {"name": "StepLR", "params": "x"}}, "optreg"),
])
def test_each_format_claims_a_file_by_its_signature(data, name):
    assert formats.detect(data).name == name
    assert formats.detect(OmegaConf.create(data)).name == name


def test_two_claims_are_an_error_naming_both_and_format():
    with pytest.raises(ConfigError) as info:
        optreg.build({**TRAINER, **LEGACY}, model())
    assert str(info.value) == ("the config has the signature of 2 formats: modelzoo (trainer.init), modelzoo_legacy "
                               "(optimizer.optimizer_type); choose one with format= (--format NAME)")
    built = optreg.build({**TRAINER, **LEGACY}, model(), format="modelzoo")
    assert type(built.optimizer).__name__ == "SGD" and built.optimizer.param_groups[0]["lr"] == 0.2
    assert built.experiment.format == "modelzoo"


@pytest.mark.parametrize("text, line, key, first", [
    ("optimizer:\n  name: SGD\n  lr: 0.1\n  optimizer_type: AdamW\n", 4, "optimizer_type", "name"),
    ("optimizer:\n  optimizer_type: AdamW\n  lr: 0.1\n  name: SGD\n", 4, "name", "optimizer_type"),
], ids=["name first", "optimizer_type first"])
def test_name_beside_optimizer_type_is_an_error_at_the_second_not_a_model_zoo_file(text, line, key, first, tmp_path,
                                                                                    capsys):
    """An optimizer section with both `name:` and `optimizer_type:` is optreg's own form (no Model Zoo params file
    names its optimizer but by optimizer_type), where both name the optimizer: an error at the second one written;
    it was read as a legacy params file that ignored `name` with a warning."""
    assert formats.detect(OmegaConf.create(text)).name == "optreg"
    path = tmp_path / "c.yaml"
    path.write_text(text)
    message = f"optimizer.{key}: both {first!r} and {key!r} name the optimizer; keep one"
    for call in (lambda: optreg.load_config(str(path)), lambda: optreg.build(str(path), model())):
        with pytest.raises(ConfigError) as info:
            call()
        assert [str(e) for e in info.value.errors] == [f"{path}:{line}:3: {message}"]
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().err == f"{path}:{line}:3: {message}\n"


@pytest.mark.parametrize("spec, key, first", [
    ({"name": "StepLR", "step_size": 2, "type": "ExponentialLR"}, "type", "name"),
    ({"type": "ExponentialLR", "gamma": 0.5, "name": "StepLR"}, "name", "type"),
], ids=["name first", "type first"])
def test_a_scheduler_spec_with_two_name_keys_is_an_error_at_the_second_written(spec, key, first):
    """A scheduler spec of a call or a sequence's stage names its scheduler once: the second name key as written is
    the error, as in a file's optimizer section (one rule, `names.name_key`; the stage's rule took them in the
    order of NAME_KEYS, so a `type` written first was the error at `type` though `name` came after it)."""
    opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1)
    message = f"both {first!r} and {key!r} name the scheduler; keep one"
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(opt, spec)
    assert [(e.path, e.message) for e in info.value.errors] == [(key, message)]
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(opt, {"name": "sequential", "schedulers": [spec, {"name": "ConstantLR"}],
                                            "milestones": [2]})
    assert [(e.path, e.message) for e in info.value.errors] == [(f"schedulers[0].{key}", message)]


def test_a_list_at_optimizer_params_is_optreg_s_own_form_and_its_error_names_the_key():
    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": {"name": "AdamW", "params": [{"params": "*.bias", "weight_decay": 0}]}}, model())
    assert [item.path for item in info.value.errors] == ["optimizer.params"]
    assert "unknown option of torch.AdamW" in str(info.value)


def test_each_reader_builds_its_form_in_build_and_from_yaml(tmp_path):
    lrs = {}
    for name, data in (("optreg", OWN), ("modelzoo", TRAINER), ("modelzoo_legacy", LEGACY)):
        path = tmp_path / f"{name}.yaml"
        path.write_text(json.dumps(data))
        for config in (data, path, OmegaConf.create(data)):
            built = optreg.build(config, model())
            assert built.experiment.format == name
            lrs.setdefault(name, set()).add(built.optimizer.param_groups[0]["lr"])
    assert lrs == {"optreg": {0.1}, "modelzoo": {0.2}, "modelzoo_legacy": {0.3}}


def test_a_forced_format_reads_the_file_as_that_form_and_says_what_it_lacks():
    with pytest.raises(ConfigError) as info:
        optreg.build(OWN, model(), format="modelzoo")
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("trainer", "required: Model Zoo's trainer section (trainer: {init: {optimizer: ..., schedulers: ...}})")]
    with pytest.raises(ConfigError) as info:
        optreg.build(OWN, model(), format="modelzo")
    assert (info.value.errors[0].path, info.value.errors[0].suggestion) == ("format", "modelzoo")
    assert "unknown config format 'modelzo'; formats: optreg, modelzoo, modelzoo_legacy" in str(info.value)


def test_a_misspelt_format_argument_is_at_no_position_of_the_file(tmp_path, capsys):
    """An unknown --format (format=) is the argument's error, with its did-you-mean, in every command that takes it
    (after the file's name, as every command names the file of an error no position locates) and in build from a
    path, text or a composed file: it was located at the file's first key (q.yaml:3:1), as if the file wrote it."""
    message = ("format: unknown config format 'deepspeeed'; formats: " + ", ".join(formats.formats())
               + " (did you mean 'deepspeed'?)")
    path = tmp_path / "q.yaml"
    path.write_text("# a comment\n\noptimizer: {name: SGD, lr: 0.1}\n")
    composed = tmp_path / "c.yaml"
    composed.write_text("defaults: [_self_]\noptimizer: {name: SGD, lr: 0.1}\n")
    for argv, shown in ((["validate", str(path)], f"{path}: {message}"), (["validate", str(composed)],
                                                                          f"{composed}: {message}"),
                        (["validate", str(path), "optimizer.lr=0.2"], f"{path}: {message}"),
                        (["run", str(path)], f"{path}: {message}"),
                        (["plot", str(path), "--csv"], f"{path}: {message}"),
                        (["convert", str(path)], f"{path}: {message}"),
                        (["groups", str(path), "--model", "torch.nn:Linear"], f"{path}: {message}")):
        assert main([*argv, "--format", "deepspeeed"]) == 1, argv
        assert capsys.readouterr().err == f"{shown}\n", argv
    for config in (str(path), path.read_text(), str(composed)):
        with pytest.raises(ConfigError) as info:
            optreg.build(config, model(), format="deepspeeed")
        [error] = info.value.errors
        assert (error.path, error.location, error.suggestion, str(info.value)) == ("format", None, "deepspeed",
                                                                                   message)


def test_json_paths_are_read_as_files_with_positions(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{\n  "optimizer": {\n    "name": "SGD",\n    "lr": -1\n  }\n}\n')
    with pytest.raises(ConfigError) as info:
        optreg.build(str(path), model())
    error = info.value.errors[0]
    assert (error.path, error.location.file, error.location.line) == ("optimizer.lr", str(path), 4)
    path.write_text(json.dumps(OWN))
    assert optreg.build(str(path), model()).optimizer.param_groups[0]["lr"] == 0.1


@pytest.mark.parametrize("kind", ["dict", "yaml", "dictconfig"])
def test_an_applications_own_top_level_keys_are_left_alone_everywhere(kind, tmp_path):
    data = {**OWN, "seed": 3, "model": {"_target_": "my.Model", "width": [1, 2]}, "trainer": {"max_steps": 3}}
    config = {"dict": data, "dictconfig": OmegaConf.create(data)}.get(kind)
    if kind == "yaml":
        config = tmp_path / "app.yaml"
        config.write_text(json.dumps(data))
    assert optreg.build(config, model()).optimizer.param_groups[0]["lr"] == 0.1


@pytest.mark.parametrize("key, meant", [("optimiser", "optimizer"), ("schedular", "scheduler"), ("dialet", "dialect")])
def test_a_misspelt_own_section_is_an_error_with_a_did_you_mean(key, meant, tmp_path):
    data = {**OWN, key: {"name": "StepLR"}}
    path = tmp_path / "c.yaml"
    path.write_text(f"optimizer: {{name: SGD, lr: 0.1}}\n{key}: {{name: StepLR}}\n")
    for config in (data, path, OmegaConf.create(data)):
        with pytest.raises(ConfigError) as info:
            optreg.build(config, model())
        error = info.value.errors[0]
        assert (error.path, error.message, error.suggestion) == (
            key, "unknown top-level key; expected dialect, optimizer, scheduler, train, clip_grad", meant)
        assert (error.location.line if config is path else None) == (2 if config is path else None)


@pytest.mark.parametrize("text, key, meant, theirs", [
    ("output_dir: x\nlearning_rat: 0.01\nmax_steps: 5\n", "learning_rat", "learning_rate",
     "output_dir, max_steps are hf's, which claims a file by lr_scheduler_type"),
    ("optim_wraper:\n  optimizer: {type: AdamW, lr: 0.1}\nparam_scheduler: []\n", "optim_wraper", "optim_wrapper",
     "param_scheduler is mmengine's, which claims a file by optim_wrapper"),
])
def test_a_file_that_misspells_the_key_its_format_is_claimed_by_is_told_the_format_and_the_key(text, key, meant,
                                                                                                 theirs, tmp_path):
    """A file no format claims, because the key that would claim it is misspelt, is not only "optimizer: required"
    (optreg's own form): the error names the format its other keys are of, and the misspelt key, at its line, with
    a did-you-mean; in Python, from YAML and in the CLI alike."""
    path = tmp_path / "c.yaml"
    path.write_text(text)
    for config in (path, OmegaConf.create(OmegaConf.load(path))):
        with pytest.raises(ConfigError) as info:
            optreg.build(config, model())
        required, misspelt = info.value.errors
        assert required.path == "optimizer" and theirs in required.message and "--format NAME" in required.message
        assert required.message.count(" are ") + required.message.count(" is ") == 1   # one format named
        assert (misspelt.path, misspelt.suggestion) == (key, meant)
        assert misspelt.message.startswith("unknown key: no format has it")
        assert (misspelt.location.line if config is path else None) == (2 if config is path and key ==
                                                                          "learning_rat" else 1 if config is path
                                                                          else None)
    assert main(["validate", str(path)]) == 1
    with pytest.raises(ConfigError) as forced:   # forcing the format reads the file as it and names its problem
        optreg.build(path, model(), format=theirs.split("'s")[0].split()[-1])
    assert forced.value.errors


@pytest.mark.parametrize("command", ["validate", "run", "plot", "groups"])
def test_the_cli_forces_a_format(command, tmp_path, capsys):
    path = tmp_path / "both.yaml"
    path.write_text(json.dumps({**TRAINER, **LEGACY, "train": {"steps": 2}}))
    extra = {"run": [], "validate": [], "plot": ["--text", "--steps", "2"],
             "groups": ["--model", "optreg.train:TinyMLP"]}[command]
    assert main([command, str(path), *extra]) == 1
    assert "choose one with format= (--format NAME)" in capsys.readouterr().err
    assert main([command, str(path), *extra, "--format", "modelzoo_legacy"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    if command == "groups":
        assert "0.3" in out
    if command == "validate":
        assert out == f"{path}: ok\n"


def test_validate_with_a_model_plans_the_groups(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1, param_groups: [{params: 'nothing.*', lr: 1}]}\n")
    assert main(["validate", str(path)]) == 0
    capsys.readouterr()
    assert main(["validate", str(path), "--model", "optreg.train:TinyMLP"]) == 1
    assert "optimizer.param_groups[0].params: " in capsys.readouterr().err


def test_optreg_formats_lists_the_readers():
    assert list(optreg.formats()) == list(formats.BUILTIN)
    assert list(formats.BUILTIN)[:3] == ["optreg", "modelzoo", "modelzoo_legacy"]
    assert {"deepspeed", "hf", "mmengine", "nemo", "mindformers", "libai"} <= set(formats.BUILTIN)
    assert all(isinstance(f, formats.ConfigFormat) for f in optreg.formats().values())


def test_a_python_config_is_read_only_by_a_format_that_reads_python_and_never_executed(tmp_path, monkeypatch):
    flag = tmp_path / "ran"
    path = tmp_path / "config.py"
    path.write_text(f"open({str(flag)!r}, 'w').write('executed')\noptimizer = dict(name='sgd', lr=0.1)\n")
    with pytest.raises(ConfigError) as err:
        optreg.load_config(str(path))
    assert "never executes a config" in str(err.value) and str(path) in str(err.value)
    assert not flag.exists()

    class PyFormat:   # a format that reads Python files: here, one that recognises a marker comment
        name, doc, signature = "pyform", "test", "optimizer.name"

        def claims(self, data):
            return False

        def sections(self, data):
            return ["optimizer"]

        def read(self, data, source=None):
            return formats.get("optreg").read(data, source)

        def read_python(self, text, name, path):
            if not text.startswith("open("):
                return None
            from optreg.config.yaml_loader import load_yaml

            return load_yaml("optimizer: {name: sgd, lr: 0.1}\n", name)

    formats.formats()   # the built-ins loaded first, then the test's reader beside them
    monkeypatch.setitem(formats._FORMATS, "pyform", PyFormat())
    experiment = optreg.load_config(str(path))
    assert experiment.optimizer["name"] == "sgd" and not flag.exists()


def test_a_run_length_left_to_the_trainer_is_refused_alike_by_validate_and_build(capsys):
    """DeepSpeed's `"auto"` total_num_steps is the run's length: without one, validate says so at that key as build
    does (its verdict is build's), and `--steps` / `total_steps=` give it."""
    path = Path(__file__).resolve().parent.parent / "examples" / "deepspeed" / "ds_config.json"
    message = ("scheduler.params.total_num_steps: the run length, which the file leaves to the trainer: give it with "
               "--steps N (optreg validate / run / plot / convert) or build(..., total_steps=N)")
    assert main(["validate", str(path)]) == 1
    assert message in capsys.readouterr().err
    with pytest.raises(ConfigError) as info:
        optreg.build(path, model())
    assert message in str(info.value) and info.value.errors[0].location.line > 1
    assert main(["validate", str(path), "--steps", "100"]) == 0
    assert capsys.readouterr().out.strip().endswith("ds_config.json: ok")
    assert optreg.build(path, model(), total_steps=100).run.steps == 100

"""`optreg groups CONFIG --model MODULE:CALLABLE [--json]`: the dry run of the parameter groups."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import optreg
from optreg.cli import main

REPO = Path(__file__).resolve().parents[1]
VIT = str(REPO / "examples" / "finetune_vit.yaml")
RESNET = str(REPO / "examples" / "finetune_resnet.yaml")


@pytest.fixture(autouse=True)
def in_repo(monkeypatch):
    monkeypatch.chdir(REPO)          # the factory module is found from the current directory, as a user runs it


def test_table_of_the_vit_example(capsys):
    assert main(["groups", VIT, "--model", "examples.finetune_models:tiny_vit"]) == 0
    out = capsys.readouterr().out
    for column in ("group", "rule", "selectors", "params", "numel", "lr", "weight_decay", "layer", "first names"):
        assert column in out
    assert "0.000316406" in out and "0.000421875" in out and "0.0005625" in out and "0.00075" in out
    assert "no_weight_decay" in out and "lr_mult: 10" in out


@pytest.mark.parametrize("setting", ["hf_decay_groups", "modelzoo_groups", "no_weight_decay"])
def test_a_group_without_weight_decay_names_the_setting_that_made_it(setting, tmp_path, capsys):
    """A dialect's decay rule is a setting of its own: the table names it, not no_weight_decay."""
    path = tmp_path / "decay.yaml"
    path.write_text(f"optimizer: {{name: AdamW, lr: 0.01, weight_decay: 0.1, {setting}: true}}\n")
    assert main(["groups", str(path), "--model", "examples.finetune_models:tiny_vit", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    undecayed = [r for r in rows if r["no_weight_decay"]]
    assert undecayed and all(r["weight_decay"] == 0 and r["no_decay_key"] == setting for r in undecayed)
    assert main(["groups", str(path), "--model", "examples.finetune_models:tiny_vit"]) == 0
    assert f"default  {setting}" in capsys.readouterr().out


def test_json_rows_are_the_built_rows(capsys):
    from examples.finetune_models import tiny_resnet

    assert main(["groups", RESNET, "--model", "examples.finetune_models:tiny_resnet", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    built = optreg.build(RESNET, tiny_resnet()).group_table()
    assert rows == json.loads(json.dumps(built, default=str))
    assert [(r["rule"], r["params"], r["lr"], r["weight_decay"]) for r in rows] == [
        ("optimizer.param_groups[0]", 2, 0.1, 1e-4), ("optimizer.param_groups[1]", 10, 0.01, 0.0),
        ("optimizer.param_groups[2]", 2, 0.001, 1e-4), ("default", 3, 0.01, 1e-4), ("frozen", 3, None, None)]


def test_overrides_apply(capsys):
    assert main(["groups", VIT, "optimizer.layer_decay.rate=0.5", "--model", "examples.finetune_models:tiny_vit",
                 "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted({r["lr"] for r in rows}) == pytest.approx([1e-3 * 0.5 ** 4, 1e-3 * 0.5 ** 3, 1e-3 * 0.5 ** 2,
                                                             1e-3 * 0.5, 1e-3, 1e-2])


def test_the_dry_run_creates_no_optimizer(monkeypatch, capsys):
    created = []
    monkeypatch.setattr(torch.optim.SGD, "__init__", lambda *a, **k: created.append(1))
    assert main(["groups", RESNET, "--model", "examples.finetune_models:tiny_resnet"]) == 0
    assert not created and "frozen" in capsys.readouterr().out


@pytest.mark.parametrize("spec, message", [
    ("examples.finetune_models", "--model: expected MODULE:CALLABLE (e.g. examples.finetune_models:tiny_vit), got "
                                 "'examples.finetune_models'"),
    ("no_such_module_here:f", "--model: cannot import 'no_such_module_here': No module named 'no_such_module_here'"),
    ("examples.finetune_models:tiny_vti", "--model: examples.finetune_models has no 'tiny_vti' (did you mean "
                                          "'tiny_vit'?)"),
    ("examples.finetune_models:TinyViT.no_weight_decay", "--model: examples.finetune_models.TinyViT.no_weight_decay() "
                                                         "raised TypeError"),
    # not a model: said at --model (it was the config's first line: 'vit.yaml:1:1: params: params must be ...')
    ("os:getcwd", "--model: os:getcwd() returned str, not the model (a torch.nn.Module)"),
])
@pytest.mark.parametrize("command", ["groups", "validate"])
def test_bad_model_specs(command, spec, message, capsys):
    """Each at --model, with no file position (what a factory returned was planned against the file: `params: ...`
    at the file's first key)."""
    assert main([command, VIT, "--model", spec]) == 1
    err = capsys.readouterr().err
    assert err.startswith(message.replace("examples.finetune_models.TinyViT", "examples.finetune_models:TinyViT")), err


def test_config_errors_carry_the_file_position(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("optimizer:\n  name: AdamW\n  param_groups:\n    - modules: LayerNrom\n")
    assert main(["groups", str(bad), "--model", "examples.finetune_models:tiny_vit"]) == 1
    assert capsys.readouterr().err.startswith(f"{bad}:4:7: optimizer.param_groups[0].modules: no module of the "
                                              f"model is a LayerNrom")


@pytest.mark.filterwarnings("ignore::optreg.ConfigWarning")   # the build of a warmup from 0: not the point
@pytest.mark.parametrize("config", [str(REPO / "examples" / "deepspeed" / "ds_config.json"),   # total_num_steps auto
                                    str(REPO / "tests" / "fixtures" / "hf" / "corpus" /
                                        "zephyr-7b-beta__sft__config_full.yaml")])          # num_train_epochs
def test_a_file_that_leaves_the_run_length_to_the_trainer_shows_its_groups(config, capsys):
    """The groups do not depend on the run length: `groups` (which has no --steps) needs none, and its rows are
    the built ones of any run."""
    from examples.finetune_models import tiny_vit

    assert main(["groups", config, "--model", "examples.finetune_models:tiny_vit", "--json"]) == 0
    captured = capsys.readouterr()
    assert "--steps" not in captured.err
    rows = json.loads(captured.out)
    built = optreg.build(config, tiny_vit(), total_steps=30).group_table()
    assert rows == json.loads(json.dumps(built, default=str)) and len(rows) >= 1


def test_the_group_table_lists_a_dialects_group_keys_with_the_options():
    """A rule's group keys that are no options (OneFlow's clip_grad_max_norm, MindSpore's grad_centralization) are
    the rule's settings as much as its options: the table's `options` lists them."""
    import torch

    import optreg

    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
    for name, key, value in (("oneflow.AdamW", "clip_grad_max_norm", 1.0),
                             ("mindspore.Adam", "grad_centralization", True)):
        built = optreg.build({"optimizer": {"name": name, "param_groups": [
            {"params": "*.bias", "weight_decay": 0.0, key: value}]}}, model)
        assert built.group_table()[0]["options"] == {"weight_decay": 0.0, key: value}


def test_a_rule_over_the_frozen_stem_only_is_a_warning_at_its_position(tmp_path, capsys):
    """tiny_resnet's stem is frozen: a rule over it makes no group, which validate and groups with --model say as a
    warning at the rule's params in the file (build's ConfigWarning), and still succeed. They said nothing."""
    path = tmp_path / "stem.yaml"
    path.write_text("optimizer:\n  name: SGD\n  lr: 0.01\n  param_groups:\n"
                    "    - {params: [conv1.*, bn1.*], lr_mult: 0.1}\n")
    note = (f"{path}:5:8: warning: optimizer.param_groups[0].params: every parameter it matches is frozen "
            f"(requires_grad=False: conv1.weight, bn1.weight, bn1.bias), so it makes no group; frozen parameters stay "
            f"out of the optimizer: build it again once they are unfrozen\n")
    model = "examples.finetune_models:tiny_resnet"
    assert main(["validate", str(path), "--model", model]) == 0
    assert capsys.readouterr().err == note
    assert main(["groups", str(path), "--model", model, "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == note
    assert [r["rule"] for r in json.loads(captured.out)] == ["default", "frozen"]

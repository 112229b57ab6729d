"""`optreg groups CONFIG --model MODULE:CALLABLE [--json]`: the dry run of the parameter groups."""

from __future__ import annotations

import functools
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
    monkeypatch.setattr(torch.optim.SGD, "__init__", _recorded(torch.optim.SGD.__init__, created))
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
    """The groups do not depend on the run length: `groups` needs none, and its rows are the built ones of any run,
    each with the lr it is built with (the first step's of a schedule that sets the lr itself may depend on the run:
    a warmup ratio). With --steps, the rows of a build of that run: DeepSpeed's WarmupLR sets the lr itself (its
    first step's, warmup_min_lr 0), Hugging Face's schedule scales each group's own."""
    from examples.finetune_models import tiny_vit

    assert main(["groups", config, "--model", "examples.finetune_models:tiny_vit", "--json"]) == 0
    captured = capsys.readouterr()
    assert "--steps" not in captured.err
    rows = json.loads(captured.out)
    built = optreg.build(config, tiny_vit(), total_steps=30)
    table = json.loads(json.dumps(built.group_table(), default=str))
    assert [{**r, "lr": None, "own_lr": None} for r in rows] == [{**r, "lr": None, "own_lr": None} for r in table]
    assert len(rows) >= 1 and all("own_lr" not in r for r in rows)   # no schedule's first step: the built lrs
    assert [r["lr"] for r in rows] == [g.lr for g in built.groups]
    assert main(["groups", config, "--steps", "30", "--model", "examples.finetune_models:tiny_vit", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == table
    first = [g["lr"] for g in built.optimizer.param_groups]
    assert [r["lr"] for r in rows] == (first if config.endswith(".json") else [g.lr for g in built.groups])
    assert first == [0.0] * len(rows)


@pytest.mark.filterwarnings("ignore::optreg.ConfigWarning")
def test_group_table_takes_the_run_length_as_groups_steps_does(capsys):
    """`optreg.api.group_table(..., total_steps=N)` is `optreg groups --steps N` (it took no run length): DeepSpeed's
    WarmupLR over the run's 30 steps sets the first step's lr 0 (without a run, the lr each group is built with); a
    length the file gives too and that disagrees is build's error; steps_per_epoch is build's too."""
    from examples.finetune_models import tiny_vit
    from optreg.api import group_table

    config = str(REPO / "examples" / "deepspeed" / "ds_config.json")
    assert main(["groups", config, "--steps", "30", "--model", "examples.finetune_models:tiny_vit", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    table = group_table(config, tiny_vit(), total_steps=30)
    assert json.loads(json.dumps(table, default=str)) == rows
    assert [r["lr"] for r in table] == [r["lr"] for r in optreg.build(config, tiny_vit(), total_steps=30).group_table()]
    assert [r["lr"] for r in table] == [0.0] * len(rows) != [r["lr"] for r in group_table(config, tiny_vit())]
    own = {"optimizer": {"name": "SGD", "lr": 0.1}, "train": {"steps": 20}}
    epochs = {"optimizer": {"name": "SGD", "lr": 0.1}, "train": {"epochs": 2}}
    for call in (group_table, optreg.build):
        with pytest.raises(optreg.ConfigError) as info:
            call(own, tiny_vit(), total_steps=30)
        assert str(info.value) == ("train.steps: total_steps=30 and train.steps 20 disagree on the run length; give "
                                   "one")
        with pytest.raises(optreg.ConfigError) as info:
            call(epochs, tiny_vit(), total_steps=11, steps_per_epoch=5)
        assert str(info.value) == ("train.epochs: total_steps=11 and train.epochs × steps_per_epoch = 2 × 5 = 10 "
                                   "disagree on the run length; give one")


def lrs_of(capsys, *args: str) -> list[float]:
    assert main(["groups", *args, "--json"]) == 0
    return [row["lr"] for row in json.loads(capsys.readouterr().out) if row["rule"] != "frozen"]


ABSOLUTE = {   # schedules whose values are learning rates: the first step's is the schedule's, not optimizer.lr's
    "cerebras": ("optimizer: {name: AdamW, weight_decay: 0.05, no_weight_decay: true}\n"
                 "scheduler:\n"
                 "  - {LinearLR: {initial_learning_rate: 2.0e-4, end_learning_rate: 1.0e-3, total_iters: 5}}\n"
                 "  - {CosineDecayLR: {initial_learning_rate: 1.0e-3, end_learning_rate: 0.0, total_iters: 15}}\n"
                 "train: {steps: 20}\n", [2e-4, 2e-4]),
    "mindspore schedule": ("optimizer: {name: mindspore.Momentum, learning_rate: 0.1, momentum: 0.9}\n"
                           "scheduler: {name: mindspore.exponential_decay_lr, learning_rate: 0.5, decay_rate: 0.9,\n"
                           "            total_step: 20, step_per_epoch: 2, decay_epoch: 1}\n", [0.5]),
}
RELATIVE = {   # factors of each group's lr (the head's 10x): the lr each group is built with, which they scale
    "warmup": ("optimizer:\n  name: SGD\n  lr: 0.1\n  momentum: 0.9\n  param_groups: [{params: head.*, lr_mult: 10}]\n"
               "scheduler: {name: CosineAnnealingLR, T_max: 20, warmup: {steps: 4, start_factor: 0.1}}\n"
               "train: {steps: 24}\n", [1.0, 0.1]),
    "torch LinearLR": ("optimizer:\n  name: SGD\n  lr: 0.1\n  param_groups: [{params: head.*, lr_mult: 10}]\n"
                       "scheduler: {name: LinearLR, start_factor: 0.5, total_iters: 4}\n", [1.0, 0.1]),
    "no schedule": ("optimizer:\n  name: SGD\n  lr: 0.1\n  param_groups: [{params: head.*, lr_mult: 10}]\n",
                    [1.0, 0.1]),
}


def _recorded(init, created: list):
    """`init` that records its call and builds nothing, with its signature (the registry reads it)."""
    return functools.wraps(init)(lambda *a, **k: created.append(1))


@pytest.mark.parametrize("text, first", [*ABSOLUTE.values(), *RELATIVE.values()], ids=[*ABSOLUTE, *RELATIVE])
def test_the_lr_is_the_one_the_group_steps_with(text, first, tmp_path, capsys, monkeypatch):
    """Where a schedule sets the lr itself (absolute values, the same in every group), a group's lr is the one the
    built optimizer's group has once the scheduler is made (what `plot --csv` shows at step 0; it was optimizer.lr,
    AdamW's default 1e-3 here); under a schedule of factors, the group's own lr, which they scale (torch's
    `initial_lr`); the optimizer is still not built."""
    from examples.finetune_models import tiny_vit

    path = tmp_path / "config.yaml"
    path.write_text(text)
    built = optreg.build(str(path), tiny_vit())
    key = "lr" if text in [t for t, _ in ABSOLUTE.values()] else "initial_lr"
    expected = [group.get(key, group["lr"]) for group in built.optimizer.param_groups]
    assert expected == pytest.approx(first, rel=1e-6)
    assert [row["lr"] for row in built.group_table()] == expected
    created = []
    for cls in (torch.optim.SGD, torch.optim.AdamW):
        monkeypatch.setattr(cls, "__init__", _recorded(cls.__init__, created))
    assert lrs_of(capsys, str(path), "--model", "examples.finetune_models:tiny_vit") == expected and not created


SETTERS = {   # torch's classes that set every group's lr themselves, from their own options
    "OneCycleLR": ("OneCycleLR", {"max_lr": 0.5, "total_steps": 20}, [0.02, 0.02], " (0.02 at step 0)"),
    "OneCycleLR per group": ("OneCycleLR", {"max_lr": [0.5, 0.05], "total_steps": 20}, [0.02, 0.002], ""),
    "CyclicLR": ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 5}, [0.01, 0.01], " (0.01 at step 0)"),
}


@pytest.mark.parametrize("name, options, first, at", SETTERS.values(), ids=SETTERS)
def test_a_torch_class_that_sets_the_lr_itself(name, options, first, at, tmp_path, capsys):
    """torch's OneCycleLR sets every group's lr from max_lr (one, or one per group) / div_factor, its CyclicLR from
    base_lr: the groups show the lr torch's own class gives them at the first step (they showed their own lrs, 1
    and 0.1), and the rule's lr is a warning, as under Cerebras' schedules (where the closed form gives the first
    value, it is said); an lr_mult, which it would undo, is refused in groups and validate."""
    from examples.finetune_models import tiny_vit
    from optreg.api import group_table

    config = {"optimizer": {"name": "SGD", "lr": 0.1, "momentum": 0.9, "param_groups": [
        {"params": "head.*", "lr": 1.0}]}, "scheduler": {"name": name, **options}}
    model = tiny_vit()
    head = [p for n, p in model.named_parameters() if n.startswith("head.")]
    rest = [p for n, p in model.named_parameters() if not n.startswith("head.")]
    reference = torch.optim.SGD([{"params": head, "lr": 1.0}, {"params": rest}], lr=0.1, momentum=0.9)
    getattr(torch.optim.lr_scheduler, name)(reference, **options)
    expected = [g["lr"] for g in reference.param_groups]
    assert expected == pytest.approx(first)
    assert [r["lr"] for r in group_table(config, model)] == expected
    with pytest.warns(optreg.ConfigWarning) as caught:
        assert [r["lr"] for r in optreg.build(config, model).group_table()] == expected
    assert [str(w.message) for w in caught] == [
        f"optimizer.param_groups[0].lr: {name} sets every group's lr itself{at}, which replaces this rule's lr 1 at "
        f"every step; drop it, or use a schedule whose values are factors of each group's lr (torch, OneFlow, HF, "
        f"timm)"]
    path = tmp_path / "setter.json"
    path.write_text(json.dumps(config))
    assert lrs_of(capsys, str(path), "--model", "examples.finetune_models:tiny_vit") == expected
    config["optimizer"]["param_groups"] = [{"params": "head.*", "lr_mult": 10}]
    path.write_text(json.dumps(config))
    column = path.read_text().index('"scheduler"') + 1
    per_group = isinstance(options.get("max_lr"), list)   # each group's lr from its entry: not the same in all
    sets, instead = (" in each group, from its per-group list max_lr,", "give each group's lr in the list alone, or ") \
        if per_group else (", the same in every group,", "")
    for command in ("groups", "validate"):
        assert main([command, str(path), "--model", "examples.finetune_models:tiny_vit"]) == 1
        assert capsys.readouterr().err == (
            f"{path}:1:{column}: scheduler: {name} sets an absolute lr{sets} which would undo "
            f"optimizer.param_groups[0].lr_mult; {instead}use a schedule whose values are factors of each group's lr "
            f"(torch, OneFlow, HF, timm)\n")


def test_the_lr_a_group_is_built_with_is_beside_the_one_a_schedule_sets(tmp_path, capsys, monkeypatch):
    """Under a schedule that sets the lr itself, a group's lr is the first step's; the lr it is built with, which
    the schedule replaces, is beside it where it is another: `own_lr` in the --json rows (the head's 1, not the rest's
    0.02, where OneCycleLR starts: max_lr 0.5 / 25), an `own lr` column in the table; none under a schedule of
    factors, whose groups' lrs are their own."""
    from examples.finetune_models import tiny_vit

    path = tmp_path / "own.yaml"
    path.write_text("optimizer:\n  name: SGD\n  lr: 0.02\n  momentum: 0.9\n"
                    "  param_groups: [{params: head.*, lr: 1.0}]\n"
                    "scheduler: {name: OneCycleLR, max_lr: 0.5, total_steps: 20}\n")
    args = ["groups", str(path), "--model", "examples.finetune_models:tiny_vit"]
    assert main([*args, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["lr"], r.get("own_lr")) for r in rows] == [(pytest.approx(0.02), 1.0), (pytest.approx(0.02), None)]
    assert "own_lr" not in rows[1]
    with pytest.warns(optreg.ConfigWarning):   # the rule's lr, which OneCycleLR replaces
        assert json.loads(json.dumps(optreg.build(str(path), tiny_vit()).group_table(), default=str)) == rows
    monkeypatch.setenv("COLUMNS", "100")
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["group", "rule", "selectors", "params", "numel", "lr", "own", "lr", "weight_decay",
                                "layer"]
    assert lines[3].split() == ["0", "param_groups[0]", "params:", "head.*", "2", "45", "0.02", "1", "0", "-"]
    assert lines[5].split() == ["1", "default", "(the", "rest)", "42", "1968", "0.02", "0", "-"]
    path.write_text(path.read_text().replace("{name: OneCycleLR, max_lr: 0.5, total_steps: 20}",
                                             "{name: LinearLR, start_factor: 0.5, total_iters: 4}"))
    assert main([*args, "--json"]) == 0
    assert [(r["lr"], "own_lr" in r) for r in json.loads(capsys.readouterr().out)] == [(1.0, False), (0.02, False)]
    assert main(args) == 0 and "own lr" not in capsys.readouterr().out


def test_a_per_step_lr_list_is_shown_as_one():
    """MindSpore's per-step lr list (no scheduler: the optimizer sets the lr each step) stays the list's row."""
    from examples.finetune_models import tiny_vit
    from optreg.api import group_table

    config = {"optimizer": {"name": "mindspore.Momentum", "learning_rate": [0.3, 0.2, 0.1], "momentum": 0.9}}
    rows = group_table(config, tiny_vit())
    assert [r["lr"] for r in rows] == [r["lr"] for r in optreg.build(config, tiny_vit()).group_table()] == [
        [0.3, 0.2, 0.1]]


@pytest.mark.filterwarnings("ignore::optreg.ConfigWarning")
def test_a_model_zoo_schedule_gives_the_first_steps_lr(capsys):
    """Model Zoo's LinearLR from initial_learning_rate 0 (its optimizer has no lr: AdamW's 1e-3 was shown)."""
    from examples.finetune_models import tiny_vit

    config = str(REPO / "examples" / "cerebras" / "trainer_llama.yaml")
    expected = [group["lr"] for group in optreg.build(config, tiny_vit()).optimizer.param_groups]
    assert lrs_of(capsys, config, "--model", "examples.finetune_models:tiny_vit") == expected == [0.0, 0.0]


@pytest.mark.filterwarnings("ignore::optreg.ConfigWarning")
def test_a_model_zoo_schedule_scaled_per_group_gives_each_group_its_first_steps_lr(tmp_path, capsys):
    """Model Zoo wraps the lr schedule in ScalePerParamLR where groups carry adjust_learning_rate: it still sets the
    lr itself, each group's the schedule's value times its scale (the table showed AdamW's default 1e-3)."""
    class Emb(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = torch.nn.Embedding(8, 4)
            self.fc = torch.nn.Linear(4, 4)

    path = tmp_path / "params.yaml"
    path.write_text("optimizer:\n  optimizer_type: AdamW\n  adjust_learning_rate: {embedding: 0.5}\n"
                    "  learning_rate:\n"
                    "    - {scheduler: Linear, initial_learning_rate: 0.01, end_learning_rate: 0.02, total_iters: 5}\n"
                    "    - {scheduler: Linear, initial_learning_rate: 0.02, end_learning_rate: 0.0, total_iters: 5}\n")
    built = optreg.build(str(path), Emb())
    expected = [group["lr"] for group in built.optimizer.param_groups]
    assert expected == pytest.approx([0.005, 0.01, 0.01], rel=1e-6)
    assert [row["lr"] for row in built.group_table()] == expected
    assert [row["lr"] for row in optreg.api.group_table(str(path), Emb())] == expected
    assert [row["own_lr"] for row in built.group_table()] == [1e-3] * 3


def test_the_dry_run_leaves_a_tensor_lr_alone():
    """A scheduler fills a tensor lr in place (torch's own classes keep one): the dry run's stand-in holds a copy."""
    from examples.finetune_models import tiny_vit
    from optreg.api import group_table

    lr = torch.tensor(0.01)
    rows = group_table({"optimizer": {"name": "AdamW", "lr": lr}, "scheduler": [
        {"LinearLR": {"initial_learning_rate": 0.02, "end_learning_rate": 0.01, "total_iters": 4}}]}, tiny_vit())
    assert [r["lr"] for r in rows] == [pytest.approx(0.02)] and lr.item() == pytest.approx(0.01)


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


def test_a_group_the_optimizer_splits_shows_the_lr_of_its_parameters():
    """MindSpore's weight-decay rule splits the one planned group (gamma and beta undecayed): its row's lr is its
    parameters' at the first step, in build and in the dry run alike (it was the planned 0.1)."""
    from optreg.api import group_table

    class Norm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w, self.gamma = torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.ones(3))

    config = {"optimizer": {"name": "mindspore.Momentum", "learning_rate": 0.1, "momentum": 0.9, "weight_decay": 0.01},
              "scheduler": {"name": "mindspore.exponential_decay_lr", "learning_rate": 0.5, "decay_rate": 0.9,
                            "total_step": 20, "step_per_epoch": 2, "decay_epoch": 1}}
    built = optreg.build(config, Norm())
    assert [g["lr"] for g in built.optimizer.param_groups] == [0.5, 0.5]
    assert [r["lr"] for r in built.group_table()] == [r["lr"] for r in group_table(config, Norm())] == [0.5]


def test_a_composites_settings_in_the_table_are_the_built_ones(tmp_path, capsys):
    """`optreg groups` shows a composite's main-section no_weight_decay and layer_decay on every part's groups, as
    build() builds them and `validate --model` accepts them: the AdamW part's norms and biases at weight decay 0 and
    their layer's lr (blocks.0's: 1e-3 · 0.5³), the Muon matrices at their own."""
    from examples.finetune_models import tiny_vit

    path = tmp_path / "composite.yaml"
    path.write_text("optimizer:\n  name: Muon\n  lr: 0.02\n  weight_decay: 0.1\n  no_weight_decay: true\n"
                    "  layer_decay: {rate: 0.5, layer: 'blocks.{i}.*'}\n  param_groups:\n"
                    "    - {max_ndim: 1, optimizer: {name: AdamW, lr: 1.0e-3, weight_decay: 0.1}}\n"
                    "    - {params: [cls_token, pos_embed], optimizer: {name: AdamW, lr: 1.0e-3}}\n")
    model = ["--model", "examples.finetune_models:tiny_vit"]
    assert main(["validate", str(path), *model]) == 0
    capsys.readouterr()
    assert main(["groups", str(path), *model, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == json.loads(json.dumps(optreg.build(str(path), tiny_vit()).group_table(), default=str))
    by_name = {n: (r["optimizer"], r["lr"], r["weight_decay"], r["layer"]) for r in rows for n in r["names"]}
    assert by_name["blocks.0.norm1.weight"] == ("torch.AdamW", pytest.approx(1.25e-4), 0.0, 1)
    assert by_name["norm.weight"] == ("torch.AdamW", 1e-3, 0.0, 4)
    assert by_name["cls_token"] == ("torch.AdamW", 1e-3, 0.0, 4)   # the model's no_weight_decay()
    assert by_name["blocks.0.qkv.weight"] == ("torch.Muon", pytest.approx(2.5e-3), 0.1, 1)


MMENGINE_EPOCHS = ("optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1, momentum=0.9))\n"
                   "param_scheduler = [dict(type='LinearLR', start_factor=0.1, by_epoch=True, end=2),\n"
                   "                   dict(type='MultiStepLR', by_epoch=True, milestones=[8, 11], gamma=0.1)]\n"
                   "train_cfg = dict(by_epoch=True, max_epochs=12)\n")
LIBAI_EPOCHS = ("from libai.config import LazyCall\nfrom libai.scheduler import WarmupCosineLR\n"
                "import oneflow as flow\n"
                "optim = LazyCall(flow.optim.AdamW)(params=None, lr=5e-4, weight_decay=0.05)\n"
                "train = dict(train_epoch=10, warmup_ratio=0.05,\n"
                "             scheduler=LazyCall(WarmupCosineLR)(warmup_factor=0.001, alpha=0.01))\n")


@pytest.mark.parametrize("name, text", [("mm.py", MMENGINE_EPOCHS), ("libai.py", LIBAI_EPOCHS)])
def test_a_run_in_epochs_without_its_steps_per_epoch_shows_its_groups(name, text, tmp_path, capsys):
    """MMEngine's by_epoch entries and LiBai's train_epoch move by the steps per epoch, never the groups: `groups`
    needs none (both said the steps per epoch were missing), and shows the lr each group is built with, as for a
    Trainer's epochs; the rows are those of a build with the steps per epoch."""
    from examples.finetune_models import tiny_vit

    if name == "mm.py":
        pytest.importorskip("mmengine.config", reason="mmengine's Config (mmengine-lite with its dependencies)")
    path = tmp_path / name
    path.write_text(text)
    assert main(["groups", str(path), "--model", "examples.finetune_models:tiny_vit", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    built = optreg.build(str(path), tiny_vit(), steps_per_epoch=2)
    assert rows == json.loads(json.dumps(built.group_table(), default=str))
    assert [r["lr"] for r in rows] == [g.lr for g in built.groups] and all("own_lr" not in r for r in rows)


def test_a_schedule_in_epochs_that_sets_the_lr_shows_its_first_steps_lr_without_the_steps_per_epoch(tmp_path,
                                                                                                        capsys):
    """The first step is epoch 0's whatever the steps per epoch: a schedule in epochs that sets the lr itself over
    a run of known length gives each group its first step's lr without them, as with them."""
    path = tmp_path / "own.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler: {name: cerebras.LinearLR, initial_learning_rate: 0.5, "
                    "end_learning_rate: 0.1, total_iters: 10, by_epoch: true}\ntrain: {steps: 100}\n")
    tables = []
    for given in ([], ["+train.steps_per_epoch=3"]):
        assert main(["groups", str(path), *given, "--model", "examples.finetune_models:tiny_vit", "--json"]) == 0
        tables.append(json.loads(capsys.readouterr().out))
    assert tables[0] == tables[1] and {(r["lr"], r["own_lr"]) for r in tables[0]} == {(0.5, 0.1)}


def test_a_mindformers_run_left_to_the_dataset_needs_groups_steps(tmp_path, capsys):
    """MindFormers' total_steps -1 is the run length, and a ratio of it moves the first step's lr, which the table
    shows for a schedule that sets the lr itself: int(0.03 × 20) = 0 warmup steps start at learning_rate, int(0.03
    × 100) = 3 at warmup_lr_init 0. Without it the error says `groups --steps N`."""
    path = tmp_path / "mf.yaml"
    path.write_text("optimizer: {type: AdamW, weight_decay: 0.1}\nlr_schedule:\n  type: CosineWithWarmUpLR\n"
                    "  learning_rate: 5.e-5\n  warmup_ratio: 0.03\n  total_steps: -1\nrunner_config: {epochs: 2}\n")
    assert main(["groups", str(path), "--model", "examples.finetune_models:tiny_vit"]) == 1
    assert capsys.readouterr().err == (
        f"{path}:6:3: lr_schedule.total_steps: -1 (or absent) is the run length, which MindFormers takes from the "
        f"dataset's size: give it as train.steps_per_epoch (or the run's length as train.steps, or --steps N: optreg "
        f"groups --steps N too, as a ratio of it may move the first step's lr)\n")
    for steps, first in (("20", 5e-5), ("100", 0.0)):
        assert main(["groups", str(path), "--steps", steps, "--model", "examples.finetune_models:tiny_vit",
                     "--json"]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert [r["lr"] for r in rows] == pytest.approx([first] * len(rows), rel=1e-7)   # MindSpore's float32

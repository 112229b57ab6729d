"""Names, one rule everywhere (issue 25 item 4): registry names, Hydra group names and the frameworks' class paths
resolve alike in Python, YAML, Hydra and the CLI; `show` finds optimizers and schedulers and lists an ambiguity; a
prefix that contradicts `dialect=` and an unknown dialect are ConfigErrors."""

from __future__ import annotations

import pytest
import torch
from omegaconf import OmegaConf

import optreg
from optreg.cli import main
from optreg.config.experiment import validate_experiment
from optreg.errors import ConfigError

NAMES = [   # (how a user writes it, the entry it names)
    ("torch.optim.AdamW", "torch.AdamW"),
    ("oneflow.optim.AdamW", "oneflow.AdamW"),
    ("cerebras.pytorch.optim.AdamW", "cerebras.AdamW"),
    ("mindspore.nn.AdamWeightDecay", "mindspore.AdamWeightDecay"),
    ("oneflow_adamw", "oneflow.AdamW"),          # the Hydra group option
    ("mindspore_adam", "mindspore.Adam"),
    ("cerebras.AdamW", "cerebras.AdamW"),
]


def qualname(optimizer) -> str:
    module = type(optimizer).__module__
    dialect = "torch" if module.startswith("torch.") else module.split(".")[2]
    return f"{dialect}.{type(optimizer).__name__}"


@pytest.mark.parametrize("name, entry", NAMES)
def test_a_name_resolves_alike_in_python_yaml_hydra_and_the_cli(name, entry, capsys):
    model = torch.nn.Linear(2, 2)
    assert qualname(optreg.configure_optimizer(name, model)) == entry
    assert qualname(optreg.optimizer_class(name)([torch.nn.Parameter(torch.ones(1))])) == entry
    assert qualname(optreg.build(f"optimizer: {{name: {name}}}\n", model).optimizer) == entry
    assert qualname(optreg.build(OmegaConf.create({"optimizer": {"name": name}}), model).optimizer) == entry
    assert optreg.describe(name).qualname == entry
    assert main(["show", name]) == 0
    assert capsys.readouterr().out.startswith(entry + " (optimizer")


@pytest.mark.parametrize("name, entry", [("torch.optim.lr_scheduler.StepLR", "torch.StepLR"),
                                         ("oneflow.optim.lr_scheduler.WarmupLR", "oneflow.WarmupLR"),
                                         ("mindspore.nn.CosineDecayLR", "mindspore.CosineDecayLR"),
                                         ("nemo.core.optim.lr_scheduler.CosineAnnealing", "nemo.CosineAnnealing"),
                                         ("StepLR", "torch.StepLR")])
def test_show_finds_schedulers_by_any_name(name, entry):
    described = optreg.describe(name)
    assert (described.qualname, described.kind) == (entry, "scheduler")


def test_show_lists_an_ambiguity_across_dialects(capsys):
    with pytest.raises(ConfigError) as info:
        optreg.describe("cosine")
    assert info.value.errors[0].message == ("'cosine' names 2 components: hf.cosine (scheduler), timm.cosine "
                                            "(scheduler); give one with its dialect prefix")
    assert main(["show", "cosine"]) == 1
    assert "hf.cosine (scheduler), timm.cosine (scheduler)" in capsys.readouterr().err


@pytest.mark.parametrize("call", [
    lambda: optreg.configure_optimizer("cerebras.AdamW", torch.nn.Linear(2, 2), dialect="oneflow"),
    lambda: optreg.configure_optimizer("torch.optim.AdamW", torch.nn.Linear(2, 2), dialect="oneflow"),
    lambda: optreg.configure_optimizer("mindspore_adam", torch.nn.Linear(2, 2), dialect="oneflow"),
    lambda: optreg.optimizer_class("cerebras.AdamW", dialect="oneflow"),
    lambda: optreg.describe("cerebras.AdamW", "oneflow"),
])
def test_a_prefix_that_contradicts_dialect_is_an_error(call):
    with pytest.raises(ConfigError) as info:
        call()
    error = info.value.errors[0]
    assert error.path == "name" and "but dialect='oneflow' asks for the oneflow one" in error.message


@pytest.mark.parametrize("call", [
    lambda: optreg.list_optimizers(dialect="tensorflow"),
    lambda: optreg.list_schedulers(dialect="tensorflow"),
    lambda: optreg.describe("Adam", "tensorflow"),
    lambda: optreg.configure_optimizer("Adam", torch.nn.Linear(2, 2), dialect="tensorflow"),
])
def test_an_unknown_dialect_is_an_error_everywhere(call):
    with pytest.raises(ConfigError) as info:
        call()
    assert info.value.errors[0].path == "dialect"
    assert info.value.errors[0].message.startswith("unknown dialect 'tensorflow'; dialects: torch, oneflow")


def test_list_with_an_unknown_dialect_fails(capsys):
    with pytest.raises(SystemExit) as info:     # a usage error, as argparse gives one (exit 2)
        main(["list", "--dialect", "tensorflow"])
    assert info.value.code == 2 and "unknown dialect 'tensorflow'" in capsys.readouterr().err


def _sgd():
    return torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1)


def _conflict(kind: str, name: str) -> str:
    return (f"'oneflow.{name}' names the oneflow {kind}, but dialect='cerebras' asks for the cerebras one; drop the "
            f"prefix or the dialect")


OWN_DIALECT_CONFLICTS = [   # (entry point, path, kind, name): a dialect the spec itself asks for, by every way in
    (lambda: optreg.configure_optimizer("oneflow.AdamW", torch.nn.Linear(2, 2), dialect="cerebras"),
     "name", "optimizer", "AdamW"),
    (lambda: optreg.build({"optimizer": {"name": "oneflow.AdamW", "dialect": "cerebras"}}, torch.nn.Linear(2, 2)),
     "optimizer.name", "optimizer", "AdamW"),
    (lambda: validate_experiment({"optimizer": {"name": "oneflow.AdamW", "dialect": "cerebras"}}),
     "optimizer.name", "optimizer", "AdamW"),
    (lambda: optreg.build({"optimizer": {"name": "SGD", "lr": 0.1, "param_groups": [
        {"params": "weight", "optimizer": {"name": "oneflow.AdamW", "dialect": "cerebras"}}]}},
        torch.nn.Linear(2, 2)), "optimizer.param_groups[0].optimizer.name", "optimizer", "AdamW"),
    (lambda: optreg.configure_lr_scheduler(_sgd(), "oneflow.CosineDecayLR", dialect="cerebras", decay_steps=4),
     "name", "scheduler", "CosineDecayLR"),
    (lambda: optreg.configure_lr_scheduler(_sgd(), {"name": "oneflow.CosineDecayLR", "decay_steps": 4},
                                           dialect="cerebras"), "name", "scheduler", "CosineDecayLR"),
    (lambda: optreg.build({"optimizer": {"name": "SGD", "lr": 0.1}, "scheduler": {
        "name": "oneflow.CosineDecayLR", "dialect": "cerebras", "decay_steps": 4}}, torch.nn.Linear(2, 2)),
     "scheduler.name", "scheduler", "CosineDecayLR"),
    (lambda: optreg.build({"optimizer": {"name": "SGD", "lr": 0.1}, "scheduler": {"name": "sequential", "schedulers": [
        {"name": "oneflow.CosineDecayLR", "dialect": "cerebras", "decay_steps": 4}]}}, torch.nn.Linear(2, 2)),
     "scheduler.schedulers[0].name", "scheduler", "CosineDecayLR"),
]


@pytest.mark.parametrize("call, path, kind, name", OWN_DIALECT_CONFLICTS, ids=[
    "configure_optimizer", "build", "validate", "composite part", "configure_lr_scheduler name",
    "configure_lr_scheduler spec", "build scheduler", "build sequential stage"])
def test_a_prefix_that_contradicts_the_specs_own_dialect_is_one_error_in_every_entry_point(call, path, kind, name):
    with pytest.raises(ConfigError) as info:
        call()
    assert [(e.path, e.message) for e in info.value.errors] == [(path, _conflict(kind, name))]


def test_a_prefix_that_contradicts_a_sections_dialect_is_refused_at_its_file_position(tmp_path):
    file = tmp_path / "c.yaml"
    file.write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler:\n  name: oneflow.CosineDecayLR\n  dialect: cerebras\n"
                    "  decay_steps: 4\n")
    with pytest.raises(ConfigError) as info:
        optreg.load_config(file)
    error = info.value.errors[0]
    assert (error.path, error.message, error.location.line) == ("scheduler.name", _conflict("scheduler",
                                                                                            "CosineDecayLR"), 3)


def test_a_top_level_dialect_is_a_default_that_a_prefix_overrides():
    """A file's top-level `dialect:` names the dialect of names without a prefix: `oneflow.AdamW` under `dialect:
    cerebras` is OneFlow's AdamW, in validate and build alike (as `torch.StepLR` under `dialect: mindspore`)."""
    text = "dialect: cerebras\noptimizer: {name: oneflow.AdamW}\nscheduler: {name: torch.StepLR, step_size: 2}\n"
    assert optreg.load_config(text).optimizer["name"] == "oneflow.AdamW"
    built = optreg.build(text, torch.nn.Linear(2, 2))
    assert qualname(built.optimizer) == "oneflow.AdamW"
    assert type(built.scheduler).__name__ == "StepLR"


MISSPELT = [   # (name, the message show / describe give: both kinds looked in, and validate's did-you-mean)
    ("CosineAnealingLR", "unknown torch optimizer or scheduler 'CosineAnealingLR'", "CosineAnnealingLR"),
    ("hf.cosin", "unknown hf optimizer or scheduler 'cosin'", "cosine"),
    ("onflow.AdamW", "unknown optimizer or scheduler 'onflow.AdamW': 'onflow' is not a dialect", "oneflow.AdamW"),
    ("oneflow.optim.AdamWW", "unknown oneflow optimizer or scheduler 'AdamWW'", "AdamW"),
    ("torch.optim.lr_scheduler.StepLRR", "unknown torch optimizer or scheduler 'StepLRR'", "StepLR"),
]


@pytest.mark.parametrize("name, message, suggestion", MISSPELT)
def test_show_and_describe_look_in_both_kinds_and_suggest_as_validate_does(name, message, suggestion, capsys):
    with pytest.raises(ConfigError) as info:
        optreg.describe(name)
    assert [(e.path, e.message, e.suggestion) for e in info.value.errors] == [("name", message, suggestion)]
    assert main(["show", name]) == 1
    assert capsys.readouterr().err.strip() == f"name: {message} (did you mean {suggestion!r}?)"


def test_describe_with_nothing_close_names_both_kinds_and_their_listing():
    from optreg.core.registry import REGISTRY

    with pytest.raises(ConfigError) as info:
        optreg.describe("hf.xyzzyq")
    optimizers, schedulers = (len(REGISTRY.entries(kind, "hf")) for kind in ("optimizer", "scheduler"))
    assert info.value.errors[0].message == (f"unknown hf optimizer or scheduler 'xyzzyq'; `optreg list --dialect hf` "
                                            f"shows the {optimizers} hf optimizers and the {schedulers} hf schedulers")


@pytest.mark.parametrize("name, message, suggestion", [
    ("onflow.AdamW", "unknown optimizer 'onflow.AdamW': 'onflow' is not a dialect", "oneflow.AdamW"),
    ("oneflow.optim.AdamWW", "unknown oneflow optimizer 'AdamWW'", "AdamW"),
    ("mindspore.mint.optim.AdamWW", "unknown mindspore_mint optimizer 'AdamWW'", "AdamW"),
])
def test_a_misspelt_prefix_or_framework_path_gets_a_did_you_mean_in_python_and_yaml(name, message, suggestion):
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer(name, torch.nn.Linear(2, 2))
    assert [(e.path, e.message, e.suggestion) for e in info.value.errors] == [("name", message, suggestion)]
    with pytest.raises(ConfigError) as info:
        optreg.load_config(f"optimizer:\n  name: {name}\n")
    error = info.value.errors[0]
    assert (error.path, error.message, error.location.line, error.suggestion) == (
        "optimizer.name", message, 2, suggestion)


@pytest.mark.parametrize("text, path, message, suggestion", [
    ("optimizer: {name: SDG, lr: 0.1}\n", "optimizer.name", "unknown torch optimizer 'SDG'", "SGD"),
    ("optimizer: {name: mindspore.Momentm, learning_rate: 0.1, momentum: 0.9}\n", "optimizer.name",
     "unknown mindspore optimizer 'Momentm'", "Momentum"),
    ("dialect: cerebras\noptimizer: {name: AdamWW, lr: 0.1}\n", "optimizer.name",
     "unknown cerebras optimizer 'AdamWW'", "AdamW"),
    ("dialect: oneflow\noptimizer: {name: SGD, lr: 0.1}\nscheduler: {name: CosineAnnealingLRR, T_max: 5}\n",
     "scheduler.name", "unknown oneflow scheduler 'CosineAnnealingLRR'", "CosineAnnealingLR"),
    ("optimizer: {name: SGD, lrr: 0.1}\n", "optimizer.lrr", "unknown option of torch.SGD", "lr"),   # the shape
])
def test_an_unknown_name_has_its_did_you_mean_where_an_unknown_option_has_it(text, path, message, suggestion,
                                                                             tmp_path, capsys):
    """An unknown optimizer or scheduler name, in each dialect, carries its did-you-mean in the error's suggestion,
    as an unknown option does (it was written into the message, the suggestion left empty), and prints alike."""
    file = tmp_path / "c.yaml"
    file.write_text(text)
    with pytest.raises(ConfigError) as info:
        optreg.load_config(file)
    (error,) = info.value.errors
    assert (error.path, error.message, error.suggestion) == (path, message, suggestion)
    assert main(["validate", str(file)]) == 1
    assert capsys.readouterr().err.strip() == f"{error.location}: {path}: {message} (did you mean {suggestion!r}?)"


def test_an_unknown_dialect_has_its_did_you_mean_in_the_suggestion():
    with pytest.raises(ConfigError) as info:
        optreg.load_config("dialect: onflow\noptimizer: {name: SGD, lr: 0.1}\n")
    (error,) = info.value.errors
    assert (error.path, error.suggestion) == ("dialect", "oneflow")
    assert error.message.startswith("unknown dialect 'onflow'; dialects: torch, oneflow,")
    assert "did you mean" not in error.message and str(error).endswith(" (did you mean 'oneflow'?)")

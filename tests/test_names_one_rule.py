"""Names, one rule everywhere (issue 25 item 4): registry names, Hydra group names and the frameworks' class paths
resolve alike in Python, YAML, Hydra and the CLI; `show` finds optimizers and schedulers and lists an ambiguity; a
prefix that contradicts `dialect=` and an unknown dialect are ConfigErrors."""

from __future__ import annotations

import pytest
import torch
from omegaconf import OmegaConf

import optreg
from optreg.cli import main
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
    assert main(["list", "--dialect", "tensorflow"]) == 1
    assert "unknown dialect 'tensorflow'" in capsys.readouterr().err

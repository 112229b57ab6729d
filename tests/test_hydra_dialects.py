"""Hydra across dialects (issue 25 item 6): one `optimizer.lr` in a primary config works with every dialect's group;
a value the user set wins over the default a group file carries under its other spelling, while two spellings the
user set stay an error; no group file carries a `???` that a dialect switch exposes; an error caused by a key of
the primary config names that file and key, not the last override."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir

import optreg
from optreg.cli import _load
from optreg.core.names import synonyms
from optreg.errors import ConfigError
from optreg.integrations.hydra import configs as hc
from optreg.train import make_model

PRIMARY = "defaults:\n  - optimizer: adamw\n  - _self_\noptimizer:\n  lr: {lr}\ntrain: {{steps: 3}}\n"


def primary(tmp_path: Path, lr: float = 0.01) -> Path:
    path = tmp_path / "primary.yaml"
    path.write_text(PRIMARY.format(lr=lr))
    return path


def lrs(experiment) -> list[float]:
    built = optreg.build(experiment, make_model(8, 1, 0))
    return [g["lr"] for g in built.optimizer.param_groups]


@pytest.mark.parametrize("switch, qualname", [
    ("optimizer=sgd", "torch.SGD"),
    ("optimizer=mindspore_adam", "mindspore.Adam"),                # the group file carries learning_rate: 0.001
    ("optimizer=mindspore_momentum", "mindspore.Momentum"),        # learning_rate is required: left out, not ???
    ("optimizer=oneflow_adamw", "oneflow.AdamW"),
    ("optimizer=cerebras_sgd", "cerebras.SGD"),                    # lr is required: left out, not ???
])
def test_one_lr_in_a_primary_config_works_with_every_dialects_group(switch, qualname, tmp_path):
    overrides = [switch] + (["optimizer.momentum=0.9"] if "momentum" in switch else [])
    experiment = _load(str(primary(tmp_path)), overrides)
    assert f"{experiment.optimizer.get('dialect') or 'torch'}.{experiment.optimizer['name']}" == qualname
    assert set(lrs(experiment)) == {0.01}


def test_the_same_in_a_hydra_app(tmp_path):
    primary(tmp_path)
    with initialize_config_dir(config_dir=str(tmp_path), version_base="1.3"):
        cfg = compose("primary", ["optimizer=mindspore_adam"])
    assert set(lrs(optreg.build(cfg, make_model(8, 1, 0)).experiment)) == {0.01}


def test_two_spellings_the_user_set_stay_an_error(tmp_path):
    with pytest.raises(ConfigError) as info:
        _load(str(primary(tmp_path)), ["optimizer=mindspore_adam", "optimizer.learning_rate=0.5"])
    messages = [(e.path, e.message) for e in info.value.errors]
    assert ("optimizer.lr", "both 'learning_rate' and its alias 'lr' are given; keep one") in messages


def test_an_error_of_a_primary_key_names_the_file_and_key_not_the_override(tmp_path):
    path = primary(tmp_path, lr=-0.01)
    with pytest.raises(ConfigError) as info:
        _load(str(path), ["optimizer=sgd"])
    error = info.value.errors[0]
    assert (error.path, error.message) == ("optimizer.lr", "must be >= 0, got -0.01")
    assert (error.location.file, error.location.line) == (str(path), 5)
    # a value the switched-in group file carries is still the switch's
    with pytest.raises(ConfigError) as info:
        _load(str(path), ["optimizer=mindspore_momentum", "optimizer.lr=0.1"])
    assert str(info.value.errors[0]) == ("override optimizer=mindspore_momentum: optimizer.momentum: missing value "
                                         "(???): set it in the config or with an override")


def test_no_group_file_carries_a_question_mark_under_a_name_with_another_spelling():
    root = hc.default_root()
    offenders = []
    for path in sorted(root.rglob("*.yaml")):
        body = yaml.safe_load(path.read_text())
        offenders += [f"{path.relative_to(root)}: {key}" for key, value in body.items()
                      if value == "???" and len(synonyms(key)) > 1]
    assert offenders == []
    assert "lr" not in yaml.safe_load((root / "optimizer" / "cerebras_sgd.yaml").read_text())

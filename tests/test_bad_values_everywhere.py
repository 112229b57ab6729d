"""Every value of every example config, each format's, replaced in turn by a value of another type or sign: `build`
builds or raises a ConfigError with a path, never another exception (the readers' type checks: a DeepSpeed
optimizer's `params: 5`, a scheduler `type: []`, a Trainer's `lr_scheduler_type: [cosine]`, Model Zoo's
`schedulers: 5`); and the Python entry points' own arguments, checked the same way."""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path
from typing import Any, Iterator

import pytest
import torch
import yaml

import optreg
from optreg import ConfigError

ROOT = Path(__file__).resolve().parent.parent
#: every config file of the examples in a data format (a Python config is read by `ast`, and the Hydra app's files
#: are a Hydra primary config with its groups, read by Hydra), and two real files of the corpora with keys the
#: examples lack (a Trainer's `optim` and `warmup_ratio`, an MMEngine `train_cfg.type`)
FILES = sorted(p for p in (ROOT / "examples").rglob("*")
               if p.suffix in (".json", ".yaml") and "hydra_app" not in p.parts)
FILES += [ROOT / "tests/fixtures/hf/corpus/constitutional-ai__dpo__config_anthropic.yaml",
          ROOT / "tests/fixtures/mmengine/configs/imagenet_sgd_coslr_100e.yaml"]
#: what replaces each value: another type, None, an empty container, a negative number, a boolean
VALUES = (5, None, "x", [], {}, -1, True)


def _net() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.LayerNorm(4), torch.nn.Linear(4, 2))


def _paths(obj: Any, prefix: tuple = ()) -> Iterator[tuple]:
    """The path of every mapping value and list item, depth first."""
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for key, value in items:
        yield prefix + (key,)
        yield from _paths(value, prefix + (key,))


def _replaced(obj: Any, path: tuple, value: Any) -> Any:
    out = copy.deepcopy(obj)
    here = out
    for key in path[:-1]:
        here = here[key]
    here[path[-1]] = value
    return out


def test_the_sweep_covers_every_format():
    from optreg.config import formats

    found = set()
    for path in FILES:
        data = json.loads(path.read_text()) if path.suffix == ".json" else yaml.safe_load(path.read_text())
        found.add(formats.detect(data).name)
    assert {"optreg", "deepspeed", "hf", "mmengine", "nemo", "mindformers"} <= found, found
    assert any(name.startswith("modelzoo") or name == "cerebras" for name in found), found


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_value_replaced_builds_or_is_a_config_error(path):
    data = json.loads(path.read_text()) if path.suffix == ".json" else yaml.safe_load(path.read_text())
    escaped, cases = [], 0
    for where in _paths(data):
        for value in VALUES:
            cases += 1
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    optreg.build(_replaced(data, where, value), _net(), steps_per_epoch=3)
                except ConfigError as exc:
                    assert exc.errors and all(isinstance(e.path, str) for e in exc.errors), (where, value, exc)
                except Exception as exc:  # noqa: BLE001 - what the test is for
                    escaped.append(f"{'.'.join(map(str, where))} = {value!r}: {type(exc).__name__}: {exc}")
    assert cases >= 50
    assert not escaped, "\n".join(escaped)


#: every example config, Python ones (read by `ast`) included, with the run length it needs beside it
EVERY_EXAMPLE = [p for p in FILES[:-2] + sorted((ROOT / "examples").rglob("*.py")) if "hydra_app" not in p.parts]


def _buildable() -> list[tuple[Path, dict]]:
    """(example, the build arguments with which it builds for a real model): the example scripts (`ddp_train.py`)
    are no config, and some files need their run length from the caller."""
    from optreg.train import make_model

    out = []
    for path in EVERY_EXAMPLE:
        for run in ({}, {"total_steps": 30}):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    optreg.build(path, make_model(8, 1, 0), **run)
                except ConfigError:
                    continue
            out.append((path, run))
            break
    return out


@pytest.mark.parametrize("model", [42, "x", [1, 2]], ids=["int", "str", "ints"])
def test_every_example_given_something_that_is_not_a_model_is_a_config_error(model):
    """Each example builds for a real model with the arguments beside it, so a ConfigError is about the model it is
    given instead (at `params`, or where the format says what it needs: a Model Zoo file groups a Module's
    parameters, MMEngine's paramwise_cfg reads its module types), never another exception: MindFormers' grouping by
    names raised a TypeError on 42 and a ValueError on "x"."""
    cases, failed = _buildable(), []
    for path, run in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                optreg.build(path, model, **run)
                failed.append(f"{path.name}: built")
            except ConfigError as exc:
                assert exc.errors and all(isinstance(e.path, str) for e in exc.errors), (path, exc)
            except Exception as exc:  # noqa: BLE001 - what the test is for
                failed.append(f"{path.name}: {type(exc).__name__}: {exc}")
    assert {p.parent.name for p, _ in cases} >= {"cerebras", "deepspeed", "hf", "libai", "mindformers", "mmengine",
                                                 "nemo", "examples"}
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("rules, path, message", [
    (5, "trainer.init.optimizer.AdamW.params", "expected a list of {params: <glob or globs>, tag: <name>}, got 5"),
    ([{"params": [], "tag": "x"}], "trainer.init.optimizer.AdamW.params[0].params", "expected glob patterns, got []"),
])
def test_model_zoo_tag_rules_of_another_type(rules, path, message):
    config = {"trainer": {"init": {"optimizer": {"AdamW": {"lr": 0.1, "params": rules}}}}}
    with pytest.raises(ConfigError) as info:
        optreg.build(config, _net())
    assert [(e.path, e.message) for e in info.value.errors] == [(path, message)]


# ---------------------------------------------------------------------------------------------------------------
# the Python entry points' own arguments
# ---------------------------------------------------------------------------------------------------------------
def _error(action) -> tuple[str, str]:
    with pytest.raises(ConfigError) as info:
        action()
    item = info.value.errors[0]
    return item.path, item.message


def test_a_scheduler_for_something_that_is_not_an_optimizer():
    assert _error(lambda: optreg.configure_lr_scheduler("notopt", "StepLR", step_size=2)) == (
        "optimizer", "expected a torch optimizer (with param_groups), got str")


@pytest.mark.parametrize("listing", [optreg.list_optimizers, optreg.list_schedulers])
def test_a_listing_pattern_that_is_not_a_string(listing):
    assert _error(lambda: listing(5)) == ("pattern", "expected an fnmatch pattern (a string), got int")
    assert listing("*") == listing(None) != []


@pytest.mark.parametrize("name, options", [("adamw", {"lr": 1e-3}), ("oneflow.AdamW", {}),
                                           ("mindspore.Adam", {"learning_rate": 1e-3})])
def test_a_bound_class_checks_its_params_as_configure_optimizer_does(name, options):
    cls = optreg.optimizer_class(name, **options)
    expected = _error(lambda: optreg.configure_optimizer(name, 5, **options))
    assert _error(lambda: cls(5)) == expected == (
        "params", "expected a torch.nn.Module, its named_parameters() or an iterable of tensors or group dicts, "
                  "got int 5")
    model = torch.nn.Linear(2, 2)
    assert [p for g in cls(model.parameters()).param_groups for p in g["params"]] == list(model.parameters())


def test_a_bound_class_refuses_bad_arguments_as_config_errors():
    """`cls(params, **overrides)`: a name the implementation does not take, a Module where it takes parameters, and
    a value the implementation refuses are ConfigErrors at their names (they were TypeError and ValueError)."""
    cls = optreg.optimizer_class("adamw", lr=1e-3)
    model = torch.nn.Linear(2, 2)
    assert _error(lambda: cls(model.parameters(), weigth_decay=0.1)) == ("weigth_decay", "not an argument of AdamW")
    with pytest.raises(ConfigError) as info:
        cls(model.parameters(), weigth_decay=0.1)
    assert info.value.errors[0].suggestion == "weight_decay"
    assert _error(lambda: cls(model)) == ("params", "torch.AdamW takes the parameters, not the Module: pass "
                                                    "model.parameters() or model.named_parameters()")
    assert _error(lambda: cls(model.parameters(), lr=-1)) == (
        "lr", "torch.AdamW refused the configuration: Invalid learning rate: -1")
    bound = optreg.optimizer_class("mindspore.Adam", learning_rate=1e-3)
    assert _error(lambda: bound(model.parameters(), beta3=0.9))[0] == "beta3"
    assert cls(model.parameters(), lr=0.1, foreach=False).defaults["lr"] == 0.1   # overrides still reach it


def test_a_directory_given_to_build_is_an_error_that_says_so(tmp_path):
    with pytest.raises(ConfigError) as info:
        optreg.build(str(tmp_path), _net())
    assert str(info.value) == f"{tmp_path}: not a regular file"

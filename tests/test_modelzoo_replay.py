"""Every Model Zoo corpus config (tests/modelzoo/configs) through `optreg.build(config, stand-in model)`, compared
with what Model Zoo 2.10 + cerebras.pytorch 2.10 built from it (tests/fixtures/modelzoo): the parameter groups
and their hyperparameters, the weights after 3 optimizer steps, and the lr (and weight decay) of every group over
the schedule. A config Model Zoo 2.10 refuses is a ConfigError here."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import pytest
import torch

import optreg
from optreg.errors import ConfigError

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("_modelzoo_replay", HERE / "modelzoo" / "replay.py")
replay = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(replay)

CONFIGS = replay.config_paths()
def _id(path: Path) -> str:
    return str(path.relative_to(replay.CONFIGS).with_suffix(""))


def _effective(optimizer, group) -> dict:
    """Cerebras' Adam keeps its decay in the group as `l2_regularization_rate` (weight_decay 0); optreg's cerebras.Adam
    keeps it as the group's weight_decay, applied as L2. Both as (decoupled decay, L2)."""
    coupled = type(optimizer).__name__ == "Adam"
    wd = float(group.get("weight_decay", 0.0))
    return {"weight_decay": 0.0 if coupled else wd, "l2_regularization_rate": wd if coupled else 0.0}


def _groups(model, optimizer) -> list[dict]:
    names = {id(p): n for n, p in model.named_parameters()}
    out = []
    for g in optimizer.param_groups:
        options = {k: (list(v) if isinstance(v, tuple) else sorted(v) if isinstance(v, set) else v)
                   for k, v in g.items() if k != "params"}
        options.update(_effective(optimizer, g))
        options.setdefault("correct_bias", True)   # optreg's Adam always corrects (Cerebras' Adam has no switch)
        out.append({"params": [names[id(p)] for p in g["params"]], "options": options})
    return out


def _expected_groups(fixture) -> list[dict]:
    out = []
    for g in fixture["groups"]:
        options = dict(g["options"])
        if "tags" in options and isinstance(options["tags"], list):
            options["tags"] = sorted(options["tags"])
        options.setdefault("l2_regularization_rate", 0.0)
        out.append({"params": g["params"], "options": options})
    return out


def _run(built, model, steps: list[int]):
    """(weights after 3 optimizer steps, {"steps", "lr", "weight_decay"}) as the recorder stepped them."""
    groups = built.optimizer.param_groups
    lr, wd = [[] for _ in groups], [[] for _ in groups]
    recorded, weights = set(steps), None
    for k in range(steps[-1] + 1):
        if k in recorded:
            for i, g in enumerate(groups):
                lr[i].append(float(g["lr"]))
                wd[i].append(float(g.get("weight_decay", 0.0)))
        if k == steps[-1]:
            break
        if k < 3:
            grads = replay.gradients(model, k + 1)
            for n, p in model.named_parameters():
                if p.requires_grad:
                    p.grad = torch.from_numpy(grads[n])
            built.optimizer.step()
            if k == 2:
                weights = {n: p.detach().numpy().ravel().tolist() for n, p in model.named_parameters()}
        if built.scheduler is not None:
            built.scheduler.step()
    return weights, {"steps": steps, "lr": lr, "weight_decay": wd}


@pytest.mark.parametrize("path", [pytest.param(p, id=_id(p)) for p in CONFIGS])
def test_replay(path):
    fixture_path = replay.fixture_path(path)
    if not fixture_path.exists():
        pytest.skip("no fixture recorded for this config yet")
    fixture = replay.load_fixture(fixture_path)
    config, _ = replay.load_config(path)
    model = replay.stand_in(path)
    if not fixture["builds"]:
        with pytest.raises(ConfigError):
            optreg.build(config, model)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = optreg.build(config, model)
    problems = replay.compare_groups(_expected_groups(fixture), _groups(model, built.optimizer))
    weights, schedule = _run(built, model, fixture["schedule"]["steps"])
    problems += replay.compare_weights(fixture["weights"], weights)
    problems += replay.compare_schedule(fixture["schedule"], schedule)
    assert not problems, "\n".join(problems[:20])


def test_corpus_is_replayed():
    """The corpus is there and most of it has fixtures (a replay of nothing proves nothing)."""
    assert len(CONFIGS) >= 40
    assert sum(replay.fixture_path(p).exists() for p in CONFIGS) >= 30

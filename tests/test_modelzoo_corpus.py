"""The Model Zoo corpus itself: configs with their provenance, a fixture for each, fixtures well formed,
the stand-in models rebuildable with the recorded parameter names, and the replay comparisons sane."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

_spec = importlib.util.spec_from_file_location("_modelzoo_replay", Path(__file__).parent / "modelzoo" / "replay.py")
replay = importlib.util.module_from_spec(_spec)
sys.modules["_modelzoo_replay"] = replay
_spec.loader.exec_module(replay)

CONFIGS = replay.config_paths()
PROVENANCE = re.compile(r"^# from Cerebras/modelzoo (R_|Release_)(\d+\.\d+\.\d+):\S+\.ya?ml$")
STAGES = {"convert", "validate", "stand-in", "optimizer", "scheduler", "step"}


def _id(path: Path) -> str:
    return path.relative_to(replay.CONFIGS).with_suffix("").as_posix()


def test_corpus_size_and_spread():
    assert len(CONFIGS) >= 40
    releases = Counter(p.parent.name for p in CONFIGS)
    assert len(releases) >= 10
    fixtures = [replay.load_fixture(replay.fixture_path(p)) for p in CONFIGS]
    forms = Counter(f["form"] for f in fixtures)
    assert forms["legacy"] >= 10 and forms["trainer"] >= 10
    families = {f["model"]["family"] for f in fixtures if "model" in f}
    assert {"gpt", "moe", "bert", "esm2", "t5", "vit", "dino", "llava", "fc_mnist", "bert_classifier",
            "bert_summarization", "dpr", "dit", "mm_simple"} <= families


def test_no_stray_fixtures():
    expected = {replay.fixture_path(p) for p in CONFIGS}
    assert set(replay.FIXTURES.glob("*/*.json")) == expected


def test_fixtures_are_compact():
    assert sum(p.stat().st_size for p in replay.FIXTURES.glob("*/*.json")) < 6 * 2**20


@pytest.mark.parametrize("path", CONFIGS, ids=_id)
def test_config_and_fixture(path):
    first = path.read_text().splitlines()[0]
    match = PROVENANCE.match(first)
    assert match, f"{path.name}: first line {first!r} is not a provenance line"
    assert match.group(2) == path.parent.name
    config, source = replay.load_config(path)
    assert isinstance(config, dict)

    fixture = replay.load_fixture(replay.fixture_path(path))
    assert fixture["format"] == 1
    assert fixture["config"] == path.relative_to(replay.TESTS.parent).as_posix()
    assert fixture["source"] == source
    assert fixture["form"] == ("trainer" if "trainer" in config else "legacy")
    assert isinstance(fixture["warnings"], list)
    if not fixture["builds"]:
        err = fixture["error"]
        assert err["stage"] in STAGES and err["type"] and isinstance(err["message"], str)
        assert "groups" not in fixture
        return
    assert fixture["error"] is None

    params = fixture["model"]["parameters"]
    trainable = [n for n in params if n not in fixture["model"]["frozen"]]
    grouped = [n for g in fixture["groups"] for n in g["params"]]
    assert sorted(grouped) == sorted(trainable), "every trainable parameter is in exactly one group"
    for group in fixture["groups"]:
        assert "lr" in group["options"] and "weight_decay" in group["options"]

    schedule = fixture["schedule"]
    steps = schedule["steps"]
    assert steps[0] == 0 and steps == sorted(set(steps)) and len(steps) <= 1100
    assert len(schedule["lr"]) == len(fixture["groups"])
    assert all(len(row) == len(steps) for row in schedule["lr"])
    for row in schedule.get("weight_decay", []):
        assert len(row) == len(steps)
    for g, group in enumerate(fixture["groups"]):
        assert schedule["lr"][g][0] == pytest.approx(group["options"]["lr"], rel=1e-6, abs=1e-30)

    assert set(fixture["weights"]) == set(params)
    for name, shape in params.items():
        assert len(fixture["weights"][name]) == int(np.prod(shape, dtype=np.int64))

    model = replay.stand_in(path)
    assert {n: list(p.shape) for n, p in model.named_parameters()} == params
    assert [n for n, p in model.named_parameters() if not p.requires_grad] == fixture["model"]["frozen"]


def test_comparisons_catch_differences():
    groups = [{"params": ["a", "b"], "options": {"lr": 0.1, "weight_decay": 0.0, "betas": [0.9, 0.95]}}]
    assert replay.compare_groups(groups, [{"params": ["b", "a"], "options": groups[0]["options"]}])
    assert replay.compare_groups(groups, [{"params": ["a", "b"], "options": {**groups[0]["options"], "lr": 0.1001}}])
    assert not replay.compare_groups(groups, [{"params": ["a", "b"],
                                               "options": {**groups[0]["options"], "lr": 0.1 * (1 + 1e-8)}}])
    assert replay.compare_weights({"a": [1.0, 2.0]}, {"a": [1.0, 2.0001]})
    assert not replay.compare_weights({"a": [1.0, 2.0]}, {"a": np.array([1.0, 2.0 * (1 + 1e-6)])})
    sched = {"steps": [0, 1, 2], "lr": [[0.0, 0.5, 1.0]]}
    assert not replay.compare_schedule(sched, {"steps": [0, 1, 2], "lr": [[1e-7, 0.5, 1.0]]})
    assert replay.compare_schedule(sched, {"steps": [0, 1, 2], "lr": [[0.0, 0.5001, 1.0]]})

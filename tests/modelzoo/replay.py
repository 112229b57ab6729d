"""Pure helpers to replay the Model Zoo fixtures: load a fixture and its config, build the stand-in
model, and compare what an implementation built with what Model Zoo 2.10 recorded.

The comparison functions return a list of human-readable mismatches (empty when they agree):
- `compare_groups(expected, actual)`: the groups in order, the parameter names of each, and every
  recorded option (numbers within `rel`, lists elementwise, other values equal);
- `compare_weights(expected, actual)`: weights after the recorded optimizer steps, elementwise with
  |a - e| <= rel * max(|e|, tiny);
- `compare_schedule(expected, actual)`: per group, the lr at every recorded step within `rel` of the
  peak |lr| of that group (weight decay likewise when it is scheduled).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
CONFIGS = HERE / "configs"
FIXTURES = TESTS / "fixtures" / "modelzoo"

STEP_RTOL = 1e-5      # weights after the optimizer steps, relative
SCHEDULE_RTOL = 1e-5  # lrs, relative to each group's peak
OPTION_RTOL = 1e-6    # group hyperparameters
TINY = 1e-30


def models():
    """tests/modelzoo/models.py, loaded by its path (tests/ is not a package)."""
    import importlib.util
    import sys

    name = "_modelzoo_stand_in_models"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / "models.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def config_paths() -> list[Path]:
    return sorted(CONFIGS.glob("*/*.yaml"))


def fixture_path(config: Path) -> Path:
    return FIXTURES / Path(config).resolve().relative_to(CONFIGS).with_suffix(".json")


def load_fixture(path: Path | str) -> dict:
    return json.loads(Path(path).read_text())


def load_config(path: Path | str) -> tuple[dict, str]:
    """The config's mapping and its provenance (`Cerebras/modelzoo <tag>:<path>`)."""
    text = Path(path).read_text()
    first = text.splitlines()[0]
    if not first.startswith("# from "):
        raise ValueError(f"{path}: first line is not a provenance comment")
    return yaml.safe_load(text), first.removeprefix("# from ").strip()


def stand_in(config_path: Path | str, **kwargs):
    """The stand-in model of a corpus config (tests/modelzoo/models.py), with its seeded weights."""
    config, provenance = load_config(config_path)
    return models().build(config, provenance, **kwargs)


def gradients(model, step: int) -> dict[str, np.ndarray]:
    """The gradients fed at optimizer step `step` (1-based) to every trainable parameter."""
    return {n: models().gradient(n, tuple(p.shape), step) for n, p in model.named_parameters() if p.requires_grad}


def _close(a: float, e: float, tol: float) -> bool:
    if a is None or e is None:
        return a is e
    if isinstance(e, str) or isinstance(a, str):
        return a == e
    if math.isnan(e):
        return math.isnan(a)
    return abs(a - e) <= tol


def _same_value(a: Any, e: Any, rel: float) -> bool:
    if isinstance(e, bool) or isinstance(a, bool):
        return a == e
    if isinstance(e, (int, float)) and isinstance(a, (int, float)):
        return _close(float(a), float(e), rel * max(abs(float(e)), TINY))
    if isinstance(e, (list, tuple)) and isinstance(a, (list, tuple)):
        return len(a) == len(e) and all(_same_value(x, y, rel) for x, y in zip(a, e))
    return a == e


def compare_groups(expected: Sequence[Mapping], actual: Sequence[Mapping], rel: float = OPTION_RTOL,
                   options: Iterable[str] | None = None) -> list[str]:
    """Groups as `[{"params": [names], "options": {name: value}}]`; `options` limits the keys compared."""
    problems = []
    if len(expected) != len(actual):
        problems.append(f"{len(actual)} groups, expected {len(expected)}")
    for i, (e, a) in enumerate(zip(expected, actual)):
        if list(e["params"]) != list(a["params"]):
            missing = sorted(set(e["params"]) - set(a["params"]))
            extra = sorted(set(a["params"]) - set(e["params"]))
            problems.append(f"group {i}: params differ (missing {missing}, extra {extra}"
                            + (", order" if not missing and not extra else "") + ")")
        keys = list(options) if options is not None else list(e["options"])
        for key in keys:
            if key not in e["options"]:
                continue
            if key not in a["options"]:
                problems.append(f"group {i}: option {key!r} missing (expected {e['options'][key]!r})")
            elif not _same_value(a["options"][key], e["options"][key], rel):
                problems.append(f"group {i}: {key}={a['options'][key]!r}, expected {e['options'][key]!r}")
    return problems


def compare_weights(expected: Mapping[str, Sequence[float]], actual: Mapping[str, Any],
                    rel: float = STEP_RTOL) -> list[str]:
    problems = []
    for name in sorted(set(expected) | set(actual)):
        if name not in actual or name not in expected:
            problems.append(f"{name}: {'missing' if name not in actual else 'unexpected'}")
            continue
        e = np.asarray(expected[name], dtype=np.float64).ravel()
        a = np.asarray(actual[name], dtype=np.float64).ravel()
        if e.shape != a.shape:
            problems.append(f"{name}: {a.size} values, expected {e.size}")
            continue
        bad = np.abs(a - e) > rel * np.maximum(np.abs(e), TINY)
        if bad.any():
            i = int(np.argmax(bad))
            problems.append(f"{name}[{i}]: {a[i]!r}, expected {e[i]!r} ({int(bad.sum())} of {e.size} off)")
    return problems


def compare_schedule(expected: Mapping[str, Any], actual: Mapping[str, Any], rel: float = SCHEDULE_RTOL,
                     keys: Iterable[str] = ("lr", "weight_decay")) -> list[str]:
    """Schedules as `{"steps": [...], "lr": [[per step] per group], "weight_decay": ...}`."""
    problems = []
    if list(expected["steps"]) != list(actual["steps"]):
        return ["recorded steps differ"]
    for key in keys:
        if key not in expected:
            continue
        if key not in actual:
            problems.append(f"{key}: missing")
            continue
        if len(expected[key]) != len(actual[key]):
            problems.append(f"{key}: {len(actual[key])} groups, expected {len(expected[key])}")
            continue
        for g, (e_row, a_row) in enumerate(zip(expected[key], actual[key])):
            peak = max((abs(v) for v in e_row if v is not None), default=0.0)
            tol = rel * max(peak, TINY)
            for step, e, a in zip(expected["steps"], e_row, a_row):
                if not _close(a, e, tol):
                    problems.append(f"{key} group {g} step {step}: {a!r}, expected {e!r}")
                    break
    return problems

"""Helpers shared by the fixture recorders (record_cerebras.py, record_oneflow.py): deterministic inputs
and a compact JSON layout. Pure numpy + json, so each framework's own interpreter can import it.

Layout of tests/fixtures/<framework>/optimizers.json:
    {"framework": ..., "dtype": "float32", "steps": S, "shapes": {name: shape},
     "cases": [{"name", "optimizer" (optreg's "<dialect>.<Name>"), "options" (constructor keywords in
                optreg's spelling), "groups" (null, or [{"params": [names], <group options>}]),
                and either "init" {name: flat}, "grads" {name: [S flats]}, "params" {name: [S flats]}
                (the weights after each step), or "refused": "<Exception>: <message>"; "grad_scale" where
                the gradients are inputs(..., scale) with scale != 1}]}
tests/fixtures/<framework>/schedulers.json:
    {"framework": ..., "cases": [{"name", "scheduler" (an optreg spec: {"name": ..., <options>},
                nested stages as specs), "group_lrs" (the optimizer's lr per group), "steps": N,
                "lrs": [[lr per group] at step 0..N], optionally "metrics"; or "refused"}]}
Numbers are float32 values written in their shortest round-tripping form.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
SHAPES = {"w": (4, 3), "b": (3,), "v": (5,)}
STEPS = 5


def inputs(name: str, steps: int = STEPS, shapes: dict = SHAPES, scale: float = 1.0):
    """The initial weights and the gradient of every step, float32, seeded by the case name."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    init = {n: (0.5 * rng.standard_normal(s)).astype(np.float32) for n, s in shapes.items()}
    grads = {n: (scale * rng.standard_normal((steps, *s))).astype(np.float32) for n, s in shapes.items()}
    return init, grads


def f32(x):
    """A float32 array or scalar as nested lists of floats that print in their shortest float32 form."""
    a = np.asarray(x, dtype=np.float32)
    if a.ndim == 0:
        return float(np.format_float_scientific(a, unique=True)) if np.isfinite(a) else float(a)
    return [f32(v) for v in a]


def flat(x):
    return f32(np.asarray(x, dtype=np.float32).reshape(-1))


def refusal(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:300]


def write(framework: str, kind: str, header: dict, cases: list[dict]) -> Path:
    path = ROOT / framework / f"{kind}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    head = json.dumps(header, separators=(",", ":"))[:-1]
    body = ",\n".join(json.dumps(c, separators=(",", ":")) for c in cases)
    path.write_text(f'{head},"cases":[\n{body}\n]}}\n')
    return path

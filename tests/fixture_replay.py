"""Replaying optimizer and scheduler trajectories recorded from a real framework (layout: scripts/fixture_io.py).

make_tests(dialect, ...) returns the parametrized test functions a test module exposes; the cases named in
`xfail` are marked xfail(strict=True) with the measured difference as the reason.
"""

from __future__ import annotations

import importlib.util
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import optreg
from optreg.train import EARLY_SCHEDULER_STEP

HERE = Path(__file__).parent / "fixtures"
RTOL = 1e-5          # params: |got - want| <= RTOL·max|want| of the tensor, at every step
LR_RTOL = 1e-5       # lrs: |got - want| <= LR_RTOL·(peak lr of the case), at every step


def load(framework: str):
    opt = json.loads((HERE / framework / "optimizers.json").read_text())
    sched = json.loads((HERE / framework / "schedulers.json").read_text())
    return opt, sched


def _generator():
    path = Path(__file__).resolve().parent.parent / "scripts" / "fixture_io.py"
    spec = importlib.util.spec_from_file_location("fixture_io", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _names(case, shapes):
    return list(shapes) if case["groups"] is None else [n for g in case["groups"] for n in g["params"]]


def build_optimizer(case, shapes):
    names = _names(case, shapes)
    init = case.get("init") or {n: np.zeros(int(np.prod(shapes[n]))) for n in names}
    params = {n: torch.nn.Parameter(torch.tensor(np.asarray(init[n], dtype=np.float32).reshape(shapes[n])))
              for n in names}
    if case["groups"] is None:
        given = list(params.values())
    else:
        given = [{**{k: v for k, v in g.items() if k != "params"}, "params": [params[n] for n in g["params"]]}
                 for g in case["groups"]]
    return params, optreg.configure_optimizer(case["optimizer"], given, **case["options"])


def replay_optimizer(case, shapes):
    """optreg's weights after every recorded step, {name: [steps, flat]} (float32)."""
    params, opt = build_optimizer(case, shapes)
    out = {n: [] for n in params}
    no_grad = case.get("no_grad", {})
    for k in range(len(next(iter(case["grads"].values())))):
        for n, p in params.items():
            p.grad = (None if k in no_grad.get(n, ()) else
                      torch.tensor(np.asarray(case["grads"][n][k], dtype=np.float32).reshape(shapes[n])))
        if case.get("clip_grad"):
            opt.clip_grad()
        opt.step()
        for n, p in params.items():
            out[n].append(p.detach().numpy().reshape(-1).copy())
    return out


def worst_param_error(case, shapes):
    """(relative error, step, name) of the worst step."""
    got = replay_optimizer(case, shapes)
    worst = (0.0, 0, "")
    for n, traj in got.items():
        for k, g in enumerate(traj):
            want = np.asarray(case["params"][n][k], dtype=np.float32)
            scale = max(float(np.abs(want).max()), 1e-30)
            worst = max(worst, (float(np.abs(g - want).max()) / scale, k + 1, n))
    return worst


def build_scheduler(case, dialect):
    """The case's SGD (one group per recorded lr, with the case's `group_extras`: weight decays, ScalePerParam
    factors) and its scheduler."""
    ps = [torch.nn.Parameter(torch.zeros(2)) for _ in case["group_lrs"]]
    extras = case.get("group_extras") or [{} for _ in ps]
    opt = optreg.configure_optimizer(f"{dialect}.SGD", [{"params": [p], "lr": lr, **e} for p, lr, e in
                                                         zip(ps, case["group_lrs"], extras)], lr=case["group_lrs"][0])
    return opt, optreg.configure_lr_scheduler(opt, case["scheduler"])


def replay_scheduler(case, dialect):
    """The values of the case's key (`lr` unless it says another) in every group, before the first step and after
    each scheduler step."""
    opt, sched = build_scheduler(case, dialect)
    key = case.get("key", "lr")
    lrs = [[float(g[key]) for g in opt.param_groups]]
    metrics = case.get("metrics")
    for t in range(case["steps"]):
        opt.step()
        sched.step(metrics[t]) if metrics else sched.step()
        lrs.append([float(g[key]) for g in opt.param_groups])
    return np.array(lrs)


def scheduler_error(case, dialect):
    """(max |got - want| / peak, step) over all groups and steps."""
    want = np.asarray(case["lrs"], dtype=np.float64)
    got = replay_scheduler(case, dialect)
    err = np.abs(got - want).max(axis=1) / max(float(np.abs(want).max()), 1e-30)
    return float(err.max()), int(err.argmax())


def _params(cases, xfail):
    return [pytest.param(c, id=c["name"], marks=[pytest.mark.xfail(strict=True, reason=xfail[c["name"]])]
                         if c["name"] in xfail else []) for c in cases]


def make_tests(dialect, doc, sched, xfail, unrecordable=frozenset()):
    shapes = {n: tuple(s) for n, s in doc["shapes"].items()}
    unknown = set(xfail) - {c["name"] for c in doc["cases"] + sched["cases"]}
    assert not unknown, f"xfail names no recorded case: {unknown}"

    @pytest.mark.parametrize("case", _params(doc["cases"], xfail))
    def test_optimizer_matches_recording(case):
        if "refused" in case:   # the framework raised: optreg must refuse the configuration as well
            with pytest.raises(optreg.ConfigError):
                build_optimizer(case, shapes)
            return
        err, step, name = worst_param_error(case, shapes)
        assert err <= RTOL, f"{case['name']}: relative error {err:.3g} at step {step} ({name})"

    @pytest.mark.parametrize("case", _params(sched["cases"], xfail))
    def test_scheduler_matches_recording(case):
        if "refused" in case:
            with pytest.raises(optreg.ConfigError):
                build_scheduler(case, dialect)
            return
        err, step = scheduler_error(case, dialect)
        assert err <= LR_RTOL, f"{case['name']}: lr error {err:.3g} of the peak at step {step}"

    def test_every_optimizer_row_is_recorded():
        recorded = {c["optimizer"].split(".", 1)[1] for c in doc["cases"] if "refused" not in c}
        assert set(optreg.list_optimizers(dialect=dialect)) - recorded == set(unrecordable) & set(
            optreg.list_optimizers(dialect=dialect))

    def test_every_scheduler_row_is_recorded():
        recorded = {c["scheduler"]["name"].split(".", 1)[1] for c in sched["cases"] if "refused" not in c}
        assert set(optreg.list_schedulers(dialect=dialect)) - recorded == set(unrecordable) & set(
            optreg.list_schedulers(dialect=dialect))

    def test_recordings_are_float32_and_deterministic():
        """Every case's inputs are what the shared generator makes from its name, and every number is float32."""
        gen = _generator()
        for case in doc["cases"]:
            if "refused" in case:
                continue
            steps = len(next(iter(case["grads"].values())))
            init, grads = gen.inputs(case["name"], steps, {n: shapes[n] for n in _names(case, shapes)},
                                     case.get("grad_scale", 1.0))
            for n in init:
                np.testing.assert_array_equal(np.asarray(case["init"][n], dtype=np.float32), init[n].reshape(-1))
                np.testing.assert_array_equal(np.asarray(case["grads"][n], dtype=np.float32),
                                              grads[n].reshape(steps, -1))
                w = np.asarray(case["params"][n], dtype=np.float64)
                assert np.array_equal(w.astype(np.float32).astype(np.float64), w)
        for case in sched["cases"]:
            if "lrs" in case:
                lrs = np.asarray(case["lrs"], dtype=np.float64)
                assert lrs.shape == (case["steps"] + 1, len(case["group_lrs"]))
                assert np.array_equal(lrs.astype(np.float32).astype(np.float64), lrs)

    return (test_optimizer_matches_recording, test_scheduler_matches_recording, test_every_optimizer_row_is_recorded,
            test_every_scheduler_row_is_recorded, test_recordings_are_float32_and_deterministic)


def stand_in(shapes: dict, init: dict) -> torch.nn.Module:
    """A module whose named_parameters() are `shapes`' dotted names, in order, holding the recorded initial values
    (a stand-in for a real model, named as the real model's parameters)."""
    root = torch.nn.Module()
    for name, shape in shapes.items():
        *path, leaf = name.split(".")
        module = root
        for part in path:
            if not hasattr(module, part):
                module.add_module(part, torch.nn.Module())
            module = getattr(module, part)
        module.register_parameter(leaf, torch.nn.Parameter(torch.tensor(init[name]).reshape(shape)))
    return root


def step_and_compare(optimizer, scheduler, params: dict, grads: list, weights: list, tolerance: float = 1e-5,
                     before_step=None, accumulation: int = 1) -> None:
    """Give each recorded step's gradients, step (`before_step()` first, e.g. clip_grad), and compare the weights
    with the recorded ones within `tolerance` (relative and absolute). With `accumulation` A micro-batches per
    optimizer step the scheduler steps A times per optimizer step: A - 1 before it, one after (optreg.train)."""
    for step_grads, step_weights in zip(grads, weights):
        for _ in range(accumulation - 1):
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", EARLY_SCHEDULER_STEP)
                scheduler.step()
        for name, p in params.items():
            p.grad = torch.tensor(step_grads[name], dtype=p.dtype).reshape(p.shape)
        if before_step is not None:
            before_step()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        for name, p in params.items():
            assert p.detach().reshape(-1).tolist() == pytest.approx(step_weights[name], rel=tolerance,
                                                                    abs=tolerance), name

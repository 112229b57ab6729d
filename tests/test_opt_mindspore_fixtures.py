"""The MindSpore dialect against trajectories recorded from MindSpore's CPU build (float32).

Fixtures: tests/fixtures/mindspore/ (recorded by scripts/record_mindspore_fixtures.py). Each case
replays the recorded gradients through our implementation, in float32, and compares the weights
after every step.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from optreg.dialects.mindspore.adafactor import AdaFactor
from optreg.dialects.mindspore.ftrl import FTRL
from optreg.dialects.mindspore import adam as ms

HERE = Path(__file__).parent / "fixtures" / "mindspore"
DOC = json.loads((HERE / "cases.json").read_text())
ARRAYS = np.load(HERE / "trajectories.npz")
MINE = {"Adam": ms.Adam, "LazyAdam": ms.LazyAdam, "AdamOffload": ms.AdamOffload, "AdamWeightDecay": ms.AdamWeightDecay,
        "FTRL": FTRL, "AdaFactor": AdaFactor}
KNOBS: dict = {}
# MindSpore's CPU ApplyFtrl kernel contradicts the documented formula when l1 > 0 (see below);
# those cases are compared with the documented formula and with the kernel's, separately.
KERNEL_DIFFERS = {c["name"] for c in DOC["cases"] if c["optimizer"] == "FTRL" and c["kwargs"].get("l1", 0.0) > 0}
CASES = [c for c in DOC["cases"] if c["optimizer"] in MINE and c["name"] not in KERNEL_DIFFERS]

# float32 trajectories: MindSpore keeps beta powers as float32 running products and fuses some
# kernels; we compute the same formulas in float32 with float64 scalars. Steps are ~1e-2.
RTOL, ATOL = 2e-5, 1e-5


def _build(case):
    names = list(DOC["shapes"])
    params = {n: torch.nn.Parameter(torch.from_numpy(ARRAYS[f"{case['name']}/init/{n}"].copy())) for n in names}
    if case["groups"] is None:
        given = [(n, params[n]) for n in names]
    else:
        given = []
        for g in case["groups"]:
            if "order_params" in g:
                given.append({"order_params": list(g["order_params"])})
            else:
                given.append({**{k: v for k, v in g.items() if k != "params"},
                              "params": [params[n] for n in g["params"]], "param_names": list(g["params"])})
    cls = MINE[case["optimizer"]]
    return params, cls(given, **case["kwargs"], **KNOBS.get(case["optimizer"], {}))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_matches_mindspore_trajectory(case):
    params, opt = _build(case)
    steps = DOC["steps"]
    worst = 0.0
    for k in range(steps):
        for n, p in params.items():
            p.grad = torch.from_numpy(ARRAYS[f"{case['name']}/grads/{n}"][k].copy())
        opt.step()
        for n, p in params.items():
            want = ARRAYS[f"{case['name']}/weights/{n}"][k]
            got = p.detach().numpy()
            worst = max(worst, float(np.abs(got - want).max()))
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=f"{case['name']} step {k + 1} {n}")
    assert worst < 1e-4


def test_order_params_order_is_recorded_order():
    case = next(c for c in CASES if c["name"] == "adam_nesterov_groups")
    params, opt = _build(case)
    ours = [p for g in opt.param_groups for p in g["params"]]
    assert [id(p) for p in ours] == [id(params[n]) for n in case["order"]]


def test_fixture_covers_every_cpu_optimizer_of_this_family():
    recorded = {c["optimizer"] for c in DOC["cases"]}
    assert set(MINE) <= recorded


def _ftrl_numpy(case, *, kernel_sign_bug: bool):
    """FTRL on the fixture's gradients in float64: MindSpore's pipeline, then ApplyFtrl.

    kernel_sign_bug=False is the documented formula, w = (sign(z)·l1 - z)/q; True is what the CPU
    kernel of MindSpore 2.x computes, w = (l1 - z)/q, i.e. +l1 whatever the sign of z.
    """
    kw = {"initial_accum": 0.1, "learning_rate": 0.001, "lr_power": -0.5, "l1": 0.0, "l2": 0.0,
          "weight_decay": 0.0, "loss_scale": 1.0, **case["kwargs"]}
    lr, p, l1, l2 = kw["learning_rate"], kw["lr_power"], kw["l1"], kw["l2"]
    out = {}
    for n in DOC["shapes"]:
        w = ARRAYS[f"{case['name']}/init/{n}"].astype(np.float64)
        acc = np.full_like(w, kw["initial_accum"])
        z = np.zeros_like(w)
        traj = []
        for g in ARRAYS[f"{case['name']}/grads/{n}"].astype(np.float64):
            g = (g + kw["weight_decay"] * kw["loss_scale"] * w) * (1.0 / kw["loss_scale"])
            acc_new = acc + g * g
            z = z + g - (acc_new ** (-p) - acc ** (-p)) / lr * w
            shrink = l1 if kernel_sign_bug else np.sign(z) * l1
            w = np.where(np.abs(z) > l1, (shrink - z) / (acc_new ** (-p) / lr + 2 * l2), 0.0)
            acc = acc_new
            traj.append(w)
        out[n] = np.stack(traj)
    return out


@pytest.mark.parametrize("name", sorted(KERNEL_DIFFERS))
def test_ftrl_l1_follows_the_documented_formula_not_the_cpu_kernel(name):
    """With l1 > 0 MindSpore's CPU kernel shrinks negative z the wrong way; we follow the docs.

    The fixture is kept as recorded: it matches the kernel's (l1 - z)/q form, and our
    implementation matches the documented (sign(z)·l1 - z)/q form on the same gradients.
    """
    case = next(c for c in DOC["cases"] if c["name"] == name)
    kernel = _ftrl_numpy(case, kernel_sign_bug=True)
    documented = _ftrl_numpy(case, kernel_sign_bug=False)
    params, opt = _build(case)
    for p in params.values():
        p.data = p.data.double()
    for k in range(DOC["steps"]):
        for n, p in params.items():
            p.grad = torch.from_numpy(ARRAYS[f"{name}/grads/{n}"][k].astype(np.float64))
        opt.step()
        for n, p in params.items():
            np.testing.assert_allclose(p.detach().numpy(), documented[n][k], rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(ARRAYS[f"{name}/weights/{n}"][k], kernel[n][k], rtol=1e-4, atol=1e-5)
    # and the two forms really differ on this fixture (it exercises negative z with |z| > l1)
    assert max(np.abs(kernel[n] - documented[n]).max() for n in kernel) > 1e-3

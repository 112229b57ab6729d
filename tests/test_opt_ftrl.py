"""MindSpore FTRL against the numpy reference (documented formula), float64, 25 steps."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import optreg
from optreg.reference import ftrl as ref
from optreg.reference.pipeline import mindspore_grad
from named_trajectory import assert_exact_resume, gradient_noise, named_params, run_named as _run

STEPS = 25
SHAPES = {"fc.weight": (4, 16), "fc.bias": (4,), "bn.gamma": (4,)}


def _params(seed=0):
    return named_params(SHAPES, seed)


def _noise(seed=1):
    return gradient_noise(SHAPES, STEPS, seed)


def _reference(init, noise, *, lr, lr_power=-0.5, l1=0.0, l2=0.0, initial_accum=0.1, wd_of=lambda n: 0.0,
               ls=1.0, gc_of=lambda n: False):
    w = {n: v.copy() for n, v in init.items()}
    acc = {n: np.full_like(v, initial_accum) for n, v in w.items()}
    z = {n: np.zeros_like(v) for n, v in w.items()}
    out = []
    for step in noise:
        for n in w:
            g = mindspore_grad(ls * (step[n] + 0.1 * w[n]), w[n], weight_decay=wd_of(n), loss_scale=ls,
                               centralize=gc_of(n))
            w[n], acc[n], z[n] = ref.ftrl(w[n], g, acc[n], z[n], lr=lr, lr_power=lr_power, l1=l1, l2=l2)
        out.append({n: x.copy() for n, x in w.items()})
    return out


def _close(a, b):
    for k, (x, y) in enumerate(zip(a, b)):
        for n in x:
            np.testing.assert_allclose(x[n], y[n], rtol=1e-12, atol=1e-14, err_msg=f"step {k + 1} {n}")


CASES = [
    {"learning_rate": 0.1},
    {"learning_rate": 0.05, "l1": 2.0, "l2": 0.02},
    {"learning_rate": 0.05, "lr_power": -0.3, "initial_accum": 0.2, "l1": 0.01, "weight_decay": 0.05,
     "loss_scale": 8.0},
    {"learning_rate": 0.05, "lr_power": 0.0, "l2": 0.1},
]


@pytest.mark.parametrize("kw", CASES, ids=[str(c) for c in CASES])
def test_ftrl_ungrouped(kw):
    params = _params()
    init = {n: p.detach().numpy().copy() for n, p in params.items()}
    noise = _noise()
    opt = optreg.configure_optimizer("FTRL", list(params.items()), dialect="mindspore", **kw)
    got = _run(opt, params, noise, scale=kw.get("loss_scale", 1.0))
    r = dict(kw)
    wd = r.pop("weight_decay", 0.0)
    ls = r.pop("loss_scale", 1.0)
    lr = r.pop("learning_rate")
    # FTRL decays every parameter when ungrouped (no beta/gamma filter)
    _close(got, _reference(init, noise, lr=lr, wd_of=lambda n: wd, ls=ls, **r))
    if kw.get("l1", 0) >= 1.0:
        assert any((got[-1][n] == 0).any() for n in got[-1])     # l1 produces exact zeros


def test_ftrl_groups_with_centralization():
    params = _params()
    init = {n: p.detach().numpy().copy() for n, p in params.items()}
    noise = _noise()
    from optreg.dialects.mindspore import ftrl as ms
    opt = ms.FTRL([{"params": [params["fc.weight"]], "grad_centralization": True, "weight_decay": 0.1},
                   {"params": [params["fc.bias"], params["bn.gamma"]]}], learning_rate=0.1, l1=0.01)
    _close(_run(opt, params, noise), _reference(init, noise, lr=0.1, l1=0.01, gc_of=lambda n: n == "fc.weight",
                                               wd_of=lambda n: 0.1 if n == "fc.weight" else 0.0))


def test_ftrl_sparse_updates_only_touched_rows():
    w0 = torch.randn(6, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    p = torch.nn.Parameter(w0.clone())
    opt = optreg.configure_optimizer("FTRL", [("emb", p)], dialect="mindspore", learning_rate=0.1, l1=0.01)
    w, acc, z = w0.numpy().copy(), np.full((6, 3), 0.1), np.zeros((6, 3))
    rng = np.random.default_rng(3)
    for _ in range(10):
        idx = np.array([0, 2, 2])
        vals = rng.standard_normal((3, 3))
        p.grad = torch.sparse_coo_tensor(torch.from_numpy(idx)[None], torch.from_numpy(vals), (6, 3),
                                         check_invariants=True)
        opt.step()
        g = np.zeros((6, 3))
        np.add.at(g, idx, vals)
        rows = [0, 2]
        w[rows], acc[rows], z[rows] = ref.ftrl(w[rows], g[rows], acc[rows], z[rows], lr=0.1, lr_power=-0.5,
                                               l1=0.01, l2=0.0)
        np.testing.assert_allclose(p.detach().numpy(), w, rtol=1e-12, atol=1e-14)
    assert torch.equal(p.detach()[[1, 3, 4, 5]], w0[[1, 3, 4, 5]])


def test_ftrl_refuses_dynamic_and_group_lr():
    params = _params()
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer("FTRL", list(params.items()), dialect="mindspore", learning_rate=[0.1, 0.2])
    assert info.value.errors[0].path == "learning_rate"
    from optreg.dialects.mindspore import ftrl as ms
    with pytest.raises(optreg.ConfigError) as info:
        ms.FTRL([{"params": [params["fc.weight"]], "lr": 0.1}, {"params": [params["fc.bias"]]}])
    assert info.value.errors[0].path == "param_groups[0].lr"


def test_ftrl_exact_resume():
    kw = {"learning_rate": 0.05, "l1": 0.01, "l2": 0.01, "weight_decay": 0.01}
    assert_exact_resume(lambda params: optreg.configure_optimizer("FTRL", list(params.items()), dialect="mindspore",
                                                                  **kw), _params, _noise(), 11)

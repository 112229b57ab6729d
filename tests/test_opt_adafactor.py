"""AdaFactor rows (MindSpore AdaFactor, Cerebras Adafactor) against the numpy reference, float64, 25 steps."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import optreg
from optreg.reference import adafactor as ref
from named_trajectory import assert_exact_resume, gradient_noise, named_params

STEPS = 25
SHAPES = {"attn.weight": (6, 8), "conv.weight": (3, 4, 5), "attn.bias": (6,), "ln.gamma": (8,)}


def _params(seed=0):
    return named_params(SHAPES, seed)


def _noise(seed=1):
    return gradient_noise(SHAPES, STEPS, seed)


def _run(opt, params, noise, scale=1.0, skip=lambda k, n: False):
    out = []
    for k, step in enumerate(noise):
        for n, p in params.items():
            p.grad = None if skip(k, n) else torch.from_numpy(scale * (step[n] + 0.1 * p.detach().numpy()))
        opt.step()
        out.append({n: p.detach().numpy().copy() for n, p in params.items()})
    return out


def _reference(init, noise, *, t_of=None, skip=lambda k, n: False, **kw):
    w = {n: v.copy() for n, v in init.items()}
    state = {n: ref.init_state(v, kw.get("beta1")) for n, v in w.items()}
    count = {n: 0 for n in w}
    out = []
    for k, step in enumerate(noise):
        for n in w:
            if skip(k, n):
                continue
            count[n] += 1
            t = k + 1 if t_of == "global" else count[n]
            w[n], state[n] = ref.adafactor(w[n], step[n] + 0.1 * w[n], state[n], t, **kw)
        out.append({n: x.copy() for n, x in w.items()})
    return out


def _close(a, b, rtol=1e-12, atol=1e-14):
    for k, (x, y) in enumerate(zip(a, b)):
        for n in x:
            np.testing.assert_allclose(x[n], y[n], rtol=rtol, atol=atol, err_msg=f"step {k + 1} {n}")


MS_CASES = [
    {},
    {"warmup_init": True},
    {"scale_parameter": False, "beta1": 0.0},
    {"learning_rate": 0.02, "relative_step": False, "weight_decay": 0.1},
    {"learning_rate": 0.02, "relative_step": False, "scale_parameter": False, "beta1": None, "clip_threshold": 0.5},
]


@pytest.mark.parametrize("kw", MS_CASES, ids=[str(c) for c in MS_CASES])
def test_mindspore_adafactor(kw):
    params = _params()
    init = {n: p.detach().numpy().copy() for n, p in params.items()}
    noise = _noise()
    skip = lambda k, n: n == "attn.bias" and k % 4 == 2  # noqa: E731 - the step is optimizer-wide
    opt = optreg.configure_optimizer("AdaFactor", list(params.items()), dialect="mindspore", **kw)
    got = _run(opt, params, noise, skip=skip)
    r = dict(kw)
    lr = r.pop("learning_rate", None)
    r.setdefault("beta1", 0.9)
    want = _reference(init, noise, t_of="global", skip=skip, lr=lr, decay=0.8, **r)
    _close(got, want)


def test_mindspore_adafactor_loss_scale_divides_gradients():
    a, b = _params(), _params()
    noise = _noise()
    o1 = optreg.configure_optimizer("AdaFactor", list(a.items()), dialect="mindspore", loss_scale=1024.0)
    o2 = optreg.configure_optimizer("AdaFactor", list(b.items()), dialect="mindspore")
    _close(_run(o1, a, noise, scale=1024.0), _run(o2, b, noise), rtol=1e-13)


def test_mindspore_adafactor_compression_keeps_unfactored_moment_in_float16():
    params = _params()
    opt = optreg.configure_optimizer("AdaFactor", list(params.items()), dialect="mindspore", compression=True)
    _run(opt, params, _noise()[:2])
    assert opt.state[params["attn.bias"]]["exp_avg_sq"].dtype == torch.float16
    assert opt.state[params["attn.weight"]]["exp_avg_sq_row"].dtype == torch.float64


def test_cerebras_adafactor():
    params = _params()
    init = {n: p.detach().numpy().copy() for n, p in params.items()}
    noise = _noise()
    skip = lambda k, n: n == "attn.bias" and k % 4 == 2  # noqa: E731 - the step is per parameter
    opt = optreg.configure_optimizer("Adafactor", list(params.values()), dialect="cerebras", lr=0.01,
                                     weight_decay=0.05)
    assert set(opt.state[params["attn.weight"]]) == {"exp_avg_sq_row", "exp_avg_sq_col", "step"}
    got = _run(opt, params, noise, skip=skip)
    want = _reference(init, noise, skip=skip, lr=0.01, relative_step=False, weight_decay=0.05, decay=0.8)
    _close(got, want)


@pytest.mark.parametrize("kw,path", [
    ({"lr": 0.01, "clip_threshold": 0.5}, "clip_threshold"),
    ({"lr": 0.01, "beta1": 0.9}, "beta1"),
    ({"lr": 0.01, "relative_step": True}, "relative_step"),
    ({"lr": 0.01, "warmup_init": True}, "warmup_init"),
    ({}, "lr"),
])
def test_cerebras_adafactor_constraints(kw, path):
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer("Adafactor", list(_params().values()), dialect="cerebras", **kw)
    assert path in [e.path for e in info.value.errors]


RESUME = [("mindspore", "AdaFactor", {}), ("mindspore", "AdaFactor", {"learning_rate": 0.01, "relative_step": False}),
          ("cerebras", "Adafactor", {"lr": 0.01})]


@pytest.mark.parametrize("dialect,row,kw", RESUME, ids=[f"{d}.{r}.{i}" for i, (d, r, _) in enumerate(RESUME)])
def test_exact_resume(dialect, row, kw):
    assert_exact_resume(lambda params: optreg.configure_optimizer(row, list(params.items()), dialect=dialect, **kw),
                        _params, _noise(), 10)

"""LAMB rows (OneFlow LAMB, Cerebras Lamb, MindSpore Lamb) against the numpy reference, float64, 25 steps."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import optreg
from optreg.reference import lamb as ref
from optreg.reference.pipeline import mindspore_grad
from named_trajectory import adam_start, assert_exact_resume, gradient_noise, named_params, run_named as _run

STEPS = 25
RTOL, ATOL = 1e-12, 1e-14
SHAPES = {"enc.weight": (6, 16), "enc.bias": (6,), "ln.gamma": (16,)}


def _params(seed=0, zero=()):
    return named_params(SHAPES, seed, zero)


def _noise(seed=1):
    return gradient_noise(SHAPES, STEPS, seed)


def _reference(init, noise, *, lr_of, wd_of, l2_of=lambda n: 0.0, gc_of=lambda n: False, **knobs):
    w, m, v2 = adam_start(init)
    out = []
    for k, step in enumerate(noise):
        for n in w:
            g = step[n] + 0.1 * w[n]
            g = mindspore_grad(g, w[n], weight_decay=l2_of(n), centralize=gc_of(n))
            w[n], m[n], v2[n] = ref.lamb(w[n], g, m[n], v2[n], k + 1, lr=lr_of(n, k), beta1=0.9, beta2=0.999,
                                         weight_decay=wd_of(n), **knobs)
        out.append({n: x.copy() for n, x in w.items()})
    return out


def _close(a, b):
    for k, (x, y) in enumerate(zip(a, b)):
        for n in x:
            np.testing.assert_allclose(x[n], y[n], rtol=RTOL, atol=ATOL, err_msg=f"step {k + 1} {n}")


@pytest.mark.parametrize("adam_w_mode", [True, False])
@pytest.mark.parametrize("bias_correction", [True, False])
def test_oneflow_lamb(adam_w_mode, bias_correction):
    params = _params()
    init = {n: p.detach().numpy().copy() for n, p in params.items()}
    noise = _noise()
    groups = [{"params": [params["enc.weight"]], "lr": 0.02}, {"params": [params["enc.bias"], params["ln.gamma"]]}]
    opt = optreg.configure_optimizer("LAMB", groups, dialect="oneflow", lr=0.01, weight_decay=0.05,
                                     adam_w_mode=adam_w_mode, do_bias_correction=bias_correction)
    want = _reference(init, noise, lr_of=lambda n, k: 0.02 if n == "enc.weight" else 0.01,
                      wd_of=lambda n: 0.05 if adam_w_mode else 0.0, l2_of=lambda n: 0.0 if adam_w_mode else 0.05,
                      eps=1e-8, bias_correction=bias_correction, trust_on="adam")
    _close(_run(opt, params, noise), want)


@pytest.mark.parametrize("adam", [False, True])
def test_cerebras_lamb(adam):
    params = _params()
    with torch.no_grad():
        params["enc.weight"].mul_(10.0)          # ||w|| > 10: the clamp is exercised
    init = {n: p.detach().numpy().copy() for n, p in params.items()}
    assert np.linalg.norm(init["enc.weight"]) > 10
    noise = _noise()
    opt = optreg.configure_optimizer("Lamb", list(params.values()), dialect="cerebras", lr=0.01, weight_decay=0.05,
                                     adam=adam)
    want = _reference(init, noise, lr_of=lambda n, k: 0.01, wd_of=lambda n: 0.05, eps=1e-6, bias_correction=False,
                      trust_on="update", weight_norm_clip=10.0, adam=adam)
    _close(_run(opt, params, noise), want)


def test_cerebras_lamb_is_preinitialized():
    params = _params()
    opt = optreg.configure_optimizer("Lamb", list(params.values()), dialect="cerebras")
    assert all(set(opt.state[p]) == {"exp_avg", "exp_avg_sq"} for p in params.values())
    assert opt.state_names_to_sparsify() == ["exp_avg", "exp_avg_sq"]


def test_mindspore_lamb_groups_dynamic_lr_and_beta_gamma_rule():
    params = _params()
    init = {n: p.detach().numpy().copy() for n, p in params.items()}
    noise = _noise()
    lrs = [0.01 * 0.95 ** k for k in range(STEPS)]
    opt = optreg.configure_optimizer("Lamb", list(params.items()), dialect="mindspore", learning_rate=lrs,
                                     weight_decay=0.05)
    want = _reference(init, noise, lr_of=lambda n, k: lrs[k], wd_of=lambda n: 0.0 if "gamma" in n else 0.05,
                      eps=1e-6, trust_on="update")
    _close(_run(opt, params, noise), want)
    # grouped, with gradient centralisation on the (6, 16) weight
    params = _params()
    groups = [{"params": [params["enc.weight"]], "weight_decay": 0.1, "grad_centralization": True},
              {"params": [params["enc.bias"], params["ln.gamma"]], "lr": 0.03}]
    from optreg.dialects.mindspore.lamb import Lamb
    opt = Lamb(groups, learning_rate=0.01)
    want = _reference(init, noise, lr_of=lambda n, k: 0.01 if n == "enc.weight" else 0.03,
                      wd_of=lambda n: 0.1 if n == "enc.weight" else 0.0, gc_of=lambda n: n == "enc.weight",
                      eps=1e-6, trust_on="update")
    _close(_run(opt, params, noise), want)


def test_trust_ratio_is_one_for_zero_weights():
    params = _params(zero=("enc.bias",))
    init = {n: p.detach().numpy().copy() for n, p in params.items()}
    noise = _noise()[:1]
    opt = optreg.configure_optimizer("Lamb", list(params.items()), dialect="mindspore", learning_rate=0.01)
    got = _run(opt, params, noise)
    want = _reference(init, noise, lr_of=lambda n, k: 0.01, wd_of=lambda n: 0.0, eps=1e-6)
    _close(got, want)
    assert np.all(np.isfinite(got[0]["enc.bias"])) and np.abs(got[0]["enc.bias"]).max() > 0


def test_oneflow_lamb_refuses_amsgrad():
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer("LAMB", list(_params().values()), dialect="oneflow", amsgrad=True)
    assert [e.path for e in info.value.errors] == ["amsgrad"]


RESUME = [("oneflow", "LAMB", {"lr": 0.01, "weight_decay": 0.01}),
          ("cerebras", "Lamb", {"lr": 0.01, "weight_decay": 0.01}),
          ("mindspore", "Lamb", {"learning_rate": [0.01] * STEPS, "weight_decay": 0.01})]


@pytest.mark.parametrize("dialect,row,kw", RESUME, ids=[f"{d}.{r}" for d, r, _ in RESUME])
def test_exact_resume(dialect, row, kw):
    assert_exact_resume(lambda params: optreg.configure_optimizer(row, list(params.items()), dialect=dialect, **kw),
                        _params, _noise(), 7)


@pytest.mark.parametrize("fused", [False, True])
def test_oneflow_lamb_blows_up_on_tiny_gradients_with_weight_decay_as_oneflow_does(fused, monkeypatch, capsys):
    """OneFlow's kernel takes the trust ratio over u without the decay term, then multiplies lr·(u + wd·w) by it:
    with weight_decay > 0 and gradients about 1e-20, u ≈ g/eps and ‖w‖/‖u‖ is huge, so w is thrown far off at the
    first step (the documented formula's numbers, eager and fused) and reaches inf within a few; `optreg show` says
    so in the row's notes."""
    from optreg.cli import main
    from optreg.core.describe import describe

    torch.manual_seed(0)
    w64 = torch.nn.Parameter(torch.randn(6, 16, dtype=torch.float64))
    start = w64.detach().numpy().copy()
    opt = optreg.configure_optimizer("LAMB", [w64], dialect="oneflow", lr=1e-3, weight_decay=0.01, fused=fused)
    w64.grad = torch.full_like(w64, 1e-20)
    opt.step()
    want = ref.lamb(start, np.full_like(start, 1e-20), np.zeros_like(start), np.zeros_like(start), 1, lr=1e-3,
                    beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01, trust_on="adam")[0]
    np.testing.assert_allclose(w64.detach().numpy(), want, rtol=RTOL, atol=ATOL)
    assert np.abs(want).max() > 1e5 * np.abs(start).max()
    w32 = torch.nn.Parameter(torch.randn(6, 16))
    opt = optreg.configure_optimizer("LAMB", [w32], dialect="oneflow", lr=1e-3, weight_decay=0.01, fused=fused)
    for _ in range(4):
        w32.grad = torch.full_like(w32, 1e-20)
        opt.step()
    assert not torch.isfinite(w32).all()
    note = next(n for n in describe("LAMB", "oneflow").notes if "gradients near 0" in n)
    assert note.startswith("So with weight_decay > 0 and gradients near 0 (about 1e-20: u ≈ g/eps), ‖w‖/‖u‖ is huge")
    monkeypatch.setenv("COLUMNS", "1000")
    assert main(["show", "oneflow.LAMB"]) == 0
    assert f"note: {note}" in capsys.readouterr().out

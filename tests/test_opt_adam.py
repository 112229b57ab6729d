"""The Adam family (OneFlow, Cerebras, MindSpore rows) against the numpy references and torch.

float64 throughout; the gradients feed back through the weights (g = noise_k + 0.1 w), 25 steps.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

import optreg
from optreg.dialects.cerebras import adam as cerebras_adam
from optreg.dialects.mindspore import adam as ms
from optreg.dialects.oneflow import adam as oneflow_adam
from optreg.stages.adam import AdamDirection, ApplyAdam, NAdamDirection
from optreg.stages.apply import ApplyLR, DecoupledDecay
from optreg.stages.chain import Chain
from optreg.reference import adam as ref
from optreg.reference.pipeline import mindspore_grad

STEPS = 25
RTOL, ATOL = 1e-12, 1e-14
SHAPES = {"conv.weight": (4, 16), "fc.bias": (5,), "bn.gamma": (3, 2)}


def _params(seed=0):
    gen = torch.Generator().manual_seed(seed)
    return {n: torch.nn.Parameter(torch.randn(*s, generator=gen, dtype=torch.float64)) for n, s in SHAPES.items()}


def _noise(steps=STEPS, seed=1, scale=1.0, shapes=SHAPES):
    rng = np.random.default_rng(seed)
    return [{n: scale * rng.standard_normal(s) for n, s in shapes.items()} for _ in range(steps)]


def _grad(noise, w):
    return noise + 0.1 * w


def _run_torch(opt, params, noise, skip=lambda k, n: False):
    out = []
    for k, step in enumerate(noise):
        for n, p in params.items():
            p.grad = None if skip(k, n) else torch.from_numpy(_grad(step[n], p.detach().numpy()))
        opt.step()
        out.append({n: p.detach().numpy().copy() for n, p in params.items()})
    return out


def _close(a, b, rtol=RTOL, atol=ATOL):
    worst = 0.0
    for k, (x, y) in enumerate(zip(a, b)):
        for n in x:
            np.testing.assert_allclose(x[n], y[n], rtol=rtol, atol=atol, err_msg=f"step {k + 1} {n}")
            worst = max(worst, float(np.abs(x[n] - y[n]).max()))
    return worst


# ---------------------------------------------------------------------------------------------
# MindSpore Adam / LazyAdam / AdamOffload / AdamWeightDecay vs reference
# ---------------------------------------------------------------------------------------------


def _ms_adam_reference(init, noise, *, lrs, wd_of, loss_scale, eps=1e-8, b1=0.9, b2=0.999, nesterov=False,
                       gc_of=lambda n: False, decoupled=False, bias_correction=True):
    w = {n: v.copy() for n, v in init.items()}
    m = {n: np.zeros_like(v) for n, v in w.items()}
    v2 = {n: np.zeros_like(v) for n, v in w.items()}
    out = []
    for k, step in enumerate(noise):
        t = k + 1
        for n in w:
            g = loss_scale * _grad(step[n], w[n])     # the caller's gradient is loss-scaled
            if decoupled:
                w[n], m[n], v2[n], _ = ref.adam(w[n], g, m[n], v2[n], None, t, lr=lrs(n, k), beta1=b1, beta2=b2,
                                                eps=eps, weight_decay=wd_of(n), decoupled=True, eps_hat=True,
                                                bias_correction=bias_correction)
                continue
            g = mindspore_grad(g, w[n], weight_decay=wd_of(n), loss_scale=loss_scale, centralize=gc_of(n))
            w[n], m[n], v2[n], _ = ref.adam(w[n], g, m[n], v2[n], None, t, lr=lrs(n, k), beta1=b1, beta2=b2,
                                            eps=eps, eps_hat=True, nesterov=nesterov)
        out.append({n: x.copy() for n, x in w.items()})
    return out


@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("row", ["Adam", "LazyAdam", "AdamOffload"])
def test_mindspore_adam_ungrouped_dynamic_lr_loss_scale(row, nesterov):
    params = _params()
    init = {n: p.detach().numpy().copy() for n, p in params.items()}
    lrs = [0.01 * (1 + 0.1 * k) for k in range(STEPS)]
    ls = 4.0
    opt = optreg.configure_optimizer(row, list(params.items()), dialect="mindspore", learning_rate=lrs,
                                     weight_decay=0.05, loss_scale=ls, use_nesterov=nesterov)
    noise = _noise()
    got = []
    for k, step in enumerate(noise):
        for n, p in params.items():
            p.grad = torch.from_numpy(ls * _grad(step[n], p.detach().numpy()))
        opt.step()
        got.append({n: p.detach().numpy().copy() for n, p in params.items()})
    want = _ms_adam_reference(init, noise, lrs=lambda n, k: lrs[k], loss_scale=ls, nesterov=nesterov,
                              wd_of=lambda n: 0.0 if "gamma" in n else 0.05)
    _close(got, want)


def test_mindspore_adam_groups_schedule_and_centralization():
    params = _params()
    init = {n: p.detach().numpy().copy() for n, p in params.items()}
    schedule = lambda step: 0.02 * 0.9 ** step  # noqa: E731 - any callable step -> lr
    groups = [
        {"params": [params["conv.weight"]], "lr": schedule, "weight_decay": 0.1, "grad_centralization": True},
        {"params": [params["fc.bias"], params["bn.gamma"]], "grad_centralization": True},
        {"order_params": [params["bn.gamma"], params["conv.weight"], params["fc.bias"]]},
    ]
    opt = ms.Adam(groups, learning_rate=0.01, weight_decay=0.02, loss_scale=2.0)
    assert [p for g in opt.param_groups for p in g["params"]] == [params[n]
                                                                  for n in ("bn.gamma", "conv.weight", "fc.bias")]
    noise = _noise()
    got = []
    for step in noise:
        for n, p in params.items():
            p.grad = torch.from_numpy(2.0 * _grad(step[n], p.detach().numpy()))
        opt.step()
        got.append({n: p.detach().numpy().copy() for n, p in params.items()})
    want = _ms_adam_reference(
        init, noise, loss_scale=2.0,
        lrs=lambda n, k: schedule(k) if n == "conv.weight" else 0.01,
        wd_of=lambda n: 0.1 if n == "conv.weight" else 0.02,  # grouped: no beta/gamma filter
        gc_of=lambda n: True)  # the (4, 16) gradient is centralised; (5,) and (3, 2) are left alone
    _close(got, want)
    # centralisation really happened: without it the trajectory differs
    other = _ms_adam_reference(init, noise, loss_scale=2.0,
                               lrs=lambda n, k: schedule(k) if n == "conv.weight" else 0.01,
                               wd_of=lambda n: 0.1 if n == "conv.weight" else 0.02)
    assert np.abs(other[-1]["conv.weight"] - got[-1]["conv.weight"]).max() > 1e-4


def test_mindspore_adamweightdecay_reference_and_equals_cerebras_adamw_no_correction():
    params = _params()
    init = {n: p.detach().numpy().copy() for n, p in params.items()}
    noise = _noise()
    opt = optreg.configure_optimizer("AdamWeightDecay", list(params.items()), dialect="mindspore",
                                     learning_rate=0.01, weight_decay=0.1)
    got = _run_torch(opt, params, noise)
    want = _ms_adam_reference(init, noise, lrs=lambda n, k: 0.01, loss_scale=1.0, eps=1e-6, decoupled=True,
                              bias_correction=False, wd_of=lambda n: 0.0 if "gamma" in n else 0.1)
    _close(got, want)
    # Cerebras AdamW(correct_bias=False) is the same algorithm (here: every parameter decayed)
    a, b = _params(), _params()
    o1 = optreg.configure_optimizer("AdamWeightDecay", [{"params": list(a.values())}], dialect="mindspore",
                                    learning_rate=0.01, weight_decay=0.1)
    o2 = optreg.configure_optimizer("AdamW", list(b.values()), dialect="cerebras", lr=0.01, weight_decay=0.1,
                                    correct_bias=False)
    _close(_run_torch(o1, a, noise), _run_torch(o2, b, noise))


def test_adam_offload_matches_adam_and_keeps_state_on_cpu():
    a, b = _params(), _params()
    noise = _noise()
    o1 = ms.Adam(list(a.items()), learning_rate=0.01, weight_decay=0.01)
    o2 = ms.AdamOffload(list(b.items()), learning_rate=0.01, weight_decay=0.01)
    r1, r2 = _run_torch(o1, a, noise), _run_torch(o2, b, noise)
    for x, y in zip(r1, r2):
        for n in x:
            assert np.array_equal(x[n], y[n])
    assert all(t.device.type == "cpu" for st in o2.state.values() for t in st.values())


# ---------------------------------------------------------------------------------------------
# LazyAdam sparse gradients
# ---------------------------------------------------------------------------------------------


def _sparse_grads(steps=STEPS, rows=10, dim=4, seed=3):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        idx = rng.integers(0, rows, size=5)          # duplicates on purpose
        out.append((idx, rng.standard_normal((5, dim))))
    return out


def test_lazy_adam_sparse_matches_reference_and_torch_sparse_adam():
    w0 = torch.randn(10, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    a = torch.nn.Parameter(w0.clone())
    b = torch.nn.Parameter(w0.clone())
    lazy = optreg.configure_optimizer("LazyAdam", [("emb.weight", a)], dialect="mindspore", learning_rate=0.05)
    sparse = torch.optim.SparseAdam([b], lr=0.05, eps=1e-8)
    w, m, v = w0.numpy().copy(), np.zeros((10, 4)), np.zeros((10, 4))
    for k, (idx, vals) in enumerate(_sparse_grads()):
        g = torch.sparse_coo_tensor(torch.from_numpy(idx)[None], torch.from_numpy(vals), (10, 4), check_invariants=True)
        a.grad, b.grad = g.clone(), g.clone()
        lazy.step()
        sparse.step()
        w, m, v = ref.lazy_adam_rows(w, idx, vals, m, v, k + 1, lr=0.05, beta1=0.9, beta2=0.999, eps=1e-8)
        np.testing.assert_allclose(a.detach().numpy(), w, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-14)
    untouched = set(range(10)) - {int(i) for idx, _ in _sparse_grads() for i in idx}
    for r in untouched:
        assert torch.equal(a[r], w0[r])


def test_mindspore_adam_applies_a_sparse_gradient_densely():
    w0 = torch.randn(10, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(6))
    a, b = torch.nn.Parameter(w0.clone()), torch.nn.Parameter(w0.clone())
    o1 = ms.Adam([a], learning_rate=0.05)
    o2 = ms.Adam([b], learning_rate=0.05)
    for idx, vals in _sparse_grads(steps=5):
        g = torch.sparse_coo_tensor(torch.from_numpy(idx)[None], torch.from_numpy(vals), (10, 4), check_invariants=True)
        a.grad, b.grad = g, g.to_dense()
        o1.step()
        o2.step()
    assert torch.equal(a, b)


# ---------------------------------------------------------------------------------------------
# OneFlow Adam / AdamW
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("row,torch_cls", [("Adam", torch.optim.Adam), ("AdamW", torch.optim.AdamW)])
def test_oneflow_adam_equals_torch(row, torch_cls, amsgrad):
    a, b = _params(), _params()
    noise = _noise()
    groups_a = [{"params": [a["conv.weight"]], "lr": 0.02}, {"params": [a["fc.bias"], a["bn.gamma"]]}]
    groups_b = [{"params": [b["conv.weight"]], "lr": 0.02}, {"params": [b["fc.bias"], b["bn.gamma"]]}]
    o1 = optreg.configure_optimizer(row, groups_a, dialect="oneflow", lr=0.01, weight_decay=0.05, amsgrad=amsgrad)
    o2 = torch_cls(groups_b, lr=0.01, weight_decay=0.05, amsgrad=amsgrad)
    assert o1.set_to_none is False
    _close(_run_torch(o1, a, noise), _run_torch(o2, b, noise))


class StagePerTermAdamW(oneflow_adam.AdamW):
    """OneFlow AdamW's chain with its update as a stage per term: AdamDirection → DecoupledDecay → ApplyLR."""

    chain = Chain(*oneflow_adam.AdamW.chain[:-1], AdamDirection("torch"), DecoupledDecay(), ApplyLR())


@pytest.mark.parametrize("execution", ["eager", "foreach"])
@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("correct", [True, False])
def test_apply_adam_is_the_direction_decay_and_lr_stages(execution, amsgrad, correct):
    """ApplyAdam (torch's single-tensor form) computes what AdamDirection → DecoupledDecay → ApplyLR compute, with
    a weight decay per group (one group without), to 1e-12 in float64 over 25 steps."""
    a, b = _params(), _params()
    kw = dict(lr=0.01, amsgrad=amsgrad, do_bias_correction=correct, foreach=execution == "foreach")

    def groups(p):
        return [{"params": [p["conv.weight"]], "weight_decay": 0.1}, {"params": [p["fc.bias"], p["bn.gamma"]]}]

    assert isinstance(oneflow_adam.AdamW.chain[-1], ApplyAdam)
    o1 = oneflow_adam.AdamW(groups(a), **kw)
    o2 = StagePerTermAdamW(groups(b), **kw)
    noise = _noise()
    _close(_run_torch(o1, a, noise), _run_torch(o2, b, noise))


def test_oneflow_adam_global_step_and_no_bias_correction():
    params = _params()
    init = {n: p.detach().numpy().copy() for n, p in params.items()}
    noise = _noise()
    skip = lambda k, n: n == "fc.bias" and k % 3 == 1  # noqa: E731 - no gradient some steps
    opt = optreg.configure_optimizer("Adam", list(params.values()), dialect="oneflow", lr=0.01,
                                     do_bias_correction=False)
    got = _run_torch(opt, params, noise, skip)
    w = {n: v.copy() for n, v in init.items()}
    m = {n: np.zeros_like(v) for n, v in w.items()}
    v2 = {n: np.zeros_like(v) for n, v in w.items()}
    for k, step in enumerate(noise):
        for n in w:
            if not skip(k, n):
                w[n], m[n], v2[n], _ = ref.adam(w[n], _grad(step[n], w[n]), m[n], v2[n], None, k + 1, lr=0.01,
                                                beta1=0.9, beta2=0.999, eps=1e-8, bias_correction=False)
        _close([got[k]], [w])
    # with bias correction the optimizer-wide t differs from torch's per-parameter count
    a, b = _params(), _params()
    o1 = optreg.configure_optimizer("Adam", list(a.values()), dialect="oneflow", lr=0.01)
    o2 = torch.optim.Adam(list(b.values()), lr=0.01)
    r1, r2 = _run_torch(o1, a, noise, skip), _run_torch(o2, b, noise, skip)
    assert np.array_equal(r1[-1]["conv.weight"], r2[-1]["conv.weight"]) or \
        np.allclose(r1[-1]["conv.weight"], r2[-1]["conv.weight"], rtol=1e-12)
    assert np.abs(r1[-1]["fc.bias"] - r2[-1]["fc.bias"]).max() > 1e-6


# ---------------------------------------------------------------------------------------------
# Cerebras Adam / AdamW / Adamax / NAdam / RAdam
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("row", ["Adam", "AdamW"])
def test_cerebras_adam_reference(row, amsgrad):
    params = _params()
    init = {n: p.detach().numpy().copy() for n, p in params.items()}
    noise = _noise()
    opt = optreg.configure_optimizer(row, list(params.values()), dialect="cerebras", lr=0.01, weight_decay=0.05,
                                     amsgrad=amsgrad)
    got = _run_torch(opt, params, noise)
    w = {n: v.copy() for n, v in init.items()}
    m = {n: np.zeros_like(v) for n, v in w.items()}
    v2 = {n: np.zeros_like(v) for n, v in w.items()}
    vmax = {n: np.zeros_like(v) if amsgrad else None for n, v in w.items()}
    want = []
    for k, step in enumerate(noise):
        for n in w:
            g = _grad(step[n], w[n])
            if row == "Adam":
                g = g + 0.05 * w[n]
            w[n], m[n], v2[n], vmax[n] = ref.adam(w[n], g, m[n], v2[n], vmax[n], k + 1, lr=0.01, beta1=0.9,
                                                  beta2=0.999, eps=1e-6, eps_hat=True, weight_decay=0.05,
                                                  decoupled=row == "AdamW")
        want.append({n: x.copy() for n, x in w.items()})
    _close(got, want)


@pytest.mark.parametrize("row,torch_cls", [("Adam", torch.optim.Adam), ("AdamW", torch.optim.AdamW)])
def test_cerebras_adam_equals_torch_when_eps_is_zero(row, torch_cls):
    a, b = _params(), _params()
    noise = _noise()
    o1 = optreg.configure_optimizer(row, list(a.values()), dialect="cerebras", lr=0.01, eps=0.0, weight_decay=0.05)
    o2 = torch_cls(list(b.values()), lr=0.01, eps=0.0, weight_decay=0.05)
    _close(_run_torch(o1, a, noise), _run_torch(o2, b, noise), rtol=1e-11)


def _half(noise):
    return noise[:10], noise[10:]


@pytest.mark.parametrize("row,torch_cls", [("Adam", torch.optim.Adam), ("AdamW", torch.optim.AdamW)])
def test_cerebras_adam_loads_torch_checkpoints_and_torch_loads_ours(row, torch_cls):
    first, rest = _half(_noise())
    # torch -> Cerebras: continue as torch would (eps = 0 makes the two forms one algorithm)
    a, b = _params(), _params()
    t1 = torch_cls(list(a.values()), lr=0.01, eps=0.0, weight_decay=0.05)
    _run_torch(t1, a, first)
    b_state = {n: a[n].detach().clone() for n in a}
    for n in b:
        b[n].data.copy_(b_state[n])
    c1 = optreg.configure_optimizer(row, list(b.values()), dialect="cerebras", lr=0.01, eps=0.0, weight_decay=0.05)
    c1.load_state_dict(copy.deepcopy(t1.state_dict()))
    st = c1.state[b["conv.weight"]]
    assert math.isclose(float(st["beta1_power"]), 0.9 ** 11, rel_tol=1e-12)
    _close(_run_torch(c1, b, rest), _run_torch(t1, a, rest), rtol=1e-11)
    # Cerebras -> torch
    a, b = _params(), _params()
    c2 = optreg.configure_optimizer(row, list(a.values()), dialect="cerebras", lr=0.01, eps=0.0, weight_decay=0.05)
    _run_torch(c2, a, first)
    for n in b:
        b[n].data.copy_(a[n].detach())
    t2 = torch_cls(list(b.values()), lr=0.01, eps=0.0, weight_decay=0.05)
    t2.load_state_dict(copy.deepcopy(c2.state_dict()))
    _close(_run_torch(t2, b, rest), _run_torch(c2, a, rest), rtol=1e-11)


def test_cerebras_adamw_loads_the_hugging_face_layout():
    first, rest = _half(_noise())
    a, b = _params(), _params()
    c1 = optreg.configure_optimizer("AdamW", list(a.values()), dialect="cerebras", lr=0.01, weight_decay=0.05)
    _run_torch(c1, a, first)
    sd = c1.state_dict()
    hf = {"state": {k: {"step": 10, "exp_avg": s["exp_avg"].clone(), "exp_avg_sq": s["exp_avg_sq"].clone()}
                    for k, s in sd["state"].items()},
          "param_groups": [{"lr": 0.01, "betas": (0.9, 0.999), "eps": 1e-6, "weight_decay": 0.05,
                            "correct_bias": True, "params": g["params"]} for g in sd["param_groups"]]}
    for n in b:
        b[n].data.copy_(a[n].detach())
    c2 = optreg.configure_optimizer("AdamW", list(b.values()), dialect="cerebras", lr=0.01, weight_decay=0.05)
    c2.load_state_dict(hf)
    _close(_run_torch(c2, b, rest), _run_torch(c1, a, rest))


def test_cerebras_preinitialize_and_sparsify_names():
    params = _params()
    opt = optreg.configure_optimizer("Adam", list(params.values()), dialect="cerebras", amsgrad=True)
    before = {id(p): {k: id(t) for k, t in opt.state[p].items()} for p in params.values()}
    assert all(set(opt.state[p]) == {"exp_avg", "exp_avg_sq", "max_exp_avg_sq", "beta1_power", "beta2_power", "step"}
               for p in params.values())
    _run_torch(opt, params, _noise(steps=3))
    after = {id(p): {k: id(t) for k, t in opt.state[p].items()} for p in params.values()}
    assert before == after
    assert opt.state_names_to_sparsify() == ["exp_avg", "exp_avg_sq", "max_exp_avg_sq"]


@pytest.mark.parametrize("maximize", [False, True])
def test_cerebras_adamax_equals_torch(maximize):
    a, b = _params(), _params()
    noise = _noise()
    o1 = optreg.configure_optimizer("Adamax", list(a.values()), dialect="cerebras", weight_decay=0.01,
                                    maximize=maximize)
    o2 = torch.optim.Adamax(list(b.values()), lr=1e-3, eps=1e-6, weight_decay=0.01, maximize=maximize)
    _close(_run_torch(o1, a, noise), _run_torch(o2, b, noise))
    init = {n: p.detach().numpy().copy() for n, p in _params().items()}
    w, m, u = dict(init), {n: 0.0 for n in init}, {n: np.zeros_like(x) for n, x in init.items()}
    for k, step in enumerate(noise):
        for n in w:
            g = _grad(step[n], w[n])
            g = (-g if maximize else g) + 0.01 * w[n]
            w[n], m[n], u[n] = ref.adamax(w[n], g, m[n], u[n], k + 1, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-6)
    _close([{n: p.detach().numpy() for n, p in a.items()}], [w])


class TorchFormNAdam(cerebras_adam.NAdam):
    """Cerebras NAdam's chain with the stage setting extra_mu=False: torch's NAdam."""

    chain = Chain(*(NAdamDirection(extra_mu=False) if isinstance(s, NAdamDirection) else s
                    for s in cerebras_adam.NAdam.chain))


def test_nadam_torch_form_equals_torch_and_cerebras_form_matches_reference():
    a, b, c = _params(), _params(), _params()
    noise = _noise()
    o1 = TorchFormNAdam(list(a.values()), lr=2e-3, weight_decay=0.01)       # extra_mu=False: torch's NAdam
    o2 = torch.optim.NAdam(list(b.values()), lr=2e-3, weight_decay=0.01)
    # torch keeps mu_product in a float32 scalar; ours follows the parameter's precision
    _close(_run_torch(o1, a, noise), _run_torch(o2, b, noise), rtol=1e-7, atol=1e-9)
    init = {n: p.detach().numpy().copy() for n, p in c.items()}
    o3 = optreg.configure_optimizer("NAdam", list(c.values()), dialect="cerebras", weight_decay=0.01)
    got = _run_torch(o3, c, noise)
    w = dict(init)
    m = {n: np.zeros_like(x) for n, x in w.items()}
    v = {n: np.zeros_like(x) for n, x in w.items()}
    prod = {n: 1.0 for n in w}
    for k, step in enumerate(noise):
        for n in w:
            g = _grad(step[n], w[n]) + 0.01 * w[n]
            w[n], m[n], v[n], prod[n] = ref.nadam(w[n], g, m[n], v[n], prod[n], k + 1, lr=2e-3, beta1=0.9,
                                                  beta2=0.999, eps=1e-8, momentum_decay=4e-3, extra_mu=True)
        _close([got[k]], [w])


def test_nadam_cerebras_differs_from_torch():
    a, b = _params(), _params()
    noise = _noise()
    r1 = _run_torch(optreg.configure_optimizer("NAdam", list(a.values()), dialect="cerebras"), a, noise)
    r2 = _run_torch(torch.optim.NAdam(list(b.values()), lr=2e-3), b, noise)
    assert np.abs(r1[-1]["conv.weight"] - r2[-1]["conv.weight"]).max() > 1e-6


def test_cerebras_radam_equals_torch_and_reference():
    a, b = _params(), _params()
    init = {n: p.detach().numpy().copy() for n, p in a.items()}
    noise = _noise()
    o1 = optreg.configure_optimizer("RAdam", list(a.values()), dialect="cerebras", weight_decay=0.01)
    o2 = torch.optim.RAdam(list(b.values()), lr=1e-3, eps=1e-6, weight_decay=0.01)
    got = _run_torch(o1, a, noise)
    _close(got, _run_torch(o2, b, noise))
    w = dict(init)
    m = {n: np.zeros_like(x) for n, x in w.items()}
    v = {n: np.zeros_like(x) for n, x in w.items()}
    for k, step in enumerate(noise):
        for n in w:
            g = _grad(step[n], w[n]) + 0.01 * w[n]
            w[n], m[n], v[n] = ref.radam(w[n], g, m[n], v[n], k + 1, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-6)
        _close([got[k]], [w])


# ---------------------------------------------------------------------------------------------
# state dict round trip and exact resume (bitwise)
# ---------------------------------------------------------------------------------------------

RESUME = [
    ("oneflow", "Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.01}),
    ("oneflow", "AdamW", {"lr": 0.01, "weight_decay": 0.01}),
    ("cerebras", "Adam", {"lr": 0.01, "amsgrad": True}),
    ("cerebras", "AdamW", {"lr": 0.01, "weight_decay": 0.1}),
    ("cerebras", "Adamax", {}),
    ("cerebras", "NAdam", {}),
    ("cerebras", "RAdam", {}),
    ("mindspore", "Adam", {"learning_rate": [0.01 * (k + 1) for k in range(STEPS)], "use_nesterov": True,
                           "weight_decay": 0.01, "loss_scale": 2.0}),
    ("mindspore", "LazyAdam", {"learning_rate": 0.01}),
    ("mindspore", "AdamOffload", {"learning_rate": 0.01}),
    ("mindspore", "AdamWeightDecay", {"learning_rate": 0.01, "weight_decay": 0.1}),
]


@pytest.mark.parametrize("dialect,row,kw", RESUME, ids=[f"{d}.{r}" for d, r, _ in RESUME])
def test_exact_resume(dialect, row, kw, tmp_path):
    noise = _noise()
    a = _params()
    straight = optreg.configure_optimizer(row, list(a.items()), dialect=dialect, **kw)
    full = _run_torch(straight, a, noise)
    b = _params()
    first = optreg.configure_optimizer(row, list(b.items()), dialect=dialect, **kw)
    _run_torch(first, b, noise[:9])
    torch.save({"opt": first.state_dict(), "params": {n: p.detach() for n, p in b.items()}}, tmp_path / "ckpt.pt")
    ckpt = torch.load(tmp_path / "ckpt.pt", weights_only=False)
    c = _params()
    for n, p in c.items():
        p.data.copy_(ckpt["params"][n])
    resumed = optreg.configure_optimizer(row, list(c.items()), dialect=dialect, **kw)
    resumed.load_state_dict(ckpt["opt"])
    rest = _run_torch(resumed, c, noise[9:])
    for x, y in zip(full[9:], rest):
        for n in x:
            assert np.array_equal(x[n], y[n]), (row, n)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_adam_offload_on_cuda_keeps_state_on_host_and_matches_adam():
    gen = torch.Generator().manual_seed(0)
    w0 = torch.randn(64, 32, generator=gen)
    a = torch.nn.Parameter(w0.clone().cuda())
    b = torch.nn.Parameter(w0.clone().cuda())
    o1 = ms.AdamOffload([a], learning_rate=0.01, weight_decay=0.01)
    o2 = ms.Adam([b], learning_rate=0.01, weight_decay=0.01)
    for k in range(10):
        g = torch.randn(64, 32, generator=gen).cuda()
        a.grad, b.grad = g.clone(), g.clone()
        o1.step()
        o2.step()
    assert all(t.device.type == "cpu" for t in o1.state[a].values())
    assert a.device.type == "cuda"
    torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)

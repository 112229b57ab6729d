"""MindSpore LARS (a wrapper) against the numpy reference, float64, 25 steps, with the inner optimizers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import optreg
from optreg.dialects.mindspore import adam as ms
from optreg.dialects.mindspore import sgd as ms_sgd
from optreg.dialects.mindspore.lars import LARS
from optreg.reference import adam as adam_ref
from optreg.reference.lars import lars_grad
from named_trajectory import adam_start, assert_exact_resume, gradient_noise, named_params, run_named as _run

STEPS = 25
SHAPES = {"dense.weight": (8, 4), "dense.bias": (8,), "LayerNorm.gamma": (4,), "bn.beta": (4,)}


def _params(seed=0):
    return named_params(SHAPES, seed)


def _noise(seed=1):
    return gradient_noise(SHAPES, STEPS, seed)


def _reference(init, noise, *, lrs, wd, ls, use_clip, coefficient=0.001, epsilon=1e-5,
               excluded=("dense.bias", "LayerNorm.gamma")):
    """LARS over MindSpore Adam: inner decay and loss scale taken over by LARS (wd where decayed)."""
    w, m, v2 = adam_start(init)
    out = []
    for k, step in enumerate(noise):
        for n in w:
            g = ls * (step[n] + 0.1 * w[n]) * (1.0 / ls)
            if n not in excluded:
                decay = 0.0 if ("beta" in n or "gamma" in n) else wd
                g = lars_grad(w[n], g, weight_decay=decay, lr=lrs[k], coefficient=coefficient, epsilon=epsilon,
                              use_clip=use_clip)
            w[n], m[n], v2[n], _ = adam_ref.adam(w[n], g, m[n], v2[n], None, k + 1, lr=lrs[k], beta1=0.9,
                                                 beta2=0.999, eps=1e-8, eps_hat=True)
        out.append({n: x.copy() for n, x in w.items()})
    return out


@pytest.mark.parametrize("use_clip", [False, True])
def test_lars_over_mindspore_adam(use_clip):
    params = _params()
    init = {n: p.detach().numpy().copy() for n, p in params.items()}
    noise = _noise()
    lrs = [0.05 * 0.97 ** k for k in range(STEPS)]
    inner = ms.Adam(list(params.items()), learning_rate=lrs, weight_decay=0.01, loss_scale=4.0)
    opt = LARS(inner, use_clip=use_clip)
    got = _run(opt, params, noise, scale=4.0)
    want = _reference(init, noise, lrs=lrs, wd=0.01, ls=4.0, use_clip=use_clip)
    for k, (x, y) in enumerate(zip(got, want)):
        for n in x:
            np.testing.assert_allclose(x[n], y[n], rtol=1e-12, atol=1e-14, err_msg=f"step {k + 1} {n}")


def test_lars_keeps_the_callers_gradients_and_shares_groups():
    params = _params()
    inner = ms.Adam(list(params.items()), learning_rate=0.01, weight_decay=0.01)
    opt = LARS(inner)
    g = {n: torch.ones_like(p) for n, p in params.items()}
    for n, p in params.items():
        p.grad = g[n].clone()
    opt.step()
    assert all(torch.equal(p.grad, g[n]) for n, p in params.items())
    assert opt.param_groups is inner.param_groups and opt.state is inner.state
    assert all(grp["weight_decay"] == 0.0 for grp in inner.param_groups)
    assert [grp["lars_weight_decay"] for grp in inner.param_groups] == [0.01, 0.0]
    assert isinstance(opt, torch.optim.Optimizer)
    sched = torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)   # torch schedulers accept the wrapper
    opt.step()
    sched.step()
    assert inner.param_groups[0]["lr"] == 0.005


def test_lars_filter_patterns_and_callable():
    params = _params()
    inner = ms.Adam(list(params.items()), learning_rate=0.01)
    opt = LARS(inner, lars_filter=["*weight"])
    flags = dict(zip([n for g in inner.param_groups for n in g["param_names"]], [f for fl in opt._flags for f in fl]))
    assert flags == {"dense.weight": False, "dense.bias": True, "LayerNorm.gamma": True, "bn.beta": True}
    opt = LARS(ms.Adam(list(_params().items()), learning_rate=0.01), lars_filter=lambda name: "bias" in name)
    assert [f for fl in opt._flags for f in fl] == [False, True, False, False]


def test_lars_use_clip_with_per_group_dynamic_lr_is_refused():
    params = _params()
    groups = [{"params": [params["dense.weight"]], "lr": [0.1, 0.2]}, {"params": [params["dense.bias"]]}]
    with pytest.raises(optreg.ConfigError) as info:
        LARS(ms.Adam(groups, learning_rate=[0.01, 0.02]), use_clip=True)
    assert info.value.errors[0].path == "use_clip"


def test_lars_exact_resume():
    assert_exact_resume(lambda params: LARS(ms.Adam(list(params.items()), learning_rate=0.01, weight_decay=0.01)),
                        _params, _noise(), 8)


EXECUTIONS = {"foreach": {"foreach": True}, "fused": {"fused": True}, "contiguous": {"contiguous_params": True},
              "contiguous, fused": {"contiguous_params": True, "fused": True}}


def _lars_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 300), torch.nn.Tanh(), torch.nn.Linear(300, 2))


def _lars(model, **execution):
    inner = {"name": "Momentum", "learning_rate": 0.05, "momentum": 0.9, "weight_decay": 0.01, "loss_scale": 8.0}
    return optreg.configure_optimizer("mindspore.LARS", model, optimizer={**inner, **execution}, coefficient=0.01)


def _lars_steps(model, opt, steps, start=0):
    for step in range(start, start + steps):
        opt.zero_grad()
        x = torch.randn(4, 6, generator=torch.Generator().manual_seed(step))
        (8.0 * model(x).pow(2).sum()).backward()   # the loss scale that LARS takes over
        opt.step()
    return [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("execution", list(EXECUTIONS))
def test_lars_runs_in_the_inner_optimizers_execution(execution, tmp_path):
    """Around a chain optimizer LARS is the first stage of the inner chain, so it runs in the inner optimizer's
    execution: MindSpore Momentum with weight decay and a loss scale, LARS' default filter leaving the biases
    out (each group steps as two parts). Every execution agrees with eager within 1e-6 relative over 4 steps
    across a weights_only resume, and fused over contiguous groups both parts step whole (the kept part by
    rows, both norms from the update's call)."""
    reference = _lars_model()
    eager = _lars_steps(reference, _lars(reference), 4)
    model = _lars_model()
    opt = _lars(model, **EXECUTIONS[execution])
    assert opt.optimizer.chain[0] is opt._scale
    _lars_steps(model, opt, 2)
    torch.save(opt.state_dict(), tmp_path / "opt.pt")
    resumed = _lars(model, **EXECUTIONS[execution])
    resumed.load_state_dict(torch.load(tmp_path / "opt.pt", weights_only=True))
    got = _lars_steps(model, resumed, 2, start=2)
    for a, b in zip(got, eager):
        assert float((a - b).abs().max() / b.abs().max()) <= 1e-6
    layouts = resumed.optimizer.__dict__.get("_contiguous", {})
    if execution == "contiguous, fused":
        assert sorted(layouts) == [(0, 0), (0, 1)]
        assert [b.runs for layout in layouts.values() for b in layout.buckets] == [2, 2]
        assert [p.shape for p in layouts[(0, 1)].params] == [torch.Size([300]), torch.Size([2])]   # the biases


def test_lars_around_a_torch_optimizer_rescales_eagerly():
    """Around an optimizer that is not a chain (torch's SGD), LARS rescales the gradients itself, then the
    inner optimizer steps: the same steps as around MindSpore's Momentum (named parameters, the default filter
    leaving the biases out; no decay, no loss scale)."""
    steps = []
    for inner_cls, options in ((torch.optim.SGD, {"lr": 0.05, "momentum": 0.9}),
                               (ms_sgd.Momentum, {"learning_rate": 0.05, "momentum": 0.9})):
        model = _lars_model()
        opt = LARS(inner_cls(list(model.named_parameters()), **options), coefficient=0.01)
        assert opt._in_chain is (inner_cls is ms_sgd.Momentum)
        assert opt._flags == [[True, False, True, False]]
        steps.append(_lars_steps(model, opt, 3))
    for a, b in zip(*steps):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)


def test_lars_refuses_an_optimizer_it_already_wraps():
    """LARS puts its stage at the head of a chain optimizer's chain: wrapping the same optimizer again would
    rescale twice, so it is a ConfigError at `optimizer`, and the chain keeps one LarsScale."""
    inner = ms_sgd.Momentum(_lars_model().parameters(), learning_rate=0.05, momentum=0.9)
    LARS(inner)
    with pytest.raises(optreg.ConfigError) as info:
        LARS(inner)
    assert info.value.errors[0].path == "optimizer" and "already wrapped" in str(info.value)
    assert [type(s).__name__ for s in inner.chain].count("LarsScale") == 1


def test_the_wrappers_param_groups_are_reported_at_the_wrappers_rules():
    """A LARS config's `param_groups` are its own (`optimizer.param_groups`), planned with the wrapped optimizer:
    their rows and errors were at `optimizer.optimizer.param_groups[k]`, a key the file does not have (and at the
    wrapped spec's position)."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
    text = ("optimizer:\n  name: mindspore.LARS\n  optimizer: {name: Momentum, learning_rate: 0.1, momentum: 0.9}\n"
            "  param_groups:\n    - {params: ['*.bias'], weight_decay: 0.0}\n")
    assert [r["rule"] for r in optreg.build(text, model).group_table()] == ["optimizer.param_groups[0]", "default"]
    for edit, path in [(("weight_decay: 0.0", "weight_decay: 0.0, foo: 1"), "optimizer.param_groups[0].foo"),
                       (("'*.bias'", "'*.bias', '*.bais'"), "optimizer.param_groups[0].params[1]")]:
        with pytest.raises(optreg.ConfigError) as info:
            optreg.build(text.replace(*edit), model)
        assert [e.path for e in info.value.errors] == [path]
        assert info.value.errors[0].location.line == 5

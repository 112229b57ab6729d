"""OneFlow optimizer features: per-group clip_grad, zero_grad's default, support_sparse, the single step counter."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from test_opt_sgd import build, drive, gradient, row, torch_params, two_groups

import optreg

ONEFLOW_SGD = row("sgd_family", "oneflow", "SGD")


def oneflow_names() -> list[str]:
    return optreg.list_optimizers(dialect="oneflow")


def clipped(grads: list[np.ndarray], max_norm: float, norm_type: float) -> list[np.ndarray]:
    """oneflow.nn.utils.clip_grad_norm_ on one group: one norm over all its gradients, coef = max/(norm + 1e-6)."""
    if math.isinf(norm_type):
        norm = max(float(np.max(np.abs(g))) for g in grads)
    else:
        norm = sum(float(np.sum(np.abs(g) ** norm_type)) for g in grads) ** (1.0 / norm_type)
    coef = max_norm / (norm + 1e-6)
    return [g * coef for g in grads] if coef < 1 else grads


def set_grads(params: list[torch.Tensor], t: int = 1) -> list[np.ndarray]:
    grads = [3.0 * gradient(t, i, p.detach().numpy()) for i, p in enumerate(params)]
    for p, g in zip(params, grads):
        p.grad = torch.from_numpy(g.copy())
    return grads


@pytest.mark.parametrize("norm_types", [(2.0, 2.0), (1.0, math.inf)])
def test_clip_grad_clips_each_group_by_its_own_norm(norm_types):
    params = torch_params()
    opt = build(ONEFLOW_SGD, two_groups(params, {"clip_grad_max_norm": 0.5, "clip_grad_norm_type": norm_types[0]},
                                        {"clip_grad_max_norm": 2.0, "clip_grad_norm_type": norm_types[1]}))
    grads = set_grads(params)
    opt.clip_grad()
    expected = clipped(grads[:2], 0.5, norm_types[0]) + clipped(grads[2:], 2.0, norm_types[1])
    for p, e in zip(params, expected):
        np.testing.assert_allclose(p.grad.numpy(), e, rtol=1e-12, atol=0)
    whole = clipped(grads, 0.5, norm_types[0])  # one norm over every group would give something else
    assert not np.allclose(params[2].grad.numpy(), whole[2])


def test_clip_grad_skips_groups_without_the_keys_with_a_warning():
    params = torch_params()
    opt = build(ONEFLOW_SGD, two_groups(params, {"clip_grad_max_norm": 0.1, "clip_grad_norm_type": 2.0}, {}))
    grads = set_grads(params)
    with pytest.warns(UserWarning, match="clip_grad"):
        opt.clip_grad()
    np.testing.assert_array_equal(params[2].grad.numpy(), grads[2])
    np.testing.assert_allclose(params[0].grad.numpy(), clipped(grads[:2], 0.1, 2.0)[0], rtol=1e-12)


def test_clip_grad_keys_pass_the_registry():
    """Group dicts with OneFlow's clip keys are accepted by configure_optimizer and reach clip_grad()."""
    params = torch_params()
    opt = optreg.configure_optimizer(
        "oneflow.SGD", two_groups(params, {"clip_grad_max_norm": 0.5, "clip_grad_norm_type": 2.0}, {}), lr=0.1)
    grads = set_grads(params)
    with pytest.warns(UserWarning, match="clip_grad"):
        opt.clip_grad()
    np.testing.assert_allclose(params[0].grad.numpy(), clipped(grads[:2], 0.5, 2.0)[0], rtol=1e-12)


@pytest.mark.parametrize("name", oneflow_names())
def test_zero_grad_keeps_zero_tensors_by_default(name):
    model = torch.nn.Linear(3, 2)
    opt = optreg.configure_optimizer(name, model, dialect="oneflow")
    model(torch.ones(1, 3)).sum().backward()
    opt.zero_grad()
    assert all(p.grad is not None and not p.grad.any() for p in model.parameters())
    opt.zero_grad(set_to_none=True)
    assert all(p.grad is None for p in model.parameters())


#: `support_sparse` of each OneFlow optimizer in OneFlow's source (commit 25c8978c1c8b, 2025-08-20):
#: Adam, AdamW and SGD override it to True (python/oneflow/nn/optimizer/{adam,adamw,sgd}.py); every other
#: optimizer inherits False from python/oneflow/optim/optimizer.py
ONEFLOW_SUPPORT_SPARSE = {"Adam": True, "AdamW": True, "SGD": True, "Adagrad": False, "RMSprop": False,
                          "Adadelta": False, "LAMB": False, "LBFGS": False}


def test_support_sparse_as_oneflow_source_says_for_every_entry():
    params = torch_params()
    assert set(oneflow_names()) <= set(ONEFLOW_SUPPORT_SPARSE)
    reported = {n: optreg.configure_optimizer(n, params, dialect="oneflow").support_sparse for n in oneflow_names()}
    assert reported == {n: ONEFLOW_SUPPORT_SPARSE[n] for n in oneflow_names()}


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD"])
def test_a_sparse_gradient_steps_as_its_dense_equivalent(name):
    kw = dict(lr=0.1, weight_decay=0.01) if name != "SGD" else dict(lr=0.1, momentum=0.9, weight_decay=0.01)
    dense = torch.nn.Parameter(torch.arange(12.0).reshape(4, 3) / 7)
    sparse = torch.nn.Parameter(dense.detach().clone())
    opt_dense = optreg.configure_optimizer(name, [dense], dialect="oneflow", **kw)
    opt_sparse = optreg.configure_optimizer(name, [sparse], dialect="oneflow", **kw)
    for t in range(3):
        grad = torch.zeros(4, 3)
        grad[[0, 2][t % 2]] = torch.tensor([1.0, -2.0, 0.5]) * (t + 1)
        dense.grad, sparse.grad = grad, grad.to_sparse()
        opt_dense.step()
        opt_sparse.step()
    assert torch.equal(dense, sparse)
    assert not torch.equal(dense, torch.arange(12.0).reshape(4, 3) / 7)


# LBFGS counts its iterations in its state (n_iter, func_evals; test_oneflow_lbfgs.py), as OneFlow's does
@pytest.mark.parametrize("name", [n for n in oneflow_names() if n != "LBFGS"])
def test_one_step_counter_for_the_whole_optimizer(name):
    params = torch_params()
    opt = optreg.configure_optimizer(name, params, dialect="oneflow")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        drive(opt, params, 5, skip=lambda t, i: i == 1 and t > 1)  # parameter 1 only gets a gradient at step 1
    assert opt.global_step == 5
    assert [g["global_step"] for g in opt.state_dict()["param_groups"]] == [5] * len(opt.param_groups)
    assert "global_step" not in opt.state_dict()  # the groups carry it: ZeRO and DCP keep only state and groups
    again = optreg.configure_optimizer(name, params, dialect="oneflow")
    again.load_state_dict(opt.state_dict())
    assert again.global_step == 5

"""MindSpore's AdaSum wrappers: the AdaSum combination against its formula, and in one process the inner
optimizer's trajectory exactly; a run of several processes refused."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import optreg
from optreg.dialects.mindspore import adasum as A

WRAPPERS = ["AdaSumByGradWrapCell", "AdaSumByDeltaWeightWrapCell"]


def _reference_pair(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The formula of MindSpore's pages and of the AdaSum paper, in numpy float64."""
    dot = float(a @ b)
    return (1 - dot / (2 * float(a @ a))) * a + (1 - dot / (2 * float(b @ b))) * b


def test_the_pair_follows_the_formula_and_its_limits():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(50), rng.standard_normal(50)
    got = A.adasum_pair(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    want = _reference_pair(a, b)
    assert np.abs(got - want).max() <= 1e-14 * np.abs(want).max()   # float64 rounding of two dot products
    e1, e2 = torch.tensor([1.0, 0.0], dtype=torch.float64), torch.tensor([0.0, 2.0], dtype=torch.float64)
    assert torch.equal(A.adasum_pair(e1, e2), e1 + e2)          # orthogonal: the sum
    assert torch.equal(A.adasum_pair(e2, e2), e2)               # equal: the vector itself (the average)
    assert torch.equal(A.adasum_pair(e1, torch.zeros(2, dtype=torch.float64)), e1)   # zero: no contribution


def test_four_contributions_combine_by_recursive_halving_and_one_is_itself():
    rng = np.random.default_rng(1)
    parts = [rng.standard_normal(20) for _ in range(4)]
    want = _reference_pair(_reference_pair(parts[0], parts[1]), _reference_pair(parts[2], parts[3]))
    got = A.adasum([torch.from_numpy(p) for p in parts]).numpy()
    assert np.abs(got - want).max() <= 1e-14 * np.abs(want).max()
    one = torch.randn(5)
    assert A.adasum([one]) is one
    with pytest.raises(optreg.ConfigError, match="power of two of contributions, got 3"):
        A.adasum([one, one, one])


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 1)).double()


def _train(model, optimizer, steps=5):
    torch.manual_seed(1)
    for _ in range(steps):
        optimizer.zero_grad()
        model(torch.randn(8, 4, dtype=torch.float64)).pow(2).mean().backward()
        optimizer.step()
    return [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("name", WRAPPERS)
def test_in_one_process_it_trains_exactly_as_its_inner_optimizer(name):
    inner = {"name": "Adam", "learning_rate": 0.01, "weight_decay": 0.01}
    plain_model, wrapped_model = _model(), _model()
    plain = optreg.build({"dialect": "mindspore", "optimizer": inner}, plain_model).optimizer
    wrapped = optreg.build({"dialect": "mindspore", "optimizer": {"name": name, "optimizer": inner}},
                           wrapped_model).optimizer
    assert type(wrapped).__name__ == name and type(wrapped.optimizer) is type(plain)
    assert all(torch.equal(a, b) for a, b in zip(_train(plain_model, plain), _train(wrapped_model, wrapped)))
    assert wrapped.state_dict()["param_groups"] == plain.state_dict()["param_groups"]


@pytest.mark.parametrize("name", WRAPPERS)
def test_a_run_of_several_processes_is_refused_at_construction_and_at_step(name, monkeypatch):
    model = _model()
    config = {"dialect": "mindspore", "optimizer": {"name": name, "optimizer": {"name": "Momentum",
                                                                                "learning_rate": 0.1,
                                                                                "momentum": 0.9}}}
    built = optreg.build(copy.deepcopy(config), model).optimizer
    monkeypatch.setattr(A, "_world_size", lambda: 4)
    with pytest.raises(optreg.ConfigError) as err:
        optreg.build(config, _model())
    assert err.value.errors[0].path.startswith("optimizer")
    assert f"{name} combines each process's own gradients with AdaSum; in this run of 4 processes" in str(err.value)
    with pytest.raises(optreg.ConfigError, match="does not implement the combination across processes"):
        built.step()


def test_describe_says_what_it_is_in_one_process_and_what_mindspore_does():
    described = optreg.describe("mindspore.AdaSumByGradWrapCell")
    assert "in one process the inner optimizer's step unchanged" in described.doc
    notes = " ".join(described.notes)
    assert "Stand alone mode is not supported to apply adasum" in notes and "refused" in notes

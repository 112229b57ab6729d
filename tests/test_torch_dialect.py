"""The torch dialect builds the real torch classes: identical trajectories, lr sequences and resumes."""

from __future__ import annotations

import inspect

import pytest
import torch
from torch_cases import (OPTIMIZER_CASES, SCHEDULER_CASES, clone_model, direct_optimizer, direct_scheduler,
                         lr_sequence, make_model, make_sgd, registry_optimizer, same, trajectory, yaml_text)

import optreg

STEPS = 20


def _torch_optimizers() -> set[str]:
    return {n for n in torch.optim.__all__ if isinstance(getattr(torch.optim, n), type)
            and issubclass(getattr(torch.optim, n), torch.optim.Optimizer) and n != "Optimizer"}


def _torch_schedulers() -> set[str]:
    s = torch.optim.lr_scheduler
    return {n for n in s.__all__ if isinstance(getattr(s, n), type) and n not in ("LRScheduler", "_LRScheduler")}


def test_every_torch_optimizer_is_registered_and_tested():
    installed = _torch_optimizers()
    assert installed >= {"Adam", "AdamW", "SGD", "LBFGS", "SparseAdam"}
    registered = set(optreg.list_optimizers(dialect="torch"))
    assert installed - registered == set(), "torch optimizers missing from the torch table"
    assert installed - set(OPTIMIZER_CASES) == set(), "torch optimizers without a trajectory case"


def test_every_torch_scheduler_is_registered_and_tested():
    installed = _torch_schedulers()
    assert installed >= {"StepLR", "OneCycleLR", "SequentialLR"}
    registered = set(optreg.list_schedulers(dialect="torch"))
    assert installed - registered == set(), "torch schedulers missing from the torch table"
    assert installed - set(SCHEDULER_CASES) == set(), "torch schedulers without an lr-sequence case"


@pytest.mark.parametrize("name", sorted(OPTIMIZER_CASES))
def test_optimizer_trajectory_is_bitwise_torch(name):
    _, _, kind, bias = OPTIMIZER_CASES[name]
    model = make_model(kind, bias)
    m_direct, m_registry, m_yaml = clone_model(model), clone_model(model), clone_model(model)
    direct = direct_optimizer(name, m_direct)
    via_python = registry_optimizer(name, m_registry)
    via_yaml = optreg.build(yaml_text(name), m_yaml).optimizer
    assert type(via_python) is type(direct) is type(via_yaml)
    reference = trajectory(m_direct, direct, STEPS)
    assert not torch.equal(reference[0][0], reference[-1][0]), "the case must actually move the parameters"
    assert same(trajectory(m_registry, via_python, STEPS), reference)
    assert same(trajectory(m_yaml, via_yaml, STEPS), reference)
    assert [sorted(k for k in g if k != "params") for g in via_python.param_groups] == \
           [sorted(k for k in g if k != "params") for g in direct.param_groups]


@pytest.mark.parametrize("name", sorted(OPTIMIZER_CASES))
def test_optimizer_state_dict_round_trip_resumes_identically(name):
    _, _, kind, bias = OPTIMIZER_CASES[name]
    model = make_model(kind, bias)
    straight_model = clone_model(model)
    straight = registry_optimizer(name, straight_model)
    reference = trajectory(straight_model, straight, STEPS)

    first_model = clone_model(model)
    first = registry_optimizer(name, first_model)
    trajectory(first_model, first, STEPS // 2)
    saved_state = first.state_dict()
    saved_params = {k: v.clone() for k, v in first_model.state_dict().items()}

    resumed_model = make_model(kind, bias, seed=123)  # different weights: everything must come from the save
    resumed_model.load_state_dict(saved_params)
    resumed = registry_optimizer(name, resumed_model)
    resumed.load_state_dict(saved_state)
    assert resumed.state_dict()["param_groups"] == saved_state["param_groups"]
    assert same(trajectory(resumed_model, resumed, STEPS - STEPS // 2, start=STEPS // 2), reference[STEPS // 2:])


@pytest.mark.parametrize("name", sorted(SCHEDULER_CASES))
def test_scheduler_lr_sequence_equals_torch(name):
    model = make_model()
    opt_direct, opt_registry, opt_yaml = make_sgd(model), make_sgd(model), make_sgd(model)
    direct = direct_scheduler(name, opt_direct)
    via_python = optreg.configure_lr_scheduler(opt_registry, {"name": name, **SCHEDULER_CASES[name]})
    assert type(via_python) is type(direct)
    reference = lr_sequence(direct, opt_direct, 300)
    assert len(set(reference)) > 1, "the case must actually change the lr"
    assert lr_sequence(via_python, opt_registry, 300) == reference
    via_name = optreg.configure_lr_scheduler(opt_yaml, name, **SCHEDULER_CASES[name])
    assert lr_sequence(via_name, opt_yaml, 300) == reference


@pytest.mark.parametrize("name", sorted(SCHEDULER_CASES))
def test_scheduler_resume_from_state_dict_continues_identically(name):
    model = make_model()
    spec = {"name": name, **SCHEDULER_CASES[name]}
    opt = make_sgd(model)
    straight = lr_sequence(optreg.configure_lr_scheduler(opt, spec), opt, 300)

    opt1 = make_sgd(model)
    sched1 = optreg.configure_lr_scheduler(opt1, spec)
    head = lr_sequence(sched1, opt1, 137)
    opt_state, sched_state = opt1.state_dict(), sched1.state_dict()

    opt2 = make_sgd(model)
    sched2 = optreg.configure_lr_scheduler(opt2, spec)
    opt2.load_state_dict(opt_state)
    sched2.load_state_dict(sched_state)
    assert head + lr_sequence(sched2, opt2, 300 - 137, start=137) == straight


def test_scheduler_from_yaml_through_build():
    text = """
optimizer:
  name: SGD
  lr: 0.1
  momentum: 0.9
scheduler:
  name: sequential
  schedulers:
    - {name: LinearLR, start_factor: 0.1, total_iters: 20}
    - {name: CosineAnnealingLR, T_max: 280}
"""
    model = make_model()
    built = optreg.build(text, model)
    assert isinstance(built.scheduler, torch.optim.lr_scheduler.SequentialLR)
    assert built.scheduler._milestones == [20]
    opt = torch.optim.SGD(make_model().parameters(), lr=0.1, momentum=0.9)
    direct = direct_scheduler("SequentialLR", opt)
    got = [g[0] for g in lr_sequence(built.scheduler, built.optimizer, 300)]
    assert got == [g[0] for g in lr_sequence(direct, opt, 300)]


def test_lambda_expression_scheduler_pickles_into_state_dict():
    opt = make_sgd(make_model())
    sched = optreg.configure_lr_scheduler(opt, "LambdaLR", lr_lambda="0.5 ** (step // 10)")
    buffer = __import__("io").BytesIO()
    torch.save(sched.state_dict(), buffer)
    buffer.seek(0)
    state = torch.load(buffer, weights_only=True)   # the expression is stored as its text
    opt2 = make_sgd(make_model())
    sched2 = optreg.configure_lr_scheduler(opt2, "LambdaLR", lr_lambda="1.0")
    sched2.load_state_dict(state)
    assert sched2.lr_lambdas[0](25) == 0.25


def test_torch_rows_take_their_defaults_from_torch():
    for name in OPTIMIZER_CASES:
        d = optreg.describe(name)
        signature = inspect.signature(getattr(torch.optim, name)).parameters
        for p in d.params:
            assert p.default == signature[p.name].default, (name, p.name)

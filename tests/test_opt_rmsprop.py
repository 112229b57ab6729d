"""RMSprop of the OneFlow, Cerebras and MindSpore dialects against their numpy references and torch."""

from __future__ import annotations

import pytest
import torch
from test_opt_sgd import (FLOAT32_TOLERANCE, STEPS, build, check_resume, drive, max_err, reference, replay, row,
                          torch_params, two_groups)

from optreg.dialects.cerebras.adagrad_rmsprop import RMSprop as CerebrasRMSprop
from optreg.dialects.mindspore import adagrad_rmsprop as ms
from optreg.reference import rmsprop as ref
from optreg.stages.chain import Chain
from optreg.stages.gradient import Maximize
from optreg.stages.rmsprop import MeanSquare, RMSDenominator, RMSStep


class RMSprop(CerebrasRMSprop):
    """torch's RMSprop: Cerebras' chain (torch numerics) behind torch's `maximize`."""

    chain = Chain(Maximize(), *CerebrasRMSprop.chain)


TORCH_CASES = {
    "plain": ({"lr": 0.01}, {"lr": 0.003, "alpha": 0.9}),
    "centered_momentum_decay": ({"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.01},
                                {"lr": 0.005, "momentum": 0.5, "eps": 1e-3}),
    "maximize": ({"lr": 0.001, "maximize": True, "centered": True}, {"lr": 0.002, "maximize": True, "momentum": 0.3}),
}


@pytest.mark.parametrize("case", TORCH_CASES)
def test_default_knobs_follow_torch_reference_and_torch(case):
    g0, g1 = TORCH_CASES[case]
    ours = torch_params()
    got = drive(RMSprop(two_groups(ours, g0, g1)), ours, STEPS)
    assert max_err(got, reference(ref.torch_rmsprop, (g0, g1))) < 1e-12
    theirs = torch_params()
    assert max_err(got, drive(torch.optim.RMSprop(two_groups(theirs, g0, g1)), theirs, STEPS)) == 0.0


# -- Cerebras: torch's formula, preinitialized state -----------------------------------------------

CEREBRAS = row("rmsprop_family", "cerebras", "RMSprop")


def test_cerebras_rmsprop_equals_torch_and_its_reference():
    g0, g1 = {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.01}, {"lr": 0.003}
    a, b = torch_params(), torch_params()
    got = drive(build(CEREBRAS, two_groups(a, g0, g1)), a, STEPS)
    assert max_err(got, reference(ref.torch_rmsprop, (g0, g1))) < 1e-12
    assert max_err(got, drive(torch.optim.RMSprop(two_groups(b, g0, g1)), b, STEPS)) == 0.0


def test_cerebras_rmsprop_preinitializes_what_each_group_uses():
    params = torch_params()
    opt = build(CEREBRAS, two_groups(params, {"momentum": 0.9, "centered": True}, {}))
    assert [sorted(opt.state[p]) for p in params] == [["grad_avg", "momentum_buffer", "square_avg"]] * 2 + [
        ["square_avg"]]


# -- OneFlow: eps inside the square root, no momentum ---------------------------------------------

ONEFLOW = row("rmsprop_family", "oneflow", "RMSprop")
ONEFLOW_CASES = {
    "plain": ({"lr": 0.01, "weight_decay": 0.01}, {"lr": 0.003, "alpha": 0.9, "eps": 1e-2}),
    "centered": ({"lr": 0.01, "centered": True, "eps": 1e-3}, {"lr": 0.005, "centered": True, "weight_decay": 0.1}),
}


@pytest.mark.parametrize("case", ONEFLOW_CASES)
def test_oneflow_rmsprop_follows_its_reference(case):
    g0, g1 = ONEFLOW_CASES[case]
    params = torch_params()
    got = drive(build(ONEFLOW, two_groups(params, g0, g1)), params, STEPS)
    assert max_err(got, reference(ref.oneflow_rmsprop, (g0, g1))) < 1e-12


def test_oneflow_eps_inside_the_root_is_not_torchs_eps():
    g0, g1 = {"lr": 0.01, "eps": 1e-2}, {"lr": 0.01, "eps": 1e-2}
    a, b = torch_params(), torch_params()
    oneflow = drive(build(ONEFLOW, two_groups(a, g0, g1)), a, STEPS)
    assert max_err(oneflow, drive(torch.optim.RMSprop(two_groups(b, g0, g1)), b, STEPS)) > 1e-3


# -- MindSpore: mean square starts at 1, eps inside the root, lr inside the momentum buffer -------

MINDSPORE = row("rmsprop_family", "mindspore", "RMSProp")


@pytest.mark.parametrize("centered", [False, True])
def test_mindspore_rmsprop_follows_its_reference_with_loss_scale_decay_and_dynamic_lr(centered):
    lrs = [0.01 * (1 + 0.5 * (-1) ** k) for k in range(STEPS)]
    g0, g1 = {"lr": lrs, "weight_decay": 0.01}, {"lr": 0.02, "weight_decay": 0.0}
    params = torch_params()
    opt = build(MINDSPORE, two_groups(params, g0, g1), learning_rate=0.1, decay=0.8, momentum=0.7, epsilon=1e-6,
                centered=centered, loss_scale=16.0)
    got = drive(opt, params, STEPS)
    hps = tuple({**g, "decay": 0.8, "momentum": 0.7, "epsilon": 1e-6, "centered": centered, "loss_scale": 16.0}
                for g in (g0, g1))
    assert max_err(got, reference(ref.mindspore_rmsprop, hps)) < 1e-12


class LrOutsideMomentum(ms.RMSProp):
    """MindSpore's RMSProp with torch's momentum form b = μb + g/den, w -= lr·b (a stage setting)."""

    chain = Chain(*ms.PIPELINE, MeanSquare("decay", init=1.0), RMSDenominator("inside", "epsilon"),
                  RMSStep(lr_in_momentum=False))


def test_mindspore_lr_inside_the_buffer_matters_only_when_lr_changes():
    def run(lr, lr_in_momentum):
        params = torch_params()
        cls = ms.RMSProp if lr_in_momentum else LrOutsideMomentum
        opt = cls(two_groups(params, {"lr": lr}, {"lr": lr}), decay=0.9, epsilon=1e-10, momentum=0.9)
        return drive(opt, params, STEPS)

    changing = [0.02 * 0.8 ** k for k in range(STEPS)]
    assert max_err(run(0.01, True), run(0.01, False)) < 1e-14
    assert max_err(run(changing, True), run(changing, False)) > 1e-3
    hps = ({"lr": changing, "decay": 0.9, "momentum": 0.9},) * 2
    assert max_err(run(changing, True), reference(ref.mindspore_rmsprop, hps)) < 1e-12


def test_mindspore_mean_square_starts_at_one():
    p = torch.zeros(3, requires_grad=True)
    opt = build(MINDSPORE, [p], learning_rate=0.1, decay=0.9)
    p.grad = torch.tensor([1.0, 2.0, -3.0])
    opt.step()
    expected = -0.1 * p.grad / torch.sqrt(0.9 + 0.1 * p.grad ** 2 + 1e-10)
    assert torch.allclose(p.detach(), expected, rtol=1e-6, atol=0)


@pytest.mark.parametrize("name", ["rmsprop", "rmsprop_centered"])
def test_mindspore_rmsprop_matches_mindspore(name):
    """Recorded from MindSpore 2.10's CPU build: momentum, centered, weight decay, the s₀ = 1 start."""
    worst, moved = replay(name)
    assert worst < FLOAT32_TOLERANCE and moved > 0.05


# -- exact resume -------------------------------------------------------------------------------------

RESUME = {
    "oneflow.RMSprop": lambda ps: build(ONEFLOW, two_groups(ps, {"lr": 0.01, "centered": True}, {"lr": 0.02})),
    "cerebras.RMSprop": lambda ps: build(CEREBRAS, two_groups(ps, {"lr": 0.01, "momentum": 0.9}, {"centered": True})),
    "mindspore.RMSProp": lambda ps: build(MINDSPORE, two_groups(ps, {"lr": [0.01 / k for k in range(1, 13)]}, {}),
                                          learning_rate=0.05, momentum=0.5, centered=True, loss_scale=2.0,
                                          weight_decay=0.01),
}


@pytest.mark.parametrize("name", RESUME)
def test_state_dict_round_trip_resumes_exactly(name):
    check_resume(RESUME[name], skip=lambda t, i: i == 0 and t == 4)

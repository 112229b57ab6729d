"""Adagrad / ProximalAdagrad of the OneFlow, Cerebras and MindSpore dialects against their references and torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_opt_sgd import (FLOAT32_TOLERANCE, STEPS, build, check_resume, drive, max_err, reference, replay, row,
                          torch_params, two_groups)

from optreg.dialects.cerebras.adagrad_rmsprop import Adagrad as CerebrasAdagrad
from optreg.dialects.mindspore import adagrad_rmsprop as ms
from optreg.reference import adagrad as ref
from optreg.stages.adagrad import Accumulate, ProximalStep
from optreg.stages.chain import Chain


def Adagrad(groups, **defaults):
    """torch's Adagrad: Cerebras' (torch numerics, the parameter's own step) with torch's eps default."""
    return CerebrasAdagrad(groups, **{"eps": 1e-10, **defaults})


def gaps(t: int, i: int) -> bool:
    """Parameter 1 has no gradient at every third step."""
    return i == 1 and t % 3 == 0


TORCH_CASES = {  # (group 0, group 1, constructor defaults)
    "plain": ({"lr": 0.1}, {"lr": 0.03, "eps": 1e-6}, {}),
    "decay_accumulator": ({"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.01}, {"lr": 0.05, "lr_decay": 0.2},
                          {"initial_accumulator_value": 0.5}),
    "maximize": ({"lr": 0.01, "maximize": True, "weight_decay": 0.1}, {"lr": 0.02, "maximize": True}, {}),
}


@pytest.mark.parametrize("case", TORCH_CASES)
def test_default_knobs_follow_torch_reference_and_torch(case):
    g0, g1, defaults = TORCH_CASES[case]
    ours = torch_params()
    got = drive(Adagrad(two_groups(ours, g0, g1), **defaults), ours, STEPS)
    hps = ({**defaults, **g0}, {**defaults, **g1})
    assert max_err(got, reference(ref.torch_adagrad, hps, clock="global")) < 1e-12
    theirs = torch_params()
    assert max_err(got, drive(torch.optim.Adagrad(two_groups(theirs, g0, g1), **defaults), theirs, STEPS)) == 0.0


def test_a_groups_initial_accumulator_value_is_used():
    """Cerebras and OneFlow fill `sum` with the group's value; torch 2.x uses the constructor's for every group."""
    g0, g1 = {"lr": 0.1, "initial_accumulator_value": 2.0}, {"lr": 0.1}
    params = torch_params()
    got = drive(Adagrad(two_groups(params, g0, g1), initial_accumulator_value=0.5), params, STEPS)
    hps = ({**g0}, {**g1, "initial_accumulator_value": 0.5})
    assert max_err(got, reference(ref.torch_adagrad, hps, clock="global")) < 1e-12


# -- Cerebras: torch's formula, the parameter's own float32 step, preinitialized -------------------

CEREBRAS = row("adagrad_family", "cerebras", "Adagrad")
DECAYING = ({"lr": 0.1, "lr_decay": 0.1, "weight_decay": 0.01}, {"lr": 0.05, "lr_decay": 0.3, "maximize": True})


def test_cerebras_adagrad_counts_each_parameters_own_steps_like_torch():
    g0, g1 = ({**g, "eps": 1e-6} for g in DECAYING)
    a, b = torch_params(), torch_params()
    got = drive(build(CEREBRAS, two_groups(a, g0, g1)), a, STEPS, skip=gaps)
    assert max_err(got, reference(ref.torch_adagrad, (g0, g1), skip=gaps, clock="own")) < 1e-12
    assert max_err(got, drive(torch.optim.Adagrad(two_groups(b, g0, g1)), b, STEPS, skip=gaps)) == 0.0


def test_cerebras_adagrad_preinitializes_sum_and_step():
    params = torch_params()
    opt = build(CEREBRAS, two_groups(params, {"initial_accumulator_value": 0.25}, {}))
    first = opt.state[params[0]]
    assert sorted(first) == ["step", "sum"]
    assert torch.equal(first["sum"], torch.full_like(params[0], 0.25))
    assert first["step"].dtype == torch.float32 and float(first["step"]) == 0.0
    drive(opt, params, 4, skip=gaps)
    assert [float(opt.state[p]["step"]) for p in params] == [4.0, 3.0, 4.0]


# -- OneFlow: the lr decay counts the optimizer-wide step ------------------------------------------

ONEFLOW = row("adagrad_family", "oneflow", "Adagrad")


def test_oneflow_adagrad_decays_lr_with_the_optimizer_wide_step():
    g0, g1 = DECAYING[0], {k: v for k, v in DECAYING[1].items() if k != "maximize"}
    a, b = torch_params(), torch_params()
    got = drive(build(ONEFLOW, two_groups(a, g0, g1)), a, STEPS, skip=gaps)
    assert max_err(got, reference(ref.oneflow_adagrad, (g0, g1), skip=gaps, clock="global")) < 1e-12
    per_parameter = drive(torch.optim.Adagrad(two_groups(b, g0, g1), eps=1e-10), b, STEPS, skip=gaps)
    assert max_err(got, per_parameter) > 1e-4  # the skipped parameter sees a different t
    c = torch_params()
    assert max_err(drive(build(ONEFLOW, two_groups(c, g0, g1)), c, STEPS),
                   drive(torch.optim.Adagrad(two_groups(d := torch_params(), g0, g1)), d, STEPS)) == 0.0


# -- MindSpore: accumulator starts at accum, no eps, update_slots ----------------------------------

MINDSPORE = row("adagrad_family", "mindspore", "Adagrad")


@pytest.mark.parametrize("update_slots", [True, False])
def test_mindspore_adagrad_follows_its_reference(update_slots):
    lrs = [0.05 / (1 + k) for k in range(STEPS)]
    g0, g1 = {"lr": lrs, "weight_decay": 0.01}, {"lr": 0.02, "weight_decay": 0.0}
    params = torch_params()
    opt = build(MINDSPORE, two_groups(params, g0, g1), accum=0.3, update_slots=update_slots, loss_scale=4.0)
    got = drive(opt, params, STEPS)
    hps = tuple({**g, "accum": 0.3, "update_slots": update_slots, "loss_scale": 4.0} for g in (g0, g1))
    assert max_err(got, reference(ref.mindspore_adagrad, hps)) < 1e-12


def test_mindspore_adagrad_is_torch_adagrad_without_eps():
    g0, g1 = {"lr": 0.05, "weight_decay": 0.01}, {"lr": 0.02}
    a, b = torch_params(), torch_params()
    got = drive(build(MINDSPORE, two_groups(a, g0, g1), accum=0.1), a, STEPS)
    torch_one = torch.optim.Adagrad(two_groups(b, g0, g1), initial_accumulator_value=0.1, eps=0.0)
    assert max_err(got, drive(torch_one, b, STEPS)) == 0.0


# -- MindSpore ProximalAdagrad -----------------------------------------------------------------------

PROXIMAL = row("adagrad_family", "mindspore", "ProximalAdagrad")
PROXIMAL_CASES = {
    "no_regularisation": ({"lr": 0.05}, {"lr": 0.02}),
    "l1_l2": ({"lr": 0.1, "l1": 0.5, "l2": 0.1, "weight_decay": 0.01}, {"lr": 0.05, "l1": 0.0, "l2": 0.3}),
}


@pytest.mark.parametrize("case", PROXIMAL_CASES)
def test_mindspore_proximal_adagrad_follows_its_reference(case):
    g0, g1 = PROXIMAL_CASES[case]
    params = torch_params()
    got = drive(build(PROXIMAL, two_groups(params, g0, g1), accum=0.2, loss_scale=2.0), params, STEPS)
    hps = tuple({**g, "accum": 0.2, "loss_scale": 2.0} for g in (g0, g1))
    expected = reference(ref.mindspore_proximal_adagrad, hps)
    assert max_err(got, expected) < 1e-12
    if case == "l1_l2":  # the l1 proximal step sets small weights to exactly zero
        assert (got[0] == 0).any() and np.array_equal(got[0] == 0, expected[0] == 0)


def test_proximal_adagrad_without_l1_l2_is_adagrad():
    g0, g1 = PROXIMAL_CASES["no_regularisation"]
    a, b = torch_params(), torch_params()
    got = drive(build(PROXIMAL, two_groups(a, g0, g1), accum=0.2), a, STEPS)
    assert max_err(got, drive(build(MINDSPORE, two_groups(b, g0, g1), accum=0.2), b, STEPS)) < 1e-14


# -- MindSpore's own trajectories (recorded from MindSpore 2.10's CPU build) --------------------------


def test_mindspore_adagrad_matches_mindspore():
    worst, moved = replay("adagrad")
    assert worst < FLOAT32_TOLERANCE and moved > 0.05


def test_mindspore_cpu_adagrad_kernel_ignores_update_slots():
    """Documented: update_slots=False keeps the accumulator. MindSpore 2.10's CPU kernel accumulates anyway."""
    assert replay("adagrad_noslots")[0] > 0.01  # ours keeps h = accum, as documented
    assert replay("adagrad_noslots", update_slots=True)[0] < FLOAT32_TOLERANCE


def test_mindspore_cpu_proximal_adagrad_shrinks_by_the_adaptive_step():
    """Documented: shrink by lr·l1, divide by 1 + lr·l2. The CPU kernel uses lr/√a there (ProximalStep("adaptive"))."""
    assert replay("proximaladagrad")[0] > 1e-3  # ours follows the documented formula
    kernel_form = replay("proximaladagrad", make=lambda named, options: KernelProximalAdagrad(
        [p for _, p in named], **options))
    assert kernel_form[0] < FLOAT32_TOLERANCE and kernel_form[1] > 0.05


class KernelProximalAdagrad(ms.ProximalAdagrad):
    """MindSpore 2.10's CPU kernel form: shrink by the adaptive step lr/√a (a stage setting)."""

    chain = Chain(*ms.PIPELINE, Accumulate("accum", "accum"), ProximalStep("adaptive"))


# -- exact resume -------------------------------------------------------------------------------------

RESUME = {
    "oneflow.Adagrad": lambda ps: build(ONEFLOW, two_groups(ps, {"lr": 0.1, "lr_decay": 0.1}, {})),
    "cerebras.Adagrad": lambda ps: build(CEREBRAS, two_groups(ps, {"lr": 0.1, "lr_decay": 0.1}, {"maximize": True})),
    "mindspore.Adagrad": lambda ps: build(MINDSPORE, two_groups(ps, {"lr": [0.1 / k for k in range(1, 13)]}, {}),
                                          loss_scale=2.0, weight_decay=0.01),
    "mindspore.ProximalAdagrad": lambda ps: build(PROXIMAL, two_groups(ps, {"l1": 0.1}, {"l2": 0.1}),
                                                  learning_rate=0.05),
}


@pytest.mark.parametrize("name", RESUME)
def test_state_dict_round_trip_resumes_exactly(name):
    check_resume(RESUME[name], skip=gaps)

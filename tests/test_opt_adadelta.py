"""Cerebras and OneFlow Adadelta (the classes and their registry rows) against the numpy reference and
torch.optim.Adadelta (OneFlow 0.9.0's AdadeltaUpdateFunctor computes the same formula)."""

from __future__ import annotations

import pytest
import torch
from test_opt_sgd import STEPS, build, check_resume, drive, max_err, reference, row, torch_params, two_groups

from optreg.dialects.cerebras.misc import Adadelta
from optreg.reference import adadelta as ref

CEREBRAS = row("misc_family", "cerebras", "Adadelta")
ONEFLOW = row("misc_family", "oneflow", "Adadelta")
CASES = {
    "defaults": ({"lr": 1.0}, {"lr": 0.5}),
    "decay_rho_eps": ({"lr": 1.0, "rho": 0.8, "weight_decay": 0.01}, {"lr": 0.3, "rho": 0.95, "eps": 1e-3}),
    "maximize": ({"lr": 0.5, "maximize": True}, {"lr": 0.5, "maximize": True, "weight_decay": 0.1}),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("make", ["class", "cerebras", "oneflow"])
def test_follows_reference_and_torch(case, make):
    g0, g1 = CASES[case]
    params = torch_params()
    groups = two_groups(params, g0, g1)
    got = drive(Adadelta(groups) if make == "class" else build(CEREBRAS if make == "cerebras" else ONEFLOW, groups),
                params, STEPS)
    assert max_err(got, reference(ref.torch_adadelta, (g0, g1))) < 1e-12
    theirs = torch_params()
    assert max_err(got, drive(torch.optim.Adadelta(two_groups(theirs, g0, g1)), theirs, STEPS)) == 0.0


def test_cerebras_adadelta_preinitializes_both_accumulators():
    params = torch_params()
    opt = build(CEREBRAS, params)
    assert all(sorted(opt.state[p]) == ["acc_delta", "square_avg"] for p in params)
    assert opt.state_names_to_sparsify() == ["square_avg", "acc_delta"]


def test_oneflow_adadelta_allocates_its_state_in_the_constructor_and_keeps_gradients():
    params = torch_params()
    opt = build(ONEFLOW, params)
    assert all(sorted(opt.state[p]) == ["acc_delta", "square_avg"] for p in params)
    drive(opt, params, 1)
    opt.zero_grad()
    assert all(p.grad is not None and not p.grad.any() for p in params)


def test_state_dict_round_trip_resumes_exactly():
    check_resume(lambda ps: build(CEREBRAS, two_groups(ps, {"rho": 0.8}, {"lr": 0.5})),
                 skip=lambda t, i: i == 2 and t % 4 == 0)

"""Cerebras ASGD (the class and its registry row) against the numpy reference and torch.optim.ASGD."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_opt_sgd import STEPS, build, check_resume, drive, max_err, reference, row, torch_params, two_groups

from optreg.dialects.cerebras.misc import ASGD
from optreg.reference import asgd as ref

CEREBRAS = row("misc_family", "cerebras", "ASGD")
CASES = {
    "defaults": ({"lr": 0.01}, {"lr": 0.02}),
    "averaging_starts": ({"lr": 0.05, "lambd": 1e-2, "t0": 5, "alpha": 0.6, "weight_decay": 0.01},
                         {"lr": 0.02, "t0": 10, "lambd": 1e-3}),
    "maximize": ({"lr": 0.01, "maximize": True, "t0": 3}, {"lr": 0.02, "maximize": True, "weight_decay": 0.1}),
}


def gaps(t: int, i: int) -> bool:
    return i == 1 and t % 4 == 0


@pytest.fixture
def float64_scalars():
    """torch's ASGD keeps eta/mu in the default dtype; float64 makes it comparable at 1e-12."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("make", ["class", "cerebras"])
def test_follows_reference_and_torch(case, make, float64_scalars):
    g0, g1 = CASES[case]
    params = torch_params()
    groups = two_groups(params, g0, g1)
    opt = ASGD(groups) if make == "class" else build(CEREBRAS, groups)
    got = drive(opt, params, STEPS, skip=gaps)
    expected = reference(ref.torch_asgd, (g0, g1), skip=gaps, clock="own")
    assert max_err(got, expected) < 1e-12
    theirs = torch_params()
    torch_opt = torch.optim.ASGD(two_groups(theirs, g0, g1))
    assert max_err(got, drive(torch_opt, theirs, STEPS, skip=gaps)) == 0.0
    averages = [opt.state[p]["ax"].numpy() for p in params]
    assert max_err(averages, [torch_opt.state[p]["ax"].numpy() for p in theirs]) == 0.0


def test_average_is_exact_copy_before_t0_and_a_mean_after():
    p = torch.zeros(2, requires_grad=True, dtype=torch.float64)
    opt = ASGD([p], lr=0.1, lambd=0.0, t0=2)
    seen = []
    for t in range(1, 6):
        p.grad = torch.tensor([1.0, -2.0], dtype=torch.float64)
        opt.step()
        seen.append(p.detach().clone())
        if t <= 4:  # step t uses mu = 1/max(1, t - 1 - t0): 1 up to step t0 + 2, so ax is a copy of w
            assert torch.equal(opt.state[p]["ax"], p.detach())
    np.testing.assert_allclose(opt.state[p]["ax"].numpy(), ((seen[3] + seen[4]) / 2).numpy(), rtol=1e-12)


def test_cerebras_asgd_preinitializes_eta_mu_ax_and_step():
    params = torch_params()
    opt = build(CEREBRAS, two_groups(params, {"lr": 0.05}, {}))
    state = opt.state[params[0]]
    assert sorted(state) == ["ax", "eta", "mu", "step"]
    assert float(state["eta"]) == 0.05 and float(state["mu"]) == 1.0 and state["step"].dtype == torch.float32
    assert opt.state_names_to_sparsify() == ["ax"]


def test_state_dict_round_trip_resumes_exactly():
    check_resume(lambda ps: build(CEREBRAS, two_groups(ps, {"lr": 0.05, "t0": 3}, {"lambd": 1e-2})), skip=gaps)

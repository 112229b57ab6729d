"""Cerebras Lion (the class and its registry row, cerebras.pytorch 2.10) against the numpy reference
(Chen et al. 2023)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_opt_sgd import STEPS, build, check_resume, drive, max_err, reference, row, torch_params, two_groups

import optreg
from optreg.dialects.cerebras.misc import Lion
from optreg.reference import lion as ref

CEREBRAS = row("misc_family", "cerebras", "Lion")
CASES = {
    "defaults": ({"lr": 1e-4}, {"lr": 3e-4}),
    "decay_betas": ({"lr": 0.01, "betas": (0.8, 0.95), "weight_decay": 0.1},
                    {"lr": 0.003, "betas": (0.5, 0.9), "weight_decay": 0.0}),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("make", ["class", "cerebras"])
def test_follows_reference(case, make):
    g0, g1 = CASES[case]
    params = torch_params()
    groups = two_groups(params, g0, g1)
    got = drive(Lion(groups) if make == "class" else build(CEREBRAS, groups), params, STEPS)
    assert max_err(got, reference(ref.lion, (g0, g1))) < 1e-12


def test_every_step_moves_each_weight_by_lr_times_a_sign():
    """Without decay |Δw| = lr for every element whose interpolation is not 0: the update is a sign."""
    params = torch_params()
    opt = build(CEREBRAS, params, lr=0.01)
    before = [p.detach().numpy().copy() for p in params]
    after = drive(opt, params, 1)
    for a, b in zip(after, before):
        np.testing.assert_allclose(np.abs(a - b), 0.01, rtol=1e-12)


def test_weight_decay_multiplies_the_weight_before_the_update():
    """With a zero gradient and zero momentum the sign is 0: only w·(1 - lr·wd) remains."""
    w = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64, requires_grad=True)
    opt = optreg.configure_optimizer("cerebras.Lion", [w], lr=0.1, weight_decay=0.5)
    w.grad = torch.zeros_like(w)
    opt.step()
    assert torch.equal(w.detach(), torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64) * (1 - 0.1 * 0.5))


def test_preinitializes_the_momentum():
    params = torch_params()
    opt = build(CEREBRAS, params)
    assert all(list(opt.state[p]) == ["exp_avg"] and not opt.state[p]["exp_avg"].any() for p in params)
    assert opt.state_names_to_sparsify() == ["exp_avg"]


def test_bad_betas_are_config_errors_with_their_path():
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer("cerebras.Lion", torch_params(), betas=(0.9, 1.0))
    assert [e.path for e in info.value.errors] == ["betas[1]"]


def test_state_dict_round_trip_resumes_exactly():
    check_resume(lambda ps: build(CEREBRAS, two_groups(ps, {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.003})),
                 skip=lambda t, i: i == 2 and t % 4 == 0)

"""Cerebras Rprop (and torch's Rprop from the same stages) against the numpy reference and torch.optim.Rprop."""

from __future__ import annotations

import pytest
import torch
from test_opt_sgd import STEPS, build, check_resume, drive, max_err, reference, row, torch_params, two_groups

from optreg.core.types import OptionalBool
from optreg.stages.chain import Chain
from optreg.stages.gradient import Maximize
from optreg.stages.misc import Rprop as RpropStage
from optreg.stages.optimizer import ChainOptimizer
from optreg.reference import rprop as ref

CEREBRAS = row("misc_family", "cerebras", "Rprop")


class Rprop(ChainOptimizer):
    """torch.optim.Rprop from the shared stages (maximize; p.grad left untouched): checks the stages against torch."""

    chain = Chain(Maximize(), RpropStage())

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50.0), maximize=False, *,
                 foreach: OptionalBool = None, fused: OptionalBool = None):
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), maximize=maximize),
                         foreach=foreach, fused=fused)
CASES = {
    "defaults": ({"lr": 0.01}, {"lr": 0.001}),
    "clamped": ({"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)},
                {"lr": 0.01, "etas": (0.6, 1.1), "step_sizes": (5e-3, 0.02)}),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("make", ["class", "cerebras"])
def test_follows_reference_and_torch(case, make):
    g0, g1 = CASES[case]
    params = torch_params()
    groups = two_groups(params, g0, g1)
    got = drive(Rprop(groups) if make == "class" else build(CEREBRAS, groups), params, STEPS)
    assert max_err(got, reference(ref.torch_rprop, (g0, g1))) < 1e-12
    theirs = torch_params()
    assert max_err(got, drive(torch.optim.Rprop(two_groups(theirs, g0, g1)), theirs, STEPS)) == 0.0


def test_maximize_follows_reference_and_torch():
    g0, g1 = {"lr": 0.01, "maximize": True}, {"lr": 0.02, "maximize": True}
    a, b = torch_params(), torch_params()
    got = drive(Rprop(two_groups(a, g0, g1)), a, STEPS)
    assert max_err(got, reference(ref.torch_rprop, (g0, g1))) < 1e-12
    assert max_err(got, drive(torch.optim.Rprop(two_groups(b, g0, g1)), b, STEPS)) == 0.0


def test_cerebras_rprop_zeroes_the_gradient_in_place_where_its_sign_flipped():
    def one_flip(make):
        p = torch.zeros(3, requires_grad=True)
        opt = make([p])
        p.grad = torch.tensor([1.0, 1.0, 1.0])
        opt.step()
        p.grad = torch.tensor([-1.0, 2.0, 0.5])
        opt.step()
        return p.grad

    assert torch.equal(one_flip(lambda ps: build(CEREBRAS, ps)), torch.tensor([0.0, 2.0, 0.5]))
    assert torch.equal(one_flip(lambda ps: Rprop(ps)), torch.tensor([-1.0, 2.0, 0.5]))  # torch: grad untouched
    assert torch.equal(one_flip(lambda ps: torch.optim.Rprop(ps)), torch.tensor([-1.0, 2.0, 0.5]))


def test_cerebras_rprop_preinitializes_prev_and_step_size():
    params = torch_params()
    opt = build(CEREBRAS, params)
    assert all(sorted(opt.state[p]) == ["prev", "step_size"] for p in params)
    assert torch.equal(opt.state[params[0]]["step_size"], torch.full_like(params[0], 1e-3))


def test_state_dict_round_trip_resumes_exactly():
    check_resume(lambda ps: build(CEREBRAS, two_groups(ps, {"lr": 0.02}, {"etas": (0.4, 1.3)})),
                 skip=lambda t, i: i == 0 and t == 6)

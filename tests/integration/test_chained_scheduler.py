"""torch's own combinators over optreg schedulers: ChainedScheduler multiplies the factors of every scheduler
in it, and SequentialLR hands over at its milestone. The reference is the same combinator over torch's classes
with the same closed forms (ExponentialLR, StepLR, LinearLR), on the same optreg optimizer."""

from __future__ import annotations

import pytest
import torch
from torch.optim.lr_scheduler import ChainedScheduler, ExponentialLR, LinearLR, SequentialLR, StepLR

import optreg
from harness import STEPS, batch, loss_fn, lr_of, make_model, snapshot


def run(optimizer, combine):
    model = make_model()
    opt = optreg.configure_optimizer(optimizer, model, lr=0.02)
    sched = combine(opt)
    lrs = []
    for step in range(STEPS):
        opt.zero_grad(set_to_none=True)
        loss_fn(model, *batch(step)).backward()
        opt.step()
        lrs.append(lr_of(opt))
        sched.step()
    return {"params": snapshot(model), "lrs": lrs}


def close_lrs(actual, expected):
    """Closed forms (optreg) and torch's recursive products agree to float64 rounding."""
    assert len(actual["lrs"]) == len(expected["lrs"])
    for i, (a, e) in enumerate(zip(actual["lrs"], expected["lrs"])):
        assert abs(a - e) <= 1e-12 * abs(e), f"step {i}: lr {a} vs {e} (all: {actual['lrs']} vs {expected['lrs']})"
    for a, e in zip(actual["params"], expected["params"]):
        torch.testing.assert_close(a, e, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("optimizer", ["oneflow.AdamW", "cerebras.Lamb"])
def test_chained_scheduler_over_optreg_schedulers_multiplies(optimizer):
    expected = run(optimizer, lambda o: ChainedScheduler([ExponentialLR(o, 0.9), StepLR(o, 2, 0.5)]))
    actual = run(optimizer, lambda o: ChainedScheduler([
        optreg.configure_lr_scheduler(o, {"name": "oneflow.ExponentialLR", "gamma": 0.9}),
        optreg.configure_lr_scheduler(o, {"name": "oneflow.StepLR", "step_size": 2, "gamma": 0.5})]))
    close_lrs(actual, expected)


@pytest.mark.parametrize("optimizer", ["oneflow.AdamW", "cerebras.Lamb"])
def test_torch_sequential_lr_over_optreg_schedulers(optimizer):
    expected = run(optimizer, lambda o: SequentialLR(o, [LinearLR(o, 0.25, 1.0, 2), ExponentialLR(o, 0.9)],
                                                     milestones=[2]))
    actual = run(optimizer, lambda o: SequentialLR(o, [
        optreg.configure_lr_scheduler(o, {"name": "oneflow.LinearLR", "start_factor": 0.25, "total_iters": 2}),
        optreg.configure_lr_scheduler(o, {"name": "oneflow.ExponentialLR", "gamma": 0.9})], milestones=[2]))
    close_lrs(actual, expected)

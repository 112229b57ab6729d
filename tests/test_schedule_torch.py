"""The torch closed forms against torch's own schedulers (torch 2.13), 1,000 steps side by side.

torch updates most schedulers recursively (lr_t = lr_{t-1}·ratio); the closed form is what that
recursion computes without the rounding it accumulates. The drift measured here is that rounding:
on torch 2.13 (CPU) at most 4.4e-14 relative over 1,000 steps (SequentialLR into CosineAnnealingLR),
1.1e-14 for CosineAnnealingLR, ~1e-15 for the other recursive forms, and exactly 0 for LambdaLR,
MultiplicativeLR, ConstantLR, MultiStepLR, CyclicLR and OneCycleLR.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from torch.optim import lr_scheduler as L

from optreg.config.expr import StepFunction
from optreg.dialects.torch import torch_forms as T
from optreg.schedules.adapter import ScheduleLR
from optreg.schedules.engine import Chained, Sequential

STEPS = 1000
LR = 0.1
LAM = StepFunction("1 / (1 + step / 100)")
MUL = StepFunction("0.997 if step % 5 else 1.002")

# (id, torch scheduler factory, engine schedule, relative tolerance)
PAIRS = [
    ("LambdaLR", lambda o: L.LambdaLR(o, LAM), T.LambdaLR(LAM), 0.0),
    ("MultiplicativeLR", lambda o: L.MultiplicativeLR(o, MUL), T.MultiplicativeLR(MUL), 0.0),
    ("StepLR", lambda o: L.StepLR(o, 70, 0.6), T.StepLR(70, 0.6), 1e-14),
    ("MultiStepLR", lambda o: L.MultiStepLR(o, [100, 100, 400], 0.5), T.MultiStepLR([100, 100, 400], 0.5), 1e-14),
    ("ConstantLR", lambda o: L.ConstantLR(o, 0.3, 250), T.ConstantLR(0.3, 250), 1e-14),
    ("LinearLR", lambda o: L.LinearLR(o, 0.05, 0.9, 400), T.LinearLR(0.05, 0.9, 400), 1e-13),
    ("ExponentialLR", lambda o: L.ExponentialLR(o, 0.996), T.ExponentialLR(0.996), 1e-12),
    ("PolynomialLR", lambda o: L.PolynomialLR(o, 700, 2.5), T.PolynomialLR(700, 2.5), 1e-12),
    ("CosineAnnealingLR", lambda o: L.CosineAnnealingLR(o, 300, 0.001), T.CosineAnnealingLR(300, 0.001), 1e-12),
    ("CosineAnnealingWarmRestarts", lambda o: L.CosineAnnealingWarmRestarts(o, 40, 2, 0.001),
     T.CosineAnnealingWarmRestarts(40, 2, 0.001), 1e-14),
    ("CyclicLR", lambda o: L.CyclicLR(o, 0.01, 0.1, 60, 40, "triangular2", cycle_momentum=False),
     T.CyclicLR(0.01, 0.1, 60, 40, "triangular2"), 1e-14),
    ("CyclicLR-exp", lambda o: L.CyclicLR(o, 0.01, 0.1, 50, mode="exp_range", gamma=0.999, cycle_momentum=False),
     T.CyclicLR(0.01, 0.1, 50, mode="exp_range", gamma=0.999), 1e-14),
    ("OneCycleLR", lambda o: L.OneCycleLR(o, 0.3, total_steps=STEPS + 1, cycle_momentum=False),
     T.OneCycleLR(0.3, total_steps=STEPS + 1), 1e-14),
    ("OneCycleLR-3", lambda o: L.OneCycleLR(o, 0.3, epochs=11, steps_per_epoch=100, three_phase=True,
                                            anneal_strategy="linear", cycle_momentum=False),
     T.OneCycleLR(0.3, epochs=11, steps_per_epoch=100, anneal_strategy="linear", three_phase=True), 1e-14),
    ("SequentialLR", lambda o: L.SequentialLR(o, [L.LinearLR(o, 0.1, 1.0, 50), L.CosineAnnealingLR(o, 400, 1e-3)],
                                              [50]),
     T.SequentialLR([T.LinearLR(0.1, 1.0, 50), T.CosineAnnealingLR(400, 1e-3)]), 1e-12),
    ("SequentialLR-3", lambda o: L.SequentialLR(o, [L.ConstantLR(o, 0.5, 100), L.ExponentialLR(o, 0.99),
                                                    L.StepLR(o, 30, 0.5)], [100, 300]),
     Sequential([T.ConstantLR(0.5, 100), T.ExponentialLR(0.99), T.StepLR(30, 0.5)], [100, 300]), 1e-12),
    ("ChainedScheduler", lambda o: L.ChainedScheduler([L.ConstantLR(o, 0.2, 150), L.ExponentialLR(o, 0.998)]),
     Chained([T.ConstantLR(0.2, 150), T.ExponentialLR(0.998)]), 1e-12),
]


def _optimizer():
    p = torch.nn.Parameter(torch.zeros(3))
    return torch.optim.SGD([p], lr=LR, momentum=0.9)


def run_pair(make_torch, schedule, steps=STEPS):
    opt_t, opt_e = _optimizer(), _optimizer()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched_t, sched_e = make_torch(opt_t), ScheduleLR(opt_e, schedule)
        got_t, got_e = [], []
        for _ in range(steps):
            got_t.append(opt_t.param_groups[0]["lr"])
            got_e.append(opt_e.param_groups[0]["lr"])
            opt_t.step()
            opt_e.step()
            sched_t.step()
            sched_e.step()
    return np.array(got_t, dtype=float), np.array(got_e, dtype=float)


@pytest.mark.parametrize("name,make_torch,schedule,rtol", PAIRS, ids=[p[0] for p in PAIRS])
def test_closed_form_matches_torch(name, make_torch, schedule, rtol):
    want, got = run_pair(make_torch, schedule)
    drift = np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300))
    assert np.ptp(want) > 0
    assert drift <= rtol, f"{name}: relative drift {drift:.3e}"


def test_torch_forms_cover_every_closed_form_torch_scheduler():
    torch_names = {n for n in dir(L) if isinstance(getattr(L, n), type) and issubclass(getattr(L, n), L.LRScheduler)
                   and not n.startswith("_") and n not in ("LRScheduler",)}
    without = {"ReduceLROnPlateau", "ParamwiseScheduler", "SWALR"}
    assert torch_names - without - set(T.TORCH_FORMS) == set()


def test_cosine_annealing_rises_again_after_t_max_like_torch():
    want, got = run_pair(lambda o: L.CosineAnnealingLR(o, 100), T.CosineAnnealingLR(100), steps=300)
    assert got[100] == pytest.approx(0, abs=1e-15) and got[200] == pytest.approx(LR)
    assert np.allclose(got, want, rtol=1e-12, atol=1e-15)


def test_one_cycle_refuses_to_step_past_total_steps_like_torch():
    schedule = T.OneCycleLR(0.1, total_steps=10)
    schedule(10)
    with pytest.raises(ValueError):
        schedule(11)


@pytest.mark.parametrize("spec,make_torch,schedule", [
    ({"name": "LinearLR", "start_factor": 0.5, "end_factor": 0.9, "total_iters": 0},
     lambda o: L.LinearLR(o, 0.5, 0.9, 0), T.LinearLR(0.5, 0.9, 0)),
    ({"name": "PolynomialLR", "total_iters": 0, "power": 2.0},
     lambda o: L.PolynomialLR(o, 0, 2.0), T.PolynomialLR(0, 2.0)),
    ({"name": "ConstantLR", "factor": 0.5, "total_iters": 0},
     lambda o: L.ConstantLR(o, 0.5, 0), T.TORCH_FORMS["ConstantLR"](0.5, 0)),
], ids=["LinearLR", "PolynomialLR", "ConstantLR"])
def test_total_iters_zero_is_built_with_torchs_lrs(spec, make_torch, schedule):
    """torch 2.13 accepts total_iters=0: LinearLR then holds base_lr·start_factor at every step (its recursion
    never reaches end_factor), ConstantLR base_lr·factor (never undone) and PolynomialLR base_lr (never decayed).
    configure_lr_scheduler builds it (it refused it, sampling step -1) and the closed form, which plot and
    `sequential` use, gives the same lrs."""
    import optreg

    want, closed = run_pair(make_torch, schedule, steps=20)
    held = LR * spec.get("start_factor", spec.get("factor", 1.0))
    assert want.tolist() == [held] * 20
    assert closed.tolist() == want.tolist()
    opt = optreg.configure_optimizer("sgd", [torch.nn.Parameter(torch.zeros(3))], lr=LR, momentum=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = optreg.configure_lr_scheduler(opt, spec)
        got = []
        for _ in range(20):
            got.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
    assert type(sched) is type(make_torch(_optimizer())) and got == want.tolist()

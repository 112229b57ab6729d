"""MindSpore 2.10's torch-style components: mindspore.experimental.optim (and its lr_scheduler) against
trajectories recorded from MindSpore 2.10 CPU (scripts/record_mindspore_experimental.py), and
mindspore.mint.optim, which MindSpore's CPU build cannot run, against torch's algorithms its source implements."""

from __future__ import annotations


import json
from pathlib import Path

import numpy as np
import pytest
import torch
from fixture_replay import load, make_tests, worst_param_error

import optreg

DOC, SCHED = load("mindspore_experimental")

# Where optreg and the real framework differ: case name -> what differs (measured on the fixtures).
XFAIL: dict[str, str] = {}

(test_optimizer_matches_recording, test_scheduler_matches_recording, test_every_optimizer_row_is_recorded,
 test_every_scheduler_row_is_recorded, test_recordings_are_float32_and_deterministic) = make_tests(
    "mindspore_experimental", DOC, SCHED, XFAIL)

SHAPES = {n: tuple(s) for n, s in DOC["shapes"].items()}


def _case(name):
    return next(c for c in DOC["cases"] if c["name"] == name)


@pytest.mark.parametrize("name", ["adam_small_grads", "adam_l2_amsgrad_maximize"])
def test_experimental_adam_is_not_torchs(name):
    """The recordings tell ApplyAdam's eps-hat form (amsgrad ignored) from torch's Adam: replayed through
    torch.optim.Adam, the weights are off by 3e-4 (gradients of 1e-3) and 2e-3 (amsgrad, eps 1e-3) of their
    size; through optreg's row by 4e-7."""
    case = _case(name)
    err, _, _ = worst_param_error({**case, "optimizer": "torch.Adam"}, SHAPES)
    assert err > 1e-4
    assert worst_param_error(case, SHAPES)[0] <= 1e-6


def test_chained_scheduler_is_absent_from_mindspore_2_10():
    """MindSpore 2.10's experimental lr_scheduler has no ChainedScheduler (AttributeError, recorded)."""
    case = next(c for c in SCHED["cases"] if c["name"] == "chained")
    assert "has no attribute 'ChainedScheduler'" in case["refused"]


def adam_reference(w, grads, lr, betas, eps, wd, decoupled):
    """torch's (and mint's) Adam / AdamW in float64: m̂/(√v̂ + eps), bc = 1 - βᵗ; L2 decay g += wd·w, or
    decoupled w -= lr·wd·w before the step."""
    m = v = np.zeros_like(w)
    out = []
    for t, g in enumerate(grads, 1):
        if decoupled:
            w = w * (1 - lr * wd)
        else:
            g = g + wd * w
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        w = w - lr * (m / (1 - betas[0] ** t)) / (np.sqrt(v / (1 - betas[1] ** t)) + eps)
        out.append(w)
    return out


@pytest.mark.parametrize("name, decoupled", [("Adam", False), ("AdamW", True), ("FusedAdamW", True)])
def test_mint_adams_follow_their_documented_formula(name, decoupled):
    rng = np.random.default_rng(7)
    w0 = rng.standard_normal(6)
    grads = [rng.standard_normal(6) for _ in range(6)]
    p = torch.nn.Parameter(torch.tensor(w0))
    opt = optreg.configure_optimizer(f"mindspore.mint.optim.{name}", [p], lr=0.05, weight_decay=0.1)
    want = adam_reference(w0, grads, 0.05, (0.9, 0.999), 1e-8, 0.1, decoupled)
    for g, w in zip(grads, want):
        p.grad = torch.tensor(g)
        opt.step()
        np.testing.assert_allclose(p.detach().numpy(), w, rtol=1e-12, atol=1e-14)


def test_mint_defaults_are_mindspore_s():
    p = [torch.nn.Parameter(torch.zeros(2))]
    assert optreg.configure_optimizer("mindspore.mint.optim.AdamW", p).defaults["weight_decay"] == 1e-2
    assert optreg.configure_optimizer("mindspore.mint.optim.FusedAdamW", p).defaults["weight_decay"] == 1e-2
    assert optreg.configure_optimizer("mindspore.mint.optim.Adam", p).defaults["weight_decay"] == 0.0


def test_names_keep_nn_adam_apart_from_the_experimental_one():
    model = torch.nn.Linear(3, 2)
    from optreg.dialects.mindspore.adam import Adam as NnAdam
    from optreg.dialects.mindspore.experimental_adam import ExperimentalAdam

    assert type(optreg.configure_optimizer("mindspore.Adam", model)) is NnAdam
    assert type(optreg.configure_optimizer("mindspore.experimental.optim.Adam", model)) is ExperimentalAdam
    assert type(optreg.configure_optimizer("mindspore_experimental.Adam", model)) is ExperimentalAdam
    assert type(optreg.configure_optimizer("mindspore.mint.optim.Adam", model)) is torch.optim.Adam
    built = optreg.build("optimizer: {name: mindspore.experimental.optim.AdamW, lr: 0.1}\n"
                         "scheduler: {name: mindspore.experimental.optim.lr_scheduler.StepLR, step_size: 3}\n", model)
    assert type(built.optimizer) is torch.optim.AdamW and type(built.scheduler) is torch.optim.lr_scheduler.StepLR


def test_experimental_cyclic_lr_cycles_no_momentum():
    opt = optreg.configure_optimizer("mindspore.experimental.optim.SGD", [torch.nn.Parameter(torch.zeros(2))],
                                     lr=0.1)
    sched = optreg.configure_lr_scheduler(opt, {"name": "mindspore_experimental.CyclicLR", "base_lr": 0.01,
                                                "max_lr": 0.1})
    assert sched.cycle_momentum is False
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_lr_scheduler(opt, {"name": "mindspore_experimental.CyclicLR", "base_lr": 0.01,
                                            "max_lr": 0.1, "cycle_momentum": True})
    assert info.value.errors[0].path == "cycle_momentum"


# --- mindspore.nn ASGD, Rprop, AdaMax, Adadelta: recorded from MindSpore 2.10 CPU ----------------------------
NN = json.loads((Path(__file__).parent / "fixtures" / "mindspore" / "optimizers.json").read_text())


@pytest.mark.parametrize("case", NN["cases"], ids=[c["name"] for c in NN["cases"]])
def test_nn_optimizer_matches_recording(case):
    """The recorded gradients are the loss-scaled ones where the case sets loss_scale (grad_scale)."""
    err, step, name = worst_param_error(case, {n: tuple(s) for n, s in NN["shapes"].items()})
    assert err <= 1e-5, f"{case['name']}: relative error {err:.3g} at step {step} ({name})"


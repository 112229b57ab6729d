"""SGD / Momentum of the OneFlow, Cerebras and MindSpore dialects against their numpy references and torch.

The first part of this file is the trajectory harness shared by the test_opt_* files of the SGD,
RMSProp, Adagrad, Adadelta, ASGD and Rprop families (they import it as `from test_opt_sgd import ...`).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import io
import json
import sys
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
import torch

from optreg.core.entry import Entry
from optreg.reference import sgd as ref

# ---------------------------------------------------------------------------------------------
# harness: three float64 tensors in two groups, gradients that depend on the parameter
# ---------------------------------------------------------------------------------------------

SHAPES = ((4, 3), (3,), (2, 5))
GROUP = (0, 0, 1)  # parameter i belongs to group GROUP[i]
STEPS = 25


def never(t: int, i: int) -> bool:
    return False


def initial() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s) for s in SHAPES]


def gradient(t: int, i: int, w: np.ndarray) -> np.ndarray:
    """The gradient of parameter i at step t: a quadratic pull plus fixed noise (float64)."""
    noise = np.random.default_rng(1000 * t + i).standard_normal(w.shape)
    return 0.5 * w + noise


def torch_params() -> list[torch.Tensor]:
    return [torch.tensor(w, requires_grad=True) for w in initial()]


def two_groups(params: list[torch.Tensor], g0: dict[str, Any], g1: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"params": params[:2], **g0}, {"params": params[2:], **g1}]


def drive(opt: torch.optim.Optimizer, params: list[torch.Tensor], stop: int, start: int = 1,
          skip: Callable[[int, int], bool] = never) -> list[np.ndarray]:
    """Steps start..stop; parameter i gets no gradient at the steps where skip(t, i)."""
    for t in range(start, stop + 1):
        for i, p in enumerate(params):
            p.grad = None if skip(t, i) else torch.from_numpy(gradient(t, i, p.detach().numpy()))
        opt.step()
    return [p.detach().numpy().copy() for p in params]


def lr_at(lr: Any, t: int) -> float:
    """A per-step lr list gives entry t-1 (MindSpore's dynamic lr); a number is itself."""
    return lr[t - 1] if isinstance(lr, (list, tuple)) else lr


def reference(fn: Callable[..., np.ndarray], hps: tuple[dict[str, Any], dict[str, Any]], steps: int = STEPS,
              skip: Callable[[int, int], bool] = never, clock: str | None = None) -> list[np.ndarray]:
    """The numpy trajectory: fn(w, g, state, [t,] **hp) per parameter and step, with the group's hp.

    clock None: fn takes no step; "global": the optimizer-wide step; "own": the parameter's own step count.
    """
    ws, states, counts = initial(), [{} for _ in SHAPES], [0] * len(SHAPES)
    for t in range(1, steps + 1):
        for i in range(len(ws)):
            if skip(t, i):
                continue
            counts[i] += 1
            hp = dict(hps[GROUP[i]])
            hp["lr"] = lr_at(hp["lr"], t)
            args = () if clock is None else (t if clock == "global" else counts[i],)
            ws[i] = fn(ws[i], gradient(t, i, ws[i]), states[i], *args, **hp)
    return ws


def max_err(a: list[np.ndarray], b: list[np.ndarray]) -> float:
    return max(float(np.max(np.abs(x - y))) for x, y in zip(a, b))


def row(table: str, dialect: str, name: str) -> Entry:
    """The registry entry `dialect.name` (`table`: the family table it was written in; the registry holds
    the rows that moved to their dialect packages as well as the remaining legacy tables)."""
    from optreg.core.entry import OPTIMIZER
    from optreg.core.registry import REGISTRY

    return REGISTRY.lookup(OPTIMIZER, name, dialect)


def build(entry: Entry, groups: Any, **options: Any) -> torch.optim.Optimizer:
    """The row's implementation with the row's defaults, dialect option names mapped and knobs set
    (no validation, no bind)."""
    options = {**{k: v for k, v in entry.defaults.items() if v is not inspect.Parameter.empty}, **options}
    return entry.resolve()(groups, **{entry.target_name(k): v for k, v in options.items()}, **entry.fixed)


def check_resume(make: Callable[[list[torch.Tensor]], torch.optim.Optimizer], steps: int = 12, split: int = 5,
                 skip: Callable[[int, int], bool] = never) -> None:
    """Stopping after `split` steps, saving, loading into a fresh optimizer and going on is bitwise exact."""
    a = torch_params()
    straight = drive(make(a), a, steps, skip=skip)
    b = torch_params()
    first = make(b)
    drive(first, b, split, skip=skip)
    buffer = io.BytesIO()
    torch.save(first.state_dict(), buffer)
    buffer.seek(0)
    c = [torch.tensor(p.detach().numpy().copy(), requires_grad=True) for p in b]
    second = make(c)
    second.load_state_dict(torch.load(buffer))
    resumed = drive(second, c, steps, start=split + 1, skip=skip)
    for x, y in zip(straight, resumed):
        np.testing.assert_array_equal(x, y)
    first_again = make(a := torch_params())
    drive(first_again, a, steps, skip=skip)
    assert_same_state(first_again, second)


def assert_same_state(o1: torch.optim.Optimizer, o2: torch.optim.Optimizer) -> None:
    s1, s2 = o1.state_dict()["state"], o2.state_dict()["state"]
    assert s1.keys() == s2.keys()
    for k in s1:
        assert s1[k].keys() == s2[k].keys()
        for name in s1[k]:
            x, y = s1[k][name], s2[k][name]
            if isinstance(x, torch.Tensor):
                assert torch.equal(x, y), name
            else:
                assert x == y, name


# ---------------------------------------------------------------------------------------------
# SGD with torch's knobs
# ---------------------------------------------------------------------------------------------

from optreg.core.types import OptionalBool  # noqa: E402
from optreg.stages.apply import ApplyLR  # noqa: E402
from optreg.stages.chain import Chain  # noqa: E402
from optreg.stages.gradient import CoupledDecay, Maximize  # noqa: E402
from optreg.stages.optimizer import ChainOptimizer  # noqa: E402
from optreg.stages.sgd import Momentum  # noqa: E402


class SGD(ChainOptimizer):
    """torch.optim.SGD from the shared stages (the buffer starts at the first gradient, as MindSpore's SGD
    does): checks the stages against torch itself."""

    chain = Chain(Maximize(), CoupledDecay(), Momentum(start="grad"), ApplyLR())
    supports_sparse = True

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                 maximize=False, *, foreach: OptionalBool = None, fused: OptionalBool = None):
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize), foreach=foreach, fused=fused)


TORCH_CASES = {
    "plain": ({"lr": 0.1}, {"lr": 0.05}),
    "momentum_dampening_decay": ({"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01},
                                 {"lr": 0.02, "momentum": 0.5, "weight_decay": 0.1}),
    "nesterov_maximize": ({"lr": 0.01, "momentum": 0.9, "nesterov": True, "maximize": True},
                          {"lr": 0.02, "maximize": True, "weight_decay": 0.1}),
}


@pytest.mark.parametrize("case", TORCH_CASES)
def test_default_knobs_follow_torch_reference_and_torch(case):
    g0, g1 = TORCH_CASES[case]
    ours = torch_params()
    got = drive(SGD(two_groups(ours, g0, g1)), ours, STEPS)
    assert max_err(got, reference(ref.torch_sgd, (g0, g1))) < 1e-12
    theirs = torch_params()
    expected = drive(torch.optim.SGD(two_groups(theirs, g0, g1)), theirs, STEPS)
    assert max_err(got, expected) == 0.0


def test_params_without_gradient_are_skipped_and_grad_untouched():
    params = torch_params()
    opt = SGD(two_groups(params, {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1}, {"lr": 0.1}))
    got = drive(opt, params, STEPS, skip=lambda t, i: i == 1 and t % 3 == 0)
    expected = reference(ref.torch_sgd, ({"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1}, {"lr": 0.1}),
                         skip=lambda t, i: i == 1 and t % 3 == 0)
    assert max_err(got, expected) < 1e-12
    g = params[0].grad.clone()
    opt.step()
    assert torch.equal(params[0].grad, g)


def test_sparse_gradient_is_applied_as_its_dense_equivalent():
    dense, sparse = torch.nn.Parameter(torch.ones(5, 2)), torch.nn.Parameter(torch.ones(5, 2))
    o1 = SGD([dense], lr=0.1, momentum=0.9, weight_decay=0.1)
    o2 = SGD([sparse], lr=0.1, momentum=0.9, weight_decay=0.1)
    for step in range(3):
        g = torch.sparse_coo_tensor(torch.tensor([[step, 3]]), torch.tensor([[1.0, 2.0], [3.0, -4.0]]), (5, 2),
                                    check_invariants=True)
        sparse.grad, dense.grad = g, g.to_dense()
        o1.step()
        o2.step()
    assert torch.equal(dense, sparse)


# ---------------------------------------------------------------------------------------------
# OneFlow SGD
# ---------------------------------------------------------------------------------------------

ONEFLOW = row("sgd_family", "oneflow", "SGD")
ONEFLOW_CASES = {
    "damped_first_step": ({"lr": 0.05, "momentum": 0.9, "dampening": 0.5, "weight_decay": 0.01},
                          {"lr": 0.1, "momentum": 0.0, "weight_decay": 0.1}),
    "nesterov": ({"lr": 0.02, "momentum": 0.9, "nesterov": True}, {"lr": 0.05, "momentum": 0.8, "dampening": 0.2}),
    "maximize_flips_update": ({"lr": 0.01, "momentum": 0.9, "weight_decay": 0.1, "maximize": True},
                              {"lr": 0.02, "momentum": 0.5, "maximize": True, "nesterov": True}),
}


@pytest.mark.parametrize("case", ONEFLOW_CASES)
def test_oneflow_sgd_follows_its_reference(case):
    g0, g1 = ONEFLOW_CASES[case]
    params = torch_params()
    got = drive(build(ONEFLOW, two_groups(params, g0, g1)), params, STEPS)
    assert max_err(got, reference(ref.oneflow_sgd, (g0, g1))) < 1e-12


def test_oneflow_first_step_differs_from_torch_only_with_dampening():
    def first(dialect_row, dampening):
        p = torch.ones(3, requires_grad=True)
        opt = build(dialect_row, [p], lr=1.0, momentum=0.9, dampening=dampening) if dialect_row else \
            torch.optim.SGD([p], lr=1.0, momentum=0.9, dampening=dampening)
        p.grad = torch.full((3,), 2.0)
        opt.step()
        return p.detach()

    assert torch.equal(first(ONEFLOW, 0.0), first(None, 0.0))
    assert torch.allclose(first(ONEFLOW, 0.5), torch.full((3,), 1.0 - 0.5 * 2.0))
    assert torch.allclose(first(None, 0.5), torch.full((3,), 1.0 - 2.0))


def test_oneflow_maximize_without_momentum_is_ignored_with_a_warning():
    params = torch_params()
    with pytest.warns(UserWarning, match="momentum > 0"):
        opt = build(ONEFLOW, two_groups(params, {"lr": 0.1, "maximize": True}, {"lr": 0.1}))
    got = drive(opt, params, STEPS)
    assert max_err(got, reference(ref.oneflow_sgd, ({"lr": 0.1}, {"lr": 0.1}))) < 1e-12


def test_oneflow_sgd_equals_torch_without_dampening_and_maximize():
    g0, g1 = {"lr": 0.05, "momentum": 0.9, "weight_decay": 0.01, "nesterov": True}, {"lr": 0.1}
    a, b = torch_params(), torch_params()
    got = drive(build(ONEFLOW, two_groups(a, g0, g1)), a, STEPS)
    assert max_err(got, drive(torch.optim.SGD(two_groups(b, g0, g1)), b, STEPS)) == 0.0


# ---------------------------------------------------------------------------------------------
# Cerebras SGD
# ---------------------------------------------------------------------------------------------

CEREBRAS = row("sgd_family", "cerebras", "SGD")
CEREBRAS_CASES = {
    "damped_first_step": ({"lr": 0.05, "momentum": 0.9, "dampening": 0.5, "weight_decay": 0.01},
                          {"lr": 0.1, "momentum": 0.0, "weight_decay": 0.1}),
    "nesterov_maximize": ({"lr": 0.02, "momentum": 0.9, "nesterov": True, "maximize": True},
                          {"lr": 0.05, "momentum": 0.8, "dampening": 0.2, "maximize": True, "weight_decay": 0.1}),
}


@pytest.mark.parametrize("case", CEREBRAS_CASES)
def test_cerebras_sgd_follows_its_reference(case):
    g0, g1 = CEREBRAS_CASES[case]
    params = torch_params()
    got = drive(build(CEREBRAS, two_groups(params, g0, g1), lr=0.1), params, STEPS)
    assert max_err(got, reference(ref.cerebras_sgd, (g0, g1))) < 1e-12


def test_cerebras_sgd_equals_torch_without_dampening():
    g0, g1 = {"lr": 0.05, "momentum": 0.9, "weight_decay": 0.01, "maximize": True}, {"lr": 0.1, "momentum": 0.5}
    a, b = torch_params(), torch_params()
    got = drive(build(CEREBRAS, two_groups(a, g0, g1), lr=0.1), a, STEPS)
    assert max_err(got, drive(torch.optim.SGD(two_groups(b, g0, g1)), b, STEPS)) == 0.0


def test_cerebras_sgd_preinitializes_its_momentum_buffer():
    params = torch_params()
    opt = build(CEREBRAS, two_groups(params, {"lr": 0.1, "momentum": 0.9}, {"lr": 0.1, "momentum": 0.0}), lr=0.1)
    assert [sorted(opt.state[p]) for p in params] == [["momentum_buffer"], ["momentum_buffer"], []]
    assert opt.state_names_to_sparsify() == ["momentum_buffer"]


# ---------------------------------------------------------------------------------------------
# MindSpore Momentum and SGD
# ---------------------------------------------------------------------------------------------

MOMENTUM = row("sgd_family", "mindspore", "Momentum")
MS_SGD = row("sgd_family", "mindspore", "SGD")


@pytest.mark.parametrize("nesterov", [False, True])
def test_mindspore_momentum_follows_its_reference_with_loss_scale_decay_and_dynamic_lr(nesterov):
    lrs = [0.05 * 0.9 ** k for k in range(STEPS)]
    g0, g1 = {"lr": lrs, "weight_decay": 0.01}, {"lr": 0.02, "weight_decay": 0.0}
    params = torch_params()
    opt = build(MOMENTUM, two_groups(params, g0, g1), learning_rate=0.1, momentum=0.9, use_nesterov=nesterov,
                loss_scale=8.0)
    got = drive(opt, params, STEPS)
    hps = tuple({**g, "momentum": 0.9, "use_nesterov": nesterov, "loss_scale": 8.0} for g in (g0, g1))
    assert max_err(got, reference(ref.mindspore_momentum, hps)) < 1e-12


def test_mindspore_momentum_equals_torch_sgd():
    a, b = torch_params(), torch_params()
    g0, g1 = {"lr": 0.05, "weight_decay": 0.01}, {"lr": 0.02}
    got = drive(build(MOMENTUM, two_groups(a, g0, g1), learning_rate=0.1, momentum=0.9, use_nesterov=True), a, STEPS)
    expected = drive(torch.optim.SGD(two_groups(b, g0, g1), momentum=0.9, nesterov=True), b, STEPS)
    assert max_err(got, expected) == 0.0


MS_SGD_CASES = {  # (group lrs, the constructor's momentum options)
    "dampening": (({"lr": 0.05}, {"lr": 0.02}), {"momentum": 0.9, "dampening": 0.3}),
    "nesterov": (({"lr": 0.05}, {"lr": 0.02}), {"momentum": 0.9, "nesterov": True}),
    "no_momentum": (({"lr": 0.1}, {"lr": 0.03}), {}),
}


@pytest.mark.parametrize("case", MS_SGD_CASES)
def test_mindspore_sgd_follows_its_reference(case):
    (g0, g1), kw = MS_SGD_CASES[case]
    params = torch_params()
    opt = build(MS_SGD, two_groups(params, g0, g1), weight_decay=0.05, loss_scale=4.0, **kw)
    got = drive(opt, params, STEPS)
    hps = tuple({**g, **kw, "weight_decay": 0.05, "loss_scale": 4.0} for g in (g0, g1))
    assert max_err(got, reference(ref.mindspore_sgd, hps)) < 1e-12
    b = torch_params()
    expected = drive(torch.optim.SGD(two_groups(b, g0, g1), weight_decay=0.05, **kw), b, STEPS)
    assert max_err(drive(build(MS_SGD, two_groups(p := torch_params(), g0, g1), weight_decay=0.05, **kw), p, STEPS),
                   expected) == 0.0


# ---------------------------------------------------------------------------------------------
# state dict round trip and exact resume, every row
# ---------------------------------------------------------------------------------------------

RESUME = {
    "oneflow.SGD": lambda ps: build(ONEFLOW, two_groups(ps, {"lr": 0.05, "momentum": 0.9, "dampening": 0.2},
                                                         {"lr": 0.1, "maximize": False})),
    "cerebras.SGD": lambda ps: build(CEREBRAS, two_groups(ps, {"lr": 0.05, "momentum": 0.9, "nesterov": True},
                                                           {"lr": 0.1}), lr=0.1),
    "mindspore.Momentum": lambda ps: build(MOMENTUM, two_groups(ps, {"lr": [0.1 / k for k in range(1, 13)]}, {}),
                                           learning_rate=0.03, momentum=0.9, weight_decay=0.01, loss_scale=2.0),
    "mindspore.SGD": lambda ps: build(MS_SGD, two_groups(ps, {}, {"lr": 0.2}), momentum=0.8, dampening=0.1,
                                      weight_decay=0.01),
}


@pytest.mark.parametrize("name", RESUME)
def test_state_dict_round_trip_resumes_exactly(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_resume(RESUME[name], skip=lambda t, i: i == 2 and t == 3)


# ---------------------------------------------------------------------------------------------
# MindSpore group semantics through the registry (the rows' bind hooks)
# ---------------------------------------------------------------------------------------------


class Norm(torch.nn.Module):
    """Parameters named like a normalisation layer's: MindSpore does not decay 'gamma'/'beta' ones."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(2, 3))
        self.gamma = torch.nn.Parameter(torch.ones(3))
        self.beta = torch.nn.Parameter(torch.ones(3))


def decayed_once(name: str, **options: Any) -> dict[str, float]:
    """One step with zero gradients: what weight decay alone does to each parameter (value after the step)."""
    import optreg

    model = Norm()
    opt = optreg.configure_optimizer(name, model, **options)
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    opt.step()
    return {n: float(p.detach().flatten()[0]) for n, p in model.named_parameters()}


def test_mindspore_momentum_decays_only_parameters_without_beta_or_gamma():
    after = decayed_once("mindspore.Momentum", learning_rate=0.1, momentum=0.9, weight_decay=0.5)
    assert after == {"weight": pytest.approx(1 - 0.1 * 0.5), "gamma": 1.0, "beta": 1.0}


def test_mindspore_sgd_decays_as_mindspore_2_does():
    """Per parameter (beta/gamma rule without groups, the group's value with groups), as MindSpore 2.x."""
    assert decayed_once("mindspore.SGD", learning_rate=0.1, weight_decay=0.5) == {
        "weight": pytest.approx(1 - 0.1 * 0.5), "gamma": 1.0, "beta": 1.0}
    import optreg

    model = Norm()
    opt = optreg.configure_optimizer("mindspore.SGD", [{"params": [model.weight], "weight_decay": 0.2},
                                                       {"params": [model.gamma, model.beta]}],
                                     learning_rate=0.1, weight_decay=0.5)
    assert [g["weight_decay"] for g in opt.param_groups] == [0.2, 0.5]


# ---------------------------------------------------------------------------------------------
# MindSpore's own trajectories (tests/fixtures/mindspore, recorded from MindSpore 2.10's CPU build)
# ---------------------------------------------------------------------------------------------

FIXTURES = Path(__file__).parent / "fixtures" / "mindspore"


def mindspore_case(name: str) -> dict[str, Any]:
    doc = json.loads((FIXTURES / "cases.json").read_text())
    return {**next(c for c in doc["cases"] if c["name"] == name), "steps": doc["steps"]}


def replay(name: str, make: Callable[[list[tuple[str, torch.Tensor]], dict[str, Any]], Any] | None = None,
           **override: Any) -> tuple[float, float]:
    """Replay a recorded case's gradients through our optimizer (float32, MindSpore's parameter names);
    returns (largest |ours - recorded|, largest |recorded - initial|) over every step."""
    import optreg

    case, arrays = mindspore_case(name), np.load(FIXTURES / "trajectories.npz")
    params = {n: torch.nn.Parameter(torch.from_numpy(arrays[f"{name}/init/{n}"].copy())) for n in case["order"]}
    options = {**case["kwargs"], **override}
    named = list(params.items())
    opt = make(named, options) if make else optreg.configure_optimizer(f"mindspore.{case['optimizer']}", named,
                                                                        **options)
    worst = moved = 0.0
    for k in range(case["steps"]):
        for n, p in params.items():
            p.grad = torch.from_numpy(arrays[f"{name}/grads/{n}"][k].copy())
        opt.step()
        for n, p in params.items():
            recorded = arrays[f"{name}/weights/{n}"][k]
            worst = max(worst, float(np.abs(p.detach().numpy() - recorded).max()))
            moved = max(moved, float(np.abs(recorded - arrays[f"{name}/init/{n}"]).max()))
    return worst, moved


FLOAT32_TOLERANCE = 2e-6  # MindSpore and we both run float32; the weights move by ~0.1 to 1 in these cases


@pytest.mark.parametrize("name", ["momentum", "sgd", "sgd_nesterov"])
def test_mindspore_momentum_and_sgd_match_mindspore(name):
    worst, moved = replay(name)
    assert worst < FLOAT32_TOLERANCE and moved > 0.05


def test_mindspore_cpu_momentum_kernel_ignores_use_nesterov():
    """Documented: w -= lr·(g + u·v). MindSpore 2.10's CPU kernel gives plain momentum; we keep the docs."""
    worst, moved = replay("momentum_nesterov")
    assert worst > 0.01  # ours follows the documented Nesterov formula (test_mindspore_momentum_... above)
    assert replay("momentum_nesterov", use_nesterov=False)[0] < FLOAT32_TOLERANCE

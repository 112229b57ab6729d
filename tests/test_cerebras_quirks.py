"""Cerebras behaviours reproduced as cerebras.pytorch 2.10 has them: Adam ignores a param group's own weight_decay
(AdamW does not), SequentialLR runs each stage from its milestone on its own step whatever the stages' lengths and
values, and the float32 scalars of Cerebras and OneFlow are documented where describe() shows them."""

from __future__ import annotations

import io
import math
import warnings

import pytest
import torch

from torch_cases import group_lrs

import optreg
from optreg import ConfigError
from optreg.cli import main
from optreg.dialects.cerebras import schedules as C
from optreg.dialects.cerebras.entries import FLOAT64 as CEREBRAS_FLOAT64
from optreg.dialects.oneflow.entries import FLOAT64 as ONEFLOW_FLOAT64

EXECUTIONS = [{}, {"foreach": True}, {"fused": True}]
EXEC_IDS = ["eager", "foreach", "fused"]


# ---------------------------------------------------------------------------------------------------
# Adam / AdamW and a param group's own weight_decay
# ---------------------------------------------------------------------------------------------------
def _params() -> list[torch.nn.Parameter]:
    g = torch.Generator().manual_seed(0)
    return [torch.nn.Parameter(torch.randn(4, 3, generator=g)), torch.nn.Parameter(torch.randn(5, generator=g))]


def _drive(opts: list[torch.optim.Optimizer], params: list[torch.Tensor], steps: int, start: int = 0) -> None:
    for t in range(start, start + steps):
        for i, p in enumerate(params):
            g = torch.Generator().manual_seed(100 * t + i)
            p.grad = 0.5 * p.detach() + torch.randn(p.shape, generator=g)
        for opt in opts:
            opt.step()


def _adam(name: str, groups, execution: dict, **options):
    return optreg.configure_optimizer(name, groups, dialect="cerebras", lr=0.05, **options, **execution)


@pytest.mark.parametrize("execution", EXECUTIONS, ids=EXEC_IDS)
def test_cerebras_adam_decays_every_group_with_the_constructors_weight_decay(execution):
    grouped = _params()
    with pytest.warns(UserWarning) as record:
        opt = _adam("Adam", [{"params": [grouped[0]], "weight_decay": 0.5}, {"params": [grouped[1]]}], execution,
                    weight_decay=0.1)
    assert [str(w.message) for w in record] == [
        "cerebras.Adam ignores param group 0's own weight_decay (0.5) and decays it with the constructor's "
        "weight_decay (0.1), as cerebras.pytorch 2.10 does (cerebras.AdamW applies a group's own weight_decay)"]
    assert [g["weight_decay"] for g in opt.param_groups] == [0.1, 0.1]
    _drive([opt], grouped, 6)
    separate = _params()
    _drive([_adam("Adam", [separate[0]], execution, weight_decay=0.1),
            _adam("Adam", [separate[1]], execution, weight_decay=0.1)], separate, 6)
    for a, b in zip(grouped, separate):
        assert torch.equal(a, b)
    own = _params()[:1]
    _drive([_adam("Adam", own, execution, weight_decay=0.5)], own, 6)
    assert not torch.allclose(own[0], grouped[0])    # the group's own value would have changed the result


def test_cerebras_adam_warns_only_for_a_different_weight_decay():
    p = _params()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _adam("Adam", [{"params": [p[0]], "weight_decay": 0.1}, {"params": [p[1]]}], {}, weight_decay=0.1)
        _adam("Adam", [{"params": [p[0]], "weight_decay": 0}, {"params": [p[1]]}], {})
        _adam("AdamW", [{"params": [p[0]], "weight_decay": 0.5}, {"params": [p[1]]}], {}, weight_decay=0.1)
    opt = _adam("Adam", [p[0]], {}, weight_decay=0.1)
    with pytest.warns(UserWarning, match=r"ignores param group 1's own weight_decay \(0.0\)"):
        opt.add_param_group({"params": [p[1]], "weight_decay": 0.0})
    assert opt.param_groups[1]["weight_decay"] == 0.1


@pytest.mark.parametrize("execution", EXECUTIONS, ids=EXEC_IDS)
def test_cerebras_adam_state_dict_round_trip_keeps_the_constructors_weight_decay(execution):
    def make(params):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return _adam("Adam", [{"params": [params[0]], "weight_decay": 0.0}, {"params": [params[1]]}], execution,
                         weight_decay=0.2)

    straight = _params()
    _drive([make(straight)], straight, 8)
    first_half = _params()
    first = make(first_half)
    _drive([first], first_half, 4)
    buffer = io.BytesIO()
    torch.save(first.state_dict(), buffer)
    buffer.seek(0)
    saved = torch.load(buffer, weights_only=True)
    assert [g["weight_decay"] for g in saved["param_groups"]] == [0.2, 0.2]
    resumed = [torch.nn.Parameter(p.detach().clone()) for p in first_half]
    second = make(resumed)
    second.load_state_dict(saved)
    _drive([second], resumed, 4, start=4)
    for a, b in zip(straight, resumed):
        assert torch.equal(a, b)


@pytest.mark.parametrize("execution", EXECUTIONS, ids=EXEC_IDS)
def test_cerebras_adamw_applies_a_groups_own_weight_decay(execution):
    grouped = _params()
    opt = _adam("AdamW", [{"params": [grouped[0]], "weight_decay": 0.5}, {"params": [grouped[1]]}], execution,
                weight_decay=0.1)
    assert [g["weight_decay"] for g in opt.param_groups] == [0.5, 0.1]
    _drive([opt], grouped, 6)
    separate = _params()
    _drive([_adam("AdamW", [separate[0]], execution, weight_decay=0.5),
            _adam("AdamW", [separate[1]], execution, weight_decay=0.1)], separate, 6)
    for a, b in zip(grouped, separate):
        assert torch.equal(a, b)


def test_the_weight_decay_behaviours_are_in_the_notes(capsys):
    adam = "\n".join(optreg.describe("Adam", dialect="cerebras").notes)
    assert "A param group's own weight_decay is ignored: every group decays with the constructor's weight_decay" \
        in adam
    assert main(["show", "AdamW", "--dialect", "cerebras"]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "weight_decay and correct_bias are read per param group, as Cerebras' AdamBase.step does (a group's own " \
           "weight_decay applies, unlike cerebras.Adam)." in out


# ---------------------------------------------------------------------------------------------------
# float64: Cerebras and OneFlow keep their scalars in float32, optreg in the parameter's precision
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dialect, note", [("cerebras", CEREBRAS_FLOAT64), ("oneflow", ONEFLOW_FLOAT64)])
def test_every_optimizer_of_the_dialect_shows_the_float64_note_once(dialect, note):
    shown = "\n".join(optreg.describe("AdamW", dialect=dialect).notes)
    assert "float64 parameters" in shown and "float32" in shown   # a row's own notes, as describe() shows them
    names = optreg.list_optimizers(dialect=dialect)
    assert len(names) >= 6
    for name in names:
        notes = optreg.describe(name, dialect=dialect).notes
        if (dialect, name) == ("oneflow", "LBFGS"):   # Python tensor code in OneFlow: the parameter's precision
            assert note not in notes and any("float64 parameters are computed in float64" in n for n in notes)
            continue
        assert notes.count(note) == 1, name


def test_float64_parameters_are_updated_in_float64():
    p64 = [torch.nn.Parameter(p.detach().double()) for p in _params()]
    p32 = [torch.nn.Parameter(p.detach().float()) for p in _params()]
    opt64 = optreg.configure_optimizer("Adam", p64, dialect="cerebras", lr=0.05)
    opt32 = optreg.configure_optimizer("Adam", p32, dialect="cerebras", lr=0.05)
    assert opt64.state[p64[0]]["beta1_power"].dtype == torch.float64
    assert opt64.state[p64[0]]["step"].dtype == torch.float32
    _drive([opt64], p64, 5)
    _drive([opt32], p32, 5)
    assert all(p.dtype == torch.float64 for p in p64)
    diff = max(float((a - b.double()).detach().abs().max()) for a, b in zip(p64, p32))
    assert 0 < diff < 1e-5     # float64 arithmetic, not float32 rounded up


# ---------------------------------------------------------------------------------------------------
# SequentialLR: each stage from its milestone on its own step; jumps and any milestones
# ---------------------------------------------------------------------------------------------------
def linear(i, e, n):
    return lambda s: e if s >= n else i + (e - i) * s / n


def constant(v):
    return lambda s: v


def cosine_decay(i, e, n):
    return lambda s: e + (i - e) * 0.5 * (1 + math.cos(math.pi * min(s, n) / n))


def cosine_annealing(i, t_max, eta=0.0):
    return lambda s: eta + (i - eta) * 0.5 * (1 + math.cos(math.pi * s / t_max))


def sequential(stages, milestones):
    """Cerebras' SequentialScheduler by hand: stage k = number of milestones <= t, evaluated at t - M_{k-1}."""
    def value(t):
        k = sum(t >= m for m in milestones)
        return stages[k](t - (milestones[k - 1] if k else 0))
    return value


STAGES = [{"LinearLR": {"initial_learning_rate": 0.0, "end_learning_rate": 1e-3, "total_iters": 10}},
          {"ConstantLR": {"learning_rate": 5e-4, "total_iters": 5}},
          {"CosineDecayLR": {"initial_learning_rate": 2e-4, "end_learning_rate": 0.0, "total_iters": 20}}]
HAND = [linear(0.0, 1e-3, 10), constant(5e-4), cosine_decay(2e-4, 0.0, 20)]


@pytest.mark.parametrize("milestones, expected", [
    (None, [10, 15]),        # the running sums of total_iters
    ([10, 15], [10, 15]),
    ([6, 30], [6, 30]),      # the linear ramp cut at 6, the constant held past its 5 steps
    ([14, 16], [14, 16]),    # the ramp held at its end value for 4 steps
    ([0, 3], [0, 3]),        # a milestone at 0: the first stage never runs
])
def test_cerebras_sequential_runs_each_stage_from_its_milestone(milestones, expected):
    spec = {"SequentialLR": {"schedulers": STAGES, **({"milestones": milestones} if milestones else {})}}
    got = group_lrs(spec, 60)
    want = [sequential(HAND, expected)(t) for t in range(60)]
    assert got == pytest.approx(want, rel=2 ** -23, abs=1e-18)   # LinearLR in float32, as Cerebras computes it


def test_stages_that_jump_in_value_are_accepted():
    got = group_lrs({"SequentialLR": {"schedulers": STAGES}}, 20)
    assert got[9] == pytest.approx(9e-4) and got[10] == 5e-4        # 1e-3 would be the ramp's end: a jump down
    assert got[14] == 5e-4 and got[15] == pytest.approx(2e-4)


def test_a_sequence_of_constants_is_piecewise_constant():
    """Cerebras builds PiecewiseConstantLR as a SequentialLR of ConstantLR stages."""
    seq = C.SequentialLR([C.ConstantLR(0.1, 3), C.ConstantLR(0.05, 4), C.ConstantLR(0.01)], [3, 7])
    piecewise = C.PiecewiseConstantLR([0.1, 0.05, 0.01], [3, 7])
    assert [seq(t) for t in range(12)] == [piecewise(t) for t in range(12)] == [0.1] * 3 + [0.05] * 4 + [0.01] * 5


def test_given_milestones_need_no_stage_lengths():
    stages = [{"name": "CosineAnnealingLR", "initial_learning_rate": 1.0, "T_max": 10},
              {"name": "InverseSquareRootDecayLR", "initial_learning_rate": 0.1, "warmup_steps": 2}]
    got = group_lrs({"name": "SequentialLR", "dialect": "cerebras", "schedulers": stages, "milestones": [4]}, 12)
    want = sequential([cosine_annealing(1.0, 10), lambda s: 0.1 / math.sqrt(max(s, 2))], [4])
    assert got == pytest.approx([want(t) for t in range(12)], rel=1e-12)
    with pytest.raises(ConfigError) as info:   # without milestones, the length is needed (and asked for)
        group_lrs({"name": "SequentialLR", "dialect": "cerebras", "schedulers": stages}, 1)
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("schedulers[0]", "CosineAnnealingLR has no length to derive a milestone from; give milestones")]


def test_bad_milestones_are_refused_with_their_path():
    with pytest.raises(ConfigError) as info:
        group_lrs({"SequentialLR": {"schedulers": STAGES, "milestones": [10]}}, 1)
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("milestones", "expected 2 milestones for 3 schedules, got 1")]
    with pytest.raises(ConfigError) as info:
        group_lrs({"SequentialLR": {"schedulers": STAGES, "milestones": [10, 5]}}, 1)
    assert [e.path for e in info.value.errors] == ["milestones"]
    assert "must be strictly increasing" in str(info.value)


def test_torch_sequential_accepts_milestones_that_differ_from_lengths_as_torch_does():
    """torch's SequentialLR only checks the milestones' count; the torch dialect builds torch's own class."""
    stages = [{"name": "LinearLR", "start_factor": 0.5, "total_iters": 4}, {"name": "ExponentialLR", "gamma": 0.5}]
    got = group_lrs({"name": "SequentialLR", "schedulers": stages, "milestones": [2]}, 7)
    opt = torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=1.0)
    real = torch.optim.lr_scheduler.SequentialLR(opt, [torch.optim.lr_scheduler.LinearLR(opt, 0.5, total_iters=4),
                                                       torch.optim.lr_scheduler.ExponentialLR(opt, 0.5)], [2])
    want = [opt.param_groups[0]["lr"]]
    for _ in range(6):
        opt.step()
        real.step()
        want.append(opt.param_groups[0]["lr"])
    assert got == want == pytest.approx([0.5, 0.625, 1.0, 0.5, 0.25, 0.125, 0.0625])

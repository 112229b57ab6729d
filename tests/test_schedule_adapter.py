"""ScheduleLR: the torch LRScheduler interface over closed-form schedules."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import torch
from torch.optim.lr_scheduler import LRScheduler

from optreg.dialects.cerebras import schedules as C
from optreg.dialects.hf import schedules as HF
from optreg.dialects.nemo import schedules as NEMO
from optreg.dialects.oneflow import schedules as O
from optreg.dialects.torch import torch_forms as T
from optreg.errors import ConfigError
from optreg.reference import schedules as R
from optreg.schedules.adapter import ScheduleLR
from optreg.schedules.engine import Sequential


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def params(n=1):
    return [torch.nn.Parameter(torch.zeros(2)) for _ in range(n)]


def test_is_a_torch_lr_scheduler_with_get_last_lr():
    opt = torch.optim.SGD(params(), lr=0.5)
    sched = ScheduleLR(opt, T.StepLR(2, 0.5))
    assert isinstance(sched, LRScheduler)
    seen = [sched.get_last_lr()[0]]
    for _ in range(4):
        opt.step()
        sched.step()
        seen.append(sched.get_last_lr()[0])
    assert seen == [0.5, 0.5, 0.25, 0.25, 0.125]
    assert opt.param_groups[0]["initial_lr"] == 0.5 and sched.base_lrs == [0.5]


def test_factor_schedule_scales_each_group_absolute_sets_it():
    opt = torch.optim.SGD([{"params": params(), "lr": 1.0}, {"params": params(), "lr": 0.1}], lr=1.0)
    ScheduleLR(opt, T.ConstantLR(0.5, 3))
    assert [g["lr"] for g in opt.param_groups] == [0.5, 0.05]
    opt2 = torch.optim.SGD([{"params": params(), "lr": 1.0}, {"params": params(), "lr": 0.1}], lr=1.0)
    ScheduleLR(opt2, C.ConstantLR(3e-4))
    assert [g["lr"] for g in opt2.param_groups] == [3e-4, 3e-4]


def test_one_schedule_per_group_and_count_mismatch():
    opt = torch.optim.SGD([{"params": params()}, {"params": params()}], lr=1.0)
    sched = ScheduleLR(opt, [T.ConstantLR(0.5, 3), T.ExponentialLR(0.5)])
    for _ in range(3):
        opt.step()
        sched.step()
    assert [g["lr"] for g in opt.param_groups] == [1.0, 0.125]
    with pytest.raises(ConfigError) as err:
        ScheduleLR(torch.optim.SGD([{"params": params()}, {"params": params()}], lr=1.0), [T.ExponentialLR(0.5)])
    assert err.value.errors[0].path == "schedulers"


@pytest.mark.parametrize("key,read", [("momentum", lambda g: g["momentum"]),
                                      ("weight_decay", lambda g: g["weight_decay"]),
                                      ("betas[0]", lambda g: g["betas"][0]),
                                      ("betas[1]", lambda g: g["betas"][1])])
def test_schedules_other_group_keys(key, read):
    if key.startswith("betas"):
        opt = torch.optim.AdamW(params(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1)
    else:
        opt = torch.optim.SGD(params(), lr=1e-3, momentum=0.9, weight_decay=0.1)
    base = read(opt.param_groups[0])
    sched = ScheduleLR(opt, T.LinearLR(0.5, 1.0, 10), key=key)
    values = [read(opt.param_groups[0])]
    for _ in range(12):
        opt.step()
        sched.step()
        values.append(read(opt.param_groups[0]))
    want = R.torch_linear(np.arange(13), base, 0.5, 1.0, 10)
    assert np.allclose(values, want, rtol=1e-15, atol=0)
    assert opt.param_groups[0]["lr"] == 1e-3  # lr untouched
    assert sched.get_last_value() == [values[-1]]


def test_a_weight_decay_schedule_runs_on_an_optimizer_without_an_lr():
    """MindSpore's AdaFactor with relative_step keeps lr None; a schedule of weight_decay still steps and
    get_last_lr() reports the groups' lr as they are (found by the fuzz suite)."""
    import optreg

    model = torch.nn.Linear(3, 2)
    built = optreg.build({"optimizer": {"name": "AdaFactor", "dialect": "mindspore", "weight_decay": 0.1},
                          "scheduler": {"name": "CosineAnnealingWarmRestartsWD", "dialect": "cerebras",
                                        "initial_val": 0.1, "T_0": 4}}, model)
    model(torch.randn(4, 3)).sum().backward()
    seen = []
    for _ in range(3):
        built.optimizer.step()
        built.scheduler.step()
        seen.append(built.optimizer.param_groups[0]["weight_decay"])
    assert built.scheduler.get_last_lr() == [None]
    want = R.torch_cosine_annealing(np.arange(1, 4), 0.1, 4)  # within its first period, a warm restart is cosine
    assert np.allclose(seen, want, rtol=1e-12, atol=0)


def test_unknown_key_and_missing_key_are_config_errors():
    opt = torch.optim.SGD(params(), lr=0.1)
    with pytest.raises(ConfigError) as err:
        ScheduleLR(opt, T.ExponentialLR(0.9), key="beta1")
    assert err.value.errors[0].path == "key"
    with pytest.raises(ConfigError):
        ScheduleLR(opt, T.ExponentialLR(0.9), key="betas[0]")


def test_tensor_lr_is_filled_in_place():
    lr = torch.tensor(0.1)
    opt = torch.optim.Adam(params(), lr=lr)
    sched = ScheduleLR(opt, T.ExponentialLR(0.5))
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr and float(lr) == pytest.approx(0.05)


def test_step_with_epoch_jumps_exactly():
    opt = torch.optim.SGD(params(), lr=0.2)
    sched = ScheduleLR(opt, T.CosineAnnealingLR(1000, 0.001))
    sched.step(777)
    assert opt.param_groups[0]["lr"] == T.CosineAnnealingLR(1000, 0.001).apply(777, 0.2)
    sched.step()
    assert sched.last_epoch == 778


def test_last_epoch_resume_needs_initial_values_and_continues():
    opt = torch.optim.SGD(params(), lr=0.2)
    with pytest.raises(ConfigError) as err:
        ScheduleLR(opt, T.ExponentialLR(0.9), last_epoch=10)
    assert err.value.errors[0].path == "last_epoch"
    first = ScheduleLR(opt, T.ExponentialLR(0.9))
    for _ in range(10):
        opt.step()
        first.step()
    opt.param_groups[0]["lr"] = 123.0  # whatever the group holds now, the closed form restores it
    second = ScheduleLR(opt, T.ExponentialLR(0.9), last_epoch=10)
    assert second.last_epoch == 11
    assert opt.param_groups[0]["lr"] == pytest.approx(0.2 * 0.9 ** 11, rel=1e-15)


def test_state_dict_is_plain_and_picklable():
    opt = torch.optim.SGD(params(), lr=0.2)
    sched = ScheduleLR(opt, T.LambdaLR(lambda s: 1.0 / (s + 1)))
    state = sched.state_dict()
    assert set(state) == {"key", "last_epoch", "_step_count", "base_values", "_last_lr", "_last_values", "_last_closed"}
    pickle.loads(pickle.dumps(state))
    with pytest.raises(ConfigError):
        ScheduleLR(torch.optim.SGD(params(), lr=0.1, momentum=0.9), T.ExponentialLR(0.9),
                   key="momentum").load_state_dict(state)


def test_schedules_pickle():
    from optreg.config.expr import StepFunction

    for schedule in (T.MultiplicativeLR(StepFunction("0.99")),
                     Sequential([T.LinearLR(0.1, 1.0, 5), T.ExponentialLR(0.9)]),
                     HF.Polynomial(10, 100, lr_init=0.1), C.SequentialLR([C.ConstantLR(0.1, 5), C.ConstantLR(0.1)])):
        schedule.apply(20, 0.1)
        clone = pickle.loads(pickle.dumps(schedule))
        assert [clone.apply(t, 0.1) for t in range(30)] == [schedule.apply(t, 0.1) for t in range(30)]


def test_warns_when_stepped_before_the_optimizer_like_torch():
    opt = torch.optim.SGD(params(), lr=0.1)
    sched = ScheduleLR(opt, T.ExponentialLR(0.9))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched.step()
    assert any("optimizer.step()" in str(w.message) for w in caught)
    opt2 = torch.optim.SGD(params(), lr=0.1)
    sched2 = ScheduleLR(opt2, T.ExponentialLR(0.9))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt2.step()
        sched2.step()
    assert not caught


def test_hf_polynomial_reads_the_optimizer_default_lr_not_the_groups():
    opt = torch.optim.SGD([{"params": params(), "lr": 0.2}, {"params": params(), "lr": 0.05}], lr=0.2)
    sched = ScheduleLR(opt, HF.Polynomial(10, 100, lr_end=1e-3, power=1.0))
    for _ in range(150):
        opt.step()
        sched.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(1e-3, rel=1e-12)
    assert opt.param_groups[1]["lr"] == pytest.approx(1e-3 * 0.05 / 0.2, rel=1e-12)


def test_hf_polynomial_lr_end_must_be_below_the_initial_lr():
    with pytest.raises(ConfigError) as err:
        HF.Polynomial(10, 100, lr_end=0.5, lr_init=0.1)
    assert err.value.errors[0].path == "lr_end"


def test_oneflow_linear_warmup_into_a_scheduler_needs_equal_group_lrs():
    opt = torch.optim.SGD([{"params": params(), "lr": 0.2}, {"params": params(), "lr": 0.05}], lr=0.2)
    with pytest.raises(ConfigError) as err:
        ScheduleLR(opt, O.WarmupLR(O.CosineDecayLR(100), 0.1, 10))
    assert err.value.errors[0].path == "warmup_method"
    ScheduleLR(opt, O.WarmupLR(O.CosineDecayLR(100), 0.1, 10, warmup_prefix=True))


def test_nemo_warmup_annealing_decays_every_group_from_the_first_groups_lr():
    opt = torch.optim.SGD([{"params": params(), "lr": 0.2}, {"params": params(), "lr": 0.05}], lr=0.2)
    sched = ScheduleLR(opt, NEMO.WarmupAnnealing(100, 0.0, warmup_steps=10))
    for _ in range(55):
        opt.step()
        sched.step()
    first, second = (g["lr"] for g in opt.param_groups)
    assert first == second == pytest.approx(0.2 * (1 - 45 / 90))


def test_nemo_cosine_refuses_a_base_lr_below_min_lr():
    opt = torch.optim.SGD(params(), lr=1e-5)
    with pytest.raises(ConfigError) as err:
        ScheduleLR(opt, NEMO.CosineAnnealing(100, min_lr=1e-4))
    assert err.value.errors[0].path == "min_lr"

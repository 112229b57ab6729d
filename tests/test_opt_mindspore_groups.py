"""MindSpore group semantics: the beta/gamma rule, group keys, order_params, centralisation, lr forms."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import optreg
from optreg.dialects.mindspore import adam as ms
from optreg.core.optimizer import lr_at, lr_table
from optreg.stages.gradient import centralize


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        gen = torch.Generator().manual_seed(0)
        self.conv = torch.nn.Parameter(torch.randn(4, 16, 3, generator=gen, dtype=torch.float64))
        self.bn_gamma = torch.nn.Parameter(torch.randn(16, generator=gen, dtype=torch.float64))
        self.bn_beta = torch.nn.Parameter(torch.randn(16, generator=gen, dtype=torch.float64))
        self.fc = torch.nn.Linear(16, 3).double()


def _names(opt):
    return [n for g in opt.param_groups for n in g["param_names"]]


def test_ungrouped_weight_decay_skips_beta_and_gamma():
    net = Net()
    opt = optreg.configure_optimizer("Adam", net, dialect="mindspore", weight_decay=0.1)
    decay = {n: g["weight_decay"] for g in opt.param_groups for n in g["param_names"]}
    assert decay == {"conv": 0.1, "fc.weight": 0.1, "fc.bias": 0.1, "bn_gamma": 0.0, "bn_beta": 0.0}
    # no weight decay: one group, order untouched
    opt = optreg.configure_optimizer("Adam", net, dialect="mindspore")
    assert len(opt.param_groups) == 1 and _names(opt) == [n for n, _ in net.named_parameters()]


@pytest.mark.parametrize("row", ["FTRL", "AdaFactor"])
def test_ftrl_and_adafactor_decay_every_parameter(row):
    opt = optreg.configure_optimizer(row, Net(), dialect="mindspore", weight_decay=0.1)
    assert [g["weight_decay"] for g in opt.param_groups] == [0.1]


def test_grouped_weight_decay_follows_the_group_only():
    net = Net()
    groups = [{"params": [net.bn_gamma, net.conv], "weight_decay": 0.3},
              {"params": [net.bn_beta, *net.fc.parameters()]}]
    opt = ms.Adam(groups, weight_decay=0.05)
    assert [g["weight_decay"] for g in opt.param_groups] == [0.3, 0.05]


def test_order_params_sets_the_parameter_order():
    net = Net()
    order = [net.fc.bias, net.conv, net.bn_beta, net.fc.weight, net.bn_gamma]
    groups = [{"params": [net.conv, net.fc.weight], "lr": 0.1},
              {"params": [net.bn_gamma, net.bn_beta, net.fc.bias]},
              {"order_params": order}]
    opt = ms.Adam(groups, learning_rate=0.01)
    flat = [p for g in opt.param_groups for p in g["params"]]
    assert [id(p) for p in flat] == [id(p) for p in order]
    lr_of = {id(p): g["lr"] for g in opt.param_groups for p in g["params"]}
    assert lr_of[id(net.conv)] == lr_of[id(net.fc.weight)] == 0.1
    assert lr_of[id(net.fc.bias)] == lr_of[id(net.bn_gamma)] == 0.01
    # the state dict follows the same order
    assert opt.state_dict()["param_groups"][0]["params"] == [0]


def test_order_params_by_name():
    net = Net()
    named = dict(net.named_parameters())
    groups = [{"params": [net.conv, net.bn_gamma], "param_names": ["conv", "bn_gamma"]},
              {"params": [net.bn_beta], "param_names": ["bn_beta"]},
              {"order_params": ["bn_beta", "bn_gamma", "conv"]}]
    opt = ms.Adam(groups)
    assert [id(p) for g in opt.param_groups for p in g["params"]] == [id(named[n])
                                                                      for n in ("bn_beta", "bn_gamma", "conv")]


@pytest.mark.parametrize("groups,path,fragment", [
    (lambda n: [{"params": [n.conv], "momentum": 0.9}], "param_groups[0].momentum", "not a MindSpore group key"),
    (lambda n: [{"params": [n.conv]}, {"order_params": [n.conv], "lr": 0.1}], "param_groups[1]",
     "only the 'order_params'"),
    (lambda n: [{"params": [n.conv, n.fc.bias]}, {"order_params": [n.conv]}], "param_groups[1].order_params",
     "exactly the grouped parameters"),
    (lambda n: [{"params": [n.conv]}, {"order_params": [n.conv, n.fc.bias]}], "param_groups[1].order_params[1]",
     "not a parameter of any group"),
    (lambda n: [{"params": [n.conv]}, {"order_params": [n.conv, n.conv]}], "param_groups[1].order_params[1]", "twice"),
    (lambda n: [{"params": [n.conv]}, {"params": [n.conv]}], "param_groups[1].params[0]", "one group only"),
    (lambda n: [{"params": [n.conv], "grad_centralization": 1}], "param_groups[0].grad_centralization",
     "expected true or false, got int 1"),   # the own form's words; it said 'must be a bool, got 1'
    (lambda n: [{"params": [n.conv], "weight_decay": "x"}], "param_groups[0].weight_decay",
     "expected a number, got str 'x'"),      # it said 'must be an int or float, got 'x''
    (lambda n: [{"params": [n.conv], "weight_decay": float("nan")}], "param_groups[0].weight_decay",
     "must be a finite number, got nan"),    # it said 'must be a finite number <= 1e+09, got nan'
    (lambda n: [{"params": [n.conv], "weight_decay": 2e9}], "param_groups[0].weight_decay",
     "must be <= 1000000000, got 2000000000.0"),
    (lambda n: [{"params": [n.conv], "weight_decay": -0.1}], "param_groups[0].weight_decay", ">= 0"),
    (lambda n: [{"params": [n.conv], "lr": [0.1, 0.2]}, {"params": [n.fc.bias], "lr": [0.1, 0.2, 0.3]}],
     "param_groups[1].lr", "same length"),
    (lambda n: [{"params": []}], "param_groups[0].params", "empty"),
])
def test_group_errors_are_config_errors_with_paths(groups, path, fragment):
    with pytest.raises(optreg.ConfigError) as info:
        ms.Adam(groups(Net()))
    hits = [e for e in info.value.errors if e.path == path]
    assert hits and fragment in hits[0].message, info.value.errors


def test_unknown_group_key_through_the_registry():
    net = Net()
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer("Adam", [{"params": [net.conv]}, {"params": [net.fc.bias], "momentum": 0.9}],
                                   dialect="mindspore")
    assert any(e.path.endswith("param_groups[1].momentum") and "not a MindSpore group key" in e.message
               for e in info.value.errors)


def test_group_lr_lists_must_match_the_main_list():
    net = Net()
    with pytest.raises(optreg.ConfigError):
        ms.Adam([{"params": [net.conv], "lr": [0.1, 0.2, 0.3]}, {"params": [net.fc.bias]}], learning_rate=[0.1, 0.2])


def test_centralize_gate_follows_mindspore_code():
    g = torch.randn(4, 16, 3, dtype=torch.float64)
    c = centralize(g)
    assert torch.allclose(c.mean(dim=(1, 2)), torch.zeros(4, dtype=torch.float64), atol=1e-15)
    assert torch.allclose(c, g - g.mean(dim=(1, 2), keepdim=True), rtol=0, atol=0)
    for shape in [(16,), (4, 15), (4, 8, 3), (3, 2)]:
        g = torch.randn(*shape)
        assert centralize(g) is g
    assert centralize(torch.randn(8, 32)).mean(dim=1).abs().max() < 1e-6   # a dense layer qualifies too


def test_gradient_centralization_is_applied_per_group_on_the_decayed_gradient():
    net = Net()
    x = net.conv.detach().clone()
    opt = ms.Adam([{"params": [net.conv], "grad_centralization": True, "weight_decay": 0.5}], learning_rate=0.1,
                  loss_scale=4.0)
    g = torch.randn_like(x)
    net.conv.grad = g.clone()
    seen = opt.prepare_grad(net.conv, opt.param_groups[0])
    want = centralize(g + 0.5 * 4.0 * x) * 0.25
    assert torch.allclose(seen, want, rtol=1e-15, atol=1e-15)


def test_learning_rate_forms():
    assert lr_table(1) == 1.0
    assert lr_table(torch.tensor([0.1, 0.2])) == pytest.approx([0.1, 0.2])
    assert lr_table(torch.tensor(0.5)) == 0.5
    f = lambda step: 0.1 * step  # noqa: E731
    assert lr_table(f) is f
    for bad, fragment in [(-0.1, ">= 0"), (torch.ones(2, 2), "0-d or 1-d"), ("x", "schedule"), (True, "schedule"),
                          ([], "empty")]:
        with pytest.raises(optreg.ConfigError) as info:
            lr_table(bad)
        assert fragment in str(info.value)
    # a number in the own form's words (it said 'must be a finite number >= 0, got -0.1'); a huge int was an
    # OverflowError
    for bad, message in [(-0.1, "must be >= 0, got -0.1"), (float("nan"), "must be a finite number, got nan"),
                         (2e9, "must be <= 1000000000, got 2000000000.0"), (10 ** 400, "must be <= 1000000000, got ")]:
        with pytest.raises(optreg.ConfigError) as info:
            lr_table(bad)
        assert str(info.value).startswith(f"lr: {message}")
        # a per-step list's entry by the same rule, at its index, as the options read it (a negative or too large
        # entry passed; a huge int was an OverflowError)
        with pytest.raises(optreg.ConfigError) as info:
            lr_table([0.1, bad])
        assert str(info.value).startswith(f"lr[1]: {message}")
        if bad != 10 ** 400:   # (which every input's check refuses first, beyond a float)
            with pytest.raises(optreg.ConfigError) as info:
                optreg.configure_optimizer("Momentum", [torch.nn.Parameter(torch.zeros(2))], dialect="mindspore",
                                           momentum=0.9, learning_rate=[0.1, bad])
            assert str(info.value) == f"learning_rate: entry 1 {message}"
    assert lr_at([0.1, 0.2], 1) == 0.2
    with pytest.raises(IndexError):
        lr_at([0.1, 0.2], 2)


def test_dynamic_lr_indexing_and_past_the_end():
    p = torch.nn.Parameter(torch.zeros(3, dtype=torch.float64))
    seen = []
    opt = ms.AdamWeightDecay([p], learning_rate=lambda step: seen.append(step) or 0.1)
    for _ in range(3):
        p.grad = torch.ones(3, dtype=torch.float64)
        opt.step()
    assert seen[-3:] == [0, 1, 2]              # step k (0-based) calls the schedule with k
    opt = ms.Adam([p], learning_rate=[0.1, 0.2])
    for _ in range(2):
        p.grad = torch.ones(3, dtype=torch.float64)
        opt.step()
    assert opt.param_groups[0]["lr"] == 0.2
    p.grad = torch.ones(3, dtype=torch.float64)
    with pytest.raises(IndexError, match="past the end"):
        opt.step()


def test_schedule_from_the_engine_drives_the_lr():
    from optreg.dialects.mindspore import schedules as ms_sched

    sched = ms_sched.CosineDecayLR(min_lr=0.01, max_lr=0.1, decay_steps=4)
    p = torch.nn.Parameter(torch.zeros(3, dtype=torch.float64))
    opt = ms.Adam([p], learning_rate=sched)
    lrs = []
    for _ in range(4):
        p.grad = torch.ones(3, dtype=torch.float64)
        opt.step()
        lrs.append(opt.param_groups[0]["lr"])
    assert lrs == [pytest.approx(float(sched(k)), rel=1e-15) for k in range(4)]


def test_global_step_advances_without_gradients():
    a = torch.nn.Parameter(torch.ones(3, dtype=torch.float64))
    b = torch.nn.Parameter(torch.ones(3, dtype=torch.float64))
    opt = ms.Adam([a, b], learning_rate=0.1)
    for k in range(4):
        a.grad = torch.ones(3, dtype=torch.float64)
        b.grad = torch.ones(3, dtype=torch.float64) if k == 3 else None
        opt.step()
    assert opt.global_step == 4 and [g["global_step"] for g in opt.state_dict()["param_groups"]] == [4]
    # b's first update used t = 4: lr·√(1-β2⁴)/(1-β1⁴)·m/(√v + eps) with m = 0.1, v = 0.001
    t = 4
    step = 0.1 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t) * 0.1 / (np.sqrt(0.001) + 1e-8)
    assert np.allclose(b.detach().numpy(), 1 - step, rtol=1e-14)


def test_loss_scale_must_be_positive_in_python_too():
    # as the own form's loss_scale says it (it said 'must be a number > 0, got 0.0')
    for value, message in [(0.0, "must be > 0, got 0.0"), ("x", "expected a number, got str 'x'")]:
        for make in (lambda: ms.Adam([torch.nn.Parameter(torch.zeros(2))], loss_scale=value),
                     lambda: optreg.configure_optimizer("Adam", [torch.nn.Parameter(torch.zeros(2))],
                                                        dialect="mindspore", loss_scale=value)):
            with pytest.raises(optreg.ConfigError) as info:
                make()
            assert str(info.value) == f"loss_scale: {message}"


@pytest.mark.parametrize("key, near", [("grad_centralisation", "grad_centralization"),
                                       ("weigth_decay", "weight_decay"), ("lerning_rate", "learning_rate"),
                                       ("order_param", "order_params")])
def test_a_misspelt_group_key_gets_a_did_you_mean(key, near):
    """As every other unknown key: the rule's key with the MindSpore group key it misspells."""
    net = Net()
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer("mindspore.Adam", net, param_groups=[{"params": "*", key: 0.1}])
    [item] = [e for e in info.value.errors if e.path == f"param_groups[0].{key}"]
    assert "not a MindSpore group key" in item.message and item.suggestion == near, info.value
    assert f"did you mean {near!r}" in str(info.value)


@pytest.mark.parametrize("optimizer, path", [
    ({"name": "mindspore.Adam", "param_groups": [{"params": "*", "grad_centralisation": True}]},
     "optimizer.param_groups[0].grad_centralisation"),
    ({"name": "mindspore.Adam", "learning_rate": [0.1, 0.2], "param_groups": [{"params": "*", "lr": [0.1, 0.2, 0.3]}]},
     "optimizer.param_groups[0].lr"),
    ({"name": "mindspore.FTRL", "param_groups": [{"params": "*", "lr": 0.1}]}, "optimizer.param_groups[0].lr"),
], ids=["group-key", "lr-lengths", "ftrl-group-lr"])
def test_validate_without_the_model_runs_mindspores_group_rules(optimizer, path):
    """What MindSpore's group handling refuses whatever the model is refused by validate without one, at the path
    build gives it (order_params, which names the model's parameters, waits for the model)."""
    from optreg.api import to_experiment

    with pytest.raises(optreg.ConfigError) as info:
        to_experiment({"optimizer": optimizer})
    assert [e.path for e in info.value.errors] == [path]
    with pytest.raises(optreg.ConfigError) as info:
        optreg.build({"optimizer": optimizer}, Net())
    assert [e.path for e in info.value.errors] == [path]
    to_experiment({"optimizer": {"name": "mindspore.Adam", "param_groups": [
        {"params": "*.bias", "weight_decay": 0.0, "grad_centralization": True}, {"order_params": ["conv"]}]}})

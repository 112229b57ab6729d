"""Bad input to the OneFlow, Cerebras and MindSpore optimizers: every documented constraint is a ConfigError
with the option's path, every violated constraint is reported, and nothing is built."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import optreg
from optreg import ConfigError


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.gamma = torch.nn.Parameter(torch.ones(3))


def configure(name: str, **kw: Any):
    return optreg.configure_optimizer(name, Net(), **kw)


# -- the SGD, RMSprop, Adagrad, Adadelta, ASGD and Rprop families ----------------------------------
# (optimizer, options, expected error paths, fragment of the first message)
FAMILY_CASES = [
    # OneFlow (its asserts become ConfigErrors)
    ("oneflow.SGD", {"lr": -0.1}, ["lr"], "must be >= 0"),
    ("oneflow.SGD", {"momentum": -0.5, "weight_decay": -1}, ["momentum", "weight_decay"], "must be >= 0"),
    ("oneflow.SGD", {"nesterov": "yes"}, ["nesterov"], "expected true or false"),
    ("oneflow.SGD", {"differentiable": True}, ["differentiable"], "torch.SGD has it"),
    ("oneflow.RMSprop", {"momentum": 0.9}, ["momentum"], "does not support momentum > 0"),
    ("oneflow.RMSprop", {"alpha": -0.1, "eps": -1e-8}, ["alpha", "eps"], "must be >= 0"),
    ("oneflow.RMSprop", {"lr": "fast"}, ["lr"], "expected a number"),
    ("oneflow.Adagrad", {"initial_accumulator_value": -1.0}, ["initial_accumulator_value"], "must be >= 0"),
    ("oneflow.Adagrad", {"eps": -1e-10, "weight_decay": -0.1}, ["weight_decay", "eps"], "must be >= 0"),
    # Cerebras
    ("cerebras.SGD", {}, ["lr"], "required"),
    ("cerebras.SGD", {"lr": 0.1, "nesterov": True}, ["nesterov"], "requires momentum > 0"),
    ("cerebras.SGD", {"lr": 0.1, "nesterov": True, "momentum": 0.9, "dampening": 0.1}, ["nesterov"],
     "dampening = 0"),
    ("cerebras.SGD", {"lr": 0.1, "momentum": -0.9}, ["momentum"], "must be >= 0"),
    ("cerebras.RMSprop", {"alpha": -0.5, "eps": -1.0, "momentum": -0.1}, ["alpha", "eps", "momentum"], ">= 0"),
    ("cerebras.RMSprop", {"maximize": True}, ["maximize"], "torch.RMSprop"),
    ("cerebras.Adagrad", {"lr_decay": -0.1, "eps": -1.0}, ["lr_decay", "eps"], "must be >= 0"),
    # OneFlow does not check lr_decay, but a negative one divides by zero at step 1 + 1/|lr_decay| (issue 10)
    ("oneflow.Adagrad", {"lr_decay": -0.01}, ["lr_decay"], "must be >= 0"),
    ("cerebras.Adagrad", {"initial_accumulator_value": -1}, ["initial_accumulator_value"], "must be >= 0"),
    ("cerebras.Adadelta", {"rho": 1.5}, ["rho"], "must be <= 1"),
    ("cerebras.Adadelta", {"eps": -1e-6, "lr": -1.0}, ["lr", "eps"], "must be >= 0"),
    ("cerebras.ASGD", {"lr": -0.01, "weight_decay": -1.0}, ["lr", "weight_decay"], "must be >= 0"),
    ("cerebras.ASGD", {"t0": True}, ["t0"], "boolean"),
    ("cerebras.Rprop", {"etas": (1.0, 1.2)}, ["etas"], "0 < etaminus < 1 < etaplus"),
    ("cerebras.Rprop", {"etas": (0.5, 0.9)}, ["etas"], "0 < etaminus < 1 < etaplus"),
    ("cerebras.Rprop", {"step_sizes": (1.0, 0.1)}, ["step_sizes"], "min step size"),
    ("cerebras.Rprop", {"etas": (0.5,)}, ["etas"], "expected 2 values, got 1"),
    ("cerebras.Rprop", {"maximize": True}, ["maximize"], "torch.Rprop"),
    # MindSpore (TypeError and ValueError conditions of the TinyMS / mindspore.nn pages)
    ("mindspore.Momentum", {"learning_rate": 0.1}, ["momentum"], "required"),
    ("mindspore.Momentum", {"learning_rate": 0.1, "momentum": 1}, ["momentum"], "must be a float"),
    ("mindspore.Momentum", {"learning_rate": 0.1, "momentum": -0.9}, ["momentum"], "must be >= 0"),
    ("mindspore.Momentum", {"learning_rate": -0.1, "momentum": 0.9}, ["learning_rate"], ">= 0"),
    ("mindspore.Momentum", {"learning_rate": 0.1, "momentum": 0.9, "loss_scale": 0.0}, ["loss_scale"], "> 0"),
    ("mindspore.Momentum", {"learning_rate": 0.1, "momentum": 0.9, "weight_decay": -1e-4}, ["weight_decay"],
     "must be >= 0"),
    ("mindspore.Momentum", {"learning_rate": 0.1, "momentum": 0.9, "use_nesterov": 1}, ["use_nesterov"],
     "expected true or false"),
    ("mindspore.Momentum", {"learning_rate": [[0.1]], "momentum": 0.9}, ["learning_rate"], "number"),
    ("mindspore.SGD", {"nesterov": True}, ["nesterov"], "requires momentum > 0"),
    ("mindspore.SGD", {"nesterov": True, "momentum": 0.9, "dampening": 0.5}, ["nesterov"], "dampening = 0"),
    ("mindspore.SGD", {"momentum": -0.1, "dampening": -0.1}, ["momentum", "dampening"], "must be >= 0"),
    ("mindspore.RMSProp", {"epsilon": 0.0}, ["epsilon"], "must be > 0"),
    ("mindspore.RMSProp", {"decay": 1, "momentum": 0}, ["decay", "momentum"], "must be a float"),
    ("mindspore.RMSProp", {"decay": -0.9, "momentum": -0.1}, ["decay", "momentum"], "must be >= 0"),
    ("mindspore.RMSProp", {"centered": "no", "use_locking": 0}, ["centered", "use_locking"], "true or false"),
    ("mindspore.RMSProp", {"alpha": 0.9}, ["alpha"], "not an option of mindspore RMSProp"),
    ("mindspore.Adagrad", {"accum": -0.1}, ["accum"], "must be >= 0"),
    ("mindspore.Adagrad", {"accum": 1}, ["accum"], "must be a float"),
    ("mindspore.Adagrad", {"update_slots": 1}, ["update_slots"], "true or false"),
    ("mindspore.Adagrad", {"eps": 1e-6}, ["eps"], "not an option of mindspore Adagrad"),
    ("mindspore.ProximalAdagrad", {"l1": -0.1, "l2": -1.0}, ["l1", "l2"], "must be >= 0"),
    ("mindspore.ProximalAdagrad", {"accum": 0, "l1": 1}, ["accum", "l1"], "must be a float"),
    ("mindspore.ProximalAdagrad", {"loss_scale": -1.0}, ["loss_scale"], "must be > 0"),
]


@pytest.mark.parametrize("name,options,paths,fragment", FAMILY_CASES,
                         ids=[f"{c[0]}-{'-'.join(c[2])}" for c in FAMILY_CASES])
def test_family_constraints_are_config_errors(name, options, paths, fragment):
    with pytest.raises(ConfigError) as info:
        configure(name, **options)
    assert sorted(e.path for e in info.value.errors) == sorted(paths)
    assert fragment in info.value.errors[0].message or fragment in str(info.value)


# values the frameworks accept, next to the refusals above
ACCEPTED = [
    ("mindspore.SGD", {"momentum": 1, "dampening": 0}),  # MindSpore's SGD converts ints
    ("mindspore.Momentum", {"learning_rate": [0.1, 0.05], "momentum": 0.9}),
    ("mindspore.RMSProp", {"decay": 1.5}),  # no upper bound in MindSpore
    ("oneflow.RMSprop", {"momentum": 0.0}),
    ("oneflow.SGD", {"nesterov": True}),  # nor nesterov against momentum
    ("cerebras.SGD", {"lr": "1e-3", "dampening": -0.5}),
]


@pytest.mark.parametrize("name,options", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_values_the_framework_accepts_build(name, options):
    assert isinstance(configure(name, **options), torch.optim.Optimizer)


def test_mindspore_group_keys_are_checked():
    net = Net()
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("mindspore.Momentum", [{"params": [net.fc.weight], "momentum": 0.5},
                                                          {"params": [net.fc.bias, net.gamma]}],
                                   learning_rate=0.1, momentum=0.9)
    assert [e.path for e in info.value.errors] == ["param_groups[0].momentum"]


# -- Cerebras' legacy keys: recognised and refused with what to write instead ----------------------
LEGACY = [
    ("cerebras.Adam", {"beta1": 0.9}, "beta1", "betas"),
    ("cerebras.AdamW", {"beta2": 0.99}, "beta2", "betas"),
    ("cerebras.AdamW", {"weight_decay_rate": 0.01}, "weight_decay_rate", "weight_decay"),
    ("cerebras.Adafactor", {"lr": 0.01, "eps1": 1e-30}, "eps1", "eps"),
    ("cerebras.Adafactor", {"lr": 0.01, "eps2": 1e-3}, "eps2", "eps"),
]


@pytest.mark.parametrize("name,options,path,replacement", LEGACY, ids=[c[2] for c in LEGACY])
def test_cerebras_legacy_keys_say_what_to_write(name, options, path, replacement):
    with pytest.raises(ConfigError) as info:
        configure(name, **options)
    assert [e.path for e in info.value.errors] == [path]
    assert f"write {replacement}" in info.value.errors[0].message


def test_cerebras_unknown_keys_warn_and_drop_when_asked():
    with pytest.warns(UserWarning, match="weigth_decay"):
        opt = optreg.configure_optimizer("cerebras.SGD", Net(), unknown_keys="warn", lr=0.1, weigth_decay=0.1)
    assert opt.param_groups[0]["weight_decay"] == 0.0


def test_oneflow_clip_group_keys_are_validated():
    net = Net()
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer(
            "oneflow.Adagrad",
            [{"params": [net.fc.weight], "clip_grad_max_norm": -1.0, "clip_grad_norm_type": "two"},
             {"params": [net.fc.bias, net.gamma], "clip_grad_max_norm": 1.0, "clip_grad_norm_type": 0}])
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("params[0].clip_grad_max_norm", "must be >= 0, got -1.0"),
        ("params[0].clip_grad_norm_type", "expected a number > 0 or 'inf', got 'two'"),
        ("params[1].clip_grad_norm_type", "must be a number > 0 or 'inf', got 0.0"),
    ]
    opt = optreg.configure_optimizer("oneflow.RMSprop", [{"params": list(net.parameters()), "clip_grad_max_norm": 1,
                                                          "clip_grad_norm_type": "inf"}])
    assert opt.param_groups[0]["clip_grad_norm_type"] == float("inf")

"""MindSpore's dynamic-lr functions (mindspore.nn.piecewise_constant_lr, exponential_decay_lr, ..., MindSpore 2.x)
by their own names: MindSpore's signatures, the per-step list of length total_step, the numbers of the documented
formula (optreg.reference.schedules) and of MindSpore's documented examples."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from torch_cases import group_lrs

import optreg
from optreg import ConfigError
from optreg.core.entry import SCHEDULER
from optreg.core.registry import REGISTRY
from optreg.dialects.mindspore import schedules as M
from optreg.reference import schedules as R

# name, options (MindSpore's positional order), numpy reference
CASES = [
    ("piecewise_constant_lr", {"milestone": [2, 5, 10], "learning_rates": [0.1, 0.05, 0.01]}, R.ms_dyn_piecewise),
    ("exponential_decay_lr", {"learning_rate": 0.1, "decay_rate": 0.9, "total_step": 23, "step_per_epoch": 2,
                              "decay_epoch": 3}, R.ms_dyn_exponential),
    ("exponential_decay_lr", {"learning_rate": 0.1, "decay_rate": 0.9, "total_step": 23, "step_per_epoch": 2,
                              "decay_epoch": 3, "is_stair": True}, R.ms_dyn_exponential),
    ("natural_exp_decay_lr", {"learning_rate": 0.1, "decay_rate": 0.3, "total_step": 23, "step_per_epoch": 3,
                              "decay_epoch": 2}, R.ms_dyn_natural_exp),
    ("natural_exp_decay_lr", {"learning_rate": 0.1, "decay_rate": 0.3, "total_step": 23, "step_per_epoch": 3,
                              "decay_epoch": 2, "is_stair": True}, R.ms_dyn_natural_exp),
    ("inverse_decay_lr", {"learning_rate": 0.1, "decay_rate": 0.5, "total_step": 23, "step_per_epoch": 2,
                          "decay_epoch": 3}, R.ms_dyn_inverse),
    ("inverse_decay_lr", {"learning_rate": 0.1, "decay_rate": 0.5, "total_step": 23, "step_per_epoch": 2,
                          "decay_epoch": 3, "is_stair": True}, R.ms_dyn_inverse),
    ("cosine_decay_lr", {"min_lr": 0.01, "max_lr": 0.1, "total_step": 23, "step_per_epoch": 2, "decay_epoch": 7},
     R.ms_dyn_cosine),
    ("polynomial_decay_lr", {"learning_rate": 0.1, "end_learning_rate": 0.01, "total_step": 23, "step_per_epoch": 2,
                             "decay_epoch": 4, "power": 0.5}, R.ms_dyn_polynomial),
    ("polynomial_decay_lr", {"learning_rate": 0.1, "end_learning_rate": 0.01, "total_step": 23, "step_per_epoch": 2,
                             "decay_epoch": 4, "power": 2.0, "update_decay_epoch": True}, R.ms_dyn_polynomial),
    ("warmup_lr", {"learning_rate": 0.1, "total_step": 23, "step_per_epoch": 2, "warmup_epoch": 5}, R.ms_dyn_warmup),
]
IDS = [f"{n}-{'stair' if o.get('is_stair') or o.get('update_decay_epoch') else 'plain'}" for n, o, _ in CASES]

# MindSpore's signatures (mindspore.nn.dynamic_lr, 2.x): parameter names and defaults in order
SIGNATURES = {
    "piecewise_constant_lr": [("milestone", None), ("learning_rates", None)],
    "exponential_decay_lr": [("learning_rate", None), ("decay_rate", None), ("total_step", None),
                             ("step_per_epoch", None), ("decay_epoch", None), ("is_stair", False)],
    "natural_exp_decay_lr": [("learning_rate", None), ("decay_rate", None), ("total_step", None),
                             ("step_per_epoch", None), ("decay_epoch", None), ("is_stair", False)],
    "inverse_decay_lr": [("learning_rate", None), ("decay_rate", None), ("total_step", None),
                         ("step_per_epoch", None), ("decay_epoch", None), ("is_stair", False)],
    "cosine_decay_lr": [("min_lr", None), ("max_lr", None), ("total_step", None), ("step_per_epoch", None),
                        ("decay_epoch", None)],
    "polynomial_decay_lr": [("learning_rate", None), ("end_learning_rate", None), ("total_step", None),
                            ("step_per_epoch", None), ("decay_epoch", None), ("power", None),
                            ("update_decay_epoch", False)],
    "warmup_lr": [("learning_rate", None), ("total_step", None), ("step_per_epoch", None), ("warmup_epoch", None)],
}


@pytest.mark.parametrize("name, options, reference", CASES, ids=IDS)
def test_each_function_by_its_mindspore_name_follows_the_formula(name, options, reference):
    table = list(reference(**options))
    total = options.get("total_step", options.get("milestone", [0])[-1])
    assert len(table) == total
    got = group_lrs({"name": name, "dialect": "mindspore", **options}, total + 4)
    np.testing.assert_allclose(got[:total], table, rtol=1e-14, atol=0)
    assert got[total:] == [got[total - 1]] * 4            # past the list's end the last value holds
    entry = REGISTRY.lookup(SCHEDULER, name, "mindspore")
    schedule = entry.resolve()(**options)
    assert schedule.length == total
    np.testing.assert_allclose(schedule.table(), table, rtol=1e-14, atol=0)
    # the function MindSpore's optimizer takes the list from, called as MindSpore calls it
    np.testing.assert_allclose(M.DYNAMIC_LR[name](**options), table, rtol=1e-14, atol=0)


@pytest.mark.parametrize("name, call, documented", [
    ("piecewise_constant_lr", ([2, 5, 10], [0.1, 0.05, 0.01]), [0.1, 0.1, 0.05, 0.05, 0.05, 0.01, 0.01, 0.01, 0.01,
                                                                 0.01]),
    ("exponential_decay_lr", (0.1, 0.9, 6, 2, 1), [0.1, 0.1, 0.09, 0.09, 0.081, 0.081]),
    ("natural_exp_decay_lr", (0.1, 0.9, 6, 2, 2, True), [0.1, 0.1, 0.1, 0.1, 0.016529888822158657,
                                                        0.016529888822158657]),
    ("inverse_decay_lr", (0.1, 0.5, 6, 1, 1), [0.1, 0.06666666666666667, 0.05, 0.04, 0.03333333333333333,
                                               0.028571428571428574]),
    ("cosine_decay_lr", (0.01, 0.1, 6, 2, 2), [0.1, 0.1, 0.055, 0.055, 0.01, 0.01]),
    ("polynomial_decay_lr", (0.1, 0.01, 6, 2, 2, 0.5), [0.1, 0.1, 0.07363961030678928, 0.07363961030678928, 0.01,
                                                        0.01]),
    ("warmup_lr", (0.1, 6, 2, 2), [0.0, 0.0, 0.05, 0.05, 0.1, 0.1]),
])
def test_mindspores_documented_examples(name, call, documented):
    """The examples of MindSpore's docs, given positionally in MindSpore's order."""
    names = [n for n, _ in SIGNATURES[name]][:len(call)]
    assert group_lrs({"name": name, "dialect": "mindspore", **dict(zip(names, call))}, len(documented)) == \
        pytest.approx(documented, rel=1e-12)


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_options_are_mindspores_signature(name):
    params = optreg.describe(name, dialect="mindspore", kind="scheduler").params
    got = [(p.name, None if p.default is inspect.Parameter.empty else p.default) for p in params]
    assert got == SIGNATURES[name]
    assert list(inspect.signature(M.DYNAMIC_LR[name]).parameters) == [n for n, _ in SIGNATURES[name]]


def test_the_classes_options_are_refused_by_the_function_with_a_pointer():
    with pytest.raises(ConfigError) as info:
        group_lrs({"name": "exponential_decay_lr", "dialect": "mindspore", "learning_rate": 0.1, "decay_rate": 0.9,
              "decay_steps": 4}, 1)
    messages = {e.path: e.message for e in info.value.errors}
    assert messages["decay_steps"] == ("'decay_steps' is not an option of mindspore exponential_decay_lr; "
                                       "mindspore.ExponentialDecayLR has it")
    assert {"total_step", "step_per_epoch", "decay_epoch"} <= set(messages)   # required, missing


def test_the_class_of_similar_name_keeps_its_own_options_and_numbers():
    got = group_lrs({"name": "ExponentialDecayLR", "dialect": "mindspore", "learning_rate": 0.1, "decay_rate": 0.9,
                "decay_steps": 4}, 9)
    np.testing.assert_allclose(got, R.ms_exponential_decay(np.arange(9), 0.1, 0.9, 4), rtol=1e-14)


def test_former_dynamic_names_build_the_same_schedule():
    options = {"learning_rate": 0.1, "decay_rate": 0.9, "total_step": 12, "step_per_epoch": 2, "decay_epoch": 1}
    assert group_lrs({"name": "dynamic_exponential_decay_lr", "dialect": "mindspore", **options}, 14) == \
        group_lrs({"name": "mindspore.exponential_decay_lr", **options}, 14)

"""Every documented MindSpore constraint of the Adam/Lamb/FTRL/AdaFactor/LARS rows is a ConfigError with a path.

Source of the constraints: the TinyMS / mindspore.nn.optim API page (TypeError and ValueError lists), and
MindSpore's code where it is stricter (FTRL learning_rate > 0). An int where MindSpore requires a float
is refused (TypeError there); ints are converted where MindSpore converts them.
"""

from __future__ import annotations

import pytest
import torch

import optreg


def _params():
    return [("w", torch.nn.Parameter(torch.zeros(2, 3))), ("b", torch.nn.Parameter(torch.zeros(3)))]


ADAM_CASES = [
    ({"learning_rate": "abc"}, "learning_rate", "schedule"),
    ({"learning_rate": -0.1}, "learning_rate", ">= 0"),
    ({"learning_rate": torch.ones(2, 2)}, "learning_rate", "0-d or 1-d"),
    ({"learning_rate": [0.1, True]}, "learning_rate", "entry 1"),
    ({"learning_rate": []}, "learning_rate", "empty"),
    ({"beta1": 1}, "beta1", "must be a float"),
    ({"beta1": 1.0}, "beta1", "< 1"),
    ({"beta1": 0.0}, "beta1", "> 0"),
    ({"beta2": 1.5}, "beta2", "< 1"),
    ({"beta2": -0.5}, "beta2", "> 0"),
    ({"eps": 0.0}, "eps", "> 0"),
    ({"eps": 1}, "eps", "must be a float"),
    ({"weight_decay": -1.0}, "weight_decay", ">= 0"),
    ({"weight_decay": "x"}, "weight_decay", "number"),
]
ADAM_ONLY = [
    ({"use_locking": 1}, "use_locking", "true or false"),
    ({"use_nesterov": "yes"}, "use_nesterov", "true or false"),
    ({"loss_scale": 0.0}, "loss_scale", "> 0"),
    ({"loss_scale": -2}, "loss_scale", "> 0"),
]

CASES = (
    [("Adam", kw, path, frag) for kw, path, frag in ADAM_CASES + ADAM_ONLY]
    + [("LazyAdam", kw, path, frag) for kw, path, frag in ADAM_CASES + ADAM_ONLY]
    + [("AdamOffload", kw, path, frag) for kw, path, frag in ADAM_CASES + ADAM_ONLY]
    + [("AdamWeightDecay", kw, path, frag) for kw, path, frag in ADAM_CASES]
    + [("AdamWeightDecay", {"loss_scale": 2.0}, "loss_scale", "unknown option")]
    + [("Lamb", {"learning_rate": 0.1, **kw}, path, frag) for kw, path, frag in ADAM_CASES if path != "learning_rate"]
    + [("Lamb", {}, "learning_rate", "required"), ("Lamb", {"learning_rate": -1.0}, "learning_rate", ">= 0")]
    + [
        ("FTRL", {"initial_accum": -0.1}, "initial_accum", ">= 0"),
        ("FTRL", {"initial_accum": 1}, "initial_accum", "must be a float"),
        ("FTRL", {"learning_rate": 0.0}, "learning_rate", "> 0"),
        ("FTRL", {"learning_rate": 1}, "learning_rate", "must be a float"),
        ("FTRL", {"learning_rate": [0.1, 0.2]}, "learning_rate", "number"),
        ("FTRL", {"lr_power": 0.5}, "lr_power", "<= 0"),
        ("FTRL", {"lr_power": -1}, "lr_power", "must be a float"),
        ("FTRL", {"l1": -0.1}, "l1", ">= 0"),
        ("FTRL", {"l2": -0.1}, "l2", ">= 0"),
        ("FTRL", {"l1": 1}, "l1", "must be a float"),
        ("FTRL", {"use_locking": "no"}, "use_locking", "true or false"),
        ("FTRL", {"loss_scale": 1}, "loss_scale", "must be a float"),
        ("FTRL", {"loss_scale": 0.0}, "loss_scale", "> 0"),
        ("FTRL", {"weight_decay": -0.1}, "weight_decay", ">= 0"),
        ("AdaFactor", {"eps": [1e-30]}, "eps", "expected 2 values, got 1"),
        ("AdaFactor", {"eps": [1e-30, -1e-3]}, "eps[1]", ">= 0"),
        ("AdaFactor", {"eps": [0, 1e-3]}, "eps[0]", "must be a float"),
        ("AdaFactor", {"clip_threshold": -1.0}, "clip_threshold", ">= 0"),
        ("AdaFactor", {"clip_threshold": 1}, "clip_threshold", "must be a float"),
        ("AdaFactor", {"decay_rate": 1.0}, "decay_rate", "< 1"),
        ("AdaFactor", {"decay_rate": 0.0}, "decay_rate", "> 0"),
        ("AdaFactor", {"beta1": -0.1}, "beta1", ">= 0"),
        ("AdaFactor", {"beta1": 1.0}, "beta1", "< 1"),
        ("AdaFactor", {"weight_decay": 1.0}, "weight_decay", "< 1"),
        ("AdaFactor", {"weight_decay": -0.1}, "weight_decay", ">= 0"),
        ("AdaFactor", {"scale_parameter": "x"}, "scale_parameter", "true or false"),
        ("AdaFactor", {"relative_step": 1}, "relative_step", "true or false"),
        ("AdaFactor", {"compression": None}, "compression", "true or false"),
        ("AdaFactor", {"learning_rate": 0.1}, "learning_rate", "relative_step"),
        ("AdaFactor", {"learning_rate": 0.1, "relative_step": False, "warmup_init": True}, "warmup_init",
         "requires relative_step"),
        ("AdaFactor", {"learning_rate": -0.1, "relative_step": False}, "learning_rate", ">= 0"),
        ("AdaFactor", {"loss_scale": 0.0}, "loss_scale", "> 0"),
        ("LARS", {"epsilon": 1}, "epsilon", "must be a float"),
        ("LARS", {"coefficient": "x"}, "coefficient", "number"),
        ("LARS", {"use_clip": 1}, "use_clip", "true or false"),
        ("LARS", {"lars_filter": "bias"}, "lars_filter", "list"),
    ]
)


@pytest.mark.parametrize("row,kw,path,fragment", CASES,
                         ids=[f"{r}-{p}-{i}" for i, (r, _, p, _f) in enumerate(CASES)])
def test_bad_input(row, kw, path, fragment):
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer(row, _params(), dialect="mindspore", **kw)
    hits = [e for e in info.value.errors if e.path == path]
    assert hits, f"no error at {path!r}: {info.value.errors}"
    assert any(fragment in e.message for e in hits), hits


def test_every_violation_is_reported_at_once():
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer("Adam", _params(), dialect="mindspore", beta1=1.0, beta2=0, eps=-1.0,
                                   loss_scale=0.0, weight_decay=-1.0)
    assert {e.path for e in info.value.errors} == {"beta1", "beta2", "eps", "loss_scale", "weight_decay"}


def test_adafactor_needs_a_learning_rate_without_relative_step():
    with pytest.raises(optreg.ConfigError):
        optreg.configure_optimizer("AdaFactor", _params(), dialect="mindspore", relative_step=False)


@pytest.mark.parametrize("row,kw", [
    ("Adam", {"learning_rate": 1, "weight_decay": 1, "loss_scale": 2}),      # ints converted, as MindSpore does
    ("AdaFactor", {"beta1": 0, "weight_decay": 0}),
    ("FTRL", {"learning_rate": 0.1, "lr_power": 0.0}),
])
def test_accepted_edge_values(row, kw):
    optreg.configure_optimizer(row, _params(), dialect="mindspore", **kw)

"""Step expressions: arithmetic in `step` through an AST whitelist, never eval."""

from __future__ import annotations

import math
import pickle

import pytest

from optreg import ConfigError
from optreg.config.expr import StepFunction, register_step_function


@pytest.mark.parametrize("text, step, value", [
    ("0.95 ** step", 10, 0.95 ** 10),
    ("min(1.0, (step + 1) / 10)", 3, 0.4),
    ("1 / sqrt(max(step, 1))", 16, 0.25),
    ("0.5 * (1 + cos(pi * step / 100))", 50, 0.5 * (1 + math.cos(math.pi / 2))),
    ("1.0 if step < 5 else 0.1", 7, 0.1),
    ("-step % 3", 4, (-4) % 3),
    ("exp(-0.01 * step)", 100, math.exp(-1)),
    ("0 < step <= 3", 2, 1.0),
])
def test_values(text, step, value):
    assert StepFunction(text)(step) == pytest.approx(value, rel=0, abs=0)


@pytest.mark.parametrize("text", [
    "__import__('os').system('ls')", "step.__class__", "open('x')", "[1, 2]", "lambda: 1", "'a' * 3",
    "eval('1')", "step if True else 0", "x + 1", "(1).real", "f'{step}'", "True", "sqrt(x=1)",
])
def test_refused(text):
    with pytest.raises(ConfigError):
        StepFunction(text)


def test_huge_exponent_refused_at_parse_time():
    with pytest.raises(ConfigError):
        StepFunction("10 ** 10 ** 10")


def test_registered_function_by_name_and_pickle():
    register_step_function("half_every_10")(lambda step: 0.5 ** (step // 10))
    f = StepFunction("half_every_10")
    assert f(25) == 0.25
    g = pickle.loads(pickle.dumps(StepFunction("0.9 ** step")))
    assert g(2) == 0.9 ** 2 and g == StepFunction("0.9 ** step")


def test_clash_on_registration():
    register_step_function("clash_fn")(abs)
    with pytest.raises(ValueError):
        register_step_function("clash_fn")(round)

"""Step functions for LambdaLR-style options: a registered name or an arithmetic expression in `step`.

`StepFunction("0.95 ** step")` parses once with an AST whitelist (never `eval`) and evaluates by walking
the tree. It is a plain picklable object, so torch schedulers store it in `state_dict()` and resume.
"""

from __future__ import annotations

import ast
import math
import operator
from typing import Callable

from optreg.errors import ConfigError, show

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
_CALLS: dict[str, Callable[..., float]] = {
    "min": min, "max": max, "abs": abs, "sqrt": math.sqrt, "exp": math.exp, "log": math.log,
    "cos": math.cos, "sin": math.sin, "tanh": math.tanh, "floor": math.floor, "ceil": math.ceil,
}
_NAMES = {"step": None, "pi": math.pi, "e": math.e}
_MAX_LENGTH = 500
_MAX_POWER = float(1 << 53)   # exponents beyond any step count (float pow is O(1); this only bounds typos)
MAX_VALUE = 1e9         # |f(step)|: a factor (or value) a float32 optimizer step can still use (types.MAX_FLOAT)
# Steps an expression is checked at when it is read: the first 17 exhaustively, then powers of two to ~10^6.
# Where it cannot be computed (overflow, division by zero, domain error, not finite, beyond MAX_VALUE) it is
# refused; at any other step it is evaluated under the same guard (a ConfigError naming the step).
CHECK_STEPS = (*range(17), *(1 << k for k in range(5, 21)))

# Named step functions (`lr_lambda: warmup_linear_100`-style names are registered here by users).
STEP_FUNCTIONS: dict[str, Callable[[int], float]] = {}


def register_step_function(name: str) -> Callable[[Callable[[int], float]], Callable[[int], float]]:
    """Decorator: make `fn(step) -> float` available by name in configs (`lr_lambda: name`)."""

    def add(fn: Callable[[int], float]) -> Callable[[int], float]:
        if name in STEP_FUNCTIONS and STEP_FUNCTIONS[name] is not fn:
            raise ValueError(f"step function {name!r} is already registered")
        STEP_FUNCTIONS[name] = fn
        return fn

    return add


def _check(node: ast.AST) -> None:
    """Raise ValueError unless every node is whitelisted arithmetic on `step` and constants."""
    if isinstance(node, ast.Expression):
        return _check(node.body)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ValueError(f"constant {node.value!r} is not a number")
        return None
    if isinstance(node, ast.Name):
        if node.id not in _NAMES:
            raise ValueError(f"unknown name {node.id!r} (use 'step', numbers, {', '.join(sorted(_CALLS))})")
        return None
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        _check(node.left)
        return _check(node.right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _check(node.operand)
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        for sub in (node.left, *node.comparators):
            _check(sub)
        return None
    if isinstance(node, ast.IfExp):
        for sub in (node.test, node.body, node.orelse):
            _check(sub)
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALLS and not node.keywords:
        for arg in node.args:
            _check(arg)
        return None
    raise ValueError(f"'{ast.unparse(node)}' is not allowed in a step expression")


def _evaluate(node: ast.AST, step: float) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, step)
    if isinstance(node, ast.Constant):
        return float(node.value)  # float arithmetic: an overflow raises at once instead of growing an int
    if isinstance(node, ast.Name):
        return float(step) if node.id == "step" else _NAMES[node.id]
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, step), _evaluate(node.right, step)
        if isinstance(node.op, ast.Pow) and abs(right) > _MAX_POWER:
            raise ValueError("exponent too large")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, step))
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, step)
        for op, comparator in zip(node.ops, node.comparators):
            right = _evaluate(comparator, step)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _evaluate(node.body if _evaluate(node.test, step) else node.orelse, step)
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return _CALLS[node.func.id](*(_evaluate(a, step) for a in node.args))


_TREES: dict[str, ast.Expression] = {}   # parsed, checked expressions by source text


def _value(tree: ast.Expression, step: int | float) -> float:
    """f(step) as a float; ValueError saying why when it cannot be used as a schedule value."""
    try:
        value = float(_evaluate(tree, step))
    except (ValueError, TypeError, ArithmeticError, RecursionError, MemoryError) as exc:
        raise ValueError(f"{str(exc)[:80] or type(exc).__name__} at step {step}") from None
    if not math.isfinite(value):
        raise ValueError(f"not finite at step {step} ({value})")
    if abs(value) > MAX_VALUE:
        raise ValueError(f"{value:g} at step {step} is beyond ±{MAX_VALUE:g}")
    return value


def _parse(source: str) -> ast.Expression:
    """The checked tree of `source` (cached); ConfigError when it is not a finite whitelisted expression."""
    tree = _TREES.get(source)
    if tree is None:
        if len(source) > _MAX_LENGTH:
            raise ConfigError(f"expression longer than {_MAX_LENGTH} characters")
        try:
            tree = ast.parse(source, mode="eval")
            _check(tree)
            for step in CHECK_STEPS:
                _value(tree, step)
        except (SyntaxError, ValueError, TypeError, ArithmeticError, RecursionError, MemoryError) as exc:
            raise ConfigError(f"invalid step expression {show(source)}: {str(exc)[:120]}") from None
        _TREES[source] = tree
    return tree


class StepFunction:
    """f(step) -> float from a registered function name or a whitelisted arithmetic expression.

    Its only attribute is the source text, so torch schedulers store it in `state_dict()` as a plain
    string (loadable with torch.load(weights_only=True)); the parsed tree is cached by source."""

    def __init__(self, source: str):
        if not isinstance(source, str):
            raise ConfigError(f"expected a function name or an expression in 'step', got {type(source).__name__} "
                              f"{show(source)}")
        self.source = source.strip()
        if self.source not in STEP_FUNCTIONS:
            _parse(self.source)

    def __call__(self, step: int | float) -> float:
        if self.source in STEP_FUNCTIONS:
            return float(STEP_FUNCTIONS[self.source](step))
        try:
            return _value(_parse(self.source), step)
        except ValueError as exc:  # a step the read-time check did not sample: a clear error, not an OverflowError
            raise ConfigError(f"step expression {show(self.source)} cannot be used: {exc}") from None

    def __repr__(self) -> str:
        return f"StepFunction({self.source!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StepFunction) and other.source == self.source

    def __hash__(self) -> int:
        return hash(self.source)

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["source"])

"""The optimizer test matrix's cases: one `Case` per first-party registry entry, one module per family.

A case names the entry and the options that exercise it (weight decay, momentum, flags); the
behaviour tests in test_optimizer_matrix.py run every case (resume, groups, closures, state dicts,
dtypes, maximize, bad input, and the eager / foreach / fused executions). Adding an optimizer to a
dialect adds its case to the family's module here; a case that gives `reference` (a numpy function of
the documented formula) is also checked against it, number by number.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping


@dataclass(frozen=True)
class Case:
    """name: the qualified registry name (`cerebras.AdamW`); options: what the optimizer is built with
    (an `lr` that moves the weights visibly in a few steps); group: the options of a second param group;
    sparse: whether the entry takes sparse gradients; bias: whether the model has biases; id: a suffix when one entry has several cases;
    reference: a numpy function of the documented formula, `fn(w, g, state, [t,] **options)` -> the new w (state: a
    dict it keeps between steps), which the matrix compares the optimizer with over two param groups (the first
    with `options`, the second with `group` on top) in float64; clock: what `t` is, None (no `t`), "global" (the
    optimizer-wide step) or "own" (the parameter's own step count)."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)
    group: Mapping[str, Any] = field(default_factory=dict)
    sparse: bool = False
    id: str = ""
    bias: bool = True
    reference: Callable[..., Any] | None = None
    clock: str | None = None

    @property
    def key(self) -> str:
        return self.name + (f"[{self.id}]" if self.id else "")


def all_cases() -> list[Case]:
    """Every case of every family module (each module has `CASES`)."""
    out: list[Case] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        out += importlib.import_module(f"{__name__}.{info.name}").CASES
    return out

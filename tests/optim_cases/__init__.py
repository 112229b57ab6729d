"""The optimizer test matrix's cases: one `Case` per first-party registry entry, one module per family.

A case names the entry and the options that exercise it (weight decay, momentum, flags); the
behaviour tests in test_optimizer_matrix.py run every case (resume, groups, closures, state dicts,
dtypes, maximize, bad input, and the eager / foreach / fused executions). Adding an optimizer to a
dialect adds its case to the family's module here.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class Case:
    """name: the qualified registry name (`cerebras.AdamW`); options: what the optimizer is built with
    (an `lr` that moves the weights visibly in a few steps); group: the options of a second param group;
    sparse: whether the entry takes sparse gradients; bias: whether the model has biases; id: a suffix when one entry has several cases."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)
    group: Mapping[str, Any] = field(default_factory=dict)
    sparse: bool = False
    id: str = ""
    bias: bool = True

    @property
    def key(self) -> str:
        return self.name + (f"[{self.id}]" if self.id else "")


def all_cases() -> list[Case]:
    """Every case of every family module (each module has `CASES`)."""
    out: list[Case] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        out += importlib.import_module(f"{__name__}.{info.name}").CASES
    return out

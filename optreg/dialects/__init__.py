"""Dialects: a framework's vocabulary of optimizers and schedulers, one package per dialect.

Each package `optreg.dialects.<name>` declares `DIALECT` (an `optreg.core.dialect.Dialect`: its rows, `ROWS`, and
every way it extends planning). `BUILTIN` is the built-in set, in listing order; the registry reads each package's
`DIALECT` on first lookup, then plugins. A plugin adds a dialect through the `optreg.dialects` entry-point group:
the entry point's name is the dialect's name and it points at a module exposing the same `DIALECT` object (or
only `ROWS`, with optionally `DIALECT = "<name>"`).

The last three are installed libraries read as dialects (`Dialect.library`): their rows come from the library's
classes when a name of the dialect is first looked up; timm's optimizer classes join the timm dialect the same way.

`import optreg` imports nothing here.
"""

from __future__ import annotations

import importlib
from typing import Any

BUILTIN: tuple[str, ...] = ("torch", "oneflow", "cerebras", "mindspore", "mindspore_experimental", "mindspore_mint", "hf",
                            "timm", "nemo", "deepspeed", "mmengine", "pytorch_optimizer", "torchao", "bitsandbytes")

PLUGIN_GROUP = "optreg.dialects"


def rows(name: str) -> list[Any]:
    """The rows of the built-in dialect `name` (`optreg.dialects.<name>.DIALECT.rows`)."""
    if name not in BUILTIN:
        raise KeyError(f"{name!r} is not a built-in dialect; built-in: {', '.join(BUILTIN)}")
    return list(importlib.import_module(f"{__name__}.{name}").DIALECT.rows)


def counts() -> dict[str, tuple[int, int]]:
    """Each built-in framework dialect's number of (optimizers, schedulers), in listing order: the README's dialect
    table (a dialect that is only an installed library's classes, read from it when asked, is not counted; timm's own
    schedulers are)."""
    out = {}
    for name in BUILTIN:
        declared = importlib.import_module(f"{__name__}.{name}").DIALECT
        if declared.library is not None and not declared.rows:
            continue
        kinds = [row.kind for row in rows(name)]
        out[name] = (kinds.count("optimizer"), kinds.count("scheduler"))
    return out

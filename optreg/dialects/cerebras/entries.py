"""The cerebras dialect's optimizer entries: one row per optimizer; each class (with its chain) lives in
the family module beside this file. Targets are strings, so that reading the registry imports no torch."""

from __future__ import annotations

from optreg.core.entry import optimizer  # noqa: F401

ROWS = [
    # -- adam family --
    # -- sgd family --
    # -- adagrad_rmsprop family --
    # -- lamb family --
]

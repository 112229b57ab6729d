"""Adds the dialect `mydialect` with one optimizer, `X` (plain SGD under its own name), through the
`optreg.dialects` entry point: the same declared Dialect object as a built-in dialect package's."""

from __future__ import annotations

import torch

from optreg.core.dialect import Dialect
from optreg.core.entry import optimizer
from optreg.core.types import number

NAME = "mydialect"


class X(torch.optim.SGD):
    """SGD under another name: w -= lr·g."""

    def __init__(self, params, lr: float = 0.1):
        super().__init__(params, lr=lr)


# the range X's own code needs (lr > 0, at most 10), declared on its row: a config outside it is a ConfigError
ROWS = [optimizer(NAME, "X", "optreg_dialectplugin:X", "SGD under another name.", source="optreg-dialectplugin 0.1",
                  types={"lr": number(gt=0, le=10)})]

DIALECT = Dialect(NAME, ROWS, "a test dialect: SGD under another name")

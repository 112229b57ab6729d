"""The mindspore_mint dialect: MindSpore 2.10's mindspore.mint.optim, a sub-dialect of MindSpore's whose rows
live in optreg/dialects/mindspore/experimental.py."""

from __future__ import annotations

from optreg.core.dialect import Dialect
from optreg.dialects.mindspore.experimental import mint_rows

ROWS = mint_rows()

DIALECT = Dialect("mindspore_mint", ROWS, "MindSpore 2.10 (mindspore.mint.optim)",
                  paths={"optimizer": ("mindspore.mint.optim",)})

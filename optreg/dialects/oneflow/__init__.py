"""The oneflow dialect: OneFlow (oneflow.optim): its own schedulers, and torch forms under OneFlow's names.

`ROWS` holds every entry of the dialect: its optimizers (`entries.py`, classes in the family modules) and its
schedulers (`schedulers.py`; closed forms in `schedules.py`).
"""

from __future__ import annotations

from optreg.core.dialect import Dialect

from optreg.dialects.oneflow.schedulers import ROWS as SCHEDULER_ROWS

from optreg.dialects.oneflow.entries import ROWS as OPTIMIZER_ROWS  # noqa: E402

ROWS = [*OPTIMIZER_ROWS, *SCHEDULER_ROWS]

DIALECT = Dialect("oneflow", ROWS, "OneFlow (oneflow.optim)",
                  paths={"optimizer": ("oneflow.optim",), "scheduler": ("oneflow.optim.lr_scheduler",)},
                  option_aliases={"last_step": "last_epoch"})

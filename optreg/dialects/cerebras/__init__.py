"""The cerebras dialect: Cerebras Model Zoo (cerebras.pytorch.optim).

`ROWS` holds every entry of the dialect: its optimizers (`entries.py`, classes in the family modules) and its schedulers (`schedulers.py`; closed forms in `schedules.py`).
"""

from __future__ import annotations

from optreg.dialects.cerebras.schedulers import ROWS as SCHEDULER_ROWS

from optreg.dialects.cerebras.entries import ROWS as OPTIMIZER_ROWS  # noqa: E402

ROWS = [*OPTIMIZER_ROWS, *SCHEDULER_ROWS]

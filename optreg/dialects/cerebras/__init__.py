"""The cerebras dialect: Cerebras Model Zoo (cerebras.pytorch.optim).

`ROWS` holds every entry of the dialect (its schedulers for now); `schedules` has the closed forms.
"""

from __future__ import annotations

from optreg.dialects.cerebras.schedulers import ROWS as SCHEDULER_ROWS

from optreg.dialects.cerebras.entries import ROWS as OPTIMIZER_ROWS  # noqa: E402

ROWS = [*OPTIMIZER_ROWS, *SCHEDULER_ROWS]

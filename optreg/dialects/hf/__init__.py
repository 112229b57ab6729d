"""The hf dialect: HF transformers: `get_scheduler` names.

`ROWS` holds every entry of the dialect (schedulers only); `schedules` has the closed forms.
"""

from __future__ import annotations

from optreg.core.dialect import Dialect

from optreg.dialects.hf.schedulers import ROWS as SCHEDULER_ROWS

ROWS = [*SCHEDULER_ROWS]

DIALECT = Dialect("hf", ROWS, "HF transformers' get_scheduler")

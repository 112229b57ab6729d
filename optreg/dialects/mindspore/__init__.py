"""The mindspore dialect: MindSpore (mindspore.nn): its learning-rate schedules.

`ROWS` holds every entry of the dialect (its schedulers for now); `schedules` has the closed forms.
"""

from __future__ import annotations

from optreg.dialects.mindspore.schedulers import ROWS as SCHEDULER_ROWS

ROWS = [*SCHEDULER_ROWS]

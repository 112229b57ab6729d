"""The timm dialect: timm: timm.scheduler's cycle schedulers.

`ROWS` holds every entry of the dialect (schedulers only); `schedules` has the closed forms.
"""

from __future__ import annotations

from optreg.core.dialect import Dialect

from optreg.dialects.timm.schedulers import ROWS as SCHEDULER_ROWS

ROWS = [*SCHEDULER_ROWS]

DIALECT = Dialect("timm", ROWS, "timm.scheduler")

"""The nemo dialect: NeMo: the AVAILABLE_SCHEDULERS policies.

`ROWS` holds every entry of the dialect (schedulers only); `schedules` has the closed forms.
"""

from __future__ import annotations

from optreg.core.dialect import Dialect
from optreg.dialects.nemo.schedulers import ROWS as SCHEDULER_ROWS
from optreg.dialects.torch import closed_form

ROWS = [*SCHEDULER_ROWS]

DIALECT = Dialect("nemo", ROWS, "NeMo's AVAILABLE_SCHEDULERS",
                  paths={"scheduler": ("nemo.core.optim.lr_scheduler",)},
                  closed_forms=closed_form)   # its StepLR, ExponentialLR, CyclicLR are torch's classes

"""The deepspeed dialect: DeepSpeed's lr schedules (the `scheduler.type` names of a ds_config) and its own
optimizer kernels whose update no other row computes (Lion).

`ROWS` holds every entry of the dialect (the other optimizers a ds_config names are torch's, read by the
`deepspeed` config format in `optreg/readers/deepspeed.py`); `schedules` has the closed forms.
"""

from __future__ import annotations

from optreg.core.dialect import Dialect

from optreg.dialects.deepspeed.entries import ROWS as OPTIMIZER_ROWS
from optreg.dialects.deepspeed.schedulers import ROWS as SCHEDULER_ROWS

ROWS = [*OPTIMIZER_ROWS, *SCHEDULER_ROWS]

DIALECT = Dialect("deepspeed", ROWS, "DeepSpeed's lr_schedules and Lion kernels",
                  paths={"optimizer": ("deepspeed.ops.lion",), "scheduler": ("deepspeed.runtime.lr_schedules",)})

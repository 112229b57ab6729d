"""The deepspeed dialect: DeepSpeed's lr schedules (the `scheduler.type` names of a ds_config).

`ROWS` holds every entry of the dialect (schedulers only; DeepSpeed's optimizers are torch's, read by the
`deepspeed` config format in `config`); `schedules` has the closed forms.
"""

from __future__ import annotations

from optreg.core.dialect import Dialect

from optreg.dialects.deepspeed.schedulers import ROWS as SCHEDULER_ROWS

ROWS = [*SCHEDULER_ROWS]

DIALECT = Dialect("deepspeed", ROWS, "DeepSpeed's lr_schedules",
                  paths={"scheduler": ("deepspeed.runtime.lr_schedules",)})

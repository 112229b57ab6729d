"""The mmengine dialect: MMEngine's `param_scheduler` list as one scheduler, `mmengine.ParamSchedulers`.

`ROWS` holds its entry (MMEngine's optimizers are torch's, read by the `mmengine` config format in
`optreg.readers.mmengine`); `param_scheduler` reads and checks the list's entries, `schedules` has the schedule.
"""

from __future__ import annotations

from optreg.core.dialect import Dialect

from optreg.dialects.mmengine.schedulers import ROWS as SCHEDULER_ROWS

ROWS = [*SCHEDULER_ROWS]

DIALECT = Dialect("mmengine", ROWS, "MMEngine 0.10's param_scheduler list")

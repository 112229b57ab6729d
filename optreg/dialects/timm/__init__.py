"""The timm dialect: timm.scheduler's cycle schedulers, and the optimizer classes of the installed `timm.optim`.

`ROWS` holds the schedulers (closed forms in `schedules`); the optimizers (`timm.optim.Lion`, `timm.Adan`, ...) are
timm's classes, read from their signatures when a timm optimizer is first looked up (timm's factory strings such as
`lion` are not names here: the class is). Their ranges are left to the constructors (a build error names the class).
"""

from __future__ import annotations

from optreg.core.dialect import Dialect
from optreg.core.library import Library

from optreg.dialects.timm.schedulers import ROWS as SCHEDULER_ROWS

ROWS = [*SCHEDULER_ROWS]

LIBRARY = Library("timm", "timm.optim", spelled="optim.")

DIALECT = Dialect("timm", ROWS, "timm.scheduler and the installed timm.optim", library=LIBRARY)

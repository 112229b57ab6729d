"""The mindspore dialect: MindSpore (mindspore.nn): its learning-rate schedules.

`ROWS` holds every entry of the dialect: its optimizers (`entries.py`, classes in the family modules) and its
schedulers (`schedulers.py`; closed forms in `schedules.py`), with MindFormers' lr schedules (`mindformers/rows.py`).
"""

from __future__ import annotations

from optreg.core.dialect import Dialect
from optreg.dialects.mindspore import groups
from optreg.dialects.mindspore.vocabulary import BIND, BIND_DECAY_ALL, BIND_FTRL

from optreg.dialects.mindspore.schedulers import ROWS as SCHEDULER_ROWS

from optreg.dialects.mindspore.entries import ROWS as OPTIMIZER_ROWS  # noqa: E402
from optreg.dialects.mindspore.mindformers.rows import ROWS as MINDFORMERS_ROWS  # noqa: E402

ROWS = [*OPTIMIZER_ROWS, *SCHEDULER_ROWS, *MINDFORMERS_ROWS]

DIALECT = Dialect("mindspore", ROWS, "MindSpore (mindspore.nn)",
                  paths={"optimizer": ("mindspore.nn",), "scheduler": ("mindspore.nn",)},
                  group_binders={BIND: groups.bind, BIND_DECAY_ALL: groups.bind_decay_all,
                                 BIND_FTRL: groups.bind_ftrl},
                  group_keys=groups.OWN_KEYS,
                  option_aliases={"learning_rate": "lr", "epsilon": "eps", "use_nesterov": "nesterov"})

"""The mindspore_experimental dialect: MindSpore 2.10's mindspore.experimental.optim and its lr_scheduler, a
sub-dialect of MindSpore's whose rows live in optreg/dialects/mindspore/experimental.py."""

from __future__ import annotations

from optreg.core.dialect import Dialect
from optreg.dialects.torch import closed_form
from optreg.dialects.mindspore.experimental import experimental_rows

ROWS = experimental_rows()

DIALECT = Dialect("mindspore_experimental", ROWS, "MindSpore 2.10 (mindspore.experimental.optim)",
                  paths={"optimizer": ("mindspore.experimental.optim",),
                         "scheduler": ("mindspore.experimental.optim.lr_scheduler",)},
                  closed_forms=closed_form)   # its schedulers are torch's classes

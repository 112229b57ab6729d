"""The torchao dialect: the low-bit optimizers of the installed `torchao.optim` (AdamW8bit, Adam4bit, AdamWFp8,
...), named as torchao spells them (`torchao.optim.AdamW8bit`; `torchao.AdamW8bit` too), read on first use.

Ranges: the checks of torchao 0.18's `_AdamBase.__init__` (torchao/optim/adam.py): lr >= 0, eps >= 0 and each beta
in [0, 1); and block_size >= 1, which the constructor takes but the first step divides by (`numel % block_size`:
ZeroDivisionError for 0, a negative size below it). `CPUOffloadOptimizer` wraps an optimizer class and is not a row.
"""

from __future__ import annotations

from optreg.core.dialect import Dialect
from optreg.core.library import Library, interval

CHECKS = {"lr": {"ge": 0.0}, "eps": {"ge": 0.0}, "betas": [interval(0.0, 1.0)] * 2, "block_size": {"ge": 1}}

LIBRARY = Library("torchao", "torchao.optim", spelled="optim.", checks=lambda cls: CHECKS,
                  skip=("CPUOffloadOptimizer",),
                  notes=("torchao quantizes the state of a parameter with at least 4096 elements (and whose size "
                         "is a multiple of block_size); smaller ones keep float32 state.",))

DIALECT = Dialect("torchao", (), "the low-bit optimizers of the installed torchao.optim", library=LIBRARY)

"""The pytorch_optimizer dialect: every optimizer the installed pytorch_optimizer lists in
`get_supported_optimizers()`, as its class (`pytorch_optimizer.Lion`), read when a name of the dialect is first
looked up. Ranges are the checks each constructor makes through its BaseOptimizer's `validate_*` methods
(pytorch_optimizer 4.x), read from the constructor's code (`optreg.core.library.validator_checks`).

Options a class takes only through `**kwargs` (pytorch_optimizer's shared extras) are not options here: a config
names the class's own parameters.
"""

from __future__ import annotations

from typing import Any

from optreg.core.dialect import Dialect
from optreg.core.library import Library, validator_checks


def supported(module: Any) -> list[tuple[str, type]]:
    """(class name, class) of each name `get_supported_optimizers()` lists, through `load_optimizer`."""
    classes = [module.load_optimizer(name) for name in module.get_supported_optimizers()]
    return [(cls.__name__, cls) for cls in classes]


LIBRARY = Library("pytorch_optimizer", "pytorch_optimizer", classes=supported, checks=validator_checks)

DIALECT = Dialect("pytorch_optimizer", (), "the optimizers of the installed pytorch_optimizer", library=LIBRARY)

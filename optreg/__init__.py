"""optreg: a declarative, config-driven registry of PyTorch optimizers and learning-rate schedulers.

The public names are imported on first use, so `import optreg` loads neither torch, Pydantic nor Hydra.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from optreg.errors import ConfigError, ConfigWarning, ErrorItem, Location

__version__ = "0.1.0"

_LAZY = {
    "configure_optimizer": "optreg.core.build",
    "configure_lr_scheduler": "optreg.core.build",
    "optimizer_class": "optreg.core.bound",
    "load_config": "optreg.config.experiment",
    "Experiment": "optreg.config.experiment",
    "build": "optreg.api",
    "Built": "optreg.api",
    "list_optimizers": "optreg.core.describe",
    "list_schedulers": "optreg.core.describe",
    "describe": "optreg.core.describe",
    "register_optimizer": "optreg.core.registry",
    "register_scheduler": "optreg.core.registry",
    "register_step_function": "optreg.config.expr",
    "formats": "optreg.config.formats",
}

__all__ = ["ConfigError", "ConfigWarning", "ErrorItem", "Location", "__version__", "json_schema", *_LAZY]


def json_schema() -> dict[str, Any]:
    """JSON Schema (draft-07) of the experiment config, covering every registered component."""
    return import_module("optreg.config.json_schema").experiment_schema()


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'optreg' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # pragma: no cover
    from optreg.api import Built, build
    from optreg.core.bound import optimizer_class
    from optreg.core.build import configure_lr_scheduler, configure_optimizer
    from optreg.core.describe import describe, list_optimizers, list_schedulers
    from optreg.core.registry import register_optimizer, register_scheduler
    from optreg.config.experiment import Experiment, load_config
    from optreg.config.formats import formats

"""Hydra SearchPathPlugin: optreg's config groups, and those of optreg plugins, for every Hydra app.

Hydra imports this module on every app start, so it imports neither optreg nor torch: `importlib.metadata` is
enough to read the `optreg.hydra_conf` entry points (name = a package holding `optimizer/` and `scheduler/`).
"""

from __future__ import annotations

import re
import warnings
from importlib.metadata import entry_points

from hydra.core.config_search_path import ConfigSearchPath
from hydra.plugins.search_path_plugin import SearchPathPlugin

CONF_GROUP = "optreg.hydra_conf"
_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def plugin_conf_packages() -> list[tuple[str, str]]:
    """(entry-point name, package) for every `optreg.hydra_conf` entry point; a malformed one warns."""
    out = []
    for ep in sorted(entry_points(group=CONF_GROUP), key=lambda e: e.name):
        if _MODULE.match(ep.value.strip()):
            out.append((ep.name, ep.value.strip()))
        else:
            warnings.warn(f"optreg Hydra config entry point {ep.name!r} = {ep.value!r} is not a package name; "
                          f"ignored", RuntimeWarning, stacklevel=2)
    return out


class OptregSearchPathPlugin(SearchPathPlugin):
    """Appends `pkg://optreg.configs` and each plugin's config package: the app's own configs come first."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        search_path.append(provider="optreg", path="pkg://optreg.configs")
        for name, package in plugin_conf_packages():
            search_path.append(provider=f"optreg-plugin-{name}", path=f"pkg://{package}")

"""OmegaConf/Hydra configs -> plain containers, with `???` and broken interpolations as ConfigError."""

from __future__ import annotations

from typing import Any

from optreg.errors import Collector, ConfigError


def container_from_omegaconf(cfg: Any) -> Any:
    """Resolve interpolations and convert to plain dicts/lists; every missing value is reported."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    errors = Collector()
    for key in OmegaConf.missing_keys(cfg):
        errors.add(key, "missing value (???): set it in the config or with an override")
    errors.raise_if_any()
    try:
        return OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    except OmegaConfBaseException as exc:
        path = getattr(exc, "full_key", "") or ""
        raise ConfigError(f"cannot resolve: {getattr(exc, 'msg', exc)}", path) from None

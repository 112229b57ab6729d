"""Command-line overrides on top of a YAML config: `optimizer.lr=1e-3`, `train.steps=50`."""

from __future__ import annotations

import copy
import re
from typing import Any, Sequence

from optreg.errors import Collector

_INDEX = re.compile(r"^(.*)\[(\d+)\]$")


def _parts(path: str) -> list[str | int]:
    out: list[str | int] = []
    for piece in path.split("."):
        indices = []
        while (m := _INDEX.match(piece)) is not None:
            piece, index = m.group(1), int(m.group(2))
            indices.insert(0, index)
        out.append(piece)
        out += indices
    return out


def apply_overrides(data: Any, overrides: Sequence[str]) -> Any:
    """A copy of `data` with each `dotted.key=value` set; values are parsed with the hardened YAML loader."""
    from optreg.schemas.yaml_loader import load_yaml

    errors = Collector()
    data = copy.deepcopy(data) if data is not None else {}
    for text in overrides:
        key, eq, raw = text.partition("=")
        if not eq or not key:
            errors.add(text, "override must look like key.path=value")
            continue
        value, _ = load_yaml(raw, f"<override {key}>") if raw.strip() else (None, None)
        node = data
        parts = _parts(key.lstrip("+"))
        for part in parts[:-1]:
            if isinstance(node, dict):
                node = node.setdefault(part, {})
            elif isinstance(node, list) and isinstance(part, int) and part < len(node):
                node = node[part]
            else:
                errors.add(key, f"cannot set {key!r}: {part!r} is not a mapping key or list index here")
                break
        else:
            last = parts[-1]
            if isinstance(node, list) and isinstance(last, int) and last < len(node):
                node[last] = value
            elif isinstance(node, dict):
                node[last] = value
            else:
                errors.add(key, f"cannot set {key!r}")
    errors.raise_if_any()
    return data

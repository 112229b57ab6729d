"""ConfigError: the one exception type that bad configuration input raises."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterable, Sequence


@dataclass(frozen=True)
class Location:
    """A position in a YAML source (1-based line and column)."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class ErrorItem:
    """One problem: where it is (`path`, `location`), what is wrong, and a close match if any."""

    path: str
    message: str
    location: Location | None = None
    suggestion: str | None = None

    def __str__(self) -> str:
        text = f"{self.path}: {self.message}" if self.path else self.message
        if self.suggestion and "did you mean" not in self.message:
            text += f" (did you mean {self.suggestion!r}?)"
        return f"{self.location}: {text}" if self.location else text

    # Tuple-like access: (path, message, location, suggestion).
    def __iter__(self):
        return iter((self.path, self.message, self.location, self.suggestion))


class ConfigError(ValueError):
    """Raised for every bad configuration input; `.errors` lists every problem found."""

    def __init__(self, errors: Iterable[ErrorItem] | str, path: str = ""):
        if isinstance(errors, str):
            errors = [ErrorItem(path, errors)]
        self.errors: list[ErrorItem] = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))

    def located(self, locate) -> "ConfigError":
        """A copy whose items carry `locate(path)` when they have no location yet."""
        return ConfigError(
            ErrorItem(e.path, e.message, e.location or locate(e.path), e.suggestion) for e in self.errors
        )

    def prefixed(self, prefix: str) -> "ConfigError":
        """A copy whose paths are nested under `prefix` (`optimizer` + `lr` -> `optimizer.lr`)."""
        return ConfigError(
            ErrorItem(join_path(prefix, e.path), e.message, e.location, e.suggestion) for e in self.errors
        )


def join_path(prefix: str, key: str | int) -> str:
    """`a` + `b` -> `a.b`; `a` + 1 -> `a[1]`; empty parts vanish."""
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    if not prefix:
        return key
    if not key:
        return prefix
    return f"{prefix}[{key[1:]}" if key.startswith("[") else f"{prefix}.{key}"


def closest(word: str, candidates: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The candidate closest to `word` (difflib), compared case-insensitively, or None."""
    pool = {c.lower(): c for c in candidates}
    hits = difflib.get_close_matches(str(word).lower(), list(pool), n=1, cutoff=cutoff)
    return pool[hits[0]] if hits else None


class Collector:
    """Gathers ErrorItems while validating so that every problem is reported at once."""

    def __init__(self) -> None:
        self.items: list[ErrorItem] = []

    def add(self, path: str, message: str, suggestion: str | None = None) -> None:
        self.items.append(ErrorItem(path, message, None, suggestion))

    def extend(self, error: ConfigError | Sequence[ErrorItem], prefix: str = "") -> None:
        items = error.errors if isinstance(error, ConfigError) else error
        self.items.extend(ConfigError(items).prefixed(prefix).errors if prefix else items)

    def raise_if_any(self) -> None:
        if self.items:
            raise ConfigError(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

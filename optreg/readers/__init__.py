"""Readers of other libraries' config files, one package per library, each registered as a config format in
optreg.config.formats.BUILTIN (not named `formats`: `optreg.formats` is the public function listing them).

A reader that translates a file into optreg's own form plans it with optreg's own planner; `renamed` puts the
errors of that plan back at the source file's paths (optreg's `scheduler.x` is NeMo's `model.optim.sched.x`)."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence


def source_path(path: str, table: Sequence[tuple[str, str]]) -> str:
    """`path` of optreg's own form at the source's path: the first (own prefix, source prefix) of `table` that
    starts it, replaced."""
    for own, theirs in table:
        if path == own or path.startswith(own + ".") or path.startswith(own + "["):
            return theirs + path[len(own):]
    return path


def renamed(error: Any, table: Sequence[tuple[str, str]], source: Any = None) -> Any:
    """A ConfigError of the translated experiment at the source's paths (and positions, given its `source`)."""
    from optreg.errors import ConfigError

    out = ConfigError([dataclasses.replace(e, path=source_path(e.path, table), location=None) for e in error.errors])
    return out.located(source) if source else out


def plan_renamed(experiment: Any, model: Any, table: Sequence[tuple[str, str]]) -> Any:
    """optreg's own plan of a translated experiment, its errors and the schedule linter's notes at the source's
    paths."""
    from optreg.config.experiment import plan_own
    from optreg.errors import ConfigError

    try:
        result = plan_own(experiment, model)
    except ConfigError as exc:
        raise renamed(exc, table) from None
    result.notes = [note_renamed(n, table) for n in result.notes]
    return result


def note_renamed(note: str, table: Sequence[tuple[str, str]]) -> str:
    """A linter's note (`scheduler: ...`), its leading path the source's."""
    path, colon, rest = note.partition(": ")
    return source_path(path, table) + colon + rest if colon and " " not in path else note


__all__ = ["source_path", "renamed", "plan_renamed", "note_renamed"]

"""ConfigError: the one exception type that bad configuration input raises."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

MAX_DEPTH = 32            # containers nested in one config (a `sequential` level is two: the mapping and its list)
MAX_INT_BITS = 1023       # integers below 2**1023 convert to float; larger ones are typos that float() overflows on
SHOW_LIMIT = 60           # characters of a user value quoted in a message


@dataclass(frozen=True)
class Location:
    """A position in a YAML source (1-based line and column; 0 when the problem is the whole file)."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}" if self.line else self.file

    @property
    def places(self) -> bool:
        """Whether it says where a key was set (a line of the file), not only which file the key is of."""
        return bool(self.line)


@dataclass(frozen=True)
class FileLocation(Location):
    """Where a key of a file whose keys have no positions is (a config its library's loader ran: MMEngine's
    `Config.fromfile`): the file, which sets it, at no line."""

    places = True   # the file sets the key; its loader does not say where


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
            text += f" (did you mean {show(self.suggestion)}?)"
        return f"{self.location}: {text}" if self.location else text

    # Tuple-like access: (path, message, location, suggestion).
    def __iter__(self):
        return iter((self.path, self.message, self.location, self.suggestion))


#: how a message that a key is absent begins (`required option is missing`, `required: the scheduler's name`)
REQUIRED = "required"


def says_required(message: str) -> bool:
    """Whether `message` says that its key is required (absent, or not what the key must hold)."""
    return message.startswith(REQUIRED)


def _explained(items: list[ErrorItem]) -> list[ErrorItem]:
    """`items` less each required key that a misspelt key beside it explains: a key of the same mapping whose
    did-you-mean names it (`step_sizee` beside StepLR's missing `step_size` is one error, the misspelling's)."""
    named = {(e.path.rpartition(".")[0], e.suggestion) for e in items
             if e.suggestion and e.path.rpartition(".")[2] != e.suggestion}
    if not named:
        return items
    return [e for e in items if not (says_required(e.message) and e.path.rpartition(".")[::2] in named)]


class ConfigError(ValueError):
    """Raised for every bad configuration input; `.errors` lists every problem found, a required key that a
    misspelling beside it explains left out (`_explained`)."""

    def __init__(self, errors: Iterable[ErrorItem] | str, path: str = ""):
        if isinstance(errors, str):
            errors = [ErrorItem(path, errors)]
        self.errors: list[ErrorItem] = _explained(list(errors))
        super().__init__("\n".join(str(e) for e in self.errors))

    def located(self, locate) -> "ConfigError":
        """A copy whose items carry `locate(path)` when they have no location yet (itself when `locate` is None: a
        config that was not read from a file, or whose reader located its errors itself)."""
        if locate is None:
            return self
        return ConfigError(
            ErrorItem(e.path, e.message, e.location or locate(e.path), e.suggestion) for e in self.errors
        )

    def prefixed(self, prefix: str) -> "ConfigError":
        """A copy whose paths are nested under `prefix` (`optimizer` + `lr` -> `optimizer.lr`)."""
        return ConfigError(
            ErrorItem(join_path(prefix, e.path), e.message, e.location, e.suggestion) for e in self.errors
        )


class ConfigWarning(UserWarning):
    """A note on a config: probably a mistake, not an error (the schedule linter's, optreg.core.lint; a param_groups
    rule of frozen parameters only, optreg.core.groups.frozen_rule_note; a reader's on a key of the file it reads,
    `warn_at`). `note` begins with the key path it is about (a reader's: says it); `location` is where the file
    writes that key (None: not from a file, or not written there). Its text is `file:line:column: note` where there
    is a location."""

    def __init__(self, note: str, location: Location | None = None) -> None:
        super().__init__(f"{location}: {note}" if location is not None else note)
        self.note = note
        self.location = location


def placed(locate: Callable[[str], Location | None] | None, path: str) -> Location | None:
    """Where a file writes the key at `path`, as `locate` (a reader's source: the path -> its Location) says it; None:
    no file, or a key the file does not write."""
    where = locate(path) if locate is not None else None
    return where if where is not None and where.places else None


def warn_at(note: str, path: str, locate: Callable[[str], Location | None] | None, stacklevel: int = 2) -> None:
    """A reader's warning on the key at `path` of the file it reads (`locate`: its source), at that key's position
    where the file writes it, as an error there is (`ConfigWarning`); `stacklevel` as warnings.warn's, from the
    caller."""
    import warnings

    warnings.warn(ConfigWarning(note, placed(locate, path)), stacklevel=stacklevel + 1)


def outside_stacklevel() -> int:
    """The `stacklevel` for a `warnings.warn` in the function that calls this one that names the first frame outside
    optreg: the user's call, however deep in optreg the warning is made (`configure_optimizer(unknown_keys="warn")`
    warns in validation, under planning or a dialect's reading of the call)."""
    import sys

    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "optreg":
        frame, level = frame.f_back, level + 1
    return level


def join_path(prefix: str, key: Any) -> str:
    """`a` + `b` -> `a.b`; `a` + 1 -> `a[1]`; empty parts vanish; any other key (a mapping's 1.5, None, True, as a
    user's config has them) as `key_text` writes it."""
    if isinstance(key, int) and not isinstance(key, bool):
        return f"{prefix}[{key}]"
    if not isinstance(key, str):
        key = key_text(key)
    if not prefix:
        return key
    if not key:
        return prefix
    return f"{prefix}[{key[1:]}" if key.startswith("[") else f"{prefix}.{key}"


def first_few(items: Sequence[str], shown: int = 3) -> str:
    """`a, b, c and 2 more`: the first `shown` of `items`, and how many more (a model's hundred biases are named by
    their first few)."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """`number` with `noun` agreeing with it: `1 value`, `3 values`, `2 micro-batches` (`plural` where it is not
    the noun and an s)."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def closest(word: str, candidates: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The candidate closest to `word` (difflib), compared case-insensitively, or None."""
    word = key_text(word)
    if len(word) > 4 * SHOW_LIMIT:  # nothing registered is that long; difflib would only spend time
        return None
    pool = {c.lower(): c for c in candidates}
    hits = difflib.get_close_matches(word.lower(), list(pool), n=1, cutoff=cutoff)
    return pool[hits[0]] if hits else None


def unknown_name(path: str, framework: str, kind: str, name: Any, known: Iterable[str], listed: str = "") -> ErrorItem:
    """The one wording of a name a framework's config reader does not know: `unknown DeepSpeed scheduler 'X'`,
    `; listed` after it (what the framework takes), with the did-you-mean among `known`."""
    message = f"unknown {framework} {kind} {show(name)}" + (f"; {listed}" if listed else "")
    return ErrorItem(path, message, None, closest(str(name), known))


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


# ---------------------------------------------------------------------------------------------------
# bounded formatting of user values and one bounded walk over user input
# ---------------------------------------------------------------------------------------------------
def _show(value: Any, depth: int, budget: int) -> str:
    """repr() of `value`, at most `depth` containers deep and about `budget` characters long."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        bits = value.bit_length()
        if bits > 13_000:  # never build (or fail to build: 4300 digits) a huge decimal string
            return f"{'-' if value < 0 else ''}<integer of about {int(bits * 0.30103) + 1} digits>"
        return repr(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return repr(value[:budget + 1])
    if isinstance(value, (bytes, bytearray)):
        return repr(bytes(value[:budget + 1]))
    if isinstance(value, Mapping) or isinstance(value, (list, tuple)):
        is_map = isinstance(value, Mapping)
        open_, close = ("{", "}") if is_map else ("[", "]") if isinstance(value, list) else ("(", ")")
        if depth <= 0:
            return f"{open_}…{close}" if len(value) else f"{open_}{close}"
        parts: list[str] = []
        used = 0
        items = value.items() if is_map else value
        for i, item in enumerate(items):
            if used > budget or i >= 8:
                parts.append("…")
                break
            text = (f"{_show(item[0], depth - 1, budget // 2)}: {_show(item[1], depth - 1, budget // 2)}" if is_map
                    else _show(item, depth - 1, budget // 2))
            used += len(text) + 2
            parts.append(text)
        return open_ + ", ".join(parts) + close
    try:
        text = repr(value)
    except Exception:  # a user object whose repr fails must not hide the real error
        text = f"<{type(value).__name__}>"
    if "\n" in text:   # a repr of several lines (a tensor, a Module) on one, as a message is one line
        text = " ".join(text.split())
    return text[:budget + 1]


def show(value: Any, limit: int = SHOW_LIMIT) -> str:
    """A user value as a message quotes it: repr-like, never longer than about `limit` characters, never
    deeper than 3 levels, never raising (huge integers, deep nesting, broken __repr__). Every message that
    quotes a user value goes through here."""
    try:
        text = _show(value, 3, limit)
    except Exception:  # pragma: no cover - _show is written not to raise; this is the last guard
        text = f"<{type(value).__name__}>"
    if len(text) > limit:
        if isinstance(value, (str, bytes)):
            tail = f"…({len(value)} chars)"
        elif isinstance(value, (list, tuple, dict)):
            tail = f"…({len(value)} items)"
        elif isinstance(value, int):
            tail = f"…({len(text)} chars)"
        else:
            tail = "…"
        text = text[:max(limit - len(tail), 8)] + tail
    return text


def key_text(key: Any) -> str:
    """A mapping key as a path part: str() for names and small numbers, bounded for anything else."""
    if isinstance(key, str):
        return key if len(key) <= 4 * SHOW_LIMIT else show(key)
    if isinstance(key, (bool, float, type(None))) or isinstance(key, int) and key.bit_length() <= 64:
        return str(key)
    return show(key)


#: the error of a value left `???` (a template's blank, OmegaConf's MISSING), in every entry point
MISSING_VALUE = "missing value (???): set it in the config or with an override"


def check_input(data: Any, path: str = "", errors: "Collector | None" = None, *, skip: Sequence[str] = (),
                blanks: bool = True) -> None:
    """One bounded, iterative walk over raw user input before anything recurses over it or formats it:
    containers at most MAX_DEPTH deep, integers within float range, mapping keys that are names or
    small numbers. Problems go to `errors` (or raise ConfigError), each at its path. Keys in `skip` (e.g.
    `params`, which holds tensors) are not entered. `blanks`: a value left `???` is an error (off for a foreign
    format's sections: a NeMo model section leaves its dataset paths `???`, which are not optreg's to read)."""
    local = errors if errors is not None else Collector()
    stack: list[tuple[Any, str, int]] = [(data, path, 0)]
    while stack:
        value, where, depth = stack.pop()
        if isinstance(value, bool):
            continue
        if blanks and isinstance(value, str) and value == "???":   # a template's blank (`optreg show`, MISSING)
            local.add(where, MISSING_VALUE)
            continue
        if isinstance(value, int):
            if value.bit_length() > MAX_INT_BITS:
                local.add(where, f"must be <= 2**{MAX_INT_BITS} (beyond that no float holds it), got {show(value)}")
            continue
        if isinstance(value, Mapping):
            children = list(value.items())
        elif isinstance(value, (list, tuple)):
            children = list(enumerate(value))
        else:
            continue
        if depth >= MAX_DEPTH:
            local.add(where, f"nested too deeply (more than {MAX_DEPTH} levels)")
            continue
        is_map = isinstance(value, Mapping)
        for key, child in reversed(children):
            if is_map:
                if not isinstance(key, (str, int, float, bool, type(None))) or (
                        isinstance(key, int) and not isinstance(key, bool) and key.bit_length() > 64):
                    local.add(join_path(where, key_text(key)), f"a key must be a name, got {type(key).__name__} "
                                                                f"{show(key)}")
                    continue
                if key in skip:
                    continue
                here = join_path(where, key_text(key))
            else:
                here = join_path(where, key)
            stack.append((child, here, depth + 1))
    if errors is None:
        local.raise_if_any()

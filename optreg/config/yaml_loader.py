"""A hardened YAML loader that remembers where every value came from.

libyaml's event parser (PyYAML's pure-Python one without it) under a bounded composer; SafeLoader plus:
`1e-3` is a float, only true/false are booleans (`on`/`yes` stay strings), dates and base-60 numbers stay
strings, duplicate keys are errors, tags outside the safe set are refused, and the input is bounded before
anything expensive: size (1 MiB, checked before parsing), then while composing nesting depth, aliases (and
recursive ones), nodes and time, then alias expansion. Constructor failures (`!!float abc`) are errors at their
position like the others. Errors are ConfigError with `file:line:column`.
"""

from __future__ import annotations

import gc
import os
import re
import stat
import threading
import time
from pathlib import Path
from typing import Any, Callable

import yaml

from optreg.errors import MAX_DEPTH, ConfigError, ErrorItem, FileLocation, Location, join_path, key_text, show

MAX_BYTES = 1 << 20          # 1 MiB of YAML is far beyond any experiment config
MAX_NODES = 100_000          # nodes after alias expansion (a "billion laughs" document is refused)
MAX_ALIASES = 256
MAX_COMPOSED = 50_000        # nodes as written (an experiment config has dozens); bounds the time to read one
MAX_SECONDS = 0.75           # reading one document, in the reading thread's CPU time (`time.thread_time`: a busy
                             # machine or another thread holding the interpreter does not count) less its time in
                             # the garbage collector (`_reading_time`); checked every few hundred nodes while composing
MAX_DIGITS = 400             # a decimal integer literal longer than this is beyond float range anyway

_FLOAT = re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
    |[-+]?\.[0-9_]+(?:[eE][-+]?[0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""", re.X)
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
MERGE = "tag:yaml.org,2002:merge"   # `<<: *anchor`, as every framework's loader reads it (PyYAML's, OmegaConf's)


class _Collections(threading.local):
    """The CPU time this thread has spent in Python's garbage collector: a full collection that falls within a
    reading is the process's (1.3 s for 20M objects on a 2-core CPU; a test process that has compiled many graphs
    met it on a 92-line config), not the document's."""

    spent = 0.0
    began = 0.0


_COLLECTIONS = _Collections()


def _count_collection(phase: str, info: dict) -> None:
    if phase == "start":
        _COLLECTIONS.began = time.thread_time()
    else:
        _COLLECTIONS.spent += time.thread_time() - _COLLECTIONS.began


gc.callbacks.append(_count_collection)


def _reading_time() -> float:
    """The reading thread's CPU time less its time in the garbage collector: the clock of MAX_SECONDS."""
    return time.thread_time() - _COLLECTIONS.spent


class SpecLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2-style scalars and no duplicate keys; bounded while it composes (nesting
    depth, aliases, nodes, time: one pass, no pre-scan) and constructing (every constructor failure is a
    YAML error at the node's position, never a bare ValueError/KeyError)."""

    yaml_implicit_resolvers: dict = {}

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._limits()

    def _limits(self) -> None:
        self.deep_construct = True   # construct inside construct_object, so that errors carry their node
        self._depth = 0
        self._aliases = 0
        self._nodes = 0
        self._open: set[str] = set()     # anchors of the nodes being composed (an alias to one is a cycle)
        self._deadline = _reading_time() + MAX_SECONDS

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        self._nodes += 1
        if isinstance(event, yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise yaml.composer.ComposerError(None, None, f"YAML input uses more than {MAX_ALIASES} aliases",
                                                  event.start_mark)
            if event.anchor in self._open:
                raise yaml.composer.ComposerError(None, None, f"alias *{show(event.anchor)[1:-1]} is inside the node "
                                                  f"it names (a recursive structure)", event.start_mark)
        if self._depth > MAX_DEPTH:
            raise yaml.composer.ComposerError(None, None, f"YAML input is nested too deeply (more than {MAX_DEPTH} "
                                                          f"levels)", event.start_mark)
        if self._nodes > MAX_COMPOSED:
            raise yaml.composer.ComposerError(None, None, f"YAML input has more than {MAX_COMPOSED} nodes",
                                              event.start_mark)
        if self._nodes % 256 == 0 and _reading_time() > self._deadline:
            raise yaml.composer.ComposerError(None, None, f"YAML input takes longer than {MAX_SECONDS:g} s of CPU time "
                                                          f"to read", event.start_mark)
        anchor = getattr(event, "anchor", None) if not isinstance(event, yaml.AliasEvent) else None
        opened = anchor is not None and anchor not in self._open
        if opened:
            self._open.add(anchor)
        self._depth += 1
        try:
            return yaml.composer.Composer.compose_node(self, parent, index)
        finally:
            self._depth -= 1
            if opened:
                self._open.discard(anchor)

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return yaml.constructor.BaseConstructor.construct_object(self, node, deep=deep)
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, KeyError, IndexError, OverflowError, AttributeError) as exc:
            tag = str(node.tag).replace("tag:yaml.org,2002:", "!!")
            value = show(node.value) if isinstance(node, yaml.ScalarNode) else f"a {node.id}"
            reason = "" if isinstance(exc, (KeyError, IndexError)) else f" ({str(exc)[:80]})"
            raise yaml.constructor.ConstructorError(
                None, None, f"{value} is not a valid {tag} value{reason}", node.start_mark) from None

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        if not isinstance(node, yaml.MappingNode):
            raise yaml.constructor.ConstructorError(None, None, f"expected a mapping for {node.tag}, got a "
                                                    f"{type(node).__name__.removesuffix('Node').lower()}",
                                                    node.start_mark)
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == MERGE:   # `<<: *base`: its keys go under the explicit ones (flatten_mapping)
                continue
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool, type(None))):
                raise yaml.constructor.ConstructorError(
                    None, None, f"a mapping key must be a scalar, got {type(key).__name__}", key_node.start_mark)
            if key in seen:
                first = seen[key].start_mark
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {show(key)} (first at line {first.line + 1})", key_node.start_mark)
            seen[key] = key_node
        return yaml.constructor.SafeConstructor.construct_mapping(self, node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        text = self.construct_scalar(node)
        if len(text) > MAX_DIGITS:
            raise yaml.constructor.ConstructorError(None, None, f"integer literal of {len(text)} characters is too "
                                                    f"large", node.start_mark)
        if text.startswith("0o"):
            return int(text[2:], 8)
        return int(text, 0) if text.startswith("0x") else int(text, 10)


SpecLoader.yaml_implicit_resolvers = {}
for tag, pattern, first in (
    ("tag:yaml.org,2002:bool", _BOOL, list("tTfF")),
    ("tag:yaml.org,2002:int", _INT, list("-+0123456789")),
    ("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789.")),
    ("tag:yaml.org,2002:null", _NULL, ["~", "n", "N", ""]),
    (MERGE, re.compile(r"^<<$"), ["<"]),
):
    SpecLoader.add_implicit_resolver(tag, pattern, first)
SpecLoader.add_constructor("tag:yaml.org,2002:int", SpecLoader.construct_yaml_int)
SpecLoader.add_constructor("tag:yaml.org,2002:map", SpecLoader.construct_yaml_map)
# No timestamps, sets, binary or python tags: anything else is refused by SafeConstructor.
for tag in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:set", "tag:yaml.org,2002:binary",
            "tag:yaml.org,2002:omap", "tag:yaml.org,2002:pairs"):
    SpecLoader.yaml_constructors.pop(tag, None)
SpecLoader.yaml_constructors = {**SpecLoader.yaml_constructors}

try:  # libyaml's event parser (C) under the same composer, constructors and resolvers: same documents, same
    from yaml._yaml import CParser   # errors, several times faster; the pure-Python SpecLoader otherwise

    class CSpecLoader(yaml.composer.Composer, CParser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
        """SpecLoader's composing and constructing over libyaml's events."""

        yaml_implicit_resolvers = SpecLoader.yaml_implicit_resolvers
        yaml_constructors = SpecLoader.yaml_constructors
        compose_node = SpecLoader.compose_node
        construct_object = SpecLoader.construct_object
        construct_mapping = SpecLoader.construct_mapping
        construct_yaml_int = SpecLoader.construct_yaml_int
        get_single_node = yaml.composer.Composer.get_single_node

        def __init__(self, stream: Any) -> None:
            CParser.__init__(self, stream)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            yaml.composer.Composer.__init__(self)
            SpecLoader._limits(self)
except ImportError:  # pragma: no cover - PyYAML without libyaml
    CSpecLoader = None  # type: ignore[assignment,misc]


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    key = id(node)
    if key not in memo:
        memo[key] = 1  # cycle guard
        if isinstance(node, yaml.MappingNode):
            memo[key] = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            memo[key] = 1 + sum(_expanded_size(v, memo) for v in node.value)
    return memo[key]


class Source:
    """Where each path of a loaded document is: `locate("optimizer.betas[1]") -> Location`."""

    def __init__(self, name: str, marks: dict[str, yaml.Mark]):
        self.name = name
        self.marks = marks

    def exactly(self, path: str) -> Location | None:
        """Where `path` itself is written, or None when the document does not write it (no parent's position)."""
        return self(path) if path in self.marks else None

    def __call__(self, path: str) -> Location | None:
        while True:
            mark = self.marks.get(path)
            if mark is not None:
                return Location(self.name, mark.line + 1, mark.column + 1)
            if not path:
                return Location(self.name)   # not in the document (an empty one): the file still names it
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""


class RanSource(Source):
    """The source of a config file its library's loader ran (MMEngine's `Config.fromfile`, with its `_base_` files):
    its keys have no positions, and each is the file's, so every path is at the file (`FileLocation`), an error's
    and a note's alike."""

    def __init__(self, name: str):
        super().__init__(name, {})

    def __call__(self, path: str) -> Location | None:
        return FileLocation(self.name)


def _walk(node: yaml.Node, path: str, marks: dict[str, yaml.Mark], mark: yaml.Mark, key_of: Callable) -> None:
    """The position of each path under `node`; a key's path part is its value's (`key_of`: the constructed key) as
    errors name it (key_text: `true` is `True`, `null` is `None`, `0x10` is `16`)."""
    marks.setdefault(path, mark)
    if isinstance(node, yaml.MappingNode):
        merged = []
        for key_node, value_node in node.value:
            if key_node.tag == MERGE:
                merged += value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                continue
            key = key_text(key_of(key_node)) if isinstance(key_node, yaml.ScalarNode) else "?"
            _walk(value_node, join_path(path, key), marks, key_node.start_mark, key_of)
        for value_node in merged:   # a merged key is where its anchor writes it, unless the mapping writes it too
            _walk(value_node, path, marks, mark, key_of)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, join_path(path, i), marks, item.start_mark, key_of)


def _error(message: str, name: str, mark: yaml.Mark | None) -> ConfigError:
    """A problem of the document itself: its file (and position when known) name it."""
    where = Location(name, mark.line + 1, mark.column + 1) if mark is not None else Location(name)
    return ConfigError([ErrorItem("", message, where)])


def _reader_error(exc: yaml.reader.ReaderError, text: str, name: str) -> ConfigError:
    """A character YAML does not allow (NUL, other control characters), at its line and column."""
    position = exc.position
    if CSpecLoader is not None:  # libyaml counts bytes of the UTF-8 text, not characters
        position = len(text.encode("utf-8", "surrogatepass")[:position].decode("utf-8", "ignore"))
    position = max(0, min(position, len(text)))
    line = text.count("\n", 0, position)
    column = position - (text.rfind("\n", 0, position) + 1)
    character = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\0")
    return ConfigError([ErrorItem("", f"character U+{character:04X} is not allowed in YAML",
                                  Location(name, line + 1, column + 1))])


def _check_json(text: str, name: str) -> None:
    """A `.json` file is JSON (read then as the YAML it is, for its positions): what YAML takes and JSON does not, a
    trailing comma or a comment, is an error at its position, as DeepSpeed's `json.load` refuses it."""
    import json

    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError([ErrorItem("", f"not valid JSON: {exc.msg}", Location(name, exc.lineno, exc.colno))]) \
            from None


def load_yaml(text: str, name: str = "<string>") -> tuple[Any, Source]:
    """Parse one YAML document safely; returns the data and its Source of positions."""
    if len(text) > MAX_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise _error(f"YAML input is larger than {MAX_BYTES} bytes", name, None)
    try:
        loader = (CSpecLoader or SpecLoader)(text)
        loader.name = name
        try:
            node = loader.get_single_node()
            if node is None:
                return None, Source(name, {})
            if _expanded_size(node, {}) > MAX_NODES:
                raise _error(f"YAML input expands to more than {MAX_NODES} nodes (alias expansion)", name,
                             node.start_mark)
            marks: dict[str, yaml.Mark] = {}
            _walk(node, "", marks, node.start_mark, lambda key: loader.construct_object(key, deep=True))
            data = loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(str(exc.problem or exc).split())[:300]
        if "could not determine a constructor" in problem:
            problem = f"tag {exc.problem.split('tag ')[-1]} is not allowed (safe YAML only)" \
                if "tag" in problem else problem
        elif "maximum nesting depth" in problem:   # libyaml's own limit (PyYAML >= 6.0.4), met before ours when deeper
            problem = f"YAML input is nested too deeply (more than {MAX_DEPTH} levels)"
        raise _error(problem, name, mark) from None
    except yaml.reader.ReaderError as exc:
        raise _reader_error(exc, text, name) from None
    except UnicodeError as exc:  # a lone surrogate in text from Python: no YAML reader takes it
        raise _error(f"not valid Unicode text ({exc.reason} at character {exc.start})", name, None) from None
    except yaml.YAMLError as exc:
        raise _error(f"invalid YAML: {' '.join(str(exc).split())[:200]}", name, None) from None
    except RecursionError:  # pragma: no cover - compose_node bounds the depth first
        raise _error("YAML input is nested too deeply", name, None) from None
    return data, Source(name, marks)


def read_yaml(path_or_text: str | Path) -> tuple[Any, Source]:
    """Load from a file path (a Path, or a string naming a .yaml, .yml or .json file: JSON is read as the YAML it
    is, with its positions; a .py file by the config format that reads Python files, never executed:
    optreg.config.formats.read_python; any other path with a directory in it that exists, a directory too, which
    is then an error that says so) or from YAML text."""
    if isinstance(path_or_text, Path) or (isinstance(path_or_text, str) and "\n" not in path_or_text and (
            path_or_text.endswith((".yaml", ".yml", ".json", ".py"))
            or (("/" in path_or_text or os.sep in path_or_text) and os.path.exists(path_or_text)))):
        path = Path(path_or_text)
        name = str(path)
        try:
            info = path.stat()
            if not stat.S_ISREG(info.st_mode):  # a FIFO or a device reads without end (and says size 0)
                raise _error("not a regular file", name, None)
            if info.st_size > MAX_BYTES:
                raise _error(f"YAML input is larger than {MAX_BYTES} bytes", name, None)
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            with os.fdopen(fd, "rb") as handle:
                data = handle.read(MAX_BYTES + 1)   # bounded even if the file grows meanwhile
            if len(data) > MAX_BYTES:
                raise _error(f"YAML input is larger than {MAX_BYTES} bytes", name, None)
            text = data.decode("utf-8")
        except OSError as exc:
            raise _error(f"cannot read the file: {exc.strerror or exc}", name, None) from None
        except UnicodeDecodeError as exc:
            raise _error(f"not UTF-8 text ({exc.reason} at byte {exc.start})", name, None) from None
        if path.suffix == ".py":
            from optreg.config.formats import read_python

            return read_python(text, name, path)
        if path.suffix == ".json":
            _check_json(text, name)
        return load_yaml(text, name)
    if not isinstance(path_or_text, str):
        raise ConfigError(f"expected a YAML path or text, got {type(path_or_text).__name__}")
    return load_yaml(path_or_text)


Locate = Callable[[str], "Location | None"]

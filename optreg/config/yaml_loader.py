"""A hardened YAML loader that remembers where every value came from.

SafeLoader plus: `1e-3` is a float, only true/false are booleans (`on`/`yes` stay strings), dates and
base-60 numbers stay strings, duplicate keys are errors, tags outside the safe set are refused, and the
input size and alias expansion are bounded. Errors are ConfigError with `file:line:column`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

import yaml

from optreg.errors import ConfigError, ErrorItem, Location, join_path

MAX_BYTES = 1 << 20          # 1 MiB of YAML is far beyond any experiment config
MAX_NODES = 100_000          # nodes after alias expansion (a "billion laughs" document is refused)
MAX_ALIASES = 256

_FLOAT = re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
    |[-+]?\.[0-9_]+(?:[eE][-+]?[0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""", re.X)
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")


class SpecLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2-style scalars and no duplicate keys."""

    yaml_implicit_resolvers: dict = {}

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool, type(None))):
                raise yaml.constructor.ConstructorError(
                    None, None, f"a mapping key must be a scalar, got {type(key).__name__}", key_node.start_mark)
            if key in seen:
                first = seen[key].start_mark
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {first.line + 1})", key_node.start_mark)
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        text = self.construct_scalar(node)
        if text.startswith("0o"):
            return int(text[2:], 8)
        return int(text, 0) if text.startswith("0x") else int(text, 10)


SpecLoader.yaml_implicit_resolvers = {}
for tag, pattern, first in (
    ("tag:yaml.org,2002:bool", _BOOL, list("tTfF")),
    ("tag:yaml.org,2002:int", _INT, list("-+0123456789")),
    ("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789.")),
    ("tag:yaml.org,2002:null", _NULL, ["~", "n", "N", ""]),
):
    SpecLoader.add_implicit_resolver(tag, pattern, first)
SpecLoader.add_constructor("tag:yaml.org,2002:int", SpecLoader.construct_yaml_int)
SpecLoader.add_constructor("tag:yaml.org,2002:map", SpecLoader.construct_yaml_map)
# No timestamps, sets, binary or python tags: anything else is refused by SafeConstructor.
for tag in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:set", "tag:yaml.org,2002:binary",
            "tag:yaml.org,2002:omap", "tag:yaml.org,2002:pairs"):
    SpecLoader.yaml_constructors.pop(tag, None)
SpecLoader.yaml_constructors = {**SpecLoader.yaml_constructors}


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    key = id(node)
    if key not in memo:
        memo[key] = 1  # cycle guard
        if isinstance(node, yaml.MappingNode):
            memo[key] = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            memo[key] = 1 + sum(_expanded_size(v, memo) for v in node.value)
    return memo[key]


def _count_aliases(text: str) -> int:
    return sum(1 for token in yaml.scan(text, Loader=yaml.SafeLoader) if isinstance(token, yaml.AliasToken))


class Source:
    """Where each path of a loaded document is: `locate("optimizer.betas[1]") -> Location`."""

    def __init__(self, name: str, marks: dict[str, yaml.Mark]):
        self.name = name
        self.marks = marks

    def __call__(self, path: str) -> Location | None:
        while True:
            mark = self.marks.get(path)
            if mark is not None:
                return Location(self.name, mark.line + 1, mark.column + 1)
            if not path:
                return None
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""


def _walk(node: yaml.Node, path: str, marks: dict[str, yaml.Mark], mark: yaml.Mark) -> None:
    marks.setdefault(path, mark)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            _walk(value_node, join_path(path, str(key_node.value)), marks, key_node.start_mark)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, join_path(path, i), marks, item.start_mark)


def _error(message: str, name: str, mark: yaml.Mark | None) -> ConfigError:
    where = Location(name, mark.line + 1, mark.column + 1) if mark is not None else None
    return ConfigError([ErrorItem("", message, where)])


def load_yaml(text: str, name: str = "<string>") -> tuple[Any, Source]:
    """Parse one YAML document safely; returns the data and its Source of positions."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise _error(f"YAML input is larger than {MAX_BYTES} bytes", name, None)
    try:
        if _count_aliases(text) > MAX_ALIASES:
            raise _error(f"YAML input uses more than {MAX_ALIASES} aliases", name, None)
        loader = SpecLoader(text)
        loader.name = name
        try:
            node = loader.get_single_node()
            if node is None:
                return None, Source(name, {})
            if _expanded_size(node, {}) > MAX_NODES:
                raise _error(f"YAML input expands to more than {MAX_NODES} nodes (alias expansion)", name,
                             node.start_mark)
            marks: dict[str, yaml.Mark] = {}
            _walk(node, "", marks, node.start_mark)
            data = loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or str(exc)
        if "could not determine a constructor" in problem:
            problem = f"tag {exc.problem.split('tag ')[-1]} is not allowed (safe YAML only)" \
                if "tag" in problem else problem
        raise _error(problem, name, mark) from None
    except yaml.YAMLError as exc:
        raise _error(f"invalid YAML: {exc}", name, None) from None
    except RecursionError:
        raise _error("YAML input is nested too deeply", name, None) from None
    return data, Source(name, marks)


def read_yaml(path_or_text: str | Path) -> tuple[Any, Source]:
    """Load from a file path (a Path, or a string naming an existing .yaml/.yml file) or from YAML text."""
    if isinstance(path_or_text, Path) or (isinstance(path_or_text, str) and "\n" not in path_or_text
                                          and path_or_text.endswith((".yaml", ".yml"))):
        path = Path(path_or_text)
        try:
            if path.stat().st_size > MAX_BYTES:
                raise _error(f"YAML input is larger than {MAX_BYTES} bytes", str(path), None)
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        return load_yaml(text, str(path))
    if not isinstance(path_or_text, str):
        raise ConfigError(f"expected a YAML path or text, got {type(path_or_text).__name__}")
    return load_yaml(path_or_text)


Locate = Callable[[str], "Location | None"]

"""An installed optimizer library read as a dialect: its classes' signatures become registry rows on first use.

A `Library` names the package and the module that holds its optimizer classes; `rows(dialect)` imports it (only
then: `import optreg` and the registry's first lookup import nothing of it) and derives one row per class:

- the name is the class's own (`Lion`), found also as the library spells its path (`optim.AdamW8bit`, so that
  `torchao.optim.AdamW8bit` finds it);
- the options are the constructor's keyword parameters with their defaults;
- each option's type comes from its annotation (`float` -> a finite number, `bool` -> true/false, `int` -> an
  integer, `tuple[float, float]` -> two numbers, `Literal[...]` -> one of them, `X | None` -> X or null,
  `torch.dtype` -> its name (`types.TorchDtype`: 'bfloat16', the dtype itself when built), `Callable` -> a Python
  callable), else from its default (an unannotated int default of 0 is read as a number: `weight_decay=0`; a
  torch.dtype default, under `Any` too, makes a TorchDtype, its default shown by name);
- each range is one the library's constructor checks (`checks(cls)`: option -> bounds, or a list of bounds, one
  per element of a tuple), so that a config the class would refuse is a ConfigError at the option's path before
  anything is built, and one it accepts is never refused; a default outside them (which the class refuses, or
  fails on at its first step) is none: the option is required.

A library that is not installed: looking up one of its names is a ConfigError naming the package to install.
"""

from __future__ import annotations

import ast
import collections.abc
import importlib
import inspect
import textwrap
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Literal, Mapping, Union

from optreg.core.entry import OPTIMIZER, Entry, Limits

Bounds = Mapping[str, Any]   # {"ge": 0.0, "lt": 1.0}; {"choices": [...]} for a set of strings or integers


def public_optimizers(module: Any) -> list[tuple[str, type]]:
    """(name, class) of every public `torch.optim.Optimizer` subclass a module exposes, in name order."""
    import torch

    out = []
    for name in sorted(dir(module)):
        obj = getattr(module, name)
        if not name.startswith("_") and isinstance(obj, type) and issubclass(obj, torch.optim.Optimizer) \
                and obj is not torch.optim.Optimizer:
            out.append((name, obj))
    return out


def _no_checks(cls: type) -> dict[str, Any]:
    return {}


def _no_limits(cls: type) -> Limits | None:
    return None


@dataclass(frozen=True)
class Library:
    """One library's optimizer classes as rows of a dialect (see the module doc).

    package   the distribution to install, named by the error when it is missing ("pytorch_optimizer").
    module    the module that holds the classes ("torchao.optim").
    spelled   how the library spells a class's path after the dialect's name ("optim." for `torchao.optim.X`).
    classes   module -> (name, class) pairs; by default its public Optimizer subclasses.
    checks    class -> {option: bounds}: the ranges its constructor checks (read from the library's code).
    hidden    constructor parameters that are the library's internals, not options (bitsandbytes' `args`).
    skip      class names that are not optimizers a config can build (wrappers of an optimizer class).
    accepts   class name -> (predicate on a parameter, what it requires), as `Entry.accepts`.
    limits    class -> what keeps it from stepping as a plain training loop steps it, as `Entry.limits` (the group
              keys it declares are the row's `group_keys`).
    notes     shown by describe() for every row.
    """

    package: str
    module: str
    spelled: str = ""
    classes: Callable[[Any], Iterable[tuple[str, type]]] = public_optimizers
    checks: Callable[[type], Mapping[str, Any]] = _no_checks
    hidden: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    accepts: Mapping[str, Any] = field(default_factory=dict)
    limits: Callable[[type], Limits | None] = _no_limits
    notes: tuple[str, ...] = ()
    kind: str = OPTIMIZER

    def version(self) -> str:
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version(self.package)
        except PackageNotFoundError:
            return "?"

    def rows(self, dialect: str) -> list[Entry]:
        """Import the library and derive its rows (ImportError when it is not installed)."""
        module = importlib.import_module(self.module)
        source = f"{self.package} {self.version()} {self.module}"
        seen: set[int] = set()
        out = []
        for name, cls in self.classes(module):
            if name in self.skip or id(cls) in seen:
                continue
            seen.add(id(cls))
            out.append(row(dialect, name, cls, self, source))
        return out


def row(dialect: str, name: str, cls: type, library: Library, source: str) -> Entry:
    """The registry row of one library class: its options' types from annotations, defaults and checks."""
    checks = library.checks(cls)
    hints = _hints(cls)
    types_: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    for p in _parameters(cls):
        if p.name in library.hidden:
            continue
        types_[p.name] = option_type(hints.get(p.name), p.default, checks.get(p.name))
        if _is_torch_dtype(type(p.default)):   # named as a config names it (show, the schema, the Hydra files)
            defaults[p.name] = str(p.default).removeprefix("torch.")
        elif checks.get(p.name) and not _takes(types_[p.name], p.default):
            defaults[p.name] = inspect.Parameter.empty   # a default outside the checked range is none: required
    public = getattr(importlib.import_module(library.module), name, None) is cls
    target = f"{library.module}:{name}" if public else f"{cls.__module__}:{cls.__qualname__}"
    spelled = f"{library.spelled}{name}"
    first = next(iter(inspect.signature(cls).parameters), None)
    takes_model = first == "model"   # pytorch_optimizer's LOMO and AdaLOMO hook the model itself
    hidden = tuple(h for h in library.hidden if h in {p.name for p in _parameters(cls)}) + (
        ("model",) if takes_model else ())
    doc = (cls.__dict__.get("__doc__") or f"{library.module}.{name}").strip().split("\n")[0]
    limits = library.limits(cls)
    group_keys = {key: kind for key, (kind, _) in limits.group_keys.items()} if limits else {}
    return Entry(OPTIMIZER, dialect, name, target, doc, aliases=(spelled,) if spelled != name else (),
                 types=types_, defaults=defaults, hidden=hidden, takes_model=takes_model,
                 accepts=library.accepts.get(name), limits=limits, group_keys=group_keys, source=source,
                 provider=library.package,
                 notes=(f"Read from the installed {source}.{name}: options and defaults from its signature, types "
                        f"from its annotations, ranges from the checks of its constructor.",) + library.notes)


def _takes(type_: Any, default: Any) -> bool:
    """Whether an option of `type_` takes its default (bitsandbytes' LARS: momentum=0 where it must be > 0)."""
    from pydantic import TypeAdapter, ValidationError

    if default is None or default is inspect.Parameter.empty:
        return True
    try:
        TypeAdapter(type_).validate_python(default)
    except ValidationError:
        return False
    return True


def _parameters(cls: type) -> list[inspect.Parameter]:
    params = list(inspect.signature(cls).parameters.values())
    if params and params[0].name in ("params", "optimizer"):
        params = params[1:]
    return [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls.__init__)
    except Exception:   # an annotation that names what only type checkers import: the defaults decide
        return {}


# ---------------------------------------------------------------------------------------------------
# option types
# ---------------------------------------------------------------------------------------------------
def _leaf(kind: type, bounds: Bounds | None) -> Any:
    from optreg.core.types import Bool, integer, number

    limits = {k: v for k, v in (bounds or {}).items() if k in ("ge", "gt", "le", "lt")}
    if kind is bool:
        return Bool
    if kind is int:
        choices = (bounds or {}).get("choices")
        if choices:
            return Literal[tuple(choices)]
        return integer(**{k: int(v) if float(v).is_integer() else v for k, v in limits.items()})
    if kind is float:
        return number(**limits)
    if kind is str:
        choices = (bounds or {}).get("choices")
        return Literal[tuple(choices)] if choices else str
    return None


def _element(bounds: Any, i: int) -> Bounds | None:
    return bounds[i] if isinstance(bounds, (list, tuple)) and i < len(bounds) else \
        None if isinstance(bounds, (list, tuple)) else bounds


def from_annotation(annotation: Any, bounds: Any = None) -> Any:
    """The constrained type of an annotation, or None where a config cannot give one (a tensor, a callable)."""
    if annotation is type(None):
        return type(None)
    if annotation in (bool, int, float, str):
        return _leaf(annotation, bounds if not isinstance(bounds, (list, tuple)) else None)
    if _is_torch_dtype(annotation):
        from optreg.core.types import TorchDtype

        return TorchDtype
    if annotation is collections.abc.Callable or typing.get_origin(annotation) is collections.abc.Callable:
        from optreg.core.types import PythonCallable

        return PythonCallable
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return annotation
    if origin in (Union, types.UnionType):
        members = [m for m in (from_annotation(a, bounds) for a in args) if m is not None]
        members = list(dict.fromkeys(members))
        return None if not members else members[0] if len(members) == 1 else _by_length(members)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            inner = from_annotation(args[0], _element(bounds, 0))
            return None if inner is None else tuple[inner, ...]
        elements = [from_annotation(a, _element(bounds, i)) for i, a in enumerate(args)]
        return None if not elements or None in elements else tuple[tuple(elements)]
    if origin in (list, collections.abc.Sequence):
        inner = from_annotation(args[0], _element(bounds, 0)) if args else None
        return None if inner is None else list[inner]
    return None


def _tuple_length(member: Any) -> int | None:
    args = typing.get_args(member)
    return len(args) if typing.get_origin(member) is tuple and args and args[-1] is not Ellipsis else None


def _by_length(members: list[Any]) -> Any:
    """A union; tuples of different lengths (pytorch_optimizer's `betas: tuple[float, float] | tuple[float, float,
    float]`) are told apart by the length given, so that an error speaks of the tuple the config wrote."""
    lengths = [_tuple_length(m) for m in members]
    tuples = [(n, m) for n, m in zip(lengths, members) if n is not None]
    if len(tuples) < 2 or len({n for n, _ in tuples}) != len(tuples):
        return Union[tuple(members)]
    from pydantic import Discriminator, Tag

    others = [m for n, m in zip(lengths, members) if n is None]
    by_length = {n: m for n, m in tuples}

    def tag(value: Any) -> str:
        if isinstance(value, (list, tuple)):
            n = len(value) if len(value) in by_length else max(by_length)
            return f"tuple[{n}]"
        return "other[]" if others else f"tuple[{min(by_length)}]"

    tagged = [typing.Annotated[m, Tag(f"tuple[{n}]")] for n, m in by_length.items()]
    if others:
        tagged.append(typing.Annotated[Union[tuple(others)] if len(others) > 1 else others[0], Tag("other[]")])
    return typing.Annotated[Union[tuple(tagged)], Discriminator(tag)]


def _is_torch_dtype(annotation: Any) -> bool:
    return getattr(annotation, "__module__", None) == "torch" and getattr(annotation, "__name__", None) == "dtype"


def from_default(default: Any, bounds: Any = None) -> Any:
    """The constrained type of an unannotated parameter, from its default; None when it says nothing."""
    if _is_torch_dtype(type(default)):   # `dtype=torch.bfloat16` annotated `Any` or not at all
        return from_annotation(type(default))
    if isinstance(default, bool):
        return _leaf(bool, None)
    if isinstance(default, int):   # `weight_decay=0`: a number written as 0; other ints count (block_size)
        return _leaf(float if default == 0 else int, bounds)
    if isinstance(default, float):
        return _leaf(float, bounds)
    if isinstance(default, str):
        return _leaf(str, bounds)
    if isinstance(default, tuple) and default:
        elements = [from_default(v, _element(bounds, i)) for i, v in enumerate(default)]
        return None if None in elements else tuple[tuple(elements)]
    if bounds and not isinstance(bounds, (list, tuple)) and (default is None or default is inspect.Parameter.empty):
        return _leaf(str if "choices" in bounds else float, bounds)
    return None


def option_type(annotation: Any, default: Any, bounds: Any = None) -> Any:
    """An option's type: from its annotation, else its default; Any when neither says what a config gives."""
    found = from_annotation(annotation, bounds) if annotation is not None else None
    if found is None:
        found = from_default(default, bounds)
    return Any if found is None else found


# ---------------------------------------------------------------------------------------------------
# the ranges a constructor checks
# ---------------------------------------------------------------------------------------------------
INTERVALS = {"[)": ("ge", "lt"), "[]": ("ge", "le"), "(]": ("gt", "le"), "()": ("gt", "lt")}


def interval(low: float, high: float, kind: str = "[)") -> dict[str, float]:
    """Bounds of an interval written as pytorch_optimizer writes it (`'[)'`: low <= x < high)."""
    lo, hi = INTERVALS[kind]
    return {lo: low, hi: high}


def _literal(node: ast.AST) -> Any:
    return ast.literal_eval(node)


def validator_checks(cls: type) -> dict[str, Any]:
    """pytorch_optimizer's constructor checks (`self.validate_range(x, 'x', 0.0, 1.0, '[)')`, `validate_betas`,
    ...; its BaseOptimizer, 4.x) read from the class's `__init__`, as bounds per option. A check on an expression
    rather than a parameter is left to the constructor (a build error names the class)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls.__init__)))
    except (OSError, TypeError, SyntaxError):
        return {}
    out: dict[str, Any] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"
                and node.func.attr.startswith("validate_") and node.args and isinstance(node.args[0], ast.Name)):
            continue
        option, check = node.args[0].id, node.func.attr[len("validate_"):]
        try:
            args = [_literal(a) for a in node.args[1:]]
            kwargs = {k.arg: _literal(k.value) for k in node.keywords}
        except ValueError:   # bounds computed at run time
            continue
        bounds = _validator_bounds(check, args, kwargs)
        if bounds is None:
            continue
        if isinstance(bounds, dict) and isinstance(out.get(option), dict):
            bounds = {**out[option], **bounds}
        out[option] = bounds
    return out


def _validator_bounds(check: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    if check in ("learning_rate", "non_negative"):
        return {"ge": 0.0}
    if check == "non_positive":
        return {"le": 0.0}
    if check == "positive":
        return {"gt": 0.0}
    if check == "step":
        return {"ge": 1}
    if check == "range" and len(args) >= 3:
        return interval(args[1], args[2], args[3] if len(args) > 3 else kwargs.get("range_type", "[)"))
    if check == "options" and len(args) >= 2:
        return {"choices": list(args[1])}
    if check == "betas":
        pair = interval(0.0, 1.0, args[0] if args else kwargs.get("beta_range_type", "[)"))
        third = interval(0.0, 1.0, args[1] if len(args) > 1 else kwargs.get("beta3_range_type", "[]"))
        return [pair, pair, third]
    if check == "nus":
        return interval(0.0, 1.0, "[]")
    return None


__all__ = ["Library", "public_optimizers", "row", "option_type", "validator_checks", "interval"]

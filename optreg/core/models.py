"""One Pydantic model per registry entry, generated from the implementation's signature.

Names and defaults come from the signature (renamed and re-defaulted by the entry's row); types and
ranges from the shared table `PARAM_TYPES`, or the row's `types`. Models are built on first use and cached.
"""

from __future__ import annotations

import inspect
import math
import numbers
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from optreg.core.entry import Entry
from optreg.core.options import PARAM_TYPES
from optreg.core.types import NOT_NUMBER, Bool, Float, Int, boolean_shown
from optreg.errors import ErrorItem, join_path, show

_FIRST = ("params", "optimizer", "self")


@dataclass(frozen=True)
class Option:
    """One user-facing option of a component."""

    name: str           # as the dialect spells it
    target: str         # the implementation's parameter name
    type: Any
    default: Any        # inspect.Parameter.empty when required
    doc: str = ""

    @property
    def required(self) -> bool:
        return self.default is inspect.Parameter.empty


def signature_parameters(entry: Entry) -> list[inspect.Parameter]:
    """The implementation's keyword parameters, without the leading params/optimizer argument."""
    impl = entry.resolve()
    params = list(inspect.signature(impl).parameters.values())
    if params and params[0].name in _FIRST:
        params = params[1:]
    return [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _declared_type(entry: Entry, name: str) -> Any:
    """The constrained type an implementation declares for parameter `name`: an `Annotated[...]`
    annotation (e.g. `eps: StrictPosFloat = 1e-6`), a tuple of them, or a Literal; plain builtins
    (`float`) say nothing about ranges and are ignored."""
    import typing

    impl = entry.resolve()
    init = impl.__init__ if isinstance(impl, type) else impl
    try:
        hints = typing.get_type_hints(init, include_extras=True)
    except Exception:  # an annotation that does not resolve: fall back to the shared table
        return None
    ann = hints.get(name)
    if ann is None:
        return None
    origin = typing.get_origin(ann)
    if origin is typing.Annotated or origin is typing.Literal:
        return ann
    if origin in (tuple, typing.Union) and any(typing.get_origin(a) in (typing.Annotated, typing.Literal)
                                               for a in typing.get_args(ann)):   # Optional[Literal[...]] too
        return ann
    return None


def _type_from_default(default: Any) -> Any:
    if isinstance(default, bool):
        return Bool
    if isinstance(default, int):
        return Int
    if isinstance(default, float):
        return Float
    if isinstance(default, str):
        return str
    if isinstance(default, tuple):
        return tuple[tuple(_type_from_default(v) for v in default)] if default else tuple
    return Any


@lru_cache(maxsize=None)
def options(entry: Entry) -> tuple[Option, ...]:
    """The entry's options in signature order."""
    back = {target: option for option, target in entry.rename.items()}
    out = []
    for p in signature_parameters(entry):
        if p.name in entry.fixed or p.name in entry.hidden:
            continue
        name = back.get(p.name, p.name)
        default = entry.defaults.get(name, p.default)
        type_ = (entry.types.get(name) or _declared_type(entry, p.name) or PARAM_TYPES.get(name)
                 or _type_from_default(p.default))
        if default is None and type_ is not Any:
            type_ = type_ | None
        out.append(Option(name, p.name, type_, default))
    return tuple(out)


@lru_cache(maxsize=None)
def model(entry: Entry) -> type[BaseModel]:
    """The entry's Pydantic model: extra keys forbidden, one field per option."""
    fields: dict[str, Any] = {}
    for opt in options(entry):
        default = ... if opt.required else opt.default
        fields[opt.name] = (opt.type, Field(default, description=opt.doc or None))
    return create_model(
        f"{entry.dialect}.{entry.name}",
        __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=True, protected_namespaces=()),
        __doc__=entry.doc or None,
        **fields,
    )


def _fmt(value: Any) -> str:
    if isinstance(value, float) and math.isfinite(value) and value == int(value) and abs(value) < 1e16:
        return f"{value:.1f}"
    return show(value)


#: a key that a section's model does not have (pydantic's extra_forbidden)
UNKNOWN_KEY = "unknown key"
#: an option without a default that a spec leaves out (pydantic's missing)
MISSING_OPTION = "required option is missing"


def bound_message(sign: str, bound: Any, value: Any) -> str:
    """Our wording of a value past a bound of its option (`sign`: <, <=, >, >=): `must be >= 0, got -1`."""
    bound = int(bound) if isinstance(bound, float) and bound.is_integer() else bound
    return f"must be {sign} {bound}, got {_fmt(value)}"


def type_message(what: str, value: Any) -> str:
    """Our wording of a value of another type than its option takes (`what`: a number, an integer, true or false)."""
    return f"expected {what}, got {type(value).__name__} {show(value)}"


def number_message(value: Any, low: float | None = None, integer: bool = False, finite: bool = False,
                   above: float | None = None, also: str = "", high: float | None = None) -> str | None:
    """What is wrong with `value` given for an option that takes a number (an integer where `integer`, a finite one
    where `finite`) >= `low` (> `above`, <= `high`), in the words the own form's options say it (`_message`); None
    when nothing is. `also`: a value the option takes besides, said after what is wrong but a value past `high`
    (`must be >= 1, got 0 (or -1: the dataset's size)`); the caller takes that value before asking."""
    also = f" (or {also})" if also else ""
    if (boolean := boolean_shown(value)) is not None:   # an integer option's words too, as the options say it
        return NOT_NUMBER.format(value=boolean) + also
    if not isinstance(value, numbers.Real):   # numpy's numbers too, as the options take
        return type_message("an integer" if integer else "a number", value) + also
    if integer and not isinstance(value, numbers.Integral):
        return f"must be an integer, got {_fmt(value)}" + also
    if finite and not isinstance(value, numbers.Integral) and not math.isfinite(value):   # a huge int is finite
        return f"must be a finite number, got {_fmt(value)}" + also
    if low is not None and value < low:
        return bound_message(">=", low, value) + also
    if above is not None and not value > above:
        return bound_message(">", above, value) + also
    if high is not None and not value <= high:   # an int compared as it is: a huge one does not overflow
        return bound_message("<=", high, value)
    return None


def choices_text(choices: Sequence[Any]) -> str:
    """The choices of an option as Pydantic lists a Literal's (`'float32', 'bfloat16' or 'int8'`)."""
    shown = [repr(c) for c in choices]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def choice_message(expected: str, value: Any) -> str:
    """Our wording of a value that is none of its option's choices (`expected`, as `choices_text` lists them)."""
    return f"must be one of {expected}, got {show(value)}"


def bool_message(value: Any) -> str | None:
    """What is wrong with `value` given for an option that takes true or false, in the words the own form's options
    say it (`_message`): `expected true or false, got int 1`; None when nothing is."""
    return None if isinstance(value, bool) else type_message("true or false", value)


def _message(err: Mapping[str, Any]) -> str:
    """Our wording for a Pydantic error: `must be < 1, got 1.0`."""
    kind, ctx, value = err["type"], err.get("ctx") or {}, err.get("input")
    bounds = {"less_than": ("<", "lt"), "less_than_equal": ("<=", "le"),
              "greater_than": (">", "gt"), "greater_than_equal": (">=", "ge")}
    if kind in bounds:
        sign, key = bounds[kind]
        return bound_message(sign, ctx[key], value)
    if kind == "finite_number":
        return f"must be a finite number, got {_fmt(value)}"
    if kind in ("float_parsing", "float_type", "int_parsing", "int_type"):
        return type_message("an integer" if kind.startswith("int") else "a number", value)
    if kind == "int_from_float":
        return f"must be an integer, got {_fmt(value)}"
    if kind in ("bool_type", "bool_parsing"):
        return type_message("true or false", value)
    if kind == "literal_error":
        return choice_message(ctx.get("expected"), value)
    if kind in ("too_short", "too_long"):
        return _count(ctx.get('min_length', ctx.get('max_length')), ctx.get('actual_length'))
    if kind == "value_error":
        return str(ctx.get("error", err.get("msg", "")))
    if kind == "missing":
        return MISSING_OPTION
    if kind == "extra_forbidden":
        return UNKNOWN_KEY
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return f"expected a mapping, got {type(value).__name__} {show(value)}"
    if kind in ("tuple_type", "list_type"):
        return f"expected a list, got {type(value).__name__} {show(value)}"
    if kind == "string_type":
        return f"expected a string, got {type(value).__name__} {show(value)}"
    return err["msg"][0].lower() + err["msg"][1:] if err.get("msg") else kind


def _count(expected: Any, got: Any) -> str:
    """The message of a list with another number of values than its type takes."""
    return f"expected {expected} values, got {got}"


def _too_few(errors: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The paths of fixed-length lists given too few values (Pydantic reports each absent position as a `missing`
    option of its own, `betas[1]`), with how many values each takes."""
    out: dict[str, int] = {}
    for err in errors:
        loc = err["loc"]
        if err["type"] == "missing" and len(loc) > 1 and isinstance(loc[-1], int) and \
                isinstance(err.get("input"), (list, tuple)):
            out[_path(loc[:-1])] = max(out.get(_path(loc[:-1]), 0), loc[-1] + 1)
    return out


def _path(loc: tuple) -> str:
    """A Pydantic location as our path; union-member tags (`float`, `list[...]`) are dropped."""
    path = ""
    for part in loc:
        if isinstance(part, str) and ("[" in part or part in ("float", "int", "bool", "str", "none")) and path:
            continue
        path = join_path(path, part)
    return path


def pydantic_errors(exc: ValidationError, model: type[BaseModel] | None = None) -> list[ErrorItem]:
    """ValidationError -> our ErrorItems, one per problem (union duplicates merged); an unknown key of `model`'s
    own (a section such as `train:` or `warmup:`) gets the closest of its fields as the suggestion."""
    from optreg.errors import closest

    items: dict[str, ErrorItem] = {}
    errors = exc.errors(include_url=False)
    too_few = _too_few(errors)
    for err in errors:
        path = _path(err["loc"])
        hint = None
        message = _message(err)
        if err["type"] == "missing" and _path(err["loc"][:-1]) in too_few and isinstance(err["loc"][-1], int):
            path = _path(err["loc"][:-1])   # the list, not each position it lacks
            message = _count(too_few[path], len(err["input"]))
        if err["type"] == "literal_error" and isinstance(err.get("input"), str):   # a misspelt choice
            hint = closest(err["input"], re.findall(r"'([^']*)'", str((err.get("ctx") or {}).get("expected", ""))))
        if model is not None and err["type"] == "extra_forbidden" and len(err["loc"]) == 1:
            hint = closest(str(err["loc"][0]), list(model.model_fields))
            message += "" if hint else f" (the keys: {', '.join(model.model_fields)})"
        items.setdefault(path, ErrorItem(path, message, suggestion=hint))
    return list(items.values())

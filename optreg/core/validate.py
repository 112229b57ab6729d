"""Options of one component: aliases resolved, unknown keys reported, values validated, rules checked."""

from __future__ import annotations

import warnings
from typing import Any, Literal, Mapping

from pydantic import ValidationError

from optreg.core import models
from optreg.core.entry import Entry, Rule
from optreg.core.names import TUPLE_ALIASES, synonyms
from optreg.core.types import torch_dtypes
from optreg.errors import (Collector, ConfigError, ConfigWarning, ErrorItem, closest, first_few, join_path, key_text,
                           outside_stacklevel, show)

UnknownKeys = Literal["error", "warn"]


def option_names(entry: Entry) -> list[str]:
    return [o.name for o in models.options(entry)]


MAX_HINTS = 50   # unknown keys of one mapping that get a did-you-mean; the rest are listed without the search


def binder_keys(entry: Entry) -> Mapping[str, Any]:
    """For a row whose dialect binds its groups, the keys the dialect declares its binders read (MindSpore's
    grad_centralization), name -> `optreg.core.groups.Key`; none for any other row."""
    from optreg.core.registry import REGISTRY

    bound = entry.bind is not None and entry.dialect in REGISTRY.dialects()
    return REGISTRY.dialect(entry.dialect).group_keys if bound else {}


def group_key_names(entry: Entry) -> frozenset[str]:
    """The keys a group of `entry` takes beside its options: the row's `group_keys` (OneFlow's clip_grad_max_norm)
    and its dialect's `binder_keys` (MindSpore's grad_centralization)."""
    return frozenset(entry.group_keys) | frozenset(binder_keys(entry))


def _others(entry: Entry) -> list[tuple[str, frozenset[str], frozenset[str]]]:
    """(qualname, option names, group keys) of the same-named components of the other dialects."""
    from optreg.core.registry import REGISTRY

    out = []
    for other in REGISTRY.same_name(entry):
        try:
            out.append((other.qualname, frozenset(option_names(other)), group_key_names(other)))
        except Exception:  # an unimportable plugin must not hide the real error
            continue
    return out


def _in_a_rule(entry: Entry, key: str, value: Any) -> str:
    """The message of a key of `entry`'s own groups given beside its options: the rule that gives it, over every
    parameter (`params: '*'`), or with no selector where the key stands alone (MindSpore's order_params dict)."""
    alone = getattr(binder_keys(entry).get(key), "alone", False)
    if isinstance(value, Mapping) and value and not alone:   # Model Zoo's {group name: scale}: a rule per group
        rules = first_few([f"{{params: <{key_text(name)}'s parameters>, {key}: {show(scale)}}}"
                           for name, scale in value.items()], 2)
        return f"{key!r} is a param_groups key of {entry.qualname}, not an option: give it in a rule that " \
               f"selects each group's parameters, param_groups: [{rules}]"
    selector = "" if alone else "params: '*', "
    rule = f"{{{selector}{key}: {show(value)}}}"
    return f"{key!r} is a param_groups key of {entry.qualname}, not an option: give it in a rule, " \
           f"param_groups: [{rule}]"


def _unknown(entry: Entry, key: str, fields: list[str],
             others: list[tuple[str, frozenset[str], frozenset[str]]] | None = None,
             value: Any = None) -> tuple[str, str | None]:
    """Message and suggestion for a key the component does not have: a key of its own groups (`_in_a_rule`), else
    the same-named components of other dialects that have it, as an option or as a key of their groups, are named."""
    if key in group_key_names(entry):
        return _in_a_rule(entry, key, value), None
    if others is None:
        others = _others(entry)
    owners = [name for name, options, _ in others if key in options]
    group_owners = [name for name, options, groups in others if key not in options and key in groups]
    text = f"unknown option of {entry.qualname}"
    said = [f"{' and '.join(names)} {verb[len(names) > 1]} it{how}"
            for names, verb, how in ((owners, ("has", "have"), ""),
                                     (group_owners, ("takes", "take"), " as a param_groups key")) if names]
    if said:
        text = f"{key!r} is not an option of {entry.dialect} {entry.name}; {'; '.join(said)}"
    hint = closest(key, fields)
    return text, hint


def _legacy_keys(entry: Entry) -> Mapping[str, str]:
    """The keys `entry`'s dialect declares legacy (refused with what to write instead)."""
    from optreg.core.registry import REGISTRY

    return REGISTRY.dialect(entry.dialect).legacy_keys if entry.dialect in REGISTRY.dialects() else {}


def resolve_aliases(entry: Entry, raw: Mapping[str, Any], errors: Collector, path: str,
                    unknown_keys: UnknownKeys = "error", extra_keys: tuple[str, ...] = (),
                    given_as: dict[str, str] | None = None) -> dict[str, Any]:
    """Map user keys onto the entry's option names: synonyms, split/joined tuples, unknown keys.

    extra_keys: other valid keys here (a group's own keys), offered as close matches. `given_as`: filled with each
    option -> the key it is given as (`beta1/beta2` for the parts of a joined tuple)."""
    fields = option_names(entry)
    out: dict[str, Any] = {}
    given_as = {} if given_as is None else given_as

    def put(name: str, value: Any, key: str) -> None:
        if name in out:
            errors.add(join_path(path, key), f"both {given_as[name]!r} and its alias {key!r} are given; keep one")
            return
        out[name] = value
        given_as[name] = key

    joins: dict[str, dict[int, Any]] = {}
    legacy_keys = _legacy_keys(entry)
    others: list[tuple[str, frozenset[str], frozenset[str]]] | None = None
    n_unknown = 0
    for key, value in raw.items():
        key = key_text(key)
        if key in fields:
            put(key, value, key)
            continue
        legacy = legacy_keys.get(key)
        if legacy is not None:
            errors.add(join_path(path, key), f"{key!r} is a legacy {entry.dialect} key that "
                                             f"{entry.qualname} no longer accepts; write {legacy} instead")
            continue
        match = next((s for s in synonyms(key) if s in fields), None)
        if match is not None:
            put(match, value, key)
            continue
        tuple_hit = next(((t, parts.index(key)) for t, parts in TUPLE_ALIASES.items()
                          if key in parts and t in fields), None)
        if tuple_hit is not None:
            joins.setdefault(tuple_hit[0], {})[tuple_hit[1]] = (key, value)
            continue
        split_hit = TUPLE_ALIASES.get(key)
        if split_hit and all(p in fields for p in split_hit):
            if not isinstance(value, (list, tuple)) or len(value) != len(split_hit):
                errors.add(join_path(path, key), f"expected {len(split_hit)} values for {', '.join(split_hit)}, "
                                                 f"got {show(value)}")
                continue
            for part, v in zip(split_hit, value):
                put(part, v, key)
            continue
        n_unknown += 1
        if n_unknown > MAX_HINTS:  # bounded time: no registry scan or difflib for thousands of keys
            text, hint = f"unknown option of {entry.qualname}", None
        else:
            if others is None:
                others = _others(entry)
            text, hint = _unknown(entry, key, [*fields, *extra_keys], others, value)
        if unknown_keys == "warn":   # the error's words, did-you-mean included (a reader locates the note)
            warnings.warn(ConfigWarning(str(ErrorItem(join_path(path, key), f"{text}; ignored", None, hint))),
                          stacklevel=outside_stacklevel())
        else:
            errors.add(join_path(path, key), text, hint)
    for target, parts in joins.items():
        default = next((o.default for o in models.options(entry) if o.name == target), None)
        values = list(default) if isinstance(default, (list, tuple)) else [None] * len(TUPLE_ALIASES[target])
        for index, (key, value) in parts.items():
            values[index] = value
        put(target, tuple(values), "/".join(k for k, _ in parts.values()))
    return out


#: one execution per group: a first-party optimizer's constructor refuses foreach=True with fused=True (torch's
#: too), and so does validation, for the optimizer and for each group, of every row that takes both flags
FUSED_OR_FOREACH = Rule("fused", ("fused", "foreach"), lambda f, fe: not (f and fe),
                        "give foreach=True or fused=True, not both")


def rules_of(entry: Entry) -> tuple[Rule, ...]:
    """The row's cross-option rules, with `FUSED_OR_FOREACH` for a row that takes both flags and declares no rule
    of its own about them."""
    if any(r.path == "fused" for r in entry.rules) or not {"fused", "foreach"} <= set(option_names(entry)):
        return entry.rules
    return (*entry.rules, FUSED_OR_FOREACH)


def check_rules(entry: Entry, values: Mapping[str, Any], failed: set[str], errors: Collector, path: str) -> None:
    """Cross-option rules of the row; a rule whose inputs failed or are None is skipped."""
    for rule in rules_of(entry):
        args = [values.get(f) for f in rule.fields]
        if any(f in failed for f in rule.fields) or (rule.skip_none and any(a is None for a in args)):
            continue
        try:
            ok = rule.ok(*args)
        except (TypeError, ValueError, ArithmeticError):
            ok = False
        if not ok:
            errors.add(join_path(path, rule.path), rule.message)


def validate_options(entry: Entry, raw: Mapping[str, Any], *, path: str = "",
                     unknown_keys: UnknownKeys = "error", extra_keys: tuple[str, ...] = ()) -> dict[str, Any]:
    """Validated options of `entry` (dialect names -> values); ConfigError listing every problem. `extra_keys`:
    keys read before the options (a wrapper's nested `optimizer`), offered as close matches."""
    errors, given_as = Collector(), {}
    resolved = resolve_aliases(entry, raw, errors, path, unknown_keys, extra_keys, given_as)
    cls = models.model(entry)
    failed: set[str] = set()
    values: dict[str, Any] | None = None
    try:
        obj = cls.model_validate(resolved)
        values = {name: getattr(obj, name) for name in cls.model_fields}
    except ValidationError as exc:
        for item in models.pydantic_errors(exc):
            errors.add(join_path(path, item.path), item.message, item.suggestion)
            failed.add(item.path.split(".")[0].split("[")[0])
        try:  # validate what was fine, so that rules still run on it
            obj = cls.model_validate({k: v for k, v in resolved.items() if k not in failed})
            values = {name: getattr(obj, name) for name in cls.model_fields}
        except ValidationError:
            values = None
    if values is not None:
        check_rules(entry, values, failed, errors, path)
    renamed = {join_path(path, o): join_path(path, k) for o, k in given_as.items() if k != o and "/" not in k}
    if errors and renamed:   # an option given under another name (`learning_rate` for `lr`): at that name
        from optreg.config.translate import source_paths

        raise source_paths(ConfigError(errors.items), renamed)
    errors.raise_if_any()
    assert values is not None
    return values


def to_target_kwargs(entry: Entry, values: Mapping[str, Any]) -> dict[str, Any]:
    """Validated options -> keyword arguments of the implementation (renamed, knobs added)."""
    values = torch_dtypes(dict(values), entry.types)   # TorchDtype names -> torch dtypes
    return {**{entry.target_name(k): v for k, v in values.items()}, **entry.fixed}

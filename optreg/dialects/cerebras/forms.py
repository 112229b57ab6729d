"""Cerebras' YAML forms of `learning_rate` / `schedulers` → optreg's canonical scheduler spec.

Forms read (Cerebras modelzoo R1.7-R2.10):
- a number, or a numeric string (YAML reads `1e-5` as a string): a constant lr;
- legacy dict `{scheduler: Linear, initial_learning_rate, end_learning_rate, steps, ...}` with the
  aliases steps/decay_steps/total_iters, learning_rate/initial_learning_rate/base_lr, gamma/decay_rate,
  values/boundaries (PiecewiseConstant) and t_max/t_0/t_mult;
- legacy list of such dicts: a SequentialLR whose milestones are the running sums of the stages' steps
  (every stage but the last needs one), or a ChainedScheduler with `main_scheduler: chained`;
  `disable_lr_steps_reset: true` makes every stage see the global step;
- current single-key dicts `{LinearLR: {...}}`, `{SequentialLR: {schedulers: [...]}}`, `{ChainedScheduler: ...}`,
  and the weight-decay twins (`CosineDecayWD: {initial_val, end_val, total_iters}` → key weight_decay).

Output: `{"name": <Cerebras name>, "dialect": "cerebras", **options}`; combinators
`{"name": "SequentialLR", "dialect": "cerebras", "schedulers": [...]}` (Cerebras' SequentialLR: each stage on
its own step from its milestone; `milestones` when the current form gives them),
`{"name": "sequential", "schedulers": [...], "milestones": [...], "restart": "global"|"local"}`
(the generic engine combinator, when stages see the global step or lack total_iters) and
`{"name": "ChainedLR", "dialect": "cerebras", "schedulers": [...]}`. (`sequential` and `chained` without
`LR` are optreg's generic combinators; `SequentialLR` / `ChainedLR` are the dialect's classes.)
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

from optreg.core.dialect import ReadSpec
from optreg.core.models import number_message
from optreg.core.names import NAME_KEYS
from optreg.errors import Collector, ConfigError, join_path, key_text, show

# Cerebras class names by their normalised form (lower case, no `lr` suffix).
CLASSES = ("ConstantLR", "PolynomialLR", "LinearLR", "ExponentialLR", "InverseExponentialTimeDecayLR",
           "InverseSquareRootDecayLR", "CosineDecayLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
           "StepLR", "MultiStepLR", "PiecewiseConstantLR", "LambdaLR", "MultiplicativeLR", "CyclicLR", "OneCycleLR")
COMBINATORS = {"sequential": "SequentialLR", "chained": "ChainedLR", "chainedscheduler": "ChainedLR"}

# legacy aliases: alias -> (option it means, for which classes; None = any class that has that option)
STEP_KEYS = ("steps", "decay_steps", "total_iters")
LR_KEYS = ("learning_rate", "initial_learning_rate", "base_lr")
RATE_KEYS = ("gamma", "decay_rate")
RENAMES = {"values": "learning_rates", "boundaries": "milestones", "t_max": "T_max", "t_0": "T_0", "t_mult": "T_mult"}
# legacy defaults that differ from the current classes (R1.9 Exponential: decay_steps defaulted to 1)
LEGACY_DEFAULTS = {"ExponentialLR": {"total_iters": 1}}
# weight-decay twins: generic names -> the lr class's names
WD_RENAMES = {"initial_val": "initial_learning_rate", "end_val": "end_learning_rate", "val": "learning_rate",
              "base_val": "base_lr", "max_val": "max_lr", "vals": "learning_rates"}
TOP_LEVEL = ("main_scheduler", "disable_lr_steps_reset")
UNSUPPORTED = {"adjust_learning_rate": "per-group lr scaling (muP, ScalePerParamLR) is read from a whole Model Zoo "
                                       "config (optreg.build / optreg run) or configure_lr_scheduler(optimizer, "
                                       "learning_rate, adjust_learning_rate=...), not from a scheduler spec",
               "param_group_tags": "param_group_tags select the tagged groups of a whole Model Zoo config "
                                   "(optreg.build / optreg run) or of configure_lr_scheduler(optimizer, "
                                   "{Name: {...}}), not of an optreg scheduler spec"}


def _norm(name: str) -> str:
    key = str(name).strip().lower().replace("_", "").replace("-", "")
    return key[:-2] if key.endswith("lr") and len(key) > 2 else key


_BY_NORM = {_norm(c): c for c in CLASSES}


def _fields(cls_name: str) -> list[dataclasses.Field]:
    """The options of the Cerebras engine class (its dataclass init fields; LinearLR's, PolynomialLR's but power)."""
    from optreg.dialects.cerebras import schedules as cerebras

    target = "PolynomialLR" if cls_name == "LinearLR" else cls_name
    return [f for f in dataclasses.fields(getattr(cerebras, target))
            if f.init and not (cls_name == "LinearLR" and f.name == "power")]


def _options(cls_name: str) -> list[str]:
    """The option names of the Cerebras engine class."""
    return [f.name for f in _fields(cls_name)]


def class_name(name: Any, path: str) -> str:
    """A Cerebras class name from a legacy or current spelling (`Linear`, `linearlr`, `CosineDecayLR`)."""
    hit = _BY_NORM.get(_norm(name))
    if hit is None:
        from optreg.errors import unknown_name

        raise ConfigError([unknown_name(path, "Cerebras", "scheduler", name, CLASSES)])
    return hit


def _item(path: str, message: str, suggestion: str | None = None):
    from optreg.errors import ErrorItem

    return ErrorItem(path, message, None, suggestion)


def _number(value: Any, path: str) -> float:
    try:
        if isinstance(value, bool):
            raise ValueError
        return float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"expected a number, got {show(value)}", path) from None


def _map_keys(cls_name: str, params: Mapping[str, Any], path: str, errors: Collector, legacy: bool,
              written: dict[str, str], twin: bool = False) -> dict[str, Any]:
    """Legacy/current keys of one scheduler (at `path`) → the class's option names; unknown keys are errors.
    `twin`: the weight-decay twin's generic names are read too (`WD_RENAMES`). Each option read under another key
    is recorded in `written`: the option -> the key's path."""
    fields = _options(cls_name)
    out: dict[str, Any] = dict(LEGACY_DEFAULTS.get(cls_name, {})) if legacy else {}
    seen: dict[str, str] = {}

    def put(option: str, value: Any, key: str) -> None:
        if option in seen and seen[option] != key:
            errors.add(join_path(path, key), f"both {seen[option]!r} and {key!r} set {option!r}; keep one")
            return
        seen[option] = key
        out[option] = value

    for key, value in params.items():
        key = key_text(key)
        if key in UNSUPPORTED:
            errors.add(join_path(path, key), UNSUPPORTED[key])
        elif key in fields or twin and WD_RENAMES.get(key) in fields:
            put(WD_RENAMES[key] if key not in fields else key, value, key)
        elif legacy and key in STEP_KEYS:
            if "total_iters" in fields:
                put("total_iters", value, key)
            # classes without total_iters: the step count only places the next milestone
        elif legacy and key in LR_KEYS:
            target = next((k for k in LR_KEYS if k in fields), None)
            if target is None:
                errors.add(join_path(path, key), f"{cls_name} has no learning-rate option")
            else:
                put(target, value, key)
        elif legacy and key in RATE_KEYS:
            target = next((k for k in RATE_KEYS if k in fields), None)
            if target is None:
                errors.add(join_path(path, key), f"{cls_name} has no {key!r} option")
            else:
                put(target, value, key)
        elif legacy and key in RENAMES and RENAMES[key] in fields:
            put(RENAMES[key], value, key)
        else:
            from optreg.errors import closest

            errors.add(join_path(path, key), f"unknown option of Cerebras {cls_name}",
                       closest(key, [*fields, *(STEP_KEYS if legacy else ())]))
    written.update({option: join_path(path, key) for option, key in seen.items() if option != key})
    return out


def _steps(params: Mapping[str, Any], path: str, errors: Collector) -> int | None:
    """The stage length a legacy item declares (steps, decay_steps or total_iters)."""
    given = [k for k in STEP_KEYS if k in params]
    if not given:
        return None
    value = params[given[0]]
    wrong = number_message(value, 1, integer=True)
    if wrong is not None:
        errors.add(join_path(path, given[0]), wrong)
        return None
    return value


# ---------------------------------------------------------------------------------------------------
# legacy form
# ---------------------------------------------------------------------------------------------------
def _legacy_one(params: Mapping[str, Any], path: str, errors: Collector, written: dict[str, str]
                ) -> dict[str, Any] | None:
    """One legacy item (at `path`) as Cerebras reads it; where it writes each part of the spec into `written`
    (relative to the spec, as `ReadSpec.written`)."""
    params = {k: v for k, v in params.items() if k not in TOP_LEVEL}
    name = params.pop("scheduler", None)
    if name is None:
        errors.add(join_path(path, "scheduler"), "required: the scheduler's name")
        return None
    try:
        cls_name = class_name(name, join_path(path, "scheduler"))
    except ConfigError as exc:
        errors.extend(exc)
        return None
    written[""] = path
    options = _map_keys(cls_name, params, path, errors, True, written)
    return {"name": cls_name, "dialect": "cerebras", **options}


def _legacy_list(items: Sequence[Any], path: str, errors: Collector, reset_disabled: bool,
                 written: dict[str, str]) -> dict[str, Any] | None:
    """A legacy list (at `path`): one item, a SequentialLR, a ChainedLR or a `sequential` of them; `written` as in
    `_legacy_one`."""
    mains, flags = set(), set()
    specs, lengths, places = [], [], []
    for i, item in enumerate(items):
        where = join_path(path, i)
        if not isinstance(item, Mapping):
            errors.add(where, f"expected a scheduler mapping, got {show(item)}")
            continue
        if "main_scheduler" in item:
            mains.add(str(item["main_scheduler"]).lower())
        if "disable_lr_steps_reset" in item:
            flags.add(bool(item["disable_lr_steps_reset"]))
        lengths.append(_steps(item, where, errors))
        places.append({})
        specs.append(_legacy_one(item, where, errors, places[-1]))
    if len(mains) > 1:
        errors.add(join_path(path, "main_scheduler"), f"conflicting main_scheduler values: {sorted(mains)}")
    if len(flags) > 1:
        errors.add(join_path(path, "disable_lr_steps_reset"), "conflicting disable_lr_steps_reset values")
    chained = bool(mains) and next(iter(mains)) in ("chained", "chainedlr", "chainedscheduler")
    if not chained:
        for i, item in enumerate(items[:-1]):
            if isinstance(item, Mapping) and not any(k in item for k in STEP_KEYS):
                errors.add(join_path(path, i), "every scheduler but the last needs 'steps', 'decay_steps' or "
                                               "'total_iters' (its length in the sequence)")
    if errors:
        return None
    written[""] = path
    if len(specs) > 1 or chained:   # the combinator's stages are the list the file writes
        written["schedulers"] = path
    for i, place in enumerate(places):   # a single item is the spec itself
        written.update({join_path("" if len(specs) == 1 and not chained else f"schedulers[{i}]", k): v
                        for k, v in place.items()})
    if chained:
        return {"name": "ChainedLR", "dialect": "cerebras", "schedulers": specs}
    if len(specs) == 1:
        return specs[0]
    reset_disabled = next(iter(flags)) if flags else reset_disabled
    milestones, total = [], 0
    for length in lengths[:-1]:
        total += length
        milestones.append(total)
    all_have_length = all("total_iters" in s for s in specs[:-1])
    if not reset_disabled and all_have_length:
        return {"name": "SequentialLR", "dialect": "cerebras", "schedulers": specs}
    return {"name": "sequential", "schedulers": specs, "milestones": milestones,
            "restart": "global" if reset_disabled else "local"}


# ---------------------------------------------------------------------------------------------------
# current form
# ---------------------------------------------------------------------------------------------------
def _is_current(value: Any) -> bool:
    return (isinstance(value, Mapping) and len(value) == 1 and "scheduler" not in value
            and isinstance(next(iter(value.values())), (Mapping, type(None))))


def _current_one(value: Mapping[str, Any], path: str, errors: Collector, written: dict[str, str],
                 torch_hint: bool = False) -> dict[str, Any] | None:
    """One `{Name: {...}}` item (at `path`) as Cerebras reads it; `written` as in `_legacy_one`; `torch_hint`: in
    optreg's own scheduler section, an item that Cerebras' class refuses but whose keys are all torch's same-named
    scheduler's is the one error `_torch_hint`."""
    (name, params), = value.items()
    params = dict(params or {})
    where = join_path(path, key_text(name))
    written[""] = where
    key = _norm(name)
    if key in COMBINATORS:
        children = params.pop("schedulers", None)
        if not isinstance(children, list) or not children:
            errors.add(join_path(where, "schedulers"), "expected a non-empty list of schedulers")
            return None
        places: list[dict[str, str]] = [{} for _ in children]
        specs = [_current_one(c, join_path(join_path(where, "schedulers"), i), errors, places[i], torch_hint)
                 if _is_current(c) else _bad(c, join_path(join_path(where, "schedulers"), i), errors)
                 for i, c in enumerate(children)]
        for i, place in enumerate(places):
            written.update({join_path(f"schedulers[{i}]", k): v for k, v in place.items()})
        spec: dict[str, Any] = {"name": COMBINATORS[key], "dialect": "cerebras", "schedulers": specs}
        if "milestones" in params and COMBINATORS[key] == "SequentialLR":
            spec["milestones"] = params.pop("milestones")
        for extra in params:
            errors.add(join_path(where, extra), UNSUPPORTED.get(extra, f"unknown option of Cerebras {name}"))
        return spec
    if key == "scaleperparam":
        errors.add(where, UNSUPPORTED["adjust_learning_rate"])
        return None
    wd = key.endswith("wd")
    if wd:
        key = key[:-2]
    try:
        cls_name = class_name(key, where)
    except ConfigError as exc:
        errors.extend(exc)
        return None
    problems = Collector()
    options = _map_keys(cls_name, params, where, problems, False, written, twin=wd)
    hint = _torch_hint(cls_name, params, options, bool(problems), path) if torch_hint and not wd else None
    if hint is not None:
        errors.add(path, hint)
        return None
    errors.extend(problems.items)
    spec = {"name": cls_name, "dialect": "cerebras", **options}
    if wd:
        spec["key"] = "weight_decay"
    return spec


def _torch_hint(cls_name: str, params: Mapping[str, Any], options: Mapping[str, Any], refused: bool,
                path: str) -> str | None:
    """The message for a `{Name: {...}}` item (at `path`: a list's item, or a section) written with the options of
    torch's scheduler of that name: every key is torch's, and Cerebras' class refuses the item (`refused`: a key it
    does not have; or a required option of its missing). None for any other item."""
    from optreg.core.entry import SCHEDULER
    from optreg.core.registry import REGISTRY
    from optreg.core.validate import option_names

    keys = [key_text(k) for k in params]
    try:
        torch_keys = set(option_names(REGISTRY.lookup(SCHEDULER, cls_name, "torch")))
    except ConfigError:   # no torch scheduler of that name (CosineDecayLR)
        return None
    missing = [f.name for f in _fields(cls_name) if f.name not in options and
               f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if not keys or not set(keys) <= torch_keys or not (refused or missing):
        return None
    fields = _options(cls_name)
    foreign = [k for k in keys if k not in fields]
    named = foreign or keys
    given = ", ".join(f"{k}: {show(v)}" for k, v in zip(keys, params.values()))
    return (f"{', '.join(named)} {'is an option' if len(named) == 1 else 'are options'} of torch's {cls_name}"
            + (", not of Cerebras'" if foreign else f" too, and Cerebras' needs {', '.join(missing)}")
            + f"; the {{Name: {{...}}}} form reads Cerebras' schedulers: write `{'- ' if path.endswith(']') else ''}"
              f"{{name: torch.{cls_name}, {given}}}` for torch's")


def _bad(value: Any, path: str, errors: Collector) -> None:
    errors.add(path, f"expected a single-key mapping {{SchedulerName: {{...}}}}, got {show(value)}")
    return None


# ---------------------------------------------------------------------------------------------------
# JSON Schema of the current form (optreg schema)
# ---------------------------------------------------------------------------------------------------
_SEP = "[-_]*"   # what `_norm` drops anywhere


def _spelt(letters: str) -> str:
    """A regular expression of `letters` as `_norm` reads them: in any case, `-` and `_` anywhere after each."""
    from optreg.core.names import any_case

    return "".join(any_case(c) + _SEP for c in letters)


def _key_pattern(norm: str, twin: bool = False, legacy: bool = False) -> str:
    """Every key that `_current_one` reads as the class or combinator whose `_norm` is `norm`: `_norm` drops an
    `LR`, a `WD` after it names the weight-decay twin, and `class_name` drops one `LR` more (`LinearLR`, `linear`,
    `Linear_LR_WD`); surrounding spaces are stripped. `legacy`: the `scheduler:` value `_legacy_one` reads, which
    `class_name` alone reads (one `LR` dropped)."""
    lr = f"({_spelt('lr')})?"
    if norm in COMBINATORS or legacy:   # read by `_norm` alone
        return rf"^\s*{_SEP}{_spelt(norm)}{lr}\s*$"
    return rf"^\s*{_SEP}{_spelt(norm)}{lr}{_spelt('wd') if twin else ''}{lr}\s*$"


def _params(options: Mapping[str, Any]) -> dict[str, Any]:
    """The schema of one scheduler's parameters in the current form: its options, or null (none given)."""
    return {"anyOf": [{"type": "object", "properties": dict(options), "additionalProperties": False},
                      {"type": "null"}]}


def _legacy_schema(options_of: Any) -> dict[str, Any]:
    """The JSON Schema of one legacy item as `_legacy_one` and `_map_keys(legacy=True)` read it: `scheduler:` a
    class, its options and their legacy spellings (`STEP_KEYS`, `LR_KEYS`, `RATE_KEYS`, `RENAMES`), and the list's
    `TOP_LEVEL` keys. (That every item of a list but the last gives its steps is not said.)"""
    main, reset = TOP_LEVEL
    top = {main: {"type": "string"}, reset: {"type": "boolean"}}
    items = []
    for cls in CLASSES:
        own = options_of(cls)
        fields = {k: own[k] for k in _options(cls) if k in own}
        aliases: dict[str, Any] = {k: fields.get("total_iters", {"type": "integer", "minimum": 1})
                                   for k in STEP_KEYS}
        for keys in (LR_KEYS, RATE_KEYS):
            target = next((k for k in keys if k in fields), None)
            aliases.update({k: fields[target] for k in keys} if target else {})
        aliases.update({k: fields[v] for k, v in RENAMES.items() if v in fields})
        items.append({"type": "object", "required": ["scheduler"], "additionalProperties": False,
                      "properties": {"scheduler": {"type": "string", "pattern": _key_pattern(_norm(cls), legacy=True)},
                                     **aliases, **fields, **top}})
    return {"anyOf": items, "description": "Cerebras' legacy form of a scheduler (Model Zoo 1.x-2.2): "
                                           "{scheduler: Linear, initial_learning_rate, end_learning_rate, steps}"}


def schema(options_of: Any, ref: str) -> dict[str, Any]:
    """The JSON Schema of the forms `to_spec` reads in a scheduler spec: the legacy item (`_legacy_schema`) and the
    current form as `_current_one` reads it, a one-key mapping `{Name: {...}}` of a class's options (`_options`;
    their schemas `options_of(class)`, the dialect's rows'), its weight-decay twin `{NameWD: {initial_val, ...}}`
    (`WD_RENAMES`, beside the lr names), or a combinator `{SequentialLR: {schedulers: [...], milestones}}` /
    `{ChainedScheduler: {schedulers: [...]}}` of schedulers of the current form (`ref`)."""
    return {"anyOf": [_current_schema(options_of, ref), _legacy_schema(options_of)]}


def _current_schema(options_of: Any, ref: str) -> dict[str, Any]:
    """The current form `{Name: {...}}` (`schema`); `ref`: the form's `$ref`, whose first branch this is."""
    patterns: dict[str, Any] = {}
    for cls in CLASSES:
        own = options_of(cls)
        options = {k: own[k] for k in _options(cls) if k in own}
        patterns[_key_pattern(_norm(cls))] = _params(options)
        twin = {**options, **{generic: options[k] for generic, k in WD_RENAMES.items() if k in options}}
        patterns[_key_pattern(_norm(cls), twin=True)] = _params(twin)
    for key, cls in COMBINATORS.items():
        options = {"schedulers": {"type": "array", "minItems": 1, "items": {"$ref": f"{ref}/anyOf/0"}}}
        if cls == "SequentialLR":   # the milestones `_current_one` keeps
            options["milestones"] = options_of(cls)["milestones"]
        patterns[_key_pattern(key)] = {"type": "object", "required": ["schedulers"], "properties": options,
                                       "additionalProperties": False}
    return {"type": "object", "minProperties": 1, "maxProperties": 1, "patternProperties": patterns,
            "additionalProperties": False,
            "description": "Cerebras' form of a scheduler (Model Zoo 2.3+ trainer configs): {LinearLR: {options}}, "
                           "{CosineDecayWD: {...}} (weight decay), {SequentialLR: {schedulers: [...]}}"}


# ---------------------------------------------------------------------------------------------------
# entry points
# ---------------------------------------------------------------------------------------------------
def claims(spec: Any) -> bool:
    """Cerebras' YAML forms of a scheduler: legacy `{scheduler: Linear, ...}` items and current `{LinearLR: {...}}`
    dicts (a mapping, or a list of them)."""
    if isinstance(spec, Mapping):
        return "scheduler" in spec and not any(k in spec for k in NAME_KEYS) or (
            len(spec) == 1 and next(iter(spec)) not in NAME_KEYS and isinstance(next(iter(spec.values())),
                                                                                  (Mapping, type(None))))
    return isinstance(spec, (list, tuple)) and bool(spec) and all(claims(s) for s in spec)


def read_form(spec: Any, *, path: str = "scheduler") -> ReadSpec:
    """A scheduler section of optreg's own config written in a Cerebras form: `to_spec`, with an item written with
    torch's options said so (`_torch_hint`: the form is Cerebras', torch's is `{name: torch.X, ...}`)."""
    return to_spec(spec, path=path, torch_hint=True)


def to_spec(learning_rate: Any, *, path: str = "learning_rate", disable_lr_steps_reset: bool = False,
            torch_hint: bool = False) -> ReadSpec:
    """One canonical scheduler spec from any Cerebras `learning_rate` form (see the module docstring), with where
    the form writes each part of it (`ReadSpec.written`: the class's key, a legacy list's item, an option read
    under a legacy or weight-decay name); `torch_hint` as in `read_form`."""
    errors = Collector()
    spec: dict[str, Any] | None = None
    written: dict[str, str] = {}
    if isinstance(learning_rate, (int, float, str)) and not isinstance(learning_rate, bool):
        return ReadSpec({"name": "ConstantLR", "dialect": "cerebras", "learning_rate": _number(learning_rate, path)},
                        {"learning_rate": path})
    if _is_current(learning_rate):
        spec = _current_one(learning_rate, path, errors, written, torch_hint)
    elif isinstance(learning_rate, Mapping):   # its length at the key it is written with, as a list's item's
        _steps(learning_rate, path, errors)
        spec = _legacy_one(learning_rate, path, errors, written)
    elif isinstance(learning_rate, (list, tuple)) and learning_rate:
        if all(_is_current(v) for v in learning_rate):
            if len(learning_rate) != 1:
                errors.add(path, "a list of {Name: {...}} schedulers holds independent schedulers (one per "
                                 "param-group key); convert it with to_specs()")
            else:
                spec = _current_one(learning_rate[0], join_path(path, 0), errors, written, torch_hint)
        else:
            spec = _legacy_list(learning_rate, path, errors, disable_lr_steps_reset, written)
    else:
        errors.add(path, f"expected a number, a scheduler mapping or a list of them, got {show(learning_rate)}")
    errors.raise_if_any()
    assert spec is not None
    return ReadSpec(spec, written)


def to_specs(schedulers: Sequence[Any], *, path: str = "schedulers") -> list[ReadSpec]:
    """The trainer's `schedulers:` list (independent schedulers, e.g. one for lr and one for weight decay)."""
    errors = Collector()
    specs = []
    if not isinstance(schedulers, (list, tuple)):
        raise ConfigError(f"expected a list of {{Name: {{...}}}} schedulers, got {show(schedulers)}", path)
    for i, value in enumerate(schedulers):
        where = join_path(path, i)
        written: dict[str, str] = {}
        spec = _current_one(value, where, errors, written) if _is_current(value) else _bad(value, where, errors)
        if spec is not None:
            specs.append(ReadSpec(spec, written))
    keys = [s.get("key", "lr") for s in specs]
    for key in set(keys):
        if keys.count(key) > 1:
            errors.add(path, f"two schedulers drive {key!r}; Cerebras allows one per param-group key")
    errors.raise_if_any()
    return specs


__all__ = ["claims", "read_form", "to_spec", "to_specs", "class_name", "schema", "CLASSES"]

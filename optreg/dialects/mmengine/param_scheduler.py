"""The entries of MMEngine's `param_scheduler` list: their types (LinearLR, LinearMomentum, LinearParamScheduler,
...), options and defaults (mmengine 0.10 `optim/scheduler`), one Pydantic model per type; and their windows once
the run is known (`windows`: an `end` left out, `convert_to_iter_based`).

An entry is `{type: <Kind><LR | Momentum | ParamScheduler>, <its options>, begin: 0, end: <the run's>, by_epoch:
true, convert_to_iter_based: false}` (`param_name: lr | momentum | weight_decay` with a `*ParamScheduler`), as
MMEngine's config writes it. Every problem is a ConfigError at the entry's key: an unknown type or option with a
did-you-mean, each value against MMEngine's constructor's range, and the rules across keys (end > begin, ...)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, Mapping, Optional, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from optreg.core.types import Bool, integer, number, strict_number
from optreg.errors import Collector, ErrorItem, closest, counted, join_path, key_text, says_required, show, unknown_name

INF = 10 ** 9   # MMEngine's `end` when none is given (mmengine.optim.scheduler.param_scheduler.INF)

Count = integer(ge=1, le=INF)
Factor = number(ge=0, le=1)          # MMEngine's range of start_factor, end_factor, factor
Rate = number(gt=0, le=1e3)          # gamma
Level = number(ge=0, le=1e9)         # eta_min, eta_min_ratio, eta_max, power
Divisor = number(gt=0)               # div_factor, final_div_factor


#: MMEngine's class stem -> (kind, {option: (type, default)}; `...`: required)
KINDS: dict[str, tuple[str, dict[str, tuple[Any, Any]]]] = {
    "Linear": ("linear", {"start_factor": (Factor, 1 / 3), "end_factor": (Factor, 1.0)}),
    "Constant": ("constant", {"factor": (Factor, 1 / 3)}),
    "Poly": ("poly", {"eta_min": (Level, 0.0), "power": (Level, 1.0)}),
    "Exponential": ("exponential", {"gamma": (Rate, ...)}),
    "Step": ("step", {"step_size": (Count, ...), "gamma": (Rate, 0.1)}),
    "MultiStep": ("multistep", {"milestones": (list[Count], ...), "gamma": (Rate, 0.1)}),
    "CosineAnnealing": ("cosine", {"T_max": (Optional[Count], None), "eta_min": (Optional[Level], None),
                                   "eta_min_ratio": (Optional[Level], None)}),
    "OneCycle": ("onecycle", {"eta_max": (Level, 0.0), "total_steps": (Optional[Count], None),
                              "pct_start": (strict_number(ge=0, le=1), 0.3),
                              "anneal_strategy": (Literal["cos", "linear"], "cos"), "div_factor": (Divisor, 25.0),
                              "final_div_factor": (Divisor, 1e4), "three_phase": (Bool, False)}),
    "CosineRestart": ("cosine_restart", {"periods": (list[Count], ...), "restart_weights": (list[Level], [1]),
                                         "eta_min": (Optional[Level], None),
                                         "eta_min_ratio": (Optional[Level], None)}),
}
#: the class suffix -> the group key it drives (ParamScheduler: its param_name)
SUFFIXES = {"LR": "lr", "Momentum": "momentum", "ParamScheduler": None}
KEYS = ("lr", "momentum", "weight_decay")
#: the keys of every entry: its window in its unit
LOOP = {"begin": (integer(ge=0, le=INF), 0), "end": (Optional[Count], None), "by_epoch": (Bool, True),
        "convert_to_iter_based": (Bool, False)}
LISTS = ("milestones", "periods", "restart_weights")   # non-empty
COUNTS = ("step_size", "milestones", "T_max", "total_steps", "periods")   # times E on conversion
TYPES = sorted(f"{stem}{suffix}" for stem in KINDS for suffix in SUFFIXES if not (stem == "OneCycle" and
                                                                                  suffix != "LR"))


@lru_cache(maxsize=None)
def model(type_name: str) -> type[BaseModel]:
    """The Pydantic model of one entry type (`LinearLR`): its options with MMEngine's defaults and ranges, the
    window keys, `param_name` for a `*ParamScheduler`; unknown keys forbidden."""
    stem, suffix = split_type(type_name)
    fields: dict[str, Any] = {"type": (Literal[type_name], ...)}
    for name, (kind, default) in {**KINDS[stem][1], **LOOP}.items():
        fields[name] = (kind, Field(default, min_length=1) if name in LISTS else default)
    if SUFFIXES[suffix] is None:
        fields["param_name"] = (Literal[KEYS], ...)
    return create_model(type_name, __config__=ConfigDict(extra="forbid"),
                        __doc__=f"MMEngine's {type_name} in a param_scheduler list", **fields)


def split_type(name: str) -> tuple[str, str]:
    """(stem, suffix) of a known type name (KeyError otherwise)."""
    for suffix in SUFFIXES:
        stem = name[: -len(suffix)] if name.endswith(suffix) else None
        if stem in KINDS and (stem != "OneCycle" or suffix == "LR"):
            return stem, suffix
    raise KeyError(name)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a param_scheduler list: a non-empty array of entries, each one type's object."""
    return {"type": "array", "minItems": 1,
            "items": {"type": "object", "title": "MMEngine entry", "oneOf": [model(t).model_json_schema()
                                                                            for t in TYPES]}}


@dataclass
class Entry:
    """One entry, read: kind, the key it drives, options (defaults filled), window (end None: the run's)."""

    kind: str
    key: str
    options: dict[str, Any]
    path: str
    begin: int = 0
    end: int | None = None
    by_epoch: bool = True
    convert: bool = False


def another_package(name: str, registry: str, known: Sequence[str], what: str, example: str) -> str | None:
    """What is wrong with a `type` of MMEngine's `registry` that is none of `known` (`what`: the classes optreg
    reads there) nor a misspelling of one: a class another package registers there, code optreg does not import;
    `scope.Name` (MMEngine's name of another scope's class: `mmdet.QuadraticWarmupLR`) says whose. None: a misspelling
    of a known class or a name of MMEngine's own scope, the caller's error (with its did-you-mean)."""
    scope, _, bare = name.rpartition(".")
    if scope:
        return None if scope == "mmengine" else \
            f"{show(name)} is a class {scope} registers in MMEngine's {registry} registry: another package's code, " \
            f"which optreg does not import"
    if name in known or closest(name, list(known)) is not None:
        return None
    return f"{show(name)} is not one of {what}, which MMEngine's {registry} registry holds by name: a class another " \
           f"package registers there ({example}) is code optreg does not import"


def _type(raw: Any, path: str, errors: Collector) -> str | None:
    """An entry's `type`, known; ReduceOnPlateau and unknown types are errors (with a did-you-mean)."""
    if not isinstance(raw, str):
        errors.add(join_path(path, "type"), f"required: an MMEngine scheduler type ({', '.join(TYPES[:4])}, ...), "
                                            f"got {show(raw)}")
        return None
    if raw.startswith("ReduceOnPlateau"):
        errors.add(join_path(path, "type"), f"{raw} steps on a validation metric that MMEngine's ValLoop hands it; "
                                            f"optreg's schedules are functions of the step count, so it is not "
                                            f"supported: use a step-driven schedule")
        return None
    try:
        split_type(raw)
    except KeyError:
        other = another_package(raw, "PARAM_SCHEDULERS", TYPES, "MMEngine's parameter schedulers",
                                "mmdet's QuadraticWarmupLR")
        errors.extend([ErrorItem(join_path(path, "type"), other) if other is not None else
                       unknown_name(join_path(path, "type"), "MMEngine", "scheduler", raw, TYPES)])
        return None
    return raw


def read_entry(raw: Any, path: str, errors: Collector) -> Entry | None:
    """One `param_scheduler` entry validated by its type's model (every problem at its path); None when it has
    problems."""
    from optreg.core.models import pydantic_errors

    if not isinstance(raw, Mapping):
        errors.add(path, f"expected a scheduler mapping with type:, got {show(raw)}")
        return None
    kind = _type(raw.get("type"), path, errors)
    if kind is None:
        return None
    cls = model(kind)
    fields = [f for f in cls.model_fields if f != "type"]
    n = len(errors.items)
    for key in raw:
        if key not in cls.model_fields:
            errors.add(join_path(path, key_text(key)), f"unknown option of MMEngine's {kind}",
                       closest(key, fields) if isinstance(key, str) else None)
    try:
        values = cls.model_validate({k: v for k, v in raw.items() if k in cls.model_fields}).model_dump()
    except ValidationError as exc:
        for item in pydantic_errors(exc):
            errors.add(join_path(path, item.path), f"{item.message} ({kind})" if says_required(item.message)
                       else item.message, item.suggestion)
        return None
    if len(errors.items) != n:
        return None
    stem, suffix = split_type(kind)
    options = {k: v for k, v in values.items() if k in KINDS[stem][1] and v is not None}
    entry = Entry(KINDS[stem][0], SUFFIXES[suffix] or values["param_name"], options, path, values["begin"],
                  values["end"], values["by_epoch"], values["convert_to_iter_based"])
    _check_across(entry, errors)
    return entry if len(errors.items) == n else None


def _check_across(entry: Entry, errors: Collector) -> None:
    """MMEngine's rules across an entry's keys."""
    o, path = entry.options, entry.path
    if entry.convert and not entry.by_epoch:
        errors.add(join_path(path, "convert_to_iter_based"), "MMEngine converts only an epoch-based entry "
                                                             "(by_epoch: true)")
    if entry.end is not None and entry.end <= entry.begin:
        errors.add(join_path(path, "end"), f"must be larger than begin ({entry.begin}), got {entry.end}")
    if "eta_min" in o and "eta_min_ratio" in o:
        errors.add(join_path(path, "eta_min_ratio"), "give eta_min or eta_min_ratio, not both")
    if entry.kind == "cosine_restart" and "eta_min" not in o and "eta_min_ratio" not in o:
        errors.add(join_path(path, "eta_min"), "MMEngine's CosineRestart needs one of eta_min and eta_min_ratio")
    if entry.kind == "cosine_restart" and len(o["periods"]) != len(o["restart_weights"]):
        errors.add(join_path(path, "restart_weights"), f"expected one weight per period ({len(o['periods'])})")


def read_entries(raw: Any, path: str, errors: Collector) -> list[Entry]:
    """A param_scheduler list (a single mapping is a list of one, as MMEngine reads it), each entry read."""
    items = [raw] if isinstance(raw, Mapping) else raw
    if not isinstance(items, (list, tuple)) or not items:
        errors.add(path, f"expected a non-empty list of scheduler mappings, got {show(raw)}")
        return []
    entries = [read_entry(item, join_path(path, i), errors) for i, item in enumerate(items)]
    return [e for e in entries if e is not None]


def default_ends(max_epochs: int | None, max_iters: int | None, steps_per_epoch: int,
                 run_steps: int | None) -> tuple[int, int]:
    """The `end` of an epoch-based and of an iteration-based entry that leaves it out, as MMEngine's runner gives
    them: the train loop's max_epochs (× E in iterations) or max_iters (an iteration-based loop counts as one
    epoch); without a train loop, the run's end (⌈steps / E⌉ epochs, its steps); unbounded without either."""
    if max_epochs is not None:
        return max_epochs, max_epochs * steps_per_epoch
    if max_iters is not None:
        return 1, max_iters
    if run_steps is None:
        return INF, INF
    return math.ceil(run_steps / steps_per_epoch), run_steps


def windows(entries: list[Entry], steps_per_epoch: int, ends: tuple[int, int], errors: Collector) -> list[Any]:
    """The entries as windows for a run of E steps per epoch: an `end` left out is `ends` (of an epoch-based entry,
    of an iteration-based one: `default_ends`), then `convert_to_iter_based` (begin, end and the counts times E)."""
    from optreg.dialects.mmengine.schedules import Window

    out = []
    for e in entries:
        end = e.end
        if end is None:
            end = ends[0] if e.by_epoch else ends[1]
            if end <= e.begin:
                length = counted(end, "epoch" if e.by_epoch else "step")
                errors.add(join_path(e.path, "end"), f"the train loop's length ({length}) ends the entry before "
                                                     f"its begin ({e.begin}); give end")
                continue
        options, begin, by_epoch = dict(e.options), e.begin, e.by_epoch
        if e.convert:
            factor = steps_per_epoch
            begin, end, by_epoch = begin * factor, (end * factor if end != INF else INF), False
            for k in COUNTS:
                if options.get(k) is not None:
                    options[k] = [x * factor for x in options[k]] if isinstance(options[k], list) else \
                        options[k] * factor
        if e.kind == "onecycle" and end != INF and options.get("total_steps") and \
                end - begin > options["total_steps"] + 1:
            errors.add(join_path(e.path, "total_steps"), f"MMEngine's OneCycleLR fails past total_steps "
                                                         f"({options['total_steps']}) steps, and its window is "
                                                         f"{end - begin} long")
        out.append(Window(e.kind, options, e.path, begin, end, by_epoch))
    return out


__all__ = ["Entry", "INF", "KINDS", "TYPES", "model", "read_entry", "read_entries", "default_ends", "windows",
           "json_schema"]

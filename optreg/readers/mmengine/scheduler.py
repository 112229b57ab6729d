"""MMEngine's `param_scheduler` entries read: their types (LinearLR, LinearMomentum, LinearParamScheduler, ...),
options and defaults (mmengine 0.10), and their windows once the run is known (`windows`: the default `end` from the
train loop, `convert_to_iter_based`). The schedule itself is optreg.readers.mmengine.schedules.ParamSchedulers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from optreg.errors import Collector, closest, join_path, key_text, show
from optreg.readers.mmengine.params import is_number
from optreg.readers.mmengine.schedules import INF, Window

#: MMEngine's class stem -> (kind, {option: default}; None: required)
KINDS: dict[str, tuple[str, dict[str, Any]]] = {
    "Linear": ("linear", {"start_factor": 1 / 3, "end_factor": 1.0}),
    "Constant": ("constant", {"factor": 1 / 3}),
    "Poly": ("poly", {"eta_min": 0.0, "power": 1.0}),
    "Exponential": ("exponential", {"gamma": None}),
    "Step": ("step", {"step_size": None, "gamma": 0.1}),
    "MultiStep": ("multistep", {"milestones": None, "gamma": 0.1}),
    "CosineAnnealing": ("cosine", {"T_max": "", "eta_min": "", "eta_min_ratio": ""}),
    "OneCycle": ("onecycle", {"eta_max": 0.0, "total_steps": "", "pct_start": 0.3, "anneal_strategy": "cos",
                              "div_factor": 25.0, "final_div_factor": 1e4, "three_phase": False}),
    "CosineRestart": ("cosine_restart", {"periods": None, "restart_weights": [1], "eta_min": "",
                                         "eta_min_ratio": ""}),
}
#: the class suffix -> the group key it drives (ParamScheduler: its param_name)
SUFFIXES = {"LR": "lr", "Momentum": "momentum", "ParamScheduler": None}
LOOP = ("type", "begin", "end", "by_epoch", "convert_to_iter_based")
TRAINER = ("verbose",)    # reported as the trainer's
COUNTS = ("step_size", "milestones", "T_max", "total_steps", "periods")   # times E on conversion
KEYS = {"lr": "lr", "momentum": "momentum", "weight_decay": "weight_decay"}
TYPES = sorted(f"{stem}{suffix}" for stem in KINDS for suffix in SUFFIXES if not (stem == "OneCycle" and
                                                                                  suffix != "LR"))


@dataclass
class Entry:
    """One entry, read: kind, the key it drives, options (defaults filled), window (end None: the train loop's)."""

    kind: str
    key: str
    options: dict[str, Any]
    path: str
    begin: int = 0
    end: int | None = None
    by_epoch: bool = True
    convert: bool = False


def _type(raw: Any, path: str, errors: Collector) -> tuple[str, str | None] | None:
    """(stem, suffix) of an entry's `type`; ReduceOnPlateau and unknown types are errors."""
    if not isinstance(raw, str):
        errors.add(join_path(path, "type"), f"required: an MMEngine scheduler type ({', '.join(TYPES[:4])}, ...), "
                                            f"got {show(raw)}")
        return None
    if raw.startswith("ReduceOnPlateau"):
        errors.add(join_path(path, "type"), f"{raw} steps on a validation metric that MMEngine's ValLoop hands it; "
                                            f"optreg's schedules are functions of the step count, so it is not "
                                            f"supported: use a step-driven schedule")
        return None
    for suffix in SUFFIXES:
        stem = raw[: -len(suffix)] if raw.endswith(suffix) else None
        if stem in KINDS and (stem != "OneCycle" or suffix == "LR"):
            return stem, suffix
    errors.add(join_path(path, "type"), f"unknown MMEngine scheduler {show(raw)}", closest(raw, TYPES))
    return None


def _int(value: Any, path: str, errors: Collector, low: int = 0) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= INF:
        errors.add(path, f"must be an integer in [{low}, {INF}], got {show(value)}")
        return None
    return value


def read_entry(raw: Any, path: str, errors: Collector) -> Entry | None:
    """One `param_scheduler` entry checked (every problem at its path); None when it cannot be read."""
    if not isinstance(raw, Mapping):
        errors.add(path, f"expected a scheduler mapping with type:, got {show(raw)}")
        return None
    typed = _type(raw.get("type"), path, errors)
    if typed is None:
        return None
    stem, suffix = typed
    kind, defaults = KINDS[stem]
    allowed = {*LOOP, *TRAINER, *defaults, *(("param_name",) if SUFFIXES[suffix] is None else ())}
    n = len(errors.items)
    for key in raw:
        if key not in allowed:
            errors.add(join_path(path, key_text(key)), f"unknown option of MMEngine's {raw['type']}",
                       closest(key, sorted(allowed)) if isinstance(key, str) else None)
    key = SUFFIXES[suffix] or raw.get("param_name")
    if key not in KEYS:
        errors.add(join_path(path, "param_name"), f"must be one of {', '.join(KEYS)}, got {show(key)}")
    options = {k: raw.get(k, d) for k, d in defaults.items() if k in raw or d not in (None, "")}
    for k, d in defaults.items():
        if d is None and k not in raw:
            errors.add(join_path(path, k), f"required by MMEngine's {raw['type']}")
    entry = Entry(kind, KEYS.get(key, "lr"), options, path)
    for flag, attr in (("by_epoch", "by_epoch"), ("convert_to_iter_based", "convert")):
        if flag in raw:
            if isinstance(raw[flag], bool):
                setattr(entry, attr, raw[flag])
            else:
                errors.add(join_path(path, flag), f"must be true or false, got {show(raw[flag])}")
    if entry.convert and not entry.by_epoch:
        errors.add(join_path(path, "convert_to_iter_based"), "MMEngine converts only an epoch-based entry "
                                                             "(by_epoch: true)")
    entry.begin = _int(raw.get("begin", 0), join_path(path, "begin"), errors) or 0
    if raw.get("end") is not None:
        entry.end = _int(raw["end"], join_path(path, "end"), errors, 1)
        if entry.end is not None and entry.end <= entry.begin:
            errors.add(join_path(path, "end"), f"must be larger than begin ({entry.begin}), got {entry.end}")
    _check_options(entry, join_path, errors)
    return entry if len(errors.items) == n else None


def _check_options(entry: Entry, join: Any, errors: Collector) -> None:
    """The numbers MMEngine's constructors and steps accept."""
    o, path = entry.options, entry.path
    for k, v in o.items():
        here = join(path, k)
        if k in ("milestones", "periods", "restart_weights"):
            whole = k != "restart_weights"
            if not isinstance(v, (list, tuple)) or not v or not all(
                    (isinstance(x, int) and not isinstance(x, bool) and 0 < x <= INF) if whole else
                    (is_number(x) and x >= 0) for x in v):
                errors.add(here, f"expected a non-empty list of {'integers > 0' if whole else 'numbers >= 0'}, "
                                 f"got {show(v)}")
        elif k in ("step_size", "T_max", "total_steps"):
            if v is not None:
                _int(v, here, errors, 1)
        elif k == "anneal_strategy":
            if v not in ("cos", "linear"):
                errors.add(here, f"must be 'cos' or 'linear', got {show(v)}")
        elif k == "three_phase":
            if not isinstance(v, bool):
                errors.add(here, f"must be true or false, got {show(v)}")
        elif k == "pct_start":
            if not (isinstance(v, float) and 0 <= v <= 1):
                errors.add(here, f"must be a float in [0, 1] (MMEngine refuses an int), got {show(v)}")
        elif v is not None and not is_number(v):
            errors.add(here, f"must be a number, got {show(v)}")
        elif k in ("start_factor", "end_factor", "factor") and not 0 <= v <= 1:
            errors.add(here, f"must be in [0, 1] (MMEngine's range), got {show(v)}")
        elif k in ("div_factor", "final_div_factor") and not v > 0:
            errors.add(here, f"must be > 0, got {show(v)}")
        elif k == "gamma" and not 0 < v <= 1e3:
            errors.add(here, f"must be in (0, 1000], got {show(v)}")
        elif k in ("eta_min", "eta_min_ratio", "eta_max", "power") and not 0 <= v <= 1e9:
            errors.add(here, f"must be in [0, 1e9], got {show(v)}")
    if entry.kind in ("cosine", "cosine_restart") and "eta_min" in o and "eta_min_ratio" in o:
        errors.add(join(path, "eta_min_ratio"), "give eta_min or eta_min_ratio, not both")
    if entry.kind == "cosine_restart" and "eta_min" not in o and "eta_min_ratio" not in o:
        errors.add(join(path, "eta_min"), "MMEngine's CosineRestart needs one of eta_min and eta_min_ratio")
    if entry.kind == "cosine_restart" and isinstance(o.get("periods"), list) and \
            isinstance(o.get("restart_weights"), list) and len(o["periods"]) != len(o["restart_weights"]):
        errors.add(join(path, "restart_weights"), f"expected one weight per period ({len(o['periods'])})")
    if entry.kind == "onecycle" and entry.key != "lr":
        errors.add(join(path, "param_name"), "MMEngine's OneCycle schedules only the lr")


def windows(entries: list[Entry], steps_per_epoch: int | None, loop_end: tuple[int | None, int | None],
            errors: Collector) -> list[Window] | None:
    """The entries as windows for a run of E steps per epoch: the default `end` (the train loop's max_epochs for an
    epoch-based entry, max_iters for an iteration-based one, as MMEngine's runner sets it; else unbounded), then
    `convert_to_iter_based` (begin, end and the counts times E). None (an error added) when an epoch-based entry
    needs E and the run does not give it."""
    out = []
    for e in entries:
        if e.by_epoch and steps_per_epoch is None:
            errors.add(join_path(e.path, "by_epoch"), "an epoch-based entry (MMEngine's default) needs the steps per "
                                                      "epoch, MMEngine's len(train_dataloader): "
                                                      "train.steps_per_epoch or build(..., steps_per_epoch=)")
            return None
        end = e.end if e.end is not None else (loop_end[0] if e.by_epoch else loop_end[1])
        end = INF if end is None else end
        if end <= e.begin:
            errors.add(join_path(e.path, "end"), f"the train loop's length ({end}) ends the entry before its "
                                                 f"begin ({e.begin}); give end")
            return None
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


__all__ = ["Entry", "read_entry", "windows", "TYPES"]


#: kinds whose MMEngine update, from step 0 of a window that starts the run, is torch's closed form
NATIVE = {"multistep": ("MultiStepLR", ("milestones", "gamma")), "step": ("StepLR", ("step_size", "gamma")),
          "exponential": ("ExponentialLR", ("gamma",)), "cosine": ("CosineAnnealingLR", ("T_max", "eta_min"))}


def native_spec(entries: list[Entry], loop: tuple[int | None, int | None, bool | None]) -> dict[str, Any] | None:
    """optreg's own scheduler spec that says what `entries` say, or None. Only a list of one lr entry of a kind in
    NATIVE, from the run's start (begin 0) to the train loop's end, in the loop's unit and not converted: there
    MMEngine's chained update and torch's closed form give the same values over the run (`by_epoch` as optreg's
    EpochStepped, the steps per epoch from the run); a window shorter than the run holds its last value in MMEngine
    but not in torch, and a converted one spans (end − begin)·E − 1 steps, which no count of optreg's says."""
    if len(entries) != 1:
        return None
    e = entries[0]
    epochs, iters, by_epoch_loop = loop
    length = epochs if e.by_epoch and by_epoch_loop else iters if not e.by_epoch and by_epoch_loop is False else None
    end = e.end if e.end is not None else length
    if e.key != "lr" or e.kind not in NATIVE or e.begin != 0 or e.convert or length is None or end != length or \
            "eta_min_ratio" in e.options:
        return None
    name, keys = NATIVE[e.kind]
    spec = {"name": name, **{k: e.options[k] for k in keys if e.options.get(k) is not None}}
    if e.kind == "cosine":
        spec["T_max"] = spec.get("T_max") or end
    return {**spec, "by_epoch": True} if e.by_epoch else spec

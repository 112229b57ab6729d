"""Hydra and OmegaConf: composed configs to plain data, Hydra overrides on YAML files, builders for `instantiate`.

Composed configs lose file positions; an error then names the dotted path and, when a command-line override set
the value, that override: `override optimizer.lr=-1: optimizer.lr: must be >= 0, got -1.0`; a value the primary
config file writes, where Hydra says which file that is (`primary_positions`), its file:line:column.
`_target_` in an optimizer or scheduler section may only name optreg's own builders (`optimizer_factory`,
`scheduler_factory` below, or the calls `optreg.configure_optimizer`, `optreg.configure_lr_scheduler`); optreg builds
components from `name:`, never from an arbitrary import path.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from optreg.errors import (MAX_DEPTH, MISSING_VALUE, Collector, ConfigError, ErrorItem, Location, check_input, closest,
                           join_path, key_text, show)

OPTIMIZER, SCHEDULER = "optimizer", "scheduler"
BUILDERS = {OPTIMIZER: "optreg.integrations.hydra.support.optimizer_factory",
            SCHEDULER: "optreg.integrations.hydra.support.scheduler_factory"}
#: optreg's Python calls, which a node may name too (`instantiate(cfg.optimizer, params=...)` calls them by keyword)
CALLS = {OPTIMIZER: ("optreg.configure_optimizer", "optreg.core.build.configure_optimizer"),
         SCHEDULER: ("optreg.configure_lr_scheduler", "optreg.core.build.configure_lr_scheduler")}


def targets(kind: str) -> tuple[str, ...]:
    """The `_target_`s a section of `kind` may name: optreg's builder (a group file's) and its Python call."""
    return (BUILDERS[kind], *CALLS[kind])

INSTANTIATE_KEYS = ("_recursive_", "_convert_", "_partial_")
GROUPS = (OPTIMIZER, SCHEDULER)
FILE_OPTION = "__file__"     # the group option that holds a YAML file's own section in `optreg run`


@dataclass(frozen=True)
class OverrideLocation(Location):
    """Where a value of a composed config came from: the command-line override that set it."""

    places = True   # the override sets the key

    def __str__(self) -> str:
        return f"override {self.file}"


def override_location(text: str) -> OverrideLocation:
    return OverrideLocation(text, 0, 0)


# ---------------------------------------------------------------------------------------------------
# OmegaConf -> plain data
# ---------------------------------------------------------------------------------------------------
def _first_line(exc: Exception) -> str:
    return str(getattr(exc, "msg", None) or exc).strip().split("\n")[0]


def _key_paths(node: Any, path: str = "", depth: int = 0) -> list[str]:
    """The dotted key paths of a plain mapping (a config's, unresolved), as an interpolation names them; at most
    MAX_DEPTH levels."""
    if not isinstance(node, Mapping) or depth >= MAX_DEPTH:
        return []
    out = []
    for key, value in node.items():
        where = f"{path}.{key}" if path else str(key)
        out += [where, *_key_paths(value, where, depth + 1)]
    return out


def _missing_key_hint(exc: Exception, root: Any, written: Any = None) -> str | None:
    """The key path of `root` closest to the one an interpolation names and the config lacks (`${train.stepz}`:
    train.steps), or None (another error, a relative interpolation, one of another value this one names).
    `written`: the value as written, where `exc` does not carry its node (OmegaConf.select's)."""
    from omegaconf import OmegaConf
    from omegaconf.errors import InterpolationKeyError

    found = re.match(r"Interpolation key '(.+)' not found", _first_line(exc))
    if not isinstance(exc, InterpolationKeyError) or not found \
            or f"${{{found[1]}}}" not in str(getattr(exc, "child_node", None) or written or ""):
        return None
    return closest(found[1], _key_paths(OmegaConf.to_container(root, resolve=False)))


def unresolved(exc: Exception, root: Any, path: str | None = None) -> tuple[str, str | None]:
    """The message of a value whose interpolation does not resolve (`exc`) and the key path of `root` closest to the
    one it names where the config lacks it (`_missing_key_hint`): one wording for a composed file and a reader that
    resolves its file itself (NeMo's, which gives the value's dotted `path`: OmegaConf.select's error has no node)."""
    written = None
    if path is not None and getattr(exc, "child_node", None) is None:
        from omegaconf import OmegaConf

        node, depth = _walk(OmegaConf.to_container(root, resolve=False), path.split("."))
        written = node if depth == len(path.split(".")) else None
        if written == MISSING:   # the value itself is left blank, as `_check_nodes` says it
            return MISSING_VALUE, None
    return f"cannot resolve interpolation: {_first_line(exc)}", _missing_key_hint(exc, root, written)


def _check_nodes(cfg: Any, path: str, errors: Collector, keys: Sequence[Any] | None = None, depth: int = 0,
                 blanks: list[str] | None = None, root: Any = None) -> None:
    """Every `???` and every interpolation that does not resolve, by dotted path, a misspelt key with the closest
    key path of the config (`root`, where `cfg` is a node of it); at most MAX_DEPTH levels.
    With `blanks`, those paths go there instead of to `errors` (only nesting too deep is an error)."""
    from omegaconf import DictConfig, ListConfig, OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    root = cfg if root is None else root
    if keys is None:
        keys = list(cfg.keys()) if isinstance(cfg, DictConfig) else range(len(cfg))
    for key in keys:
        where = join_path(path, key if isinstance(key, int) else key_text(key))
        if OmegaConf.is_missing(cfg, key):
            if blanks is None:
                errors.add(where, MISSING_VALUE)
            else:
                blanks.append(where)
            continue
        try:
            value = cfg[key]
        except OmegaConfBaseException as exc:
            if blanks is None:
                errors.add(where, *unresolved(exc, root))
            else:
                blanks.append(where)
            continue
        if isinstance(value, (DictConfig, ListConfig)) and not OmegaConf.is_interpolation(cfg, key):
            if depth + 1 >= MAX_DEPTH:
                errors.add(where, f"nested too deeply (more than {MAX_DEPTH} levels)")
                continue
            _check_nodes(value, where, errors, depth=depth + 1, blanks=blanks, root=root)


def container_from_omegaconf(cfg: Any, locate: Callable[[str], Location | None] | None = None,
                             keys: Sequence[str] | None = None, strict: bool = True) -> Any:
    """Resolve interpolations and convert to plain dicts/lists; every missing or unresolvable value is reported.

    With `keys`, only those top-level keys are converted (interpolations still resolve against the whole config).
    Not `strict` (a foreign format's sections, which hold the application's keys too: a NeMo model's dataset paths
    left `???`), a missing or unresolvable value is left as the config writes it (`???`, `${...}`), for the
    format's reader to report where it reads it, as it does in a file read without composing."""
    from omegaconf import DictConfig, ListConfig, OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    if not isinstance(cfg, (DictConfig, ListConfig)):
        return cfg
    errors = Collector()
    blanks: list[str] | None = None if strict else []
    _check_nodes(cfg, "", errors, keys, blanks=blanks)
    if errors:
        error = ConfigError(errors.items)
        raise error.located(locate) if locate else error

    left = set(blanks or ())

    def under(path: str) -> bool:
        return any(not path or b == path or b.startswith((path + ".", path + "[")) for b in left)

    def plain(node: Any, path: str, items: Sequence[Any] | None = None) -> Any:
        if items is None and not under(path):
            return OmegaConf.to_container(node, resolve=True, throw_on_missing=True)
        raw = OmegaConf.to_container(node, resolve=False) if under(path) else None   # the blanks as written
        out = {}
        for key in items if items is not None else node.keys() if isinstance(node, DictConfig) else range(len(node)):
            where = join_path(path, key if isinstance(key, int) else key_text(key))
            value = raw[key] if where in left else node[key]
            out[key] = plain(value, where) if isinstance(value, (DictConfig, ListConfig)) else value
        return out if isinstance(node, DictConfig) else list(out.values())

    try:
        return plain(cfg, "", keys)
    except OmegaConfBaseException as exc:  # pragma: no cover - _check_nodes found nothing, so this is unexpected
        raise ConfigError(f"cannot resolve: {_first_line(exc)}", getattr(exc, "full_key", "") or "") from None


def hydra_overrides(cfg: Any = None) -> list[str]:
    """The command-line overrides of a composed config: from its `hydra:` node (compose(return_hydra_config=True))
    or, inside a `@hydra.main` task, from HydraConfig."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import DictConfig, OmegaConf

    if isinstance(cfg, DictConfig) and "hydra" in cfg:
        task = OmegaConf.select(cfg, "hydra.overrides.task", default=None)
        return [str(o) for o in task] if task is not None else []
    if HydraConfig.initialized():
        return [str(o) for o in HydraConfig.get().overrides.task]
    return []


def primary_positions(cfg: Any = None) -> Callable[[str], Location | None] | None:
    """path -> where the primary config file of a composed config writes it (`Source.exactly`), or None when the
    file is not known: the file that Hydra's `config_name` names in the directory of its main config source (a
    `file` source), from the config's `hydra:` node (compose(return_hydra_config=True)) or, inside a `@hydra.main`
    task, from HydraConfig. The file is read as YAML (`read_yaml`); one that cannot be read gives no positions."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import DictConfig, OmegaConf

    from optreg.config.yaml_loader import read_yaml

    if isinstance(cfg, DictConfig) and "hydra" in cfg:
        runtime = OmegaConf.select(cfg, "hydra.runtime.config_sources", default=None)
        name = OmegaConf.select(cfg, "hydra.job.config_name", default=None)
    elif HydraConfig.initialized():
        runtime, name = HydraConfig.get().runtime.config_sources, HydraConfig.get().job.config_name
    else:
        return None
    roots = [s.path for s in runtime or () if s.provider == "main" and s.schema == "file" and s.path]
    if not roots or not isinstance(name, str) or not name:
        return None
    path = Path(roots[0]) / (name if name.endswith((".yaml", ".yml")) else name + ".yaml")
    if path.is_absolute() and path.is_relative_to(Path.cwd()):
        path = path.relative_to(Path.cwd())
    try:
        return read_yaml(path)[1].exactly if path.is_file() else None
    except ConfigError:
        return None


def _override_key(text: str) -> str:
    key = text.split("=", 1)[0].lstrip("+~").strip()
    return key.split("@", 1)[0]


_INDEX = re.compile(r"\[(\d+)\]")
_DOTTED_INDEX = re.compile(r"\.(\d+)(?=\.|$)")


def dotted(path: str) -> str:
    """An error path as Hydra's overrides spell it: a list index is a dotted part (`optimizer.param_groups[0].lr`
    -> `optimizer.param_groups.0.lr`), so that an override key and a path compare as equal strings."""
    return _INDEX.sub(r".\1", path)


def indexed(key: str) -> str:
    """An override key as an error path, `dotted`'s inverse: a number part is a list index, written as every other
    error writes it (`scheduler.schedulers.1.T_max` -> `scheduler.schedulers[1].T_max`)."""
    return _DOTTED_INDEX.sub(r"[\1]", key)


def override_locator(overrides: Sequence[str], fallback: Callable[[str], Location | None] | None = None,
                     exact: Callable[[str], Location | None] | None = None) -> Callable[[str], Location | None]:
    """path -> the override that set it (the longest key that is the path or a prefix of it, both `dotted`: the
    override `optimizer.param_groups.0.lr=…` set `optimizer.param_groups[0].lr`), else `fallback`. A group switch
    (`optimizer=sgd`) loses to the file only where the file writes the key itself (`exact`, else `fallback`): a key
    the switch's group file brings is the switch's, not the position of its section's parent; a deletion of the
    section (`~optimizer`) is no switch: what it leaves missing is its."""
    keyed = [(dotted(_override_key(o)), o) for o in overrides if "=" in o or o.startswith("~")]
    exact = exact or fallback

    def locate(path: str) -> Location | None:
        best = None
        key_path = dotted(path)
        for key, text in keyed:
            if key_path == key or key_path.startswith((key + ".", key + "[")):
                if best is None or len(key) >= len(best[0]):
                    best = (key, text)
        if best is not None and (best[0] not in GROUPS or best[1].startswith("~") or exact is None or
                                 exact(path) is None):
            return override_location(best[1])
        return fallback(path) if fallback else None

    removal = next((o for o in reversed(overrides) if _removes_run(o)), None)
    # what Experiment.locate adds to the errors it locates at an override
    locate.advise = lambda error: left_out_by_group(run_removed(error, removal) if removal else error)
    return locate


#: the `train:` keys that give the run's length (optreg.config.run.TrainSpec), and their section
RUN_KEYS = ("train", "train.steps", "train.epochs")


def _removes_run(override: str) -> bool:
    """Whether `override` takes away a key that gives the run's length (`~train.steps`, `train.steps=null`)."""
    key, sep, value = override.partition("=")
    return _override_key(override) in RUN_KEYS and (key.startswith("~") or sep and value.strip() == "null")


def run_removed(error: ConfigError, removal: str) -> ConfigError:
    """`error` with each schedule's length left to a run that has none (optreg.core.loop.no_run_length) at the
    override `removal` that took the run's length away, saying so."""
    from optreg.core.loop import no_run_length

    return ConfigError([dataclasses.replace(e, message=no_run_length(removed=True),
                                            location=override_location(removal))
                        if e.message == no_run_length() else e for e in error.errors])


def set_by_user(overrides: Sequence[str], written: Callable[[str], Any] | None = None) -> Callable[[str], bool]:
    """path -> whether the user set it: an override of that very key, or the user's own file writes it."""
    keys = {dotted(_override_key(o)) for o in overrides if "=" in o}
    return lambda path: dotted(path) in keys or (written is not None and written(path) is not None)


def not_from_group_file(data: Any) -> Callable[[str], Any]:
    """path -> True when the section's value there is not what its group file carries (the component's declared
    default): in a composed config whose primary file is unknown, a value the user must have set."""
    from optreg.core.registry import REGISTRY
    from optreg.integrations.hydra.configs import group_config

    def check(path: str) -> Any:
        group, _, key = path.partition(".")
        section = data.get(group) if isinstance(data, dict) else None
        if not isinstance(section, dict) or key not in section:
            return None
        try:
            entry = REGISTRY.find(group, section.get("name"), section.get("dialect"), default=data.get("dialect"))
        except (ConfigError, TypeError, AttributeError):
            entry = None
        carried = group_config(entry) if entry is not None else {}
        return True if key not in carried or carried[key] != section[key] else None

    return check


def settle_spellings(data: Any, user_set: Callable[[str], bool]) -> Any:
    """One value per option in each section: where a section holds an option under two spellings (`lr` and
    MindSpore's `learning_rate`), the one the user set wins over the one a group file carried (its default); two
    spellings both set by the user stay, and validation reports them."""
    from optreg.core.names import synonyms

    if not isinstance(data, dict):
        return data
    out = dict(data)
    for group in GROUPS:
        section = out.get(group)
        if not isinstance(section, dict):
            continue
        section = dict(section)
        for key in [k for k in section if isinstance(k, str)]:
            for other in sorted(synonyms(key) - {key}):
                if key in section and other in section and user_set(join_path(group, key)) and \
                        not user_set(join_path(group, other)):
                    del section[other]
        out[group] = section
    return out


# ---------------------------------------------------------------------------------------------------
# `_target_` and the other instantiate keys
# ---------------------------------------------------------------------------------------------------
def _clean(node: Any, kind: str | None, path: str, errors: Collector) -> Any:
    if isinstance(node, Mapping):
        out = {}
        for key, value in node.items():
            where = join_path(path, key_text(key))
            if key == "_target_":
                allowed = targets(kind) if kind else ()
                if value not in allowed:
                    errors.add(where, f"_target_ {show(value)} is refused (optreg builds components from their name); "
                               + (f"only {', '.join(map(repr, allowed))} are accepted here" if allowed else
                                  "_target_ is accepted only in optimizer and scheduler sections"))
                continue
            if key in INSTANTIATE_KEYS and kind:
                continue
            child = None
            if kind == OPTIMIZER and key == "optimizer":      # a wrapped optimizer (MindSpore LARS)
                child = OPTIMIZER
            elif kind == SCHEDULER and key in ("schedulers", "scheduler"):
                child = SCHEDULER
            out[key] = _clean(value, child, where, errors)
        return out
    if isinstance(node, (list, tuple)):
        return [_clean(v, kind if kind == SCHEDULER else None, join_path(path, i), errors)
                for i, v in enumerate(node)]
    return node


def strip_builders(data: Any, kind: str | None = None, path: str = "") -> Any:
    """A copy of an experiment (or of one section of `kind`) without Hydra's instantiate keys; a `_target_` that
    is not optreg's builder for that section is a ConfigError."""
    errors = Collector()
    check_input(data, path, errors)  # bounded depth before _clean recurses
    errors.raise_if_any()
    if kind is not None:
        out = _clean(data, kind, path, errors)
    elif isinstance(data, Mapping):
        out = {k: _clean(v, k if k in GROUPS else None, join_path(path, key_text(k)), errors) for k, v in data.items()}
    else:
        out = data
    errors.raise_if_any()
    return out


# ---------------------------------------------------------------------------------------------------
# composed configs -> Experiment
# ---------------------------------------------------------------------------------------------------
def experiment_from_omegaconf(cfg: Any, overrides: Sequence[str] | None = None, format: str | None = None):
    """A composed DictConfig -> validated Experiment, in its config format (detected, or forced by `format`).
    Errors name the dotted path and the override that set it.

    Only the format's own sections are read (optreg's: optreg.config.experiment.own_sections); their
    interpolations may point anywhere."""
    from omegaconf import DictConfig

    if not isinstance(cfg, DictConfig) or cfg._is_none() or cfg._is_missing():
        raise ConfigError(f"an experiment config is a mapping with optimizer:, got "
                          f"{'None' if isinstance(cfg, DictConfig) else type(cfg).__name__}")
    if overrides is None:
        overrides = hydra_overrides(cfg)
    written = primary_positions(cfg)
    return _read_composed(cfg, overrides, override_locator(overrides, written, written), written, format)


def _read_composed(cfg: Any, overrides: Sequence[str], locate: Callable[[str], Location | None],
                   written: Callable[[str], Any] | None, format: str | None, opaque: Mapping[str, Any] | None = None):
    """A composed DictConfig -> validated Experiment in its format (detected, or forced by `format`), reading only
    the format's sections (optreg's: optreg.config.experiment.own_sections), whose interpolations may point
    anywhere; in a foreign format's, a value left `???` or that does not resolve is its reader's to report where it
    reads it (`container_from_omegaconf`, not strict). `written`: what the user's file writes (None: unknown, then
    what differs from a group file); `opaque`: the values composing stood placeholders for (`_placeholders`)."""
    from optreg.config import formats
    from optreg.config.experiment import validate_experiment

    try:
        reader = formats.detect(cfg, format)
    except ConfigError as exc:
        raise exc.located(locate) from None
    keys = [k for k in reader.sections(cfg) if k != "hydra"]
    data = _restored(container_from_omegaconf(cfg, locate, keys, strict=reader.name == formats.OWN), opaque or {})
    data = settle_spellings(data, set_by_user(overrides, written or not_from_group_file(data)))
    if reader.name == formats.OWN and "optimizer" not in data:   # its error names the formats the other keys are of
        from omegaconf import OmegaConf   # and a section's own name (build(cfg.optimizer, model)), as written

        raw = OmegaConf.to_container(cfg, resolve=False)
        data = {**{k: v if type(v) in (str, int, float, bool) else None for k, v in raw.items() if k != "hydra"},
                **data}
    if reader.name != formats.OWN:   # a group's file in a section the reader reads as its own form, which it refuses
        _unread_overrides(overrides, reader, cfg, None)
    experiment = validate_experiment(data, locate, reader.name)
    if reader.name != formats.OWN:
        _unread_overrides(overrides, reader, cfg, experiment.paths)
    experiment.source = locate
    return experiment


def _unread_overrides(overrides: Sequence[str], reader: Any, cfg: Any, paths: Mapping[str, str] | None) -> None:
    """A ConfigError at each override that sets a section of optreg's own form (`optimizer=sgd`,
    `+clip_grad.max_norm=1`) which the foreign format `reader` does not read: neither one of its own keys (`keys`,
    else its `sections` of the composed `cfg`) nor a `train:` it reads beside them. The error says the format's key
    of that section (`paths`, the reader's map: NeMo's `model.optim`) and the override there, where it has one
    (`_unread`). `paths` None: before the file is read, the group switches of a section the format reads under
    optreg's name, as its own form (MindFormers' `optimizer: {type:}`), which the group's file replaced, where
    the format declares the key that chooses it (`choices`)."""
    from optreg.config.experiment import TOP_KEYS

    read = _read_sections(reader, reader.sections(cfg))
    errors = []
    for text in overrides:
        key = dotted(_override_key(text)) if "=" in text and not text.startswith("~") else ""
        section = key.partition(".")[0]
        if section not in TOP_KEYS or paths is not None and section in read:
            continue
        if paths is None and (section not in read or key not in (getattr(reader, "choices", None) or {}) or
                              _component(cfg, key) is None):
            continue   # a key of the format's own section, or a switch to no group's file (`optimizer=null`)
        errors.append(_unread(text, key, reader, cfg, paths))
    if errors:
        raise ConfigError(errors)


def _read_sections(reader: Any, sections: Sequence[Any]) -> set[Any]:
    """The top-level keys the foreign format `reader` reads of a config whose `sections` it reads: its own keys
    (`keys`, else those sections) and a `train:` beside them."""
    return {*(getattr(reader, "keys", ()) or sections), *({"train"} & set(sections))}


def _composed_without(overrides: Sequence[str], reader: Any, sections: Sequence[Any]) -> list[str]:
    """The overrides of a key in a section of optreg's own form that the foreign format `reader` does not read
    (`optimizer.lr=0.1` on a NeMo file): composed, Hydra refuses a key the file lacks without saying the format's
    key, so the file is composed without them and they are `_unread_overrides`' errors once it is read. A group
    switch (`optimizer=sgd`) is composed: its group's file names the component the error translates (`choices`)."""
    from optreg.config.experiment import TOP_KEYS

    read = _read_sections(reader, sections)
    keys = [dotted(_override_key(t)) if "=" in t and not t.startswith("~") else "" for t in overrides]
    return [t for t, key in zip(overrides, keys)
            if key.partition(".")[0] in TOP_KEYS and key.partition(".")[0] not in read and key not in GROUPS]


def _unread(text: str, key: str, reader: Any, cfg: Any, paths: Mapping[str, str] | None) -> ErrorItem:
    """The error of `_unread_overrides` at the override `text` of `key`: the format's key that takes its value (a
    group switch: the key the format's `choices` declares, with the value there that builds the group's component;
    else `paths`' key, with the override's own value) and the format's key that holds it (`it reads`)."""
    from optreg.config.translate import source_path

    section = key.partition(".")[0]
    path = indexed(f"{key}.name" if key in GROUPS else key)
    choice = (getattr(reader, "choices", None) or {}).get(key) if key in GROUPS else None
    if choice is not None:
        there, name = choice.key, _component(cfg, key)
        value = choice.value(name) if name is not None else None
    else:
        there, name, value = source_path(path, paths or {}), None, text.split("=", 1)[1].strip()
    # what it reads: the format's key of the section where that holds `there` (HF's optim_args does not hold optim)
    whole = source_path(section, paths or {})
    where = whole if whole != section and (there == whole or there.startswith(whole + ".")) else there
    advice = "" if there == path else f"; set it there: {_setting(cfg, dotted(there), paths is not None)}={value}" \
        if value is not None else f"; no {dotted(there)} builds {name}" if name is not None else ""
    return ErrorItem(indexed(key), f"the {reader.name} format does not read optreg's {section}: section"
                     + (f" (it reads {where})" if where != path else "") + advice, override_location(text))


def _setting(cfg: Any, key: str, read: bool) -> str:
    """The override of the format's `key` as Hydra takes it: `+key` where the composed `cfg` lacks the key (an HF
    file without `optim`). Not `read` (before the file is read), the key is in the format's own section that a group
    switch replaced in `cfg`, which the file has."""
    parts = key.split(".")
    try:
        lacks = read and _walk(cfg, parts)[1] < len(parts)
    except Exception:   # a value that does not resolve: the key is there
        lacks = False
    return f"+{key}" if lacks else key


def _component(cfg: Any, group: str) -> str | None:
    """The registered name of the component of optreg's section `group` in the composed `cfg` (what a group
    switch's file names: `SGD`); None when it names none."""
    try:
        section = cfg.get(group)
        name = section.get("name") if hasattr(section, "keys") else None
    except Exception:   # a value that does not resolve: the reader's to report
        return None
    return name if isinstance(name, str) else None


def left_out_by_group(error: ConfigError) -> ConfigError:
    """`error` with Hydra's advice for a key its config lacks (`+key=value`) at each required option missing from a
    section that a group switch brought (`optimizer=cerebras_sgd`, whose file leaves `lr` out for its other spelling,
    `learning_rate`; MindFormers' warmup family's `learning_rate`): `optimizer.lr=…` alone would not override it."""
    from optreg.core.models import MISSING_OPTION

    items = []
    for e in error.errors:
        switch = e.location.file if isinstance(e.location, OverrideLocation) else ""
        group = _override_key(switch) if "=" in switch and not switch.startswith("~") else None
        if group in GROUPS and e.message == MISSING_OPTION and e.path.partition(".")[0] == group:
            option = switch.split("=", 1)[1].strip()
            e = ErrorItem(e.path, f"{e.message}; the group file {group}/{option} leaves it out: add it with "
                                  f"+{dotted(e.path)}=<value>", e.location, e.suggestion)
        items.append(e)
    return ConfigError(items)


#: what stands for a value OmegaConf cannot hold while a file is composed (`_placeholders`)
OPAQUE = "\x00optreg-opaque-{}"


def _placeholders(data: Any, opaque: dict[str, Any], depth: int = 0) -> Any:
    """`data` with each leaf OmegaConf cannot hold (a LiBai file's NotRead, a value of a str subclass) replaced by a
    placeholder string kept in `opaque`, so that the file composes; `_restored` puts the values back. Nesting deeper
    than MAX_DEPTH is left as it is (an error of the composed config)."""
    from optreg.errors import MAX_DEPTH

    if depth > MAX_DEPTH:
        return data
    if isinstance(data, Mapping):
        return {k: _placeholders(v, opaque, depth + 1) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_placeholders(v, opaque, depth + 1) for v in data]
    if data is None or type(data) in (str, int, float, bool):
        return data
    key = OPAQUE.format(len(opaque))
    opaque[key] = data
    return key


def _restored(data: Any, opaque: Mapping[str, Any]) -> Any:
    """`data` with the values `_placeholders` took out put back, where a placeholder (or an interpolation of one)
    still stands; what an override replaced stays replaced."""
    if not opaque:
        return data
    if isinstance(data, dict):
        return {k: _restored(v, opaque) for k, v in data.items()}
    if isinstance(data, list):
        return [_restored(v, opaque) for v in data]
    return opaque.get(data, data) if isinstance(data, str) else data


# ---------------------------------------------------------------------------------------------------
# builders for hydra.utils.instantiate
# ---------------------------------------------------------------------------------------------------
def _plain_section(section: Mapping[str, Any], kind: str) -> dict[str, Any]:
    from omegaconf import DictConfig, ListConfig

    data = {k: container_from_omegaconf(v) if isinstance(v, (DictConfig, ListConfig)) else v
            for k, v in section.items()}
    return strip_builders(data, kind, kind)


class OptimizerFactory:
    """A validated optimizer section; call it with a model, `named_parameters()` or parameters to build."""

    def __init__(self, section: Mapping[str, Any]):
        from optreg.config.experiment import validate_experiment

        self.experiment = validate_experiment({OPTIMIZER: _plain_section(section, OPTIMIZER)})
        self.section = self.experiment.optimizer

    def __call__(self, params: Any):
        """The optimizer, through the plan every entry point takes."""
        return self.experiment.plan(params).optimizer.build()

    def __repr__(self) -> str:
        return f"OptimizerFactory({self.section!r})"


class SchedulerFactory:
    """A validated scheduler section; call it with the optimizer to build the scheduler."""

    def __init__(self, section: Mapping[str, Any]):
        from optreg.core.build import Context, plan_scheduler

        self.section = _plain_section(section, SCHEDULER)
        unknown = Context(1, frozenset(), None, known_groups=False, known_options=False)  # no optimizer yet
        try:
            plan_scheduler(copy.deepcopy(self.section), unknown, SCHEDULER)
        except ConfigError as exc:
            raise _no_run_length(exc, self.section) from None

    def __call__(self, optimizer: Any):
        """The scheduler, as configure_lr_scheduler plans it against the built optimizer (its checks included)."""
        from optreg.core.build import configure_lr_scheduler

        try:
            return configure_lr_scheduler(optimizer, copy.deepcopy(self.section))
        except ConfigError as exc:   # at the section's paths, as a config names them
            raise ConfigError([e if e.path == SCHEDULER else dataclasses.replace(e, path=join_path(SCHEDULER, e.path))
                               for e in exc.errors]) from None

    def __repr__(self) -> str:
        return f"SchedulerFactory({self.section!r})"


def _no_run_length(error: ConfigError, section: Mapping[str, Any]) -> ConfigError:
    """`error` with advice at each required option the section writes null (a group file's schedule length, which
    build() takes from the run): `instantiate` knows no run, so the section has to give it."""
    from optreg.core.loop import no_run_length
    from optreg.core.models import MISSING_OPTION

    items = []
    for e in error.errors:
        key = e.path.removeprefix(SCHEDULER + ".")
        if e.message == no_run_length() and key in section and section[key] is None:
            e = dataclasses.replace(e, message=f"{MISSING_OPTION}; null is the run's length in optreg.build(cfg, "
                                               f"model), and instantiate has no run: set it "
                                               f"({e.path}=${{train.steps}})")
        items.append(e)
    return ConfigError(items)


def optimizer_factory(params: Any = None, /, **section: Any):
    """`_target_` of the optimizer group files. `instantiate(cfg.optimizer)` validates the section and returns an
    OptimizerFactory; given parameters (positionally, or `params=` with `_partial_`) it builds the optimizer."""
    params = section.pop("params", params)
    factory = OptimizerFactory(section)
    return factory if params is None else factory(params)


def scheduler_factory(optimizer: Any = None, /, **section: Any):
    """`_target_` of the scheduler group files. `instantiate(cfg.scheduler)` validates the section and returns a
    SchedulerFactory; given the optimizer (positionally, or `optimizer=` with `_partial_`) it builds the scheduler."""
    if "optimizer" in section and hasattr(section["optimizer"], "param_groups"):
        optimizer = section.pop("optimizer")
    factory = SchedulerFactory(section)
    return factory if optimizer is None else factory(optimizer)


# ---------------------------------------------------------------------------------------------------
# `optreg run CONFIG [OVERRIDES…]`: Hydra overrides on top of a YAML file
# ---------------------------------------------------------------------------------------------------
def _parse_overrides(overrides: Sequence[str]) -> list[Any]:
    """The overrides as Hydra parses them; one that does not parse, or a sweep, is an error at its key from that
    override (`override optimizer.lr==1: optimizer.lr: bad override: ...`), as an error about a value it sets is."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import OverrideParseException

    parser = OverridesParser.create()
    parsed, errors = [], []
    for text in overrides:
        try:
            parsed += parser.parse_overrides([text])
        except OverrideParseException as exc:
            key, sep, value = text.partition("=")
            index = _INDEX.search(key)   # `a.b[1].c=...`: Hydra's grammar writes a list index as a key part
            note = f"; a list index is a key part: .{index[1]}. not [{index[1]}]" if index else ""
            errors.append(ErrorItem(indexed(_override_key(text)), f"bad override: {_first_line(exc)} (Hydra override "
                                    f"syntax: key=value, group=option, +key=value, ~key{note})",
                                    override_location(text), dotted(key) + sep + value if index else None))
    if not errors:
        errors = [ErrorItem(indexed(o.key_or_group), "the override is a sweep; `optreg run` takes one value per key "
                            "(sweeps need a Hydra app with --multirun)", override_location(o.input_line))
                  for o in parsed if o.is_sweep_override()]
    if errors:
        raise ConfigError(errors)
    return parsed


def group_options(group: str) -> list[str]:
    """The options of a Hydra config group on the current search path (optreg's files, plugins' files)."""
    from hydra.core.global_hydra import GlobalHydra

    return [o for o in GlobalHydra.instance().config_loader().get_group_options(group) if o != FILE_OPTION]


def close_options(word: str, options: Sequence[str], n: int = 5) -> list[str]:
    """Options close to `word`, counting other dialects' files of the same component (`lamb` -> `cerebras_lamb`)."""
    from optreg.core.registry import REGISTRY

    dialects = REGISTRY.dialects()
    word = word.lower()
    same = [o for o in options if any(o == f"{d}_{word}" for d in dialects)]
    bare = {o.split("_", 1)[1] if o.split("_", 1)[0] in dialects else o: o for o in options}
    near = difflib.get_close_matches(word, options, n=n, cutoff=0.6)
    near += [bare[b] for b in difflib.get_close_matches(word, list(bare), n=n, cutoff=0.75)]
    return list(dict.fromkeys(same + near))[:n]


def _walk(data: Any, parts: Sequence[str]) -> tuple[Any, int]:
    """The node of `data` at the dotted key's `parts` (a digit part indexes a list, as in Hydra's `a.0.b`), and how
    many parts lead to it: fewer than len(parts) where a part is not in its node."""
    node = data
    for depth, part in enumerate(parts):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, (list, tuple)) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return node, depth
    return node, len(parts)


def _beside(key: str, data: Mapping[str, Any]) -> str | None:
    """The key of `data` beside the dotted `key` (in the same mapping, a list item's included) that spells the same
    option (`learning_rate` for `lr`: the alias table's) or else is closest to it, as a dotted key; a misspelt
    section on the way (`schedular.name`) is corrected where the file has one close; None when there is none."""
    from optreg.core.names import synonyms

    parts = key.split(".")
    node, depth = _walk(data, parts)
    if depth == len(parts) or not isinstance(node, Mapping):
        return None
    keys = [str(k) for k in node]
    word = parts[depth]
    near = next((k for k in keys if k != word and k in synonyms(word)), None) or closest(word, keys)
    return ".".join([*parts[:depth], near, *parts[depth + 1:]]) if near else None


def _option_beside(key: str, data: Mapping[str, Any]) -> str | None:
    """`+key` for the option of the optimizer or scheduler that `key`'s section (a top-level one, or a stage of a
    `sequential` / `chained`: `scheduler.schedulers.0`) names closest to the dotted `key`'s last part (an option
    the file does not write takes a `+` to be set), or None."""
    from optreg.core.entry import OPTIMIZER, SCHEDULER
    from optreg.core.models import options
    from optreg.core.registry import REGISTRY

    parent, _, last = key.rpartition(".")
    kind = parent.split(".")[0]
    section, depth = _walk(data, parent.split(".")) if kind in (OPTIMIZER, SCHEDULER) else (None, 0)
    if depth != len(parent.split(".")) or not isinstance(section, Mapping) or \
            not isinstance(section.get("name"), str):
        return None
    top = data.get(kind)
    dialect = section.get("dialect") or (top.get("dialect") if isinstance(top, Mapping) else None)
    try:
        entry = REGISTRY.find(kind, section["name"], dialect, default=data.get("dialect"))
    except ConfigError:   # the name's own error is reported when the config is read
        return None
    near = closest(last, [o.name for o in options(entry)]) if entry is not None else None
    return f"+{parent}.{near}" if near else None


def _unshipped(group: str, option: str) -> str | None:
    """Why a group option that names an installed library's row (`pytorch_optimizer_lion`) has no file, and what
    to write instead; None for any other option."""
    from optreg.core.registry import REGISTRY
    from optreg.integrations.hydra.configs import written_on_request

    try:
        entry = REGISTRY.find(group, option)
    except ConfigError:   # a library that is not installed, an ambiguous name: the plain message
        return None
    writes = written_on_request(entry) if entry is not None else None
    return (f"; {entry.qualname} is an installed library's row, whose group file optreg does not ship ({writes} "
            f"writes it for an app of your own): set {group}.name={entry.qualname} instead") if writes else None


def _composition_error(exc: Exception, parsed: list[Any], data: Mapping[str, Any],
                       others: Callable[[Any], Mapping[str, Any] | None] | None = None) -> ConfigError:
    """Hydra's composition error `exc` as a ConfigError at the override that caused it. `data`: the file;
    `others`: the config an override was applied to (composed with the other overrides; None when that fails), where
    a key near the one an override misses is looked for (the file's section a group switch replaced is not it)."""
    from hydra.errors import MissingConfigException

    text = " ".join(line.strip() for line in str(getattr(exc, "msg", None) or exc).strip().split("\n")[:2])
    cause = exc.__cause__
    if text.startswith("Error merging override") and cause is not None:   # what went wrong is the cause's to say
        where = getattr(cause, "full_key", "")
        text += f": {str(cause).strip().splitlines()[0]}" + (f" at {where}" if where else "")
    if isinstance(exc, MissingConfigException):
        for o in parsed:
            group, option = o.key_or_group, o.value()
            if group in GROUPS and isinstance(option, str) and f"'{group}/{option}'" in str(exc):
                hint = close_options(option, group_options(group))
                return ConfigError([ErrorItem(group, f"no {group} config {option!r} in the Hydra group {group!r}"
                                              + (f"; close: {', '.join(hint)}" if hint else _unshipped(group, option)
                                                 or f"; `optreg list {group}s` shows the components"),
                                              override_location(o.input_line))])
    key = max((o for o in parsed if o.key_or_group in str(exc)), key=lambda o: len(o.key_or_group), default=None)
    if key is not None and key.is_add() and key.key_or_group in GROUPS and (
            text.startswith("Multiple values for") or "appears more than once in the final defaults list" in text):
        # Hydra's advice ('override scheduler: step') is a defaults list's; on the command line, a switch replaces
        group, option = key.key_or_group, key.input_line.split("=", 1)[1]
        return ConfigError([ErrorItem(group, f"the config sets {group} already: `+{group}=` adds a group the "
                                             f"config lacks; switch this one with {group}={option}",
                                      override_location(key.input_line))])
    # an override of a key the file does not have: Hydra says to append it with `+`; a near key is more likely meant,
    # one the file writes or else an option of the section's component (which the file leaves at its default)
    base = (others(key) if others else None) or data if key and "Could not override" in text else None
    hint = (_beside(key.key_or_group, base) or _option_beside(key.key_or_group, base)) if base is not None else None
    return ConfigError([ErrorItem(indexed(key.key_or_group) if key else "", text,
                                  override_location(key.input_line) if key else None, hint)])


def _primary(data: Mapping[str, Any], switched: set[str], added: set[str] = frozenset()) -> tuple[dict[str, Any],
                                                                                                  list[Any]]:
    """The primary config for Hydra: each mapping section becomes the default option of its group, so that
    `optimizer=sgd` replaces it; a group the file has no section of is an empty default, which `scheduler=step`
    sets, or none where an override appends it (`added`: `+scheduler=step`, as a Hydra app adds a group its
    defaults list lacks); `train:` holds each of its keys, those the file leaves out as missing (`???`), so
    that `train.steps=7` always applies (`_unset_dropped` removes those still missing after the composition, and an
    interpolation of one, `${train.steps}`, is then a key not found, not the default)."""
    from optreg.config.run import TrainSpec

    primary: dict[str, Any] = {}
    defaults: list[Any] = []
    stored: dict[str, Any] = {}
    for key, value in data.items():
        if key in GROUPS and isinstance(value, Mapping):
            stored[key] = dict(value)
        elif key in GROUPS and key in switched:
            continue  # a list/string scheduler replaced by a group option
        else:
            primary[key] = value
    for group in GROUPS:
        if group in stored or group not in added or data.get(group) is not None:
            defaults.append({group: FILE_OPTION if group in stored else None})
    defaults.append("_self_")
    if isinstance(primary.get("train", {}), Mapping):
        primary["train"] = {**dict.fromkeys(TrainSpec.model_fields, MISSING), **(primary.get("train") or {})}
    return {"defaults": defaults, **primary}, [stored.get(g) for g in GROUPS]


#: OmegaConf's missing value: a template's blank (`configs`), a `train:` key the file leaves out while Hydra
#: composes (`_primary`)
MISSING = "???"


def _unset_dropped(cfg: Any) -> Any:
    """The composed config without the `train:` keys that neither the file nor an override set (`_primary`)."""
    from omegaconf import DictConfig, OmegaConf, open_dict

    train = cfg.get("train") if isinstance(cfg, DictConfig) else None
    if isinstance(train, DictConfig):
        with open_dict(train):
            for key in [k for k in train.keys() if OmegaConf.is_missing(train, k)]:
                del train[key]
    return cfg


def refused_by_omegaconf(data: Mapping[str, Any], prefix: str = "", depth: int = MAX_DEPTH) -> str:
    """The first key path (`depth` mappings deep at most) whose value alone OmegaConf cannot hold (a null key, a
    nesting deeper than it recurses): the deepest such mapping's key; "" when each key alone is held."""
    from omegaconf import OmegaConf

    for key, value in data.items():
        try:
            OmegaConf.create({key: value})
        except Exception:
            here = join_path(prefix, key_text(key))
            if depth > 1 and isinstance(value, Mapping):
                return refused_by_omegaconf(value, here, depth - 1) or here
            return here
    return prefix


def omegaconf_refusal(exc: Exception, path: str) -> ConfigError:
    """The error of a key or value at `path` (`refused_by_omegaconf`) that OmegaConf cannot hold (`exc`): one
    wording for a composed file and a reader that hands its file to OmegaConf (NeMo's)."""
    return ConfigError(f"OmegaConf cannot hold this: {type(exc).__name__}: {_first_line(exc)[:160]}", path)


def _composed(name: str | None, overrides: Sequence[str], parsed: list[Any], data: Mapping[str, Any]) -> Any:
    """compose(name, overrides) in an initialized Hydra, its errors ConfigErrors at the override that caused them
    (`_composition_error`); a ValueError or TypeError Hydra raises applying an override it parsed (a group option
    that is not a name, `optimizer=1`; a list item deleted, `~optimizer.betas.0`; a word for a list index) is the
    first override whose composition fails; one of a file OmegaConf cannot hold is raised as it is."""
    from hydra import compose
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    def others(failing: Any) -> Mapping[str, Any] | None:
        try:
            rest = compose(name, [text for text, o in zip(overrides, parsed) if o is not failing])
        except (HydraException, OmegaConfBaseException, ValueError, TypeError):
            return None
        return OmegaConf.to_container(rest, resolve=False)

    try:
        return compose(name, list(overrides))
    except (HydraException, OmegaConfBaseException) as exc:
        raise _composition_error(exc, parsed, data, others) from None
    except (ValueError, TypeError) as exc:
        if isinstance(exc, ConfigError) or refused_by_omegaconf(data):
            raise
        for i, override in enumerate(parsed):
            try:
                compose(name, list(overrides[:i + 1]))
            except (HydraException, OmegaConfBaseException, ValueError, TypeError):
                key = override.key_or_group
                removal = f"~{key}" if key in GROUPS and override.value() is None else None   # `scheduler=null`
                raise ConfigError([ErrorItem(indexed(key), f"Hydra cannot apply this override: {_first_line(exc)}",
                                             override_location(override.input_line), removal)]) from None
        raise


@contextmanager
def _app_set_aside() -> Iterator[None]:
    """Compose inside a Hydra app too (a `@hydra.main` task, an `initialize()` block): Hydra's `initialize` refuses
    to start while GlobalHydra holds the app's Hydra, so that one is set aside while optreg composes a file and
    given back after, as it was."""
    from hydra.core.global_hydra import GlobalHydra

    held = GlobalHydra.instance().hydra
    GlobalHydra.instance().clear()
    try:
        yield
    finally:   # `initialize` has put back the instance it found, the cleared one
        if held is not None:
            GlobalHydra.instance().initialize(held)


def compose_file(data: Mapping[str, Any], overrides: Sequence[str], config_dir: Path | None = None,
                 config_name: str | None = None) -> Any:
    """Compose a YAML experiment (already loaded) with Hydra overrides; returns the composed DictConfig.

    A file with its own `defaults:` list is a Hydra primary config and is composed from its directory. Inside a
    Hydra app, the app's Hydra is left as it was (`_app_set_aside`)."""
    with _app_set_aside():
        return _compose_file(data, overrides, config_dir, config_name)


def _compose_file(data: Mapping[str, Any], overrides: Sequence[str], config_dir: Path | None,
                  config_name: str | None) -> Any:
    """`compose_file` with no other Hydra initialized."""
    from hydra import initialize, initialize_config_dir
    from hydra.core.config_store import ConfigStore
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    parsed = _parse_overrides(overrides)
    try:
        if "defaults" in data and config_dir is not None:
            with initialize_config_dir(config_dir=str(config_dir.resolve()), version_base="1.3"):
                return _composed(config_name, overrides, parsed, data)
        switched = {o.key_or_group for o in parsed if o.key_or_group in GROUPS and not o.is_delete()}
        primary, sections = _primary(data, switched, {o.key_or_group for o in parsed if o.is_add()})
        store = ConfigStore.instance()
        for group, section in zip(GROUPS, sections):
            if section is not None:
                store.store(group=group, name=FILE_OPTION, node=section)
        store.store(name="__optreg_run__", node=primary)
        with initialize(version_base="1.3", config_path=None):
            return _unset_dropped(_composed("__optreg_run__", overrides, parsed, data))
    except (HydraException, OmegaConfBaseException, ValueError, TypeError) as exc:
        if isinstance(exc, ConfigError):
            raise
        refused = refused_by_omegaconf(data)
        raise (omegaconf_refusal(exc, refused) if refused else
               ConfigError(f"cannot compose the config: {_first_line(exc)}")) from None


def load_with_overrides(data: Mapping[str, Any], source: Callable[[str], Location | None] | None,
                        overrides: Sequence[str], config_path: Path | None = None, format: str | None = None):
    """A YAML experiment plus Hydra overrides -> validated Experiment. Values from the file keep their
    file:line:column; values set or replaced by an override name that override. A value OmegaConf cannot hold (a
    LiBai file's NotRead) composes as a placeholder and is the reader's again afterwards (`_placeholders`)."""
    from optreg.config import formats

    if not isinstance(data, Mapping):
        raise ConfigError(f"an experiment config is a mapping with optimizer:, got {type(data).__name__}")
    try:
        reader = formats.detect(data, format)
        foreign = reader.name != formats.OWN
    except ConfigError:   # reported with the composed config's positions (`_read_composed`)
        foreign = False
    if foreign:   # a foreign file's defaults: and hydra: are its framework's (NeMo's launcher), read by no reader
        data = {k: v for k, v in data.items() if k not in ("defaults", "hydra")}
    hydra_primary = "defaults" in data
    opaque: dict[str, Any] = {}
    written = getattr(source, "exactly", None)   # what the user's own file writes, at its position
    # a group switch replaces a plain file's section whole (`_primary`): none of its keys is the file's then
    locate = override_locator(overrides, written if hydra_primary else source,
                              written if hydra_primary else lambda path: None)
    # an override of a section of optreg's own form that a foreign format does not read changes nothing it reads: the
    # file is composed without it (Hydra would refuse `optimizer.lr=0.1` as a key the file lacks, without the format's
    # key), and it is the error that says the format's key once the file is read (the composition adds `train:`)
    unread = _composed_without(overrides, reader, [*reader.sections(data), "train"]) if foreign else []
    composed = [text for text in overrides if text not in unread]
    try:
        cfg = compose_file(_placeholders(data, opaque), composed, config_path.parent if config_path else None,
                           config_path.stem if config_path else None)
    except ConfigError as exc:   # a key of the file OmegaConf cannot hold: at its position
        raise exc.located(locate) from None
    # the file's format, not the composed config's (an HF file with `+optimizer=sgd` is still HF's)
    experiment = _read_composed(cfg, composed, locate, written, format or (reader.name if foreign else None), opaque)
    if unread:
        _unread_overrides(unread, reader, cfg, experiment.paths)
    return experiment

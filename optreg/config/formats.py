"""Config formats: readers that turn a file of some framework's form into optreg's experiment.

A `ConfigFormat` claims a mapping by its signature keys and reads it into an `Experiment` (the positions of the
source file kept for errors). Detection: each format claims a file by its signature; one claim selects that format,
two claims are a ConfigError naming both and `format=`, no claim selects optreg's own form. A format may be forced
(`build(config, model, format=NAME)`, `optreg validate|run|plot|groups --format NAME`).

Built-in formats are listed in `BUILTIN` ("module:attribute" of each reader, imported on first use); a plugin adds
one through the `optreg.formats` entry-point group (its name is the format's name, it points at the reader).
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal, Mapping, Protocol, runtime_checkable

from optreg.errors import ConfigError, ErrorItem, closest, show

#: name -> "module:attribute" of the reader; optreg's own form first
BUILTIN: dict[str, str] = {
    "optreg": "optreg.config.experiment:OWN_FORMAT",
    "modelzoo": "optreg.dialects.cerebras.modelzoo_format:TRAINER_FORMAT",
    "modelzoo_legacy": "optreg.dialects.cerebras.modelzoo_format:LEGACY_FORMAT",
    "deepspeed": "optreg.readers.deepspeed:DEEPSPEED_FORMAT",
    "hf": "optreg.readers.hf:HF_FORMAT",
    "trl_sft": "optreg.readers.hf:TRL_SFT",
    "trl_dpo": "optreg.readers.hf:TRL_DPO",
    "trl_orpo": "optreg.readers.hf:TRL_ORPO",
    "trl_grpo": "optreg.readers.hf:TRL_GRPO",
    "trl_rloo": "optreg.readers.hf:TRL_RLOO",
    "trl_kto": "optreg.readers.hf:TRL_KTO",
    "trl_reward": "optreg.readers.hf:TRL_REWARD",
    "trl_distillation": "optreg.readers.hf:TRL_DISTILLATION",
    "mmengine": "optreg.readers.mmengine:MMENGINE_FORMAT",
    "nemo": "optreg.readers.nemo:NEMO_FORMAT",
    "mindformers": "optreg.dialects.mindspore.mindformers.format:FORMAT",
    "libai": "optreg.dialects.oneflow.libai.format:FORMAT",
}
OWN = "optreg"
PLUGIN_GROUP = "optreg.formats"


@runtime_checkable
class ConfigFormat(Protocol):
    """A reader of one config form.

    name      how `format=` / `--format` names it;
    doc       one line: whose files these are;
    signature the keys that claim a file, as the error that lists two claims shows them (`trainer.init`);
    sections  the top-level keys it reads (`sections(data)`); an application's other keys are left alone;
    claims    whether `data` (a mapping: a dict or a DictConfig) has the form's signature;
    read      `data` -> a validated Experiment (ConfigError at the file's positions, through `source`); a foreign
              format lists in `Experiment.report` what it did with each key of the source (`KeyUse`).

    Optional: `read_python(text, name, path) -> (data, source) | None` for a format whose files are Python
    (LiBai's LazyConfig, MMEngine's `.py` configs): the mapping the file means, read without executing the file
    (with `ast`, or through the library's own loader); None when the file is not of this format.
    Optional: `keys`, the top-level keys the format's files have: a file that no format claims and optreg's own form
    cannot read is told which format its keys are, and which of its keys misspell one (`resemblance`).
    Optional: `choices`, {a section of optreg's own form: `Choice`}: the format's key that chooses that section's
    component and the value there of each of optreg's components, which an override that sets optreg's section on
    such a file (`optimizer=sgd`) is told to set instead; without one, the override's own value is said."""

    name: str
    doc: str
    signature: str

    def claims(self, data: Mapping[str, Any]) -> bool: ...

    def sections(self, data: Mapping[str, Any]) -> list[Any]: ...

    def read(self, data: Mapping[str, Any], source: Any = None) -> Any: ...


@dataclass(frozen=True)
class KeyUse:
    """What a reader did with one key of a foreign config (what `optreg convert` reports).

    verdict: exact        read, and built as the source's library builds it;
             approximate  read, built differently in a way `why` says;
             trainer      the trainer's business (batch size, logging, precision): left to the application;
    (an unsupported key is a ConfigError, not a KeyUse)."""

    path: str
    verdict: Literal["exact", "approximate", "trainer"]
    why: str = ""


@dataclass(frozen=True)
class Choice:
    """How a format's files choose the component of one of optreg's sections: `key`, the key that names it (NeMo's
    `model.optim.name`), and `value`, optreg's registered name of a component (`SGD`) -> the value of `key` that
    the format's reader builds that component from (NeMo's `sgd`, LiBai's `oneflow.optim.SGD`), None where none
    does."""

    key: str
    value: Callable[[str], str | None]


_FORMATS: dict[str, ConfigFormat] = {}
_LOCK = threading.Lock()


def formats() -> dict[str, ConfigFormat]:
    """Every known format by name: the built-ins, then plugins (read once)."""
    with _LOCK:
        if not _FORMATS:
            loaded: dict[str, ConfigFormat] = {}
            for name, target in BUILTIN.items():
                module, _, attr = target.partition(":")
                loaded[name] = getattr(importlib.import_module(module), attr)
            loaded.update(_plugins())
            _FORMATS.update(loaded)
    return dict(_FORMATS)


def _plugins() -> dict[str, ConfigFormat]:
    import warnings
    from importlib.metadata import entry_points

    out: dict[str, ConfigFormat] = {}
    for ep in entry_points(group=PLUGIN_GROUP):
        try:
            reader = ep.load()
        except Exception as exc:  # one broken plugin must not break reading configs
            warnings.warn(f"optreg format plugin {ep.name!r} failed to load: {exc!r}", RuntimeWarning, stacklevel=3)
            continue
        if ep.name in BUILTIN or not isinstance(reader, ConfigFormat) or reader.name != ep.name:
            raise ConfigError(f"format plugin {ep.name!r} must be a ConfigFormat named {ep.name!r} (not a "
                              f"built-in's name)", "format")
        out[ep.name] = reader
    return out


def get(name: Any) -> ConfigFormat:
    """The format `name`; an unknown one is a ConfigError at `format` with a did-you-mean."""
    known = formats()
    if isinstance(name, str) and name in known:
        return known[name]
    hint = closest(name, list(known)) if isinstance(name, str) else None
    raise ConfigError([ErrorItem("format", f"unknown config format {show(name)}; formats: {', '.join(known)}", None,
                                 hint)])


def check_forced(name: str | None) -> None:
    """A format named by an argument (`format=`, `--format`) checked before any file is read: its error (`get`'s)
    is the argument's, at no position of the file."""
    if name is not None:
        get(name)


def detect(data: Any, forced: str | None = None) -> ConfigFormat:
    """The format that reads `data`: the forced one, else the one format that claims it, else optreg's own;
    two claims are a ConfigError naming both and format=."""
    if forced is not None:
        return get(forced)
    known = formats()
    if not hasattr(data, "keys"):
        return known[OWN]
    claims = [f for name, f in known.items() if name != OWN and f.claims(data)]
    if len(claims) > 1:
        raise ConfigError(f"the config has the signature of {len(claims)} formats: "
                          + ", ".join(f"{f.name} ({f.signature})" for f in claims)
                          + "; choose one with format= (--format NAME)")
    return claims[0] if claims else known[OWN]


#: how alike a file's key and a format's key must be (difflib's ratio) for the one to be read as a misspelling: one
#: letter off in a name of 9 or more (`learning_rat`, `param_schedulr`, `train_cfgg`), while a format's other keys
#: (MMEngine's `val_cfg`, `env_cfg`) stay the application's
NEAR = 0.85


def misspelt(section: Mapping[str, Any], wanted: Iterable[str], known: Iterable[str] = ()) -> tuple[str, str] | None:
    """(the key written, the key meant) for the first key of a reader's `section` that misspells (NEAR) one of the
    keys it reads, `wanted` (`max_epoch` for train_cfg's max_epochs), other than those and the section's `known`
    keys; None when there is none. The framework would pass it over, or refuse it, and run without the value."""
    wanted, known = list(wanted), set(known)
    for key in section:
        meant = closest(key, wanted, NEAR) if isinstance(key, str) and key not in wanted and key not in known else None
        if meant is not None:
            return key, meant
    return None


def resemblance(data: Mapping[str, Any], own: tuple[str, ...]) -> tuple[list[ErrorItem], list[str]]:
    """Why a file that no format claims may still be one (the formats' `keys`): an ErrorItem with a did-you-mean at
    each of the file's keys that no format has and that misspells one format's key (`learning_rat`), and a phrase
    per format whose keys the file has; `own`: optreg's own sections, which say nothing of a format."""
    known = {name: f for name, f in formats().items() if name != OWN and getattr(f, "keys", ())}
    every = set(own).union(*(f.keys for f in known.values()))
    from optreg.core.validate import MAX_HINTS

    items = []
    for key in [k for k in data if isinstance(k, str) and k not in every][:MAX_HINTS]:   # a bounded search
        for name, f in known.items():
            hint = closest(key, f.keys, NEAR)
            if hint is not None:
                items.append(ErrorItem(key, f"unknown key: no format has it, and {name} files have {hint}",
                                       None, hint))
                break
    named = []
    for name, f in known.items():
        have = [k for k in data if k in f.keys and k not in own]
        if have:
            verb = "are" if len(have) > 1 else "is"
            named.append(f"{', '.join(map(str, have))} {verb} {name}'s, which claims a file by {f.signature}")
    return items, named


def read_python(text: str, name: str, path: Any) -> tuple[Any, Any]:
    """A `.py` config file -> (data, source), by the format that reads it (`read_python` on the reader): with `ast`
    (LiBai's), or with its library's own loader (MMEngine's `Config.fromfile`, which executes the file as MMEngine
    does); optreg itself never executes a config. No format reading it is a ConfigError."""
    for reader in formats().values():
        read = getattr(reader, "read_python", None)
        got = read(text, name, path) if read is not None else None
        if got is not None:
            return got
    readers = [f.name for f in formats().values() if getattr(f, "read_python", None) is not None]
    raise ConfigError(f"{name}: a Python config file is read only by a format that reads Python files "
                      f"({', '.join(readers) or 'none installed'}), and none recognised this one; optreg itself never "
                      f"executes a config")


def exact_pattern(name: str) -> str:
    """A `param_groups` glob pattern that matches the parameter `name` only (for groups a reader makes against
    the model)."""
    return "".join(f"[{c}]" if c in "*?[]" else c for c in name)


def _parent(data: Mapping[str, Any], dotted: str) -> Any:
    """The mapping that holds the last key of `dotted`, or None (a level that is not a mapping, or a value that
    cannot be read: a DictConfig's `???` or broken interpolation, reported by the reader that reads it)."""
    node: Any = data
    for part in dotted.split(".")[:-1]:
        try:
            node = node[part] if hasattr(node, "keys") and part in node else None
        except Exception:
            return None
    return node if hasattr(node, "keys") else None


def has(data: Mapping[str, Any], dotted: str) -> bool:
    """Whether the mapping `data` has the key path `dotted` (`trainer.init`): each level a mapping."""
    parent = _parent(data, dotted)
    return parent is not None and dotted.rsplit(".", 1)[-1] in parent


def has_mapping(data: Mapping[str, Any], dotted: str) -> bool:
    """Whether the key path `dotted` of `data` holds a mapping (DeepSpeed's `optimizer.params`, where optreg's
    own form would have a list)."""
    parent, last = _parent(data, dotted), dotted.rsplit(".", 1)[-1]
    try:
        return parent is not None and last in parent and hasattr(parent[last], "keys")
    except Exception:
        return False


__all__ = ["ConfigFormat", "KeyUse", "formats", "get", "check_forced", "detect", "has", "has_mapping", "read_python",
           "exact_pattern", "Choice",
           "BUILTIN", "OWN"]

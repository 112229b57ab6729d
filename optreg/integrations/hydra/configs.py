"""Hydra config groups from the registry: one YAML file per component in `configs/optimizer/` and `configs/scheduler/`.

File names (the Hydra option, `optimizer=adamw`) follow one rule, `option_name()`:
  * the component's name in snake case: a new word starts at a capital that follows a lowercase letter or a digit
    (`SparseAdam` -> `sparse_adam`, `T5InverseSquareRootAnnealing` -> `t5_inverse_square_root_annealing`),
    except a single capital at the end (`AdamW` -> `adamw`); runs of capitals stay one word (`RMSprop` -> `rmsprop`,
    `RAdam` -> `radam`); `LR` inside a name is its own word (`ReduceLROnPlateau` -> `reduce_lr_on_plateau`);
  * schedulers drop a trailing `LR` (`CosineAnnealingLR` -> `cosine_annealing`), as name lookup does;
  * torch-dialect components use that stem alone; every other dialect prefixes it with the dialect
    (`mindspore_adam`, `cerebras_cosine_decay`, `hf_cosine_with_min_lr`).
Each file holds `_target_` (optreg's own builder, for `hydra.utils.instantiate`), `name`, `dialect`, a schedule's
training-loop keys (`by_epoch`, `convert_to_iter_based`, `warmup` where it takes one: off) and every option with its
default (but one a config cannot write, an installed library's function, enum member or infinity, which a comment
names; a torch dtype is written by name); a required option is `???` (an installed library's default its own checks
refuse is none: optreg.core.library), or left out when it has another spelling (MindSpore's `learning_rate`, the
primary config's `lr`): a dialect switch then exposes no `???` the user never wrote; a schedule's length that has no
value of its own (optreg.core.loop.required_length: T_max, num_training_steps) is null, which planning reads as left
out (the run length − the warmup, optreg.core.loop); a row's limits (`Entry.limits`) are header comments, and a
row that cannot step at all (`Limits.broken`) has no file. `optreg hydra-configs` writes them; `--check` lists what is
stale.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from optreg.core.entry import OPTIMIZER, SCHEDULER, Entry
from optreg.core.names import synonyms
from optreg.integrations.hydra.support import BUILDERS, MISSING

GROUPS = (OPTIMIZER, SCHEDULER)
HEADER = "# Generated from the optreg registry by `optreg hydra-configs`; do not edit."

_LR_WORD = re.compile(r"(?<=[a-z0-9])LR(?=[A-Z])")
_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z].)")


def option_name(entry: Entry) -> str:
    """The Hydra group option (file stem) of an entry: `adamw`, `cosine_annealing`, `mindspore_adam`."""
    name = entry.name
    if entry.kind == SCHEDULER and name.endswith("LR") and len(name) > 2:
        name = name[:-2]
    name = _LR_WORD.sub("_LR_", name)
    stem = re.sub(r"_+", "_", _BOUNDARY.sub("_", name)).strip("_").lower()
    return stem if entry.dialect == "torch" else f"{entry.dialect}_{stem}"


def builtin_entries() -> list[Entry]:
    """optreg's own rows (the built-in dialects and the legacy tables), in registry order; plugins and runtime
    registrations are not shipped."""
    from optreg.core.registry import Registry

    registry = Registry()
    registry._load_builtin()
    registry._loaded = True  # optreg's own rows only: no entry-point plugins
    return [e for kind in GROUPS for e in registry.entries(kind)]


def _plain(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if value is None or type(value) in (bool, int, str) or type(value) is float and math.isfinite(value):
        return value   # not a subclass (an enum member), not an infinity (Prodigy's growth_rate: validation's refusal)
    raise TypeError(f"default {value!r} cannot be written in a config")


def _plain_mapping(value: Any) -> dict[str, Any]:
    return {str(k): _plain(v) for k, v in dict(value).items()}


def group_config(entry: Entry) -> dict[str, Any]:
    """The content of an entry's group file: builder, name, dialect, then every option with its default."""
    return _content(entry)[0]


def _content(entry: Entry) -> tuple[dict[str, Any], list[str]]:
    """`group_config`'s content, and the options left out of it because a config cannot write their default (an
    installed library's function, enum member or infinity: Prodigy's `growth_rate=float('inf')`), whose default then
    applies."""
    from optreg.core import models

    body: dict[str, Any] = {"_target_": BUILDERS[entry.kind], "_recursive_": False,
                            "name": entry.name, "dialect": entry.dialect}
    from optreg.core.build import wrapped_example, wraps_optimizer

    if wraps_optimizer(entry):  # the required nested optimizer, as its example (the file must build as it is)
        body["optimizer"] = _plain_mapping(wrapped_example(entry))
    length, unwritable = None, []
    if entry.kind == SCHEDULER:   # the training loop's keys of every schedule (optreg.core.loop), off
        from optreg.core.loop import required_length, warmup_refusal

        length = required_length(entry)

        body.update({"by_epoch": False, "convert_to_iter_based": False})
        if warmup_refusal(entry) is None:
            body["warmup"] = None
    for opt in models.options(entry):
        if opt.required and len(synonyms(opt.name)) > 1:
            continue   # left out, not `???`: the user may give it under its other spelling (lr, learning_rate)
        if opt.name == length:
            body[opt.name] = None   # null, a length left out (optreg.core.loop.fill_length): the run's, else missing
            continue
        try:
            body[opt.name] = MISSING if opt.required else _plain(opt.default)
        except TypeError:
            unwritable.append(opt.name)
    return body, unwritable


def _dumper():
    import yaml

    class Dumper(yaml.SafeDumper):
        """Block mappings, flow lists (`betas: [0.9, 0.999]`)."""

    Dumper.add_representer(list, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))
    return Dumper


def render(entry: Entry) -> str:
    """The YAML text of an entry's group file."""
    import yaml

    doc = " ".join((entry.doc or "").split())
    body, unwritable = _content(entry)
    lines = [f"# {entry.qualname}{': ' + doc if doc else ''}", HEADER,
             f"# Use: {entry.kind}={option_name(entry)} {entry.kind}.<option>=<value>"]
    if unwritable:
        lines.append(f"# Left out, at the class's own default, which a config cannot write: {', '.join(unwritable)}")
    if entry.limits:
        lines += [f"# Limit: {said}" for said in entry.limits.said()]
        lines += ["# optreg run refuses it: build it for a loop of your own"] if entry.limits.loop_refusal("") else []
    text = yaml.dump(body, Dumper=_dumper(), sort_keys=False, default_flow_style=False, width=1000,
                     allow_unicode=True)
    return "\n".join(lines) + "\n" + text


@dataclass(frozen=True)
class GroupFile:
    path: Path       # relative to the configs root: optimizer/adamw.yaml
    entry: Entry
    text: str


def buildable(entry: Entry) -> bool:
    """Whether an entry can build at all, so that a group file of it is written: not a class its limits say cannot
    step (`Limits.broken`), which every entry point refuses. A row that only optreg run's loop refuses (a
    second-order or fused step, ...) builds for a loop of the user's own: its file is written, its header saying
    the limit."""
    return not (entry.limits and entry.limits.broken)


def group_files(entries: Iterable[Entry]) -> list[GroupFile]:
    """One file per entry that can build (`buildable`); two entries with the same file name are an error (the rule
    must stay one-to-one)."""
    out: dict[Path, GroupFile] = {}
    for entry in filter(buildable, entries):
        path = Path(entry.kind) / f"{option_name(entry)}.yaml"
        if path in out:
            raise ValueError(f"{entry.qualname} and {out[path].entry.qualname} both map to {path.as_posix()}")
        out[path] = GroupFile(path, entry, render(entry))
    return list(out.values())


def default_root() -> Path:
    """The package's own configs directory (in a source checkout: the repository's optreg/configs)."""
    return Path(__file__).resolve().parents[2] / "configs"


def stale(root: Path, files: list[GroupFile]) -> list[str]:
    """What differs between `root` and the generated files: missing, changed and leftover files."""
    problems = []
    wanted = {f.path: f for f in files}
    for f in files:
        target = root / f.path
        if not target.is_file():
            problems.append(f"missing: {f.path.as_posix()} ({f.entry.qualname})")
        elif target.read_text(encoding="utf-8") != f.text:
            problems.append(f"out of date: {f.path.as_posix()} ({f.entry.qualname})")
    for kind in GROUPS:
        for target in sorted((root / kind).glob("*.yaml")) if (root / kind).is_dir() else ():
            if target.relative_to(root) not in wanted:
                problems.append(f"not generated: {target.relative_to(root).as_posix()}")
    return problems


def write(root: Path, files: list[GroupFile]) -> list[str]:
    """Write the files that differ and remove generated files no entry produces any more; returns what changed."""
    changed = []
    wanted = {f.path for f in files}
    for f in files:
        target = root / f.path
        if not target.is_file() or target.read_text(encoding="utf-8") != f.text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f.text, encoding="utf-8")
            changed.append(f"wrote {f.path.as_posix()}")
    for kind in GROUPS:
        for target in sorted((root / kind).glob("*.yaml")) if (root / kind).is_dir() else ():
            if target.relative_to(root) not in wanted and HEADER in target.read_text(encoding="utf-8"):
                target.unlink()
                changed.append(f"removed {target.relative_to(root).as_posix()}")
    return changed


def has_file(row: Any) -> bool:
    """Whether a row (an Entry or its description) has a group file: whether its entry is `buildable`."""
    from optreg.core.registry import REGISTRY

    entry = row if isinstance(row, Entry) else REGISTRY.find(row.kind, row.name, row.dialect)
    return entry is None or buildable(entry)


def written_on_request(entry: Any) -> str | None:
    """For a row of an installed library read as a dialect (an Entry or its description), whose group file optreg
    does not ship: the command that writes it for an app of one's own; None for a row whose file is shipped."""
    from optreg.core.registry import REGISTRY

    library = REGISTRY.dialect(entry.dialect).library
    if library is None or library.package != entry.provider or not has_file(entry):
        return None
    return f"optreg hydra-configs --provider {entry.provider} -o DIR"


def entries_of(provider: str = "optreg") -> list[Entry]:
    """The entries whose files a provider ships: optreg's tables, a plugin distribution's rows, or the rows of an
    installed library read as a dialect (its package's name: `pytorch_optimizer`), generated on request."""
    if provider == "optreg":
        return builtin_entries()
    from optreg.core.registry import REGISTRY

    libraries = [d.name for d in REGISTRY.declared() if d.library is not None and d.library.package == provider]
    return [e for kind in GROUPS for dialect in (libraries or [None]) for e in REGISTRY.entries(kind, dialect)
            if e.provider == provider]

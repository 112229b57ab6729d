"""Foreign formats translated into optreg's own form: the reader writes the sections optreg's own form would hold
(`optimizer`, `scheduler`, `clip_grad`, `train`), with a map from each own-form path to the source key it came from
(`paths`: own-form prefix -> the source's, the longest prefix wins), and `read_translated` validates them as optreg's
own file, every error at the source's path and position. The experiment keeps the map: the errors and the schedule
linter's notes of its plan are put at the source's paths too (`Experiment.locate`, `Experiment.plan`), whichever
planner plans it. A source key that counts units of several of optreg's steps (`units`: LiBai's eager train_iter,
iterations of A micro-batches) is advised a length in those units (`source_note`).

`optreg convert` writes those sections back out as a native experiment (`own_form`).
"""

from __future__ import annotations

import re
from typing import Any, Mapping, NamedTuple

from optreg.errors import ConfigError, ErrorItem, counted, show

TRAINER = "trainer"
WIDTH = 100   # the converted file's comment lines wrap at this column


def source_path(path: str, paths: Mapping[str, str]) -> str:
    """The source's path of an own-form `path`: its longest mapped prefix replaced (`optimizer.lr` with
    {"optimizer": "optimizer.params"} -> `optimizer.params.lr`); unmapped paths stay."""
    best = max((k for k in paths if path == k or path.startswith((k + ".", k + "["))), key=len, default=None)
    if best is None:
        return path
    return paths[best] + path[len(best):]


class Unit(NamedTuple):
    """What one unit of a source key counts: `steps` of optreg's steps, the number the source key `by` gives
    (LiBai's eager train.train_iter: iterations of train.num_accumulation_steps micro-batches)."""

    steps: int
    by: str


def source_paths(error: ConfigError, paths: Mapping[str, str]) -> ConfigError:
    """`error` with every path at the source's key (source_path), those its messages name too (`_paths_in`)."""
    return ConfigError(ErrorItem(source_path(e.path, paths), _paths_in(e.message, paths), e.location, e.suggestion)
                       for e in error.errors)


#: the sections of optreg's own form, under which a note's paths are read
_OWN_SECTIONS = ("optimizer", "scheduler", "clip_grad", "train")


def source_note(note: str, paths: Mapping[str, str], units: Mapping[str, Unit] | None = None) -> str:
    """A schedule linter's note (`scheduler.lr_end: ... lower scheduler.lr_end`) with its leading path and every
    path in its text at the source's: a path under one of optreg's sections or under the top-level key of a path
    that `paths` maps (a Cerebras form's `trainer.init.schedulers[0]`), with at least one key or index below it
    in the text (a bare "scheduler" is a word). A length advised for a key that the source writes in `units` of
    its own is said in them (`_in_unit`)."""
    from optreg.core.lint import SET_LENGTH

    if units:
        note = SET_LENGTH.sub(lambda m: _in_unit(m, paths, units), note)
    head, sep, rest = note.partition(": ")
    known = sep and _section(head) in _roots(paths) and " " not in head
    if not known:
        head, sep, rest = "", "", note
    rest = _paths_in(rest, paths)
    if not known:
        return rest
    written = source_path(head, paths)
    unit = (units or {}).get(written)
    return f"{written}{sep}{rest if unit and unit.steps != 1 else _option_at_source(rest, head, written)}"


def _option_at_source(rest: str, head: str, written: str) -> str:
    """A note's text after its path `head`, which begins by naming the key's option and its value (the linter's
    `T_max 100 spans`), with that option named as the source writes it (`written`: HF's max_steps for
    num_training_steps); not for a key that counts units of several steps, whose value is not the option's."""
    own, source = re.split(r"[.\]]", head)[-1], re.split(r"[.\]]", written)[-1]
    return source + rest[len(own):] if own and source and own != source and rest.startswith(own + " ") else rest


def _roots(paths: Mapping[str, str]) -> list[str]:
    """optreg's sections and the top-level keys `paths` maps, longest first."""
    return sorted({*_OWN_SECTIONS, *(_section(k) for k in paths)}, key=len, reverse=True)


def _paths_in(text: str, paths: Mapping[str, str]) -> str:
    """`text` with every path in it at the source's (source_path): a path under one of `_roots`, with at least one
    key or index below it (a bare "scheduler" is a word)."""
    inside = re.compile(rf"\b(?:{'|'.join(map(re.escape, _roots(paths)))})(?:\.[A-Za-z_]\w*|\[\d+\])+")
    return inside.sub(lambda m: source_path(m.group(0), paths), text)


def _in_unit(advice: re.Match, paths: Mapping[str, str], units: Mapping[str, Unit]) -> str:
    """`set_length`'s advice (`advice`) of an own-form key that the source writes as a key counting units of several
    steps: the fewest units that cover the steps advised, as the source reads them back (LiBai's eager
    train_iter 150 is a schedule of 150 × A micro-batches); any other advice as it is."""
    from optreg.core.lint import set_length

    key, steps = advice["key"], int(advice["target"])
    written = source_path(key, paths)
    unit = units.get(written) if written != key else None   # the own form's key (a note said at the source's: as is)
    if unit is None or unit.steps == 1:
        return advice[0]
    count = -(-steps // unit.steps)
    return f"{set_length(key, count)} (× {unit.by} {unit.steps} = {counted(count * unit.steps, 'step')})"


def _section(path: str, sections: tuple[str, ...] = ()) -> str:
    """The section of the source a path is in: the first of `sections` it is under (LiBai's `train.scheduler`), else
    its top-level key (`optimizer.params.lr` -> `optimizer`, `param_groups[0]` -> `param_groups`)."""
    inside = (s for s in sections if path == s or path.startswith((s + ".", s + "[")))
    return next(inside, None) or re.split(r"[.\[]", path, maxsplit=1)[0]


NOMINAL_RUN = 10 ** 6   # the run a schedule whose length is the run's is checked against while the file is read


def read_translated(own: Mapping[str, Any], source: Any, name: str, paths: Mapping[str, str], report: list,
                    format_steps: tuple[int, str] | None = None, run_length: str | None = None,
                    errors: Any = None, format_epochs: tuple[int, str] | None = None, beside: bool = False,
                    sections: tuple[str, ...] = (), units: Mapping[str, Unit] | None = None) -> Any:
    """The own-form sections `own` validated as optreg's own file, as the experiment of format `name`: errors at
    the source's paths (`paths`) and positions; `report` its KeyUse list. `errors`: what the reader found already
    (a Collector): they are raised, and with `beside`, the own form's problems in the other top-level keys of the
    source too (those the reader found an error in may be missing or partly read in `own`): for a reader whose
    errors leave the other sections as the file has them (DeepSpeed's, HF's), not one whose errors change them
    (NeMo's misspelt trainer.max_steps leaves the schedule without a length). `sections`: source keys below the top
    level that the reader reads as sections of their own (LiBai's `train.scheduler` beside `train.train_iter`).
    `units`: the source keys that count units of several steps (`Unit`), in which the notes advise their lengths.

    run_length: the source key through which the scheduler leaves its length to the run (DeepSpeed's `"auto"`),
    which `build(total_steps=)` or `--steps` gives later: its options are checked against a nominal run, and the
    length is filled from the real one when the experiment is planned (a missing length is then an error at that
    key, in validate as in build: `Experiment.check_run`)."""
    import dataclasses

    from optreg.config.experiment import _read_own, nominal_check
    from optreg.config.run import TrainSpec, resolve_run, run_known
    from optreg.errors import Collector

    errors = errors if errors is not None else Collector()
    train = own.get("train")   # one that is not a mapping: its own error, without a nominal run
    nominal = bool(run_length) and format_steps is None and isinstance(train or {}, Mapping) and not run_known(train)
    data = {**own, "train": {**(own.get("train") or {}), "steps": NOMINAL_RUN}} if nominal else own
    if not errors:
        try:
            experiment = _read_own(data, None)
        except ConfigError as exc:
            errors.extend(source_paths(exc, paths).errors)
    elif beside:   # every problem at once: the own form's too, in the source keys the reader found none in
        flagged = {_section(e.path, sections) for e in errors.items}
        try:
            with nominal_check(True):   # no plan follows the reader's errors: build's checks as validate's
                _read_own(data, None)
        except ConfigError as exc:
            errors.extend(e for e in source_paths(exc, paths).errors if _section(e.path, sections) not in flagged)
    if errors:
        error = ConfigError(errors.items)
        raise (error.located(source) if source else error) from None
    if nominal:
        train = TrainSpec.model_validate(own.get("train") or {})
        experiment = dataclasses.replace(experiment, train=train, run=resolve_run(train, errors=errors), notes=[])
    run = experiment.run
    if format_steps is not None or format_epochs is not None:   # the format's own length: a fallback
        run = resolve_run(experiment.train, format_steps=format_steps, format_epochs=format_epochs, errors=errors)
        experiment = dataclasses.replace(experiment, format_steps=format_steps, format_epochs=format_epochs)
    experiment.source, experiment.format, experiment.paths = source, name, dict(paths)
    experiment.units = dict(units or {})
    experiment.needs_run = run_length if nominal else None
    experiment.report = list(report)
    experiment.notes[:] = experiment.at_source(experiment.notes)
    return experiment.for_run(run)   # its notes for the format's own length


def own_form(experiment: Any) -> dict[str, Any]:
    """The experiment as optreg's own file: `dialect`, `optimizer`, `scheduler`, `clip_grad`, `train` (the run
    settings a file gave), each as `load_config` reads it back."""
    from optreg.config.run import GIVEN_BY

    out: dict[str, Any] = {}
    if experiment.dialect:
        out["dialect"] = experiment.dialect
    out["optimizer"] = _named(_plain(experiment.optimizer))
    if experiment.scheduler is not None:
        out["scheduler"] = _named(_plain(experiment.scheduler))
    if experiment.clip is not None:
        out["clip_grad"] = experiment.clip.model_dump(exclude_defaults=True)
    train = experiment.train.model_dump(exclude_defaults=True)
    if experiment.run.source in GIVEN_BY:   # the length convert was given: the run stated one way, in steps
        train = {k: v for k, v in train.items() if k != "epochs"} | {"steps": experiment.run.steps}
    elif experiment.run.known and "steps" not in train and experiment.format_steps is not None:
        train["steps"] = experiment.run.steps   # the format's own run length
    elif experiment.format_epochs is not None and not {"steps", "epochs"} & set(train) and \
            experiment.run.source in (None, experiment.format_epochs[1]):
        train["epochs"] = experiment.format_epochs[0]   # the format's own, in epochs
    if train:
        out["train"] = train
    return out


def report_lines(experiment: Any) -> list[str]:
    """One line per source key: its verdict (exact, approximate, trainer), the key and why."""
    return [f"{use.verdict:<12} {use.path}" + (f": {use.why}" if use.why else "") for use in experiment.report]


def convert_text(experiment: Any, name: str) -> str:
    """The experiment as optreg's own YAML file, headed by comments that say where it came from and what became
    of each key of the source (`optreg convert`)."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    class Flat(dict):   # a list item of scalars (an MMEngine scheduler entry, a param_groups rule): one line
        pass

    def represent_list(dumper: Any, value: list) -> Any:   # a short list of scalars on one line, else a block
        flow = all(not isinstance(v, (dict, list)) for v in value) and len(repr(value)) <= WIDTH // 2
        items = [Flat(v) if isinstance(v, dict) and all(
            not isinstance(x, dict) and not (isinstance(x, list) and any(isinstance(y, (dict, list)) for y in x))
            for x in v.values()) and len(yaml.safe_dump(_plain(v), default_flow_style=True, width=10 ** 6,
                                                        sort_keys=False)) <= WIDTH - 10 else v for v in value]
        return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=flow)

    Dumper.add_representer(list, represent_list)
    Dumper.add_representer(Flat, lambda dumper, value: dumper.represent_mapping("tag:yaml.org,2002:map", value,
                                                                                flow_style=True))
    import textwrap

    head = [f"# {name}, read as {experiment.format}, in optreg's own form"]
    for line in report_lines(experiment):
        head += textwrap.wrap(line, WIDTH, initial_indent="#   ", subsequent_indent="#" + " " * 17,
                              break_long_words=False, break_on_hyphens=False)
    body = yaml.dump(own_form(experiment), Dumper=Dumper, sort_keys=False, default_flow_style=False, width=100)
    return "\n".join(head) + "\n" + body


def _named(section: Any) -> Any:
    """A section with its name first (then its dialect), as optreg's own files are written."""
    if not isinstance(section, dict):
        return section
    first = {k: section[k] for k in ("name", "dialect") if k in section}
    return {**first, **{k: v for k, v in section.items() if k not in first}}


def _plain(value: Any) -> Any:
    """Tuples as lists, mappings as dicts (what YAML writes)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ConfigError(f"cannot write {show(value)} as YAML", "")


__all__ = ["TRAINER", "Unit", "source_path", "source_paths", "source_note", "read_translated", "own_form",
           "report_lines", "convert_text"]

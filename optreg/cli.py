"""The `optreg` command: run, list, show, validate, convert, schema, plot, groups, hydra-configs."""

from __future__ import annotations

import argparse
import json
import os
import sys
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

from optreg.cli_render import Column, warning_line
from optreg.errors import ConfigError, ConfigWarning, counted

DEFAULT_CONFIG = "quickstart.yaml"
SHOW_COLUMNS = (Column("parameter"), Column("type", "text"), Column("default", share=0.25),
                Column("constraint", "text"), Column("doc", "text", least=32))
GROUP_COLUMNS = (Column("group"), Column("rule"), Column("selectors", "text", breaks="; "),
                 Column("params", right=True), Column("numel", right=True), Column("lr"), Column("weight_decay"),
                 Column("layer"), Column("first names", "text", breaks=", "))


def default_config_text() -> str:
    """The embedded default experiment (also shipped as examples/quickstart.yaml)."""
    return resources.files("optreg.configs").joinpath(DEFAULT_CONFIG).read_text(encoding="utf-8")


def _console():
    from optreg.cli_render import console

    return console()


def _looks_like_override(text: str | None) -> bool:
    return bool(text) and not Path(text).is_file() and ("=" in text or text.startswith(("~", "+")))


def _load(config: str | None, overrides: Sequence[str], format: str | None = None, steps: int | None = None,
          planned: bool = False):
    """The experiment of a YAML or JSON file (default: the embedded quickstart) with Hydra overrides on top, read in
    its config format (`format`: forced); `steps` (`--steps`) is its train.steps, validated as if the file said it:
    it replaces the file's run length (train.steps, or train.epochs × steps_per_epoch). `planned`: the caller plans
    it against a model (run, plot, groups, validate --model), so it is read as build() reads it, without the plan
    of validate without one (`nominal_check`), whose first problems would hide the model's plan's others.

    `key=value`, `+key=value`, `~key` and group switches (`optimizer=sgd`, `scheduler=cosine_annealing`) follow
    Hydra's override syntax; a file with a `defaults:` list is composed as a Hydra primary config."""
    from optreg.config.experiment import nominal_check
    from optreg.config.formats import check_forced

    check_forced(format)
    with nominal_check(not planned):
        return _read(config, overrides, format, steps)


def _read(config: str | None, overrides: Sequence[str], format: str | None, steps: int | None):
    """`_load`'s reading."""
    from optreg.integrations.hydra.support import load_with_overrides
    from optreg.config.experiment import composes, validate_experiment
    from optreg.config.yaml_loader import load_yaml, read_yaml

    if _looks_like_override(config):
        config, overrides = None, [config, *overrides]
    data, source = read_yaml(Path(config)) if config else load_yaml(default_config_text(), f"<optreg>/{DEFAULT_CONFIG}")
    train = data.get("train") if isinstance(data, dict) else None
    added = "train" if train is None else "train.steps" if isinstance(train, dict) and "steps" not in train else None
    if steps and (overrides or composes(data, format)):
        overrides = [*overrides, f"++train.steps={steps}", *(["~train.epochs"] if isinstance(train, dict) and
                                                            "epochs" in train else [])]
    elif steps and isinstance(data, dict) and isinstance(train or {}, dict):
        data = {**data, "train": {**{k: v for k, v in (train or {}).items() if k != "epochs"}, "steps": steps}}
    if overrides or composes(data, format):
        return _steps_given(load_with_overrides(data, source, overrides, Path(config) if config else None, format),
                            steps, added)
    try:
        return _steps_given(validate_experiment(data, source, format), steps, added)
    except ConfigError as exc:
        raise exc.located(source) from None


def _steps_given(experiment, steps: int | None, added: str | None = None):
    """The experiment with `--steps` as its run length: a reader that translates a foreign file reads its own run
    keys, not the `train.steps` given beside them (DeepSpeed's, the Trainer's max_steps), so the run is set again
    as `build(total_steps=)` sets it, which wins over a format's own length. `added`: the key (`train`, or
    `train.steps` in a file's own `train:`) that --steps alone wrote, not the file: a foreign reader's report of it
    (convert's comments) is left out."""
    if steps and added and experiment.report:
        experiment.report = [use for use in experiment.report
                             if use.path != added and not use.path.startswith(added + ".")]
    if steps and experiment.run.steps != steps:
        return experiment.with_run(total_steps=steps, given_by="--steps")
    return experiment


def _class_of(optimizer: Any) -> str:
    """What `optreg run` names as the optimizer it built: its class path, or a composite's parts
    (`Composite(torch.Muon, torch.AdamW)`)."""
    from optreg.core.composite_optimizer import Composite

    if isinstance(optimizer, Composite):
        return repr(optimizer)
    return f"{type(optimizer).__module__}.{type(optimizer).__name__}"


def _built_for_run(experiment, model):
    """`build()` of `experiment` for `optreg run` and `plot`, and the steps they run: the run's length, else
    DEFAULT_STEPS, against which the plan is checked as against a length that is given (a per-step lr list as long
    as the run, accumulation_steps within it, a warmup shorter than it); the linter warns of a given length only."""
    from optreg.api import build
    from optreg.config.run import DEFAULT_RUN, DEFAULT_STEPS

    built = build(experiment, model)
    if built.run.steps is not None:
        return built, built.run.steps
    experiment.with_run(total_steps=DEFAULT_STEPS, given_by=DEFAULT_RUN).plan(model)
    return built, DEFAULT_STEPS


def cmd_run(args: argparse.Namespace) -> int:
    from optreg import cli_render as render
    from optreg.config.run import RunLength
    from optreg.core.build import run_loop
    from optreg.train import make_model, train

    console = _console()
    experiment = _load(args.config, args.overrides, args.format, args.steps, planned=True)
    spec = experiment.train
    model = make_model(spec.hidden, spec.depth, spec.seed)
    with run_loop():   # an optimizer the loop below cannot step is refused
        built, steps = _built_for_run(experiment, model)
    width = render.terminal_width()
    render.print_lines(render.wrap(
        f"optimizer: {_class_of(built.optimizer)}   "
        f"scheduler: {type(built.scheduler).__name__ if built.scheduler else 'none'}", width, "  "), console)
    rows = built.group_table()
    render.print_lines(groups_lines(rows, width), console)
    rules = [row["rule"].removeprefix("optimizer.") for row in rows if row["rule"] != "frozen"]

    last: list[float] = []   # the lrs of the last step taken (after it, its scheduler has set the next step's)

    def advance(step: int, loss: float, lrs: list[float]) -> None:
        last[:] = lrs
        progress.advance(loss, lrs)

    with render.RunProgress(console, steps, rules) as progress:
        result = train(model, built.optimizer, built.scheduler, steps, spec.batch_size, spec.seed, on_step=advance,
                       clip=built.clip_gradients if built.clips else None, accumulation=built.run.accumulation)
    run = RunLength(steps, accumulation=built.run.accumulation)
    final = f"final loss {result.final_loss:.6g}  (after {counted(steps, 'step')}" + (
        f", {counted(run.optimizer_steps, 'optimizer step')})" if run.accumulation > 1 else ")")
    below = render.lr_lines(last, rules, width)
    render.print_lines([final, *below] if below else [f"{final}  lr {render.lr_text(last[0], 6)}"], console)
    return 0


LIST_KINDS = ("optimizers", "schedulers")


def _kind(text: str) -> str:
    """`--kind`: a kind of LIST_KINDS, in the singular too (`optimizer`), in any case."""
    text = text.lower()
    return text if text in LIST_KINDS or f"{text}s" not in LIST_KINDS else f"{text}s"


def cmd_list(args: argparse.Namespace) -> int:
    """One line per component: its name, then its doc's first sentence cut to the width."""
    from optreg import cli_render as render
    from optreg.core.describe import list_optimizers, list_schedulers
    from optreg.core.entry import OPTIMIZER, SCHEDULER
    from optreg.core.registry import REGISTRY

    kinds = {"optimizers": (list_optimizers, OPTIMIZER), "schedulers": (list_schedulers, SCHEDULER)}
    width = render.terminal_width()
    lines: list[str] = []
    for kind, (fn, registry_kind) in kinds.items():
        if args.kind in (None, kind):
            names = fn(args.pattern, args.dialect)
            if not names and args.pattern and args.kind is None:
                continue        # `list 'adam*'`: the kind that has none is left out
            docs = {e.name if args.dialect else e.qualname: render.first_sentence(e.doc, e.name)
                    for e in REGISTRY.entries(registry_kind, args.dialect)}
            lines.append(f"{kind} ({len(names)}):")
            lines += render.listing(names, [docs.get(n, "") for n in names], width)
    render.print_lines(lines or [f"no optimizer or scheduler matches {args.pattern!r}"])
    return 0


def yaml_snippet(description, width: int = 80) -> str:
    """A ready-to-paste `optimizer:` / `scheduler:` block with the component's defaults: one option a line, lists
    in flow style (`betas: [0.9, 0.999]`), folded at `width` where YAML allows."""
    import yaml

    class Snippet(yaml.SafeDumper):
        pass

    Snippet.add_representer(list, lambda dumper, value: dumper.represent_sequence(
        "tag:yaml.org,2002:seq", value, flow_style=True))
    body: dict[str, Any] = {"name": description.name}
    if description.dialect != "torch":
        body["dialect"] = description.dialect
    for p in description.params:
        value = None if p.from_run else p.example if p.example is not None else "???" if p.required else p.default
        body[p.name] = list(value) if isinstance(value, tuple) else value
    return yaml.dump({description.kind: body}, Dumper=Snippet, sort_keys=False, default_flow_style=False,
                     width=width, allow_unicode=True)


def cmd_show(args: argparse.Namespace) -> int:
    from rich.text import Text

    from optreg import cli_render as render
    from optreg.core.build import COMBINATORS
    from optreg.core.describe import describe
    from optreg.integrations.hydra.configs import has_file, option_name, written_on_request

    width = render.terminal_width()
    if args.dialect is None and str(args.name).strip().lower() in COMBINATORS:
        render.print_lines(combinator_lines(str(args.name).strip().lower(), width))
        return 0
    d = describe(args.name, args.dialect)
    title = f"{d.qualname} ({d.kind}{', ' + d.values + ' values' if d.values else ''})"
    lines: list[Any] = [Text(line, style="bold") for line in render.wrap(title, width, "  ")]
    if d.doc:
        lines += render.wrap(d.doc, width)
    if d.source:
        lines += render.wrap(d.source, width, "  ", "reproduces: ")
    if d.class_path:
        lines += render.wrap(d.documented, width, "  ", "documented: ")
    if d.chain:
        lines += render.wrap(d.chain, width, "  ", "chain: ")
    if d.state:
        lines += render.wrap(d.state, width, "  ", "state_dtype: ")
    for limit in d.limits:
        lines += render.wrap(limit, width, "  ", "limit: ")
    rows = [[p.name, p.type, p.default_text, p.constraint, p.doc] for p in d.params]
    lines += ["", *render.table(SHOW_COLUMNS, rows, width)]
    lines += [""] if d.notes else []
    for note in d.notes:
        lines += render.wrap(note, width, "  ", "note: ")
    lines += ["", *yaml_snippet(d, width).splitlines()]
    writes = written_on_request(d)
    if has_file(d):   # a row that cannot step has no group option
        lines += render.wrap(f"{d.kind}={option_name(d)}" + (f" (its file: {writes})" if writes else ""), width,
                             "#   ", "# Hydra group option: ")
    render.print_lines(lines)
    return 0


def combinator_lines(name: str, width: int) -> list[str]:
    """`optreg show sequential` / `chained`: optreg's own combinator, which `name: sequential` in a config builds,
    its keys, and the dialects' classes spelt alike (`torch.SequentialLR`), which a prefix selects."""
    from optreg import cli_render as render
    from optreg.core.build import COMBINATOR_DOCS, COMBINATOR_KEYS
    from optreg.core.entry import SCHEDULER
    from optreg.core.registry import REGISTRY

    lines = render.wrap(f"{name} (optreg's scheduler combinator)", width, "  ")
    lines += render.wrap(COMBINATOR_DOCS[name], width)
    lines += render.wrap(", ".join((*COMBINATOR_KEYS[name], "by_epoch", "convert_to_iter_based", "warmup")), width,
                         "  ", "keys: ")
    alike = [e.qualname for e in REGISTRY.everywhere(SCHEDULER, name)]
    if alike:
        lines += render.wrap(f"{', '.join(alike)} (a dialect prefix selects one: optreg show {alike[0]})", width, "  ",
                             "the dialects' classes of that name: ")
    return lines


def _of_file(path: str, line: str) -> str:
    """A line of `validate`'s report on the file `path`, with its name first (a line at a position in it has it, as
    the file's reading names it: `./a.yaml` as `a.yaml`)."""
    return line if line.startswith((f"{path}:", f"{Path(path)}:")) else f"{path}: {line}"


def _of_config(args: argparse.Namespace, error: ConfigError) -> str:
    """The error of a command that reads a config file (run, plot, groups, convert): a problem that no position or
    override locates (a composed Hydra config's, from a group file) with the file's name first, as `validate` says
    it (`_of_file`); one of a command-line option (`--model`) as it is."""
    config = getattr(args, "config", None)
    if not config or _looks_like_override(config):
        return str(error)
    return "\n".join(str(e) if e.location or e.path.startswith("--") else _of_file(config, str(e))
                     for e in error.errors)


def cmd_validate(args: argparse.Namespace) -> int:
    """Every file is read with the overrides among the arguments on top (`optreg validate a.yaml b.yaml
    optimizer.lr=0.1`; overrides alone: the embedded quickstart, as `run` reads them) and reported, whatever an
    earlier one did; errors carry the file's name."""
    from optreg.cli_render import one_line_warnings

    status = 0
    model = load_model(args.model) if args.model else None
    overrides = [a for a in args.files if _looks_like_override(a)]
    for path in [a for a in args.files if a not in overrides] or [f"<optreg>/{DEFAULT_CONFIG}"]:
        try:
            with one_line_warnings(lambda line: _of_file(path, line)):   # a reader's warning names the file too
                experiment = _load(None if path.startswith("<optreg>/") else path, overrides, args.format,
                                   args.steps, planned=model is not None)
                # build's verdict without a model: the run as build needs it (--steps for a length the file leaves
                # to the trainer), a schedule in epochs with its steps per epoch
                notes = experiment.plan(model).notes if model is not None else experiment.check_final()
            for note in notes:   # the schedule linter's warnings: probably a mistake, not an error
                print(_of_file(path, warning_line(ConfigWarning(note, experiment.note_location(note)))),
                      file=sys.stderr)
            print(f"{path}: ok")
        except ConfigError as exc:
            print("\n".join(_of_file(path, line) for line in str(exc).splitlines()), file=sys.stderr)
            status = 1
        except Exception as exc:  # a bug must not hide the files after this one
            print(f"{path}: internal error ({type(exc).__name__}: {str(exc)[:200]}); please report it",
                  file=sys.stderr)
            status = 1
    return status


def cmd_convert(args: argparse.Namespace) -> int:
    """A config of any format as optreg's own YAML (stdout, or -o with the report of each key on stdout); the
    written file is read back and must validate."""
    from optreg.config.experiment import load_config
    from optreg.config.translate import convert_text, report_lines
    from optreg.core.models import MISSING_OPTION

    # read and checked as validate reads and checks it (--steps the run length, as in run and plot), so that an
    # error is the source file's, at its position, not the converted text's
    experiment = _load(args.config, args.overrides, args.format, args.steps)
    experiment.check_length()
    # a reader that keeps part of the file to plan against the model (MMEngine's paramwise_cfg, MindFormers' and
    # LiBai's parameter groups: its planner `keeps`; a Model Zoo file, read whole by its own planner): optreg's own
    # form says it only for one model, the one --model gives (the planner's for_model)
    keeps = getattr(experiment.planner, "keeps", None)   # True, or the source keys the planner keeps
    for_model = getattr(experiment.planner, "for_model", None)
    if (keeps or experiment.modelzoo is not None) and (for_model is None or args.model is None):
        kept = list(keeps) if isinstance(keeps, tuple) else [
            use.path for use in experiment.report if "planner" in use.why] or [f"the whole {experiment.format} file"]
        raise ConfigError(f"{Path(args.config).name} cannot be written in optreg's own form: the {experiment.format} "
                          f"reader plans {', '.join(kept)} against the model itself; "
                          + ("give the model with --model MODULE:CALLABLE to write its groups for that model, or "
                             if for_model is not None else "")
                          + "use the file as it is (optreg validate / run / build read it in its format)")
    if keeps and args.model is not None:
        try:
            experiment = for_model(experiment, load_model(args.model))
        except ConfigError as exc:
            raise experiment.locate(exc) from None
    text = convert_text(experiment, Path(args.config).name)
    try:
        load_config(text)
    except ConfigError as exc:
        missing = any(MISSING_OPTION in e.message for e in exc.errors)
        raise ConfigError(f"the converted file would not validate: {exc}" + (
            "; give the run length with --steps" if missing and not experiment.run.known else "")) from None
    if not args.output:
        sys.stdout.write(text)
        return 0
    Path(args.output).write_text(text, encoding="utf-8")
    for line in report_lines(experiment):
        print(line)
    print(f"wrote {args.output} ({experiment.format} -> optreg)")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from optreg.config.json_schema import experiment_schema

    text = json.dumps(experiment_schema(args.dialect or ()), indent=1, sort_keys=False)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
        print(f"wrote {args.output}")
    else:
        print(text)
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from optreg import plot
    from optreg.train import make_model

    if args.steps is not None and args.steps < 1 or args.width is not None and args.width < 2:
        raise ConfigError("--steps must be >= 1 and --width >= 2")
    experiment = _load(args.config, args.overrides, args.format, args.steps, planned=True)
    spec = experiment.train
    model = load_model(args.model) if args.model else make_model(spec.hidden, spec.depth, spec.seed)
    built, steps = _built_for_run(experiment, model)
    data = plot.trace(built, steps)
    if args.csv:   # stdout holds the CSV only; notes go to stderr
        for note in data.notes:
            print(f"note: {note}", file=sys.stderr)
        if args.output is None:
            sys.stdout.write(plot.csv_text(data))
        else:
            Path(args.output).write_text(plot.csv_text(data), encoding="utf-8")
            print(f"wrote {args.output} ({counted(steps, 'step')}, {len(data.groups)} group(s))")
        return 0
    if args.text or not plot.have_matplotlib():
        if not args.text:
            print("matplotlib is not installed (pip install 'optreg[plot]'): printing sparklines", file=sys.stderr)
        from optreg.cli_render import print_lines, terminal_width

        print_lines(plot.sparklines(data, args.width, terminal_width()).splitlines())
        return 0
    png = plot.png(data, args.output or "lr.png", args.log)
    print(f"wrote {png} ({', '.join(data.moving())} of {len(data.groups)} group(s), "
          f"{counted(steps, 'step')})")
    return 0


MODEL_EXAMPLE = "examples.finetune_models:tiny_vit"   # a --model factory, as help and errors name one


def load_model(spec: str) -> Any:
    """`MODULE:CALLABLE` -> the model (a torch.nn.Module) the user's factory returns (the current directory on
    sys.path)."""
    import importlib

    module_name, colon, attr = spec.partition(":")
    if not colon or not module_name or not attr:
        raise ConfigError(f"expected MODULE:CALLABLE (e.g. {MODEL_EXAMPLE}), got {spec!r}", "--model")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"cannot import {module_name!r}: {exc}", "--model") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            from optreg.errors import ErrorItem, closest

            hint = closest(part, [n for n in dir(obj) if not n.startswith("_")])
            raise ConfigError([ErrorItem("--model", f"{module_name} has no {attr!r}", None, hint)])
        obj = getattr(obj, part)
    if not callable(obj):
        raise ConfigError(f"{spec} is a {type(obj).__name__}, not a callable that returns the model", "--model")
    try:
        model = obj()
    except Exception as exc:  # the user's own code: reported with its type, not a traceback
        raise ConfigError(f"{spec}() raised {type(exc).__name__}: {str(exc)[:200]}", "--model") from None
    import torch

    if not isinstance(model, torch.nn.Module):   # said at --model, not at the config's first line as its params
        raise ConfigError(f"{spec}() returned {type(model).__name__}, not the model (a torch.nn.Module)", "--model")
    return model


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return f"per-step list ({len(value)})"
    return str(value)


def selectors_text(row: dict[str, Any]) -> str:
    """What put a group's parameters there: its rule's selectors and multipliers (`params: *.bias, *norm*`)."""
    selectors = [f"{k}: {', '.join(v) if isinstance(v, list) else v}" for k, v in row["selectors"].items()]
    selectors += [f"{k}: {v:g}" for k, v in row["multipliers"].items()]
    if row["no_weight_decay"]:
        selectors.append(row.get("no_decay_key") or "no_weight_decay")
    return "; ".join(selectors) or ("(the rest)" if row["rule"] == "default" else "requires_grad=False"
                                    if row["rule"] == "frozen" else "")


def groups_lines(rows: Sequence[dict[str, Any]], width: int) -> list[Any]:
    """The table of `optreg groups` and `optreg run` as lines of `width`: one row per parameter group, then the
    frozen parameters."""
    from optreg import cli_render as render

    cells = []
    composite = any(row.get("optimizer") for row in rows)   # a composite: which optimizer updates each group
    own = any("own_lr" in row for row in rows)   # a schedule sets the lr itself, not the one a group is built with
    for row in rows:
        names = row["names"]
        shown = ", ".join(names[:3]) + (f", … (+{len(names) - 3})" if len(names) > 3 else "")
        cells.append([_cell(row["group"]), row["rule"].removeprefix("optimizer."),
                      *((row.get("optimizer") or "",) if composite else ()), selectors_text(row),
                      str(row["params"]), str(row["numel"]), _cell(row["lr"]),
                      *((_cell(row["own_lr"]) if "own_lr" in row else "",) if own else ()),
                      _cell(row["weight_decay"]), _cell(row["layer"]), shown])
    styles = ["dim" if row["rule"] == "frozen" else None for row in rows]
    lr = [c.header for c in GROUP_COLUMNS].index("lr") + 1
    columns = (*GROUP_COLUMNS[:2], *((Column("optimizer"),) if composite else ()), *GROUP_COLUMNS[2:lr],
               *((Column("own lr"),) if own else ()), *GROUP_COLUMNS[lr:])
    return ["parameter groups", *render.table(columns, cells, width, styles)]


def cmd_groups(args: argparse.Namespace) -> int:
    """Dry run: the parameter groups a config gives the user's model, each with its lr at the first step; the
    optimizer is not created."""
    from optreg.api import group_table

    experiment = _load(args.config, args.overrides, args.format, args.steps, planned=True)
    rows = group_table(experiment, load_model(args.model))
    if args.json:
        print(json.dumps(rows, indent=1, default=str))
    else:
        from optreg.cli_render import print_lines, terminal_width

        print_lines(groups_lines(rows, terminal_width()))
    return 0


def cmd_hydra_configs(args: argparse.Namespace) -> int:
    from optreg.integrations.hydra import configs as hc

    if args.provider != "optreg" and not args.output:
        raise ConfigError("a plugin's group files go to its own package: give -o DIR", "provider")
    entries = hc.entries_of(args.provider)
    if not entries:
        import importlib.util

        from optreg.core.registry import REGISTRY
        from optreg.errors import ErrorItem, closest

        libraries = {d.library.package for d in REGISTRY.declared() if d.library is not None}
        if args.provider in libraries and importlib.util.find_spec(args.provider) is None:
            raise ConfigError(f"{args.provider} is not installed: pip install {args.provider}", "provider")
        known = sorted(libraries | {e.provider for kind in hc.GROUPS for e in REGISTRY.entries(kind, None)})
        raise ConfigError([ErrorItem("provider", f"no registered component comes from {args.provider!r} (the "
                                                 f"providers: {', '.join(known)})", None,
                                     closest(args.provider, known))])
    root = Path(args.output) if args.output else hc.default_root()
    files = hc.group_files(entries)
    if args.check:
        problems = hc.stale(root, files)
        for line in problems:
            print(line, file=sys.stderr)
        if problems:
            print(f"{len(problems)} Hydra group file(s) out of date in {root}: run `optreg hydra-configs`",
                  file=sys.stderr)
            return 1
        print(f"{len(files)} Hydra group files up to date in {root}")
        return 0
    changes = hc.write(root, files)
    for line in changes:
        print(line)
    print(f"{len(files)} Hydra group files in {root} ({len(changes)} changed)")
    return 0


def _model_option(command: argparse.ArgumentParser, purpose: str | None = None, required: bool = False) -> None:
    """`--model MODULE:CALLABLE` (read by load_model): one definition for every command that takes the user's
    model; `purpose`: what the command does with it."""
    factory = (f"a factory that returns your torch.nn.Module (imported with the current directory on sys.path), "
               f"e.g. {MODEL_EXAMPLE}")
    command.add_argument("--model", required=required, metavar="MODULE:CALLABLE",
                         help=f"{purpose}; {factory}" if purpose else factory)


RUN_LENGTH_HELP = ("the run length, where the file leaves it to the trainer (DeepSpeed's \"auto\", Hugging Face's "
                   "epochs)")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="optreg", description="Config-driven PyTorch optimizers and LR schedulers.")
    top.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = top.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="train the built-in model with a YAML experiment config")
    run.add_argument("config", nargs="?", help="YAML experiment config (default: the embedded quickstart)")
    run.add_argument("overrides", nargs="*", help="Hydra overrides: optimizer.lr=1e-3, optimizer=sgd, "
                                                   "scheduler=cosine_annealing scheduler.T_max=100, +key=value, ~key")
    run.add_argument("--steps", type=_positive, help="the run's steps, each a scheduler step (a micro-batch under "
                                                     "train.accumulation_steps A: steps / A optimizer steps); "
                                                     "replaces train.steps or train.epochs; default: the config's "
                                                     "run length, else 100")
    run.set_defaults(fn=cmd_run)
    ls = sub.add_parser("list", help="list registered optimizers and schedulers, each with its first sentence")
    ls.add_argument("pattern", nargs="?", metavar="PATTERN", help="fnmatch pattern, e.g. 'adam*' or 'cos*'")
    ls.add_argument("extra", nargs="?", help=argparse.SUPPRESS)    # `list optimizers PATTERN`, the older form
    ls.add_argument("--kind", choices=LIST_KINDS, type=_kind, help="only optimizers or only schedulers")
    ls.add_argument("--dialect", type=_dialect, help="one dialect's components (bare names)")
    ls.set_defaults(fn=cmd_list, check_args=lambda args: _list_arguments(args, ls))
    show = sub.add_parser("show", help="parameters, defaults and constraints of one component")
    show.add_argument("name")
    show.add_argument("--dialect", type=_dialect)
    show.set_defaults(fn=cmd_show)
    validate = sub.add_parser("validate", help="validate YAML experiment configs (exit 1 on errors)")
    validate.add_argument("files", nargs="+", metavar="FILE_OR_OVERRIDE",
                          help="config files, and Hydra overrides applied to each (optimizer.lr=1e-3); overrides "
                               "alone: the embedded quickstart")
    validate.add_argument("--steps", type=_positive, help=RUN_LENGTH_HELP)
    _model_option(validate, "also plan the parameter groups against your model")
    validate.set_defaults(fn=cmd_validate)
    convert = sub.add_parser("convert", help="write a config of another format (DeepSpeed, Hugging Face, Model "
                                             "Zoo...) as optreg's own YAML, with what became of each key")
    convert.add_argument("config", help="the config file (format detected, or --format)")
    convert.add_argument("overrides", nargs="*", help="Hydra overrides on the file's own keys, as for run "
                                                      "(max_steps=100 on a Hugging Face file), written converted")
    convert.add_argument("-o", "--output", help="write the YAML here and print the report (default: the YAML with "
                                                "the report as comments, to stdout)")
    convert.add_argument("--steps", type=_positive, help="the run length, where the source leaves it to the trainer "
                                                        "(DeepSpeed's \"auto\", Hugging Face's epochs)")
    _model_option(convert, "write the parameter groups a format decides against the model (MMEngine's "
                           "paramwise_cfg, MindFormers' and LiBai's weight-decay groups) for your model's parameter "
                           "names")
    convert.set_defaults(fn=cmd_convert)
    schema = sub.add_parser("schema", help="write the JSON Schema (draft-07) of experiment configs in optreg's own "
                                           "form (not a format reader's: DeepSpeed, Hugging Face, ...)")
    schema.add_argument("-o", "--output")
    schema.add_argument("--dialect", action="append", metavar="NAME",
                        help="also the optimizers of this installed library dialect (pytorch_optimizer, torchao, "
                             "bitsandbytes, timm); repeatable")
    schema.set_defaults(fn=cmd_schema)
    plot = sub.add_parser("plot", help="draw lr (and momentum / weight decay when scheduled) of every param group")
    plot.add_argument("config", nargs="?", help="YAML experiment config (default: the embedded quickstart)")
    plot.add_argument("overrides", nargs="*", help="Hydra overrides, as for run")
    plot.add_argument("--steps", type=_positive, help="steps to draw, as run counts them (micro-batches under "
                                                      "train.accumulation_steps; default: the config's run length)")
    plot.add_argument("-o", "--output", help="the PNG (default: lr.png), or with --csv the CSV (default: stdout)")
    plot.add_argument("--text", action="store_true", help="print terminal sparklines instead of a PNG")
    plot.add_argument("--width", type=int, help="sparkline width in characters (default: to fit the terminal)")
    plot.add_argument("--log", action="store_true", help="logarithmic y axes (the PNG)")
    plot.add_argument("--csv", action="store_true", help="write step,group,key,value rows to stdout: one per step "
                                                        "of the run, the value an optimizer step there applies (a "
                                                        "micro-batch under train.accumulation_steps A: the optimizer "
                                                        "steps on every A-th)")
    _model_option(plot, "draw the groups the config gives your model (default: the built-in model of run, "
                        "which param_groups rules written for another model may not fit)")
    plot.set_defaults(fn=cmd_plot)
    groups = sub.add_parser("groups", help="dry run: print the parameter groups a config gives your model")
    groups.add_argument("config", nargs="?", help="YAML experiment config (default: the embedded quickstart)")
    groups.add_argument("overrides", nargs="*", help="Hydra overrides, as for run")
    _model_option(groups, required=True)
    groups.add_argument("--steps", type=_positive, help=RUN_LENGTH_HELP + ", for the lrs at the first step (a "
                                                                         "warmup may be a ratio of it)")
    groups.add_argument("--json", action="store_true", help="print the rows as JSON")
    groups.set_defaults(fn=cmd_groups)
    hydra = sub.add_parser("hydra-configs", help="write the Hydra config groups (configs/optimizer, "
                                                 "configs/scheduler) from the registry")
    hydra.add_argument("--check", action="store_true", help="only report stale files (exit 1 if any)")
    hydra.add_argument("-o", "--output", help="configs root (default: the package's configs directory)")
    hydra.add_argument("--provider", default="optreg",
                       help="whose components: optreg (default), a plugin's distribution name, or an installed "
                            "library read as a dialect (pytorch_optimizer, torchao, bitsandbytes, timm; with -o)")
    hydra.set_defaults(fn=cmd_hydra_configs)
    for command in (run, validate, convert, plot, groups):
        command.add_argument("--format", metavar="NAME",
                             help="read the config in this format (default: detected by its signature keys; "
                                  "`optreg.formats()` lists them)")
    return top


def _version() -> str:
    """The installed distribution's version (importlib.metadata), or a note when optreg runs from a source tree
    that was never installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("optreg")
    except PackageNotFoundError:
        return "(not installed: no distribution metadata)"


def _dialect(text: str) -> str:
    """--dialect's value: a known dialect, else a usage error (exit 2) with the known ones and a close match."""
    from optreg.core.registry import REGISTRY

    try:
        return REGISTRY.check_dialect(text, "")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _list_arguments(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """`list optimizers [PATTERN]` (a kind first, the older form) is `list [PATTERN] --kind optimizers`."""
    if args.pattern in LIST_KINDS and args.kind is None:
        args.kind, args.pattern, args.extra = args.pattern, args.extra, None
    if args.extra is not None:
        parser.error(f"list takes one PATTERN, got {args.pattern!r} and {args.extra!r} (quote a pattern with "
                     f"spaces; --kind picks optimizers or schedulers)")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _parse(cli: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, with Hydra overrides after options too (`optreg run FILE --steps 5 optimizer.lr=0.1`, which
    argparse alone refuses: a positional list cannot resume after an option)."""
    args, extra = cli.parse_known_args(argv)
    late = [a for a in extra if _looks_like_override(a)] if hasattr(args, "overrides") or hasattr(args, "files") \
        else []
    unknown = [a for a in extra if a not in late]
    if unknown:
        cli.error(f"unrecognized arguments: {' '.join(unknown)}")
    if late and hasattr(args, "overrides"):
        args.overrides = [*args.overrides, *late]
    elif late:
        args.files = [*args.files, *late]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    from optreg.cli_render import one_line_warnings

    args = _parse(parser(), argv)
    if getattr(args, "check_args", None):
        args.check_args(args)
    try:
        with one_line_warnings():
            return args.fn(args)
    except ConfigError as exc:
        print(_of_config(args, exc), file=sys.stderr)
        return 1
    except BrokenPipeError:  # `optreg list | head`: the reader has gone; nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:   # an -o that cannot be written: the file and the system's reason, as a ConfigError says
        print(f"{exc.filename}: {exc.strerror}" if exc.filename and exc.strerror else f"error: {exc}",
              file=sys.stderr)
        return 1
    except ValueError as exc:  # e.g. a scheduler stepped past its total_steps
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

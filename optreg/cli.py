"""The `optreg` command: run, list, show, validate, schema, plot, groups, hydra-configs."""

from __future__ import annotations

import argparse
import json
import os
import sys
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

from optreg.errors import ConfigError

DEFAULT_CONFIG = "quickstart.yaml"


def default_config_text() -> str:
    """The embedded default experiment (also shipped as examples/quickstart.yaml)."""
    return resources.files("optreg.configs").joinpath(DEFAULT_CONFIG).read_text(encoding="utf-8")


def _console():
    from rich.console import Console

    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=120)
    return console


def _looks_like_override(text: str | None) -> bool:
    return bool(text) and not Path(text).is_file() and ("=" in text or text.startswith(("~", "+")))


def _load(config: str | None, overrides: Sequence[str], format: str | None = None, steps: int | None = None):
    """The experiment of a YAML or JSON file (default: the embedded quickstart) with Hydra overrides on top, read in
    its config format (`format`: forced); `steps` (`--steps`) is its train.steps, validated as if the file said it.

    `key=value`, `+key=value`, `~key` and group switches (`optimizer=sgd`, `scheduler=cosine_annealing`) follow
    Hydra's override syntax; a file with a `defaults:` list is composed as a Hydra primary config."""
    from optreg.integrations.hydra.support import load_with_overrides
    from optreg.config.experiment import validate_experiment
    from optreg.config.yaml_loader import load_yaml, read_yaml

    if _looks_like_override(config):
        config, overrides = None, [config, *overrides]
    data, source = read_yaml(Path(config)) if config else load_yaml(default_config_text(), f"<optreg>/{DEFAULT_CONFIG}")
    if steps and (overrides or isinstance(data, dict) and "defaults" in data):
        overrides = [*overrides, f"++train.steps={steps}"]
    elif steps and isinstance(data, dict) and isinstance(data.get("train", {}), dict):
        data = {**data, "train": {**data.get("train", {}), "steps": steps}}
    if overrides or (isinstance(data, dict) and "defaults" in data):
        return load_with_overrides(data, source, overrides, Path(config) if config else None, format)
    try:
        return validate_experiment(data, source, format)
    except ConfigError as exc:
        raise exc.located(source) from None


def cmd_run(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from optreg.api import build
    from optreg.train import make_model, train

    console = _console()
    experiment = _load(args.config, args.overrides, args.format, args.steps)
    spec = experiment.train
    model = make_model(spec.hidden, spec.depth, spec.seed)
    built = build(experiment, model)
    console.print(f"optimizer: {type(built.optimizer).__module__}.{type(built.optimizer).__name__}"
                  f"   scheduler: {type(built.scheduler).__name__ if built.scheduler else 'none'}")
    console.print(groups_table(built.group_table()))
    with Progress(TextColumn("[bold]train"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TextColumn("loss {task.fields[loss]:.4g}  lr {task.fields[lr]:.3g}"), TimeElapsedColumn(),
                  console=console, transient=False) as progress:
        task = progress.add_task("train", total=spec.steps, loss=float("nan"), lr=float("nan"))
        result = train(model, built.optimizer, built.scheduler, spec.steps, spec.batch_size, spec.seed,
                       on_step=lambda step, loss, lr: progress.update(task, advance=1, loss=loss, lr=lr),
                       clip=built.clip_gradients if built.clip else None)
    console.print(f"final loss {result.final_loss:.6g}  lr {result.lrs[-1]:.6g}  (after {spec.steps} steps)")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from optreg.core.describe import list_optimizers, list_schedulers

    kinds = {"optimizers": list_optimizers, "schedulers": list_schedulers}
    for kind, fn in kinds.items():
        if args.kind in (None, kind):
            names = fn(args.pattern, args.dialect)
            print(f"{kind} ({len(names)}):")
            for name in names:
                print(f"  {name}")
    return 0


def yaml_snippet(description) -> str:
    """A ready-to-paste `optimizer:` / `scheduler:` block with the component's defaults."""
    import yaml

    body: dict[str, Any] = {"name": description.name}
    if description.dialect != "torch":
        body["dialect"] = description.dialect
    for p in description.params:
        value = p.example if p.example is not None else "???" if p.required else p.default
        body[p.name] = list(value) if isinstance(value, tuple) else value
    return yaml.safe_dump({description.kind: body}, sort_keys=False, default_flow_style=None)


def cmd_show(args: argparse.Namespace) -> int:
    from rich.table import Table

    from optreg.core.describe import describe

    d = describe(args.name, args.dialect)
    console = _console()
    console.print(f"[bold]{d.qualname}[/bold] ({d.kind}{', ' + d.values + ' values' if d.values else ''})")
    if d.doc:
        console.print(d.doc)
    if d.source:
        console.print(f"reproduces: {d.source}")
    if d.chain:
        console.print(f"chain: {d.chain}", markup=False)
    table = Table()
    for column in ("parameter", "type", "default", "constraint", "doc"):
        table.add_column(column, overflow="fold")
    for p in d.params:
        table.add_row(p.name, p.type, "required" if p.required else repr(p.default), p.constraint, p.doc)
    console.print(table)
    for note in d.notes:
        console.print(f"note: {note}")
    from optreg.integrations.hydra.configs import option_name

    console.print("\n" + yaml_snippet(d) + f"# Hydra group option: {d.kind}={option_name(d)}", markup=False)
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    """Every file is read and reported, whatever an earlier one did; errors carry the file's name."""
    status = 0
    model = load_model(args.model) if args.model else None
    for path in args.files:
        try:
            experiment = _load(path, [], args.format)
            if model is not None:
                experiment.plan(model)
            print(f"{path}: ok")
        except ConfigError as exc:
            lines = [line if line.startswith(path) else f"{path}: {line}" for line in str(exc).splitlines()]
            print("\n".join(lines), file=sys.stderr)
            status = 1
        except Exception as exc:  # a bug must not hide the files after this one
            print(f"{path}: internal error ({type(exc).__name__}: {str(exc)[:200]}); please report it",
                  file=sys.stderr)
            status = 1
    return status


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
    from optreg.api import build
    from optreg.train import make_model

    if args.steps is not None and args.steps < 1 or args.width < 2:
        raise ConfigError("--steps must be >= 1 and --width >= 2")
    experiment = _load(args.config, args.overrides, args.format, args.steps)
    spec = experiment.train
    steps = spec.steps
    data = plot.trace(build(experiment, make_model(spec.hidden, spec.depth, spec.seed)), steps)
    if args.csv:   # stdout holds the CSV only; notes go to stderr
        for note in data.notes:
            print(f"note: {note}", file=sys.stderr)
        sys.stdout.write(plot.csv_text(data))
        return 0
    if args.text or not plot.have_matplotlib():
        if not args.text:
            print("matplotlib is not installed (pip install 'optreg[plot]'): printing sparklines", file=sys.stderr)
        print(plot.sparklines(data, args.width))
        return 0
    print(f"wrote {plot.png(data, args.output)} ({', '.join(data.moving())} of {len(data.groups)} group(s), "
          f"{steps} steps)")
    return 0


def load_model(spec: str) -> Any:
    """`MODULE:CALLABLE` -> the model the user's factory returns (the current directory on sys.path)."""
    import importlib

    module_name, colon, attr = spec.partition(":")
    if not colon or not module_name or not attr:
        raise ConfigError(f"expected MODULE:CALLABLE (e.g. examples.finetune_models:tiny_vit), got {spec!r}", "--model")
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
        return obj()
    except Exception as exc:  # the user's own code: reported with its type, not a traceback
        raise ConfigError(f"{spec}() raised {type(exc).__name__}: {str(exc)[:200]}", "--model") from None


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return f"per-step list ({len(value)})"
    return str(value)


def groups_table(rows: Sequence[dict[str, Any]]) -> Any:
    """The rich table of `optreg groups`: one line per parameter group, then the frozen parameters."""
    from rich.table import Table

    table = Table(title="parameter groups")
    composite = any(row.get("optimizer") for row in rows)   # a composite: which optimizer updates each group
    for column in ("group", "rule", *(("optimizer",) if composite else ()), "selectors", "params", "numel", "lr",
                   "weight_decay", "layer", "first names"):
        table.add_column(column, overflow="fold", justify="right" if column in ("params", "numel") else "left")
    for row in rows:
        selectors = [f"{k}: {', '.join(v) if isinstance(v, list) else v}" for k, v in row["selectors"].items()]
        selectors += [f"{k}: {v:g}" for k, v in row["multipliers"].items()]
        if row["no_weight_decay"]:
            selectors.append("no_weight_decay")
        names = row["names"]
        shown = ", ".join(names[:3]) + (f", … (+{len(names) - 3})" if len(names) > 3 else "")
        table.add_row(_cell(row["group"]), row["rule"].removeprefix("optimizer."),
                      *((row.get("optimizer") or "",) if composite else ()),
                      "; ".join(selectors) or ("(the rest)" if row["rule"] == "default" else "requires_grad=False"
                                               if row["rule"] == "frozen" else ""),
                      str(row["params"]), str(row["numel"]), _cell(row["lr"]), _cell(row["weight_decay"]),
                      _cell(row["layer"]), shown, style="dim" if row["rule"] == "frozen" else None)
    return table


def cmd_groups(args: argparse.Namespace) -> int:
    """Dry run: the parameter groups a config gives the user's model; no optimizer or scheduler is created."""
    from optreg.api import group_table

    experiment = _load(args.config, args.overrides, args.format)
    rows = group_table(experiment, load_model(args.model))
    if args.json:
        print(json.dumps(rows, indent=1, default=str))
    else:
        _console().print(groups_table(rows))
    return 0


def cmd_hydra_configs(args: argparse.Namespace) -> int:
    from optreg.integrations.hydra import configs as hc

    if args.provider != "optreg" and not args.output:
        raise ConfigError("a plugin's group files go to its own package: give -o DIR", "provider")
    entries = hc.entries_of(args.provider)
    if not entries:
        raise ConfigError(f"no registered component comes from {args.provider!r}", "provider")
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


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="optreg", description="Config-driven PyTorch optimizers and LR schedulers.")
    sub = top.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="train the built-in model with a YAML experiment config")
    run.add_argument("config", nargs="?", help="YAML experiment config (default: the embedded quickstart)")
    run.add_argument("overrides", nargs="*", help="Hydra overrides: optimizer.lr=1e-3, optimizer=sgd, "
                                                   "scheduler=cosine_annealing scheduler.T_max=100, +key=value, ~key")
    run.add_argument("--steps", type=_positive, help="override train.steps")
    run.set_defaults(fn=cmd_run)
    ls = sub.add_parser("list", help="list registered optimizers and schedulers")
    ls.add_argument("kind", nargs="?", choices=("optimizers", "schedulers"))
    ls.add_argument("pattern", nargs="?", help="fnmatch pattern, e.g. 'cos*'")
    ls.add_argument("--dialect")
    ls.set_defaults(fn=cmd_list)
    show = sub.add_parser("show", help="parameters, defaults and constraints of one component")
    show.add_argument("name")
    show.add_argument("--dialect")
    show.set_defaults(fn=cmd_show)
    validate = sub.add_parser("validate", help="validate YAML experiment configs (exit 1 on errors)")
    validate.add_argument("files", nargs="+")
    validate.add_argument("--model", metavar="MODULE:CALLABLE",
                          help="also plan the parameter groups against the model this factory returns")
    validate.set_defaults(fn=cmd_validate)
    schema = sub.add_parser("schema", help="write the JSON Schema (draft-07) of experiment configs")
    schema.add_argument("-o", "--output")
    schema.add_argument("--dialect", action="append", metavar="NAME",
                        help="also the optimizers of this installed library dialect (pytorch_optimizer, torchao, "
                             "bitsandbytes, timm); repeatable")
    schema.set_defaults(fn=cmd_schema)
    plot = sub.add_parser("plot", help="draw lr (and momentum / weight decay when scheduled) of every param group")
    plot.add_argument("config", nargs="?", help="YAML experiment config (default: the embedded quickstart)")
    plot.add_argument("overrides", nargs="*", help="Hydra overrides, as for run")
    plot.add_argument("--steps", type=_positive, help="steps to draw (default: train.steps)")
    plot.add_argument("-o", "--output", default="lr.png", help="PNG file (default: lr.png)")
    plot.add_argument("--text", action="store_true", help="print terminal sparklines instead of a PNG")
    plot.add_argument("--width", type=int, default=60, help="sparkline width in characters")
    plot.add_argument("--csv", action="store_true", help="write step,group,key,value rows to stdout (the value "
                                                        "each optimizer step applies)")
    plot.set_defaults(fn=cmd_plot)
    groups = sub.add_parser("groups", help="dry run: print the parameter groups a config gives your model")
    groups.add_argument("config", nargs="?", help="YAML experiment config (default: the embedded quickstart)")
    groups.add_argument("overrides", nargs="*", help="Hydra overrides, as for run")
    groups.add_argument("--model", required=True, metavar="MODULE:CALLABLE",
                        help="a factory that returns your torch.nn.Module (imported with the current directory "
                             "on sys.path), e.g. examples.finetune_models:tiny_vit")
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
    for command in (run, validate, plot, groups):
        command.add_argument("--format", metavar="NAME",
                             help="read the config in this format (default: detected by its signature keys; "
                                  "`optreg.formats()` lists them)")
    return top


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.fn(args)
    except ConfigError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except BrokenPipeError:  # `optreg list | head`: the reader has gone; nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ValueError, OSError) as exc:  # e.g. a scheduler stepped past its total_steps, an unwritable -o
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

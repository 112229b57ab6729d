"""LiBai configs (OneFlow's model suite) as a config format: what LiBai's DefaultTrainer builds from `optim` and
`train` (LiBai main, 2023: libai/optim/build.py, libai/scheduler/lr_scheduler.py, libai/engine/default.py).

A LazyConfig `.py` file is read with `ast` (`lazy.py`), never executed; the same config saved as YAML (LiBai's
`config.yaml`, `_target_:` strings) is read from the mapping. Translated into optreg's own form in the oneflow
dialect:
- `optim = LazyCall(flow.optim.X)(params=LazyCall(get_default_optimizer_params)(...), **options)` -> oneflow.X with
  the options; `clip_grad_max_norm` / `clip_grad_norm_type` go to every group (OneFlow's per-group clip_grad());
  the groups are get_default_optimizer_params' (`groups.py`);
- `train.scheduler = LazyCall(WarmupXxxLR)(...)` -> OneFlow's WarmupLR around the scheduler LiBai's function builds
  (CosineDecayLR, CosineAnnealingLR, StepLR, MultiStepLR, ExponentialLR, PolynomialLR), with max_iter = the run
  length and warmup_iter = ceil(train_iter · warmup_ratio), as DefaultTrainer.auto_scale_hyperparams sets them
  (milestones are ratios of the run); a warmup of 0 is the scheduler alone, as LiBai returns it;
- the run length: train.train_iter, or max(train_iter, train_epoch × iterations per epoch) with `train.train_epoch`
  (iterations per epoch are the dataset's: `build(..., steps_per_epoch=)`; the scheduler is then translated when the
  experiment is planned);
- eager mode (`graph.enabled = False`) with `train.num_accumulation_steps` A > 1: the EagerTrainer feeds micro-batches,
  so auto_scale_hyperparams multiplies train_iter and warmup_iter (each as graph mode computes it) by A and the
  scheduler steps on every micro-batch, the optimizer on every A-th: `train.accumulation_steps: A` in optreg's own
  form, a run of A × train_iter steps (milestones ratios of that), and a length the schedule linter advises for
  train_iter is in iterations (the fewest whose A × train_iter steps cover the run: `_units`). Graph mode
  accumulates inside the graph: one step per train_iter, A is the trainer's.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any, Mapping

from optreg.core.models import bool_message, bound_message, number_message
from optreg.config.formats import Choice, KeyUse, misspelt
from optreg.config.translate import NOMINAL_RUN, Unit, read_translated
from optreg.errors import Collector, ConfigError, closest, join_path, key_text, show

SCHEDULERS = {   # LiBai's function -> (OneFlow's scheduler, {LiBai argument: OneFlow argument}, defaults)
    "WarmupCosineLR": ("CosineDecayLR", {"alpha": "alpha"}, {"alpha": 0.0}),
    "WarmupCosineAnnealingLR": ("CosineAnnealingLR", {"eta_min": "eta_min"}, {"eta_min": 0.0}),
    "WarmupStepLR": ("StepLR", {"step_size": "step_size", "gamma": "gamma"}, {"gamma": 0.1}),
    "WarmupMultiStepLR": ("MultiStepLR", {"milestones": "milestones", "gamma": "gamma"}, {"gamma": 0.1}),
    "WarmupExponentialLR": ("ExponentialLR", {"gamma": "gamma"}, {}),
    "WarmupPolynomialLR": ("PolynomialLR", {"end_learning_rate": "end_learning_rate", "power": "power",
                                            "cycle": "cycle"}, {"end_learning_rate": 0.0001, "power": 1.0}),
}
LENGTH = {"CosineDecayLR": "decay_steps", "CosineAnnealingLR": "T_max", "PolynomialLR": "decay_batch"}
WARMUP_KEYS = ("warmup_factor", "warmup_method")
GROUPING = "get_default_optimizer_params"
SECTIONS = ("optim", "train", "graph")   # the config's names optreg reads (graph: eager mode's accumulation)
GROUP_KEYS = ("weight_decay_norm", "weight_decay_bias", "clip_grad_max_norm", "clip_grad_norm_type", "overrides",
              "base_lr", "weight_decay")
RUN_KEYS = ("train_iter", "train_epoch", "warmup_ratio")   # what LiBai's trainer derives the run and its warmup from
#: what gives the iterations per epoch of a run in train_epoch, which LiBai reads from the dataset
GIVE_ITERATIONS = ("give them as build(..., steps_per_epoch=), or the run's length as --steps N "
                   "(build(..., total_steps=N))")
TRAINER = {"train_micro_batch_size": "batch size", "global_batch_size": "batch size", "num_accumulation_steps":
           "gradient accumulation", "amp": "mixed precision", "output_dir": "output", "checkpointer": "checkpoints",
           "evaluation": "evaluation", "dist": "parallelism", "zero_optimization": "ZeRO", "log_period": "logging",
           "seed": "seeding", "start_iter": "resuming", "load_weight": "resuming"}


def _target(value: Any) -> str | None:
    return value.get("_target_") if isinstance(value, Mapping) else None


def _name(target: Any) -> str:
    return str(target).rsplit(".", 1)[-1]


def _not_read(value: Any, path: str, errors: Collector) -> bool:
    from optreg.dialects.oneflow.libai.lazy import NotRead

    if isinstance(value, NotRead):
        errors.add(path, f"not read: {value}", value.suggestion)
        return True
    if isinstance(value, Mapping):
        return any([_not_read(v, join_path(path, str(k)), errors) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return any([_not_read(v, join_path(path, i), errors) for i, v in enumerate(value)])
    return False


def _unbound_target(value: Any, path: str, fix: Any, errors: Collector, names: tuple[str, ...] = ()) -> bool:
    """Whether `value` is a LazyCall whose target optreg does not read: the error at `path` says why in full (a
    name the file neither imports nor binds: `LazyCall(WarmupCosineLR)` without its import), and for such a name
    `fix(name)`, the import LiBai's own configs write (did you mean one of `names`, when it is none)."""
    from optreg.dialects.oneflow.libai.lazy import NotRead, Unbound

    target = _target(value)
    if not isinstance(target, NotRead):
        return False
    unbound = isinstance(target, Unbound)
    errors.add(path, f"LazyCall's target is not read: {target}" + (f"; {fix(target.name)}" if unbound else ""),
               closest(target.name, names) if unbound and target.name not in names else None)
    return True


def _optimizer_import(name: str) -> str:
    """How LiBai's configs (configs/common/optim.py) name a oneflow.optim class."""
    return f"LiBai's configs write `import oneflow as flow` and LazyCall(flow.optim.{name})"


def _scheduler_import(name: str) -> str:
    """How LiBai's configs (configs/common/train.py) import a scheduler."""
    if name in SCHEDULERS:
        return f"import it as LiBai's configs do: from libai.scheduler import {name}"
    return f"LiBai's configs import their scheduler from libai.scheduler ({', '.join(SCHEDULERS)})"


class LiBaiFormat:
    """A LiBai config: `optim` (LazyCall of a oneflow.optim class) and `train` (train_iter, scheduler)."""

    name = "libai"
    doc = "LiBai (OneFlow's model suite) LazyConfig: optim = LazyCall(flow.optim.X)(...), train.scheduler"
    signature = "optim._target_"
    keys = ("optim", "train")

    def claims(self, data: Mapping[str, Any]) -> bool:
        from optreg.config.formats import has

        return has(data, "optim._target_")

    @property
    def choices(self) -> dict[str, Choice]:
        """The key that chooses the optimizer: optim's LazyCall target, a oneflow.optim class's path."""
        return {"optimizer": Choice(PATHS["optimizer.name"], optimizer_target)}

    def sections(self, data: Mapping[str, Any]) -> list[Any]:
        return [k for k in SECTIONS if k in data]

    def read_python(self, text: str, name: str, path: Any) -> tuple[Any, Any] | None:
        """A LiBai LazyConfig file -> ({"optim":, "train":}, its positions); None when it neither uses LazyCall nor
        imports from libai."""
        import ast

        from optreg.dialects.oneflow.libai.lazy import Marks, Reader, parse

        tree = parse(text, name)
        if not any(isinstance(n, ast.Name) and n.id == "LazyCall" or isinstance(n, ast.ImportFrom) and (
                (n.module or "").split(".")[0] == "libai" or any(a.name == "LazyCall" for a in n.names))
                for n in ast.walk(tree)):
            return None   # not a LiBai LazyConfig: no LazyCall, nothing from libai
        reader = Reader(SECTIONS)
        reader.marks = Marks(name)
        file = Path(path) if path is not None else Path(name)
        module = reader.read(text, file.resolve() if path is not None else file, name)
        data = {k: module.env[k] for k in SECTIONS if k in module.env}
        errors = Collector()
        if "optim" not in data:
            errors.add("optim", "required: a LiBai config binds optim (LazyCall(flow.optim.X)(...))")
        unread = {key for key, value in data.items()   # graph: read where the run needs it
                  if not isinstance(value, Mapping) and key != "graph" and _not_read(value, key, errors)}
        if errors:   # the file is not read further (nor overridden), but the other sections' problems are said too
            _read_beside(self, data, unread | ({"optim"} - set(data)), errors, reader.marks)
            raise ConfigError(errors.items).located(reader.marks)
        return data, reader.marks

    def read(self, data: Mapping[str, Any], source: Any = None) -> Any:
        """The translation (see the module doc). With train_epoch the run needs the dataset's iterations per
        epoch (`build(steps_per_epoch=)`), so the scheduler is translated when the experiment is planned."""
        from functools import partial

        from optreg.config.run import RunLength
        from optreg.dialects.oneflow.libai.groups import for_model, nominal_notes, plan_libai

        errors = Collector()
        report: list[KeyUse] = []
        libai_train = data.get("train") or {}
        if not isinstance(libai_train, Mapping):
            errors.add("train", f"expected a mapping, got {show(libai_train)}")
            libai_train = {}
        length = _run_length(libai_train, report, errors)
        accumulation = _accumulation(libai_train, data.get("graph"), report, errors)
        grouping: dict[str, Any] = {}
        optimizer = _optimizer(data.get("optim"), grouping, report, errors)
        if optimizer:
            _group_options(optimizer, grouping, errors)
        # a run length in error: the scheduler is checked against a nominal run, its own problems said beside
        iters, epochs = length or (NOMINAL_RUN, 0)
        scheduler = _scheduler(libai_train, iters, report, errors, accumulation) if iters and not epochs else None
        own: dict[str, Any] = {"dialect": "oneflow", "optimizer": optimizer}
        if scheduler is not None:
            own["scheduler"] = scheduler
        if accumulation > 1:
            own["train"] = {"accumulation_steps": accumulation}
        experiment = read_translated(own, source, self.name, PATHS, report, errors=errors, beside=True,
                                     sections=("train.scheduler", "optim.params"), units=_units(accumulation))
        steps = (iters * accumulation, "train.train_iter") if iters and not epochs else None
        deferred = dict(libai_train) if epochs else None
        run = (deferred, iters, epochs, accumulation)
        planner = partial(plan_libai, epochs=run, **grouping)
        planner.keeps = ("optim.params (get_default_optimizer_params' groups)",)   # optreg convert refuses, or
        planner.for_model = partial(for_model, epochs=run, **grouping)   # writes --model's
        planner.nominal_notes = partial(nominal_notes, epochs=run)   # what validate warns of without the model
        return dataclasses.replace(experiment, source=source, report=report, format_steps=steps, planner=planner,
                                   run=RunLength(steps[0], None, steps[1], accumulation) if steps
                                   else RunLength(accumulation=accumulation))


def _units(accumulation: int) -> dict[str, Unit]:
    """The unit of the keys that count iterations (train_iter): `accumulation` steps each (eager mode's
    micro-batches, as `_scheduler` sizes the schedule; 1 in graph mode), in which a length is advised for them."""
    return {"train.train_iter": Unit(accumulation, "train.num_accumulation_steps")}


def _read_beside(libai: LiBaiFormat, data: Mapping[str, Any], missing: set, errors: Collector, marks: Any) -> None:
    """The problems of a LazyConfig's sections beside those it binds to nothing read (`missing`: `optim = f()`, no
    optim), added to `errors` (every problem at once)."""
    try:
        libai.read({k: v for k, v in data.items() if k not in missing}, marks)
    except ConfigError as exc:
        errors.extend([e for e in exc.errors if e.path.split(".")[0] not in missing])


def schedule_for_run(train: Mapping[str, Any], iters: int, epochs: int, per_epoch: int | None,
                     accumulation: int = 1, steps: int | None = None) -> dict | None:
    """The scheduler section of a config with train_epoch, for a dataset of `per_epoch` iterations per epoch:
    LiBai's run is max(train_epoch × per_epoch, train_iter) (× `accumulation` micro-batches in eager mode). Without
    them, the run's length in steps (`steps`: --steps, build(total_steps=)) stands for train_epoch × per_epoch × A:
    max(ceil(steps / A), train_iter) iterations. That is LiBai's own rounding (main, 2023, commit 9dcbe3b2 of the
    corpus: DefaultTrainer.auto_scale_hyperparams): train_iter = max(ceil(len(dataset) · train_epoch /
    global_batch_size), train_iter), a global batch being A micro-batches, so a last partial one is an iteration;
    then max_iter = A × train_iter and warmup_iter = A × ceil(train_iter · warmup_ratio) (`_scheduler`)."""
    if per_epoch is None and steps is None:
        raise ConfigError(f"train_epoch {epochs} × the dataset's iterations per epoch, which LiBai reads from the "
                          f"dataset: {GIVE_ITERATIONS}", "train.train_epoch")
    errors = Collector()
    epoch_iters = epochs * per_epoch if per_epoch is not None else -(-steps // accumulation)
    scheduler = _scheduler(train, max(epoch_iters, iters), [], errors, accumulation)
    errors.raise_if_any()
    return scheduler


#: optreg's own form's paths -> the LiBai config's (the longest prefix wins); the schedule a warmup wraps
#: (`scheduler.scheduler`) takes its arguments from the same call as the warmup (SCHEDULERS: under their own names)
PATHS = {"scheduler.name": "train.scheduler", "scheduler": "train.scheduler", "optimizer.name": "optim._target_",
         "scheduler.scheduler.name": "train.scheduler", "scheduler.scheduler": "train.scheduler",
         **{f"scheduler.scheduler.{key}": "train.train_iter" for key in LENGTH.values()},
         **{f"scheduler.{key}": "train.train_iter" for key in LENGTH.values()},
         "optimizer": "optim", "train.accumulation_steps": "train.num_accumulation_steps"}


def optimizer_target(name: str) -> str | None:
    """The `optim._target_` of optreg's optimizer `name` (`SGD` -> `oneflow.optim.SGD`, which `_optimizer` reads as
    oneflow.SGD); None when OneFlow has no optimizer of that name."""
    from optreg.core.entry import OPTIMIZER
    from optreg.core.registry import REGISTRY

    entry = REGISTRY.find(OPTIMIZER, name, "oneflow")
    return f"oneflow.optim.{entry.name}" if entry is not None else None


def _int(value: Any, path: str, errors: Collector, low: int = 0) -> int | None:
    if (wrong := number_message(value, low, integer=True)) is not None:
        errors.add(path, wrong)
        return None
    return value


def _run_length(train: Mapping[str, Any], report: list, errors: Collector) -> tuple[int, int] | None:
    """(train_iter, train_epoch): LiBai's run is max(ceil(len(dataset)·train_epoch/global_batch), train_iter)
    (DefaultTrainer.auto_scale_hyperparams)."""
    if _not_read({k: train.get(k) for k in RUN_KEYS}, "train", errors):
        return None
    iters = _int(train.get("train_iter", 0), "train.train_iter", errors)
    epochs = _int(train.get("train_epoch", 0), "train.train_epoch", errors)
    if iters is None or epochs is None:
        return None
    for key in train:
        if key in (*RUN_KEYS, "scheduler"):
            why = "the run length" if key != "scheduler" else ""
            if key == "train_epoch" and epochs:
                report.append(KeyUse("train.train_epoch", "approximate", "train_epoch × build(steps_per_epoch=): "
                                     "LiBai rounds len(dataset) · train_epoch / global_batch_size up"))
                continue
            report.append(KeyUse(join_path("train", key), "exact", why))
        elif key == "steps_per_epoch":   # optreg's own form's key (train.steps_per_epoch=N), in LiBai's train
            errors.add("train.steps_per_epoch", f"LiBai's train has no steps_per_epoch: LiBai reads the iterations per "
                                                f"epoch from the dataset; {GIVE_ITERATIONS}")
        else:
            report.append(KeyUse(join_path("train", key), "trainer", TRAINER.get(key, "LiBai's trainer")))
    near = misspelt(train, RUN_KEYS, TRAINER)
    if near is not None:   # `train.train_itr = 100`: LiBai's trainer passes over it and runs train.py's train_iter
        errors.add(join_path("train", near[0]), "not a key LiBai's trainer reads, which runs without it", near[1])
        return None
    if iters < 1 and not epochs:
        errors.add("train.train_iter", "required: the run length (train_iter >= 1, or train_epoch)")
        return None
    return iters, epochs


def _accumulation(train: Mapping[str, Any], graph: Any, report: list, errors: Collector) -> int:
    """The micro-batches per scheduler-counted step: train.num_accumulation_steps in eager mode (`graph.enabled`
    False), else 1 (graph mode accumulates inside one iteration). None is derived as LiBai's _check_batch_size
    does: global_batch_size / (train_micro_batch_size × data-parallel size) with both, else 1."""
    given = train.get("num_accumulation_steps")
    batches = [train.get(k) for k in ("global_batch_size", "train_micro_batch_size")]
    derived = None not in batches and batches[0] != batches[1]   # depends on the data-parallel size
    accumulation = 1 if given in (None, 1) and not derived else _eager_accumulation(given, batches, graph, errors)
    if isinstance(graph, Mapping):
        for key in graph:
            used = key == "enabled" and accumulation > 1
            report.append(KeyUse(join_path("graph", key), "exact" if used else "trainer",
                                 "eager: the scheduler steps on every micro-batch" if used else "graph compilation"))
    if accumulation > 1:
        report[:] = [use for use in report if use.path != "train.num_accumulation_steps"]
        report.append(KeyUse("train.num_accumulation_steps", "exact", "micro-batches per optimizer step (eager)"))
    return accumulation


def _eager_accumulation(given: Any, batches: list, graph: Any, errors: Collector) -> int:
    """`_accumulation` where the file accumulates: A in eager mode, 1 in graph mode."""
    from optreg.dialects.oneflow.libai.lazy import NotRead

    if isinstance(graph, NotRead):
        errors.add("graph", f"not read: {graph}; with num_accumulation_steps, eager mode (graph.enabled = False) "
                            f"steps the scheduler on every micro-batch: give the graph config")
        return 1
    enabled = graph.get("enabled", True) if isinstance(graph, Mapping) else True
    if enabled is True:
        return 1
    if (wrong := bool_message(enabled)) is not None:
        errors.add("graph.enabled", wrong)
        return 1
    if given is None:
        errors.add("train.num_accumulation_steps", f"eager mode derives it from global_batch_size / "
                                                   f"(train_micro_batch_size × the data-parallel size) = "
                                                   f"{batches[0]} / ({batches[1]} × devices): give it")
        return 1
    if _int(given, "train.num_accumulation_steps", errors, low=1) is None:
        return 1
    return given


def _optimizer(optim: Any, grouping: dict, report: list, errors: Collector) -> dict[str, Any] | None:
    """`optim` -> optreg's optimizer section in the oneflow dialect; `grouping` gets get_default_optimizer_params'
    weight_decay_norm, weight_decay_bias and overrides."""
    target = _target(optim)
    if target is None:
        errors.add("optim", f"expected LazyCall(flow.optim.X)(...), got {show(optim)}")
        return None
    if _unbound_target(optim, "optim", _optimizer_import, errors) or \
            _not_read({k: v for k, v in optim.items() if k != "params"}, "optim", errors):
        return None
    if not str(target).startswith("oneflow.optim."):
        errors.add("optim._target_", f"LiBai's optimizer is a oneflow.optim class; {target} is not one "
                                     f"(optreg builds oneflow.optim's)")
        return None
    section: dict[str, Any] = {"name": _name(target), "dialect": "oneflow"}
    report.append(KeyUse("optim._target_", "exact", f"oneflow.{_name(target)}"))
    for key, value in optim.items():
        if key in ("_target_", "params"):
            continue
        section[key] = value
        report.append(KeyUse(join_path("optim", key), "exact"))
    params = optim.get("params")
    if params is not None:   # a problem here leaves the section's options checked (every problem at once)
        if _not_read(params, "optim.params", errors):
            return section
        if _target(params) is None or _name(_target(params)) != GROUPING:
            errors.add("optim.params._target_" if _target(params) else "optim.params",
                       f"LiBai's parameters come from LazyCall({GROUPING})(...); got {show(_target(params) or params)}"
                       f" (a project's own grouping function is code optreg does not read)")
            return section
        group = {k: v for k, v in params.items() if k != "_target_"}
        unknown = [k for k in group if k not in GROUP_KEYS and k != "model"]
        for key in unknown:
            errors.add(join_path("optim.params", key), f"not an argument of {GROUPING}",
                       closest(key, list(GROUP_KEYS)))
        if group.get("clip_grad_max_norm") is not None and group.get("clip_grad_norm_type") is not None:
            grouping["clip"] = _clip(group, errors)
        for key in ("base_lr", "weight_decay"):
            if group.get(key) is not None:
                section["lr" if key == "base_lr" else key] = group[key]
        grouping.update({k: group.get(k) for k in ("weight_decay_norm", "weight_decay_bias")})
        grouping["overrides"] = _overrides(group.get("overrides"), errors)
        for key in group:
            if key in GROUP_KEYS:
                report.append(KeyUse(join_path("optim.params", key), "exact",
                                     "per-group clip_grad (OneFlow's optimizer.clip_grad())" if "clip" in key else ""))
    return section


def _overrides(raw: Any, errors: Collector) -> dict[str, Any] | None:
    """get_default_optimizer_params' `overrides`: a parameter's own name (`bias`, `pos_embed`) -> the options of its
    group (LiBai updates each parameter's options with them); None when absent or wrong (the error at its key)."""
    path = "optim.params.overrides"
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        errors.add(path, f"expected a mapping of parameter names to options, such as {{'pos_embed': "
                         f"{{'weight_decay': 0.0}}}}, got {show(raw)}")
        return None
    wrong = [(k, v) for k, v in raw.items() if not isinstance(k, str) or not isinstance(v, Mapping)]
    for key, value in wrong:
        errors.add(join_path(path, key_text(key)), f"expected a parameter's own name with the options of its group, "
                                                  f"such as 'pos_embed': {{'weight_decay': 0.0}}, got {show(key)}: "
                                                  f"{show(value)}")
    return None if wrong else dict(raw)


def _group_options(section: Mapping[str, Any], grouping: Mapping[str, Any], errors: Collector) -> None:
    """The options get_default_optimizer_params gives groups (weight_decay_norm's and weight_decay_bias's weight
    decay, each overrides key's options), checked as param_groups rules' options are before any model, at the keys
    that give them: the groups are made only for a model, as rules the file does not have (`optim.param_groups[2]`,
    located at `optim`)."""
    from optreg.config.experiment import check_optimizer_section
    from optreg.core.composite import ROUTE_KEY
    from optreg.core.groups import RULE_KEYS, settings_table

    given = [(join_path("optim.params", key), {"weight_decay": grouping[key]}, True)
             for key in ("weight_decay_norm", "weight_decay_bias") if grouping.get(key) is not None]
    given += [(join_path("optim.params.overrides", key_text(key)), dict(options), False)
              for key, options in (grouping.get("overrides") or {}).items()]
    rule_only = {*RULE_KEYS, *settings_table(), ROUTE_KEY}   # optreg's rule keys, which LiBai's group dict is not
    for where, options, _ in given:
        for key in sorted(rule_only & set(options)):
            errors.add(join_path(where, key), f"unknown option of {_qualname(section)}: LiBai puts it into the "
                                              f"group dict, where OneFlow does not read it")
            del options[key]
    if not given:
        return
    found = Collector()
    check_optimizer_section({**section, "param_groups": [{"params": "*", **options} for _, options, _ in given]},
                             "oneflow", found, "optimizer")
    for item in found.items:   # the section's own problems are the own form's to say (read_translated)
        for i, (where, _, keyword) in enumerate(given):
            rule = join_path("optimizer.param_groups", i)
            if item.path == rule or item.path.startswith(rule + "."):
                path = where if keyword else where + item.path[len(rule):]
                errors.items.append(dataclasses.replace(item, path=path))


def _qualname(section: Mapping[str, Any]) -> str:
    """The registered name of the optimizer section's class (`oneflow.AdamW`), or the name as written."""
    from optreg.core.entry import OPTIMIZER
    from optreg.core.registry import REGISTRY

    try:
        return REGISTRY.lookup(OPTIMIZER, section.get("name"), None, default="oneflow").qualname
    except ConfigError:   # said by the own form's reading
        return str(section.get("name"))


def _clip(group: Mapping[str, Any], errors: Collector) -> dict[str, Any]:
    """get_default_optimizer_params' clip_grad_max_norm / clip_grad_norm_type, every group's (OneFlow's per-group
    keys), checked here as a param_groups rule checks them (ONEFLOW_GROUP_KEYS), once and at the keyword: the
    groups are made only for a model, one rule per set of options."""
    from optreg.core.build import group_key
    from optreg.core.options import ONEFLOW_GROUP_KEYS

    clip = {}
    for key in ("clip_grad_max_norm", "clip_grad_norm_type"):
        try:
            clip[key] = group_key(ONEFLOW_GROUP_KEYS[key], group[key], join_path("optim.params", key))
        except ConfigError as exc:
            errors.extend(exc)
    return clip


def _scheduler(train: Mapping[str, Any], iters: int, report: list, errors: Collector,
               accumulation: int = 1) -> dict[str, Any] | None:
    """`train.scheduler` -> OneFlow's WarmupLR around the scheduler LiBai's function builds, for a run of `iters`
    iterations; in eager mode with `accumulation` A micro-batches each, max_iter = A × iters and warmup_iter =
    A × ceil(iters × warmup_ratio), as auto_scale_hyperparams scales them."""
    raw = train.get("scheduler")
    if raw is None:
        return None
    if _unbound_target(raw, "train.scheduler", _scheduler_import, errors, tuple(SCHEDULERS)):
        return None
    target = _target(raw)
    if target is None or _name(target) not in SCHEDULERS:
        errors.add("train.scheduler", f"expected LazyCall(<LiBai scheduler>)(...) of {', '.join(SCHEDULERS)}, got "
                                      f"{show(target or raw)}", closest(_name(target), list(SCHEDULERS))
                   if target else None)
        return None
    if _not_read(raw, "train.scheduler", errors):
        return None
    name, mapping, defaults = SCHEDULERS[_name(target)]
    ratio = train.get("warmup_ratio", 0) or 0
    if (wrong := number_message(ratio, 0) or (None if ratio < 1 else bound_message("<", 1, ratio))) is not None:
        errors.add("train.warmup_ratio", wrong)
        ratio = 1 / iters   # a nominal warmup: the scheduler's and its warmup's arguments are still checked
    warmup, steps = math.ceil(iters * ratio) * accumulation, iters * accumulation
    args = {k: v for k, v in raw.items() if k != "_target_"}
    for key in ("max_iter", "warmup_iter"):
        if key in args:   # DefaultTrainer overwrites them
            report.append(KeyUse(join_path("train.scheduler", key), "exact", "set by LiBai's trainer from the run"))
            args.pop(key)
    inner: dict[str, Any] = {"name": name}
    for key in list(args):
        if key in mapping:
            inner[mapping[key]] = args.pop(key)
            report.append(KeyUse(join_path("train.scheduler", key), "exact"))
    for key, value in defaults.items():
        inner.setdefault(mapping[key], value)
    if name in LENGTH:
        inner[LENGTH[name]] = steps
    if name == "MultiStepLR" and "milestones" in inner:
        ms = inner["milestones"]
        if not isinstance(ms, (list, tuple)) or not all(isinstance(m, (int, float)) and 0 <= m < 1 for m in ms):
            errors.add("train.scheduler.milestones", f"LiBai reads milestones as ratios of the run in [0, 1), got "
                                                     f"{show(ms)}")
            return None
        inner["milestones"] = [int(m * steps) for m in ms]
    warm = {k: args.pop(k) for k in WARMUP_KEYS if k in args}
    for key in args:
        errors.add(join_path("train.scheduler", key), f"not an argument of LiBai's {_name(target)}",
                   closest(key, [*mapping, *WARMUP_KEYS, "max_iter", "warmup_iter"]))
    if "warmup_factor" not in warm:
        errors.add("train.scheduler.warmup_factor", f"required: LiBai's {_name(target)} takes warmup_factor")
        return None
    for key in warm:
        report.append(KeyUse(join_path("train.scheduler", key), "exact"))
    if warmup == 0:   # LiBai returns the scheduler alone
        return inner
    return {"name": "WarmupLR", "scheduler": inner, "warmup_factor": warm["warmup_factor"], "warmup_iters": warmup,
            "warmup_method": warm.get("warmup_method", "linear")}


FORMAT = LiBaiFormat()

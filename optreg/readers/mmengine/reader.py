"""Reading an MMEngine config into optreg's experiment, and planning it against a model (see the package doc)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

from optreg.config.formats import KeyUse
from optreg.errors import Collector, ConfigError, closest, join_path, key_text, show
from optreg.readers.mmengine import LOOP_TYPES, NEAR_MISS, SECTIONS, TRAINER_KEYS, WRAPPER_KEYS, WRAPPERS
from optreg.readers.mmengine import params as paramwise
from optreg.readers.mmengine.scheduler import Entry, native_spec, read_entry, windows

PARAMWISE = ("planned per parameter against the model's module types, in MMEngine's order (one group per "
             "parameter), by the mmengine reader's planner: optreg's own form names no module types in that order")
SCHEDULES = ("run as MMEngine's runner runs the list (each entry on its [begin, end) window, the entries chained), "
             "by the mmengine reader's planner: optreg's own form has no such windows")
LOOP_TRAINER = ("val_interval", "val_begin", "dynamic_intervals")
#: optreg's own paths -> the MMEngine config's (a translated experiment's errors)
#: optreg's own form's paths -> the MMEngine config's (the longest prefix wins)
OWN_PATHS = {"optimizer.name": "optim_wrapper.optimizer.type", "optimizer": "optim_wrapper.optimizer",
             "clip_grad": "optim_wrapper.clip_grad"}


@dataclass
class Planner:
    """The part of an MMEngine config only the model and the run decide: paramwise_cfg's rules (module types) and
    the param_scheduler windows (steps per epoch, the train loop's default end). Called as `planner(experiment,
    model)` (Experiment.planner)."""

    #: it holds what optreg's own form cannot say (`optreg convert` refuses to write the file without it)
    keeps = True

    paramwise: dict[str, Any] | None
    entries: list[Entry] = field(default_factory=list)
    loop: tuple[int | None, int | None, bool | None] = (None, None, None)   # max_epochs, max_iters, by_epoch loop

    def loop_end(self, steps_per_epoch: int | None) -> tuple[int | None, int | None]:
        """The default `end` of an epoch-based and of an iteration-based entry (MMEngine's runner: the train loop's
        max_epochs / max_iters; an iteration loop counts as one epoch)."""
        epochs, iters, by_epoch = self.loop
        if by_epoch is None:
            return None, None
        if by_epoch:
            return epochs, epochs * steps_per_epoch if steps_per_epoch else None
        return 1, iters

    def __call__(self, experiment: Any, model: Any) -> Any:
        from optreg.config.experiment import Plan
        from optreg.core.build import plan_optimizer

        errors = Collector()
        name = experiment.optimizer["name"]
        options = {k: v for k, v in experiment.optimizer.items() if k != "name"}
        rules, reasons = (self.rules(model, options, errors) if self.paramwise else (None, {})) or (None, {})
        opt_plan = None
        if not errors:
            try:
                opt_plan = plan_optimizer(name, model, dialect="torch", param_groups=rules, options=options,
                                          path="optim_wrapper.optimizer")
            except ConfigError as exc:
                errors.extend(exc)
        for group in opt_plan.groups if opt_plan is not None else []:   # named by the settings that made it
            group.rule = reasons.get(group.names[0], group.rule) if group.names else group.rule
        scheduler = self.schedulers(opt_plan, experiment.run, errors) if opt_plan is not None else None
        errors.raise_if_any()
        return Plan(opt_plan, scheduler, list(experiment.notes))

    def for_model(self, experiment: Any, model: Any) -> Any:
        """The experiment in optreg's own form for this model (`optreg convert --model`): paramwise_cfg's rules
        over the model's parameters, and the param_scheduler list where optreg's own scheduler says it (one entry
        over the whole run: `native_spec`); windows it cannot say are a ConfigError at param_scheduler."""
        errors = Collector()
        options = {k: v for k, v in experiment.optimizer.items() if k != "name"}
        rules, _ = (self.rules(model, options, errors) if self.paramwise else (None, {})) or (None, {})
        native = native_spec(self.entries, self.loop) if self.entries else None
        if self.entries and native is None:
            errors.add("param_scheduler", "optreg's own form has no MMEngine windows (entries on their own "
                                          "[begin, end), chained, or converted to iterations): only one lr entry "
                                          "over the whole run converts; use the file as it is")
        errors.raise_if_any()
        section = {**experiment.optimizer, **({"param_groups": rules} if rules else {})}
        return dataclasses.replace(experiment, optimizer=section, scheduler=native, planner=None,
                                   paths={**OWN_PATHS, **({"scheduler": self.entries[0].path} if self.entries else {})})

    def rules(self, model: Any, options: Mapping[str, Any],
              errors: Collector) -> tuple[list[dict[str, Any]], dict[str, str]] | None:
        import torch

        if not isinstance(model, torch.nn.Module):
            errors.add("optim_wrapper.paramwise_cfg", "MMEngine's per-parameter settings read the model's module "
                                                      "types: build with the nn.Module, not its parameters")
            return None
        return paramwise.rules(model, self.paramwise, options.get("lr"), options.get("weight_decay"),
                               "optim_wrapper.paramwise_cfg", errors)

    def schedulers(self, opt_plan: Any, run: Any, errors: Collector) -> Any:
        """One plan per group key the entries drive (lr, momentum, weight_decay), each checked against the groups."""
        from optreg.core.build import SchedulerPlan, check_schedule
        from optreg.readers.mmengine.schedules import ParamSchedulers

        if not self.entries:
            return None
        found = windows(self.entries, run.steps_per_epoch, self.loop_end(run.steps_per_epoch), errors)
        if found is None:
            return None
        plans = []
        for key in dict.fromkeys(e.key for e in self.entries):
            mine = tuple(w for w, e in zip(found, self.entries) if e.key == key)
            target = _group_key(key, opt_plan)
            path = next(e.path for e in self.entries if e.key == key)
            if target is None:
                errors.add(path, f"the optimizer ({opt_plan.entry.qualname}) has neither momentum nor betas for a "
                                 f"momentum schedule")
                continue
            plan = SchedulerPlan(None, {}, key=target, schedule=ParamSchedulers(mine, run.steps_per_epoch or 1))
            bases, problem = opt_plan.base_values(target)
            if problem:
                errors.add(path, problem)
                continue
            errors.extend(check_schedule(plan, bases, None, "param_scheduler"))
            plans.append(plan)
        if errors or not plans:
            return None
        return plans[0] if len(plans) == 1 else Together(plans)


def _group_key(key: str, opt_plan: Any) -> str | None:
    """The optimizer group key an MMEngine key drives: momentum is `betas[0]` in an Adam-style optimizer (MMEngine's
    MomentumSchedulerMixin)."""
    if key != "momentum":
        return key
    names = set(opt_plan.defaults)
    return "momentum" if "momentum" in names else "betas[0]" if "betas" in names else None


class Together:
    """Scheduler plans of different group keys (MMEngine's lr and momentum schedules), built and stepped together."""

    def __init__(self, plans: list[Any]):
        self.plans = plans
        self.key = plans[0].key
        self.schedule = plans[0].schedule

    def build(self, optimizer: Any) -> Any:
        from optreg.dialects.cerebras.modelzoo import Schedulers

        return Schedulers([p.build(optimizer) for p in self.plans])


# ---------------------------------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------------------------------
def _optimizer(raw: Any, errors: Collector, report: list[KeyUse]) -> dict[str, Any]:
    """optim_wrapper.optimizer -> optreg's optimizer section (torch dialect), checked as optreg checks its own."""
    from optreg.config.experiment import _check_optimizer_section

    path = "optim_wrapper.optimizer"
    if not isinstance(raw, Mapping) or not isinstance(raw.get("type"), str):
        errors.add(join_path(path, "type") if isinstance(raw, Mapping) else path,
                   f"expected the optimizer: {{type: SGD | AdamW | ..., lr: ...}}, got {show(raw)}")
        return {}
    section = {"name": raw["type"], **{k: v for k, v in raw.items() if k != "type"}}
    own = Collector()
    _check_optimizer_section(section, "torch", own, path)
    for item in own.items:   # optreg's `name` is MMEngine's `type`
        where = join_path(path, "type") if item.path == join_path(path, "name") else item.path
        errors.items.append(dataclasses.replace(item, path=where))
    report.extend(KeyUse(join_path(path, key_text(k)), "exact") for k in raw)
    return section


def _clip(raw: Any, errors: Collector, report: list[KeyUse]) -> Any:
    """optim_wrapper.clip_grad (MMEngine: {max_norm, norm_type, error_if_nonfinite} for clip_grad_norm_, or
    {type: value, clip_value}) -> optreg's ClipGrad."""
    from optreg.config.run import read_clip

    path = "optim_wrapper.clip_grad"
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        errors.add(path, f"expected a mapping such as {{max_norm: 35, norm_type: 2}}, got {show(raw)}")
        return None
    kind = raw.get("type", "norm")
    if kind not in ("norm", "value"):
        errors.add(join_path(path, "type"), f"must be 'norm' or 'value', got {show(kind)}")
        return None
    rest = {k: v for k, v in raw.items() if k != "type"}
    if kind == "value":
        if set(rest) - {"clip_value"}:
            errors.add(path, f"clipping by value takes clip_value only, got {', '.join(map(str, rest))}")
            return None
        rest = {"max_value": rest.get("clip_value")}
    report.extend(KeyUse(join_path(path, key_text(k)), "exact") for k in raw)
    return read_clip(rest, errors, path)


def _wrapper(raw: Any, errors: Collector, report: list[KeyUse]) -> tuple[dict, dict | None, Any]:
    path = "optim_wrapper"
    if not isinstance(raw, Mapping):
        errors.add(path, f"expected a mapping with optimizer:, got {show(raw)}")
        return {}, None, None
    for key in raw:
        if key not in WRAPPER_KEYS:
            errors.add(join_path(path, key_text(key)), "unknown key of MMEngine's optim_wrapper",
                       closest(key, list(WRAPPER_KEYS)) if isinstance(key, str) else None)
    kind = raw.get("type", "OptimWrapper")
    if kind not in WRAPPERS:
        errors.add(join_path(path, "type"), f"{show(kind)}: optreg reads MMEngine's {' and '.join(WRAPPERS)} (an "
                                            f"optimizer with a training loop's settings around it); "
                                            f"OptimWrapperDict and the Apex / DeepSpeed wrappers are not supported")
    elif "type" in raw:
        report.append(KeyUse(join_path(path, "type"), "exact" if kind == "OptimWrapper" else "trainer",
                             "" if kind == "OptimWrapper" else "mixed precision: the training loop's business"))
    constructor = raw.get("constructor", "DefaultOptimWrapperConstructor")
    if constructor != "DefaultOptimWrapperConstructor":
        errors.add(join_path(path, "constructor"), f"{show(constructor)}: a library's own constructor (layer-wise "
                                                   f"decay, ...) is its code, not a config; optreg reads MMEngine's "
                                                   f"DefaultOptimWrapperConstructor only")
    elif "constructor" in raw:
        report.append(KeyUse(join_path(path, "constructor"), "exact"))
    for key in TRAINER_KEYS:
        if key in raw:
            report.append(KeyUse(join_path(path, key), "trainer", TRAINER_KEYS[key]))
    if "accumulative_counts" in raw:
        count = raw["accumulative_counts"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            errors.add(join_path(path, "accumulative_counts"), f"must be an integer >= 1, got {show(count)}")
    if "optimizer" not in raw:
        errors.add(join_path(path, "optimizer"), "required: the optimizer ({type: SGD, lr: 0.01, ...})")
        optimizer = {}
    else:
        optimizer = _optimizer(raw["optimizer"], errors, report)
    settings = None
    if raw.get("paramwise_cfg"):
        settings = paramwise.check(raw["paramwise_cfg"], join_path(path, "paramwise_cfg"), errors)
        report.extend(KeyUse(join_path(join_path(path, "paramwise_cfg"), key_text(k)), "exact", PARAMWISE)
                      for k in (raw["paramwise_cfg"] if isinstance(raw["paramwise_cfg"], Mapping) else ()))
        if isinstance(optimizer.get("lr"), bool) or not isinstance(optimizer.get("lr"), (int, float)):
            errors.add(join_path(path, "optimizer.lr"), "MMEngine's per-parameter settings multiply the optimizer's "
                                                        "lr: give it")
    elif "paramwise_cfg" in raw:
        report.append(KeyUse(join_path(path, "paramwise_cfg"), "exact", "empty: one group, as MMEngine builds"))
    return optimizer, settings, _clip(raw.get("clip_grad"), errors, report)


def _schedulers(raw: Any, errors: Collector, report: list[KeyUse]) -> list[Entry]:
    if raw is None:
        return []
    items = [raw] if isinstance(raw, Mapping) else raw
    if not isinstance(items, (list, tuple)):
        errors.add("param_scheduler", f"expected a scheduler mapping or a list of them, got {show(raw)}")
        return []
    entries = []
    for i, item in enumerate(items):
        path = join_path("param_scheduler", i) if not isinstance(raw, Mapping) else "param_scheduler"
        entry = read_entry(item, path, errors)
        if entry is not None:
            entries.append(entry)
            report.extend(KeyUse(join_path(path, key_text(k)), "trainer" if k == "verbose" else "exact",
                                 "logging" if k == "verbose" else SCHEDULES if k == "type" else "")
                          for k in item)
    return entries


def _loop(raw: Any, errors: Collector, report: list[KeyUse]) -> tuple[int | None, int | None, bool | None]:
    """train_cfg -> (max_epochs, max_iters, whether the loop counts epochs); (None, None, None) when absent."""
    path = "train_cfg"
    if raw is None:
        return None, None, None
    if not isinstance(raw, Mapping):
        errors.add(path, f"expected a mapping such as {{by_epoch: true, max_epochs: 12}}, got {show(raw)}")
        return None, None, None
    if "type" in raw:
        if raw["type"] not in LOOP_TYPES:
            errors.add(join_path(path, "type"), f"{show(raw['type'])}: optreg reads MMEngine's "
                                                f"{' and '.join(LOOP_TYPES)}", closest(raw["type"], list(LOOP_TYPES))
                       if isinstance(raw["type"], str) else None)
            return None, None, None
        by_epoch = LOOP_TYPES[raw["type"]]
    else:
        by_epoch = raw.get("by_epoch", True)
        if not isinstance(by_epoch, bool):
            errors.add(join_path(path, "by_epoch"), f"must be true or false, got {show(by_epoch)}")
            return None, None, None
    key = "max_epochs" if by_epoch else "max_iters"
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        errors.add(join_path(path, key), f"required by MMEngine's {'epoch' if by_epoch else 'iteration'}-based "
                                         f"train loop: an integer >= 1, got {show(value)}")
        return None, None, None
    for k in raw:
        verdict = "exact" if k in ("type", "by_epoch", key) else "trainer"
        report.append(KeyUse(join_path(path, key_text(k)), verdict, "" if verdict == "exact" else
                             "validation schedule: the training loop's business"))
    return (value, None, True) if by_epoch else (None, value, False)


def _misspelt_sections(data: Mapping[str, Any], errors: Collector) -> None:
    """A top-level key that misspells a section the reader reads (`param_schedulr:`) is an error with a
    did-you-mean: MMEngine would build without it, silently. Other keys are the application's (model, data, hooks)."""
    for key in data:
        near = closest(key, SECTIONS, NEAR_MISS) if isinstance(key, str) and key not in SECTIONS else None
        if near is not None:
            errors.add(key_text(key), f"not a section of MMEngine's config that optreg reads ({', '.join(SECTIONS)}): "
                                      f"a misspelling would leave the {near} section out", near)


def read(data: Mapping[str, Any], source: Any = None) -> Any:
    """An MMEngine config -> Experiment (torch-dialect optimizer, clip_grad, the run; the planner for the rest)."""
    from optreg.config.experiment import Experiment
    from optreg.config.run import read_train, resolve_run

    errors = Collector()
    report: list[KeyUse] = []
    _misspelt_sections(data, errors)
    optimizer, settings, clip = _wrapper(data.get("optim_wrapper"), errors, report)
    entries = _schedulers(data.get("param_scheduler"), errors, report)
    loop = _loop(data.get("train_cfg"), errors, report)
    train = read_train(data, errors)
    if loop[0] is not None and train.epochs is None and train.steps is None:   # a length given (--steps) wins
        train = train.model_copy(update={"epochs": loop[0]})
    elif loop[0] is not None and train.epochs is not None and train.epochs != loop[0]:
        errors.add("train.epochs", f"train_cfg.max_epochs {loop[0]} and train.epochs {train.epochs} disagree")
    steps = (loop[1], "train_cfg.max_iters") if loop[1] is not None else None
    planner = Planner(settings, entries, loop)
    experiment = Experiment(optimizer, None, train, "torch", source, planner=planner, clip=clip, format_steps=steps,
                            run=resolve_run(train, format_steps=steps, errors=errors), report=report)
    if not errors and entries and experiment.run.steps_per_epoch is not None:   # the windows, when E is known
        windows(entries, experiment.run.steps_per_epoch, planner.loop_end(experiment.run.steps_per_epoch), errors)
    if errors:
        raise experiment.locate(ConfigError(errors.items))
    native = native_spec(entries, loop) if entries else None
    if settings is None and (native is not None or not entries):   # optreg's own form says it all
        experiment.scheduler, experiment.planner = native, None   # planned as optreg's own, at the file's paths
        experiment.paths = {**OWN_PATHS, **({"scheduler": entries[0].path} if entries else {})}
        experiment.report = [dataclasses.replace(u, why=f"optreg's own {native['name']}") if native and
                             u.why == SCHEDULES else u for u in report]
    return experiment


# ---------------------------------------------------------------------------------------------------
# .py configs
# ---------------------------------------------------------------------------------------------------
NAMES = ("optim_wrapper", "param_scheduler")


def _names(text: str) -> set[str]:
    """The top-level names a Python config assigns (read with ast; nothing executed)."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    out = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AnnAssign, ast.AugAssign)) else []
        out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


def read_python(text: str, name: str, path: Any) -> tuple[Any, Any] | None:
    """An MMEngine `.py` config -> (its Config as a dict, None), loaded by mmengine's `Config.fromfile` (which
    executes the file, as MMEngine does, with its `_base_` files); None when the file assigns none of optim_wrapper,
    param_scheduler. Without mmengine: a ConfigError."""
    if not set(NAMES) & _names(text):
        return None
    try:
        from mmengine.config import Config
    except ImportError as exc:
        raise ConfigError(f"{name}: an MMEngine .py config is loaded by mmengine's Config.fromfile (which executes "
                          f"it); mmengine cannot be imported here ({exc}): pip install mmengine-lite, or give a "
                          f"JSON / YAML dump of the config (Config.dump)") from None
    from pathlib import Path

    try:
        if path is not None and Path(str(path)).is_file():
            config = Config.fromfile(str(path))
        else:
            config = Config.fromstring(text, ".py")
    except Exception as exc:   # the file's own code failed under mmengine's loader
        raise ConfigError(f"{name}: mmengine's Config.fromfile failed: {type(exc).__name__}: {str(exc)[:200]}") \
            from None
    return config.to_dict(), None


__all__ = ["read", "read_python", "Planner", "Together"]

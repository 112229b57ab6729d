"""The experiment config: `optimizer:`, `scheduler:`, `train:` and an optional top-level `dialect:`.

`load_config` validates everything that can be checked without a model; `build` finishes the checks
against the model's parameter names and then, only if all is well, creates the torch objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, ValidationError

from optreg.errors import Collector, ConfigError, check_input, closest, join_path, key_text, show
from optreg.core.build import (Context, OptimizerPlan, check_schedule, foreign_form, group_options, plan_optimizer,
                                   plan_scheduler, wraps_optimizer)
from optreg.config.yaml_loader import Source, read_yaml
from optreg.core import models
from optreg.core.entry import OPTIMIZER
from optreg.core.groups import Group, check_support, scaled_lr_keys, scaled_options, split_rule, split_settings
from optreg.core.names import NAME_KEYS
from optreg.core.registry import REGISTRY
from optreg.core.types import NonNegInt, PosInt
from optreg.core.validate import option_names, validate_options

TOP_KEYS = ("dialect", "optimizer", "scheduler", "train")
SECTION_KEYS = ("dialect", "param_groups")


class TrainSpec(BaseModel):
    """`train:`: the built-in run of `optreg run` (a small MLP on synthetic regression data)."""

    model_config = ConfigDict(extra="forbid")

    steps: PosInt = 100
    batch_size: PosInt = 32
    seed: NonNegInt = 0
    hidden: PosInt = 32
    depth: PosInt = 2


@dataclass
class Experiment:
    """A validated experiment config: normalised optimizer/scheduler sections and the train settings."""

    optimizer: dict[str, Any]
    scheduler: Any = None
    train: TrainSpec = field(default_factory=TrainSpec)
    dialect: str | None = None
    source: Source | None = None
    modelzoo: Any = None      # a Cerebras Model Zoo config (optreg.dialects.cerebras.modelzoo.Section)

    def locate(self, error: ConfigError) -> ConfigError:
        return error.located(self.source) if self.source else error


def _section(raw: Any, path: str, errors: Collector) -> dict[str, Any] | None:
    if not isinstance(raw, Mapping):
        errors.add(path, f"expected a mapping, got {type(raw).__name__} {show(raw)}")
        return None
    out = dict(raw)
    given = [k for k in NAME_KEYS if k in out]
    for extra in given[1:]:
        errors.add(join_path(path, extra), f"both {given[0]!r} and {extra!r} name the component; keep one")
    if given:
        out["name"] = out.pop(given[0])
        for extra in given[1:]:
            out.pop(extra)
    else:
        errors.add(join_path(path, "name"), "required: the component's name")
    return out


def split_optimizer(section: Mapping[str, Any]) -> tuple[str, str | None, list, dict[str, Any]]:
    """(name, dialect, param_groups rules, options) of a normalised optimizer section."""
    options = {k: v for k, v in section.items() if k not in ("name", *SECTION_KEYS)}
    rules = section.get("param_groups") or []
    return section["name"], section.get("dialect"), list(rules) if isinstance(rules, (list, tuple)) else rules, \
        options


def _check_optimizer_section(section: dict, dialect: str | None, errors: Collector, path: str = "optimizer") -> None:
    """What can be checked without the model: the name, the options (and a wrapped optimizer's)."""
    name, own, rules, options = split_optimizer(section)
    settings, options = split_settings(options, path, errors)   # no_weight_decay, layer_decay
    try:
        entry = REGISTRY.lookup(OPTIMIZER, name, own or dialect, path=join_path(path, "name"))
        if wraps_optimizer(entry):
            inner = _section(options.pop("optimizer", None), join_path(path, "optimizer"), errors)
            if inner is not None and "name" in inner:
                _check_optimizer_section(inner, inner.get("dialect") or entry.dialect, errors,
                                         join_path(path, "optimizer"))
        values = validate_options(entry, options, path=path)
    except ConfigError as exc:
        errors.extend(exc)
        return
    if "param_groups" in section and not isinstance(section["param_groups"], list):
        errors.add(join_path(path, "param_groups"), f"expected a list of rules, got {show(section['param_groups'])}")
        return
    scaled = scaled_options(option_names(entry))
    if not wraps_optimizer(entry):
        check_support(scaled, entry.qualname, [k for k, v in settings.items() if v not in (None, False)], path,
                      errors)
    for i, rule in enumerate(rules if not wraps_optimizer(entry) else []):  # rule options, before any model
        here = join_path(join_path(path, "param_groups"), i)
        if not isinstance(rule, Mapping):
            errors.add(here, f"expected a mapping with params: <glob> and options, got {show(rule)}")
            continue
        keys, rule_options = split_rule(rule, here, errors)   # selectors and multipliers
        check_support(scaled, entry.qualname, keys, here, errors)
        group_options(entry, Group([], [], rule_options, rule=here), values, errors, here)


def _scheduler_spec(raw: Any, path: str, errors: Collector) -> Any:
    if raw is None or isinstance(raw, (list, str)) or foreign_form(raw) is not None:
        return raw
    return _section(raw, path, errors)


def validate_experiment(data: Any, source: Source | None = None) -> Experiment:
    """A raw mapping (from YAML, Hydra or Python) -> Experiment; ConfigError lists every problem."""
    errors = Collector()
    if not isinstance(data, Mapping):
        error = ConfigError(f"an experiment config is a mapping with optimizer:, got {type(data).__name__}")
        raise error.located(source) if source else error
    try:
        check_input(data)
    except ConfigError as exc:
        raise exc.located(source) if source else exc from None
    from optreg.dialects.cerebras import modelzoo

    if modelzoo.is_modelzoo(data):
        return _modelzoo_experiment(data, source)
    from optreg.core.validate import MAX_HINTS

    unknown = [key for key in data if key not in TOP_KEYS]
    for i, key in enumerate(unknown):  # a did-you-mean for the first MAX_HINTS (bounded time for thousands)
        errors.add(key_text(key), f"unknown top-level key; expected {', '.join(TOP_KEYS)}",
                   closest(key, TOP_KEYS) if i < MAX_HINTS else None)
    dialect = data.get("dialect")
    if "optimizer" not in data:
        errors.add("optimizer", "required: the optimizer section (name: and its options)")
        optimizer = None
    else:
        optimizer = _section(data["optimizer"], "optimizer", errors)
    if optimizer is not None and "name" in optimizer:
        _check_optimizer_section(optimizer, dialect, errors)
    scheduler = _scheduler_spec(data.get("scheduler"), "scheduler", errors)
    train = _train(data, errors)
    experiment = Experiment(optimizer or {}, scheduler, train, dialect, source)
    if scheduler is not None:
        # The group count is not known before the model (per-group list lengths are checked by build());
        # the optimizer's group keys are known only when its section is valid.
        keys = _group_keys(optimizer, dialect) if optimizer is not None and not errors else None
        context = Context(1, keys or frozenset(), dialect, known_groups=False, known_options=keys is not None)
        try:
            plan_scheduler(scheduler, context, "scheduler")
        except ConfigError as exc:
            errors.extend(exc)
    if errors:
        raise experiment.locate(ConfigError(errors.items))
    return experiment


def _train(data: Mapping[str, Any], errors: Collector) -> TrainSpec:
    """The `train:` section (defaults when absent); its problems go to `errors` with their paths."""
    try:
        return TrainSpec.model_validate(data.get("train") or {})
    except ValidationError as exc:
        for item in models.pydantic_errors(exc):
            errors.add(join_path("train", item.path), item.message)
        return TrainSpec()


def _modelzoo_experiment(data: Mapping[str, Any], source: Source | None) -> Experiment:
    """A Cerebras Model Zoo config, whole (legacy params file or trainer form): its other sections are Model Zoo's
    own and are not read; `train:` is optreg's run of it (`optreg run`)."""
    from optreg.dialects.cerebras import modelzoo

    errors = Collector()
    section = None
    try:
        section = modelzoo.read(data)
        modelzoo.check(section)
    except ConfigError as exc:
        errors.extend(exc)
    train = _train(data, errors)
    dialect = data.get("dialect", "cerebras")
    if dialect != "cerebras":
        errors.add("dialect", f"a Model Zoo config is read in the cerebras dialect, got {show(dialect)}")
    experiment = Experiment({}, None, train, "cerebras", source, modelzoo=section)
    if errors:
        raise experiment.locate(ConfigError(errors.items))
    return experiment


def _group_keys(section: Mapping[str, Any], dialect: str | None) -> frozenset[str]:
    """The keys the optimizer's param groups will have (what a scheduler may drive)."""
    name, own, _, options = split_optimizer(section)
    entry = REGISTRY.lookup(OPTIMIZER, name, own or dialect)
    if wraps_optimizer(entry):
        return _group_keys(_section(options["optimizer"], "optimizer", Collector()), entry.dialect)
    _, options = split_settings(options, "", Collector())
    return OptimizerPlan(entry, validate_options(entry, options), [], False).group_keys()


def load_config(path_or_text: Any) -> Experiment:
    """Safe-load a YAML experiment config (a path or YAML text) and validate it."""
    data, source = read_yaml(path_or_text)
    return validate_experiment(data, source)


def plans(experiment: Experiment, params: Any):
    """Validate the experiment against the model's parameters: (optimizer plan, scheduler plan or None)."""
    errors = Collector()
    name, own, rules, options = split_optimizer(experiment.optimizer)
    opt_plan = sched_plan = None
    try:
        opt_plan = plan_optimizer(name, params, dialect=own or experiment.dialect, param_groups=rules,
                                  options=options, path="optimizer")
    except ConfigError as exc:
        errors.extend(exc)
    if opt_plan is not None and experiment.scheduler is not None:
        context = Context(len(opt_plan.groups), opt_plan.group_keys(), experiment.dialect,
                          unschedulable=opt_plan.unschedulable())
        try:
            sched_plan = plan_scheduler(experiment.scheduler, context, "scheduler")
        except ConfigError as exc:
            errors.extend(exc)
        if sched_plan is not None:
            # what the schedule checks against the groups' values when it is bound (NeMo's min_lr below every
            # lr, ...) and the values it gives them in the first steps, checked now: a refused config builds
            # nothing, not even the optimizer
            key = sched_plan.key if sched_plan.schedule is not None else "lr"
            scaled = scaled_lr_keys(opt_plan.groups)
            if key == "lr" and scaled and getattr(sched_plan.schedule, "values", None) in ("absolute", "mixed"):
                errors.add("scheduler", f"{sched_plan.name} sets an absolute lr, the same in every group, which "
                                        f"would undo {' and '.join(scaled)}; use a schedule whose values are factors "
                                        f"of each group's lr (torch, OneFlow, HF, timm)")
            default = opt_plan.defaults.get(key) if not key.startswith("betas") else None
            bases, problem = opt_plan.base_values(key)
            if problem:
                errors.add("scheduler.key", problem)
            else:
                errors.extend(check_schedule(sched_plan, bases, default if isinstance(default, (int, float)) and
                                             not isinstance(default, bool) else None, "scheduler"))
    if errors:
        raise experiment.locate(ConfigError(errors.items))
    return opt_plan, sched_plan

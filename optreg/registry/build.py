"""Plans and builders: validate everything first (a plan), then create torch objects from the plan.

`configure_optimizer` / `configure_lr_scheduler` follow Cerebras' calling convention; a bad input raises
ConfigError before any optimizer or scheduler exists.
"""

from __future__ import annotations

import importlib
import numbers
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Mapping, Sequence

from pydantic import TypeAdapter, ValidationError

from optreg.errors import Collector, ConfigError, ErrorItem, join_path
from optreg.registry.entry import OPTIMIZER, SCHEDULER, Entry
from optreg.registry.groups import Group, from_dicts, from_rules, named_parameters
from optreg.registry.names import NAME_KEYS, synonyms
from optreg.registry.registry import REGISTRY
from optreg.registry.validate import (UnknownKeys, check_rules, option_names, resolve_aliases,
                                      to_target_kwargs, validate_options)
from optreg.schemas import models

SCHEDULE_KEYS = ("lr", "momentum", "betas[0]", "betas[1]", "weight_decay")
PER_GROUP = ("base_lr", "max_lr", "min_lr", "base_momentum", "max_momentum", "lr_lambda")


# ---------------------------------------------------------------------------------------------------
# optimizer
# ---------------------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _adapter(entry: Entry, option: str) -> TypeAdapter:
    opt = next(o for o in models.options(entry) if o.name == option)
    return TypeAdapter(opt.type)


def _group_options(entry: Entry, group: Group, base: Mapping[str, Any], errors: Collector, path: str) -> None:
    """Validate a group's own options against the entry's types and rules; dialect keys go to `extra`."""
    fields = option_names(entry)
    known = {k: v for k, v in group.options.items() if k in fields or any(s in fields for s in synonyms(k))}
    if entry.bind:
        group.extra = {k: v for k, v in group.options.items() if k not in known}
    else:
        known = dict(group.options)
    local = Collector()
    resolved = resolve_aliases(entry, known, local, path)
    values, failed = {}, set()
    for name, value in resolved.items():
        try:
            values[name] = _adapter(entry, name).validate_python(value)
        except ValidationError as exc:
            failed.add(name)
            for item in models.pydantic_errors(exc):
                local.add(join_path(join_path(path, name), item.path), item.message)
    rule_errors = Collector()
    check_rules(entry, {**base, **values}, failed, rule_errors, path)
    local.items += [e for e in rule_errors.items
                    if any(f in values for r in entry.rules if join_path(path, r.path) == e.path for f in r.fields)]
    errors.extend(local.items)
    group.options = values


@dataclass
class OptimizerPlan:
    """A validated optimizer: its entry, options and resolved groups. `build()` creates it."""

    entry: Entry
    values: dict[str, Any]
    groups: list[Group]
    grouped: bool

    def build(self):
        entry = self.entry
        dicts = [{"params": g.params, **{entry.target_name(k): v for k, v in g.options.items()}}
                 for g in self.groups]
        if entry.bind:
            module, _, attr = entry.bind.partition(":")
            hook = getattr(importlib.import_module(module), attr)
            named = [{**d, "param_names": g.names, **g.extra} for d, g in zip(dicts, self.groups)]
            dicts = hook(named, dict(self.values), self.grouped)
        cls = entry.resolve()
        try:
            return cls(dicts, **to_target_kwargs(entry, self.values))
        except (ValueError, TypeError, KeyError) as exc:  # a constraint the tables missed: still a ConfigError
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(f"{entry.qualname} refused the configuration: {exc}") from exc

    @property
    def defaults(self) -> dict[str, Any]:
        return to_target_kwargs(self.entry, self.values)


def plan_optimizer(name: Any, params: Any, *, dialect: str | None = None, unknown_keys: UnknownKeys = "error",
                   param_groups: Sequence[Mapping[str, Any]] | None = None, path: str = "",
                   options: Mapping[str, Any] | None = None) -> OptimizerPlan:
    """Validate an optimizer spec against the parameters it will own; ConfigError lists every problem."""
    errors = Collector()
    entry = REGISTRY.lookup(OPTIMIZER, name, dialect, path=join_path(path, "name"))
    values: dict[str, Any] = {}
    try:
        values = validate_options(entry, dict(options or {}), path=path, unknown_keys=unknown_keys)
    except ConfigError as exc:
        errors.extend(exc)
    groups: list[Group] = []
    try:
        named, dicts = named_parameters(params)
    except ConfigError as exc:
        errors.extend(exc)
        named, dicts = None, None
    if dicts is not None:
        if param_groups:
            errors.add(join_path(path, "param_groups"), "give either torch-style group dicts as params or "
                                                        "param_groups rules, not both")
        groups = from_dicts(dicts, errors)
    elif named is not None:
        groups = from_rules(named, list(param_groups or ()), errors, join_path(path, "param_groups"))
    grouped = bool(param_groups) or dicts is not None
    for group in groups:
        _group_options(entry, group, values, errors, path if group.rule == "default" else join_path(path, group.rule))
    _check_params(entry, groups, errors, path)
    errors.raise_if_any()
    return OptimizerPlan(entry, values, groups, grouped)


def _check_params(entry: Entry, groups: list[Group], errors: Collector, path: str) -> None:
    if entry.single_group and len(groups) > 1:
        errors.add(join_path(path, "param_groups"), f"{entry.qualname} takes one parameter group, got {len(groups)}")
    if entry.accepts:
        accepts, requirement = entry.accepts
        for group in groups:
            for i, p in enumerate(group.params):
                if not accepts(p):
                    who = repr(group.names[i]) if group.names else f"parameter {i}"
                    errors.add(join_path(path, "params"), f"{requirement}; {who} has shape {tuple(p.shape)}")


def configure_optimizer(optimizer_type: str, params: Any, *, dialect: str | None = None,
                        unknown_keys: UnknownKeys = "error", **kwargs: Any):
    """Build an optimizer by name: `configure_optimizer("adamw", model, lr=3e-4, param_groups=[...])`.

    `params` is what torch accepts (tensors or group dicts) or a Module / named_parameters(), which
    `param_groups` rules (glob patterns over names) need. Unknown keys raise, or warn and are dropped
    with unknown_keys="warn" (Cerebras' lenient behaviour).
    """
    param_groups = kwargs.pop("param_groups", None)
    return plan_optimizer(optimizer_type, params, dialect=dialect, unknown_keys=unknown_keys,
                          param_groups=param_groups, options=kwargs).build()


# ---------------------------------------------------------------------------------------------------
# scheduler
# ---------------------------------------------------------------------------------------------------
@dataclass
class Context:
    """What a scheduler plan may check against: the optimizer's group count and option names."""

    n_groups: int
    option_names: frozenset[str]
    dialect: str | None = None
    known_groups: bool = True


@dataclass
class SchedulerPlan:
    """A validated scheduler spec (children for sequential/chained). `build(optimizer)` creates it."""

    entry: Entry
    values: dict[str, Any]
    children: list["SchedulerPlan"] = field(default_factory=list)
    key: str = "lr"
    last_epoch: int = -1

    @property
    def engine(self) -> bool:
        """True for closed-form schedules (wrapped by the adapter); False for torch scheduler classes."""
        from torch.optim.lr_scheduler import LRScheduler

        target = self.entry.resolve()
        return not (isinstance(target, type) and issubclass(target, LRScheduler))

    @property
    def length(self) -> int | None:
        if self.children:
            lengths = [c.length for c in self.children]
            return None if None in lengths else sum(lengths)
        return self.values.get(self.entry.length) if self.entry.length else None

    def build(self, optimizer):
        cls = self.entry.resolve()
        kwargs = to_target_kwargs(self.entry, self.values)
        if self.engine:
            from optreg.schedulers.adapter import ScheduleLR

            return ScheduleLR(optimizer, cls(**kwargs), key=self.key, last_epoch=self.last_epoch)
        if self.children:
            kwargs["schedulers"] = [child.build(optimizer) for child in self.children]
            if _target_params(self.entry)[0] == "schedulers":  # ChainedScheduler(schedulers, optimizer=None)
                return cls(optimizer=optimizer, **kwargs)
        try:
            return cls(optimizer, **kwargs)
        except (ValueError, TypeError, KeyError) as exc:
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(f"{self.entry.qualname} refused the configuration: {exc}") from exc


def _target_params(entry: Entry) -> list[str]:
    import inspect

    return list(inspect.signature(entry.resolve()).parameters)


def _normal_spec(spec: Any, path: str, errors: Collector) -> dict[str, Any] | None:
    if isinstance(spec, str):
        return {"name": spec}
    if isinstance(spec, (list, tuple)):
        return {"name": "sequential", "schedulers": list(spec)}
    if not isinstance(spec, Mapping):
        errors.add(path, f"expected a scheduler spec (a mapping with name:), got {spec!r}")
        return None
    spec = dict(spec)
    given = [k for k in NAME_KEYS if k in spec]
    if len(given) > 1:
        errors.add(join_path(path, given[1]), f"both {given[0]!r} and {given[1]!r} name the scheduler; keep one")
    if not given:
        errors.add(join_path(path, "name"), "required: the scheduler's name")
        return None
    spec["name"] = spec.pop(given[0])
    for extra in given[1:]:
        spec.pop(extra)
    return spec


def plan_scheduler(spec: Any, context: Context, path: str = "", dialect: str | None = None) -> SchedulerPlan:
    """Validate a scheduler spec (recursively for sequential/chained); ConfigError lists every problem."""
    errors = Collector()
    spec = _normal_spec(spec, path, errors)
    errors.raise_if_any()
    assert spec is not None
    dialect = spec.pop("dialect", None) or dialect or context.dialect
    entry = REGISTRY.lookup(SCHEDULER, spec.pop("name"), dialect, path=join_path(path, "name"))
    plan = SchedulerPlan(entry, {})
    if plan.engine:
        plan.key = spec.pop("key", "lr")
        if plan.key not in SCHEDULE_KEYS:
            errors.add(join_path(path, "key"), f"must be one of {', '.join(SCHEDULE_KEYS)}, got {plan.key!r}")
        for alias in synonyms("last_epoch"):
            if alias in spec:
                plan.last_epoch = spec.pop(alias)
    children_raw = spec.get("schedulers")
    if "schedulers" in option_names(entry) and isinstance(children_raw, list):
        for i, child in enumerate(children_raw):
            try:
                plan.children.append(plan_scheduler(child, context, join_path(join_path(path, "schedulers"), i),
                                                    entry.dialect))
            except ConfigError as exc:
                errors.extend(exc)
    try:
        plan.values = validate_options(entry, spec, path=path)
    except ConfigError as exc:
        errors.extend(exc)
    if not errors:
        _check_context(plan, context, errors, path)
    errors.raise_if_any()
    return plan


def _check_context(plan: SchedulerPlan, context: Context, errors: Collector, path: str) -> None:
    values = plan.values
    for name in PER_GROUP:
        value = values.get(name)
        if isinstance(value, list) and context.known_groups and len(value) != context.n_groups:
            errors.add(join_path(path, name), f"expected one value per parameter group ({context.n_groups}), "
                                              f"got {len(value)}")
    if values.get("cycle_momentum") and not ({"momentum", "betas"} & context.option_names):
        errors.add(join_path(path, "cycle_momentum"), "the optimizer has neither momentum nor betas; "
                                                      "set cycle_momentum: false")
    if plan.children:
        for i, child in enumerate(plan.children):
            if "ReduceLROnPlateau" in child.entry.name:
                errors.add(join_path(join_path(path, "schedulers"), i), "ReduceLROnPlateau steps on a metric and "
                                                                      "cannot be nested")
    if plan.children and "milestones" in values:
        n = len(plan.children)
        if values["milestones"] is None:
            lengths = [c.length for c in plan.children[:-1]]
            for i, length in enumerate(lengths):
                if length is None:
                    errors.add(join_path(join_path(path, "schedulers"), i),
                               f"{plan.children[i].entry.name} has no length to derive a milestone from; "
                               f"give milestones")
            if None not in lengths:
                total, milestones = 0, []
                for length in lengths:
                    total += length
                    milestones.append(total)
                values["milestones"] = milestones
        elif len(values["milestones"]) != n - 1:
            errors.add(join_path(path, "milestones"), f"expected {n - 1} milestones for {n} schedulers, "
                                                      f"got {len(values['milestones'])}")
    if "schedulers" in values and not plan.children:
        errors.add(join_path(path, "schedulers"), "expected a non-empty list of scheduler specs")


def context_of(optimizer: Any, dialect: str | None = None) -> Context:
    return Context(len(optimizer.param_groups), frozenset(optimizer.defaults), dialect)


def configure_lr_scheduler(optimizer: Any, learning_rate: Any, *, dialect: str | None = None, **kwargs: Any):
    """Build a scheduler for `optimizer` (Cerebras' convention for `learning_rate`).

    - a number: every group's lr is set to it and None is returned (no scheduler object);
    - a scheduler name with its options as kwargs: `configure_lr_scheduler(opt, "StepLR", step_size=10)`;
    - a mapping: one schedule spec `{name: ..., <options>}` (`sequential` / `chained` nest `schedulers:`);
    - a list of specs: a sequential schedule whose milestones come from the stages' lengths.
    """
    if isinstance(learning_rate, numbers.Real) and not isinstance(learning_rate, bool):
        lr = float(learning_rate)
        if not lr >= 0 or lr == float("inf"):
            raise ConfigError(f"must be a finite number >= 0, got {learning_rate}", "learning_rate")
        for group in optimizer.param_groups:
            group["lr"] = lr
        return None
    if isinstance(learning_rate, str):
        spec: Any = {"name": learning_rate, **kwargs}
    elif isinstance(learning_rate, Mapping):
        spec = {**learning_rate, **kwargs}
    elif isinstance(learning_rate, (list, tuple)):
        spec = {"name": "sequential", "schedulers": list(learning_rate), **kwargs}
    else:
        raise ConfigError(f"expected a number, a scheduler name, a spec mapping or a list of specs, got "
                          f"{type(learning_rate).__name__}", "learning_rate")
    return plan_scheduler(spec, context_of(optimizer, dialect)).build(optimizer)


__all__ = ["OptimizerPlan", "SchedulerPlan", "Context", "plan_optimizer", "plan_scheduler", "configure_optimizer",
           "configure_lr_scheduler", "ErrorItem"]

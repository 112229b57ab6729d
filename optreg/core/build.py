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

from optreg.core.entry import OPTIMIZER, SCHEDULER, Entry
from optreg.core.groups import Group, from_dicts, from_rules, named_parameters
from optreg.core.names import NAME_KEYS, OPTION_ALIASES, TUPLE_ALIASES, synonyms
from optreg.core.registry import REGISTRY
from optreg.errors import Collector, ConfigError, ErrorItem, closest, join_path
from optreg.core.validate import (UnknownKeys, check_rules, option_names, resolve_aliases,
                                      to_target_kwargs, validate_options)
from optreg.core import models

SCHEDULE_KEYS = ("lr", "momentum", "betas[0]", "betas[1]", "weight_decay")
PER_GROUP = ("base_lr", "max_lr", "min_lr", "base_momentum", "max_momentum", "lr_lambda")


# ---------------------------------------------------------------------------------------------------
# optimizer
# ---------------------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _adapter(entry: Entry, option: str) -> TypeAdapter:
    opt = next(o for o in models.options(entry) if o.name == option)
    return TypeAdapter(opt.type)


def group_options(entry: Entry, group: Group, base: Mapping[str, Any], errors: Collector, path: str) -> None:
    """Validate a group's own keys: the entry's options (types and rules) and its `group_keys`;
    other keys go to the row's bind hook when it has one (MindSpore's order_params), else are errors."""
    fields = option_names(entry)
    known: dict[str, Any] = {}
    for key, value in group.options.items():
        if key in fields or any(s in fields for s in synonyms(key)):
            known[key] = value
        elif key in entry.group_keys:
            try:
                group.extra[key] = TypeAdapter(entry.group_keys[key]).validate_python(value)
            except ValidationError as exc:
                errors.extend([ErrorItem(join_path(join_path(path, key), i.path), i.message)
                               for i in models.pydantic_errors(exc)])
        elif entry.bind:
            group.extra[key] = value
        else:
            known[key] = value
    local = Collector()
    resolved = resolve_aliases(entry, known, local, path, extra_keys=tuple(entry.group_keys))
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


def wraps_optimizer(entry: Entry) -> bool:
    """Optimizers that wrap another one take it as their first argument (MindSpore LARS)."""
    import inspect

    params = list(inspect.signature(entry.resolve()).parameters)
    return entry.kind == OPTIMIZER and bool(params) and params[0] == "optimizer"


@dataclass
class OptimizerPlan:
    """A validated optimizer: its entry, options and the group dicts it will be built with (or the plan
    of the optimizer it wraps). `build()` creates it."""

    entry: Entry
    values: dict[str, Any]
    groups: list[Group]
    grouped: bool
    inner: "OptimizerPlan | None" = None
    dicts: list[dict[str, Any]] = field(default_factory=list)

    def build(self):
        entry = self.entry
        cls = entry.resolve()
        kwargs = to_target_kwargs(entry, self.values)
        try:
            if self.inner is not None:
                return cls(self.inner.build(), **kwargs)
            return cls(self.dicts, **kwargs)
        except (ValueError, TypeError, KeyError, RuntimeError) as exc:  # a constraint the tables missed
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(f"{entry.qualname} refused the configuration: {exc}") from exc

    @property
    def defaults(self) -> dict[str, Any]:
        return self.inner.defaults if self.inner is not None else to_target_kwargs(self.entry, self.values)

    def group_keys(self) -> frozenset[str]:
        """The keys a scheduler can drive in the built optimizer's groups: the options under their
        canonical names (MindSpore's learning_rate -> lr, beta1/beta2 -> betas), from the alias table."""
        if self.inner is not None:
            return self.inner.group_keys()
        keys = set()
        for name in self.defaults:
            keys.add(OPTION_ALIASES.get(name, name))
            keys.update(t for t, parts in TUPLE_ALIASES.items() if name in parts)
        return frozenset(keys)


def _torch_dicts(entry: Entry, groups: list[Group], values: Mapping[str, Any], grouped: bool, errors: Collector,
                 path: str) -> list[dict[str, Any]]:
    """The group dicts the implementation takes: renamed options and group keys, through the row's bind
    hook (a dialect's group semantics) when it has one; the hook's errors get the section's path."""
    dicts = [{"params": g.params, **{entry.target_name(k): v for k, v in g.options.items()},
              **(g.extra if not entry.bind else {})} for g in groups]
    if not entry.bind:
        return dicts
    module, _, attr = entry.bind.partition(":")
    hook = getattr(importlib.import_module(module), attr)
    named = [{**d, "param_names": g.names, **g.extra} for d, g in zip(dicts, groups)]
    try:
        return hook(named, dict(values), grouped)
    except ConfigError as exc:
        errors.extend(exc, prefix=path)
        return []


def _inner_spec(options: dict[str, Any], errors: Collector, path: str) -> tuple[Any, dict[str, Any]]:
    """(name, options) of a wrapped optimizer's nested `optimizer:` spec."""
    spec = options.pop("optimizer", None)
    if not isinstance(spec, Mapping):
        errors.add(join_path(path, "optimizer"), "required: the optimizer to wrap, a nested spec with name: and "
                                                 "its options")
        return None, {}
    spec = dict(spec)
    given = [k for k in NAME_KEYS if k in spec]
    if not given:
        errors.add(join_path(join_path(path, "optimizer"), "name"), "required: the wrapped optimizer's name")
        return None, {}
    name = spec.pop(given[0])
    return name, spec


def plan_optimizer(name: Any, params: Any, *, dialect: str | None = None, unknown_keys: UnknownKeys = "error",
                   param_groups: Sequence[Mapping[str, Any]] | None = None, path: str = "",
                   options: Mapping[str, Any] | None = None) -> OptimizerPlan:
    """Validate an optimizer spec against the parameters it will own; ConfigError lists every problem."""
    errors = Collector()
    entry = REGISTRY.lookup(OPTIMIZER, name, dialect, path=join_path(path, "name"))
    options = dict(options or {})
    inner: OptimizerPlan | None = None
    if wraps_optimizer(entry):
        inner_name, inner_options = _inner_spec(options, errors, path)
        if inner_name is not None:
            try:
                inner = plan_optimizer(inner_name, params, dialect=inner_options.pop("dialect", entry.dialect),
                                       unknown_keys=unknown_keys, param_groups=param_groups,
                                       path=join_path(path, "optimizer"), options=inner_options)
            except ConfigError as exc:
                errors.extend(exc)
    values: dict[str, Any] = {}
    try:
        values = validate_options(entry, options, path=path, unknown_keys=unknown_keys)
    except ConfigError as exc:
        errors.extend(exc)
    if wraps_optimizer(entry):
        errors.raise_if_any()
        return OptimizerPlan(entry, values, inner.groups, inner.grouped, inner)
    groups: list[Group] = []
    try:
        named, dicts = named_parameters(params)
    except ConfigError as exc:
        errors.extend(exc)
        named, dicts = None, None
    if param_groups is not None and not isinstance(param_groups, (list, tuple)):
        errors.add(join_path(path, "param_groups"), f"expected a list of rules ({{params: <glob>, ...}}), got "
                                                    f"{type(param_groups).__name__}")
        param_groups = None
    paramless = entry.bind is not None  # a dialect hook may take groups without params (order_params)
    if dicts is not None:
        if param_groups:
            errors.add(join_path(path, "param_groups"), "give either torch-style group dicts as params or "
                                                        "param_groups rules, not both")
        groups = from_dicts(dicts, errors, join_path(path, "params"), paramless_ok=paramless)
    elif named is not None:
        groups = from_rules(named, list(param_groups or ()), errors, join_path(path, "param_groups"),
                            paramless_ok=paramless)
    grouped = bool(param_groups) or dicts is not None
    for group in groups:
        group_options(entry, group, values, errors, path if group.rule == "default" else group.rule)
    _check_params(entry, groups, errors, path)
    errors.raise_if_any()
    plan = OptimizerPlan(entry, values, groups, grouped)
    plan.dicts = _torch_dicts(entry, groups, values, grouped, errors, path)
    errors.raise_if_any()
    return plan


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


def configure_optimizer(optimizer_type: str, params: Any, /, *, dialect: str | None = None,
                        unknown_keys: UnknownKeys = "error", **kwargs: Any):
    """Build an optimizer by name: `configure_optimizer("adamw", model, lr=3e-4, param_groups=[...])`.

    `params` is what torch accepts (tensors or group dicts) or a Module / named_parameters(), which
    `param_groups` rules (glob patterns over names) need. Unknown keys raise, or warn and are dropped
    with unknown_keys="warn" (Cerebras' lenient behaviour).
    """
    if unknown_keys not in ("error", "warn"):
        raise ConfigError(f"must be 'error' or 'warn', got {unknown_keys!r}", "unknown_keys")
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
    known_options: bool = True


NESTED = ("schedulers", "scheduler")       # options that hold nested scheduler specs
COMBINATORS = ("sequential", "chained")    # optreg's own; `SequentialLR` etc. are the dialects' classes


@dataclass
class SchedulerPlan:
    """A validated scheduler spec. Closed-form plans hold their Schedule, built (and so checked) at plan
    time; torch-class plans build the torch scheduler in `build(optimizer)`."""

    entry: Entry | None
    values: dict[str, Any]
    children: list["SchedulerPlan"] = field(default_factory=list)
    key: str = "lr"
    last_epoch: int = -1
    schedule: Any = None               # the closed form (engine plans)

    @property
    def length(self) -> int | None:
        if self.schedule is not None:
            return self.schedule.length
        if self.children:
            lengths = [c.length for c in self.children]
            return None if None in lengths else sum(lengths)
        return self.values.get(self.entry.length) if self.entry and self.entry.length else None

    @property
    def name(self) -> str:
        return self.entry.name if self.entry else type(self.schedule).__name__

    def closed_form(self, path: str):
        """This plan as a Schedule (torch rows through their closed forms), for composing and plotting."""
        if self.schedule is not None:
            return self.schedule
        from optreg.dialects.torch.torch_forms import TORCH_FORMS

        form = TORCH_FORMS.get(self.entry.name) if self.entry.dialect == "torch" else None
        if form is None:
            raise ConfigError(f"{self.entry.qualname} has no closed form and cannot be composed here", path)
        kwargs = {k: v for k, v in to_target_kwargs(self.entry, self.values).items() if k != "last_epoch"}
        if self.children:
            kwargs["schedulers"] = [c.closed_form(join_path(join_path(path, "schedulers"), i))
                                    for i, c in enumerate(self.children)]
        return form(**kwargs)

    def build(self, optimizer):
        if self.schedule is not None:
            from optreg.schedules.adapter import ScheduleLR

            return ScheduleLR(optimizer, self.schedule, key=self.key, last_epoch=self.last_epoch)
        cls = self.entry.resolve()
        kwargs = to_target_kwargs(self.entry, self.values)
        if self.children:
            kwargs["schedulers"] = [child.build(optimizer) for child in self.children]
            if _target_params(self.entry)[0] == "schedulers":  # ChainedScheduler(schedulers, optimizer=None)
                return cls(optimizer=optimizer, **kwargs)
        try:
            return cls(optimizer, **kwargs)
        except (ValueError, TypeError, KeyError, RuntimeError) as exc:
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(f"{self.entry.qualname} refused the configuration: {exc}") from exc


def _target_params(entry: Entry) -> list[str]:
    import inspect

    return list(inspect.signature(entry.resolve()).parameters)


def _is_engine(entry: Entry) -> bool:
    """Closed-form schedules are wrapped by the adapter; torch scheduler classes are built as they are."""
    from torch.optim.lr_scheduler import LRScheduler

    target = entry.resolve()
    return not (isinstance(target, type) and issubclass(target, LRScheduler))


def cerebras_form(spec: Any) -> bool:
    """Cerebras' YAML forms: legacy `{scheduler: Linear, ...}` items and current `{LinearLR: {...}}` dicts."""
    if isinstance(spec, Mapping):
        return "scheduler" in spec and not any(k in spec for k in NAME_KEYS) or (
            len(spec) == 1 and next(iter(spec)) not in NAME_KEYS and isinstance(next(iter(spec.values())),
                                                                                  (Mapping, type(None))))
    return isinstance(spec, (list, tuple)) and bool(spec) and all(cerebras_form(s) for s in spec)


def _normal_spec(spec: Any, path: str, errors: Collector) -> dict[str, Any] | None:
    if cerebras_form(spec):
        from optreg.dialects.cerebras.forms import to_spec

        try:
            return to_spec(spec, path=path)
        except ConfigError as exc:
            errors.extend(exc)
            return None
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


def _pop_adapter_options(spec: dict[str, Any], plan: SchedulerPlan, errors: Collector, path: str) -> None:
    """`key` and `last_epoch` (alias `last_step`) belong to the adapter of every closed-form schedule."""
    plan.key = spec.pop("key", "lr")
    if plan.key not in SCHEDULE_KEYS:
        errors.add(join_path(path, "key"), f"must be one of {', '.join(SCHEDULE_KEYS)}, got {plan.key!r}")
    for alias in sorted(synonyms("last_epoch")):
        if alias in spec:
            plan.last_epoch = spec.pop(alias)
            if isinstance(plan.last_epoch, bool) or not isinstance(plan.last_epoch, int) or plan.last_epoch < -1:
                errors.add(join_path(path, alias), f"must be an integer >= -1, got {plan.last_epoch!r}")


def _plan_children(spec: Mapping[str, Any], context: Context, path: str, dialect: str | None,
                   errors: Collector) -> list[SchedulerPlan]:
    children = []
    for option in NESTED:
        raw = spec.get(option)
        items = raw if option == "schedulers" and isinstance(raw, list) else [raw] if isinstance(raw, Mapping) else []
        for i, child in enumerate(items):
            here = join_path(join_path(path, option), i) if option == "schedulers" else join_path(path, option)
            try:
                children.append(plan_scheduler(child, context, here, dialect))
            except ConfigError as exc:
                errors.extend(exc)
    return children


def _plan_combinator(spec: dict[str, Any], context: Context, path: str, dialect: str | None) -> SchedulerPlan:
    """optreg's `sequential` (stages on local steps, or `restart: global`) and `chained` (factors multiply).

    With torch scheduler classes only, local restarts and the lr key, they build torch's own
    SequentialLR / ChainedScheduler (bitwise torch); otherwise the engine's closed-form combinators.
    """
    errors = Collector()
    kind = spec.pop("name").strip().lower()
    allowed = {"schedulers", "key", *synonyms("last_epoch")} | ({"milestones", "restart"} if kind == "sequential"
                                                                  else set())
    for key in spec:
        if key not in allowed:
            errors.add(join_path(path, key), f"unknown option of {kind}", closest(key, sorted(allowed)))
    plan = SchedulerPlan(None, {})
    _pop_adapter_options(spec, plan, errors, path)
    raw = spec.get("schedulers")
    if not isinstance(raw, list) or not raw:
        errors.add(join_path(path, "schedulers"), "expected a non-empty list of scheduler specs")
    else:
        plan.children = _plan_children(spec, context, path, dialect, errors)
    restart = spec.get("restart", "local")
    milestones = spec.get("milestones")
    modes = ("local", "global")
    if not (restart in modes or isinstance(restart, list) and all(r in modes for r in restart)):
        errors.add(join_path(path, "restart"), f"must be 'local', 'global' or a list of them, got {restart!r}")
    errors.raise_if_any()
    torch_only = all(c.entry is not None and c.schedule is None and c.entry.dialect == "torch"
                     for c in plan.children)
    if torch_only and restart == "local" and plan.key == "lr" and plan.last_epoch == -1:
        entry = REGISTRY.lookup(SCHEDULER, "SequentialLR" if kind == "sequential" else "ChainedScheduler", "torch")
        raw_values = {"schedulers": raw, **({"milestones": milestones} if kind == "sequential" else {})}
        try:
            plan.entry, plan.values = entry, validate_options(entry, raw_values, path=path)
        except ConfigError as exc:
            errors.extend(exc)
        errors.raise_if_any()
        _check_context(plan, context, errors, path)
        errors.raise_if_any()
        return plan
    from optreg.schedules.engine import Chained, Sequential

    try:
        stages = [c.closed_form(join_path(join_path(path, "schedulers"), i)) for i, c in enumerate(plan.children)]
        plan.schedule = Sequential(stages, milestones, restart) if kind == "sequential" else Chained(stages)
    except ConfigError as exc:
        errors.extend(exc, prefix=path)
    errors.raise_if_any()
    return plan


def plan_scheduler(spec: Any, context: Context, path: str = "", dialect: str | None = None) -> SchedulerPlan:
    """Validate a scheduler spec (recursively for nested ones); ConfigError lists every problem."""
    errors = Collector()
    spec = _normal_spec(spec, path, errors)
    errors.raise_if_any()
    assert spec is not None
    dialect = spec.pop("dialect", None) or dialect or context.dialect
    if isinstance(spec["name"], str) and spec["name"].strip().lower() in COMBINATORS:
        return _plan_combinator(spec, context, path, dialect)
    entry = REGISTRY.lookup(SCHEDULER, spec.pop("name"), dialect, path=join_path(path, "name"))
    plan = SchedulerPlan(entry, {})
    engine = _is_engine(entry)
    if engine:
        _pop_adapter_options(spec, plan, errors, path)
    if any(option in option_names(entry) for option in NESTED):
        plan.children = _plan_children(spec, context, path, entry.dialect, errors)
    try:
        plan.values = validate_options(entry, spec, path=path)
    except ConfigError as exc:
        errors.extend(exc)
    if not errors and engine:
        kwargs = to_target_kwargs(entry, plan.values)
        children = iter(plan.children)
        for option in NESTED:
            target = entry.target_name(option)
            if kwargs.get(target) is not None:
                kwargs[target] = ([next(children).closed_form(join_path(join_path(path, option), i))
                                   for i in range(len(kwargs[target]))] if option == "schedulers"
                                  else next(children).closed_form(join_path(path, option)))
        try:
            plan.schedule = entry.resolve()(**kwargs)
        except ConfigError as exc:
            errors.extend(exc, prefix=path)
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
        if isinstance(value, list) and plan.schedule is not None:
            errors.add(join_path(path, name), "per-group lists are not supported by closed-form schedules; "
                                              "use one value (or a torch-dialect scheduler)")
    if values.get("cycle_momentum") and context.known_options and not ({"momentum", "betas"} & context.option_names):
        errors.add(join_path(path, "cycle_momentum"), "the optimizer has neither momentum nor betas; "
                                                      "set cycle_momentum: false")
    if context.known_options and plan.key != "lr" and plan.key.split("[")[0] not in context.option_names:
        errors.add(join_path(path, "key"), f"the optimizer has no {plan.key.split('[')[0]!r} to schedule")
    for i, child in enumerate(plan.children):
        if child.entry is not None and "ReduceLROnPlateau" in child.entry.name:
            errors.add(join_path(join_path(path, "schedulers"), i), "ReduceLROnPlateau steps on a metric and "
                                                                  "cannot be nested")
    if plan.schedule is None and plan.children and "milestones" in values:
        n = len(plan.children)
        if values["milestones"] is None:
            lengths = [c.length for c in plan.children[:-1]]
            for i, length in enumerate(lengths):
                if length is None:
                    errors.add(join_path(join_path(path, "schedulers"), i),
                               f"{plan.children[i].name} has no length to derive a milestone from; "
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
    if "schedulers" in values and not plan.children and plan.schedule is None:
        errors.add(join_path(path, "schedulers"), "expected a non-empty list of scheduler specs")


def context_of(optimizer: Any, dialect: str | None = None) -> Context:
    keys = frozenset(optimizer.defaults).union(*(set(g) - {"params"} for g in optimizer.param_groups))
    return Context(len(optimizer.param_groups), keys, dialect)


def configure_lr_scheduler(optimizer: Any, learning_rate: Any, /, *, dialect: str | None = None, **kwargs: Any):
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

"""Plans and builders: validate everything first (a plan), then create torch objects from the plan.

`configure_optimizer` / `configure_lr_scheduler` follow Cerebras' calling convention; a bad input raises
ConfigError before any optimizer or scheduler exists.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import re
import warnings
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterator, Mapping, Sequence

from pydantic import TypeAdapter, ValidationError

from optreg.core.composite import check_inherited, inherited, is_composite, plan_composite
from optreg.core.dialect import ReadSpec
from optreg.core.entry import OPTIMIZER, SCHEDULER, Entry
from optreg.core.groups import (MULTIPLIERS, SELECTORS, Group, Scope, apply_settings, check_support, collect,
                                from_dicts, from_rules, is_tensor, locate, remember_scaled_lr, scaled_lr_of,
                                scaled_options, not_rules, setting_elsewhere, settings_table, split_settings)
from optreg.core.names import (NAME_KEYS, TUPLE_ALIASES, given_twice, missing_name, name_key, named_twice,
                               option_aliases, synonyms)
from optreg.core.options import FRESH
from optreg.core.registry import REGISTRY, homonym_note
from optreg.errors import (Collector, ConfigError, ConfigWarning, ErrorItem, check_input, closest, first_few,
                           join_path, key_text, show)
from optreg.core.validate import (UnknownKeys, check_rules, option_names, rules_of, resolve_aliases,
                                      to_target_kwargs, validate_options)
from optreg.core import models
from optreg.core.lint import group_lrs_replaced, own_warmup_errors
from optreg.core.loop import check_entry, counts_scale, fill_length, finish, on_metric, pop_loop, run_length_said
from optreg.schedules.engine import ABSOLUTE, INITIAL_KEYS, KEYS, MIXED, Constant
from optreg.schedules.epochs import scale_counts

PER_GROUP = ("base_lr", "max_lr", "min_lr", "base_momentum", "max_momentum", "lr_lambda")


# ---------------------------------------------------------------------------------------------------
# optimizer
# ---------------------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _adapter(entry: Entry, option: str) -> TypeAdapter:
    opt = next(o for o in models.options(entry) if o.name == option)
    return TypeAdapter(opt.type)


@lru_cache(maxsize=None)
def torch_tensor_options(cls: type) -> frozenset[str]:
    """The constructor arguments of torch.optim's class `cls` that take a tensor, as torch 2.13 declares them
    (`float | Tensor`: every class's lr, Adam's and AdamW's betas, SGD's weight_decay), and lr for every class (Muon
    declares a float but checks a tensor lr's size as the others do)."""
    import inspect

    declared = {n for n, p in inspect.signature(cls).parameters.items() if n != "params" and "Tensor" in str(
        p.annotation)}
    return frozenset({"lr", *declared})


def _tensor_parts(value: Any) -> list[tuple[int | None, Any]]:
    """(None, value) for a tensor, (i, item) for each tensor item of a list or tuple (betas), else nothing."""
    if is_tensor(value):
        return [(None, value)]
    if isinstance(value, (list, tuple)):
        return [(i, v) for i, v in enumerate(value) if is_tensor(v)]
    return []


def tensor_options(entry: Entry, options: Mapping[str, Any], path: str,
                   errors: Collector) -> dict[tuple[str, int | None], Any]:
    """The tensors given for options (an optimizer's, a group's, optimizer_class()'s), by (option, index in a tuple
    option or None): kept for torch.optim's own classes where torch takes a tensor (`torch_tensor_options`), as
    torch keeps it (the group's lr or betas is that tensor, which a compiled or captured step reads on the device,
    and a scheduler fills in place; torch refuses some with foreach=True unless capturable, and betas that mix a
    tensor and a number, when built); refused at the key for every other option and implementation (a first-party
    step reads a number), where pydantic would turn it silently into a float, rounded to the tensor's precision.
    `with_tensors` puts the kept ones back in place of the numbers validated from them."""
    fields = option_names(entry)
    torch_own = isinstance(entry.target, str) and entry.target.startswith("torch.optim")
    takes = torch_tensor_options(entry.resolve()) if torch_own else frozenset()
    kept: dict[tuple[str, int | None], Any] = {}
    for key, value in options.items():
        parts = _tensor_parts(value) if isinstance(key, str) else []
        if not parts:
            continue
        option = key if key in fields else next((s for s in synonyms(key) if s in fields), None)
        part = next(((t, ps.index(key)) for t, ps in TUPLE_ALIASES.items() if key in ps and t in fields), None)
        if part is not None:   # beta1: betas[0]
            option, parts = part[0], [(part[1], value)]
        if option is None:   # not an option: validation reports the key
            continue
        if entry.target_name(option) in takes:
            kept.update({(option, i): tensor for i, tensor in parts})
            continue
        who = (f"torch's {entry.resolve().__name__} takes one for {', '.join(sorted(takes))} only" if torch_own
               else f"only torch.optim's own classes step with a tensor {option}")
        errors.add(join_path(path, key), f"{entry.qualname} takes a number, not a tensor: {who}; give "
                                         f"{f'float({key})' if is_tensor(value) else 'numbers'}")
    return kept


def with_tensors(values: Mapping[str, Any], kept: Mapping[tuple[str, int | None], Any]) -> dict[str, Any]:
    """`values` with the tensors `tensor_options` kept in place of the numbers validated from them (an option that
    failed validation stays out)."""
    out = dict(values)
    for (option, index), tensor in kept.items():
        if option not in out:
            continue
        if index is None:
            out[option] = tensor
        else:
            items = list(out[option])
            items[index] = tensor
            out[option] = tuple(items)
    return out


def group_key(kind: Any, value: Any, path: str) -> Any:
    """The value of a group key (a row's `group_keys`: OneFlow's clip_grad_max_norm) validated by its type `kind`;
    ConfigError at `path` when it is wrong."""
    try:
        return TypeAdapter(kind).validate_python(value)
    except ValidationError as exc:
        raise ConfigError([ErrorItem(join_path(path, i.path), i.message) for i in models.pydantic_errors(exc)]) \
            from None


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
                group.extra[key] = group_key(entry.group_keys[key], value, join_path(path, key))
            except ConfigError as exc:
                errors.extend(exc)
        elif key in settings_table():   # no_weight_decay in a rule: it belongs beside the optimizer's options
            item = setting_elsewhere(key, fields, "not a key of a param_groups rule: give it beside the optimizer's "
                                                  "options")
            errors.add(join_path(path, key), item.message, item.suggestion)
        elif key in SELECTORS or key in MULTIPLIERS:   # a rule's own keys reach here only in a torch-style dict
            errors.add(join_path(path, key), "a key of a param_groups rule, not of a torch-style group dict: give "
                                             "the Module or named_parameters() and the rule in param_groups")
        elif entry.bind:
            group.extra[key] = value
        else:
            known[key] = value
    local = Collector()
    tensors = tensor_options(entry, known, path, local)
    # a rule's selectors and multipliers are offered too (`parms:` is a misspelt `params:`)
    resolved = resolve_aliases(entry, known, local, path, extra_keys=(*entry.group_keys, *SELECTORS, *MULTIPLIERS))
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
                    if any(f in values for r in rules_of(entry) if join_path(path, r.path) == e.path for f in r.fields)]
    errors.extend(local.items)
    group.options = with_tensors(values, tensors)   # their values validated as numbers, the tensors built


def refused_at(entry: Entry, values: Mapping[str, Any], exc: BaseException) -> str:
    """The path of a configuration the implementation refused when built: the first given option its message names
    (torch's `fused` does not support `differentiable`: `fused`), else `params` where it speaks of the parameters,
    else the section's own (the caller's prefix)."""
    given = {entry.target_name(k): k for k in values}
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", str(exc)):
        if word in given:
            return given[word]
    return "params" if re.search(r"param|tensor", str(exc), re.IGNORECASE) else ""


def wraps_optimizer(entry: Entry) -> bool:
    """Optimizers that wrap another one take it as their first argument (MindSpore LARS)."""
    return entry.kind == OPTIMIZER and _first_parameter(entry.resolve()) == "optimizer"


@lru_cache(maxsize=None)
def _first_parameter(cls: Any) -> str | None:
    """The name of the first parameter of `cls`'s constructor (a class's signature does not change)."""
    import inspect

    return next(iter(inspect.signature(cls).parameters), None)


def wrapped_example(entry: Entry) -> dict[str, Any]:
    """The nested optimizer that `optreg show`, the JSON Schema and the Hydra group file carry for an optimizer
    that wraps another (required, so not a default): the implementation's `example_optimizer`."""
    return dict(getattr(entry.resolve(), "example_optimizer", None) or {"name": "SGD"})


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
    frozen: list[tuple[str, Any]] = field(default_factory=list)   # parameters left out (requires_grad=False)
    model: Any = None                  # the Module itself, for an entry that `takes_model` (MindSpore thor)
    notes: list[str] = field(default_factory=list)   # warnings of its planning (groups.frozen_rule_note)

    def build(self):
        """The optimizer, keeping the keys that scaled its groups' lrs (groups.remember_scaled_lr)."""
        entry = self.entry
        cls = entry.resolve()
        kwargs = to_target_kwargs(entry, self.values)
        try:
            if self.inner is not None:
                optimizer = cls(self.inner.build(), **kwargs)
            elif entry.takes_model:
                optimizer = cls(self.model, **kwargs)
            else:
                optimizer = cls(self.dicts, **kwargs)
        except (ValueError, TypeError, KeyError, RuntimeError) as exc:  # a constraint the tables missed
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(f"{entry.qualname} refused the configuration: {exc}",
                              refused_at(entry, self.values, exc)) from exc
        return remember_scaled_lr(optimizer, self.groups)

    @property
    def defaults(self) -> dict[str, Any]:
        return self.inner.defaults if self.inner is not None else to_target_kwargs(self.entry, self.values)

    def base_values(self, key: str) -> tuple[list[float] | None, str | None]:
        """(values, problem) of group key `key` (lr, momentum, betas[i], weight_decay) in the groups the built
        optimizer will have: the numbers when the plan knows them (else None), and why a schedule could not drive
        the key at all (a group without it, or with None), as the adapter would find once the optimizer exists."""
        if self.inner is not None:
            return self.inner.base_values(key)
        from optreg.schedules.adapter import read_key

        out: list[float] | None = []
        for i, merged in enumerate(self.group_dicts()):
            try:
                value = read_key(merged, key)
            except (KeyError, IndexError, TypeError):
                value = None
            part = TUPLE_ALIASES["betas"][int(key[6])] if key.startswith("betas[") else None
            given_none = key in merged or key[:5] in merged or (part is not None and merged.get(part, 0.0) is None)
            if value is None and given_none:
                return None, (f"parameter group {i} has no {key!r} to schedule (it is None)"
                              + self._no_lr_fix(key, merged))
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                out = None
            elif out is not None:
                out.append(float(value))
        return out or None, None

    def _no_lr_fix(self, key: str, merged: Mapping[str, Any]) -> str:
        """What to do where group dict `merged` has no lr to schedule: give one (MindSpore's AdaFactor sets its own
        step size under relative_step, so that goes off first), or schedule nothing."""
        if key != "lr":
            return ""
        lr_name = scaled_options(option_names(self.entry))["lr"] or "lr"
        give = f"set relative_step: false and a {lr_name}" if merged.get("relative_step") else f"give it a {lr_name}"
        return f"; {give}, or leave the scheduler out"

    def _implementation_defaults(self) -> dict[str, Any]:
        """What the implementation gets for every group: the options, its own signature's defaults included."""
        signature = {o.target: o.default for o in models.options(self.entry) if not o.required}
        return {**signature, **self.defaults}

    def group_dicts(self) -> list[dict[str, Any]]:
        """Each group dict over what the implementation gets for every group (`_implementation_defaults`), with
        MindSpore's learning_rate as the group's lr."""
        defaults = self._implementation_defaults()
        out = []
        for d in self.dicts:
            merged = {**defaults, **d}
            if "lr" not in merged and "learning_rate" in merged:
                merged["lr"] = merged["learning_rate"]
            out.append(merged)
        return out

    def stand_in(self) -> Any:
        """A torch Optimizer with the groups the built optimizer will have (`group_dicts`, over the same
        parameters, the implementation's defaults as its own), without the implementation: nothing steps and no
        state is made. A dry run builds the scheduler over it to read each group's lr at the first step
        (optreg.api.group_table). Its tensor values are copies (a scheduler fills a tensor lr in place); a dynamic
        lr is read at step 0, as optreg.core.optimizer.Optimizer reads it. None for an optimizer built from the
        model itself (MindSpore's THOR)."""
        if self.inner is not None:
            return self.inner.stand_in()
        if self.entry.takes_model or not self.dicts:
            return None
        import torch

        from optreg.core.optimizer import lr_at, lr_table

        groups = [{k: v if k == "params" else _copied(v) for k, v in g.items()} for g in self.group_dicts()]
        for i, value in self.dynamic_lrs():
            groups[i]["lr"] = lr_at(lr_table(value), 0)
        return torch.optim.Optimizer(groups, self._implementation_defaults())

    def dynamic_lrs(self) -> list[tuple[int, Any]]:
        """(group index, value) of each group whose lr is set per step by the optimizer itself (MindSpore's dynamic
        learning_rate: a per-step list, a schedule, a callable), not a number."""
        if self.inner is not None:
            return self.inner.dynamic_lrs()
        out = []
        for i, merged in enumerate(self.group_dicts()):
            value = merged.get("lr")
            if value is not None and not isinstance(value, (numbers.Real, bool)) and \
                    (isinstance(value, (list, tuple)) or callable(value)):
                out.append((i, value))
        return out

    def unschedulable(self) -> frozenset[str]:
        """Group keys a schedule must not drive: a first-party optimizer built with momentum 0 has no
        momentum buffer (its stages create one only for momentum > 0), so raising momentum later fails."""
        if self.inner is not None:
            return self.inner.unschedulable()
        momenta = [g.options.get("momentum", self.values.get("momentum")) for g in self.groups] or \
            [self.values.get("momentum")]
        return _unschedulable(self.entry.resolve(), momenta)

    def group_keys(self) -> frozenset[str]:
        """The keys a scheduler can drive in the built optimizer's groups: the options under their
        canonical names (MindSpore's learning_rate -> lr, beta1/beta2 -> betas), from the alias table."""
        if self.inner is not None:
            return self.inner.group_keys()
        keys = set()
        for name in self.defaults:
            keys.add(option_aliases().get(name, name))
        # a tuple (betas) only from all of its parts: an optimizer with beta1 alone (Adafactor) keeps beta1
        keys.update(t for t, parts in TUPLE_ALIASES.items() if all(p in self.defaults for p in parts))
        return frozenset(keys)


def _copied(value: Any) -> Any:
    """`value` with its tensors (in a tuple too: betas) copied."""
    if isinstance(value, tuple):
        return tuple(map(_copied, value))
    return value.detach().clone() if hasattr(value, "detach") else value


def _torch_dicts(entry: Entry, groups: list[Group], values: Mapping[str, Any], grouped: bool, errors: Collector,
                 path: str, rules_path: str | None = None) -> list[dict[str, Any]]:
    """The group dicts the implementation takes: renamed options and group keys, through the row's bind
    hook (a dialect's group semantics) when it has one; the hook's errors get the section's path."""
    dicts = [{"params": g.params, **{entry.target_name(k): v for k, v in g.options.items()},
              **(g.extra if not entry.bind else {})} for g in groups]
    if not entry.bind:
        return dicts
    binders = REGISTRY.dialect(entry.dialect).group_binders
    hook = binders.get(entry.bind)
    if hook is None:   # a plugin row naming a binder its dialect does not declare
        errors.add(path, f"{entry.qualname} binds its groups with {entry.bind!r}, which the {entry.dialect} dialect "
                         f"does not declare (its group_binders: {', '.join(binders) or 'none'})")
        return []
    named = [{**d, "param_names": g.names, **g.extra} for d, g in zip(dicts, groups)]
    try:
        return hook(named, dict(values), grouped)
    except ConfigError as exc:
        errors.extend(locate(exc, groups, path, rules_path))
        return []


#: the words of a wrapper's (MindSpore LARS's) nested `optimizer:` that is absent or no mapping, and of its name
WRAPPED_REQUIRED = "required: the optimizer to wrap, a nested spec with name: and its options"
WRAPPED_NAME = "the wrapped optimizer's name"


def _inner_spec(options: dict[str, Any], errors: Collector, path: str) -> tuple[Any, dict[str, Any]]:
    """(name, options) of a wrapped optimizer's nested `optimizer:` spec."""
    spec = options.pop("optimizer", None)
    if not isinstance(spec, Mapping):
        errors.add(join_path(path, "optimizer"), WRAPPED_REQUIRED)
        return None, {}
    spec = dict(spec)
    given = [k for k in NAME_KEYS if k in spec]
    if not given:
        missing_name(errors, spec, join_path(path, "optimizer"), WRAPPED_NAME)
        return None, {}
    name = spec.pop(given[0])
    return name, spec


def plan_optimizer(name: Any, params: Any, *, dialect: str | None = None, unknown_keys: UnknownKeys = "error",
                   param_groups: Sequence[Mapping[str, Any]] | None = None, path: str = "",
                   options: Mapping[str, Any] | None = None, default: str | None = None,
                   rules_path: str | None = None, scope: Scope | None = None) -> OptimizerPlan:
    """Validate an optimizer spec against the parameters it will own; ConfigError lists every problem.

    `dialect`: the spec's own (a prefix naming another one is an error); `default`: the dialect of a name without a
    prefix when `dialect` is None (a file's top-level `dialect:`); see `Registry.place`. `rules_path`: where the
    `param_groups` rules are written (default: the spec's own `param_groups`; a wrapped optimizer's are its
    wrapper's). `scope`: a composite's part is planned within the whole model and takes its main section's
    settings (groups.Scope)."""
    errors = Collector()
    rules_path = rules_path or join_path(path, "param_groups")
    entry = REGISTRY.lookup(OPTIMIZER, name, dialect, path=join_path(path, "name"), default=default)
    if is_composite(param_groups):   # a rule names its own optimizer: one plan per part
        return plan_composite(entry, params, dialect=dialect or default, unknown_keys=unknown_keys,
                              param_groups=param_groups, path=path, options=dict(options or {}))
    check_limits(entry, errors, path)
    settings, options = split_settings(dict(options or {}), path, errors)   # no_weight_decay, layer_decay
    # a composite's part takes its main section's settings (a wrapper is refused as a part: composite._check_part)
    taken = inherited(scope.settings, settings) if scope is not None and not wraps_optimizer(entry) else {}
    if taken:
        check_inherited(entry, taken, path, scope.path, errors)
    settings.update(taken)
    at = {key: join_path(scope.path, key) for key in taken} if scope is not None else {}
    inner: OptimizerPlan | None = None
    if wraps_optimizer(entry):
        inner_name, inner_options = _inner_spec(options, errors, path)
        if inner_name is not None:
            inner_options = {**settings, **inner_options}   # the settings apply to the wrapped optimizer's groups
            try:
                inner = plan_optimizer(inner_name, params, dialect=inner_options.pop("dialect", None),
                                       default=entry.dialect, unknown_keys=unknown_keys, param_groups=param_groups,
                                       path=join_path(path, "optimizer"), options=inner_options,
                                       rules_path=rules_path)   # the rules are the wrapper's own
            except ConfigError as exc:
                errors.extend(exc)
    values: dict[str, Any] = {}
    tensors = tensor_options(entry, options, path, errors)
    try:
        values = validate_options(entry, options, path=path, unknown_keys=unknown_keys,
                                  extra_keys=(*(("optimizer",) if wraps_optimizer(entry) else ()),
                                              *settings_table(), "param_groups"))
    except ConfigError as exc:
        errors.extend(exc)
    values = with_tensors(values, tensors)   # their values validated as numbers, the tensors built
    if wraps_optimizer(entry):
        errors.raise_if_any()
        return OptimizerPlan(entry, values, inner.groups, inner.grouped, inner, frozen=inner.frozen,
                             notes=inner.notes)
    if entry.takes_model:
        return _model_plan(entry, params, values, param_groups, settings, errors, path)
    groups: list[Group] = []
    dropped: list[Group] = []   # the rules that make no group (frozen parameters only, an error)
    notes: list[str] = []
    source = None
    try:
        source = collect(params)
        named, dicts = source.named, source.dicts
    except ConfigError as exc:
        errors.extend(exc)
        named, dicts = None, None
    if dicts is not None:  # torch-style group dicts carry options too: the same bounded walk (tensors skipped)
        check_input(dicts, join_path(path, "params"), errors, skip=("params", "param_names"))
        if errors:
            errors.raise_if_any()
    if (wrong := not_rules(param_groups)) is not None:
        errors.add(rules_path, wrong)
        param_groups = None
    paramless = entry.bind is not None  # a dialect hook may take groups without params (order_params)
    if dicts is not None:
        if param_groups:
            errors.add(rules_path, "give either torch-style group dicts as params or param_groups rules, not "
                                   "both")
        groups = from_dicts(dicts, errors, join_path(path, "params"), paramless_ok=paramless)
    elif named is not None:
        within = source if scope is None or source is None else \
            dataclasses.replace(source, module=scope.source.module)   # a composite's main rules select by module
        groups = from_rules(named, list(param_groups or ()), errors, rules_path, paramless_ok=paramless,
                            source=within, notes=notes, dropped=dropped)
    scaled = scaled_options(option_names(entry))
    if source is not None and source.module is not None:   # a dialect's default grouping (Model Zoo's: cerebras)
        for key, value in REGISTRY.dialect(entry.dialect).default_settings.items():
            if key not in settings and scaled.get(settings_table()[key].scales) is not None:
                settings[key] = value
    grouped = bool(param_groups) or dicts is not None or any(v not in (None, False) for v in settings.values())
    check_support(scaled, entry.qualname, [k for k, v in settings.items() if v not in (None, False) and k not in at],
                  path, errors)
    for group in [*groups, *dropped]:   # a rule that makes no group is checked too, as validate checks it
        check_support(scaled, entry.qualname, group.multipliers, group.rule, errors)
        group_options(entry, group, values, errors, path if group.rule == "default" else group.rule)
    check_group_keys(entry, [g for g in [*groups, *dropped] if g.rule != "default"], errors, rules_path,
                     rest=[n or f"parameter {i}" for g in groups if g.rule == "default"
                           for i, n in enumerate(g.names or [None] * len(g.params))],
                     ruled=bool(param_groups) or dicts is not None)
    if not errors or source is not None:   # with other errors, its own (a layer pattern, no_weight_decay()) only
        groups = apply_settings(groups, settings, values, scaled, source, errors, path,
                                whole=scope.source if scope is not None else None, at=at)
    _check_params(entry, groups, errors, path)
    _check_steppable(entry, values, groups, errors, path)
    errors.raise_if_any()
    plan = OptimizerPlan(entry, values, groups, grouped, frozen=list(source.frozen) if source else [], notes=notes)
    plan.dicts = _torch_dicts(entry, groups, values, grouped, errors, path, rules_path)
    errors.raise_if_any()
    return plan


#: whether optreg run's training loop (optreg.train) steps what is planned: `run_loop()`
_RUN_LOOP: ContextVar[bool] = ContextVar("optreg_run_loop", default=False)


@contextmanager
def run_loop() -> Iterator[None]:
    """Plan inside this block for optreg run's training loop: an optimizer whose limits keep that loop from stepping
    it (`Limits.loop_refusal`) is refused."""
    token = _RUN_LOOP.set(True)
    try:
        yield
    finally:
        _RUN_LOOP.reset(token)


def check_limits(entry: Entry, errors: Collector, path: str) -> None:
    """What an entry's declared limits refuse when it is planned (`Limits.refusals`; within `run_loop()`, a step
    that loop cannot drive too), at its name."""
    for refusal in entry.limits.refusals(entry.qualname, _RUN_LOOP.get()) if entry.limits else ():
        errors.add(join_path(path, "name"), refusal)


def check_group_keys(entry: Entry, groups: Sequence[Group], errors: Collector, rules_path: str,
                     rest: Sequence[str] | None, ruled: bool) -> None:
    """A key the entry's limits say every parameter group sets (`Limits.group_keys`: pytorch_optimizer's Muon's
    use_muon), missing: at that key of each rule (or torch-style group dict) in `groups` without it, and at the
    rules for the parameters no rule selects, which form a group without it (`rest`: their names; None: not known
    without the model). `ruled`: whether there are rules (or group dicts) at all; without them every parameter is
    in that group."""
    limits = entry.limits
    for key in limits.group_keys if limits else ():
        said = f"{entry.qualname} {limits.group_key_said(key)}"
        for where in dict.fromkeys(g.rule for g in groups if key not in g.extra):
            errors.add(join_path(where, key), f"required: {said}")
        last = f"{{params: '*', {key}: ...}}"
        if rest is None or ruled and not rest:
            continue
        if ruled:
            errors.add(rules_path, f"{said}; no rule selects {first_few([repr(n) for n in rest], SHOWN_REFUSED)}: "
                                   f"add one that sets {key} for them (a last {last} selects every parameter no "
                                   f"earlier rule does)")
        else:
            errors.add(rules_path, f"{said}; there is no rule to set it: give one per kind of parameter, the last "
                                   f"{last} for every parameter no earlier rule selects")


def model_refusals(entry: Entry, param_groups: Any, settings: Mapping[str, Any], errors: Collector, path: str) -> None:
    """What an optimizer that takes the model refuses whatever the model (validate checks them without one): group
    rules and fine-tuning settings."""
    if hasattr(param_groups, "shape") or param_groups:   # a tensor's truth is ambiguous: given, it is refused
        errors.add(join_path(path, "param_groups"), f"{entry.qualname} updates every trainable parameter of the "
                                                    f"model; it takes no param_groups")
    for key, value in settings.items():
        if value not in (None, False):
            errors.add(join_path(path, key), f"{entry.qualname} takes the whole model; {key} is not supported")


def _model_plan(entry: Entry, model: Any, values: dict[str, Any], param_groups: Any, settings: Mapping[str, Any],
                errors: Collector, path: str) -> OptimizerPlan:
    """The plan of an optimizer that takes the model itself (MindSpore thor hooks its layers): a Module, no group
    rules or fine-tuning settings; one group of its trainable parameters, as the implementation builds it."""
    import torch

    if not isinstance(model, torch.nn.Module):
        errors.add(join_path(path, "params"), f"{entry.qualname} takes the model (a torch.nn.Module), whose layers "
                                              f"it hooks, not parameters; got {type(model).__name__}")
    model_refusals(entry, param_groups, settings, errors, path)
    errors.raise_if_any()
    try:
        source = collect(model)
    except ConfigError as exc:
        errors.extend(exc, prefix=path)
        errors.raise_if_any()
    groups = from_rules(source.named, [], errors, join_path(path, "param_groups"), source=source)
    groups = apply_settings(groups, {}, values, scaled_options(option_names(entry)), source, errors, path)
    errors.raise_if_any()
    return OptimizerPlan(entry, values, groups, False, frozen=list(source.frozen), model=model)


def _check_params(entry: Entry, groups: list[Group], errors: Collector, path: str) -> None:
    if entry.single_group and len(groups) > 1:
        errors.add(join_path(path, "param_groups"), f"{entry.qualname} takes one parameter group, got {len(groups)}")
    if entry.accepts:
        accepts, requirement = entry.accepts
        refused, said = [], []
        for group in groups:
            for i, p in enumerate(group.params):
                if not accepts(p):
                    who = repr(group.names[i]) if group.names else f"parameter {i}"
                    placements = getattr(p, "placements", None)   # a DTensor: its sharding says more than its shape
                    refused.append((group.names[i] if group.names else None, p))
                    said.append(f"{who} is a DTensor of shape {tuple(p.shape)} placed {tuple(placements)}"
                                if placements else f"{who} has shape {tuple(p.shape)}")
        if refused:   # one error, the first few named: a model's hundred biases are one problem
            errors.add(join_path(path, "params"), f"{requirement}; {first_few(said, SHOWN_REFUSED)}: "
                                                  f"{route_hint(refused)}")


#: parameters an optimizer refuses that its error names (`_check_params`)
SHOWN_REFUSED = 3


def route_hint(refused: Sequence[tuple[str | None, Any]]) -> str:
    """What to add to a config whose optimizer cannot take these (name, parameter) pairs (Muon: 2-D, held whole): a
    rule that routes them to another optimizer, `max_ndim: 1` where they are all vectors (biases, norms), else one
    naming them (a 3-D token, a 4-D kernel, a sharded matrix: `max_ndim: 1` would leave them)."""
    names = [name for name, _ in refused]
    vectors = all(p.dim() <= 1 and getattr(p, "placements", None) is None for _, p in refused)
    rule = "max_ndim: 1" if vectors or None in names else \
        f"params: [{', '.join(names[:SHOWN_REFUSED])}{', ...' if len(names) > SHOWN_REFUSED else ''}]"
    return (f"route {'it' if len(refused) == 1 else 'them'} to another optimizer with a param_groups rule, e.g. "
            f"{{{rule}, optimizer: {{name: AdamW}}}}")


CAPTURABLE_DEVICES = ("cuda", "xpu", "hpu", "privateuseone", "xla")   # torch.optim's list for capturable=True


def _check_steppable(entry: Entry, values: Mapping[str, Any], groups: list[Group], errors: Collector,
                     path: str) -> None:
    """Flags torch's optimizers accept when built but refuse in the first step() with these parameters."""
    if not getattr(entry.resolve(), "__module__", "").startswith("torch."):
        return
    checks = (
        ("differentiable", lambda p: p.is_leaf and p.requires_grad,
         "differentiable=True updates the parameters with autograd recording, which leaf tensors that require grad "
         "refuse (torch's step() raises); pass non-leaf tensors or set differentiable: false"),
        ("capturable", lambda p: p.device.type not in CAPTURABLE_DEVICES,
         f"capturable=True needs parameters on {', '.join(CAPTURABLE_DEVICES)} (torch's step() asserts it); "
         f"these are on another device"),
    )
    for option, bad, message in checks:
        if option == "differentiable" and values.get("fused"):
            continue  # torch refuses fused + differentiable when it is built (a "refused the configuration")
        for group in groups:
            on = group.options.get(option, values.get(option))
            if on is True and any(bad(p) for p in group.params):
                where = path if group.rule == "default" else group.rule
                errors.add(join_path(where, option) if option in group.options else join_path(path, option),
                           message)
                break


def plain_arguments(arguments: Mapping[str, Any], kind: str | None = None) -> dict[str, Any]:
    """A Python call's `arguments` with OmegaConf containers (a Hydra app's config nodes: `**cfg.optimizer`,
    `cfg.scheduler`) as the plain dicts and lists build() reads a DictConfig as, interpolations resolved; a `???` or
    an interpolation that does not resolve is an error at its key (support.container_from_omegaconf). With `kind`,
    the arguments are the options of that section, read as build() reads it: without Hydra's instantiate keys
    (`_target_` of optreg's builder, which a shipped group file carries; another `_target_` is refused)."""
    out = dict(arguments)
    for key, value in arguments.items():
        if type(value).__module__.startswith("omegaconf"):
            from optreg.integrations.hydra.support import container_from_omegaconf

            try:
                out[key] = container_from_omegaconf(value)
            except ConfigError as exc:
                raise exc.prefixed(key) from None
    return out if kind is None else without_builders(out, kind)


def without_builders(section: Any, kind: str, path: str = "") -> Any:
    """A Python call's section of `kind` (its options, a spec mapping or a list of specs) without Hydra's
    instantiate keys, as build() reads a section (support.strip_builders)."""
    from optreg.integrations.hydra.support import strip_builders

    return strip_builders(section, kind, path)


class _ByKeyword:
    """The default of an argument that a call may give positionally or by keyword (`BY_KEYWORD`)."""

    def __repr__(self) -> str:
        return "<by keyword>"


#: an argument not given positionally: `configure_optimizer(params=model.parameters(), **cfg["optimizer"])`
BY_KEYWORD: Any = _ByKeyword()


def keyword_argument(given: Any, key: str, kwargs: dict[str, Any], errors: Collector, required: str) -> Any:
    """The argument `key` of a Python call: `given` positionally, else popped from the keyword arguments `kwargs`
    (a Hydra node's `**cfg`, `instantiate(..., params=...)`); neither is an error at `key` with `required`, the
    words of what is absent (then BY_KEYWORD is returned). Beside a positional one, the keyword stays an option
    (a Model Zoo section's `params:`, its tag rules, in the cerebras dialect; otherwise an unknown option)."""
    if given is BY_KEYWORD:
        given = kwargs.pop(key, BY_KEYWORD)
        if given is BY_KEYWORD:
            errors.add(key, f"required: {required}")
    return given


def configure_optimizer(optimizer_type: str = BY_KEYWORD, params: Any = BY_KEYWORD, /, *, dialect: str | None = None,
                        unknown_keys: UnknownKeys = "error", **kwargs: Any):
    """Build an optimizer by name: `configure_optimizer("adamw", model, lr=3e-4, param_groups=[...])`.

    `params` is what torch accepts (tensors or group dicts) or a Module / named_parameters(), which
    `param_groups` rules (glob patterns over names) need. Unknown keys raise, or warn and are dropped
    with unknown_keys="warn" (Cerebras' lenient behaviour). Both may be keywords, the name as a section writes it
    (`name`, or `type`, `optimizer_type`): `configure_optimizer(params=model.parameters(), **cfg["optimizer"])`,
    or a Hydra node `_target_: optreg.configure_optimizer` instantiated with `params=`.
    """
    if unknown_keys not in ("error", "warn"):
        raise ConfigError(f"must be 'error' or 'warn', got {show(unknown_keys)}", "unknown_keys")
    twice = Collector()
    params = keyword_argument(params, "params", kwargs, twice, "the parameters to optimize (a Module, its "
                                                               "named_parameters(), tensors or group dicts)")
    kwargs = plain_arguments(kwargs, OPTIMIZER)
    check_input(kwargs)
    if optimizer_type is not BY_KEYWORD:
        named_twice(twice, optimizer_type, kwargs)
    elif name_key(twice, kwargs, "", "the optimizer", "the optimizer's name"):
        optimizer_type = kwargs.pop("name")
    twice.raise_if_any()
    entry = REGISTRY.lookup(OPTIMIZER, optimizer_type, dialect, path="name")
    extras: list[dict[str, Any]] = []
    call = REGISTRY.dialect(entry.dialect).optimizer_call
    if call is not None:   # the framework's own reading of these arguments (Model Zoo 2.0-2.3's call)
        params, kwargs, extras = call(entry, params, kwargs, unknown_keys)
    param_groups = kwargs.pop("param_groups", None)
    plan = plan_optimizer(optimizer_type, params, dialect=dialect, unknown_keys=unknown_keys,
                          param_groups=param_groups, options=kwargs)
    for note in plan.notes:   # as build() and validate give them
        warnings.warn(ConfigWarning(note), stacklevel=2)
    optimizer = plan.build()
    for group, extra in zip(optimizer.param_groups, extras):
        group.update(extra)
    return optimizer


# ---------------------------------------------------------------------------------------------------
# scheduler
# ---------------------------------------------------------------------------------------------------
def _unschedulable(implementation: Any, momenta: Sequence[Any]) -> frozenset[str]:
    first_party = not getattr(implementation, "__module__", "").startswith("torch.")
    zero = any(isinstance(m, (int, float)) and not isinstance(m, bool) and m == 0 for m in momenta)
    return frozenset({"momentum"}) if first_party and zero else frozenset()


@dataclass
class Context:
    """What a scheduler plan may check against: the optimizer's group count and option names, and the keys
    it cannot have scheduled (see OptimizerPlan.unschedulable)."""

    n_groups: int
    option_names: frozenset[str]
    dialect: str | None = None
    known_groups: bool = True
    known_options: bool = True
    unschedulable: frozenset[str] = frozenset()
    run_steps: int | None = None           # the run length, when known (optreg.config.run)
    steps_per_epoch: int | None = None
    counts_scale: int = 1                  # step counts below a spec that converts epochs to iterations: times E
    top: bool = True                       # the top-level scheduler spec (warmup and a length from the run)
    final_run: bool = True                 # False while reading a file: build(total_steps=, steps_per_epoch=) may
                                           # still give what the run lacks
    run_invalid: bool = False              # the run's section has errors: a length it would give is not missing
    stage_of: tuple[str, str | None, bool] | None = None   # a nested spec's: its parent's name, the key the parent
                                                            # drives (None: not a key), whether the parent checks
                                                            # its stages' keys itself
    parts: tuple[tuple[str, frozenset[str]], ...] = ()     # a composite's: each part's optimizer and its groups'
                                                            # keys (option_names holds those they share)

    def below(self, scale: int, parent: str, key: str | None, checked: bool = False) -> "Context":
        """The context of a stage of `parent` (a name), which drives `key` (and checks the keys its stages drive
        itself when `checked`), whose step counts are multiplied by `scale`."""
        return dataclasses.replace(self, top=False, counts_scale=scale, stage_of=(parent, key, checked))


NESTED = ("schedulers", "scheduler")       # options that hold nested scheduler specs
TORCH_UNNESTABLE = ("ChainedScheduler", "SequentialLR")   # torch's SequentialLR cannot step these at a milestone
COMBINATORS = ("sequential", "chained")    # optreg's own; `SequentialLR` etc. are the dialects' classes

#: what optreg's combinators do (`optreg show sequential`, the JSON Schema)
COMBINATOR_DOCS = {
    "sequential": "Stages one after another (local steps; restart: global on request); milestones derived from "
                  "the stages' lengths when omitted.",
    "chained": "Every stage at the same step; factors multiply.",
}

#: each combinator's own keys beside a scheduler's training-loop keys (`pop_loop`: by_epoch, warmup ...)
COMBINATOR_KEYS = {
    "sequential": ("schedulers", "milestones", "restart", "key", "last_epoch"),
    "chained": ("schedulers", "key", "last_epoch"),
}


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
    loop: Any = None                   # by_epoch, convert_to_iter_based, warmup (optreg.core.loop.Loop)
    #: of a spec that a scheduler form read: own-form path -> the source's (ReadSpec.at), where its errors are put
    #: and the schedule linter's notes (optreg.core.lint.lint_schedule)
    written: dict[str, str] = field(default_factory=dict)
    label: str | None = None           # what messages call a plan of no entry (a number: `number_plan`)
    notes: list[str] = field(default_factory=list)   # warnings of its planning: a name another dialect spells
                                                      # (registry.homonym_note), at the spec's name

    def planning_notes(self) -> list[str]:
        """The notes of its planning and of its stages', in order."""
        return [*self.notes, *(n for child in self.children for n in child.planning_notes())]

    @property
    def length(self) -> int | None:
        if self.schedule is not None:
            return self.schedule.length
        if self.children and "milestones" not in self.values:   # torch's ChainedScheduler: stages side by side
            lengths = [c.length for c in self.children]
            return None if None in lengths else max(lengths)
        if self.children:   # torch's SequentialLR: to its last milestone, then its last stage
            try:
                return self.closed_form("").length
            except ConfigError:   # a stage with no closed form here (cycle_momentum): not known
                return None
        return self.values.get(self.entry.length) if self.entry and self.entry.length else None

    @property
    def name(self) -> str:
        return self.label or (self.entry.name if self.entry else type(self.schedule).__name__)

    def closed_form(self, path: str, around: tuple[str, str] | None = None, lr_alone: bool = False):
        """This plan as a Schedule (torch rows through their closed forms), for composing and plotting. `around`:
        (why it is composed, how not to), for the refusal of a torch class that also cycles the momentum (as a stage,
        by default); `lr_alone`: the closed form of its lr all the same (what the linter reads of the lr)."""
        if self.schedule is not None:
            return self.schedule
        form = REGISTRY.dialect(self.entry.dialect).closed_form(self.entry.name)
        if form is None:
            raise ConfigError(f"{self.entry.qualname} has no closed form and cannot be composed here", path)
        kwargs = {k: v for k, v in to_target_kwargs(self.entry, self.values).items() if k != "last_epoch"}
        if kwargs.get("cycle_momentum") and not lr_alone:   # torch's class cycles the momentum too; its form: the lr's
            why, undo = around or ("as a stage", "give it as a scheduler of its own")
            raise ConfigError(f"{self.entry.qualname} cycles the momentum as well as the lr (cycle_momentum: true, "
                              f"its default), but {why} it runs as a closed form of the lr alone, which would leave "
                              f"the momentum constant: set cycle_momentum: false (the momentum stays the optimizer's), "
                              f"or {undo}", path)
        if lr_alone or kwargs.get("cycle_momentum") is False:   # lr alone: the momentum options have no effect
            kwargs = {k: v for k, v in kwargs.items() if k not in ("cycle_momentum", "base_momentum", "max_momentum")}
        if self.children:
            kwargs["schedulers"] = [c.closed_form(join_path(join_path(path, "schedulers"), i), lr_alone=lr_alone)
                                    for i, c in enumerate(self.children)]
        try:
            return form(**kwargs)
        except ConfigError:
            raise
        except TypeError as exc:  # an option the closed form does not model (cycle_momentum, ...)
            raise ConfigError(f"{self.entry.qualname} has no closed form with these options ({str(exc)[:80]})",
                              path) from None
        except (ArithmeticError, ValueError) as exc:
            raise ConfigError(f"{self.entry.qualname} cannot be computed with these values ({str(exc)[:80]})",
                              path) from None

    def build(self, optimizer):
        if self.schedule is not None:
            from optreg.schedules.adapter import ScheduleLR

            per_group = getattr(self.schedule, "per_group", None)   # a schedule of its own for each group
            schedule = [per_group(g) for g in optimizer.param_groups] if per_group else self.schedule
            driver = getattr(self.schedule, "adapter_class", None) or ScheduleLR   # one that drives more than its key
            return driver(optimizer, schedule, key=self.key, last_epoch=self.last_epoch)
        cls = self.entry.resolve()
        kwargs = to_target_kwargs(self.entry, self.values)
        if self.children:
            kwargs["schedulers"] = [child.build(optimizer) for child in self.children]
        try:
            if self.children and _target_params(self.entry)[0] == "schedulers":  # ChainedScheduler(schedulers, ...)
                return cls(optimizer=optimizer, **kwargs)
            return cls(optimizer, **kwargs)
        except (ValueError, TypeError, KeyError, RuntimeError) as exc:
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(f"{self.entry.qualname} refused the configuration: {exc}",
                              refused_at(self.entry, self.values, exc)) from exc


def _target_params(entry: Entry) -> list[str]:
    import inspect

    return list(inspect.signature(entry.resolve()).parameters)


def _is_engine(entry: Entry) -> bool:
    """Closed-form schedules are wrapped by the adapter; torch scheduler classes are built as they are."""
    from torch.optim.lr_scheduler import LRScheduler

    target = entry.resolve()
    return not (isinstance(target, type) and issubclass(target, LRScheduler))


def foreign_form(spec: Any):
    """The declared scheduler form (a dialect's other spelling, e.g. Cerebras' `{LinearLR: {...}}`) that claims
    `spec`, or None."""
    return next((form for dialect in REGISTRY.declared() for form in dialect.scheduler_forms if form.claims(spec)),
                None)


def _stage_item(spec: Any) -> bool:
    """A `{Name: {...}}` item (Cerebras' current form of one scheduler)."""
    return isinstance(spec, Mapping) and len(spec) == 1 and "scheduler" not in spec and \
        next(iter(spec)) not in NAME_KEYS and isinstance(next(iter(spec.values())), (Mapping, type(None)))


def _normal_spec(spec: Any, path: str, errors: Collector) -> dict[str, Any] | None:
    # One rule for a list, from Python and YAML alike: a sequential schedule of its items, whatever their form
    # ({name: ...} specs or {Name: {...}} items); only a list of legacy Cerebras items ({scheduler: ..., steps})
    # is read as Cerebras reads it (milestones from the items' steps).
    if isinstance(spec, (list, tuple)) and spec and all(_stage_item(s) for s in spec):
        return {"name": "sequential", "schedulers": list(spec)}
    form = foreign_form(spec)
    if form is not None:
        try:
            return form.read(spec, path=path)
        except ConfigError as exc:
            errors.extend(exc)
            return None
    if isinstance(spec, str):
        return {"name": spec}
    if isinstance(spec, (list, tuple)):
        return {"name": "sequential", "schedulers": list(spec)}
    if not isinstance(spec, Mapping):
        errors.add(path, f"expected a scheduler spec (a mapping with name:), got {show(spec)}")
        return None
    spec = dict(spec)
    return spec if name_key(errors, spec, path, "the scheduler", "the scheduler's name") else None


def _pop_adapter_options(spec: dict[str, Any], plan: SchedulerPlan, errors: Collector, path: str, context: Context,
                         own_key: str | None = None) -> str | None:
    """`key` and `last_epoch` (alias `last_step`) belong to the adapter of every closed-form schedule; a schedule
    that drives one key only (`own_key`: Cerebras' weight-decay schedulers) takes that key and refuses another;
    a stage's key is its combinator's (`check_stage_key`). Returns the key the spec's own stages drive: its own
    when it gives one, else its combinator's; None when that is not a key (reported once, not for each stage)."""
    written = "key" in spec
    plan.key = spec.pop("key", own_key or "lr")
    check_key(plan.key, own_key, plan.name, written, context, path, errors)
    for alias in sorted(synonyms("last_epoch")):
        if alias in spec:
            plan.last_epoch = spec.pop(alias)
            if (wrong := models.number_message(plan.last_epoch, FRESH, integer=True)) is not None:
                errors.add(join_path(path, alias), wrong)
    if plan.key not in KEYS:
        return None
    return plan.key if written or own_key or context.stage_of is None else context.stage_of[1]


def check_key(key: Any, own_key: str | None, name: str, written: bool, context: Context, path: str,
              errors: Collector) -> None:
    """The one rule of a schedule's `key`: one of KEYS (did-you-mean), the only key a schedule that drives one
    key drives (`own_key`: Cerebras' weight-decay schedules; a torch class at the top, which drives the lr), and
    a stage's its combinator's (`check_stage_key`)."""
    if key not in KEYS:
        errors.add(join_path(path, "key"), f"must be one of {', '.join(KEYS)}, got {show(key)}",
                   closest(key, KEYS) if isinstance(key, str) else None)
    elif own_key is not None and key != own_key:
        errors.add(join_path(path, "key"), f"{name} drives {own_key!r} only, got {show(key)}")
    elif written or own_key:
        check_stage_key(key, name, written, context, path, errors)


def check_stage_key(key: str, name: str, written: bool, context: Context, path: str, errors: Collector) -> None:
    """The one rule of a key in a nested spec: a stage of a combinator (`sequential`, `chained`, a dialect's
    SequentialLR, ...) drives its combinator's key, so a stage's `key` (written, or else the only key the stage
    drives) that differs from it is an error, at the stage's `key` (at the stage when it is not written; a
    combinator with a rule of its own on the keys of its stages' classes, Cerebras', reports that case)."""
    if context.stage_of is None or context.stage_of[1] in (None, key) or context.stage_of[2] and not written:
        return
    parent, driven, _ = context.stage_of
    own = "" if written else f"{name} drives {key!r} only; "
    errors.add(join_path(path, "key") if written else path,
               f"{own}a stage of {parent} drives {parent}'s key ({driven!r}), not a key of its own: to schedule {key} "
               f"with this {parent}, write key: {key} on the {parent} itself and on none of its stages; to schedule "
               f"{driven} and {key} side by side, use mmengine.ParamSchedulers (each of its param_scheduler entries "
               f"drives its own key)")


def _plan_children(spec: Mapping[str, Any], context: Context, path: str, dialect: str | None,
                   errors: Collector, parent: str, key: str | None, scale: int = 1,
                   checked: bool = False) -> list[SchedulerPlan]:
    """The plans of the nested specs of `parent` (its name), whose stages drive `key` (`Context.below`)."""
    children = []
    context = context.below(scale, parent, key, checked)
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
    loop = pop_loop(spec, context, path, errors, kind)
    scale = counts_scale(loop, context)
    allowed = {*COMBINATOR_KEYS[kind], *synonyms("last_epoch")}
    unknown = [key for key in spec if key not in allowed]
    for i, key in enumerate(unknown):
        errors.add(join_path(path, key_text(key)), f"unknown option of {kind}",
                   closest(key, sorted(allowed)) if i < 50 else None)
    plan = SchedulerPlan(None, {}, loop=loop)
    key = _pop_adapter_options(spec, plan, errors, path, context)
    raw = spec.get("schedulers")
    if not isinstance(raw, list) or not raw:
        errors.add(join_path(path, "schedulers"), "expected a non-empty list of scheduler specs")
    else:
        plan.children = _plan_children(spec, context, path, dialect, errors, kind, key, scale)
    restart = spec.get("restart", "local")
    milestones = spec.get("milestones")
    if scale != 1 and isinstance(milestones, list):
        milestones = scale_counts({"milestones": milestones}, scale)["milestones"]
    modes = ("local", "global")
    if not (restart in modes or isinstance(restart, list) and all(r in modes for r in restart)):
        errors.add(join_path(path, "restart"), f"must be 'local', 'global' or a list of them, got {show(restart)}")
    errors.raise_if_any()
    torch_only = all(c.entry is not None and c.schedule is None and c.entry.dialect == "torch"
                     and c.entry.name not in TORCH_UNNESTABLE for c in plan.children)
    if torch_only and restart == "local" and plan.key == "lr" and plan.last_epoch == -1:
        entry = REGISTRY.lookup(SCHEDULER, "SequentialLR" if kind == "sequential" else "ChainedScheduler",
                                default="torch")
        raw_values = {"schedulers": raw, **({"milestones": milestones} if kind == "sequential" else {})}
        try:
            plan.entry, plan.values = entry, validate_options(entry, raw_values, path=path)
        except ConfigError as exc:
            errors.extend(exc)
        errors.raise_if_any()
        _check_context(plan, context, errors, path)
        finish(plan, loop, context, path, errors)
        errors.raise_if_any()
        return plan
    from optreg.schedules.engine import Chained, Sequential

    around = (f"in this {kind}, which is not torch's own (it has a stage of another dialect, a key or restart: "
              f"global)", "give it as a scheduler of its own")
    try:   # the stages' problems at their paths; the combinator's at its options' (relative paths)
        stages = [c.closed_form(join_path(join_path(path, "schedulers"), i), around)
                  for i, c in enumerate(plan.children)]
    except ConfigError as exc:
        errors.extend(exc)
        errors.raise_if_any()
    try:
        plan.schedule = Sequential(stages, milestones, restart) if kind == "sequential" else Chained(stages)
    except ConfigError as exc:
        errors.extend(exc, prefix=path)
    except (ArithmeticError, ValueError, TypeError) as exc:
        errors.add(join_path(path, "schedulers"), f"{kind} cannot be computed with these values ({str(exc)[:80]})")
    if not errors:
        _check_context(plan, context, errors, path)
        finish(plan, loop, context, path, errors)
    errors.raise_if_any()
    return plan


def plan_scheduler(spec: Any, context: Context, path: str = "", dialect: str | None = None) -> SchedulerPlan:
    """Validate a scheduler spec (recursively for nested ones); ConfigError lists every problem, a spec that a
    scheduler form read (`ReadSpec`) at the form's own paths."""
    errors = Collector()
    read = spec if isinstance(spec, ReadSpec) else None
    spec = _normal_spec(spec, path, errors)
    errors.raise_if_any()
    assert spec is not None
    read = spec if isinstance(spec, ReadSpec) else read
    if read is None:
        return _plan_spec(spec, context, path, dialect)
    try:
        plan = _plan_spec(dict(spec), context, path, dialect)
    except ConfigError as exc:
        from optreg.config.translate import source_paths

        raise source_paths(exc, read.at(path)) from None
    plan.written = read.at(path)
    return plan


def _plan_spec(spec: dict[str, Any], context: Context, path: str, dialect: str | None) -> SchedulerPlan:
    """`plan_scheduler` of a spec in optreg's form (`_normal_spec`)."""
    errors = Collector()
    # the spec's own dialect: asks for it (a prefix naming another is an error); the parent's or the context's is a
    # default for a name without a prefix
    own, dialect = spec.pop("dialect", None), dialect or context.dialect
    if isinstance(spec["name"], str) and spec["name"].strip().lower() in COMBINATORS:
        return _plan_combinator(spec, context, path, own or dialect)
    written = spec.pop("name")
    entry = REGISTRY.lookup(SCHEDULER, written, own, path=join_path(path, "name"), default=dialect)
    loop = pop_loop(spec, context, path, errors, entry.name)
    plan = SchedulerPlan(entry, {}, loop=loop)
    homonym = homonym_note(entry, written) if own is None and "." not in str(written) else None
    if homonym is not None:   # another dialect's name, without its prefix (HF's `constant`)
        plan.notes.append(f"{join_path(path, 'name')}: {homonym}")
    check_entry(entry, loop, path, errors)
    own_loop = [k for k, on in (("by_epoch", loop.by_epoch), ("convert_to_iter_based", loop.convert),
                                ("warmup", loop.warmup is not None)) if on]
    if own_loop and getattr(entry.resolve(), "reads_run", False):   # its entries' own windows (MMEngine's list)
        errors.add(join_path(path, own_loop[0]), f"{entry.qualname} counts its own windows: give by_epoch and "
                                                 f"convert_to_iter_based in its entries, a warmup as an entry "
                                                 f"(LinearLR on its window)")
    fill_length(entry, spec, loop, context, path, errors)
    scale = counts_scale(loop, context)
    engine = _is_engine(entry)
    key = context.stage_of[1] if context.stage_of else "lr"   # a torch class drives the lr, or its parent's key
    if engine:
        key = _pop_adapter_options(spec, plan, errors, path, context,
                                   getattr(entry.resolve(), "param_group_key", None))
    elif "key" in spec:   # a torch class drives the lr (torch's own), or as a stage its combinator's key
        check_key(spec.pop("key"), None if context.stage_of else "lr", entry.qualname, True, context, path, errors)
    if any(option in option_names(entry) for option in NESTED):
        plan.children = _plan_children(spec, context, path, entry.dialect, errors, entry.qualname, key, scale,
                                       getattr(entry.resolve(), "checks_stage_keys", False))
    try:
        plan.values = validate_options(entry, spec, path=path)
        if scale != 1:
            plan.values = scale_counts(plan.values, scale, skip=(loop.filled,) if loop.filled else ())
        own_warmup_errors(plan, path, errors)
    except ConfigError as exc:
        errors.extend(run_length_said(exc, loop, path))
    if not errors and engine:
        kwargs = to_target_kwargs(entry, plan.values)
        children = iter(plan.children)
        for option in NESTED:
            target = entry.target_name(option)
            if kwargs.get(target) is not None:
                around = (f"as a stage of {entry.qualname}", "give it as a scheduler of its own")
                kwargs[target] = ([next(children).closed_form(join_path(join_path(path, option), i), around)
                                   for i in range(len(kwargs[target]))] if option == "schedulers"
                                  else next(children).closed_form(join_path(path, option), around))
        if getattr(entry.resolve(), "reads_run", False):   # a schedule of the run's epochs and length
            kwargs["run"] = context
        try:
            plan.schedule = entry.resolve()(**kwargs)
        except ConfigError as exc:   # the closed form's own problems (its paths below `path`)
            errors.extend(run_length_said(exc, loop, ""), prefix=path)
        except (ArithmeticError, ValueError) as exc:  # the closed form cannot be computed with these values
            # at the root of a Python call the section has no path of its own: name it as a config would
            errors.add(path or "scheduler", f"{entry.qualname} cannot be computed with these values ({str(exc)[:80]})")
        if getattr(plan.schedule, "adapter_class", None) is not None and (not context.top or plan.key != "lr"):
            errors.add(join_path(path, "cycle_momentum"), f"{entry.qualname} also drives the optimizer's betas, "
                                                          f"so it runs alone as the lr's scheduler; set "
                                                          f"cycle_momentum: false to nest it or drive another key")
    if not errors:
        _check_context(plan, context, errors, path)
        finish(plan, loop, context, path, errors)
    errors.raise_if_any()
    return plan


def _check_context(plan: SchedulerPlan, context: Context, errors: Collector, path: str) -> None:
    values = plan.values
    # Resuming (last_epoch >= 0) reads the initial values a scheduler left in the groups; a fresh optimizer has
    # none, and torch / the adapter would refuse only after the optimizer exists.
    last_epoch = plan.last_epoch if plan.entry is None or plan.schedule is not None else values.get("last_epoch")
    initial = INITIAL_KEYS.get(plan.key if plan.schedule is not None else "lr", "initial_lr")
    if isinstance(last_epoch, int) and last_epoch != -1 and context.known_options and \
            initial not in context.option_names:
        errors.add(join_path(path, "last_epoch"), f"resuming at last_epoch={last_epoch} needs {initial!r} in every "
                                                  f"parameter group (what a scheduler leaves there); build with "
                                                  f"last_epoch=-1 and load_state_dict() instead")
    for name in PER_GROUP:
        value = values.get(name)
        if isinstance(value, list) and (context.known_groups and len(value) != context.n_groups or not value):
            count = f" ({context.n_groups})" if context.known_groups else ""   # none is too few for any model's
            errors.add(join_path(path, name), f"expected one value per parameter group{count}, got {len(value)}")
        if isinstance(value, list) and plan.schedule is not None:
            errors.add(join_path(path, name), "per-group lists are not supported by closed-form schedules; "
                                              "use one value (or a torch-dialect scheduler)")
    own_momentum = getattr(plan.schedule, "adapter_class", None) is not None   # cycles betas as its framework does
    if values.get("cycle_momentum") and not own_momentum and context.known_options and \
            not ({"momentum", "betas"} & context.option_names):
        have = dict.fromkeys(f"{name}: {' and '.join(sorted({'momentum', 'betas'} & keys)) or 'neither'}"
                             for name, keys in context.parts)
        errors.add(join_path(path, "cycle_momentum"), (
            f"the composite's parts share neither momentum nor betas ({', '.join(have)}), one of which it cycles in "
            f"every group" if context.parts else "the optimizer has neither momentum nor betas") +
            "; set cycle_momentum: false")
    if context.known_options and plan.key != "lr" and plan.key.split("[")[0] not in context.option_names:
        key = plan.key.split("[")[0]
        lacking = dict.fromkeys(name for name, keys in context.parts if key not in keys)
        owner = f"{' and '.join(lacking)} (part of the composite)" if lacking else "the optimizer"
        errors.add(join_path(path, "key"), f"{owner} has no {key!r} to schedule")
    drives_momentum = plan.key == "momentum" or (values.get("cycle_momentum") and not own_momentum and
                                                 "momentum" in context.option_names)
    if drives_momentum and "momentum" in context.unschedulable:
        errors.add(join_path(path, "key" if plan.key == "momentum" else "cycle_momentum"),
                   "the optimizer was built with momentum 0, so it has no momentum buffer to schedule; build it "
                   "with momentum > 0")
    for i, child in enumerate(plan.children):
        if child.entry is not None and on_metric(child.entry.name):
            errors.add(join_path(join_path(path, "schedulers"), i), "ReduceLROnPlateau steps on a metric and "
                                                                  "cannot be nested")
        elif plan.entry is not None and plan.entry.dialect == "torch" and plan.entry.name == "SequentialLR" and \
                child.entry is not None and child.entry.dialect == "torch" and child.entry.name in TORCH_UNNESTABLE:
            errors.add(join_path(join_path(path, "schedulers"), i),
                       f"torch's SequentialLR cannot hold a {child.entry.name} (torch raises NotImplementedError "
                       f"at the milestone); use optreg's `sequential`")
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


#: |value| a schedule may give: MAX_FLOAT times a factor of MAX_FLOAT, still float32-safe in a step
MAX_SCHEDULED = 1e18


def check_schedule(plan: SchedulerPlan, bases: Sequence[float] | None, default: float | None,
                   path: str = "") -> list[ErrorItem]:
    """Values a schedule gives the groups it will drive, at the steps a run starts with (0-16) and then at powers
    of two up to ~10^6 (within its length): each must be computable (no overflow, no division by zero), finite,
    within ±MAX_SCHEDULED, and a beta within [0, 1). Problems the steps would otherwise meet later, found before
    anything is built, at the paths its planning errors are at (a scheduler form's: `SchedulerPlan.written`).
    `bases`: the groups' values of the key (None when unknown: nothing to check)."""
    return at_written(plan, _value_problems(plan, bases, default, path))


def at_written(plan: SchedulerPlan, problems: list[ErrorItem]) -> list[ErrorItem]:
    """`problems` of `plan`, at optreg's own paths, at the keys its spec is written at: a scheduler form's
    (`SchedulerPlan.written`: Cerebras' `scheduler.CosineDecayLR`), as its planning errors are."""
    if problems and plan.written:
        from optreg.config.translate import source_paths

        return source_paths(ConfigError(problems), plan.written).errors
    return problems


def _value_problems(plan: SchedulerPlan, bases: Sequence[float] | None, default: float | None,
                    path: str) -> list[ErrorItem]:
    """`check_schedule`'s problems at optreg's own paths."""
    from optreg.config.expr import CHECK_STEPS

    schedule = plan.schedule
    if schedule is None:
        try:
            schedule = plan.closed_form(path)
        except ConfigError:   # a torch class without a closed form (ReduceLROnPlateau): torch's own numbers
            return []
    key = plan.key if plan.schedule is not None else "lr"
    nominal = not bases
    if bases:
        try:
            bound = schedule.bind(list(bases), default)
        except ConfigError as exc:
            return ConfigError(exc.errors).prefixed(path).errors
        except (ArithmeticError, ValueError) as exc:
            return [ErrorItem(path, f"{plan.name} gives no usable {key}: it cannot be bound to the groups' values "
                                    f"({str(exc)[:80]})")]
    else:  # the groups' values are not known here (a per-step list, a callable): the schedule's own arithmetic,
        bases = [1.0]  # on a nominal base of 1
        try:
            bound = schedule.bind(bases, None)
        except (ConfigError, ArithmeticError, ValueError):
            bound = schedule
    try:
        length = schedule.length
    except (ArithmeticError, ValueError) as exc:
        return [ErrorItem(path, f"{plan.name} gives no usable {key}: its length cannot be computed ({str(exc)[:60]})")]
    # products over steps (MultiplicativeLR) cost a step each: the samples stop at 4096; around the end of a
    # schedule with a length too (a run goes on past it), from step 0 (a length may be 0)
    steps = [s for s in CHECK_STEPS if s <= 4096] + \
        ([s for s in (length - 1, length, length + 1) if s >= 0] if length is not None and length <= 1 << 20 else [])
    beta = key.startswith("betas")
    for step in steps:
        for base in bases:
            try:
                value = bound.apply(step, base)
                bad = "" if math.isfinite(value) and abs(value) <= MAX_SCHEDULED else f"({value:g})"
                if not bad and beta and not 0 <= value < 1:
                    bad = f"({value:g}; a beta stays in [0, 1))"
            except ConfigError as exc:
                if nominal:   # a form that needs what only the built groups have (HF's lr_init)
                    return []
                return [ErrorItem(path, f"{plan.name} gives no usable {key} at step {step} "
                                        f"({exc.errors[0].message[:80]})")]
            except (ArithmeticError, ValueError) as exc:
                if str(exc).startswith("Tried to step"):   # torch's OneCycleLR past total_steps: documented
                    break
                bad = f"({str(exc)[:60]})"
            except (AttributeError, TypeError, KeyError):  # a form that needs what only the built groups have
                return []
            if bad:
                return [ErrorItem(path, f"{plan.name} gives no usable {key} at step {step} {bad}")]
    return []


def context_of(optimizer: Any, dialect: str | None = None) -> Context:
    keys = frozenset(optimizer.defaults).union(*(set(g) - {"params"} for g in optimizer.param_groups))
    from optreg.core.composite_optimizer import Composite

    parts: tuple[tuple[str, frozenset[str]], ...] = ()
    if isinstance(optimizer, Composite):   # the keys every part's groups have (AdamW has no momentum)
        parts = tuple((name, frozenset.intersection(*(frozenset(g) - {"params", "optimizer"} for g in
                                                      part.param_groups)))
                      for name, part in zip(optimizer.names, optimizer.parts))
        keys = frozenset.intersection(*(k for _, k in parts))
    momenta = [g.get("momentum") for g in optimizer.param_groups]
    return Context(len(optimizer.param_groups), keys, dialect, unschedulable=_unschedulable(type(optimizer), momenta),
                   parts=parts)


def absolute_key(plan: SchedulerPlan) -> str | None:
    """The option a schedule with absolute values sets itself in every group, whatever the group's own value (one
    value everywhere, or torch's per-group lists: Cerebras', MindSpore's, a `sequential` with such a stage: `lr`,
    or Cerebras' `*WD` weight decay), or None for a schedule of factors of each group's own value (torch, OneFlow,
    HF, timm). A torch class (no closed form in the plan) is absolute where its row says so (OneCycleLR from max_lr,
    CyclicLR from base_lr), or where a stage of its own is (SequentialLR)."""
    if plan.schedule is not None:
        absolute = plan.schedule.values in (ABSOLUTE, MIXED)
    else:
        absolute = getattr(plan.entry, "values", None) == ABSOLUTE or any(absolute_key(c) for c in plan.children)
    return plan.key if absolute else None


def number_plan(number: float) -> SchedulerPlan:
    """A number given as the lr schedule (`configure_lr_scheduler(opt, 0.5)`) as the plan of the schedule it is: one
    absolute lr in every group at every step (Cerebras Model Zoo reads `learning_rate: 0.5` as its ConstantLR), so
    that the checks of a schedule that sets the lr itself read it."""
    return SchedulerPlan(None, {}, schedule=Constant(value=float(number)), label=f"a number ({show(number)})")


def absolute_over_scaled(plan: SchedulerPlan, scaled: Sequence[str], scaled_wd: Sequence[str] = (),
                         path: str = "scheduler") -> list[ErrorItem]:
    """The refusal of an lr schedule with absolute values (Cerebras, MindSpore, a `sequential` with such a stage),
    which sets one lr in every group (or each group's from a per-group list: torch's CyclicLR, OneCycleLR), over
    groups to which `scaled` (groups.scaled_lr_keys: lr_mult, layer_decay, a composite's routing) gave lrs of their
    own; and of an absolute weight-decay schedule (Cerebras' `*WD`) over groups to which `scaled_wd` (no_weight_decay,
    decay_mult) gave weight decays of their own: build checks the plan's groups, configure_lr_scheduler the keys the
    built optimizer keeps (groups.scaled_lr_of); at `path`, where the schedule is given."""
    key = absolute_key(plan)
    undone = {"lr": scaled, "weight_decay": scaled_wd}.get(key) if key else None
    if not undone:
        return []
    noun, kinds = ("lr", "(torch, OneFlow, HF, timm)") if key == "lr" else \
        ("weight decay", "(key: weight_decay on a torch, OneFlow, HF or timm schedule)")
    lists = list(dict.fromkeys(_per_group_lrs(plan))) if key == "lr" else []   # not the same lr in every group
    noun_lists = "list" if len(lists) == 1 else "lists"
    sets = f"an absolute {noun} in each group, from its per-group {noun_lists} {' and '.join(lists)}," if lists \
        else f"an absolute {noun}, the same in every group,"
    instead = f"give each group's lr in the {noun_lists} alone, or " if lists else ""
    return [ErrorItem(path, f"{plan.name} sets {sets} which would undo {' and '.join(undone)}; {instead}use a schedule "
                            f"whose values are factors of each group's {noun} {kinds}")]


def _per_group_lrs(plan: SchedulerPlan) -> list[str]:
    """The lr options of `plan` and of its stages given as per-group lists (CyclicLR's `base_lr: [0.02, 0.01]`)."""
    return [n for n in PER_GROUP if n.endswith("_lr") and isinstance(plan.values.get(n), (list, tuple))] + \
        [n for child in plan.children for n in _per_group_lrs(child)]


def dynamic_lr_conflict(scheduler: str | None, group: int | None = None, number: float | None = None,
                        *, key: str | None = None) -> str:
    """The message of a scheduler (`scheduler`, its name) or of a number (`number`: configure_lr_scheduler(opt, 0.5))
    that would set an lr the optimizer sets per step itself, named by the index of a built optimizer's group
    (`group`) or by the config's key that gives it (`key`: a plan's groups are in another order with a model than
    without)."""
    setter, it, remedy = (f"{scheduler} drives lr", "the scheduler", ", or no scheduler for lr") if scheduler \
        else (f"a number ({show(number)}) sets every group's lr", "the number", "")
    whose = key or f"parameter group {group}'s lr"
    return (f"{setter}, but {whose} is a per-step list or schedule (a dynamic "
            f"learning_rate) that the optimizer sets at every step: {it} would change nothing and the "
            f"groups would report an lr that is not the one applied; give a number as the optimizer's lr{remedy}")


def check_static_lr(optimizer: Any, scheduler: str | None, number: float | None = None,
                    path: str = "scheduler") -> None:
    """A ConfigError (`dynamic_lr_conflict`) when a built optimizer sets some group's lr per step itself (MindSpore's
    dynamic learning_rate: its `lr_schedule(i)`; a wrapper's, MindSpore LARS, is its inner optimizer's), which a
    scheduler or a number given to configure_lr_scheduler would not change."""
    owner = optimizer if hasattr(optimizer, "lr_schedule") else getattr(optimizer, "optimizer", None)
    tables = getattr(owner, "lr_schedule", None)
    dynamic = [i for i in range(len(optimizer.param_groups)) if callable(tables) and tables(i) is not None]
    if dynamic:
        raise ConfigError(dynamic_lr_conflict(scheduler, dynamic[0], number), path)


def configure_lr_scheduler(optimizer: Any = BY_KEYWORD, learning_rate: Any = BY_KEYWORD, /, *,
                           dialect: str | None = None, **kwargs: Any):
    """Build a scheduler for `optimizer` (Cerebras' convention for `learning_rate`).

    `optimizer` may be a keyword; without `learning_rate`, the keywords are the spec
    (`configure_lr_scheduler(optimizer=opt, **cfg["scheduler"])`, a Hydra node `_target_:
    optreg.configure_lr_scheduler` instantiated with `optimizer=`), or `learning_rate=` alone is the argument
    (Cerebras' keyword call).

    - a number: every group's lr is set to it and None is returned (no scheduler object); it is the schedule that
      sets that lr at every step (`number_plan`), and the checks of such a schedule read it; a keyword beside it
      (`dialect`, a schedule's option), which only a scheduler would take, is refused; beside a dialect's keyword
      alone (`adjust_learning_rate`), it is the constant schedule Model Zoo 2.0-2.3 builds of it (cerebras.ConstantLR);
    - refused, by the checks build makes (one each): a number or an lr scheduler over an lr the optimizer sets per
      step itself (`check_static_lr`), a number or an absolute lr schedule over groups whose lrs lr_mult,
      layer_decay or a composite's routing set (`absolute_over_scaled`, with the keys the optimizer keeps:
      groups.scaled_lr_of); over groups with lrs of their own otherwise (torch-style group dicts, a rule's lr), a
      warning that it replaces them (lint.group_lrs_replaced);
    - a scheduler name with its options as kwargs: `configure_lr_scheduler(opt, "StepLR", step_size=10)`;
    - a mapping: one schedule spec `{name: ..., <options>}` (`sequential` / `chained` nest `schedulers:`), with more
      options as kwargs (a key given both in the spec and as a keyword, `dialect` too, is a ConfigError);
    - a list of specs: a sequential schedule whose milestones come from the stages' lengths;
    - `adjust_learning_rate=...` (cerebras.pytorch <= 2.3): the schedule times each group's `adjust_learning_rate`
      (ScalePerParamLR); a trainer-form `{ScalePerParamLR: ...}` or `param_group_tags` is read as Model Zoo 2.10
      reads it.
    """
    errors = Collector()
    optimizer = keyword_argument(optimizer, "optimizer", kwargs, errors, "the optimizer to schedule")
    errors.raise_if_any()
    if not isinstance(getattr(optimizer, "param_groups", None), list):
        raise ConfigError(f"expected a torch optimizer (with param_groups), got {type(optimizer).__name__}",
                          "optimizer")
    wrappers = [(hook, kwargs.pop(key)) for d in REGISTRY.declared() for key, hook in d.scheduler_keywords.items()
                if key in kwargs]
    # what a number cannot take: the keywords but a dialect's own (Model Zoo's call takes adjust_learning_rate)
    learning_rate, kwargs = plain_arguments({"learning_rate": learning_rate})["learning_rate"], plain_arguments(kwargs)
    if learning_rate is BY_KEYWORD:   # Cerebras' learning_rate= alone, else the keywords are the spec (**cfg)
        named = any(k in kwargs for k in NAME_KEYS)
        learning_rate, kwargs = (kwargs.pop("learning_rate"), kwargs) if "learning_rate" in kwargs and not named \
            else (kwargs, {})
    if isinstance(learning_rate, (Mapping, list, tuple)):   # a Hydra node: cfg.scheduler, with its `_target_`
        learning_rate = without_builders(learning_rate, SCHEDULER, "" if isinstance(learning_rate, Mapping) else
                                         "schedulers")
    keywords = [*({"dialect": dialect} if dialect is not None else {}), *kwargs]
    if not kwargs:   # a spec form a dialect builds itself (Model Zoo's trainer schedulers)
        for d in REGISTRY.declared():
            built = d.scheduler_call(optimizer, learning_rate) if d.scheduler_call is not None else None
            if built is not None:
                return built
    # the paths the rest of validation uses: a spec's own keys, a list's stages, else the argument itself
    check_input(learning_rate, "" if isinstance(learning_rate, Mapping) else "schedulers"
                if isinstance(learning_rate, (list, tuple)) else "learning_rate", errors)
    check_input(kwargs, "", errors)
    errors.raise_if_any()
    if isinstance(learning_rate, str):   # "1e-3" is a number, as every numeric option reads it (core.types)
        try:
            learning_rate = float(learning_rate)
        except ValueError:
            pass
    if isinstance(learning_rate, numbers.Real) and not isinstance(learning_rate, bool) and wrappers and not keywords:
        # a number beside a dialect's keyword alone (Model Zoo 2.0-2.3's configure_lr_scheduler(opt, lr,
        # adjust_learning_rate=...)): the constant schedule it builds there, which the keyword wraps
        learning_rate = {"name": "ConstantLR", "dialect": "cerebras", "learning_rate": learning_rate}
    if isinstance(learning_rate, numbers.Real) and not isinstance(learning_rate, bool):
        from optreg.core.optimizer import lr_table

        lr_table(learning_rate, "learning_rate")   # the rule of an lr given as a number, the own form's words
        check_static_lr(optimizer, None, learning_rate, "learning_rate")
        for key in keywords:   # no scheduler is built that would take them: none is dropped silently
            errors.add(key_text(key), f"a number as learning_rate ({show(learning_rate)}) sets every group's lr and "
                                      f"builds no scheduler, which would take {key}; give a schedule (a name or a "
                                      f"spec, cerebras.ConstantLR for a constant lr) with it")
        plan = number_plan(learning_rate)
        errors.extend(absolute_over_scaled(plan, scaled_lr_of(optimizer), path="learning_rate"))
        errors.raise_if_any()
        for note in group_lrs_replaced(plan, optimizer.param_groups):
            warnings.warn(ConfigWarning(note), stacklevel=2)
        lr = float(learning_rate)
        for group in optimizer.param_groups:
            group["lr"] = lr
        return None
    asked = {"dialect": dialect} if dialect is not None else {}   # the spec's own: a contradicting prefix is refused
    if isinstance(learning_rate, (str, Mapping)):
        named = isinstance(learning_rate, str) or any(k in learning_rate for k in NAME_KEYS)   # not {LinearLR: {...}}
        given = {"name": learning_rate} if isinstance(learning_rate, str) else dict(learning_rate)
        twice = [k for k in (*asked, *kwargs) if k in given and named]
        for key in twice:
            given_twice(errors, key, "the spec" if isinstance(learning_rate, Mapping) else "the learning_rate argument",
                        given[key], {**asked, **kwargs}[key])
        errors.raise_if_any()
        spec: Any = {**(asked if named else {}), **given, **kwargs}
    elif isinstance(learning_rate, (list, tuple)):  # read by the same rule as a list in YAML (_normal_spec)
        spec = {"name": "sequential", "schedulers": list(learning_rate), **kwargs} if kwargs else list(learning_rate)
    else:
        raise ConfigError(f"expected a number, a scheduler name, a spec mapping or a list of specs, got "
                          f"{type(learning_rate).__name__}", "learning_rate")
    try:
        plan = plan_scheduler(spec, context_of(optimizer, dialect))
    except ConfigError as exc:
        raise _rooted(exc) from None
    key = plan.key if plan.schedule is not None else "lr"
    refused = absolute_over_scaled(plan, scaled_lr_of(optimizer), scaled_lr_of(optimizer, "weight_decay"))
    if refused:
        raise ConfigError(refused)
    if key == "lr":
        check_static_lr(optimizer, plan.name)
    bases = []
    for group in optimizer.param_groups:
        value = group.get(key[:5], None) if key.startswith("betas") else group.get(key)
        value = value[int(key[6])] if key.startswith("betas") and isinstance(value, (list, tuple)) else value
        number = isinstance(value, (int, float)) and not isinstance(value, bool) or is_tensor(value)   # torch's
        bases.append(float(value) if number else None)   # tensor lr or betas: its value
    default = optimizer.defaults.get(key) if not key.startswith("betas") else None
    problems = check_schedule(plan, None if None in bases else bases,
                              default if isinstance(default, (int, float)) and not isinstance(default, bool) else None)
    if problems:
        raise _rooted(ConfigError(problems))
    for note in [*plan.planning_notes(), *group_lrs_replaced(plan, optimizer.param_groups)]:   # as build gives them
        warnings.warn(ConfigWarning(note), stacklevel=2)
    for hook, value in wrappers:   # a dialect's keyword (cerebras.pytorch <= 2.3's adjust_learning_rate: muP)
        if value:
            return hook(plan, optimizer)
    try:
        return plan.build(optimizer)
    except ConfigError as exc:
        raise _rooted(exc) from None


def _rooted(exc: ConfigError) -> ConfigError:
    """A problem with the whole spec of a Python call has no path of its own: it is the section
    `scheduler`, as a config file would say."""
    if all(e.path or e.location for e in exc.errors):
        return exc
    return ConfigError([e if e.path or e.location else dataclasses.replace(e, path="scheduler") for e in exc.errors])


__all__ = ["OptimizerPlan", "SchedulerPlan", "Context", "plan_optimizer", "plan_scheduler", "configure_optimizer",
           "configure_lr_scheduler", "ErrorItem"]

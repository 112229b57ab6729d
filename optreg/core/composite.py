"""Composite optimizers: a `param_groups` rule that names an `optimizer:` gives the parameters it selects to that
optimizer, and the result is one `torch.optim.Optimizer` over every part (Muon for the matrices, AdamW for the
rest, as the Muon paper's and Keller Jordan's training scripts split them by hand).

    optimizer:
      name: Muon
      lr: 0.02
      param_groups:
        - {max_ndim: 1, optimizer: {name: AdamW, lr: 3.0e-4, betas: [0.9, 0.95]}}
        - {params: ["embed.*", "head.*"], optimizer: {name: AdamW, lr: 3.0e-4}}

Routing is the one rule of `param_groups` (the first matching rule wins; the rest stay with the main optimizer);
a rule's `lr_mult` / `decay_mult` scale its own optimizer's values. The optimizer-wide settings of the main section
(`no_weight_decay`, `layer_decay`, a dialect's decay rule) reach every part's parameters, as timm's reach every
parameter (its Muon's AdamW fallback included): each part's own lr and weight decay are what they scale and zero,
the layers are numbered over the whole model, and a part whose optimizer has no option for a setting to act on is
refused at the setting's key (a part that gives the key itself, `no_weight_decay: false` too, keeps its own). The
groups come in rule order, then the main optimizer's default group, and each carries `optimizer: "<dialect.Name>"`.
Each part is the optimizer built by hand on its parameters, so a step of the composite is the parts' steps, bit for
bit; its `state_dict` holds the parts' state dicts (plain tensors, numbers and strings: it loads with
`weights_only=True`).

Refused: `param_groups` inside a rule's optimizer, an optimizer that wraps another (MindSpore LARS) or takes the
model, one that needs a closure (LBFGS, pytorch_optimizer's AliG: the composite evaluates the closure once and steps
its parts without it), a dynamic (per-step) lr inside a composite (MindSpore's learning_rate lists), a parameter the
main optimizer cannot take with no rule routing it (Muon and a 1-D tensor: the error names the rule to add).

ZeRO (`ZeroRedundancyOptimizer`) and `type(opt)(params, **opt.defaults)` rebuild an optimizer from its class and
unnamed tensors: a composite has no single class to rebuild and its routing needs names, so `Composite(params)` is
refused with that reason (`optreg.optimizer_class` refuses `param_groups` the same way). FSDP2 shards parameters
in place (DTensors) before the optimizer is built: a composite built afterwards over `model.named_parameters()`
routes them as any optimizer does, its parts step the local shards, and torch.distributed.checkpoint saves and
loads its state dict (torch's shape over the composite's groups; tests/integration/test_fsdp2.py). A part whose
update needs each matrix whole (torch's Muon) refuses a shard through its entry's `accepts`.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from optreg.core.entry import Entry
from optreg.core.groups import (MULTIPLIERS, SELECTORS, Group, Scope, check_support, collect, from_rules,
                                remember_scaled_lr, scaled_options, split_settings)
from optreg.core.names import NAME_KEYS, missing_name
from optreg.errors import Collector, ConfigError, ErrorItem, join_path, show

ROUTE_KEY = "optimizer"


def is_composite(param_groups: Any) -> bool:
    """Whether some `param_groups` rule names an optimizer of its own."""
    return isinstance(param_groups, (list, tuple)) and any(
        isinstance(r, Mapping) and ROUTE_KEY in r for r in param_groups)


def _reindex(error: ConfigError, rules_path: str, index: Sequence[int]) -> list[ErrorItem]:
    """A sub-plan's errors at the paths of the user's rules (the sub-plan saw only some of them, renumbered)."""
    pattern = re.compile(re.escape(rules_path) + r"\[(\d+)\]")
    return [ErrorItem(pattern.sub(lambda m: f"{rules_path}[{index[int(m.group(1))]}]", e.path), e.message,
                      e.location, e.suggestion) for e in error.errors]


def model_part(name: Any, own: str | None, dialect: str | None, where: str, errors: Collector) -> bool:
    """Whether a rule's optimizer takes the model (MindSpore's THOR, which hooks the model's layers): refused as a
    part, at its name (an unknown name is left to the part's planning, which reports it)."""
    from optreg.core.entry import OPTIMIZER
    from optreg.core.registry import REGISTRY

    try:
        entry = REGISTRY.lookup(OPTIMIZER, name, own, default=dialect)
    except ConfigError:
        return False
    if entry.takes_model:
        errors.add(join_path(where, "name"), f"{entry.qualname} takes the model, whose layers it hooks; a "
                                             f"composite's parts are optimizers of their own parameters")
    return entry.takes_model


def at_rule(items: Sequence[ErrorItem], here: str) -> list[ErrorItem]:
    """A part's errors about the one rule its plan is given (`{"params": "*", **multipliers}`, at
    `<here>.optimizer.param_groups[0]`) at the user's rule `<here>`, where those multipliers are written."""
    nested = join_path(join_path(join_path(here, ROUTE_KEY), "param_groups"), 0)
    return [ErrorItem(here + e.path[len(nested):] if e.path == nested or e.path.startswith(nested + ".") else e.path,
                      e.message, e.location, e.suggestion) for e in items]


def rule_spec(rule: Mapping[str, Any], here: str, errors: Collector, default: str | None = None
              ) -> tuple[Any, str | None, dict[str, Any], dict[str, Any]] | None:
    """(name, dialect, options, group keys) of a rule's `optimizer:` spec; its problems go to `errors`. Beside
    `optimizer:` a rule takes selectors, multipliers and the part's group keys, which are no options of it (OneFlow's
    `clip_grad_max_norm`, MindSpore's `grad_centralization`): they go to the part's group as any rule's do."""
    spec = rule[ROUTE_KEY]
    where = join_path(here, ROUTE_KEY)
    others = [k for k in rule if k != ROUTE_KEY and k not in SELECTORS and k not in MULTIPLIERS]
    group_keys = {k: rule[k] for k in others if _group_key(spec, k, default)}
    for key in others:
        if key not in group_keys:
            errors.add(join_path(here, key), f"a rule with its own optimizer takes selectors, multipliers and its "
                                             f"group keys only; put {key} inside {ROUTE_KEY}: (an option of that "
                                             f"optimizer)")
    if not isinstance(spec, Mapping):
        errors.add(where, f"expected a nested spec with name: and its options, got {show(spec)}")
        return None
    spec = dict(spec)
    if "param_groups" in spec:
        errors.add(join_path(where, "param_groups"), "a rule's optimizer takes the parameters the rule selects; "
                                                     "param_groups cannot nest (write the rules at the top level)")
        return None
    given = [k for k in NAME_KEYS if k in spec]
    if not given:
        missing_name(errors, spec, where, "the name of the optimizer for the parameters this rule selects")
        return None
    name = spec.pop(given[0])
    dialect = spec.pop("dialect", None)
    return name, dialect, spec, group_keys


def inherited(settings: Mapping[str, Any], own: Mapping[str, Any]) -> dict[str, Any]:
    """The main section's settings (validated) that a part takes: each one the part's optimizer does not give
    itself."""
    return {k: v for k, v in settings.items() if k not in own}


def check_inherited(entry: Entry, settings: Mapping[str, Any], part_path: str, path: str, errors: Collector) -> None:
    """A part (at `part_path`) whose optimizer has no option for an inherited setting to act on (no weight decay
    for no_weight_decay to set) is refused at the setting's key in the main section (`path`)."""
    from optreg.core.validate import option_names

    rule = part_path[:-len(ROUTE_KEY) - 1] if part_path.endswith("." + ROUTE_KEY) else part_path
    check_support(scaled_options(option_names(entry)), f"{entry.qualname} (the optimizer of {rule})",
                  [k for k, v in settings.items() if v not in (None, False)], path, errors)


def _group_key(spec: Any, key: Any, default: str | None) -> bool:
    """Whether `key` beside a rule's `optimizer:` is a group key of that optimizer, not one of its options: one its row
    declares (`group_keys`), or, for a row whose dialect binds its groups (MindSpore), any key that is no option
    (the dialect's group handling checks it)."""
    from optreg.core.entry import OPTIMIZER
    from optreg.core.names import synonyms
    from optreg.core.registry import REGISTRY
    from optreg.core.validate import option_names

    given = [k for k in NAME_KEYS if isinstance(spec, Mapping) and k in spec]
    if not given or not isinstance(key, str):
        return False
    try:
        entry = REGISTRY.lookup(OPTIMIZER, spec[given[0]], spec.get("dialect"), default=default)
    except ConfigError:
        return False
    if key in entry.group_keys:
        return True
    return entry.bind is not None and not (synonyms(key) & set(option_names(entry)))


def plan_composite(entry: Entry, params: Any, *, dialect: str | None, unknown_keys: Any,
                   param_groups: Sequence[Any], path: str, options: Mapping[str, Any]) -> "CompositePlan":
    """The plan of a composite: the main optimizer's over the parameters no optimizer rule routes, and one plan
    per optimizer rule over its parameters (see the module doc)."""
    from optreg.core.build import plan_optimizer, wraps_optimizer

    errors = Collector()
    rules_path = join_path(path, "param_groups")
    if wraps_optimizer(entry) or entry.takes_model:
        what = "wraps another optimizer" if wraps_optimizer(entry) else "takes the model"
        raise ConfigError(f"{entry.qualname} {what} and cannot hold a composite's param_groups with optimizer:",
                          join_path(path, "name"))
    try:
        source = collect(params)
    except ConfigError as exc:
        raise exc.prefixed(path) from None
    if source.named is None or any(n is None for n, _ in source.named):
        raise ConfigError("a param_groups rule with optimizer: routes parameters by name: pass the Module or "
                          "model.named_parameters()", rules_path)
    routing = [{k: v for k, v in r.items() if k in SELECTORS} if isinstance(r, Mapping) else r for r in param_groups]
    notes: list[str] = []
    routed = from_rules(source.named, routing, errors, rules_path, source=source, notes=notes)
    errors.raise_if_any()
    members = {g.rule: [(n, t) for n, t in zip(g.names or [], g.params)] for g in routed}
    settings, _ = split_settings(options, path, errors)   # the main section's: every part takes them
    taken: set[str] = set()
    parts: list[tuple[int | None, Any]] = []   # (rule index or None for the main optimizer, its plan)
    for i, rule in enumerate(param_groups):
        if not (isinstance(rule, Mapping) and ROUTE_KEY in rule):
            continue
        here = join_path(rules_path, i)
        spec = rule_spec(rule, here, errors, dialect)
        named = members.get(here, [])
        taken.update(n for n, _ in named)
        if spec is None or not named:
            continue
        name, own, spec_options, group_keys = spec
        if model_part(name, own, dialect, join_path(here, ROUTE_KEY), errors):
            continue
        multipliers = {k: rule[k] for k in MULTIPLIERS if k in rule}
        try:
            sub = plan_optimizer(name, named, dialect=own, default=dialect, unknown_keys=unknown_keys,
                                 param_groups=[{"params": "*", **multipliers, **group_keys}]
                                 if multipliers or group_keys else None,
                                 path=join_path(here, ROUTE_KEY), options=spec_options,
                                 scope=Scope(source, settings, path))
        except ConfigError as exc:
            errors.extend(at_rule(exc.errors, here))
            continue
        _check_part(sub, join_path(here, ROUTE_KEY), errors)
        parts.append((i, sub))
    main_rules = [(i, r) for i, r in enumerate(param_groups) if not (isinstance(r, Mapping) and ROUTE_KEY in r)]
    rest = [(n, t) for n, t in source.named if n not in taken]
    kept = dict([*rest, *source.frozen])
    tied = [(alias, kept[name]) for alias, name in source.aliases.items() if name in kept]
    if not rest:
        errors.add(rules_path, f"every parameter is routed to a rule's optimizer: the main optimizer "
                               f"{entry.qualname} has none (drop it, or route fewer)")
    else:
        try:
            main = plan_optimizer(entry.qualname, [*rest, *source.frozen, *tied], unknown_keys=unknown_keys,
                                  param_groups=[r for _, r in main_rules] or None, path=path, options=options,
                                  scope=Scope(source))
            parts.insert(0, (None, main))
            _check_part(main, path, errors)
        except ConfigError as exc:
            errors.extend(_reindex(exc, rules_path, [i for i, _ in main_rules]))
    errors.items = list(dict.fromkeys(errors.items))   # a setting's problem, once (every part plans it)
    errors.raise_if_any()
    plan = CompositePlan.of(parts, param_groups, rules_path, [i for i, _ in main_rules], list(source.frozen))
    plan.notes = notes   # the routing saw every rule over every parameter: the parts' notes are its again
    return plan


def nominal_composite(section: Mapping[str, Any], dialect: str | None, errors: Collector, path: str,
                      nominal: Any) -> "CompositePlan":
    """The composite's plan without the model (`validate`): the main optimizer's nominal plan over its own rules,
    and one nominal plan per optimizer rule (`nominal(section, dialect, errors, path)` makes each)."""
    rules = list(section.get("param_groups") or [])
    rules_path = join_path(path, "param_groups")
    parts: list[tuple[int | None, Any]] = []
    for i, rule in enumerate(rules):
        if isinstance(rule, Mapping) and ROUTE_KEY in rule:
            here = join_path(rules_path, i)
            spec = rule_spec(rule, here, Collector(), dialect)
            if spec is not None:
                name, own, options, group_keys = spec
                if model_part(name, own, dialect, join_path(here, ROUTE_KEY), errors):
                    continue
                multipliers = {k: rule[k] for k in MULTIPLIERS if k in rule}
                sub = {"name": name, **({"dialect": own} if own else {}), **options,
                       **({"param_groups": [{"params": "*", **multipliers, **group_keys}]}
                          if multipliers or group_keys else {})}
                local = Collector()
                plan = nominal(sub, dialect, local, join_path(here, ROUTE_KEY))
                _check_part(plan, join_path(here, ROUTE_KEY), local)
                errors.extend(at_rule(local.items, here))
                parts.append((i, plan))
    main_index = [i for i, r in enumerate(rules) if not (isinstance(r, Mapping) and ROUTE_KEY in r)]
    main = {**section, "param_groups": [rules[i] for i in main_index]}
    parts.insert(0, (None, nominal(main, dialect, errors, path)))
    _check_part(parts[0][1], path, errors)   # the main optimizer is a part too, as plan_composite checks it
    return CompositePlan.of(parts, rules, rules_path, main_index, [])


def _check_part(plan: Any, path: str, errors: Collector) -> None:
    """What a part (the main optimizer's plan too) cannot be, at `path`: an optimizer that wraps another, one that
    needs a closure (`Composite.step` evaluates the closure once and steps its parts without it), a per-step lr."""
    from optreg.core.build import wraps_optimizer
    from optreg.core.entry import NEEDS_CLOSURE

    if wraps_optimizer(plan.entry):
        errors.add(join_path(path, "name"), f"{plan.entry.qualname} wraps another optimizer; a composite's parts "
                                            f"are optimizers of their own parameters")
    elif plan.entry.needs_closure():
        errors.add(join_path(path, "name"), f"a composite steps its parts without a closure (it evaluates the "
                                            f"closure once, before them), and {plan.entry.qualname} "
                                            f"{NEEDS_CLOSURE}; train it alone, or give its parameters another "
                                            f"optimizer")
    for i, _ in plan.dynamic_lrs():
        errors.add(join_path(path, "learning_rate" if "learning_rate" in plan.values else "lr"),
                   "a per-step lr (a dynamic learning_rate) inside a composite: the parts step together, give a "
                   "number and a scheduler")
        break


class CompositePlan:
    """A validated composite: the parts' plans and the order of their groups. `build()` creates the Composite.

    Answers what scheduler planning asks of an OptimizerPlan (groups, group keys, base values, ...) from the parts:
    a key is schedulable when every part's groups have it."""

    def __init__(self, parts: list[tuple[int | None, Any]], order: list[tuple[int, int]], groups: list[Group],
                 frozen: list[tuple[str, Any]]) -> None:
        self.parts = parts
        self.order = order            # (part index, group index within the part), in the composite's order
        self.groups = groups
        self.frozen = frozen
        self.notes: list[str] = []     # warnings of its planning, as OptimizerPlan's
        self.grouped = True
        self.inner = None
        main = next((p for i, p in parts if i is None), parts[0][1])
        self.entry, self.values = main.entry, main.values

    @classmethod
    def of(cls, parts: list[tuple[int | None, Any]], rules: Sequence[Any], rules_path: str, main_index: list[int],
           frozen: list[tuple[str, Any]]) -> "CompositePlan":
        """Groups in rule order, then the main optimizer's default group; each Group names its optimizer (and a
        part's groups show the selectors and multipliers of the rule that routed them)."""
        keyed: list[tuple[tuple[int, int], tuple[int, int], Group]] = []
        for p, (rule, plan) in enumerate(parts):
            for g, group in enumerate(plan.groups):
                if rule is None:   # the main optimizer's rules, renumbered back to the user's
                    m = re.fullmatch(re.escape(rules_path) + r"\[(\d+)\]", group.rule)
                    index = main_index[int(m.group(1))] if m else 1 << 30
                    group.rule = join_path(rules_path, index) if m else group.rule
                else:
                    index = rule
                    group.rule = join_path(rules_path, rule)
                    group.selectors = {k: rules[rule][k] for k in SELECTORS if k in rules[rule]}
                    group.multipliers = {k: rules[rule][k] for k in MULTIPLIERS if k in rules[rule]}
                    group.origin.setdefault("lr", join_path(join_path(group.rule, ROUTE_KEY), "lr"))
                group.optimizer = plan.entry.qualname
                keyed.append(((index, g), (p, g), group))
        keyed.sort(key=lambda k: k[0])
        return cls(parts, [k[1] for k in keyed], [k[2] for k in keyed], frozen)

    def build(self):
        """The Composite, keeping the keys that gave its groups lrs of their own (groups.remember_scaled_lr)."""
        built = [plan.build() for _, plan in self.parts]
        names = [plan.entry.qualname for _, plan in self.parts]
        from optreg.core.composite_optimizer import Composite

        return remember_scaled_lr(Composite(built, names, self.order), self.groups)

    def stand_in(self):
        """The Composite over the parts' stand-ins (OptimizerPlan.stand_in), as `build()` makes it over the parts."""
        from optreg.core.composite_optimizer import Composite

        return Composite([plan.stand_in() for _, plan in self.parts], [plan.entry.qualname for _, plan in self.parts],
                         self.order)

    @property
    def defaults(self) -> dict[str, Any]:
        return {}

    def base_values(self, key: str) -> tuple[list[float] | None, str | None]:
        values: list[float] | None = []
        for p, g in self.order:
            part_values, problem = self.parts[p][1].base_values(key)
            if problem:
                return None, problem
            values = None if part_values is None or values is None else values + [part_values[g]]
        return values or None, None

    def dynamic_lrs(self) -> list[tuple[int, Any]]:
        return []   # refused inside a composite (plan_composite)

    def unschedulable(self) -> frozenset[str]:
        return frozenset().union(*(plan.unschedulable() for _, plan in self.parts))

    def group_keys(self) -> frozenset[str]:
        """The keys every part's groups have: a scheduler may drive only those (AdamW has no momentum)."""
        return frozenset.intersection(*(keys for _, keys in self.part_keys()))

    def part_keys(self) -> tuple[tuple[str, frozenset[str]], ...]:
        """Each part's optimizer and the keys its groups have (what a refusal of a scheduled key names)."""
        return tuple((plan.entry.qualname, plan.group_keys()) for _, plan in self.parts)


__all__ = ["is_composite", "plan_composite", "nominal_composite", "model_part", "inherited", "check_inherited",
           "CompositePlan"]

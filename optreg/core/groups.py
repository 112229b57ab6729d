"""Parameter groups: torch-style group dicts, or config rules whose `params` are glob patterns over names."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from optreg.errors import Collector, ConfigError, closest, join_path, show

_GLOB = set("*?[")


@dataclass
class Group:
    """One resolved parameter group: its tensors, their names (when known), its own options."""

    params: list[Any]
    names: list[str] | None
    options: dict[str, Any] = field(default_factory=dict)
    rule: str = "default"          # what made it: "param_groups[1]", "params[0]" or "default"
    extra: dict[str, Any] = field(default_factory=dict)  # dialect group keys handled by the row's bind hook
    patterns: list[str] = field(default_factory=list)    # the rule's glob patterns

    def torch_dict(self) -> dict[str, Any]:
        return {"params": list(self.params), **self.options}


def _is_tensor(obj: Any) -> bool:
    import torch

    return isinstance(obj, torch.Tensor)


def named_parameters(params: Any) -> tuple[list[tuple[str | None, Any]] | None, list[dict] | None]:
    """Split what the user passed into (named tensors) or (torch-style group dicts).

    Accepts a torch Module, `named_parameters()`, an iterable of tensors, or an iterable of group dicts.
    """
    import torch

    if isinstance(params, torch.nn.Module):
        return [(n, p) for n, p in params.named_parameters() if p.requires_grad], None
    if _is_tensor(params):
        raise ConfigError("params must be an iterable of tensors, not a single tensor", "params")
    if isinstance(params, (str, bytes, Mapping)) or not isinstance(params, Iterable):
        raise ConfigError(f"params must be a Module, named_parameters() or an iterable of tensors or group "
                          f"dicts, got {type(params).__name__}", "params")
    items = list(params)
    if not items:
        raise ConfigError("optimizer got an empty parameter list", "params")
    if all(isinstance(i, Mapping) for i in items):
        return None, [dict(i) for i in items]
    if all(isinstance(i, tuple) and len(i) == 2 and isinstance(i[0], str) and _is_tensor(i[1]) for i in items):
        return list(items), None
    if all(_is_tensor(i) for i in items):
        return [(None, t) for t in items], None
    kinds = sorted({type(i).__name__ for i in items})
    raise ConfigError(f"params mixes or contains unsupported items ({', '.join(kinds)}); give tensors, "
                      f"(name, tensor) pairs or group dicts", "params")


def _patterns(value: Any, path: str, errors: Collector) -> list[str]:
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, (list, tuple)) or not values or not all(isinstance(v, str) for v in values):
        errors.add(path, f"expected a glob pattern or a list of them, got {show(value)}")
        return []
    return list(values)


def from_rules(named: list[tuple[str | None, Any]], rules: Sequence[Mapping[str, Any]], errors: Collector,
               path: str = "param_groups", paramless_ok: bool = False) -> list[Group]:
    """Rule i -> group i (first matching rule wins); unmatched parameters form a last, default group.

    paramless_ok: a rule without `params` is kept as a group of no parameters, for a dialect hook
    (MindSpore's `order_params` dict)."""
    names = [n for n, _ in named]
    if rules and any(n is None for n in names):
        errors.add(path, "param_groups with name patterns need parameter names: pass the Module or "
                         "model.named_parameters(), not bare tensors")
        return []
    claimed: dict[str, int] = {}
    owner: dict[str, int] = {}
    groups: list[Group] = []
    for i, rule in enumerate(rules):
        here = join_path(path, i)
        if not isinstance(rule, Mapping):
            errors.add(here, f"expected a mapping with params: <glob> and options, got {show(rule)}")
            groups.append(Group([], [], rule=here))
            continue
        if "params" not in rule and not (paramless_ok and rule):
            errors.add(join_path(here, "params"), "required: a glob pattern or list of patterns over parameter names")
        patterns = _patterns(rule.get("params"), join_path(here, "params"), errors) if "params" in rule else []
        for pattern in patterns:
            if not (_GLOB & set(pattern)):
                if pattern in claimed:
                    errors.add(join_path(here, "params"), f"parameter {show(pattern)} is claimed twice "
                                                          f"(also by {path}[{claimed[pattern]}])")
                claimed.setdefault(pattern, i)
        for pattern in patterns:
            hits = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
            if not hits:
                hint = closest(pattern, names)
                errors.add(join_path(here, "params"), f"pattern {show(pattern)} matches no parameter", hint)
            for n in hits:
                owner.setdefault(n, i)
        options = {k: v for k, v in rule.items() if k != "params"}
        groups.append(Group([], [], options, rule=here, patterns=patterns))
    rest = Group([], [], rule="default")
    for name, tensor in named:
        target = groups[owner[name]] if name in owner else rest
        target.params.append(tensor)
        target.names.append(name)
    for i, group in enumerate(groups):  # every match taken by an earlier rule: the rule would do nothing
        taken = sorted({owner[n] for p in group.patterns for n in names if fnmatch.fnmatchcase(n, p)})
        if group.patterns and not group.params and taken:
            earlier = ", ".join(f"{path}[{k}]" for k in taken)
            errors.add(join_path(group.rule, "params"), f"every parameter it matches is already taken by {earlier} "
                                                        f"(the first matching rule wins); put this rule first")
    if any(n is None for n in names):  # bare tensors: no names to report or to match
        rest.names = None
    return [g for g in groups if g.params or g is not rest] + ([rest] if rest.params else [])


def from_dicts(dicts: list[dict], errors: Collector, path: str = "params",
               names_of: Mapping[int, str] | None = None, paramless_ok: bool = False) -> list[Group]:
    """Torch-style group dicts; a tensor in two groups is an error. paramless_ok: as in from_rules."""
    seen: dict[int, int] = {}
    groups = []
    for i, d in enumerate(dicts):
        here = join_path(path, i)
        raw = d.get("params")
        if raw is None and paramless_ok and d:
            groups.append(Group([], None, {k: v for k, v in d.items() if k != "params"}, rule=here))
            continue
        if raw is None:
            errors.add(join_path(here, "params"), "group has no 'params'")
            continue
        if _is_tensor(raw):
            tensors = [raw]
        elif isinstance(raw, Iterable) and not isinstance(raw, (str, bytes, Mapping)):
            tensors = list(raw)
        else:
            errors.add(join_path(here, "params"), f"expected tensors, got {type(raw).__name__}")
            continue
        pairs = [(t[0], t[1]) if isinstance(t, tuple) and len(t) == 2 else ((names_of or {}).get(id(t)), t)
                 for t in tensors]
        for j, (_, t) in enumerate(pairs):
            if not _is_tensor(t):
                errors.add(join_path(join_path(here, "params"), j), f"expected a tensor, got {type(t).__name__}")
            elif id(t) in seen:
                errors.add(join_path(here, "params"), f"a parameter is claimed twice (also in {path}[{seen[id(t)]}])")
            else:
                seen[id(t)] = i
        names = [n for n, _ in pairs]
        options = {k: v for k, v in d.items() if k not in ("params", "param_names")}
        groups.append(Group([t for _, t in pairs], names if all(n is not None for n in names) else None,
                            options, rule=here))
    return groups

"""MindSpore's parameter-group semantics (mindspore.nn.optim, 1.6 - 2.x): the group binder.

Two pieces:

* `resolve_groups`: MindSpore's rules for what an optimizer is given, shared by the registry's
  `bind` hooks and by the classes below (so a Python user may pass MindSpore-style group dicts,
  `order_params` included, straight to a class):
    - ungrouped: weight decay only for parameters whose names contain neither "beta" nor
      "gamma" (case-sensitive substrings; FTRL and AdaFactor decay every parameter);
    - grouped: each dict takes exactly `params`, `lr`, `weight_decay`, `grad_centralization`,
      `order_params`; a group decays iff its weight decay is > 0; an `order_params` dict stands
      alone, covers exactly the grouped parameters and sets the parameter order.
* thin classes with MindSpore's names and defaults over the shared implementations (Adam's
  `beta1`/`beta2` become `betas`; the dialect's knob settings are keyword arguments the registry
  row fixes).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

import torch

from optreg.core.groups import Key
from optreg.core.models import bool_message, number_message
from optreg.core.types import Bool
from optreg.errors import Collector, ConfigError, closest, show
from optreg.core.optimizer import lr_table

#: MindSpore's own group keys (beside params and the options lr and weight_decay), with their types and
#: descriptions: `DIALECT.group_keys`; `resolve_groups` reads them
OWN_KEYS = {
    "grad_centralization": Key(Bool, "centralise this group's gradients (g minus its mean over dims 1..n-1; as "
                                     "MindSpore's code, for a gradient of >= 2 dims with shape[1] % 16 == 0)"),
    "order_params": Key(list[str], "the order of the optimizer's parameters: every grouped parameter's name, once; "
                                   "a rule of this key alone", alone=True),
}
GROUP_KEYS = ("params", "lr", "weight_decay", *OWN_KEYS)
INTERNAL_KEYS = ("param_names",)
NO_DECAY_SUBSTRINGS = ("beta", "gamma")


def decays(name: str) -> bool:
    """MindSpore's ungrouped weight-decay filter: the name contains neither 'beta' nor 'gamma'."""
    return not any(s in name for s in NO_DECAY_SUBSTRINGS)


# ---------------------------------------------------------------------------------------------
# group resolution
# ---------------------------------------------------------------------------------------------


def _as_items(params: Any) -> list[Any]:
    if isinstance(params, torch.nn.Module):
        return list(params.named_parameters())
    if isinstance(params, torch.Tensor):
        return [params]
    if isinstance(params, Mapping):
        return [params]
    if params is None:
        raise ConfigError("must not be None", "params")
    try:
        return list(params)
    except TypeError:
        raise ConfigError(f"must be an iterable of parameters or group dicts, got {type(params).__name__}",
                          "params") from None


def _split_named(items: list[Any], path: str) -> tuple[list[torch.Tensor], list[str] | None]:
    """Tensors and their names from a list of tensors or of (name, tensor) pairs."""
    tensors: list[torch.Tensor] = []
    names: list[str] = []
    named = None
    for i, item in enumerate(items):
        if (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], torch.Tensor)):
            this_named = True
            names.append(item[0])
            tensors.append(item[1])
        elif isinstance(item, torch.Tensor):
            this_named = False
            tensors.append(item)
        else:
            raise ConfigError(f"must be a tensor or a (name, tensor) pair, got {type(item).__name__}", f"{path}[{i}]")
        if named is None:
            named = this_named
        elif named != this_named:
            raise ConfigError("mixes named and unnamed parameters", path)
    return tensors, (names if named else None)


def _check_weight_decay(value: Any, path: str) -> float:
    from optreg.core.types import MAX_FLOAT

    if (wrong := number_message(value, 0, finite=True, high=MAX_FLOAT)) is not None:
        raise ConfigError(wrong, path)
    return float(value)


def _lr_length(value: Any) -> int:
    if isinstance(value, torch.Tensor) and value.dim() == 1:
        return value.numel()
    if isinstance(value, (list, tuple)):
        return len(value)
    return 0


def _ungrouped(items: list[Any], weight_decay: float, decay_all: bool) -> list[dict[str, Any]]:
    tensors, names = _split_named(items, "params")
    if not tensors:
        raise ConfigError("must not be empty", "params")
    if not weight_decay or decay_all:
        group: dict[str, Any] = {"params": tensors, "weight_decay": weight_decay}
        if names is not None:
            group["param_names"] = names
        return [group]
    labels = names if names is not None else [""] * len(tensors)
    groups = []
    for flag, wd in ((True, weight_decay), (False, 0.0)):
        picked = [(t, n) for t, n in zip(tensors, labels) if decays(n) == flag]
        if picked:
            group = {"params": [t for t, _ in picked], "weight_decay": wd}
            if names is not None:
                group["param_names"] = [n for _, n in picked]
            groups.append(group)
    return groups


def resolve_groups(
    params: Any,
    weight_decay: float = 0.0,
    learning_rate: Any = None,
    *,
    decay_all: bool = False,
    path: str = "param_groups",
    carried: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """MindSpore's parameter handling, as torch group dicts (see the module docstring).

    `params`: a Module, an iterable of tensors, of (name, tensor) pairs, or of MindSpore group
    dicts. Returns groups with an explicit `weight_decay` each (and `param_names` when names are
    known); with `order_params`, the groups are split into runs so that the optimizer's parameter
    order is exactly `order_params`. Every problem is a ConfigError with its path.

    A group dict may also carry the optimizer's own options (`carried`: its defaults' keys, such as `betas`,
    `eps`), `foreach` / `fused` and `global_step`: torch-side code that rebuilds an optimizer from its own
    groups (ZeroRedundancyOptimizer, FSDP wrappers) passes them, and they are kept per group as torch keeps them.
    """
    carried = (set(carried) | {"foreach", "fused", "contiguous_params", "state_dtype", "global_step"}) - set(GROUP_KEYS)
    items = _as_items(params)
    if not items:
        raise ConfigError("must not be empty", "params")
    dicts = [isinstance(x, Mapping) for x in items]
    if not any(dicts):
        return _ungrouped(items, weight_decay, decay_all)
    if not all(dicts):
        raise ConfigError("must be all parameters or all group dicts, not a mix", "params")

    errors = Collector()
    main_len = _lr_length(learning_rate)
    lr_len = main_len
    groups: list[dict[str, Any]] = []
    order: list[Any] | None = None
    order_path = ""
    seen: dict[int, str] = {}
    for i, raw in enumerate(items):
        gpath = f"{path}[{i}]"
        for key in raw:
            if key not in GROUP_KEYS and key not in INTERNAL_KEYS and key not in carried:
                errors.add(f"{gpath}.{key}", f"not a MindSpore group key (allowed: {', '.join(GROUP_KEYS)})",
                           closest(str(key), (*GROUP_KEYS, "learning_rate")))
        if "order_params" in raw:
            if len([k for k in raw if k != "order_params"]) > 0:
                errors.add(f"{gpath}", "an 'order_params' dict must contain only the 'order_params' key")
                continue
            value = raw["order_params"]
            if isinstance(value, (str, torch.Tensor)) or not isinstance(value, Iterable):
                errors.add(f"{gpath}.order_params",
                           f"must be a list of parameters or names, got {type(value).__name__}")
                continue
            if order is not None:
                errors.add(f"{gpath}.order_params", "given twice")
                continue
            order, order_path = list(value), f"{gpath}.order_params"
            continue
        if "params" not in raw:
            errors.add(f"{gpath}.params", "required")
            continue
        try:
            tensors, names = _split_named(_as_items(raw["params"]), f"{gpath}.params")
        except ConfigError as exc:
            errors.extend(exc)
            continue
        if not tensors:
            errors.add(f"{gpath}.params", "must not be empty")
            continue
        if names is None and raw.get("param_names") is not None:
            names = list(raw["param_names"])
        group: dict[str, Any] = {"params": tensors}
        if names is not None:
            group["param_names"] = names
        for j, t in enumerate(tensors):
            if id(t) in seen:
                errors.add(f"{gpath}.params[{j}]",
                           f"parameter already in {seen[id(t)]}; a parameter may be in one group only")
            seen[id(t)] = gpath
        if "lr" in raw:
            try:
                lr_table(raw["lr"], f"{gpath}.lr")
                group["lr"] = raw["lr"]
                n = _lr_length(raw["lr"])
                if n:
                    if lr_len and n != lr_len:
                        errors.add(f"{gpath}.lr",
                                   f"a per-step lr list must have the same length as the others ({lr_len}), got {n}")
                    lr_len = lr_len or n
            except ConfigError as exc:
                errors.extend(exc)
        try:
            group["weight_decay"] = _check_weight_decay(raw.get("weight_decay", weight_decay), f"{gpath}.weight_decay")
        except ConfigError as exc:
            errors.extend(exc)
        group.update((k, v) for k, v in raw.items() if k in carried)
        if "grad_centralization" in raw:
            if (wrong := bool_message(raw["grad_centralization"])) is not None:
                errors.add(f"{gpath}.grad_centralization", wrong)
            else:
                group["grad_centralization"] = raw["grad_centralization"]
        groups.append(group)
    errors.raise_if_any()
    if order is not None:
        groups = _apply_order(groups, order, order_path)
    return groups


def _apply_order(groups: list[dict[str, Any]], order: list[Any], path: str) -> list[dict[str, Any]]:
    """Split `groups` into runs so that their concatenated params follow `order` exactly."""
    owner: dict[int, tuple[int, int]] = {}
    by_name: dict[str, int] = {}
    flat: list[torch.Tensor] = []
    for gi, group in enumerate(groups):
        names = group.get("param_names") or [None] * len(group["params"])
        for pi, (t, n) in enumerate(zip(group["params"], names)):
            owner[id(t)] = (gi, pi)
            flat.append(t)
            if n is not None:
                by_name[n] = id(t)
    resolved: list[int] = []
    for k, item in enumerate(order):
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], torch.Tensor):
            item = item[1]
        if isinstance(item, torch.Tensor):
            key = id(item)
        elif isinstance(item, str) and item in by_name:
            key = by_name[item]
        else:
            raise ConfigError(f"{show(item)} is not a parameter of any group", f"{path}[{k}]")
        if key not in owner:
            raise ConfigError("is not a parameter of any group", f"{path}[{k}]")
        if key in resolved:
            raise ConfigError("is listed twice", f"{path}[{k}]")
        resolved.append(key)
    if len(resolved) != len(flat):
        raise ConfigError(
            f"must list exactly the grouped parameters: got {len(resolved)}, the groups hold {len(flat)}", path
        )
    runs: list[dict[str, Any]] = []
    for key in resolved:
        gi, pi = owner[key]
        group = groups[gi]
        if runs and runs[-1]["_group"] == gi:
            run = runs[-1]
        else:
            run = {k: v for k, v in group.items() if k not in ("params", "param_names")}
            run["_group"] = gi
            run["params"] = []
            if "param_names" in group:
                run["param_names"] = []
            runs.append(run)
        run["params"].append(group["params"][pi])
        if "param_names" in group:
            run["param_names"].append(group["param_names"][pi])
    for run in runs:
        del run["_group"]
    return runs


# ---------------------------------------------------------------------------------------------
# registry bind hooks: function(groups, options, grouped) -> groups
# ---------------------------------------------------------------------------------------------


def _bind(groups: list[dict], options: dict, grouped: bool, *, decay_all: bool) -> list[dict]:
    wd = options.get("weight_decay", 0.0) or 0.0
    lr = options.get("learning_rate")
    if not grouped:
        items: list[Any] = []
        for group in groups:
            names = group.get("param_names")
            items += list(zip(names, group["params"])) if names is not None else list(group["params"])
        return resolve_groups(items, wd, lr, decay_all=decay_all)
    return resolve_groups([_as_group_dict(g) for g in groups], wd, lr, decay_all=decay_all)


def _as_group_dict(group: Mapping[str, Any]) -> dict[str, Any]:
    """A builder group in MindSpore's keys: the option `learning_rate` is the group key `lr`;
    a group that carries only `order_params` (no parameters) is MindSpore's order dict."""
    out = {("lr" if k == "learning_rate" else k): v for k, v in group.items()}
    if out.get("param_names") is None:
        out.pop("param_names", None)
    if "order_params" in out and not out.get("params"):
        return {"order_params": out["order_params"]}
    return out


def bind(groups: list[dict], options: dict, grouped: bool) -> list[dict]:
    """MindSpore group semantics for the registry (beta/gamma weight-decay rule when ungrouped)."""
    return _bind(groups, options, grouped, decay_all=False)


def bind_decay_all(groups: list[dict], options: dict, grouped: bool) -> list[dict]:
    """As `bind`, for FTRL and AdaFactor, which decay every parameter when ungrouped."""
    return _bind(groups, options, grouped, decay_all=True)


def bind_ftrl(groups: list[dict], options: dict, grouped: bool) -> list[dict]:
    """FTRL: as `bind_decay_all`, and no group may set its own `lr` (MindSpore raises)."""
    if grouped:  # the builder's groups spell the option `learning_rate` (a rule's own, lr_mult's or layer_decay's)
        _refuse_group_lr([_as_group_dict(g) for g in groups])
    return _bind(groups, options, grouped, decay_all=True)


def _refuse_group_lr(groups: Iterable[Any]) -> None:
    errors = Collector()
    for i, group in enumerate(groups):
        if isinstance(group, Mapping) and "lr" in group:
            errors.add(f"param_groups[{i}].lr", "FTRL does not support per-group learning rates")
    errors.raise_if_any()

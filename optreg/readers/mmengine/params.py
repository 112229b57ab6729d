"""MMEngine's per-parameter settings (`optim_wrapper.paramwise_cfg`, mmengine 0.10
`DefaultOptimWrapperConstructor.add_params`), as optreg `param_groups` rules: one rule per parameter, naming it
exactly, as MMEngine makes one group per parameter.

For each parameter, walking the modules depth-first (a module's own parameters, then its children), where `full` is
`<module path>.<name>` (a top-level parameter's is `.<name>`: MMEngine joins an empty prefix with a dot):

1. `custom_keys`: the first key, longest first (ties alphabetical), that is a substring of `full` gives
   lr = base_lr·lr_mult and weight_decay = base_wd·decay_mult (both multipliers default 1), plus its other settings;
   nothing below applies to that parameter, so a matched key replaces the norm / bias / depthwise multipliers
   (mmengine #846). A key that matches no parameter is ignored.
2. otherwise lr = base_lr·bias_lr_mult for a `bias` that is not a normalisation layer's; and the weight decay, the
   first that applies: norm_decay_mult for a parameter of a normalisation layer (BatchNorm, InstanceNorm,
   GroupNorm, LayerNorm), bias_decay_mult for a `bias` (of any other layer), dwconv_decay_mult for a depthwise
   Conv2d (in_channels == groups), flat_decay_mult for a 1-d parameter.

No weight_decay in the optimizer: no decay is set per parameter. A frozen parameter is left out. A parameter shared by
two modules is refused unless `bypass_duplicate` (then only its first place counts), as torch refuses it in two
groups. `dcn_offset_lr_mult` applies to mmcv's deformable convolutions only, which a torch model does not have.
"""

from __future__ import annotations

from typing import Any, Mapping

from optreg.core.models import bool_message, number_message
from optreg.errors import Collector, join_path, key_text, show

MULTS = ("bias_lr_mult", "bias_decay_mult", "norm_decay_mult", "dwconv_decay_mult", "flat_decay_mult",
         "dcn_offset_lr_mult")
KEYS = ("custom_keys", "bypass_duplicate", *MULTS)
#: the settings of a custom key that scale the optimizer's values (its others go into the parameter's group as they are)
CUSTOM_MULTS = ("lr_mult", "decay_mult")


def check(cfg: Any, path: str, errors: Collector) -> dict[str, Any]:
    """The paramwise_cfg, checked without the model: its keys, numbers, custom_keys (mappings of settings)."""
    from optreg.errors import closest

    if not isinstance(cfg, Mapping):
        errors.add(path, f"expected a mapping of per-parameter settings, got {show(cfg)}")
        return {}
    out = dict(cfg)
    for key in cfg:
        if key not in KEYS:
            errors.add(join_path(path, key_text(key)), "unknown key of MMEngine's DefaultOptimWrapperConstructor "
                                                       f"(keys: {', '.join(KEYS)})", closest(key, list(KEYS)))
            out.pop(key)
    for key in MULTS:
        wrong = number_message(out[key], 0, finite=True) if out.get(key) is not None else None
        if wrong is not None:
            errors.add(join_path(path, key), wrong)
    if (wrong := bool_message(out.get("bypass_duplicate", False))) is not None:
        errors.add(join_path(path, "bypass_duplicate"), wrong)
    custom = out.get("custom_keys", {})
    if not isinstance(custom, Mapping):
        errors.add(join_path(path, "custom_keys"), f"expected a mapping of name substrings to settings, got "
                                                   f"{show(custom)}")
        out["custom_keys"] = {}
        return out
    for key, settings in custom.items():
        here = join_path(join_path(path, "custom_keys"), key_text(key))
        if not isinstance(key, str) or not key:
            errors.add(here, "a custom key is a non-empty substring of parameter names")
        if not isinstance(settings, Mapping):
            errors.add(here, f"expected a mapping such as {{lr_mult: 0.1, decay_mult: 0}}, got {show(settings)}")
            continue
        for mult in CUSTOM_MULTS:
            wrong = number_message(settings[mult], 0, finite=True) if mult in settings else None
            if wrong is not None:
                errors.add(join_path(here, mult), wrong)
        for name in settings:   # MMEngine copies other settings into the group: a misspelt multiplier is lost there
            hint = closest(str(name), list(CUSTOM_MULTS), cutoff=0.85) if name not in CUSTOM_MULTS else None
            if hint is not None:
                errors.add(join_path(here, key_text(name)), "not a multiplier of a custom key (MMEngine would put "
                                                            "it in the parameter's group as it is)", hint)
    return out


def _norm_types() -> tuple[type, ...]:
    from torch import nn
    from torch.nn.modules.batchnorm import _BatchNorm
    from torch.nn.modules.instancenorm import _InstanceNorm

    return (_BatchNorm, _InstanceNorm, nn.GroupNorm, nn.LayerNorm)


def rules(model: Any, cfg: Mapping[str, Any], base_lr: Any, base_wd: Any, path: str,
          errors: Collector) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """One `param_groups` rule per trainable parameter of `model` (an nn.Module), in MMEngine's order, with the lr,
    weight decay and custom settings MMEngine gives it (see the module doc); and, per parameter name, the settings
    that gave them (`custom_keys['.pos_embed']`, `norm_decay_mult`, ...: what `optreg groups` shows as its rule)."""
    import torch

    norms = _norm_types()
    custom = cfg.get("custom_keys") or {}
    keys = sorted(sorted(k for k in custom if isinstance(k, str) and k), key=len, reverse=True)
    seen: set[int] = set()
    out: list[dict[str, Any]] = []
    reasons: dict[str, str] = {}

    def visit(module: Any, prefix: str) -> None:
        is_norm = isinstance(module, norms)
        is_dw = isinstance(module, torch.nn.Conv2d) and module.in_channels == module.groups
        for name, param in module.named_parameters(recurse=False):
            full = f"{prefix}.{name}"
            qualified = full if prefix else name
            if id(param) in seen:
                if not cfg.get("bypass_duplicate", False):
                    errors.add(join_path(path, "bypass_duplicate"),
                               f"{qualified} is shared with a parameter listed before it: MMEngine puts it in two "
                               f"groups, which torch refuses; set bypass_duplicate: true")
                continue
            if not param.requires_grad:
                continue
            seen.add(id(param))
            rule: dict[str, Any] = {"params": qualified}
            key = next((k for k in keys if k in full), None)
            used: list[str] = []
            if key is not None:
                used.append(f"custom_keys[{key!r}]")
                settings = dict(custom[key])
                rule["lr"] = base_lr * settings.pop("lr_mult", 1.0)
                decay_mult = settings.pop("decay_mult", 1.0)
                if base_wd is not None:
                    rule["weight_decay"] = base_wd * decay_mult
                rule.update(settings)
            else:
                if name == "bias" and not is_norm and cfg.get("bias_lr_mult") is not None:
                    rule["lr"] = base_lr * cfg["bias_lr_mult"]
                    used.append("bias_lr_mult")
                if base_wd is not None:
                    which = next((k for k, applies in (("norm_decay_mult", is_norm),
                                                        ("bias_decay_mult", name == "bias"),
                                                        ("dwconv_decay_mult", is_dw),
                                                        ("flat_decay_mult", param.ndim == 1))
                                  if applies and cfg.get(k) is not None), None)
                    if which is not None:
                        rule["weight_decay"] = base_wd * cfg[which]
                        used.append(which)
            out.append(rule)
            reasons[qualified] = f"paramwise_cfg: {', '.join(used)}" if used else "paramwise_cfg: none applies"
        for child_name, child in module.named_children():
            visit(child, f"{prefix}.{child_name}" if prefix else child_name)

    visit(model, "")
    return out, reasons


__all__ = ["KEYS", "check", "rules"]

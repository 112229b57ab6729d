"""MindFormers' optimizer types -> optreg's optimizer sections (MindFormers dev 2025 / 1.3-1.7, on MindSpore 2.10).

MindFormers builds `optimizer: {type: ...}` through its registry: its own classes (AdamW, FusedAdamW, Came, and up to
1.3 FP32StateAdamWeightDecay, FusedAdamWeightDecay) and every class of `mindspore.nn.optim`, with a few lower-case
aliases. Each is translated to the optreg row with the same numerics:
- AdamW (mindformers.core.optim.adamw, `use_fused: false`): p ← p(1 - lr·λ), then Adam with bias correction and
  eps outside √(v/(1-β2^t)): torch's AdamW (mindspore_mint.AdamW), its state in float32;
- AdamW with `use_fused: true` and FusedAdamW: mint's fused AdamW kernel (mindspore_mint.FusedAdamW);
- FP32StateAdamWeightDecay / FusedAdamWeightDecay (1.3, aliases `fp32_adamw` / `fused_adamw`): MindSpore's
  AdamWeightDecay (no bias correction) with its moments in float32 for any parameter dtype (1.3's `clone_state`
  makes them float32) and MindSpore's AdamWeightDecay kernel stepping a half-precision parameter in float32:
  `state_dtype: float32` (the moments float32, the step in float32, the parameter rounded to its dtype once);
- `adamw` (1.3's alias of mindspore.nn.AdamWeightDecay): the moments in the parameter's dtype;
- a class of mindspore.nn.optim: the mindspore dialect's row of that name.
"""

from __future__ import annotations

from typing import Any, Mapping

from optreg.core.models import bool_message
from optreg.errors import ConfigError, show, unknown_name

#: MindFormers type (or alias) -> (optreg dialect, optreg name, what is approximate or "")
OWN_TYPES: dict[str, tuple[str, str, str]] = {
    "AdamW": ("mindspore_mint", "AdamW", ""),
    "FusedAdamW": ("mindspore_mint", "FusedAdamW", ""),
    "FP32StateAdamWeightDecay": ("mindspore", "AdamWeightDecay", ""),
    "FusedAdamWeightDecay": ("mindspore", "AdamWeightDecay", ""),
    "adamw": ("mindspore", "AdamWeightDecay", "MindFormers 1.3's alias of mindspore.nn.AdamWeightDecay"),
    "adam": ("mindspore", "Adam", ""), "sgd": ("mindspore", "SGD", ""), "adagrad": ("mindspore", "Adagrad", ""),
    "adafactor": ("mindspore", "AdaFactor", ""),
}
#: MindFormers' lower-case aliases of its own classes (1.3's register_mf_optim)
ALIASES = {"fp32_adamw": "FP32StateAdamWeightDecay", "fused_adamw": "FusedAdamWeightDecay"}
#: options a MindFormers type sets on its optreg optimizer: both 1.3 classes keep float32 moments for any parameter
#: dtype and step through P.AdamWeightDecay, which computes a half-precision parameter's update in float32
OWN_OPTIONS = {"FP32StateAdamWeightDecay": {"state_dtype": "float32"},
               "FusedAdamWeightDecay": {"state_dtype": "float32"}}
#: MindFormers' types that optreg does not build, and why
UNSUPPORTED = {
    "Came": "MindFormers' CAME (confidence-guided factored moments) is not an optreg optimizer",
    "AdamWeightDecayX": "a research project's own optimizer (research/<model>/optim.py, registered by the project's "
                        "code), not one of MindFormers' registry",
}
#: mindspore.nn.optim classes MindFormers registers under their own names
NN_CLASSES = ("Adadelta", "AdaFactor", "Adagrad", "Adam", "AdaMax", "AdamOffload", "AdamWeightDecay", "ASGD", "FTRL",
              "Lamb", "LARS", "LazyAdam", "Momentum", "ProximalAdagrad", "RMSProp", "Rprop", "SGD")


def type_of(name: str) -> str | None:
    """The MindFormers type that builds optreg's optimizer `name`: its registry's class of that name (`AdamW`, or
    mindspore.nn's `SGD`), in MindSpore's spelling (torch's `RMSprop` is `RMSProp`); None when it has none."""
    return next((t for t in (*OWN_TYPES, *NN_CLASSES) if t == name), None) or \
        next((t for t in NN_CLASSES if t.lower() == name.lower()), None)


def translate(type_name: Any, options: Mapping[str, Any], path: str) -> tuple[dict[str, Any], str]:
    """(optreg's optimizer section, what is approximate or "") of `optimizer: {type: type_name, **options}`."""
    if not isinstance(type_name, str):
        raise ConfigError(f"expected an optimizer type name, got {show(type_name)}", path)
    if type_name in UNSUPPORTED:
        raise ConfigError(f"{type_name}: {UNSUPPORTED[type_name]}", path)
    options = dict(options)
    if "auto_register" in options:
        raise ConfigError(f"auto_register imports {show(options['auto_register'])}, a project's own class; optreg "
                          f"reads no code", f"{path.rsplit('.', 1)[0]}.auto_register")
    if type_name == "AdamW" and "use_fused" in options:
        fused = options.pop("use_fused")
        if (wrong := bool_message(fused)) is not None:
            raise ConfigError(wrong, f"{path.rsplit('.', 1)[0]}.use_fused")
        type_name = "FusedAdamW" if fused else type_name
    type_name = ALIASES.get(type_name, type_name)
    if type_name in OWN_TYPES:
        dialect, name, why = OWN_TYPES[type_name]
    elif type_name in NN_CLASSES:
        dialect, name, why = "mindspore", type_name, ""
    else:
        known = [*OWN_TYPES, *ALIASES, *NN_CLASSES, *UNSUPPORTED]
        raise ConfigError([unknown_name(path, "MindFormers", "optimizer type", type_name, known,
                                        f"MindFormers registers {', '.join(sorted(set(known)))}")])
    return {"name": name, "dialect": dialect, **options, **OWN_OPTIONS.get(type_name, {})}, why

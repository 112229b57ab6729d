"""DeepSpeed's ds_config (a JSON file or its mapping) as a config format: what DeepSpeed 0.19's engine builds from it.

Read into optreg's own form (`optreg convert` writes it out):
- `optimizer: {type, params}` as `DeepSpeedEngine._configure_basic_optimizer` builds it (params null or left out:
  {}, as it reads them): names of DeepSpeed's own
  optimizers are read case-insensitively, any other is a `torch.optim` class. `Adam` is AdamW unless
  `adam_w_mode: false` (`AdamW` is AdamW either way); FusedAdam and DeepSpeedCPUAdam compute torch's Adam/AdamW
  update, and `torch_adam: true` builds torch's class itself (whose default weight decay for AdamW is 0.01, where
  DeepSpeed's kernels default to 0); `Lion` is the `deepspeed` dialect's Lion (DeepSpeedCPULion, with
  offload_optimizer) or FusedLion (without), which step -lr and +lr where cerebras.Lion's sign(0) = 0 does not move
  the weight; `Adagrad` with offload_optimizer is DeepSpeedCPUAdagrad, torch's Adagrad without
  lr_decay / initial_accumulator_value (without offload DeepSpeed builds torch's Adagrad itself);
- `scheduler: {type, params}` (params a mapping: DeepSpeed constructs the class with **params): DeepSpeed's
  lr_schedules (the `deepspeed` dialect, construction-time value included; OneCycle's momentum cycling drives
  betas[0] of an optimizer with betas, and is off without them), or a torch scheduler by its class name, as
  DeepSpeed falls back to `torch.optim.lr_scheduler`;
- `gradient_clipping` (> 0): the global norm clipped to it (`clip_grad.max_norm`); 0 or a negative value turns
  clipping off, as DeepSpeed's engine clips only when `gradient_clipping > 0`;
- `"auto"` (a value the Hugging Face Trainer fills from its TrainingArguments): a schedule's `total_num_steps` is
  the run length (`build(total_steps=)`, `optreg run --steps`); any other is refused by name.
Every other key (zero_optimization (whose offload_optimizer picks the CPU kernels), fp16, bf16, batch sizes,
logging) is the engine's: reported as the trainer's.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from optreg.config.formats import KeyUse, has_mapping
from optreg.config.translate import TRAINER, read_translated
from optreg.core.models import bool_message, number_message
from optreg.errors import Collector, closest, join_path, show, unknown_name
from optreg.readers.hf import BESIDE, read_beside

#: top-level keys only a ds_config has (with a mapping at `optimizer.params` / `scheduler.params`: the format's
#: signature)
SIGNATURE_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "zero_optimization", "gradient_clipping",
                  "steps_per_print", "zero_allow_untested_optimizer", "wall_clock_breakdown")
AUTO = "auto"
#: the one key "auto" may leave to the run (the Trainer fills it with the run's optimizer steps)
AUTO_LENGTH = "total_num_steps"
#: DeepSpeed's optimizers refused, with the reason
REFUSED = {
    "lamb": "DeepSpeed's Lamb is FusedLamb, a CUDA-only kernel (deepspeed.ops.lamb; DeepSpeed 0.19 has no CPU "
            "Lamb, with or without offload_optimizer) whose trust ratio is clamped to [min_coeff, max_coeff] and "
            "which clips by its own max_grad_norm; optreg has no such Lamb",
    "onebitadam": "1-bit Adam compresses the momentum that data-parallel workers exchange (an MPI or NCCL backend); "
                  "in one process there is nothing to compress, and its freeze_step phase is an Adam without bias "
                  "correction: use Adam or AdamW",
    "zerooneadam": "0/1 Adam compresses and skips the exchange between data-parallel workers; in one process it is "
                   "not defined: use Adam or AdamW",
    "onebitlamb": "1-bit LAMB compresses the momentum that data-parallel workers exchange (an MPI or NCCL backend) "
                  "over FusedLamb: not reproduced",
    "muadam": "MuAdam comes from the mup package (width-scaled lrs from the model's infshapes): not reproduced",
    "muadamw": "MuAdamW comes from the mup package (width-scaled lrs from the model's infshapes): not reproduced",
    "musgd": "MuSGD comes from the mup package (width-scaled lrs from the model's infshapes): not reproduced",
    "muon": "DeepSpeed's Muon (MuonWithAuxAdam) splits the parameters by shape into Muon and Adam halves: not read",
}
ADAM = ("adam", "adamw")
#: DeepSpeed's own optimizer names (DEEPSPEED_OPTIMIZERS, read in any case): read, kernels, or refused
DS_OPTIMIZERS = ("adam", "adamw", "adagrad", "lion", *REFUSED)
#: DeepSpeed's kernels read as an optreg optimizer: lower-case name -> (per kernel, offloaded then not: (the kernel,
#: optreg's section, why), or None where DeepSpeed builds torch's class; the defaults where the section's row has
#: others; the options it takes; the options it ignores), from DeepSpeed 0.19's deepspeed/ops: DeepSpeedCPUAdagrad
#: is torch's Adagrad without lr_decay / initial_accumulator_value (grad += wd·w; v += grad²; w -= lr·grad/(√v +
#: eps)); DeepSpeedCPULion and FusedLion are the `deepspeed` dialect's rows of their own (Lion's update, each with
#: its own step at an interpolation of exactly 0)
LION_WHY = ("its kernel steps -copysign(lr, c) with c = β1·m + (1-β1)·g: -lr where c is exactly +0 (a gradient and "
            "momentum both zero), where cerebras.Lion's sign(0) = 0 does not move the weight")
KERNELS = {
    "adagrad": ((("DeepSpeedCPUAdagrad", {"name": "Adagrad", "dialect": "torch"}, ""), None),
                {"lr": 1e-2, "eps": 1e-10, "weight_decay": 0.0}, ("lr", "eps", "weight_decay"), ("amsgrad",)),
    "lion": ((("DeepSpeedCPULion", {"name": "Lion", "dialect": "deepspeed"}, LION_WHY),
              ("FusedLion", {"name": "FusedLion", "dialect": "deepspeed"},
               "a CUDA kernel, read from its source: it steps `c > 0 ? -lr : lr` with c = β1·m + (1-β1)·g, +lr "
               "where c is exactly 0, where the offloaded kernel steps -lr and cerebras.Lion 0")),
             {}, ("lr", "betas", "weight_decay"), ()),
}
KERNEL_TRAINER = {"fp32_optimizer_states": "the CPU optimizer's state precision",
                  "set_grad_none": "FusedLion's zero_grad behaviour"}
ADAM_OPTIONS = ("lr", "betas", "eps", "weight_decay", "amsgrad")
ADAM_TRAINER = {"fp32_optimizer_states": "the CPU optimizer's state precision", "foreach": "torch's kernel choice",
                "set_grad_none": "FusedAdam's zero_grad behaviour"}
#: FusedAdam's and DeepSpeedCPUAdam's defaults where the section's class has others (torch's AdamW decays by 0.01,
#: cerebras.AdamW's eps is 1e-6)
KERNEL_DEFAULTS = {"weight_decay": 0.0, "eps": 1e-8}
MOMENTUM_KEYS = ("cycle_momentum", "cycle_min_mom", "cycle_max_mom", "decay_mom_rate")
MOMENTUM_WHY = "betas[0] cycled inversely to the lr, betas[1] set to 0.99 (DeepSpeed's OneCycle)"


def _is_auto(value: Any) -> bool:
    """Whether `value` is AUTO as the Hugging Face Trainer fills it: written so exactly (HfDeepSpeedConfig compares
    with ==)."""
    return value == AUTO


def _auto_spelled(value: Any) -> bool:
    """Whether `value` is AUTO in any case: "Auto" is not filled, and reaches DeepSpeed as a string (`_refuse_auto`
    says so)."""
    return isinstance(value, str) and value.lower() == AUTO


def _params(section: Mapping[str, Any], path: str, errors: Collector) -> dict[str, Any] | None:
    """The section's params as a dict; None (an error said) where DeepSpeed cannot construct the class from them.
    The optimizer's absent or null params are {} (`_configure_basic_optimizer`: `if optimizer_parameters is None:
    optimizer_parameters = {}`); the scheduler's are not: `_scheduler_from_config` constructs it with
    `**scheduler_params()`, None where params is absent or null, which raises TypeError."""
    raw = section.get("params")
    if raw is None and path == "optimizer":
        return {}
    if not isinstance(raw, Mapping):
        errors.add(join_path(path, "params"), f"expected a mapping of the {path}'s arguments, got {show(raw)}"
                   + (f" (DeepSpeed constructs the {path} with **params: {{}} for its defaults)" if raw is None
                      else ""))
        return None
    return dict(raw)


def _null_params(section: Any) -> bool:
    """Whether a section is `{type: ..., params: null}`: DeepSpeed's form (optreg's own has no `params` option)."""
    return isinstance(section, Mapping) and "type" in section and "params" in section and section["params"] is None


def _refuse_auto(params: Mapping[str, Any], path: str, errors: Collector, allowed: tuple[str, ...] = ()) -> None:
    for key, value in params.items():
        if _auto_spelled(value) and not _is_auto(value):
            errors.add(join_path(path, key), f"the Hugging Face Trainer fills \"auto\" written in lower case only: "
                                             f"{show(value)} would reach DeepSpeed as it is", AUTO)
        elif _is_auto(value) and key not in allowed:
            errors.add(join_path(path, key), f"\"auto\" is filled by the Hugging Face Trainer from its "
                                             f"TrainingArguments; give {key} a value"
                                             + (" (a schedule's total_num_steps may stay auto: the run length)"
                                                if path.startswith("scheduler") else ""))


def offloaded(data: Mapping[str, Any]) -> bool:
    """Whether the ZeRO section puts the optimizer on the CPU (`zero_use_cpu_optimizer`: offload_optimizer.device
    cpu or nvme, or the deprecated cpu_offload: true), where DeepSpeed builds its CPU kernels."""
    zero = data.get("zero_optimization")
    if not isinstance(zero, Mapping):
        return False
    offload = zero.get("offload_optimizer")
    if isinstance(offload, Mapping):
        return str(offload.get("device", "none")).lower() in ("cpu", "nvme")
    return zero.get("cpu_offload") is True


def read_kernel(low: str, name: str, params: dict[str, Any], offload: bool, report: list,
                errors: Collector) -> dict[str, Any]:
    """A DeepSpeed kernel of KERNELS (Adagrad offloaded, Lion) -> optreg's section with the kernel's defaults."""
    (cpu, gpu), defaults, options, ignored = KERNELS[low]
    kernel, section, why = cpu if offload else gpu
    report.append(KeyUse("optimizer.type", "exact", f"{name} -> {section['dialect']}.{section['name']} "
                                                    f"({kernel}{', offload_optimizer' if offload else ''})"
                                                    f"{': ' + why if why else ''}"))
    section = {**section, **defaults}
    for key, value in params.items():
        where = f"optimizer.params.{key}"
        if key in options:
            section[key] = value
            report.append(KeyUse(where, "exact"))
        elif key in ignored:
            report.append(KeyUse(where, "exact", f"{kernel} stores it and never reads it"))
        elif key in KERNEL_TRAINER:
            report.append(KeyUse(where, TRAINER, KERNEL_TRAINER[key]))
        else:
            errors.add(join_path("optimizer", f"params.{key}"), f"{kernel.split(' ')[0]} takes no {key!r}",
                       closest(str(key), [*options, *ignored, *KERNEL_TRAINER]))
    return section


def read_optimizer(raw: Any, report: list, errors: Collector, offload: bool = False) -> tuple[dict[str, Any], bool]:
    """`optimizer: {type, params}` -> (optreg's optimizer section, whether the optimizer has betas); `offload`: the
    ZeRO section offloads the optimizer (DeepSpeed's CPU kernels)."""
    path = "optimizer"
    if not isinstance(raw, Mapping) or "type" not in raw:
        errors.add(join_path(path, "type") if isinstance(raw, Mapping) else path,
                   "required: the optimizer's type (Adam, AdamW, a torch.optim class)" if isinstance(raw, Mapping)
                   else f"expected a mapping with type: and params:, got {show(raw)}")
        return {}, False
    for key in [k for k in raw if k not in ("type", "params", "legacy_fusion")]:
        errors.add(join_path(path, key), "unknown key of a ds_config optimizer; expected type, params",
                   closest(str(key), ["type", "params"]))
    if "legacy_fusion" in raw:
        report.append(KeyUse("optimizer.legacy_fusion", TRAINER, "the fp16 optimizer's fused kernel"))
    name, params = raw["type"], _params(raw, path, errors) or {}
    if not isinstance(name, str) or not name:
        errors.add(join_path(path, "type"), f"expected the optimizer's name, got {show(name)}")
        return {}, False
    if params.pop("max_grad_norm", None) is not None:
        errors.add(join_path(path, "params.max_grad_norm"), "DeepSpeed refuses max_grad_norm as an optimizer "
                                                            "parameter; use the top-level gradient_clipping")
    _refuse_auto(params, path + ".params", errors)
    low = name.lower()
    if low in REFUSED:
        errors.add(join_path(path, "type"), f"{name}: {REFUSED[low]}")
        return {}, False
    if low in KERNELS and (offload or KERNELS[low][0][1] is not None):
        return read_kernel(low, name, params, offload, report, errors), "betas" in KERNELS[low][2]
    if low not in DS_OPTIMIZERS and name not in torch_classes("optimizer"):
        errors.extend([unknown_name(join_path(path, "type"), "DeepSpeed", "optimizer", name,
                                    [*DS_OPTIMIZERS, *torch_classes("optimizer")],
                                    f"DeepSpeed builds its own ({', '.join(DS_OPTIMIZERS)}; any case) or a "
                                    f"torch.optim class by its exact name")])
        return {}, False
    if low not in ADAM:   # DeepSpeed's fallback: getattr(torch.optim, type)
        report.append(KeyUse("optimizer.type", "exact", f"torch.optim.{name}, as DeepSpeed builds it"))
        report.extend(KeyUse(f"optimizer.params.{k}", "exact") for k in params)
        return {"name": name, "dialect": "torch", **params}, "betas" in _torch_defaults(name)
    w_mode = params.pop("adam_w_mode", True)
    torch_adam = params.pop("torch_adam", False)
    for key, value in (("adam_w_mode", w_mode), ("torch_adam", torch_adam)):
        if (wrong := bool_message(value)) is not None:
            errors.add(join_path(path, f"params.{key}"), wrong)
    adamw = low == "adamw" or w_mode is True
    cls = "AdamW" if adamw else "Adam"
    kernel = f"torch.optim.{cls}" if torch_adam is True else "FusedAdam / DeepSpeedCPUAdam"
    report.append(KeyUse("optimizer.type", "exact", f"{name} -> {cls} ({kernel}{'' if adamw else ', L2 decay'})"))
    given = raw["params"] if isinstance(raw.get("params"), Mapping) else {}   # as the file has it (else: an error)
    for key in ("adam_w_mode", "torch_adam"):
        if key in given:
            report.append(KeyUse(f"optimizer.params.{key}", "exact"))
    bias = params.pop("bias_correction", True)
    section: dict[str, Any] = {"name": cls, "dialect": "torch"}
    if bias is False and adamw and torch_adam is not True:   # the kernels' m/(√v + eps), no correction
        section = {"name": "AdamW", "dialect": "cerebras", "correct_bias": False, "modelzoo_groups": False}
        report.append(KeyUse("optimizer.params.bias_correction", "exact",
                             "false: cerebras.AdamW with correct_bias: false (the same update, uncorrected)"))
    elif bias is not True:
        errors.add(join_path(path, "params.bias_correction"), "bias_correction: false is read with AdamW semantics "
                                                               "(adam_w_mode) and DeepSpeed's kernels only (torch's "
                                                               "Adam always corrects the bias)")
    elif "bias_correction" in given:
        report.append(KeyUse("optimizer.params.bias_correction", "exact"))
    if params.get("amsgrad") and torch_adam is not True:
        errors.add(join_path(path, "params.amsgrad"), "FusedAdam and DeepSpeedCPUAdam have no amsgrad "
                                                       "(DeepSpeed refuses it); set torch_adam: true for torch's")
    for key, value in params.items():
        if key in ADAM_TRAINER:
            report.append(KeyUse(f"optimizer.params.{key}", TRAINER, ADAM_TRAINER[key]))
        elif key in ADAM_OPTIONS:
            section[key] = value
            report.append(KeyUse(f"optimizer.params.{key}", "exact"))
        else:
            errors.add(join_path(path, f"params.{key}"), f"{kernel} takes no {key!r}",
                       closest(str(key), [*ADAM_OPTIONS, *ADAM_TRAINER]))
    if torch_adam is not True:
        for key, value in KERNEL_DEFAULTS.items():
            section.setdefault(key, value)
    return section, True


def torch_classes(kind: str) -> dict[str, type]:
    """DeepSpeed's fallback for a type it does not have, by its exact name (getattr): torch.optim's optimizers
    (kind "optimizer") or torch.optim.lr_scheduler's schedulers ("scheduler"), public name -> class."""
    import torch

    module, bases = (torch.optim, (torch.optim.Optimizer,)) if kind == "optimizer" else \
        (torch.optim.lr_scheduler, (torch.optim.lr_scheduler.LRScheduler, torch.optim.lr_scheduler.ReduceLROnPlateau))
    return {n: v for n, v in vars(module).items() if n[0] != "_" and isinstance(v, type) and issubclass(v, bases)
            and v not in bases[:1]}


def _torch_defaults(name: str) -> dict[str, Any]:
    import inspect

    cls = torch_classes("optimizer").get(name)
    if cls is None:
        return {}
    return {k: p.default for k, p in inspect.signature(cls).parameters.items()}


def read_scheduler(raw: Any, has_betas: bool, report: list, errors: Collector) -> dict[str, Any] | None:
    """`scheduler: {type, params}` -> optreg's scheduler section (deepspeed dialect, or torch's by class name)."""
    from optreg.dialects.deepspeed.schedules import DS_SCHEDULES

    path = "scheduler"
    if not isinstance(raw, Mapping) or "type" not in raw:
        errors.add(join_path(path, "type") if isinstance(raw, Mapping) else path,
                   "required: the scheduler's type (WarmupLR, WarmupDecayLR, WarmupCosineLR, OneCycle, LRRangeTest)"
                   if isinstance(raw, Mapping) else f"expected a mapping with type: and params:, got {show(raw)}")
        return None
    for key in [k for k in raw if k not in ("type", "params")]:
        errors.add(join_path(path, key), "unknown key of a ds_config scheduler; expected type, params",
                   closest(str(key), ["type", "params"]))
    name, params = raw["type"], _params(raw, path, errors)
    if not isinstance(name, str) or not name:
        errors.add(join_path(path, "type"), f"expected the scheduler's name, got {show(name)}")
        return None
    if name not in DS_SCHEDULES and name not in torch_classes("scheduler"):
        # DeepSpeed's _scheduler_from_config: getattr(lr_schedules, type), else torch.optim.lr_scheduler's
        errors.extend([unknown_name(join_path(path, "type"), "DeepSpeed", "scheduler", name,
                                    [*DS_SCHEDULES, *torch_classes("scheduler")],
                                    f"DeepSpeed builds its lr_schedules ({', '.join(DS_SCHEDULES)}) or a "
                                    f"torch.optim.lr_scheduler class, by its exact name")])
        return None
    if params is None:
        return None
    _refuse_auto(params, path + ".params", errors, allowed=(AUTO_LENGTH,))
    spec: dict[str, Any] = {"name": name, "dialect": "deepspeed" if name in DS_SCHEDULES else "torch"}
    for key, value in params.items():
        where = f"scheduler.params.{key}"
        if _auto_spelled(value):   # "auto", or another case of it that _refuse_auto has refused
            if _is_auto(value):
                report.append(KeyUse(where, "exact", "auto: the run length (--steps, build(total_steps=))"))
            continue
        if isinstance(value, (list, tuple)) and name in DS_SCHEDULES:   # DeepSpeed's per-group form: one group
            if len(value) != 1:
                errors.add(join_path(path, f"params.{key}"), f"a list gives one value per parameter group, and a "
                                                             f"ds_config's optimizer has one; got {len(value)}")
                continue
            value = value[0]
        if name == "OneCycle" and key in MOMENTUM_KEYS and not has_betas:
            continue
        spec[key] = value
        report.append(KeyUse(where, "exact", MOMENTUM_WHY if name == "OneCycle" and key in MOMENTUM_KEYS else ""))
    _missing_length(name, spec["dialect"], params, path, errors)
    if name == "OneCycle" and not has_betas:   # DeepSpeed disables the cycling with a warning
        spec["cycle_momentum"] = False
        report.extend(KeyUse(f"scheduler.params.{key}", "exact", "no momentum cycling: the optimizer has no betas "
                                                                 "(DeepSpeed disables it with a warning)")
                      for key in MOMENTUM_KEYS if key in params)
    report.append(KeyUse("scheduler.type", "exact", f"{spec['dialect']}.{name}"))
    return spec


def _missing_length(name: str, dialect: str, params: Mapping[str, Any], path: str, errors: Collector) -> None:
    """A schedule's length that has no value of its own (WarmupDecayLR's total_num_steps, a torch T_max) left out
    of params: DeepSpeed constructs the class with params as keywords, which fails without it, so it is refused
    here, where optreg's own form would take it from the run ("auto" asks for that). A misspelling of it is the
    own form's error (an unknown option, with the did-you-mean)."""
    from optreg.core import models
    from optreg.core.entry import SCHEDULER
    from optreg.core.loop import required_length
    from optreg.core.registry import REGISTRY

    entry = REGISTRY.lookup(SCHEDULER, name, dialect)
    length = required_length(entry)
    if length is None or length in params:
        return
    known = {o.name for o in models.options(entry)}
    if closest(length, [str(k) for k in params if k not in known]) is None:
        auto = ' ("auto": the run length)' if length == AUTO_LENGTH else ""
        errors.add(join_path(path, f"params.{length}"), f"{models.MISSING_OPTION}: DeepSpeed constructs {name} "
                                                        f"with params, which must give it{auto}")


def argument_errors(errors: Collector) -> tuple[str, ...]:
    """The paths of the reader's errors at one argument of optimizer.params (a key it leaves out of the section, a
    value it refuses): the rest of the section is read as the file has it, so each error stands for itself alone and
    the own form's problems in the other arguments are said beside it (read_translated's `sections`)."""
    return tuple(e.path for e in errors.items if re.fullmatch(r"optimizer\.params\.[^.\[]+", e.path))


class DeepSpeedFormat:
    """A DeepSpeed ds_config: `optimizer: {type, params}`, `scheduler: {type, params}`, `gradient_clipping`; its
    other keys are the engine's."""

    name = "deepspeed"
    doc = "DeepSpeed's ds_config.json: optimizer {type, params}, scheduler {type, params}, gradient_clipping"
    keys = ("optimizer", "scheduler", *SIGNATURE_KEYS)
    signature = ("optimizer.params or scheduler.params as a mapping (or null beside type:), train_batch_size or "
                 "zero_optimization")

    def claims(self, data: Mapping[str, Any]) -> bool:
        return any(has_mapping(data, f"{key}.params") or _null_params(data.get(key))
                   for key in ("optimizer", "scheduler")) \
            or any(k in data for k in SIGNATURE_KEYS)

    def sections(self, data: Mapping[str, Any]) -> list[Any]:
        return list(data.keys())

    def read(self, data: Mapping[str, Any], source: Any = None) -> Any:
        errors, report = Collector(), []
        own: dict[str, Any] = {}
        paths = {"optimizer.name": "optimizer.type", "optimizer": "optimizer.params",
                 "scheduler.name": "scheduler.type", "scheduler": "scheduler.params",
                 "clip_grad.max_norm": "gradient_clipping", "clip_grad": "gradient_clipping"}
        has_betas = False
        if "optimizer" not in data:
            errors.add("optimizer", "required: optimizer {type, params} (a ds_config without one trains the "
                                    "client's optimizer, which the file does not say)")
        else:
            own["optimizer"], has_betas = read_optimizer(data["optimizer"], report, errors, offloaded(data))
        if data.get("scheduler") is not None:
            own["scheduler"] = read_scheduler(data["scheduler"], has_betas, report, errors)
        clip = data.get("gradient_clipping", 0.0)
        wrong = number_message(clip, finite=True)   # the engine clips when it is > 0: 0 or below, no clipping
        if "gradient_clipping" in data:
            if _auto_spelled(clip):
                errors.add("gradient_clipping", "\"auto\" is filled by the Hugging Face Trainer from max_grad_norm; "
                                                "give gradient_clipping a value")
            elif wrong is not None:
                errors.add("gradient_clipping", wrong)
            elif clip > 0:
                own["clip_grad"] = {"max_norm": clip}
            report.append(KeyUse("gradient_clipping", "exact", "the global norm (clip_grad.max_norm)"
                                 if wrong is not None or clip > 0 else
                                 f"{show(clip)}: no clipping (DeepSpeed clips when it is > 0)"))
        read_beside(data, own, report, "the ds_config")   # as every other format's reader: DeepSpeed has no `train`
        read = ("optimizer", "scheduler", "gradient_clipping", BESIDE)
        for key in data:
            if key in read:
                continue
            # DeepSpeed reads the sections it knows and passes over the others: a near miss of one optreg reads
            # would leave it out silently
            hint = closest(str(key), list(read), cutoff=0.85)
            if hint is not None:
                errors.add(str(key), "not a section DeepSpeed reads", hint)
            report.append(KeyUse(str(key), TRAINER, "DeepSpeed's engine"))
        auto = next((u.path for u in report if u.why.startswith("auto:")), None)   # the length left to the run
        # the reader's errors, with the own form's in the sections it found none in (every problem at once)
        return read_translated(own, source, self.name, paths, report, run_length=auto, errors=errors, beside=True,
                               sections=argument_errors(errors))


DEEPSPEED_FORMAT = DeepSpeedFormat()

__all__ = ["DEEPSPEED_FORMAT", "DeepSpeedFormat", "read_optimizer", "read_scheduler"]

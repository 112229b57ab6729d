"""A NeMo config -> optreg's own experiment, by NeMo's rules (NeMo 2.x: `ModelPT.setup_optimization`,
`nemo/core/optim/optimizers.py`, `nemo/core/optim/lr_scheduler.py:prepare_lr_scheduler`):

- `model.optim.name` (default adam) names a class of NeMo's AVAILABLE_OPTIMIZERS: sgd, adam, adamw, adadelta,
  adamax, adagrad, rmsprop, rprop are torch's; fused_adam is apex's FusedAdam, which is AdamW (adam_w_mode true, its
  default; Adam when false) with weight_decay 0 by default. The other keys but `sched`, `name` and `cls` are the
  optimizer's keywords.
- `sched.max_steps` becomes `trainer.max_steps` when that is >= 0 (NeMo's setup_optimization). Otherwise a
  `max_steps: -1` left in the schedule means no schedule: NeMo warns and trains at the constant lr (reproduced, with
  the warning in the experiment's notes); no max_steps: NeMo computes it from trainer.max_epochs and the dataloader,
  here trainer.max_epochs × steps_per_epoch (the optimizer steps per epoch: train.steps_per_epoch or
  build(steps_per_epoch=)); no trainer: no schedule either.
- ExponentialLR and ReduceLROnPlateau step per epoch in NeMo (its EPOCH_SCHEDULERS): ExponentialLR is read with
  by_epoch; ReduceLROnPlateau steps on a validation metric and is refused.
- NeMo moves a `params:` mapping up into its parent first (maybe_update_config_version, `_hydra_1x`): in
  `sched`, in `sched.args` and in `model.optim.args`.
- The older `sched.args` form: with `args.name` (auto: the schedule's name + Params) the schedule takes that
  parameter class's defaults alone (`_args_form`), without it args' keys; what NeMo does not read is reported.
- The older `model.optim.args` form: with `args.name` (auto: the optimizer's name + _params) the optimizer takes
  that parameter class's fields, args' keys over their defaults (`_optimizer_args`), without it args' keys; the
  keys beside args but name, lr, _target_, cls and sched are not read (reported and warned).
- A `sched` without `name`: NeMo warns and builds no scheduler, so the lr stays constant (reproduced, warned).
- `trainer.gradient_clip_val` (> 0) clips the global norm (gradient_clip_algorithm value: each element).
The YAML is read as OmegaConf reads it; `${...}` interpolations are resolved by OmegaConf against the whole config.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, NamedTuple

from optreg.config.formats import Choice, KeyUse
from optreg.config.run import epochs_run, length_replaced, run_known
from optreg.core.models import number_message
from optreg.errors import Collector, ConfigError, closest, join_path, key_text, show, warn_at
from optreg.config.translate import read_translated

#: NeMo's optimizer name -> optreg's torch-dialect optimizer
TORCH = {"sgd": "SGD", "adam": "Adam", "adamw": "AdamW", "adadelta": "Adadelta", "adamax": "Adamax",
         "adagrad": "Adagrad", "rmsprop": "RMSprop", "rprop": "Rprop"}
#: NeMo's optimizers optreg does not build, and why
REFUSED = {
    "lamb": "apex's FusedLAMB (CUDA only) is a LAMB with its own trust-ratio clipping; optreg does not reproduce it",
    "adafactor": "NeMo's own Adafactor (fairseq's) is not reproduced by optreg; use optreg's torch Adafactor "
                 "explicitly if it fits",
    "adan": "NeMo's Adan is not in optreg",
    "distributed_fused_adam": "apex's distributed optimizer shards AdamW's state across data-parallel ranks; a "
                              "multi-process runtime, not a config optreg can build",
    "megatron_fused_adam": "Megatron's fused Adam is apex / Megatron runtime code, not built by optreg",
    "mcore_distributed_optim": "Megatron Core's distributed optimizer is a multi-process runtime, not built by optreg",
}
#: NeMo's Novograd (nemo/core/optim/novograd.py; NovoGrad, Ginsburg et al. 2019): v ← ‖g‖² at the first step,
#: then β2·v + (1 − β2)·‖g‖² per tensor; g ← g/(√v + eps) + wd·w; m ← β1·m + g; w ← w − lr·m. pytorch_optimizer's
#: NovoGrad (weight_decouple false) computes the same from the same defaults (lr 1e-3, betas (0.95, 0.98), eps
#: 1e-8), recorded; NeMo's options it has not, refused when on, with how NeMo differs
NOVOGRAD = "novograd"
NOVOGRAD_OPTIONS = ("lr", "betas", "eps", "weight_decay")
NOVOGRAD_OFF = {
    "grad_averaging": "NeMo's grad_averaging scales the first step's momentum by 1 − β1 too, pytorch_optimizer's "
                      "NovoGrad starts its momentum at the unscaled gradient: not the same first step",
    "amsgrad": "NeMo's Novograd with amsgrad normalises by the running maximum of ‖g‖²'s average; no registered "
               "NovoGrad has it",
    "luc": "NeMo's layer-wise update clipping (luc, luc_trust, luc_eps) caps the step at luc_trust·‖w‖/‖m‖; no "
           "registered NovoGrad has it",
}
NOVOGRAD_UNUSED = ("luc_trust", "luc_eps")   # read only with luc
FUSED_ADAM = "fused_adam"
FUSED_ONLY = {"adam_w_mode", "bias_correction", "set_grad_none", "capturable", "master_weights"}
TORCH_SCHEDULERS = ("StepLR", "ExponentialLR", "CyclicLR")   # torch's classes in NeMo's table: read as torch's
#: Lightning's Trainer arguments (2.x, and 1.x's that NeMo's older configs carry): `pl.Trainer(**cfg.trainer)` takes
#: these and refuses any other key with a TypeError
LIGHTNING_TRAINER = frozenset((
    "accelerator", "strategy", "devices", "num_nodes", "precision", "logger", "callbacks", "fast_dev_run",
    "max_epochs", "min_epochs", "max_steps", "min_steps", "max_time", "limit_train_batches", "limit_val_batches",
    "limit_test_batches", "limit_predict_batches", "overfit_batches", "val_check_interval",
    "check_val_every_n_epoch", "num_sanity_val_steps", "log_every_n_steps", "enable_checkpointing",
    "enable_progress_bar", "enable_model_summary", "accumulate_grad_batches", "gradient_clip_val",
    "gradient_clip_algorithm", "deterministic", "benchmark", "inference_mode", "use_distributed_sampler",
    "profiler", "detect_anomaly", "barebones", "plugins", "sync_batchnorm", "reload_dataloaders_every_n_epochs",
    "default_root_dir", "model_registry",
    # Lightning 1.x
    "gpus", "tpu_cores", "ipus", "hpus", "auto_select_gpus", "num_processes", "track_grad_norm", "amp_backend",
    "amp_level", "replace_sampler_ddp", "resume_from_checkpoint", "progress_bar_refresh_rate", "weights_summary",
    "flush_logs_every_n_steps", "checkpoint_callback", "process_position", "log_gpu_memory", "terminate_on_nan",
    "prepare_data_per_node", "move_metrics_to_cpu", "multiple_trainloader_mode", "stochastic_weight_avg",
    "auto_lr_find", "auto_scale_batch_size", "weights_save_path", "truncated_bptt_steps", "distributed_backend"))
EPOCH = {"ExponentialLR"}          # NeMo's EPOCH_SCHEDULERS stepped per epoch by Lightning (and ReduceLROnPlateau)
SCHED_TRAINER = {"monitor": "the metric Lightning logs with the schedule",
                 "reduce_on_plateau": "Lightning's flag, set by NeMo from the schedule's class",
                 "iters_per_batch": "ignored by NeMo's scheduler construction"}


def _accumulation(trainer: Any) -> tuple[str, Any] | None:
    """Lightning's accumulate_grad_batches of the trainer section, as `epochs_run` takes it: NeMo's
    compute_max_steps divides an epoch's batches by it (⌈batches / A⌉ optimizer steps, each one schedule step)."""
    return ("trainer.accumulate_grad_batches", trainer.get("accumulate_grad_batches")) \
        if isinstance(trainer, Mapping) else None


def _epochs_run(trainer: Any) -> str:
    """The run NeMo trains without trainer.max_steps, and the max_steps it gives the schedule then."""
    return epochs_run("trainer.max_epochs", _accumulation(trainer))


def _epochs_replaced(trainer: Any) -> str:
    """Why trainer.max_epochs is not the run, nor the schedule's max_steps, when a run length is given beside it."""
    return length_replaced("NeMo's", "trainer.max_epochs", _accumulation(trainer))


NO_SCHEDULE = ("NeMo builds no scheduler when the schedule's max_steps is -1 (`max_steps` is set to -1 in the "
               "scheduler config, scheduler will not be instantiated): the lr stays constant")
NO_NAME = ("NeMo builds no scheduler from a schedule without name (`name` was not provided either. Scheduler cannot "
           "be instantiated !): the lr stays constant")


def _omegaconf(data: Any) -> Any:
    from omegaconf import DictConfig, OmegaConf

    from optreg.integrations.hydra.support import omegaconf_refusal, refused_by_omegaconf

    if isinstance(data, DictConfig):
        return data
    try:
        return OmegaConf.create(dict(data))
    except Exception as exc:   # a key or value OmegaConf refuses (a nesting deeper than it recurses): where
        raise omegaconf_refusal(exc, refused_by_omegaconf(data) or "model") from None


def _resolved(cfg: Any, path: str, errors: Collector) -> Any:
    """The plain value at `path`, interpolations resolved (None when absent); an unresolvable one is an error at
    the deepest key that fails."""
    from omegaconf import DictConfig, ListConfig, OmegaConf

    from optreg.integrations.hydra.support import unresolved

    try:
        node = OmegaConf.select(cfg, path, throw_on_missing=True, throw_on_resolution_failure=True)
        if isinstance(node, (DictConfig, ListConfig)):
            return OmegaConf.to_container(node, resolve=True, throw_on_missing=True)
        return node
    except Exception as exc:
        node = OmegaConf.select(cfg, path, throw_on_resolution_failure=False, throw_on_missing=False)
        if isinstance(node, DictConfig):
            for key in node.keys():
                before = len(errors.items)
                _resolved(cfg, f"{path}.{key}", errors)
                if len(errors.items) > before:
                    return None
        errors.add(path, *unresolved(exc, cfg, path))
        return None


#: a trainer key the reader does not resolve (`_trainer_section`): Lightning's business, or a max_epochs not the run's
NOT_READ = object()
#: the trainer keys the reader computes with, besides max_epochs
TRAINER_READ = ("max_steps", "gradient_clip_val", "gradient_clip_algorithm")
#: a trainer key the reader does not apply but its report words with (`_accumulation`): resolved, Lightning's still
TRAINER_SAID = ("accumulate_grad_batches",)


def _trainer_section(cfg: Any, errors: Collector, given: bool) -> Any:
    """`trainer:` with the values the reader reads resolved, the others NOT_READ: a key left blank (`???`, filled by
    the application on its command line) is Lightning's, as the model's blanks are the application's; so is a
    max_epochs that cannot be resolved where it is not the run (beside max_steps >= 0 or a run length given)."""
    from omegaconf import DictConfig, OmegaConf

    node = OmegaConf.select(cfg, "trainer", throw_on_missing=False, throw_on_resolution_failure=False)
    if not isinstance(node, DictConfig):
        return _resolved(cfg, "trainer", errors)
    section = {key: _resolved(cfg, f"trainer.{key}", errors) if key in TRAINER_READ else NOT_READ
               for key in node.keys()}
    for key in set(TRAINER_SAID) & set(section):   # a blank or broken one stays Lightning's, and unsaid
        said = Collector()
        value = _resolved(cfg, f"trainer.{key}", said)
        section[key] = NOT_READ if said else value
    if "max_epochs" in section:
        steps, blank = section.get("max_steps", -1), Collector()
        section["max_epochs"] = _resolved(cfg, "trainer.max_epochs", blank)
        if blank and (given or isinstance(steps, int) and steps >= 0):
            section["max_epochs"] = NOT_READ
        errors.extend(blank.items if section["max_epochs"] is not NOT_READ else [])
    return section


def _optimizer(optim: Mapping[str, Any], errors: Collector, report: list[KeyUse], warned: list[Warned],
               paths: dict[str, str]) -> dict[str, Any] | None:
    """model.optim (less sched) -> optreg's torch-dialect optimizer section; `paths` receives the own form's
    optimizer paths that are not the NeMo config's `model.optim.<key>` (the args form's)."""
    path = "model.optim"
    name = optim.get("name", "adam")
    target = optim.get("_target_")
    if target is not None:   # a class path NeMo instantiates with hydra: torch.optim's classes are read
        if not (isinstance(target, str) and target.startswith("torch.optim.") and
                target.rsplit(".", 1)[1].lower() in TORCH):
            errors.add(join_path(path, "_target_"), f"a class path other than torch.optim's optimizers "
                                                    f"({', '.join(TORCH.values())}) is code optreg does not import, "
                                                    f"got {show(target)}")
            return None
        name = target.rsplit(".", 1)[1].lower()
    if not isinstance(name, str) or (name not in TORCH and name not in REFUSED and name not in (FUSED_ADAM,
                                                                                                   NOVOGRAD)):
        known = [*TORCH, FUSED_ADAM, NOVOGRAD, *REFUSED]
        errors.add(join_path(path, "name"), f"not one of NeMo's optimizers ({', '.join(known)}), got {show(name)}",
                   closest(name, known) if isinstance(name, str) else None)
        return None
    if name in REFUSED:
        errors.add(join_path(path, "name"), f"{name}: {REFUSED[name]}")
        return None
    at = {key: join_path(path, key_text(key)) for key in optim}   # each key's path in the file
    said: set[Any] = set()   # keys the args form reported already
    if "args" in optim:
        read = _optimizer_args(optim, name, errors, report, warned)
        if read is None:
            return None
        optim, at, said = read
        paths.update({f"optimizer.{key_text(k)}": where for k, where in at.items()
                      if where != join_path(path, key_text(k))})
    if name == NOVOGRAD:
        return _novograd(optim, at, said, errors, report)
    options = {k: v for k, v in optim.items() if k not in ("name", "sched", "cls", "_target_")}
    why = ""
    if name == FUSED_ADAM:
        for key in FUSED_ONLY - {"adam_w_mode", "bias_correction", "set_grad_none"}:
            if key in options:
                errors.add(at[key], f"apex FusedAdam's {key} is a CUDA runtime setting optreg does not build")
        if options.get("bias_correction", True) is not True:
            errors.add(at["bias_correction"], "apex FusedAdam without bias correction is not reproduced")
        decoupled = options.pop("adam_w_mode", True)
        options.pop("bias_correction", None)
        options.pop("set_grad_none", None)
        options.setdefault("weight_decay", 0.0)   # apex's default, not torch AdamW's 0.01
        torch_name = "AdamW" if decoupled else "Adam"
        why = f"apex FusedAdam with adam_w_mode {str(bool(decoupled)).lower()} is torch's {torch_name}"
    else:
        torch_name = TORCH[name]
    for key in optim:
        if key == "sched" or key in said:
            continue
        if key == "cls":
            report.append(KeyUse(at[key], "trainer", "dropped by NeMo's setup_optimization"))
        elif key == "set_grad_none":
            report.append(KeyUse(at[key], "trainer", "apex's zero_grad setting"))
        else:
            report.append(KeyUse(at[key], "exact", why if key in ("name", "adam_w_mode") else ""))
    if "name" not in optim and target is None:
        report.append(KeyUse(join_path(path, "name"), "exact", "NeMo's default: adam"))
    return {"name": torch_name, **options}


#: NeMo's AVAILABLE_OPTIMIZER_PARAMS (nemo/core/config/optimizers.py): each class's fields and defaults but lr
#: (OptimizerParams' lr, MISSING), the keywords an optimizer args form with `name:` gives the optimizer, args' keys
#: over them. AdamParams has no betas (NeMo leaves that field out): Adam takes torch's
_ADAM_LIKE = {"betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0}
OPTIMIZER_PARAMS: dict[str, dict[str, Any]] = {
    "optim_params": {},
    "adam_params": {"eps": 1e-8, "weight_decay": 0, "amsgrad": False},
    "novograd_params": {"betas": (0.95, 0.98), "eps": 1e-8, "weight_decay": 0, "grad_averaging": False,
                        "amsgrad": False, "luc": False, "luc_trust": 1e-3, "luc_eps": 1e-8},
    "sgd_params": {"momentum": 0, "dampening": 0, "weight_decay": 0, "nesterov": False},
    "adadelta_params": {"rho": 0.9, "eps": 1e-6, "weight_decay": 0},
    "adamax_params": _ADAM_LIKE,
    "adagrad_params": {"lr_decay": 0, "weight_decay": 0, "initial_accumulator_value": 0, "eps": 1e-10},
    "adamw_params": {**_ADAM_LIKE, "amsgrad": False},
    "rmsprop_params": {"alpha": 0.99, "eps": 1e-8, "weight_decay": 0, "momentum": 0, "centered": False},
    "rprop_params": {"etas": (0.5, 1.2), "step_sizes": (1e-6, 50)},
    "adafactor_params": {"beta1": None, "eps": (1e-30, 1e-3), "clip_threshold": 1.0, "decay_rate": 0.8,
                         "weight_decay": 0, "scale_parameter": True, "relative_step": False, "warmup_init": False},
}
#: the keys of model.optim that setup_optimization reads beside args (the others it does not)
BESIDE_ARGS = ("name", "lr", "_target_", "cls", "sched")


def _optimizer_args(optim: Mapping[str, Any], name: str, errors: Collector, report: list[KeyUse], warned: list[Warned]
                    ) -> tuple[dict[Any, Any], dict[Any, str], set[Any]] | None:
    """NeMo's older `model.optim.args` form (setup_optimization, parse_optimizer_args) -> (model.optim as the plain
    form would give the same keywords, each key's path in the file, the keys reported here). NeMo moves `params:`
    up into args (`_hydra_1x`); with `args.name` (auto: the optimizer's name + _params) the keywords are that
    parameter class's defaults with args' keys over them (a key that is none of its fields NeMo's OmegaConf.merge
    refuses), without it args' keys; model.optim.lr, when given, is the lr. The keys beside args but name, lr,
    _target_, cls and sched are not read."""
    path = "model.optim"
    where = join_path(path, "args")
    args = optim["args"]
    if args is None:
        report.append(KeyUse(where, "exact", "no keywords (NeMo's parse_optimizer_args gives none)"))
        args = {}
    moved = _args_mapping(args, where, "optimizer", OPTIMIZER_CLASS_PATH, errors)
    if moved is None:
        return None
    values, at = moved
    said: set[Any] = set()
    unread: list[str] = []
    taken = None
    if "name" in values:
        taken = _params_class(values.pop("name"), f"{name}_params", OPTIMIZER_PARAMS, "optimizer", at["name"],
                              errors)
        if taken is None:
            return None
        fields, before = OPTIMIZER_PARAMS[taken], len(errors.items)
        for key in values:
            if key != "lr" and key not in fields:
                errors.add(at[key], f"not a field of NeMo's {taken}, which refuses it (OmegaConf.merge)",
                           closest(str(key), ["lr", *fields]))
        if "lr" not in values and optim.get("lr") is None:
            errors.add(at["name"], f"NeMo's {taken} leaves lr missing (???) unless model.optim.lr or args.lr gives "
                                   f"it, and the optimizer refuses that")
        if len(errors.items) > before:
            return None
        defaults = {k: v for k, v in fields.items() if k not in values}
        said = set(defaults)
        text = ", ".join(f"{k} {show(v)}" for k, v in defaults.items())
        report.append(KeyUse(at.pop("name"), "exact", f"NeMo gives the optimizer the fields of {taken}: args' keys "
                                                      f"over its defaults" + (f" ({text})" if text else "")))
        at.update({key: join_path(where, "name") for key in defaults})
        values = {**defaults, **values}
    if optim.get("lr") is not None:
        if "lr" in values:
            report.append(KeyUse(at["lr"], "exact", "not read by NeMo: model.optim.lr is the lr"))
            unread.append(f"{at['lr']} {show(values['lr'])}")
        values["lr"], at["lr"] = optim["lr"], join_path(path, "lr")
    kept = {key: optim[key] for key in BESIDE_ARGS if key in optim and key != "lr"}
    for key in optim:
        if key not in BESIDE_ARGS and key != "args":
            report.append(KeyUse(join_path(path, key_text(key)), "exact", "not read by NeMo beside args"))
            unread.append(f"{join_path(path, key_text(key))} {show(optim[key])}")
    _unread(where, unread, f"gives the optimizer the defaults of {taken} with args' keys over them" if taken else
            "gives the optimizer args' keys alone", warned)
    return {**kept, **values}, {**{k: join_path(path, key_text(k)) for k in kept}, **at}, said


def _novograd(optim: Mapping[str, Any], at: Mapping[Any, str], said: set[Any], errors: Collector,
              report: list[KeyUse]) -> dict[str, Any] | None:
    """model.optim with name novograd -> pytorch_optimizer's NovoGrad (NOVOGRAD_OPTIONS; NeMo's other options
    only when off); `at`: each key's path in the file, `said`: the keys reported already (the args form's)."""
    section: dict[str, Any] = {"name": "NovoGrad", "dialect": "pytorch_optimizer"}
    for key, value in optim.items():
        where = at[key]
        if key == "sched":
            continue
        if key == "name":
            report.append(KeyUse(where, "exact", "NeMo's Novograd is pytorch_optimizer's NovoGrad"))
        elif key == "cls":
            report.append(KeyUse(where, "trainer", "dropped by NeMo's setup_optimization"))
        elif key in NOVOGRAD_OPTIONS:
            section[key] = value
            if key not in said:
                report.append(KeyUse(where, "exact"))
        elif key in NOVOGRAD_OFF and value is False:
            if key not in said:
                report.append(KeyUse(where, "exact", "off"))
        elif key in NOVOGRAD_OFF:
            errors.add(where, NOVOGRAD_OFF[key])
        elif key in NOVOGRAD_UNUSED and not optim.get("luc"):
            if key not in said:
                report.append(KeyUse(where, "exact", "unused without luc"))
        elif key not in NOVOGRAD_UNUSED:
            errors.add(where, "NeMo's Novograd takes no such option",
                       closest(str(key), [*NOVOGRAD_OPTIONS, *NOVOGRAD_OFF, *NOVOGRAD_UNUSED]))
    return section


def _trainer(trainer: Any, errors: Collector, report: list[KeyUse], length_given: bool = False
             ) -> tuple[int, int | None, dict | None]:
    """(max_steps, max_epochs, clip_grad) of Lightning's trainer section, as Lightning defaults them.
    `length_given`: a run length is given beside the file (--steps, its own train:, build(total_steps=)), which
    replaces max_epochs."""
    if trainer is None:
        return -1, None, None
    if not isinstance(trainer, Mapping):
        errors.add("trainer", f"expected Lightning's trainer mapping, got {show(trainer)}")
        return -1, None, None
    steps = trainer.get("max_steps", -1)
    if steps is None:
        steps = -1
    if (wrong := number_message(steps, -1, integer=True)) is not None:   # -1: no limit (Lightning's)
        errors.add("trainer.max_steps", wrong)
        steps = -1
    epochs = trainer.get("max_epochs")
    if epochs is NOT_READ:   # not the run's length (_trainer_section)
        pass
    elif epochs is None or epochs == -1:
        epochs = 1000 if steps == -1 and epochs is None else None   # Lightning: 1000 when neither is given
    elif (wrong := number_message(epochs, 1, integer=True, also="-1: no limit")) is not None:
        errors.add("trainer.max_epochs", wrong)
        epochs = None
    clip = None
    value = trainer.get("gradient_clip_val")
    algorithm = trainer.get("gradient_clip_algorithm") or "norm"
    if algorithm not in ("norm", "value"):
        errors.add("trainer.gradient_clip_algorithm", f"must be 'norm' or 'value', got {show(algorithm)}")
    elif value not in (None, 0, 0.0):
        clip = {"max_norm" if algorithm == "norm" else "max_value": value}
    read = {"max_steps", "max_epochs", "gradient_clip_val", "gradient_clip_algorithm"}
    for key in trainer:
        near = closest(str(key), sorted(read)) if key not in read and key not in LIGHTNING_TRAINER else None
        if near is not None:   # a misspelt key optreg reads: Lightning's Trainer would refuse it, optreg would drop it
            errors.add(join_path("trainer", key_text(key)), "not an argument of Lightning's Trainer, which refuses "
                                                            "it (the run length or the clipping would be lost)", near)
            continue
        if key == "max_epochs" and epochs is not None and (steps >= 0 or length_given):   # not the run's length
            report.append(KeyUse("trainer.max_epochs", "trainer", "Lightning stops after max_epochs or at max_steps, "
                                 "whichever comes first; NeMo's schedule and optreg's run follow max_steps")
                          if steps >= 0 else KeyUse("trainer.max_epochs", "approximate", _epochs_replaced(trainer)))
            continue
        report.append(KeyUse(join_path("trainer", key_text(key)), "exact" if key in read else "trainer",
                             "" if key in read else "Lightning's, the training loop's business"))
    return steps, epochs, clip


CLASS_PATH = ("NeMo's _target_ form instantiates a scheduler parameter class by path; give the schedule's keywords "
              "beside name: instead")
OPTIMIZER_CLASS_PATH = ("NeMo's _target_ form of args instantiates an optimizer parameter class by path; give the "
                        "optimizer's keywords in args or beside name: instead")


def _hydra_1x(node: Mapping[str, Any], where: str, errors: Collector
              ) -> tuple[dict[Any, Any], dict[Any, str]] | None:
    """A mapping as NeMo reads it after maybe_update_config_version (Hydra 0.x to 1.x): the keys of its `params:`
    moved up into it, over a key of the same name. (its values by key, each key's path in the file); None where
    params is no mapping (an error at it)."""
    values = {key: value for key, value in node.items() if key != "params"}
    at = {key: join_path(where, key_text(key)) for key in values}
    if "params" in node:
        params = node["params"]
        if not isinstance(params, Mapping):
            errors.add(join_path(where, "params"), f"NeMo moves params' keys into {where.rsplit('.', 1)[-1]}: "
                                                   f"expected a mapping, got {show(params)}")
            return None
        values.update(params)
        at.update({key: join_path(where, f"params.{key_text(key)}") for key in params})
    return values, at


def _class_path(at: Mapping[Any, str], errors: Collector, message: str) -> bool:
    """Whether a mapping NeMo instantiates by class path (`_target_`, or Hydra 0.x's `cls`, which
    maybe_update_config_version makes its _target_) was given one: an error at it."""
    for key in ("_target_", "cls"):
        if key in at:
            errors.add(at[key], message)
            return True
    return False


def _args_mapping(args: Any, where: str, what: str, class_path: str, errors: Collector
                  ) -> tuple[dict[Any, Any], dict[Any, str]] | None:
    """An args form's mapping (`what`'s, at `where`) as NeMo reads it (`_hydra_1x`); None where it is no mapping,
    its params are none, or it names a class path NeMo would instantiate (`class_path`: why not), errors at them."""
    if not isinstance(args, Mapping):
        errors.add(where, f"expected NeMo's {what} args mapping (name: auto, ...), got {show(args)}")
        return None
    moved = _hydra_1x(args, where, errors)
    return None if moved is None or _class_path(moved[1], errors, class_path) else moved


class Warned(NamedTuple):
    """What the reader warns of (`why`), at the key `at`, which the experiment's notes say under `head`."""

    at: str
    head: str
    why: str


def _unread(where: str, unread: list[str], how: str, warned: list[Warned]) -> None:
    """What NeMo's args form (at `where`) does not read, said in the notes and warned: `how` it reads instead."""
    if unread:
        warned.append(Warned(where, where, f"NeMo does not read {', '.join(unread)}: its args form {how}"))


#: NeMo's AVAILABLE_SCHEDULER_PARAMS (nemo/core/config/schedulers.py): each class's fields and defaults, the
#: keywords an args form with `name:` gives the schedule (its max_steps is replaced by the run's)
_WARMUP = {"max_steps": 0, "warmup_steps": None, "warmup_ratio": None, "last_epoch": -1}
_HOLD = {**_WARMUP, "hold_steps": None, "hold_ratio": None, "min_lr": 0.0}
_ANNEALING_HOLD = {**_WARMUP, "constant_steps": None, "constant_ratio": None, "min_lr": 0.0}
SCHEDULER_PARAMS: dict[str, dict[str, Any]] = {
    "SchedulerParams": {"last_epoch": -1},
    "WarmupPolicyParams": _WARMUP,
    "WarmupHoldPolicyParams": _HOLD,
    "WarmupAnnealingHoldSchedulerParams": _ANNEALING_HOLD,
    "SquareAnnealingParams": {**_WARMUP, "min_lr": 1e-5},
    "SquareRootAnnealingParams": {**_WARMUP, "min_lr": 0.0},
    "InverseSquareRootAnnealingParams": _WARMUP,
    "SquareRootConstantSchedulerParams": {"constant_steps": None, "constant_ratio": None, "last_epoch": -1},
    "CosineAnnealingParams": _ANNEALING_HOLD,
    "NoamAnnealingParams": {**_WARMUP, "min_lr": 0.0},
    "NoamHoldAnnealingParams": {**_HOLD, "decay_rate": 0.5},
    "WarmupAnnealingParams": _WARMUP,
    "PolynomialDecayAnnealingParams": {**_WARMUP, "power": 1.0, "cycle": False},
    "PolynomialHoldDecayAnnealingParams": {**_WARMUP, "power": 1.0, "cycle": False},
    "ReduceLROnPlateauParams": {"mode": "min", "factor": 0.1, "patience": 10, "verbose": False, "threshold": 1e-4,
                                "threshold_mode": "rel", "cooldown": 0, "min_lr": 0, "eps": 1e-8},
}


def _params_class(given: Any, auto: str, table: Mapping[str, Any], what: str, at: str, errors: Collector
                  ) -> str | None:
    """The parameter class an args form's `name:` takes (`auto`: the one NeMo names after the optimizer or
    schedule), as NeMo looks it up in its registry `table`; None: one NeMo does not register (an error at `at`)."""
    taken = auto if given == "auto" else given
    if isinstance(taken, str) and taken in table:
        return taken
    listed = ", ".join(table)
    errors.add(at, f"auto takes {taken}, which NeMo does not register ({listed})" if given == "auto"
               else f"not one of NeMo's {what} parameter classes ({listed}), got {show(given)}",
               None if given == "auto" or not isinstance(given, str) else closest(given, list(table)))
    return None


def _args_form(sched: Mapping[str, Any], sched_at: Mapping[Any, str], name: str, errors: Collector,
               report: list[KeyUse], warned: list[Warned], paths: dict[str, str] | None) -> dict[str, Any] | None:
    """NeMo's older `sched.args` form -> the schedule's keywords, as prepare_lr_scheduler takes them (`sched`:
    after maybe_update_config_version, `sched_at` its keys' paths). NeMo first moves `params:` up into its parent
    (`_hydra_1x`); then with `args.name` (auto: the schedule's name + Params) the keywords are that parameter class's
    defaults alone, since the overrides it reads from `args.params` are never there; without `args.name`, args'
    keys are the keywords. The keys beside `args` but name, max_steps and Lightning's are not read."""
    where = sched_at["args"]
    args = sched["args"]
    moved = _args_mapping(args, where, "scheduler", CLASS_PATH, errors)
    if moved is None:
        return None
    values, keys = moved
    unread, taken, said_args = [], None, []
    if "name" in keys:
        taken = _params_class(values["name"], f"{name}Params", SCHEDULER_PARAMS, "scheduler", keys["name"], errors)
        if taken is None:
            return None
        defaults = SCHEDULER_PARAMS[taken]
        spec = {k: v for k, v in defaults.items() if k != "max_steps"}
        said = ", ".join(f"{k} {show(v)}" for k, v in spec.items())
        said_args.append(KeyUse(keys["name"], "exact", f"NeMo builds the schedule from the defaults of {taken} "
                                                       f"({said})"))
        for key, at in keys.items():
            if key != "name":
                said_args.append(KeyUse(at, "exact", f"not read by NeMo, which takes the defaults of {taken}"))
                if key not in defaults or values[key] != defaults[key]:
                    unread.append(f"{at} {show(values[key])}")
        if paths is not None:
            paths.update({f"scheduler.{k}": keys["name"] for k in spec} | {"scheduler": keys["name"]})
    else:
        spec = {key: values[key] for key in keys}
        said_args.extend(KeyUse(at, "exact") for at in keys.values())
        if paths is not None:
            paths.update({f"scheduler.{key_text(k)}": at for k, at in keys.items()} | {"scheduler": where})
    for key, at in sched_at.items():
        if key in SCHED_TRAINER or str(key).startswith("t_"):
            report.append(KeyUse(at, "trainer", SCHED_TRAINER.get(key, "set by NeMo")))
        elif key not in ("name", "max_steps", "args"):
            report.append(KeyUse(at, "exact", "not read by NeMo beside args"))
            unread.append(f"{at} {show(sched[key])}")
        elif key == "name":
            report.append(KeyUse(at, "exact"))
        elif key == "args":
            report.extend(said_args)
    _unread(where, unread, f"builds the schedule from the defaults of {taken}" if taken else
            "gives the schedule args' keys alone", warned)
    return spec


def _scheduler(sched: Any, trainer_steps: int, trainer: Any, errors: Collector, report: list[KeyUse],
               warned: list[Warned], length_given: bool = False, paths: dict[str, str] | None = None
               ) -> dict[str, Any] | None:
    """model.optim.sched -> optreg's scheduler spec in the nemo dialect (None: NeMo builds none); `trainer`: the
    trainer section (None: none). `length_given`: a run length is given beside the file (--steps, its own train:),
    which a max_steps left to the run takes. `paths` receives the own form's scheduler paths that are not the
    NeMo config's `model.optim.sched.<key>` (the args form's, and the keys NeMo moves up from `params:`).

    NeMo moves `params:` up into the schedule before it reads it (`_hydra_1x`), over the max_steps that
    setup_optimization put there from trainer.max_steps; a schedule without `name` it warns about and builds
    none (prepare_lr_scheduler), so the lr stays constant, as here."""
    has_trainer = trainer is not None
    from optreg.core.entry import SCHEDULER
    from optreg.core.registry import REGISTRY

    path = "model.optim.sched"
    if sched is None:
        return None
    if not isinstance(sched, Mapping):
        errors.add(path, f"expected NeMo's schedule mapping (name:, warmup_steps:, ...), got {show(sched)}")
        return None
    moved = _hydra_1x(sched, path, errors)
    if moved is None:
        return None
    sched, at = moved
    if _class_path(at, errors, CLASS_PATH):
        return None
    if "name" not in sched:
        for key, where in at.items():
            report.append(KeyUse(where, "trainer", SCHED_TRAINER.get(key, "set by NeMo"))
                          if key in SCHED_TRAINER or str(key).startswith("t_") else
                          KeyUse(where, "exact", "not read: NeMo builds no scheduler without a name"))
        return _builds_none(NO_NAME, path, warned, report)
    name = sched["name"]
    if name == "ReduceLROnPlateau":
        errors.add(at["name"], "ReduceLROnPlateau steps on a validation metric Lightning hands it once per epoch; "
                               "optreg's schedules are functions of the step count")
        return None
    try:
        REGISTRY.lookup(SCHEDULER, name, path=at["name"], default="nemo")
    except ConfigError as exc:
        errors.extend(exc)
        return None
    if "args" in sched:
        spec = _args_form(sched, at, name, errors, report, warned, paths)
        if spec is None:
            return None
    else:
        spec = {k: v for k, v in sched.items() if k not in ("name", "max_steps", *SCHED_TRAINER)
                and not str(k).startswith("t_")}
        for key, where in at.items():
            if key in SCHED_TRAINER or str(key).startswith("t_"):
                report.append(KeyUse(where, "trainer", SCHED_TRAINER.get(key, "set by NeMo")))
            elif key != "max_steps":
                report.append(KeyUse(where, "exact"))
        if paths is not None:   # a key moved up from params
            paths.update({f"scheduler.{key_text(k)}": at[k] for k in spec if at[k] != join_path(path, key_text(k))})
    takes_steps = name not in TORCH_SCHEDULERS
    given = sched.get("max_steps")
    moved_up = "max_steps" in sched and at["max_steps"] != join_path(path, "max_steps")   # over trainer.max_steps
    if has_trainer and trainer_steps >= 0 and not moved_up:
        max_steps = trainer_steps
        if "max_steps" in sched:
            report.append(KeyUse(at["max_steps"], "exact",
                                 f"replaced by trainer.max_steps ({trainer_steps}), as NeMo does"))
    elif given == -1 or (given is None and not has_trainer):
        return _builds_none(NO_SCHEDULE if given == -1 else ("NeMo builds no scheduler without max_steps and a "
                                                             "trainer to compute it from: the lr stays constant"),
                            at.get("max_steps", at["name"]), warned, report)
    elif given is not None:
        if (wrong := number_message(given, 0, integer=True, also="-1: no schedule")) is not None:   # NeMo asserts it
            errors.add(at["max_steps"], wrong)
            return None
        max_steps = given
        report.append(KeyUse(at["max_steps"], "exact", "over trainer.max_steps, as NeMo moves params up after "
                                                       "setup_optimization sets it" if moved_up and has_trainer and
                             trainer_steps >= 0 else ""))
        if moved_up and paths is not None:
            paths["scheduler.max_steps"] = at["max_steps"]
    else:
        max_steps = None   # trainer.max_epochs x steps per epoch: filled from the run by optreg's planner
        report.append(KeyUse(at["name"], "approximate", f"max_steps: {_epochs_replaced(trainer)}")
                      if length_given else KeyUse(at["name"], "exact",
                                                  f"max_steps: {_epochs_run(trainer)}, as NeMo computes it"))
    if takes_steps and max_steps is not None:
        spec["max_steps"] = max_steps
    if name in EPOCH:
        spec["by_epoch"] = True
    return {"name": name, "dialect": "torch" if name in TORCH_SCHEDULERS else "nemo", **spec}


def _builds_none(why: str, where: str, warned: list[Warned], report: list[KeyUse]) -> None:
    """A schedule NeMo builds none of, as NeMo warns (`why`, said at `where`): noted, warned and reported."""
    warned.append(Warned(where, "model.optim.sched", why))
    report.append(KeyUse(where, "exact", why))
    return None


#: optreg's path -> the NeMo config's (for errors of the translated experiment)
#: optreg's own form's paths -> the NeMo config's (the longest prefix wins)
PATHS = {"optimizer.name": "model.optim.name", "optimizer": "model.optim", "scheduler": "model.optim.sched",
         "scheduler.by_epoch": "model.optim.sched.name",   # not NeMo's key: the name counts in epochs (EPOCH)
         "clip_grad.max_norm": "trainer.gradient_clip_val", "clip_grad.max_value": "trainer.gradient_clip_val",
         "clip_grad": "trainer"}


def optimizer_name(name: str) -> str | None:
    """NeMo's `model.optim.name` of optreg's torch optimizer `name` (`SGD` -> `sgd`); None for one NeMo has not."""
    return next((nemo for nemo, torch in TORCH.items() if torch == name), None)


#: the key of a NeMo config that chooses the optimizer (optreg.config.formats.Choice)
CHOICES = {"optimizer": Choice(PATHS["optimizer.name"], optimizer_name)}


def read(data: Mapping[str, Any], source: Any = None) -> Any:
    """A NeMo config -> optreg's own Experiment (format nemo), with a KeyUse per key it read."""
    from optreg.config.run import given_run, resolve_run
    from optreg.config.formats import has

    errors = Collector()
    report: list[KeyUse] = []
    warned: list[Warned] = []
    try:
        cfg = _omegaconf(data)
    except ConfigError as exc:
        raise exc.located(source) from None
    raw = data.get("train")
    train = dict(raw) if isinstance(raw, Mapping) else {} if raw is None else raw
    # a run length given beside the file: --steps or its own train:, or build(total_steps=)
    given = isinstance(train, dict) and ("steps" in train or "epochs" in train) or "total_steps" in given_run()
    optim = _resolved(cfg, "model.optim", errors)
    trainer = _trainer_section(cfg, errors, given) if has(data, "trainer") or "trainer" in data else None
    own: dict[str, Any] = {}
    trainer_epochs = False   # train.epochs is the trainer's max_epochs (its errors at that key)
    form_paths: dict[str, str] = {}   # own-form paths not at model.optim.<key> (args forms', params')
    if not errors and not isinstance(optim, Mapping):
        errors.add("model.optim", f"expected NeMo's optim mapping (name:, lr:, sched:), got {show(optim)}")
    if not errors:
        steps, epochs, clip = _trainer(trainer, errors, report, given)
        optimizer = _optimizer(optim, errors, report, warned, form_paths)
        scheduler = _scheduler(optim.get("sched"), steps, trainer, errors, report, warned, given, form_paths)
        if isinstance(train, dict) and trainer is not None and steps < 0 and epochs is not None and not given:
            train["epochs"], trainer_epochs = epochs, True
        own = {"dialect": "torch", "optimizer": optimizer, "scheduler": scheduler, "train": train,
               **({"clip_grad": clip} if clip else {})}
        if "optim_param_groups" in model_keys(data):
            errors.add("model.optim_param_groups", "NeMo's per-submodule groups (ModelPT.setup_optimizer_param_groups: "
                                                   "attributes of the model class) are not read; give optreg's "
                                                   "param_groups rules in an optreg config instead")
        for key in [k for k in model_keys(data) if k not in ("optim", "optim_param_groups")]:
            report.append(KeyUse(join_path("model", key_text(key)), "trainer", "the model's own config"))
    from_epochs = not errors and own.get("scheduler") is not None and "max_steps" not in own["scheduler"] and \
        own["scheduler"]["name"] not in TORCH_SCHEDULERS
    # checked with a stand-in length and planned with the run's (optreg fills a left-out length); a run length
    # given (train.steps, --steps, train.epochs × steps_per_epoch) is checked itself, as the other commands plan it
    stand_in = from_epochs and not run_known(own.get("train"))
    if stand_in:
        own["scheduler"]["max_steps"] = PLACEHOLDER
    from_trainer = not errors and trainer is not None and steps >= 0   # sched.max_steps is trainer.max_steps
    paths = {**PATHS, **form_paths}
    if from_trainer:   # unless NeMo moved a max_steps up from sched.params over it (form_paths has it)
        paths.setdefault("scheduler.max_steps", "trainer.max_steps")
    if trainer_epochs:
        paths["train.epochs"] = "trainer.max_epochs"
    for said in warned:   # at the key's position in the file, as its errors are
        warn_at(said.why, said.at, source, stacklevel=3)
    experiment = read_translated({k: v for k, v in own.items() if v is not None}, source, "nemo", paths, report,
                                 errors=errors)
    if stand_in:
        experiment.scheduler.pop("max_steps")
    # Lightning's max_steps: the format's own length, which a given one replaces
    if trainer is not None and steps >= 0:
        run = resolve_run(experiment.train, format_steps=(steps, "trainer.max_steps"), errors=errors)
        experiment = dataclasses.replace(experiment, format_steps=(steps, "trainer.max_steps"), run=run)
    if from_epochs:   # checked before any plan, without a model too (validate as build: Experiment.check_run)
        experiment.needs_run, experiment.needs_run_why = "model.optim.sched", FROM_EPOCHS
    experiment.planner = plan
    experiment.notes[:] = [f"{said.head}: {said.why}" for said in warned] + experiment.notes
    return experiment


PLACEHOLDER = 10 ** 6   # the schedule's length while its options are checked, when the run will give it


#: why a schedule whose max_steps NeMo computes from the epochs needs the run length (`Experiment.needs_run_why`)
FROM_EPOCHS = ("NeMo computes the schedule's max_steps from trainer.max_epochs and the dataloader's length: give "
               "train.steps_per_epoch or build(..., steps_per_epoch=)")


def plan(experiment: Any, model: Any) -> Any:
    """optreg's own plan of the translated experiment, its errors and notes at the NeMo config's paths. The
    schedule's max_steps, when NeMo would compute it from trainer.max_epochs and the dataloader, is filled from the
    run (trainer.max_epochs × steps per epoch); without the steps per epoch, the experiment's `check_run` (before
    any plan) says so."""
    from optreg.config.experiment import plan_own

    return plan_own(experiment, model)


def model_keys(data: Mapping[str, Any]) -> list[Any]:
    model = data.get("model")
    return list(model.keys()) if hasattr(model, "keys") else []


__all__ = ["read", "TORCH", "REFUSED"]

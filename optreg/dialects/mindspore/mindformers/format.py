"""MindFormers run configs (YAML) as a config format: what MindFormers' trainer builds from `optimizer:`,
`lr_schedule:`, `runner_config:`, `runner_wrapper:`, `lr_scale` and `layer_scale` (MindFormers 1.5-dev, 2025,
on MindSpore 2.10; BaseTrainer.create_optimizer_scheduler / create_lr_scheduler).

The config is translated into optreg's own form in the mindspore dialect:
- `optimizer: {type, ...}` -> the optimizer row with MindFormers' numerics (`optimizers.py`); with an
  `lr_schedule` the schedule is the optimizer's learning rate (its own `learning_rate` is not used);
- `lr_schedule: {type, ...}` -> the schedule of that name (MindFormers' own in `schedules.py`, or MindSpore's cells);
  `total_steps: -1` (or absent) is the run length, from the dataset's size D, which the config does not hold
  (`train.steps_per_epoch: D` beside it, or `train.steps`): epochs × D, or in sink mode
  int(D/sink_size · epochs) × sink_size; `warmup_epochs` is warmup_epochs × D;
- `lr_scale: true` multiplies the learning rate by devices × batch size / lr_scale_factor;
- `runner_wrapper: {use_clip_grad: true, max_grad_norm}` clips the global gradient norm;
- the parameter groups are MindFormers' `get_optimizer_grouped_parameters`, made against the model (`groups.py`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from optreg.config.formats import Choice, KeyUse, misspelt
from optreg.config.translate import NOMINAL_RUN, read_translated
from optreg.core.models import bool_message, number_message
from optreg.errors import Collector, ConfigError, closest, join_path, show, unknown_name

#: MindFormers' lr type aliases (mindformers.core.lr.build_lr, 1.3)
LR_ALIASES = {"constant_with_warmup": "ConstantWarmUpLR", "linear": "LinearWithWarmUpLR",
              "cosine": "CosineWithWarmUpLR", "cosine_with_restarts": "CosineWithRestartsAndWarmUpLR",
              "polynomial": "PolynomialWithWarmUpLR", "cosine_annealing": "CosineAnnealingLR",
              "cosine_annealing_warm_restarts": "CosineAnnealingWarmRestarts"}
#: MindSpore's cells MindFormers registers under their own names (build_lr.register_ms_lr)
MS_LR = ("ExponentialDecayLR", "NaturalExpDecayLR", "InverseDecayLR", "CosineDecayLR", "PolynomialDecayLR",
         "WarmUpLR")
#: MindFormers' runner defaults (mindformers.tools.register.template.RunnerConfig)
RUNNER_DEFAULTS = {"epochs": 1, "sink_mode": True, "sink_size": 1}
MAX_GRAD_NORM = 1.0   # MFTrainOneStepCell's default
TRAINER_KEYS = {"batch_size": "the dataset's batch size", "gradient_accumulation_steps": "gradient accumulation",
                "initial_epoch": "resuming", "initial_step": "resuming", "stop_step": "stopping early",
                "has_trained_epoches": "resuming", "has_trained_steps": "resuming", "num_classes": "the model",
                "image_size": "the data"}
#: the model classes MindFormers 1.3 gives a layer-wise lr with `layer_scale: true` (get_optimizer_grouped_parameters)
LAYER_WISE = ("ViTForImageClassification", "SwinForImageClassification")
TOP = ("optimizer", "lr_schedule", "runner_config", "runner_wrapper", "lr_scale", "lr_scale_factor", "layer_scale",
       "layer_decay", "train")


def _layer_scale(data: Mapping[str, Any], report: list, errors: Collector) -> None:
    """`layer_scale` / `layer_decay`: no effect in MindFormers 1.5+ (get_optimizer_grouped_parameters resets the
    layer-wise schedule), nor in 1.3 for other models than ViT / Swin classification or without an lr_schedule
    (1.3 warns and resets it). With `layer_scale: true`, a ViT / Swin model and an lr_schedule, MindFormers 1.3
    gives every parameter group the schedule × layer_decay^(L + 1 - layer id) (LearningRateWiseLayer), which
    optreg does not build: an error there, since the two versions differ."""
    model = data.get("model")
    arch = model.get("arch") if isinstance(model, Mapping) else None
    kind = arch.get("type") if isinstance(arch, Mapping) else None
    if data.get("layer_scale") is True and kind in LAYER_WISE and data.get("lr_schedule") is not None:
        errors.add("layer_scale", f"MindFormers 1.3 scales the lr of each {kind} layer by layer_decay^(L + 1 - "
                                  f"layer id) (LearningRateWiseLayer), which optreg does not build; MindFormers 1.5+ "
                                  f"ignores layer_scale: set layer_scale: false for what 1.5+ runs")
        return
    for key in ("layer_scale", "layer_decay"):
        if key in data:
            report.append(KeyUse(key, "exact", "MindFormers 1.5+ resets the layer-wise lr schedule in "
                                               "get_optimizer_grouped_parameters: no effect"))


def _schedule_names() -> list[str]:
    from optreg.dialects.mindspore.mindformers.schedules import NAMES

    return [*NAMES, *MS_LR]


class MindFormersFormat:
    """A MindFormers run config (`optimizer: {type:}` beside `lr_schedule:` or `runner_config:`)."""

    name = "mindformers"
    doc = "MindFormers (MindSpore's LLM suite) run config: optimizer: {type:}, lr_schedule:, runner_config:"
    signature = "optimizer.type with lr_schedule or runner_config"
    keys = TOP

    def claims(self, data: Mapping[str, Any]) -> bool:
        from optreg.config.formats import has

        return has(data, "optimizer.type") and ("lr_schedule" in data or "runner_config" in data)

    def sections(self, data: Mapping[str, Any]) -> list[Any]:
        return [k for k in TOP if k in data]

    @property
    def choices(self) -> dict[str, Choice]:
        """The key that chooses the optimizer: its own `optimizer:`'s type (optimizers.py: `type_of`)."""
        from optreg.dialects.mindspore.mindformers.optimizers import type_of

        return {"optimizer": Choice(PATHS["optimizer.name"], type_of)}

    def read(self, data: Mapping[str, Any], source: Any = None) -> Any:
        from optreg.config.run import ClipGrad, given_run, read_train, resolve_run

        errors = Collector()
        report: list[KeyUse] = []
        train = read_train(data, errors)
        given = given_run()
        # the dataset's size D: build(steps_per_epoch=) where the caller gives it (resolve_run says where it and the
        # file's train.steps_per_epoch disagree), else the file's
        size = given.get("steps_per_epoch", train.steps_per_epoch)
        format_steps = _run_length(data, size, report, errors)
        # train: or runner_config: in error leave the dataset's size and the run unknown: the schedule is read with
        # a nominal run, its own problems said beside theirs (every problem at once)
        unknown = bool(errors)
        # the run length a caller gives beside the file is known here: total_steps -1 is the run's
        run = resolve_run(train, format_steps=(NOMINAL_RUN, "a nominal run") if unknown else format_steps,
                          errors=errors, **given)
        scale = _lr_scale(data, report, errors)
        scheduler = _scheduler(data.get("lr_schedule"), run, size, scale, report, errors, unknown)
        optimizer = _optimizer(data.get("optimizer"), data.get("lr_schedule") is not None, scale, report, errors)
        clip = _clip(data.get("runner_wrapper"), report, errors)
        _layer_scale(data, report, errors)
        own = {"dialect": "mindspore", "optimizer": optimizer}
        if scheduler is not None:
            own["scheduler"] = scheduler
        if "train" in data:
            own["train"] = data["train"]
        experiment = read_translated(own, source, self.name, PATHS, report, errors=errors, beside=True)   # all at once
        from optreg.dialects.mindspore.mindformers.groups import plan_mindformers

        return dataclasses.replace(experiment, source=source, planner=plan_mindformers, format_steps=format_steps,
                                   report=report, clip=ClipGrad(max_norm=clip) if clip else None).for_run(run)


#: optreg's own form's paths -> the MindFormers config's (the longest prefix wins)
PATHS = {"scheduler.name": "lr_schedule.type", "scheduler": "lr_schedule", "optimizer.name": "optimizer.type"}


def _run_length(data: Mapping[str, Any], size: int | None, report: list, errors: Collector) -> tuple[int, str] | None:
    """MindFormers' run length from the dataset's size D (`size`: `train.steps_per_epoch`, or build's
    `steps_per_epoch=`): epochs × D, or in sink mode
    int(D/sink_size · epochs) × sink_size (check_runner_config turns the epochs into sink epochs; sink_size -1 is
    D); None without D."""
    runner = data.get("runner_config") or {}
    if not isinstance(runner, Mapping):
        errors.add("runner_config", f"expected a mapping, got {show(runner)}")
        return None
    values = {}
    for key, default in RUNNER_DEFAULTS.items():   # every key's problem, each at its key
        value = runner.get(key, default)
        if key == "sink_mode":
            wrong = None if value in (0, 1) else bool_message(value)
        elif key == "sink_size" and value == -1:   # the dataset's size
            wrong = None
        else:
            wrong = number_message(value, 1, integer=True, also="-1: the dataset's size" if key == "sink_size" else "")
        if wrong is not None:
            errors.add(join_path("runner_config", key), wrong)
        else:
            values[key] = value
    near = misspelt(runner, RUNNER_DEFAULTS, TRAINER_KEYS)
    if near is not None:   # `epoch: 2`: MindFormers would pass it over and run the default
        errors.add(join_path("runner_config", near[0]), f"not a key MindFormers' runner reads: it would run with "
                                                        f"{near[1]} {show(RUNNER_DEFAULTS[near[1]])}", near[1])
    if near is not None or len(values) < len(RUNNER_DEFAULTS):
        return None
    for key in runner:
        report.append(KeyUse(join_path("runner_config", key), "exact", "the run length") if key in RUNNER_DEFAULTS
                      else KeyUse(join_path("runner_config", key), "trainer", TRAINER_KEYS.get(key, "MindFormers' "
                                                                                                     "runner")))
    epochs, sink = values["epochs"], values["sink_size"]
    if size is None:
        return None
    if values["sink_mode"] and sink != -1:
        return int(size / sink * epochs) * sink, "int(train.steps_per_epoch / runner_config.sink_size × " \
                                                 "runner_config.epochs) × runner_config.sink_size"
    return epochs * size, "runner_config.epochs × train.steps_per_epoch"


def _lr_scale(data: Mapping[str, Any], report: list, errors: Collector) -> float:
    """`lr_scale: true`: lr × devices × per-device batch size / lr_scale_factor (BaseTrainer.learning_rate_scale);
    the devices are the parallel_config's data × model × pipeline parallel sizes."""
    flag = data.get("lr_scale", False)
    if (wrong := bool_message(flag)) is not None:
        errors.add("lr_scale", wrong)
        return 1.0
    if "lr_scale_factor" in data:
        report.append(KeyUse("lr_scale_factor", "exact", "" if flag else "unused: lr_scale is false"))
    if not flag:
        if "lr_scale" in data:
            report.append(KeyUse("lr_scale", "exact"))
        return 1.0
    factor = data.get("lr_scale_factor", 256)
    wrong = number_message(factor, finite=True, above=0)
    if wrong is not None:
        errors.add("lr_scale_factor", wrong)
        return 1.0
    parallel = data.get("parallel_config") or {}
    devices = 1
    for key in ("data_parallel", "model_parallel", "pipeline_stage"):
        value = parallel.get(key, 1) if isinstance(parallel, Mapping) else 1
        devices *= value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else 1
    batch = (data.get("runner_config") or {}).get("batch_size", 1)
    batch = batch if isinstance(batch, int) and not isinstance(batch, bool) and batch >= 1 else 1
    report.append(KeyUse("lr_scale", "approximate", f"lr × {devices} devices × batch size {batch} / {factor}: "
                                                    f"MindFormers counts the devices at run time; optreg takes "
                                                    f"parallel_config's data × model × pipeline sizes"))
    return devices * batch / factor


def _scheduler(raw: Any, run: Any, size: int | None, scale: float, report: list, errors: Collector,
               unknown: bool = False) -> dict | None:
    """`lr_schedule:` -> optreg's scheduler section (None when absent); `size`: the dataset's size D, as _run_length
    takes it. `unknown`: the dataset's size is not known
    because train: or runner_config: is in error (warmup_epochs is then not converted, nor said to need it)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or "type" not in raw:
        errors.add("lr_schedule", f"expected a mapping with type:, got {show(raw)}")
        return None
    spec = dict(raw)
    kind = spec.pop("type")
    names = _schedule_names()
    name = LR_ALIASES.get(kind, kind) if isinstance(kind, str) else kind
    if name == "LearningRateWiseLayer":
        errors.add("lr_schedule.type", "LearningRateWiseLayer wraps another schedule object; MindFormers builds it "
                                       "only inside its grouping (layer_scale), not from a config")
        return None
    if name not in names:
        errors.extend([unknown_name("lr_schedule.type", "MindFormers", "lr schedule", kind, [*names, *LR_ALIASES],
                                    f"MindFormers registers {', '.join(names)} (and {', '.join(LR_ALIASES)})")])
        return None
    report.append(KeyUse("lr_schedule.type", "exact"))
    epochs = spec.pop("warmup_epochs", None)
    if epochs is not None:
        wrong = number_message(epochs, 0, integer=True)
        if wrong is not None:
            errors.add("lr_schedule.warmup_epochs", wrong)
        elif spec.get("warmup_ratio") is None:   # a ratio wins (MindFormers warns and drops the epochs)
            if size is None and not unknown:
                errors.add("lr_schedule.warmup_epochs", "warmup_epochs × the dataset's size: give the dataset's "
                                                        "size as train.steps_per_epoch")
            elif size is not None:
                spec["warmup_steps"] = epochs * size
        report.append(KeyUse("lr_schedule.warmup_epochs", "exact", "warmup_epochs × train.steps_per_epoch"))
    spec = _drop_ignored(name, spec, report, errors)
    if spec is None:
        return None
    for key in spec:
        if key not in ("total_steps", "warmup_epochs", "learning_rate"):
            report.append(KeyUse(join_path("lr_schedule", key), "exact"))
    from optreg.dialects.mindspore.mindformers.schedules import WARMUP_FAMILY

    if name in WARMUP_FAMILY:   # total_steps -1 is the run length
        total = spec.get("total_steps")
        if total is None or total == -1:
            if run.steps is None:
                # groups too: int(total_steps·ratio) of a warmup_ratio / decay_ratio moves the first step's lr
                errors.add("lr_schedule.total_steps", "-1 (or absent) is the run length, which MindFormers takes "
                                                      "from the dataset's size: give it as train.steps_per_epoch "
                                                      "(or the run's length as train.steps, or --steps N: optreg "
                                                      "groups --steps N too, as a ratio of it may move the first "
                                                      "step's lr)")
                return None
            spec["total_steps"] = run.steps
            report.append(KeyUse("lr_schedule.total_steps", "exact", f"{total}: the run length {run.steps} "
                                                                     f"({run.source})"))
        else:
            report.append(KeyUse("lr_schedule.total_steps", "exact"))
    if "learning_rate" in spec and scale != 1.0:
        value = spec["learning_rate"]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            spec["learning_rate"] = value * scale
    if "learning_rate" in spec:
        report.append(KeyUse("lr_schedule.learning_rate", "exact", "" if scale == 1.0 else "scaled by lr_scale"))
    return {"name": name, **spec}


def _drop_ignored(name: str, spec: dict, report: list, errors: Collector) -> dict | None:
    """MindFormers' schedule classes take **kwargs and ignore what they do not name (BaseTrainer always sets
    total_steps, which CosineAnnealingLR ignores): such keys are dropped and reported, except a near miss of one
    they name (a misspelling MindFormers would ignore silently), which is an error."""
    import dataclasses as dc

    from optreg.dialects.mindspore.mindformers import schedules

    cls = getattr(schedules, name, None)
    if cls is None:   # MindSpore's own cells: their options are checked as the mindspore dialect's
        return spec
    fields = [f.name for f in dc.fields(cls)]
    out, near_misses = {}, Collector()
    for key, value in spec.items():
        if key in fields:
            out[key] = value
            continue
        near = closest(str(key), fields)
        if near is not None and key not in ("total_steps", "learning_rate"):
            near_misses.add(join_path("lr_schedule", key), f"not an option of MindFormers' {name}, which would "
                                                           f"ignore it", near)
        else:
            report.append(KeyUse(join_path("lr_schedule", key), "exact", f"ignored: MindFormers' {name} takes "
                                                                          f"**kwargs and does not read it"))
    errors.extend(near_misses.items)
    return None if near_misses else out


def _optimizer(raw: Any, scheduled: bool, scale: float, report: list, errors: Collector) -> dict | None:
    """`optimizer:` -> optreg's optimizer section (see optimizers.py)."""
    from optreg.dialects.mindspore.mindformers.optimizers import translate

    if not isinstance(raw, Mapping) or "type" not in raw:
        errors.add("optimizer", f"expected a mapping with type:, got {show(raw)}")
        return None
    options = {k: v for k, v in raw.items() if k not in ("type", "learning_rate")}
    try:
        section, why = translate(raw["type"], options, "optimizer.type")
    except ConfigError as exc:
        errors.extend(exc)
        return None
    report.append(KeyUse("optimizer.type", "approximate" if why else "exact", why or
                         f"{section['dialect']}.{section['name']}" +
                         (f" with state_dtype {section['state_dtype']}" if "state_dtype" in section else "")))
    for key in options:
        report.append(KeyUse(join_path("optimizer", key), "exact", "MindFormers' parameter groups: 0 for 1-D "
                                                                   "parameters and biases" if key == "weight_decay"
                                                                   else ""))
    if "learning_rate" in raw:
        if scheduled:
            report.append(KeyUse("optimizer.learning_rate", "exact", "not used: the lr_schedule is the learning rate"))
        else:
            value = raw["learning_rate"]
            if isinstance(value, Mapping):
                errors.add("optimizer.learning_rate", "a schedule here is MindFormers' older form: write it as "
                                                      "lr_schedule:")
                return None
            section["learning_rate"] = value * scale if isinstance(value, (int, float)) and \
                not isinstance(value, bool) else value
            report.append(KeyUse("optimizer.learning_rate", "exact"))
    elif not scheduled:
        errors.add("optimizer.learning_rate", "required without lr_schedule (MindFormers: learning_rate must be input)")
        return None
    return section


def _clip(raw: Any, report: list, errors: Collector) -> float | None:
    """`runner_wrapper: {use_clip_grad, max_grad_norm}` (MFTrainOneStepCell) -> the global norm to clip to."""
    from optreg.config.run import clip_message

    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        errors.add("runner_wrapper", f"expected a mapping, got {show(raw)}")
        return None
    read = ("use_clip_grad", "max_grad_norm")
    for key in raw:
        if key in read:
            continue
        near = closest(str(key), read)   # MFTrainOneStepCell takes **kwargs: a misspelling would go unread
        if near is not None:
            errors.add(join_path("runner_wrapper", key), "not an option of MindFormers' train step cell, which "
                                                         "would ignore it", near)
        else:
            report.append(KeyUse(join_path("runner_wrapper", key), "trainer", "MindFormers' train step cell "
                                                                              "(loss scaling, its type)"))
    flag = raw.get("use_clip_grad", False)
    if (wrong := bool_message(flag)) is not None:
        errors.add("runner_wrapper.use_clip_grad", wrong)
        return None
    norm = raw.get("max_grad_norm", MAX_GRAD_NORM)
    wrong = clip_message(norm)
    if wrong is not None:
        errors.add("runner_wrapper.max_grad_norm", wrong)
        return None
    for key in ("use_clip_grad", "max_grad_norm"):
        if key in raw:
            report.append(KeyUse(join_path("runner_wrapper", key), "exact", "clip_grad: global norm"))
    return float(norm) if flag else None


FORMAT = MindFormersFormat()

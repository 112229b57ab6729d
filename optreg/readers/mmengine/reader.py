"""Reading an MMEngine config into optreg's experiment, and planning it against a model (see the package doc)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from optreg.config.formats import NEAR, Choice, KeyUse, misspelt
from optreg.core.models import bool_message, number_message
from optreg.errors import Collector, ConfigError, closest, join_path, key_text, show
from optreg.readers.mmengine import LOOP_TYPES, SECTIONS, TRAINER_KEYS, WRAPPER_KEYS, WRAPPERS
from optreg.readers.mmengine import params as paramwise

PARAMWISE = ("planned per parameter against the model's module types, in MMEngine's order (one group per "
             "parameter), by the mmengine reader's planner: optreg's own form names no module types in that order")
SCHEDULER = "mmengine.ParamSchedulers"   # the list, in optreg's own form (optreg.dialects.mmengine)
SCHEDULES = (f"optreg's {SCHEDULER}: each entry on its [begin, end) window, the entries chained, as MMEngine's "
             f"runner steps them")
LOOP_TRAINER = ("val_interval", "val_begin", "dynamic_intervals")
#: optreg's own form's paths -> the MMEngine config's (the longest prefix wins)
OWN_PATHS = {"optimizer.name": "optim_wrapper.optimizer.type", "optimizer": "optim_wrapper.optimizer",
             "clip_grad": "optim_wrapper.clip_grad", "scheduler.param_scheduler": "param_scheduler",
             "scheduler.max_epochs": "train_cfg.max_epochs", "scheduler.max_iters": "train_cfg.max_iters",
             "scheduler": "param_scheduler"}


@dataclass
class Planner:
    """paramwise_cfg's rules, which only the model's module types decide: the experiment in optreg's own form for
    that model (`for_model`), planned as optreg's own. Called as `planner(experiment, model)` (Experiment.planner)."""

    #: it holds what optreg's own form cannot say without the model (`optreg convert` refuses without --model)
    keeps = True

    paramwise: dict[str, Any]

    def __call__(self, experiment: Any, model: Any) -> Any:
        from optreg.config.experiment import plan_own

        own, reasons = self._own(experiment, model)
        plan = plan_own(own, model)
        for group in plan.optimizer.groups:   # named by the settings that made it
            group.rule = reasons.get(group.names[0], group.rule) if group.names else group.rule
        return plan

    def for_model(self, experiment: Any, model: Any) -> Any:
        """The experiment in optreg's own form for this model (`optreg convert --model`): paramwise_cfg's rules
        over the model's parameters."""
        return self._own(experiment, model)[0]

    def _own(self, experiment: Any, model: Any) -> tuple[Any, dict[str, str]]:
        errors = Collector()
        options = {k: v for k, v in experiment.optimizer.items() if k != "name"}
        rules, reasons = self.rules(model, options, errors) or (None, {})
        errors.raise_if_any()
        section = {**experiment.optimizer, **({"param_groups": rules} if rules else {})}
        return dataclasses.replace(experiment, optimizer=section, planner=None), reasons

    def rules(self, model: Any, options: Mapping[str, Any],
              errors: Collector) -> tuple[list[dict[str, Any]], dict[str, str]] | None:
        import torch

        if not isinstance(model, torch.nn.Module):
            errors.add("optim_wrapper.paramwise_cfg", "MMEngine's per-parameter settings read the model's module "
                                                      "types: build with the nn.Module, not its parameters")
            return None
        return paramwise.rules(model, self.paramwise, _number_read(options.get("lr")),
                               _number_read(options.get("weight_decay")), "optim_wrapper.paramwise_cfg", errors)


def _number_read(value: Any) -> Any:
    """`value` as the own form's options read a number: a string that is one ("1e-3", which PyYAML leaves a string)
    is that number; anything else as it is (the own form says what is wrong with it)."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    return value


# ---------------------------------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------------------------------
def optimizer_type(name: str) -> str | None:
    """The `optim_wrapper.optimizer.type` of optreg's optimizer `name`: the torch.optim class of that name, which
    MMEngine registers (`SGD`); None when torch has none (`_optimizer` reads no other)."""
    from optreg.core.entry import OPTIMIZER
    from optreg.core.registry import REGISTRY

    entry = REGISTRY.find(OPTIMIZER, name, "torch")
    return entry.name if entry is not None else None


#: the key of an MMEngine config that chooses the optimizer (optreg.config.formats.Choice)
CHOICES = {"optimizer": Choice(OWN_PATHS["optimizer.name"], optimizer_type)}


def _optimizer(raw: Any, errors: Collector, report: list[KeyUse]) -> dict[str, Any]:
    """optim_wrapper.optimizer -> optreg's optimizer section (torch dialect), checked as optreg checks its own."""
    from optreg.config.experiment import check_optimizer_section
    from optreg.core.entry import OPTIMIZER
    from optreg.core.registry import REGISTRY
    from optreg.dialects.mmengine.param_scheduler import another_package

    path = "optim_wrapper.optimizer"
    if not isinstance(raw, Mapping) or not isinstance(raw.get("type"), str):
        errors.add(join_path(path, "type") if isinstance(raw, Mapping) else path,
                   f"expected the optimizer: {{type: SGD | AdamW | ..., lr: ...}}, got {show(raw)}")
        return {}
    section = {"name": raw["type"], **{k: v for k, v in raw.items() if k != "type"}}
    other = None if REGISTRY.find(OPTIMIZER, raw["type"], "torch") is not None else \
        another_package(raw["type"], "OPTIMIZERS", [e.name for e in REGISTRY.entries(OPTIMIZER, "torch")],
                        "torch.optim's optimizers", "mmpretrain's Lamb and LARS")
    if other is not None:   # a misspelling of one is the registry's error, with its did-you-mean
        errors.add(join_path(path, "type"), other)
        return section
    own = Collector()
    check_optimizer_section(section, "torch", own, path)
    for item in own.items:   # optreg's `name` is MMEngine's `type`
        where = join_path(path, "type") if item.path == join_path(path, "name") else item.path
        errors.items.append(dataclasses.replace(item, path=where))
    report.extend(KeyUse(join_path(path, key_text(k)), "exact") for k in raw)
    return section


def _clip(raw: Any, errors: Collector, report: list[KeyUse]) -> Any:
    """optim_wrapper.clip_grad (MMEngine: {max_norm, norm_type, error_if_nonfinite} for clip_grad_norm_, or
    {type: value, clip_value}) -> optreg's ClipGrad."""
    from optreg.config.run import read_clip

    path = "optim_wrapper.clip_grad"
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        errors.add(path, f"expected a mapping such as {{max_norm: 35, norm_type: 2}}, got {show(raw)}")
        return None
    kind = raw.get("type", "norm")
    if kind not in ("norm", "value"):
        errors.add(join_path(path, "type"), f"must be 'norm' or 'value', got {show(kind)}")
        return None
    rest = {k: v for k, v in raw.items() if k != "type"}
    if kind == "value":
        if set(rest) - {"clip_value"}:
            errors.add(path, f"clipping by value takes clip_value only, got {', '.join(map(str, rest))}")
            return None
        rest = {"max_value": rest.get("clip_value")}
    report.extend(KeyUse(join_path(path, key_text(k)), "exact") for k in raw)
    return read_clip(rest, errors, path)


def _wrapper(raw: Any, errors: Collector, report: list[KeyUse]) -> tuple[dict, dict | None, Any]:
    path = "optim_wrapper"
    if not isinstance(raw, Mapping):
        errors.add(path, f"expected a mapping with optimizer:, got {show(raw)}")
        return {}, None, None
    for key in raw:
        if key not in WRAPPER_KEYS:
            errors.add(join_path(path, key_text(key)), "unknown key of MMEngine's optim_wrapper",
                       closest(key, list(WRAPPER_KEYS)) if isinstance(key, str) else None)
    kind = raw.get("type", "OptimWrapper")
    if kind not in WRAPPERS:
        errors.add(join_path(path, "type"), f"{show(kind)}: optreg reads MMEngine's {' and '.join(WRAPPERS)} (an "
                                            f"optimizer with a training loop's settings around it); "
                                            f"OptimWrapperDict and the Apex / DeepSpeed wrappers are not supported")
    elif "type" in raw:
        report.append(KeyUse(join_path(path, "type"), "exact" if kind == "OptimWrapper" else "trainer",
                             "" if kind == "OptimWrapper" else "mixed precision: the training loop's business"))
    constructor = raw.get("constructor", "DefaultOptimWrapperConstructor")
    if constructor != "DefaultOptimWrapperConstructor":
        errors.add(join_path(path, "constructor"), f"{show(constructor)}: a library's own constructor (layer-wise "
                                                   f"decay, ...) is its code, not a config; optreg reads MMEngine's "
                                                   f"DefaultOptimWrapperConstructor only")
    elif "constructor" in raw:
        report.append(KeyUse(join_path(path, "constructor"), "exact"))
    for key in TRAINER_KEYS:
        if key in raw:
            report.append(KeyUse(join_path(path, key), "trainer", TRAINER_KEYS[key]))
    if "accumulative_counts" in raw:
        count = raw["accumulative_counts"]
        if (wrong := number_message(count, 1, integer=True)) is not None:
            errors.add(join_path(path, "accumulative_counts"), wrong)
    if "optimizer" not in raw:
        errors.add(join_path(path, "optimizer"), "required: the optimizer ({type: SGD, lr: 0.01, ...})")
        optimizer = {}
    else:
        optimizer = _optimizer(raw["optimizer"], errors, report)
    settings = None
    if raw.get("paramwise_cfg"):
        settings = paramwise.check(raw["paramwise_cfg"], join_path(path, "paramwise_cfg"), errors)
        report.extend(KeyUse(join_path(join_path(path, "paramwise_cfg"), key_text(k)), "exact", PARAMWISE)
                      for k in (raw["paramwise_cfg"] if isinstance(raw["paramwise_cfg"], Mapping) else ()))
        if "lr" not in optimizer:   # a value given is the own form's to check (_optimizer)
            errors.add(join_path(path, "optimizer.lr"), "MMEngine's per-parameter settings multiply the optimizer's "
                                                        "lr: give it")
    elif "paramwise_cfg" in raw:
        report.append(KeyUse(join_path(path, "paramwise_cfg"), "exact", "empty: one group, as MMEngine builds"))
    return optimizer, settings, _clip(raw.get("clip_grad"), errors, report)


def _schedulers(raw: Any, loop: tuple[int | None, int | None, bool | None], errors: Collector,
                report: list[KeyUse]) -> dict[str, Any] | None:
    """param_scheduler -> optreg's mmengine.ParamSchedulers (which checks each entry), with the train loop's length
    that an entry without `end` ends at (MMEngine's runner); `verbose` left to the trainer."""
    if raw is None:
        return None
    items = [raw] if isinstance(raw, Mapping) else raw
    if not isinstance(items, (list, tuple)):
        errors.add("param_scheduler", f"expected a scheduler mapping or a list of them, got {show(raw)}")
        return None
    out = []
    for i, item in enumerate(items):
        path = join_path("param_scheduler", i) if not isinstance(raw, Mapping) else "param_scheduler"
        if not isinstance(item, Mapping):
            out.append(item)   # refused by the scheduler, at its path
            continue
        out.append({k: v for k, v in item.items() if k != "verbose"})
        report.extend(KeyUse(join_path(path, key_text(k)), "trainer" if k == "verbose" else "exact",
                             "logging" if k == "verbose" else SCHEDULES if k == "type" else "") for k in item)
    if not out:
        return None
    open_ended = any(not isinstance(e, Mapping) or e.get("end") is None for e in out)
    epochs, iters, _ = loop
    length = {"max_epochs": epochs} if epochs is not None else {"max_iters": iters} if iters is not None else {}
    return {"name": SCHEDULER, "param_scheduler": out, **(length if open_ended else {})}


def _loop(raw: Any, errors: Collector, report: list[KeyUse]) -> tuple[int | None, int | None, bool | None]:
    """train_cfg -> (max_epochs, max_iters, whether the loop counts epochs); (None, None, None) when absent."""
    path = "train_cfg"
    if raw is None:
        return None, None, None
    if not isinstance(raw, Mapping):
        errors.add(path, f"expected a mapping such as {{by_epoch: true, max_epochs: 12}}, got {show(raw)}")
        return None, None, None
    if "type" in raw:
        if not isinstance(raw["type"], str) or raw["type"] not in LOOP_TYPES:
            errors.add(join_path(path, "type"), f"{show(raw['type'])}: optreg reads MMEngine's "
                                                f"{' and '.join(LOOP_TYPES)}", closest(raw["type"], list(LOOP_TYPES))
                       if isinstance(raw["type"], str) else None)
            return None, None, None
        by_epoch = LOOP_TYPES[raw["type"]]
    else:
        by_epoch = raw.get("by_epoch", True)
        if (wrong := bool_message(by_epoch)) is not None:
            errors.add(join_path(path, "by_epoch"), wrong)
            return None, None, None
    key = "max_epochs" if by_epoch else "max_iters"
    value = raw.get(key)
    loop = f"MMEngine's {'epoch' if by_epoch else 'iteration'}-based train loop"
    near = misspelt(raw, [key])
    if near is not None:    # `max_epoch: 12`: said at the key written, which MMEngine's loop would refuse
        errors.add(join_path(path, near[0]), f"unknown key of {loop}", near[1])
        return None, None, None
    wrong = f"required by {loop}: an integer >= 1, got None" if value is None else \
        number_message(value, 1, integer=True)   # a bad one in the own form's words, as the other readers' lengths
    if wrong is not None:
        errors.add(join_path(path, key), wrong)
        return None, None, None
    for k in raw:
        verdict = "exact" if k in ("type", "by_epoch", key) else "trainer"
        report.append(KeyUse(join_path(path, key_text(k)), verdict, "" if verdict == "exact" else
                             "validation schedule: the training loop's business"))
    return (value, None, True) if by_epoch else (None, value, False)


def _misspelt_sections(data: Mapping[str, Any], errors: Collector) -> None:
    """A top-level key that misspells a section the reader reads (`param_schedulr:`) is an error with a
    did-you-mean: MMEngine would build without it, silently. Other keys are the application's (model, data, hooks)."""
    for key in data:
        near = closest(key, SECTIONS, NEAR) if isinstance(key, str) and key not in SECTIONS else None
        if near is not None:
            errors.add(key_text(key), f"not a section of MMEngine's config that optreg reads ({', '.join(SECTIONS)}): "
                                      f"a misspelling would leave the {near} section out", near)


def read(data: Mapping[str, Any], source: Any = None) -> Any:
    """An MMEngine config -> Experiment: optreg's own form (a torch-dialect optimizer, mmengine.ParamSchedulers,
    clip_grad; the train loop's length as the format's run length) and, with paramwise_cfg, the planner that
    writes its rules for the model."""
    from optreg.config.translate import read_translated

    errors = Collector()
    report: list[KeyUse] = []
    _misspelt_sections(data, errors)
    optimizer, settings, clip = _wrapper(data.get("optim_wrapper"), errors, report)
    loop = _loop(data.get("train_cfg"), errors, report)
    scheduler = _schedulers(data.get("param_scheduler"), loop, errors, report)
    own: dict[str, Any] = {"dialect": "torch", "optimizer": optimizer}
    if scheduler is not None:
        own["scheduler"] = scheduler
    if clip is not None:
        own["clip_grad"] = clip.model_dump(exclude_defaults=True)
    if data.get("train") is not None:
        own["train"] = data["train"]
    paths = {**OWN_PATHS, **({"scheduler.param_scheduler[0]": "param_scheduler"}
                             if isinstance(data.get("param_scheduler"), Mapping) else {})}
    epochs, iters, _ = loop
    experiment = read_translated(own, source, "mmengine", paths, report,
                                 format_steps=(iters, "train_cfg.max_iters") if iters is not None else None,
                                 format_epochs=(epochs, "train_cfg.max_epochs") if epochs is not None else None,
                                 errors=errors, beside=True)
    experiment.planner = Planner(settings) if settings is not None else None
    return experiment


# ---------------------------------------------------------------------------------------------------
# .py configs
# ---------------------------------------------------------------------------------------------------
NAMES = ("optim_wrapper", "param_scheduler", "_base_")   # _base_: MMEngine's inheritance, which may give them


def _names(text: str) -> set[str]:
    """The top-level names a Python config assigns (read with ast; nothing executed)."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):   # not Python, or nested beyond the parser
        return set()
    out = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AnnAssign, ast.AugAssign)) else []
        out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


def read_python(text: str, name: str, path: Any) -> tuple[Any, Any] | None:
    """An MMEngine `.py` config -> (its Config as a dict, a Source that names the file), loaded by mmengine's
    `Config.fromfile` (which
    executes the file, as MMEngine does, with its `_base_` files); None when the file assigns none of optim_wrapper,
    param_scheduler and _base_ (`NAMES`). Without mmengine: a ConfigError."""
    if not set(NAMES) & _names(text):
        return None
    try:
        from mmengine.config import Config
    except ImportError as exc:
        raise ConfigError(f"{name}: an MMEngine .py config is loaded by mmengine's Config.fromfile (which executes "
                          f"it); mmengine cannot be imported here ({exc}): pip install mmengine-lite, or give a "
                          f"JSON / YAML dump of the config (Config.dump)") from None
    from pathlib import Path

    try:
        if path is not None and Path(str(path)).is_file():
            config = Config.fromfile(str(path))
        else:
            config = Config.fromstring(text, ".py")
    except Exception as exc:   # the file's own code failed under mmengine's loader
        raise ConfigError(f"{name}: mmengine's Config.fromfile failed: {type(exc).__name__}: {str(exc)[:200]}") \
            from None
    from optreg.config.yaml_loader import RanSource

    return config.to_dict(), RanSource(name)   # no positions: mmengine ran the file; its name locates errors and notes


__all__ = ["read", "read_python", "Planner"]

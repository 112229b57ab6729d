"""`build()`: from a config (spec, mapping, YAML path or text, Hydra DictConfig) to torch objects."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from optreg.config.experiment import Experiment, load_config, plans, validate_experiment
from optreg.core.groups import Group, table_rows
from optreg.errors import ConfigError


@dataclass
class Built:
    """What `build()` returns: the optimizer, the scheduler (or None) and the resolved group table."""

    optimizer: Any
    scheduler: Any
    groups: list[Group]
    experiment: Experiment
    frozen: list[tuple[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)     # what the config holds that is not the optimizer's
    clip: tuple[str, float] | None = None             # ("norm" | "value", max) from a Model Zoo config

    def clip_gradients(self, model_or_params: Any) -> Any:
        """Clip the gradients as the config asks (Model Zoo's max_gradient_norm / max_gradient_value); call it
        between backward() and optimizer.step(). Returns the total norm when clipping by norm, else None."""
        from optreg.dialects.cerebras.modelzoo import clip_gradients

        return clip_gradients(self.clip, model_or_params)

    def group_table(self) -> list[dict[str, Any]]:
        """One row per group: index, the rule that made it, its selectors and multipliers, parameter count and
        numel, the lr and weight decay it is built with (before any schedule), its names and its layer_decay
        layer; then a row `frozen` for the parameters left out. The same rows as `group_table(config, model)`."""
        return table_rows(self.groups, self.frozen)


def to_experiment(config: Any) -> Experiment:
    """Accept an Experiment, a mapping, a YAML path or text, or a Hydra/OmegaConf DictConfig.

    A DictConfig is resolved (`???` and broken interpolations are errors naming the key); an application's own
    top-level keys are ignored; `_target_` may only name optreg's builders (see optreg.integrations.hydra.support)."""
    if isinstance(config, Experiment):
        return config
    if isinstance(config, (str, Path)):
        return load_config(config)
    if type(config).__module__.startswith("omegaconf"):
        from optreg.integrations.hydra.support import experiment_from_omegaconf

        return experiment_from_omegaconf(config)
    if hasattr(config, "keys"):
        from optreg.integrations.hydra.support import strip_builders

        return validate_experiment(strip_builders(dict(config)))
    raise ConfigError(f"expected an experiment config (mapping, YAML path or text, DictConfig), got "
                      f"{type(config).__name__}")


def build(config: Any, model_or_named_params: Any) -> Built:
    """Validate `config` against the model's parameters, then build the optimizer and scheduler."""
    experiment = to_experiment(config)
    if experiment.modelzoo is not None:
        return _build_modelzoo(experiment, model_or_named_params)
    opt_plan, sched_plan = plans(experiment, model_or_named_params)
    try:
        optimizer = opt_plan.build()
    except ConfigError as exc:  # a constraint only the implementation knows: still at the section's path
        raise experiment.locate(exc.prefixed("optimizer")) from None
    try:
        scheduler = sched_plan.build(optimizer) if sched_plan is not None else None
    except ConfigError as exc:
        raise experiment.locate(exc.prefixed("scheduler")) from None
    return Built(optimizer, scheduler, opt_plan.groups, experiment, opt_plan.frozen)


def _build_modelzoo(experiment: Experiment, model: Any) -> Built:
    """A Model Zoo config: Model Zoo 2.10's groups, optimizer and schedulers (optreg.dialects.cerebras.modelzoo);
    what Cerebras' trainer applies around the optimizer is reported in one warning (clipping: clip_gradients)."""
    import warnings

    from optreg.dialects.cerebras import modelzoo

    try:
        plan = modelzoo.plan(experiment.modelzoo, model)
    except ConfigError as exc:
        raise experiment.locate(exc) from None
    optimizer = modelzoo.build_optimizer(plan)
    scheduler = modelzoo.build_schedulers(plan, optimizer)
    for note in plan.notes:
        warnings.warn(note, UserWarning, stacklevel=3)
    return Built(optimizer, scheduler, plan.optimizer.groups, experiment, plan.optimizer.frozen, plan.notes,
                 plan.clip)


def group_table(config: Any, model_or_named_params: Any) -> list[dict[str, Any]]:
    """The rows of `build(config, model).group_table()` from the validated plan alone: a dry run that creates
    no optimizer and no scheduler (`optreg groups`)."""
    experiment = to_experiment(config)
    if experiment.modelzoo is not None:
        from optreg.dialects.cerebras import modelzoo

        try:
            opt_plan = modelzoo.plan(experiment.modelzoo, model_or_named_params).optimizer
        except ConfigError as exc:
            raise experiment.locate(exc) from None
        return table_rows(opt_plan.groups, opt_plan.frozen)
    opt_plan, _ = plans(experiment, model_or_named_params)
    return table_rows(opt_plan.groups, opt_plan.frozen)

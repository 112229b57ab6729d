"""`build()`: from a config (spec, mapping, YAML path or text, Hydra DictConfig) to torch objects."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from optreg.config.experiment import Experiment, load_config, plans, validate_experiment
from optreg.core.groups import Group
from optreg.errors import ConfigError


@dataclass
class Built:
    """What `build()` returns: the optimizer, the scheduler (or None) and the resolved group table."""

    optimizer: Any
    scheduler: Any
    groups: list[Group]
    experiment: Experiment

    def group_table(self) -> list[dict[str, Any]]:
        """One row per group: index, the rule that made it, parameter count, its options."""
        rows = []
        for i, (group, torch_group) in enumerate(zip(self.groups, self.optimizer.param_groups)):
            rows.append({
                "group": i,
                "rule": group.rule,
                "patterns": list(group.patterns),
                "params": len(group.params),
                "numel": sum(p.numel() for p in group.params),
                "names": list(group.names or []),
                "options": dict(group.options),
                "lr": torch_group.get("lr"),
                "weight_decay": torch_group.get("weight_decay"),
            })
        return rows


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
    opt_plan, sched_plan = plans(experiment, model_or_named_params)
    try:
        optimizer = opt_plan.build()
    except ConfigError as exc:  # a constraint only the implementation knows: still at the section's path
        raise experiment.locate(exc.prefixed("optimizer")) from None
    try:
        scheduler = sched_plan.build(optimizer) if sched_plan is not None else None
    except ConfigError as exc:
        raise experiment.locate(exc.prefixed("scheduler")) from None
    return Built(optimizer, scheduler, opt_plan.groups, experiment)

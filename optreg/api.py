"""`build()`: from a config (spec, mapping, YAML path or text, Hydra DictConfig) to torch objects."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from optreg.config.experiment import Experiment, load_config, nominal_check, validate_experiment
from optreg.config.run import run_given
from optreg.core.groups import Group, lrs_by_parameter, table_rows
from optreg.errors import ConfigError, ConfigWarning


@dataclass
class Built:
    """What `build()` returns: the optimizer, the scheduler (or None) and the resolved group table."""

    optimizer: Any
    scheduler: Any
    groups: list[Group]
    experiment: Experiment
    frozen: list[tuple[str | None, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)     # what the config holds that is not the optimizer's
    clip: Any = None              # optreg.config.run.ClipGrad: `clip_grad:` (Model Zoo's max_gradient_norm / _value)
    run: Any = None               # optreg.config.run.RunLength: the run's length and steps per epoch, as planned
    #: by parameter, the lr at the first step where a schedule sets the lr itself (lrs_by_parameter), else None
    first_lrs: dict[int, float | None] | None = None

    @property
    def clips(self) -> bool:
        """Whether the config clips gradients: `clip_grad:`, or a group's own max norm (OneFlow's
        clip_grad_max_norm / clip_grad_norm_type, every LiBai file's)."""
        return self.clip is not None or self._clips_groups()

    def _clips_groups(self) -> bool:
        return callable(getattr(self.optimizer, "clip_grad", None)) and any(
            "clip_grad_max_norm" in g and "clip_grad_norm_type" in g for g in self.optimizer.param_groups)

    def clip_gradients(self, model_or_params: Any) -> Any:
        """Clip the gradients as the config asks: `clip_grad:` (Model Zoo's max_gradient_norm / max_gradient_value)
        over all of them, then each group by its own norm where groups set one (OneFlow's `optimizer.clip_grad()`,
        which LiBai's trainer calls before each step); call it between backward() and optimizer.step(). Returns the
        total norm (before clipping) when `clip_grad:` clips by norm, else None; nothing happens without clipping
        in the config."""
        from optreg.train import clip_gradients

        total = clip_gradients(self.clip, model_or_params)
        if self._clips_groups():
            self.optimizer.clip_grad()
        return total

    def group_table(self) -> list[dict[str, Any]]:
        """One row per group: index, the rule that made it, its selectors and multipliers, parameter count and
        numel, its lr (the one it is built with, which a schedule of factors scales; where a schedule sets the lr
        itself, the same in every group: Cerebras', MindSpore's, DeepSpeed's, the lr it has at the first step, and
        `own_lr`, the one it is built with, where it is another) and the weight decay it is built with, its names
        and its layer_decay layer; then a row `frozen` for the parameters left out. The same rows as
        `group_table(config, model)`."""
        return table_rows(self.groups, self.frozen, self.first_lrs)


def to_experiment(config: Any, format: str | None = None) -> Experiment:
    """Accept an Experiment, a mapping, a YAML or JSON path or YAML text, or a Hydra/OmegaConf DictConfig, in any
    config format (optreg.config.formats: detected by its signature, or forced with `format=`).

    A DictConfig is resolved in its format's sections (`???` and broken interpolations are errors naming the key;
    in a foreign format's, only where its reader reads them); an application's own top-level keys are ignored;
    `_target_` may only name optreg's builders (see optreg.integrations.hydra.support)."""
    if isinstance(config, Experiment):
        if format is not None and format != config.format:
            raise ConfigError(f"the experiment was read as {config.format!r}, not {format!r}", "format")
        return config
    if isinstance(config, (str, Path)):
        return load_config(config, format)
    if type(config).__module__.startswith("omegaconf"):
        from optreg.integrations.hydra.support import experiment_from_omegaconf

        return experiment_from_omegaconf(config, format=format)
    if hasattr(config, "keys"):
        return validate_experiment(dict(config), format=format)
    raise ConfigError(f"expected an experiment config (mapping, YAML path or text, DictConfig), got "
                      f"{type(config).__name__}")


def build(config: Any, model_or_named_params: Any, format: str | None = None, *, steps_per_epoch: int | None = None,
          total_steps: int | None = None) -> Built:
    """Read `config` (in its format, or the one `format=` names), plan it against the model's parameters, then
    build the optimizer and scheduler: the path every entry point takes (read -> validate -> plan -> build).

    `total_steps` and `steps_per_epoch` give what a file cannot know (the dataloader's length): the run length
    over train.steps and train.epochs × steps_per_epoch (optreg.config.run; two that disagree: ConfigError)."""
    import warnings

    experiment = _for_run(config, format, total_steps, steps_per_epoch)
    plan = experiment.plan(model_or_named_params)
    try:
        optimizer, scheduler = plan.build()
    except ConfigError as exc:
        raise experiment.locate(exc) from None
    for note in plan.notes:
        warnings.warn(ConfigWarning(note, experiment.note_location(note)), stacklevel=2)
    return Built(optimizer, scheduler, plan.optimizer.groups, experiment, plan.optimizer.frozen, plan.notes,
                 plan.clip, plan.run, lrs_by_parameter(optimizer) if plan.absolute_lr else None)


def _for_run(config: Any, format: str | None, total_steps: int | None, steps_per_epoch: int | None) -> Experiment:
    """The experiment of `config` (to_experiment) for the run the caller gives (`total_steps`, `steps_per_epoch`:
    see build), read as build reads it."""
    with nominal_check(False), run_given(total_steps, steps_per_epoch):
        return to_experiment(config, format).with_run(total_steps, steps_per_epoch)


def group_table(config: Any, model_or_named_params: Any, format: str | None = None, *,
                steps_per_epoch: int | None = None, total_steps: int | None = None) -> list[dict[str, Any]]:
    """The rows of `build(config, model).group_table()` from the validated plan: a dry run that creates no
    optimizer (`optreg groups`), and that needs no run length. Where a schedule sets the lr itself, a group's lr is
    the one the config's scheduler sets at the first step in a stand-in of the optimizer's groups
    (OptimizerPlan.stand_in), as it sets the built optimizer's; where the file leaves the run length to the trainer
    and nothing gave it, the lr each group is built with. `total_steps` and `steps_per_epoch` give the run as they
    give it to build (`optreg groups --steps`). The plan's notes on the groups (a rule of frozen parameters only)
    are warnings, as build gives them."""
    import warnings

    from optreg.config.translate import NOMINAL_RUN

    experiment = _for_run(config, format, total_steps, steps_per_epoch)
    nominal = experiment.needs_run and experiment.run.steps is None
    if nominal:
        # a length the file leaves to the trainer (DeepSpeed's "auto", a Trainer's epochs) moves the schedule,
        # never the groups: they are planned over the nominal run the file was checked against, and show the lrs
        # they are built with (the first step's may depend on the run: a warmup given as a ratio of it)
        experiment = experiment.with_run(total_steps=NOMINAL_RUN)
    try:
        plan = experiment.plan(model_or_named_params)
    except ConfigError:
        if nominal or steps_per_epoch is not None or experiment.run.steps_per_epoch is not None or \
                experiment.train.epochs is not None and experiment.run.known:   # those must agree: check_epochs
            raise
        # a run or schedule counted in epochs (MMEngine's by_epoch entries, LiBai's train_epoch) moves by the steps
        # per epoch, never the groups: planned over nominal ones where the plan wants them (else its error
        # stands); the first step is epoch 0's whatever their number, and a run length they would give is nominal
        # too (the lrs the groups are built with, as above)
        try:
            with nominal_check(False):   # checked as build checks it, when it plans
                retried = experiment.with_run(experiment.run.steps, steps_per_epoch=NOMINAL_RUN)
            plan = retried.plan(model_or_named_params)
        except ConfigError:
            retried = None
        if retried is None:
            raise
        nominal, experiment = not experiment.run.known, retried
    for note in plan.optimizer.notes:
        warnings.warn(ConfigWarning(note, experiment.note_location(note)), stacklevel=2)
    optimizer = plan.stand_in() if plan.absolute_lr and not nominal else None
    if optimizer is not None:
        try:
            plan.build_scheduler(optimizer)
        except ConfigError as exc:
            raise experiment.locate(exc) from None
    return table_rows(plan.optimizer.groups, plan.optimizer.frozen,
                      lrs_by_parameter(optimizer) if optimizer is not None else None)

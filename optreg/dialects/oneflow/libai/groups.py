"""LiBai's parameter groups (libai.optim.get_default_optimizer_params, LiBai main 2023), made against the model and
given to optreg's planner as `param_groups` rules.

Each parameter (each once, frozen ones left out) gets the optimizer's options, then weight_decay_norm when its
module is a normalisation layer (LiBai's LayerNorm, OneFlow's BatchNorm*, GroupNorm, InstanceNorm*, matched by class
name, so torch's classes of those names count; LiBai's RMSLayerNorm is not in its list and does not),
then weight_decay_bias when its own name is `bias`, then `overrides[its own name]`; parameters with the same options
share a group (reduce_param_groups).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

NORMS = ("LayerNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
         "InstanceNorm3d", "FusedBatchNorm1d", "FusedBatchNorm2d", "FusedBatchNorm3d")


#: the `epochs` of a config without train_epoch (LiBai's train section None, train_iter, train_epoch, micro-batches
#: per iteration): its scheduler and run are read with the file, none made for the run
NO_EPOCHS: tuple = (None, 0, 0, 1)


def options_per_parameter(model: Any, weight_decay_norm: Any = None, weight_decay_bias: Any = None,
                          overrides: Mapping[str, Mapping[str, Any]] | None = None) -> list[tuple[str, dict]]:
    """[(parameter name, the options LiBai gives it beyond the optimizer's)] in the model's module order."""
    out, seen = [], set()
    overrides = dict(overrides or {})
    if weight_decay_bias is not None:
        overrides["bias"] = {**overrides.get("bias", {}), "weight_decay": weight_decay_bias}
    for prefix, module in model.named_modules():
        for local, tensor in module.named_parameters(recurse=False):
            if not tensor.requires_grad or id(tensor) in seen:
                continue
            seen.add(id(tensor))
            options: dict[str, Any] = {}
            if type(module).__name__ in NORMS and weight_decay_norm is not None:
                options["weight_decay"] = weight_decay_norm
            options.update(overrides.get(local, {}))
            out.append((f"{prefix}.{local}" if prefix else local, options))
    return out


def for_model(experiment: Any, model: Any, weight_decay_norm: Any = None, weight_decay_bias: Any = None,
              overrides: Any = None, clip: Mapping[str, Any] | None = None, epochs: tuple = NO_EPOCHS) -> Any:
    """The LiBai experiment in optreg's own form for this model: one param_groups rule per set of options LiBai
    gives (every parameter's with `clip`, OneFlow's per-group clip_grad_max_norm / clip_grad_norm_type, which only
    a rule can carry); with train_epoch (`epochs`: LiBai's train section, train_iter, train_epoch, micro-batches
    per iteration) the scheduler and the length of the run (`optreg convert --model`, and the planner)."""
    from optreg.config.formats import exact_pattern
    from optreg.errors import ConfigError

    if not hasattr(model, "named_modules"):
        raise ConfigError("LiBai groups parameters by their modules (norm layers, biases): pass the model itself",
                          "optim.params")
    rules: list[tuple[dict[str, Any], list[str]]] = []   # (options, parameters): equal options, one rule
    for name, options in options_per_parameter(model, weight_decay_norm, weight_decay_bias, overrides):
        if options or clip:
            options = dict(sorted(options.items()))   # an overrides' value may be a list (betas): compared, not hashed
            same = next((names for given, names in rules if given == options), None)
            if same is None:
                rules.append((options, same := []))
            same.append(exact_pattern(name))
    section = dict(experiment.optimizer)
    if rules:
        section["param_groups"] = [{"params": names, **options, **(clip or {})} for options, names in rules]
    return dataclasses.replace(experiment, planner=None, optimizer=section, **_for_run(experiment, epochs))


def _for_run(experiment: Any, epochs: tuple) -> dict[str, Any]:
    """What the run gives the LiBai experiment's own form with train_epoch (`epochs`: LiBai's train section,
    train_iter, train_epoch, micro-batches per iteration; its train section None without train_epoch: nothing), as
    `Experiment` fields: the scheduler for LiBai's run, max(train_epoch × iterations per epoch, train_iter), and,
    for iterations per epoch given (build(steps_per_epoch=)), that run's length (ConfigError at train.train_epoch
    when neither they nor the run's length are given)."""
    changes: dict[str, Any] = {}
    train, iters, count, accumulation = epochs
    if train is not None:   # LiBai's run: max(train_epoch × iterations per epoch, train_iter)
        from optreg.config.run import RunLength
        from optreg.dialects.oneflow.libai.format import schedule_for_run

        per_epoch, given = experiment.run.steps_per_epoch, experiment.run
        if per_epoch is None and given.known:   # the run's length given (--steps, build(total_steps=)): its steps
            changes["scheduler"] = schedule_for_run(train, iters, count, None, accumulation, given.steps)
        else:
            changes["scheduler"] = schedule_for_run(train, iters, count, per_epoch, accumulation)
            source = "max(train.train_epoch × steps_per_epoch, train.train_iter)"
            changes["run"] = RunLength(max(count * per_epoch, iters) * accumulation, per_epoch, source, accumulation)
            changes["format_steps"] = (changes["run"].steps, source)
    return changes


def nominal_notes(experiment: Any, epochs: tuple = NO_EPOCHS) -> list[str]:
    """The schedule linter's warnings of `plan_libai` without the model (`optreg validate`: Experiment.check_final),
    at optreg's own form's paths: with train_epoch, the own form `for_model` plans with the scheduler for the run
    (`_for_run`), checked as validate checks optreg's own form (`nominal_checks`, the run final); its problems
    raised, as build raises them (a run in epochs without its length). Without train_epoch the scheduler is read
    with the file, and its warnings are the reading's."""
    if epochs[0] is None:
        return []
    from optreg.config.experiment import nominal_checks
    from optreg.errors import Collector

    errors = Collector()
    own = dataclasses.replace(experiment, planner=None, paths={}, **_for_run(experiment, epochs))
    notes = nominal_checks(own, errors, final_run=True)
    errors.raise_if_any()
    return notes


def unmatched_overrides(model: Any, overrides: Mapping[str, Any] | None) -> list[str]:
    """The warning of each `overrides` key that is no parameter's own name in the model (frozen ones included):
    LiBai passes over it silently, as MMEngine over a custom_keys key that matches nothing, while it is most often
    a misspelling or a full name (`blocks.0.pos_embed` where LiBai matches `pos_embed`)."""
    from optreg.errors import ErrorItem, closest, join_path, key_text, show

    names = sorted({local for _, module in model.named_modules()
                    for local, _ in module.named_parameters(recurse=False)})
    return [str(ErrorItem(join_path("optim.params.overrides", key_text(key)), f"{show(key)} matches no parameter: "
                          f"LiBai matches a parameter's own name within its module (bias, pos_embed) and passes over "
                          f"this key", suggestion=closest(key.rsplit(".", 1)[-1], names)))
            for key in overrides or {} if key not in names]


def plan_libai(experiment: Any, model: Any, **grouping: Any) -> Any:
    """optreg's plan of a LiBai experiment: its own form for the model (`for_model`), planned; the overrides keys
    that match no parameter are its notes (`unmatched_overrides`)."""
    from optreg.config.experiment import plan_own

    own = for_model(experiment, model, **grouping)
    plan = plan_own(own, model)
    plan.run = own.run
    plan.notes = [*unmatched_overrides(model, grouping.get("overrides")), *plan.notes]
    return plan

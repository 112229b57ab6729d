"""The experiment config: `optimizer:`, `scheduler:`, `train:` and an optional top-level `dialect:`.

`load_config` validates everything that can be checked without a model; `build` finishes the checks
against the model's parameter names and then, only if all is well, creates the torch objects.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from optreg.errors import (Collector, ConfigError, ErrorItem, Location, check_input, counted, join_path, key_text,
                           placed, show)
from optreg.core.composite import ROUTE_KEY, check_inherited, inherited, is_composite, nominal_composite
from optreg.core.composite import at_rule, model_part, rule_spec as composite_spec
from optreg.core.build import (WRAPPED_NAME, WRAPPED_REQUIRED, Context, OptimizerPlan, SchedulerPlan, absolute_key,
                               absolute_over_scaled, at_written, check_group_keys, check_limits, check_schedule,
                               dynamic_lr_conflict, foreign_form, group_options, model_refusals, plan_optimizer,
                               plan_scheduler, wraps_optimizer, _torch_dicts)
from optreg.config.yaml_loader import Source, read_yaml
from optreg.config.run import (GIVEN_BY, ClipGrad, RunLength, TrainSpec, accumulation_note, check_given, given_run,
                               read_clip, read_train, resolve_run)
from optreg.core.entry import OPTIMIZER, Entry
from optreg.core.groups import (MULTIPLIERS, NO_SELECTOR, SELECTORS, Group, apply_settings, check_support,
                                parameters_argument, scaled_lr_keys, scaled_options, settings_table, split_rule,
                                split_settings, not_rules)
from optreg.core.names import any_case, name_key
from optreg.core.lint import lint_schedule, overrun_errors, rule_lrs_replaced
from optreg.core.registry import REGISTRY
from optreg.core.validate import option_names, validate_options

TOP_KEYS = ("dialect", "optimizer", "scheduler", "train", "clip_grad")
MODEL = "model"   # the path of the model an experiment is planned against (build's argument), no key of the file
SECTION_KEYS = ("dialect", "param_groups")
DEFAULTS = "defaults"   # a Hydra primary config's list of the config groups it composes


@dataclass
class Experiment:
    """A validated experiment config: normalised optimizer/scheduler sections and the train settings."""

    optimizer: dict[str, Any]
    scheduler: Any = None
    train: TrainSpec = field(default_factory=TrainSpec)
    dialect: str | None = None
    source: Source | None = None
    modelzoo: Any = None      # a Cerebras Model Zoo config (optreg.dialects.cerebras.modelzoo.Section)
    format: str = "optreg"    # the reader that read it (optreg.config.formats)
    planner: Any = None       # (experiment, model) -> plan, for a format that plans its own way; None: optreg's
    clip: ClipGrad | None = None              # `clip_grad:` (or the format's own clipping keys)
    format_steps: tuple[int, str] | None = None   # the format's own run length and the key that gives it
    format_epochs: tuple[int, str] | None = None  # the format's own run length in epochs (MMEngine's max_epochs)
    run: RunLength = field(default_factory=RunLength)   # the run length, resolved (optreg.config.run)
    notes: list[str] = field(default_factory=list)      # the schedule linter's warnings, as validate reads it
    report: list[Any] = field(default_factory=list)     # a foreign format's use of each source key (formats.KeyUse)
    paths: dict[str, str] = field(default_factory=dict)  # a translated format's own-form path -> the source's path
    units: dict[str, Any] = field(default_factory=dict)  # its source keys that count units of steps (translate.Unit)
    needs_run: str | None = None   # the source key that leaves the run length to the trainer (DeepSpeed's "auto")
    needs_run_why: str | None = None   # what needs it, in the format's words (NeMo's max_steps from max_epochs)

    def check_run(self) -> None:
        """A ConfigError at `needs_run` when the file leaves the run length to the trainer and nothing gave it."""
        if self.needs_run and self.run.steps is None:
            error = ConfigError(self.needs_run_why or (
                "the run length, which the file leaves to the trainer: give it with --steps N (optreg validate / run "
                "/ plot / convert) or build(..., total_steps=N), or the steps per epoch of a run in epochs "
                "(build(..., steps_per_epoch=N))"), self.needs_run)
            raise error.located(self.source) if self.source else error

    def check_length(self, later: bool = False) -> Collector:
        """The run as planning needs it, before any plan (validate, convert, build, run, plot): a run in epochs
        with its steps per epoch (`check_epochs`; with `later`, returned for the caller to report after the plan's
        problems, else raised), a length the file leaves to the trainer given (`check_run`, raised at once)."""
        errors = Collector()
        self.check_epochs(errors)
        if errors and (not later or self.needs_run and self.run.steps is None):
            raise self.locate(ConfigError(errors.items))
        self.check_run()
        return errors

    def check_final(self) -> list[str]:
        """The verdict of build on this experiment without a model, for a caller that gives nothing more of the
        run (`optreg validate`): `check_length`, and the checks of its reading (`nominal_checks`)
        again with the run final, as build plans it: a schedule in epochs without the steps per epoch, a warmup
        ratio without a run length; then a format's own planner's (its `nominal_notes`: Model Zoo's schedulers, the
        schedule LiBai makes for a run in epochs); every problem at once. The schedule linter's notes."""
        length = self.check_length(later=True)
        notes, errors = self.notes, Collector()
        if not (self.modelzoo is not None or "name" not in self.optimizer or
                self.run.steps is not None and self.run.steps_per_epoch is not None):   # nothing changes when final
            notes = nominal_checks(self, errors, final_run=True)
        nominal = getattr(self.planner, "nominal_notes", None)   # a format's own planner: its warnings without a model
        if nominal is not None and not errors and not length:   # at the source's paths, as `plan` puts its notes; a
            try:   # note the checks above made too (LiBai's own form made at plan time: the run's accumulation) once
                notes = list(dict.fromkeys([*notes, *self.at_source(nominal(self))]))
            except ConfigError as exc:   # its problems, as build's plan raises them
                errors.extend(exc)
        errors.extend(length.items)
        if errors:
            raise self.locate(ConfigError(errors.items))
        return notes

    @property
    def epochs_unresolved(self) -> bool:
        """A run in epochs that nothing gave the steps per epoch of: no run length (`check_epochs`' error), so a
        length the run would give a schedule is not also missing (it is planned as `Context.run_invalid`)."""
        return self.train.epochs is not None and self.run.steps is None

    def check_epochs(self, errors: Collector) -> None:
        """The error at train.epochs (into `errors`) of a run in epochs without its steps per epoch (in validate,
        run, plot and build alike: a run length in epochs is not left unused), whether or not another source gives
        the length (train.steps, build(total_steps=)): one source, or two that agree (`resolve_run`)."""
        epochs = self.train.epochs
        counted = f"{epochs} epochs need" if epochs != 1 else "1 epoch needs"
        if self.epochs_unresolved:   # a format's own epochs too (the Trainer's num_train_epochs, NeMo's
            # trainer.max_epochs), beside which its reader reads train.steps_per_epoch
            errors.add("train.epochs", f"{counted} the steps per epoch to give a run length: train.steps_per_epoch or "
                                       f"--steps N (build(..., steps_per_epoch=))")
        elif epochs is not None and self.run.steps_per_epoch is None and "train.epochs" not in self.paths:
            errors.add("train.epochs", f"{counted} the steps per epoch to agree with the {self.run.steps} steps of the "
                                       f"run ({self.run.source}): give one of train.steps or train.epochs with "
                                       f"train.steps_per_epoch (build(..., steps_per_epoch=))")

    def locate(self, error: ConfigError) -> ConfigError:
        """`error` at the file's paths (`paths`) and positions, with the advice its source gives there (a composed
        config's: `+key=` for an option a group file leaves out); a problem said twice there once (Model Zoo's
        constant learning_rate is the optimizer's lr and its ConstantLR's)."""
        if self.paths:
            from optreg.config.translate import source_paths

            error = source_paths(error, self.paths)
        error = error.located(self.position) if self.source else error
        advise = getattr(self.source, "advise", None)   # a composed config's (hydra.support.override_locator)
        error = advise(error) if advise is not None else error
        return ConfigError(dict.fromkeys(error.errors)) if len(set(error.errors)) < len(error.errors) else error

    def position(self, path: str) -> Location | None:
        """Where the file (`source`) writes the key at `path`; a scheduler written as a list is read as a
        `sequential` of its items, whose stage `scheduler.schedulers[i]` the file writes as `scheduler[i]`."""
        if isinstance(self.scheduler, (list, tuple)) and path.startswith("scheduler.schedulers["):
            path = "scheduler" + path[len("scheduler.schedulers"):]
        return self.source(path)

    def note_location(self, note: str) -> Location | None:
        """Where the file writes the key a note begins with (`scheduler.T_max: ...`, at the source's path for a
        translated format) or the override that set it, as an error there is located; None: no file, or a key that
        neither the file nor an override writes."""
        head, sep, _ = note.partition(": ")
        if not sep or " " in head or self.source is None:
            return None
        return placed(self.position, head)

    def with_run(self, total_steps: int | None = None, steps_per_epoch: int | None = None,
                 given_by: str = GIVEN_BY[0]) -> "Experiment":
        """This experiment for a run that the caller knows more of (`build(total_steps=, steps_per_epoch=)`): the
        run length resolved again from every source; two that disagree are a ConfigError. `given_by`: how messages
        name total_steps (`optreg.config.run.resolve_run`)."""
        if total_steps is None and steps_per_epoch is None:
            return self
        total_steps, steps_per_epoch = check_given(total_steps, steps_per_epoch)
        errors = Collector()
        run = resolve_run(self.train, total_steps=total_steps, steps_per_epoch=steps_per_epoch,
                          format_steps=self.format_steps, format_epochs=self.format_epochs, errors=errors,
                          given_by=given_by)
        if errors:
            raise self.locate(ConfigError(errors.items))
        return self.for_run(run)

    def for_run(self, run: RunLength) -> "Experiment":
        """This experiment over `run`; read for validate (no model), its checks and notes made again for a run
        that differs from the one it was read with (those of a build are made when it plans against the model)."""
        experiment = dataclasses.replace(self, run=run)
        if _NOMINAL_CHECK.get() and run != self.run and self.modelzoo is None and "name" in self.optimizer:
            errors = Collector()
            experiment.notes = nominal_checks(experiment, errors)
            if errors:
                raise experiment.locate(ConfigError(errors.items))
        return experiment

    def plan(self, model_or_named_params: Any) -> "Plan":
        """This experiment validated against the model: everything `build` creates, decided (ConfigError at the
        config's positions otherwise, at `model` for the model itself); nothing is built."""
        model = parameters_argument(model_or_named_params, MODEL, getattr(self.planner, "needs_module", None))
        errors = Collector()
        length = self.check_length(later=self.planner is None)   # optreg's planner: its problems too
        try:
            plan = (self.planner or plan_own)(self, model)
        except ConfigError as exc:
            errors.extend(exc)
        errors.extend(length.items)
        if errors:
            raise self.locate(ConfigError(errors.items)) from None
        known = getattr(plan, "run", None)   # a format's planner may know the run better (LiBai's train_epoch)
        plan.run = known if known is not None and known.steps is not None else self.run
        plan.clip = plan.clip or self.clip
        plan.notes = self.at_source(plan.notes)   # a translated format's at the source's paths, as its errors
        return plan

    def at_source(self, notes: list[str]) -> list[str]:
        """The schedule linter's `notes` of a translated format at the source's paths (`paths`), a length advised
        for a key that counts units of steps in them (`units`): `translate.source_note`; optreg's own as they are."""
        if not self.paths:
            return notes
        from optreg.config.translate import source_note

        return [source_note(n, self.paths, self.units) for n in notes]


@dataclass
class Plan:
    """An experiment validated against a model: the optimizer and scheduler plans and what the config asks around
    them (notes, gradient clipping). `build()` creates the optimizer and the scheduler."""

    optimizer: OptimizerPlan
    scheduler: Any = None                      # SchedulerPlan or None
    notes: list[str] = field(default_factory=list)
    clip: ClipGrad | None = None               # gradient clipping (optreg.config.run.ClipGrad)
    run: RunLength = field(default_factory=RunLength)

    def build(self) -> tuple[Any, Any]:
        try:
            optimizer = self.optimizer.build()
        except ConfigError as exc:  # a constraint only the implementation knows: still at the section's path
            raise exc.prefixed("optimizer") from None
        return optimizer, self.build_scheduler(optimizer)

    def stand_in(self) -> Any:
        """The optimizer's stand-in (OptimizerPlan.stand_in), or None."""
        return self.optimizer.stand_in()

    @property
    def absolute_lr(self) -> bool:
        """Whether the scheduler sets the lr itself in every group (`build.absolute_key`): the groups'
        own lrs are then not the ones they step with."""
        return self.scheduler is not None and absolute_key(self.scheduler) == "lr"

    def build_scheduler(self, optimizer: Any) -> Any:
        """The scheduler over `optimizer` (the built one, or its stand-in), or None."""
        try:
            return self.scheduler.build(optimizer) if self.scheduler is not None else None
        except ConfigError as exc:
            raise exc.prefixed("scheduler") from None


def _section(raw: Any, path: str, errors: Collector, wrapped: bool = False) -> dict[str, Any] | None:
    """The component spec `raw` at `path` with its name under `name`, or None where it is no mapping; `wrapped`: a
    wrapper's nested optimizer, in the words build uses for it (`build._inner_spec`)."""
    if not isinstance(raw, Mapping):
        errors.add(path, WRAPPED_REQUIRED if wrapped else f"expected a mapping, got {type(raw).__name__} {show(raw)}")
        return None
    out = dict(raw)
    what = {"optimizer": "the optimizer", "scheduler": "the scheduler"}.get(path, "the component")
    # a missing name in the words the scheduler's planning uses (`_read_own` reports one of the two)
    name_key(errors, out, path, what, WRAPPED_NAME if wrapped else f"{what}'s name")
    return out


def split_optimizer(section: Mapping[str, Any]) -> tuple[str, str | None, list, dict[str, Any]]:
    """(name, dialect, param_groups rules, options) of a normalised optimizer section."""
    options = {k: v for k, v in section.items() if k not in ("name", *SECTION_KEYS)}
    rules = section.get("param_groups") or []
    return section["name"], section.get("dialect"), list(rules) if isinstance(rules, (list, tuple)) else rules, \
        options


def not_a_list_of_rules(section: Mapping[str, Any], errors: Collector, path: str = "optimizer") -> bool:
    """Whether the section's `param_groups` is no list of rules (`not_rules`: '', a mapping; an error at it, which
    split_optimizer's rules, empty then, would not show)."""
    if (wrong := not_rules(section.get("param_groups"))) is not None:
        errors.add(join_path(path, "param_groups"), wrong)
        return True
    return False


def check_optimizer_section(section: dict, dialect: str | None, errors: Collector, path: str = "optimizer") -> None:
    """What can be checked without the model (into `errors`, at `path`): the name, the options (and a wrapped
    optimizer's), the param_groups rules against no parameters; a reader checks what it translates so (MMEngine's
    optim_wrapper.optimizer, the groups LiBai's weight_decay_norm makes)."""
    name, own, rules, options = split_optimizer(section)
    settings, options = split_settings(options, path, errors)   # no_weight_decay, layer_decay
    try:
        entry = REGISTRY.lookup(OPTIMIZER, name, own, path=join_path(path, "name"), default=dialect)
        if wraps_optimizer(entry):
            inner = _section(options.pop("optimizer", None), join_path(path, "optimizer"), errors, wrapped=True)
            if inner is not None and "name" in inner:
                check_optimizer_section(inner, entry.dialect, errors,
                                         join_path(path, "optimizer"))
    except ConfigError as exc:
        errors.extend(exc)
        return
    check_limits(entry, errors, path)   # a module not installed, a class that cannot step: as build refuses them
    try:
        values = validate_options(entry, options, path=path, extra_keys=(*settings_table(), "param_groups"))
    except ConfigError as exc:   # the rules are still checked (every problem at once), against no option values
        errors.extend(exc)
        values = {}
    if not_a_list_of_rules(section, errors, path):
        return
    if entry.takes_model:   # as build refuses them, whatever the model
        model_refusals(entry, rules, settings, errors, path)
        return
    scaled = scaled_options(option_names(entry))
    if not wraps_optimizer(entry):
        check_support(scaled, entry.qualname, [k for k, v in settings.items() if v not in (None, False)], path,
                      errors)
    own_groups = []   # the groups of the rules that route to no part
    for i, rule in enumerate(rules if not wraps_optimizer(entry) else []):  # rule options, before any model
        here = join_path(join_path(path, "param_groups"), i)
        if not isinstance(rule, Mapping):
            errors.add(here, f"expected a mapping with params: <glob> and options, got {show(rule)}")
            continue
        if ROUTE_KEY in rule:   # a composite's part: its own optimizer's section
            spec = composite_spec(rule, here, errors, own or dialect)
            split_rule({k: v for k, v in rule.items() if k != ROUTE_KEY}, here, errors)   # selectors, multipliers
            if spec is not None and not model_part(spec[0], spec[1], own or dialect, join_path(here, ROUTE_KEY),
                                                   errors):
                part, part_dialect, part_options, group_keys = spec
                taken = inherited(settings, split_settings(part_options, "", Collector())[0])
                try:   # the main section's settings reach the part: as build refuses one it has no option for
                    part_entry = REGISTRY.lookup(OPTIMIZER, part, part_dialect, default=own or dialect)
                    if not wraps_optimizer(part_entry):
                        check_inherited(part_entry, taken, join_path(here, ROUTE_KEY), path, errors)
                except ConfigError:   # an unknown name: the part's own check reports it
                    pass
                local = Collector()   # the part's group keys as its one rule's: reported at the user's rule
                check_optimizer_section({"name": part, **({"dialect": part_dialect} if part_dialect else {}),
                                          **part_options,
                                          **({"param_groups": [{"params": "*", **group_keys}]} if group_keys else {})},
                                         own or dialect, local, join_path(here, ROUTE_KEY))
                errors.extend(at_rule(local.items, here))
            continue
        keys, rule_options = split_rule(rule, here, errors)   # selectors and multipliers
        if not any(k in rule for k in SELECTORS) and not (entry.bind is not None and rule):   # as `from_rules`
            errors.add(join_path(here, "params"), NO_SELECTOR)
        check_support(scaled, entry.qualname, keys, here, errors)
        own_groups.append(Group([], [], rule_options, rule=here))
        group_options(entry, own_groups[-1], values, errors, here)
    if not wraps_optimizer(entry):   # without the model, what no rule selects is known only where there are no rules
        check_group_keys(entry, own_groups, errors, join_path(path, "param_groups"), rest=None if rules else [],
                         ruled=bool(rules))


def _scheduler_spec(raw: Any, path: str, errors: Collector) -> Any:
    if raw is None or isinstance(raw, (list, str)) or foreign_form(raw) is not None:
        return raw
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):   # configure_lr_scheduler(opt, 0.5)'s form
        errors.add(path, f"a number is no schedule in a config: give it as the optimizer's lr, which the groups "
                         f"scale, or as the schedule that sets every group's lr to it, {{name: cerebras.ConstantLR, "
                         f"learning_rate: {show(raw)}}} (what configure_lr_scheduler(optimizer, {show(raw)}) does)")
        return None
    return _section(raw, path, errors)


def own_sections(data: Mapping[str, Any]) -> list[Any]:
    """The top-level keys optreg's own form reads: its sections and near-misses of them (`optimiser:`, reported with
    a did-you-mean); an application's other keys (`seed:`, `model:`, `trainer:`) are left alone."""
    return [k for k in data.keys() if k in TOP_KEYS or _near_miss(k) is not None]


def _near_miss(key: Any) -> str | None:
    """The section `key` misspells, else None: one letter changed, added, dropped or two swapped (`optimiser`,
    `schedular`, `trian`), or case aside; `trainer` (two letters more than `train`) is an application's own."""
    if not isinstance(key, str) or key in TOP_KEYS or len(key) > 2 * max(map(len, TOP_KEYS)):
        return None
    return next((k for k in TOP_KEYS if _one_edit(key.lower(), k)), None)


def near_miss_pattern() -> str:
    """The keys `_near_miss` reads as a section's (the sections' own names among them) as one regular expression
    without flags (a JSON Schema's, `optreg schema`): each name of TOP_KEYS with at most one letter changed, added,
    dropped or two swapped, in any case."""
    any_char, variants = r"[\s\S]", set()
    for key in TOP_KEYS:
        for i in range(len(key) + 1):
            variants.add((key[:i], any_char, key[i:]))                  # one added
            if i < len(key):
                variants.add((key[:i], any_char, key[i + 1:]))          # one changed (or none)
                variants.add((key[:i], "", key[i + 1:]))                # one dropped
            if i + 1 < len(key):
                variants.add((key[:i] + key[i + 1] + key[i], "", key[i + 2:]))   # two swapped
    return "^(" + "|".join(sorted(any_case(a) + edit + any_case(b) for a, edit, b in variants)) + ")$"


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` and `b` differ by at most one edit (substitution, insertion, deletion, adjacent swap)."""
    if abs(len(a) - len(b)) > 1:
        return False
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    if len(a) == len(b):
        return a[i + 1:] == b[i + 1:] or a[i:i + 2] == b[i:i + 2][::-1] and a[i + 2:] == b[i + 2:]
    return (a[i + 1:] == b[i:]) if len(a) > len(b) else (a[i:] == b[i + 1:])


class OwnFormat:
    """optreg's own form: `dialect:`, `optimizer:`, `scheduler:`, `train:`. It claims nothing: it reads every file
    that no other format claims."""

    name = "optreg"
    doc = "optreg's own experiment: dialect, optimizer, scheduler, train"
    signature = "optimizer.name"

    def claims(self, data: Mapping[str, Any]) -> bool:
        return False

    def sections(self, data: Mapping[str, Any]) -> list[Any]:
        return own_sections(data)

    def read(self, data: Mapping[str, Any], source: Source | None = None) -> Experiment:
        return _read_own(data, source, final=True)


OWN_FORMAT = OwnFormat()


def validate_experiment(data: Any, source: Source | None = None, format: str | None = None) -> Experiment:
    """A raw mapping (from YAML, Hydra or Python) -> Experiment, read by its format (`format=` forces one; see
    optreg.config.formats); ConfigError lists every problem, at the file's positions."""
    from optreg.config import formats

    if not isinstance(data, Mapping):
        # Python text reads as YAML's one string: a .py config is read from its file (`read_yaml`)
        python = isinstance(data, str) and "=" in data
        error = ConfigError(f"an experiment config is a mapping with optimizer:, got {type(data).__name__}" + (
            "; a Python config (LiBai's, MMEngine's) is read from its file: give its path, a .py file"
            if python else ""))
        raise error.located(source) if source else error
    formats.check_forced(format)
    try:
        reader = formats.detect(data, format)
        # the application's other keys are its own; a foreign format's sections hold keys it does not read
        check_input({k: data[k] for k in reader.sections(data)}, blanks=reader is OWN_FORMAT)
    except ConfigError as exc:
        raise exc.located(source) if source else exc from None
    experiment = reader.read(data, source)
    experiment.format = reader.name
    return experiment


def _section_kind(data: Mapping[str, Any]) -> str | None:
    """"optimizer" or "scheduler" when `data` is one such section itself (its `name:` a registered component's,
    or its `_target_` optreg's builder of that kind, a Hydra group file's), else None."""
    from optreg.core.entry import SCHEDULER
    from optreg.integrations.hydra.support import targets

    for kind in (OPTIMIZER, SCHEDULER):
        if data.get("_target_") in targets(kind):
            return kind
    name, dialect = data.get("name"), data.get("dialect")
    if not isinstance(name, str) or not isinstance(dialect, (str, type(None))):
        return None
    for kind in (OPTIMIZER, SCHEDULER):
        try:
            if REGISTRY.find(kind, name, dialect) is not None:
                return kind
        except ConfigError:
            continue
    return None


def _missing_optimizer(data: Mapping[str, Any], errors: Collector) -> None:
    """The error of a file without `optimizer:` that no format claimed: with the formats its keys are of, and a
    did-you-mean at each key that misspells a format's (`formats.resemblance`)."""
    from optreg.config import formats

    misspelt, named = formats.resemblance(data, TOP_KEYS)
    message = "required: the optimizer section (name: and its options)"
    kind = _section_kind(data)
    if kind is not None:   # build(cfg.optimizer, model): a section given as the whole config
        errors.add("optimizer", f"{message}; these keys are {kind} section's own (name: {show(data['name'])}): "
                                f"give the whole config, build(cfg, model), or {{{kind}: <them>}}")
        return
    if named:
        message += (f"; of the file's keys, {'; '.join(named)}: give it what claims a file, or force the format "
                    f"with --format NAME (format= in Python)")
    errors.add("optimizer", message)
    errors.extend([m for m in misspelt if not any(e.path == m.path for e in errors.items)])   # one error a key


def _read_own(data: Mapping[str, Any], source: Source | None, final: bool = False) -> Experiment:
    """optreg's own form -> Experiment; Hydra's instantiate keys are dropped (a foreign `_target_` refused).
    `final`: a file of optreg's own form, whose run nothing but the caller's given run completes (not a translated
    format's, whose own length comes after): its errors come with its run's (`_final_problems`)."""
    from optreg.integrations.hydra.support import strip_builders

    errors = Collector()
    given = data
    try:
        data = strip_builders({k: data[k] for k in own_sections(data)})
    except ConfigError as exc:
        raise exc.located(source) if source else exc from None
    for key in [k for k in data if k not in TOP_KEYS]:
        errors.add(key_text(key), f"unknown top-level key; expected {', '.join(TOP_KEYS)}", _near_miss(key))
    dialect = data.get("dialect")
    if "optimizer" not in data:
        _missing_optimizer(given, errors)
        optimizer = None
    else:
        optimizer = _section(data["optimizer"], "optimizer", errors)
    check = _NOMINAL_CHECK.get()
    if check and optimizer is not None and "name" in optimizer:   # build's planning makes these checks itself
        check_optimizer_section(optimizer, dialect, errors)
    checked = len(errors.items)
    scheduler = _scheduler_spec(data.get("scheduler"), "scheduler", errors)
    train = read_train(data, errors)
    experiment = Experiment(optimizer or {}, scheduler, train, dialect, source,
                            clip=read_clip(data.get("clip_grad"), errors),
                            run=resolve_run(train, errors=errors))
    if check and optimizer is not None and not errors:   # every check that needs no model, as build makes it
        experiment.notes = nominal_checks(experiment, errors)
    elif scheduler is not None and (check or errors):   # the scheduler's own problems, beside the optimizer's
        try:
            _scheduler_alone(experiment, experiment.run, False, experiment.epochs_unresolved or _train_errors(errors))
        except ConfigError as exc:   # what the sections' reading found already is not said twice
            _unsaid(exc, errors)
    if errors and not check and optimizer is not None and "name" in optimizer:
        # no plan follows these errors: the optimizer section's own, which it would have said, in their place
        unplanned = Collector()
        check_optimizer_section(optimizer, dialect, unplanned)
        errors.items[checked:checked] = unplanned.items
    if errors and final:   # the reading ends here: the run as nothing more gives it, every problem at once
        _final_problems(experiment, errors)
    if errors:
        raise experiment.locate(ConfigError(errors.items))
    return experiment


def _train_errors(errors: Collector) -> bool:
    """Whether `errors` holds a problem of the `train:` section (then it gives no run length)."""
    return any(e.path == "train" or e.path.startswith("train.") for e in errors.items)


def _scheduler_alone(experiment: Experiment, run: RunLength, final_run: bool, run_invalid: bool) -> None:
    """The scheduler section planned without the optimizer's (one group, its options unknown) for `run`: its own
    problems, raised (`final_run`, `run_invalid`: as `Context` takes them)."""
    plan_scheduler(experiment.scheduler, Context(1, frozenset(), experiment.dialect, known_groups=False,
                                                 known_options=False, run_steps=run.steps,
                                                 steps_per_epoch=run.steps_per_epoch, final_run=final_run,
                                                 run_invalid=run_invalid), "scheduler")


def _unsaid(error: ConfigError, errors: Collector) -> None:
    """The items of `error` that `errors` does not hold yet (the same path and message) added to it."""
    said = {(e.path, e.message) for e in errors.items}
    errors.extend([e for e in error.errors if (e.path, e.message) not in said])


def _final_problems(experiment: Experiment, errors: Collector) -> None:
    """Beside the errors a reading of optreg's own form ends with (nothing later gives the run: no `check_final`,
    no plan), the problems of its run as it is final, the caller's given run (`given_run`) included, as validate
    and build would report them next: a run in epochs without its steps per epoch (`check_epochs`), and the
    scheduler's with the run final (a schedule in epochs without the steps per epoch, a warmup ratio without a
    run length); none when `train:` itself has errors (no run to speak of)."""
    if experiment.scheduler is None and experiment.train.epochs is None or _train_errors(errors):
        return
    final = dataclasses.replace(experiment, run=resolve_run(experiment.train, errors=Collector(), **given_run()))
    try:
        if experiment.scheduler is not None:
            _scheduler_alone(final, final.run, True, final.epochs_unresolved)
    except ConfigError as exc:   # in the order build plans them (the reading's of them in their place)
        again = {(e.path, e.message) for e in exc.errors}
        errors.items[:] = [e for e in errors.items if (e.path, e.message) not in again] + exc.errors
    final.check_epochs(errors)   # after the plan's problems, as `Experiment.plan` reports it


STAND_IN = object()   # the parameter of a nominal group (never built)


def nominal_checks(experiment: Experiment, errors: Collector, final_run: bool = False) -> list[str]:
    """What validate checks without a model, as build checks it with one: the optimizer section's nominal plan
    (`_nominal_plan`) and every check of the scheduler around it for the experiment's run (`plan_around`); its
    problems go to `errors`, the schedule linter's notes are returned (a translated format's at the source's paths,
    once it has them: `Experiment.paths`). `final_run`: nothing more will give the run length or the steps per
    epoch (`Experiment.check_final`); while a file is read, `build(total_steps=, steps_per_epoch=)` still may."""
    notes: list[str] = []
    section, dialect = experiment.optimizer, experiment.dialect
    plan_around(_nominal_plan(section, dialect, errors), experiment, errors,
                known_groups=_one_group(section, dialect), final_run=final_run, notes=notes)
    return experiment.at_source(notes)

#: whether reading optreg's own form plans it without the model too (the checks `validate` reports); off while
#: `build()` reads, which plans against the model at once with the same checks (each made once)
_NOMINAL_CHECK: ContextVar[bool] = ContextVar("optreg_nominal_check", default=True)


@contextmanager
def nominal_check(on: bool):
    """Read experiments inside this block with (`on`) or without their nominal plan. Off while the caller plans
    them against a model (`build()`); on again for a reading that ends in errors whatever the model (no plan
    follows, so the nominal plan's checks are the only ones made)."""
    token = _NOMINAL_CHECK.set(on)
    try:
        yield
    finally:
        _NOMINAL_CHECK.reset(token)


def _one_group(section: Mapping[str, Any], dialect: str | None) -> bool:
    """Whether every model gives this optimizer one parameter group: no rules, no setting that splits the groups,
    no dialect grouping (Model Zoo's bias/norm split, MindSpore's beta/gamma rule)."""
    name, own, rules, options = split_optimizer(section)
    entry = REGISTRY.lookup(OPTIMIZER, name, own, default=dialect)
    settings, _ = split_settings(options, "", Collector())
    return not rules and not wraps_optimizer(entry) and entry.bind is None and \
        not REGISTRY.dialect(entry.dialect).default_settings and all(v in (None, False) for v in settings.values())


def _nominal_plan(section: Mapping[str, Any], dialect: str | None, errors: Collector,
                  path: str = "optimizer") -> OptimizerPlan:
    """The optimizer's plan without the model (`validate`): one group for the parameters no rule selects and one
    per `param_groups` rule (as if each selected some), with the options, multipliers and lrs that planning
    against a model gives them; the settings that need the model (no_weight_decay, layer_decay) are not applied,
    but a layer_decay below 1 is recorded as what gives lrs of their own (on any model some layer has one).
    Its problems (a multiplier that cannot scale the lr) go to `errors`, at the paths build gives them."""
    name, own, rules, options = split_optimizer(section)
    entry = REGISTRY.lookup(OPTIMIZER, name, own, default=dialect)
    if is_composite(rules):
        return nominal_composite(section, own or dialect, errors, path, _nominal_plan)
    settings, options = split_settings(options, path, Collector())
    if wraps_optimizer(entry):
        inner = _section(options.pop("optimizer"), join_path(path, "optimizer"), Collector())
        plan = _nominal_plan(inner, entry.dialect, errors, join_path(path, "optimizer"))
        return OptimizerPlan(entry, validate_options(entry, options), plan.groups, plan.grouped, plan)
    values = validate_options(entry, options, path=path)
    groups = []   # one per rule, then the default group: a model's plan's order, which messages number groups in
    for i, rule in enumerate(rules if not entry.takes_model else []):
        here = join_path(join_path(path, "param_groups"), i)
        keys, rule_options = split_rule(rule, here, Collector())
        group = Group([STAND_IN], None, rule_options, rule=here,
                      multipliers={k: v for k, v in keys.items() if k in MULTIPLIERS})
        group_options(entry, group, values, Collector(), here)
        groups.append(group)
    groups.append(Group([STAND_IN], None, {}, rule="default"))
    groups = apply_settings(groups, {}, values, scaled_options(option_names(entry)), None, errors, path)
    decay = settings.get("layer_decay")
    if decay is not None and decay.rate < 1:   # on any model its layers get lrs of their own, from layer_decay
        groups[-1].origin.setdefault("lr", join_path(path, "layer_decay"))
    plan = OptimizerPlan(entry, values, groups, bool(rules))
    plan.dicts = [{entry.target_name(k): v for k, v in g.options.items()} for g in groups]
    if entry.bind and rules:   # the dialect's group semantics (MindSpore's group keys, per-group lr lists, FTRL)
        _nominal_bind(entry, groups, rules, values, errors, path)
    return plan


def _nominal_bind(entry: Entry, groups: list[Group], rules: list, values: Mapping[str, Any], errors: Collector,
                  path: str) -> None:
    """The row's bind hook over the nominal groups, each given a stand-in tensor of its own, as build runs it over
    the model's: what it refuses whatever the model (a misspelt MindSpore group key, per-step lr lists of other
    lengths, FTRL's per-group lr) is refused without one. A rule without selectors (MindSpore's order_params,
    which names the model's parameters) is the model's business and left out."""
    import torch

    kept = [g for g in groups if g.rule == "default" or any(k in rules[int(g.rule.rpartition("[")[2][:-1])]
                                                             for k in SELECTORS)]
    stand_ins = [Group([torch.zeros(1)], None, dict(g.options), rule=g.rule, multipliers=dict(g.multipliers),
                       extra=dict(g.extra), origin=dict(g.origin)) for g in kept]
    _torch_dicts(entry, stand_ins, values, True, errors, path)


def load_config(path_or_text: Any, format: str | None = None) -> Experiment:
    """Safe-load an experiment config (a YAML or JSON path, or YAML text) and validate it in its format; one that
    Hydra composes (`composes`: a `defaults:` list, or optreg's own form with `${...}` interpolations) is read as
    `optreg run` reads it, through Hydra's composition with no overrides."""
    from optreg.config.formats import check_forced

    check_forced(format)
    data, source = read_yaml(path_or_text)
    if composes(data, format):
        from optreg.integrations.hydra.support import load_with_overrides

        path = Path(source.name) if source.name != "<string>" and Path(source.name).is_file() else None
        return load_with_overrides(data, source, [], path, format)
    return validate_experiment(data, source, format)


def composes(data: Any, format: str | None = None) -> bool:
    """Whether a loaded file is read through Hydra's composition (OmegaConf) even without overrides: a file of
    optreg's own form that is a Hydra primary config (a `defaults:` list) or has a `${...}` interpolation (`T_max:
    ${train.steps}`, which OmegaConf resolves). A foreign format's reader reads its own (a NeMo file's `defaults:`
    names files of NeMo's tree, and its interpolations are resolved by the reader)."""
    if not isinstance(data, dict) or not (DEFAULTS in data or _interpolates(data)):
        return False
    from optreg.config.formats import OWN, detect

    try:
        return detect(data, format).name == OWN
    except ConfigError:   # two formats claim it: validation says so
        return False


def _interpolates(value: Any) -> bool:
    if isinstance(value, str):
        return "${" in value
    if isinstance(value, dict):
        return any(_interpolates(v) for v in value.values())
    if isinstance(value, list):
        return any(_interpolates(v) for v in value)
    return False


def plan_own(experiment: Experiment, params: Any) -> Plan:
    """Validate an experiment of optreg's own form against the model's parameters."""
    errors = Collector()
    name, own, rules, options = split_optimizer(experiment.optimizer)
    opt_plan = None
    if not not_a_list_of_rules(experiment.optimizer, errors):
        try:
            opt_plan = plan_optimizer(name, params, dialect=own, default=experiment.dialect, param_groups=rules,
                                      options=options, path="optimizer")
        except ConfigError as exc:
            errors.extend(exc)
    sched_plan = None
    notes: list[str] = []
    if opt_plan is not None:
        sched_plan = plan_around(opt_plan, experiment, errors, notes=notes)
    elif experiment.scheduler is not None:   # the scheduler's own problems beside the optimizer's, as validate's
        try:
            _scheduler_alone(experiment, experiment.run, True, experiment.epochs_unresolved)
        except ConfigError as exc:
            _unsaid(exc, errors)
    errors.raise_if_any()
    return Plan(opt_plan, sched_plan, [*opt_plan.notes, *notes])


def _check_accumulation(opt_plan: OptimizerPlan, experiment: Experiment, errors: Collector) -> None:
    """Gradient accumulation (`train.accumulation_steps` > 1) steps the optimizer without a closure after its
    micro-batches (optreg.train): an optimizer that needs one (`Entry.needs_closure`: LBFGS, pytorch_optimizer's
    AliG) cannot run it. A composite's parts are not checked again: it steps them without a closure whatever the
    accumulation, so it refuses every part that needs one at that part's name (composite._check_part), once, in
    validate as in build."""
    from optreg.core.entry import NEEDS_CLOSURE

    if experiment.run.accumulation == 1 or hasattr(opt_plan, "parts"):
        return
    if opt_plan.entry.needs_closure():
        errors.add("train.accumulation_steps", f"gradient accumulation steps the optimizer without a closure, and "
                                               f"{opt_plan.entry.qualname} {NEEDS_CLOSURE}; use accumulation_steps: 1")


def plan_around(opt_plan: OptimizerPlan, experiment: Experiment, errors: Collector, known_groups: bool = True,
                notes: list[str] | None = None, final_run: bool = True):
    """The scheduler's plan against the optimizer's (a model's, or the nominal one of `validate`), and every
    check that needs both, each once: the schedule's values in the groups (NeMo's min_lr below every lr, the
    first steps' values), an absolute schedule over groups a multiplier scales, a scheduler driving an lr the
    optimizer sets per step itself, a per-step lr list shorter than the run. Problems go to `errors`; the schedule
    linter's warnings (optreg.core.lint) to `notes`."""
    _check_dynamic_lr(opt_plan, experiment, errors)
    _check_accumulation(opt_plan, experiment, errors)
    left = accumulation_note(experiment.run)
    if notes is not None and left:
        notes.append(left)
    if experiment.scheduler is None:
        return None
    context = Context(len(opt_plan.groups), opt_plan.group_keys(), experiment.dialect, known_groups=known_groups,
                      unschedulable=opt_plan.unschedulable(), run_steps=experiment.run.steps,
                      steps_per_epoch=experiment.run.steps_per_epoch, final_run=final_run,
                      run_invalid=experiment.epochs_unresolved,
                      parts=opt_plan.part_keys() if hasattr(opt_plan, "part_keys") else ())
    try:
        sched_plan = plan_scheduler(experiment.scheduler, context, "scheduler")
    except ConfigError as exc:
        errors.extend(exc)
        return None
    key = sched_plan.key if sched_plan.schedule is not None else "lr"
    # problems at optreg's paths of the scheduler: at the keys a scheduler form writes (at_written), as its own are
    errors.extend(at_written(sched_plan, absolute_over_scaled(sched_plan, scaled_lr_keys(opt_plan.groups),
                                                              scaled_lr_keys(opt_plan.groups, "weight_decay"))))
    dynamic = opt_plan.dynamic_lrs()
    if key == "lr" and dynamic:
        conflict = dynamic_lr_conflict(sched_plan.name, key=_lr_key(opt_plan, dynamic[0][0]))
        errors.extend(at_written(sched_plan, [ErrorItem("scheduler", conflict)]))
        return sched_plan
    default = opt_plan.defaults.get(key) if not key.startswith("betas") else None
    bases, problem = opt_plan.base_values(key)
    if problem:   # at the key the scheduler drives where it names one, else at the scheduler
        errors.extend(at_written(sched_plan, [ErrorItem("scheduler" if key == "lr" else "scheduler.key", problem)]))
    else:
        errors.extend(check_schedule(sched_plan, bases, default if isinstance(default, (int, float)) and
                                     not isinstance(default, bool) else None, "scheduler"))
    for other, schedule in getattr(sched_plan.schedule, "also_drives", {}).items():   # keys it drives beside
        values, problem = opt_plan.base_values(other)
        errors.extend(at_written(sched_plan, [ErrorItem("scheduler", problem)]) if problem else check_schedule(
            SchedulerPlan(None, {}, key=other, schedule=schedule, written=sched_plan.written), values, None,
            "scheduler"))
    errors.extend(at_written(sched_plan, overrun_errors(sched_plan, experiment.run)))
    if notes is not None and not errors:
        notes.extend(sched_plan.planning_notes())
        notes.extend(lint_schedule(sched_plan, experiment.run, bases, _optimizer_lr(experiment),
                                   lr_sources=_lr_sources(opt_plan)))
        notes.extend(rule_lrs_replaced(sched_plan, opt_plan.groups, _lr_name(opt_plan)))
    return sched_plan


def _optimizer_lr(experiment: Experiment) -> tuple[str, float] | None:
    """(its key, the value) of an lr the optimizer section gives itself, a number."""
    for key in ("lr", "learning_rate"):
        value = experiment.optimizer.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return f"optimizer.{key}", float(value)
    return None


def _lr_name(opt_plan: OptimizerPlan) -> str:
    """The optimizer's own name of its lr option (MindSpore's learning_rate), `lr` when it has none."""
    return scaled_options(option_names(opt_plan.entry))["lr"] or "lr"


def _lr_key(opt_plan: OptimizerPlan, index: int) -> str:
    """The config's key that gives the lr of the plan's group `index`: its rule's own, else the optimizer's."""
    lr_name = _lr_name(opt_plan)
    group = opt_plan.groups[index] if index < len(opt_plan.groups) else None
    own = group is not None and group.rule != "default" and lr_name in group.options and "lr" not in group.origin
    return join_path(group.rule if own else "optimizer", lr_name)


def _lr_sources(opt_plan: OptimizerPlan) -> list[str | None]:
    """Per group of the plan, what gives its lr, as the schedule linter's advice names it: the multiplier that scaled
    it (`the lr that optimizer.param_groups[0].lr_mult gives group 0`), else its rule's own lr (`_lr_key`); None for
    the optimizer's."""
    optimizer = join_path("optimizer", _lr_name(opt_plan))
    out: list[str | None] = []
    for i, group in enumerate(opt_plan.groups):
        scaled, key = group.origin.get("lr"), _lr_key(opt_plan, i)
        out.append(f"the lr that {scaled} gives group {i}" if scaled else None if key == optimizer else key)
    return out


def _check_dynamic_lr(opt_plan: OptimizerPlan, experiment: Experiment, errors: Collector) -> None:
    """A per-step lr list shorter than the run length the user gave: the step past its end would fail."""
    run = experiment.run
    steps = run.optimizer_steps
    if steps is None:
        return
    per = f"{counted(run.steps, 'step')}: {run.source}" + (
        f"; {counted(steps, 'optimizer step')} of {run.accumulation} micro-batches" if run.accumulation > 1 else "")
    for i, value in opt_plan.dynamic_lrs():
        if isinstance(value, (list, tuple)) and len(value) < steps:
            where = _lr_key(opt_plan, i)
            if any(e.path == where for e in errors.items):
                continue
            errors.add(where, f"a per-step list of {counted(len(value), 'value')} is shorter than the run ({per}); "
                              f"give one value per {'optimizer ' if run.accumulation > 1 else ''}step")

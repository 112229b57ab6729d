"""The schedule linter: a planned schedule read against the run it is planned for (the same in validate, plot and
build).

Errors, where training would break:
- a warmup longer than the schedule it belongs to (HF's num_warmup_steps > num_training_steps, NeMo's warmup_steps
  > max_steps): checked whatever the run length;
- a schedule that fails when stepped past its length (its row's `raises_past_length`: torch's OneCycleLR) stepped
  further by the run (`overrun_errors`).
Warnings, where it is probably a mistake:
- a warmup longer than the schedule where the schedule allows it (DeepSpeed's warmup_num_steps > total_num_steps,
  which DeepSpeed warns of too);
- a sequence's first milestone at 0 (torch's SequentialLR, optreg's `sequential`): its first stage never runs;
and, only when the run length is known (given by the user or the format, never `optreg run`'s default):
- a schedule whose horizon H (its length after the warmup W) is < 0.9 × (run − W) or > run − W: it ends before
  the run does (CosineAnnealingLR rises again after T_max) or never finishes (an HF schedule: any difference);
  likewise a window's end that a schedule's entry writes (MMEngine's `end`) past the run's end, and a sequence's
  milestone at or past the run's end (the stage it starts never runs);
- lr 0 at the first step (the first update does nothing);
- a minimum lr at or above the group's peak (the schedule never decays);
- a schedule that sets the lr itself (absolute values) while the optimizer section also sets one that the schedule
  neither starts nor peaks at (a warmup from 0 up to it agrees), or a stage that does so in a `sequential` whose
  other stages scale that lr (at the stage's path);
- whatever the run length, such a schedule over a param_groups rule that gives its own lr, which the schedule
  replaces at every step (`rule_lrs_replaced`; a multiplier of the lr, lr_mult, is refused instead).
Each message names both numbers and the keys to change.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any, Mapping, Sequence

from optreg.errors import Collector, ConfigError, ErrorItem, counted, join_path

HORIZON_SLACK = 0.9                        # a horizon under 0.9 × the run (after the warmup) ends too early
MIN_KEYS = ("eta_min", "min_lr", "lr_end", "end_lr", "end_learning_rate")   # the floor a decaying schedule ends at
FLOOR_KEYS = ("eta_min", "min_lr")   # of those, the ones no rising schedule takes (a stage's, in a sequence)
WARMUP_KEYS = ("num_warmup_steps", "warmup_steps", "warmup_t")
#: a warmup a schedule lets exceed its total, with a warning (DeepSpeed's WarmupDecayLR and WarmupCosineLR: the decay
#: divides by max(1, T - W), so the lr falls to its floor when the warmup ends)
TOLERATED_WARMUP_KEYS = ("warmup_num_steps",)
EPOCH = "epoch"   # the unit of a length advised for a schedule that steps once per epoch


def in_unit(number: int, unit: str = "") -> str:
    """A length of `number` `unit`s agreeing with it (`1 epoch`, `3 epochs`); the bare number (steps) without one."""
    return counted(number, unit) if unit else str(number)


def set_length(key: str, target: int, unit: str = "") -> str:
    """The advice that sets the length key `key` to `target` steps (or `unit`s): one wording, which a translated
    format's notes find again (`SET_LENGTH`) to say the number in its key's own unit (`translate.source_note`)."""
    return f"set {key} to {in_unit(target, unit)}"


#: `set_length`'s advice in steps, in a note's text: the key and the number
SET_LENGTH = re.compile(rf"\bset (?P<key>\S+) to (?P<target>\d+)\b(?! {EPOCH})")


def _long_warmups(plan: Any, keys: Sequence[str]) -> list[tuple[str, int, str, int]]:
    """(warmup key, its steps, length key, its steps) of each of the schedule's own warmups (`keys`) longer than its
    total."""
    entry = plan.entry
    if entry is None or not entry.length:
        return []
    total = plan.values.get(entry.length)
    out = []
    for key in keys:
        warmup = plan.values.get(key)
        if isinstance(total, int) and isinstance(warmup, float) and 0 <= warmup < 1:
            warmup = math.ceil(round(warmup * total, 9))   # a fraction of the total (HF)
        if isinstance(total, int) and isinstance(warmup, int) and not isinstance(warmup, bool) and warmup > total:
            out.append((key, warmup, entry.length, total))
    return out


def _too_long(warmup: int, length: str, total: int) -> str:
    return f"a warmup of {warmup} steps is longer than the schedule ({length} {total})"


def own_warmup_errors(plan: Any, path: str, errors: Collector) -> None:
    """A schedule's own warmup longer than its total: the decay that follows it has no steps (ConfigError)."""
    for key, warmup, length, total in _long_warmups(plan, WARMUP_KEYS):   # paths: a reader's file says its keys
        key, length = join_path(path, key), join_path(path, length)
        errors.add(key, f"{_too_long(warmup, length, total)}: lower {key} or raise {length}")


def lint_schedule(plan: Any, run: Any, bases: Sequence[float] | None, optimizer_lr: tuple[str, float] | None,
                  path: str = "scheduler", lr_sources: Sequence[str | None] = ()) -> list[str]:
    """The warnings for `plan` in a run of `run.steps` steps; `bases` the groups' values of the key it drives (None:
    unknown), `optimizer_lr` (the key, the value) of an lr the optimizer section gives itself, `lr_sources` per
    group what gives its lr where it is not the optimizer's (`optimizer.param_groups[0].lr`; None, or no entry: the
    optimizer's lr). A spec that a scheduler form read (Cerebras' `{LinearLR: {...}}`, its legacy list) is warned of
    at the paths its errors are at (`SchedulerPlan.written`)."""
    from optreg.config.translate import source_note

    notes = _lint(plan, run, bases, optimizer_lr, path, lr_sources)
    written = getattr(plan, "written", None)
    return [source_note(n, written) for n in notes] if written else notes


def _lint(plan: Any, run: Any, bases: Sequence[float] | None, optimizer_lr: tuple[str, float] | None,
          path: str, lr_sources: Sequence[str | None]) -> list[str]:
    out = [f"{join_path(path, key)}: {_too_long(warmup, length, total)}: the lr rises for {warmup} steps, then "
           f"falls to its floor at once; lower {key} or raise {length}"
           for key, warmup, length, total in _long_warmups(plan, TOLERATED_WARMUP_KEYS)]
    loop = getattr(plan, "loop", None)
    warmup = loop.warmup_steps if loop is not None else 0
    _milestones(plan, run, warmup, loop, path, out)
    if run is None or run.steps is None:
        return out
    _horizon(plan, run, warmup, loop, path, out)
    _window_ends(plan, run, path, out)
    schedule = _closed_form(plan)
    key = plan.key if plan.schedule is not None else "lr"
    if schedule is None or key != "lr":
        return out
    first_step = getattr(run, "accumulation", 1) - 1   # the optimizer's first step is after the first micro-batches
    # absolute: warmups from 0 are usual; no bases: the groups' values are unknown (a per-step lr table, THOR's)
    for i, base in enumerate(bases if bases is not None and schedule.values == "factor" else []):
        try:
            first = schedule.apply(first_step, base)
        except (ArithmeticError, ValueError, TypeError, AttributeError, KeyError):
            return out
        if first == 0 and base > 0 and not schedule.zero_start_by_design:
            out.append(f"{path}: the lr at step {first_step} is 0 (group {i}'s lr {base:g}): the first optimizer "
                       f"step updates nothing; start above 0 ({_start_keys(plan, path)})")
            break
    _floors(plan, schedule, bases, plan.length or run.steps, path, out, lr_sources)
    for i, (stage, child) in enumerate(_stages(plan, schedule)):   # a decay stage's floor against its own peak
        if child.length is not None:   # (a stage's end value, end_learning_rate, is a warmup's top as often)
            _floors(child, stage, bases, child.length, join_path(join_path(path, "schedulers"), i), out, lr_sources,
                    FLOOR_KEYS)
    if optimizer_lr is not None:
        _overrides(plan, schedule, optimizer_lr, path, out, plan.length or run.steps)
    return out


def _overrides(plan: Any, schedule: Any, optimizer_lr: tuple[str, float], path: str, out: list[str],
               length: int) -> None:
    """A schedule that sets the lr itself (absolute values) neither starting nor peaking at the optimizer section's
    lr (a warmup from 0 up to it, DeepSpeed's usual `warmup_max_lr` = `lr`, agrees with it): the whole schedule
    (drop that lr, or start or peak at it), or each absolute stage of a `sequential` whose other stages are factors
    of that lr (a jump where the stage begins, at the stage's path: the factor stages need the lr)."""
    from optreg.schedules.engine import ABSOLUTE, MIXED

    given, lr = optimizer_lr
    if schedule.values == ABSOLUTE:
        first = _value(schedule, 0, lr)
        if first is None or same_lr(first, lr):
            return
        if plan.length is None:   # no length of its own: it goes on past the run (a warmup the run cuts short)
            from optreg.config.translate import NOMINAL_RUN

            length = max(length, NOMINAL_RUN)
        peak = _peak(schedule, lr, length)
        if peak is not None and not same_lr(peak, lr):
            at = f"{first:g} at step 0" + ("" if same_lr(peak, first) else f", {peak:g} at its peak")
            out.append(f"{path}: {plan.name} sets the lr itself ({at}), which overrides {given} {lr:g}; drop {given} "
                       f"or make the schedule start or peak at it")
        return
    if schedule.values != MIXED or plan.entry is not None:   # optreg's `sequential`, whose stages are its children
        return
    for i, (stage, child) in enumerate(_stages(plan, schedule)):
        if stage.values != ABSOLUTE:
            continue
        start = schedule.milestones[i - 1] if i else 0
        first = _value(schedule, start, lr)
        before = _value(schedule, start - 1, lr) if start else None
        if first is None or same_lr(first, lr):
            continue
        jump = f": the lr goes from {before:g} at step {start - 1} to {first:g}" if before is not None else ""
        out.append(f"{join_path(join_path(path, 'schedulers'), i)}: {child.name} sets the lr itself ({first:g} at "
                   f"step {start}), which overrides {given} {lr:g} that the other stages scale{jump}; make it start "
                   f"at {lr:g} or use a factor schedule (torch, OneFlow, HF, timm)")


def _floors(plan: Any, schedule: Any, bases: Sequence[float] | None, length: int, path: str, out: list[str],
            lr_sources: Sequence[str | None], names: Sequence[str] = MIN_KEYS) -> None:
    """A minimum lr (`names`) at or above the schedule's peak in a group: the schedule never decays (it stays, or
    rises to the floor from the group's lr below it); the advice names what gives that group's lr (`lr_sources`)."""
    for name in names:
        floor = (plan.values or {}).get(name)
        if isinstance(floor, bool) or not isinstance(floor, (int, float)) or not bases:
            continue
        for i, base in enumerate(bases):
            peak = _peak(schedule, base, length)
            if peak is None or floor < peak:
                continue
            where = f"the peak lr {peak:g}" if not floor > base else f"the lr {base:g}, which it rises to,"
            source = (lr_sources[i] if i < len(lr_sources) else None) or "the optimizer's lr"
            out.append(f"{join_path(path, name)}: {name} {floor:g} is at or above {where} of group {i}: the schedule "
                       f"never decays; lower {join_path(path, name)} below {source}")
            break


def _stages(plan: Any, schedule: Any) -> list[tuple[Any, Any]]:
    """(stage, its plan) of a schedule that runs its children one after another (optreg's `sequential`, torch's
    SequentialLR), else none."""
    from optreg.schedules.engine import Sequential

    schedule = getattr(schedule, "inner", None) or schedule   # a Delegate: SequentialLR's Sequential
    if not isinstance(schedule, Sequential) or len(plan.children) != len(schedule.stages):
        return []
    return list(zip(schedule.stages, plan.children))


def same_lr(value: float, lr: float) -> bool:
    """Whether a schedule's value is the lr `lr`: within a few roundings of float32, in which Cerebras' schedules
    compute (its LinearLR from 3e-4 gives 3.0000001e-4 towards 1e-5, 3.0000007e-4 towards 1e-3: two ulps)."""
    return math.isclose(value, lr, rel_tol=2.0 ** -20)


def rule_lrs_replaced(plan: Any, groups: Sequence[Any], lr_name: str = "lr") -> list[str]:
    """The warning for an lr schedule with absolute values (Cerebras', MindSpore's, OneCycleLR's max_lr) over
    param_groups rules that give their own lr (`lr_name`, the optimizer's name for it): the schedule sets every
    group's lr, so the rules' are never used; one warning, at the first such rule, naming the others (build
    refuses the multipliers that would be undone, `build.absolute_over_scaled`)."""
    schedule = _absolute_lr(plan)
    if schedule is None:
        return []
    ruled = []
    for group in groups:
        value = group.options.get(lr_name)
        if group.rule == "default" or "lr" in group.origin or isinstance(value, bool) or \
                not isinstance(value, (int, float)) or any(rule == group.rule for rule, _ in ruled):
            continue   # a rule once, though no_weight_decay splits its parameters into two groups
        ruled.append((group.rule, float(value)))
    return _lrs_replaced(plan, schedule, ruled, "rule", lr_name)


def group_lrs_replaced(plan: Any, param_groups: Sequence[Mapping[str, Any]]) -> list[str]:
    """`rule_lrs_replaced` for `configure_lr_scheduler` over an optimizer's groups of different lrs: an absolute lr
    schedule sets one value for every group, which replaces the lr of each group that differs from it (from the
    first group's where the value cannot be computed here)."""
    schedule = _absolute_lr(plan)
    lrs = [g.get("lr") for g in param_groups]
    if schedule is None or len(set(lrs)) < 2 or \
            not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in lrs):
        return []
    first = _value(schedule, 0, float(lrs[0]))
    kept = float(lrs[0]) if first is None else first
    return _lrs_replaced(plan, schedule, [(f"param_groups[{i}]", float(v)) for i, v in enumerate(lrs)
                                          if not same_lr(float(v), kept)], "group")


def _absolute_lr(plan: Any) -> Any:
    """The closed form of an lr schedule whose values are absolute (Cerebras', MindSpore's, OneCycleLR's max_lr),
    or None."""
    from optreg.schedules.engine import ABSOLUTE

    schedule = _closed_form(plan, lr_alone=True)   # OneCycleLR's lr, though it cycles the momentum too
    if schedule is None or (plan.key if plan.schedule is not None else "lr") != "lr" or schedule.values != ABSOLUTE:
        return None
    return schedule


def _lrs_replaced(plan: Any, schedule: Any, own: Sequence[tuple[str, float]], what: str,
                  lr_name: str = "lr") -> list[str]:
    """One warning for the lrs of their own (the path of their rule or group, the lr) that an absolute schedule
    replaces: at the first's lr (`lr_name`), naming the others (`what`: a rule, a group)."""
    if not own:
        return []
    (first_of, value), more = own[0], [w for w, _ in own[1:]]
    where = join_path(first_of, lr_name)
    first = _value(schedule, 0, value)   # a number given as the schedule names its value already (its label)
    at = f" ({first:g} at step 0)" if first is not None and getattr(plan, "label", None) is None else ""
    also = f", and those of {len(more)} more ({', '.join(more[:3])}{', ...' if len(more) > 3 else ''})" if more else ""
    return [f"{where}: {plan.name} sets every group's lr itself{at}, which replaces this {what}'s lr "
            f"{value:g}{also} at every step; drop it, or use a schedule whose values are factors of each group's lr "
            f"(torch, OneFlow, HF, timm)"]


def _value(schedule: Any, step: int, base: float) -> float | None:
    """The schedule's value at `step` for a group whose lr is `base`; None when it cannot be computed here."""
    try:
        return schedule.apply(step, base)
    except (ArithmeticError, ValueError, TypeError, AttributeError, KeyError):
        return None


def _horizon(plan: Any, run: Any, warmup: int, loop: Any, path: str, out: list[str]) -> None:
    try:
        length = plan.length
    except (ArithmeticError, ValueError):
        return
    if length is None or (loop is not None and loop.filled):
        return
    horizon, room = length - warmup, run.steps - warmup
    if room < 1:   # a warmup of the whole run: an error of the plan (loop._read_warmup), no length to suggest
        return
    if _side_by_side(plan) and any(c.length is None for c in plan.children):
        return   # a stage that never ends (ExponentialLR, StepLR) keeps the chained going
    entry = plan.entry
    owner = _length_owner(plan, path)
    if owner is None:   # a schedule whose length no option of its sets
        return
    sets, option, where = owner
    single = sets is not None
    key = join_path(where, option) if single else join_path(path, "schedulers")
    what = f"{option} {sets.values.get(option)} spans" if single else "the stages span"
    per_epoch = run.steps_per_epoch if loop is not None and loop.by_epoch and run.steps_per_epoch else 1
    target = math.ceil(room / per_epoch)
    unit = EPOCH if per_epoch > 1 else ""
    change = set_length(key, target, unit) if single else f"make the longest of {key} span {in_unit(target, unit)}" \
        if _side_by_side(plan) else f"make the lengths of {key} add up to {in_unit(target, unit)}"
    after = f" after the {warmup}-step warmup" if warmup else ""
    hf = entry is not None and entry.dialect == "hf"
    if hf and horizon != room:
        out.append(f"{key}: {what} {counted(horizon, 'step')}, not the {counted(room, 'step')} of the run{after} "
                   f"({run.source}); {change}")
    elif not hf and (horizon < HORIZON_SLACK * room or horizon > room):
        out.append(_horizon_note(key, what, horizon, room, after, run.source, change))


def _horizon_note(key: str, what: str, horizon: int, room: int, after: str, source: str, change: str) -> str:
    """The warning of a horizon of `horizon` steps that ends before the run's `room` or after it."""
    early = horizon < room
    return (f"{key}: {what} {counted(horizon, 'step')}, {'under 0.9 ×' if early else 'more than'} the "
            f"{counted(room, 'step')} of the run{after} ({source}): the schedule "
            f"{'ends early' if early else 'never finishes'}; {change}")


def _window_ends(plan: Any, run: Any, path: str, out: list[str]) -> None:
    """Each window end a schedule's entries write (MMEngine's `end`: `WrittenEnd`) past the run's last step, in
    _horizon's words: the window never finishes. An end left out (the train loop's, or MMEngine's INF) is none;
    ending early is no mistake (a warmup's window)."""
    for key, end, per in getattr(plan.schedule, "written_ends", ()):
        target = math.ceil(run.steps / per)   # the last whole unit the run reaches
        if end > target:
            unit = EPOCH if per > 1 else ""
            where = join_path(path, key)
            out.append(_horizon_note(where, f"end {in_unit(end, unit)} spans", end * per, run.steps, "", run.source,
                                     set_length(where, target, unit)))


def overrun_errors(plan: Any, run: Any, path: str = "scheduler") -> list[ErrorItem]:
    """The errors of each schedule whose row raises when stepped past its length (`Entry.raises_past_length`:
    torch's OneCycleLR) that the run steps further: the run's last scheduler.step() would fail. Counted as the
    scheduler is stepped: once per step (a micro-batch under accumulation) after the warmup, once per epoch when
    `by_epoch`, a stage of a sequence within its window only, a stage side by side (chained) at every step."""
    if run is None or run.steps is None:
        return []
    loop = getattr(plan, "loop", None)
    out: list[ErrorItem] = []
    _overruns(plan, run.steps - (loop.warmup_steps if loop is not None else 0), run, path, out)
    return out


def _overruns(plan: Any, last: int, run: Any, path: str, out: list[ErrorItem]) -> None:
    """`overrun_errors` of `plan` (at `path`), whose last step evaluated in the run is `last` (its own count)."""
    loop = getattr(plan, "loop", None)
    per_epoch = run.steps_per_epoch if loop is not None and loop.epoch_stepped and run.steps_per_epoch else 1
    last //= per_epoch
    entry = plan.entry
    if entry is not None and entry.raises_past_length and not (loop is not None and loop.filled):
        total = _own_length(plan)
        if total is not None and last > total:
            option = entry.length
            key = join_path(path, option) if plan.values.get(option) is not None else path
            unit = EPOCH if per_epoch > 1 else ""
            length, stepped = (counted(total, unit), counted(last, unit)) if unit else \
                (counted(total, "step"), counted(last, "time"))
            out.append(ErrorItem(key, f"{entry.qualname} fails when stepped past its length ({length}), and the run "
                                      f"({run.source}) steps it {stepped}; {set_length(key, last, unit)}"))
    for child, child_path, child_last in _stage_steps(plan, last, path):
        _overruns(child, child_last, run, child_path, out)


def _own_length(plan: Any) -> int | None:
    """The length of the schedule a plan's row gives (OneCycleLR's total_steps, or epochs × steps_per_epoch),
    without the loop around it (a warmup)."""
    try:
        return dataclasses.replace(plan, schedule=None, children=[]).closed_form("", lr_alone=True).length
    except (ConfigError, ArithmeticError, TypeError, ValueError):
        return None


def _stage_steps(plan: Any, last: int, path: str) -> list[tuple[Any, str, int]]:
    """(stage, its path, the last step the run evaluates it at) for each stage of `plan` that the run reaches:
    side by side, every stage at `last`; one after another, each on its window of the milestones, on its local step
    (or the global one: `restart: global`), as `Sequential.locate` evaluates it."""
    stages = [(c, join_path(join_path(path, "schedulers"), i)) for i, c in enumerate(plan.children)]
    if not stages or _side_by_side(plan):
        return [(c, p, last) for c, p in stages]
    sequence = _sequence(plan)
    if sequence is None:
        return []
    out = []
    for k, (child, child_path) in enumerate(stages):
        start = sequence.milestones[k - 1] if k else 0
        end = sequence.milestones[k] if k < len(sequence.milestones) else None
        if last >= start:
            reached = last if end is None else min(last, end - 1)
            out.append((child, child_path, sequence.locate(reached)[1]))
    return out


def _sequence(plan: Any) -> Any:
    """The engine's Sequential that runs the stages of `plan` one after another (through a warmup, epochs, a
    dialect's class around it), with a milestone between each two; None for any other plan."""
    from optreg.schedules.engine import Sequential

    if not plan.children or _side_by_side(plan):
        return None
    sequence = _closed_form(plan, lr_alone=True)
    while sequence is not None and not isinstance(sequence, Sequential):
        sequence = getattr(sequence, "inner", None) or getattr(sequence, "schedule", None)
    return sequence if sequence is not None and len(sequence.milestones) == len(plan.children) - 1 else None


def _milestones(plan: Any, run: Any, warmup: int, loop: Any, path: str, out: list[str]) -> None:
    """Each milestone a sequence writes (torch's SequentialLR, optreg's `sequential`: `milestones`) that leaves a
    stage no step of the run: the first at 0 (the first stage never runs, whatever the run), one at or past the
    run's end (the stage it starts never runs; with a run length only)."""
    written = (plan.values or {}).get("milestones")
    sequence = _sequence(plan) if isinstance(written, (list, tuple)) else None
    if sequence is None or len(written) != len(sequence.milestones):
        return
    steps = run.steps if run is not None else None
    # a sequence counted in epochs (by_epoch) is said in epochs, as its file writes it; compared in steps
    per_epoch = run.steps_per_epoch if steps and loop is not None and loop.by_epoch and run.steps_per_epoch else 1
    unit = EPOCH if per_epoch > 1 else "step"
    room = steps - warmup if steps is not None else None   # the sequence's steps in the run
    after = f" after the {warmup}-step warmup" if warmup else ""
    stages = join_path(path, "schedulers")
    for k, start in enumerate(sequence.milestones):
        key = join_path(join_path(path, "milestones"), k)
        at = start * per_epoch if loop is not None and loop.epoch_stepped else start   # in steps
        if k == 0 and start <= 0:
            out.append(f"{key}: milestone {start} starts {stages}[1] at the first {unit}: {stages}[0] "
                       f"({plan.children[0].name}) never runs; set the milestone to that stage's length, or drop it")
        elif room is not None and 1 <= room <= at:   # room < 1: a warmup of the whole run, the plan's error
            end = math.ceil(room / per_epoch)
            out.append(f"{key}: milestone {at // per_epoch} is at or past the end of the {counted(end, unit)} of the "
                       f"run{after} ({run.source}): {stages}[{k + 1}] ({plan.children[k + 1].name}) never runs; "
                       f"lower the milestone below {end}, or drop the stage")


def _side_by_side(plan: Any) -> bool:
    """Whether the stages of `plan` run side by side (optreg's `chained`, torch's ChainedScheduler, a dialect's
    chained class: its length is its longest stage's), not one after another."""
    from optreg.schedules.engine import Chained, Delegate
    from optreg.schedules.epochs import EpochStepped

    schedule = plan.schedule
    while isinstance(schedule, (Delegate, EpochStepped)):   # a dialect's class over the engine's combinator, or
        schedule = schedule.inner                            # the combinator counted in epochs (by_epoch)
    return isinstance(schedule, Chained) or plan.schedule is None and "milestones" not in plan.values


def _length_owner(plan: Any, path: str) -> tuple[Any, str | None, str] | None:
    """(the plan whose option sets the length, that option, its path): the option its row declares, or its closed
    form's `length_option` (MindFormers' total_steps, which the row leaves undeclared), else that of the one
    scheduler it wraps (`scheduler:`, OneFlow's WarmupLR); (None, None, path) for stages whose lengths add up
    (`schedulers:`); None when no option sets it (NeMo's NoamAnnealing decays for ever)."""
    from optreg.core.build import NESTED
    from optreg.core.loop import length_option

    option = length_option(plan.entry) if plan.entry is not None else None
    if option:
        return plan, option, path
    if len(plan.children) == 1 and plan.entry is not None and isinstance(plan.values.get(NESTED[1]), Mapping):
        return _length_owner(plan.children[0], join_path(path, NESTED[1]))
    return (None, None, path) if plan.children else None


def _closed_form(plan: Any, lr_alone: bool = False) -> Any:
    """The plan's closed form (`SchedulerPlan.closed_form`; `lr_alone`: its lr's, of a class that cycles the momentum
    too), or None where it has none."""
    try:
        return plan.closed_form("scheduler", lr_alone=lr_alone)
    except ConfigError:
        return None


def _peak(schedule: Any, base: float, length: int) -> float | None:
    """The largest value over the schedule's steps: sampled (at most 4,097 of them), then sampled again within a
    stride of the largest sample, finer each time, down to every step there (a warmup's peak between two samples);
    at most 4,097 values a round, so a run of 10^12 steps takes four rounds (one pass over every step within the
    first stride took minutes)."""
    low, high = 0, length
    try:
        while True:
            stride = max(1, (high - low) // 4096)
            top = max(range(low, high + 1, stride), key=lambda t: schedule.apply(t, base))
            if stride == 1:
                return schedule.apply(top, base)
            low, high = max(0, top - stride + 1), min(length, top + stride - 1)
    except (ArithmeticError, ValueError, TypeError, AttributeError, KeyError):
        return None


def _start_keys(plan: Any, path: str) -> str:
    loop = getattr(plan, "loop", None)
    if loop is not None and loop.warmup is not None:
        return f"{join_path(path, 'warmup')}.start_factor or .start_value"
    names = [k for k in ("start_factor", "factor", "initial_learning_rate", "base_lr", "div_factor", *WARMUP_KEYS)
             if k in (plan.values or {})]
    return ", ".join(join_path(path, k) for k in names) or "the schedule's first value"


__all__ = ["lint_schedule", "overrun_errors", "set_length", "SET_LENGTH", "own_warmup_errors", "rule_lrs_replaced",
           "group_lrs_replaced", "same_lr", "HORIZON_SLACK"]

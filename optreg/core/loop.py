"""The training loop's options of a scheduler spec, planned: `by_epoch`, `convert_to_iter_based` and `warmup`,
and the schedule's length from the run (a length the spec leaves out).

Every spec may say `by_epoch: true` (counts in epochs: value(t) = f(⌊t/E⌋), optreg.schedules.epochs.EpochStepped)
and, with it, `convert_to_iter_based: true` (its step counts multiplied by E, MMEngine's `build_iter_from_epoch`).
The top-level spec may say `warmup:` (optreg.schedules.warmup). A length the top-level spec leaves out (T_max,
total_iters, num_training_steps: its entry's `length`; MindFormers' total_steps: its closed form's `length_option`)
becomes run length − W when the run length is known and the option has no default of its own, or a warmup precedes
it (in epochs, rounded up, for by_epoch alone). A length written null (a Hydra group file's) is one left out.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from optreg.core import models
from optreg.core.names import normalise, synonyms
from optreg.errors import Collector, ConfigError, counted, join_path

LOOP_KEYS = ("by_epoch", "convert_to_iter_based", "warmup")
#: the default `optreg show` gives a length left to the run (`required_length`; describe_loop's note details it)
FROM_RUN = "the run's length"
NO_RUN = "train.steps, train.epochs × steps_per_epoch, or build(total_steps=)"

#: where a run's steps per epoch come from, as the errors that need them say it
GIVE_STEPS_PER_EPOCH = ("train.steps_per_epoch (in the file, or the override train.steps_per_epoch=N of optreg run / "
                        "plot / groups) or build(..., steps_per_epoch=)")


@dataclass
class Loop:
    """A spec's loop options, validated: by_epoch, convert_to_iter_based, the warmup spec and its length W, and the
    length option filled from the run (left as filled: not rescaled)."""

    by_epoch: bool = False
    convert: bool = False
    warmup: Any = None            # optreg.schedules.warmup.WarmupSpec
    warmup_steps: int = 0
    filled: str | None = None
    unfilled: str | None = None   # the length option left to a run that gives none (`no_run_length` says so)

    @property
    def epoch_stepped(self) -> bool:
        return self.by_epoch and not self.convert


def pop_loop(spec: dict[str, Any], context: Any, path: str, errors: Collector, name: str) -> Loop:
    """Take the loop options out of `spec` (the spec of the schedule `name`); problems go to `errors` at their
    paths."""
    loop = Loop()
    for key, attr in (("by_epoch", "by_epoch"), ("convert_to_iter_based", "convert")):
        if key in spec:
            value = spec.pop(key)
            if (wrong := models.bool_message(value)) is None:
                setattr(loop, attr, value)
            else:
                errors.add(join_path(path, key), wrong)
    if loop.convert and not loop.by_epoch:
        errors.add(join_path(path, "convert_to_iter_based"), "convert_to_iter_based converts a schedule written in "
                                                             "epochs; it needs by_epoch: true")
    if loop.by_epoch and context.steps_per_epoch is None and context.final_run and not on_metric(name):
        errors.add(join_path(path, "by_epoch"), f"a schedule counted in epochs needs the steps per epoch: "
                                                f"{GIVE_STEPS_PER_EPOCH}")
    if spec.get("warmup", None) is not None:   # `warmup: null` (a Hydra group file's default): no warmup
        _read_warmup(spec.pop("warmup"), loop, context, join_path(path, "warmup"), errors, name)
    spec.pop("warmup", None)
    return loop


def _read_warmup(raw: Any, loop: Loop, context: Any, path: str, errors: Collector, name: str) -> None:
    """The warmup spec and its length W against the run: a warmup of the whole run or more (W >= the run length,
    whether or not the schedule's length is written) is an error, the only one about the length."""
    from optreg.schedules.warmup import WarmupSpec

    if not context.top:
        errors.add(path, "warmup applies to the whole schedule: give it once, in the top-level scheduler section")
        return
    try:
        loop.warmup = WarmupSpec.model_validate(raw)
    except ValidationError as exc:
        for item in models.pydantic_errors(exc, WarmupSpec):
            errors.add(join_path(path, item.path), item.message, item.suggestion)
        return
    steps = loop.warmup.length(context.run_steps)
    if steps is None:
        if context.final_run:
            errors.add(join_path(path, "ratio"), f"a warmup ratio needs the run length: {NO_RUN}")
        return
    loop.warmup_steps = steps
    if context.run_steps is not None and steps >= context.run_steps:
        errors.add(path, f"a warmup of {counted(steps, 'step')} leaves none of the {context.run_steps}-step run to "
                         f"{name}; shorten the warmup")
    if loop.warmup.type == "exponential" and (loop.warmup.start_value == 0 or loop.warmup.start_factor == 0):
        key = "start_value" if loop.warmup.start_value == 0 else "start_factor"
        errors.add(join_path(path, key), "an exponential warmup multiplies its start: it must be > 0")


def on_metric(name: str) -> bool:
    """Whether the scheduler `name` (an entry's name) steps on a metric, not on the step count (ReduceLROnPlateau)."""
    return "reducelronplateau" in normalise(name)   # torch's, and HF's reduce_lr_on_plateau


def loop_refusal(entry: Any, key: str) -> str | None:
    """Why `entry` takes no loop option `key` (warmup, by_epoch), which run a schedule as its closed form: it steps
    on a metric (`on_metric`), or it is a torch scheduler class its dialect has no closed form of (torch's SWALR,
    recursive); None for a schedule that takes them."""
    from torch.optim.lr_scheduler import LRScheduler

    from optreg.core.registry import REGISTRY

    if on_metric(entry.name):
        return f"{entry.qualname} steps on a metric, not on the step count: it takes no {key}"
    target = entry.resolve()
    if isinstance(target, type) and issubclass(target, LRScheduler) and \
            REGISTRY.dialect(entry.dialect).closed_form(entry.name) is None:
        return f"{entry.qualname} has no closed form (it runs as torch's class, alone): it takes no {key}"
    return None


def warmup_refusal(entry: Any) -> str | None:
    """Why `entry` takes no `warmup:` (it steps on a metric, or has a warmup of its own), else None."""
    if (refusal := loop_refusal(entry, "warmup")) is not None:
        return refusal
    own = [o.name for o in models.options(entry) if "warmup" in o.name.lower()]
    if own:
        return f"{entry.qualname} has a warmup of its own ({', '.join(own)}); set it there and drop warmup:"
    return None


def check_entry(entry: Any, loop: Loop, path: str, errors: Collector) -> None:
    """Refuse a warmup before a schedule that has a warmup of its own, and a warmup or by_epoch (with or without
    convert_to_iter_based) on one that `loop_refusal` refuses them: a scheduler of a metric (its patience and
    cooldown count the metric's steps, whatever the loop makes of them), one without a closed form."""
    refusal = warmup_refusal(entry) if loop.warmup is not None else None
    if refusal:
        errors.add(join_path(path, "warmup"), refusal)
    if loop.by_epoch and (refusal := loop_refusal(entry, "by_epoch")) is not None:
        errors.add(join_path(path, "by_epoch"), refusal)


def length_option(entry: Any) -> str | None:
    """The option that sets the schedule's length: the one its row declares (`length`), else its closed form's
    `length_option` (MindFormers' warmup family, whose rows leave total_steps undeclared so that a warmup longer
    than it passes, as MindFormers lets it); None when no option does."""
    return entry.length or getattr(entry.resolve(), "length_option", None)


def _length_of(entry: Any) -> Any:
    """The option of `length_option` (models.Option), or None."""
    length = length_option(entry)
    return next((o for o in models.options(entry) if o.name == length), None) if length else None


def required_length(entry: Any) -> str | None:
    """The length option that has no value of its own (required, or None by default), which a spec that leaves it
    out takes from the run (`fill_length`); None when the schedule has none."""
    option = _length_of(entry)
    return option.name if option is not None and (option.required or option.default is None) else None


def describe_loop(entry: Any) -> tuple[str, ...]:
    """What `optreg show` says of a scheduler's loop keys: epochs, the counts converted, warmup, the run's length."""
    from optreg.schedules.epochs import COUNTS

    if getattr(entry.resolve(), "reads_run", False):
        return ("by_epoch and convert_to_iter_based: in each entry, which counts its own window; a warmup is an entry "
                "of its own (LinearLR on its window)",)
    counts = [o.name for o in models.options(entry) if o.name in COUNTS]
    refusal = warmup_refusal(entry)
    epochs = loop_refusal(entry, "by_epoch")
    lines = [f"by_epoch: refused; {epochs}" if epochs else
             f"by_epoch: true counts epochs of train.steps_per_epoch steps (value(t) = f(floor(t / E))); "
             f"convert_to_iter_based: true multiplies {', '.join(counts) or 'no count of this schedule'} by E "
             f"(MMEngine)",
             "warmup: {steps | ratio, start_factor | start_value, type: linear | constant | exponential} in the "
             "top-level spec" if refusal is None else f"warmup: refused; {refusal}"]
    option, required = _length_of(entry), required_length(entry)
    if option is not None and (required or refusal is None):
        when = "" if required else " after a warmup"
        run = "the run length − the warmup" if refusal is None else "the run length"   # W is 0 where it is refused
        lines.append(f"{option.name} left out or null{when}: {run} (train.steps, "
                     f"train.epochs × steps_per_epoch, build(total_steps=))")
    return tuple(lines)


def fill_length(entry: Any, spec: dict[str, Any], loop: Loop, context: Any, path: str, errors: Collector) -> None:
    """Give the top-level spec's length (`length_option`: its entry's `length`, else its closed form's) from the run
    when the spec leaves it out. A length written null (what a Hydra group file carries) is left out, in a spec at
    any level: taken from the run where one left out would be, and otherwise reported as one left out is."""
    length = length_option(entry)
    if not length:
        return
    names = {length, *synonyms(length)}
    for name in names & {k for k, v in spec.items() if v is None}:
        del spec[name]
    if not context.top or any(n in spec for n in names):
        return
    if not (required_length(entry) or loop.warmup is not None and _length_of(entry) is not None):
        return
    if context.run_steps is None and not context.run_invalid:   # its error says why (`run_length_said`)
        loop.unfilled = length
        return
    if context.run_steps is None:   # planned on, so that the run's own error is the one reported
        spec[length] = 1
        return
    # at least 1: a warmup that leaves none of the run is refused where it is read (_read_warmup); planned on, so
    # that this is the only problem reported about the length
    remaining = max(context.run_steps - loop.warmup_steps, 1)
    spec[length] = math.ceil(remaining / context.steps_per_epoch) if loop.epoch_stepped and \
        context.steps_per_epoch else remaining
    loop.filled = length


def no_run_length(removed: bool = False) -> str:
    """The error of a required length that the spec leaves to the run (`fill_length`) when the run has no length;
    `removed`: an override of the run took it away (optreg.integrations.hydra.support, which locates it there)."""
    return (f"{models.MISSING_OPTION}: left out or null, the schedule's length comes from the run's length "
            f"({NO_RUN}), " + ("which this override removed" if removed else "and the run has none"))


def run_length_said(error: ConfigError, loop: Loop, path: str) -> ConfigError:
    """`error` (the spec's options validated, or its closed form's problems: MindFormers' total_steps) with the
    required-option error of the length `fill_length` left unfilled, for want of a run length, saying so
    (`no_run_length`)."""
    where = join_path(path, loop.unfilled) if loop.unfilled else None
    return ConfigError([dataclasses.replace(e, message=no_run_length())
                        if e.path == where and e.message == models.MISSING_OPTION else e for e in error.errors])


def counts_scale(loop: Loop, context: Any) -> int:
    """What the spec's step counts are multiplied by: E when it converts (times a converting parent's E)."""
    return context.counts_scale * (context.steps_per_epoch if loop.convert and context.steps_per_epoch else 1)


def finish(plan: Any, loop: Loop, context: Any, path: str, errors: Collector) -> None:
    """Wrap the planned schedule: by_epoch alone (EpochStepped), then the warmup (Warmup); a torch class becomes its
    closed form, driven by the adapter."""
    if not loop.epoch_stepped and not loop.warmup_steps:
        return
    from optreg.schedules.epochs import EpochStepped
    from optreg.schedules.warmup import Warmup

    torch_class = plan.schedule is None
    why = [(k, phrase) for k, phrase, on in (("warmup:", "with a warmup", loop.warmup_steps),
                                              ("by_epoch", "counted in epochs", loop.epoch_stepped)) if on]
    try:
        schedule = plan.closed_form(path, (" and ".join(p for _, p in why), "drop " + " and ".join(k for k, _ in why)))
    except ConfigError as exc:
        errors.extend(exc)
        return
    if loop.epoch_stepped and context.steps_per_epoch:
        schedule = EpochStepped(schedule, context.steps_per_epoch)
    if loop.warmup_steps:
        w = loop.warmup
        schedule = Warmup(schedule, loop.warmup_steps, w.type, w.start_factor, w.start_value)
    if torch_class:
        plan.last_epoch = plan.values.get("last_epoch", -1)
    plan.schedule = schedule


__all__ = ["LOOP_KEYS", "Loop", "pop_loop", "check_entry", "on_metric", "loop_refusal", "warmup_refusal",
           "length_option", "describe_loop", "fill_length", "counts_scale", "finish"]

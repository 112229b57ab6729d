"""The run around the optimizer: its length (`train: {steps}` or `train: {epochs, steps_per_epoch}`) and gradient
clipping (`clip_grad:`).

Run length, from the first source that gives one:

    optreg run --steps  >  build(total_steps=)  >  train.steps  >  train.epochs × steps_per_epoch  >  the format's own

`--steps` replaces what the file says (a command line's last word); the format's own length (Cerebras Model Zoo's
`max_steps`, its trainer's run) applies only when nothing else gives one; any two other sources that both give a
length and disagree are a ConfigError naming both; train.epochs without the steps per epoch gives no length to
compare (`Experiment.check_epochs`: an error, beside another source too). steps_per_epoch (E) comes from
`build(steps_per_epoch=)` or `train.steps_per_epoch` (both given and different: a ConfigError). `scheduler.step()` is
called once per step, so a run of N steps evaluates every schedule at steps 0 .. N-1.

`train.accumulation_steps: A` (gradient accumulation, as LiBai's eager trainer runs it): a step is a micro-batch;
the gradients of A micro-batches are summed (each loss divided by A), the optimizer steps after every A-th, and the
scheduler steps after every micro-batch, so the schedule counts micro-batches and a run of N steps makes ⌊N / A⌋
optimizer steps (the trailing N mod A micro-batches make none: `accumulation_note`).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Optional

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from optreg.core import models
from optreg.core.options import clip_norm_order
from optreg.core.types import Bool, NonNegInt, PosFloat, PosInt
from optreg.errors import Collector, counted, join_path

DEFAULT_STEPS = 100   # `optreg run`'s built-in job when nothing gives a run length
DEFAULT_RUN = "optreg run's default"   # how messages name DEFAULT_STEPS as a run length
STEPS_KEY = "train.steps or --steps"   # where a run length from the file (or `optreg run --steps`) comes from
#: how a caller's run length is named (`resolve_run(given_by=)`): a Python call's, a command's on a foreign file
GIVEN_BY = ("total_steps=", "--steps")


class TrainSpec(BaseModel):
    """`train:`: the run's length and the built-in job of `optreg run` (a small MLP on synthetic regression data).

    steps              steps of the run (None: not given; `optreg run` runs 100 when nothing gives a length);
    epochs             epochs of the run: with steps_per_epoch, a length of epochs × steps_per_epoch;
    steps_per_epoch    steps per epoch (what `by_epoch` schedules count in; a dataloader's length);
    accumulation_steps micro-batches per optimizer step (1: every step is an optimizer step; see the module doc)."""

    model_config = ConfigDict(extra="forbid")

    steps: Optional[PosInt] = None
    epochs: Optional[PosInt] = None
    steps_per_epoch: Optional[PosInt] = None
    accumulation_steps: PosInt = 1
    batch_size: PosInt = 32
    seed: NonNegInt = 0
    hidden: PosInt = 32
    depth: PosInt = 2


@dataclass(frozen=True)
class RunLength:
    """The run a plan is made for: its steps (None: not known, so nothing is checked against it), the steps per
    epoch (None: not known), where the length came from (named in messages) and the micro-batches per optimizer
    step (`accumulation`: the schedule steps on each, the optimizer on every accumulation-th)."""

    steps: int | None = None
    steps_per_epoch: int | None = None
    source: str | None = None
    accumulation: int = 1

    @property
    def known(self) -> bool:
        return self.steps is not None

    def optimizer_step(self, step: int) -> int:
        """The optimizer step whose dynamic lr the run's step `step` reads (`optimizer_step`, what plot and run show
        at it); the trailing micro-batches of a run that is not a multiple of `accumulation` make no optimizer step
        (`accumulation_note`) and show the run's last one."""
        at, last = optimizer_step(step, self.accumulation), self.optimizer_steps
        return min(at, last - 1) if last else at

    @property
    def optimizer_steps(self) -> int | None:
        """The optimizer steps of the run, one per full window of `accumulation` micro-batches (the trailing ones
        make none; None: no run length known): the entries a per-step lr list needs."""
        return None if self.steps is None else self.steps // self.accumulation


def optimizer_step(step: int, accumulation: int) -> int:
    """The 0-based optimizer step whose window of `accumulation` micro-batches holds the run's step `step`: the step at
    which the optimizer reads a dynamic lr (MindSpore's per-step list, indexed by its own step count)."""
    return step // accumulation


def resolve_run(train: TrainSpec, *, total_steps: int | None = None, steps_per_epoch: int | None = None,
                format_steps: tuple[int, str] | None = None, format_epochs: tuple[int, str] | None = None,
                errors: Collector, given_by: str = GIVEN_BY[0]) -> RunLength:
    """The run length and steps per epoch from every source (see the module doc); conflicts go to `errors`.
    `format_steps` / `format_epochs`: the format's own length in steps, or in epochs (MMEngine's
    train_cfg.max_epochs: a length once the steps per epoch are known), and the key that gives it. `given_by`: how
    messages name `total_steps` (one of GIVEN_BY; the run's `source`)."""
    per_epoch = train.steps_per_epoch
    if steps_per_epoch is not None:
        if per_epoch is not None and per_epoch != steps_per_epoch:
            errors.add("train.steps_per_epoch", f"build(steps_per_epoch={steps_per_epoch}) and "
                                                f"train.steps_per_epoch {per_epoch} disagree; give one")
        per_epoch = steps_per_epoch
    sources: list[tuple[str, int, str]] = []   # (what the message says, steps, the key that gives it)
    if total_steps is not None:
        sources.append((f"{given_by}{'' if given_by.endswith('=') else ' '}{total_steps}", total_steps, given_by))
    if train.steps is not None:
        sources.append((f"train.steps {train.steps}", train.steps, STEPS_KEY))
    if train.epochs is not None and per_epoch is not None:   # epochs alone: the dataloader's length comes later
        sources.append((f"train.epochs × steps_per_epoch = {train.epochs} × {per_epoch} = "
                            f"{train.epochs * per_epoch}", train.epochs * per_epoch, "train.epochs"))
    accumulation = train.accumulation_steps
    if not sources and format_steps is not None:   # the format's own (Model Zoo's max_steps): a fallback only
        sources.append((f"{format_steps[1]} {format_steps[0]}", format_steps[0], format_steps[1]))
    elif not sources and format_epochs is not None and per_epoch is not None:
        steps = format_epochs[0] * per_epoch
        sources.append((f"{format_epochs[1]} × steps per epoch = {format_epochs[0]} × {per_epoch} = {steps}", steps,
                        format_epochs[1]))
    if not sources:
        return RunLength(None, per_epoch, None, accumulation)
    first = sources[0]
    for other in sources[1:]:
        if other[1] != first[1]:
            where = other[2] if other[2] not in (*GIVEN_BY, STEPS_KEY) else "train.steps"
            errors.add(where, f"{first[0]} and {other[0]} disagree on the run length; give one")
    if accumulation > first[1]:
        errors.add("train.accumulation_steps", f"{accumulation} micro-batches per optimizer step are more than the "
                                               f"{counted(first[1], 'step')} of the run ({first[0]}): the optimizer "
                                               f"would never step; make accumulation_steps at most {first[1]}")
    return RunLength(first[1], per_epoch, first[2], accumulation)


def run_known(train: Any) -> bool:
    """Whether optreg's `train:` section (as a reader writes it) gives the run length (train.steps, or train.epochs
    × steps_per_epoch); one in error does not (its errors are reported when the own form is read)."""
    try:
        spec = TrainSpec.model_validate(train or {})
    except ValidationError:
        return False
    return resolve_run(spec, errors=Collector()).known


def epochs_run(key: str, accumulation: tuple[str, Any] | None = None) -> str:
    """A trainer's run in epochs as a report words it: `key` (the file's epochs) × the dataloader's length. A trainer
    that accumulates gradients (`accumulation`: the file's key and its value A > 1) and steps its schedule once per
    optimizer step (transformers' Trainer, NeMo's Lightning) runs ⌈the dataloader's length / A⌉ steps an epoch: the
    steps per epoch to give beside the file."""
    if accumulation is None or isinstance(accumulation[1], bool) or not isinstance(accumulation[1], int) or \
            accumulation[1] <= 1:
        return f"{key} × the dataloader's length"
    return f"{key} × its optimizer steps per epoch, ⌈the dataloader's length / {accumulation[0]} {accumulation[1]}⌉"


def length_replaced(whose: str, key: str, accumulation: tuple[str, Any] | None = None) -> str:
    """Why a file's own run in epochs (`key`, `whose` trainer's; `accumulation` as epochs_run takes it) is not the
    run when a run length is given beside the file (its train:, --steps), which replaces it: one wording for every
    reader that reports it (HF's num_train_epochs, NeMo's trainer.max_epochs and the schedule's max_steps NeMo
    computes from it)."""
    return f"replaced by the run length given (train:, --steps): {whose} run is {epochs_run(key, accumulation)}"


def accumulation_note(run: RunLength) -> str | None:
    """The note (a ConfigWarning at train.accumulation_steps) of a run whose steps are not a multiple of its
    accumulation_steps A: the last micro-batches make no optimizer step, their gradients are left unapplied (as in
    `optreg.train.train`); None for any other run."""
    if run.steps is None or run.accumulation == 1 or run.steps % run.accumulation == 0:
        return None
    left = run.steps % run.accumulation
    last = ("micro-batch makes", "its gradients are") if left == 1 else \
        (f"{left} micro-batches make", "their gradients are")   # the verb and the pronoun agree with them
    return (f"train.accumulation_steps: the {run.steps} steps of the run ({run.source}) are not a multiple of "
            f"accumulation_steps {run.accumulation}: the last {last[0]} no optimizer step ({last[1]} never "
            f"applied); make the run a multiple of {run.accumulation}")


#: the run length a caller gives beside the file (`build(total_steps=, steps_per_epoch=)`), while the file is read:
#: for a reader that settles a length of the file from the run as it reads (MindFormers' `total_steps: -1`)
_GIVEN: ContextVar[dict[str, int]] = ContextVar("optreg_given_run", default={})


@contextmanager
def run_given(total_steps: int | None, steps_per_epoch: int | None) -> Iterator[None]:
    """Read files inside this block knowing the run length the caller gives (`given_run`); the values are checked
    (`check_given`) before any file is read."""
    total_steps, steps_per_epoch = check_given(total_steps, steps_per_epoch)
    given = {k: v for k, v in (("total_steps", total_steps), ("steps_per_epoch", steps_per_epoch)) if v is not None}
    token = _GIVEN.set(given)
    try:
        yield
    finally:
        _GIVEN.reset(token)


def given_run() -> dict[str, int]:
    """The `resolve_run` keywords of the run length the caller gives (`run_given`), {} outside one."""
    return dict(_GIVEN.get())


def check_given(total_steps: Any, steps_per_epoch: Any) -> tuple[int | None, int | None]:
    """`total_steps` and `steps_per_epoch` as ints, read by the types of train.steps and train.steps_per_epoch (an
    integer >= 1; numpy's integers, `len(dataset) // batch` of numpy sizes, and what else those options take): a
    ConfigError at each that is not None or such a value, worded as the options word it."""
    errors = Collector()
    out: dict[str, int | None] = {}
    for name, field, value in (("total_steps", "steps", total_steps),
                               ("steps_per_epoch", "steps_per_epoch", steps_per_epoch)):
        try:
            out[name] = getattr(TrainSpec.model_validate({field: value}), field)
        except ValidationError as exc:
            for item in models.pydantic_errors(exc, TrainSpec):
                errors.add(name, item.message, item.suggestion)
    errors.raise_if_any()
    return out["total_steps"], out["steps_per_epoch"]


def read_train(data: Mapping[str, Any], errors: Collector) -> TrainSpec:
    """The `train:` section (defaults when absent or null); its problems go to `errors` with their paths."""
    raw = data.get("train")
    try:
        return TrainSpec.model_validate({} if raw is None else raw)
    except ValidationError as exc:
        for item in models.pydantic_errors(exc, TrainSpec):
            errors.add(join_path("train", item.path), item.message, item.suggestion)
        return TrainSpec()


class ClipGrad(BaseModel):
    """`clip_grad:`: gradient clipping between backward() and the optimizer's step, over every parameter.

    max_norm            clip the global norm to this (torch.nn.utils.clip_grad_norm_: g ← g·min(1, max_norm/‖g‖));
    norm_type           the norm's p (2; `inf` for the max norm; 0, negative and `-inf` as torch takes them:
                        optreg.core.options.clip_norm_order);
    max_value           clip each element to [-max_value, max_value] (torch.nn.utils.clip_grad_value_);
    error_if_nonfinite  raise when the total norm is nan or inf (clip_grad_norm_'s flag).

    One of max_norm and max_value (Cerebras Model Zoo's max_gradient_norm / max_gradient_value map onto them)."""

    model_config = ConfigDict(extra="forbid")

    max_norm: Optional[PosFloat] = None
    norm_type: Any = 2.0
    max_value: Optional[PosFloat] = None
    error_if_nonfinite: Bool = False

    @model_validator(mode="after")
    def _one_kind(self) -> "ClipGrad":
        if (self.max_norm is None) == (self.max_value is None):
            raise ValueError("give one of max_norm (clip the global norm) and max_value (clip each element)")
        return self


def clip_message(value: Any, mode: str = "max_norm") -> str | None:
    """What is wrong with `value` as ClipGrad's `mode` (max_norm or max_value), in the words read_clip says it; None
    when nothing is. A reader whose file writes the threshold under a key of its own checks it there."""
    if value is None:
        return models.type_message("a number", value)
    try:
        ClipGrad.model_validate({mode: value})
    except ValidationError as exc:
        return models.pydantic_errors(exc, ClipGrad)[0].message
    return None


#: ClipGrad's options of clipping by the global norm, which clipping each element (max_value) does not take
NORM_ONLY = ("norm_type", "error_if_nonfinite")


def read_clip(raw: Any, errors: Collector, path: str = "clip_grad") -> ClipGrad | None:
    """The `clip_grad:` section, or None when absent; problems go to `errors` at `path`, every one of them (a bad
    norm_type beside a bad max_norm). An option of NORM_ONLY beside max_value is an error at it: clip_grad_value_
    would drop it (error_if_nonfinite: true would never raise)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        errors.add(path, f"expected a mapping with max_norm or max_value, got {type(raw).__name__}")
        return None
    norm_type, wrong = 2.0, set()   # the options said wrong
    try:
        norm_type = clip_norm_order(raw.get("norm_type", 2.0))
    except ValueError as exc:
        errors.add(join_path(path, "norm_type"), str(exc))
        wrong.add("norm_type")
    try:   # the other options, checked whatever norm_type is
        clip = ClipGrad.model_validate({k: v for k, v in raw.items() if k != "norm_type"})
    except ValidationError as exc:
        for item in models.pydantic_errors(exc, ClipGrad):
            errors.add(join_path(path, item.path), item.message, item.suggestion)
        return None
    if clip.max_value is not None:
        for key in (k for k in NORM_ONLY if k in raw and k not in wrong):
            errors.add(join_path(path, key), "an option of clipping the global norm (max_norm), which clipping each "
                                             "element (max_value) does not take; drop it")
            wrong.add(key)
    if wrong:
        return None
    return clip.model_copy(update={"norm_type": float(norm_type)})


__all__ = ["TrainSpec", "RunLength", "resolve_run", "accumulation_note", "read_train", "ClipGrad", "read_clip",
           "clip_message", "DEFAULT_STEPS", "DEFAULT_RUN"]

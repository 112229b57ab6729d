"""The closed-form schedule engine: a schedule is a pure `value(step)`, exact for any step.

`Schedule` is the frozen-dataclass base every framework vocabulary builds on. A schedule is
*factor*-valued (multiplies a group's base value: torch, OneFlow, HF) or *absolute* (Cerebras,
MindSpore). Some factor schedules also read the base itself (torch's `eta_min` is absolute, so
η_min + (b - η_min)·c(t) is not b·f(t)); they override `apply(step, base)`, the one method the torch
adapter calls. `Sequential` runs stages one after another, `Chained` composes them.

No torch here: the engine is plain Python, cheap to import and to plot.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Mapping, Sequence, Union

from optreg.errors import Collector, ConfigError, ErrorItem, join_path, show

#: the param-group keys a schedule can drive
KEYS = ("lr", "momentum", "betas[0]", "betas[1]", "weight_decay")
#: the group key where a schedule keeps each key's starting value, as torch keeps `initial_lr`
INITIAL_KEYS = {"lr": "initial_lr", "momentum": "initial_momentum", "betas[0]": "initial_beta1",
                "betas[1]": "initial_beta2", "weight_decay": "initial_weight_decay"}

FACTOR = "factor"
ABSOLUTE = "absolute"
MIXED = "mixed"   # a schedule with both kinds of stages (a `sequential` of factor and absolute ones)
Restart = Literal["local", "global"]


# ---------------------------------------------------------------------------------------------------
# shared formula pieces (the "per-tensor rules" of schedules)
# ---------------------------------------------------------------------------------------------------
def half_cosine(progress: float) -> float:
    """½(1 + cos(π·progress)): 1 at progress 0, 0 at progress 1 (no clamp)."""
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def anneal(start: float, end: float, weight: float) -> float:
    """end + (start - end)·weight: weight 1 gives start, 0 gives end."""
    return end + (start - end) * weight


def sgdr_cycle(step: int, period: int, mult: int) -> tuple[int, int, int]:
    """(cycle index i, step within the cycle, cycle length T_i) of SGDR restarts, exactly, in integers.

    Cycle i lasts period·mult^i steps. Frameworks that take a float log here (OneFlow, timm,
    Cerebras) misplace a boundary where the log is inexact; integer arithmetic does not.
    """
    if mult == 1:
        return step // period, step % period, period
    cycle, start, length = 0, 0, period
    while step >= start + length:
        start += length
        length *= mult
        cycle += 1
    return cycle, step - start, length


def check(errors: Collector, ok: bool, path: str, message: str) -> None:
    """Record `message` at `path` unless `ok`."""
    if not ok:
        errors.add(path, message)


def check_number(errors: Collector, value: float, path: str, low: float | None = None,
                 high: float | None = None, above: float | None = None) -> None:
    """Record at `path` what is wrong with a number option below `low` (at or below `above`) or above `high`, worded
    as the own form's options word it (`models.number_message`: `must be <= 1, got 1.5`, `must be >= 1, got 0`)."""
    from optreg.core.models import number_message

    if message := number_message(value, low, high=high, above=above):
        errors.add(path, message)


# ---------------------------------------------------------------------------------------------------
# the base class
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Schedule:
    """A pure closed form value(step). Subclasses are frozen dataclasses of their own options.

    values     "factor" (times the group's base value), "absolute", or "mixed" (stages of both kinds).
    __call__   the value at `step` (for a factor schedule that reads the base: the value for base 1).
    apply      the value a param group gets at `step` given its base value; the adapter calls this.
    length     the steps the schedule spans (after them it holds its value or starts over: the linter's horizon),
               or None (it goes on changing).
    stage_length  the steps it spans as a stage whose milestone comes from its length (its `length`, but a
               decay period's total_iters, `DecayPeriod`)
    bind       a copy completed from the optimizer (the groups' base values and its default), for
               the few schedules that read them (HF polynomial reads optimizer.defaults["lr"]).
    zero_start_by_design   the framework's form starts at 0 whatever its options (HF's warmups, t/W at t = 0): the
               linter does not ask for a start above 0, which no option of the schedule gives.
    """

    values: ClassVar[str] = FACTOR
    zero_start_by_design: ClassVar[bool] = False

    def __call__(self, step: int) -> float:
        return self.apply(step, 1.0)

    def apply(self, step: int, base: float) -> float:
        value = self(step)
        return base * value if self.values == FACTOR else value

    @property
    def length(self) -> int | None:
        return None

    @property
    def stage_length(self) -> int | None:
        return self.length

    @property
    def initial_value(self) -> float:
        """The value a chained absolute stage is normalised by (Cerebras divides by initial_val)."""
        return self(0)

    def bind(self, bases: Sequence[float], default: float | None) -> "Schedule":
        return self

    def validate(self) -> None:
        """Raise ConfigError listing every bad option; subclasses extend `problems`."""
        errors = Collector()
        self.problems(errors)
        errors.raise_if_any()

    def problems(self, errors: Collector) -> None:
        """Add the schedule's option errors to `errors` (paths are option names)."""

    def __post_init__(self) -> None:
        self.validate()


class SpansTotalIters:
    """Mixin of a Schedule that spans its `total_iters` steps (its length as a SequentialLR stage)."""

    @property
    def length(self) -> int | None:
        return self.total_iters


class DecaysOverTotalIters(SpansTotalIters):
    """Mixin of a Schedule that decays over `total_iters` >= 1 steps (refused below 1)."""

    def problems(self, errors: Collector) -> None:
        check_number(errors, self.total_iters, "total_iters", low=1)


class DecayPeriod(DecaysOverTotalIters):
    """Mixin of a Schedule whose `total_iters` is a decay period, not an end: the value keeps falling past it
    (Cerebras' ExponentialLR and InverseExponentialTimeDecayLR, Keras' decay_steps), so it has no length; as a
    stage of a sequence it still spans total_iters steps (Cerebras' SequentialLR sums them into milestones)."""

    @property
    def length(self) -> int | None:
        return None

    @property
    def stage_length(self) -> int | None:
        return self.total_iters


def require_schedules(stages: Any, path: str = "schedulers") -> tuple[Schedule, ...]:
    """The stages as a tuple; ConfigError unless it is a non-empty sequence of Schedules."""
    if isinstance(stages, (str, bytes)) or not isinstance(stages, Sequence) or not stages:
        raise ConfigError(f"expected a non-empty list of schedules, got {show(stages)}", path)
    errors = Collector()
    for i, stage in enumerate(stages):
        check(errors, isinstance(stage, Schedule), join_path(path, i), f"expected a schedule, got {show(stage)}")
    errors.raise_if_any()
    return tuple(stages)


# ---------------------------------------------------------------------------------------------------
# milestones and continuity
# ---------------------------------------------------------------------------------------------------
def derive_milestones(stages: Sequence[Schedule], path: str = "schedulers") -> list[int]:
    """Milestones from stage lengths: the running sums of every stage's length but the last.

    ConfigError (at `schedulers[i]`) when a non-final stage has no length or a length < 1.
    """
    stages = require_schedules(stages, path)
    errors = Collector()
    milestones, total = [], 0
    for i, stage in enumerate(stages[:-1]):
        length = stage.stage_length
        if length is None:
            errors.add(join_path(path, i), f"{type(stage).__name__} has no length to derive a milestone "
                                           f"from; give milestones")
            continue
        if length < 1:
            errors.add(join_path(path, i), f"stage length must be >= 1, got {length}")
            continue
        total += length
        milestones.append(total)
    errors.raise_if_any()
    return milestones


def check_milestones(milestones: Sequence[int], n_stages: int, path: str = "milestones") -> list[ErrorItem]:
    """Problems with explicit milestones: count (one fewer than stages), integers >= 0, strictly increasing."""
    errors = Collector()
    if len(milestones) != n_stages - 1:
        errors.add(path, f"expected {n_stages - 1} milestones for {n_stages} schedules, got {len(milestones)}")
    from optreg.core.models import number_message
    from optreg.core.types import MAX_INT

    for i, m in enumerate(milestones):   # numpy's integers too, as the options take
        if message := number_message(m, 0, integer=True, high=MAX_INT):
            errors.add(join_path(path, i), message)
    if not any(number_message(m, integer=True) for m in milestones):
        for i in range(1, len(milestones)):
            if not milestones[i] > milestones[i - 1]:
                errors.add(path, f"must be strictly increasing, got {show(list(milestones))}")
                break
    return errors.items


def _restarts(restart: Any, n: int, errors: Collector) -> tuple[str, ...]:
    """Per-boundary restart modes: one value for all boundaries, or a list of n - 1 values."""
    modes = ("local", "global")
    if isinstance(restart, str):
        check(errors, restart in modes, "restart", f"must be 'local' or 'global', got {show(restart)}")
        return (restart,) * max(n - 1, 0)
    if not isinstance(restart, (list, tuple)):
        errors.add("restart", f"must be 'local', 'global' or a list of them, got {show(restart)}")
        return ("local",) * max(n - 1, 0)
    restart = tuple(restart)
    check(errors, len(restart) == n - 1, "restart", f"expected {n - 1} values (one per milestone), "
                                                    f"got {len(restart)}")
    for i, r in enumerate(restart):
        check(errors, r in modes, join_path("restart", i), f"must be 'local' or 'global', got {show(r)}")
    return restart


# ---------------------------------------------------------------------------------------------------
# combinators
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sequential(Schedule):
    """Stage k runs on [M_{k-1}, M_k); on its local step t - M_{k-1} ("local"), or on t ("global").

    Milestones are derived from the stages' lengths when omitted. `restart` is one mode for every
    boundary or a list with one mode per milestone (OneFlow's per-stage interval_rescaling).
    """

    stages: Sequence[Schedule]
    milestones: Sequence[int] | None = None
    restart: Restart | Sequence[Restart] = "local"
    _modes: tuple[str, ...] = field(init=False, repr=False, compare=False, default=())

    def __post_init__(self) -> None:
        errors = Collector()
        stages = require_schedules(self.stages)
        object.__setattr__(self, "stages", stages)
        if self.milestones is None:
            milestones = derive_milestones(stages)
        elif isinstance(self.milestones, (list, tuple)):
            milestones = list(self.milestones)
            errors.extend(check_milestones(milestones, len(stages)))
        else:
            raise ConfigError(f"expected a list of {len(stages) - 1} step counts, got {show(self.milestones)}",
                              "milestones")
        modes = _restarts(self.restart, len(stages), errors)
        errors.raise_if_any()
        object.__setattr__(self, "milestones", tuple(int(m) for m in milestones))   # a numpy integer as an int
        object.__setattr__(self, "_modes", modes)
        kinds = {s.values for s in stages}
        object.__setattr__(self, "values", kinds.pop() if len(kinds) == 1 else MIXED)

    def locate(self, step: int) -> tuple[Schedule, int]:
        """The stage that owns global `step` and the step it is evaluated at."""
        k = bisect.bisect_right(self.milestones, step)
        if k == 0 or self._modes[k - 1] == "global":
            return self.stages[k], step
        return self.stages[k], step - self.milestones[k - 1]

    def __call__(self, step: int) -> float:
        stage, local = self.locate(step)
        return stage(local)

    def apply(self, step: int, base: float) -> float:
        stage, local = self.locate(step)
        return stage.apply(local, base)

    @property
    def length(self) -> int | None:
        last = self.stages[-1].length
        if last is None:
            return None
        if not self.milestones:
            return last
        if self._modes[-1] == "global":
            return max(self.milestones[-1], last)
        return self.milestones[-1] + last

    def bind(self, bases: Sequence[float], default: float | None) -> "Sequential":
        stages = [s.bind(bases, default) for s in self.stages]
        return dataclasses.replace(self, stages=stages, milestones=self.milestones, restart=self._modes or "local")


@dataclass(frozen=True)
class Chained(Schedule):
    """Composition of stages at the same step: x ← stage.apply(step, x), starting from the base.

    Factor stages multiply (torch/OneFlow ChainedScheduler). Absolute stages follow Cerebras: the
    first stage gives the value and each later absolute stage multiplies by value/initial value.
    An absolute stage after a factor stage is refused (its scale would be ambiguous).
    """

    stages: Sequence[Schedule]

    def __post_init__(self) -> None:
        errors = Collector()
        stages = require_schedules(self.stages)
        for i, stage in enumerate(stages[1:], 1):
            if stage.values == ABSOLUTE and stages[0].values != ABSOLUTE:
                errors.add(join_path("schedulers", i), "an absolute schedule can only follow an absolute first "
                                                       "schedule in a chain")
        errors.raise_if_any()
        object.__setattr__(self, "stages", stages)
        object.__setattr__(self, "values", ABSOLUTE if stages[0].values == ABSOLUTE else stages[0].values)

    def apply(self, step: int, base: float) -> float:
        first, rest = self.stages[0], self.stages[1:]
        x = first.apply(step, base)
        for stage in rest:
            if stage.values == ABSOLUTE:
                x = x * (stage(step) / stage.initial_value)
            else:
                x = stage.apply(step, x)
        return x

    def __call__(self, step: int) -> float:
        return self.apply(step, 1.0)

    @property
    def length(self) -> int | None:
        lengths = [s.length for s in self.stages if s.length is not None]
        return max(lengths) if lengths else None

    def bind(self, bases: Sequence[float], default: float | None) -> "Chained":
        return dataclasses.replace(self, stages=[s.bind(bases, default) for s in self.stages])


@dataclass(frozen=True)
class Constant(Schedule):
    """`value` at every step, the same in every group: a number given where a schedule may be
    (`configure_lr_scheduler(opt, 0.5)`, Cerebras' convention), read as the schedules that set the lr themselves."""

    values: ClassVar[str] = ABSOLUTE
    value: float = 0.0

    def __call__(self, step: int) -> float:
        return self.value


# ---------------------------------------------------------------------------------------------------
# helpers for vocabularies that wrap the combinators under their own option names
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Delegate(Schedule):
    """A schedule defined by an inner schedule built from its own options (`build()`)."""

    inner: Schedule | None = field(init=False, repr=False, compare=False, default=None)

    def build(self) -> Schedule:
        raise NotImplementedError

    def __post_init__(self) -> None:
        self.validate()
        inner = self.build()
        object.__setattr__(self, "inner", inner)
        object.__setattr__(self, "values", inner.values)

    def __call__(self, step: int) -> float:
        return self.inner(step)

    def apply(self, step: int, base: float) -> float:
        return self.inner.apply(step, base)

    @property
    def length(self) -> int | None:
        return self.inner.length

    @property
    def stage_length(self) -> int | None:
        return self.inner.stage_length

    def bind(self, bases: Sequence[float], default: float | None) -> Schedule:
        return self.inner.bind(bases, default)


def options_of(schedule: Schedule) -> Mapping[str, Any]:
    """The schedule's own options (its init fields) as a dict."""
    return {f.name: getattr(schedule, f.name) for f in dataclasses.fields(schedule) if f.init}


# ---------------------------------------------------------------------------------------------------
# step counts given as a fraction of a total (HF num_warmup_steps, timm warmup_t)
# ---------------------------------------------------------------------------------------------------
Steps = Union[int, float]  # a count, or a fraction of a total


def resolve_steps(value: Steps | None, total: int | None, name: str, total_name: str) -> int | None:
    """An int step count as is; a float in [0, 1) as ceil(value·total); a whole float >= 1 as an int.

    ConfigError (at `name`) for a fraction without a total, a negative count, or a non-whole float >= 1.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise ConfigError(f"expected a step count or a fraction, got {show(value)}", name)
    if isinstance(value, numbers.Integral):   # numpy's integers too, as the options take
        if value < 0:
            raise ConfigError(f"must be >= 0, got {value}", name)
        return int(value)
    if 0 <= value < 1:
        if total is None:
            raise ConfigError(f"a fraction ({value}) needs {total_name} to count from", name)
        return math.ceil(round(value * total, 9))  # round first: 0.05·300 is 15.000000000000002
    if value >= 1 and float(value).is_integer():
        return int(value)
    raise ConfigError(f"expected a step count (int) or a fraction in [0, 1), got {show(value)}", name)



__all__ = ["Schedule", "Sequential", "Chained", "Constant", "Delegate", "FACTOR", "ABSOLUTE", "derive_milestones",
           "require_schedules", "check_milestones", "half_cosine", "anneal", "sgdr_cycle",
           "options_of", "Steps", "resolve_steps"]

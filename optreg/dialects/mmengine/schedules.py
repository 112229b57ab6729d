"""MMEngine's `param_scheduler` list as a schedule (mmengine 0.10 `optim/scheduler`): `ParamSchedulers`, the
mmengine dialect's scheduler, holds one `Chain` per group key it drives (lr, momentum, weight_decay).

MMEngine builds every entry of the list on the same optimizer and steps them all: each entry is active on its own
window [begin, end) of its unit (epochs when `by_epoch`, the default, else iterations) and, while active, replaces
the group's current value v by its chainable update of v (so the entries compose: a warmup followed by, or
overlapping, a decay). Its runner (`ParamSchedulerHook`) steps the iteration-based entries after every iteration,
then, at the end of an epoch, the epoch-based ones, each list in its order. Every entry also steps once when it is
built (its step 0 at global step 0). An entry's own step k counts only the steps inside its window.

The updates, at the entry's step k (k = 0 first), with b the group's value when the entries were built:

    Linear        k = 0: v·s;  else v·(1 + (e − s) / (T·s + (k − 1)(e − s)))     T = end − begin − 1
    Constant      k = 0: v·f;  k = T: v / f;  else v                              T = end − begin − 1
    Poly          k > 0: (v − η)·(1 − 1/(T − k + 1))^p + η                        T = end − begin − 1
    Exponential   k > 0: v·γ
    Step          k > 0 and k mod s = 0: v·γ
    MultiStep     k a milestone (n times): v·γⁿ
    CosineAnnealing  k > 0: η + (v − η)·(1 + cos(πk/T)) / (1 + cos(π(k − 1)/T)), T = T_max or end − begin
                  (at k − 1 − T ≡ 0 mod 2T: v + (b − η)(1 − cos(π/T))/2); η = eta_min or b·eta_min_ratio
    OneCycle      absolute: from eta_max/div_factor up to eta_max, down to that / final_div_factor (torch's phases)
    CosineRestart cosine restarts over `periods`, peak b·restart_weight, η as above; past the periods: v

`convert_to_iter_based` (MMEngine's `build_iter_from_epoch`) multiplies begin, end and the counts (step_size,
milestones, T_max, total_steps, periods) by the steps per epoch E, and the entry steps every iteration (rates such as
gamma are not rescaled). The values are computed by running these updates, as MMEngine does, and cached: exact
for any step and on resume; after the last window ends the value stays.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, NamedTuple, Sequence

from optreg.dialects.mmengine.param_scheduler import INF, default_ends, read_entries, windows
from optreg.errors import Collector, ConfigError, join_path
from optreg.schedules.engine import ABSOLUTE, FACTOR, MIXED, Schedule


@dataclass(frozen=True)
class Window:
    """One entry of the list, in iterations or epochs: its kind (`linear`, `cosine`, ...), its options (MMEngine's
    names, counts already converted), where it comes from (`param_scheduler[i]`), its window and unit."""

    kind: str
    options: Mapping[str, Any]
    path: str
    begin: int = 0
    end: int = INF
    by_epoch: bool = True

    @property
    def total(self) -> int:
        """end − begin − 1: the last step k of the window (Linear's, Constant's and Poly's total_iters)."""
        return self.end - self.begin - 1


def _eta_min(options: Mapping[str, Any], base: float) -> float:
    ratio = options.get("eta_min_ratio")
    return base * ratio if ratio is not None else (options.get("eta_min") or 0.0)


def _one_cycle(w: Window, k: int) -> float:
    """OneCycle's absolute value at step k: torch's two or three phases on float phase ends, as MMEngine has them."""
    o = w.options
    total = o.get("total_steps") or (w.end - w.begin)
    if k > total:
        raise ConfigError(f"MMEngine's OneCycleLR fails at its step {k + 1}: its total_steps is {total}; give an "
                          f"end of at most begin + total_steps + 1", w.path)
    peak = float(o.get("eta_max", 0.0))
    start = peak / o.get("div_factor", 25.0)
    low = start / o.get("final_div_factor", 1e4)
    pct = o.get("pct_start", 0.3)
    if o.get("three_phase"):
        phases = [(pct * total - 1, start, peak), (2 * pct * total - 2, peak, start), (total - 1, start, low)]
    else:
        phases = [(pct * total - 1, start, peak), (total - 1, peak, low)]
    first = 0.0
    for i, (last, a, b) in enumerate(phases):
        if k <= last or i == len(phases) - 1:
            x = (k - first) / (last - first)
            if o.get("anneal_strategy", "cos") == "linear":
                return (b - a) * x + a
            return b + (a - b) / 2.0 * (math.cos(math.pi * x) + 1)
        first = last
    raise AssertionError("unreachable")


def update(w: Window, k: int, v: float, base: float) -> float:
    """The value window `w` gives at its step k, from the current value v and the value b it was built over."""
    o, kind = w.options, w.kind
    if kind == "linear":
        s, e = o.get("start_factor", 1 / 3), o.get("end_factor", 1.0)
        return v * s if k == 0 else v * (1.0 + (e - s) / (w.total * s + (k - 1) * (e - s)))
    if kind == "constant":
        f = o.get("factor", 1 / 3)
        return v * f if k == 0 else v * (1.0 / f) if k == w.total else v
    if kind == "poly":
        eta = o.get("eta_min", 0.0)
        return v if k == 0 else (v - eta) * (1 - 1 / (w.total - k + 1)) ** o.get("power", 1.0) + eta
    if kind == "exponential":
        return v if k == 0 else v * o["gamma"]
    if kind == "step":
        return v if k == 0 or k % o["step_size"] else v * o.get("gamma", 0.1)
    if kind == "multistep":
        n = Counter(o["milestones"]).get(k, 0)
        return v * o.get("gamma", 0.1) ** n if n else v
    if kind == "cosine":
        t, eta = o.get("T_max") or (w.end - w.begin), _eta_min(o, base)
        if k == 0:
            return v
        if (k - 1 - t) % (2 * t) == 0:
            return v + (base - eta) * (1 - math.cos(math.pi / t)) / 2
        return (1 + math.cos(math.pi * k / t)) / (1 + math.cos(math.pi * (k - 1) / t)) * (v - eta) + eta
    if kind == "onecycle":
        return _one_cycle(w, k)
    if kind == "cosine_restart":
        ends = [sum(o["periods"][:i + 1]) for i in range(len(o["periods"]))]
        idx = next((i for i, e in enumerate(ends) if k < e), None)
        if idx is None:
            return v
        step = k - (ends[idx - 1] if idx else 0)
        weights = list(o.get("restart_weights", (1,)))
        eta = _eta_min(o, base)
        if step == 0:
            return base * weights[idx]
        period = o["periods"][idx]
        return (1 + math.cos(math.pi * step / period)) / (1 + math.cos(math.pi * (step - 1) / period)) * \
            (v - eta) + eta
    raise ConfigError(f"unknown MMEngine schedule kind {kind!r}", w.path)


class _Run:
    """MMEngine's schedulers stepped over one group (from value `base`): the values at iterations 0, 1, ..."""

    def __init__(self, windows: Sequence[Window], steps_per_epoch: int, base: float):
        self.windows, self.e = windows, steps_per_epoch
        self.clock = [-1] * len(windows)      # each entry's global step (_global_step), in its unit
        self.local = [-1] * len(windows)      # each entry's own step (last_step)
        self.bases: list[float] = []
        value, initial = base, base
        for w in windows:                     # built in list order; OneCycle sets the initial value later ones read
            if w.kind == "onecycle":
                initial = float(w.options.get("eta_max", 0.0)) / w.options.get("div_factor", 25.0)
            self.bases.append(initial)
        self.value = value
        for i in range(len(windows)):
            self.value = self._step(i, self.value)
        self.values = [self.value]

    def _step(self, i: int, v: float) -> float:
        w = self.windows[i]
        self.clock[i] += 1
        if w.begin <= self.clock[i] < w.end:
            self.local[i] += 1
            return float(update(w, self.local[i], v, self.bases[i]))
        return v

    def upto(self, step: int) -> float:
        while len(self.values) <= step:
            t = len(self.values)                  # the events after iteration t - 1
            v = self.values[-1]
            for i, w in enumerate(self.windows):
                if not w.by_epoch:
                    v = self._step(i, v)
            if t % self.e == 0:
                for i, w in enumerate(self.windows):
                    if w.by_epoch:
                        v = self._step(i, v)
            self.values.append(v)
        return self.values[step]


@dataclass(frozen=True)
class Chain(Schedule):
    """The entries of one group key (lr, momentum, weight_decay) of an MMEngine `param_scheduler` list, run as
    MMEngine's runner runs them (see the module doc); `steps_per_epoch` is the dataloader's length E."""

    windows: tuple[Window, ...]
    steps_per_epoch: int = 1
    _runs: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        kinds = {ABSOLUTE if w.kind == "onecycle" else FACTOR for w in self.windows}
        object.__setattr__(self, "values", kinds.pop() if len(kinds) == 1 else MIXED)

    @property
    def length(self) -> int | None:
        """The iteration after which no entry changes the value (None: an entry runs without end)."""
        ends = [w.end * (self.steps_per_epoch if w.by_epoch else 1) for w in self.windows]
        return None if any(w.end >= INF for w in self.windows) else max(ends)

    def apply(self, step: int, base: float) -> float:
        length = self.length
        step = min(step, length) if length is not None else step
        run = self._runs.get(base)
        if run is None:
            run = self._runs.setdefault(base, _Run(self.windows, self.steps_per_epoch, base))
        return run.upto(step)

    def __call__(self, step: int) -> float:
        return self.apply(step, 1.0)


class WrittenEnd(NamedTuple):
    """An entry's `end` as the list writes it (one left out, MMEngine's INF or the train loop's, is none): its key
    (`param_scheduler[1].end`), the value, in its unit, and the steps in that unit (E for an epoch-based entry,
    converted or not; 1 for an iteration-based one). The schedule linter warns of one past the run's end."""

    key: str
    end: int
    per: int


def group_key(key: str, names: Any) -> str | None:
    """The optimizer's group key an MMEngine key drives, given the optimizer's option names: momentum is `betas[0]`
    in an Adam-style optimizer (MMEngine's MomentumSchedulerMixin); None when it has neither."""
    if key != "momentum":
        return key if key in names or key == "lr" else None
    return "momentum" if "momentum" in names else "betas[0]" if "betas" in names else None


class ParamSchedulers(Schedule):
    """MMEngine's `param_scheduler` list as its runner steps it (the module doc), as one scheduler: the lr's
    `Chain` is this schedule's value, and the entries of momentum (an Adam's `betas[0]`) and weight_decay drive
    their keys beside it (`also_drives`, written by `ParamSchedulersLR`).

    Args:
        param_scheduler: MMEngine's list, each entry {type: LinearLR | MultiStepMomentum | ..., its options, begin,
            end, by_epoch, convert_to_iter_based}, as MMEngine's config writes it.
        max_epochs: the length of MMEngine's epoch-based train loop (train_cfg.max_epochs): the end of an entry
            that leaves it out (times E for an iteration-based entry).
        max_iters: the length of an iteration-based train loop (train_cfg.max_iters): the end of an
            iteration-based entry that leaves it out (an epoch-based one ends after one epoch).

    Without max_epochs or max_iters, an end left out is the run's (`param_scheduler.default_ends`). `run` is the
    plan's context (optreg.core.build.Context, given by planning: `reads_run`): its steps per epoch E (which an
    epoch-based entry needs; nominally 1 while a file is read without it), the run's length and the optimizer's
    option names (which key `momentum` is). `written_ends`: the entries' ends the list writes (`WrittenEnd`; an
    epoch-based one only once E is known), which the schedule linter reads against the run."""

    reads_run: ClassVar[bool] = True
    values: ClassVar[str] = MIXED   # each list's own: factors, absolute with a OneCycleLR entry, or both

    def __init__(self, param_scheduler: Any, max_epochs: int | None = None, max_iters: int | None = None, *,
                 run: Any = None) -> None:
        errors = Collector()
        entries = read_entries(param_scheduler, "param_scheduler", errors)
        if max_epochs is not None and max_iters is not None:
            errors.add("max_iters", "a train loop counts epochs (max_epochs) or iterations (max_iters): give one")
        errors.raise_if_any()
        if run is not None and not run.top:
            raise ConfigError("MMEngine's param_scheduler list is a whole schedule: give it as the scheduler "
                              "section itself, not inside another", "param_scheduler")
        per_epoch = run.steps_per_epoch if run is not None else None
        if per_epoch is None:
            epoch = next((e for e in entries if e.by_epoch), None)
            # an iteration-based entry without `end` in an epoch-based loop ends at MMEngine's max_iters, max_epochs
            # × len(train_dataloader): not known before the steps per epoch either
            open_end = next((e for e in entries if not e.by_epoch and e.end is None), None) \
                if max_epochs is not None else None
            if (epoch is not None or open_end is not None) and (run is None or run.final_run):
                from optreg.core.loop import GIVE_STEPS_PER_EPOCH

                if epoch is not None:
                    raise ConfigError(f"an epoch-based entry (MMEngine's default) needs the steps per epoch, "
                                      f"MMEngine's len(train_dataloader): {GIVE_STEPS_PER_EPOCH}",
                                      join_path(epoch.path, "by_epoch"))
                raise ConfigError(f"an iteration-based entry without end ends at the train loop's max_epochs "
                                  f"({max_epochs}) × the steps per epoch, MMEngine's len(train_dataloader): give end, "
                                  f"or {GIVE_STEPS_PER_EPOCH}", open_end.path)
            per_epoch = 1   # nominal: only the entries' own arithmetic is checked while the file is read
        ends = default_ends(max_epochs, max_iters, per_epoch, run.run_steps if run is not None else None)
        if per_epoch != (run.steps_per_epoch if run is not None else None) and max_epochs is not None:
            ends = (ends[0], INF)   # max_epochs × E iterations: not known before E
        found = windows(entries, per_epoch, ends, errors)
        names = run.option_names if run is not None and run.known_options else None
        self.keys: dict[str, str] = {}   # MMEngine's key -> the optimizer's (momentum unresolved without names)
        for e in entries:
            target = group_key(e.key, names) if names is not None else e.key
            if target is None:
                errors.add(join_path(e.path, "type"), f"the optimizer has no {e.key} to schedule" if e.key != "momentum"
                           else "the optimizer has neither momentum nor betas for a momentum schedule")
            self.keys[e.key] = target or e.key
        errors.raise_if_any()
        self.param_scheduler, self.steps_per_epoch = param_scheduler, per_epoch
        known = run is not None and run.steps_per_epoch is not None   # else E is nominal: no epoch in steps
        self.written_ends = tuple(WrittenEnd(join_path(e.path, "end"), e.end, per_epoch if e.by_epoch else 1)
                                  for e in entries if e.end is not None and e.end < INF and (known or not e.by_epoch))
        self.chains = {key: Chain(tuple(w for w, e in zip(found, entries) if e.key == key), per_epoch)
                       for key in dict.fromkeys(e.key for e in entries)}
        lr = self.chains.get("lr")
        self.values = lr.values if lr is not None else FACTOR

    @property
    def adapter_class(self) -> Any:
        """The torch scheduler that drives this schedule: ParamSchedulersLR when the list drives more than the lr."""
        if set(self.chains) == {"lr"}:
            return None
        from optreg.dialects.mmengine.driver import ParamSchedulersLR

        return ParamSchedulersLR

    @property
    def also_drives(self) -> dict[str, Chain]:
        """The optimizer's keys other than lr the list drives, each with its chain."""
        return {self.keys[k]: chain for k, chain in self.chains.items() if k != "lr"}

    @property
    def length(self) -> None:
        """None: MMEngine's values stay after the last window, whatever the run's length (no stage to end)."""
        return None

    def apply(self, step: int, base: float) -> float:
        lr = self.chains.get("lr")
        return lr.apply(step, base) if lr is not None else base

    def __repr__(self) -> str:
        return f"ParamSchedulers({self.param_scheduler!r})"


__all__ = ["Window", "Chain", "ParamSchedulers", "WrittenEnd", "group_key", "update"]

"""ScheduleLR: a closed-form Schedule driven through torch's LRScheduler interface.

Each step sets every param group's `key` (lr, momentum, betas[0], betas[1] or weight_decay) to the
schedule's value at `last_epoch`, computed from scratch, so resuming from `state_dict()` is exact and
a million steps do not drift. Under torch's ChainedScheduler (or after a user's change) a group's value
is scaled by the schedule's own change instead, as torch's chainable schedulers do. Factor schedules multiply the
group's base value, kept in the group as `initial_<name>` the way torch keeps `initial_lr`; absolute schedules set
the value directly.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Sequence

import torch
from torch.optim.lr_scheduler import LRScheduler

from optreg.errors import ConfigError, ErrorItem, closest, show
from optreg.core.float32 import FLOAT32_MAX
from optreg.core.options import FRESH
from optreg.schedules.engine import INITIAL_KEYS, KEYS, Schedule


def read_key(group: dict, key: str) -> Any:
    """group[key], where "betas[i]" reads one element of the betas tuple."""
    if key.startswith("betas["):
        return group["betas"][int(key[6])]
    return group[key]


def write_key(group: dict, key: str, value: float) -> None:
    """group[key] = value without aliasing tensors (a tensor lr is filled in place, as torch does)."""
    if key.startswith("betas["):
        betas = list(group["betas"])
        i = int(key[6])
        if isinstance(betas[i], torch.Tensor):
            betas[i].fill_(value)
        else:
            betas[i] = value
        group["betas"] = tuple(betas)
        return
    if isinstance(group[key], torch.Tensor):
        group[key].fill_(value)
    else:
        group[key] = value


def _scalar(value: Any) -> float:
    return float(value.item()) if isinstance(value, torch.Tensor) else float(value)


def group_lrs(optimizer: torch.optim.Optimizer) -> list[float | None]:
    """Each group's lr as a number, None where the optimizer has none (MindSpore's AdaFactor with relative_step
    computes its own step size): what get_last_lr() reports."""
    return [None if g["lr"] is None else _scalar(g["lr"]) for g in optimizer.param_groups]


def _mark_step_called(optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
    optimizer._opt_called = True


def _track_optimizer_step(optimizer: torch.optim.Optimizer) -> None:
    """Note each optimizer.step() (a step pre-hook), for torch's "scheduler stepped before optimizer" warning.

    A hook, not a wrapper of `optimizer.step` as torch's schedulers install: under torch.compile(opt.step) a
    wrapper in a user file is re-entered at each graph break (a RecursionError). The cost: a compiled step
    does not set the flag, so torch's warning can show once for a correctly ordered loop."""
    if not getattr(optimizer, "_optreg_tracks_step", False):
        optimizer.register_step_pre_hook(_mark_step_called)
        optimizer._optreg_tracks_step = True


class ScheduleLR(LRScheduler):
    """torch LRScheduler over closed-form schedules (one for all groups, or one per group).

    step(epoch=None) advances last_epoch (or jumps to `epoch`: exact, since the value is closed form);
    get_last_lr() returns the groups' lr; state_dict() holds last_epoch, the base values and the key
    (the schedules themselves are configuration and are rebuilt from it, not pickled).
    """

    def __init__(self, optimizer: torch.optim.Optimizer, schedule: Schedule | Sequence[Schedule], *,
                 key: str = "lr", last_epoch: int = FRESH) -> None:
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if key not in KEYS:
            raise ConfigError([ErrorItem("key", f"must be one of {', '.join(KEYS)}, got {show(key)}", None,
                                         closest(key, KEYS) if isinstance(key, str) else None)])
        groups = optimizer.param_groups
        schedules = list(schedule) if isinstance(schedule, (list, tuple)) else [schedule] * len(groups)
        if len(schedules) != len(groups):
            raise ConfigError(f"expected one schedule per parameter group ({len(groups)}), got {len(schedules)}",
                              "schedulers")
        for i, group in enumerate(groups):
            try:
                read_key(group, key)
            except (KeyError, IndexError, TypeError):
                raise ConfigError(f"parameter group {i} has no {key!r} to schedule", "key") from None
        self.optimizer = optimizer
        self.key = key
        self.initial_key = INITIAL_KEYS[key]
        if last_epoch == FRESH:
            for group in groups:
                value = read_key(group, key)
                group.setdefault(self.initial_key, value.clone() if isinstance(value, torch.Tensor) else value)
        else:
            missing = [i for i, g in enumerate(groups) if self.initial_key not in g]
            if missing:
                raise ConfigError(f"resuming with last_epoch={last_epoch} needs {self.initial_key!r} in every "
                                  f"parameter group (missing in {missing}); build with last_epoch={FRESH} and "
                                  f"load_state_dict() instead", "last_epoch")
        self.base_values = [_scalar(g[self.initial_key]) for g in groups]
        self.base_lrs = list(self.base_values) if key == "lr" else [g.get("initial_lr", g["lr"]) for g in groups]
        self.schedules = schedules
        self._bind()
        self.last_epoch = last_epoch
        _track_optimizer_step(optimizer)
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def _bind(self) -> None:
        default = self.optimizer.defaults.get(self.key) if not self.key.startswith("betas") else None
        try:
            default = _scalar(default) if default is not None else None
        except (TypeError, ValueError):
            default = None
        self._bound = [s.bind(self.base_values, default) for s in self.schedules]
        #: per group, whether its schedule leaves it alone (`keeps`: Model Zoo's groups outside a scheduler's
        #: tags): its value is neither computed nor written, whatever other schedulers make of it
        self._kept = [bool(getattr(s, "keeps", False)) for s in self.schedules]

    def get_lr(self) -> list[float]:
        """The values of `key` for every group at last_epoch (named get_lr as torch's API requires).

        A value that cannot be computed or used (an overflow, a division by zero, not finite, beyond float32)
        is a ConfigError naming the schedule and the step, never an ArithmeticError from inside it."""
        values = []
        for schedule, base, kept in zip(self._bound, self.base_values, self._kept):
            if kept:   # a schedule that leaves its group alone: its closed form is the base value
                values.append(base)
                continue
            try:
                value = schedule.apply(self.last_epoch, base)
                bad = not math.isfinite(value) or abs(value) > FLOAT32_MAX
            except ArithmeticError as exc:
                value, bad = exc, True
            if bad:
                raise ConfigError(f"{type(schedule).__name__} gives no usable {self.key} at step {self.last_epoch} "
                                  f"({str(value)[:60]})")
            values.append(value)
        return values

    def _get_closed_form_lr(self) -> list[float]:
        return self.get_lr()

    def step(self, epoch: int | None = None) -> None:
        if self._step_count == 1 and not self._is_initial:
            if not getattr(self.optimizer, "_opt_called", False):
                warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`.",
                              UserWarning, stacklevel=2)
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        """Advance (or jump to `epoch`) and write the values; SequentialLR calls this at its milestones."""
        self.last_epoch = self.last_epoch + 1 if epoch is None else int(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        closed = list(values)
        if epoch is None:
            values = self._chained(values)
        for group, value, kept in zip(self.optimizer.param_groups, values, self._kept):
            if not kept:
                write_key(group, self.key, value)
        # get_last_lr() reports the groups' lr as they are, under a schedule of another key too
        self._last_lr = group_lrs(self.optimizer)
        self._last_values = list(values)
        self._last_closed = closed

    def _chained(self, values: list[float]) -> list[float]:
        """Compose with whatever else scales the same key, as torch's chainable schedulers do.

        A group whose value is this schedule's own value of the last step (at step 0: its initial value)
        gets the closed form, exactly. One that another scheduler (torch's ChainedScheduler) or the user
        has scaled gets its value times this schedule's change: v · f(t)/f(t-1), as torch's own do."""
        before = self.base_values if self.last_epoch == 0 else getattr(self, "_last_closed", None)
        if before is None:
            return values
        out = list(values)
        for i, (group, was, kept) in enumerate(zip(self.optimizer.param_groups, before, self._kept)):
            if not kept:
                now = _scalar(read_key(group, self.key))
                if now != was and was != 0:
                    out[i] = now * (values[i] / was)
        return out

    def get_last_value(self) -> list[float]:
        """The last values written to `key` (get_last_lr() is the groups' lr, whatever the key); a group whose
        schedule leaves it alone (`keeps`) gives its base value."""
        return list(self._last_values)

    def state_dict(self) -> dict[str, Any]:
        return {"key": self.key, "last_epoch": self.last_epoch, "_step_count": self._step_count,
                "base_values": list(self.base_values), "_last_lr": list(self._last_lr),
                "_last_values": list(self._last_values), "_last_closed": list(self._last_closed)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if state_dict.get("key", self.key) != self.key:
            raise ConfigError(f"state_dict schedules {state_dict['key']!r}, this scheduler {self.key!r}", "key")
        if len(state_dict["base_values"]) != len(self.schedules):
            raise ConfigError(f"state_dict has {len(state_dict['base_values'])} parameter groups, the optimizer "
                              f"{len(self.schedules)}", "base_values")
        self.last_epoch = int(state_dict["last_epoch"])
        self._step_count = int(state_dict.get("_step_count", self._step_count))
        self.base_values = [float(v) for v in state_dict["base_values"]]
        if self.key == "lr":
            self.base_lrs = list(self.base_values)
        self._last_lr = list(state_dict.get("_last_lr", self._last_lr))
        self._last_values = list(state_dict.get("_last_values", self._last_values))
        self._last_closed = list(state_dict.get("_last_closed", self._last_values))
        self._bind()

    def __repr__(self) -> str:
        return f"ScheduleLR(key={self.key!r}, last_epoch={self.last_epoch}, schedules={self.schedules!r})"


__all__ = ["ScheduleLR", "KEYS", "group_lrs", "read_key", "write_key"]

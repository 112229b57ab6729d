"""Schedule plots: lr (and momentum, betas, weight decay when a schedule moves them) of every param group.

`trace()` steps the built scheduler N times and records each group's values as the optimizer applies them (a
dynamic lr, MindSpore's per-step list or schedule, read from its table at the step); `png()` draws them with
matplotlib (the `plot` extra); `sparklines()` prints them as terminal sparklines when matplotlib is missing or not
wanted; `csv_text()` writes them as CSV (`optreg plot --csv`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from optreg.errors import counted
from optreg.schedules.engine import KEYS
BARS = "▁▂▃▄▅▆▇█"
STYLES = ("-", "--", ":", "-.")
SPARK_MIN = 8       # the shortest sparkline `sparklines` fits into the columns


@dataclass
class Trace:
    """Values per key, per group, per step (step 0 is before the first scheduler step)."""

    steps: int
    groups: list[str]
    values: dict[str, list[list[float]]] = field(default_factory=dict)
    title: str = ""
    notes: list[str] = field(default_factory=list)

    def moving(self) -> list[str]:
        """lr always, then each other key that changes in some group."""
        return [k for k in KEYS if k in self.values and (k == "lr" or any(len(set(s)) > 1 for s in self.values[k]))]


def _read(group: dict[str, Any], key: str) -> float | None:
    if key.startswith("betas["):
        betas = group.get("betas")
        value = betas[int(key[6])] if isinstance(betas, (tuple, list)) and len(betas) > int(key[6]) else None
    else:
        value = group.get(key)
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value.item() if hasattr(value, "item") else value)
    except (TypeError, ValueError):
        return None


def applied(optimizer: Any, index: int, key: str, step: int) -> float | None:
    """The value of `key` that the (step+1)-th `optimizer.step()` applies to group `index`, read before that step: a
    dynamic lr (MindSpore's per-step list, schedule or callable) from its table at global step `step`, as the
    optimizer reads it; else the group's value."""
    table = optimizer.lr_schedule(index) if key == "lr" and hasattr(optimizer, "lr_schedule") else None
    if table is not None:
        from optreg.core.optimizer import lr_at

        return lr_at(table, step)
    return _read(optimizer.param_groups[index], key)


def _spelled(spec: Any) -> str | None:
    """A scheduler section as the config names it: `sequential(LinearLR, CosineAnnealingLR)`; Model Zoo's
    `{SequentialLR: {schedulers: [...]}}` form alike; None when the section names nothing."""
    if isinstance(spec, (list, tuple)):
        names = [n for n in map(_spelled, spec) if n]
        return ", ".join(names) or None
    if not isinstance(spec, dict):
        return None
    if isinstance(spec.get("name"), str):
        name, body = spec["name"], spec
    elif len(spec) == 1 and isinstance(next(iter(spec)), str) and isinstance(next(iter(spec.values())), dict):
        (name, body), = spec.items()
    else:
        return None
    inner = _spelled(body.get("schedulers"))
    return f"{name}({inner})" if inner else name


def config_names(built: Any) -> tuple[str, str | None]:
    """(optimizer, scheduler) as the config spells them, e.g. ("AdamW", "sequential(LinearLR, CosineAnnealingLR)");
    the built classes' names where the config is not at hand."""
    experiment = getattr(built, "experiment", None)
    section = getattr(experiment, "modelzoo", None)
    if section is not None:
        optimizer, scheduler = section.name, _spelled([spec for spec, _ in section.schedulers])
    else:
        optimizer = (getattr(experiment, "optimizer", None) or {}).get("name")
        scheduler = _spelled(getattr(experiment, "scheduler", None))
    if not isinstance(optimizer, str):
        optimizer = type(built.optimizer).__name__
    if built.scheduler is None:
        return optimizer, None
    key = getattr(built.scheduler, "key", "lr")
    return optimizer, (scheduler or type(built.scheduler).__name__) + (f" (drives {key})" if key != "lr" else "")


def group_label(row: dict[str, Any]) -> str:
    """A legend's name for one parameter group (a row of group_table()): its rule's selectors (`*.bias, *norm*`,
    `modules: BatchNorm2d`), "other parameters" for the default group, else its first parameter names; then its
    layer and "no weight decay" where they set it apart."""
    parts = []
    for key, value in row["selectors"].items():
        text = ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
        parts.append(text if key == "params" else f"{key}: {text}")
    if parts:
        label = "; ".join(parts)
    elif row["rule"] == "default":
        label = "other parameters"
    else:
        names = row["names"]
        label = ", ".join(names[:2]) + (", …" if len(names) > 2 else "")
    extra = [f"layer {row['layer']}"] if row.get("layer") is not None else []
    if row.get("no_weight_decay"):
        extra.append("no weight decay")
    return label + (f" ({', '.join(extra)})" if extra else "")


def group_labels(rows: list[dict[str, Any]]) -> list[str]:
    """group_label() of each row; labels that two groups share get their group's index."""
    labels = [group_label(row) for row in rows]
    return [f"{label} [group {i}]" if labels.count(label) > 1 else label for i, label in enumerate(labels)]


def trace(built: Any, steps: int) -> Trace:
    """Step `built.scheduler` (from optreg.build) `steps - 1` times without training; a metric-driven scheduler
    (ReduceLROnPlateau) sees a metric that never improves, so it shows its fastest decay."""
    optimizer, scheduler = built.optimizer, built.scheduler
    groups = group_labels([row for row in built.group_table() if row["rule"] != "frozen"])
    optimizer_name, scheduler_name = config_names(built)
    title = optimizer_name + (f" + {scheduler_name}" if scheduler_name else "")
    out = Trace(steps, groups, {}, title)
    present = [k for k in KEYS if all(_read(g, k) is not None for g in optimizer.param_groups)]
    out.values = {k: [[] for _ in optimizer.param_groups] for k in present}
    plateau = scheduler is not None and type(scheduler).__name__ == "ReduceLROnPlateau"
    if plateau:
        out.notes.append("ReduceLROnPlateau steps on a metric; drawn with a metric that never improves")
    run = getattr(built, "run", None)
    run = replace(run, steps=steps) if run is not None else None   # the run plotted
    for step in range(steps):
        at = run.optimizer_step(step) if run is not None else step   # a dynamic lr counts optimizer steps
        for key in present:
            for i in range(len(optimizer.param_groups)):
                out.values[key][i].append(applied(optimizer, i, key, at))
        if scheduler is not None and step < steps - 1:
            with warnings.catch_warnings():  # no optimizer.step() here: only the schedule is wanted
                warnings.simplefilter("ignore")
                scheduler.step(1.0) if plateau else scheduler.step()
    return out


def csv_text(data: Trace) -> str:
    """The trace as CSV: a header `step,group,key,value`, then one row per step (0..N-1), group (the 0-based index
    of group_table()) and key (`lr`, then each other key that a schedule moves), ordered by step, group and key;
    `value` is what the (step+1)-th optimizer.step() applies, written exactly (Python's shortest repr)."""
    keys = sorted(data.moving())
    lines = ["step,group,key,value"]
    for step in range(data.steps):
        for group in range(len(data.groups)):
            lines += [f"{step},{group},{key},{data.values[key][group][step]!r}" for key in keys]
    return "\n".join(lines) + "\n"


def png(data: Trace, path: str | Path, log: bool = False) -> Path:
    """Draw the trace (figure()) into a PNG file. Needs matplotlib."""
    path = Path(path)
    figure(data, log).savefig(path, dpi=110)
    return path


def figure(data: Trace, log: bool = False) -> Any:
    """The matplotlib Figure of the trace: one panel per moving key, one line per group labelled by its rule's
    selectors, the optimizer and scheduler as the config names them in the title; `log`: logarithmic y axes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    keys = data.moving()
    fig = Figure(figsize=(8, 2.4 * len(keys) + 0.6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(keys), 1, sharex=True, squeeze=False)[:, 0]
    x = list(range(data.steps))
    for ax, key in zip(axes, keys):
        for i, (label, series) in enumerate(zip(data.groups, data.values[key])):  # dashes keep equal lines visible
            ax.plot(x, series, label=label, linewidth=1.8, linestyle=STYLES[i % len(STYLES)])
        ax.set_ylabel(key)
        ax.grid(True, alpha=0.3)
        if log:     # values <= 0 (a warmup's first lr, an undecayed group's 0) are left out of a log axis
            ax.set_yscale("log", nonpositive="mask")
        else:
            ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 4))
    axes[0].legend(loc="best", fontsize="small")
    axes[-1].set_xlabel("step")
    fig.suptitle(data.title + (f"\n{'; '.join(data.notes)}" if data.notes else ""), fontsize="medium")
    return fig


def _sample(series: list[float], width: int) -> list[float]:
    if len(series) <= width:
        return list(series)
    return [series[round(i * (len(series) - 1) / (width - 1))] for i in range(width)]


def sparkline(series: list[float], width: int = 60) -> str:
    """`▁▂▃▅▇█…` over the series' own range (a constant series is a flat line)."""
    points = _sample(series, width)
    low, high = min(points), max(points)
    if not all(math.isfinite(v) for v in points):
        return "?" * len(points)
    if high == low:
        return BARS[0] * len(points)
    return "".join(BARS[min(len(BARS) - 1, int((v - low) / (high - low) * len(BARS)))] for v in points)


def sparklines(data: Trace, width: int | None = 60, columns: int = 80) -> str:
    """The trace as text: per moving key and group, first value, sparkline, last value, range. `width`: the
    sparklines' length; None fits every line into `columns`. A group's label longer than the line leaves it beside a
    sparkline of SPARK_MIN (a reader's rule listing its parameters by name) keeps its two ends around `…`, as a name
    in a table does."""
    from optreg.cli_render import NAME_MIN, shorten

    lines = [f"{data.title} over {counted(data.steps, 'step')}"] + [f"note: {n}" for n in data.notes]
    rows = [(key, [(label, f"  {series[0]:<9.3g} ", series,
                    f" {series[-1]:<9.3g} [min {min(series):.3g}, max {max(series):.3g}]")
                   for label, series in zip(data.groups, data.values[key])]) for key in data.moving()]
    beside = max(2 + len(first) + len(tail) for _, parts in rows for _, first, _, tail in parts)
    label_width = min(max(len(g) for g in data.groups), max(NAME_MIN, columns - beside - SPARK_MIN))
    if width is None:
        width = max(SPARK_MIN, columns - beside - label_width)
    for key, parts in rows:
        lines.append(f"{key}:")
        lines += [f"  {shorten(label, label_width):<{label_width}}{first}{sparkline(series, width)}{tail}"
                  for label, first, series, tail in parts]
    return "\n".join(lines)


def have_matplotlib() -> bool:
    """Whether matplotlib is installed (found, not imported: an import takes a second)."""
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None

"""`optreg plot`: the traced values against the schedules' formulas, the PNG, and the sparkline fallback."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

import optreg
from optreg import plot
from optreg.cli import main
from optreg.train import make_model

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "examples" / "quickstart.yaml"
WD_SCHEDULE = """
optimizer:
  name: AdamW
  lr: 1.0e-3
  weight_decay: 0.1
  param_groups:
    - params: ["*.bias"]
      lr: 5.0e-4
      weight_decay: 0.0
scheduler:
  name: chained
  key: weight_decay
  schedulers:
    - {name: LinearLR, start_factor: 1.0, end_factor: 0.1, total_iters: 50}
train: {steps: 80}
"""


def traced(config, steps: int) -> plot.Trace:
    return plot.trace(optreg.build(config, make_model(8, 1, 0)), steps)


def test_quickstart_lr_follows_warmup_then_cosine():
    data = traced(QUICKSTART, 200)
    base, eta_min = 3.0e-3, 1.0e-5

    def expected(t: int) -> float:       # LinearLR(0.01 -> 1, 20 steps), then CosineAnnealingLR(T_max=180)
        if t < 20:
            return base * (0.01 + 0.99 * t / 20)
        return eta_min + (base - eta_min) * (1 + math.cos(math.pi * (t - 20) / 180)) / 2

    assert data.moving() == ["lr"] and len(data.groups) == 2
    for series in data.values["lr"]:
        assert len(series) == 200
        assert max(abs(v - expected(t)) for t, v in enumerate(series)) < 1e-12


def test_momentum_is_drawn_when_the_schedule_cycles_it():
    config = {"optimizer": {"name": "SGD", "lr": 0.1, "momentum": 0.9},
              "scheduler": {"name": "OneCycleLR", "max_lr": 0.1, "total_steps": 100}}
    data = traced(config, 100)
    assert data.moving() == ["lr", "momentum"]
    momentum = data.values["momentum"][0]
    assert momentum[0] == pytest.approx(0.95) and min(momentum) == pytest.approx(0.85, abs=1e-4)
    assert traced({"optimizer": {"name": "SGD", "momentum": 0.9},
                   "scheduler": {"name": "StepLR", "step_size": 5}}, 20).moving() == ["lr"]


def test_weight_decay_is_drawn_per_group_when_scheduled():
    data = traced(WD_SCHEDULE, 80)
    assert data.moving() == ["lr", "weight_decay"]
    bias, rest = data.values["weight_decay"]
    assert bias == [0.0] * 80
    expected = [0.1 * (1.0 + (0.1 - 1.0) * min(t, 50) / 50) for t in range(80)]
    assert max(abs(a - b) for a, b in zip(rest, expected)) < 1e-12
    assert data.values["lr"] == [[5.0e-4] * 80, [1.0e-3] * 80]
    assert data.title == "AdamW + chained(LinearLR) (drives weight_decay)"


def test_plateau_schedule_is_drawn_with_a_metric_that_never_improves():
    data = traced({"optimizer": {"name": "SGD", "lr": 1.0},
                   "scheduler": {"name": "ReduceLROnPlateau", "patience": 2, "factor": 0.5}}, 12)
    lr = data.values["lr"][0]
    assert data.notes and all(b <= a for a, b in zip(lr, lr[1:])) and lr[-1] < lr[0]


def test_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    out = tmp_path / "lr.png"
    config = tmp_path / "wd.yaml"
    config.write_text(WD_SCHEDULE)
    assert main(["plot", str(config), "--steps", "60", "-o", str(out)]) == 0
    assert "lr, weight_decay of 2 group(s), 60 steps" in capsys.readouterr().out
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    height, width = imread(out).shape[:2]
    assert width > 600 and height > 400      # two panels


def test_text_flag_prints_sparklines(capsys, tmp_path):
    assert main(["plot", str(QUICKSTART), "--steps", "200", "--text", "--width", "40", "-o",
                 str(tmp_path / "no.png")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "AdamW + sequential(LinearLR, CosineAnnealingLR) over 200 steps" and out[1] == "lr:"
    rows = out[2:]
    assert len(rows) == 2 and rows[0].lstrip().startswith("*.bias, *norm* ")
    assert rows[1].lstrip().startswith("other parameters ")
    line = next(part for part in rows[0].split() if set(part) <= set(plot.BARS))
    assert len(line) == 40 and line[0] == plot.BARS[0] and plot.BARS[-1] in line
    assert not (tmp_path / "no.png").exists()


def test_without_matplotlib_it_falls_back_to_sparklines(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)      # `import matplotlib` raises ImportError
    assert not plot.have_matplotlib()
    assert main(["plot", "optimizer=sgd", "scheduler=step", "scheduler.step_size=3", "--steps", "9",
                 "-o", str(tmp_path / "lr.png")]) == 0
    captured = capsys.readouterr()
    assert "matplotlib is not installed" in captured.err
    assert "SGD + StepLR over 9 steps" in captured.out and not (tmp_path / "lr.png").exists()


def test_a_long_group_label_keeps_its_ends_within_the_columns():
    # a reader's rule lists its parameters by name (MindFormers' weight-decay group): its label was the whole list,
    # a 230-column line on an 80-column terminal
    names = [f"blocks.{i}.norm.{p}" for i in range(8) for p in ("weight", "bias")]
    label = ", ".join(names)
    series = [1e-3 * t / 19 for t in range(20)]
    data = plot.Trace(20, [label, "other parameters"], {"lr": [series, series]}, "AdamW")
    rows = plot.sparklines(data, None, 80).splitlines()[2:]
    assert [len(row) for row in rows] == [80, 80]
    head = rows[0].split("  ")[1]
    assert head == label[:14] + "…" + label[-14:] and rows[1].split("  ")[1].strip() == "other parameters"
    assert plot.sparklines(data, 40, 80).splitlines()[2].split("  ")[1] == head   # the sparkline's width aside


def test_sparkline():
    assert plot.sparkline([float(v) for v in range(8)], 8) == plot.BARS
    assert plot.sparkline([0.5] * 5) == plot.BARS[0] * 5
    long = plot.sparkline([float(v) for v in range(1000)], 10)
    assert len(long) == 10 and long[0] == plot.BARS[0] and long[-1] == plot.BARS[-1]


def test_bad_arguments(capsys):
    with pytest.raises(SystemExit) as info:
        main(["plot", str(QUICKSTART), "--steps", "0"])
    assert info.value.code == 2 and "must be >= 1, got 0" in capsys.readouterr().err

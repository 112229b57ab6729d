"""Smoke runs of the benchmarks whose figures are in the README (a tiny model, one round)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def _load(name: str, monkeypatch):
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_optimizer_benchmark_quick_run(capsys, monkeypatch):
    bench = _load("bench_optimizers", monkeypatch)
    text = bench.main(["--quick", "--only", "oneflow.Adam*"])
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| oneflow.")]
    assert [r[0] for r in rows] == ["| oneflow.Adam", "| oneflow.AdamW"]
    # three executions, their roofline shares, × AdamW, compile time; contiguous: ms, roofline, × AdamW, copied × AdamW
    assert all(len(r) == 14 and all(cell.strip(" |") for cell in r) for r in rows)
    assert "| torch.AdamW (fused) |" in text and "roofline" in text
    assert capsys.readouterr().out.strip() == text

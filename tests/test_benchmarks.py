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
    main, loop = text.split("torch's for-loop implementation")
    rows = [line.split(" | ") for line in main.splitlines() if line.startswith("| oneflow.")]
    assert [r[0] for r in rows] == ["| oneflow.Adam", "| oneflow.AdamW"]
    # three executions, their roofline shares, × AdamW, first step and compile time; contiguous: ms, roofline,
    # × AdamW, copied × AdamW
    assert all(len(r) == 15 and all(cell.strip(" |") for cell in r) for r in rows)
    assert "| torch.AdamW (fused) |" in text and "roofline" in text
    # oneflow.AdamW's eager step beside torch's for-loop AdamW, timed in the same round
    (pair,) = [line.split(" | ") for line in loop.splitlines() if line.startswith("| oneflow.")]
    assert pair[:3] == ["| oneflow.AdamW", "torch.AdamW (for-loop)", "12"] and float(pair[-1].strip(" |")) > 0
    assert "| torch.AdamW (for-loop) | 12 |" in main
    assert capsys.readouterr().out.strip() == text


def test_the_roofline_counts_a_gradient_written_in_place(monkeypatch):
    """Cerebras' Rprop writes the masked gradient back into p.grad: one more full-size store than torch's."""
    bench = _load("bench_optimizers", monkeypatch)
    import torch

    import optreg

    params = [torch.nn.Parameter(torch.ones(3, 5)), torch.nn.Parameter(torch.ones(7))]
    weights = sum(p.nbytes for p in params)
    for p in params:
        p.grad = torch.ones_like(p)
    ours, theirs = optreg.configure_optimizer("cerebras.Rprop", params), torch.optim.Rprop(params)
    ours.step(), theirs.step()
    # both: read w and g, write w, read and write prev and step_size
    assert bench.min_bytes(theirs, params) == 3 * weights + 2 * 2 * weights
    assert bench.min_bytes(ours, params) == 4 * weights + 2 * 2 * weights

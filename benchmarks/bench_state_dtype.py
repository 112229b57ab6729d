"""Optimizer state in fewer bytes: a step of a first-party optimizer, fused over a contiguous group, with
float32, bfloat16 and int8 state, in the same rounds as torch's fused AdamW (and torchao's / bitsandbytes'
8-bit AdamW where installed), on the parameters of `bench_optimizers` (25M float32 in 100 tensors).

    python benchmarks/bench_state_dtype.py [--quick] [--only 'oneflow.AdamW'] [--rounds 5]

Each round times every optimizer once (median of `--steps` steps after a warm-up that compiles); a row
gives the median over rounds, × torch fused AdamW (its time over ours, from the same rounds), and the
bytes of optimizer state per parameter.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

import optreg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_optimizers import OPTIONS, first_party, make_params  # noqa: E402

STATE_DTYPES = (None, "bfloat16", "int8")


def _copy(params: list[torch.Tensor]) -> list[torch.nn.Parameter]:
    out = []
    for p in params:
        q = torch.nn.Parameter(p.detach().clone())
        q.grad = p.grad.clone()
        out.append(q)
    return out


def peers(params: list[torch.Tensor]) -> dict[str, torch.optim.Optimizer]:
    """torch's fused AdamW, and the 8-bit AdamWs of torchao and bitsandbytes where they import."""
    out: dict[str, torch.optim.Optimizer] = {"torch.AdamW (fused)": torch.optim.AdamW(_copy(params), fused=True)}
    if importlib.util.find_spec("torchao") is not None:
        try:
            from torchao.optim import AdamW8bit

            out["torchao AdamW8bit"] = AdamW8bit(_copy(params))
        except Exception as exc:  # pragma: no cover - depends on what is installed
            print(f"torchao AdamW8bit unavailable: {exc}", file=sys.stderr)
    if importlib.util.find_spec("bitsandbytes") is not None:
        try:
            import bitsandbytes as bnb

            out["bitsandbytes AdamW8bit"] = bnb.optim.AdamW8bit(_copy(params))
        except Exception as exc:  # pragma: no cover
            print(f"bitsandbytes AdamW8bit unavailable: {exc}", file=sys.stderr)
    return out


def ours(name: str, params: list[torch.Tensor]) -> dict[str, torch.optim.Optimizer]:
    """`name` fused and contiguous with each state dtype."""
    options = OPTIONS.get(name, {})
    return {f"{name} {sd or 'float32'}": optreg.configure_optimizer(
        name, _copy(params), fused=True, contiguous_params=True, state_dtype=sd, **options) for sd in STATE_DTYPES}


def _median_step(opt: torch.optim.Optimizer, steps: int) -> float:
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        opt.step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _bytes(value: Any) -> int:
    """The bytes a state value holds (a tensor subclass, torchao's 8-bit state: its inner tensors)."""
    if not isinstance(value, torch.Tensor):
        return 0
    if type(value) is not torch.Tensor and hasattr(value, "__tensor_flatten__"):
        return sum(_bytes(getattr(value, name)) for name in value.__tensor_flatten__()[0])
    return value.numel() * value.element_size()


def bytes_per_param(opt: torch.optim.Optimizer) -> float:
    params = [p for g in opt.param_groups for p in g["params"]]
    total = 0
    for p in params:
        state = opt.state.get(p, {})
        total += sum(_bytes(v) for v in state.values()) if isinstance(state, dict) else 0
    return total / sum(p.numel() for p in params)


def run(names: list[str], rounds: int, steps: int, quick: bool) -> str:
    params = make_params(100, quick)
    opts: dict[str, torch.optim.Optimizer] = peers(params)
    for name in names:
        opts.update(ours(name, params))
    for opt in opts.values():   # warm-up: state, compiles, pages
        for _ in range(2):
            opt.step()
    samples: dict[str, list[float]] = {k: [] for k in opts}
    ratios: dict[str, list[float]] = {k: [] for k in opts}
    for _ in range(rounds):
        base = _median_step(opts["torch.AdamW (fused)"], steps)
        for key, opt in opts.items():
            t = base if key == "torch.AdamW (fused)" else _median_step(opt, steps)
            samples[key].append(t)
            ratios[key].append(base / t)
    n = sum(p.numel() for p in params)
    lines = [f"{n / 1e6:.1f}M float32 parameters in 100 tensors, {torch.get_num_threads()} threads, {rounds} rounds "
             f"of the median of {steps} steps; × torch fused AdamW from the same rounds",
             "", "| optimizer | ms | × torch fused AdamW | state bytes / param |", "|---|---:|---:|---:|"]
    for key, opt in opts.items():
        lines.append(f"| {key} | {statistics.median(samples[key]) * 1e3:.2f} | "
                     f"{statistics.median(ratios[key]):.2f} | {bytes_per_param(opt):.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="0.2M parameters, one round (smoke run)")
    parser.add_argument("--only", default="oneflow.AdamW", help="fnmatch pattern over qualified names")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args(argv)
    names = [n for n in first_party(args.only) if n != "mindspore.LARS"]   # LARS wraps another optimizer
    text = run(names, 1 if args.quick else args.rounds, 2 if args.quick else args.steps, args.quick)
    print(text)
    return text


if __name__ == "__main__":
    main()

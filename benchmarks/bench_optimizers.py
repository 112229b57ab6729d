"""One optimizer step of each first-party OneFlow / Cerebras optimizer against the closest torch optimizer.

Every optimizer steps the same 25M float32 parameters (~100 tensors) on the CPU. The table gives the
median time of one step (ours and torch's steps alternate, so both see the same machine load), and the bytes a step must move at least (read w and g, write w, read and write
each state tensor) per second, as a share of the machine's memory bandwidth, measured in the same run
by a large in-place add (read a, read b, write a). Prints markdown.

    python benchmarks/bench_optimizers.py [--repeat 5] [--warmup 1] [--out table.md]
    python benchmarks/bench_optimizers.py --quick      # small model, one timed step: a smoke run
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Any

import torch

import optreg

# (dialect, name): (options, closest torch optimizer, its options)
CASES: dict[tuple[str, str], tuple[dict[str, Any], str, dict[str, Any]]] = {
    ("oneflow", "SGD"): ({"lr": 1e-3, "momentum": 0.9}, "SGD", {"lr": 1e-3, "momentum": 0.9}),
    ("oneflow", "Adam"): ({}, "Adam", {}),
    ("oneflow", "AdamW"): ({"weight_decay": 0.01}, "AdamW", {"weight_decay": 0.01}),
    ("oneflow", "Adagrad"): ({}, "Adagrad", {}),
    ("oneflow", "LAMB"): ({"weight_decay": 0.01}, "AdamW", {"weight_decay": 0.01}),
    ("oneflow", "RMSprop"): ({}, "RMSprop", {}),
    ("cerebras", "ASGD"): ({}, "ASGD", {}),
    ("cerebras", "Adadelta"): ({}, "Adadelta", {}),
    ("cerebras", "Adafactor"): ({"lr": 1e-2}, "Adafactor", {"lr": 1e-2}),
    ("cerebras", "Adagrad"): ({}, "Adagrad", {}),
    ("cerebras", "Adam"): ({}, "Adam", {}),
    ("cerebras", "AdamW"): ({"weight_decay": 0.01}, "AdamW", {"weight_decay": 0.01}),
    ("cerebras", "Adamax"): ({}, "Adamax", {}),
    ("cerebras", "Lamb"): ({"weight_decay": 0.01}, "AdamW", {"weight_decay": 0.01}),
    ("cerebras", "NAdam"): ({}, "NAdam", {}),
    ("cerebras", "RAdam"): ({}, "RAdam", {}),
    ("cerebras", "RMSprop"): ({"momentum": 0.9}, "RMSprop", {"momentum": 0.9}),
    ("cerebras", "Rprop"): ({}, "Rprop", {}),
    ("cerebras", "SGD"): ({"lr": 1e-3, "momentum": 0.9}, "SGD", {"lr": 1e-3, "momentum": 0.9}),
}


def make_params(quick: bool) -> list[torch.Tensor]:
    """25.0M float32 parameters: 96 matrices 512x508 and 8 vectors of 512 (quick: 0.2M in 12 tensors)."""
    g = torch.Generator().manual_seed(0)
    shapes = [(128, 127)] * 10 + [(512,)] * 2 if quick else [(512, 508)] * 96 + [(512,)] * 8
    params = [torch.nn.Parameter(0.1 * torch.randn(s, generator=g)) for s in shapes]
    for p in params:
        p.grad = 0.01 * torch.randn(p.shape, generator=g)
    return params


def clone(params: list[torch.Tensor]) -> list[torch.Tensor]:
    out = []
    for p in params:
        q = torch.nn.Parameter(p.detach().clone())
        q.grad = p.grad.clone()
        out.append(q)
    return out


def bandwidth(quick: bool, repeat: int) -> float:
    """Bytes per second of `a += b` on two large float32 tensors (best of `repeat`)."""
    n = (1 << 22) if quick else (1 << 26)
    a, b = torch.ones(n), torch.ones(n)
    a.add_(b)
    best = min(_timed(lambda: a.add_(b)) for _ in range(repeat))
    return 3 * a.nbytes / best


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def min_bytes(opt: torch.optim.Optimizer, params: list[torch.Tensor]) -> int:
    """What one step must move at least: read w and g, write w, read and write every state tensor."""
    weights = sum(p.nbytes for p in params)
    state = sum(v.nbytes for st in opt.state.values() if isinstance(st, dict)
                for v in st.values() if isinstance(v, torch.Tensor) and v.dim() > 0)
    return 3 * weights + 2 * state


@dataclass
class Timing:
    ms: float
    bytes: int

    def rate(self) -> float:
        return self.bytes / (self.ms / 1e3)


def time_pair(first: torch.optim.Optimizer, second: torch.optim.Optimizer, warmup: int, repeat: int
              ) -> tuple[float, float]:
    """Median ms of one step of each; their steps alternate, so that both see the same machine load."""
    with torch.no_grad():
        for _ in range(warmup):
            first.step()
            second.step()
        a, b = [], []
        for _ in range(repeat):
            a.append(_timed(first.step))
            b.append(_timed(second.step))
    return 1e3 * statistics.median(a), 1e3 * statistics.median(b)


def run(quick: bool = False, warmup: int = 1, repeat: int = 5) -> tuple[float, list[dict[str, Any]], int, int]:
    """Time every case; the bandwidth is the best in-place add measured between the cases."""
    params = make_params(quick)
    rows, bw = [], 0.0
    for (dialect, name), (options, torch_name, torch_options) in CASES.items():
        bw = max(bw, bandwidth(quick, 1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours_params, theirs_params = clone(params), clone(params)
            ours = optreg.configure_optimizer(name, ours_params, dialect=dialect, **options)
            theirs = getattr(torch.optim, torch_name)(theirs_params, **torch_options)
            a, b = time_pair(ours, theirs, warmup, repeat)
        rows.append({"name": f"{dialect}.{name}", "torch": f"torch.optim.{torch_name}",
                     "ours": Timing(a, min_bytes(ours, ours_params)), "theirs": Timing(b, min_bytes(theirs, theirs_params))})
        del ours, theirs, ours_params, theirs_params
    return max(bw, bandwidth(quick, 3)), rows, sum(p.numel() for p in params), len(params)


def table(bw: float, rows: list[dict[str, Any]], numel: int, count: int) -> str:
    lines = [
        f"One step on {numel / 1e6:.1f}M float32 parameters in {count} tensors, CPU ({platform.machine()}, "
        f"{torch.get_num_threads()} threads, torch {torch.__version__.split('+')[0]}); memory bandwidth "
        f"measured by an in-place add: {bw / 1e9:.1f} GB/s. GB/s counts the bytes a step must move at least "
        "(w and g read, w written, each state tensor read and written).",
        "",
        "| optimizer | closest torch | ms / step | torch ms / step | ratio | GB/s (% of bandwidth) | torch GB/s (%) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        a, b = r["ours"], r["theirs"]
        lines.append(
            f"| {r['name']} | {r['torch']} | {a.ms:.1f} | {b.ms:.1f} | {a.ms / b.ms:.2f} | "
            f"{a.rate() / 1e9:.1f} ({100 * a.rate() / bw:.0f}%) | {b.rate() / 1e9:.1f} ({100 * b.rate() / bw:.0f}%) |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="0.2M parameters, one timed step (smoke run)")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", help="also write the markdown table to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.warmup, args.repeat = 1, 1
    text = table(*run(args.quick, args.warmup, args.repeat))
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return text


if __name__ == "__main__":
    main(sys.argv[1:])

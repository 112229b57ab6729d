"""Per-step cost of the closed-form adapter against torch's schedulers, and drift over a million steps.

Measured side by side in one run, on one SGD optimizer per scheduler:
- ScheduleLR(CosineAnnealingLR closed form) vs torch CosineAnnealingLR;
- ScheduleLR(SequentialLR(LinearLR, CosineAnnealingLR) closed form) vs torch's SequentialLR of the same.
Then both are stepped `--steps` times (default 1,000,000) and their lr compared with the numpy closed
form at every step: the adapter recomputes the value from the step, torch multiplies ratios.
Prints markdown.

    python benchmarks/bench_schedules.py [--steps 1000000] [--timing-steps 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
import torch
from torch.optim import lr_scheduler as L

from optreg.dialects.torch import torch_forms as T
from optreg.reference import schedules as R
from optreg.schedules.adapter import ScheduleLR

LR, ETA_MIN = 0.1, 1e-5


def _optimizer() -> torch.optim.Optimizer:
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=LR, momentum=0.9)


def cases(total: int):
    """(name, torch factory, engine schedule, numpy closed form of t) for a run of `total` steps."""
    warm = max(total // 100, 1)
    return [
        ("cosine", lambda o: L.CosineAnnealingLR(o, total, ETA_MIN), T.CosineAnnealingLR(total, ETA_MIN),
         lambda t: R.torch_cosine_annealing(t, LR, total, ETA_MIN)),
        ("warmup-cosine",
         lambda o: L.SequentialLR(o, [L.LinearLR(o, 0.01, 1.0, warm), L.CosineAnnealingLR(o, total - warm, ETA_MIN)],
                                  [warm]),
         T.SequentialLR([T.LinearLR(0.01, 1.0, warm), T.CosineAnnealingLR(total - warm, ETA_MIN)]),
         lambda t: R.sequential(t, [lambda s: R.torch_linear(s, LR, 0.01, 1.0, warm),
                                    lambda s: R.torch_cosine_annealing(s, LR, total - warm, ETA_MIN)], [warm])),
    ]


def ns_per_step(scheduler, steps: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(steps):
        scheduler.step()
    return (time.perf_counter_ns() - start) / steps


def timing(steps: int, repeat: int) -> list[tuple[str, float, float]]:
    """Median ns/step of torch and of the adapter, interleaved run by run."""
    rows = []
    for name, make_torch, schedule, _ in cases(10 * steps):
        torch_ns, engine_ns = [], []
        for _ in range(repeat):
            torch_ns.append(ns_per_step(make_torch(_optimizer()), steps))
            engine_ns.append(ns_per_step(ScheduleLR(_optimizer(), schedule), steps))
        rows.append((name, statistics.median(torch_ns), statistics.median(engine_ns)))
    return rows


def drift(total: int) -> list[tuple[str, float, float]]:
    """Max |lr - closed form| over `total` consecutive steps, for torch and for the adapter."""
    rows = []
    t = np.arange(total)
    for name, make_torch, schedule, closed in cases(total):
        want = closed(t)
        opt_t, opt_e = _optimizer(), _optimizer()
        sched_t, sched_e = make_torch(opt_t), ScheduleLR(opt_e, schedule)
        got_t, got_e = np.empty(total), np.empty(total)
        group_t, group_e = opt_t.param_groups[0], opt_e.param_groups[0]
        for i in range(total):
            got_t[i], got_e[i] = group_t["lr"], group_e["lr"]
            sched_t.step()
            sched_e.step()
        rows.append((name, float(np.max(np.abs(got_t - want))), float(np.max(np.abs(got_e - want)))))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000, help="steps of the drift run")
    parser.add_argument("--timing-steps", type=int, default=20_000, help="steps per timed run")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per scheduler (median)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # schedulers stepped without optimizer steps

    print(f"torch {torch.__version__}; {args.timing_steps:,} steps per timed run, median of {args.repeat}\n")
    print("| schedule | torch ns/step | optreg ScheduleLR ns/step | ratio |")
    print("|---|---:|---:|---:|")
    for name, torch_ns, engine_ns in timing(args.timing_steps, args.repeat):
        print(f"| {name} | {torch_ns:,.0f} | {engine_ns:,.0f} | {engine_ns / torch_ns:.2f} |")

    print(f"\n{args.steps:,} consecutive steps, max |lr - numpy closed form| (base lr {LR}):\n")
    print("| schedule | torch (recursive) | optreg ScheduleLR |")
    print("|---|---:|---:|")
    for name, torch_err, engine_err in drift(args.steps):
        print(f"| {name} | {torch_err:.3e} | {engine_err:.3e} |")


if __name__ == "__main__":
    main()

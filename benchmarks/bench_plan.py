"""Cost of reading and planning a config: `build()` and `step()` of this checkout against another commit.

Times, in fresh processes that alternate between the two trees round by round (and which runs first):
- `build(config, model)` of four configs (torch AdamW with a warmup-cosine, Cerebras AdamW with Model Zoo's
  bias/norm grouping, MindSpore Adam with group keys and a dynamic lr, OneFlow SGD with a step schedule), the
  first call of a process (registry and imports warm up) and the median of the next `--builds` calls;
- `step()` of each built optimizer and scheduler (`--steps` steps, median per step), on a small MLP;
- the Python function calls of one `build()` and of one `step()` (counted by cProfile: the Python work, which the
  machine's noise does not change).
Prints markdown: each tree's medians over the rounds and the ratio this/other.

    python benchmarks/bench_plan.py --against REV [--rounds 5] [--builds 50] [--steps 200]

`REV` is checked out into a temporary git worktree, removed afterwards. Run on a quiet machine: the ratios
are only meaningful when nothing else competes for the cores.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONFIGS = {
    "torch AdamW + warmup-cosine": {
        "optimizer": {"name": "AdamW", "lr": 1e-3, "weight_decay": 0.01},
        "scheduler": {"name": "SequentialLR", "schedulers": [
            {"name": "LinearLR", "start_factor": 0.01, "total_iters": 10},
            {"name": "CosineAnnealingLR", "T_max": 190}], "milestones": [10]},
    },
    "cerebras AdamW (Model Zoo groups)": {
        "dialect": "cerebras",
        "optimizer": {"name": "AdamW", "lr": 1e-3, "weight_decay": 0.01},
        "scheduler": {"name": "LinearLR", "initial_learning_rate": 1e-3, "end_learning_rate": 1e-5,
                      "total_iters": 200},
    },
    "mindspore Adam (group keys, dynamic lr)": {
        "dialect": "mindspore",
        "optimizer": {"name": "Adam", "learning_rate": {"name": "cosine_decay_lr", "min_lr": 1e-5, "max_lr": 1e-3,
                                                        "total_step": 200, "step_per_epoch": 10,
                                                        "decay_epoch": 20},
                      "weight_decay": 0.01,
                      "param_groups": [{"params": ["*.bias", "1.*"], "weight_decay": 0.0}]},
    },
    "oneflow SGD + StepLR": {
        "dialect": "oneflow",
        "optimizer": {"name": "SGD", "lr": 0.1, "momentum": 0.9},
        "scheduler": {"name": "StepLR", "step_size": 50, "gamma": 0.5},
    },
}


def _model():
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.LayerNorm(128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 10))


def worker(builds: int, steps: int) -> dict[str, dict[str, float]]:
    """Times of each config in this process: first build, median build, median step (seconds)."""
    import torch

    import optreg

    out = {}
    for name, config in CONFIGS.items():
        model = _model()
        start = time.perf_counter()
        built = optreg.build(config, model)
        first = time.perf_counter() - start
        times = []
        for _ in range(builds):
            start = time.perf_counter()
            built = optreg.build(config, model)
            times.append(time.perf_counter() - start)
        x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
        loss_fn = torch.nn.CrossEntropyLoss()
        optimizer, scheduler = built.optimizer, built.scheduler
        step_times = []
        for _ in range(steps):
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            start = time.perf_counter()
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            step_times.append(time.perf_counter() - start)
        def one_step():
            optimizer.step()
            if scheduler is not None:
                scheduler.step()

        out[name] = {"first build": first, "build": statistics.median(times), "step": statistics.median(step_times),
                     "build calls": _calls(lambda: optreg.build(config, model), 5), "step calls": _calls(one_step, 50)}
    return out


def _calls(fn, n: int) -> float:
    """Python function calls per call of `fn` (cProfile's count over `n` calls): the Python work, free of the
    machine's noise."""
    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    for _ in range(n):
        fn()
    profile.disable()
    return pstats.Stats(profile).total_calls / n


def _run(tree: Path, builds: int, steps: int) -> dict[str, dict[str, float]]:
    env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1")
    result = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", "--builds", str(builds),
                             "--steps", str(steps)], cwd=tree, env=env, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", help="git revision to compare with (a temporary worktree)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--builds", type=int, default=50)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.builds, args.steps)))
        return
    if not args.against:
        parser.error("--against REV is required")
    here = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as scratch:
        other = Path(scratch) / "other"
        subprocess.run(["git", "-C", str(here), "worktree", "add", "--detach", str(other), args.against],
                       check=True, capture_output=True)
        try:
            samples: dict[str, list] = {"this": [], "other": []}
            for k in range(args.rounds):   # which tree runs first alternates too
                for tree in (("this", here), ("other", other))[:: 1 if k % 2 == 0 else -1]:
                    samples[tree[0]].append(_run(tree[1], args.builds, args.steps))
        finally:
            subprocess.run(["git", "-C", str(here), "worktree", "remove", "--force", str(other)], check=False,
                           capture_output=True)
    head = subprocess.run(["git", "-C", str(here), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    print(f"this = {head}, other = {args.against}; median of {args.rounds} alternating rounds, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}\n")
    print("| config | measure | this | other | this/other |")
    print("|---|---|---:|---:|---:|")
    for name in CONFIGS:
        for measure in ("first build", "build", "step", "build calls", "step calls"):
            scale, unit = (1, "") if measure.endswith("calls") else (1e3, " ms")
            a = statistics.median(r[name][measure] for r in samples["this"]) * scale
            b = statistics.median(r[name][measure] for r in samples["other"]) * scale
            print(f"| {name} | {measure} | {a:.3f}{unit} | {b:.3f}{unit} | {a / b:.2f} |")


if __name__ == "__main__":
    main()

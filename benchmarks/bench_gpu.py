"""AdamW, LAMB and Adafactor on a CUDA GPU against its memory bandwidth, in every execution (eager,
foreach, fused, fused over contiguous parameters, and contiguous with bfloat16 and int8 state), beside torch's
fused, foreach and for-loop AdamW.

The GPU companion of benchmarks/bench_optimizers.py, with the same roofline: the bytes a step must move
at least (`bench_optimizers.min_bytes`: read w and g, write w, read and write each state tensor) at the
bandwidth of a large in-place add on the device (read a, read b, write a), measured in the same rounds.
Rounds are interleaved as there: each round times the add, then every execution of an entry and torch's
fused AdamW, and each ratio is taken within its round (the table gives medians over the rounds). A step
is timed with CUDA events over `--steps` consecutive steps after a warm-up; `compile s` is the first
step of the compiled executions until their compile, which runs in the background, is ready, synchronized,
on the Inductor cache the run finds (a fresh
TORCHINDUCTOR_CACHE_DIR gives a cold one).

Three checks ride along, each a column:
- `sync`: a warmed-up step under `torch.cuda.set_sync_debug_mode("error")`: "none" when the step makes no
  host synchronisation (no `.item()`, no copy back to the host), else the first error's gist;
- `err`: after 3 steps from the same start on a small model of mixed shapes, the largest difference from
  the CPU's eager float32 steps over the largest movement of any weight;
- a failure of one entry or execution is a row that says so, and the run goes on.

    python benchmarks/bench_gpu.py [--total 25e6] [--tensors 100 1000] [--rounds 5] [--steps 20]
                                   [--only 'oneflow.AdamW' ...] [--executions fused ...] [--out FILE]
    python benchmarks/bench_gpu.py --inductor combo_kernels=True ...   # an Inductor setting for the whole run
    python benchmarks/bench_gpu.py --quick     # small and on whatever device there is: a smoke run
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
import traceback
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_optimizers  # noqa: E402
from bench_optimizers import _build, _copy, make_params, min_bytes, publish, wait_compiles  # noqa: E402

from optreg.stages import execute  # noqa: E402

#: the algorithms the GPU table covers: AdamW, LAMB and Adafactor in each dialect that has them
ENTRIES = ("oneflow.AdamW", "cerebras.AdamW", "cerebras.Lamb", "oneflow.LAMB", "cerebras.Adafactor",
           "mindspore.AdaFactor")
EXECUTIONS = ("eager", "foreach", "fused", "contiguous", "contiguous, bfloat16", "contiguous, int8")


def build(name: str, execution: str, params: list[torch.Tensor]) -> torch.optim.Optimizer:
    """`name` in `execution`; "contiguous, <dtype>" is contiguous with `state_dtype=<dtype>`."""
    base, _, state_dtype = execution.partition(", ")
    return _build(name, base, params, **({"state_dtype": state_dtype} if state_dtype else {}))


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn: Callable[[], Any], steps: int, device: torch.device) -> float:
    """Seconds per call of `fn` over `steps` consecutive calls: CUDA events on a GPU, the host clock
    (synchronized) elsewhere."""
    if device.type == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(steps):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / steps
    begin = time.perf_counter()
    for _ in range(steps):
        fn()
    synchronize(device)
    return (time.perf_counter() - begin) / steps


def bandwidth(device: torch.device, elements: int, steps: int) -> float:
    """Bytes per second of `a += b` on two float32 tensors of `elements` each (read a, read b, write a)."""
    a = torch.ones(elements, device=device)
    b = torch.ones(elements, device=device)
    a.add_(b)
    synchronize(device)
    return 3 * a.nbytes / timed(lambda: a.add_(b), steps, device)


def first_step(opt: torch.optim.Optimizer, device: torch.device) -> float:
    """The first step and the compile it starts in the background, until the compiled step is ready
    (`execute.wait_compiles`; the steps timed afterwards are compiled)."""
    synchronize(device)
    begin = time.perf_counter()
    opt.step()
    wait_compiles()
    synchronize(device)
    return time.perf_counter() - begin


def sync_check(opt: torch.optim.Optimizer, device: torch.device) -> str:
    """"none" when a step makes no host synchronisation, else the gist of the first one reported."""
    if device.type != "cuda":
        return "n/a"
    torch.cuda.set_sync_debug_mode("error")
    try:
        opt.step()
        return "none"
    except RuntimeError as e:
        return str(e).splitlines()[0][:60]
    finally:
        torch.cuda.set_sync_debug_mode(0)


def agreement(name: str, execution: str, device: torch.device) -> float:
    """Largest |w_device - w_cpu_eager| over the largest movement of a weight, after 3 steps of a small
    model of mixed shapes (matrices, vectors, a 4-d kernel) from the same start and gradients."""
    g = torch.Generator().manual_seed(1)
    shapes = [(64, 48), (48,), (32, 16, 3, 3), (300, 20), (7,), (128, 128)]
    start = [torch.randn(s, generator=g) for s in shapes]
    grads = [[0.01 * torch.randn(s, generator=g) for s in shapes] for _ in range(3)]

    def run(dev: torch.device, ex: str) -> list[torch.Tensor]:
        params = [torch.nn.Parameter(w.clone().to(dev)) for w in start]
        opt = build(name, ex, params)
        for step_grads in grads:
            for p, gr in zip(params, step_grads):
                p.grad = gr.to(dev)
            opt.step()
        return [p.detach().cpu() for p in params]

    ref = run(torch.device("cpu"), "eager")
    background, execute.COMPILE = execute.COMPILE, "wait"   # every step compiled, none eager while it compiles
    try:
        out = run(device, execution)
    finally:
        execute.COMPILE = background
    moved = max(float((r - w).abs().max()) for r, w in zip(ref, start))
    return max(float((o - r).abs().max()) for o, r in zip(out, ref)) / moved


@dataclass
class Row(bench_optimizers.Row):
    """bench_optimizers' row with the GPU checks beside it; its cells are strings, empty when not timed."""
    sync: str = ""
    err: float | None = None
    failed: str = ""

    def cell_ms(self) -> str:
        return f"{self.ms:.3f}" if self.times else ""

    def cell_share(self) -> str:
        return f"{self.fraction():.2f}" if self.times else ""

    def cell_over(self, adamw_bytes: int) -> str:
        """Roofline share over torch's fused AdamW's, timed in the same rounds."""
        return f"{self.over(self.adamw, adamw_bytes):.2f}" if self.times else ""

    def line(self, adamw_bytes: int) -> str:
        """The row's line of the table (also logged as soon as its entry is done, so that a run cut short keeps it)."""
        head = f"| {self.name} | {self.execution} | {self.tensors} |"
        if self.failed:
            return f"{head} failed: {self.failed} | | | | | |"
        err = f"{self.err:.1e}" if self.err is not None else ""
        first = f"{self.first:.2f}" if self.first is not None else ""
        return (f"{head} {self.cell_ms()} | {self.cell_share()} | {self.cell_over(adamw_bytes)} | {first} | "
                f"{self.sync} | {err} |")


def _params(count: int, total: int, device: torch.device) -> list[torch.Tensor]:
    params = make_params(count, False, total=total)
    out = [torch.nn.Parameter(p.detach().to(device)) for p in params]
    for p, q in zip(out, params):
        p.grad = q.grad.to(device)
    return out


def references(params: list[torch.Tensor], device: torch.device) -> dict[str, torch.optim.Optimizer]:
    on_gpu = device.type == "cuda"
    return {
        "torch.AdamW (fused)": torch.optim.AdamW(_copy(params), lr=1e-3, weight_decay=0.01, fused=True),
        "torch.AdamW (foreach)": torch.optim.AdamW(_copy(params), lr=1e-3, weight_decay=0.01, foreach=on_gpu),
        "torch.AdamW (for-loop)": torch.optim.AdamW(_copy(params), lr=1e-3, weight_decay=0.01, foreach=False),
    }


def run(names: list[str], counts: list[int], total: int, rounds: int, steps: int, device: torch.device,
        log: Callable[[str], None], executions: tuple[str, ...] = EXECUTIONS) -> tuple[list[float], list[Row]]:
    samples: list[float] = []
    rows: list[Row] = []
    add_elements = max(1 << 20, min(1 << 28, total))
    for count in counts:
        params = _params(count, total, device)
        refs = references(params, device)
        ref_rows = {k: Row(k, "reference", count) for k in refs}
        for k, opt in refs.items():
            ref_rows[k].first = first_step(opt, device)
            ref_rows[k].bytes = min_bytes(opt, opt.param_groups[0]["params"])
            ref_rows[k].sync = sync_check(opt, device)
        adamw_opt = refs["torch.AdamW (fused)"]
        for name in names:
            opts: dict[str, torch.optim.Optimizer] = {}
            own: dict[str, Row] = {}
            for ex in executions:
                row = own[ex] = Row(name, ex, count)
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        mine = _copy(params) if ex != "eager" else params
                        opt = build(name, ex, mine)
                        row.first = first_step(opt, device)
                        opt.step()
                        row.bytes = min_bytes(opt, mine)
                        row.sync = sync_check(opt, device)
                        if count == counts[0]:
                            row.err = agreement(name, ex, device)
                    opts[ex] = opt
                except Exception as e:  # a row that says so; the run goes on
                    row.failed = f"{type(e).__name__}: {str(e).splitlines()[0][:80] if str(e) else ''}"
                    log(f"{name} {ex} ({count} tensors) failed:\n{traceback.format_exc()}")
            for _ in range(rounds):
                samples.append(bandwidth(device, add_elements, steps))
                adamw_t = timed(adamw_opt.step, steps, device)
                for ex, opt in opts.items():
                    own[ex].times.append(timed(opt.step, steps, device))
                    own[ex].bws.append(samples[-1])
                    own[ex].adamw.append(adamw_t)
                ref_rows["torch.AdamW (fused)"].times.append(adamw_t)
                for k, r in ref_rows.items():
                    if k != "torch.AdamW (fused)":
                        r.times.append(timed(refs[k].step, steps, device))
                    r.bws.append(samples[-1])
                    r.adamw.append(adamw_t)
            rows += own.values()
            adamw_bytes = ref_rows["torch.AdamW (fused)"].bytes
            add = samples[-rounds:]
            log(f"{name}, {count} tensors: the add of its rounds, median {statistics.median(add) / 1e9:.0f} GB/s "
                f"(best {max(add) / 1e9:.0f}, worst {min(add) / 1e9:.0f})")
            log("\n".join(r.line(adamw_bytes) for r in [*own.values(), *ref_rows.values()]))
            del opts
        # the references ran once per entry's rounds; keep as many samples as the entries' rows have
        rows += ref_rows.values()
        del params, refs
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return samples, rows


def inductor_settings(pairs: list[str]) -> dict[str, Any]:
    """Set each `KEY=VALUE` (a Python literal) in `torch._inductor.config` for the run's compiles, e.g.
    `combo_kernels=True` (one launch for several of a graph's kernels); a key Inductor does not have is an error."""
    import ast

    import torch._inductor.config as inductor

    settings = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        if not hasattr(inductor, key):
            raise SystemExit(f"--inductor {pair}: torch._inductor.config has no {key!r}")
        settings[key] = ast.literal_eval(value)
        setattr(inductor, key, settings[key])
    return settings


def said(settings: dict[str, Any]) -> str:
    """The Inductor settings of a run, as its table and log say them."""
    return "Inductor: " + ", ".join(f"{k}={v!r}" for k, v in settings.items())


def table(samples: list[float], rows: list[Row], counts: list[int], total: int, rounds: int, steps: int,
          device: torch.device, settings: dict[str, Any] | None = None) -> str:
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "CPU"
    bw = statistics.median(samples)
    inductor = f", {said(settings)}" if settings else ""
    lines = [
        f"One step on {total / 1e6:.1f}M float32 parameters, {name} (torch {torch.__version__}{inductor}), "
        f"medians of {rounds} rounds of {steps} steps; roofline: an in-place add timed in every round, median "
        f"{bw / 1e9:.0f} GB/s (best {max(samples) / 1e9:.0f}, worst {min(samples) / 1e9:.0f}). `roofline` is the "
        "share of its round's add that the step's minimal traffic reaches, `× AdamW` that share over torch's "
        "fused AdamW's in the same round; `compile s` the first step; `sync` a warmed-up step under "
        "set_sync_debug_mode('error'); `err` the largest difference from the CPU's eager steps over the "
        "largest movement (3 steps, a small model).",
        "",
        "| optimizer | execution | tensors | ms | roofline | × AdamW | first step s | sync | err |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for count in counts:
        adamw = next(r for r in rows if r.name == "torch.AdamW (fused)" and r.tensors == count).bytes
        for r in rows:
            if r.tensors != count:
                continue
            lines.append(r.line(adamw))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="0.2M parameters, 12 tensors, one round")
    parser.add_argument("--total", type=float, default=25e6, help="parameters (default 25e6)")
    parser.add_argument("--tensors", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20, help="steps per timed run")
    parser.add_argument("--only", nargs="+", help="entries (default: %s)" % ", ".join(ENTRIES))
    parser.add_argument("--executions", nargs="+", choices=EXECUTIONS, default=list(EXECUTIONS),
                        help="the executions to run (default: all)")
    parser.add_argument("--inductor", nargs="+", default=[], metavar="KEY=VALUE",
                        help="torch._inductor.config settings for the run, e.g. combo_kernels=True")
    parser.add_argument("--out", help="also write the markdown table to this file")
    parser.add_argument("--log", help="write progress and failures to this file (default: stderr)")
    args = parser.parse_args(argv)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if args.quick:
        args.total, args.tensors, args.rounds, args.steps = 2e5, [12], 1, 2
    settings = inductor_settings(args.inductor)
    sink = open(args.log, "a", encoding="utf-8") if args.log else sys.stderr

    def log(text: str) -> None:
        print(text, file=sink, flush=True)

    if settings:
        log(said(settings))
    samples, rows = run(list(args.only or ENTRIES), args.tensors, int(args.total), args.rounds, args.steps,
                        device, log, tuple(args.executions))
    return publish(table(samples, rows, args.tensors, int(args.total), args.rounds, args.steps, device, settings),
                   args.out)


if __name__ == "__main__":
    main(sys.argv[1:])

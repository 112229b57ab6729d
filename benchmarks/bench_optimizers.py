"""Every first-party optimizer in its three executions (eager, foreach, fused), and fused over
contiguous parameters, against torch's fused optimizers and the best peer library, as fractions of
the memory roofline measured in the same run (MindSpore's THOR, which hooks a model's layers, has
benchmarks/bench_thor.py).

All optimizers step the same 25M float32 parameters on the CPU, in 100 tensors and in 1,000 tensors.
Rounds are interleaved: each round times an in-place add, then steps every optimizer of an entry once
in each tensor count (ours in each execution, torch's fused AdamW and the peer beside them), so that
all see the same machine load. The roofline is the bytes a step must move at least (read w and g,
write w, read and write each state tensor, write g where the algorithm writes the user's gradient:
Cerebras' Rprop) at the bandwidth of a large in-place add (read a, read b, write a). Every ratio is
taken within a round and the table gives its median over the rounds: a step's share of the roofline
against the add of its own round, and its `× AdamW` against torch's fused AdamW timed in the same
round, so that a slow or fast stretch of a shared machine (which moves both) cancels. `fused` also
reports its first step (eager, while the compile runs in the background) and the time until its compiled
step is ready, which the rounds wait for. oneflow.AdamW, oneflow.SGD and oneflow.Adagrad's eager steps are
also timed against torch's for-loop implementations of the same algorithms (foreach=False, fused=False)
in the same rounds, each pair side by side, in turns first.

`contiguous` is fused with contiguous_params=True on a copy of the parameters (it moves them into
one buffer): its gradients stay in their slices between steps, as with zero_grad(set_to_none=False);
`contiguous, copy` hands it fresh gradient tensors before every step (set_to_none=True), which the
step copies into the slices. `contiguous, bfloat16` and `contiguous, int8` are `contiguous` with
state_dtype set: every entry gets both, with the bytes of optimizer state per parameter; oneflow.AdamW's
rounds also time torchao's and bitsandbytes' 8-bit AdamW where they import (the `bench` extra).

The last table puts each speed target of the project beside what this run measured (per-tensor fused
against torch's fused AdamW, the LAMBs, LARS and Adafactors per tensor against the roofline, eager
against torch's for-loop, the first fused step, and the state dtypes against torch's fused AdamW and
the 8-bit AdamWs).

    python benchmarks/bench_optimizers.py [--tensors 100 1000] [--rounds 5] [--only 'cerebras.*' ...] [--out FILE]
    python benchmarks/bench_optimizers.py --quick     # small model, one round: a smoke run

Peers (the `bench` extra): pytorch_optimizer's Lamb, LARS and AdaFactor, for the algorithms torch lacks;
torchao's and bitsandbytes' AdamW8bit beside the state dtypes.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib
import platform
import statistics
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

import optreg
from optreg.stages.execute import wait_compiles

EXECUTIONS = ("eager", "foreach", "fused")
#: fused over contiguous parameters: gradients kept in the slices, and fresh ones copied in every step
CONTIGUOUS = ("contiguous", "contiguous, copy")
#: the state dtypes every first-party entry is timed with (fused over contiguous parameters)
STATE_DTYPES = ("bfloat16", "int8")
SHRUNK = tuple(f"contiguous, {sd}" for sd in STATE_DTYPES)

# options beyond the defaults: a typical configuration, and what an entry requires
OPTIONS: dict[str, dict[str, Any]] = {
    "oneflow.SGD": {"lr": 1e-3, "momentum": 0.9},
    "oneflow.AdamW": {"weight_decay": 0.01},
    "oneflow.LAMB": {"weight_decay": 0.01},
    "cerebras.SGD": {"lr": 1e-3, "momentum": 0.9},
    "cerebras.AdamW": {"weight_decay": 0.01},
    "cerebras.Lamb": {"weight_decay": 0.01},
    "cerebras.Adafactor": {"lr": 1e-2},
    "cerebras.RMSprop": {"momentum": 0.9},
    "mindspore.SGD": {"learning_rate": 1e-3, "momentum": 0.9},
    "mindspore.Momentum": {"learning_rate": 1e-3, "momentum": 0.9},
    "mindspore.Lamb": {"learning_rate": 1e-3, "weight_decay": 0.01},
    "mindspore.LARS": {"optimizer": {"name": "Momentum", "learning_rate": 1e-3, "momentum": 0.9}},
    "mindspore.FTRL": {},
    "mindspore.RMSProp": {"learning_rate": 1e-3},
    "mindspore.ProximalAdagrad": {"learning_rate": 1e-3},
    "mindspore.Adagrad": {"learning_rate": 1e-3},
}

# algorithm -> the entries it compares (the best peer library for what torch lacks)
PEERS: dict[str, tuple[str, dict[str, Any]]] = {
    "LAMB": ("Lamb", {"lr": 1e-3, "weight_decay": 0.01}),
    "LARS": ("LARS", {"lr": 1e-3, "momentum": 0.9}),
    "Adafactor": ("AdaFactor", {"lr": 1e-2, "momentum_dtype": torch.float32}),
}


def family(name: str) -> str | None:
    bare = name.split(".", 1)[1].lower()
    return {"lamb": "LAMB", "lars": "LARS", "adafactor": "Adafactor"}.get(bare)


def make_params(count: int, quick: bool, total: int | None = None) -> list[torch.Tensor]:
    """25.0M float32 parameters (or `total`) in `count` tensors (matrices and a few vectors); quick: 0.2M."""
    g = torch.Generator().manual_seed(0)
    total = total or (200_000 if quick else 25_000_000)
    vectors = max(1, count // 12)
    vec = 512
    rows = 256
    cols = max(1, (total - vectors * vec) // ((count - vectors) * rows))
    shapes = [(rows, cols)] * (count - vectors) + [(vec,)] * vectors
    params = [torch.nn.Parameter(0.1 * torch.randn(s, generator=g)) for s in shapes]
    for p in params:
        p.grad = 0.01 * torch.randn(p.shape, generator=g)
    return params


def bandwidth(quick: bool, repeat: int) -> float:
    """Bytes per second of `a += b` on two float32 tensors of 256 MB (16 MB with quick), best of `repeat`
    after one untimed add (the pages are touched before the clock starts)."""
    n = (1 << 22) if quick else (1 << 26)
    a, b = torch.ones(n), torch.ones(n)
    a.add_(b)
    best = min(_timed(lambda: a.add_(b)) for _ in range(repeat))
    return 3 * a.nbytes / best


def _timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def min_bytes(opt: torch.optim.Optimizer, params: list[torch.Tensor]) -> int:
    """What one step must move at least: read w and g, write w, read and write every state tensor, and
    write g where the algorithm writes the user's gradient in place (`Chain.writes_grad`: Cerebras' Rprop)."""
    weights = sum(p.nbytes for p in params)
    seen, state = set(), 0
    inner = getattr(opt, "optimizer", opt)
    for st in inner.state.values():
        for v in (st.values() if isinstance(st, dict) else ()):
            if isinstance(v, torch.Tensor) and v.dim() > 0 and id(v) not in seen:
                seen.add(id(v))
                state += _bytes(v)
    writes_grad = getattr(getattr(inner, "chain", None), "writes_grad", False)
    return (4 if writes_grad else 3) * weights + 2 * state


def _bytes(value: Any) -> int:
    """The bytes a state value holds (a tensor subclass, torchao's 8-bit state: its inner tensors)."""
    if not isinstance(value, torch.Tensor):
        return 0
    if type(value) is not torch.Tensor and hasattr(value, "__tensor_flatten__"):
        return sum(_bytes(getattr(value, name)) for name in value.__tensor_flatten__()[0])
    return value.numel() * value.element_size()


def state_per_param(opt: torch.optim.Optimizer, params: list[torch.Tensor]) -> float:
    """Bytes of optimizer state per parameter: every state tensor (0-d counters included) over the parameters."""
    inner = getattr(opt, "optimizer", opt)
    seen, total = set(), 0
    for st in inner.state.values():
        for v in (st.values() if isinstance(st, dict) else ()):
            if isinstance(v, torch.Tensor) and id(v) not in seen:
                seen.add(id(v))
                total += _bytes(v)
    return total / sum(p.numel() for p in params)


@dataclass
class Row:
    name: str
    execution: str
    tensors: int
    bytes: int = 0
    times: list[float] = field(default_factory=list)
    first: float | None = None
    #: from the first step until the compiled step is ready (fused's compile runs in the background)
    compile: float | None = None
    #: per round, beside each of `times`: the in-place add's bandwidth, and torch's fused AdamW's time
    bws: list[float] = field(default_factory=list)
    adamw: list[float] = field(default_factory=list)
    #: bytes of optimizer state per parameter (`state_per_param`)
    state: float = 0.0

    @property
    def ms(self) -> float:
        return 1e3 * statistics.median(self.times)

    def fraction(self) -> float:
        """The median over rounds of the step's share of its round's roofline."""
        return statistics.median(self.bytes / t / bw for t, bw in zip(self.times, self.bws))

    def over(self, times: list[float], nbytes: int) -> float:
        """The median over rounds of the step's traffic per second over another step's, timed in the same
        rounds (`times`, moving `nbytes`): its roofline share over the other's."""
        return statistics.median(self.bytes * o / (t * nbytes) for t, o in zip(self.times, times))

    def speed(self, times: list[float]) -> float:
        """The median over rounds of another step's time over this one's, timed in the same rounds (`times`):
        above 1, this step is faster."""
        return statistics.median(o / t for t, o in zip(self.times, times))


def _copy(params: list[torch.Tensor]) -> list[torch.Tensor]:
    out = [torch.nn.Parameter(p.detach().clone()) for p in params]
    for p, q in zip(out, params):
        p.grad = q.grad.clone()
    return out


def _build(name: str, execution: str, params: list[torch.Tensor], **more: Any) -> torch.optim.Optimizer:
    """`name` in `execution` with the benchmark's options, and `more` (e.g. state_dtype) beside them."""
    extra = {} if execution == "eager" else {"fused": True, "contiguous_params": True} \
        if execution in CONTIGUOUS + SHRUNK else {execution: True}
    if execution in SHRUNK:
        extra["state_dtype"] = execution.split(", ")[1]
    extra.update(more)
    options = dict(OPTIONS.get(name, {}))
    if "optimizer" in options:  # a wrapper (MindSpore LARS): the execution is the inner optimizer's
        options["optimizer"] = {**options["optimizer"], **extra}
        extra = {}
    return optreg.configure_optimizer(name, params, **options, **extra)


#: first-party entries whose eager step is compared with torch's for-loop implementation of the same algorithm
#: (foreach=False, fused=False: torch's per-tensor loop), each timed beside the entry's eager step in every round,
#: the two in turns first (`_pair`)
FOR_LOOP = {"oneflow.AdamW": "torch.AdamW (for-loop)", "oneflow.SGD": "torch.SGD (for-loop)",
            "oneflow.Adagrad": "torch.Adagrad (for-loop)"}
#: the 8-bit AdamWs of other libraries, timed right after oneflow.AdamW (beside its state dtypes) in every round
EIGHT_BIT = ("torchao AdamW8bit", "bitsandbytes AdamW8bit")
#: the entry the 8-bit AdamWs and the state-dtype targets are measured on
STATE_TARGET = "oneflow.AdamW"


def eight_bit(params: list[torch.Tensor]) -> dict[str, torch.optim.Optimizer]:
    """torchao's and bitsandbytes' 8-bit AdamW on copies of `params`, where they import."""
    out: dict[str, torch.optim.Optimizer] = {}
    for key, module in (("torchao AdamW8bit", "torchao.optim"), ("bitsandbytes AdamW8bit", "bitsandbytes.optim")):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out[key] = importlib.import_module(module).AdamW8bit(_copy(params))
        except Exception as exc:  # not installed, or not built for this machine
            print(f"{key} unavailable: {type(exc).__name__}: {exc}", file=sys.stderr)
    return out


def references(params: list[torch.Tensor], eight: bool = False) -> dict[str, torch.optim.Optimizer]:
    """torch's fused AdamW, SGD (momentum) and Adagrad, their for-loop forms, and the peers that are installed
    (`eight`: the 8-bit AdamWs too)."""
    loop = {"foreach": False, "fused": False}
    out = {
        "torch.AdamW (fused)": torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, fused=True),
        "torch.SGD (fused)": torch.optim.SGD(params, lr=1e-3, momentum=0.9, fused=True),
        "torch.Adagrad (fused)": torch.optim.Adagrad(params, lr=1e-3, fused=True),
        "torch.AdamW (for-loop)": torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, **loop),
        "torch.SGD (for-loop)": torch.optim.SGD(params, lr=1e-3, momentum=0.9, **loop),
        "torch.Adagrad (for-loop)": torch.optim.Adagrad(params, lr=1e-3, **loop),
    }
    if eight:
        out.update(eight_bit(params))
    try:
        import pytorch_optimizer as po
    except ImportError:
        return out
    for algorithm, (cls, options) in PEERS.items():
        out[f"pytorch_optimizer.{cls}"] = getattr(po, cls)(params, **options)
    return out


#: the entries whose steps raised in this run, with the error (printed under the tables)
FAILED: list[str] = []


def run(names: list[str], counts: list[int], rounds: int, quick: bool) -> tuple[list[float], list[Row]]:
    """Every entry's rows, and the bandwidth samples: one in-place add per round, beside the optimizers."""
    torch.set_flush_denormal(True)
    rows: list[Row] = []
    samples: list[float] = []
    sets = {count: make_params(count, quick) for count in counts}
    refs = {count: references(sets[count], STATE_TARGET in names) for count in counts}
    ref_rows = {count: {k: Row(k, "reference", count) for k in refs[count]} for count in counts}
    for count in counts:
        for k, opt in refs[count].items():
            opt.step()
            ps = [p for g in opt.param_groups for p in g["params"]]
            ref_rows[count][k].bytes, ref_rows[count][k].state = min_bytes(opt, ps), state_per_param(opt, ps)
    for name in names:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                kinds = EXECUTIONS + CONTIGUOUS + SHRUNK
                own_params, fresh, opts, own = {}, {}, {}, {}
                for count in counts:
                    params = sets[count]
                    own_params[count] = {ex: _copy(params) if ex in CONTIGUOUS + SHRUNK else params
                                         for ex in kinds}
                    fresh[count] = {ex: [p.grad for p in ps] for ex, ps in own_params[count].items()
                                    if ex == "contiguous, copy"}
                    opts[count] = {ex: _build(name, ex, own_params[count][ex]) for ex in kinds}
                    own[count] = {ex: Row(name, ex, count) for ex in kinds}
                    for ex, opt in opts[count].items():
                        own[count][ex].first = _timed(opt.step)
                        own[count][ex].compile = own[count][ex].first + _timed(wait_compiles)
                        own[count][ex].bytes = min_bytes(opt, own_params[count][ex])
                        own[count][ex].state = state_per_param(opt, own_params[count][ex])
                fam = family(name)
                peer = next((k for k in refs[counts[0]] if fam and k.startswith("pytorch_optimizer.")
                             and k.split(".")[1] == PEERS[fam][0]), None)
                # a round: the bandwidth, then each tensor count's executions beside torch's fused AdamW and the peer
                loop = FOR_LOOP.get(name)
                for turn in range(rounds):
                    samples.append(bandwidth(quick, 1))
                    for count in counts:
                        timed = []
                        for ex, opt in opts[count].items():
                            for p, g in zip(own_params[count][ex], fresh[count].get(ex, ())):
                                p.grad = g
                            if ex == "eager" and loop in refs[count]:
                                # eager and torch's for-loop side by side, in turns first (`_pair`)
                                _pair(own[count][ex], opt, ref_rows[count][loop], refs[count][loop], turn % 2 == 1)
                                timed += [own[count][ex], ref_rows[count][loop]]
                                continue
                            own[count][ex].times.append(_timed(opt.step))
                            timed.append(own[count][ex])
                        beside = (peer, *(EIGHT_BIT if name == STATE_TARGET else ()))
                        for other in (k for k in beside if k in refs[count]):
                            ref_rows[count][other].times.append(_timed(refs[count][other].step))
                            timed.append(ref_rows[count][other])
                        _beside(timed, ref_rows[count], refs[count], samples[-1])
            for count in counts:
                rows += own[count].values()
                print(f"{name} ({count} tensors): " + ", ".join(
                    f"{ex} {r.ms:.1f} ms" for ex, r in own[count].items())
                    + f", first step {own[count]['fused'].first:.1f} s, compile {own[count]['fused'].compile:.1f} s",
                    file=sys.stderr, flush=True)
            del opts, own_params, fresh
        except Exception as exc:   # one entry that cannot step is reported, and the run goes on
            FAILED.append(f"{name}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
            print(f"{name}: FAILED {FAILED[-1]}", file=sys.stderr, flush=True)
    for _ in range(rounds):
        samples.append(bandwidth(quick, 1))
        for count in counts:
            timed = []
            for k in ("torch.SGD (fused)", "torch.Adagrad (fused)"):
                ref_rows[count][k].times.append(_timed(refs[count][k].step))
                timed.append(ref_rows[count][k])
            _beside(timed, ref_rows[count], refs[count], samples[-1])
    for count in counts:
        rows += [r for r in ref_rows[count].values() if r.times]
    return samples, rows


def _pair(row: Row, opt: Any, ref_row: Row, ref: Any, ref_first: bool) -> None:
    """Time `opt`'s step and `ref`'s one after the other, `ref` first when `ref_first` (a round's turn). Two eager
    steps back to back after an in-place add of 256 MB (the bench's round), the second ran faster than the first
    even as the same optimizer on copies of the same tensors: on 2 cores (AMD EPYC), 100 tensors, median of 20
    pairs, the second took 0.95x the first's time for oneflow.SGD, 0.93x for Adagrad, 0.98x for AdamW. A pair in a
    fixed order favours its second; in turns, the bias cancels in the median of the ratios."""
    for r, o in ((ref_row, ref), (row, opt)) if ref_first else ((row, opt), (ref_row, ref)):
        r.times.append(_timed(o.step))


def _beside(timed: list[Row], ref_rows: dict[str, Row], refs: dict[str, Any], bw: float) -> None:
    """Time torch's fused AdamW once more in this round, and note it and the round's bandwidth beside the
    step just recorded by each row of `timed` (and AdamW's own)."""
    adamw = ref_rows["torch.AdamW (fused)"]
    adamw.times.append(_timed(refs["torch.AdamW (fused)"].step))
    for r in timed + [adamw]:
        r.bws.append(bw)
        r.adamw.append(adamw.times[-1])


def table(samples: list[float], rows: list[Row], counts: list[int], rounds: int) -> str:
    bw = statistics.median(samples)
    ref = {r.tensors: r for r in rows if r.name == "torch.AdamW (fused)"}
    lines = [
        f"One step on {'0.2' if rows and rows[0].bytes < 1e8 else '25.0'}M float32 parameters, CPU "
        f"({platform.machine()}, {torch.get_num_threads()} threads, torch {torch.__version__.split('+')[0]}), "
        f"medians of {rounds} round{'s' if rounds != 1 else ''}; roofline: an in-place add "
        f"timed once in every round, median {bw / 1e9:.1f} GB/s (best {max(samples) / 1e9:.1f}, worst "
        f"{min(samples) / 1e9:.1f}). `roofline` is the share of its round's add that the step's minimal traffic "
        "reaches, `× AdamW` that share over torch's fused AdamW's in the same round, each the median over the "
        "rounds; `first s` is fused's first step (eager while it compiles in the background), `compile s` the time "
        "from its start until the compiled step is ready.",
        "",
        "| optimizer | tensors | eager ms | foreach ms | fused ms | eager roofline | foreach roofline | "
        "fused roofline | fused × AdamW | first s | compile s | contiguous ms | contiguous roofline | "
        "contiguous × AdamW | "
        "contiguous, copy × AdamW |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    by = {(r.name, r.execution, r.tensors): r for r in rows}
    names = sorted({r.name for r in rows if r.execution in EXECUTIONS}, key=lambda n: (n.split(".")[0], n))
    for count in counts:
        adamw = ref[count].bytes
        for name in names:
            e, f, u = (by.get((name, ex, count)) for ex in EXECUTIONS)
            if not e:
                continue
            lines.append(f"| {name} | {count} | {e.ms:.1f} | {f.ms:.1f} | {u.ms:.1f} | {e.fraction():.2f} | "
                         f"{f.fraction():.2f} | {u.fraction():.2f} | {u.over(u.adamw, adamw):.2f} | "
                         f"{u.first:.1f} | {u.compile:.1f} | " + _contiguous_cells(by, name, count, adamw))
        for r in rows:
            if r.execution == "reference" and r.tensors == count:
                lines.append(f"| {r.name} | {count} | | | {r.ms:.1f} | | | {r.fraction():.2f} | "
                             f"{r.over(r.adamw, adamw):.2f} | | | | | | |")
    lines += _for_loop_table(by, counts)
    lines += _state_table(by, names, counts, rows)
    if len(counts) > 1:
        lo, hi = counts[0], counts[-1]
        lines += ["", f"{hi} tensors against the same execution's {lo}-tensor figure (roofline share ratio):", "",
                  "| optimizer | fused | contiguous |", "|---|---:|---:|"]
        for name in names:
            ratios = []
            for ex in ("fused", "contiguous"):
                a, b = by.get((name, ex, lo)), by.get((name, ex, hi))
                ratios.append(f"{b.over(a.times, a.bytes):.2f}" if a and b else "")
            lines.append(f"| {name} | {' | '.join(ratios)} |")
    lines += _targets(by, names, counts)
    if FAILED:
        lines += ["", "Entries whose step raised (left out of the tables above):", ""] + [f"- {f}" for f in FAILED]
    return "\n".join(lines)


def _for_loop_table(by: dict, counts: list[int]) -> list[str]:
    """Eager against torch's for-loop implementation of the same algorithm, timed in the same rounds: the median
    over the rounds of the for-loop's time over eager's (above 1: eager is faster)."""
    lines = ["", "eager against torch's for-loop implementation (foreach=False, fused=False), same rounds:", "",
             "| optimizer | torch | tensors | eager ms | for-loop ms | eager × for-loop |",
             "|---|---|---:|---:|---:|---:|"]
    for name, ref in FOR_LOOP.items():
        for count in counts:
            e, r = by.get((name, "eager", count)), by.get((ref, "reference", count))
            if e and r and r.times:
                speed = statistics.median(o / t for t, o in zip(e.times, r.times))
                lines.append(f"| {name} | {ref} | {count} | {e.ms:.1f} | {r.ms:.1f} | {speed:.2f} |")
    return lines if len(lines) > 5 else []


def _state_table(by: dict, names: list[str], counts: list[int], rows: list[Row]) -> list[str]:
    """Fused over contiguous parameters with each state dtype, timed in the same rounds: the step's time, its
    roofline share, its speed over torch's fused AdamW and over float32 state (each the median over the rounds of
    the other's time over its own), and the bytes of optimizer state per parameter."""
    head = ["", "state_dtype: fused over contiguous parameters (`contiguous`) with float32, bfloat16 and int8 state, "
            "same rounds; `× AdamW` is torch's fused AdamW's time over the step's, `× float32` float32 state's time "
            "over the step's (above 1: faster), `B` the bytes of optimizer state per parameter:", "",
            "| optimizer | tensors | float32 ms | float32 B | " + " | ".join(
                f"{sd} ms | {sd} roofline | {sd} × AdamW | {sd} × float32 | {sd} B" for sd in STATE_DTYPES) + " |",
            "|---|---:|" + "---:|" * (2 + 5 * len(STATE_DTYPES))]
    lines = []
    for count in counts:
        for name in names:
            base = by.get((name, "contiguous", count))
            shrunk = [by.get((name, ex, count)) for ex in SHRUNK]
            if not base or not all(shrunk):
                continue
            lines.append(f"| {name} | {count} | {base.ms:.1f} | {base.state:.2f} | " + " | ".join(
                f"{r.ms:.1f} | {r.fraction():.2f} | {r.speed(r.adamw):.2f} | {r.speed(base.times):.2f} | {r.state:.2f}"
                for r in shrunk) + " |")
    if not lines:
        return []
    refs = [r for r in rows if r.execution == "reference" and r.times and r.name in ("torch.AdamW (fused)", *EIGHT_BIT)]
    return head + lines + ["", "| beside them | tensors | ms | × AdamW | B |", "|---|---:|---:|---:|---:|"] + [
        f"| {r.name} | {r.tensors} | {r.ms:.1f} | {r.speed(r.adamw):.2f} | {r.state:.2f} |" for r in refs]


@dataclass
class Target:
    """One speed target of the project and what the run measured for it."""
    issue: int
    what: str
    goal: str
    value: float
    #: None where the row is context, not a target
    met: bool | None
    measured: str


def _targets(by: dict, names: list[str], counts: list[int]) -> list[str]:
    """Each speed target beside this run's figure (issue 31: the state dtypes of oneflow.AdamW against torch's fused
    AdamW and the 8-bit AdamWs; issue 32: per tensor, eager and the first step)."""
    out: list[Target] = []
    lo = counts[0]
    a = by.get((STATE_TARGET, "contiguous", lo))
    for ex, speed, size in (("contiguous, bfloat16", 1.25, 4.1), ("contiguous, int8", 1.3, 2.25)):
        r = by.get((STATE_TARGET, ex, lo))
        if not r:
            continue
        x = r.speed(r.adamw)
        out.append(Target(31, f"{STATE_TARGET} {ex}, {lo} tensors: × torch fused AdamW, state bytes / param",
                          f"≥ {speed}×, ≤ {size} B", x, x >= speed and r.state <= size, f"{x:.2f}×, {r.state:.2f} B"))
        if a:
            x = r.speed(a.times)
            out.append(Target(31, f"{STATE_TARGET} {ex}, {lo} tensors: × float32 state (context, not a target)", "",
                              x, None, f"{x:.2f}×"))
        for peer in EIGHT_BIT:
            p = by.get((peer, "reference", lo))
            if p and p.times:
                x = r.speed(p.times)
                out.append(Target(31, f"{STATE_TARGET} {ex}, {lo} tensors: × {peer}", "≥ 10×", x, x >= 10, f"{x:.1f}×"))
    for count in counts:
        r = by.get((STATE_TARGET, "fused", count))
        adamw = by.get(("torch.AdamW (fused)", "reference", count))
        if r and adamw:
            x = r.speed(r.adamw)
            out.append(Target(32, f"{STATE_TARGET} fused per tensor, {count} tensors: × torch fused AdamW", "≥ 0.9×",
                              x, x >= 0.9, f"{x:.2f}×"))
    for count in counts:
        for name in names:
            goal = {"LAMB": 0.5, "LARS": 0.5, "Adafactor": 0.35}.get(family(name) or "")
            r = by.get((name, "fused", count))
            if goal and r:
                x = r.fraction()
                out.append(Target(32, f"{name} fused per tensor, {count} tensors: roofline share", f"≥ {goal}", x,
                                  x >= goal, f"{x:.2f}"))
    for name, ref in FOR_LOOP.items():
        for count in counts:
            e, r = by.get((name, "eager", count)), by.get((ref, "reference", count))
            if e and r and r.times:
                x = e.speed(r.times)
                out.append(Target(32, f"{name} eager, {count} tensors: × {ref}", "≥ 1×", x, x >= 1, f"{x:.2f}×"))
    firsts = [(r.first, name, count) for count in counts for name in names
              if (r := by.get((name, "fused", count))) and r.first is not None]
    if firsts:
        x, name, count = max(firsts)
        out.append(Target(32, f"first fused step, slowest of {len(firsts)} (this process's Inductor cache; a cold "
                          "cache: benchmarks/bench_first_step.py)", "≤ 5 s", x, x <= 5, f"{x:.1f} s ({name}, {count})"))
    if not out:
        return []
    return ["", "Targets, this run:", "", "| issue | target | goal | measured | met |", "|---:|---|---|---:|---|"] + [
        f"| {t.issue} | {t.what} | {t.goal} | {t.measured} | {'' if t.met is None else 'yes' if t.met else 'no'} |"
        for t in out]


def _contiguous_cells(by: dict, name: str, count: int, adamw: int) -> str:
    c, k = by.get((name, "contiguous", count)), by.get((name, "contiguous, copy", count))
    if not c:
        return "| | | |"
    return f"{c.ms:.1f} | {c.fraction():.2f} | {c.over(c.adamw, adamw):.2f} | {k.over(k.adamw, adamw):.2f} |"


#: what --quick times without --only: an entry of each target (state dtypes, per tensor, eager, the roofline shares)
QUICK = ("oneflow.AdamW", "oneflow.SGD", "oneflow.Adagrad", "oneflow.LAMB", "mindspore.LARS", "cerebras.Adafactor")


def first_party(patterns: list[str] | None) -> list[str]:
    from optreg.core.entry import OPTIMIZER
    from optreg.core.registry import REGISTRY
    from optreg.stages.optimizer import ChainOptimizer

    out = []
    for entry in REGISTRY.entries(OPTIMIZER):
        if entry.dialect == "torch" or entry.provider != "optreg":
            continue
        impl = entry.resolve()
        chain = isinstance(impl, type) and issubclass(impl, ChainOptimizer)
        wraps = entry.qualname == "mindspore.LARS"
        model_only = entry.qualname == "mindspore.thor"  # hooks a model's layers: benchmarks/bench_thor.py
        if (chain or wraps) and not model_only and (not patterns or any(fnmatch.fnmatch(entry.qualname, pattern)
                                                                        for pattern in patterns)):
            out.append(entry.qualname)
    return out


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"0.2M parameters in 12 tensors, one round, and without --only the entries of the targets "
                             f"({', '.join(QUICK)}): a smoke run")
    parser.add_argument("--tensors", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="+", help="fnmatch patterns over qualified names, e.g. 'cerebras.*' "
                                                  "oneflow.SGD (an entry matching any)")
    parser.add_argument("--out", help="also write the markdown table to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.tensors = 1, [12]
    names = [n for n in first_party(args.only) if args.only or not args.quick or n in QUICK]
    samples, rows = run(names, args.tensors, args.rounds, args.quick)
    return publish(table(samples, rows, args.tensors, args.rounds), args.out)


def publish(text: str, out: str | None) -> str:
    """Print the table, and write it to `out` too where one is named."""
    print(text)
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return text


if __name__ == "__main__":
    main(sys.argv[1:])

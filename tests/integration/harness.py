"""What the integration scenarios share: the optimizer cases, a tiny deterministic model and data, the
uninterrupted single-process reference run, the comparison, and a bounded two-rank gloo launcher.

Every scenario trains the same model on the same batches with one case's optimizer and scheduler and
compares its final parameters (and the learning rate of every step) with `reference()`: an
uninterrupted run in this process. A scenario with a checkpoint saves at step `MID`, builds everything
anew, loads, and continues to `STEPS`.

Distributed scenarios run all cases in one pair of spawned gloo processes (spawning costs seconds):
`run_distributed()` returns one `Outcome` per case, and each test checks its own.
"""

from __future__ import annotations

import datetime
import socket
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch import nn

import optreg

STEPS = 6          # optimizer steps of every run
MID = 3            # the step at which resumed runs save and reload
WORLD = 2          # ranks of the distributed scenarios
BATCH = 8          # global batch; each of the WORLD ranks gets BATCH // WORLD rows
IN, HIDDEN, OUT = 4, 8, 4
EXACT = dict(rtol=0.0, atol=0.0)
# where an execution reorders a reduction (a norm over shards, a compiled kernel), float32 results agree to rounding
CLOSE = dict(rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------------------------------------
# the cases: first-party optimizers of every dialect, with the learning-rate forms of each
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    optimizer: str
    options: dict[str, Any] = field(default_factory=dict)
    scheduler: Any = None          # what configure_lr_scheduler takes, or None

    def build(self, params: Any) -> tuple[torch.optim.Optimizer, Any]:
        """The optimizer (through optreg's public call) and its scheduler (or None)."""
        opt = optreg.configure_optimizer(self.optimizer, params, **self.options)
        sched = optreg.configure_lr_scheduler(opt, self.scheduler) if self.scheduler is not None else None
        return opt, sched


PER_STEP_LR = [round(0.02 * 0.8 ** i, 8) for i in range(4 * STEPS)]

CASES: dict[str, Case] = {c.id: c for c in [
    # OneFlow AdamW (bias correction by the optimizer-wide step) under optreg's own sequential schedule
    Case("oneflow.AdamW+sequential", "oneflow.AdamW", {"lr": 0.02, "betas": [0.9, 0.99], "weight_decay": 0.05},
         [{"name": "oneflow.LinearLR", "start_factor": 0.25, "total_iters": 2},
          {"name": "oneflow.CosineDecayLR", "decay_steps": 8, "alpha": 0.1}]),
    Case("oneflow.LAMB", "oneflow.LAMB", {"lr": 0.02, "weight_decay": 0.01}),
    # Cerebras: preinitialized state, an absolute-valued Cerebras schedule
    Case("cerebras.AdamW+CosineDecayLR", "cerebras.AdamW", {"lr": 0.02, "weight_decay": 0.01},
         {"name": "cerebras.CosineDecayLR", "initial_learning_rate": 0.02, "end_learning_rate": 0.002,
          "total_iters": STEPS}),
    Case("cerebras.Lamb", "cerebras.Lamb", {"lr": 0.02, "weight_decay": 0.01}),
    # MindSpore: a per-step learning-rate list, a schedule as learning_rate, a MindSpore scheduler object
    Case("mindspore.Adam[per-step lr]", "mindspore.Adam", {"learning_rate": PER_STEP_LR, "weight_decay": 0.01}),
    Case("mindspore.Adam[CosineDecayLR]", "mindspore.Adam",
         {"learning_rate": {"name": "CosineDecayLR", "min_lr": 0.002, "max_lr": 0.02, "decay_steps": STEPS}}),
    Case("mindspore.Momentum+WarmUpLR", "mindspore.Momentum",
         {"learning_rate": 0.05, "momentum": 0.9, "weight_decay": 0.01},
         {"name": "mindspore.WarmUpLR", "learning_rate": 0.05, "warmup_steps": 3}),
    # torch's own AdamW under a torch sequential schedule (optreg builds torch's SequentialLR)
    Case("torch.AdamW+sequential", "torch.AdamW", {"lr": 0.02, "weight_decay": 0.05},
         [{"name": "LinearLR", "start_factor": 0.5, "total_iters": 2},
          {"name": "CosineAnnealingLR", "T_max": STEPS}]),
]}

CASE_IDS = list(CASES)

# composite optimizers (a param_groups rule names its own optimizer): their own scenarios (FSDP2), not every
# one (ZeroRedundancyOptimizer refuses a composite: it rebuilds an optimizer from bare tensors)
COMPOSITE_CASES: dict[str, Case] = {c.id: c for c in [
    Case("composite[AdamW+SGD biases]", "torch.AdamW",
         {"lr": 0.02, "weight_decay": 0.05,
          "param_groups": [{"params": ["*bias"], "optimizer": {"name": "SGD", "lr": 0.1, "momentum": 0.9}}]},
         {"name": "LinearLR", "start_factor": 0.5, "total_iters": 3}),
    Case("composite[Muon+AdamW biases]", "torch.Muon",
         {"lr": 0.02, "param_groups": [{"params": ["*bias"], "optimizer": {"name": "AdamW", "lr": 0.01}}]}),
]}
CASES.update(COMPOSITE_CASES)


def case_params(marks: dict[str, Any] | None = None) -> list:
    """pytest params over CASE_IDS; `marks` maps a case id to the marks of that case in one scenario."""
    import pytest

    marks = marks or {}
    return [pytest.param(cid, id=cid, marks=marks.get(cid, ())) for cid in CASE_IDS]


# ---------------------------------------------------------------------------------------------
# model, data, one training step
# ---------------------------------------------------------------------------------------------


class TinyNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(IN, HIDDEN)
        self.fc2 = nn.Linear(HIDDEN, OUT)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.tanh(self.fc1(x)))


def make_model(seed: int = 0) -> TinyNet:
    """The same initial weights whatever the global RNG state is."""
    model = TinyNet()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    return model


def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The global batch of `step` (0-based)."""
    g = torch.Generator().manual_seed(1000 + step)
    return torch.randn(BATCH, IN, generator=g), torch.randn(BATCH, OUT, generator=g)


def shard(step: int, rank: int, world: int = WORLD) -> tuple[torch.Tensor, torch.Tensor]:
    """Rank `rank`'s rows of the global batch of `step`."""
    x, y = batch(step)
    n = BATCH // world
    return x[rank * n:(rank + 1) * n], y[rank * n:(rank + 1) * n]


def loss_fn(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.mse_loss(model(x), y)


def lr_of(opt: torch.optim.Optimizer) -> float:
    lr = opt.param_groups[0]["lr"]
    return float(lr)


def snapshot(model: nn.Module) -> list[torch.Tensor]:
    """The model's parameters, full (an FSDP2 DTensor is gathered), detached copies, in state-dict order."""
    out = []
    for p in model.parameters():
        t = p.detach()
        if hasattr(t, "full_tensor"):
            t = t.full_tensor()
        out.append(t.clone())
    return out


def train(model: nn.Module, opt: Any, sched: Any, start: int, stop: int, *, rank: int | None = None,
          world: int = WORLD) -> list[float]:
    """Steps `start` .. `stop`-1 on the global batch (or on rank `rank`'s shard); the lr each step used."""
    lrs = []
    for step in range(start, stop):
        opt.zero_grad(set_to_none=True)
        loss_fn(model, *(batch(step) if rank is None else shard(step, rank, world))).backward()
        opt.step()
        lrs.append(lr_of(opt))
        if sched is not None:
            sched.step()
    return lrs


def reference(case: Case, steps: int = STEPS, *, sharded: bool = False, bare: bool = False) -> dict[str, Any]:
    """The uninterrupted single-process run: params after `steps` steps and the lr each step used.

    sharded=True computes each step's gradient from the WORLD shards one at a time, averaged as data
    parallelism does: for two ranks (g0 + g1) / 2 equals DDP's g0/2 + g1/2 bit for bit (halving is exact).
    bare=True builds the optimizer from the bare tensors (no names, so no name-based group rules of a dialect)."""
    model = make_model()
    opt, sched = case.build(list(model.parameters()) if bare else model)
    if not sharded:
        lrs = train(model, opt, sched, 0, steps)
        return {"params": snapshot(model), "lrs": lrs}
    assert WORLD == 2
    lrs = []
    for step in range(steps):
        grads = []
        for r in range(WORLD):
            model.zero_grad(set_to_none=True)
            loss_fn(model, *shard(step, r)).backward()
            grads.append([p.grad for p in model.parameters()])
        for p, g0, g1 in zip(model.parameters(), *grads):
            p.grad = (g0 + g1) / 2
        opt.step()
        lrs.append(lr_of(opt))
        if sched is not None:
            sched.step()
    return {"params": snapshot(model), "lrs": lrs}


def assert_same(actual: dict[str, Any], expected: dict[str, Any], tol: dict[str, float] = EXACT,
                what: str = "run") -> None:
    """The run's learning rates and final parameters equal the reference's (within `tol`)."""
    assert len(actual["lrs"]) == len(expected["lrs"]), \
        f"{what}: {len(actual['lrs'])} steps, expected {len(expected['lrs'])}"
    for i, (a, e) in enumerate(zip(actual["lrs"], expected["lrs"])):
        assert a == e or (tol is not EXACT and abs(a - e) <= 1e-12 * abs(e)), \
            f"{what}: the lr of step {i} is {a!r}, expected {e!r} (all: {actual['lrs']} vs {expected['lrs']})"
    assert len(actual["params"]) == len(expected["params"])
    for i, (a, e) in enumerate(zip(actual["params"], expected["params"])):
        torch.testing.assert_close(a, e, **tol, msg=lambda m, i=i: f"{what}, parameter {i} "
                                   f"(max rel. difference {max_rel([a], [e]):.3g}): {m}")


def max_rel(actual: list[torch.Tensor], expected: list[torch.Tensor]) -> float:
    """Largest |a - e| / max(|e|, tiny) over all elements (for messages)."""
    return max(float(((a - e).abs() / e.abs().clamp_min(1e-12)).max()) for a, e in zip(actual, expected))


# ---------------------------------------------------------------------------------------------
# two ranks over gloo on the loopback
# ---------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Outcome:
    """One case of a distributed scenario: each rank's result, or the error that stopped it."""

    results: list[Any]
    error: str | None = None

    def check(self) -> list[Any]:
        if self.error is not None:
            raise AssertionError(f"the distributed run failed:\n{self.error}")
        return self.results

    def assert_ranks(self, part: str, expected: dict[str, Any], tol: dict[str, float], what: str) -> None:
        """Every rank's `part` ("full" or "resumed") equals the reference (`assert_same`)."""
        for rank, result in enumerate(self.check()):
            assert_same(result[part], expected, tol, f"{what}, rank {rank}")


def save_checkpoint(path: Path, rank: int, model: nn.Module, opt: Any, sched: Any) -> None:
    """Rank 0 writes the model, optimizer and scheduler state to `path`; every rank waits for it."""
    import torch.distributed as dist

    if rank == 0:
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                    "scheduler": sched.state_dict() if sched is not None else None}, path)
    dist.barrier()


def load_checkpoint(path: Path, model: nn.Module, opt: Any, sched: Any) -> None:
    """Load what `save_checkpoint` wrote, through `torch.load(weights_only=True)`."""
    ckpt = torch.load(path, weights_only=True)
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optimizer"])
    if sched is not None:
        sched.load_state_dict(ckpt["scheduler"])


def _rank_main(rank: int, world: int, port: int, scenario: Callable, case_ids: list[str], out: str) -> None:
    torch.set_num_threads(1)
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    try:
        for cid in case_ids:
            workdir = Path(out) / "work" / cid.replace("/", "_")
            workdir.mkdir(parents=True, exist_ok=True)
            try:
                result: Any = {"ok": scenario(rank, world, CASES[cid], workdir)}
            except Exception:
                result = {"error": f"rank {rank}: {traceback.format_exc()}"}
            torch.save(result, Path(out) / f"{cid.replace('/', '_')}.{rank}.pt")
            dist.barrier()
    finally:
        dist.destroy_process_group()


def run_distributed(scenario: Callable, out: Path, case_ids: list[str] | None = None, *,
                    timeout: float = 150.0) -> dict[str, Outcome]:
    """Run `scenario(rank, world, case, workdir)` for every case on WORLD gloo ranks (spawned processes).

    A case that raises on every rank is recorded and the next one runs; when the processes die (one rank
    failed inside a collective, a timeout), the unfinished cases run again in a fresh pair and the case
    that broke it is recorded as failed. Every join is bounded by `timeout` seconds."""
    import torch.multiprocessing as mp

    pending = list(case_ids if case_ids is not None else CASE_IDS)
    outcomes: dict[str, Outcome] = {}
    while pending:
        ctx = mp.start_processes(_rank_main, args=(WORLD, free_port(), scenario, pending, str(out)), nprocs=WORLD,
                                 join=False, start_method="spawn")
        deadline = time.monotonic() + timeout
        failure = None
        try:
            while not ctx.join(timeout=1.0):
                if time.monotonic() > deadline:
                    failure = f"timed out after {timeout:.0f} s"
                    break
        except Exception as exc:  # a rank died: ProcessRaisedException / ProcessExitedException
            failure = f"{type(exc).__name__}: {exc}"
        finally:
            for p in ctx.processes:
                if p.is_alive():
                    p.terminate()
                p.join(10)
        done = []
        for cid in pending:
            files = [out / f"{cid.replace('/', '_')}.{r}.pt" for r in range(WORLD)]
            if not all(f.exists() for f in files):
                break
            loaded = [torch.load(f, weights_only=False) for f in files]
            errors = [x["error"] for x in loaded if "error" in x]
            outcomes[cid] = Outcome([x.get("ok") for x in loaded], "\n".join(errors) or None)
            done.append(cid)
        pending = pending[len(done):]
        if pending:
            broken = pending.pop(0)
            outcomes[broken] = Outcome([], failure or "the ranks stopped without a result")
    return outcomes

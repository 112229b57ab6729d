"""Data-parallel training (DistributedDataParallel, gloo, CPU) with the optimizer and scheduler of an optreg
experiment config.

    python examples/ddp_train.py                                  # examples/configs/ddp.yaml on 2 ranks
    python examples/ddp_train.py my_experiment.yaml --steps 20 --world-size 4
    python examples/ddp_train.py --json                           # one JSON summary line at the end

Every rank builds the same model, wraps it in DDP and calls `optreg.build(config, model)`, which validates the
config against the model's parameter names and returns `.optimizer` (the param groups of the config's rules) and
`.scheduler`, stepped once per step as `optreg run` steps it (a micro-batch under `train.accumulation_steps`; on
the loss for ReduceLROnPlateau), with the config's `clip_grad:` before each optimizer step. The config's `train:`
section gives the steps, the global batch size (split across the ranks by a DistributedSampler) and the seed. The
ranks talk over 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import sys
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.optim.lr_scheduler import ReduceLROnPlateau
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import optreg
from optreg.config.run import DEFAULT_STEPS

DEFAULT_CONFIG = Path(__file__).with_name("configs") / "ddp.yaml"


def make_model(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))


def dataset(seed: int, rows: int) -> TensorDataset:
    """Synthetic regression: y = x·w + noise."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, 8, generator=g)
    w = torch.randn(8, 1, generator=g)
    return TensorDataset(x, x @ w + 0.1 * torch.randn(rows, 1, generator=g))


def worker(rank: int, world: int, port: int, config: str, steps: int | None, as_json: bool) -> None:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        experiment = optreg.load_config(config)
        spec = experiment.train
        steps = steps or experiment.run.steps or DEFAULT_STEPS   # train.steps, or epochs × steps_per_epoch
        model = make_model(spec.seed)
        built = optreg.build(experiment, model)           # before wrapping: the rules see the model's own names
        ddp = DDP(model)
        data = dataset(spec.seed, max(spec.batch_size * 8, 256))
        sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=spec.seed)
        loader = DataLoader(data, batch_size=max(1, spec.batch_size // world), sampler=sampler, drop_last=True)
        # the loop `optreg run` runs (optreg.train): `train.accumulation_steps` micro-batches per optimizer step (the
        # gradients of loss / A, synchronised on the last), the config's clip_grad before each optimizer step, the
        # scheduler after every micro-batch; ReduceLROnPlateau steps on the loss averaged over the ranks, which all
        # see the same value and so keep the same lr
        accumulation, plateau = built.run.accumulation, isinstance(built.scheduler, ReduceLROnPlateau)
        losses, lrs, epoch, batches = [], [], 0, iter(())
        for step in range(steps):
            try:
                x, y = next(batches)
            except StopIteration:
                sampler.set_epoch(epoch)
                epoch += 1
                batches = iter(loader)
                x, y = next(batches)
            last = (step + 1) % accumulation == 0   # the micro-batch after which the optimizer steps
            if step % accumulation == 0:
                built.optimizer.zero_grad(set_to_none=True)
            with contextlib.nullcontext() if last else ddp.no_sync():
                loss = nn.functional.mse_loss(ddp(x), y)
                (loss / accumulation).backward()
            lrs.append([float(g["lr"]) for g in built.optimizer.param_groups])
            if last:
                if built.clips:
                    built.clip_gradients(model)
                built.optimizer.step()
            mean = loss.detach().clone()
            dist.all_reduce(mean)
            losses.append(float(mean) / world)
            if built.scheduler is not None:
                built.scheduler.step(losses[-1]) if plateau else built.scheduler.step()
            if rank == 0 and not as_json and (step % 10 == 0 or step == steps - 1):
                print(f"step {step + 1:>5}/{steps}  loss {losses[-1]:.6f}  lr {lrs[-1][0]:.6g}")
        flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
        gathered = [torch.empty_like(flat) for _ in range(world)]
        dist.all_gather(gathered, flat)
        in_sync = all(torch.equal(gathered[0], t) for t in gathered)
        if rank == 0:
            summary = {"optimizer": type(built.optimizer).__module__ + "." + type(built.optimizer).__name__,
                       "scheduler": type(built.scheduler).__name__ if built.scheduler is not None else None,
                       "world_size": world, "steps": steps, "losses": losses, "lrs": lrs, "ranks_in_sync": in_sync}
            if as_json:
                print(json.dumps(summary))
            else:
                print(f"{summary['optimizer']} on {world} ranks: final loss {losses[-1]:.6f} "
                      f"(first {losses[0]:.6f}); parameters identical on every rank: {in_sync}")
    finally:
        dist.destroy_process_group()
    # gloo's threads can still hold tensors whose release while the interpreter finalizes aborts the process (a torch
    # issue, pytorch#179291): the work is done, so the worker leaves without finalizing
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", default=str(DEFAULT_CONFIG), help="optreg experiment config (YAML)")
    parser.add_argument("--steps", type=int, default=None,
                        help="train this many steps of the config's run (its schedule keeps the run's length)")
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="print one JSON summary line instead of a log")
    args = parser.parse_args(argv)
    optreg.load_config(args.config)                       # a bad config stops here, with file:line:column
    mp.spawn(worker, args=(args.world_size, free_port(), args.config, args.steps, args.json),
             nprocs=args.world_size, join=True)


if __name__ == "__main__":
    main()

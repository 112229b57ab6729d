"""The examples run as a user runs them (a subprocess, a few steps) and do what they say: the optimizer and
scheduler are the ones of their YAML config, every step's learning rates follow that config's schedule, the
loss is finite, and the DDP ranks end with identical parameters."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import optreg

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
STEPS = 4


def run_example(script: str, *args: str, timeout: float = 240.0, steps: int | None = STEPS) -> dict:
    path = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    given = ["--steps", str(steps)] if steps is not None else []
    proc = subprocess.run([sys.executable, str(EXAMPLES / script), *args, *given, "--json"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"{script} printed no summary:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return json.loads(lines[-1])


def expected_lrs(config: Path, model: torch.nn.Module, steps: int) -> list[list[float]]:
    """The lr of every group at every step, from the same config built in this process (no gradients: the
    optimizer steps without moving anything, the scheduler advances as in training)."""
    built = optreg.build(config, model)
    lrs = []
    for _ in range(steps):
        built.optimizer.step()
        lrs.append([float(g["lr"]) for g in built.optimizer.param_groups])
        if built.scheduler is not None:
            built.scheduler.step()
    return lrs


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ddp_example_trains_from_its_config():
    config = EXAMPLES / "configs" / "ddp.yaml"
    summary = run_example("ddp_train.py", str(config), "--world-size", "2")
    example = load_example("ddp_train")
    assert summary["optimizer"] == "optreg.dialects.oneflow.lamb.LAMB" and summary["scheduler"] == "ScheduleLR"
    assert summary["world_size"] == 2 and summary["steps"] == STEPS and summary["ranks_in_sync"] is True
    assert summary["lrs"] == expected_lrs(config, example.make_model(0), STEPS)
    assert len(summary["lrs"][0]) == 2, "the config's bias rule makes a second param group"
    assert all(math.isfinite(x) for x in summary["losses"]) and len(summary["losses"]) == STEPS


@pytest.mark.parametrize("script", ["ddp_train.py", "lightning_train.py"])
def test_an_example_runs_a_config_in_epochs_for_its_length(script, tmp_path):
    """`train: {epochs, steps_per_epoch}` is a run length as `train.steps` is: without --steps the example trains
    epochs × steps_per_epoch steps (it read train.steps alone, None here, and failed)."""
    config = tmp_path / "epochs.yaml"
    config.write_text(CONFIG_IN_EPOCHS)
    summary = run_example(script, str(config), *(["--world-size", "2"] if script == "ddp_train.py" else []), steps=None)
    assert summary["steps"] == 6 and len(summary["losses"]) == 6
    assert summary["lrs"] == expected_lrs(config, torch.nn.Linear(8, 1), 6)   # one group, whatever the model


CONFIG_IN_EPOCHS = """\
optimizer: {name: SGD, lr: 0.1}
scheduler: {name: CosineAnnealingLR}
train: {epochs: 2, steps_per_epoch: 3, batch_size: 32, seed: 0}
"""


def test_lightning_example_trains_from_its_config():
    config = EXAMPLES / "configs" / "lightning.yaml"
    summary = run_example("lightning_train.py", str(config))
    example = load_example("lightning_train")
    assert summary["optimizer"] == "optreg.dialects.cerebras.adam.AdamW" and summary["scheduler"] == "ScheduleLR"
    assert summary["steps"] == STEPS
    assert summary["lrs"] == expected_lrs(config, example.Regression(str(config)).net, STEPS)
    assert summary["lrs"][0][0] == pytest.approx(1e-3) and summary["lrs"][1][0] > summary["lrs"][0][0]   # warmup
    assert all(math.isfinite(x) for x in summary["losses"]) and len(summary["losses"]) == STEPS


#: a run whose loop is more than optimizer.step(): ReduceLROnPlateau on the loss, clipping, gradient accumulation
CONFIG_AROUND = """\
optimizer: {{name: SGD, lr: 0.05}}
scheduler: {{name: ReduceLROnPlateau, patience: 0, factor: 0.5}}
clip_grad: {{max_norm: 0.05}}
train: {{steps: 6, accumulation_steps: {accumulation}, batch_size: 32, seed: 0}}
"""


def reference_run(model: torch.nn.Module, batches, accumulation: int) -> tuple[list[float], list[list[float]]]:
    """CONFIG_AROUND as `optreg run` trains it (optreg.train), in plain torch: `accumulation` micro-batches per
    optimizer step (the gradients of loss / accumulation), the global norm clipped to 0.05 before the step, torch's
    ReduceLROnPlateau stepped on the loss of every micro-batch. The losses and the lrs of each micro-batch."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=0, factor=0.5)
    losses, lrs = [], []
    for step, (x, y) in enumerate(batches):
        if step % accumulation == 0:
            optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        (loss / accumulation).backward()
        lrs.append([float(g["lr"]) for g in optimizer.param_groups])
        if (step + 1) % accumulation == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.05)
            optimizer.step()
        losses.append(float(loss.detach()))
        scheduler.step(losses[-1])
    return losses, lrs


@pytest.mark.parametrize("accumulation", [1, 2])
@pytest.mark.parametrize("script", ["ddp_train.py", "lightning_train.py"])
def test_an_example_trains_as_optreg_run_does(script, accumulation, tmp_path):
    """The examples stepped the optimizer and the scheduler alone: a config's clip_grad and accumulation_steps were
    dropped in silence, and ReduceLROnPlateau failed (DDP: `step()` without its metric; Lightning: no monitor).
    Each now trains as `optreg run` does, loss for loss (one rank, so that nothing is averaged)."""
    from torch.utils.data import DataLoader, DistributedSampler

    config = tmp_path / "around.yaml"
    config.write_text(CONFIG_AROUND.format(accumulation=accumulation))
    ddp = script == "ddp_train.py"
    summary = run_example(script, str(config), *(["--world-size", "1"] if ddp else []), steps=None)
    example = load_example(script.removesuffix(".py"))
    data = example.dataset(0, 256)
    if ddp:
        model = example.make_model(0)
        loader = DataLoader(data, batch_size=32, sampler=DistributedSampler(data, 1, 0, shuffle=True, seed=0),
                            drop_last=True)
    else:
        model = example.Regression(str(config)).net
        loader = DataLoader(data, batch_size=32, shuffle=True, generator=torch.Generator().manual_seed(0))
    batches = [batch for batch, _ in zip(loader, range(6))]
    losses, lrs = reference_run(model, batches, accumulation)
    assert summary["scheduler"] == "ReduceLROnPlateau" and summary["steps"] == 6
    assert summary["losses"] == losses and summary["lrs"] == lrs
    assert lrs[-1][0] < 0.05   # the plateau lowered the lr

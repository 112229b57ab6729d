"""The built-in job of `optreg run`: a small MLP fitted to a fixed random teacher on synthetic data."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch import nn

from optreg.config.run import RunLength
from optreg.plot import applied

IN_FEATURES = 16
#: torch's warning for a scheduler stepped before the optimizer (a regex of its start)
EARLY_SCHEDULER_STEP = "Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"


class Block(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.nn.functional.gelu(self.norm(self.fc(x)))


class TinyMLP(nn.Module):
    """inp -> depth x (Linear, LayerNorm, GELU, residual) -> head. Parameter names: inp.*, blocks.N.fc.*,
    blocks.N.norm.*, head.*"""

    def __init__(self, hidden: int = 32, depth: int = 2):
        super().__init__()
        self.inp = nn.Linear(IN_FEATURES, hidden)
        self.blocks = nn.Sequential(*(Block(hidden) for _ in range(depth)))
        self.head = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(self.inp(x))).squeeze(-1)


class Teacher:
    """y = sin(x W1) w2 + noise, from a fixed seed: a smooth regression target."""

    def __init__(self, seed: int):
        g = torch.Generator().manual_seed(10_000 + seed)
        self.w1 = torch.randn(IN_FEATURES, 8, generator=g)
        self.w2 = torch.randn(8, generator=g) / 8 ** 0.5
        self.g = torch.Generator().manual_seed(20_000 + seed)

    def batch(self, size: int) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.randn(size, IN_FEATURES, generator=self.g)
        y = torch.sin(x @ self.w1) @ self.w2 + 0.01 * torch.randn(size, generator=self.g)
        return x, y


@dataclass
class Result:
    losses: list[float]
    lrs: list[float]

    @property
    def final_loss(self) -> float:
        return self.losses[-1]


def make_model(hidden: int, depth: int, seed: int) -> TinyMLP:
    torch.manual_seed(seed)
    return TinyMLP(hidden, depth)


def task_loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The loss `optreg run` trains on: the mean squared error of the model's output against the teacher's."""
    return nn.functional.mse_loss(model(x), y)


def train(model: nn.Module, optimizer: Any, scheduler: Any, steps: int, batch_size: int, seed: int,
          on_step: Callable[[int, float, list[float]], None] | None = None,
          clip: Callable[[nn.Module], Any] | None = None, accumulation: int = 1) -> Result:
    """Run `steps` steps (closure form, so LBFGS works); metric-driven schedulers get the loss; `clip(model)` runs
    between backward() and the update (a config's gradient clipping). With `accumulation` A > 1 a step is a
    micro-batch: A micro-batches' gradients (each loss / A) make one optimizer step, after the A-th; the scheduler
    steps after every micro-batch (optreg.config.run: `train.accumulation_steps`). The lrs are those each step used
    (group 0's in `Result.lrs`, every group's to `on_step(step, loss, lrs)`), as `optreg plot` gives them: read
    before the step, not after its scheduler's step, which sets the next step's."""
    teacher = Teacher(seed)
    losses, lrs = [], []
    run = RunLength(steps, accumulation=accumulation)
    with warnings.catch_warnings():   # once for the run: each change of the filters would forget which warnings
        # were shown, so a warning the step gives (once per place in a Python loop) would print at every step
        warnings.filterwarnings("ignore", EARLY_SCHEDULER_STEP)   # under accumulation, by design
        for step in range(steps):
            # before its scheduler steps; a dynamic lr from its table at the optimizer's step, as plot reads it
            used = [applied(optimizer, i, "lr", run.optimizer_step(step))
                    for i in range(len(optimizer.param_groups))]
            losses.append(_step(model, optimizer, scheduler, teacher.batch(batch_size), step, clip, accumulation))
            lrs.append(used[0])
            if on_step:
                on_step(step, losses[-1], used)
    return Result(losses, lrs)


def _step(model: nn.Module, optimizer: Any, scheduler: Any, batch: tuple[torch.Tensor, torch.Tensor], step: int,
          clip: Callable[[nn.Module], Any] | None, accumulation: int) -> float:
    """One step of `train()` on `batch`, the scheduler's included; its loss."""
    from torch.optim.lr_scheduler import ReduceLROnPlateau

    x, y = batch

    @torch.enable_grad()   # an optimizer that calls it inside its no_grad step (pytorch_optimizer's AliG)
    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = task_loss(model, x, y)
        loss.backward()
        if clip is not None:
            clip(model)
        return loss

    if accumulation == 1:
        loss = float(optimizer.step(closure).detach())
    else:
        loss = _micro_batch(model, optimizer, x, y, step, accumulation, clip)
    if scheduler is not None:
        scheduler.step(loss) if isinstance(scheduler, ReduceLROnPlateau) else scheduler.step()
    return loss


def _micro_batch(model: nn.Module, optimizer: Any, x: torch.Tensor, y: torch.Tensor, step: int, accumulation: int,
                 clip: Callable[[nn.Module], Any] | None) -> float:
    """One micro-batch of gradient accumulation: backward of loss / `accumulation` into the summed gradients
    (cleared on the first of each window), clipping and the optimizer's step after the last. Its loss."""
    if step % accumulation == 0:
        optimizer.zero_grad()
    loss = task_loss(model, x, y)
    (loss / accumulation).backward()
    if (step + 1) % accumulation == 0:
        if clip is not None:
            clip(model)
        optimizer.step()
    return float(loss.detach())


def clip_gradients(clip: Any, parameters: Any) -> Any:
    """Gradient clipping as a config asks for it (optreg.config.run.ClipGrad; nothing for None): the global norm
    with torch.nn.utils.clip_grad_norm_(max_norm, norm_type, error_if_nonfinite), returning the total norm before
    clipping, or each element with clip_grad_value_(max_value), returning None. `parameters`: what build() takes, a
    Module, its named_parameters() or tensors; those without a gradient are left out (clip_grad_value_ fails on
    none)."""
    if clip is None:
        return None
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    elif isinstance(parameters, torch.nn.Module):
        parameters = parameters.parameters()
    parameters = [p for p in (q[1] if isinstance(q, tuple) and len(q) == 2 and isinstance(q[0], str) else q
                              for q in parameters) if p.grad is not None]
    if clip.max_norm is not None:
        return torch.nn.utils.clip_grad_norm_(parameters, clip.max_norm, clip.norm_type,
                                              error_if_nonfinite=clip.error_if_nonfinite)
    if parameters:
        torch.nn.utils.clip_grad_value_(parameters, clip.max_value)
    return None

"""A Lightning module whose optimizer and scheduler come from an optreg experiment config.

    python examples/lightning_train.py                            # examples/configs/lightning.yaml
    python examples/lightning_train.py my_experiment.yaml --steps 20
    python examples/lightning_train.py --json                     # one JSON summary line at the end

`configure_optimizers` calls `optreg.build(config, model)`: the optimizer with the config's param groups, and its
scheduler, which Lightning steps after every optimizer step (`"interval": "step"`; a ReduceLROnPlateau on the
step's loss), as `optreg run` steps it: under `train.accumulation_steps` (Lightning's accumulate_grad_batches) the
module steps it after every micro-batch itself. `configure_gradient_clipping` applies the config's `clip_grad:`.
The config's `train:` section gives the steps (micro-batches), the batch size and the seed. Runs on the CPU,
without a logger or checkpoints.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import lightning.pytorch as pl
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import optreg
from optreg.config.run import DEFAULT_STEPS

DEFAULT_CONFIG = Path(__file__).with_name("configs") / "lightning.yaml"


class Regression(pl.LightningModule):
    def __init__(self, config: str) -> None:
        super().__init__()
        self.experiment = optreg.load_config(config)       # validated now: a bad config builds nothing
        torch.manual_seed(self.experiment.train.seed)
        self.net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
        self.losses: list[float] = []
        self.lrs: list[list[float]] = []

    def training_step(self, batch, index):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.losses.append(float(loss.detach()))
        self.lrs.append([float(g["lr"]) for g in self.built.optimizer.param_groups])   # this step's
        self.log("train_loss", loss)   # the metric a ReduceLROnPlateau steps on
        return loss

    def configure_gradient_clipping(self, optimizer, gradient_clip_val=None, gradient_clip_algorithm=None):
        self.built.clip_gradients(self.net)   # the config's clip_grad (none: nothing), before each optimizer step

    def on_train_batch_end(self, outputs, batch, index):
        if self.micro_batches:   # under gradient accumulation the scheduler steps on every micro-batch
            plateau = isinstance(self.built.scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau)
            self.built.scheduler.step(self.losses[-1]) if plateau else self.built.scheduler.step()

    @property
    def micro_batches(self) -> bool:
        """Whether this module steps the scheduler itself: once per micro-batch under `train.accumulation_steps`
        (as `optreg run` does), where Lightning would step it once per optimizer step."""
        return self.built.scheduler is not None and self.built.run.accumulation > 1

    def configure_optimizers(self):
        self.built = optreg.build(self.experiment, self.net)
        if self.built.scheduler is None or self.micro_batches:
            return self.built.optimizer
        return {"optimizer": self.built.optimizer,
                "lr_scheduler": {"scheduler": self.built.scheduler, "interval": "step", "monitor": "train_loss"}}


def dataset(seed: int, rows: int) -> TensorDataset:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, 8, generator=g)
    w = torch.randn(8, 1, generator=g)
    return TensorDataset(x, x @ w + 0.1 * torch.randn(rows, 1, generator=g))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", default=str(DEFAULT_CONFIG), help="optreg experiment config (YAML)")
    parser.add_argument("--steps", type=int, default=None,
                        help="train this many steps of the config's run (its schedule keeps the run's length)")
    parser.add_argument("--json", action="store_true", help="print one JSON summary line instead of a log")
    args = parser.parse_args(argv)
    module = Regression(args.config)
    spec = module.experiment.train
    steps = args.steps or module.experiment.run.steps or DEFAULT_STEPS   # train.steps, or epochs × steps_per_epoch
    loader = DataLoader(dataset(spec.seed, max(spec.batch_size * 8, 256)), batch_size=spec.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(spec.seed))
    accumulation = module.experiment.train.accumulation_steps   # Lightning's max_steps counts optimizer steps
    trainer = pl.Trainer(max_steps=steps // accumulation, accumulate_grad_batches=accumulation, accelerator="cpu",
                         devices=1, logger=False, enable_checkpointing=False, enable_progress_bar=not args.json,
                         enable_model_summary=False)
    trainer.fit(module, loader)
    summary = {"optimizer": type(trainer.optimizers[0]).__module__ + "." + type(trainer.optimizers[0]).__name__,
               "scheduler": type(module.built.scheduler).__name__ if module.built.scheduler is not None else None,
               "steps": len(module.losses), "losses": module.losses, "lrs": module.lrs}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{summary['optimizer']}: {summary['steps']} steps, final loss {module.losses[-1]:.6f} "
              f"(first {module.losses[0]:.6f}), lr {module.lrs[-1][0]:.6g}")


if __name__ == "__main__":
    main()

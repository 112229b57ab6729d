"""A Lightning module whose optimizer and scheduler come from an optreg experiment config.

    python examples/lightning_train.py                            # examples/configs/lightning.yaml
    python examples/lightning_train.py my_experiment.yaml --steps 20
    python examples/lightning_train.py --json                     # one JSON summary line at the end

`configure_optimizers` calls `optreg.build(config, model)`: the optimizer with the config's param groups, and its
scheduler, which Lightning steps after every optimizer step (`"interval": "step"`). The config's `train:` section
gives the steps, the batch size and the seed. Runs on the CPU, without a logger or checkpoints.
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
        return loss

    def optimizer_step(self, epoch, index, optimizer, optimizer_closure=None):
        super().optimizer_step(epoch, index, optimizer, optimizer_closure)
        self.lrs.append([float(g["lr"]) for g in optimizer.param_groups])

    def configure_optimizers(self):
        built = optreg.build(self.experiment, self.net)
        if built.scheduler is None:
            return built.optimizer
        return {"optimizer": built.optimizer, "lr_scheduler": {"scheduler": built.scheduler, "interval": "step"}}


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
    trainer = pl.Trainer(max_steps=steps, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                         enable_progress_bar=not args.json, enable_model_summary=False)
    trainer.fit(module, loader)
    summary = {"optimizer": type(trainer.optimizers[0]).__module__ + "." + type(trainer.optimizers[0]).__name__,
               "scheduler": type(trainer.lr_scheduler_configs[0].scheduler).__name__
               if trainer.lr_scheduler_configs else None,
               "steps": trainer.global_step, "losses": module.losses, "lrs": module.lrs}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{summary['optimizer']}: {summary['steps']} steps, final loss {module.losses[-1]:.6f} "
              f"(first {module.losses[0]:.6f}), lr {module.lrs[-1][0]:.6g}")


if __name__ == "__main__":
    main()

"""Train optreg's built-in model from a Hydra-composed config.

    python train.py                                   # AdamW + cosine annealing
    python train.py optimizer=sgd optimizer.lr=0.05 optimizer.momentum=0.9
    python train.py -m optimizer=adamw,sgd            # one run per optimizer
"""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

import optreg
from optreg.config.run import DEFAULT_STEPS
from optreg.train import make_model, train


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> float:
    model = make_model(cfg.train.get("hidden", 32), cfg.train.get("depth", 2), cfg.train.get("seed", 0))
    built = optreg.build(cfg, model)
    # the loop `optreg run` runs: the run's length (train.steps, or epochs × steps_per_epoch), its gradient
    # accumulation and the config's clipping, all as build() read them
    spec, steps = built.experiment.train, built.run.steps or DEFAULT_STEPS
    result = train(model, built.optimizer, built.scheduler, steps, spec.batch_size, spec.seed,
                   clip=built.clip_gradients if built.clips else None, accumulation=built.run.accumulation)
    print(f"{cfg.optimizer.name}: final loss {result.final_loss:.6g}  lr {result.lrs[-1]:.6g}  (after {steps} steps)")
    return result.final_loss


if __name__ == "__main__":
    main()

"""Train optreg's built-in model from a Hydra-composed config.

    python train.py                                   # AdamW + cosine annealing
    python train.py optimizer=sgd optimizer.lr=0.05 optimizer.momentum=0.9
    python train.py -m optimizer=adamw,sgd            # one run per optimizer
"""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

import optreg
from optreg.train import make_model, train


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> float:
    spec = cfg.train
    model = make_model(spec.get("hidden", 32), spec.get("depth", 2), spec.seed)
    built = optreg.build(cfg, model)
    result = train(model, built.optimizer, built.scheduler, spec.steps, spec.batch_size, spec.seed)
    print(f"{cfg.optimizer.name}: final loss {result.final_loss:.6g}  lr {result.lrs[-1]:.6g}  "
          f"(after {spec.steps} steps)")
    return result.final_loss


if __name__ == "__main__":
    main()

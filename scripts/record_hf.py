"""Record what transformers' Trainer (transformers 5.23, in the project's dev environment) builds from
TrainingArguments files into tests/fixtures/hf/cases.json, replayed by tests/test_format_hf.py. A manual step: the
tests need only the recorded file.

    python scripts/record_hf.py

Each case is a corpus file (tests/fixtures/hf/corpus: alignment-handbook recipes, which an HfArgumentParser splits
into model, data and training arguments) or an inline mapping. TrainingArguments gets the file's keys that decide
the optimizer and schedule (transformers 4's `warmup_ratio` passed as the `warmup_steps` fraction transformers 5
reads); then `Trainer(model, args).create_optimizer_and_scheduler(num_training_steps=N)`, N = max_steps when > 0,
else the case's run length (epochs × a dataloader's length), on the stand-in model (scripts/stand_in.py).
Recorded: each parameter's weight decay; every group's lr before the optimizer step at the recorded steps (the
scheduler stepped after each optimizer step, as the training loop does); the weights after each of three optimizer
steps with seeded gradients clipped to max_grad_norm as the Trainer clips them.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import torch
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import stand_in  # noqa: E402
from fixture_io import ROOT, write  # noqa: E402

import transformers  # noqa: E402
from transformers import Trainer, TrainingArguments  # noqa: E402

CORPUS = ROOT / "hf" / "corpus"
RUN = 120
KEYS = ("learning_rate", "weight_decay", "adam_beta1", "adam_beta2", "adam_epsilon", "optim", "optim_args",
        "lr_scheduler_type", "lr_scheduler_kwargs", "warmup_steps", "max_grad_norm", "max_steps")

INLINE = [   # (name, TrainingArguments keys, run length)
    ("linear_decay", {"learning_rate": 1e-3, "weight_decay": 0.1, "warmup_steps": 10, "max_steps": 60}, 60),
    ("cosine_ratio", {"learning_rate": 3e-4, "weight_decay": 0.05, "warmup_steps": 0.1,
                      "lr_scheduler_type": "cosine", "max_grad_norm": 0.5}, 90),
    ("restarts", {"learning_rate": 2e-3, "lr_scheduler_type": "cosine_with_restarts", "warmup_steps": 5,
                  "lr_scheduler_kwargs": {"num_cycles": 3}, "optim": "adamw_torch", "max_steps": 80}, 80),
    ("polynomial", {"learning_rate": 1e-3, "lr_scheduler_type": "polynomial", "warmup_steps": 4,
                    "lr_scheduler_kwargs": {"lr_end": 1e-5, "power": 2.0}, "weight_decay": 0.01}, 50),
    ("constant_warmup_sgd", {"learning_rate": 0.05, "optim": "sgd", "optim_args": "momentum=0.9,nesterov=True",
                             "weight_decay": 1e-4, "lr_scheduler_type": "constant_with_warmup",
                             "warmup_steps": 8}, 40),
    ("inverse_sqrt_adagrad", {"learning_rate": 0.01, "optim": "adagrad", "lr_scheduler_type": "inverse_sqrt",
                              "warmup_steps": 6, "max_grad_norm": 0}, 40),
    ("wsd", {"learning_rate": 1e-3, "lr_scheduler_type": "warmup_stable_decay", "warmup_steps": 5,
             "lr_scheduler_kwargs": {"num_decay_steps": 10, "min_lr_ratio": 0.1}, "max_steps": 40}, 40),
    ("min_lr_rmsprop", {"learning_rate": 1e-3, "optim": "rmsprop", "optim_args": "alpha=0.9,centered=true",
                        "lr_scheduler_type": "cosine_with_min_lr", "lr_scheduler_kwargs": {"min_lr": 1e-4},
                        "warmup_steps": 0.05, "weight_decay": 0.02}, 100),
    ("lion_8bit", {"learning_rate": 3e-4, "optim": "paged_lion_8bit", "adam_beta1": 0.95, "adam_beta2": 0.98,
                   "weight_decay": 0.1, "lr_scheduler_type": "cosine", "warmup_steps": 4, "max_steps": 40}, 40),
    ("ademamix_optim_args", {"learning_rate": 1e-3, "optim": "ademamix", "weight_decay": 0.05,
                             "optim_args": "beta3=0.999,alpha=8,t_alpha=30,t_beta3=30", "max_steps": 30}, 30),
    ("adamw_torch_4bit", {"learning_rate": 1e-3, "optim": "adamw_torch_4bit", "adam_beta2": 0.95,
                          "optim_args": "bf16_stochastic_round=false", "weight_decay": 0.01, "max_steps": 30}, 30),
]


def arguments(config: dict) -> dict:
    args = {k: config[k] for k in KEYS if k in config}
    if "warmup_ratio" in config and not config.get("warmup_steps"):
        args["warmup_steps"] = config["warmup_ratio"]
    return args


def record(name: str, config: dict, total: int, source: dict) -> dict:
    args = arguments(config)
    steps = args["max_steps"] if args.get("max_steps", -1) > 0 else total
    net = stand_in.model()
    names = {id(p): n for n, p in net.named_parameters()}
    with tempfile.TemporaryDirectory() as out:
        trainer = Trainer(model=net, args=TrainingArguments(output_dir=out, report_to=[], use_cpu=True, **args))
        trainer.create_optimizer_and_scheduler(num_training_steps=steps)
    optimizer, scheduler = trainer.optimizer, trainer.lr_scheduler
    groups = [g for g in optimizer.param_groups if g["params"]]
    case = {"name": name, **source, "total_steps": steps,
            "groups": [[names[id(p)] for p in g["params"]] for g in groups],
            "weight_decay": {names[id(p)]: g["weight_decay"] for g in groups for p in g["params"]},
            "optimizer_class": type(optimizer).__name__}
    warm = trainer.args.get_warmup_steps(steps)
    wanted = set(stand_in.recorded_steps(steps, [warm, steps - args.get("lr_scheduler_kwargs", {}).get(
        "num_decay_steps", 0)]))
    case.update(stand_in.run(name, net, optimizer, scheduler, steps, wanted, trainer.args.max_grad_norm))
    return case


def main() -> None:
    cases = []
    sources = json.loads((CORPUS / "SOURCES.json").read_text())
    for file in sorted(sources):
        config = yaml.safe_load((CORPUS / file).read_text())
        cases.append(record(file, config, RUN, {"file": file}))
    for name, config, total in INLINE:
        cases.append(record(name, config, total, {"config": config}))
    print(write("hf", "cases", {"framework": f"transformers {transformers.__version__}",
                                "torch": torch.__version__}, cases))


if __name__ == "__main__":
    main()

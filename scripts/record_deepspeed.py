"""Record what DeepSpeed 0.19 builds from ds_config files into tests/fixtures/deepspeed/cases.json, replayed by
tests/test_format_deepspeed.py. A manual step: the tests need only the recorded file.

DeepSpeed installs beside the project's CPU torch without its dependencies (its lr_schedules run on any torch
optimizer; DeepSpeedCPUAdam JIT-builds its kernel on first use):

    pip install --target <DIR> --no-deps deepspeed hjson py-cpuinfo msgpack ninja einops
    PYTHONPATH=<DIR> python scripts/record_deepspeed.py

Each case is a corpus file (tests/fixtures/deepspeed/corpus) or an inline ds_config of one schedule. The optimizer
and scheduler are what `DeepSpeedEngine._configure_basic_optimizer` and `_scheduler_from_config` build (called on
a stand-in for the engine that answers the config's values; Adam and AdamW take the CPU path, DeepSpeedCPUAdam,
as FusedAdam is a CUDA kernel; Adagrad and Lion take DeepSpeedCPUAdagrad / DeepSpeedCPULion under the cases'
zero_optimization.offload_optimizer, as the engine does), on the stand-in model (scripts/stand_in.py) with model.parameters() as the engine passes them. `"auto"` total_num_steps is
the case's run length, as the Hugging Face integration fills it. Recorded: each parameter's weight decay; every
group's lr before the optimizer step at the recorded steps (the constructor's value first, `step()` after each
optimizer step, as the engine does) and, for an optimizer with betas, every group's betas beside it (OneCycle's
momentum cycling); the weights after each of three optimizer steps, with seeded gradients clipped
to gradient_clipping as the engine clips them (zero in the rows ZERO_ROWS names: an embedding row no batch uses).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import stand_in  # noqa: E402
from fixture_io import ROOT, write  # noqa: E402

from deepspeed.runtime.config import DEEPSPEED_OPTIMIZERS  # noqa: E402
from deepspeed.runtime.engine import DeepSpeedEngine  # noqa: E402

CORPUS = ROOT / "deepspeed" / "corpus"
RUN = 120   # the run length of a case whose schedule does not give one
BOUNDARIES = ("warmup_num_steps", "total_num_steps", "cycle_first_step_size", "lr_range_test_step_size")

SCHEDULES = [   # (name, optimizer, scheduler, run length)
    ("warmup_log", {"type": "Adam", "params": {"lr": 0.01}},
     {"type": "WarmupLR", "params": {"warmup_min_lr": 0.001, "warmup_max_lr": 0.02, "warmup_num_steps": 30}}, 60),
    ("warmup_linear_to_lr", {"type": "AdamW", "params": {"lr": 0.01, "weight_decay": 0.1}},
     {"type": "WarmupLR", "params": {"warmup_num_steps": 25, "warmup_type": "linear"}}, 50),
    ("warmup_decay_auto", {"type": "Adam", "params": {"lr": 0.001, "weight_decay": 0.01, "torch_adam": True}},
     {"type": "WarmupDecayLR", "params": {"warmup_max_lr": 0.003, "warmup_num_steps": 10,
                                          "total_num_steps": "auto"}}, 80),
    ("warmup_decay_linear", {"type": "Adam", "params": {"lr": 0.001, "adam_w_mode": False, "weight_decay": 0.01}},
     {"type": "WarmupDecayLR", "params": {"warmup_min_lr": 1e-5, "warmup_max_lr": 0.002, "warmup_num_steps": 7,
                                          "total_num_steps": 40, "warmup_type": "linear"}}, 60),
    ("warmup_cosine", {"type": "AdamW", "params": {"lr": 0.004}},
     {"type": "WarmupCosineLR", "params": {"total_num_steps": 70, "warmup_num_steps": 12,
                                           "warmup_min_ratio": 0.1, "cos_min_ratio": 0.01}}, 90),
    ("one_cycle", {"type": "SGD", "params": {"lr": 0.01, "momentum": 0.9}},
     {"type": "OneCycle", "params": {"cycle_min_lr": 0.001, "cycle_max_lr": 0.01, "cycle_first_step_size": 20,
                                     "cycle_second_step_size": 15, "decay_lr_rate": 0.5, "decay_step_size": 5}},
     70),
    ("one_cycle_stairs", {"type": "AdamW", "params": {"lr": 0.01}},
     {"type": "OneCycle", "params": {"cycle_min_lr": 0.0005, "cycle_max_lr": 0.005, "cycle_first_step_size": 12,
                                     "cycle_first_stair_count": 3, "cycle_momentum": False}}, 40),
    ("range_test", {"type": "Adam", "params": {"lr": 0.01}},
     {"type": "LRRangeTest", "params": {"lr_range_test_min_lr": 0.0001, "lr_range_test_step_size": 10,
                                        "lr_range_test_step_rate": 2.0}}, 50),
    ("range_test_stairs", {"type": "Adagrad", "params": {"lr": 0.01}},
     {"type": "LRRangeTest", "params": {"lr_range_test_min_lr": 0.001, "lr_range_test_step_size": 7,
                                        "lr_range_test_staircase": True}}, 40),
    ("torch_steplr", {"type": "Adam", "params": {"lr": 0.01}},
     {"type": "StepLR", "params": {"step_size": 9, "gamma": 0.5}}, 40),
    ("one_cycle_momentum", {"type": "AdamW", "params": {"lr": 0.01, "weight_decay": 0.01}},
     {"type": "OneCycle", "params": {"cycle_min_lr": 0.001, "cycle_max_lr": 0.01, "cycle_first_step_size": 20,
                                     "cycle_second_step_size": 15, "decay_lr_rate": 0.5, "decay_step_size": 5,
                                     "cycle_min_mom": 0.85, "cycle_max_mom": 0.95, "decay_mom_rate": 0.002}}, 70),
    ("one_cycle_momentum_stairs", {"type": "Adam", "params": {"lr": 0.01, "adam_w_mode": False}},
     {"type": "OneCycle", "params": {"cycle_min_lr": 0.0005, "cycle_max_lr": 0.005, "cycle_first_step_size": 12,
                                     "cycle_second_step_size": 8, "cycle_first_stair_count": 4}}, 40),
    ("one_cycle_momentum_torch_adam", {"type": "Adam", "params": {"lr": 0.01, "torch_adam": True}},
     {"type": "OneCycle", "params": {"cycle_min_lr": 0.001, "cycle_max_lr": 0.004, "cycle_first_step_size": 10,
                                     "decay_lr_rate": 0.2, "decay_step_size": 3}}, 40),
]
OFFLOAD = {"stage": 2, "offload_optimizer": {"device": "cpu"}}
KERNELS = [   # (name, optimizer, scheduler, run length): DeepSpeed's CPU kernels, built with offload_optimizer
    ("adagrad_offload", {"type": "Adagrad", "params": {"lr": 0.05, "weight_decay": 0.01, "eps": 1e-8}},
     {"type": "WarmupLR", "params": {"warmup_num_steps": 10, "warmup_type": "linear"}}, 30),
    ("adagrad_offload_defaults", {"type": "Adagrad", "params": {}}, None, 20),
    ("lion_offload", {"type": "Lion", "params": {"lr": 0.001, "betas": [0.9, 0.99], "weight_decay": 0.1}},
     {"type": "WarmupDecayLR", "params": {"warmup_max_lr": 0.002, "warmup_num_steps": 5, "total_num_steps": 40}},
     40),
    ("lion_offload_one_cycle", {"type": "Lion", "params": {"weight_decay": 0.01}},
     {"type": "OneCycle", "params": {"cycle_min_lr": 0.0001, "cycle_max_lr": 0.001, "cycle_first_step_size": 8}},
     30),
    ("lion_offload_unused_rows", {"type": "Lion", "params": {"lr": 0.001, "betas": [0.9, 0.99],
                                                             "weight_decay": 0.1}},
     {"type": "WarmupLR", "params": {"warmup_num_steps": 5, "warmup_type": "linear"}}, 20),
    ("lion_offload_unused_rows_no_decay", {"type": "Lion", "params": {"lr": 0.002}}, None, 20),
]
#: case -> parameter -> rows whose gradient is zero at every step: with a zero momentum, Lion's interpolation is
#: exactly 0 there (DeepSpeedCPULion then steps -lr)
ZERO_ROWS = {"lion_offload_unused_rows": {"embeddings.weight": [2, 3, 4]},
             "lion_offload_unused_rows_no_decay": {"embeddings.weight": [0, 5], "classifier.bias": [1]}}


class Engine:
    """What `_configure_basic_optimizer` and `_scheduler_from_config` read of the engine, from the ds_config."""

    zenflow = False
    get_optimizer_configuration = DeepSpeedEngine.get_optimizer_configuration

    def __init__(self, config: dict):
        self.config = config

    def optimizer_name(self):
        name = self.config["optimizer"]["type"]
        return name.lower() if name.lower() in DEEPSPEED_OPTIMIZERS else name

    def optimizer_params(self):
        return self.config["optimizer"].get("params", {})

    def zero_use_cpu_optimizer(self):
        # DeepSpeedCPUAdam for Adam/AdamW (FusedAdam is a CUDA kernel); otherwise the engine's own rule
        offload = (self.config.get("zero_optimization") or {}).get("offload_optimizer") or {}
        return self.optimizer_name() in ("adam", "adamw") or offload.get("device") in ("cpu", "nvme")

    def bf16_optimizer_states(self):
        return False

    def scheduler_name(self):
        return (self.config.get("scheduler") or {}).get("type")

    def scheduler_params(self):
        return (self.config.get("scheduler") or {}).get("params", {})


def fill_auto(config: dict, total: int) -> dict:
    config = json.loads(json.dumps(config))
    params = (config.get("scheduler") or {}).get("params", {})
    if params.get("total_num_steps") == "auto":
        params["total_num_steps"] = total
    return config


def record(name: str, config: dict, total: int, source: dict) -> dict:
    config = fill_auto(config, total)
    net = stand_in.model()
    names = {id(p): n for n, p in net.named_parameters()}
    engine = Engine(config)
    optimizer = DeepSpeedEngine._configure_basic_optimizer(engine, net.parameters())
    scheduler = DeepSpeedEngine._scheduler_from_config(engine, optimizer)
    case = {"name": name, **source, "total_steps": total,
            "groups": [[names[id(p)] for p in g["params"]] for g in optimizer.param_groups],
            "weight_decay": {names[id(p)]: g["weight_decay"] for g in optimizer.param_groups for p in g["params"]},
            "optimizer_class": type(optimizer).__name__}
    params = (config.get("scheduler") or {}).get("params", {})
    bounds = [params[k] for k in BOUNDARIES if isinstance(params.get(k), int)]
    if "cycle_first_step_size" in params:
        bounds.append(params["cycle_first_step_size"] + params.get("cycle_second_step_size",
                                                                   params["cycle_first_step_size"]))
    wanted = set(stand_in.recorded_steps(total, bounds))
    case.update(stand_in.run(name, net, optimizer, scheduler, total, wanted, config.get("gradient_clipping", 0),
                             betas=True, zero_rows=ZERO_ROWS.get(name)))
    return case


def main() -> None:
    import deepspeed

    cases = []
    sources = json.loads((CORPUS / "SOURCES.json").read_text())
    for file in sorted(sources):
        config = json.loads((CORPUS / file).read_text())
        params = (config.get("optimizer") or {}).get("params", {})
        if config["optimizer"]["type"].lower() in ("onebitadam", "zerooneadam", "onebitlamb", "lamb") or \
                "auto" in params.values():
            continue   # refused by optreg (tests/test_format_deepspeed.py checks the refusal)
        cases.append(record(file, config, RUN, {"file": file}))
    for name, optimizer, scheduler, total in SCHEDULES:
        config = {"optimizer": optimizer, "scheduler": scheduler, "gradient_clipping": 0.5}
        cases.append(record(name, config, total, {"config": config}))
    for name, optimizer, scheduler, total in KERNELS:
        config = {"optimizer": optimizer, "zero_optimization": OFFLOAD, "gradient_clipping": 0.5,
                  **({"scheduler": scheduler} if scheduler else {})}
        cases.append(record(name, config, total, {"config": config}))
    print(write("deepspeed", "cases", {"framework": f"deepspeed {deepspeed.__version__}",
                                       "torch": torch.__version__}, cases))


if __name__ == "__main__":
    main()

"""Record what NeMo builds from each config of the NeMo corpus (tests/fixtures/nemo/configs/*.yaml) into
tests/fixtures/nemo/runs/<name>.json, replayed by tests/test_nemo_format.py. A manual step: the tests need only the
recorded files.

The toolkit (Lightning, Megatron, apex, ...) is not installed for this: NeMo's own optimizer and schedule code is
loaded from a checkout of NVIDIA/NeMo with its few imports stubbed (`nemo.utils.logging` -> logging,
`maybe_update_config_version` re-stated in `hydra_1x`), and run with torch, omegaconf and hydra-core:

    git -C NeMo archive HEAD nemo/core/optim nemo/core/config | tar -x -C /tmp/nemo-src
    python scripts/record_nemo.py /tmp/nemo-src [CONFIG...]

Loaded and run as they are: `nemo/core/optim/lr_scheduler.py` (`prepare_lr_scheduler`: the schedule classes, the
max_steps rules, its warning for max_steps -1), `nemo/core/optim/optimizers.py` (`get_optimizer`: the name ->
class table), `nemo/core/config/{schedulers,optimizers}.py`. `ModelPT.setup_optimization` needs the whole toolkit;
its two rules that matter here are re-stated in `setup_optimization` below (trainer.max_steps >= 0 replaces the
schedule's max_steps, else trainer.max_epochs / accumulate_grad_batches / limit_train_batches / the device count go
to prepare_lr_scheduler, which computes max_steps from the dataloader). apex's FusedAdam (CUDA) is recorded as
torch's AdamW with FusedAdam's defaults (adam_w_mode true, weight_decay 0), what it computes.

Per config, on the stand-in (tests/nemo_standin.py; NeMo puts every parameter in one group): the lr at the first 20
steps, every k-th step, the schedule's boundaries (warmup, hold, max_steps) and the last step of the run (trainer.max_steps, or
max_epochs × BATCHES steps, at most MAX_STEPS recorded); the weights after 3 optimizer steps with Lightning's
gradient clipping (clip_grad_norm_ / clip_grad_value_ at gradient_clip_val) before each.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import logging
import math
import sys
import types
from pathlib import Path

import torch
from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
CORPUS = ROOT / "tests" / "fixtures" / "nemo" / "configs"
RUNS = ROOT / "tests" / "fixtures" / "nemo" / "runs"
BATCHES = 40         # the dataloader's batches per epoch (one device)
MAX_STEPS = 20000
PER_CONFIG = {"speech_to_text_finetune": 200}   # more batches, where the config's warmup would outlast the run
UNBOUNDED = 200      # the steps recorded of a run without end
WEIGHT_STEPS = 3


def hydra_1x(cfg):
    """NeMo's maybe_update_config_version (nemo/utils/model_utils.py) re-stated: in every mapping, `cls` becomes
    `_target_` and the keys of `params` move up into it (params last, over a key of the same name)."""
    def convert(node):
        if isinstance(node, dict):
            if "cls" in node and "_target_" not in node:
                node["_target_"] = node.pop("cls")
            if "params" in node:
                node.update(node.pop("params"))
            for value in node.values():
                convert(value)
        return node

    return cfg if cfg is None else convert(copy.deepcopy(OmegaConf.to_container(OmegaConf.create(cfg),
                                                                              resolve=True)))


def load_nemo(src: Path) -> types.SimpleNamespace:
    """NeMo's optim modules from the checkout `src`, with their toolkit imports stubbed."""
    def package(name: str) -> types.ModuleType:
        module = types.ModuleType(name)
        module.__path__ = []
        sys.modules[name] = module
        return module

    def load(name: str, rel: str) -> types.ModuleType:
        spec = importlib.util.spec_from_file_location(name, src / rel)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    for name in ("nemo", "nemo.core", "nemo.core.optim", "nemo.utils"):
        package(name)
    sys.modules["nemo.utils"].logging = logging.getLogger("nemo")
    utils = types.ModuleType("nemo.utils.model_utils")
    utils.maybe_update_config_version = hydra_1x
    sys.modules["nemo.utils.model_utils"] = utils
    config = package("nemo.core.config")
    for part in ("schedulers", "optimizers"):
        module = load(f"nemo.core.config.{part}", f"nemo/core/config/{part}.py")
        config.__dict__.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
    for part in ("novograd", "adafactor", "adan"):
        load(f"nemo.core.optim.{part}", f"nemo/core/optim/{part}.py")
    return types.SimpleNamespace(lr_scheduler=load("nemo.core.optim.lr_scheduler", "nemo/core/optim/lr_scheduler.py"),
                                 optimizers=load("nemo.core.optim.optimizers", "nemo/core/optim/optimizers.py"))


def setup_optimization(nemo, optim: dict, trainer: dict | None, params, batches: int):
    """ModelPT.setup_optimization's rules (NeMo 2.x), then NeMo's own get_optimizer and prepare_lr_scheduler."""
    optim = dict(optim)
    if "sched" in optim and trainer is not None:
        sched = dict(optim["sched"])
        if trainer.get("max_steps", -1) is None or trainer.get("max_steps", -1) < 0:
            max_epochs = trainer.get("max_epochs")
            sched["t_max_epochs"] = 1000 if max_epochs is None else max_epochs   # Lightning's default
            sched["t_accumulate_grad_batches"] = trainer.get("accumulate_grad_batches", 1)
            sched["t_limit_train_batches"] = trainer.get("limit_train_batches", 1.0)
            sched["t_num_workers"] = 1
        else:
            sched["max_steps"] = trainer["max_steps"]
        optim["sched"] = sched
    scheduler_config = optim.pop("sched", None)
    name = optim.get("name", "adam")
    target = optim.get("_target_")
    if "args" in optim:   # the older args form: NeMo's own parse_optimizer_args reads it, the keys beside unread
        name = target.rsplit(".", 1)[1].lower() if isinstance(target, str) else name
        args = {**nemo.optimizers.parse_optimizer_args(name, optim["args"]),
                **({"_target_": target} if target else {})}
    else:
        args = {k: v for k, v in optim.items() if k not in ("name", "cls", "lr")}
    if optim.get("lr") is not None:
        args["lr"] = optim["lr"]
    if isinstance(target, str) and target.startswith("torch.optim."):   # hydra.utils.instantiate of the class path
        args.pop("_target_")
        optimizer = getattr(torch.optim, target.rsplit(".", 1)[1])(params, **args)
    elif name == "fused_adam":   # apex FusedAdam (CUDA): adam_w_mode true -> AdamW; its weight_decay default is 0
        cls = torch.optim.AdamW if args.pop("adam_w_mode", True) else torch.optim.Adam
        args.setdefault("weight_decay", 0.0)
        args.pop("bias_correction", None)
        optimizer = cls(params, **args)
    else:
        optimizer = nemo.optimizers.get_optimizer(name)(params, **args)
    loader = torch.utils.data.DataLoader(list(range(batches)), batch_size=1)
    scheduler = nemo.lr_scheduler.prepare_lr_scheduler(optimizer, scheduler_config, loader)
    return optimizer, scheduler


def record(nemo, path: Path) -> dict:
    cfg = OmegaConf.load(path)
    optim = OmegaConf.to_container(OmegaConf.select(cfg, "model.optim"), resolve=True)
    trainer = OmegaConf.to_container(cfg.trainer, resolve=True) if "trainer" in cfg else None
    from nemo_standin import model as stand_in, set_grads

    model = stand_in()
    batches = PER_CONFIG.get(path.stem, BATCHES)
    optimizer, scheduler = setup_optimization(nemo, optim, trainer, model.parameters(), batches)
    accumulate = (trainer or {}).get("accumulate_grad_batches", 1) or 1
    per_epoch = math.ceil(batches / accumulate)
    steps = (trainer or {}).get("max_steps", -1)
    epochs = (trainer or {}).get("max_epochs")
    total = steps if steps is not None and steps >= 0 else per_epoch * (1000 if epochs is None else epochs)
    total = min(total, MAX_STEPS) if total > 0 else UNBOUNDED   # max_epochs -1: Lightning runs without end
    sched = scheduler["scheduler"] if scheduler else None
    by_epoch = scheduler is not None and scheduler["interval"] == "epoch"
    bounds = set()
    if sched is not None:
        for key in ("warmup_steps", "hold_steps", "max_steps", "constant_steps", "decay_steps"):
            value = getattr(sched, key, None)
            if isinstance(value, int):
                bounds |= {value - 1, value, value + 1}
    wanted = set(range(min(20, total))) | set(range(0, total, max(1, total // 40))) | {total - 1} | \
        {b for b in bounds if 0 <= b < total}
    clip = (trainer or {}).get("gradient_clip_val")
    algorithm = (trainer or {}).get("gradient_clip_algorithm") or "norm"
    lrs, weights = {}, []
    for t in range(total):
        if t in wanted:
            lrs[t] = [float(g["lr"]) for g in optimizer.param_groups]
        if t < WEIGHT_STEPS:
            set_grads(model, t)
            if clip:
                if algorithm == "norm":
                    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
                else:
                    torch.nn.utils.clip_grad_value_(model.parameters(), clip)
            optimizer.step()
            weights.append({n: [float(f"{x:.9g}") for x in p.detach().flatten().tolist()]
                            for n, p in model.named_parameters()})
        if sched is not None and (not by_epoch or (t + 1) % per_epoch == 0):
            sched.step()
    return {"format": 1, "config": path.relative_to(ROOT).as_posix(), "framework": f"NeMo lr_scheduler.py / "
            f"optimizers.py (see the script), torch {torch.__version__}", "steps_per_epoch": per_epoch,
            "steps": total, "scheduler": type(sched).__name__ if sched else None,
            "max_steps": getattr(sched, "max_steps", None), "record_steps": sorted(lrs),
            "lrs": [lrs[t] for t in sorted(lrs)], "weights": weights}


def main(argv: list[str]) -> int:
    nemo = load_nemo(Path(argv[0]))
    RUNS.mkdir(parents=True, exist_ok=True)
    paths = [Path(p).resolve() for p in argv[1:]] or sorted(CORPUS.glob("*.yaml"))
    for path in paths:
        if path.stem.startswith("refused_"):
            continue
        fixture = record(nemo, path)
        (RUNS / f"{path.stem}.json").write_text(json.dumps(fixture, separators=(",", ":")) + "\n")
        print(f"wrote {path.stem} ({fixture['scheduler']}, {fixture['steps']} steps)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

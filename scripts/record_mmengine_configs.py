"""Record what MMEngine (mmengine-lite 0.10.7) builds from each config of the MMEngine corpus
(tests/fixtures/mmengine/configs/*.yaml) into tests/fixtures/mmengine/runs/<name>.json, replayed by
tests/test_mmengine_format.py. A manual step: the tests need only the recorded files.

    pip install mmengine-lite          # pure Python; it adds addict, termcolor, yapf (imported by `import mmengine`)
    python scripts/record_mmengine_configs.py                      # record every config of the corpus
                                                                   # (but refused_*: configs MMEngine builds with a
                                                                   # library's own classes, which optreg refuses)
    python scripts/record_mmengine_configs.py --dump CHECKOUT REPO COMMIT PATH...   # add corpus files

`--dump` loads each PATH of a checkout of REPO at COMMIT with mmengine's `Config.fromfile` (its `_base_` files
included) and writes its optim_wrapper, param_scheduler and train_cfg as YAML, with a first line naming the source.

Recording, per config, on the stand-in model (tests/mmengine_standin.py) with STEPS_PER_EPOCH iterations per epoch
(PER_CONFIG: more, where an iteration-based window of the config would not end inside the run):
`build_optim_wrapper(model, optim_wrapper)` gives the groups (each parameter's lr and weight decay before any
schedule); the runner's `_build_param_scheduler` rules give the schedulers (the train loop's max_epochs / max_iters as
the default `end`; `convert_to_iter_based` through `build_iter_from_epoch` with epoch_length = STEPS_PER_EPOCH); they
are stepped as `ParamSchedulerHook` steps them (iteration-based after every iteration, epoch-based after every
epoch). Recorded: every group's lr (and momentum / weight decay when an entry drives them) at the first 20 steps,
every k-th step, each entry's window boundaries and the last step (`values[key][step][column]`, groups with the same
curve sharing a column: `columns[group]`); the weights after each of 3 optimizer steps
(`OptimWrapper.step`: its gradient clipping, then the optimizer's step) with the stand-in's gradients.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

import torch
import yaml

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "mmengine" / "configs"
RUNS = ROOT / "tests" / "fixtures" / "mmengine" / "runs"
sys.path.insert(0, str(ROOT / "tests"))
STEPS_PER_EPOCH = 4
#: a dataloader length that lets an iteration-based window of the config end inside its run
PER_CONFIG = {"imagenet_bs1024_linearlr_bn_nowd": 20, "imagenet_bs2048": 30, "imagenet_bs2048_coslr": 30,
              "schedule_1x": 50}
SECTIONS = ("optim_wrapper", "param_scheduler", "train_cfg")
WEIGHT_STEPS = 3
MAX_STEPS = 20000   # the run recorded: the config's length, at most this


def dump(checkout: Path, repo: str, commit: str, paths: list[str]) -> None:
    from mmengine.config import Config

    for rel in paths:
        data = Config.fromfile(str(checkout / rel)).to_dict()
        out = {k: data[k] for k in SECTIONS if k in data}
        name = Path(rel).stem.replace(".", "_") + ".yaml"
        text = yaml.safe_dump(json.loads(json.dumps(out)), sort_keys=False, default_flow_style=None, width=100)
        (CORPUS / name).write_text(f"# from {repo}@{commit}:{rel} (mmengine Config.fromfile, sections "
                                   f"{', '.join(k for k in SECTIONS if k in out)})\n{text}")
        print("wrote", CORPUS / name)


def schedulers(optimizer, config: dict, epochs: int | None, iters: int | None, by_epoch_loop: bool, e: int):
    """MMEngine's runner's way: the default end, then PARAM_SCHEDULERS.build with epoch_length."""
    from mmengine.registry import PARAM_SCHEDULERS

    raw = config.get("param_scheduler") or []
    out = []
    for entry in ([raw] if isinstance(raw, dict) else raw):
        entry = copy.deepcopy(entry)
        if by_epoch_loop is not None:
            entry.setdefault("end", (epochs if by_epoch_loop else 1) if entry.get("by_epoch", True) else iters)
        out.append(PARAM_SCHEDULERS.build(entry, default_args=dict(optimizer=optimizer,
                                                                    epoch_length=e)))
    return out


def loop(config: dict, e: int) -> tuple[int | None, int | None, bool | None]:
    cfg = config.get("train_cfg")
    if not cfg:
        return None, None, None
    by_epoch = cfg.get("type", "EpochBasedTrainLoop" if cfg.get("by_epoch", True) else "") == "EpochBasedTrainLoop"
    if by_epoch:
        return cfg["max_epochs"], cfg["max_epochs"] * e, True
    return 1, cfg["max_iters"], False


def record_steps(total: int, bounds: set[int]) -> list[int]:
    k = max(1, total // 40)
    steps = set(range(min(20, total))) | set(range(0, total, k)) | {total - 1}
    steps |= {b + d for b in bounds for d in (-1, 0, 1) if 0 <= b + d < total}
    return sorted(steps)


def record(path: Path) -> dict:
    import mmengine
    from mmengine.optim import build_optim_wrapper
    from mmengine_standin import model as standin, set_grads

    config = yaml.safe_load(path.read_text())
    m = standin()
    names = {id(p): n for n, p in m.named_parameters()}
    wrapper = build_optim_wrapper(m, copy.deepcopy(config["optim_wrapper"]))
    optimizer = wrapper.optimizer
    params = {}
    for group in optimizer.param_groups:
        for p in group["params"]:
            params[names[id(p)]] = {"lr": group["lr"], "weight_decay": group.get("weight_decay")}
    e = PER_CONFIG.get(path.stem, STEPS_PER_EPOCH)
    epochs, iters, by_epoch_loop = loop(config, e)
    scheds = schedulers(wrapper, config, epochs, iters, by_epoch_loop, e)
    total = min(iters or MAX_STEPS, MAX_STEPS)
    bounds = set()
    for s in scheds:
        unit = e if s.by_epoch else 1
        bounds |= {s.begin * unit, min(s.end, 10 ** 8) * unit}
    keys = ["lr"] + [k for k in ("momentum", "weight_decay") if any(s.param_name == k for s in scheds)]
    steps = record_steps(total, bounds)
    wanted, values, weights = set(steps), {k: [] for k in keys}, []
    for t in range(total):
        if t in wanted:
            for k in keys:
                values[k].append([float(g[k]) for g in optimizer.param_groups])
        if t < WEIGHT_STEPS:
            set_grads(m, t)
            wrapper.step()
            weights.append({n: [float(f"{x:.9g}") for x in p.detach().flatten().tolist()]   # float32 exactly
                            for n, p in m.named_parameters()})
        else:
            optimizer._global_step = getattr(optimizer, "_global_step", -1) + 1   # as its counted step() would
        for s in scheds:
            if not s.by_epoch:
                s.step()
        if (t + 1) % e == 0:
            for s in scheds:
                if s.by_epoch:
                    s.step()
    columns, unique = [], {}   # groups with identical curves share one column
    for i in range(len(optimizer.param_groups)):
        curve = tuple(tuple(row[i] for row in values[k]) for k in keys)
        columns.append(unique.setdefault(curve, len(unique)))
    firsts = [columns.index(c) for c in range(len(unique))]
    values = {k: [[row[i] for i in firsts] for row in rows] for k, rows in values.items()}
    return {"format": 1, "config": path.relative_to(ROOT).as_posix(),
            "framework": f"mmengine-lite {mmengine.__version__}, torch {torch.__version__}",
            "steps_per_epoch": e, "steps": total, "params": params,
            "groups": [names[id(g["params"][0])] for g in optimizer.param_groups],
            "columns": columns, "record_steps": steps, "values": values, "weights": weights}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", nargs="+", metavar="ARG")
    parser.add_argument("configs", nargs="*")
    args = parser.parse_args(argv)
    if args.dump:
        checkout, repo, commit, *paths = args.dump
        dump(Path(checkout), repo, commit, paths)
        return 0
    RUNS.mkdir(parents=True, exist_ok=True)
    paths = [Path(p).resolve() for p in args.configs] or sorted(CORPUS.glob("*.yaml"))
    for path in paths:
        if path.name.startswith("refused_"):
            continue
        fixture = record(path)
        out = RUNS / (path.stem + ".json")
        out.write_text(json.dumps(fixture, separators=(",", ":")) + "\n")
        print(f"wrote {out} ({fixture['steps']} steps, {len(fixture['groups'])} groups)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

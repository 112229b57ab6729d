"""Record what LiBai builds from every file of the LiBai corpus (tests/suites/libai) on OneFlow 0.9.0 (CPU, eager)
into tests/suites/libai/recorded.json, replayed by tests/test_libai_corpus_recorded.py. A manual step: the tests need
only the recorded file.

Each corpus file is loaded with LiBai's own LazyConfig.load (libai/config/lazy.py, which executes the file: this
script runs only in a throwaway environment, optreg itself never executes configs), then DefaultTrainer's own
_check_batch_size and auto_scale_hyperparams (taken from libai/engine/default.py, one data-parallel rank, a dataset of
STEPS_PER_EPOCH global batches), LiBai's build_optimizer (get_default_optimizer_params over a small stand-in module)
and build_lr_scheduler. Recorded per file: the run (train_iter, warmup_iter, graph mode, gradient accumulation), every
group's parameters, weight decay and clipping, every group's lr at the first 20 iterations, every k-th, each stage
boundary and the last iteration, and the weights after three optimizer steps, with the trainer's order
(clip_grad(), step() every num_accumulation_steps iterations in eager mode; scheduler.step() after every iteration).

LiBai's package is not imported (it imports its models, datasets and distributed runtime). The corpus files are laid
over a copy of the checkout's config files (configs/, projects/*/configs/) so that their imports of other config files
resolve as in LiBai's tree; LiBai's config, optim and scheduler modules are loaded alone from the checkout; every
other module a config imports (libai.models, libai.data, libai.evaluation, libai.tokenizer, flowvision, transformers,
a project's model / dataset / tokenizer code) is a stand-in whose attributes are placeholder classes: a config only
hands them to LazyCall, which records them without calling them. get_config reads <checkout>/configs/<path> (LiBai
installs its configs/ there). libai.layers.LayerNorm is a oneflow.nn.LayerNorm subclass named LayerNorm (the class
get_default_optimizer_params tests for).

Set-up (Python 3.10; OneFlow 0.9.0 as scripts/record_oneflow.py describes):
    python3.10 -m venv <venv> && <venv>/bin/pip install oneflow==0.9.0 omegaconf==2.1.2 hydra-core==1.1.2 \
        cloudpickle pyyaml
    git clone https://github.com/Oneflow-Inc/libai <libai> && git -C <libai> checkout 9dcbe3b2
    <venv>/bin/python scripts/record_libai_corpus.py <libai>
"""

from __future__ import annotations

import ast
import copy
import importlib.abc
import importlib.machinery
import importlib.util
import json
import logging
import math
import os
import shutil
import sys
import tempfile
import types
import zlib
from pathlib import Path

import numpy as np
import oneflow as flow

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "suites" / "libai"
OUT = CORPUS / "recorded.json"
STEPS_PER_EPOCH = 100   # global batches per epoch of the stand-in dataset
FIRST, POINTS, OPT_STEPS = 20, 100, 3
STUB_ROOTS = ("libai", "flowvision", "transformers", "projects", "modeling", "dataset", "data", "utils", "transform")
SHAPES = {"pos_embed": (1, 2, 3), "cls_token": (1, 1, 3), "proj.weight": (3, 4), "proj.bias": (3,),
          "norm.weight": (3,), "norm.bias": (3,), "head.weight": (2, 3), "head.bias": (2,)}


class _Placeholder(type):
    """A class standing for any object a config imports from a module that is not loaded; its attributes are
    placeholders too (transforms.InterpolationMode.BICUBIC), calling it gives it back (a data transform built at
    load time) and it iterates as empty (a dataset's mean and std constants)."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder(name, (), {"__module__": cls.__module__})

    def __call__(cls, *args, **kwargs):
        return cls

    def __iter__(cls):
        return iter(())


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: a module under STUB_ROOTS that no real finder found becomes a placeholder module."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in STUB_ROOTS:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = lambda attr, _m=spec.name: _Placeholder(attr, (), {"__module__": _m})
        return module

    def exec_module(self, module):
        pass


def _load(name: str, path: Path, **attrs):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _functions(path: Path, names: tuple[str, ...], scope: dict) -> dict:
    """LiBai's own functions `names` from `path` (decorators dropped), defined in `scope`."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in names:
            node.decorator_list = []
            found.append(node)
    exec(compile(ast.Module(body=found, type_ignores=[]), str(path), "exec"), scope)
    return {n: scope[n] for n in names}


def setup(libai: Path, tree: Path) -> dict:
    """LiBai's loader, optimizer and scheduler builders and trainer functions, with the stand-ins above."""
    class LayerNorm(flow.nn.LayerNorm):
        pass

    package = lambda name, **attrs: sys.modules.setdefault(name, types.ModuleType(name)).__dict__.update(
        __path__=[], **attrs)
    for name in ("libai", "libai.optim", "libai.scheduler"):
        package(name)
    package("libai.config")
    lazy = _load("libai.config.lazy", libai / "libai/config/lazy.py")
    instantiate = _load("libai.config.instantiate", libai / "libai/config/instantiate.py").instantiate
    get_config = lambda path: lazy.LazyConfig.load(str(tree / "configs" / path))
    sys.modules["libai.config"].__dict__.update(LazyCall=lazy.LazyCall, LazyConfig=lazy.LazyConfig,
                                                instantiate=instantiate, get_config=get_config)
    package("libai.layers", LayerNorm=LayerNorm)
    build = _load("libai.optim.build", libai / "libai/optim/build.py")
    sys.modules["libai.optim"].__dict__.update(get_default_optimizer_params=build.get_default_optimizer_params,
                                               build_optimizer=build.build_optimizer)
    sched = _load("libai.scheduler.lr_scheduler", libai / "libai/scheduler/lr_scheduler.py")
    sched_build = _load("libai.scheduler.build", libai / "libai/scheduler/build.py")
    sys.modules["libai.scheduler"].__dict__.update({k: v for k, v in vars(sched).items() if k.startswith("Warmup")},
                                                   build_lr_scheduler=sched_build.build_lr_scheduler)
    scope = {"math": math, "logging": logging, "dist": types.SimpleNamespace(get_data_parallel_size=lambda: 1)}
    scope.update(_functions(libai / "libai/config/config.py", ("try_get_key",), dict(scope, OmegaConf=__import__(
        "omegaconf").OmegaConf)))
    trainer = _functions(libai / "libai/engine/default.py", ("_check_batch_size", "auto_scale_hyperparams"), scope)
    sys.meta_path.append(_StubFinder())
    sys.path.insert(0, str(tree))
    return {"load": lazy.LazyConfig.load, "build_optimizer": build.build_optimizer,
            "build_lr_scheduler": sched_build.build_lr_scheduler, "LayerNorm": LayerNorm, **trainer}


def config_tree(libai: Path, into: Path) -> None:
    """The checkout's config files (configs/, projects/*/configs/) with the corpus files laid over them."""
    for src in [libai / "configs", *sorted((libai / "projects").glob("*/configs"))]:
        shutil.copytree(src, into / src.relative_to(libai), dirs_exist_ok=True)
    for path in CORPUS.rglob("*.py.txt"):   # stored as data; LiBai's own name without the .txt
        (into / _name(path)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, into / _name(path))


def _name(path: Path) -> str:
    """A corpus file's LiBai path (`configs/vit_imagenet.py` for the stored `configs/vit_imagenet.py.txt`)."""
    return path.relative_to(CORPUS).as_posix().removesuffix(".txt")


def stand_in(layer_norm):
    """Parameters named as the corpus's overrides name them (pos_embed, cls_token), a Linear, LiBai's LayerNorm, a
    head: tests/test_libai_corpus_recorded.py builds the same module in torch."""
    class StandIn(flow.nn.Module):
        def __init__(self):
            super().__init__()
            self.pos_embed = flow.nn.Parameter(flow.zeros(*SHAPES["pos_embed"]))
            self.cls_token = flow.nn.Parameter(flow.zeros(*SHAPES["cls_token"]))
            self.proj = flow.nn.Linear(4, 3)
            self.norm = layer_norm(3)
            self.head = flow.nn.Linear(3, 2)

    model = StandIn()
    assert {n: tuple(p.shape) for n, p in model.named_parameters()} == SHAPES
    return model


def f32(a) -> list:
    return [float(np.format_float_scientific(v, unique=True)) for v in np.asarray(a, np.float32).reshape(-1)]


def _number(value):
    if not isinstance(value, (int, float)):
        raise TypeError(f"a group option LiBai gives is not a number: {value!r}")
    return value


def recorded_steps(run: int, warmup: int, milestones: list) -> list[int]:
    """The first FIRST iterations, every k-th (about POINTS in all), each stage boundary and the last iteration."""
    k = max(1, run // POINTS)
    edges = [b + d for b in (warmup, *milestones) for d in (-1, 0, 1)]
    return sorted({t for t in [*range(FIRST), *range(0, run, k), *edges, run - 1] if 0 <= t < run})


def record(fns: dict, tree: Path, name: str, data: dict) -> dict:
    for module in [m for m in sys.modules if m.split(".")[0] in ("configs", "projects")]:
        del sys.modules[module]   # a fresh import of the config files each file imports, as a new process has
    cfg = fns["load"](str(tree / name))
    fns["_check_batch_size"](cfg)
    loader = types.SimpleNamespace(dataset=range(STEPS_PER_EPOCH * cfg.train.global_batch_size))
    fns["auto_scale_hyperparams"](None, cfg, loader)
    eager = not cfg.graph.enabled
    accumulation = cfg.train.num_accumulation_steps if eager else 1

    def build():
        model = stand_in(fns["LayerNorm"])
        with flow.no_grad():
            for n, p in model.named_parameters():
                p.copy_(flow.tensor(np.asarray(data["init"][n], np.float32).reshape(SHAPES[n])))
        optimizer = fns["build_optimizer"](copy.deepcopy(cfg.optim), model)   # it writes into the config
        return model, optimizer, fns["build_lr_scheduler"](copy.deepcopy(cfg.train.scheduler), optimizer)

    model, optimizer, scheduler = build()
    values = {n: p.numpy() for n, p in model.named_parameters()}   # the optimizer holds other tensor objects

    def param_name(p):
        (found,) = [n for n, v in values.items() if v.shape == tuple(p.shape) and np.array_equal(v, p.numpy())]
        return found

    groups = [{"params": [param_name(p) for p in g.parameters],
               **{k: _number(g[k]) for k in ("lr", "weight_decay", "clip_grad_max_norm", "clip_grad_norm_type")
                  if k in g._options}} for g in optimizer.param_groups]
    run = cfg.train.train_iter
    steps = recorded_steps(run, cfg.train.warmup_iter, list(cfg.train.scheduler.get("milestones") or []))
    lrs = {}
    for t in range(run):
        if t in steps:
            lrs[str(t)] = f32([g["lr"] for g in optimizer.param_groups])
        optimizer.step()
        scheduler.step()
    model, optimizer, scheduler = build()
    params = dict(model.named_parameters())
    weights = []
    for t in range(OPT_STEPS * accumulation):   # EagerTrainer.run_step, then the LRScheduler hook's step()
        if (t + 1) % accumulation == 0:
            for n, p in params.items():
                p.grad = flow.tensor(np.asarray(data["grads"][len(weights)][n], np.float32).reshape(SHAPES[n]))
            optimizer.clip_grad()
            optimizer.step()
            optimizer.zero_grad()
            weights.append({n: f32(p.numpy()) for n, p in params.items()})
        scheduler.step()
    return {"name": name, "train_iter": run, "warmup_iter": cfg.train.warmup_iter, "graph": not eager,
            "num_accumulation_steps": cfg.train.num_accumulation_steps, "optimizer": type(optimizer).__name__,
            "scheduler": type(scheduler).__name__,
            "groups": groups,
            "lrs": lrs, "weights": weights}


def main() -> None:
    for key in ("DATA_DIR", "CHATGLM_HF_DIR"):   # the dataset and model folders ChatGLM's config reads
        os.environ.setdefault(key, f"/path/to/{key.lower()}")
    libai = Path(sys.argv[1]).resolve()
    names = sys.argv[2:]
    rng = np.random.default_rng(zlib.crc32(b"libai_corpus"))
    data = {"init": {n: f32(0.5 * rng.standard_normal(s)) for n, s in SHAPES.items()},
            "grads": [{n: f32(2.0 * rng.standard_normal(s)) for n, s in SHAPES.items()} for _ in range(OPT_STEPS)]}
    cases, failed = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp)
        config_tree(libai, tree)
        fns = setup(libai, tree)
        for path in sorted(CORPUS.rglob("*.py.txt")):
            name = _name(path)
            if "common" in path.parts or name.endswith("T5/configs/optim.py") or names and name not in names:
                continue
            try:
                cases.append(json.loads(json.dumps(record(fns, tree, name, data))))
                print("recorded", name, cases[-1]["train_iter"], cases[-1]["scheduler"])
            except Exception as exc:   # a file LiBai itself cannot build here: listed with LiBai's error
                failed[name] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
                print("failed", name, failed[name])
    OUT.write_text(json.dumps({"framework": f"LiBai 9dcbe3b2 on OneFlow {flow.__version__} CPU (eager)",
                               "dtype": "float32", "steps_per_epoch": STEPS_PER_EPOCH, "shapes": SHAPES, **data,
                               "not_built": failed, "cases": cases}, indent=None, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()

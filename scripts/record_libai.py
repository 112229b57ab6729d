"""Record LiBai's lr schedulers and its optimizer parameter groups with clipping on OneFlow 0.9.0 (CPU, eager) into
tests/fixtures/libai/{schedulers,optimizers}.json, replayed by tests/test_libai_fixtures.py. A manual step: the tests
need only the recorded files.

LiBai itself is not installed (its package imports its models, datasets and distributed runtime). Two modules are
loaded alone from a LiBai checkout: libai/scheduler/lr_scheduler.py (it imports only oneflow) and
libai/optim/build.py, with stand-ins for what build.py imports: libai.config.instantiate (unused by
get_default_optimizer_params) and libai.layers.LayerNorm (a oneflow.nn.LayerNorm subclass named LayerNorm, the class
the grouping tests for). The trainer's order is replayed: loss.backward(), optimizer.clip_grad(), optimizer.step(),
scheduler.step(); max_iter / warmup_iter as DefaultTrainer.auto_scale_hyperparams sets them (train_iter,
ceil(train_iter · warmup_ratio)).

Run with the Python of a OneFlow 0.9.0 environment (Python 3.10; see scripts/record_oneflow.py):
    git clone https://github.com/Oneflow-Inc/libai <libai> && git -C <libai> checkout 9dcbe3b2
    LD_LIBRARY_PATH=... <venv>/bin/python scripts/record_libai.py <libai>
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
import types
import zlib
from pathlib import Path

import numpy as np
import oneflow as flow

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "libai"
TRAIN_ITER = 100
GROUP_LRS = [0.05, 0.05]   # OneFlow's linear WarmUpLR requires one base lr in every group
SCHEDULERS = [   # (case, LiBai function, its arguments beyond max_iter / warmup_iter, warmup_ratio)
    ("cosine", "WarmupCosineLR", {"warmup_factor": 0.001, "alpha": 0.01, "warmup_method": "linear"}, 0.1),
    ("cosine_no_warmup", "WarmupCosineLR", {"warmup_factor": 0.001, "alpha": 0.0}, 0.0),
    ("cosine_constant_warmup", "WarmupCosineLR", {"warmup_factor": 0.1, "warmup_method": "constant"}, 0.05),
    ("cosine_annealing", "WarmupCosineAnnealingLR", {"warmup_factor": 0.01, "eta_min": 0.001}, 0.08),
    ("step", "WarmupStepLR", {"warmup_factor": 0.1, "step_size": 30, "gamma": 0.5}, 0.1),
    ("multistep", "WarmupMultiStepLR", {"warmup_factor": 0.1, "milestones": [0.3, 0.8], "gamma": 0.2}, 0.1),
    ("exponential", "WarmupExponentialLR", {"warmup_factor": 0.2, "gamma": 0.97}, 0.1),
    ("polynomial", "WarmupPolynomialLR", {"warmup_factor": 0.01, "end_learning_rate": 1e-4, "power": 2.0}, 0.1),
]
OPT_STEPS = 3
OPTIM = {"lr": 0.05, "weight_decay": 0.1, "betas": [0.9, 0.95], "eps": 1e-8, "do_bias_correction": True}
GROUPING = {"clip_grad_max_norm": 0.5, "clip_grad_norm_type": 2.0, "weight_decay_norm": 0.0,
            "weight_decay_bias": 0.0}


def load(libai: Path):
    _stub = lambda name, **attrs: sys.modules.setdefault(name, types.ModuleType(name)).__dict__.update(attrs)

    class LayerNorm(flow.nn.LayerNorm):
        pass

    for name in ("libai", "libai.scheduler", "libai.optim"):
        _stub(name, __path__=[])
    _stub("libai.config", instantiate=None)
    _stub("libai.layers", LayerNorm=LayerNorm)
    modules = {}
    for name, rel in (("libai.scheduler.lr_scheduler", "libai/scheduler/lr_scheduler.py"),
                      ("libai.optim.build", "libai/optim/build.py")):
        spec = importlib.util.spec_from_file_location(name, libai / rel)
        modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[name])
    return modules["libai.scheduler.lr_scheduler"], modules["libai.optim.build"], LayerNorm


def f32(a) -> list:
    return [float(np.format_float_scientific(v, unique=True)) for v in np.asarray(a, np.float32).reshape(-1)]


def record_schedulers(sched):
    cases = []
    for name, function, args, ratio in SCHEDULERS:
        params = [flow.nn.Parameter(flow.zeros(1)) for _ in GROUP_LRS]
        opt = flow.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(params, GROUP_LRS)])
        kwargs = dict(args)
        if "milestones" in kwargs:
            kwargs["milestones"] = [int(m * TRAIN_ITER) for m in kwargs["milestones"]]
        scheduler = getattr(sched, function)(opt, max_iter=TRAIN_ITER, warmup_iter=math.ceil(TRAIN_ITER * ratio),
                                             **kwargs)
        lrs = []
        for _ in range(TRAIN_ITER + 20):
            lrs.append(f32([g["lr"] for g in opt.param_groups]))
            opt.step()
            scheduler.step()
        cases.append({"name": name, "scheduler": {"function": function, **args}, "warmup_ratio": ratio,
                      "train_iter": TRAIN_ITER, "group_lrs": GROUP_LRS, "lrs": lrs})
    return cases


def record_optimizer(build, layer_norm):
    rng = np.random.default_rng(zlib.crc32(b"libai_adamw"))
    model = flow.nn.Module()
    model.proj = flow.nn.Linear(4, 3)
    model.norm = layer_norm(3)
    init = {n: (0.5 * rng.standard_normal(tuple(p.shape))).astype(np.float32) for n, p in model.named_parameters()}
    with flow.no_grad():
        for n, p in model.named_parameters():
            p.copy_(flow.tensor(init[n]))
    grads = [{n: (2.0 * rng.standard_normal(v.shape)).astype(np.float32) for n, v in init.items()}
             for _ in range(OPT_STEPS)]
    groups = build.get_default_optimizer_params(model, **GROUPING)
    opt = flow.optim.AdamW(groups, **{**OPTIM, "betas": tuple(OPTIM["betas"])})
    names = {id(p): n for n, p in model.named_parameters()}
    params = dict(model.named_parameters())
    weights = []
    for step in grads:
        for n, p in params.items():
            p.grad = flow.tensor(step[n])
        opt.clip_grad()
        opt.step()
        weights.append({n: f32(p.numpy()) for n, p in params.items()})
    return [{"name": "adamw_default_params_clip", "optim": OPTIM, "params": GROUPING,
             "shapes": {n: list(v.shape) for n, v in init.items()},
             "groups": [{"params": [names[id(p)] for p in g["params"]],
                         **{k: float(g.get(k, OPTIM[k] if k in OPTIM else "nan")) for k in
                            ("weight_decay", "clip_grad_max_norm")}} for g in groups],
             "init": {n: f32(v) for n, v in init.items()}, "grads": [{n: f32(g[n]) for n in init} for g in grads],
             "weights": weights}]


def main() -> None:
    sched, build, layer_norm = load(Path(sys.argv[1]))
    OUT.mkdir(parents=True, exist_ok=True)
    meta = {"framework": f"LiBai 9dcbe3b2 on OneFlow {flow.__version__} CPU (eager)", "dtype": "float32"}
    (OUT / "schedulers.json").write_text(json.dumps({**meta, "cases": record_schedulers(sched)}, indent=1) + "\n")
    (OUT / "optimizers.json").write_text(json.dumps({**meta, "steps": OPT_STEPS,
                                                     "cases": record_optimizer(build, layer_norm)}, indent=1) + "\n")


if __name__ == "__main__":
    main()

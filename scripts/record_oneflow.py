"""Record float32 trajectories of the real OneFlow optimizers and LR schedulers (OneFlow 0.9.0, eager mode
on the CPU) into tests/fixtures/oneflow/{optimizers,schedulers}.json, replayed by
tests/test_oneflow_fixtures.py. A manual step: the tests need only the recorded files.

OneFlow 0.9.0 has wheels for CPython 3.7-3.10 only (a CUDA build, about 965 MB, which runs on a CPU).
Run with the Python of a throwaway Python 3.10 virtual environment outside the project:

    python3.10 -m venv <venv> && <venv>/bin/pip install --upgrade pip
    <venv>/bin/pip install oneflow==0.9.0 numpy==1.26.4
    <venv>/bin/pip install --no-deps nvidia-cublas-cu11==11.10.3.66 nvidia-cudnn-cu11==8.5.0.96
    SP=$(<venv>/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    LD_LIBRARY_PATH=$SP/nvidia/cublas/lib:$SP/nvidia/cudnn/lib <venv>/bin/python scripts/record_oneflow.py

Gradients are explicit numpy arrays seeded by the case name, fed identically to every step; a case's
"no_grad" lists the steps (0-based) at which a parameter gets no gradient.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import oneflow as flow
from oneflow.optim import lr_scheduler as LRS

from fixture_io import SHAPES, STEPS, f32, flat, inputs, refusal, write

SCHED_STEPS = 300
GROUP_LRS = [0.1, 0.02]

CLIP = {"clip_grad_max_norm": 0.5, "clip_grad_norm_type": 2.0}
# (case name, optimizer, constructor options, groups or None[, extra case keys])
OPTIMIZERS = [
    ("sgd", "SGD", {"lr": 0.1}, None),
    ("sgd_momentum_dampening", "SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}, None),
    ("sgd_nesterov", "SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.05}, None),
    ("sgd_maximize", "SGD", {"lr": 0.1, "momentum": 0.5, "maximize": True, "weight_decay": 0.1}, None),
    ("sgd_maximize_without_momentum", "SGD", {"lr": 0.1, "maximize": True}, None),
    ("sgd_groups", "SGD", {"lr": 0.1},
     [{"params": ["w"], "momentum": 0.9, "nesterov": True},
      {"params": ["b", "v"], "lr": 0.02, "momentum": 0.5, "dampening": 0.5, "weight_decay": 0.1}]),
    ("sgd_groups_clip_grad", "SGD", {"lr": 0.1, "momentum": 0.9},
     [{"params": ["w"], **CLIP}, {"params": ["b"], "clip_grad_max_norm": 0.1, "clip_grad_norm_type": 1.0},
      {"params": ["v"]}], {"clip_grad": True}),
    ("adam", "Adam", {"lr": 0.05}, None),
    ("adam_l2_amsgrad", "Adam", {"lr": 0.05, "weight_decay": 0.1, "amsgrad": True, "eps": 1e-4,
                                 "betas": [0.8, 0.95]}, None),
    ("adam_no_bias_correction", "Adam", {"lr": 0.05, "do_bias_correction": False}, None),
    ("adam_groups", "Adam", {"lr": 0.05},
     [{"params": ["w"], "do_bias_correction": False, "weight_decay": 0.2},
      {"params": ["b", "v"], "betas": [0.5, 0.9], "amsgrad": True, "lr": 0.01}]),
    ("adam_missing_gradients", "Adam", {"lr": 0.05}, None, {"no_grad": {"v": [0, 1], "b": [2]}}),
    ("adam_groups_clip_grad", "Adam", {"lr": 0.05},
     [{"params": ["w", "b"], **CLIP}, {"params": ["v"], "weight_decay": 0.1}], {"clip_grad": True}),
    ("adamw", "AdamW", {"lr": 0.05, "weight_decay": 0.1}, None),
    ("adamw_amsgrad", "AdamW", {"lr": 0.05, "weight_decay": 0.05, "amsgrad": True, "eps": 1e-3}, None),
    ("adamw_groups", "AdamW", {"lr": 0.05, "weight_decay": 0.1},
     [{"params": ["w"], "do_bias_correction": False, "weight_decay": 0.3},
      {"params": ["b"], "betas": [0.5, 0.9], "eps": 1e-3, "weight_decay": 0.0, "lr": 0.01},
      {"params": ["v"], "amsgrad": True}]),
    ("adagrad", "Adagrad", {"lr": 0.1, "lr_decay": 0.1, "weight_decay": 0.1, "initial_accumulator_value": 0.5,
                            "eps": 1e-6}, None),
    ("adagrad_groups", "Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.1},
     [{"params": ["w"], "initial_accumulator_value": 2.0, "lr_decay": 0.5},
      {"params": ["b", "v"], "eps": 1e-2, "weight_decay": 0.2}]),
    ("adagrad_missing_gradients", "Adagrad", {"lr": 0.1, "lr_decay": 0.5}, None, {"no_grad": {"w": [0, 1]}}),
    ("rmsprop", "RMSprop", {"lr": 0.01}, None),
    ("rmsprop_centered", "RMSprop", {"lr": 0.01, "centered": True, "weight_decay": 0.1, "alpha": 0.9,
                                     "eps": 1e-4}, None),
    ("rmsprop_groups", "RMSprop", {"lr": 0.01},
     [{"params": ["w"], "centered": True, "alpha": 0.5}, {"params": ["b", "v"], "lr": 0.05, "eps": 1e-3}]),
    ("rmsprop_momentum", "RMSprop", {"lr": 0.01, "momentum": 0.9}, None),
    ("lamb", "LAMB", {"lr": 0.05, "weight_decay": 0.1}, None),
    ("lamb_l2", "LAMB", {"lr": 0.05, "weight_decay": 0.1, "adam_w_mode": False, "betas": [0.8, 0.9]}, None),
    ("lamb_no_bias_correction", "LAMB", {"lr": 0.05, "weight_decay": 0.01, "do_bias_correction": False}, None),
    ("lamb_groups", "LAMB", {"lr": 0.05},
     [{"params": ["w"], "adam_w_mode": False, "weight_decay": 0.3},
      {"params": ["b", "v"], "do_bias_correction": False, "lr": 0.01, "betas": [0.5, 0.9], "weight_decay": 0.1}]),
    ("lamb_amsgrad", "LAMB", {"lr": 0.05, "amsgrad": True}, None),
    ("adadelta", "Adadelta", {"lr": 1.0, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.1}, None),
]

COSINE_DECAY = {"name": "CosineDecayLR", "decay_steps": 200, "alpha": 0.05}
SCHEDULERS = [
    ("constant", {"name": "ConstantLR", "factor": 0.25, "total_iters": 100}),
    ("linear_from_zero", {"name": "LinearLR", "start_factor": 0.0, "end_factor": 0.8, "total_iters": 150}),
    ("linear", {"name": "LinearLR", "start_factor": 0.25, "end_factor": 1.0, "total_iters": 100}),
    ("linear_start_factor_above_one", {"name": "LinearLR", "start_factor": 1.5, "total_iters": 100}),
    ("step", {"name": "StepLR", "step_size": 70, "gamma": 0.5}),
    ("multistep", {"name": "MultiStepLR", "milestones": [50, 120, 250], "gamma": 0.3}),
    ("multistep_unordered", {"name": "MultiStepLR", "milestones": [120, 50], "gamma": 0.3}),
    ("exponential", {"name": "ExponentialLR", "gamma": 0.99}),
    ("polynomial", {"name": "PolynomialLR", "decay_batch": 200, "end_learning_rate": 1e-3, "power": 2.0}),
    ("polynomial_cycle", {"name": "PolynomialLR", "decay_batch": 120, "end_learning_rate": 1e-3, "power": 1.5,
                          "cycle": True}),
    ("cosine_decay", COSINE_DECAY),
    ("cosine_annealing", {"name": "CosineAnnealingLR", "T_max": 100, "eta_min": 0.001}),
    ("warm_restarts", {"name": "CosineAnnealingWarmRestarts", "T_0": 60}),
    ("warm_restarts_mult_decay_limit", {"name": "CosineAnnealingWarmRestarts", "T_0": 20, "T_mult": 2,
                                        "eta_min": 0.001, "decay_rate": 0.8, "restart_limit": 3}),
    ("lambda", {"name": "LambdaLR", "lr_lambda": "0.5 + 0.5 * cos(step / 50)"}),
    ("reduce_on_plateau", {"name": "ReduceLROnPlateau", "mode": "min", "factor": 0.5, "patience": 5,
                           "threshold": 0.01, "cooldown": 3, "min_lr": 0.005}),
    ("sequential_global", {"name": "SequentialLR", "milestones": [50], "schedulers": [
        {"name": "ConstantLR", "factor": 0.1, "total_iters": 50}, {"name": "ExponentialLR", "gamma": 0.99}]}),
    ("sequential_local", {"name": "SequentialLR", "milestones": [50], "interval_rescaling": True, "schedulers": [
        {"name": "ConstantLR", "factor": 0.1, "total_iters": 50}, {"name": "ExponentialLR", "gamma": 0.99}]}),
    ("sequential_mixed_rescaling", {"name": "SequentialLR", "milestones": [40, 120],
                                    "interval_rescaling": [True, False], "schedulers": [
        {"name": "LinearLR", "start_factor": 0.1, "total_iters": 40}, COSINE_DECAY,
        {"name": "StepLR", "step_size": 30, "gamma": 0.5}]}),
    ("chained", {"name": "ChainedScheduler", "schedulers": [
        {"name": "ConstantLR", "factor": 0.1, "total_iters": 60}, {"name": "ExponentialLR", "gamma": 0.995},
        {"name": "CosineAnnealingLR", "T_max": 200, "eta_min": 0.001}]}),
    ("warmup_linear", {"name": "WarmupLR", "scheduler": COSINE_DECAY, "warmup_factor": 0.25, "warmup_iters": 40},
     [0.1, 0.1]),
    ("warmup_linear_groups", {"name": "WarmupLR", "scheduler": COSINE_DECAY, "warmup_factor": 0.25,
                              "warmup_iters": 40}),
    ("warmup_linear_prefix", {"name": "WarmupLR", "scheduler": COSINE_DECAY, "warmup_factor": 0.25,
                              "warmup_iters": 40, "warmup_prefix": True}),
    ("warmup_constant", {"name": "WarmupLR", "scheduler": {"name": "StepLR", "step_size": 70, "gamma": 0.5},
                         "warmup_factor": 0.5, "warmup_iters": 60, "warmup_method": "constant"}),
    ("warmup_alone", {"name": "WarmupLR", "scheduler": None, "warmup_factor": 0.1, "warmup_iters": 30}),
]

_MATH = {"cos": math.cos, "sin": math.sin, "exp": math.exp, "sqrt": math.sqrt, "tanh": math.tanh, "log": math.log,
         "floor": math.floor, "ceil": math.ceil, "min": min, "max": max, "abs": abs, "pi": math.pi, "e": math.e}


def plateau_metrics(steps):
    """A loss that falls, then stalls with small wiggles: drives ReduceLROnPlateau through its reductions."""
    rng = np.random.default_rng(12)
    t = np.arange(steps)
    loss = np.maximum(1.0 / (1 + t / 10), 0.3) + 0.002 * rng.standard_normal(steps)
    return [float(v) for v in loss.astype(np.float32)]


def build_scheduler(optimizer, spec):
    spec = dict(spec)
    name = spec.pop("name")
    if name == "LambdaLR":
        expr = spec.pop("lr_lambda")
        return LRS.LambdaLR(optimizer, lambda step: eval(expr, {"__builtins__": {}}, {**_MATH, "step": step}), **spec)
    if name == "WarmupLR":
        inner = spec.pop("scheduler")
        return LRS.WarmupLR(optimizer if inner is None else build_scheduler(optimizer, inner), **spec)
    if name == "ChainedScheduler":
        return LRS.ChainedScheduler([build_scheduler(optimizer, s) for s in spec["schedulers"]])
    if "schedulers" in spec:
        spec["schedulers"] = [build_scheduler(optimizer, s) for s in spec["schedulers"]]
    return getattr(LRS, name)(optimizer, **spec)


def _kwargs(options):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}


def record_optimizer(name, cls_name, options, groups, extra=None, steps=STEPS):
    extra = extra or {}
    case = {"name": name, "optimizer": f"oneflow.{cls_name}", "options": options, "groups": groups, **extra}
    shapes = {n: SHAPES[n] for n in (SHAPES if groups is None else [p for g in groups for p in g["params"]])}
    init, grads = inputs(name, steps, shapes)
    params = {n: flow.nn.Parameter(flow.tensor(init[n].copy(), dtype=flow.float32)) for n in shapes}
    given = (list(params.values()) if groups is None else
             [{**_kwargs({k: v for k, v in g.items() if k != "params"}), "params": [params[n] for n in g["params"]]}
              for g in groups])
    try:
        opt = getattr(flow.optim, cls_name)(given, **_kwargs(options))
    except Exception as exc:  # the framework refuses the configuration
        case["refused"] = refusal(exc)
        return case
    no_grad = extra.get("no_grad", {})
    out = {n: [] for n in shapes}
    for k in range(steps):
        for n, p in params.items():
            p.grad = None if k in no_grad.get(n, ()) else flow.tensor(grads[n][k].copy(), dtype=flow.float32)
        if extra.get("clip_grad"):
            opt.clip_grad()
        opt.step()
        for n, p in params.items():
            out[n].append(flat(p.detach().numpy()))
    case.update(init={n: flat(v) for n, v in init.items()},
                grads={n: [flat(g) for g in grads[n]] for n in shapes}, params=out)
    return case


def record_scheduler(name, spec, group_lrs=GROUP_LRS, steps=SCHED_STEPS):
    case = {"name": name, "scheduler": {**spec, "name": f"oneflow.{spec['name']}"}, "group_lrs": group_lrs,
            "steps": steps}
    params = [flow.nn.Parameter(flow.zeros(2)) for _ in group_lrs]
    opt = flow.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(params, group_lrs)], lr=group_lrs[0])
    metrics = plateau_metrics(steps) if spec["name"] == "ReduceLROnPlateau" else None
    try:
        sched = build_scheduler(opt, spec)
    except Exception as exc:
        case["refused"] = refusal(exc)
        return case
    lrs = [[float(g["lr"]) for g in opt.param_groups]]
    for t in range(steps):
        opt.step()
        sched.step(metrics[t]) if metrics else sched.step()
        lrs.append([float(g["lr"]) for g in opt.param_groups])
    case["lrs"] = f32(np.array(lrs))
    if metrics:
        case["metrics"] = f32(np.array(metrics))
    return case


def main():
    cases = [record_optimizer(*row) for row in OPTIMIZERS]
    header = {"framework": f"oneflow {flow.__version__} (eager, CPU)", "dtype": "float32", "steps": STEPS,
              "shapes": {n: list(s) for n, s in SHAPES.items()}}
    print(write("oneflow", "optimizers", header, cases))
    scheds = [record_scheduler(*row) for row in SCHEDULERS]
    print(write("oneflow", "schedulers", {"framework": header["framework"]}, scheds))
    for c in cases + scheds:
        if "refused" in c:
            print(f"  refused: {c['name']}: {c['refused']}", file=sys.stderr)


if __name__ == "__main__":
    main()

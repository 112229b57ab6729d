"""Record float32 trajectories of the real Cerebras optimizers and LR schedulers (cerebras.pytorch 2.10,
CPU backend) into tests/fixtures/cerebras/{optimizers,schedulers}.json, replayed by
tests/test_cerebras_fixtures.py. A manual step: the tests need only the recorded files.

Run with the Python of a throwaway Python 3.11 virtual environment outside the project (the package
pins torch 2.4.0 and numpy 1.25.0). A plain `pip install cerebras-pytorch==2.10.0` resolves about
2.5 GB of CUDA wheels; this installs only what `import cerebras.pytorch` needs on a CPU:

    python3.11 -m venv <venv> && <venv>/bin/pip install --upgrade pip
    <venv>/bin/pip install --no-deps cerebras-pytorch==2.10.0 cerebras-appliance==2.10.0 torch==2.4.0
    <venv>/bin/pip install --no-deps nvidia-cuda-runtime-cu12==12.1.105 nvidia-nvtx-cu12==12.1.105 \
        nvidia-cuda-cupti-cu12==12.1.105 nvidia-cusparse-cu12==12.1.0.106 nvidia-cufft-cu12==11.0.2.54 \
        nvidia-curand-cu12==10.3.2.106 nvidia-cublas-cu12==12.1.3.1 nvidia-cudnn-cu12==9.1.0.70 \
        nvidia-nccl-cu12==2.20.5 nvidia-nvjitlink-cu12
    <venv>/bin/pip install numpy==1.25.0 pandas==2.2.3 protobuf==4.21.12 grpcio==1.51.1 \
        grpcio-tools==1.51.1 h5py==3.13.0 hdf5plugin==5.1.0 tensorboard==2.17.1 psutil==7.1.3 tqdm \
        tabulate==0.9.0 dill==0.3.8 tblib==3.0.0 multiprocess==0.70.16 boto3 urllib3==2.6.3 \
        "packaging<26" pyyaml pyjwt zstandard filelock typing-extensions sympy networkx jinja2 fsspec
    <venv>/bin/python scripts/record_cerebras.py

(psutil must be 7.1.3: cerebras.appliance reads psutil._pslinux.pfullmem, which later releases drop.)
Gradients are explicit numpy arrays seeded by the case name, fed identically to every step.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import torch

import cerebras.pytorch as cstorch
from cerebras.pytorch.optim import lr_scheduler as LRS
from cerebras.pytorch.optim import weight_decay_scheduler as WDS

from fixture_io import SHAPES, STEPS, f32, flat, inputs, refusal, write

cstorch.backend("CPU")

SCHED_STEPS = 300
GROUP_LRS = [0.1, 0.02]
GROUP_WEIGHT_DECAYS = [0.1, 0.0]     # the weight-decay schedulers' groups (a group without decay is driven too)
ADJUST = [{"adjust_learning_rate": 0.5}, {"adjust_val": 4.0}]   # ScalePerParam's per-group factors

# (case name, optimizer, constructor options, groups or None[, steps])
OPTIMIZERS = [
    ("adam", "Adam", {"lr": 0.05}, None),
    ("adam_l2_amsgrad", "Adam", {"lr": 0.05, "weight_decay": 0.1, "amsgrad": True, "eps": 1e-4,
                                 "betas": [0.8, 0.95]}, None),
    ("adam_groups_own_weight_decay", "Adam", {"lr": 0.05, "weight_decay": 0.1},
     [{"params": ["w"], "weight_decay": 0.5, "lr": 0.02}, {"params": ["b", "v"]}]),
    ("adam_groups_no_constructor_decay", "Adam", {"lr": 0.05},
     [{"params": ["w"], "weight_decay": 0.5}, {"params": ["b", "v"], "betas": [0.5, 0.9]}]),
    ("adamw", "AdamW", {"lr": 0.05, "weight_decay": 0.1}, None),
    ("adamw_no_correct_bias_amsgrad", "AdamW", {"lr": 0.05, "weight_decay": 0.05, "correct_bias": False,
                                                "amsgrad": True}, None),
    ("adamw_groups", "AdamW", {"lr": 0.05, "weight_decay": 0.1},
     [{"params": ["w"], "correct_bias": False, "weight_decay": 0.3},
      {"params": ["b"], "betas": [0.5, 0.9], "eps": 1e-3, "weight_decay": 0.0, "lr": 0.01},
      {"params": ["v"], "amsgrad": True}]),
    ("adamax", "Adamax", {"lr": 0.05, "weight_decay": 0.1, "betas": [0.8, 0.9], "eps": 1e-4}, None),
    ("adamax_groups_maximize", "Adamax", {"lr": 0.05},
     [{"params": ["w"], "maximize": True}, {"params": ["b", "v"], "weight_decay": 0.2, "lr": 0.01}]),
    ("nadam", "NAdam", {"lr": 0.05, "weight_decay": 0.1, "momentum_decay": 0.01}, None),
    ("nadam_groups", "NAdam", {"lr": 0.05},
     [{"params": ["w"], "momentum_decay": 0.1, "betas": [0.8, 0.99]}, {"params": ["b", "v"], "eps": 1e-3}]),
    ("radam_rectified", "RAdam", {"lr": 0.05, "weight_decay": 0.05, "betas": [0.9, 0.9]}, None, 8),
    ("radam_groups", "RAdam", {"lr": 0.05},
     [{"params": ["w"], "betas": [0.9, 0.9]}, {"params": ["b", "v"], "weight_decay": 0.1, "eps": 1e-3}], 8),
    ("sgd", "SGD", {"lr": 0.1}, None),
    ("sgd_momentum_dampening", "SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01},
     None),
    ("sgd_nesterov", "SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.05}, None),
    ("sgd_maximize", "SGD", {"lr": 0.1, "momentum": 0.5, "maximize": True}, None),
    ("sgd_groups", "SGD", {"lr": 0.1},
     [{"params": ["w"], "momentum": 0.9, "nesterov": True},
      {"params": ["b", "v"], "lr": 0.02, "momentum": 0.5, "dampening": 0.5, "weight_decay": 0.1}]),
    ("sgd_nesterov_dampening", "SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.1, "nesterov": True}, None),
    ("adadelta", "Adadelta", {"lr": 1.0, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.1}, None),
    ("adadelta_groups_maximize", "Adadelta", {"lr": 1.0},
     [{"params": ["w"], "maximize": True, "rho": 0.5}, {"params": ["b", "v"], "lr": 0.5, "eps": 1e-3}]),
    ("asgd", "ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.75, "t0": 2.0, "weight_decay": 0.1}, None),
    ("asgd_groups_maximize", "ASGD", {"lr": 0.05},
     [{"params": ["w"], "maximize": True, "lambd": 0.1}, {"params": ["b", "v"], "alpha": 0.5, "lr": 0.2}]),
    ("rprop", "Rprop", {"lr": 0.05, "etas": [0.4, 1.5], "step_sizes": [1e-3, 0.2]}, None),
    ("rprop_groups", "Rprop", {"lr": 0.05},
     [{"params": ["w"], "etas": [0.3, 1.1]}, {"params": ["b", "v"], "lr": 0.01, "step_sizes": [0.005, 0.02]}]),
    ("adagrad", "Adagrad", {"lr": 0.1, "lr_decay": 0.1, "weight_decay": 0.1, "initial_accumulator_value": 0.5,
                            "eps": 1e-6}, None),
    ("adagrad_groups", "Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.1},
     [{"params": ["w"], "initial_accumulator_value": 2.0, "lr_decay": 0.5},
      {"params": ["b", "v"], "maximize": True, "eps": 1e-2}]),
    ("rmsprop", "RMSprop", {"lr": 0.01}, None),
    ("rmsprop_momentum_centered", "RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.1,
                                              "alpha": 0.9, "eps": 1e-4}, None),
    ("rmsprop_groups", "RMSprop", {"lr": 0.01},
     [{"params": ["w"], "centered": True, "alpha": 0.5}, {"params": ["b", "v"], "momentum": 0.5, "lr": 0.05}]),
    ("lamb", "Lamb", {"lr": 0.05, "weight_decay": 0.1}, None),
    ("lamb_adam", "Lamb", {"lr": 0.05, "weight_decay": 0.1, "adam": True, "betas": [0.8, 0.9]}, None),
    ("lamb_groups", "Lamb", {"lr": 0.05},
     [{"params": ["w"], "weight_decay": 0.3, "eps": 1e-3}, {"params": ["b", "v"], "adam": True, "lr": 0.01}]),
    ("adafactor", "Adafactor", {"lr": 0.05, "weight_decay": 0.01}, None),
    ("adafactor_unscaled", "Adafactor", {"lr": 0.05, "scale_parameter": False, "decay_rate": -0.6,
                                         "eps": [1e-30, 1e-2]}, None),
    ("adafactor_groups", "Adafactor", {"lr": 0.05},
     [{"params": ["w"], "scale_parameter": False, "weight_decay": 0.1}, {"params": ["b", "v"], "lr": 0.2}]),
    ("adafactor_clip_threshold", "Adafactor", {"lr": 0.05, "clip_threshold": 0.5}, None),
    ("adafactor_beta1", "Adafactor", {"lr": 0.05, "beta1": 0.9}, None),
    ("adafactor_relative_step", "Adafactor", {"lr": 0.05, "relative_step": True}, None),
    ("adafactor_warmup_init", "Adafactor", {"lr": 0.05, "warmup_init": True}, None),
    ("lion", "Lion", {"lr": 0.01, "weight_decay": 0.1, "betas": [0.8, 0.95]}, None),
    # Muon is left out: its step() fails in 2.10.0 (TypeError: Muon._zeropower_via_newtonschulz5() got
    # multiple values for argument 'steps'; the helper lacks @staticmethod).
]

COS = {"initial_learning_rate": 0.1, "end_learning_rate": 0.001, "total_iters": 200}
SCHEDULERS = [
    ("constant", {"name": "ConstantLR", "learning_rate": 0.01, "total_iters": 100}),
    ("polynomial", {"name": "PolynomialLR", "initial_learning_rate": 0.1, "end_learning_rate": 0.001,
                    "total_iters": 200, "power": 2.0}),
    ("polynomial_cycle", {"name": "PolynomialLR", "initial_learning_rate": 0.1, "end_learning_rate": 0.001,
                          "total_iters": 120, "power": 0.5, "cycle": True}),
    ("linear", {"name": "LinearLR", "initial_learning_rate": 0.0, "end_learning_rate": 0.1, "total_iters": 150}),
    ("exponential", {"name": "ExponentialLR", "initial_learning_rate": 0.1, "total_iters": 50, "decay_rate": 0.8}),
    ("exponential_staircase", {"name": "ExponentialLR", "initial_learning_rate": 0.1, "total_iters": 50,
                               "decay_rate": 0.8, "staircase": True}),
    ("inverse_time_staircase", {"name": "InverseExponentialTimeDecayLR", "initial_learning_rate": 0.1,
                                "step_exponent": 2, "total_iters": 1000, "decay_rate": 0.5, "staircase": True}),
    ("inverse_time", {"name": "InverseExponentialTimeDecayLR", "initial_learning_rate": 0.1, "step_exponent": 1,
                      "total_iters": 100, "decay_rate": 0.5}),
    ("inverse_sqrt", {"name": "InverseSquareRootDecayLR", "initial_learning_rate": 0.1, "scale": 2.0,
                      "warmup_steps": 50}),
    ("cosine_decay", {"name": "CosineDecayLR", **COS}),
    ("cosine_annealing", {"name": "CosineAnnealingLR", "initial_learning_rate": 0.1, "T_max": 100,
                          "eta_min": 0.001}),
    ("warm_restarts", {"name": "CosineAnnealingWarmRestarts", "initial_learning_rate": 0.1, "T_0": 60,
                       "T_mult": 1, "eta_min": 0.001}),
    ("warm_restarts_t_mult_2", {"name": "CosineAnnealingWarmRestarts", "initial_learning_rate": 0.1, "T_0": 60,
                                "T_mult": 2, "eta_min": 0.001}),
    ("step", {"name": "StepLR", "initial_learning_rate": 0.1, "step_size": 70, "gamma": 0.5}),
    ("multistep", {"name": "MultiStepLR", "initial_learning_rate": 0.1, "gamma": 0.3, "milestones": [50, 120, 250]}),
    ("piecewise", {"name": "PiecewiseConstantLR", "learning_rates": [0.1, 0.05, 0.01], "milestones": [100, 200]}),
    ("lambda", {"name": "LambdaLR", "initial_learning_rate": 0.1, "lr_lambda": "0.5 + 0.5 * cos(step / 50)"}),
    ("multiplicative", {"name": "MultiplicativeLR", "initial_learning_rate": 0.1, "coefficient": 0.99}),
    ("cyclic_triangular", {"name": "CyclicLR", "base_lr": 0.01, "max_lr": 0.1, "step_size_up": 40}),
    ("cyclic_triangular2", {"name": "CyclicLR", "base_lr": 0.01, "max_lr": 0.1, "step_size_up": 40,
                            "step_size_down": 20, "mode": "triangular2"}),
    ("cyclic_exp_range", {"name": "CyclicLR", "base_lr": 0.01, "max_lr": 0.1, "step_size_up": 30,
                          "mode": "exp_range", "gamma": 0.995}),
    ("one_cycle", {"name": "OneCycleLR", "initial_learning_rate": 0.004, "max_lr": 0.1, "total_steps": 250,
                   "pct_start": 0.25}),
    ("one_cycle_three_phase_linear", {"name": "OneCycleLR", "initial_learning_rate": 0.004, "max_lr": 0.1,
                                      "total_steps": 250, "pct_start": 0.3, "final_div_factor": 1e3,
                                      "three_phase": True, "anneal_strategy": "linear"}),
    ("sequential", {"name": "SequentialLR", "milestones": [50], "schedulers": [
        {"name": "LinearLR", "initial_learning_rate": 0.0, "end_learning_rate": 0.1, "total_iters": 50},
        {"name": "CosineDecayLR", **COS}]}),
    ("sequential_three", {"name": "SequentialLR", "milestones": [30, 70], "schedulers": [
        {"name": "ConstantLR", "learning_rate": 0.05, "total_iters": 30},
        {"name": "LinearLR", "initial_learning_rate": 0.05, "end_learning_rate": 0.1, "total_iters": 40},
        {"name": "ExponentialLR", "initial_learning_rate": 0.1, "total_iters": 20, "decay_rate": 0.9}]}),
    ("sequential_milestone_after_stage_end", {"name": "SequentialLR", "milestones": [80], "schedulers": [
        {"name": "LinearLR", "initial_learning_rate": 0.0, "end_learning_rate": 0.1, "total_iters": 50},
        {"name": "CosineDecayLR", **COS}]}),
    ("sequential_milestone_before_stage_end", {"name": "SequentialLR", "milestones": [30], "schedulers": [
        {"name": "LinearLR", "initial_learning_rate": 0.0, "end_learning_rate": 0.1, "total_iters": 50},
        {"name": "CosineDecayLR", **COS}]}),
    ("sequential_jump", {"name": "SequentialLR", "milestones": [50], "schedulers": [
        {"name": "ConstantLR", "learning_rate": 0.1, "total_iters": 50},
        {"name": "ConstantLR", "learning_rate": 0.01}]}),
    ("chained", {"name": "ChainedLR", "schedulers": [
        {"name": "CosineDecayLR", **COS},
        {"name": "ExponentialLR", "initial_learning_rate": 0.5, "total_iters": 50, "decay_rate": 0.9}]}),
    ("chained_scheduler", {"name": "ChainedScheduler", "schedulers": [
        {"name": "StepLR", "initial_learning_rate": 0.1, "step_size": 70, "gamma": 0.5},
        {"name": "MultiplicativeLR", "initial_learning_rate": 2.0, "coefficient": 0.998}]}),
]

WD_COS = {"initial_val": 0.1, "end_val": 0.001, "total_iters": 200}
# (case name, spec, key the scheduler drives, extra keys of each group)
WEIGHT_DECAY_SCHEDULERS = [
    ("constant_wd", {"name": "ConstantWD", "val": 0.01, "total_iters": 100}),
    ("polynomial_wd", {"name": "PolynomialWD", "initial_val": 0.1, "end_val": 0.001, "total_iters": 200,
                       "power": 2.0}),
    ("linear_wd", {"name": "LinearWD", "initial_val": 0.0, "end_val": 0.1, "total_iters": 150}),
    ("exponential_wd", {"name": "ExponentialWD", "initial_val": 0.1, "total_iters": 50, "decay_rate": 0.8,
                        "staircase": True}),
    ("inverse_time_wd", {"name": "InverseExponentialTimeDecayWD", "initial_val": 0.1, "step_exponent": 1,
                         "total_iters": 100, "decay_rate": 0.5}),
    ("inverse_sqrt_wd", {"name": "InverseSquareRootDecayWD", "initial_val": 0.1, "scale": 2.0, "warmup_steps": 50}),
    ("cosine_decay_wd", {"name": "CosineDecayWD", **WD_COS}),
    ("cosine_annealing_wd", {"name": "CosineAnnealingWD", "initial_val": 0.1, "T_max": 100, "eta_min": 0.001}),
    ("warm_restarts_wd", {"name": "CosineAnnealingWarmRestartsWD", "initial_val": 0.1, "T_0": 60, "T_mult": 1,
                          "eta_min": 0.001}),
    ("step_wd", {"name": "StepWD", "initial_val": 0.1, "step_size": 70, "gamma": 0.5}),
    ("multistep_wd", {"name": "MultiStepWD", "initial_val": 0.1, "gamma": 0.3, "milestones": [50, 120, 250]}),
    ("piecewise_wd", {"name": "PiecewiseConstantWD", "vals": [0.1, 0.05, 0.01], "milestones": [100, 200]}),
    ("lambda_wd", {"name": "LambdaWD", "initial_val": 0.1, "lr_lambda": "0.5 + 0.5 * cos(step / 50)"}),
    ("multiplicative_wd", {"name": "MultiplicativeWD", "initial_val": 0.1, "coefficient": 0.99}),
    ("cyclic_wd", {"name": "CyclicWD", "base_val": 0.01, "max_val": 0.1, "step_size_up": 40,
                   "step_size_down": 20, "mode": "triangular2"}),
    ("one_cycle_wd", {"name": "OneCycleWD", "initial_val": 0.004, "max_val": 0.1, "total_steps": 250,
                      "pct_start": 0.25}),
    ("sequential_wd", {"name": "SequentialWD", "milestones": [50], "schedulers": [
        {"name": "LinearWD", "initial_val": 0.0, "end_val": 0.1, "total_iters": 50},
        {"name": "CosineDecayWD", **WD_COS}]}),
    ("chained_wd", {"name": "ChainedWD", "schedulers": [
        {"name": "CosineDecayWD", **WD_COS},
        {"name": "ExponentialWD", "initial_val": 0.5, "total_iters": 50, "decay_rate": 0.9}]}),
    ("scale_per_param_wd", {"name": "ScalePerParamWD", "scheduler": {"name": "CosineDecayWD", **WD_COS}}),
    ("sequential_wd_of_an_lr_stage", {"name": "SequentialWD", "milestones": [50], "schedulers": [
        {"name": "LinearLR", "initial_learning_rate": 0.0, "end_learning_rate": 0.1, "total_iters": 50},
        {"name": "CosineDecayWD", **WD_COS}]}),
]
SCALED_LR_SCHEDULERS = [
    ("scale_per_param_lr", {"name": "ScalePerParamLR", "scheduler": {"name": "CosineDecayLR", **COS}}),
    ("scale_per_param_lr_of_a_sequential", {"name": "ScalePerParamLR", "scheduler": {
        "name": "SequentialLR", "milestones": [50], "schedulers": [
            {"name": "LinearLR", "initial_learning_rate": 0.0, "end_learning_rate": 0.1, "total_iters": 50},
            {"name": "CosineDecayLR", **COS}]}}),
]

_TORCH_FUNCS = {"cos": torch.cos, "sin": torch.sin, "exp": torch.exp, "sqrt": torch.sqrt, "tanh": torch.tanh,
                "log": torch.log, "floor": torch.floor, "ceil": torch.ceil, "pi": math.pi, "e": math.e}


def _lambda_lr(optimizer, initial_learning_rate, lr_lambda):
    """Cerebras takes the lambda from a subclass; this one evaluates the expression on the step tensor."""

    class ExpressionLR(LRS.LambdaLR):
        def set_value_lambda(self):
            return [lambda epoch: eval(lr_lambda, {"__builtins__": {}}, {**_TORCH_FUNCS, "step": epoch})]

    return ExpressionLR(optimizer, initial_learning_rate)


def _lambda_wd(optimizer, initial_val, lr_lambda):
    class ExpressionWD(WDS.LambdaWD):
        def set_value_lambda(self):
            return [lambda epoch: eval(lr_lambda, {"__builtins__": {}}, {**_TORCH_FUNCS, "step": epoch})]

    return ExpressionWD(optimizer, initial_val)


def build_scheduler(optimizer, spec):
    spec = dict(spec)
    name = spec.pop("name")
    if name == "LambdaLR":
        return _lambda_lr(optimizer, **spec)
    if name == "LambdaWD":
        return _lambda_wd(optimizer, **spec)
    if "schedulers" in spec:
        spec["schedulers"] = [build_scheduler(optimizer, s) for s in spec["schedulers"]]
    if "scheduler" in spec:
        spec["scheduler"] = build_scheduler(optimizer, spec["scheduler"])
    cls = getattr(WDS if name.endswith("WD") else LRS, name)
    if name in ("ChainedLR", "ChainedScheduler", "ChainedWD"):
        return cls(**spec)
    return cls(optimizer, **spec)


def _optimizer_kwargs(options):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}


def record_optimizer(name, cls_name, options, groups, steps=STEPS):
    case = {"name": name, "optimizer": f"cerebras.{cls_name}", "options": options, "groups": groups}
    shapes = {n: SHAPES[n] for n in (SHAPES if groups is None else [p for g in groups for p in g["params"]])}
    init, grads = inputs(name, steps, shapes)
    params = {n: torch.nn.Parameter(torch.from_numpy(init[n].copy())) for n in shapes}
    given = (list(params.values()) if groups is None else
             [{**_optimizer_kwargs({k: v for k, v in g.items() if k != "params"}),
               "params": [params[n] for n in g["params"]]} for g in groups])
    try:
        opt = getattr(cstorch.optim, cls_name)(given, **_optimizer_kwargs(options))
    except Exception as exc:  # the framework refuses the configuration
        case["refused"] = refusal(exc)
        return case
    out = {n: [] for n in shapes}
    for k in range(steps):
        for n, p in params.items():
            p.grad = torch.from_numpy(grads[n][k].copy())
        opt.step()
        for n, p in params.items():
            out[n].append(flat(p.detach().numpy()))
    case.update(init={n: flat(v) for n, v in init.items()},
                grads={n: [flat(g) for g in grads[n]] for n in shapes}, params=out)
    return case


def _values(opt, key="lr"):
    return [float(torch.as_tensor(g[key]).float()) for g in opt.param_groups]


def record_scheduler(name, spec, steps=SCHED_STEPS, key="lr", group_extras=None):
    """The values of `key` in every group before the first step and after each scheduler step ("lrs"); a
    weight-decay case says its key and the groups' weight decays, a ScalePerParam case the groups' factors."""
    case = {"name": name, "scheduler": {**spec, "name": f"cerebras.{spec['name']}"}, "group_lrs": GROUP_LRS,
            "steps": steps}
    extras = group_extras or [{} for _ in GROUP_LRS]
    if key != "lr":
        case["key"] = key
        extras = [{**e, key: wd} for e, wd in zip(extras, GROUP_WEIGHT_DECAYS)]
    if group_extras or key != "lr":
        case["group_extras"] = extras
    params = [torch.nn.Parameter(torch.zeros(2)) for _ in GROUP_LRS]
    opt = cstorch.optim.SGD([{"params": [p], "lr": lr, **e} for p, lr, e in zip(params, GROUP_LRS, extras)],
                            lr=GROUP_LRS[0])
    try:
        sched = build_scheduler(opt, spec)
    except Exception as exc:
        case["refused"] = refusal(exc)
        return case
    lrs = [_values(opt, key)]
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(_values(opt, key))
    case["lrs"] = f32(np.array(lrs))
    return case


def main():
    cases = [record_optimizer(*row) for row in OPTIMIZERS]
    header = {"framework": f"cerebras.pytorch {cstorch.__version__} (CPU backend), torch {torch.__version__}",
              "dtype": "float32", "steps": STEPS, "shapes": {n: list(s) for n, s in SHAPES.items()}}
    print(write("cerebras", "optimizers", header, cases))
    scheds = [record_scheduler(*row) for row in SCHEDULERS]
    scheds += [record_scheduler(name, spec, key="weight_decay", group_extras=ADJUST if "scale_per" in name else None)
               for name, spec in WEIGHT_DECAY_SCHEDULERS]
    scheds += [record_scheduler(name, spec, group_extras=ADJUST) for name, spec in SCALED_LR_SCHEDULERS]
    print(write("cerebras", "schedulers", {"framework": header["framework"]}, scheds))
    for c in cases + scheds:
        if "refused" in c:
            print(f"  refused: {c['name']}: {c['refused']}", file=sys.stderr)


if __name__ == "__main__":
    main()

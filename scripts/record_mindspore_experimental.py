"""Record float32 trajectories of MindSpore 2.10's torch-style optimizers and lr schedulers
(mindspore.experimental.optim and its lr_scheduler) on the CPU into tests/fixtures/mindspore_experimental/, and of
mindspore.nn's ASGD, Rprop, AdaMax and Adadelta into tests/fixtures/mindspore/optimizers.json (layout in
fixture_io.py), replayed by tests/test_mindspore_experimental.py. A manual step: the tests need only the recorded
files.

Run with the Python of a throwaway Python 3.11 virtual environment outside the project:

    python3.11 -m venv <venv> && <venv>/bin/pip install mindspore==2.10.0 "numpy<2"
    <venv>/bin/python scripts/record_mindspore_experimental.py

Gradients are explicit numpy arrays seeded by the case name (fixture_io.inputs). PyNative mode.
A case whose constructor or a step raises is recorded as refused, with the exception.

mindspore.mint.optim is not recorded: on the CPU of 2.10, Adam and SGD run but leave the weights unchanged,
AdamW has no kernel ("The kernel AdamW unregistered") and FusedAdamW fails in InplaceCopy; optreg's mint rows
follow their documented formula and source instead.
"""

from __future__ import annotations

import sys

import numpy as np

import mindspore as ms
from mindspore import Parameter, Tensor
from mindspore.experimental import optim as exp
from mindspore.experimental.optim import lr_scheduler as LRS

from fixture_io import SHAPES, STEPS, f32, flat, inputs, refusal, write

ms.set_context(mode=ms.PYNATIVE_MODE)
ms.set_device("CPU")

SCHED_STEPS = 60
GROUP_LRS = [0.1, 0.02]
EXP = "mindspore_experimental"

# (case name, optimizer, constructor options, groups or None)
OPTIMIZERS = [
    ("adam", "Adam", {"lr": 0.05}, None),
    ("adam_l2_amsgrad_maximize", "Adam", {"lr": 0.05, "weight_decay": 0.1, "amsgrad": True, "maximize": True,
                                               "eps": 1e-3, "betas": [0.8, 0.95]}, None),
    ("adam_small_grads", "Adam", {"lr": 0.05}, None),
    ("adam_groups", "Adam", {"lr": 0.05}, [{"params": ["w"], "weight_decay": 0.3, "lr": 0.01},
                                               {"params": ["b", "v"], "betas": [0.5, 0.9]}]),
    ("adamw", "AdamW", {"lr": 0.05, "weight_decay": 0.1}, None),
    ("adamw_amsgrad_maximize", "AdamW", {"lr": 0.05, "weight_decay": 0.1, "amsgrad": True, "maximize": True},
     None),
    ("sgd", "SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}, None),
    ("sgd_nesterov_maximize", "SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "maximize": True}, None),
    ("adadelta", "Adadelta", {"lr": 1.0, "rho": 0.8, "eps": 1e-4, "weight_decay": 0.1}, None),
    ("adagrad", "Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.1},
     None),
    ("adamax", "Adamax", {"lr": 0.05, "weight_decay": 0.1, "betas": [0.8, 0.9], "eps": 1e-4}, None),
    ("asgd", "ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 2.0, "weight_decay": 0.1}, None),
    ("nadam", "NAdam", {"lr": 0.05, "weight_decay": 0.1, "momentum_decay": 0.01}, None),
    ("radam", "RAdam", {"lr": 0.05, "weight_decay": 0.1, "betas": [0.5, 0.6]}, None),
    ("rmsprop", "RMSprop", {"lr": 0.01, "weight_decay": 0.1}, None),
    ("rmsprop_momentum_centered", "RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}, None),
    ("rprop", "Rprop", {"lr": 0.05, "etas": [0.4, 1.3], "step_sizes": [1e-4, 0.2]}, None),
]
SMALL = {"adam_small_grads": 1e-3}
# mindspore.nn (MindSpore's own signatures and gradient pipeline)
NN_OPTIMIZERS = [
    ("nn_asgd", "ASGD", {"learning_rate": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 2.0, "weight_decay": 0.1}, None),
    ("nn_rprop", "Rprop", {"learning_rate": 0.05, "etas": [0.4, 1.3], "step_sizes": [1e-4, 0.2],
                           "weight_decay": 0.1}, None),
    ("nn_adamax", "AdaMax", {"learning_rate": 0.05, "beta1": 0.8, "beta2": 0.9, "eps": 1e-3, "weight_decay": 0.1,
                             "loss_scale": 4.0}, None),
    ("nn_adadelta", "Adadelta", {"learning_rate": 1.0, "rho": 0.8, "epsilon": 1e-4, "weight_decay": 0.1,
                                 "loss_scale": 2.0}, None),
    ("nn_adadelta_groups", "Adadelta", {"learning_rate": 0.5},
     [{"params": ["w"], "lr": 0.1, "weight_decay": 0.2}, {"params": ["b", "v"]}]),
    ("nn_adamax_groups", "AdaMax", {"learning_rate": 0.05},
     [{"params": ["w", "v"], "weight_decay": 0.1}, {"params": ["b"], "lr": 0.01}]),
]
LOSS_SCALED = {"nn_adamax": 4.0, "nn_adadelta": 2.0}   # gradients recorded as the loss-scaled ones   # gradient scale of a case (default 1)

SCHEDULERS = [
    ("step", {"name": "StepLR", "step_size": 7, "gamma": 0.5}),
    ("linear", {"name": "LinearLR", "start_factor": 0.25, "end_factor": 1.0, "total_iters": 20}),
    ("exponential", {"name": "ExponentialLR", "gamma": 0.95}),
    ("polynomial", {"name": "PolynomialLR", "total_iters": 40, "power": 2.0}),
    ("multiplicative", {"name": "MultiplicativeLR", "lr_lambda": "0.97"}),
    ("constant", {"name": "ConstantLR", "factor": 0.5, "total_iters": 10}),
    ("multistep", {"name": "MultiStepLR", "milestones": [10, 25, 40], "gamma": 0.3}),
    ("lambda", {"name": "LambdaLR", "lr_lambda": "0.5 + 0.5 * cos(step / 10)"}),
    ("cosine_annealing", {"name": "CosineAnnealingLR", "T_max": 25, "eta_min": 0.001}),
    ("warm_restarts", {"name": "CosineAnnealingWarmRestarts", "T_0": 10, "T_mult": 2, "eta_min": 0.001}),
    ("cyclic", {"name": "CyclicLR", "base_lr": 0.01, "max_lr": 0.1, "step_size_up": 8, "mode": "triangular2"}),
    ("cyclic_exp_range", {"name": "CyclicLR", "base_lr": 0.01, "max_lr": 0.1, "step_size_up": 6, "step_size_down": 4,
                          "mode": "exp_range", "gamma": 0.98}),
    ("sequential", {"name": "SequentialLR", "milestones": [15], "schedulers": [
        {"name": "LinearLR", "start_factor": 0.1, "total_iters": 15},
        {"name": "ExponentialLR", "gamma": 0.9}]}),
    ("chained", {"name": "ChainedScheduler", "schedulers": [
        {"name": "StepLR", "step_size": 10, "gamma": 0.5},
        {"name": "ExponentialLR", "gamma": 0.97}]}),
    ("plateau", {"name": "ReduceLROnPlateau", "factor": 0.5, "patience": 3, "threshold": 0.01, "cooldown": 2}),
]
METRICS = [1.0 / (1 + 0.1 * t) if t < 20 else 0.5 for t in range(SCHED_STEPS)]   # improves, then stalls


def _tuple(options):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}


def record_optimizer(name, cls_name, options, groups, steps=STEPS, module=exp, dialect=EXP):
    case = {"name": name, "optimizer": f"{dialect}.{cls_name}", "options": options, "groups": groups,
            **({"grad_scale": SMALL[name]} if name in SMALL else {})}
    shapes = {n: SHAPES[n] for n in (SHAPES if groups is None else [p for g in groups for p in g["params"]])}
    init, grads = inputs(name, steps, shapes, SMALL.get(name, LOSS_SCALED.get(name, 1.0)))
    if name in LOSS_SCALED:
        case["grad_scale"] = LOSS_SCALED[name]
    params = {n: Parameter(Tensor(init[n].copy()), name=n) for n in shapes}
    given = (list(params.values()) if groups is None else
             [{**_tuple({k: v for k, v in g.items() if k != "params"}), "params": [params[n] for n in g["params"]]}
              for g in groups])
    out = {n: [] for n in shapes}
    try:
        opt = getattr(module, cls_name)(given, **_tuple(options))
        for k in range(steps):
            opt(tuple(Tensor(grads[n][k].copy()) for n in shapes))
            for n, p in params.items():
                out[n].append(flat(p.asnumpy()))
    except Exception as exc:  # the framework refuses the configuration
        case["refused"] = refusal(exc)
        return case
    case.update(init={n: flat(v) for n, v in init.items()},
                grads={n: [flat(g) for g in grads[n]] for n in shapes}, params=out)
    return case


def _function(text):
    import math

    names = {"cos": math.cos, "sin": math.sin, "exp": math.exp, "sqrt": math.sqrt, "pi": math.pi}
    return lambda step: eval(text, {"__builtins__": {}}, {**names, "step": step})


def build_scheduler(optimizer, spec):
    spec = dict(spec)
    name = spec.pop("name")
    if "lr_lambda" in spec:
        spec["lr_lambda"] = _function(spec["lr_lambda"])
    if "schedulers" in spec:
        spec["schedulers"] = [build_scheduler(optimizer, s) for s in spec["schedulers"]]
    if name == "ChainedScheduler":
        return LRS.ChainedScheduler(**spec)
    return getattr(LRS, name)(optimizer, **spec)


def _lrs(opt):
    return [float(np.asarray(g["lr"].asnumpy() if hasattr(g["lr"], "asnumpy") else g["lr"], dtype=np.float32))
            for g in opt.param_groups]


def record_scheduler(name, spec, steps=SCHED_STEPS):
    case = {"name": name, "scheduler": {**spec, "name": f"{EXP}.{spec['name']}"}, "group_lrs": GROUP_LRS,
            "steps": steps}
    params = [Parameter(Tensor(np.zeros(2, np.float32)), name=f"p{i}") for i in range(len(GROUP_LRS))]
    opt = exp.SGD([{"params": [p], "lr": lr} for p, lr in zip(params, GROUP_LRS)], lr=GROUP_LRS[0])
    try:
        sched = build_scheduler(opt, spec)
    except Exception as exc:
        case["refused"] = refusal(exc)
        return case
    grads = tuple(Tensor(np.zeros(2, np.float32)) for _ in params)
    lrs = [_lrs(opt)]
    for t in range(steps):
        opt(grads)
        sched.step(Tensor(METRICS[t], ms.float32)) if spec["name"] == "ReduceLROnPlateau" else sched.step()
        lrs.append(_lrs(opt))
    if spec["name"] == "ReduceLROnPlateau":
        case["metrics"] = METRICS
    case["lrs"] = f32(np.array(lrs))
    return case


def main():
    header = {"framework": f"MindSpore {ms.__version__} (CPU, PyNative)", "dtype": "float32", "steps": STEPS,
              "shapes": {n: list(s) for n, s in SHAPES.items()}}
    cases = [record_optimizer(*row) for row in OPTIMIZERS]
    nn_cases = [record_optimizer(*row, module=ms.nn, dialect="mindspore") for row in NN_OPTIMIZERS]
    print(write("mindspore", "optimizers", header, nn_cases))
    scheds = [record_scheduler(*row) for row in SCHEDULERS]
    print(write(EXP, "optimizers", header, cases))
    print(write(EXP, "schedulers", {"framework": header["framework"]}, scheds))
    for c in cases + nn_cases + scheds:
        if "refused" in c:
            print(f"  refused: {c['name']}: {c['refused']}", file=sys.stderr)


if __name__ == "__main__":
    main()

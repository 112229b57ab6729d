"""Record small MindSpore optimizer trajectories as JSON fixtures for optreg's tests.

Needs MindSpore (CPU build: `pip install "numpy<2" mindspore`), in an environment of its own.
Run:  python scripts/record_mindspore_fixtures.py [output_dir]   (default tests/fixtures/mindspore)

Each case fixes the parameters (names, initial values), a gradient sequence independent of the
weights, the optimizer's arguments and groups, and stores the weights after every step (float32,
as MindSpore computes). `cases.json` holds each case's optimizer, arguments and groups (parameter
names in place of Parameters); `trajectories.npz` holds, per case and parameter, `<case>/init/<param>`,
`<case>/grads/<param>` (steps x shape) and `<case>/weights/<param>` (steps x shape).
Optimizers whose kernels MindSpore's CPU build lacks (Lamb, LARS, grad centralization, sparse
gathers) are not recorded.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

STEPS = 12
SHAPES = {"layer.weight": (2, 16), "layer.bias": (16,), "norm.gamma": (3,)}


def _params_and_grads(seed: int, shapes=SHAPES, scale: float = 1.0):
    rng = np.random.default_rng(seed)
    init = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
    grads = [{n: (scale * rng.standard_normal(s)).astype(np.float32) for n, s in shapes.items()} for _ in range(STEPS)]
    return init, grads


CASES = [
    # name, optimizer, kwargs, groups (None: ungrouped), seed, grad scale
    ("adam_default", "Adam", {"learning_rate": 0.01}, None, 0, 1.0),
    ("adam_wd_lossscale", "Adam", {"learning_rate": 0.01, "weight_decay": 0.1, "loss_scale": 8.0}, None, 1, 8.0),
    ("adam_nesterov_groups", "Adam", {"learning_rate": 0.02, "use_nesterov": True, "weight_decay": 0.0},
     [{"params": ["layer.weight"], "lr": 0.05, "weight_decay": 0.01},
      {"params": ["layer.bias", "norm.gamma"]},
      {"order_params": ["norm.gamma", "layer.weight", "layer.bias"]}], 2, 1.0),
    ("adam_dynamic_lr", "Adam", {"learning_rate": [0.01 * (1 + k) for k in range(STEPS)], "eps": 1e-6}, None, 3, 1.0),
    ("lazyadam_dense", "LazyAdam", {"learning_rate": 0.01, "weight_decay": 0.05}, None, 4, 1.0),
    ("adamoffload", "AdamOffload", {"learning_rate": 0.01, "weight_decay": 0.05, "loss_scale": 2.0}, None, 5, 2.0),
    ("adamweightdecay", "AdamWeightDecay", {"learning_rate": 0.01, "weight_decay": 0.1}, None, 6, 1.0),
    ("adamweightdecay_groups", "AdamWeightDecay", {"learning_rate": 0.01},
     [{"params": ["layer.weight", "norm.gamma"], "weight_decay": 0.2}, {"params": ["layer.bias"], "lr": 0.03}], 7, 1.0),
    ("ftrl_default", "FTRL", {"learning_rate": 0.1}, None, 8, 1.0),
    ("ftrl_l1l2_wd", "FTRL", {"learning_rate": 0.05, "l1": 0.01, "l2": 0.02, "lr_power": -0.3,
                             "initial_accum": 0.2, "weight_decay": 0.01, "loss_scale": 4.0}, None, 9, 4.0),
    ("adafactor_relative", "AdaFactor", {}, None, 10, 1.0),
    ("adafactor_manual", "AdaFactor", {"learning_rate": 0.01, "relative_step": False, "weight_decay": 0.1,
                                       "beta1": 0.0}, None, 11, 1.0),
    ("adafactor_warmup", "AdaFactor", {"warmup_init": True, "scale_parameter": False}, None, 12, 1.0),
    # the SGD / Momentum / RMSProp / Adagrad / ProximalAdagrad families
    ("momentum", "Momentum", {"learning_rate": 0.05, "momentum": 0.9, "weight_decay": 0.01, "loss_scale": 4.0},
     None, 13, 4.0),
    ("momentum_nesterov", "Momentum", {"learning_rate": 0.05, "momentum": 0.9, "use_nesterov": True}, None, 14, 1.0),
    ("sgd", "SGD", {"learning_rate": 0.05, "momentum": 0.8, "dampening": 0.1, "weight_decay": 0.01}, None, 15, 1.0),
    ("sgd_nesterov", "SGD", {"learning_rate": 0.05, "momentum": 0.9, "nesterov": True}, None, 16, 1.0),
    ("rmsprop", "RMSProp", {"learning_rate": 0.01, "momentum": 0.5}, None, 17, 1.0),
    ("rmsprop_centered", "RMSProp", {"learning_rate": 0.01, "centered": True, "weight_decay": 0.01}, None, 18, 1.0),
    ("adagrad", "Adagrad", {"learning_rate": 0.05, "accum": 0.1}, None, 19, 1.0),
    ("adagrad_noslots", "Adagrad", {"learning_rate": 0.05, "accum": 0.5, "update_slots": False}, None, 20, 1.0),
    ("proximaladagrad", "ProximalAdagrad", {"learning_rate": 0.05, "l1": 0.01, "l2": 0.02}, None, 21, 1.0),
]


def record(case, ms, nn, Tensor, Parameter):
    name, opt_name, kwargs, groups, seed, scale = case
    init, grads = _params_and_grads(seed, scale=scale)
    params = {n: Parameter(Tensor(v.copy()), name=n) for n, v in init.items()}
    if groups is None:
        given = list(params.values())
    else:
        given = []
        for g in groups:
            g2 = dict(g)
            key = "order_params" if "order_params" in g2 else "params"
            g2[key] = [params[n] for n in g2[key]]
            given.append(g2)
    kw = dict(kwargs)
    if isinstance(kw.get("learning_rate"), list):
        kw["learning_rate"] = Tensor(np.array(kw["learning_rate"], np.float32))
    opt = getattr(nn, opt_name)(given, **kw)
    order = [p.name for p in opt.parameters]
    weights = {n: [] for n in params}
    for step in grads:
        opt(tuple(Tensor(step[n]) for n in order))
        for n in params:
            weights[n].append(params[n].asnumpy().copy())
    arrays = {}
    for n in params:
        arrays[f"{name}/init/{n}"] = init[n]
        arrays[f"{name}/grads/{n}"] = np.stack([g[n] for g in grads])
        arrays[f"{name}/weights/{n}"] = np.stack(weights[n])
    meta = {"name": name, "optimizer": opt_name, "kwargs": kwargs, "groups": groups, "order": order}
    return meta, arrays


def main(out_dir: str = "tests/fixtures/mindspore") -> None:
    import mindspore as ms
    from mindspore import Parameter, Tensor, nn

    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_device("CPU")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cases, arrays = [], {}
    for case in CASES:
        try:
            meta, case_arrays = record(case, ms, nn, Tensor, Parameter)
        except Exception as exc:  # a kernel missing on this build: say so, keep going
            print("skipped", case[0], type(exc).__name__, str(exc).strip().splitlines()[0][:120])
            continue
        cases.append(meta)
        arrays.update(case_arrays)
        print("recorded", case[0])
    doc = {"mindspore": ms.__version__, "device": "CPU", "dtype": "float32", "steps": STEPS,
           "shapes": {n: list(s) for n, s in SHAPES.items()}, "cases": cases}
    (out / "cases.json").write_text(json.dumps(doc, indent=1) + "\n")
    np.savez_compressed(out / "trajectories.npz", **arrays)
    print("wrote", out / "cases.json", out / "trajectories.npz")


if __name__ == "__main__":
    main(*sys.argv[1:])

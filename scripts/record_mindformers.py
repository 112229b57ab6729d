"""Record MindFormers' own lr schedules, optimizers and parameter groups on MindSpore 2.10 (CPU) into
tests/fixtures/mindformers/{schedules,optimizers}.json, replayed by tests/test_mindformers_fixtures.py.
A manual step: the tests need only the recorded files.

MindFormers itself is not installed (its package imports the whole LLM suite: models, datasets, parallel
training). Its few modules that build optimizers and schedules are loaded alone from a MindFormers checkout, with
small stand-ins for the three suite modules they import:
- mindformers.tools.register: MindFormerRegister.register(...) returns the class unchanged (the suite's registry
  decorator), MindFormerModuleType names the module kinds;
- mindformers.tools.logger: a logging.Logger;
- mindformers.models.PreTrainedModel: mindspore.nn.Cell (get_optimizer_grouped_parameters only checks the type);
  mindformers.trainer.utils.check_keywords_in_name: any(keyword in name) (its one-line body);
and then, by file path: mindformers/core/lr/lr_schedule.py, mindformers/core/optim/adamw.py (dev: AdamW),
mindformers/trainer/optimizer_grouped_parameters.py (dev), and for FP32StateAdamWeightDecay (removed after 1.3)
mindformers/core/optim/optim.py of tag v1.3.0 (with mindformers.version_control.fix_optim_global_step_sig -> True).
FP32StateAdamWeightDecay is also recorded on float16 parameters (its moments float32); MindSpore 2.10's CPU
AdamWeightDecay kernel has no bfloat16 (kernel select fails), so bfloat16 parameters are not recorded.

Run with the Python of a MindSpore 2.10 environment outside the project (`pip install mindspore==2.10.0 "numpy<2"`):
    git clone https://github.com/mindspore-lab/mindformers <dev> && git -C <dev> checkout fd4deebc1
    git -C <dev> show v1.3.0:mindformers/core/optim/optim.py > <v13_optim.py>
    <venv>/bin/python scripts/record_mindformers.py <dev> <v13_optim.py>
"""

from __future__ import annotations

import importlib.util
import json
import logging
import sys
import types
import zlib
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "mindformers"
SCHED_STEPS = 120
# the stand-in model: names as MindFormers' LLMs have them; a 1-D norm weight first in one case
SHAPES = {"model.tok_embeddings.embedding_weight": (6, 4), "model.layers.0.attention.wq.weight": (4, 4),
          "model.layers.0.attention.wq.bias": (4,), "model.layers.0.attention_norm.weight": (4,),
          "lm_head.weight": (6, 4)}
NORM_FIRST = {"model.norm_out.weight": (4,), **SHAPES}
OPT_STEPS = 3

SCHEDULES = [   # (case, lr_schedule config as a MindFormers YAML writes it)
    ("cosine_warmup_ratio", {"type": "CosineWithWarmUpLR", "learning_rate": 1e-4, "lr_end": 1e-6,
                             "warmup_ratio": 0.03, "total_steps": 100}),
    ("cosine_warmup_steps_cycles", {"type": "CosineWithWarmUpLR", "learning_rate": 5e-5, "warmup_steps": 7,
                                    "warmup_lr_init": 1e-6, "num_cycles": 1.5, "total_steps": 90,
                                    "decay_steps": 80}),
    ("cosine_decay_ratio", {"type": "CosineWithWarmUpLR", "learning_rate": 3e-4, "warmup_steps": 10,
                            "total_steps": 100, "decay_ratio": 0.8, "lr_end": 3e-5}),
    ("linear_warmup", {"type": "LinearWithWarmUpLR", "learning_rate": 2e-5, "warmup_ratio": 0.1,
                       "total_steps": 100}),
    ("constant_warmup", {"type": "ConstantWarmUpLR", "learning_rate": 1e-3, "warmup_steps": 12,
                         "warmup_lr_init": 1e-4}),
    ("polynomial_warmup", {"type": "PolynomialWithWarmUpLR", "learning_rate": 1e-4, "warmup_steps": 10,
                           "total_steps": 100, "lr_end": 1e-6, "power": 2.0}),
    ("polynomial_decay_steps", {"type": "PolynomialWithWarmUpLR", "learning_rate": 6e-4, "warmup_ratio": 0.05,
                                "total_steps": 100, "decay_steps": 120, "lr_end": 6e-5, "power": 1.0}),
    ("cosine_restarts", {"type": "CosineWithRestartsAndWarmUpLR", "learning_rate": 1e-4, "warmup_steps": 5,
                         "num_cycles": 3.0, "lr_end": 1e-5, "total_steps": 100}),
    ("warmup_stable_decay", {"type": "WarmUpStableDecayLR", "learning_rate": 1e-3, "lr_end": 1e-5,
                             "warmup_steps": 10, "decay_start_ratio": 0.6, "total_steps": 100}),
    ("constant_cooldown", {"type": "ConstantWithCoolDownLR", "learning_rate": 2e-4, "warmup_steps": 8,
                           "keep_steps": 30, "decay_steps": 40, "lr_end1": 2e-5, "final_steps": 10,
                           "lr_end2": 1e-6, "total_steps": 100}),
    ("cosine_annealing", {"type": "CosineAnnealingLR", "base_lr": 1e-3, "t_max": 50, "eta_min": 1e-5}),
    ("cosine_annealing_restarts", {"type": "CosineAnnealingWarmRestarts", "base_lr": 1e-3, "t_0": 10,
                                   "t_mult": 2, "eta_min": 1e-5}),
]
OPTIMIZERS = [   # (case, optimizer config, lr_schedule config or None, parameter shapes[, parameter dtype])
    ("adamw_cosine", {"type": "AdamW", "betas": [0.9, 0.95], "eps": 1e-8, "weight_decay": 0.1},
     {"type": "CosineWithWarmUpLR", "learning_rate": 1e-2, "warmup_steps": 1, "total_steps": 10}, SHAPES),
    ("adamw_constant_norm_first", {"type": "AdamW", "betas": [0.8, 0.99], "eps": 1e-6, "weight_decay": 0.05,
                                   "learning_rate": 5e-3}, None, NORM_FIRST),
    ("fp32_state_adam_weight_decay", {"type": "FP32StateAdamWeightDecay", "beta1": 0.9, "beta2": 0.95,
                                      "eps": 1e-8, "weight_decay": 0.1},
     {"type": "LinearWithWarmUpLR", "learning_rate": 1e-2, "warmup_steps": 1, "total_steps": 10}, SHAPES),
    # float16 parameters: the moments stay float32 (MindSpore 2.10's CPU AdamWeightDecay kernel has no bfloat16)
    ("fp32_state_adam_weight_decay_float16", {"type": "FP32StateAdamWeightDecay", "beta1": 0.9, "beta2": 0.95,
                                              "eps": 1e-8, "weight_decay": 0.1},
     {"type": "LinearWithWarmUpLR", "learning_rate": 1e-2, "warmup_steps": 1, "total_steps": 10}, SHAPES, "float16"),
]


def _stub(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module


def _load(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_mindformers(dev: Path, v13_optim: Path):
    from mindspore import nn

    class MindFormerRegister:
        @staticmethod
        def register(*args, **kwargs):
            return lambda cls: cls

    class MindFormerModuleType:
        LR, OPTIMIZER = "lr", "optimizer"

    for package in ("mindformers", "mindformers.tools", "mindformers.core", "mindformers.core.lr",
                    "mindformers.core.optim", "mindformers.trainer"):
        _stub(package, __path__=[])
    _stub("mindformers.tools.register", MindFormerRegister=MindFormerRegister,
          MindFormerModuleType=MindFormerModuleType)
    _stub("mindformers.tools.logger", logger=logging.getLogger("mindformers"))
    sys.modules["mindformers.tools"].logger = sys.modules["mindformers.tools.logger"].logger
    _stub("mindformers.models", PreTrainedModel=nn.Cell)
    _stub("mindformers.version_control", fix_optim_global_step_sig=lambda: True)
    _stub("mindformers.trainer.utils", check_keywords_in_name=lambda name, keys: any(k in name for k in keys))
    lr = _load("mindformers.core.lr.lr_schedule", dev / "mindformers/core/lr/lr_schedule.py")
    sys.modules["mindformers.core.lr"].LearningRateWiseLayer = lr.LearningRateWiseLayer
    adamw = _load("mindformers.core.optim.adamw", dev / "mindformers/core/optim/adamw.py")
    grouped = _load("mindformers.trainer.optimizer_grouped_parameters",
                    dev / "mindformers/trainer/optimizer_grouped_parameters.py")
    optim13 = _load("mindformers.core.optim.optim", v13_optim)
    return lr, {"AdamW": adamw.AdamW, "FP32StateAdamWeightDecay": optim13.FP32StateAdamWeightDecay}, grouped


def f32(a) -> list:
    return [float(np.format_float_scientific(v, unique=True)) for v in np.asarray(a, np.float32).reshape(-1)]


def record_schedules(lr):
    import mindspore as ms

    cases = []
    for name, config in SCHEDULES:
        kwargs = {k: v for k, v in config.items() if k != "type"}
        schedule = getattr(lr, config["type"])(**kwargs)
        values = [float(schedule(ms.Tensor(step, ms.int32)).asnumpy()) for step in range(SCHED_STEPS)]
        cases.append({"name": name, "lr_schedule": config, "lrs": f32(values)})
    return cases


def trajectory(name: str, config: dict, schedule_obj, shapes: dict, classes: dict, grouped,
               dtype: str = "float32") -> dict:
    """The groups MindFormers makes on the stand-in model (parameters and gradients of `dtype`), the weights after
    each of OPT_STEPS steps and the dtype of the optimizer's moments."""
    from mindspore import Parameter, Tensor, nn

    rng = np.random.default_rng(zlib.crc32(name.encode()))
    init = {n: (0.5 * rng.standard_normal(s)).astype(dtype) for n, s in shapes.items()}
    grads = [{n: rng.standard_normal(s).astype(dtype) for n, s in shapes.items()} for _ in range(OPT_STEPS)]

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            for i, (n, v) in enumerate(init.items()):
                setattr(self, f"p{i}", Parameter(Tensor(v.copy()), name=n))

    net = Net()
    kwargs = {k: v for k, v in config.items() if k not in ("type", "learning_rate")}
    groups = grouped.get_optimizer_grouped_parameters(net, kwargs.get("weight_decay", 0.0) or 0.0, schedule_obj)
    rate = schedule_obj if schedule_obj is not None else config["learning_rate"]
    if "betas" in kwargs:
        kwargs["betas"] = tuple(kwargs["betas"])
    opt = classes[config["type"]](groups, learning_rate=rate, **kwargs)
    order = [p.name for p in opt.parameters]
    weights = []
    for step in grads:
        opt(tuple(Tensor(step[n]) for n in order))
        weights.append({p.name: f32(p.asnumpy()) for p in opt.parameters})
    moments = {str(m.dtype) for attr in ("moments1", "moments2", "exp_avg", "exp_avg_sq")   # AdamWeightDecay's,
               for m in getattr(opt, attr, ())}                                                # AdamW's
    return {"shapes": {n: list(s) for n, s in shapes.items()}, "dtype": dtype, "moments": sorted(moments),
            "groups": [{"params": [p.name for p in g["params"]], "weight_decay": float(g["weight_decay"])}
                       for g in groups],
            "init": {n: f32(v) for n, v in init.items()},
            "grads": [{n: f32(g[n]) for n in shapes} for g in grads], "weights": weights}


def record_optimizers(lr, classes, grouped):
    cases = []
    for name, config, schedule, shapes, *dtype in OPTIMIZERS:
        schedule_obj = None
        if schedule is not None:
            schedule_obj = getattr(lr, schedule["type"])(**{k: v for k, v in schedule.items() if k != "type"})
        cases.append({"name": name, "optimizer": config, "lr_schedule": schedule,
                      **trajectory(name, config, schedule_obj, shapes, classes, grouped, *dtype)})
    return cases


# the corpus (tests/suites/mindformers): each config's schedule and optimizer as MindFormers' trainer builds them
# for a dataset of CORPUS_DATA_SIZE steps per epoch (total_steps -1: BaseTrainer.create_lr_scheduler after
# check_runner_config), on the stand-in model
CORPUS = OUT.parent.parent / "suites" / "mindformers"
CORPUS_DATA_SIZE = 400
LR_ALIASES = {"constant_with_warmup": "ConstantWarmUpLR", "linear": "LinearWithWarmUpLR",   # build_lr's aliases
              "cosine": "CosineWithWarmUpLR", "cosine_with_restarts": "CosineWithRestartsAndWarmUpLR",
              "polynomial": "PolynomialWithWarmUpLR"}


def corpus_total(config: dict) -> int:
    runner = config.get("runner_config") or {}
    epochs, sink = runner.get("epochs", 1), runner.get("sink_size", 1)
    if runner.get("sink_mode", True) and sink != -1:
        epochs = int(CORPUS_DATA_SIZE / sink * epochs)
        return int(epochs * sink)
    return int(epochs * CORPUS_DATA_SIZE)


def record_corpus(lr, classes, grouped):
    import mindspore as ms
    import yaml   # pyyaml, in the MindSpore environment
    from mindspore import nn

    # 1.3's alias `adamw` is nn.AdamWeightDecay; 1.3's FusedAdamWeightDecay does not construct on MindSpore 2.10
    # (its clone_state reads Parameter.is_param_ps, gone since): recorded as nn.AdamWeightDecay, the update of the
    # P.AdamWeightDecay kernel it calls
    optimizer_classes = {**classes, "adamw": nn.AdamWeightDecay, "FusedAdamWeightDecay": nn.AdamWeightDecay}
    cases = []
    for path in sorted(CORPUS.glob("*/*.yaml")):
        config = yaml.safe_load(path.read_text())
        if config["optimizer"]["type"] not in optimizer_classes:
            continue
        schedule = dict(config["lr_schedule"])
        kind = LR_ALIASES.get(schedule.pop("type"), None) or config["lr_schedule"]["type"]
        total = corpus_total(config)
        if schedule.get("total_steps") in (None, -1):
            schedule["total_steps"] = total
        sched = getattr(lr, kind)(**schedule)
        steps = sorted({*range(40), schedule["total_steps"] // 2, total - 1, total, total + 3})
        lrs = {str(t): float(sched(ms.Tensor(t, ms.int32)).asnumpy()) for t in steps}
        name = path.relative_to(CORPUS).as_posix()
        cases.append({"name": name, "total_steps": total, "lrs": dict(zip(lrs, f32(list(lrs.values())))),
                      **trajectory(name, config["optimizer"], sched, SHAPES, optimizer_classes, grouped)})
    return cases


def main() -> None:
    import mindspore as ms

    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    lr, classes, grouped = load_mindformers(Path(sys.argv[1]), Path(sys.argv[2]))
    OUT.mkdir(parents=True, exist_ok=True)
    meta = {"framework": f"MindFormers dev fd4deebc1 (FP32StateAdamWeightDecay: v1.3.0) on MindSpore "
                         f"{ms.__version__} CPU", "dtype": "float32"}
    (OUT / "schedules.json").write_text(json.dumps({**meta, "steps": SCHED_STEPS, "cases": record_schedules(lr)},
                                                   indent=1) + "\n")
    (OUT / "optimizers.json").write_text(json.dumps({**meta, "steps": OPT_STEPS,
                                                     "cases": record_optimizers(lr, classes, grouped)}, indent=1)
                                         + "\n")
    (OUT / "corpus.json").write_text(json.dumps({**meta, "data_size": CORPUS_DATA_SIZE,
                                                 "cases": record_corpus(lr, classes, grouped)}, indent=1) + "\n")


if __name__ == "__main__":
    main()

"""Record what Cerebras Model Zoo 2.10 builds from each config of the corpus in tests/modelzoo/configs/
into tests/fixtures/modelzoo/<release>/<config-stem>.json (format: tests/modelzoo/README.md). A manual
step: the tests need only the recorded files.

It runs with the Python of the throwaway cerebras.pytorch 2.10 virtual environment that
scripts/record_cerebras.py describes, plus what Model Zoo's trainer imports:

    <venv>/bin/pip install pydantic==2.8.2 requests slack-sdk "huggingface_hub<1.0" "tokenizers==0.22.1" \
        safetensors regex jsonschema rich
    <venv>/bin/pip install --no-deps transformers==4.57.1 torchvision==0.19.0 keras-preprocessing==1.1.2

and Model Zoo's sources at tag Release_2.10.0 of the public Cerebras/modelzoo repository, extracted
anywhere outside this repository (`git archive Release_2.10.0 src | tar -x -C <modelzoo>`):

    PYTHONPATH=<modelzoo>/src <venv>/bin/python scripts/record_modelzoo.py [config ...]

(tokenizers must be ≤ 0.23.0 for transformers 4.57.1.) One shim: the package
`cerebras.modelzoo.trainer.extensions` (eval-harness, Hugging Face and wandb callbacks, which import
packages not installed here) is replaced in sys.modules by an empty module before Model Zoo is
imported; `construct_trainer_config` imports it only to register those callbacks. Nothing else of
Model Zoo is patched. The script calls the functions the trainer calls, not the trainer itself,
following the path of
`cerebras.modelzoo.trainer.utils.run_trainer` / `configure_trainer_from_config`:

1. a legacy params file (no `trainer:` key) goes through `convert_legacy_params_to_trainer_params`
   (with `obj_filter=lambda obj: obj is None`, as run_trainer passes);
2. `init.optimizer` and `init.schedulers` of (the first phase of) the trainer config are validated
   with the very pydantic annotations `construct_trainer_config` builds for those two fields (the
   rest of the config - model, data, callbacks - is not validated: it does not reach the optimizer);
3. the stand-in model of tests/modelzoo/models.py is built with Model Zoo's RMSNorm class for
   `norm_type: rmsnorm` (Model Zoo recognises its own RMSNorm as a normalisation module) and given
   the `lr_adjustment_groups` (LRAdjustmentGroup objects, muP scales set) of Model Zoo's own model
   for the config: the registered class of `model.name` (or of the older `model_name`, as Model Zoo
   2.10 reads it; for a legacy params file that names no model, the model directory of its
   provenance line) built from the `model:` section (the
   converted one, for a legacy file) on the meta device, so that no weights are allocated. Model
   keys Model Zoo 2.10 refuses as unknown (`extra_forbidden`: precision keys of older releases) are
   dropped and the build retried; they do not reach the muP scales. A model class that carries no
   groups, or a section Model Zoo 2.10 cannot build a model from (a release-1.x T5 without
   max_position_embeddings; DiT, whose diffusion constants cannot be computed on the meta device;
   bert/token_classifier, whose `label_vocab_file` names a dataset file), leaves the stand-in
   without them (Model Zoo's default groups apply: neither DiT's nor the BERT heads' classes carry
   groups; the fixture says why). Warnings of the model's construction are not recorded;
4. `common.optim_utils.configure_param_groups(model, optimizer_config.dict())`, then
   `optimizer_config(params=groups)`, then each scheduler config called with the optimizer and
   wrapped in ScalePerParamLR when it is an LR scheduler, not already a ScalePerParamLR, and some
   group has `adjust_learning_rate` (as configure_trainer_from_config does);
5. three optimizer steps with the gradients of models.gradient (each followed by every scheduler's
   step, as the training loop does), then the schedulers alone up to the recorded horizon.

A config that fails at a stage is recorded with the stage, the exception type and its message.
Warnings Model Zoo raises on the way (unused optimizer keys, legacy conversion) are recorded too.
"""

from __future__ import annotations

import json
import math
import sys
import traceback
import types
import warnings
from pathlib import Path

import numpy as np
import torch
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "modelzoo"))

import models  # noqa: E402  (tests/modelzoo/models.py)

import cerebras.pytorch as cstorch  # noqa: E402

sys.modules["cerebras.modelzoo.trainer.extensions"] = types.ModuleType("cerebras.modelzoo.trainer.extensions")

cstorch.backend("CPU")

from cerebras.modelzoo.common.optim_utils import configure_param_groups  # noqa: E402
from cerebras.modelzoo.layers import RMSNorm as ModelZooRMSNorm  # noqa: E402
from cerebras.modelzoo.registry import registry  # noqa: E402
from cerebras.modelzoo.trainer.utils import convert_legacy_params_to_trainer_params, is_legacy_params  # noqa: E402
from cerebras.modelzoo.trainer.validate import construct_trainer_config  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402

CONFIGS = ROOT / "tests" / "modelzoo" / "configs"
FIXTURES = ROOT / "tests" / "fixtures" / "modelzoo"
STEPS = 3                # optimizer steps with gradients
MAX_SAMPLES = 1000       # lr samples per group at most
MAX_VALUES = 10000       # lr samples over all groups at most (configs with many groups sample coarser)
MAX_SCHEDULER_STEPS = 6000  # scheduler steps taken at most (long schedules are recorded up to here)
DENSE = 20               # steps 0..DENSE are always recorded
FORMAT = 1


def _annotations():
    """The pydantic annotations construct_trainer_config gives init.optimizer and init.schedulers."""
    trainer_cls = construct_trainer_config("fc_mnist")
    init_cls = trainer_cls.model_fields["init"].annotation
    return (TypeAdapter(init_cls.model_fields["optimizer"].annotation),
            TypeAdapter(init_cls.model_fields["schedulers"].annotation))


OPTIM, SCHEDULERS = _annotations()


def num(x):
    if isinstance(x, torch.Tensor):
        x = x.detach().double().cpu().numpy()
        return x.item() if x.ndim == 0 else [num(v) for v in x.tolist()]
    if isinstance(x, (bool, str)) or x is None:
        return x
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else repr(x)
    if isinstance(x, (list, tuple)):
        return [num(v) for v in x]
    if isinstance(x, (set, frozenset)):
        return sorted(num(v) for v in x)
    if isinstance(x, dict):
        return {str(k): num(v) for k, v in x.items()}
    return repr(x)


def f32(values: np.ndarray) -> list:
    return [float(f"{v:.9g}") for v in np.asarray(values, dtype=np.float32).ravel().tolist()]


def error(stage: str, exc: BaseException) -> dict:
    return {"stage": stage, "type": type(exc).__name__, "message": str(exc)[:4000]}


def model_groups(init: dict, provenance: str) -> tuple[dict | None, dict]:
    """(the lr_adjustment_groups of Model Zoo's own model for this `model:` section, or None when its class carries
    none; how it was built: class, dropped keys)."""
    import inspect

    from pydantic import ValidationError

    section = dict(init.get("model") or {})
    if "model_name" in section:   # the name before 2.4, which Model Zoo 2.10 still reads
        section["name"] = section.pop("model_name")
    name = section.get("name") or models.family_dir(provenance)
    section["name"] = name
    cls = registry.get_model_class(name)
    config_cls = inspect.signature(cls.__init__).parameters["config"].annotation
    dropped = []
    while True:
        try:
            with warnings.catch_warnings(record=True):   # the model's warnings are not the optimizer's
                config = config_cls(**section)
            break
        except ValidationError as exc:
            extra = [e["loc"][0] for e in exc.errors() if e["type"] == "extra_forbidden" and len(e["loc"]) == 1]
            if not extra:
                raise
            for key in extra:
                section.pop(key)
            dropped += extra
    with torch.device("meta"), warnings.catch_warnings(record=True):
        model = cls(config)
    groups = getattr(model, "lr_adjustment_groups", None)
    return groups, {"class": cls.__name__, "dropped_keys": dropped}


def trainer_init(params: dict) -> dict:
    trainer = params["trainer"]
    if isinstance(trainer, list):
        trainer = trainer[0]["trainer"]
    return trainer["init"]


def jsonable(obj):
    return json.loads(json.dumps(obj, default=repr))


def horizon(init: dict) -> int:
    """How many steps the config's schedule runs (loop.max_steps, else the stages' total_iters)."""
    loop = init.get("loop") or {}
    for key in ("max_steps", "num_steps"):
        if isinstance(loop.get(key), int):
            return loop[key]

    def iters(node) -> int:
        if isinstance(node, list):
            return max([iters(n) for n in node] or [0])
        if isinstance(node, dict):
            if len(node) == 1 and isinstance(next(iter(node.values())), dict):
                name, body = next(iter(node.items()))
                if name.lower().startswith("sequential"):
                    return sum(iters(s) for s in body.get("schedulers", []))
                return iters(body)
            total = node.get("total_iters") or node.get("warmup_steps") or 0
            inner = [iters(v) for v in node.values() if isinstance(v, (dict, list))]
            return max([int(total) if isinstance(total, (int, float)) else 0, *inner])
        return 0

    return iters(init.get("schedulers") or []) or 1000


def record_steps(total: int, groups: int) -> tuple[list[int], int]:
    last = min(total + 10, MAX_SCHEDULER_STEPS)
    stride = max(1, math.ceil(last / min(MAX_SAMPLES, max(100, MAX_VALUES // max(groups, 1)))))
    steps = sorted(set(range(0, min(DENSE, last) + 1)) | set(range(0, last + 1, stride)) | {last})
    return steps, last


def record(path: Path) -> dict:
    text = path.read_text()
    provenance = text.splitlines()[0].removeprefix("# from ").strip()
    params = yaml.safe_load(text)
    out = {"format": FORMAT, "config": path.relative_to(ROOT).as_posix(), "source": provenance,
           "form": "legacy" if is_legacy_params(params) else "trainer", "builds": False,
           "error": None, "warnings": []}

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = _record(params, provenance, out)
        except _Stage as stage:
            out["error"] = error(stage.stage, stage.__cause__)
            result = out
        seen = []
        for w in caught:
            msg = str(w.message)
            if "Pydantic will allow any object" in msg or "The `dict` method is deprecated" in msg or msg in seen:
                continue
            if any(k in msg for k in ("unexpected", "legacy", "extra keys", "param", "deprecated", "schedul",
                                      "optimizer", "learning", "Overriding")):
                seen.append(msg[:2000])
        out["warnings"] = seen
    return result


class _Stage(Exception):
    def __init__(self, stage: str):
        super().__init__(stage)
        self.stage = stage


def _record(params: dict, provenance: str, out: dict) -> dict:
    try:
        if is_legacy_params(params):
            trainer_params = convert_legacy_params_to_trainer_params(params, obj_filter=lambda obj: obj is None)
        else:
            trainer_params = params
        init = trainer_init(trainer_params)
        out["converted"] = jsonable({k: init[k] for k in ("optimizer", "schedulers", "precision", "loop")
                                     if k in init})
    except Exception as exc:
        raise _Stage("convert") from exc

    try:
        optimizer_config = OPTIM.validate_python(init.get("optimizer"), context={})
        scheduler_configs = SCHEDULERS.validate_python(init.get("schedulers"), context={}) \
            if init.get("schedulers") is not None else None
        if optimizer_config is None:
            raise ValueError("the config has no optimizer")
        out["validated"] = jsonable({"optimizer": optimizer_config.model_dump(),
                                     "schedulers": [s.model_dump() for s in scheduler_configs or []]})
    except Exception as exc:
        raise _Stage("validate") from exc

    try:
        model = models.build(params, provenance, rmsnorm_cls=ModelZooRMSNorm)
        try:
            groups, built_from = model_groups(init, provenance)
        except Exception as exc:   # Model Zoo cannot build this model: the optimizer sees its default groups
            groups, built_from = None, {"error": f"{type(exc).__name__}: {str(exc)[:500]}"}
        if groups is not None:
            model.lr_adjustment_groups = groups
        names = {id(p): n for n, p in model.named_parameters()}
        out["model"] = {
            "family": models.family(params, provenance),
            "parameters": {n: list(p.shape) for n, p in model.named_parameters()},
            "frozen": [n for n, p in model.named_parameters() if not p.requires_grad],
            "norm_modules": [n for n, m in model.named_modules()
                             if isinstance(m, (torch.nn.LayerNorm, ModelZooRMSNorm))],
            "lr_adjustment_groups": None if groups is None else
            {k: {"patterns": [g.param_filter_patterns] if isinstance(g.param_filter_patterns, str)
                 else list(g.param_filter_patterns), "scale": g.scale} for k, g in groups.items()},
            "model_zoo_model": built_from,
        }
    except Exception as exc:
        raise _Stage("stand-in") from exc

    try:
        groups = configure_param_groups(model, optimizer_config.dict())
        optimizer = optimizer_config(params=groups)
    except Exception as exc:
        raise _Stage("optimizer") from exc

    try:
        schedulers = []
        for config in scheduler_configs or []:
            scheduler = config(optimizer=optimizer)
            if (isinstance(scheduler, cstorch.optim.lr_scheduler.LRScheduler)
                    and not isinstance(scheduler, cstorch.optim.lr_scheduler.ScalePerParamLR)
                    and any("adjust_learning_rate" in g for g in optimizer.param_groups)):
                scheduler = cstorch.optim.lr_scheduler.ScalePerParamLR(optimizer, scheduler)
            schedulers.append(scheduler)
        out["scheduler_classes"] = [type(s).__name__ for s in schedulers]
    except Exception as exc:
        raise _Stage("scheduler") from exc

    out["groups"] = [{"params": [names[id(p)] for p in g["params"]],
                      "options": num({k: v for k, v in g.items() if k != "params"})}
                     for g in optimizer.param_groups]

    wd_scheduled = any(isinstance(s, cstorch.optim.weight_decay_scheduler.WeightDecayScheduler) for s in schedulers)
    steps, last = record_steps(horizon(init), len(optimizer.param_groups))
    wanted = set(steps)
    lrs = [[] for _ in optimizer.param_groups]
    wds = [[] for _ in optimizer.param_groups]

    def sample():
        for i, g in enumerate(optimizer.param_groups):
            lrs[i].append(float(f"{num(g['lr']):.9g}") if "lr" in g else None)
            if wd_scheduled:
                wds[i].append(float(f"{num(g.get('weight_decay', 0.0)):.9g}"))

    try:
        sample()
        for step in range(1, last + 1):
            if step <= STEPS:
                for name, p in model.named_parameters():
                    if p.requires_grad:
                        p.grad = torch.from_numpy(models.gradient(name, tuple(p.shape), step))
                optimizer.step()
            for s in schedulers:
                s.step()
            if step in wanted:
                sample()
            if step == STEPS:
                out["weights"] = {n: f32(p.detach().numpy()) for n, p in model.named_parameters()}
    except Exception as exc:
        raise _Stage("step") from exc

    out["schedule"] = {"steps": steps, "lr": lrs, **({"weight_decay": wds} if wd_scheduled else {})}
    out["builds"] = True
    return out


def main(argv: list[str]) -> int:
    paths = [Path(a).resolve() for a in argv] or sorted(CONFIGS.glob("*/*.yaml"))
    for path in paths:
        rel = path.relative_to(CONFIGS)
        try:
            fixture = record(path)
        except Exception:
            traceback.print_exc()
            return 1
        dest = FIXTURES / rel.with_suffix(".json")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(fixture, separators=(",", ":"), sort_keys=False) + "\n")
        state = "builds" if fixture["builds"] else f"refused at {fixture['error']['stage']}: {fixture['error']['type']}"
        print(f"{rel}: {state}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

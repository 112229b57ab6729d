"""Record MMEngine's lr curves of epoch-based schedules (mmengine-lite 0.10.7) into
tests/fixtures/mmengine/schedulers.json, replayed by tests/test_training_loop.py. A manual step: the tests need
only the recorded file.

mmengine-lite is pure Python; `pip install mmengine-lite` adds packaging, addict, termcolor and yapf (imported by
`import mmengine`), none of which optreg needs:

    pip install mmengine-lite && python scripts/record_mmengine.py

Each case runs MMEngine's scheduler the way its runner's ParamSchedulerHook does, over two parameter groups with
different lrs: an epoch-based one (`by_epoch=True`) is stepped after each epoch of STEPS_PER_EPOCH iterations; one
converted with `build_iter_from_epoch` (`convert_to_iter_based=True`) after each iteration. The lr of every group is
read before each optimizer step. The case's `scheduler` is the optreg spec that must give the same curve; MMEngine's
`end` counts the first step at which a schedule stops (its LinearLR, ConstantLR and PolyLR span end - begin - 1
steps), so torch's total_iters T is MMEngine's end T + 1.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from mmengine.optim.scheduler import lr_scheduler as mm

ROOT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "mmengine"
STEPS_PER_EPOCH = 3
GROUP_LRS = [0.1, 0.02]

# (name, MMEngine class, its keywords, optreg's spec (without by_epoch / convert), epochs, convert)
CASES = [
    ("step", "StepLR", {"step_size": 2, "gamma": 0.5}, {"name": "StepLR", "step_size": 2, "gamma": 0.5}, 8),
    ("multistep", "MultiStepLR", {"milestones": [2, 5], "gamma": 0.1},
     {"name": "MultiStepLR", "milestones": [2, 5], "gamma": 0.1}, 8),
    ("cosine", "CosineAnnealingLR", {"T_max": 6, "eta_min": 0.001},
     {"name": "CosineAnnealingLR", "T_max": 6, "eta_min": 0.001}, 9),
    ("exponential", "ExponentialLR", {"gamma": 0.8}, {"name": "ExponentialLR", "gamma": 0.8}, 6),
    ("onecycle", "OneCycleLR", {"eta_max": 0.3, "total_steps": 5, "pct_start": 0.4},
     {"name": "OneCycleLR", "max_lr": 0.3, "total_steps": 5, "pct_start": 0.4, "cycle_momentum": False}, 5),
]
EPOCH_ONLY = [   # MMEngine's end-exclusive spans differ from torch's counts by one step when converted
    ("linear", "LinearLR", {"start_factor": 0.25, "end": 5}, {"name": "LinearLR", "start_factor": 0.25,
                                                              "total_iters": 4}, 7),
    ("constant", "ConstantLR", {"factor": 0.5, "end": 4}, {"name": "ConstantLR", "factor": 0.5, "total_iters": 3}, 6),
    ("poly", "PolyLR", {"power": 2.0, "eta_min": 0.0, "end": 5}, {"name": "PolynomialLR", "power": 2.0,
                                                                 "total_iters": 4}, 7),
]


def curve(cls_name: str, kwargs: dict, epochs: int, convert: bool) -> list[list[float]]:
    """Every group's lr at each of epochs × STEPS_PER_EPOCH optimizer steps, MMEngine's runner stepping it."""
    params = [torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2))]
    optimizer = torch.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(params, GROUP_LRS)], lr=GROUP_LRS[0])
    cls = getattr(mm, cls_name)
    if convert:
        scheduler = cls.build_iter_from_epoch(optimizer, **kwargs, by_epoch=True, epoch_length=STEPS_PER_EPOCH)
    else:
        scheduler = cls(optimizer, **kwargs, by_epoch=True)
    lrs = []
    for t in range(epochs * STEPS_PER_EPOCH):
        lrs.append([float(g["lr"]) for g in optimizer.param_groups])
        for p in params:
            p.grad = torch.ones_like(p)
        optimizer.step()
        if convert or (t + 1) % STEPS_PER_EPOCH == 0:
            scheduler.step()
    return lrs


def main() -> int:
    import mmengine

    cases = []
    for name, cls_name, kwargs, spec, epochs in CASES + EPOCH_ONLY:
        for convert in (False, True) if (name, cls_name, kwargs, spec, epochs) in CASES else (False,):
            cases.append({"name": f"{name}_{'iter' if convert else 'epoch'}",
                          "mmengine": f"{cls_name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})",
                          "scheduler": {**spec, "by_epoch": True, **({"convert_to_iter_based": True} if convert
                                                                     else {})},
                          "steps": epochs * STEPS_PER_EPOCH, "lrs": curve(cls_name, kwargs, epochs, convert)})
    ROOT.mkdir(parents=True, exist_ok=True)
    header = {"framework": f"mmengine-lite {mmengine.__version__}", "steps_per_epoch": STEPS_PER_EPOCH,
              "group_lrs": GROUP_LRS}
    body = ",\n".join(json.dumps(c, separators=(",", ":")) for c in cases)
    path = ROOT / "schedulers.json"
    path.write_text(json.dumps(header, separators=(",", ":"))[:-1] + f',"cases":[\n{body}\n]}}\n')
    print(f"wrote {path} ({len(cases)} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Replaying what a framework built from a config (tests/fixtures/<format>/cases.json, recorded by
scripts/record_<format>.py) against what optreg builds from the same config: each parameter's weight decay, the lr
of each parameter at the recorded steps (LR_RTOL relative; its betas too where the fixture has them), the weights
after each of three optimizer steps with the recorded gradients (W_ATOL), on the stand-in model of
scripts/stand_in.py."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import torch

import optreg

FIXTURES = Path(__file__).parent / "fixtures"
LR_RTOL = 1e-6
W_ATOL = 1e-5


def _module(name: str):
    path = Path(__file__).resolve().parent.parent / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_scripts_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STAND_IN = _module("stand_in")


def cases(fmt: str) -> list[dict]:
    return json.loads((FIXTURES / fmt / "cases.json").read_text())["cases"]


def sources(fmt: str) -> dict[str, dict]:
    """The corpus files of a format and where each comes from (repo, path, commit)."""
    return json.loads((FIXTURES / fmt / "corpus" / "SOURCES.json").read_text())


def unrecorded(fmt: str) -> list[str]:
    """The corpus files the recorder left out (optreg refuses them)."""
    recorded = {c["file"] for c in cases(fmt) if "file" in c}
    return sorted(set(sources(fmt)) - recorded)


def errors_of(config: dict) -> dict:
    """path -> ErrorItem of the ConfigError that reading `config` (as a JSON file's text) raises."""
    import pytest

    with pytest.raises(optreg.ConfigError) as info:
        optreg.load_config(json.dumps(config) + "\n")
    return {e.path: e for e in info.value.errors}


def read_and_built(config, model=None) -> tuple[list[tuple], list[tuple]]:
    """The errors, as (path, message, location, suggestion), that validate's reading (load_config) and build (over
    `model`, a small Linear by default) raise for one config: their verdicts, to compare."""
    import pytest

    def raised(call) -> list[tuple]:
        with pytest.raises(optreg.ConfigError) as info:
            call()
        return [tuple(e) for e in info.value.errors]

    built = model if model is not None else torch.nn.Linear(2, 2)
    return raised(lambda: optreg.load_config(config)), raised(lambda: optreg.build(config, built))


def stepped_lrs(optimizer, scheduler, steps: int) -> list[float]:
    """Group 0's lr at each of `steps` optimizer steps, the scheduler stepped after each (as a trainer does)."""
    lrs = []
    for _ in range(steps):
        lrs.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return lrs


def detected(text: str) -> str:
    """The name of the format that claims the YAML / JSON `text`."""
    from optreg.config import formats
    from optreg.config.yaml_loader import read_yaml

    data, _ = read_yaml(text + "\n")
    return formats.detect(data).name


def config_of(fmt: str, case: dict):
    return FIXTURES / fmt / "corpus" / case["file"] if "file" in case else case["config"]


def per_param(optimizer, names: dict, key: str) -> dict[str, float]:
    return {names[id(p)]: float(g[key]) for g in optimizer.param_groups for p in g["params"]}


def replay(fmt: str, case: dict, config=None) -> None:
    """optreg's build of the case's config matches the recorded one (AssertionError naming what differs)."""
    net = STAND_IN.model()
    for n, p in net.named_parameters():
        with torch.no_grad():
            p.copy_(torch.tensor(case["init"][n], dtype=torch.float32).reshape(p.shape))
    built = optreg.build(config if config is not None else config_of(fmt, case), net, format=fmt,
                         total_steps=case["total_steps"])
    opt, sched = built.optimizer, built.scheduler
    names = {id(p): n for n, p in net.named_parameters()}
    assert per_param(opt, names, "weight_decay") == case["weight_decay"]
    want = {step: lrs for step, lrs in case["lrs"]}
    want_betas = {step: betas for step, betas in case.get("betas", [])}
    recorded_lr = {n: [] for n in case["weight_decay"]}
    got_lr = {n: [] for n in case["weight_decay"]}
    recorded_betas, got_betas = [], []
    group_of = {n: i for i, g in enumerate(case["groups"]) for n in g}
    for step in range(case["total_steps"]):
        if step in want:
            lrs = per_param(opt, names, "lr")
            for n in got_lr:
                got_lr[n].append(lrs[n])
                recorded_lr[n].append(want[step][group_of[n]])
        if step in want_betas:   # the betas the optimizer applies at this step (OneCycle's momentum cycling)
            betas = {names[id(p)]: [float(b) for b in g["betas"]] for g in opt.param_groups for p in g["params"]}
            got_betas += [betas[n] for n in sorted(betas)]
            recorded_betas += [want_betas[step][group_of[n]] for n in sorted(betas)]
        if step < len(case["grads"][next(iter(case["grads"]))]):
            for n, p in net.named_parameters():
                p.grad = torch.tensor(case["grads"][n][step], dtype=torch.float32).reshape(p.shape)
            built.clip_gradients(net)
            opt.step()
            for n, p in net.named_parameters():
                np.testing.assert_allclose(p.detach().reshape(-1).numpy(), case["weights"][n][step], rtol=0,
                                           atol=W_ATOL, err_msg=f"{n} after step {step + 1}")
        else:
            opt.zero_grad(set_to_none=True)
        if sched is not None:
            sched.step()
    for n in got_lr:
        np.testing.assert_allclose(got_lr[n], recorded_lr[n], rtol=LR_RTOL, atol=1e-12, err_msg=f"lr of {n}")
    np.testing.assert_allclose(got_betas, recorded_betas, rtol=LR_RTOL, atol=1e-12, err_msg="betas")

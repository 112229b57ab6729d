"""The LiBai corpus (tests/suites/libai) replayed file by file against what LiBai built from each file on OneFlow 0.9.0
(tests/suites/libai/recorded.json, scripts/record_libai_corpus.py: LiBai's LazyConfig.load, DefaultTrainer's run
scaling, build_optimizer with get_default_optimizer_params on a stand-in module, build_lr_scheduler).

Each file optreg reads is built over the same stand-in in torch with 100 iterations per epoch (the recording's
dataset): the run length, every group's parameters, weight decay and clipping exactly, every group's lr at the
recorded iterations within 1e-6 relative, the weights after three optimizer steps (clip_grad() first) within 1e-5;
in eager mode with gradient accumulation the scheduler steps on every micro-batch (`run.accumulation`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import optreg
import libai_corpus
from fixture_replay import step_and_compare

LIBAI = libai_corpus.tree()
RECORDED = json.loads((LIBAI / "recorded.json").read_text())
CASES = {c["name"]: c for c in RECORDED["cases"]}
# files LiBai builds and optreg refuses at their line (tests/test_suite_corpus.py pins where and why)
REFUSED = {"configs/swinv2_imagenet.py", "projects/Couplets/configs/config.py"}
# files LiBai's loader cannot run without the project's own sys.path set-up (optreg refuses them too)
NOT_BUILT = {"projects/MAE/configs/mae_finetune.py", "projects/MAE/configs/mae_pretraining.py"}
# files LiBai's eager trainer (graph.enabled = False) runs with num_accumulation_steps 8: the scheduler steps on every
# micro-batch (train_iter and warmup_iter × 8), the optimizer on every 8th
EAGER_ACCUMULATION = {"projects/Aquila/configs/aquila_sft.py", "projects/Baichuan/configs/baichuan_sft.py",
                      "projects/Llama/configs/llama_sft.py"}


class StandIn(torch.nn.Module):
    """The recording's stand-in (scripts/record_libai_corpus.py) in torch: the parameter names the corpus's
    overrides name, a Linear, a LayerNorm (get_default_optimizer_params' norm layer), a head."""

    def __init__(self):
        super().__init__()
        shapes = RECORDED["shapes"]
        self.pos_embed = torch.nn.Parameter(torch.zeros(shapes["pos_embed"]))
        self.cls_token = torch.nn.Parameter(torch.zeros(shapes["cls_token"]))
        self.proj = torch.nn.Linear(4, 3)
        self.norm = torch.nn.LayerNorm(3)
        self.head = torch.nn.Linear(3, 2)
        with torch.no_grad():
            for name, p in self.named_parameters():
                p.copy_(torch.tensor(RECORDED["init"][name]).reshape(shapes[name]))


def test_every_corpus_file_is_recorded_or_listed():
    files = {p.relative_to(LIBAI).as_posix() for p in LIBAI.rglob("*.py")
             if "common" not in p.parts and p.name != "optim.py"}
    assert set(CASES) | set(RECORDED["not_built"]) == files and set(RECORDED["not_built"]) == NOT_BUILT
    assert len(set(CASES) - REFUSED) >= 15


@pytest.mark.parametrize("name", sorted(set(CASES) - REFUSED))
def test_libai_corpus_file_builds_what_libai_builds(name):
    case = CASES[name]
    model = StandIn()
    built = optreg.build(str(LIBAI / name), model, steps_per_epoch=RECORDED["steps_per_epoch"])
    assert built.run.steps == case["train_iter"]
    eager = 1 if case["graph"] else case["num_accumulation_steps"]
    assert built.run.accumulation == eager and (eager > 1) == (name in EAGER_ACCUMULATION)
    names = {id(p): n for n, p in model.named_parameters()}
    groups = [i for i, g in enumerate(built.optimizer.param_groups) if g["params"]]
    got = [(frozenset(names[id(p)] for p in g["params"]), g["weight_decay"], g.get("clip_grad_max_norm"))
           for g in (built.optimizer.param_groups[i] for i in groups)]
    want = [(frozenset(g["params"]), g["weight_decay"], g.get("clip_grad_max_norm")) for g in case["groups"]]
    assert sorted(got, key=repr) == sorted(want, key=repr)
    order = [next(i for i, w in enumerate(want) if w[0] == g[0]) for g in got]
    schedules, base = built.scheduler.schedules, built.scheduler.base_lrs   # a schedule gives the factor of the base
    for step, lrs in case["lrs"].items():
        assert [base[i] * schedules[i](int(step)) for i in groups] == \
            pytest.approx([lrs[k] for k in order], rel=1e-6), step
    params = dict(model.named_parameters())
    step_and_compare(built.optimizer, built.scheduler, params, RECORDED["grads"], case["weights"],
                     before_step=built.optimizer.clip_grad, accumulation=built.run.accumulation)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_files_optreg_refuses_are_ones_libai_builds(name):
    """The refusals are optreg's (code it does not run), not files LiBai cannot build."""
    assert CASES[name]["train_iter"] > 0 and CASES[name]["lrs"]
    with pytest.raises(optreg.ConfigError):
        optreg.build(str(LIBAI / name), StandIn(), steps_per_epoch=RECORDED["steps_per_epoch"])

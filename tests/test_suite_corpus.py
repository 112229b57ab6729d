"""The suites' corpora: real configs of MindFormers (mindspore-lab/mindformers at v1.3.0, v1.7.0 and dev fd4deebc1)
and LiBai (Oneflow-Inc/libai main), each file's first line naming its source repository, commit and path.

MindFormers: every file is read as MindFormers' trainer reads it for a dataset of `data_size` steps per epoch and
replayed against what MindFormers built from it on MindSpore 2.10 (tests/fixtures/mindformers/corpus.json,
scripts/record_mindformers.py): the lr at the recorded steps, the parameter groups, three optimizer steps.
LiBai: every file is read with ast (its configs/common files beside it, as in LiBai's tree) into the run length,
warmup and OneFlow scheduler LiBai's DefaultTrainer builds, or refused at the line that holds code optreg does not run;
LiBai's schedulers themselves are replayed against OneFlow 0.9.0 in test_libai_fixtures.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

import optreg
import libai_corpus
from fixture_replay import stand_in, step_and_compare
from optreg.config.experiment import validate_experiment
from optreg.config.yaml_loader import read_yaml
from optreg.errors import ConfigError

HERE = Path(__file__).parent
MF = HERE / "suites" / "mindformers"
LIBAI = libai_corpus.tree()
CORPUS = json.loads((HERE / "fixtures" / "mindformers" / "corpus.json").read_text())
MF_REFUSED = {"1.3.0/research_llama3_pretrain_llama3_70b.yaml": ("optimizer.type", "research project's own")}
MF_SOURCE = re.compile(r"^# from mindspore-lab/mindformers \S+ \([0-9a-f]{40}\):\S+\.yaml$")
LIBAI_SOURCE = re.compile(r"^# from Oneflow-Inc/libai [0-9a-f]{40}:\S+\.py$")
LIBAI_STEPS_PER_EPOCH = 100
# file -> (run length, warmup iterations, OneFlow scheduler) with 100 iterations per epoch, or the refused path
LIBAI_EXPECTED = {
    "configs/bert_classification.py": (10000, 0, "CosineDecayLR"),
    "configs/bert_large_pretrain.py": (10000, 0, "CosineDecayLR"),
    "configs/gpt2_pretrain.py": (10000, 0, "CosineDecayLR"),
    "configs/resmlp_imagenet.py": (40000, 500, "CosineDecayLR"),
    "configs/roberta_pretrain.py": (10000, 0, "CosineDecayLR"),
    "configs/swin_cifar100.py": (30000, 2000, "CosineDecayLR"),
    "configs/swin_imagenet.py": (30000, 2000, "CosineDecayLR"),
    "configs/swinv2_imagenet.py": "def",
    "configs/t5_large_pretrain.py": (10000, 0, "CosineDecayLR"),
    "configs/vit_imagenet.py": (30000, 500, "CosineDecayLR"),
    "projects/Aquila/configs/aquila_sft.py": (4000, 1336, "ExponentialLR"),   # eager, 8 micro-batches: × 8
    "projects/Baichuan/configs/baichuan_sft.py": (2400, 800, "ExponentialLR"),   # eager, × 8
    "projects/ChatGLM/configs/chatglm_sft.py": (300, 120, "ExponentialLR"),
    "projects/ConvNeXT/configs/convnext_imagenet.py": (30000, 500, "CosineDecayLR"),
    "projects/Couplets/configs/config.py": "__file__",
    "projects/Llama/configs/llama_sft.py": (2400, 800, "ExponentialLR"),   # eager, × 8
    "projects/MAE/configs/mae_finetune.py": "if",
    "projects/MAE/configs/mae_pretraining.py": "optim.params._target_",
    "projects/MOCOV3/configs/moco_pretrain.py": (30000, 4000, "CosineDecayLR"),
    "projects/MT5/configs/mt5_pretrain.py": (24000, 1000, "ExponentialLR"),
    "projects/MagicPrompt/configs/gpt2_training.py": (10000, 0, "ExponentialLR"),
    "projects/PaLM/configs/palm_pretrain.py": (10000, 0, "CosineDecayLR"),
    "projects/QQP/configs/config_qqp.py": (100, 1, "CosineDecayLR"),
    "projects/Qwen/configs/qwen_sft.py": (100, 34, "ExponentialLR"),
    "projects/Stable_Diffusion/configs/config.py": (20, 1, "CosineDecayLR"),
    "projects/T5/configs/mt5_pretrain.py": (24000, 1000, "ExponentialLR"),
    "projects/text_classification/configs/config.py": (100, 0, "CosineDecayLR"),
}
LIBAI_REFUSALS = {"def": "a lambda or a function or class definition", "__file__": "the name '__file__'",
                  "if": "a if statement"}



def _mindformers(name: str):
    data, source = read_yaml(str(MF / name))
    return validate_experiment({**data, "train": {"steps_per_epoch": CORPUS["data_size"]}}, source)


def test_corpus_sizes_and_provenance():
    mf = sorted(MF.glob("*/*.yaml"))
    libai = [p for p in LIBAI.rglob("*.py") if "common" not in p.parts]
    assert len(mf) >= 15 and len(LIBAI_EXPECTED) >= 15
    assert {p.relative_to(MF).as_posix() for p in mf} == {c["name"] for c in CORPUS["cases"]} | set(MF_REFUSED)
    assert all(MF_SOURCE.match(p.read_text().splitlines()[0]) for p in mf)
    assert all(LIBAI_SOURCE.match(p.read_text().splitlines()[0]) for p in LIBAI.rglob("*.py"))
    assert {p.relative_to(LIBAI).as_posix() for p in libai} - set(LIBAI_EXPECTED) == {"projects/T5/configs/optim.py"}


@pytest.mark.parametrize("case", CORPUS["cases"], ids=lambda c: c["name"])
def test_mindformers_corpus_builds_what_mindformers_builds(case):
    experiment = _mindformers(case["name"])
    assert experiment.run.steps == case["total_steps"]
    model = stand_in(case["shapes"], case["init"])
    built = optreg.build(experiment, model)
    names = {id(p): n for n, p in model.named_parameters()}
    assert {(frozenset(names[id(p)] for p in g["params"]), g["weight_decay"])
            for g in built.optimizer.param_groups if g["params"]} == \
        {(frozenset(g["params"]), g["weight_decay"]) for g in case["groups"]}
    for schedule in built.scheduler.schedules:
        got = [schedule(int(t)) for t in case["lrs"]]
        assert got == pytest.approx(list(case["lrs"].values()), rel=1e-6)
    params = dict(model.named_parameters())
    step_and_compare(built.optimizer, built.scheduler, params, case["grads"], case["weights"])


@pytest.mark.parametrize("name", sorted(MF_REFUSED))
def test_mindformers_corpus_refusals_are_explained(name):
    path, words = MF_REFUSED[name]
    with pytest.raises(ConfigError) as exc:
        _mindformers(name)
    assert exc.value.errors[0].path == path and words in str(exc.value) and exc.value.errors[0].location.line > 1


@pytest.mark.parametrize("name", sorted(LIBAI_EXPECTED))
def test_libai_corpus_reads_as_libai_trains(name):
    expected = LIBAI_EXPECTED[name]
    if isinstance(expected, str):
        with pytest.raises(ConfigError) as exc:
            optreg.build(str(LIBAI / name), torch.nn.Linear(3, 3), steps_per_epoch=LIBAI_STEPS_PER_EPOCH)
        item = exc.value.errors[0]
        assert item.location.line > 1
        assert LIBAI_REFUSALS.get(expected, "") in str(exc.value) and (expected in LIBAI_REFUSALS or
                                                                       item.path == expected)
        return
    steps, warmup, inner = expected
    built = optreg.build(str(LIBAI / name), torch.nn.Linear(3, 3), steps_per_epoch=LIBAI_STEPS_PER_EPOCH)
    schedule = built.scheduler.schedules[0]
    assert (built.run.steps, getattr(schedule, "warmup_iters", 0),
            type(getattr(schedule, "scheduler", schedule)).__name__) == expected
    for _ in range(3):
        built.optimizer.step()
        built.scheduler.step()
    assert all(g["lr"] >= 0 for g in built.optimizer.param_groups)

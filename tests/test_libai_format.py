"""The LiBai format: LazyConfig files read with ast (never run), translated into the oneflow dialect's form, with
LiBai's run length, schedulers (libai/scheduler/lr_scheduler.py composed of OneFlow's) and parameter groups."""

from __future__ import annotations

import math
import shutil
import textwrap
from pathlib import Path

import pytest
import torch

import optreg
from optreg.config.experiment import load_config
from optreg.errors import ConfigError

import libai_corpus

COMMON = libai_corpus.tree() / "configs" / "common"   # LiBai's own, from the corpus
MAIN = """\
from libai.config import LazyCall
from .common.train import train
from .common.optim import optim

train.train_iter = 200
train.warmup_ratio = 0.05
optim.lr = 5e-4
{extra}
"""


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "configs" / "common").mkdir(parents=True)
    for name in ("optim.py", "train.py"):
        shutil.copy(COMMON / name, tmp_path / "configs" / "common" / name)

    def write(extra: str = "") -> str:
        path = tmp_path / "configs" / "main.py"
        path.write_text(MAIN.format(extra=textwrap.dedent(extra)))
        return str(path)
    return write


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.norm = torch.nn.LayerNorm(4)


def test_lazyconfig_translates_to_the_oneflow_form(tree):
    e = load_config(tree())
    assert e.format == "libai" and e.run.steps == 200
    assert e.optimizer == {"name": "AdamW", "dialect": "oneflow", "lr": 5e-4, "weight_decay": 0.01,
                           "betas": [0.9, 0.999], "eps": 1e-8, "do_bias_correction": True}
    # warmup_iter = ceil(200 * 0.05) = 10 (DefaultTrainer.auto_scale_hyperparams); max_iter = train_iter
    assert e.scheduler == {"name": "WarmupLR", "warmup_factor": 0.001, "warmup_iters": 10, "warmup_method": "linear",
                           "scheduler": {"name": "CosineDecayLR", "alpha": 0.01, "decay_steps": 200}}


def test_the_run_length_given_beside_the_file_replaces_train_iter(tree, capsys):
    """train_iter is the file's own run length: `build(total_steps=)` and `--steps` replace it, as they replace
    DeepSpeed's and the Trainer's (it was read as a `train.steps` the file does not have, and the two disagreed)."""
    from optreg.cli import main

    assert load_config(tree()).with_run(total_steps=3).run.steps == 3
    assert main(["plot", tree(), "--steps", "3", "--csv"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "step,group,key,value" and {r.split(",")[0] for r in rows[1:]} == {"0", "1", "2"}


def test_warmup_cosine_values_and_groups(tree):
    net = Net()
    b = optreg.build(tree(), net)
    names = {id(p): n for n, p in net.named_parameters()}
    groups = {frozenset(names[id(p)] for p in g["params"]): (g["weight_decay"], g["clip_grad_max_norm"])
              for g in b.optimizer.param_groups if g["params"]}
    assert groups == {frozenset({"proj.weight"}): (0.01, 1.0),
                      frozenset({"proj.bias", "norm.weight", "norm.bias"}): (0.0, 1.0)}
    lrs = []
    for _ in range(30):
        lrs.append(b.optimizer.param_groups[0]["lr"])
        b.optimizer.step()
        b.scheduler.step()
    for t, lr in enumerate(lrs):   # OneFlow's WarmUpLR (linear, not prefixed) around CosineDecayLR(200, alpha)
        cosine = (1 - 0.01) * 0.5 * (1 + math.cos(math.pi * t / 200)) + 0.01
        if t < 10:
            end = (1 - 0.01) * 0.5 * (1 + math.cos(math.pi * 10 / 200)) + 0.01
            factor = 0.001 + (end - 0.001) * t / 10
        else:
            factor = cosine
        assert lr == pytest.approx(5e-4 * factor, rel=1e-9)


def test_a_file_that_would_run_code_is_refused_without_running_it(tree, tmp_path):
    marker = tmp_path / "marker"
    for code in (f"open({str(marker)!r}, 'w').write('ran')",
                 f"__import__('os').system('touch {marker}')",
                 f"train.x = (lambda: open({str(marker)!r}, 'w'))()",
                 f"optim.lr = ().__class__.__bases__[0]",
                 f"def f():\n    open({str(marker)!r}, 'w')\nf()"):
        with pytest.raises(ConfigError) as exc:
            load_config(tree(code))
        assert "without running" in str(exc.value) and "main.py:" in str(exc.value)
    assert not marker.exists()


def test_a_missing_common_import_is_named(tmp_path):
    path = tmp_path / "alone.py"
    path.write_text(MAIN.format(extra=""))
    with pytest.raises(ConfigError) as exc:
        load_config(str(path))
    assert ".common.optim" in str(exc.value) and "not beside the file" in str(exc.value)


def test_a_not_python_lazyconfig_is_not_claimed(tmp_path):
    path = tmp_path / "plain.py"
    path.write_text("x = 1\n")
    with pytest.raises(ConfigError) as exc:
        load_config(str(path))
    assert "none recognised this one" in str(exc.value)


def test_scheduler_errors_carry_the_line(tree):
    with pytest.raises(ConfigError) as exc:
        load_config(tree("from libai.scheduler import WarmupCosinLR\n"
                         "train.scheduler = LazyCall(WarmupCosinLR)(warmup_factor=0.1)"))
    (item,) = exc.value.errors
    assert item.path == "train.scheduler" and "did you mean 'WarmupCosineLR'" in str(exc.value)
    assert item.location.line == 9 and item.location.file.endswith("main.py")

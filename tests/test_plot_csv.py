"""`optreg plot CONFIG --steps N --csv` (issue 25 item 3): stdout holds only CSV, `step,group,key,value`, and each
value is what the (step+1)-th optimizer.step() applies to that group, for a case of every dialect (MindSpore's
per-step list, schedule dict and dynamic-lr functions included).

The reference is measured, not computed: the same config is built against the same model in float64, every
gradient is set to 1, and plain SGD (no momentum, no weight decay) moves each parameter by exactly the lr it
applies, so p_before - p_after is the applied lr of the parameter's group."""

from __future__ import annotations

import csv
import io
import warnings
from pathlib import Path

import pytest
import torch

import optreg
from optreg.cli import main
from optreg.train import make_model

STEPS = 6
TWO_GROUPS = "  param_groups: [{params: 'inp.*', lr_mult: 0.5}]\n"
CASES = {
    "torch": "optimizer:\n  name: SGD\n  lr: 0.1\n" + TWO_GROUPS +
             "scheduler: {name: StepLR, step_size: 2, gamma: 0.5}\n",
    "oneflow": "dialect: oneflow\noptimizer:\n  name: SGD\n  lr: 0.1\n" + TWO_GROUPS +
               "scheduler: {name: CosineDecayLR, decay_steps: 4, alpha: 0.1}\n",
    "cerebras": "dialect: cerebras\noptimizer: {name: SGD, lr: 0.1}\n"
                "scheduler: {name: LinearLR, initial_learning_rate: 0.1, end_learning_rate: 0.01, total_iters: 4}\n",
    "mindspore per-step list": "dialect: mindspore\noptimizer:\n  name: SGD\n"
                               "  learning_rate: [0.1, 0.08, 0.06, 0.04, 0.02, 0.01]\n",
    "mindspore schedule dict": "dialect: mindspore\noptimizer:\n  name: SGD\n"
                               "  learning_rate: {name: CosineDecayLR, min_lr: 0.01, max_lr: 0.1, decay_steps: 4}\n",
    "mindspore warmup_lr": "dialect: mindspore\noptimizer:\n  name: SGD\n  learning_rate: {name: warmup_lr, "
                           "learning_rate: 0.1, total_step: 6, step_per_epoch: 2, warmup_epoch: 2}\n",
    "mindspore cosine_decay_lr": "dialect: mindspore\noptimizer:\n  name: SGD\n  learning_rate: {name: "
                                 "cosine_decay_lr, min_lr: 0.01, max_lr: 0.1, total_step: 6, step_per_epoch: 2, "
                                 "decay_epoch: 3}\n",
    "hf": "optimizer:\n  name: SGD\n  lr: 0.1\n" + TWO_GROUPS +
          "scheduler: {name: hf.linear, num_warmup_steps: 2, num_training_steps: 6}\n",
    "timm": "optimizer:\n  name: SGD\n  lr: 0.1\n" + TWO_GROUPS +
            "scheduler: {name: timm.cosine, t_initial: 6, warmup_t: 2, warmup_lr_init: 0.001}\n",
    "nemo": "optimizer:\n  name: SGD\n  lr: 0.1\n" + TWO_GROUPS +
            "scheduler: {name: nemo.CosineAnnealing, max_steps: 6, min_lr: 0.001, warmup_steps: 2}\n",
}


def plotted(path, capsys) -> list[dict[str, str]]:
    assert main(["plot", str(path), "--steps", str(STEPS), "--csv"]) == 0
    out = capsys.readouterr().out
    return list(csv.DictReader(io.StringIO(out)))


def applied_lrs(path) -> list[list[float]]:
    """[step][group]: p_before - p_after of each group's first parameter under a gradient of ones."""
    spec = optreg.load_config(path).train
    model = make_model(spec.hidden, spec.depth, spec.seed).double()
    built = optreg.build(path, model)
    out = []
    for _ in range(STEPS):
        firsts = [g["params"][0] for g in built.optimizer.param_groups]
        before = [p.detach().clone() for p in firsts]
        for group in built.optimizer.param_groups:
            for p in group["params"]:
                p.grad = torch.ones_like(p)
        built.optimizer.step()
        out.append([float((b - p.detach()).flatten()[0]) for b, p in zip(before, firsts)])
        if built.scheduler is not None:
            built.scheduler.step()
    return out


@pytest.mark.parametrize("case", CASES)
def test_plot_csv_is_what_each_optimizer_step_applies(case, tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text(CASES[case])
    rows = plotted(path, capsys)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = applied_lrs(path)
    n_groups = len(reference[0])
    lr_rows = [r for r in rows if r["key"] == "lr"]
    assert [(int(r["step"]), int(r["group"])) for r in lr_rows] == \
        [(s, g) for s in range(STEPS) for g in range(n_groups)]
    for r in lr_rows:
        assert float(r["value"]) == pytest.approx(reference[int(r["step"])][int(r["group"])], rel=1e-9, abs=1e-15)
    values = [float(r["value"]) for r in lr_rows]
    assert len(set(values)) > 1, "the case must move the lr"


def test_csv_output_is_csv_only_and_ordered(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1, momentum: 0.9}\n"
                    "scheduler: {name: OneCycleLR, max_lr: 0.1, total_steps: 10}\n")
    assert main(["plot", str(path), "--steps", "3", "--csv"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "step,group,key,value"
    keys = [tuple(line.split(",")[:3]) for line in lines[1:]]
    assert keys == [(str(s), "0", k) for s in range(3) for k in ("lr", "momentum")]   # OneCycle cycles momentum
    assert out.endswith("\n") and all(len(line.split(",")) == 4 for line in lines)


def test_csv_output_goes_to_the_file_named_by_o(tmp_path, capsys):
    """`-o FILE` with --csv writes the rows stdout would hold into FILE, and says so on stdout."""
    path = tmp_path / "c.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler: {name: StepLR, step_size: 2, gamma: 0.5}\n")
    assert main(["plot", str(path), "--steps", "4", "--csv"]) == 0
    expected = capsys.readouterr().out
    out = tmp_path / "lr.csv"
    assert main(["plot", str(path), "--steps", "4", "--csv", "-o", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out} (4 steps, 1 group(s))\n"
    assert out.read_text(encoding="utf-8") == expected
    assert [line.split(",")[3] for line in expected.splitlines()[1:]] == ["0.1", "0.1", "0.05", "0.05"]


def test_an_output_that_cannot_be_written_says_which_file_and_why(tmp_path, capsys):
    """`-o` in a missing directory, or naming a directory: the file and the system's reason, no traceback."""
    missing = tmp_path / "nowhere" / "lr.csv"
    assert main(["plot", "--steps", "2", "--csv", "-o", str(missing)]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == f"{missing}: No such file or directory"
    quickstart = Path(__file__).resolve().parents[1] / "examples" / "quickstart.yaml"
    assert main(["convert", str(quickstart), "-o", str(tmp_path)]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == f"{tmp_path}: Is a directory"


def test_plot_csv_with_model_is_what_build_gives_that_model(tmp_path, capsys, monkeypatch):
    """`plot --model MODULE:CALLABLE` draws the groups the config gives the user's model (as `groups --model`): the
    ViT example's layer decay and 10x head lr, which the built-in model cannot take, every group at every step as
    a build() of the same model steps it (the lr each optimizer.step() reads)."""
    from examples.finetune_models import tiny_vit

    monkeypatch.chdir(Path(__file__).resolve().parents[1])   # the factory's module, found as a user runs it
    path = tmp_path / "vit.yaml"
    path.write_text((Path("examples") / "finetune_vit.yaml").read_text().replace("T_max: 100", "T_max: 4"))
    assert main(["plot", str(path), "--steps", str(STEPS), "--csv"]) == 1   # the built-in model has no blocks
    capsys.readouterr()
    assert main(["plot", str(path), "--steps", str(STEPS), "--csv", "--model",
                 "examples.finetune_models:tiny_vit"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    built = optreg.build(str(path), tiny_vit())
    want = []
    for step in range(STEPS):
        want += [(step, group, "lr", g["lr"]) for group, g in enumerate(built.optimizer.param_groups)]
        built.optimizer.step()
        built.scheduler.step()
    assert [(int(r["step"]), int(r["group"]), r["key"], float(r["value"])) for r in rows] == want
    assert len({lr for _, _, _, lr in want[:len(built.optimizer.param_groups)]}) == 6   # head, 4 layers, the rest

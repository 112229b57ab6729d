"""Components found by the class path their framework documents; Cerebras' weight-decay schedulers and
ScalePerParamLR beyond their recordings; torch's SWALR against its documented formula."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import optreg
from optreg.cli import main
from optreg.core.entry import scheduler
from optreg.core.registry import REGISTRY

DOCUMENTED = [e for kind in ("optimizer", "scheduler") for e in REGISTRY.entries(kind) if e.class_path]


def test_the_new_components_declare_their_class_paths():
    paths = {e.class_path for e in DOCUMENTED}
    assert {"torch.optim.swa_utils.SWALR", "cerebras.pytorch.optim.lr_scheduler.ScalePerParamLR",
            "cerebras.pytorch.optim.weight_decay_scheduler.CosineDecayWD"} <= paths
    assert sum(p.startswith("cerebras.pytorch.optim.weight_decay_scheduler.") for p in paths) == 19


@pytest.mark.parametrize("entry", DOCUMENTED, ids=[e.class_path for e in DOCUMENTED])
def test_a_class_path_finds_its_entry_whatever_the_dialect(entry):
    assert REGISTRY.lookup(entry.kind, entry.class_path) is entry
    # under another dialect as a default (a file's top-level dialect:); one that the spec asks for contradicts it
    assert REGISTRY.lookup(entry.kind, entry.class_path, default="mindspore") is entry
    assert optreg.describe(entry.class_path).documented.startswith(entry.class_path + " (")


def test_a_class_path_is_one_entry_s(scratch_registry):
    with pytest.raises(optreg.ConfigError, match="declares the class path 'torch.optim.swa_utils.SWALR' of "
                                                 "'torch.SWALR'") as info:
        scratch_registry.add(scheduler("torch", "MySWA", "torch.optim.swa_utils:SWALR",
                                       class_path="torch.optim.swa_utils.SWALR"))
    assert info.value.errors[0].path == "class_path"


def test_a_class_path_from_yaml_and_the_cli(capsys):
    model = torch.nn.Linear(3, 2)
    built = optreg.build("optimizer: {name: cerebras.AdamW, lr: 0.1, weight_decay: 0.1}\n"
                         "scheduler: {name: cerebras.pytorch.optim.weight_decay_scheduler.CosineDecayWD,\n"
                         "            initial_val: 0.1, end_val: 0.01, total_iters: 10}\n", model)
    assert built.scheduler.key == "weight_decay"
    assert main(["show", "cerebras.pytorch.optim.weight_decay_scheduler.CosineDecayWD"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the line wraps between words at the terminal's width
    assert "documented: cerebras.pytorch.optim.weight_decay_scheduler.CosineDecayWD (cerebras_pytorch 2.10" in out


def _sgd(groups):
    params = [torch.nn.Parameter(torch.zeros(2)) for _ in groups]
    return optreg.configure_optimizer("cerebras.SGD", [{"params": [p], **g} for p, g in zip(params, groups)], lr=0.1)


def test_a_weight_decay_scheduler_drives_weight_decay_and_leaves_the_lr():
    opt = _sgd([{"weight_decay": 0.3}, {"weight_decay": 0.0, "lr": 0.02}])
    sched = optreg.configure_lr_scheduler(opt, {"name": "cerebras.StepWD", "initial_val": 0.1, "step_size": 2,
                                                "gamma": 0.5})
    seen = []
    for _ in range(5):
        seen.append([(g["lr"], g["weight_decay"]) for g in opt.param_groups])
        opt.step()
        sched.step()
    assert seen == [[(0.1, 0.1 * 0.5 ** (t // 2)), (0.02, 0.1 * 0.5 ** (t // 2))] for t in range(5)]


@pytest.mark.parametrize("spec, path, message", [
    ({"name": "cerebras.CosineDecayWD", "initial_val": 0.1, "end_val": 0.0, "total_iters": 10, "key": "lr"},
     "key", "CosineDecayWD drives 'weight_decay' only, got 'lr'"),
    ({"name": "cerebras.SequentialWD", "schedulers": [
        {"name": "LinearLR", "initial_learning_rate": 0.0, "end_learning_rate": 0.1, "total_iters": 5},
        {"name": "CosineDecayWD", "initial_val": 0.1, "end_val": 0.0, "total_iters": 10}]},
     "schedulers.0", "SequentialWD drives 'weight_decay'; this stage (PolynomialLR) drives 'lr'"),
    ({"name": "cerebras.ScalePerParamLR", "scheduler": {"name": "CosineDecayWD", "initial_val": 0.1,
                                                         "end_val": 0.0, "total_iters": 10}},
     "schedulers.0", "ScalePerParamLR drives 'lr'; this stage (CosineDecayWD) drives 'weight_decay'"),
    ({"name": "cerebras.CyclicWD", "base_val": 0.1, "max_val": 0.01},
     "max_val", "must be >= base_val"),
])
def test_a_scheduler_of_another_key_is_refused_where_cerebras_refuses_it(spec, path, message):
    opt = _sgd([{"weight_decay": 0.1}])
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_lr_scheduler(opt, spec)
    assert [(i.path, i.message) for i in info.value.errors][0][0] == path
    assert message in info.value.errors[0].message


def test_scale_per_param_reads_each_group_s_factor():
    opt = _sgd([{"weight_decay": 0.1, "adjust_learning_rate": 0.5}, {"weight_decay": 0.1, "adjust_val": 4.0},
                {"weight_decay": 0.1}])
    optreg.configure_lr_scheduler(opt, {"name": "cerebras.ScalePerParamLR", "scheduler": {
        "name": "ConstantLR", "learning_rate": 0.2}})
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.8, 0.2]
    with pytest.raises(optreg.ConfigError) as info:
        _sgd([{"adjust_learning_rate": -1.0}])
    assert info.value.errors[0].path == "params[0].adjust_learning_rate"


# --- torch.optim.swa_utils.SWALR -----------------------------------------------------------------
def swalr_reference(lr0: float, swa_lr: float, anneal_epochs: int, strategy: str, steps: int) -> list[float]:
    """torch's documented SWALR: lr_t = α·swa_lr + (1-α)·lr0, α = anneal(min(t/max(1, anneal_epochs), 1)),
    with anneal = (1 - cos πx)/2 (cos) or x (linear); anneal_epochs = 0 sets swa_lr from construction on."""
    out = []
    for t in range(steps):
        x = 1.0 if anneal_epochs == 0 else min(t / max(1, anneal_epochs), 1.0)
        alpha = (1 - math.cos(math.pi * x)) / 2 if strategy == "cos" else x
        out.append(alpha * swa_lr + (1 - alpha) * lr0)
    return out


@pytest.mark.parametrize("anneal_epochs, strategy", [(10, "cos"), (7, "linear"), (0, "cos")])
def test_swalr_follows_its_documented_formula(anneal_epochs, strategy):
    p = torch.nn.Parameter(torch.zeros(2))
    opt = optreg.configure_optimizer("SGD", [p], lr=0.1)
    sched = optreg.configure_lr_scheduler(opt, {"name": "torch.optim.swa_utils.SWALR", "swa_lr": 0.01,
                                                "anneal_epochs": anneal_epochs, "anneal_strategy": strategy})
    assert isinstance(sched, torch.optim.swa_utils.SWALR)
    got = []
    for _ in range(15):
        got.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    np.testing.assert_allclose(got, swalr_reference(0.1, 0.01, anneal_epochs, strategy, 15), rtol=1e-12, atol=0)


def test_swalr_options_are_checked_with_their_paths():
    opt = optreg.configure_optimizer("SGD", [torch.nn.Parameter(torch.zeros(2))], lr=0.1)
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_lr_scheduler(opt, {"name": "SWALR", "swa_lr": -1.0, "anneal_epochs": -2,
                                            "anneal_strategy": "cosine"})
    assert [i.path for i in info.value.errors] == ["swa_lr", "anneal_epochs", "anneal_strategy"]


# --- the README's dialect table ----------------------------------------------------------------------
def readme_dialect_table() -> dict[str, tuple[int, int]]:
    """The README's `| dialect | optimizers | schedulers | numerics |` rows: {dialect: (optimizers, schedulers)}."""
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    table = text[text.index("| dialect | optimizers | schedulers | numerics |"):].split("\n\n")[0]
    out = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        out[cells[0].split("`")[1]] = (int(cells[1]), int(cells[2]))
    return out


def test_the_readme_dialect_table_is_the_registry_s():
    from optreg.dialects import counts

    assert list(readme_dialect_table().items()) == list(counts().items())

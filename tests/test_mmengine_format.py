"""The `mmengine` config format against MMEngine itself: the corpus (tests/fixtures/mmengine/configs: mmpretrain,
mmdetection and mmsegmentation configs as mmengine's Config.fromfile loads them, and synthetic configs for the
quirks) replayed against what mmengine-lite 0.10.7 built from each (scripts/record_mmengine_configs.py): every
parameter's lr and weight decay, every group's lr (momentum, weight decay) at the recorded steps, and the weights
after three optimizer steps on the stand-in model (tests/mmengine_standin.py)."""

from __future__ import annotations

import json
import re
import sys
import warnings
from pathlib import Path

import pytest
import torch
from mmengine_standin import model as standin, set_grads

import optreg
from optreg import ConfigError
from optreg.config.formats import KeyUse
from tests.format_replay import stepped_lrs

FIXTURES = Path(__file__).parent / "fixtures" / "mmengine"
CONFIGS = sorted(p for p in (FIXTURES / "configs").glob("*.yaml") if not p.stem.startswith("refused_"))
REFUSED = sorted((FIXTURES / "configs").glob("refused_*.yaml"))   # mmpretrain's own optimizers (Lamb, LARS)
RUNS = {p.stem: p for p in (FIXTURES / "runs").glob("*.json")}
PROVENANCE = re.compile(r"^# from (open-mmlab/(mmpretrain|mmdetection|mmsegmentation)@[0-9a-f]{40}:configs/\S+\.py"
                        r" \(mmengine Config\.fromfile|optreg \(synthetic\): )")
REAL = [p for p in CONFIGS if not p.stem.startswith("synthetic")]


def _built(path: Path, fixture: dict, model: torch.nn.Module):
    return optreg.build(str(path), model, steps_per_epoch=fixture["steps_per_epoch"])


def _group_of(optimizer: torch.optim.Optimizer, model: torch.nn.Module) -> dict[str, dict]:
    ids = {id(p): n for n, p in model.named_parameters()}
    return {ids[id(p)]: g for g in optimizer.param_groups for p in g["params"]}


def _value(group: dict, key: str) -> float:
    if key == "momentum" and "momentum" not in group:
        return group["betas"][0]
    return group[key]


def test_corpus_size_and_provenance():
    assert len(REAL) >= 15
    assert {p.stem for p in CONFIGS} == set(RUNS)   # a recorded run for every config, none stray
    for path in CONFIGS + REFUSED:
        first = path.read_text().splitlines()[0]
        assert PROVENANCE.match(first), f"{path.name}: {first!r}"
    assert sum(p.stat().st_size for p in RUNS.values()) < 2 * 2 ** 20


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_builds_what_mmengine_builds(path):
    fixture = json.loads(RUNS[path.stem].read_text())
    assert fixture["config"] == path.relative_to(FIXTURES.parent.parent.parent).as_posix()
    model = standin()
    built = _built(path, fixture, model)
    by_name = _group_of(built.optimizer, model)
    assert set(by_name) == set(fixture["params"])
    for name, want in fixture["params"].items():   # each parameter's lr and weight decay before any schedule
        group = by_name[name]
        assert group.get("initial_lr", group["lr"]) == pytest.approx(want["lr"], rel=1e-6), name
        wd = group.get("initial_weight_decay", group.get("weight_decay"))
        assert wd == pytest.approx(want["weight_decay"] or 0.0, rel=1e-6, abs=1e-12), name
    scheduler, recorded = built.scheduler, iter(fixture["record_steps"])
    groups = [by_name[name] for name in fixture["groups"]]
    step = next(recorded)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # torch: scheduler.step() without optimizer.step()
        for t in range(fixture["record_steps"][-1] + 1):
            if t == step:
                row = fixture["record_steps"].index(t)
                for key, rows in fixture["values"].items():
                    got = [_value(g, key) for g in groups]
                    want = [rows[row][c] for c in fixture["columns"]]
                    assert got == pytest.approx(want, rel=1e-6, abs=1e-15), f"{key} at step {t}"
                step = next(recorded, None)
            if scheduler is not None:
                scheduler.step()


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_three_steps_of_weights(path):
    fixture = json.loads(RUNS[path.stem].read_text())
    model = standin()
    built = _built(path, fixture, model)
    for t, want in enumerate(fixture["weights"]):
        set_grads(model, t)
        built.clip_gradients(model)
        built.optimizer.step()
        if built.scheduler is not None:
            built.scheduler.step()
        for name, p in model.named_parameters():
            expected = torch.tensor(want[name]).reshape(p.shape)
            torch.testing.assert_close(p.detach(), expected, rtol=1e-5, atol=1e-6, msg=lambda m: f"{name}: {m}")


@pytest.mark.parametrize("path", REFUSED, ids=lambda p: p.stem)
def test_a_librarys_own_optimizer_is_refused_in_the_file(path):
    """Refused as MMEngine's: its registry's class of another package, not a pointer to another dialect's Lamb
    (OneFlow's, Cerebras', MindSpore's: other algorithms, which an MMEngine config cannot name)."""
    with pytest.raises(ConfigError) as info:
        optreg.load_config(str(path))
    name = "Lamb" if "rsb" in path.stem else "LARS"
    assert [(e.path, e.message) for e in info.value.errors] == [(
        "optim_wrapper.optimizer.type", f"'{name}' is not one of torch.optim's optimizers, which MMEngine's OPTIMIZERS "
                                        f"registry holds by name: a class another package registers there "
                                        f"(mmpretrain's Lamb and LARS) is code optreg does not import")]
    assert re.match(rf"{re.escape(str(path))}:[34]:15: ", str(info.value))


@pytest.mark.parametrize("section, type_, path, message", [
    ("param_scheduler", "mmdet.QuadraticWarmupLR", "param_scheduler[0].type",
     "'mmdet.QuadraticWarmupLR' is a class mmdet registers in MMEngine's PARAM_SCHEDULERS registry: another package's "
     "code, which optreg does not import"),
    ("param_scheduler", "QuadraticWarmupLR", "param_scheduler[0].type",
     "'QuadraticWarmupLR' is not one of MMEngine's parameter schedulers, which MMEngine's PARAM_SCHEDULERS registry "
     "holds by name: a class another package registers there (mmdet's QuadraticWarmupLR) is code optreg does not "
     "import"),
    ("optim_wrapper", "mmpretrain.Lamb", "optim_wrapper.optimizer.type",
     "'mmpretrain.Lamb' is a class mmpretrain registers in MMEngine's OPTIMIZERS registry: another package's code, "
     "which optreg does not import"),
])
def test_another_packages_scheduler_is_refused_as_its_class(section, type_, path, message, tmp_path):
    """A scheduler type of another package (mmdet's QuadraticWarmupLR, by MMEngine's `scope.Name` or by its name) is
    refused as the optimizer of another package is (it was 'unknown MMEngine scheduler'), and a scoped optimizer
    names its package (it was 'unknown torch optimizer')."""
    source = tmp_path / "config.py"
    optimizer = type_ if section == "optim_wrapper" else "SGD"
    source.write_text(f"optim_wrapper = dict(optimizer=dict(type='{optimizer}', lr=0.1))\n"
                      + (f"param_scheduler = [dict(type='{type_}', by_epoch=False, end=5)]\n"
                         if section == "param_scheduler" else "")
                      + "train_cfg = dict(by_epoch=False, max_iters=100)\n")
    with pytest.raises(ConfigError) as info:
        optreg.load_config(str(source))
    assert [(e.path, e.message) for e in info.value.errors] == [(path, message)]


def test_every_source_key_is_reported():
    path = FIXTURES / "configs" / "synthetic_adamw_momentum.yaml"
    experiment = optreg.load_config(str(path))
    assert experiment.format == "mmengine"
    uses = {u.path: u for u in experiment.report}
    assert all(isinstance(u, KeyUse) for u in experiment.report)
    assert uses["optim_wrapper.accumulative_counts"].verdict == "trainer"
    assert uses["optim_wrapper.clip_grad.clip_value"].verdict == "exact"
    assert uses["param_scheduler[3].type"].verdict == "exact"
    assert uses["train_cfg.max_epochs"].verdict == "exact"
    assert experiment.optimizer == {"name": "AdamW", "lr": 0.002, "weight_decay": 0.05, "betas": [0.9, 0.999]}
    assert experiment.clip.max_value == 0.5


def test_custom_keys_replace_the_norm_and_bias_multipliers():
    """mmengine #846, as MMEngine 0.10 does it: a norm1 LayerNorm matched by `norm1` gets decay_mult 0.5, not
    norm_decay_mult 0; an attention bias matched by a custom key keeps the base lr (no bias_lr_mult)."""
    fixture = json.loads(RUNS["synthetic_paramwise_quirks"].read_text())["params"]
    assert fixture["backbone.layers.0.norm1.weight"]["weight_decay"] == pytest.approx(0.0005)
    assert fixture["backbone.layers.0.norm2.weight"]["weight_decay"] == 0.0
    assert fixture["backbone.layers.1.attn.qkv.bias"] == {"lr": pytest.approx(0.01), "weight_decay": 0.0}
    assert fixture["backbone.layers.0.attn.qkv.bias"]["lr"] == pytest.approx(0.1)   # bias_lr_mult
    assert fixture["backbone.dwconv.weight"]["weight_decay"] == pytest.approx(0.0002)
    assert fixture["backbone.layers.0.gamma"]["weight_decay"] == pytest.approx(0.0003)   # flat


def _error(config, model=None, **kw) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        if model is None:
            optreg.load_config(config) if isinstance(config, str) else optreg.build(config, standin(), **kw)
        else:
            optreg.build(config, model, **kw)
    return info.value


BASE = {"optim_wrapper": {"optimizer": {"type": "SGD", "lr": 0.1}}}


@pytest.mark.parametrize("change, path, fragment", [
    ({"optim_wrapper": {"optimizer": {"type": "Lamb", "lr": 0.1}}}, "optim_wrapper.optimizer.type", "Lamb"),
    ({"optim_wrapper": {"optimizer": {"type": "SGD", "lr": 0.1, "momentun": 0.9}}}, "optim_wrapper.optimizer.momentun",
     "momentum"),
    ({"optim_wrapper": {**BASE["optim_wrapper"], "constructor": "LearningRateDecayOptimWrapperConstructor"}},
     "optim_wrapper.constructor", "DefaultOptimWrapperConstructor"),
    ({"optim_wrapper": {**BASE["optim_wrapper"], "type": "OptimWrapperDict"}}, "optim_wrapper.type", "not supported"),
    ({"optim_wrapper": {**BASE["optim_wrapper"], "paramwise_cfg": {"norm_decay_mul": 0}}},
     "optim_wrapper.paramwise_cfg.norm_decay_mul", "norm_decay_mult"),
    ({"optim_wrapper": {**BASE["optim_wrapper"], "paramwise_cfg": 5}}, "optim_wrapper.paramwise_cfg", "mapping"),
    ({"optim_wrapper": {**BASE["optim_wrapper"], "paramwise_cfg": {"custom_keys": {"head": {"lr_mul": 0.1}}}}},
     "optim_wrapper.paramwise_cfg.custom_keys.head.lr_mul", "did you mean 'lr_mult'?"),
    ({"optim_wrapper": {**BASE["optim_wrapper"], "paramwise_cfg": {"custom_keys": {"head": {"decay_mul": 0}}}}},
     "optim_wrapper.paramwise_cfg.custom_keys.head.decay_mul", "did you mean 'decay_mult'?"),
    ({"param_scheduler": [{"type": "ReduceOnPlateauLR", "monitor": "loss"}]}, "param_scheduler[0].type",
     "validation metric"),
    ({"param_scheduler": [{"type": "CosineAnealingLR", "by_epoch": False}]}, "param_scheduler[0].type",
     "CosineAnnealingLR"),
    ({"param_scheduler": [{"type": "LinearLR", "begin": 5, "end": 3, "by_epoch": False}]}, "param_scheduler[0].end",
     "larger than begin"),
    ({"param_scheduler": [{"type": "LinearLR", "start_factor": 2, "by_epoch": False}]},
     "param_scheduler[0].start_factor", "must be <= 1"),
    ({"param_scheduler": [{"type": "StepLR", "by_epoch": False}]}, "param_scheduler[0].step_size", "required"),
    ({"param_scheduler": {"type": "LinearLR", "by_epoch": False, "convert_to_iter_based": True}},
     "param_scheduler.convert_to_iter_based", "epoch-based"),
    ({"train_cfg": {"type": "IterBasedTrainLoop"}}, "train_cfg.max_iters", "required"),
    # the length misspelt: said at the key written, with the one the loop needs (was 'max_epochs: required, None')
    ({"train_cfg": {"type": "EpochBasedTrainLoop", "max_epoch": 12}}, "train_cfg.max_epoch",
     "train_cfg.max_epoch: unknown key of MMEngine's epoch-based train loop (did you mean 'max_epochs'?)"),
    ({"train_cfg": {"by_epoch": False, "max_iter": 100}}, "train_cfg.max_iter",
     "train_cfg.max_iter: unknown key of MMEngine's iteration-based train loop (did you mean 'max_iters'?)"),
])
def test_refusals_are_located(change, path, fragment):
    error = _error({**BASE, **change})
    assert path in [e.path for e in error.errors], str(error)
    assert fragment in str(error)


@pytest.mark.parametrize("value, message", [
    (-1, "must be >= 0, got -1"), (float("inf"), "must be a finite number, got inf"),
    ("x", "expected a number, got str 'x'")])
def test_a_bad_multiplier_says_what_the_own_form_s_lr_mult_says(value, message):
    """A multiplier of paramwise_cfg or of a custom key says what the own form's lr_mult says of the same value (it
    said `must be a number >= 0`)."""
    own = _error({"optimizer": {"name": "SGD", "lr": 0.1, "param_groups": [{"params": "*.bias", "lr_mult": value}]}})
    assert [(e.path, e.message) for e in own.errors] == [("optimizer.param_groups[0].lr_mult", message)]
    paramwise = {"bias_lr_mult": value, "custom_keys": {"head": {"decay_mult": value}}}
    error = _error({"optim_wrapper": {**BASE["optim_wrapper"], "paramwise_cfg": paramwise}})
    assert [(e.path, e.message) for e in error.errors] == [
        ("optim_wrapper.paramwise_cfg.bias_lr_mult", message),
        ("optim_wrapper.paramwise_cfg.custom_keys.head.decay_mult", message)]


@pytest.mark.parametrize("text, said", [
    ("optim_wrapper: {type: AmpOptimWrapper, accumulative_counts: 0, optimizer: {type: SGD, lr: 0.1}}\n",
     "1:40: optim_wrapper.accumulative_counts: must be >= 1, got 0"),
    ("optim_wrapper: {optimizer: {type: SGD, lr: 0.1}, paramwise_cfg: {bypass_duplicate: 1}}\n",
     "1:66: optim_wrapper.paramwise_cfg.bypass_duplicate: expected true or false, got int 1"),
    ("optim_wrapper: {optimizer: {type: SGD, lr: 0.1}}\ntrain_cfg: {by_epoch: 'yes', max_iters: 10}\n",
     "2:13: train_cfg.by_epoch: expected true or false, got str 'yes'"),
    ("optim_wrapper: {optimizer: {type: SGD, lr: 0.1}}\ntrain_cfg: {by_epoch: false, max_iters: 0}\n",
     "2:30: train_cfg.max_iters: must be >= 1, got 0"),
    ("optim_wrapper: {optimizer: {type: SGD, lr: 0.1}}\ntrain_cfg: {max_epochs: 2.5}\n",
     "2:13: train_cfg.max_epochs: must be an integer, got 2.5"),
])
def test_a_bad_count_or_flag_says_what_the_own_form_says(text, said, tmp_path):
    """accumulative_counts, paramwise_cfg.bypass_duplicate, train_cfg.by_epoch and the loop's max_iters / max_epochs
    word a bad value as the own form's options do (models.number_message, bool_message; they said `must be an integer
    >= 1, got 0`, `must be true or false, got 1`, `required by MMEngine's iteration-based train loop: an integer >= 1,
    got 0`), at its position."""
    path = tmp_path / "mm.yaml"
    path.write_text(text)
    assert [str(e) for e in _error(str(path)).errors] == [f"{path}:{said}"]


def test_the_lr_paramwise_cfg_multiplies_is_checked_once(tmp_path):
    """paramwise_cfg needs the optimizer's lr: a missing one is the reader's error, a bad one the own form's alone,
    at its position (it was said twice, the second time as if missing)."""
    path = tmp_path / "bad.yaml"
    path.write_text("optim_wrapper:\n  optimizer: {type: SGD, lr: fast}\n  paramwise_cfg: {bias_lr_mult: 2.0}\n")
    assert [tuple(e) for e in _error(str(path)).errors] == [
        ("optim_wrapper.optimizer.lr", "expected a number, got str 'fast'", optreg.Location(str(path), 2, 26), None)]
    missing = _error({"optim_wrapper": {"optimizer": {"type": "SGD"}, "paramwise_cfg": {"bias_lr_mult": 2.0}}})
    assert [(e.path, e.message) for e in missing.errors] == [
        ("optim_wrapper.optimizer.lr", "MMEngine's per-parameter settings multiply the optimizer's lr: give it")]


def test_paramwise_cfg_multiplies_an_lr_written_as_a_string():
    """An lr and a weight decay written as strings ("1e-3", which PyYAML leaves a string) are the numbers the own form
    reads there, and paramwise_cfg multiplies those (the product of a string was a TypeError in validate --model,
    groups, convert and build)."""
    def lrs(lr, wd):
        built = optreg.build({"optim_wrapper": {"optimizer": {"type": "SGD", "lr": lr, "weight_decay": wd},
                                                "paramwise_cfg": {"bias_lr_mult": 2.0, "bias_decay_mult": 0.5}}},
                             standin())
        return [(g["lr"], g["weight_decay"], len(g["params"])) for g in built.optimizer.param_groups]

    assert lrs("1e-3", "0.1") == lrs(1e-3, 0.1)
    assert (pytest.approx(2e-3), pytest.approx(0.05)) in [(lr, wd) for lr, wd, _ in lrs("1e-3", "0.1")]


def test_epoch_based_entries_need_the_steps_per_epoch():
    config = {**BASE, "param_scheduler": [{"type": "MultiStepLR", "milestones": [2]}], "train_cfg": {"max_epochs": 3}}
    error = _error(config)
    assert [e.path for e in error.errors] == ["param_scheduler[0].by_epoch"]
    assert "steps per epoch" in str(error)
    built = optreg.build(config, standin(), steps_per_epoch=2)
    assert built.run.steps == 6   # train_cfg.max_epochs x steps_per_epoch


def test_an_open_iteration_based_entry_of_an_epoch_loop_needs_the_steps_per_epoch():
    """MMEngine's runner ends an iteration-based entry without `end` at max_iters, max_epochs ×
    len(train_dataloader) for an epoch-based loop: without the steps per epoch it ended at 10**9 (INF), so that
    PolyLR barely decayed, and validate, plot and build said nothing."""
    config = {**BASE, "param_scheduler": [{"type": "PolyLR", "eta_min": 0, "by_epoch": False}],
              "train_cfg": {"by_epoch": True, "max_epochs": 3}}
    error = _error(config)
    assert [e.path for e in error.errors] == ["param_scheduler[0]"]
    assert "steps per epoch" in str(error)
    built = optreg.build(config, standin(), steps_per_epoch=4)
    lrs = []
    for _ in range(12):
        lrs.append(built.optimizer.param_groups[0]["lr"])
        built.optimizer.step()
        built.scheduler.step()
    assert lrs[-1] == 0.0 and lrs[1] < lrs[0]   # PolyLR over max_iters = 12 steps (total_iters 11), as MMEngine


def test_errors_point_into_the_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("optim_wrapper:\n  optimizer: {type: SGD, lr: 0.1}\nparam_scheduler:\n"
                    "  - {type: LinearLR, start_factor: 3, by_epoch: false}\n")
    error = _error(str(path))
    assert str(error).startswith(f"{path}:4:")


def test_paramwise_needs_the_module():
    config = {"optim_wrapper": {"optimizer": {"type": "SGD", "lr": 0.1, "weight_decay": 0.1},
                                "paramwise_cfg": {"norm_decay_mult": 0}}}
    error = _error(config, list(standin().named_parameters()))
    assert error.errors[0].path == "optim_wrapper.paramwise_cfg"


def test_a_shared_parameter_needs_bypass_duplicate():
    model = standin()
    model.head.fc = torch.nn.Linear(4, 4)
    model.head.fc.weight = model.backbone.layers[0].ffn[0].weight   # tied
    config = {"optim_wrapper": {"optimizer": {"type": "SGD", "lr": 0.1}, "paramwise_cfg": {"bias_lr_mult": 2.0}}}
    error = _error(config, model)
    assert error.errors[0].path == "optim_wrapper.paramwise_cfg.bypass_duplicate"
    config["optim_wrapper"]["paramwise_cfg"]["bypass_duplicate"] = True
    built = optreg.build(config, model)
    assert sum(len(g["params"]) for g in built.optimizer.param_groups) == len(list(model.parameters()))


def test_python_config_goes_through_mmengines_loader(tmp_path):
    pytest.importorskip("mmengine.config", reason="mmengine's Config (mmengine-lite with its dependencies)")
    text = "optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.5 * 2, momentum=0.9))\n" \
           "param_scheduler = [dict(type='LinearLR', start_factor=0.5, by_epoch=False, end=3)]\n"
    path = tmp_path / "cfg.py"
    path.write_text(text)
    experiment = optreg.load_config(str(path))
    assert experiment.format == "mmengine" and experiment.optimizer["lr"] == 1.0


def test_a_python_config_that_inherits_its_schedule_from_base_files_is_read(tmp_path):
    """Most model configs of mmpretrain (mobilenet-v2_8xb32_in1k.py) are a `_base_` list alone: the optimizer and
    schedule come from the base files mmengine's loader merges; such a file was said to be no format's."""
    pytest.importorskip("mmengine.config", reason="mmengine's Config (mmengine-lite with its dependencies)")
    (tmp_path / "schedule.py").write_text("optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.045, momentum=0.9))\n"
                                          "param_scheduler = dict(type='StepLR', by_epoch=False, step_size=2, "
                                          "gamma=0.5)\ntrain_cfg = dict(by_epoch=False, max_iters=6)\n")
    (tmp_path / "model.py").write_text("model = dict(type='MobileNetV2')\n")
    path = tmp_path / "cfg.py"
    path.write_text("_base_ = ['./model.py', './schedule.py']\n")
    built = optreg.build(str(path), torch.nn.Linear(2, 2))
    assert built.experiment.format == "mmengine" and built.run.steps == 6
    assert stepped_lrs(built.optimizer, built.scheduler, 6) == pytest.approx([0.045, 0.045, 0.0225, 0.0225,
                                                                            0.01125, 0.01125], rel=1e-12)


def test_a_python_file_nested_beyond_the_parser_is_a_located_error(tmp_path):
    # MMEngine's look for its names raised RecursionError from ast.parse before any reader said what the file is
    path = tmp_path / "deep.py"
    path.write_text("optim = dict(lr=1" + "+1" * 3000 + ")\n")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)   # Python's default: a test run before (torch.compile's) may have raised it
    try:
        with pytest.raises(ConfigError) as info:
            optreg.load_config(str(path))
    finally:
        sys.setrecursionlimit(limit)
    assert [str(e) for e in info.value.errors] == [f"{path}: not a config optreg can parse: RecursionError"]


def test_python_config_without_mmengine(tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_mmengine(name, *args, **kw):
        if name.startswith("mmengine"):
            raise ImportError("No module named 'mmengine'")
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_mmengine)
    path = tmp_path / "cfg.py"
    path.write_text("optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1))\n")
    error = _error(str(path))
    assert "executes it" in str(error) and "mmengine-lite" in str(error)
    other = tmp_path / "other.py"
    other.write_text("model = dict(type='ResNet')\n")
    assert "none recognised this one" in str(_error(str(other)))


def test_resume_gives_the_same_values():
    """The chained windows are a function of the step: a scheduler rebuilt from the config and its state_dict
    continues exactly where the first one was."""
    path = FIXTURES / "configs" / "synthetic_adamw_momentum.yaml"
    first = optreg.build(str(path), standin(), steps_per_epoch=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(23):
            first.scheduler.step()
        state = first.scheduler.state_dict()
        second = optreg.build(str(path), standin(), steps_per_epoch=4)
        second.optimizer.load_state_dict(first.optimizer.state_dict())   # a checkpoint holds both
        second.scheduler.load_state_dict(state)
        for _ in range(11):
            first.scheduler.step()
            second.scheduler.step()
    for a, b in zip(first.optimizer.param_groups, second.optimizer.param_groups):
        assert (a["lr"], a["betas"]) == (b["lr"], b["betas"])


@pytest.mark.parametrize("example", ["mmengine/swin_adamw.yaml", "nemo/conformer_ctc.yaml"])
def test_the_cli_validates_and_runs_the_examples(example, capsys):
    from optreg.cli import main

    path = str(Path(__file__).parent.parent / "examples" / example)
    assert main(["validate", path]) == 0
    assert main(["run", path, "--steps", "3"]) == 0   # --steps replaces the file's run length
    assert "final loss" in capsys.readouterr().out


@pytest.mark.parametrize("key, meant", [("param_schedulr", "param_scheduler"), ("optim_wraper", "optim_wrapper"),
                                        ("train_cfgg", "train_cfg")])
def test_a_misspelt_section_is_located_with_a_did_you_mean(key, meant, tmp_path):
    """MMEngine would build without the misspelt section, silently; MMEngine's other keys stay the application's."""
    path = tmp_path / "cfg.yaml"
    path.write_text("optim_wrapper:\n  optimizer: {type: SGD, lr: 0.1}\nmodel: {type: ResNet}\nval_cfg: {}\n"
                    f"test_cfg: {{}}\nenv_cfg: {{}}\n{key}: {{max_epochs: 3}}\n")
    error = _error(str(path))
    assert [(e.path, e.suggestion) for e in error.errors] == [(key, meant)]
    assert str(error).startswith(f"{path}:7:1: {key}: not a section of MMEngine's config that optreg reads")
    path.write_text(path.read_text().replace(key, "default_scope"))
    assert optreg.load_config(str(path)).format == "mmengine"


def test_a_run_length_given_beside_the_file_replaces_train_cfgs(tmp_path, capsys, monkeypatch):
    """build(total_steps=), `convert --steps` and `run --steps` replace the run that train_cfg.max_epochs gives (it
    was a ConfigError at `train:`, a key the file lacks: 'total_steps=3 and train.epochs × steps_per_epoch = 300 ×
    1251 = 375300 disagree'), as --steps does for every format; the entries keep the train loop's windows (an end
    left out is train_cfg's, as MMEngine's runner gives it): the run stops earlier."""
    import yaml

    from optreg.cli import main

    path = Path(__file__).parent.parent / "examples" / "mmengine" / "swin_adamw.yaml"
    whole, short = optreg.build(str(path), standin()), optreg.build(str(path), standin(), total_steps=3)
    assert (whole.run.steps, whole.run.source) == (300 * 1251, "train_cfg.max_epochs")
    assert (short.run.steps, short.run.source) == (3, "total_steps=")
    monkeypatch.chdir(Path(__file__).parent)   # --model's module
    out = tmp_path / "native.yaml"
    assert main(["convert", str(path), "--steps", "3", "--model", "mmengine_standin:model", "-o", str(out)]) == 0
    converted = optreg.build(str(out), standin())
    assert converted.run.steps == 3 and yaml.safe_load(out.read_text())["train"] == {"steps": 3,
                                                                                     "steps_per_epoch": 1251}
    lrs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for built in (whole, short, converted):
            lrs.append([])
            for _ in range(3):
                lrs[-1].append([g["lr"] for g in built.optimizer.param_groups])
                built.scheduler.step()
    assert lrs[0] == lrs[1] == lrs[2]
    assert lrs[0][1][0] > lrs[0][0][0]   # the warmup of the first 20 epochs, converted to iterations
    assert main(["run", str(path), "--steps", "3"]) == 0
    assert "(after 3 steps)" in capsys.readouterr().out


@pytest.mark.parametrize("key, value", [("by_epoch", True), ("convert_to_iter_based", True),
                                        ("warmup", {"steps": 3})])
def test_the_own_form_takes_its_windows_from_its_entries(key, value):
    """optreg's mmengine.ParamSchedulers counts each entry's own window: a loop key on the whole list (which would
    wrap it and drop the momentum / weight-decay entries beside the lr) is refused at that key."""
    spec = {"name": "mmengine.ParamSchedulers", key: value, **({"by_epoch": True} if key.startswith("convert") else {}),
            "param_scheduler": [{"type": "LinearLR", "by_epoch": False, "end": 5},
                                {"type": "LinearMomentum", "by_epoch": False, "end": 5}]}
    error = _error({"optimizer": {"name": "SGD", "lr": 0.1, "momentum": 0.9}, "scheduler": spec,
                    "train": {"steps_per_epoch": 2}})
    assert [e.path for e in error.errors] == ["scheduler." + ("by_epoch" if key.startswith("convert") else key)]
    assert "counts its own windows" in str(error)


def test_validate_of_a_python_config_with_errors_lists_them(tmp_path, capsys):
    """A `.py` config read by mmengine's loader, with an error in the optimizer and one in the schedule: both are
    said, exit 1 (the CLI located them against a file position table the loader does not give: an internal
    error)."""
    from optreg.cli import main

    path = tmp_path / "bad.py"
    path.write_text("optim_wrapper = dict(optimizer=dict(type='AdamW', lrr=0.001))\n"
                    "param_scheduler = [dict(type='LinearLR', start_factr=0.1, by_epoch=False, begin=0, end=10)]\n"
                    "train_cfg = dict(by_epoch=False, max_iters=100)\n")
    assert main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert "internal error" not in err
    assert f"{path}: optim_wrapper.optimizer.lrr: unknown option of torch.AdamW (did you mean 'lr'?)" in err
    assert "param_scheduler[0].start_factr: unknown option of MMEngine's LinearLR (did you mean 'start_factor'?)" in err


def test_an_error_in_a_python_config_names_the_file_in_every_command(tmp_path, capsys):
    """mmengine's loader runs the file, so its keys have no positions; the file named its errors in validate only
    (build, plot, run and groups said the key alone)."""
    pytest.importorskip("mmengine.config", reason="mmengine's Config (mmengine-lite with its dependencies)")
    from optreg.cli import main

    path = tmp_path / "bad.py"
    path.write_text("optim_wrapper = dict(optimizer=dict(type='AdamW', lrr=0.001))\n")
    error = f"{path}: optim_wrapper.optimizer.lrr: unknown option of torch.AdamW (did you mean 'lr'?)"
    assert [str(e) for e in _error(str(path)).errors] == [str(e) for e in _error(str(path), standin()).errors] == [
        error]
    for command in (["plot", str(path), "--csv"], ["run", str(path)]):
        assert main(command) == 1 and capsys.readouterr().err.strip() == error


@pytest.mark.parametrize("overrides", [[], ["+train.steps_per_epoch=2"]])
def test_a_warning_of_a_python_config_names_the_file_in_every_command(overrides, tmp_path, capsys):
    """A note on a key of a .py config names the file, as its errors do, with Hydra overrides or without (plot and
    run said `warning: ...` alone: its keys have no positions, and only a key placed at a line was located)."""
    pytest.importorskip("mmengine.config", reason="mmengine's Config (mmengine-lite with its dependencies)")
    from optreg.cli import main

    path = tmp_path / "long.py"
    path.write_text("optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1))\n"
                    "param_scheduler = [dict(type='LinearLR', start_factor=0.1, by_epoch=False, end=200)]\n"
                    "train_cfg = dict(by_epoch=False, max_iters=100)\n")
    warning = (f"{path}: warning: param_scheduler[0].end: end 200 spans 200 steps, more than the 10 steps of the run "
               f"(train.steps or --steps): the schedule never finishes; set param_scheduler[0].end to 10")
    for command in ("plot", "run"):
        assert main([command, str(path), *overrides, "--steps", "10", *(["--csv"] if command == "plot" else [])]) == 0
        assert capsys.readouterr().err.splitlines() == [warning]


def test_a_misspelt_required_key_is_one_error_at_the_misspelling(tmp_path):
    """`step_sizee` of a StepLR entry is one error, the misspelling's with its did-you-mean, at its position: the
    missing step_size it explains is not said too; a StepLR without it and without a misspelling says it missing."""
    path = tmp_path / "bad.yaml"
    path.write_text("optim_wrapper:\n  optimizer: {type: SGD, lr: 0.1}\nparam_scheduler:\n"
                    "  - {type: StepLR, step_sizee: 3, by_epoch: false}\n  - {type: StepLR, by_epoch: false}\n"
                    "train_cfg: {by_epoch: false, max_iters: 100}\n")
    assert [tuple(e) for e in _error(str(path)).errors] == [
        ("param_scheduler[0].step_sizee", "unknown option of MMEngine's StepLR", optreg.Location(str(path), 4, 20),
         "step_size"),
        ("param_scheduler[1].step_size", "required option is missing (StepLR)", optreg.Location(str(path), 5, 5),
         None)]


@pytest.mark.parametrize("by_epoch, loop, length", [(True, "max_epochs: 1", "1 epoch"),
                                                    (False, "max_iters: 1", "1 step"),
                                                    (True, "max_epochs: 2", "2 epochs")])
def test_an_entry_the_train_loop_ends_before_its_begin_says_the_length_in_its_unit(by_epoch, loop, length, tmp_path):
    """An entry without `end` that begins at or after the train loop's end: its length said in the entry's unit,
    agreeing with the number (it said `1 epochs`, `1 steps`)."""
    path = tmp_path / "cfg.yaml"
    path.write_text("optim_wrapper:\n  optimizer: {type: SGD, lr: 0.1}\nparam_scheduler:\n"
                    f"  - {{type: ConstantLR, factor: 0.5, by_epoch: {str(by_epoch).lower()}, begin: 2}}\n"
                    f"train_cfg: {{by_epoch: {str(by_epoch).lower()}, {loop}}}\ntrain: {{steps_per_epoch: 10}}\n")
    assert [(e.path, e.message) for e in _error(str(path)).errors] == [
        ("param_scheduler[0].end", f"the train loop's length ({length}) ends the entry before its begin (2); give end")]


def test_a_window_that_ends_past_the_run_is_a_warning_at_its_end(tmp_path, capsys):
    """An entry's `end` past train_cfg's length (in iterations, or in epochs for an epoch-based entry, converted
    or not) never finishes: the same warning as a torch T_max longer than the run, at the `end` key, in validate,
    build and run alike. An `end` left out is none (MMEngine's runner gives it the train loop's length), nor is a
    window that ends early (the warmup's)."""
    from optreg.cli import main

    path = tmp_path / "cfg.yaml"
    path.write_text("optim_wrapper:\n  optimizer: {type: SGD, lr: 0.1}\nparam_scheduler:\n"
                    "  - {type: LinearLR, start_factor: 0.1, by_epoch: true, end: 2, convert_to_iter_based: true}\n"
                    "  - {type: CosineAnnealingLR, by_epoch: false, begin: 20, end: 200}\n"
                    "  - {type: MultiStepLR, milestones: [8], by_epoch: true, begin: 2, end: 15}\n"
                    "  - {type: ConstantLR, factor: 0.5, by_epoch: false, begin: 100}\n"
                    "train_cfg: {by_epoch: true, max_epochs: 12}\ntrain: {steps_per_epoch: 10}\n")
    said = [(5, 59, "param_scheduler[1].end: end 200 spans 200 steps, more than the 120 steps of the run "
                    "(train_cfg.max_epochs): the schedule never finishes; set param_scheduler[1].end to 120"),
            (6, 68, "param_scheduler[2].end: end 15 epochs spans 150 steps, more than the 120 steps of the run "
                    "(train_cfg.max_epochs): the schedule never finishes; set param_scheduler[2].end to 12 epochs")]
    lines = [f"{path}:{line}:{col}: warning: {note}" for line, col, note in said]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = optreg.build(str(path), standin())
    assert built.notes == [note for _, _, note in said]
    assert [str(w.message) for w in caught if isinstance(w.message, optreg.ConfigWarning)] == \
        [f"{path}:{line}:{col}: {note}" for line, col, note in said]
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().err.splitlines() == lines
    assert main(["run", str(path), "--steps", "120"]) == 0
    assert [line for line in capsys.readouterr().err.splitlines() if "warning" in line] == \
        [line.replace("(train_cfg.max_epochs)", "(train.steps or --steps)") for line in lines]
    path.write_text(path.read_text().replace(", end: 200", "").replace(", end: 15", ""))
    assert main(["validate", str(path)]) == 0 and capsys.readouterr().err == ""

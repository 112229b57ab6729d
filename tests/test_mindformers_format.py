"""The MindFormers format: a run config translated into optreg's own form, MindFormers' run length, groups and
schedules (formulas from mindformers/core/lr/lr_schedule.py), and its refusals at the file's positions."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import optreg
from optreg.config.experiment import load_config
from optreg.errors import ConfigError
from tests.format_replay import stepped_lrs

BASE = """\
runner_config:
  epochs: 2
  batch_size: 4
  sink_mode: True
  sink_size: 2
optimizer:
  type: {opt}
  beta1: 0.9
  beta2: 0.95
  eps: 1.e-8
  weight_decay: 0.1
  learning_rate: 1.e-5
lr_schedule:
  type: {lr}
  learning_rate: 2.e-5
  lr_end: 1.e-6
  warmup_ratio: 0.1
  total_steps: -1
runner_wrapper:
  type: MFTrainOneStepCell
  use_clip_grad: True
train:
  steps_per_epoch: 25
"""


class Net(torch.nn.Module):
    def __init__(self, norm_first: bool = False):
        super().__init__()
        if norm_first:
            self.norm0 = torch.nn.LayerNorm(4)
        self.embed = torch.nn.Embedding(10, 4)
        self.proj = torch.nn.Linear(4, 4)
        self.norm = torch.nn.LayerNorm(4)


def test_translates_to_optreg_form_with_the_run_length():
    e = load_config(BASE.format(opt="FP32StateAdamWeightDecay", lr="CosineWithWarmUpLR"))
    assert e.format == "mindformers" and e.dialect == "mindspore"
    assert e.optimizer == {"name": "AdamWeightDecay", "dialect": "mindspore", "beta1": 0.9, "beta2": 0.95,
                           "eps": 1e-8, "weight_decay": 0.1, "state_dtype": "float32"}
    # sink mode: int(25 / 2 * 2) * 2 = 50 steps (MindFormers' check_runner_config, then epochs × sink_size)
    assert e.scheduler["total_steps"] == 50 and e.run.steps == 50
    assert e.clip.max_norm == 1.0
    verdicts = {k.path: k.verdict for k in e.report}
    assert verdicts["optimizer.type"] == "exact" and verdicts["runner_config.batch_size"] == "trainer"


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("opt, state", [("FP32StateAdamWeightDecay", torch.float32), ("fp32_adamw", torch.float32),
                                        ("FusedAdamWeightDecay", torch.float32), ("AdamWeightDecay", None),
                                        ("adamw", None)])
def test_fp32_state_types_keep_float32_moments_on_half_parameters(opt, state, dtype):
    """MindFormers 1.3's FP32StateAdamWeightDecay (alias fp32_adamw) and FusedAdamWeightDecay clone their moments as
    float32 whatever the parameter dtype (`state_dtype: float32`); mindspore.nn.AdamWeightDecay (alias adamw) clones
    them in the parameter's dtype. The parameters keep their dtype."""
    model = Net().to(dtype)
    b = optreg.build(BASE.format(opt=opt, lr="CosineWithWarmUpLR"), model)
    assert {g["state_dtype"] for g in b.optimizer.param_groups} == {"float32" if state else None}
    for p in model.parameters():
        p.grad = torch.ones_like(p)
    b.optimizer.step()
    for p in model.parameters():
        assert p.dtype == dtype
        assert {b.optimizer.state[p][k].dtype for k in ("exp_avg", "exp_avg_sq")} == {state or dtype}


def test_cosine_with_warmup_values_follow_mindformers_formula():
    b = optreg.build(BASE.format(opt="AdamWeightDecay", lr="CosineWithWarmUpLR"), Net())
    lrs = []
    for _ in range(50):
        lrs.append(b.optimizer.param_groups[0]["lr"])
        b.optimizer.step()
        b.scheduler.step()
    w, total, f = int(50 * 0.1), 50, np.float32   # the decay in float32 tensors, as MindFormers' construct()
    for t, lr in enumerate(lrs):
        angle = f(math.pi * 0.5 * 2.0) * (f(t - w) / f(total - w))
        percent = max(f(0), f(0.5) * (f(1) + f(math.cos(float(angle)))))
        want = 2e-5 * t / w if t < w else float(f(1e-6) + (f(2e-5) - f(1e-6)) * percent)
        assert lr == pytest.approx(want, rel=1e-12, abs=1e-18)


OWN_FORM = """\
optimizer: {{name: mindspore.AdamWeightDecay, learning_rate: 1.e-3}}
scheduler: {{name: mindspore.{name}, learning_rate: 1.e-3, warmup_{warmup}{more}}}
train: {{steps: 20}}
"""
LR, W, T = 1e-3, 4, 20   # W: warmup_steps 4 (ConstantWarmUpLR: warmup_ratio 0.2 of the run's 20 steps)
#: the documented formula after the warmup with total_steps T (lr_end, num_cycles: the schedules' defaults)
AFTER_WARMUP = {
    "CosineWithWarmUpLR": ("", lambda t: LR * max(0.0, 0.5 * (1 + math.cos(2 * math.pi * 0.5 * (t - W) / (T - W))))),
    "CosineWithRestartsAndWarmUpLR": ("", lambda t: LR * 0.5 * (1 + math.cos(math.pi * (((t - W) / (T - W)) % 1)))),
    "PolynomialWithWarmUpLR": ("", lambda t: (LR - 1e-7) * (1 - (t - W) / (T - W)) + 1e-7),
    "WarmUpStableDecayLR": (", decay_start_steps: 12",
                            lambda t: LR if t < 12 else LR - (LR - 1e-7) * (t - 12) / (T - 12)),
    "ConstantWithCoolDownLR": ("", lambda t: LR * max(0.0, 0.5 * (1 + math.cos(2 * math.pi * 0.5 * (t - W) / T)))),
    "ConstantWarmUpLR": ("", lambda t: LR),
}


@pytest.mark.parametrize("total", ["", ", total_steps: null"])
@pytest.mark.parametrize("name", sorted(AFTER_WARMUP))
def test_own_form_warmup_schedules_take_total_steps_from_the_run(name, total):
    """mindspore.CosineWithWarmUpLR and the rest of the warmup family in optreg's own form, total_steps left out or
    null: the run's train.steps, as for a schedule that declares its length (they were refused, `required:
    total_steps`); the lr follows the documented formula over T = 20."""
    more, after = AFTER_WARMUP[name]
    warmup = "ratio: 0.2" if name == "ConstantWarmUpLR" else "steps: 4"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optreg.ConfigWarning)   # the schedule sets the lr the optimizer gives
        built = optreg.build(OWN_FORM.format(name=name, warmup=warmup, more=more + total), Net())
    (schedule,) = built.scheduler.schedules
    assert schedule.total_steps == T and schedule.warmup == W
    want = [LR * t / W if t < W else after(t) for t in range(T)]
    # MindFormers' decays in float32 (schedules.py): within a float32 step of lr
    assert [schedule(t) for t in range(T)] == pytest.approx(want, rel=1e-6, abs=LR * 2.0 ** -23)


@pytest.mark.parametrize("name", ["CosineWithWarmUpLR", "LinearWithWarmUpLR"])
def test_own_form_warmup_schedule_without_a_run_still_needs_total_steps_and_keeps_a_longer_warmup(name):
    """Without a run length total_steps is required, at its path and the section's position; a warmup longer than
    the run (as total_steps) passes, as MindFormers lets it: the lr rises for the whole run (LinearWithWarmUpLR
    too, whose row declared its length and so refused it)."""
    text = OWN_FORM.format(name=name, warmup="steps: 30", more="")
    with pytest.raises(ConfigError) as exc:
        optreg.build(text.replace("train: {steps: 20}\n", ""), Net())
    assert [str(e) for e in exc.value.errors] == [
        "<string>:2:1: scheduler.total_steps: required option is missing: left out or null, the schedule's length "
        "comes from the run's length (train.steps, train.epochs × steps_per_epoch, or build(total_steps=)), and the "
        "run has none"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optreg.ConfigWarning)
        built = optreg.build(text, Net())
    (schedule,) = built.scheduler.schedules
    assert schedule.total_steps == T
    assert [schedule(t) for t in range(T)] == pytest.approx([LR * t / 30 for t in range(T)], rel=1e-12)


def _decayed(optimizer, model):
    names = {id(p): n for n, p in model.named_parameters()}
    return {names[id(p)] for g in optimizer.param_groups if g["weight_decay"] > 0 for p in g["params"]}


def test_groups_exempt_1d_and_bias_and_keep_the_weight_decay_leak():
    net = Net()
    b = optreg.build(BASE.format(opt="AdamW", lr="CosineWithWarmUpLR"), net)
    decay = _decayed(b.optimizer, net)
    assert decay == {"embed.weight", "proj.weight"}
    # a 1-D parameter before the first decayed one: MindFormers' loop has set weight_decay to 0 already
    b = optreg.build(BASE.format(opt="AdamW", lr="CosineWithWarmUpLR"), Net(norm_first=True))
    assert all(g["weight_decay"] == 0.0 for g in b.optimizer.param_groups)


def test_adamw_is_torch_adamw_and_use_fused_the_fused_kernel():
    e = load_config(BASE.format(opt="AdamW", lr="cosine"))
    assert (e.optimizer["dialect"], e.optimizer["name"], e.scheduler["name"]) == \
        ("mindspore_mint", "AdamW", "CosineWithWarmUpLR")
    e = load_config(BASE.format(opt="AdamW", lr="cosine").replace("  beta1: 0.9\n", "  use_fused: True\n"))
    assert e.optimizer["name"] == "FusedAdamW"


@pytest.mark.parametrize("opt, lr, path, line, words", [
    ("Came", "CosineWithWarmUpLR", "optimizer.type", 7, "CAME"),
    ("AdamWeightDecay", "CosineWithWarmupLR", "lr_schedule.type", 14, "did you mean 'CosineWithWarmUpLR'"),
    ("Adamw", "CosineWithWarmUpLR", "optimizer.type", 7, "did you mean"),
])
def test_unsupported_and_unknown_types_are_located_errors(opt, lr, path, line, words):
    with pytest.raises(ConfigError) as exc:
        load_config(BASE.format(opt=opt, lr=lr))
    (item,) = exc.value.errors
    assert item.path == path and item.location.line == line and words in str(exc.value)


def test_total_steps_minus_one_needs_the_dataset_size():
    with pytest.raises(ConfigError) as exc:
        load_config(BASE.format(opt="AdamWeightDecay", lr="CosineWithWarmUpLR").replace("  steps_per_epoch: 25\n",
                                                                                          "  seed: 1\n"))
    assert exc.value.errors[0].path == "lr_schedule.total_steps" and "steps_per_epoch" in str(exc.value)


def _lrs(built, steps):
    return stepped_lrs(built.optimizer, built.scheduler, steps)


def test_total_steps_minus_one_is_the_run_length_build_is_given(tmp_path, capsys):
    """`build(file, model, total_steps=N)` reads total_steps -1 as N, as `optreg plot --steps N` does (it was refused:
    the reader settled the length before build's run length reached it); with the dataset's size too, N wins over
    the file's own epochs × size (2 × 25 = 50), as --steps does, and no note says the schedule outlasts the run."""
    from optreg.cli import main

    text = BASE.format(opt="AdamWeightDecay", lr="CosineWithWarmUpLR")
    path = tmp_path / "run.yaml"
    path.write_text(text.replace("  steps_per_epoch: 25\n", "  seed: 1\n"))
    assert main(["plot", str(path), "--steps", "30", "--csv"]) == 0
    rows = [line.split(",") for line in capsys.readouterr().out.splitlines()[1:]]
    want = [float(v) for _, group, key, v in rows if group == "0" and key == "lr"]
    assert len(want) == 30 and want[3] == pytest.approx(2e-5)   # the warmup: 0.1 × 30 = 3 steps
    built = optreg.build(str(path), Net(), total_steps=30)
    assert built.run.steps == 30 and _lrs(built, 30) == want
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        built = optreg.build(text, Net(), total_steps=30)
    assert built.run.steps == 30 and _lrs(built, 30) == want
    for bad in (0, "x"):
        with pytest.raises(ConfigError) as exc:
            optreg.build(str(path), Net(), total_steps=bad)
        assert [(e.path, e.message) for e in exc.value.errors] == [
            ("total_steps", "must be >= 1, got 0" if bad == 0 else "expected an integer, got str 'x'")]
    with warnings.catch_warnings():   # "30" is 30, as train.steps reads it
        warnings.simplefilter("ignore", optreg.ConfigWarning)
        assert optreg.build(str(path), Net(), total_steps="30").run.steps == 30


def test_build_steps_per_epoch_is_the_dataset_size():
    """`build(file, model, steps_per_epoch=D)` is the dataset's size as `train.steps_per_epoch: D` in the file is:
    total_steps -1 is the sink-mode run int(25 / 2 × 2) × 2 = 50 and warmup_epochs 1 is 25 steps (it was refused,
    asking for train.steps_per_epoch, because the reader read the size from the file alone)."""
    for text in (BASE, BASE.replace("  warmup_ratio: 0.1\n", "  warmup_epochs: 1\n")):
        text = text.format(opt="AdamWeightDecay", lr="CosineWithWarmUpLR")
        want = optreg.build(text, Net())
        built = optreg.build(text.replace("  steps_per_epoch: 25\n", "  seed: 1\n"), Net(), steps_per_epoch=25)
        assert built.run.steps == want.run.steps == 50 and built.run.steps_per_epoch == 25
        assert built.experiment.scheduler == want.experiment.scheduler
        assert _lrs(built, 50) == _lrs(want, 50)
    with pytest.raises(ConfigError) as exc:
        optreg.build(BASE.format(opt="AdamWeightDecay", lr="CosineWithWarmUpLR"), Net(), steps_per_epoch=24)
    assert [(e.path, e.message) for e in exc.value.errors] == [
        ("train.steps_per_epoch", "build(steps_per_epoch=24) and train.steps_per_epoch 25 disagree; give one")]


def test_option_errors_carry_the_mindformers_paths():
    with pytest.raises(ConfigError) as exc:
        load_config(BASE.format(opt="AdamWeightDecay", lr="CosineWithWarmUpLR").replace("warmup_ratio: 0.1",
                                                                                          "warmup_ratio: 1.5"))
    assert [e.path for e in exc.value.errors] == ["lr_schedule.warmup_ratio"]
    assert exc.value.errors[0].location.line == 17


def test_keys_mindformers_ignores_are_dropped_and_its_near_misses_refused():
    config = {"optimizer": {"type": "AdamW"}, "runner_config": {},
              "lr_schedule": {"type": "CosineAnnealingLR", "base_lr": 1e-3, "t_max": 50, "total_steps": -1}}
    e = optreg.config.experiment.validate_experiment(config)
    assert e.scheduler == {"name": "CosineAnnealingLR", "base_lr": 1e-3, "t_max": 50}
    assert "ignored" in next(k.why for k in e.report if k.path == "lr_schedule.total_steps")
    config["lr_schedule"]["eta_mn"] = 0.0
    with pytest.raises(ConfigError) as exc:
        optreg.config.experiment.validate_experiment(config)
    assert [(e.path, e.suggestion) for e in exc.value.errors] == [("lr_schedule.eta_mn", "eta_min")]


def test_a_near_miss_of_a_runner_wrapper_key_optreg_reads_is_refused():
    """MFTrainOneStepCell takes **kwargs: `max_grad_nrom: 0.5` would leave MindFormers clipping at its default 1.0,
    as optreg did, reporting the key as the train step cell's; its other keys (scale_sense) are still the cell's."""
    text = BASE.format(opt="AdamW", lr="CosineWithWarmUpLR").replace(
        "use_clip_grad: True", "use_clip_grad: True\n  scale_sense: 1.0\n  max_grad_nrom: 0.5")
    with pytest.raises(ConfigError) as exc:
        load_config(text)
    assert [str(e) for e in exc.value.errors] == [
        "<string>:23:3: runner_wrapper.max_grad_nrom: not an option of MindFormers' train step cell, which would "
        "ignore it (did you mean 'max_grad_norm'?)"]
    uses = {u.path: u.verdict for u in load_config(text.replace("max_grad_nrom", "max_grad_norm")).report}
    assert (uses["runner_wrapper.scale_sense"], uses["runner_wrapper.max_grad_norm"]) == ("trainer", "exact")


def test_lr_scale_multiplies_by_devices_and_batch_over_the_factor():
    text = BASE.format(opt="AdamWeightDecay", lr="CosineWithWarmUpLR") + \
        "lr_scale: True\nlr_scale_factor: 256\nparallel_config: {data_parallel: 2, model_parallel: 4}\n"
    e = load_config(text)
    # BaseTrainer.learning_rate_scale: lr × devices × per-device batch size / lr_scale_factor = 2e-5 × 2·4 × 4 / 256
    assert e.scheduler["learning_rate"] == pytest.approx(2e-5 * 8 * 4 / 256)
    assert next(k for k in e.report if k.path == "lr_scale").verdict == "approximate"


def test_the_plan_s_notes_are_at_the_mindformers_paths():
    text = BASE.format(opt="AdamWeightDecay", lr="CosineWithWarmUpLR").replace("total_steps: -1", "total_steps: 500")
    with pytest.warns(UserWarning) as caught:
        built = optreg.build(text, Net())
    assert built.notes and [w.message.note for w in caught] == built.notes
    assert all(w.message.location.line for w in caught)   # the text's lines of lr_schedule's keys
    assert all(note.startswith("lr_schedule.") and "50 steps of the run" in note for note in built.notes)


@pytest.mark.parametrize("arch, schedule, refused", [
    ("ViTForImageClassification", True, True), ("SwinForImageClassification", True, True),
    ("LlamaForCausalLM", True, False),          # MindFormers 1.3 warns and resets it: no effect in any version
    ("ViTForImageClassification", False, False),   # no lr_schedule: 1.3 resets it too
])
def test_layer_scale_is_refused_where_mindformers_1_3_builds_a_layer_wise_lr(arch, schedule, refused):
    text = BASE.format(opt="AdamWeightDecay", lr="CosineWithWarmUpLR") + \
        f"layer_scale: True\nlayer_decay: 0.65\nmodel:\n  arch:\n    type: {arch}\n"
    if not schedule:
        text = text.replace("lr_schedule:\n  type: CosineWithWarmUpLR\n  learning_rate: 2.e-5\n  lr_end: 1.e-6\n"
                            "  warmup_ratio: 0.1\n  total_steps: -1\n", "")
    if not refused:
        report = {k.path: k.verdict for k in load_config(text).report}
        assert report["layer_scale"] == report["layer_decay"] == "exact"
        return
    with pytest.raises(ConfigError) as exc:
        load_config(text)
    (item,) = exc.value.errors
    assert item.path == "layer_scale" and item.location.line == text.splitlines().index("layer_scale: True") + 1
    assert "layer_decay^(L + 1 - layer id)" in item.message and "set layer_scale: false" in item.message


@pytest.mark.parametrize("edits, want", [
    # the schedule's near miss (the reader's) and the optimizer's eps (optreg's own form's)
    ({"lr_end:": "lr_ed:", "eps: 1.e-8": "eps: -1.e-8"},
     [("lr_schedule.lr_ed", 16, "not an option of MindFormers' CosineWithWarmUpLR, which would ignore it"),
      ("optimizer.eps", 10, "must be > 0, got -1e-08")]),
    # the optimizer's unknown type (the reader's) and the schedule's warmup_ratio (the own form's)
    ({"type: AdamWeightDecay": "type: AdamWeightDecy", "warmup_ratio: 0.1": "warmup_ratio: 1.5"},
     [("optimizer.type", 7, "unknown MindFormers optimizer type 'AdamWeightDecy'"),
      ("lr_schedule.warmup_ratio", 17, "must be <= 1, got 1.5")]),
    # runner_config's epochs leaves the run unknown: total_steps -1 is not said to need it
    ({"epochs: 2": "epochs: 0", "eps: 1.e-8": "eps: -1.e-8"},
     [("runner_config.epochs", 2, "must be >= 1, got 0"),
      ("optimizer.eps", 10, "must be > 0, got -1e-08")]),
    # runner_config's misspelt epochs, which MindFormers passes over (its default, 1 epoch, was run silently)
    ({"epochs: 2": "epoch: 2", "eps: 1.e-8": "eps: -1.e-8"},
     [("runner_config.epoch", 2, "not a key MindFormers' runner reads: it would run with epochs 1"),
      ("optimizer.eps", 10, "must be > 0, got -1e-08")]),
    # train:'s misspelt steps_per_epoch: neither total_steps -1 nor warmup_epochs is said to need the dataset's size
    ({"steps_per_epoch:": "steps_per_epch:", "warmup_ratio: 0.1": "warmup_epochs: 1", "eps: 1.e-8": "eps: -1.e-8"},
     [("train.steps_per_epch", 23, "unknown key"), ("optimizer.eps", 10, "must be > 0, got -1e-08")]),
])
def test_an_error_in_one_section_does_not_hide_or_change_another_s(edits, want):
    """Every problem at once: an error the reader finds in one section and one in another, each at its path and
    line (the own form's were not read after the reader's error; a run section in error added that total_steps -1
    needs the dataset's size)."""
    text = BASE.format(opt="AdamWeightDecay", lr="CosineWithWarmUpLR")
    for old, new in edits.items():
        text = text.replace(old, new)
    with pytest.raises(ConfigError) as exc:
        load_config(text)
    assert [(e.path, e.location.line, e.message.split(";")[0]) for e in exc.value.errors] == want


@pytest.mark.parametrize("old, new, where", [
    ("epochs: 2", "epochs: 0", "2:3: runner_config.epochs: must be >= 1, got 0"),
    ("epochs: 2", "epochs: 2.5", "2:3: runner_config.epochs: must be an integer, got 2.5"),
    ("sink_size: 2", "sink_size: 0", "5:3: runner_config.sink_size: must be >= 1, got 0 (or -1: the dataset's size)"),
    ("sink_size: 2", "sink_size: x",
     "5:3: runner_config.sink_size: expected an integer, got str 'x' (or -1: the dataset's size)"),
    ("use_clip_grad: True", "use_clip_grad: True\n  max_grad_norm: 0",
     "22:3: runner_wrapper.max_grad_norm: must be > 0, got 0"),
    ("use_clip_grad: True", "use_clip_grad: True\n  max_grad_norm: -1.5",
     "22:3: runner_wrapper.max_grad_norm: must be > 0, got -1.5"),
    ("use_clip_grad: True", "use_clip_grad: True\n  max_grad_norm: 1.0e+10",   # it raised pydantic's ValidationError
     "22:3: runner_wrapper.max_grad_norm: must be <= 1000000000, got 10000000000.0"),
    ("warmup_ratio: 0.1", "warmup_epochs: -1", "17:3: lr_schedule.warmup_epochs: must be >= 0, got -1"),
    ("warmup_ratio: 0.1", "warmup_epochs: 0.5", "17:3: lr_schedule.warmup_epochs: must be an integer, got 0.5"),
    ("train:", "lr_scale: True\nlr_scale_factor: 0\ntrain:", "23:1: lr_scale_factor: must be > 0, got 0"),
])
def test_a_bad_run_or_clipping_number_says_what_the_own_form_says(old, new, where):
    """runner_config's run length, lr_schedule.warmup_epochs, lr_scale_factor and runner_wrapper.max_grad_norm word
    a bad number as the own form's options do (models.number_message: it said `must be an integer >= 1, got 0`,
    `must be a number > 0, got 0`), at the key's position."""
    with pytest.raises(ConfigError) as exc:
        load_config(BASE.format(opt="AdamWeightDecay", lr="CosineWithWarmUpLR").replace(old, new))
    assert [str(e) for e in exc.value.errors] == [f"<string>:{where}"]


def test_every_bad_runner_config_key_is_reported():
    """The first bad key of runner_config hid the others (epochs 0 beside sink_size 0 said epochs alone)."""
    text = BASE.format(opt="AdamWeightDecay", lr="CosineWithWarmUpLR").replace("epochs: 2", "epochs: 0")
    with pytest.raises(ConfigError) as exc:
        load_config(text.replace("sink_mode: True", "sink_mode: 'x'").replace("sink_size: 2", "sink_size: 0"))
    assert [str(e) for e in exc.value.errors] == [
        "<string>:2:3: runner_config.epochs: must be >= 1, got 0",
        "<string>:4:3: runner_config.sink_mode: expected true or false, got str 'x'",
        "<string>:5:3: runner_config.sink_size: must be >= 1, got 0 (or -1: the dataset's size)"]


@pytest.mark.parametrize("opt, old, new, where", [
    ("AdamWeightDecay", "sink_mode: True", "sink_mode: 'x'",
     "4:3: runner_config.sink_mode: expected true or false, got str 'x'"),
    ("AdamWeightDecay", "train:", "lr_scale: 'yes'\ntrain:", "22:1: lr_scale: expected true or false, got str 'yes'"),
    ("AdamWeightDecay", "use_clip_grad: True", "use_clip_grad: 1",
     "21:3: runner_wrapper.use_clip_grad: expected true or false, got int 1"),
    ("AdamW", "weight_decay: 0.1", "weight_decay: 0.1\n  use_fused: 'no'",
     "12:3: optimizer.use_fused: expected true or false, got str 'no'"),
])
def test_a_bad_flag_says_what_the_own_forms_boolean_says(opt, old, new, where):
    """sink_mode, lr_scale, runner_wrapper.use_clip_grad and AdamW's use_fused word a value that is no boolean as
    the own form's options do (models.bool_message; they said `must be true or false, got 'x'`), at the key."""
    with pytest.raises(ConfigError) as exc:
        load_config(BASE.format(opt=opt, lr="CosineWithWarmUpLR").replace(old, new))
    assert [str(e) for e in exc.value.errors] == [f"<string>:{where}"]


def test_validate_lints_the_schedule_over_the_run_the_file_gives_as_plot_and_build_do(tmp_path, capsys):
    """The run MindFormers' own keys give (total_steps -1 aside: the dataset's size, the epochs, sink mode) is known
    once the file is read: validate warns of a schedule that ends early as plot and build do, at the key."""
    from pathlib import Path

    from optreg.cli import main

    example = Path(__file__).resolve().parent.parent / "examples" / "mindformers" / "finetune.yaml"
    path = tmp_path / "finetune.yaml"
    path.write_text(example.read_text().replace("total_steps: -1 ", "total_steps: 100"))
    note = (f"{path}:17:3: warning: lr_schedule.total_steps: total_steps 100 spans 100 steps, under 0.9 × the 1000 "
            f"steps of the run (int(train.steps_per_epoch / runner_config.sink_size × runner_config.epochs) × "
            f"runner_config.sink_size): the schedule ends early; set lr_schedule.total_steps to 1000")
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().err.strip() == note
    assert main(["plot", str(path), "--csv"]) == 0
    assert capsys.readouterr().err.strip() == note
    with pytest.warns(optreg.ConfigWarning) as caught:
        optreg.build(str(path), torch.nn.Linear(2, 2))
    assert [str(w.message) for w in caught if "total_steps 100" in str(w.message)] == [note.replace(": warning", "")]

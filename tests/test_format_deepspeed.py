"""The deepspeed config format: what DeepSpeed 0.19 builds from ds_config files (tests/fixtures/deepspeed, recorded
by scripts/record_deepspeed.py from real DeepSpeedExamples configs and one config per schedule), its refusals and
its detection."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

import optreg
from optreg.errors import ConfigError
from tests.format_replay import (FIXTURES, W_ATOL, cases, detected, errors_of, read_and_built, replay, sources,
                                  stepped_lrs, unrecorded)

CASES = cases("deepspeed")
CORPUS = FIXTURES / "deepspeed" / "corpus"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_builds_what_deepspeed_builds(case):
    replay("deepspeed", case)


def test_every_corpus_file_is_recorded_or_refused():
    for file in unrecorded("deepspeed"):
        with pytest.raises(ConfigError) as info:
            optreg.load_config(CORPUS / file)
        assert str(CORPUS / file) in str(info.value), "the refusal names the file's position"
    assert len(sources("deepspeed")) - len(unrecorded("deepspeed")) >= 12 and len(sources("deepspeed")) >= 15


@pytest.mark.parametrize("file, path, words", [
    ("training__bing_bert__1-bit_lamb__nccl__deepspeed_bsz64k_onebitlamb_config_seq128_nccl.json", "optimizer.type",
     "1-bit LAMB compresses"),
    ("training__BingBertSquad__1-bit_adam__nccl__deepspeed_onebitadam_bsz96_config.json", "optimizer.type",
     "1-bit Adam compresses"),
    ("training__bing_bert__01_adam__nccl__deepspeed_bsz4k_01adam_config_seq128_nccl.json", "optimizer.type",
     "0/1 Adam"),
    ("training__bing_bert__deepspeed_bsz64k_lamb_config_seq128.json", "optimizer.type", "FusedLamb"),
    ("training__tensor_parallel__hf_integration__configs__ds_config.json", "optimizer.params.lr",
     "\"auto\" is filled by the Hugging Face Trainer"),
])
def test_refusals_say_why_where(file, path, words):
    with pytest.raises(ConfigError) as info:
        optreg.load_config(CORPUS / file)
    items = {e.path: e for e in info.value.errors}
    assert path in items and words in items[path].message and items[path].location.line > 1


def test_auto_length_is_the_run_length():
    config = {"optimizer": {"type": "AdamW", "params": {"lr": 0.001}},
              "scheduler": {"type": "WarmupDecayLR", "params": {"warmup_num_steps": 5, "total_num_steps": "auto"}}}
    with pytest.raises(ConfigError) as info:
        optreg.build(config, STAND_IN_MODEL())
    assert [e.path for e in info.value.errors] == ["scheduler.params.total_num_steps"]
    built = optreg.build(config, STAND_IN_MODEL(), total_steps=40)
    assert built.scheduler.schedules[0].total_num_steps == 40


def test_train_beside_the_ds_config_is_the_run(tmp_path, capsys):
    """optreg's `train:` beside a ds_config (in the file, or `train.steps=N` on the command line) is the run, as beside
    every other format: it fills "auto" and sets the length of `optreg run` (it was passed over as one of DeepSpeed's
    engine sections: `optreg run ds_config.json train.steps=10` trained the default 100 steps)."""
    from optreg.cli import main

    config = {"optimizer": {"type": "AdamW", "params": {"lr": 0.001}},
              "scheduler": {"type": "WarmupDecayLR", "params": {"warmup_num_steps": 5, "total_num_steps": "auto"}}}
    built = optreg.build({**config, "train": {"steps": 40}}, STAND_IN_MODEL())
    assert built.run.steps == 40 and built.scheduler.schedules[0].total_num_steps == 40
    with pytest.raises(ConfigError) as info:
        optreg.build({**config, "train": {"stepz": 40}}, STAND_IN_MODEL(), total_steps=40)
    assert [(e.path, e.suggestion) for e in info.value.errors] == [("train.stepz", "steps")]
    path = tmp_path / "ds_config.json"
    config["scheduler"]["params"]["total_num_steps"] = 30
    path.write_text(json.dumps(config))
    assert main(["run", str(path), "train.steps=10"]) == 0
    assert "(after 10 steps)" in capsys.readouterr().out


def test_an_auto_in_another_case_is_not_the_run_length(tmp_path):
    """The Trainer fills "auto" as written (HfDeepSpeedConfig compares with ==): "Auto" stays a string that DeepSpeed's
    WarmupDecayLR cannot count with. It was read as "auto" (the run length, --steps); it is an error at its key."""
    path = tmp_path / "ds_config.json"
    path.write_text('{"optimizer": {"type": "AdamW", "params": {"lr": 0.001}},\n "scheduler": {"type": '
                    '"WarmupDecayLR", "params": {"warmup_num_steps": 5, "total_num_steps": "Auto"}}}\n')
    with pytest.raises(ConfigError) as info:
        optreg.build(path, STAND_IN_MODEL(), total_steps=40)
    assert [(e.path, str(e.location), e.message, e.suggestion) for e in info.value.errors] == [
        ("scheduler.params.total_num_steps", f"{path}:2:75", "the Hugging Face Trainer fills \"auto\" written in "
         "lower case only: 'Auto' would reach DeepSpeed as it is", "auto")]


def STAND_IN_MODEL():
    from tests.format_replay import STAND_IN
    return STAND_IN.model()


@pytest.mark.parametrize("config, path, words", [
    ({"optimizer": {"type": "Adam", "params": {"lr": 0.1, "max_grad_norm": 1.0}}}, "optimizer.params.max_grad_norm",
     "gradient_clipping"),
    ({"optimizer": {"type": "Adam", "params": {"lr": 0.1, "amsgrad": True}}}, "optimizer.params.amsgrad",
     "torch_adam"),
    ({"optimizer": {"type": "Adam", "params": {"lr": 0.1, "betaz": [0.9, 0.9]}}}, "optimizer.params.betaz",
     "takes no"),
    ({"optimizer": {"type": "Adagrad", "params": {"lr": 0.1, "lr_decay": 0.01}},
      "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}, "optimizer.params.lr_decay",
     "DeepSpeedCPUAdagrad takes no 'lr_decay'"),
    ({"optimizer": {"type": "Lion", "params": {"lr": 0.1, "eps": 1e-8}}}, "optimizer.params.eps",
     "FusedLion takes no 'eps'"),
    ({"optimizer": {"type": "Lamb", "params": {"lr": 0.1}},
      "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}, "optimizer.type", "CUDA-only"),
    ({"optimizer": {"type": "AdamW", "params": {"lr": "auto"}}}, "optimizer.params.lr", "give lr a value"),
    ({"optimizer": {"type": "AdamW", "params": {"lr": 0.1}}, "gradient_clipping": "auto"}, "gradient_clipping",
     "max_grad_norm"),
    ({"optimizer": {"type": "AdamW", "params": {"lr": 0.1}},
      "scheduler": {"type": "WarmupLR", "params": {"warmup_type": "cubic"}}}, "scheduler.params.warmup_type",
     "'log' or 'linear'"),
    ({"optimizer": {"type": "AdamW", "params": {"lr": -1}}}, "optimizer.params.lr", ""),
    ({"train_batch_size": 8}, "optimizer", "client's optimizer"),
    ({"optimizer": {"type": "AdamW", "params": {"lr": 0.1}}, "schedulr": {"type": "WarmupLR", "params": {}}},
     "schedulr", "not a section DeepSpeed reads (did you mean 'scheduler'?)"),
    ({"optimizer": {"type": "AdamW", "params": {"lr": 0.1}}, "gradient_cliping": 1.0}, "gradient_cliping",
     "did you mean 'gradient_clipping'?"),
])
def test_bad_configs_are_located(config, path, words):
    items = errors_of(config)
    assert path in items and words in str(items[path]), items


def test_a_key_of_a_mapping_from_python_that_is_neither_a_string_nor_an_integer_is_at_its_path():
    # join_path raised AttributeError ('float' object has no attribute 'startswith')
    config = {"optimizer": {"type": "AdamW", "params": {"lr": 0.1}, 1.5: 1, None: 2}}
    with pytest.raises(ConfigError) as info:
        optreg.build(config, torch.nn.Linear(2, 2))
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("optimizer.1.5", "unknown key of a ds_config optimizer; expected type, params"),
        ("optimizer.None", "unknown key of a ds_config optimizer; expected type, params")]


@pytest.mark.parametrize("value, message", [
    ('"1.0x"', "expected a number, got str '1.0x'"),
    ("true", "expected a number, got boolean true")])   # clip_grad.max_norm's words (it said 'got bool True')
def test_a_bad_gradient_clipping_says_what_the_own_form_says(value, message, tmp_path):
    """gradient_clipping (0 or below: no clipping) words a bad number as the own form's options do
    (models.number_message; it said `must be a number >= 0 (0: no clipping), got -1`), at its position."""
    path = tmp_path / "ds_config.json"
    path.write_text('{"optimizer": {"type": "AdamW", "params": {"lr": 0.1}},\n "gradient_clipping": %s}\n' % value)
    with pytest.raises(ConfigError) as info:
        optreg.load_config(path)
    assert [str(e) for e in info.value.errors] == [f"{path}:2:2: gradient_clipping: {message}"]


@pytest.mark.parametrize("value, clip", [(0, None), (-1, None), (-0.5, None), (0.5, 0.5)])
def test_gradient_clipping_0_or_below_does_not_clip(value, clip):
    """DeepSpeed's engine clips only when `gradient_clipping() > 0` (deepspeed/runtime/engine.py, _take_model_step):
    0 and below are valid and mean no clipping, as the HF reader reads max_grad_norm."""
    config = {"optimizer": {"type": "AdamW", "params": {"lr": 0.1}}, "gradient_clipping": value}
    experiment = optreg.load_config(json.dumps(config) + "\n")
    assert (experiment.clip.max_norm if experiment.clip is not None else None) == clip
    why = {u.path: u.why for u in experiment.report}["gradient_clipping"]
    assert why == ("the global norm (clip_grad.max_norm)" if clip else
                   f"{value}: no clipping (DeepSpeed clips when it is > 0)")


def test_a_nan_gradient_clipping_is_refused():
    """NaN is no value to compare with 0 (the engine would not clip, silently): refused, as clip_grad.max_norm is."""
    with pytest.raises(ConfigError) as info:
        optreg.load_config('{"optimizer": {"type": "AdamW", "params": {"lr": 0.1}}, "gradient_clipping": .nan}\n')
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("gradient_clipping", "must be a finite number, got nan")]


def test_a_bad_adam_flag_says_what_the_own_forms_boolean_says(tmp_path):
    """Adam's adam_w_mode and torch_adam word a value that is no boolean as the own form's options do
    (models.bool_message; they said `must be true or false, got 1`), each at its position."""
    path = tmp_path / "ds_config.json"
    path.write_text('{"train_batch_size": 8,\n "optimizer": {"type": "Adam", "params": {"lr": 0.001, '
                    '"torch_adam": "yes", "adam_w_mode": 1}}}\n')
    with pytest.raises(ConfigError) as info:
        optreg.load_config(path)
    assert sorted(str(e) for e in info.value.errors) == [
        f"{path}:2:56: optimizer.params.torch_adam: expected true or false, got str 'yes'",
        f"{path}:2:77: optimizer.params.adam_w_mode: expected true or false, got int 1"]


def test_report_names_every_key():
    file = CORPUS / "compression__cifar__config__ds_config.json"
    experiment = optreg.load_config(file)
    data = json.loads(file.read_text())
    reported = {u.path.split(".")[0] for u in experiment.report}
    assert reported == set(data)
    verdicts = {u.path: u.verdict for u in experiment.report}
    assert verdicts["optimizer.type"] == "exact" and verdicts["fp16"] == "trainer"
    assert verdicts["gradient_clipping"] == "exact"


@pytest.mark.parametrize("text, fmt", [
    ('{"optimizer": {"type": "Adam", "params": {"lr": 0.1}}}', "deepspeed"),
    ('{"train_batch_size": 4, "optimizer": {"type": "Adam", "params": {"lr": 0.1}}}', "deepspeed"),
    ('optimizer: {type: Adam, lr: 0.1}', "optreg"),
    ('optimizer: {name: Adam, lr: 0.1}\nscheduler: {name: StepLR, step_size: 3}', "optreg"),
])
def test_detection(text, fmt):
    assert detected(text) == fmt


MOMENTUM_CASES = [c for c in CASES if "momentum" in c["name"] or c["name"] == "lion_offload_one_cycle"]


@pytest.mark.parametrize("case", MOMENTUM_CASES, ids=[c["name"] for c in MOMENTUM_CASES])
def test_one_cycle_plot_csv_shows_the_betas_deepspeed_applies(case, tmp_path, capsys):
    """`optreg plot --csv` of a OneCycle file with momentum cycling: betas[0] at every recorded step is the one
    DeepSpeed's OneCycle gave the optimizer (and betas[1] stays at DeepSpeed's 0.99)."""
    from optreg import cli

    file = tmp_path / "ds_config.json"
    file.write_text(json.dumps(case["config"]))
    assert cli.main(["plot", str(file), "--csv", "--steps", str(case["total_steps"])]) == 0
    rows = [line.split(",") for line in capsys.readouterr().out.splitlines()[1:]]
    beta1 = {int(step): float(value) for step, group, key, value in rows if key == "betas[0]" and group == "0"}
    recorded = {step: betas[0][0] for step, betas in case["betas"]}
    assert set(recorded) <= set(beta1)
    for step, value in recorded.items():
        assert value == pytest.approx(beta1[step], rel=1e-6), step
    assert {b[1] for _, betas in case["betas"] for b in betas} == {0.99}
    assert len(set(recorded.values())) > 3, "betas[0] moves"


def test_one_cycle_momentum_resumes_exactly():
    import torch

    config = CASES[[c["name"] for c in CASES].index("one_cycle_momentum")]["config"]
    first = optreg.build(config, STAND_IN_MODEL())
    for _ in range(37):   # into the decay after the cycle
        first.scheduler.step()
    second = optreg.build(config, STAND_IN_MODEL())   # a resumed run: the optimizer's state, then the scheduler's
    second.optimizer.load_state_dict(first.optimizer.state_dict())
    second.scheduler.load_state_dict(first.scheduler.state_dict())
    second.scheduler.step(), first.scheduler.step()
    for a, b in zip(first.optimizer.param_groups, second.optimizer.param_groups):
        assert a["betas"] == b["betas"] and a["lr"] == b["lr"]
    assert first.optimizer.param_groups[0]["betas"][0] > 0.95   # cycle_max_mom · (1 + rate · k / size)
    assert isinstance(first.scheduler, torch.optim.lr_scheduler.LRScheduler)


def test_one_cycle_without_betas_drives_the_lr_only():
    """DeepSpeed disables the momentum cycling of an optimizer without betas (SGD's momentum is left alone)."""
    config = {"optimizer": {"type": "SGD", "params": {"lr": 0.01, "momentum": 0.9}},
              "scheduler": {"type": "OneCycle", "params": {"cycle_min_lr": 0.001, "cycle_max_lr": 0.01,
                                                           "cycle_min_mom": 0.5}}}
    experiment = optreg.load_config(json.dumps(config) + "\n")
    assert experiment.scheduler["cycle_momentum"] is False
    why = {u.path: u.why for u in experiment.report}["scheduler.params.cycle_min_mom"]
    assert "no betas" in why
    built = optreg.build(config, STAND_IN_MODEL())
    for _ in range(5):
        built.scheduler.step()
    assert {g["momentum"] for g in built.optimizer.param_groups} == {0.9}


@pytest.mark.parametrize("where", ["nested", "key"])
def test_one_cycle_momentum_runs_alone(where):
    """In optreg's own form DeepSpeed's OneCycle with cycle_momentum drives lr and betas itself: nesting it (or
    giving it another key) is refused at its cycle_momentum."""
    one_cycle = {"name": "OneCycle", "dialect": "deepspeed", "cycle_min_lr": 0.001, "cycle_max_lr": 0.01}
    if where == "nested":
        scheduler = {"name": "sequential", "schedulers": [{"name": "ConstantLR", "factor": 0.5, "total_iters": 3},
                                                          one_cycle], "milestones": [3]}
        path = "scheduler.schedulers[1].cycle_momentum"
    else:
        scheduler, path = {**one_cycle, "key": "betas[1]"}, "scheduler.cycle_momentum"
    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": {"name": "AdamW", "lr": 0.01}, "scheduler": scheduler}, STAND_IN_MODEL())
    items = {e.path: e.message for e in info.value.errors}
    assert path in items and "also drives the optimizer's betas" in items[path], items


@pytest.mark.parametrize("name, offload, kernel, built, built_without", [
    ("adagrad_offload", True, "DeepSpeedCPUAdagrad", "torch.Adagrad", "torch.optim.Adagrad"),
    ("lion_offload", True, "DeepSpeedCPULion", "deepspeed.Lion", "deepspeed.FusedLion"),
])
def test_cpu_kernels_are_read_from_the_offload_section(name, offload, kernel, built, built_without):
    case = CASES[[c["name"] for c in CASES].index(name)]
    assert case["optimizer_class"] == kernel
    experiment = optreg.load_config(json.dumps(case["config"]) + "\n")
    why = {u.path: u.why for u in experiment.report}["optimizer.type"]
    assert kernel in why and built in why
    without = {k: v for k, v in case["config"].items() if k != "zero_optimization"}
    why = {u.path: u.why for u in optreg.load_config(json.dumps(without) + "\n").report}["optimizer.type"]
    assert kernel not in why and built_without in why   # torch's Adagrad / FusedLion


LION = [c for c in CASES if c.get("optimizer_class") == "DeepSpeedCPULion"]
UNUSED_ROWS = [c for c in LION if "unused_rows" in c["name"]]


def _weights(case: dict) -> dict[str, np.ndarray]:
    """name -> (steps, numel) weights of optreg's build of the case, stepped as the recorder stepped DeepSpeed."""
    net = STAND_IN_MODEL()
    for n, p in net.named_parameters():
        with torch.no_grad():
            p.copy_(torch.tensor(case["init"][n]).reshape(p.shape))
    built = optreg.build(case["config"], net, format="deepspeed", total_steps=case["total_steps"])
    out = {n: [] for n, _ in net.named_parameters()}
    for step in range(len(case["grads"]["dense.weight"])):
        for n, p in net.named_parameters():
            p.grad = torch.tensor(case["grads"][n][step]).reshape(p.shape)
        built.clip_gradients(net)
        built.optimizer.step()
        for n, p in net.named_parameters():
            out[n].append(p.detach().reshape(-1).numpy().copy())
        if built.scheduler is not None:
            built.scheduler.step()
    return {n: np.array(w) for n, w in out.items()}


def _zero_grad_entries(case: dict) -> dict[str, np.ndarray]:
    """name -> mask of the entries whose recorded gradient is 0 at every step."""
    return {n: (np.array(g) == 0).all(axis=0) for n, g in case["grads"].items()}


def _recorded(case: dict) -> dict[str, np.ndarray]:
    return {n: np.array(w, dtype=np.float32) for n, w in case["weights"].items()}


@pytest.mark.parametrize("case", LION, ids=[c["name"] for c in LION])
def test_lion_is_deepspeeds_kernel_bit_for_bit(case):
    """deepspeed.Lion computes DeepSpeedCPULion's float32 arithmetic: every recorded weight to the bit."""
    got, recorded = _weights(case), _recorded(case)
    for n in recorded:
        np.testing.assert_array_equal(got[n], recorded[n], err_msg=n)


@pytest.mark.parametrize("case", UNUSED_ROWS, ids=[c["name"] for c in UNUSED_ROWS])
def test_lion_moves_weights_whose_gradient_and_momentum_are_zero(case, monkeypatch):
    """DeepSpeedCPULion steps -copysign(lr, β1·m + (1-β1)·g): where the gradient is zero at every step the momentum
    stays +0 and the weight moves by -lr each step (and decays); deepspeed.Lion replays it (above). cerebras.Lion
    (the reader's former mapping: sign(0) = 0) leaves those entries and misses them by more than W_ATOL, while it
    matches everywhere else."""
    from optreg.readers import deepspeed as reader

    zero, recorded = _zero_grad_entries(case), _recorded(case)
    assert sum(m.sum() for m in zero.values()) >= 3
    _, defaults, options, ignored = reader.KERNELS["lion"]
    former = (("DeepSpeedCPULion", {"name": "Lion", "dialect": "cerebras", "modelzoo_groups": False,
                                    "lr": 1e-3, "betas": [0.9, 0.999], "weight_decay": 0.0}, ""), None)
    monkeypatch.setitem(reader.KERNELS, "lion", (former, defaults, options, ignored))
    old = _weights(case)
    for n, mask in zero.items():
        np.testing.assert_allclose(old[n][:, ~mask], recorded[n][:, ~mask], rtol=0, atol=W_ATOL, err_msg=n)
        if mask.any():
            assert (np.abs(old[n][-1, mask] - recorded[n][-1, mask]) > W_ATOL).all(), n


def _first_lrs(config, steps=5):
    built = optreg.build(config, STAND_IN_MODEL())
    return stepped_lrs(built.optimizer, built.scheduler, steps)


@pytest.mark.parametrize("kind, params, expected", [
    # DeepSpeed: W = max(2, warmup_num_steps) = 2; step s uses iteration s - 1 (the constructor's -1 first)
    ("WarmupLR", {"warmup_max_lr": 1e-3, "warmup_type": "linear"}, [0.0, 0.0, 1e-3 * 1 / 2, 1e-3, 1e-3]),
    ("WarmupLR", {"warmup_max_lr": 1e-3}, [0.0, 0.0, 1e-3 * math.log(2) / math.log(2), 1e-3, 1e-3]),
    ("WarmupDecayLR", {"warmup_max_lr": 1e-3, "total_num_steps": 20, "warmup_type": "linear"},
     [0.0, 0.0, 1e-3 / 2, 1e-3 * (20 - 2) / (20 - 2), 1e-3 * (20 - 3) / (20 - 2)]),
    ("WarmupCosineLR", {"total_num_steps": 10, "warmup_type": "linear"},
     [0.0, 0.0, 0.1 / 2] + [0.1 * (1e-4 + (1 - 1e-4) * (1 + math.cos(math.pi * (i - 2 + 1) / (10 - 2))) / 2)
                            for i in (2, 3)]),
])
def test_warmup_num_steps_0_is_deepspeeds_two(kind, params, expected):
    """DeepSpeed sets W = max(2, warmup_num_steps) without a range check (WarmupLR, hence WarmupDecayLR, and
    WarmupCosineLR): 0 is a valid file, read as 1 and 2 are."""
    config = {"optimizer": {"type": "SGD", "params": {"lr": 0.1}},
              "scheduler": {"type": kind, "params": {**params, "warmup_num_steps": 0}}}
    assert _first_lrs(config) == pytest.approx(expected, rel=1e-12, abs=0)
    config["scheduler"]["params"]["warmup_num_steps"] = 2
    assert _first_lrs(config) == pytest.approx(expected, rel=1e-12, abs=0)


def test_warmup_num_steps_below_0_is_refused():
    items = errors_of({"optimizer": {"type": "SGD", "params": {"lr": 0.1}},
                       "scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": -1}}})
    assert str(items["scheduler.params.warmup_num_steps"]).endswith("must be >= 0, got -1")


@pytest.mark.parametrize("section, name, hint", [
    ("scheduler", "WarmupDecay", "WarmupDecayLR"),
    ("scheduler", "warmuplr", "WarmupLR"),            # DeepSpeed's getattr(lr_schedules, type): the exact name
    ("scheduler", "cosineannealinglr", "CosineAnnealingLR"),   # getattr(torch.optim.lr_scheduler, type)
    ("scheduler", "Step", "StepLR"),
    ("optimizer", "AdamWW", "AdamW"),
    ("optimizer", "sgd", "SGD"),                      # DeepSpeed's own names in any case, torch's exactly
    ("optimizer", "Lamb2", "lamb"),
])
def test_a_misspelt_type_is_an_unknown_deepspeed_name(section, name, hint):
    config = {"optimizer": {"type": "SGD", "params": {"lr": 0.1}}, "train_batch_size": 8}
    config[section] = {"type": name, "params": {"lr": 0.1} if section == "optimizer" else {}}
    item = errors_of(config)[f"{section}.type"]
    listed = ("DeepSpeed builds its lr_schedules (WarmupLR, WarmupDecayLR, WarmupCosineLR, LRRangeTest, OneCycle) or a "
              "torch.optim.lr_scheduler class, by its exact name" if section == "scheduler" else
              "DeepSpeed builds its own (adam, adamw, adagrad, lion, lamb, onebitadam, zerooneadam, onebitlamb, "
              "muadam, muadamw, musgd, muon; any case) or a torch.optim class by its exact name")
    assert str(item).split(": ", 1)[1] == f"{section}.type: unknown DeepSpeed {section} {name!r}; {listed} " \
                                          f"(did you mean {hint!r}?)"
    assert item.location.line == 1


@pytest.mark.parametrize("section, name", [("optimizer", "adagrad"), ("optimizer", "ADAMW"), ("optimizer", "Adamax"),
                                           ("scheduler", "WarmupLR"), ("scheduler", "CosineAnnealingLR")])
def test_deepspeeds_own_names_in_any_case_and_torchs_exact_ones_are_read(section, name):
    config = {"optimizer": {"type": "SGD", "params": {"lr": 0.1}}}
    config[section] = {"type": name, "params": {"lr": 0.1} if section == "optimizer" else {"T_max": 5}}
    if name == "WarmupLR":
        config[section]["params"] = {"warmup_num_steps": 5}
    optreg.load_config(json.dumps(config) + "\n")


def test_an_error_in_one_section_does_not_hide_the_next_section_s():
    """Every problem at once: the optimizer's misspelt param (the reader's) and the scheduler's (the own form's)."""
    items = errors_of({"train_batch_size": 8, "optimizer": {"type": "AdamW", "params": {"lr": 1e-3,
                                                                                       "weight_decy": 0.1}},
                       "scheduler": {"type": "WarmupLR", "params": {"warmup_num_step": 10}}})
    assert {path: item.suggestion for path, item in items.items()} == {
        "optimizer.params.weight_decy": "weight_decay", "scheduler.params.warmup_num_step": "warmup_num_steps"}


@pytest.mark.parametrize("optimizer, reader", [
    ({"type": "AdamW", "params": {"weigth_decay": 0.1}}, "FusedAdam / DeepSpeedCPUAdam takes no 'weigth_decay'"),
    ({"type": "Lion", "params": {"weigth_decay": 0.1}}, "FusedLion takes no 'weigth_decay'"),
    ({"type": "AdamW", "params": {"lr": "auto"}}, "\"auto\" is filled by the Hugging Face Trainer"),
])
def test_an_argument_the_reader_refuses_does_not_hide_the_section_s_others(optimizer, reader):
    """Every problem at once within optimizer.params: an argument the reader refuses (a key it leaves out, an "auto")
    stands for itself; the own form's problems in the section's other arguments are said beside it."""
    optimizer["params"]["betas"] = [0.9, 1.5]
    items = errors_of({"train_batch_size": 8, "optimizer": optimizer})
    key = f"optimizer.params.{next(iter(optimizer['params']))}"
    assert set(items) == {key, "optimizer.params.betas[1]"}
    assert items[key].message.startswith(reader)
    assert items["optimizer.params.betas[1]"].message == "must be < 1, got 1.5"


def test_build_reports_the_own_form_s_problems_beside_the_reader_s_as_validate_does(tmp_path):
    """build() over a file with a reader's error (a misspelt param) says the own form's problems in its other
    arguments and sections too, the same errors at the same positions as validate (load_config)."""
    path = tmp_path / "ds_config.json"
    path.write_text('{"optimizer": {"type": "AdamW", "params": {"lr": "fast", "epsilon": 1e-8}},\n'
                    ' "scheduler": {"type": "WarmupLR", "params": {"warmup_num_step": 10}}}\n')
    read, built = read_and_built(path)
    assert built == read == [
        ("optimizer.params.epsilon", "FusedAdam / DeepSpeedCPUAdam takes no 'epsilon'",
         optreg.Location(str(path), 1, 58), "eps"),
        ("optimizer.params.lr", "expected a number, got str 'fast'", optreg.Location(str(path), 1, 44), None),
        ("scheduler.params.warmup_num_step", "unknown option of deepspeed.WarmupLR",
         optreg.Location(str(path), 2, 47), "warmup_num_steps")]


def test_a_misspelt_required_param_is_one_error_at_the_misspelling(tmp_path):
    """WarmupDecayLR's `total_num_step` is one error, the misspelling's with its did-you-mean, at its position: the
    missing total_num_steps it explains is not said too; without a misspelling it is said missing."""
    path = tmp_path / "ds_config.json"
    path.write_text('{\n  "optimizer": {"type": "Adam", "params": {"lr": 3e-4}},\n'
                    '  "scheduler": {"type": "WarmupDecayLR",\n'
                    '                "params": {"warmup_num_steps": 10, "total_num_step": 100}}\n}\n')
    with pytest.raises(ConfigError) as info:
        optreg.load_config(path)
    assert [tuple(e) for e in info.value.errors] == [
        ("scheduler.params.total_num_step", "unknown option of deepspeed.WarmupDecayLR",
         optreg.Location(str(path), 4, 52), "total_num_steps")]
    path.write_text(path.read_text().replace(', "total_num_step": 100', ""))
    with pytest.raises(ConfigError) as info:
        optreg.load_config(path)
    assert [tuple(e) for e in info.value.errors] == [
        ("scheduler.params.total_num_steps", MISSING_LENGTH, optreg.Location(str(path), 4, 17), None)]


PARAMS = '"params"'
MISSING_LENGTH = ('required option is missing: DeepSpeed constructs WarmupDecayLR with params, which must give it '
                  '("auto": the run length)')


@pytest.mark.parametrize("scheduler, said", [
    ('{"type": "WarmupDecayLR", "params": {"warmup_num_steps": 10}}', ("total_num_steps", MISSING_LENGTH)),
    ('{"type": "CosineAnnealingLR", "params": {}}',   # a torch class: "auto" is the Trainer's for total_num_steps
     ("T_max", "required option is missing: DeepSpeed constructs CosineAnnealingLR with params, which must give it")),
])
def test_a_schedule_length_left_out_is_refused_with_a_run_length_given_too(tmp_path, capsys, scheduler, said):
    """DeepSpeed constructs the schedule with its params as keywords (a TypeError without its length), and the
    Trainer fills only an "auto" total_num_steps: a length left out is refused by validate --steps and by
    build(total_steps=) alike (build took it from the run where validate refused it)."""
    from optreg.cli import main

    path = tmp_path / "ds_config.json"
    path.write_text('{"optimizer": {"type": "AdamW", "params": {"lr": 1e-3}},\n "scheduler": ' + scheduler + '}\n')
    key, message = said
    line = path.read_text().splitlines()[1]
    where = f"{path}:2:{line.index(PARAMS) + 1}"   # at params: the key is absent
    with pytest.raises(ConfigError) as info:
        optreg.build(str(path), torch.nn.Linear(2, 2), total_steps=50)
    assert [(e.path, e.message) for e in info.value.errors] == [(f"scheduler.params.{key}", message)]
    assert main(["validate", str(path), "--steps", "50"]) == 1
    assert capsys.readouterr().err == f"{info.value.errors[0]}\n"
    assert str(info.value.errors[0]) == f"{where}: scheduler.params.{key}: {message}"
    head, tail = path.read_text().split("\n", 1)   # the scheduler's params given their length: ok
    path.write_text(head + "\n" + tail.replace('"params": {}', '"params": {' + f'"{key}": 40' + '}')
                    .replace('"params": {"w', '"params": {' + f'"{key}": 40, "w'))
    assert main(["validate", str(path), "--steps", "50"]) == 0


def test_params_null_is_deepspeeds_form_read_as_deepspeed_reads_it(tmp_path):
    """`{type, params: null}` is a ds_config's section (it was read as the own form: 'optimizer.params: unknown
    option of torch.Adam'): the optimizer's null params are {} (DeepSpeed's engine: `if optimizer_parameters is None:
    optimizer_parameters = {}`), the scheduler's are refused at their position, as DeepSpeed's
    `scheduler(optimizer, **scheduler_params())` raises TypeError on None."""
    path = tmp_path / "ds_config.json"
    path.write_text('{"optimizer": {"type": "Adam", "params": null},\n'
                    ' "scheduler": {"type": "WarmupLR", "params": null}}\n')
    assert detected(path.read_text()) == "deepspeed"
    with pytest.raises(ConfigError) as info:
        optreg.load_config(path)
    assert [str(e) for e in info.value.errors] == [
        f"{path}:2:36: scheduler.params: expected a mapping of the scheduler's arguments, got None (DeepSpeed "
        "constructs the scheduler with **params: {} for its defaults)"]
    path.write_text(path.read_text().replace('"params": null}}', '"params": {}}}'))
    experiment = optreg.load_config(path)
    assert experiment.optimizer == {"name": "AdamW", "dialect": "torch", "weight_decay": 0.0, "eps": 1e-8}
    assert experiment.scheduler == {"name": "WarmupLR", "dialect": "deepspeed"}

"""The deepspeed config format: what DeepSpeed 0.19 builds from ds_config files (tests/fixtures/deepspeed, recorded
by scripts/record_deepspeed.py from real DeepSpeedExamples configs and one config per schedule), its refusals and
its detection."""

from __future__ import annotations

import json

import pytest

import optreg
from optreg.errors import ConfigError
from tests.format_replay import FIXTURES, cases, detected, errors_of, replay, sources, unrecorded

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
    ({"optimizer": {"type": "AdamW", "params": {"lr": 0.1}},
      "scheduler": {"type": "OneCycle", "params": {"cycle_min_lr": 0.1, "cycle_max_lr": 1.0}}},
     "scheduler.params.cycle_momentum", "betas[1] to 0.99"),
    ({"optimizer": {"type": "AdamW", "params": {"lr": "auto"}}}, "optimizer.params.lr", "give lr a value"),
    ({"optimizer": {"type": "AdamW", "params": {"lr": 0.1}}, "gradient_clipping": "auto"}, "gradient_clipping",
     "max_grad_norm"),
    ({"optimizer": {"type": "AdamW", "params": {"lr": 0.1}},
      "scheduler": {"type": "WarmupLR", "params": {"warmup_type": "cubic"}}}, "scheduler.params.warmup_type",
     "'log' or 'linear'"),
    ({"optimizer": {"type": "AdamW", "params": {"lr": -1}}}, "optimizer.params.lr", ""),
    ({"train_batch_size": 8}, "optimizer", "client's optimizer"),
])
def test_bad_configs_are_located(config, path, words):
    items = errors_of(config)
    assert path in items and words in str(items[path]), items


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

"""muP lr adjustment from a Model Zoo config's `model:` section (Model Zoo 2.4+ configs): the groups and scales
optreg computes against those Model Zoo 2.10's own model classes carried when the corpus was recorded, the
formulas of optreg.dialects.cerebras.mup on a plain torch model, which groups win when the model carries its own,
and the located errors of bad muP keys."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import pytest
from torch import nn

import optreg
from optreg.dialects.cerebras import mup
from optreg.errors import Collector, ConfigError

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("_modelzoo_replay", HERE / "modelzoo" / "replay.py")
replay = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(replay)
_models_spec = importlib.util.spec_from_file_location("_modelzoo_models", HERE / "modelzoo" / "models.py")
models = importlib.util.module_from_spec(_models_spec)
_models_spec.loader.exec_module(models)

RECORDED = [p for p in replay.config_paths()
            if "model" in (f := replay.load_fixture(replay.fixture_path(p))) and "model_zoo_model" in f["model"]]


def _id(path: Path) -> str:
    return str(path.relative_to(replay.CONFIGS).with_suffix(""))


@pytest.mark.parametrize("path", [pytest.param(p, id=_id(p)) for p in RECORDED])
def test_groups_from_the_model_section_are_those_of_model_zoos_model(path):
    """For a config that names its model, the groups (names, order, patterns, scales) are those Model Zoo 2.10's
    model class built from the same section carried; a legacy file (no model name) gets Model Zoo's defaults,
    which is the same grouping as long as the model's own groups all have scale 1."""
    recorded = replay.load_fixture(replay.fixture_path(path))["model"]["lr_adjustment_groups"]
    config, _ = replay.load_config(path)
    section = models.model_section(config)
    errors = Collector()
    ours = mup.lr_adjustment_groups(section, "model", errors)
    assert not errors
    if "name" not in section and "model_name" not in section:
        assert ours is None
        assert all(g["scale"] == 1.0 for g in (recorded or {}).values())
        return
    if recorded is None:
        assert ours is None
        return
    assert list(ours) == list(recorded)
    for name, (patterns, scale) in ours.items():
        assert patterns == recorded[name]["patterns"], name
        assert scale == pytest.approx(recorded[name]["scale"], rel=1e-15), name


def test_the_corpus_has_mup_configs_whose_scales_come_from_the_model_section():
    scaled = [p for p in RECORDED
              if any(g["scale"] != 1.0 for g in (replay.load_fixture(replay.fixture_path(p))["model"]
                                                 ["lr_adjustment_groups"] or {}).values())]
    families = {p.stem.split("_")[0] for p in scaled}
    assert {"gpt3", "btlm", "jais", "gptj", "bert", "t5"} <= families
    assert len(scaled) >= 10


class Gpt(nn.Module):
    """A plain torch model with Model Zoo GPT-2's parameter names (one layer) and no lr_adjustment_groups."""

    def __init__(self):
        super().__init__()
        self.embedding_layer = nn.Module()
        self.embedding_layer.word_embeddings = nn.Embedding(8, 4)
        layer = nn.Module()
        layer.self_attn = nn.Module()
        for p in ("q", "k", "v", "output"):
            setattr(layer.self_attn, f"proj_{p}_dense_layer", nn.Linear(4, 4))
        layer.ffn = nn.Module()
        layer.ffn.ffn = nn.ModuleList([nn.Module(), nn.Module()])
        layer.ffn.ffn[0].linear_layer = nn.Linear(4, 8)
        layer.ffn.ffn[1].linear_layer = nn.Linear(8, 4)
        layer.norm1 = nn.LayerNorm(4)
        self.transformer_decoder = nn.Module()
        self.transformer_decoder.layers = nn.ModuleList([layer])


def _config(model: dict, lr: float = 0.01) -> dict:
    return {"trainer": {"init": {"model": model, "optimizer": {"AdamW": {"weight_decay": 0.1}},
                                 "schedulers": [{"ConstantLR": {"learning_rate": lr}}]}}}


def _lr_of(model, built) -> dict:
    names = {id(p): n for n, p in model.named_parameters()}
    return {names[id(p)]: g["lr"] for g in built.optimizer.param_groups for p in g["params"]}


def _build(config, model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return optreg.build(config, model)


def test_gpt_mup_scales_attention_and_ffn_by_the_width_ratios_on_a_plain_model():
    h, base_h, f, base_f = 768, 256, 3072, 512
    model = Gpt()
    lr = _lr_of(model, _build(_config({"name": "jais", "hidden_size": h, "filter_size": f,
                                       "mup_base_hidden_size": base_h, "mup_base_filter_size": base_f,
                                       "embeddings_scale": 10.0, "output_logits_alpha": 2.0,
                                       "scale_qk_dot_by_d": True}), model))
    layer = "transformer_decoder.layers.0"
    for p in "qkv":
        assert lr[f"{layer}.self_attn.proj_{p}_dense_layer.weight"] == pytest.approx(0.01 * base_h / h, rel=1e-6)
    assert lr[f"{layer}.ffn.ffn.0.linear_layer.weight"] == pytest.approx(0.01 * base_h / h, rel=1e-6)
    assert lr[f"{layer}.ffn.ffn.1.linear_layer.weight"] == pytest.approx(0.01 * base_f / f, rel=1e-6)
    for name in ("embedding_layer.word_embeddings.weight", f"{layer}.self_attn.proj_q_dense_layer.bias",
                 f"{layer}.norm1.weight"):
        assert lr[name] == pytest.approx(0.01, rel=1e-6)


def test_a_model_that_carries_its_own_groups_keeps_them():
    model = Gpt()
    model.lr_adjustment_groups = {"embedding": (["*embedding*weight"], 0.5)}
    lr = _lr_of(model, _build(_config({"name": "gpt3", "hidden_size": 768, "mup_base_hidden_size": 256}), model))
    assert lr["embedding_layer.word_embeddings.weight"] == pytest.approx(0.005, rel=1e-6)
    assert lr["transformer_decoder.layers.0.self_attn.proj_q_dense_layer.weight"] == pytest.approx(0.01, rel=1e-6)


def test_adjust_learning_rate_overrides_a_group_of_the_model_section():
    model = Gpt()
    config = _config({"name": "gpt3", "hidden_size": 768, "mup_base_hidden_size": 256})
    config["trainer"]["init"]["optimizer"]["AdamW"]["adjust_learning_rate"] = {"decoder_attention": 0.25}
    lr = _lr_of(model, _build(config, model))
    layer = "transformer_decoder.layers.0"
    assert lr[f"{layer}.self_attn.proj_q_dense_layer.weight"] == pytest.approx(0.0025, rel=1e-6)
    assert lr[f"{layer}.ffn.ffn.0.linear_layer.weight"] == pytest.approx(0.01 / 3, rel=1e-6)


def test_t5_formulas():
    errors = Collector()
    d_model, base, d_kv, base_kv, d_ff, base_ff = 1024, 256, 128, 64, 4096, 512
    groups = mup.lr_adjustment_groups({"name": "t5", "d_model": d_model, "mup_base_d_model": base, "d_kv": d_kv,
                                       "mup_base_d_kv": base_kv, "d_ff": d_ff, "mup_base_d_ff": base_ff},
                                      "model", errors)
    assert not errors
    m = d_model / base
    scale = {k: s for k, (_, s) in groups.items()}
    assert scale["embedding"] == scale["lm_head"] == pytest.approx(m ** -0.5)
    assert scale["encoder_input_ffn"] == scale["decoder_qkv_projection"] == pytest.approx(1 / m)
    assert scale["encoder_output_projection"] == pytest.approx(base_kv / d_kv)
    assert scale["decoder_output_ffn"] == pytest.approx(base_ff / d_ff)
    plain = mup.lr_adjustment_groups({"name": "t5", "d_model": d_model, "mup_base_d_model": base,
                                      "use_transformer_initialization": True}, "model", errors)
    assert {s for _, s in plain.values()} == {1.0}
    without_kv = mup.lr_adjustment_groups({"name": "t5", "d_model": d_model, "mup_base_d_model": base}, "m", errors)
    assert without_kv["decoder_output_projection"][1] == pytest.approx(m ** -0.5)


def test_models_without_mup_groups_take_model_zoos_defaults():
    errors = Collector()
    assert mup.lr_adjustment_groups({"name": "dino"}, "model", errors) is None
    assert mup.lr_adjustment_groups(None, "model", errors) is None
    assert not errors


@pytest.mark.parametrize("model, path, words", [
    ({"name": "gpt3", "hidden_size": 768, "mup_base_hidden_size": "256"},
     "trainer.init.model.mup_base_hidden_size", "expected a number, got str '256'"),
    ({"name": "btlm", "hidden_size": 0, "mup_base_hidden_size": 256}, "trainer.init.model.hidden_size",
     "must be >= 1, got 0"),
    ({"hidden_size": 768, "mup_base_hidden_size": 256}, "trainer.init.model.name", "model's name"),
    ({"name": "gpt3", "hidden_size": 2 ** 80, "mup_base_hidden_size": 256}, "trainer.init.model.hidden_size",
     "must be <= 9007199254740992, got 1208925819614629174706176"),
    ({"name": "gpt3", "mup_base_filter_size": 256, "lr_adjustment_groups": {"embedding": "*embedding*weight"}},
     "trainer.init.model.lr_adjustment_groups", "decoder_output_ffn"),
    ({"name": "bert", "lr_adjustment_groups": {"pooler": 3}}, "trainer.init.model.lr_adjustment_groups.pooler",
     "glob pattern"),
])
def test_bad_mup_keys_are_located_config_errors(model, path, words):
    with pytest.raises(ConfigError) as info:
        _build(_config(model), Gpt())
    assert any(e.path == path and words in e.message for e in info.value.errors), str(info.value)


MUP_FILE = """\
trainer:
  init:
    model:
      name: gpt3
      hidden_size: %s
      mup_base_hidden_size: %s
      lr_adjustment_groups:
        embedding: {param_filter_patterns: ["*embedding*weight"], scale: %s}
    optimizer: {AdamW: {weight_decay: 0.1}}
    schedulers: [{ConstantLR: {learning_rate: 0.01}}]
"""


@pytest.mark.parametrize("values, said", [
    ((768, "'256'", 2), ["6:7: trainer.init.model.mup_base_hidden_size: expected a number, got str '256'"]),
    ((0, 256, 2), ["5:7: trainer.init.model.hidden_size: must be >= 1, got 0"]),
    # a width is a count of units: 1/(h/b) raised ZeroDivisionError (5e-324) or OverflowError (10**400)
    ((5e-324, 256, 2), ["5:7: trainer.init.model.hidden_size: must be >= 1, got 5e-324"]),
    (("1208925819614629174706176", 256, 2), ["5:7: trainer.init.model.hidden_size: must be <= 9007199254740992, "
                                              "got 1208925819614629174706176"]),
    ((768, ".inf", 2), ["6:7: trainer.init.model.mup_base_hidden_size: must be a finite number, got inf"]),
    # a group's scale is adjust_learning_rate's (mup.scale_message): -2 built a negative lr, nan a nan one
    ((768, "null", -2), ["8:67: trainer.init.model.lr_adjustment_groups.embedding.scale: must be >= 0, got -2"]),
    ((768, "null", ".nan"), ["8:67: trainer.init.model.lr_adjustment_groups.embedding.scale: must be a finite number, "
                          "got nan"]),
    ((768, "null", "x"),
     ["8:67: trainer.init.model.lr_adjustment_groups.embedding.scale: expected a number, got str 'x'"]),
])
def test_a_bad_mup_number_is_said_as_the_own_form_says_it(values, said, tmp_path, capsys):
    """A muP width or an lr adjustment group's scale is worded as the own form's options word a bad number
    (models.number_message; they said 'must be a number > 0, got 0', 'must be a number, got 'x''), at its key; a
    width is >= 1 (its ratios stay within float range)."""
    from optreg.cli import main

    path = tmp_path / "mup.yaml"
    path.write_text(MUP_FILE % values)
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().err.splitlines() == [f"{path}:{line}" for line in said]


def _model_report(path: Path) -> tuple[dict, dict]:
    """(the config's model section and its path, {report path: verdict}) of a corpus config."""
    from optreg.config.experiment import validate_experiment
    from optreg.config.yaml_loader import read_yaml

    data, source = read_yaml(str(path))
    experiment = validate_experiment(data, source)
    prefix = "trainer.init.model" if "trainer" in data else "model"
    section = data["trainer"]["init"]["model"] if "trainer" in data else data["model"]
    return {f"{prefix}.{k}": v for k, v in section.items()}, {k.path: k.verdict for k in experiment.report}


@pytest.mark.parametrize("name, used", [
    ("2.10.0/gpt3_mup_gpt3_40m.yaml", {"name", "hidden_size", "filter_size", "mup_base_hidden_size",
                                        "mup_base_filter_size"}),
    ("2.10.0/t5_t5_11b_mup.yaml", {"name", "d_model", "d_ff", "mup_base_d_model", "mup_base_d_ff"}),
    ("2.2.0/gpt3_mup_gpt3_111m.yaml", set()),           # muP in adjust_learning_rate, no base in the model
    ("2.10.0/dino_dinov2_large_patch14_img518.yaml", set()),
])
def test_every_model_key_is_reported_muP_keys_as_used_the_rest_as_the_trainers(name, used):
    section, report = _model_report(replay.CONFIGS / name)
    assert {k for k in report if k.rsplit(".", 1)[0].endswith("model")} == set(section)
    assert {k.rsplit(".", 1)[1] for k, v in report.items() if k in section and v == "exact"} == used
    assert all(report[k] == "trainer" for k in section if k.rsplit(".", 1)[1] not in used)

"""Parameter groups for fine-tuning: the `modules` / `max_ndim` selectors, `lr_mult` / `decay_mult`, `no_weight_decay`
(timm), `layer_decay` (BEiT / timm), frozen and tied parameters, in Python, YAML, Hydra overrides, MindSpore's group
binder and the JSON Schema; every number checked against a hand-computed value."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import jsonschema
import pytest
import torch
from torch import nn

import optreg
from optreg import ConfigError

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from examples.finetune_models import tiny_resnet, tiny_vit  # noqa: E402

VIT_YAML = REPO / "examples" / "finetune_vit.yaml"
RESNET_YAML = REPO / "examples" / "finetune_resnet.yaml"


def per_name(optimizer, model) -> dict[str, tuple[float, float]]:
    """name -> (lr, weight_decay) of the group each parameter is in; every parameter in exactly one group."""
    names = {id(p): n for n, p in model.named_parameters()}
    out: dict[str, tuple[float, float]] = {}
    for group in optimizer.param_groups:
        for p in group["params"]:
            assert names[id(p)] not in out
            out[names[id(p)]] = (group["lr"], group["weight_decay"])
    return out


def vit_expected(base=1e-3, wd=0.05, rate=0.75, head_mult=10.0) -> dict[str, tuple[float, float]]:
    """The ViT example by hand: L = 3 blocks; layer 0 = cls_token, pos_embed, patch_embed; blocks.i = i + 1; norm and
    head = 4; lr = base * rate ** (4 - layer); no decay for 1-D parameters and for pos_embed / cls_token."""
    out = {"cls_token": (base * rate ** 4, 0.0), "pos_embed": (base * rate ** 4, 0.0),
           "patch_embed.weight": (base * rate ** 4, wd), "patch_embed.bias": (base * rate ** 4, 0.0),
           "norm.weight": (base, 0.0), "norm.bias": (base, 0.0),
           "head.weight": (base * head_mult, wd), "head.bias": (base * head_mult, 0.0)}
    for i in range(3):
        lr = base * rate ** (3 - i)
        for layer in ("qkv", "proj", "mlp.fc1", "mlp.fc2"):
            out[f"blocks.{i}.{layer}.weight"] = (lr, wd)
            out[f"blocks.{i}.{layer}.bias"] = (lr, 0.0)
        for norm in ("norm1", "norm2"):
            out[f"blocks.{i}.{norm}.weight"] = (lr, 0.0)
            out[f"blocks.{i}.{norm}.bias"] = (lr, 0.0)
    return out


def assert_values(actual: dict, expected: dict) -> None:
    assert sorted(actual) == sorted(expected)
    for name, (lr, wd) in expected.items():
        assert actual[name][0] == pytest.approx(lr, rel=1e-12), name
        assert actual[name][1] == pytest.approx(wd, rel=1e-12), name


def errors_of(fn) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as info:
        fn()
    return [(e.path, str(e)) for e in info.value.errors]


# ---------------------------------------------------------------------------------------------------
# the two documented examples
# ---------------------------------------------------------------------------------------------------
def test_vit_example_layer_decay_no_weight_decay_and_head_mult():
    model = tiny_vit()
    built = optreg.build(VIT_YAML, model)
    assert_values(per_name(built.optimizer, model), vit_expected())
    assert per_name(built.optimizer, model)["cls_token"][0] == pytest.approx(3.1640625e-4)   # the README's figure
    layers = {n: row["layer"] for row in built.group_table() for n in row["names"]}
    assert layers["cls_token"] == 0 and layers["blocks.0.qkv.weight"] == 1 and layers["blocks.2.proj.bias"] == 3
    assert layers["norm.weight"] == layers["head.weight"] == 4


def test_resnet_example_modules_selector_mults_and_frozen_stem():
    model = tiny_resnet()
    built = optreg.build(RESNET_YAML, model)
    lr, wd = 0.01, 1e-4
    expected = {"fc.weight": (10 * lr, wd), "fc.bias": (10 * lr, wd)}
    for name, p in model.named_parameters():
        if name.startswith(("conv1", "bn1")):
            continue                                                   # the frozen stem: in no group
        if ".bn" in name or "downsample.1" in name:
            expected[name] = (lr, 0.0)                                 # BatchNorm2d: decay_mult 0 (rule 1)
        elif name.startswith("layer1"):
            expected[name] = (0.1 * lr, wd)                            # rule 2: lr_mult 0.1
        elif name.startswith("layer2"):
            expected[name] = (lr, wd)                                  # the default group
    assert_values(per_name(built.optimizer, model), expected)
    rows = built.group_table()
    assert [r["rule"] for r in rows] == ["optimizer.param_groups[0]", "optimizer.param_groups[1]",
                                         "optimizer.param_groups[2]", "default", "frozen"]
    assert rows[-1]["names"] == ["conv1.weight", "bn1.weight", "bn1.bias"] and rows[-1]["params"] == 3
    assert rows[-1]["numel"] == 4 * 3 * 9 + 4 + 4 and rows[-1]["group"] is None and rows[-1]["lr"] is None
    assert rows[1]["selectors"] == {"modules": ["BatchNorm2d"]} and rows[1]["multipliers"] == {"decay_mult": 0.0}
    assert len(built.optimizer.param_groups) == 4


def test_dry_run_rows_equal_the_built_rows_and_build_nothing(monkeypatch):
    from optreg.api import group_table

    model = tiny_vit()
    built_rows = optreg.build(VIT_YAML, model).group_table()
    created = []
    monkeypatch.setattr(torch.optim.AdamW, "__init__", lambda *a, **k: created.append(1))
    assert group_table(VIT_YAML, model) == built_rows and not created


# ---------------------------------------------------------------------------------------------------
# selectors
# ---------------------------------------------------------------------------------------------------
class Scale(nn.Module):
    """A user's own module that owns a parameter directly."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.gain = nn.Parameter(torch.ones(n))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.norm = nn.LayerNorm(4)
        self.scale = Scale(4)
        self.fc = nn.Linear(4, 3)


def groups_of(optimizer, model) -> list[list[str]]:
    names = {id(p): n for n, p in model.named_parameters()}
    return [[names[id(p)] for p in g["params"]] for g in optimizer.param_groups]


@pytest.mark.parametrize("spelling", ["LayerNorm", "torch.nn.LayerNorm", "torch.nn.modules.normalization.LayerNorm",
                                      nn.LayerNorm, [nn.LayerNorm]])   # from Python the class itself too
def test_modules_selects_by_the_owning_class(spelling):
    model = Net()
    opt = optreg.configure_optimizer("SGD", model, lr=0.1, param_groups=[{"modules": spelling, "lr": 0.5}])
    assert groups_of(opt, model) == [["norm.weight", "norm.bias"], ["embed.weight", "scale.gain", "fc.weight",
                                                                     "fc.bias"]]
    assert [g["lr"] for g in opt.param_groups] == [0.5, 0.1]


def test_modules_dotted_path_of_a_users_class_and_a_list():
    model = Net()
    opt = optreg.configure_optimizer("SGD", model, lr=0.1, param_groups=[
        {"modules": [f"{Scale.__module__}.Scale", "Embedding"], "lr_mult": 0.25}])
    assert groups_of(opt, model)[0] == ["embed.weight", "scale.gain"]
    assert opt.param_groups[0]["lr"] == pytest.approx(0.025)


def test_selectors_must_all_hold_and_first_rule_wins():
    model = Net()
    opt = optreg.configure_optimizer("AdamW", model, lr=1.0, weight_decay=0.1, param_groups=[
        {"params": "fc.*", "max_ndim": 1, "lr_mult": 3},            # fc.bias only
        {"max_ndim": 1, "decay_mult": 0.5},                          # the other 1-D ones
    ])
    assert groups_of(opt, model) == [["fc.bias"], ["norm.weight", "norm.bias", "scale.gain"],
                                     ["embed.weight", "fc.weight"]]
    assert [(g["lr"], g["weight_decay"]) for g in opt.param_groups] == [(3.0, 0.1), (1.0, 0.05), (1.0, 0.1)]


def test_max_ndim_works_on_bare_tensors():
    w, b = nn.Parameter(torch.ones(2, 2)), nn.Parameter(torch.ones(2))
    opt = optreg.configure_optimizer("SGD", [w, b], lr=0.1, param_groups=[{"max_ndim": 1, "lr": 0.3}])
    assert [g["params"][0] is t for g, t in zip(opt.param_groups, (b, w))] == [True, True]
    assert [g["lr"] for g in opt.param_groups] == [0.3, 0.1]


def test_no_weight_decay_equals_a_max_ndim_rule_without_the_method():
    model = Net()
    a = optreg.configure_optimizer("AdamW", model, weight_decay=0.2, no_weight_decay=True)
    b = optreg.configure_optimizer("AdamW", model, weight_decay=0.2, param_groups=[{"max_ndim": 1, "weight_decay": 0}])
    assert per_name(a, model) == per_name(b, model)
    assert per_name(a, model)["fc.weight"][1] == 0.2 and per_name(a, model)["fc.bias"][1] == 0.0


def test_no_weight_decay_reads_the_models_names():
    model = tiny_vit()
    opt = optreg.configure_optimizer("AdamW", model, lr=1e-3, weight_decay=0.05, no_weight_decay=True)
    values = per_name(opt, model)
    assert values["cls_token"] == values["pos_embed"] == (1e-3, 0.0)        # 3-D, decay-free by name
    assert values["patch_embed.weight"] == values["head.weight"] == (1e-3, 0.05)


def test_rule_multiplier_on_top_of_the_layer_scale():
    model = tiny_vit()
    opt = optreg.configure_optimizer("AdamW", model, lr=1.0, weight_decay=0.1, param_groups=[
        {"params": "blocks.1.*", "lr_mult": 2.0, "decay_mult": 0.5}], no_weight_decay=True,
        layer_decay={"rate": 0.5, "layer": "blocks.{i}.*", "before": ["cls_token", "pos_embed", "patch_embed.*"]})
    values = per_name(opt, model)
    assert values["blocks.1.qkv.weight"] == (2.0 * 0.5 ** 2, 0.05)           # lr_mult * rate**(4-2); decay_mult
    assert values["blocks.1.qkv.bias"] == (2.0 * 0.5 ** 2, 0.0)              # no_weight_decay wins over decay_mult
    assert values["blocks.0.qkv.weight"] == (0.5 ** 3, 0.1)
    assert values["pos_embed"] == (0.5 ** 4, 0.0) and values["head.weight"] == (1.0, 0.1)
    opt = optreg.configure_optimizer("AdamW", model, lr=1.0, weight_decay=0.1, no_weight_decay=True,
                                     param_groups=[{"params": "blocks.1.*", "weight_decay": 0.3}])
    values = per_name(opt, model)
    assert values["blocks.1.qkv.bias"] == (1.0, 0.0)                          # ... and over a rule's weight_decay
    assert values["blocks.1.qkv.weight"] == (1.0, 0.3)


def test_layer_count_includes_frozen_layers():
    """Freezing blocks.0 does not change the other layers' lr (L counts every layer of the model)."""
    model = tiny_vit()
    for p in model.blocks[0].parameters():
        p.requires_grad_(False)
    opt = optreg.configure_optimizer("AdamW", model, lr=1.0, layer_decay={"rate": 0.5, "layer": "blocks.{i}.*"})
    values = per_name(opt, model)
    assert "blocks.0.qkv.weight" not in values
    assert values["blocks.1.qkv.weight"][0] == 0.5 ** 2 and values["blocks.2.qkv.weight"][0] == 0.5
    assert values["cls_token"][0] == 1.0                          # no `before`: everything else is layer L + 1


def test_tied_parameters_are_placed_once_and_frozen_left_out():
    model = Net()
    head = nn.Linear(4, 10, bias=False)
    head.weight = model.embed.weight                              # tied
    model.head = head
    model.norm.bias.requires_grad_(False)
    opt = optreg.configure_optimizer("SGD", model, lr=0.1, param_groups=[{"params": "embed.*", "lr": 0.2}])
    flat = [id(p) for g in opt.param_groups for p in g["params"]]
    assert len(flat) == len(set(flat)) == 5                      # embed/head weight once, norm.bias left out
    assert id(model.norm.bias) not in flat and opt.param_groups[0]["params"][0] is model.embed.weight
    pairs = list(model.named_parameters(remove_duplicate=False))   # both names of the tied tensor
    opt = optreg.configure_optimizer("SGD", pairs, lr=0.1)
    assert sum(len(g["params"]) for g in opt.param_groups) == 5


#: the warning of a rule whose parameters are all frozen (groups.frozen_rule_note)
FROZEN_NOTE = ("every parameter it matches is frozen (requires_grad=False: {}), so it makes no group; frozen "
               "parameters stay out of the optimizer: build it again once they are unfrozen")


def test_a_rule_over_frozen_parameters_only_makes_no_group_and_says_so():
    """A rule whose parameters are all frozen makes no group: a warning at the rule's params (at the rule for a
    modules selector), not an error as a pattern that matches no name is, since freezing is often a phase (timm and
    MMEngine pass over frozen parameters silently); build and configure_optimizer alike. It said nothing."""
    model = Net()
    model.fc.requires_grad_(False)
    with pytest.warns(optreg.ConfigWarning) as caught:
        built = optreg.build({"optimizer": {"name": "SGD", "param_groups": [{"params": "fc.*", "lr": 0.5}]}}, model)
    assert [str(w.message) for w in caught] == ["optimizer.param_groups[0].params: " +
                                                FROZEN_NOTE.format("fc.weight, fc.bias")]
    assert [r["rule"] for r in built.group_table()] == ["default", "frozen"]
    assert built.group_table()[-1]["names"] == ["fc.weight", "fc.bias"]
    model.embed.requires_grad_(False)
    model.norm.requires_grad_(False)
    for rule, where in (({"params": ["embed.*", "norm.*", "fc.*"]}, "param_groups[0].params"),
                        ({"modules": ["Embedding", "LayerNorm", "Linear"]}, "param_groups[0]")):
        with pytest.warns(optreg.ConfigWarning) as caught:
            opt = optreg.configure_optimizer("SGD", model, lr=0.1, param_groups=[{**rule, "lr": 0.5}])
        assert [str(w.message) for w in caught] == [
            f"{where}: " + FROZEN_NOTE.format("embed.weight, norm.weight, norm.bias and 2 more")]
        assert [g["lr"] for g in opt.param_groups] == [0.1]
    linear = nn.Linear(3, 2)
    linear.bias.requires_grad_(False)
    with pytest.warns(optreg.ConfigWarning) as caught:   # bare tensors: max_ndim over frozen ones only
        opt = optreg.configure_optimizer("SGD", list(linear.parameters()), lr=0.1, param_groups=[
            {"max_ndim": 1, "lr": 0.5}])
    assert [str(w.message) for w in caught] == ["param_groups[0]: " + FROZEN_NOTE.format("a tensor of shape (2,)")]
    assert [(g["lr"], g["params"]) for g in opt.param_groups] == [(0.1, [linear.weight])]
    with pytest.raises(ConfigError) as info:   # a pattern matching no name at all is still an error
        optreg.configure_optimizer("SGD", model, lr=0.1, param_groups=[{"params": "nothere.*", "lr": 0.5}])
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("param_groups[0].params", "pattern 'nothere.*' matches no parameter")]


def test_a_rule_that_makes_no_group_has_its_options_checked_as_validate_checks_them():
    """A rule over frozen parameters only, a rule whose pattern matches nothing and a rule whose parameters an
    earlier rule took make no group; build checks their options all the same, at the paths validate gives (build
    took `lr: -1` on the frozen rule, and reported only the selector's error on the others)."""
    model = Net()
    model.fc.requires_grad_(False)
    bad_lr = ("optimizer.param_groups[0].lr", "must be >= 0, got -1")
    cases = (([{"params": "fc.*", "lr": -1}], [bad_lr]),
             ([{"params": "nothing.*", "lr": -1}],
              [("optimizer.param_groups[0].params", "pattern 'nothing.*' matches no parameter"), bad_lr]),
             ([{"params": "*", "lr": 0.1}, {"params": "embed.*", "lr": -1}],
              [("optimizer.param_groups[1].params", "every parameter it matches (embed.weight) is already taken by "
                "optimizer.param_groups[0] (the first matching rule wins); put this rule first"),
               ("optimizer.param_groups[1].lr", "must be >= 0, got -1")]))
    for rules, expected in cases:
        config = {"optimizer": {"name": "SGD", "lr": 0.1, "param_groups": rules}}
        with pytest.raises(ConfigError) as info:
            optreg.build(config, model)
        assert sorted((e.path, e.message) for e in info.value.errors) == sorted(expected)
        with pytest.raises(ConfigError) as info:   # validate, before any model: the same option error
            optreg.config.experiment.validate_experiment(config)
        assert [(e.path, e.message) for e in info.value.errors] == [expected[-1]]


def test_a_composite_s_rule_over_frozen_parameters_only_warns_once():
    """In a composite, a rule routed to an optimizer and a rule of the main optimizer over frozen parameters only are
    both the warning, once each at the user's rule index (the main optimizer's said 'pattern matches no
    parameter', as it planned without the frozen parameters)."""
    model = Net()
    model.fc.requires_grad_(False)
    model.norm.requires_grad_(False)
    with pytest.warns(optreg.ConfigWarning) as caught:
        opt = optreg.configure_optimizer("AdamW", model, lr=0.01, param_groups=[
            {"params": "embed.*", "optimizer": {"name": "SGD", "lr": 0.1}},
            {"params": "fc.*", "optimizer": {"name": "SGD", "lr": 0.1}},
            {"params": "norm.*", "lr_mult": 0.1}])
    assert [str(w.message) for w in caught] == [
        "param_groups[1].params: " + FROZEN_NOTE.format("fc.weight, fc.bias"),
        "param_groups[2].params: " + FROZEN_NOTE.format("norm.weight, norm.bias")]
    assert [(g["lr"], len(g["params"])) for g in opt.param_groups] == [(0.1, 1), (0.01, 1)]


class NoBias(nn.Module):
    """LLaMA-style: no biases anywhere, RMS-style norms without a bias."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.proj = nn.Linear(4, 4, bias=False)
        self.final_norm = nn.LayerNorm(4, bias=False)


@pytest.mark.parametrize("config", [REPO / "examples" / "quickstart.yaml",
                                    REPO / "examples" / "hydra_app" / "conf" / "config.yaml"])
def test_the_shipped_bias_and_norm_rule_fits_a_model_without_biases(config):
    """`*.bias` matches nothing on a model without biases; `*norm*` does, so the rule builds (MMEngine's custom_keys
    and timm's no_weight_decay names skip what the model lacks)."""
    import yaml

    rules = yaml.safe_load(config.read_text())["optimizer"]["param_groups"]
    assert rules[0]["params"] == ["*.bias", "*norm*"]
    model = NoBias()
    opt = optreg.configure_optimizer("AdamW", model, lr=1e-3, weight_decay=0.05, param_groups=rules)
    assert groups_of(opt, model) == [["final_norm.weight"], ["embed.weight", "proj.weight"]]
    assert [g["weight_decay"] for g in opt.param_groups] == [0.0, 0.05]
    for params in (model.named_parameters(), list(model.named_parameters())):
        opt = optreg.configure_optimizer("AdamW", params, lr=1e-3, weight_decay=0.05, param_groups=rules)
        assert groups_of(opt, model) == [["final_norm.weight"], ["embed.weight", "proj.weight"]]


def test_the_quickstart_file_builds_on_a_model_without_biases():
    built = optreg.build(REPO / "examples" / "quickstart.yaml", NoBias())
    assert [(r["rule"], r["names"]) for r in built.group_table()] == [
        ("optimizer.param_groups[0]", ["final_norm.weight"]), ("default", ["embed.weight", "proj.weight"])]


@pytest.mark.parametrize("patterns, where, suggestion", [
    ("*.bais", "param_groups[0].params", "*.bias"),                    # the rule selects nothing
    (["*.bais", "*norm*"], "param_groups[0].params[0]", "*.bias"),     # the other pattern selects: still a typo
    (["*.bias", "*nrom*"], "param_groups[0].params[1]", "*norm*"),
    (["*.bias", "*Norm*"], "param_groups[0].params[1]", "*norm*"),
])
def test_a_misspelt_pattern_is_an_error_with_its_correction(patterns, where, suggestion):
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("SGD", Net(), lr=0.1, param_groups=[{"params": patterns, "weight_decay": 0.0}])
    assert [(e.path, e.suggestion) for e in info.value.errors] == [(where, suggestion)]
    assert "matches no parameter" in info.value.errors[0].message


def test_a_rule_whose_patterns_select_nothing_is_an_error_and_the_position_is_the_patterns():
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("SGD", NoBias(), lr=0.1, param_groups=[{"params": ["*.bias", "*.nope"]}])
    assert [e.path for e in info.value.errors] == ["param_groups[0].params[0]", "param_groups[0].params[1]"]
    text = "optimizer:\n  name: SGD\n  lr: 0.1\n  param_groups:\n    - params: ['*.bias', '*nrom*']\n"
    with pytest.raises(ConfigError) as info:
        optreg.build(text, NoBias())
    assert [(e.path, e.location.line, e.location.column, e.suggestion) for e in info.value.errors] == [
        ("optimizer.param_groups[0].params[0]", 5, 16, None), ("optimizer.param_groups[0].params[1]", 5, 26, "*norm*")]


def test_a_layer_decay_before_pattern_the_model_lacks_is_skipped():
    model = tiny_vit()
    opt = optreg.configure_optimizer("AdamW", model, lr=1.0, layer_decay={
        "rate": 0.5, "layer": "blocks.{i}.*", "before": ["cls_token", "dist_token", "pos_embed"]})
    values = per_name(opt, model)
    assert values["cls_token"][0] == values["pos_embed"][0] == 0.5 ** 4 and values["head.weight"][0] == 1.0


class Tied(nn.Module):
    """A language model whose output layer shares the embedding's weight."""

    def __init__(self, head_bias: bool = False) -> None:
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.proj = nn.Linear(4, 4)
        self.lm_head = nn.Linear(4, 10, bias=head_bias)
        self.lm_head.weight = self.embed.weight


def test_a_pattern_over_a_tied_name_selects_the_shared_tensor():
    model = Tied()
    for params in (model, list(model.named_parameters(remove_duplicate=False))):
        opt = optreg.configure_optimizer("SGD", params, lr=0.1, param_groups=[{"params": "lm_head.*", "lr": 0.5}])
        assert [len(g["params"]) for g in opt.param_groups] == [1, 2]
        assert opt.param_groups[0]["params"][0] is model.lm_head.weight is model.embed.weight
        assert opt.param_groups[0]["lr"] == 0.5
    built = optreg.build({"optimizer": {"name": "SGD", "lr": 0.1, "param_groups": [
        {"params": "lm_head.weight", "lr": 0.5}, {"modules": "Linear", "lr": 0.2}]}}, model)
    assert [(r["rule"], r["names"]) for r in built.group_table()] == [        # under the name it is placed under
        ("optimizer.param_groups[0]", ["embed.weight"]), ("optimizer.param_groups[1]", ["proj.weight", "proj.bias"])]


def test_two_rules_claiming_a_tied_tensor_by_two_names_first_wins():
    model = Tied(head_bias=True)
    rules = [{"params": "embed.*", "lr": 0.2}, {"params": "lm_head.*", "lr": 0.3}]
    opt = optreg.configure_optimizer("SGD", model, lr=0.1, param_groups=rules)
    assert [(g["lr"], [id(p) for p in g["params"]]) for g in opt.param_groups] == [
        (0.2, [id(model.embed.weight)]), (0.3, [id(model.lm_head.bias)]),
        (0.1, [id(model.proj.weight), id(model.proj.bias)])]
    with pytest.raises(ConfigError) as info:       # every parameter the later rule matches is the earlier's
        optreg.configure_optimizer("SGD", Tied(), lr=0.1, param_groups=rules)
    assert [(e.path, e.message) for e in info.value.errors] == [(
        "param_groups[1].params", "every parameter it matches (lm_head.weight) is already taken by param_groups[0] "
                                  "(the first matching rule wins; lm_head.weight is tied to embed.weight); put this "
                                  "rule first")]


def test_a_tied_name_of_a_frozen_tensor_selects_nothing_trainable():
    model = Tied(head_bias=True)
    model.embed.weight.requires_grad_(False)
    with pytest.warns(optreg.ConfigWarning, match=r"^optimizer\.param_groups\[0\]\.params: every parameter it "
                                                  r"matches is frozen \(requires_grad=False: lm_head\.weight\)"):
        built = optreg.build({"optimizer": {"name": "SGD", "lr": 0.1, "param_groups": [
            {"params": "lm_head.weight", "lr": 0.5}]}}, model)
    assert [(r["rule"], r["names"]) for r in built.group_table()] == [
        ("default", ["proj.weight", "proj.bias", "lm_head.bias"]), ("frozen", ["embed.weight"])]


def test_frozen_parameters_are_left_out_however_the_parameters_are_passed():
    model = Net()
    model.embed.requires_grad_(False)
    trainable = [id(p) for p in model.parameters() if p.requires_grad]
    for params in (model, model.named_parameters(), list(model.named_parameters()), model.parameters(),
                   list(model.parameters())):
        opt = optreg.configure_optimizer("SGD", params, lr=0.1)
        assert [id(p) for g in opt.param_groups for p in g["params"]] == trainable
    built = optreg.build({"optimizer": {"name": "SGD", "lr": 0.1, "param_groups": [{"max_ndim": 1, "lr": 0.5}]}},
                         list(model.parameters()))
    assert [(r["rule"], r["params"], r["names"]) for r in built.group_table()] == [
        ("optimizer.param_groups[0]", 4, []), ("default", 1, []), ("frozen", 1, [])]
    # torch-style group dicts are torch's own groups: every tensor they list, frozen or not
    opt = optreg.configure_optimizer("SGD", [{"params": list(model.parameters())}], lr=0.1)
    assert [id(p) for p in opt.param_groups[0]["params"]] == [id(p) for p in model.parameters()]
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("SGD", list(model.embed.parameters()), lr=0.1)
    assert (info.value.errors[0].path, info.value.errors[0].message) == (
        "params", "every parameter is frozen (requires_grad=False; 1 of them): nothing to optimize")


# ---------------------------------------------------------------------------------------------------
# schedulers keep each group's ratio
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("scheduler", [
    {"name": "CosineAnnealingLR", "T_max": 10},                                     # torch's class
    {"name": "sequential", "schedulers": [{"name": "LinearLR", "start_factor": 1.0, "end_factor": 1.0,
                                           "total_iters": 1}, {"name": "CosineAnnealingLR", "T_max": 10}]},
    {"name": "oneflow.CosineAnnealingLR", "T_max": 10},                             # optreg's closed form
])
def test_schedulers_scale_each_groups_own_lr(scheduler):
    model = tiny_vit()
    built = optreg.build({"optimizer": {"name": "AdamW", "lr": 1e-3, "layer_decay": {
        "rate": 0.5, "layer": "blocks.{i}.*", "before": ["cls_token", "pos_embed", "patch_embed.*"]},
        "param_groups": [{"params": "head.*", "lr_mult": 10}]}, "scheduler": scheduler}, model)
    bases = [g["lr"] for g in built.optimizer.param_groups]
    assert sorted(set(bases)) == pytest.approx([1e-3 * 0.5 ** 4, 1e-3 * 0.5 ** 3, 1e-3 * 0.5 ** 2, 1e-3 * 0.5,
                                                1e-3, 1e-2])
    offset = 1 if scheduler["name"] == "sequential" else 0
    for step in range(1, 8):
        built.optimizer.step()
        built.scheduler.step()
        t = step - offset
        factor = (1 + math.cos(math.pi * t / 10)) / 2
        for base, group in zip(bases, built.optimizer.param_groups):
            assert group["lr"] == pytest.approx(base * factor, rel=1e-9, abs=1e-15), (step, base)


def test_an_absolute_schedule_would_undo_the_group_lrs():
    errors = errors_of(lambda: optreg.build({"optimizer": {"name": "AdamW", "layer_decay": {
        "rate": 0.5, "layer": "blocks.{i}.*"}}, "scheduler": {"name": "cerebras.CosineDecayLR",
        "initial_learning_rate": 0.1, "end_learning_rate": 0.0, "total_iters": 10}}, tiny_vit()))
    assert errors == [("scheduler", "scheduler: CosineDecayLR sets an absolute lr, the same in every group, which "
                                    "would undo optimizer.layer_decay; use a schedule whose values are factors of "
                                    "each group's lr (torch, OneFlow, HF, timm)")]


@pytest.mark.parametrize("rate", [0.5, 1.0])
def test_validate_without_a_model_refuses_an_absolute_schedule_over_layer_decay_as_build_does(rate):
    """A layer_decay below 1 gives some layer an lr of its own on any model it fits, so validation without a model
    (`optreg validate` without --model) gives build's verdict (it said ok, and build refused); at rate 1 no lr
    changes and both accept."""
    from optreg.config.experiment import validate_experiment

    config = {"optimizer": {"name": "AdamW", "layer_decay": {"rate": rate, "layer": "blocks.{i}.*"}},
              "scheduler": {"name": "cerebras.CosineDecayLR", "initial_learning_rate": 0.1, "end_learning_rate": 0.0,
                            "total_iters": 10}}
    if rate == 1.0:
        validate_experiment(config)
        optreg.build(config, tiny_vit())
        return
    expected = [("scheduler", "scheduler: CosineDecayLR " + UNDO.format("optimizer.layer_decay"))]
    assert errors_of(lambda: validate_experiment(config)) == expected
    assert errors_of(lambda: optreg.build(config, tiny_vit())) == expected


UNDO = ("sets an absolute lr, the same in every group, which would undo {}; use a schedule whose values are factors "
        "of each group's lr (torch, OneFlow, HF, timm)")
ABSOLUTE_SCHEDULES = [
    ("cerebras.CosineDecayLR", {"initial_learning_rate": 1e-3, "end_learning_rate": 0.0, "total_iters": 4},
     "CosineDecayLR"),
    ("mindspore.CosineDecayLR", {"min_lr": 0.0, "max_lr": 1e-3, "decay_steps": 4}, "CosineDecayLR"),
    ([{"name": "LinearLR", "total_iters": 2}, {"name": "cerebras.CosineDecayLR", "initial_learning_rate": 1e-3,
                                                "end_learning_rate": 0.0, "total_iters": 4}], {}, "Sequential"),
    ("OneCycleLR", {"max_lr": 1e-3, "total_steps": 4}, "OneCycleLR"),   # torch's, from max_lr / div_factor
    ("CyclicLR", {"base_lr": 1e-4, "max_lr": 1e-3, "step_size_up": 2}, "CyclicLR"),   # torch's, from base_lr
]


@pytest.mark.parametrize("schedule, options, name", ABSOLUTE_SCHEDULES,
                         ids=["cerebras", "mindspore", "sequential", "torch OneCycleLR", "torch CyclicLR"])
def test_configure_lr_scheduler_refuses_an_absolute_schedule_over_lr_mult_groups(schedule, options, name):
    """configure_lr_scheduler on an optimizer configure_optimizer built with an lr_mult group refuses an absolute
    schedule as build refuses it (one check: build.absolute_over_scaled), at the key the call was given; the groups
    keep their lrs. Before, the schedule set one lr (0.001) in both groups and the 10x ratio was gone silently."""
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    opt = optreg.configure_optimizer("adamw", model, lr=1e-3, param_groups=[{"params": "0.*", "lr_mult": 10}])
    assert errors_of(lambda: optreg.configure_lr_scheduler(opt, schedule, **options)) == [
        ("scheduler", "scheduler: " + name + " " + UNDO.format("param_groups[0].lr_mult"))]
    assert [g["lr"] for g in opt.param_groups] == pytest.approx([1e-2, 1e-3])
    # a factor schedule scales each group's own lr, as before
    scheduler = optreg.configure_lr_scheduler(opt, "LinearLR", start_factor=0.5, total_iters=2)
    assert [g["lr"] for g in opt.param_groups] == pytest.approx([5e-3, 5e-4])
    assert scheduler is not None


def test_an_absolute_schedule_of_per_group_lists_over_lr_mult_groups_is_refused_as_what_it_is():
    """CyclicLR / OneCycleLR given per-group lists set each group's lr from its entry, which replaces the lr an
    lr_mult gives as one lr for all would: still refused (the lists would undo the multiplier), with a message that
    names the lists, in build, validate and configure_lr_scheduler alike. It said the schedule set "the same" lr
    "in every group", which a list does not."""
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    rules = [{"params": "0.*", "lr_mult": 0.5}]
    end = ("which would undo {}; give each group's lr in the {} alone, or use a schedule whose values are factors of "
           "each group's lr (torch, OneFlow, HF, timm)")
    for schedule, said in (({"name": "CyclicLR", "base_lr": [0.01, 0.02], "max_lr": [0.1, 0.2], "step_size_up": 2},
                            "CyclicLR sets an absolute lr in each group, from its per-group lists base_lr and max_lr, "
                            + end.format("{}", "lists")),
                           ({"name": "OneCycleLR", "max_lr": [0.1, 0.2], "total_steps": 4},
                            "OneCycleLR sets an absolute lr in each group, from its per-group list max_lr, " +
                            end.format("{}", "list"))):
        config = {"optimizer": {"name": "SGD", "lr": 0.02, "momentum": 0.9, "param_groups": rules},
                  "scheduler": schedule}
        expected = [("scheduler", "scheduler: " + said.format("optimizer.param_groups[0].lr_mult"))]
        assert errors_of(lambda: optreg.build(config, model)) == expected
        assert errors_of(lambda: optreg.config.experiment.validate_experiment(config)) == expected   # no model
        opt = optreg.configure_optimizer("SGD", model, lr=0.02, momentum=0.9, param_groups=rules)
        assert errors_of(lambda: optreg.configure_lr_scheduler(opt, dict(schedule))) == [
            ("scheduler", "scheduler: " + said.format("param_groups[0].lr_mult"))]
        assert [g["lr"] for g in opt.param_groups] == pytest.approx([0.01, 0.02])


def test_a_number_as_the_lr_schedule_is_checked_as_the_constant_schedule_it_is():
    """configure_lr_scheduler(opt, 0.5) sets every group's lr (Cerebras' convention): it is the schedule that sets
    the lr itself, and the checks of such schedules read it (build.absolute_over_scaled, lint.group_lrs_replaced),
    as they read {name: cerebras.ConstantLR, learning_rate: 0.5}, a config's way to say it. Over groups whose lrs
    lr_mult or a composite's routing set it is refused at the argument, the lrs kept; over groups with lrs of their
    own (a rule's lr, torch-style groups) the lr is set with the warning that it replaces them. Before, every group's
    lr became 0.5 without a word."""
    import warnings

    from optreg.config.experiment import validate_experiment
    from optreg.errors import ConfigWarning

    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    scaled = optreg.configure_optimizer("adamw", model, lr=1e-3, param_groups=[{"params": "0.*", "lr_mult": 10}])
    composite = optreg.configure_optimizer("adamw", model, lr=1e-3, param_groups=[
        {"params": "0.*", "optimizer": {"name": "SGD", "lr": 0.1}}])
    for optimizer, key, lrs in ((scaled, "param_groups[0].lr_mult", [1e-2, 1e-3]),
                                (composite, "param_groups[0].optimizer.lr", [0.1, 1e-3])):
        assert errors_of(lambda: optreg.configure_lr_scheduler(optimizer, 0.5)) == [
            ("learning_rate", "learning_rate: a number (0.5) " + UNDO.format(key))]
        assert [g["lr"] for g in optimizer.param_groups] == pytest.approx(lrs)
    ruled = optreg.configure_optimizer("adamw", model, lr=1e-3, param_groups=[{"params": "0.*", "lr": 0.1}])
    by_hand = torch.optim.SGD([{"params": model[0].parameters(), "lr": 0.1}, {"params": model[1].parameters()}],
                              lr=1e-3)
    for optimizer in (ruled, by_hand):
        with pytest.warns(ConfigWarning) as caught:
            assert optreg.configure_lr_scheduler(optimizer, 0.5) is None
        assert [str(w.message) for w in caught] == [
            "param_groups[0].lr: a number (0.5) sets every group's lr itself, which replaces this "
            "group's lr 0.1, and those of 1 more (param_groups[1]) at every step; drop it, or use a schedule whose "
            "values are factors of each group's lr (torch, OneFlow, HF, timm)"]
        assert [g["lr"] for g in optimizer.param_groups] == [0.5, 0.5]
    one_lr = torch.optim.SGD(model.parameters(), lr=0.1)   # one lr in every group: nothing to replace
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert optreg.configure_lr_scheduler(one_lr, 0.5) is None
    assert [g["lr"] for g in one_lr.param_groups] == [0.5]
    # a config: the constant schedule is refused over lr_mult as the number is; a number is no schedule there
    config = {"optimizer": {"name": "AdamW", "lr": 1e-3, "param_groups": [{"params": "0.*", "lr_mult": 10}]}}
    constant = {**config, "scheduler": {"name": "cerebras.ConstantLR", "learning_rate": 0.5}}
    assert errors_of(lambda: optreg.build(constant, model)) == [
        ("scheduler", "scheduler: ConstantLR " + UNDO.format("optimizer.param_groups[0].lr_mult"))]
    assert errors_of(lambda: validate_experiment({**config, "scheduler": 0.5})) == [
        ("scheduler", "scheduler: a number is no schedule in a config: give it as the optimizer's lr, which the "
                      "groups scale, or as the schedule that sets every group's lr to it, {name: cerebras.ConstantLR, "
                      "learning_rate: 0.5} (what configure_lr_scheduler(optimizer, 0.5) does)")]


def test_the_optimizer_of_build_and_a_composite_keep_the_keys_that_scaled_their_lrs():
    """An optimizer from build() without a scheduler (the config's paths) and a composite (a rule's own optimizer
    lr) refuse an absolute schedule from configure_lr_scheduler too; an optimizer whose groups no key scaled (the
    cerebras dialect's bias / norm grouping changes weight decay only) takes it."""
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    cosine = {"initial_learning_rate": 1e-3, "end_learning_rate": 0.0, "total_iters": 4}
    built = optreg.build({"optimizer": {"name": "AdamW", "lr": 1e-3, "param_groups": [
        {"params": "0.*", "lr_mult": 10}]}}, model)
    assert errors_of(lambda: optreg.configure_lr_scheduler(built.optimizer, "cerebras.CosineDecayLR", **cosine)) == [
        ("scheduler", "scheduler: CosineDecayLR " + UNDO.format("optimizer.param_groups[0].lr_mult"))]
    composite = optreg.configure_optimizer("adamw", model, lr=1e-3, param_groups=[
        {"params": "0.*", "optimizer": {"name": "SGD", "lr": 0.1}}])
    assert errors_of(lambda: optreg.configure_lr_scheduler(composite, "cerebras.CosineDecayLR", **cosine)) == [
        ("scheduler", "scheduler: CosineDecayLR " + UNDO.format("param_groups[0].optimizer.lr"))]
    assert [g["lr"] for g in composite.param_groups] == pytest.approx([0.1, 1e-3])
    plain = optreg.configure_optimizer("cerebras.AdamW", model, lr=1e-2)
    optreg.configure_lr_scheduler(plain, "cerebras.CosineDecayLR", **cosine)
    assert [g["lr"] for g in plain.param_groups] == pytest.approx([1e-3] * len(plain.param_groups))


# ---------------------------------------------------------------------------------------------------
# dialects, Python, Hydra overrides
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["mindspore.Adam", "mindspore.SGD", "cerebras.AdamW", "oneflow.AdamW"])
def test_every_dialect_takes_the_keys(name):
    model = tiny_vit()
    lr_key = "learning_rate" if name.startswith("mindspore") else "lr"
    opt = optreg.configure_optimizer(name, model, **{lr_key: 1e-3}, weight_decay=0.05, no_weight_decay=True,
                                     layer_decay={"rate": 0.75, "layer": "blocks.{i}.*",
                                                  "before": ["cls_token", "pos_embed", "patch_embed.*"]},
                                     param_groups=[{"params": "head.*", "lr_mult": 10}])
    assert_values(per_name(opt, model), vit_expected())
    loss = model(torch.randn(2, 4, 12)).square().sum()
    loss.backward()
    opt.step()                                                     # the groups step


def test_mindspore_scales_a_per_step_lr_list_and_refuses_ftrl_group_lrs():
    model = Net()
    opt = optreg.configure_optimizer("mindspore.SGD", model, learning_rate=[0.1, 0.2],
                                     param_groups=[{"params": "fc.*", "lr_mult": 0.5}])
    assert opt.param_groups[0]["lr"] == pytest.approx(0.05) and opt.param_groups[1]["lr"] == pytest.approx(0.1)
    errors = errors_of(lambda: optreg.build({"optimizer": {"name": "mindspore.FTRL", "layer_decay": {
        "rate": 0.5, "layer": "blocks.{i}.*"}}}, tiny_vit()))
    assert errors == [("optimizer.layer_decay", "optimizer.layer_decay: FTRL does not support per-group learning "
                                                "rates")]
    errors = errors_of(lambda: optreg.build({"optimizer": {"name": "mindspore.FTRL", "param_groups": [
        {"params": "head.*", "lr_mult": 2}]}}, tiny_vit()))
    assert errors == [("optimizer.param_groups[0].lr_mult", "optimizer.param_groups[0].lr_mult: FTRL does not "
                                                            "support per-group learning rates")]


def test_python_yaml_and_hydra_overrides_agree():
    from optreg.cli import _load

    model = tiny_vit()
    text = VIT_YAML.read_text()
    python = optreg.configure_optimizer("AdamW", model, lr=1e-3, weight_decay=0.05, no_weight_decay=True,
                                        layer_decay={"rate": 0.75, "layer": "blocks.{i}.*",
                                                     "before": ["cls_token", "pos_embed", "patch_embed.*"]},
                                        param_groups=[{"params": "head.*", "lr_mult": 10}])
    assert per_name(python, model) == per_name(optreg.build(text, model).optimizer, model)
    experiment = _load(str(VIT_YAML), ["optimizer.layer_decay.rate=0.5", "optimizer.param_groups.0.lr_mult=2",
                                       "~optimizer.no_weight_decay"])
    values = per_name(optreg.build(experiment, model).optimizer, model)
    assert values["blocks.0.qkv.bias"] == (1e-3 * 0.5 ** 3, 0.05) and values["head.bias"] == (2e-3, 0.05)
    experiment = _load(str(REPO / "examples" / "quickstart.yaml"),
                       ["+optimizer.no_weight_decay=true", "+optimizer.layer_decay={rate: 0.5, layer: 'blocks.{i}.*'}",
                        "~optimizer.param_groups", "~scheduler"])
    # no `before`: cls_token, pos_embed and patch_embed are layer L + 1, as the head is
    assert_values(per_name(optreg.build(experiment, model).optimizer, model),
                  vit_expected(base=3e-3, rate=0.5, head_mult=1.0) | {
                      "cls_token": (3e-3, 0.0), "pos_embed": (3e-3, 0.0), "patch_embed.weight": (3e-3, 0.05),
                      "patch_embed.bias": (3e-3, 0.0)})


# ---------------------------------------------------------------------------------------------------
# bad inputs: exact paths and messages
# ---------------------------------------------------------------------------------------------------
def test_unknown_module_class_has_path_position_and_did_you_mean():
    text = ("optimizer:\n  name: AdamW\n  param_groups:\n    - {params: 'head.*', lr_mult: 2}\n"
            "    - modules: [Linear, LayerNorn]\n      weight_decay: 0\n")
    with pytest.raises(ConfigError) as info:
        optreg.build(text, tiny_vit())
    (error,) = info.value.errors
    assert error.path == "optimizer.param_groups[1].modules[1]" and error.suggestion == "LayerNorm"
    assert (error.location.line, error.location.column) == (5, 25)
    assert error.message == ("no module of the model is a LayerNorn (its module types: 'Block', 'LayerNorm', "
                             "'Linear', 'Mlp', 'ModuleList', 'TinyViT')")


def opt(model=None, **kwargs):
    return lambda: optreg.configure_optimizer("AdamW", model if model is not None else tiny_vit(), **kwargs)


@pytest.mark.parametrize("call, expected", [
    (opt(param_groups=[{"modules": "Dropout"}]), [
        ("param_groups[0].modules", "no module of the model is a Dropout (its module types: 'Block', 'LayerNorm', "
                                    "'Linear', 'Mlp', 'ModuleList', 'TinyViT')")]),
    (opt(param_groups=[{"modules": "Mlp"}]), [("param_groups[0].modules", "no parameter is owned directly by a "
                                                                           "Mlp module")]),
    (opt(param_groups=[{"params": "head.*", "modules": "LayerNorm"}]), [
        ("param_groups[0]", "no parameter is selected by all of params, modules together")]),
    (opt(param_groups=[{"max_ndim": 0}]), [("param_groups[0].max_ndim", "no parameter has at most 0 dimensions")]),
    (opt(param_groups=[{"max_ndim": True, "lr_mult": -1, "modules": 3}]), [
        ("param_groups[0].modules", "expected a class name or a list of them, got 3"),
        ("param_groups[0].max_ndim", "expected a number, got boolean true"),
        ("param_groups[0].lr_mult", "must be >= 0, got -1")]),
    (opt(param_groups=[{"params": "head.*", "lr": 0.1, "lr_mult": 2}]), [
        ("param_groups[0].lr_mult", "both 'lr' and 'lr_mult' are given; keep one (lr_mult multiplies the "
                                    "optimizer's lr)")]),
    (opt(param_groups=[{"lr_mult": 2}]), [
        ("param_groups[0].params", "required: a glob pattern or list of patterns over parameter names (or a modules "
                                   "/ max_ndim selector)")]),
    (opt(layer_decay={"rate": 0.5, "layer": "blocks.*"}), [
        ("layer_decay.layer", "must contain '{i}' once, where the layer index is (e.g. 'blocks.{i}.*'), got "
                              "'blocks.*'")]),
    (opt(layer_decay={"rate": 0.5, "layer": "block.{i}.*"}), [
        ("layer_decay.layer", "pattern 'block.{i}.*' matches no parameter (the closest name is "
                              "'blocks.0.qkv.bias')")]),
    (opt(layer_decay={"rate": 0, "layer": "blocks.{i}.*"}), [("layer_decay.rate", "must be > 0, got 0")]),
    (opt(layer_decay={"rate": 1.5, "layer": "blocks.{i}.*"}), [("layer_decay.rate", "must be <= 1, got 1.5")]),
    (opt(layer_decay={"rate": 0.5, "layer": "blocks.{i}.*", "before": ["pos_embd"]}), [
        ("layer_decay.before[0]", "pattern 'pos_embd' matches no parameter (did you mean 'pos_embed'?)")]),
    (opt(layer_decay={"rate": 0.5, "layer": "blocks.{i}.*", "bfore": []}), [
        ("layer_decay.bfore", "unknown key of layer_decay (expected rate, layer, before) (did you mean "
                              "'before'?)")]),
    (opt(layer_decay=0.75), [   # timm's create_optimizer_v2(layer_decay=0.75)
        ("layer_decay", "expected a mapping {rate, layer, before}, got 0.75: timm's number is the rate, and the "
                        "layers, which timm reads from the model's group_matcher, are a pattern here (e.g. {rate: "
                        "0.75, layer: 'blocks.{i}.*'})")]),
    (opt(layer_decay=True), [("layer_decay", "expected a mapping, got bool True")]),
    (opt(no_weight_decay="yes"), [("no_weight_decay", "expected true or false, got str 'yes'")]),
    (lambda: optreg.configure_optimizer("Rprop", tiny_vit(), no_weight_decay=True,
                                        param_groups=[{"params": "head.*", "decay_mult": 0}]), [
        ("no_weight_decay", "torch.Rprop has no weight_decay option for no_weight_decay to set"),
        ("param_groups[0].decay_mult", "torch.Rprop has no weight_decay option for decay_mult to scale")]),
    (lambda: optreg.configure_optimizer("AdamW", list(tiny_vit().named_parameters()),
                                        param_groups=[{"modules": "LayerNorm"}]), [
        ("param_groups[0].modules", "modules selects by the class of the module that owns a parameter: pass the "
                                    "Module itself, not named_parameters() or tensors")]),
    (lambda: optreg.configure_optimizer("AdamW", list(tiny_vit().parameters()),
                                        layer_decay={"rate": 0.5, "layer": "blocks.{i}.*"}), [
        ("layer_decay", "layer_decay needs parameter names: pass the Module or model.named_parameters(), not bare "
                        "tensors")]),
    (lambda: optreg.configure_optimizer("AdamW", [{"params": list(tiny_vit().parameters())}], no_weight_decay=True), [
        ("no_weight_decay", "no_weight_decay needs the Module or named_parameters(), not torch-style group dicts "
                            "(they carry their own options)")]),
    # a rule's keys in a torch-style dict: not "unknown option (did you mean 'lr_mult'?)", the key itself
    *[(lambda name=name, key=key: optreg.configure_optimizer(name, [{"params": [torch.zeros(2, requires_grad=True)],
                                                                     key: 2}]), [
        (f"params[0].{key}", "a key of a param_groups rule, not of a torch-style group dict: give the Module or "
                             "named_parameters() and the rule in param_groups")])
      for name, key in (("AdamW", "lr_mult"), ("mindspore.Adam", "max_ndim"))],
    (lambda: optreg.configure_optimizer("AdamW", tiny_vit().requires_grad_(False)), [
        ("params", "every parameter is frozen (requires_grad=False; 44 of them): nothing to optimize")]),
])
def test_bad_inputs(call, expected):
    assert [(p, m.split(": ", 1)[1] if ": " in m else m) for p, m in errors_of(call)] == expected


def test_a_layer_decay_pattern_is_reported_beside_a_rule_s_error():
    """Every problem at once: a misspelt rule pattern does not hide the layer_decay patterns that match nothing."""
    text = ("optimizer:\n  name: AdamW\n  lr: 1.0e-3\n  param_groups:\n    - params: ['*.bais']\n      lr_mult: 2\n"
            "  layer_decay: {rate: 0.75, layer: 'block.{i}.*', before: [cls_tokn]}\n")
    with pytest.raises(ConfigError) as info:
        optreg.build(text, tiny_vit())
    assert [(e.path, e.location.line, e.location.column, e.suggestion) for e in info.value.errors] == [
        ("optimizer.param_groups[0].params[0]", 5, 16, "*.bias"),
        ("optimizer.layer_decay.before[0]", 7, 60, "cls_token"),
        ("optimizer.layer_decay.layer", 7, 29, None)]


def test_a_broken_no_weight_decay_method_is_a_config_error():
    class Bad(Net):
        def no_weight_decay(self):
            return 3

    assert errors_of(lambda: optreg.configure_optimizer("AdamW", Bad(), no_weight_decay=True)) == [
        ("no_weight_decay", "no_weight_decay: the model's no_weight_decay() must return parameter names, got 3")]


def test_load_config_checks_the_new_keys_without_a_model():
    with pytest.raises(ConfigError) as info:
        optreg.load_config("optimizer:\n  name: Rprop\n  no_weight_decay: true\n  layer_decay: {rate: 2, layer: x}\n"
                           "  param_groups:\n    - {max_ndim: -1, lr_mult: 0.5}\n")
    assert [(e.path, e.message, e.location.line) for e in info.value.errors] == [
        ("optimizer.layer_decay.rate", "must be <= 1, got 2", 4),
        ("optimizer.layer_decay.layer", "must contain '{i}' once, where the layer index is (e.g. 'blocks.{i}.*'), "
                                        "got 'x'", 4),
        ("optimizer.no_weight_decay", "torch.Rprop has no weight_decay option for no_weight_decay to set", 3),
        ("optimizer.param_groups[0].max_ndim", "must be >= 0, got -1", 6),
    ]


# ---------------------------------------------------------------------------------------------------
# JSON Schema
# ---------------------------------------------------------------------------------------------------
def test_json_schema_has_the_keys_from_their_declarations():
    from optreg.core.groups import RULE_KEYS, settings_table

    schema = optreg.json_schema()
    adamw = next(m for m in schema["properties"]["optimizer"]["anyOf"] if m["title"] == "torch.AdamW")
    def own(node: dict) -> dict:
        """A value's own schema, beside the `${...}` interpolation (and numeric string) the schema takes for any value
        (json_schema._or_interpolation); one that every optimizer shares, its definition (json_schema._shared)."""
        mine = next(b for b in node["anyOf"] if not b.get("$ref", "").startswith(
            ("#/definitions/interpolation", "#/definitions/numeric_string"))) if "anyOf" in node else node
        return schema["definitions"][mine["$ref"].split("/")[-1]] if "$ref" in mine else mine

    items = own(adamw["properties"]["param_groups"])["items"]
    rule = items["anyOf"][0]   # a rule of AdamW's groups (the other: a composite's rule, its own optimizer)
    assert own(items["anyOf"][1])["required"] == ["optimizer"]
    for key, declared in RULE_KEYS.items():
        assert own(rule["properties"][key])["description"] == declared.doc
    for key, declared in settings_table().items():   # decay rules included (modelzoo_groups, hf_decay_groups)
        assert own(adamw["properties"][key])["description"] == declared.doc
    assert own(rule["properties"]["max_ndim"])["minimum"] == 0 and own(rule["properties"]["lr_mult"])["minimum"] == 0
    layer_decay = own(adamw["properties"]["layer_decay"])
    assert layer_decay["required"] == ["rate", "layer"] and layer_decay["additionalProperties"] is False
    rate = own(layer_decay["properties"]["rate"])
    assert rate["exclusiveMinimum"] == 0 and rate["maximum"] == 1
    validator = jsonschema.Draft7Validator(schema)
    for path in (VIT_YAML, RESNET_YAML):
        assert not list(validator.iter_errors(optreg.load_config(path)
                                              and __import__("yaml").safe_load(path.read_text())))
    adamw_only = jsonschema.Draft7Validator({**adamw, "definitions": schema["definitions"]})
    rule_without_selector = {"name": "AdamW", "param_groups": [{"lr_mult": 2}]}
    assert [e.validator for e in adamw_only.iter_errors(rule_without_selector)] == ["anyOf"]
    rate_above_one = {"name": "AdamW", "layer_decay": {"rate": 1.5, "layer": "blocks.{i}.*"}}
    (error,) = adamw_only.iter_errors(rate_above_one)   # one error, at layer_decay: the rate is above its maximum
    assert list(error.path) == ["layer_decay"]
    assert jsonschema.exceptions.best_match([error]).message == "1.5 is greater than the maximum of 1"
    assert not list(adamw_only.iter_errors({"name": "AdamW", "param_groups": [{"modules": ["LayerNorm"],
                                                                                "max_ndim": 1, "decay_mult": 0}]}))


WD_SCHEDULE = {"name": "cerebras.CosineDecayWD", "initial_val": 0.1, "end_val": 0.01, "total_iters": 4}


@pytest.mark.parametrize("settings, undone", [
    ({"no_weight_decay": True}, "no_weight_decay"),
    ({"param_groups": [{"params": "*.bias", "decay_mult": 0}]}, "param_groups[0].decay_mult"),
], ids=["no_weight_decay", "decay_mult"])
def test_an_absolute_weight_decay_schedule_would_undo_the_group_weight_decays(settings, undone):
    """As an absolute lr schedule over lr_mult groups: a Cerebras weight-decay schedule sets one weight decay in every
    group, so over the groups no_weight_decay or decay_mult gave 0 it would decay the biases and norms; build and
    configure_lr_scheduler refuse it. A factor schedule of the weight decay (key: weight_decay) keeps their 0, and
    the cerebras dialect's own bias / norm grouping takes Cerebras' schedules as Cerebras does."""
    model = nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4), nn.Linear(4, 2))
    optimizer = {"name": "AdamW", "lr": 1e-3, "weight_decay": 0.1, **settings}
    message = ("scheduler: CosineDecayWD sets an absolute weight decay, the same in every group, which would undo {}; "
               "use a schedule whose values are factors of each group's weight decay (key: weight_decay on a torch, "
               "OneFlow, HF or timm schedule)")
    assert errors_of(lambda: optreg.build({"optimizer": optimizer, "scheduler": WD_SCHEDULE}, model)) == [
        ("scheduler", message.format("optimizer." + undone))]
    options = {k: v for k, v in optimizer.items() if k != "name"}
    opt = optreg.configure_optimizer("AdamW", model, **options)
    assert errors_of(lambda: optreg.configure_lr_scheduler(opt, WD_SCHEDULE)) == [
        ("scheduler", message.format(undone))]
    factor = optreg.build({"optimizer": optimizer, "scheduler": {"name": "oneflow.CosineAnnealingLR", "T_max": 4,
                                                                 "key": "weight_decay"}}, model)
    factor.optimizer.step()
    factor.scheduler.step()
    assert 0.0 in [g["weight_decay"] for g in factor.optimizer.param_groups]
    optreg.build({"optimizer": {"name": "cerebras.AdamW", "lr": 1e-3, "weight_decay": 0.1},
                  "scheduler": WD_SCHEDULE}, model)

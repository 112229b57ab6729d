"""The dialects through the public entry points: YAML, configure_* and build, with their special forms."""

from __future__ import annotations

import math
import textwrap

import pytest
import torch
import yaml
from torch_cases import make_model, make_sgd

from optreg import ConfigError
import optreg


def build(text: str, model=None):
    return optreg.build(textwrap.dedent(text), model if model is not None else make_model())


def lrs(scheduler, optimizer, steps: int, group: int = 0) -> list[float]:
    out = []
    for _ in range(steps):
        optimizer.step()
        scheduler.step()
        out.append(optimizer.param_groups[group]["lr"])
    return out


def test_unknown_key_names_the_dialect_that_has_it():
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("AdamW", make_model(), correct_bias=False)
    assert "'correct_bias' is not an option of torch AdamW; cerebras.AdamW has it" in str(info.value)


@pytest.mark.parametrize("name, key, value, owner", [("AdamW", "clip_grad_max_norm", 1.0, "oneflow.AdamW"),
                                                     ("Adam", "grad_centralization", True, "mindspore.Adam")])
def test_unknown_key_names_the_dialect_whose_groups_take_it(name, key, value, owner):
    """A key of another dialect's groups (a row's group_keys, a dialect's binder keys) is named with that dialect,
    at the optimizer and in a param_groups rule, in validate, build and configure_optimizer alike."""
    message = f"{key!r} is not an option of torch {name}; {owner} takes it as a param_groups key"
    rule = {"param_groups": [{"params": "*", key: value}]}
    for where, spec in [(key, {key: value}), (f"param_groups[0].{key}", rule)]:
        config = {"optimizer": {"name": name, "lr": 0.1, **spec}}
        for call in (lambda: optreg.load_config(yaml.safe_dump(config)), lambda: optreg.build(config, make_model()),
                     lambda: optreg.configure_optimizer(name, make_model(), lr=0.1, **spec)):
            with pytest.raises(ConfigError) as info:
                call()
            assert [(i.path.removeprefix("optimizer."), i.message) for i in info.value.errors] == [(where, message)]


@pytest.mark.parametrize("name, key, value, rule", [
    ("oneflow.AdamW", "clip_grad_max_norm", 1.0, "{params: '*', clip_grad_max_norm: 1.0}"),
    ("oneflow.SGD", "clip_grad_norm_type", 2.0, "{params: '*', clip_grad_norm_type: 2.0}"),
    ("mindspore.Adam", "grad_centralization", True, "{params: '*', grad_centralization: True}"),
    ("mindspore.Adam", "order_params", ["fc2.weight", "fc2.bias", "fc1.weight", "fc1.bias"],
     "{order_params: ['fc2.weight', 'fc2.bias', 'fc1.weight', 'fc1.bias']}")])
def test_a_key_of_the_optimizer_s_own_groups_beside_its_options_says_the_rule_that_gives_it(name, key, value, rule):
    """A group key of the optimizer's own dialect (OneFlow's row keys, MindSpore's binder keys) given beside its
    options was 'unknown option of oneflow.AdamW': it is that optimizer's param_groups key, and the rule written
    in the message (over every parameter; MindSpore's order_params dict alone) is one that builds, in validate,
    build and configure_optimizer alike."""
    message = f"{key!r} is a param_groups key of {name}, not an option: give it in a rule, param_groups: [{rule}]"
    options = {"lr": 0.1} if name.startswith("oneflow") else {}
    config = {"optimizer": {"name": name, **options, key: value}}
    for call in (lambda: optreg.load_config(yaml.safe_dump(config)), lambda: optreg.build(config, make_model()),
                 lambda: optreg.configure_optimizer(name, make_model(), **options, **{key: value})):
        with pytest.raises(ConfigError) as info:
            call()
        assert [(i.path.removeprefix("optimizer."), i.message) for i in info.value.errors] == [(key, message)]
    written = yaml.safe_load(message.rpartition("give it in a rule, ")[2])
    optreg.build({"optimizer": {"name": name, **options, **written}}, make_model())


def test_model_zoo_s_mapping_of_group_scales_beside_the_options_says_a_rule_per_group():
    """Model Zoo's `adjust_learning_rate: {group: scale}` written beside a cerebras optimizer's options in optreg's
    form: a rule per group with that group's scale, not one rule over every parameter holding the whole mapping
    (which no rule takes)."""
    config = {"optimizer": {"name": "cerebras.AdamW", "lr": 0.1,
                            "adjust_learning_rate": {"decoder": 0.5, "embed": 0.1, "head": 2}}}
    with pytest.raises(ConfigError) as info:
        optreg.load_config(yaml.safe_dump(config))
    assert [(i.path, i.message) for i in info.value.errors] == [(
        "optimizer.adjust_learning_rate",
        "'adjust_learning_rate' is a param_groups key of cerebras.AdamW, not an option: give it in a rule that "
        "selects each group's parameters, param_groups: [{params: <decoder's parameters>, adjust_learning_rate: "
        "0.5}, {params: <embed's parameters>, adjust_learning_rate: 0.1} and 1 more]")]


@pytest.mark.parametrize("key, hint", [("beta1", "betas: [beta1, beta2]"), ("weight_decay_rate", "weight_decay"),
                                       ("eps1", "eps: [eps1, eps2]")])
def test_cerebras_legacy_keys_are_refused_with_the_new_spelling(key, hint):
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("cerebras.AdamW", make_model(), **{key: 0.1})
    item = info.value.errors[0]
    assert item.path == key and f"write {hint} instead" in item.message


def test_cerebras_unknown_keys_warn_and_drop():
    with pytest.warns(UserWarning, match="max_gradient_norm"):
        o = optreg.configure_optimizer("AdamW", make_model(), dialect="cerebras", unknown_keys="warn",
                                       max_gradient_norm=1.0, lr=0.01)
    assert o.defaults["lr"] == 0.01


def test_cerebras_legacy_learning_rate_list_is_a_sequential_of_absolute_stages():
    o = make_sgd(make_model())
    s = optreg.configure_lr_scheduler(o, [
        {"scheduler": "Linear", "initial_learning_rate": 0.0, "end_learning_rate": 0.1, "steps": 10},
        {"scheduler": "CosineDecay", "initial_learning_rate": 0.1, "end_learning_rate": 0.0, "steps": 20}])
    got = [o.param_groups[1]["lr"]] + lrs(s, o, 30, group=1)   # absolute: every group gets the same value
    expected = [0.01 * t for t in range(10)] + [0.5 * 0.1 * (1 + math.cos(math.pi * t / 20)) for t in range(20)] + [0]
    assert got == pytest.approx(expected, rel=1e-6, abs=1e-15)   # Cerebras computes LinearLR in float32


def test_cerebras_current_form_in_yaml_builds_the_same_schedule():
    built = build("""
        dialect: cerebras
        optimizer: {name: SGD, lr: 0.1, momentum: 0.9}
        scheduler:
          SequentialLR:
            schedulers:
              - LinearLR: {initial_learning_rate: 0.0, end_learning_rate: 0.1, total_iters: 10}
              - CosineDecayLR: {initial_learning_rate: 0.1, end_learning_rate: 0.0, total_iters: 20}
        """)
    got = lrs(built.scheduler, built.optimizer, 30)
    assert got[9] == pytest.approx(0.1) and got[-1] == pytest.approx(0.0, abs=1e-15)


def test_cerebras_sequential_stages_may_jump():
    opt = make_sgd(make_model())
    sched = optreg.configure_lr_scheduler(opt, {"SequentialLR": {"schedulers": [
        {"LinearLR": {"initial_learning_rate": 0.0, "end_learning_rate": 0.1, "total_iters": 10}},
        {"CosineDecayLR": {"initial_learning_rate": 0.2, "end_learning_rate": 0.0, "total_iters": 20}}]}})
    got = lrs(sched, opt, 11)
    assert got[8] == pytest.approx(0.09) and got[9] == pytest.approx(0.2)   # steps 9 and 10: the jump


def test_generic_sequential_with_torch_stages_is_torch_and_with_restart_global_is_the_engine():
    o1, o2 = make_sgd(make_model()), make_sgd(make_model())
    stages = [{"name": "LinearLR", "start_factor": 0.1, "total_iters": 10},
              {"name": "CosineAnnealingLR", "T_max": 40}]
    local = optreg.configure_lr_scheduler(o1, {"name": "sequential", "schedulers": stages})
    glob = optreg.configure_lr_scheduler(o2, {"name": "sequential", "schedulers": stages, "restart": "global"})
    assert isinstance(local, torch.optim.lr_scheduler.SequentialLR)
    assert type(glob).__name__ == "ScheduleLR"
    got = lrs(glob, o2, 30)
    cos = [0.1 * 0.5 * (1 + math.cos(math.pi * t / 40)) for t in range(1, 31)]
    assert got[10:] == pytest.approx(cos[10:], rel=1e-14)      # the cosine sees the global step


def test_engine_schedule_can_drive_weight_decay_from_yaml():
    built = build("""
        optimizer: {name: AdamW, lr: 0.01, weight_decay: 0.1}
        scheduler: {name: hf.linear, num_warmup_steps: 0, num_training_steps: 10, key: weight_decay}
        """)
    wds = []
    for _ in range(5):
        built.optimizer.step()
        built.scheduler.step()
        wds.append(built.optimizer.param_groups[0]["weight_decay"])
    assert wds == pytest.approx([0.09, 0.08, 0.07, 0.06, 0.05], rel=1e-12)
    assert built.optimizer.param_groups[0]["lr"] == 0.01


def test_warmup_fraction_needs_total_steps():
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(make_sgd(make_model()), {"name": "hf.cosine", "num_warmup_steps": 0.1})
    assert "num_training_steps" in str(info.value)


def test_mindspore_lars_wraps_a_nested_optimizer_from_yaml():
    built = build("""
        dialect: mindspore
        optimizer:
          name: LARS
          coefficient: 0.001
          optimizer: {name: Momentum, learning_rate: 0.1, momentum: 0.9, weight_decay: 0.0001}
        """)
    assert type(built.optimizer).__name__ == "LARS"
    from optreg.core.registry import REGISTRY

    assert isinstance(built.optimizer.optimizer, REGISTRY.lookup("optimizer", "Momentum", "mindspore").resolve())
    assert built.optimizer.optimizer.param_groups[0]["lr"] == 0.1


def test_mindspore_lars_needs_the_inner_optimizer():
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("mindspore.LARS", make_model())
    assert info.value.errors[0].path == "optimizer"


def test_mindspore_learning_rate_schedule_from_yaml():
    """A schedule spec as MindSpore's learning_rate trains as the per-step list of the same values."""
    from torch_cases import clone_model, trajectory

    model = make_model()
    m_yaml, m_list = clone_model(model), clone_model(model)
    built = build("""
        optimizer:
          name: mindspore.Adam
          learning_rate: {name: CosineDecayLR, min_lr: 0.001, max_lr: 0.1, decay_steps: 10}
        """, m_yaml)
    table = [0.001 + 0.5 * (0.1 - 0.001) * (1 + math.cos(math.pi * min(t, 10) / 10)) for t in range(30)]
    listed = optreg.configure_optimizer("mindspore.Adam", m_list, learning_rate=table)
    a, b = trajectory(m_yaml, built.optimizer, 15), trajectory(m_list, listed, 15)
    assert all(torch.allclose(p, q, rtol=1e-6, atol=1e-9) for x, y in zip(a, b) for p, q in zip(x, y))
    assert not torch.equal(a[0][0], a[-1][0])


def test_mindspore_factor_schedule_is_refused_as_learning_rate():
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("mindspore.Adam", make_model(),
                                   learning_rate={"name": "torch.CosineAnnealingLR", "T_max": 10})
    assert "absolute schedule" in str(info.value)


def test_mindspore_order_params_rule_from_yaml():
    built = build("""
        optimizer:
          name: mindspore.Momentum
          learning_rate: 0.1
          momentum: 0.9
          param_groups:
            - {params: "*.weight", weight_decay: 0.01}
            - {params: "*.bias", learning_rate: 0.01}
            - {order_params: [fc2.bias, fc2.weight, fc1.bias, fc1.weight]}
        """)
    model_order = [p for g in built.optimizer.param_groups for p in g["params"]]
    assert [tuple(p.shape) for p in model_order] == [(3,), (3, 7), (7,), (7, 5)]


def test_mindspore_rows_take_bare_tensors():
    model = make_model()
    opt = optreg.configure_optimizer("mindspore.Adam", list(model.parameters()), learning_rate=0.1,
                                     weight_decay=0.01)
    assert sum(len(g["params"]) for g in opt.param_groups) == 4   # unnamed: every tensor decays


def test_mindspore_group_errors_carry_the_section_path_and_position():
    with pytest.raises(ConfigError) as info:
        build("""
            optimizer:
              name: mindspore.Adam
              learning_rate: 0.1
              param_groups:
                - params: "*.weight"
                  grad_centralization: 3
            """)
    item = info.value.errors[0]
    # the text starts with a newline; the own form's words for a value that is no boolean (it said 'must be a bool')
    assert (item.path, item.message, item.location.line, item.location.column) == (
        "optimizer.param_groups[0].grad_centralization", "expected true or false, got int 3", 7, 7)


def test_mindspore_group_values_given_in_python_are_said_as_the_own_form_says_them():
    """A group dict handed to configure_optimizer words a bad weight_decay or grad_centralization as the own form
    does (they said 'must be an int or float, got 'x'', 'must be a bool, got 1')."""
    model = torch.nn.Linear(2, 2)
    for key, value, message in (("weight_decay", "x", "params[0].weight_decay: expected a number, got str 'x'"),
                                ("grad_centralization", 1, "param_groups[0].grad_centralization: expected true or "
                                                           "false, got int 1")):
        with pytest.raises(ConfigError) as info:
            optreg.configure_optimizer("mindspore.Adam", [{"params": list(model.parameters()), key: value}],
                                       learning_rate=0.1)
        assert str(info.value) == message

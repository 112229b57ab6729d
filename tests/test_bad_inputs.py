"""Every bad input is a ConfigError naming the path (and the YAML position), and builds nothing."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
import pytest
import torch
from torch_cases import make_model, make_sgd

import optreg
from optreg import ConfigError
from tests.format_replay import read_and_built


def opt(name: str, **kw: Any):
    return lambda: optreg.configure_optimizer(name, make_model(), **kw)


def sched(spec: Any, optimizer: str = "SGD", **kw: Any):
    def run():
        model = make_model()
        o = make_sgd(model) if optimizer == "SGD" else getattr(torch.optim, optimizer)(model.parameters())
        return optreg.configure_lr_scheduler(o, spec, **kw)
    return run


def yaml(text: str):
    return lambda: optreg.load_config(textwrap.dedent(text))


def build(text: str, model: Any = None):
    return lambda: optreg.build(textwrap.dedent(text), model if model is not None else make_model())


def _twice():
    m = make_model()
    return optreg.configure_optimizer("SGD", [{"params": [m.fc1.weight]}, {"params": [m.fc1.weight, m.fc2.weight]}])


# (id, action, expected path, message fragment)
CASES = [
    # names
    ("unknown optimizer", opt("adamx"), "name", "did you mean 'Adamax'"),
    ("unknown optimizer far", opt("zzzz"), "name", "unknown torch optimizer 'zzzz'"),
    ("unknown scheduler", sched({"name": "cosine_anealing", "T_max": 3}), "name", "did you mean 'CosineAnnealingLR'"),
    ("scheduler name not a string", sched({"name": 3}), "name", "non-empty string"),
    ("unknown dialect", opt("Adam", dialect="tensorflow"), "dialect", "unknown dialect 'tensorflow'"),
    ("unknown prefix is a bad name", opt("tf.Adam"), "name", "unknown torch optimizer"),
    ("missing scheduler name", sched({"T_max": 3}), "name", "required"),
    ("two name keys", sched({"name": "StepLR", "type": "StepLR", "step_size": 2}), "type", "keep one"),
    # unknown keys
    ("unknown key", opt("AdamW", weigth_decay=0.1), "weigth_decay", "did you mean 'weight_decay'"),
    ("unknown key far", opt("SGD", foo=1), "foo", "unknown option of torch.SGD"),
    ("unknown scheduler key", sched({"name": "StepLR", "step_size": 3, "gama": 0.5}), "gama", "did you mean 'gamma'"),
    # types
    ("lr string", opt("Adam", lr="fast"), "lr", "expected a number, got str 'fast'"),
    ("lr yaml on", opt("Adam", lr="on"), "lr", "expected a number"),
    ("lr bool", opt("Adam", lr=True), "lr", "got boolean true"),
    ("eps bool", opt("Adam", eps=False), "eps", "got boolean false"),
    # numpy's bool_ and a bool tensor are booleans too (pydantic read them as 1.0 through __float__ / __index__)
    ("lr numpy bool", opt("oneflow.AdamW", lr=np.bool_(True)), "lr", "expected a number, got boolean np.True_"),
    ("lr_mult bool tensor", opt("AdamW", param_groups=[{"params": "*.bias", "lr_mult": torch.tensor(True)}]),
     "param_groups[0].lr_mult", "expected a number, got boolean tensor(True)"),
    ("T_max bool tensor", sched({"name": "CosineAnnealingLR", "T_max": torch.tensor(True)}), "T_max",
     "expected a number, got boolean tensor(True)"),
    ("max_norm numpy bool", lambda: optreg.build({"optimizer": {"name": "SGD", "lr": 0.1},
                                                  "clip_grad": {"max_norm": np.bool_(True)}}, make_model()),
     "clip_grad.max_norm", "expected a number, got boolean np.True_"),
    ("lr nan", opt("Adam", lr=float("nan")), "lr", "finite number"),
    ("lr inf", opt("Adam", lr=float("inf")), "lr", "finite number"),
    ("lr list", opt("Adam", lr=[0.1]), "lr", "expected a number"),
    ("amsgrad string", opt("Adam", amsgrad="yes"), "amsgrad", "expected true or false"),
    ("amsgrad int", opt("Adam", amsgrad=1), "amsgrad", "expected true or false"),
    ("betas scalar", opt("Adam", betas=0.9), "betas", "expected a list"),
    ("betas three", opt("Adam", betas=[0.9, 0.99, 0.9]), "betas", "expected 2 values, got 3"),
    # too few: the list's count, as for too many (each absent position was a 'required option is missing')
    ("betas one", opt("Adam", betas=[0.9]), "betas", "expected 2 values, got 1"),
    ("betas none", opt("AdamW", betas=[]), "betas", "expected 2 values, got 0"),
    ("step_size float", sched({"name": "StepLR", "step_size": 2.5}), "step_size", "must be an integer, got 2.5"),
    ("step_size bool", sched({"name": "StepLR", "step_size": True}), "step_size", "got boolean true"),
    # ranges
    ("lr negative", opt("SGD", lr=-0.1), "lr", "must be >= 0, got -0.1"),
    ("beta2 one", opt("Adam", betas=[0.9, 1.0]), "betas[1]", "must be < 1, got 1.0"),
    ("beta1 negative", opt("AdamW", betas=[-0.1, 0.9]), "betas[0]", "must be >= 0"),
    ("eps negative", opt("Adam", eps=-1e-8), "eps", "must be >= 0"),
    ("momentum negative", opt("SGD", momentum=-0.5), "momentum", "must be >= 0"),
    ("weight decay negative", opt("AdamW", weight_decay=-1), "weight_decay", "must be >= 0"),
    ("rho above one", opt("Adadelta", rho=1.5), "rho", "must be <= 1"),
    ("adafactor d", opt("Adafactor", d=0.5), "d", "must be >= 1"),
    ("adafactor beta2_decay", opt("Adafactor", beta2_decay=0.5), "beta2_decay", "must be <= 0"),
    ("rprop etas", opt("Rprop", etas=[1.5, 1.2]), "etas", "0 < etaminus < 1 < etaplus"),
    ("lbfgs line search", opt("LBFGS", line_search_fn="wolfe"), "line_search_fn", "strong_wolfe"),
    ("nesterov without momentum", opt("SGD", nesterov=True), "nesterov", "requires momentum > 0"),
    ("nesterov with dampening", opt("SGD", nesterov=True, momentum=0.9, dampening=0.1), "nesterov",
     "dampening = 0"),
    ("fused and foreach", opt("Adam", fused=True, foreach=True), "fused", "give foreach=True or fused=True, not both"),
    ("every problem reported", opt("Adam", lr=-1, betas=[0.9, 2], eps=-1), "eps", "must be >= 0"),
    # aliases
    ("alias and target", opt("Adam", lr=0.1, learning_rate=0.2), "learning_rate", "both 'lr' and its alias"),
    ("beta1 and betas", opt("Adam", betas=[0.9, 0.99], beta1=0.8), "beta1", "both 'betas'"),
    ("bad value under an alias", opt("Adam", learning_rate=-1), "learning_rate", "must be >= 0"),   # was at lr
    # schedulers
    ("T_max zero", sched({"name": "CosineAnnealingLR", "T_max": 0}), "T_max", "must be >= 1"),
    ("milestones not increasing", sched({"name": "MultiStepLR", "milestones": [30, 20]}), "milestones",
     "strictly increasing"),
    ("milestones repeated", sched({"name": "MultiStepLR", "milestones": [30, 30]}), "milestones",
     "strictly increasing"),
    ("gamma missing", sched({"name": "ExponentialLR"}), "gamma", "required option is missing"),
    ("gamma zero", sched({"name": "ExponentialLR", "gamma": 0}), "gamma", "must be > 0"),
    ("factor above one", sched({"name": "ConstantLR", "factor": 1.5}), "factor", "must be <= 1"),
    # torch takes it, then raises ZeroDivisionError at step total_iters (torch 2.13: lr · 1/factor)
    ("constant factor zero", sched({"name": "ConstantLR", "factor": 0.0, "total_iters": 2}), "factor",
     "must be > 0: torch's ConstantLR divides the lr by factor when the constant phase ends"),
    ("start factor zero", sched({"name": "LinearLR", "start_factor": 0}), "start_factor", "must be > 0"),
    ("plateau factor one", sched({"name": "ReduceLROnPlateau", "factor": 1.0}), "factor", "must be < 1"),
    ("plateau mode", sched({"name": "ReduceLROnPlateau", "mode": "lowest"}), "mode", "must be one of"),
    ("cyclic base above max", sched({"name": "CyclicLR", "base_lr": 0.5, "max_lr": 0.1}), "max_lr",
     "must be >= base_lr"),
    ("cyclic mode", sched({"name": "CyclicLR", "base_lr": 0.1, "max_lr": 1, "mode": "square"}), "mode",
     "must be one of"),
    ("cyclic per-group length", sched({"name": "CyclicLR", "base_lr": 0.01, "max_lr": [0.1, 0.2, 0.3]}), "max_lr",
     "one value per parameter group (2), got 3"),
    ("cycle momentum without momentum", sched({"name": "CyclicLR", "base_lr": 0.01, "max_lr": 0.1},
                                              optimizer="Adagrad"), "cycle_momentum", "neither momentum nor betas"),
    ("onecycle pct_start", sched({"name": "OneCycleLR", "max_lr": 0.1, "total_steps": 10, "pct_start": 1.5}),
     "pct_start", "must be <= 1"),
    ("onecycle no length", sched({"name": "OneCycleLR", "max_lr": 0.1}), "total_steps",
     "give total_steps, or epochs and steps_per_epoch"),
    ("lambda eval refused", sched({"name": "LambdaLR", "lr_lambda": "__import__('os').system('ls')"}), "lr_lambda",
     "not allowed"),
    ("lambda unknown name", sched({"name": "LambdaLR", "lr_lambda": "epoch * 2"}), "lr_lambda", "unknown name 'epoch'"),
    ("lambda syntax", sched({"name": "LambdaLR", "lr_lambda": "0.9 **"}), "lr_lambda", "invalid step expression"),
    ("sequential milestones count", sched({"name": "sequential", "milestones": [5, 10], "schedulers": [
        {"name": "ConstantLR"}, {"name": "ExponentialLR", "gamma": 0.9}]}), "milestones", "expected 1 milestones"),
    ("sequential child error path", sched([{"name": "LinearLR", "total_iters": 5},
                                           {"name": "CosineAnnealingLR", "T_max": -3}]), "schedulers[1].T_max",
     "must be >= 1"),
    ("sequential child without length", sched([{"name": "ExponentialLR", "gamma": 0.9},
                                               {"name": "StepLR", "step_size": 3}]), "schedulers[0]",
     "no length to derive a milestone"),
    ("plateau nested", sched({"name": "chained", "schedulers": [{"name": "ReduceLROnPlateau"}]}), "schedulers[0]",
     "cannot be nested"),
    ("learning_rate negative", sched(-0.1), "learning_rate", ">= 0"),
    ("learning_rate wrong type", sched(object()), "learning_rate", "expected a number"),
    # params and groups
    ("empty params", lambda: optreg.configure_optimizer("SGD", []), "params", "empty parameter list"),
    ("params not iterable", lambda: optreg.configure_optimizer("SGD", 3), "params", "expected a torch.nn.Module"),
    ("single tensor params", lambda: optreg.configure_optimizer("SGD", torch.zeros(2, requires_grad=True)), "params",
     "got a single tensor"),
    ("rule matches nothing", opt("SGD", param_groups=[{"params": "*.bais", "lr": 0.1}]), "param_groups[0].params",
     "pattern '*.bais' matches no parameter"),
    ("rule without params", opt("SGD", param_groups=[{"lr": 0.1}]), "param_groups[0].params", "required"),
    ("rule not a mapping", opt("SGD", param_groups=["*.bias"]), "param_groups[0]", "expected a mapping"),
    ("exact name claimed twice", opt("SGD", param_groups=[{"params": "fc1.bias"}, {"params": ["fc1.bias"]}]),
     "param_groups[1].params", "claimed twice"),
    ("tensor claimed twice", lambda: _twice(),      "params[1].params", "claimed twice"),
    ("group option out of range", opt("SGD", param_groups=[{"params": "*.bias", "lr": -1}]), "param_groups[0].lr",
     "must be >= 0"),
    ("group unknown key", opt("SGD", param_groups=[{"params": "*.bias", "lrr": 0.1}]), "param_groups[0].lrr",
     "did you mean 'lr'"),
    ("group rule check", opt("SGD", momentum=0.9, param_groups=[{"params": "*.bias", "dampening": 0.5}],
                             nesterov=True), "param_groups[0].nesterov", "dampening = 0"),
    ("bare tensors with rules", lambda: optreg.configure_optimizer("SGD", list(make_model().parameters()),
                                                                   param_groups=[{"params": "*.bias"}]),
     "param_groups", "need parameter names"),
    ("lbfgs two groups", opt("LBFGS", param_groups=[{"params": "*.bias"}]), "param_groups", "one parameter group"),
    ("muon 1-D params", opt("Muon"), "params", "only 2-D parameters, held whole (not a shard of an FSDP2 DTensor: "
                                               "it would orthogonalise the shard); 'fc1.bias' has shape (7,)"),
    ("param_groups not a list", opt("SGD", param_groups=3), "param_groups", "expected a list of rules"),
    ("group params not tensors", lambda: optreg.configure_optimizer("SGD", [{"params": 3}]), "params[0].params",
     "expected tensors, got int"),
    ("rule shadowed by an earlier rule", opt("SGD", param_groups=[{"params": "*"}, {"params": "*.bias",
                                                                                    "weight_decay": 0.0}]),
     "param_groups[1].params", "already taken by param_groups[0]"),
    ("torch refuses a combination", opt("Adam", differentiable=True, fused=True), "fused",
     "torch.Adam refused the configuration"),
    ("differentiable on leaf parameters", opt("Adam", differentiable=True), "differentiable",
     "leaf tensors that require grad"),
    ("capturable on the CPU", opt("AdamW", capturable=True), "capturable", "capturable=True needs parameters on"),
    ("huge integer", sched({"name": "StepLR", "step_size": 10 ** 400}), "step_size", "must be <="),
    ("huge number text is short", opt("Adam", lr=10 ** 400), "lr", "chars)"),
    ("unknown_keys mode", opt("Adam", unknown_keys="silent"), "unknown_keys", "'error' or 'warn'"),
    ("sequential restart", sched({"name": "sequential", "restart": None, "schedulers": [{"name": "ConstantLR"}]}),
     "restart", "must be 'local', 'global'"),
    ("sequential torch milestones", sched({"name": "sequential", "milestones": [5, 3], "schedulers": [
        {"name": "ConstantLR"}, {"name": "ConstantLR"}, {"name": "ConstantLR"}]}), "milestones", "strictly increasing"),
    ("sequential torch milestones type", sched({"name": "sequential", "milestones": 5, "schedulers": [
        {"name": "ConstantLR"}, {"name": "ConstantLR"}]}), "milestones", "expected a list"),
    ("expression overflow", sched({"name": "LambdaLR", "lr_lambda": "(10 ** 9999) ** 9999"}), "lr_lambda",
     "invalid step expression"),
    ("expression not finite", sched({"name": "LambdaLR", "lr_lambda": "1e999"}), "lr_lambda", "not finite"),
    ("yaml section dialect path", yaml("optimizer: {name: Adam, dialect: tensorflow}\n"), "optimizer.dialect",
     "unknown dialect 'tensorflow'"),
    ("yaml group path", build("optimizer:\n  name: Adam\n  param_groups:\n    - {params: '*.bias', lr: -0.1}\n"),
     "optimizer.param_groups[0].lr", "must be >= 0"),
    ("yaml unhashable key", yaml("optimizer: {name: Adam}\n? [a, b]\n: 1\n"), "", "must be a scalar"),
    ("yaml nested too deeply", lambda: optreg.load_config("[" * 3000), "", "nested too deeply"),
    # at the key (it was at the mapping's path: none for a top-level key)
    ("top-level key beyond 64 bits", lambda: optreg.build({"optimizer": {"type": "SGD", "params": {"lr": 0.1}},
                                                           2 ** 80: 1}, make_model()), "1208925819614629174706176",
     "a key must be a name, got int 1208925819614629174706176"),
    ("nested key of another type", lambda: optreg.build({"optimizer": {"name": "SGD", (1, 2): 1}}, make_model()),
     "optimizer.(1, 2)", "a key must be a name, got tuple (1, 2)"),
    # YAML experiment configs (positions)
    ("yaml unknown top key", yaml("optimizer: {name: SGD}\nschedular: {name: StepLR}\n"), "schedular",
     "did you mean 'scheduler'"),
    ("yaml missing optimizer", yaml("scheduler: {name: StepLR, step_size: 2}\n"), "optimizer", "required"),
    ("yaml optimizer not a mapping", yaml("optimizer: adam\n"), "optimizer", "expected a mapping"),
    ("yaml train steps", yaml("optimizer: {name: SGD}\ntrain: {steps: 0}\n"), "train.steps", "must be >= 1"),
    ("yaml train unknown", yaml("optimizer: {name: SGD}\ntrain: {epoch: 3}\n"), "train.epoch", "unknown key"),
    ("yaml python tag", yaml("optimizer: !!python/object/apply:os.system [ls]\n"), "", "is not allowed"),
    ("yaml duplicate key", yaml("optimizer:\n  name: SGD\n  name: Adam\n"), "", "duplicate key 'name'"),
    ("yaml oversized", lambda: optreg.load_config("a: " + "x" * (1 << 20) + "\n"), "", "larger than"),
    ("yaml alias bomb", yaml("a: &a [1,1,1,1,1,1,1,1,1,1]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 10) + "]\n" for i in range(6))), "",
     "alias expansion"),
    ("yaml syntax", yaml("optimizer: [\n"), "", "expected"),
    ("yaml scheduler error", yaml("optimizer: {name: SGD, lr: 0.1}\nscheduler: {name: StepLR, step_size: 0}\n"),
     "scheduler.step_size", "must be >= 1"),
    ("train key misspelt", yaml("optimizer: {name: AdamW}\ntrain: {step: 5}\n"), "train.step",
     "(did you mean 'steps'?)"),
    ("warmup key misspelt", yaml("optimizer: {name: AdamW}\nscheduler:\n  name: CosineAnnealingLR\n  T_max: 4\n"
                                 "  warmup: {stesp: 2}\n"), "scheduler.warmup.stesp", "(did you mean 'steps'?)"),
    ("clip_grad key misspelt", yaml("optimizer: {name: AdamW}\nclip_grad: {max_nrom: 1.0}\n"), "clip_grad.max_nrom",
     "(did you mean 'max_norm'?)"),
    ("rule selector misspelt", yaml("optimizer:\n  name: AdamW\n  param_groups: [{parms: '*.bias', lr_mult: 2}]\n"),
     "optimizer.param_groups[0].parms", "unknown option of torch.AdamW (did you mean 'params'?)"),
    ("rule selects nothing, before any model",
     yaml("optimizer:\n  name: AdamW\n  param_groups:\n    - weight_decay: 0\n"),
     "optimizer.param_groups[0].params", "required: a glob pattern"),
    ("build rule matches nothing", build("optimizer:\n  name: SGD\n  param_groups:\n    - params: '*.nope'\n"),
     "optimizer.param_groups[0].params", "matches no parameter"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_a_config_error_with_path(case):
    _, action, path, fragment = case
    with pytest.raises(ConfigError) as info:
        action()
    paths = [e.path for e in info.value.errors]
    assert path in paths, f"{path!r} not in {paths}: {info.value}"
    item = info.value.errors[paths.index(path)]
    assert fragment in str(item), str(item)


def test_the_table_is_large_enough():
    assert len(CASES) >= 60


def test_every_violated_constraint_is_reported():
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("Adam", make_model(), lr=-1, betas=[0.9, 2], eps=-1, weigth_decay=0)
    assert {e.path for e in info.value.errors} == {"lr", "betas[1]", "eps", "weigth_decay"}
    assert len(str(info.value).splitlines()) == 4


def test_yaml_errors_carry_file_line_and_column(tmp_path):
    path = tmp_path / "experiment.yaml"
    path.write_text(textwrap.dedent("""\
        optimizer:
          name: AdamW
          lr: 3.0e-4
          betas: [0.9, 1.0]
          weight_decay: 0.01
          eps: 1e-8
          weigth_decay: 0.1
        """))
    with pytest.raises(ConfigError) as info:
        optreg.load_config(path)
    lines = str(info.value).splitlines()
    assert f"{path}:4:16: optimizer.betas[1]: must be < 1, got 1.0" in lines
    assert f"{path}:7:3: optimizer.weigth_decay: unknown option of torch.AdamW (did you mean 'weight_decay'?)" in lines
    item = next(e for e in info.value.errors if e.path == "optimizer.betas[1]")
    assert (item.location.line, item.location.column) == (4, 16)


def test_non_utf8_file(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("optimizer: {name: Adam}  # caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8"):
        optreg.load_config(path)


def test_scheduler_errors_are_reported_with_optimizer_errors():
    with pytest.raises(ConfigError) as info:
        optreg.load_config("optimizer: {name: SGD, lr: -0.1}\nscheduler: {name: StepLR, step_size: 0}\n")
    assert {e.path for e in info.value.errors} == {"optimizer.lr", "scheduler.step_size"}


def test_mindspore_optimizer_with_onecycle_from_a_config():
    """The scheduler is checked against the optimizer's group keys (betas), not its dialect's names."""
    built = optreg.build({"optimizer": {"name": "mindspore.Adam", "learning_rate": 0.1},
                          "scheduler": {"name": "OneCycleLR", "max_lr": 0.1, "total_steps": 10}}, make_model())
    assert type(built.scheduler).__name__ == "OneCycleLR"


def test_yaml_syntax_error_position():
    with pytest.raises(ConfigError) as info:
        optreg.load_config("optimizer:\n  name: SGD\n   lr: 1\n")
    assert info.value.errors[0].location.line == 3


def test_a_bad_config_builds_nothing(monkeypatch):
    created = []
    monkeypatch.setattr(torch.optim.SGD, "__init__", lambda *a, **k: created.append(1))
    with pytest.raises(ConfigError):
        optreg.build("optimizer: {name: SGD, lr: 0.1}\nscheduler: {name: StepLR, step_size: 0}\n", make_model())
    with pytest.raises(ConfigError):
        optreg.build("optimizer: {name: SGD, lr: 0.1, param_groups: [{params: 'x*'}]}\n", make_model())
    assert created == []


def test_numeric_strings_are_numbers():
    o = optreg.configure_optimizer("Adam", make_model(), lr="1e-3", eps="1e-6")
    assert o.defaults["lr"] == 0.001 and o.defaults["eps"] == 1e-6


def test_unknown_keys_warn_mode_drops_them():
    with pytest.warns(UserWarning, match="weigth_decay"):
        o = optreg.configure_optimizer("AdamW", make_model(), unknown_keys="warn", weigth_decay=0.5)
    assert o.defaults["weight_decay"] == 0.01


@pytest.mark.parametrize("dialect", [None, "cerebras"])
def test_an_unknown_key_warned_is_the_error_s_words_at_the_caller_s_line(dialect):
    """unknown_keys="warn" warned a UserWarning without the error's did-you-mean (a misspelt weight decay dropped
    with no hint), at a line of optreg's own (build.py), not the call's."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optreg.configure_optimizer("AdamW", make_model(), dialect=dialect, unknown_keys="warn", weigth_decay=0.5)
    [warning] = caught
    assert warning.category is optreg.ConfigWarning and warning.filename == __file__
    assert str(warning.message) == (f"weigth_decay: unknown option of {dialect or 'torch'}.AdamW; ignored (did you "
                                    f"mean 'weight_decay'?)")


def test_an_error_elsewhere_leaves_a_length_from_the_run_alone(tmp_path):
    """A schedule whose length is the run's (`T_max` from train.steps, DeepSpeed's `total_num_steps: "auto"` with
    --steps) is checked with that length beside an optimizer error too: only the optimizer's error is reported
    (before, the missing length was reported beside it)."""
    with pytest.raises(ConfigError) as info:
        optreg.load_config("optimizer: {name: AdamW, lr: -1}\nscheduler: {name: CosineAnnealingLR}\n"
                           "train: {steps: 10}\n")
    assert [(e.path, e.message) for e in info.value.errors] == [("optimizer.lr", "must be >= 0, got -1")]
    import json
    from pathlib import Path

    from optreg.cli import main

    config = json.loads((Path(__file__).parent.parent / "examples/deepspeed/ds_config.json").read_text())
    config["optimizer"]["type"] = "Adamm"
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(config))
    with pytest.raises(ConfigError) as info:
        optreg.build(str(path), make_model(), total_steps=1000)
    assert [e.path for e in info.value.errors] == ["optimizer.type"]
    assert main(["validate", str(path), "--steps", "1000"]) == 1


@pytest.mark.parametrize("text, expected", [
    ("optimizr: {name: AdamW}\n", [
        ("optimizr", "unknown top-level key; expected dialect, optimizer, scheduler, train, clip_grad")]),
    ("optimizer: {name: AdamW}\nscheduler: {T_max: 4}\n", [("scheduler.name", "required: the scheduler's name")]),
])
def test_one_problem_is_one_error(text, expected):
    """A misspelt section or a scheduler without a name is reported once (before, twice in two wordings; a
    misspelt optimizer section, also as the missing section its did-you-mean names)."""
    with pytest.raises(ConfigError) as info:
        optreg.load_config(text)
    assert [(e.path, e.message) for e in info.value.errors] == expected


@pytest.mark.parametrize("name, kind", [("pytorch_optimizer.NoSuchOpt", "optimizers"),
                                        ("torch.NoSuchLR", "schedulers")])
def test_an_unknown_name_without_a_near_one_names_the_listing_that_shows_its_dialect(name, kind, capsys):
    """The hint is a command that lists the dialect's components, and lists as many as it says."""
    import re

    from optreg.cli import main

    with pytest.raises(ConfigError) as exc:
        if kind == "optimizers":
            optreg.configure_optimizer(name, [torch.zeros(2, requires_grad=True)])
        else:
            optreg.configure_lr_scheduler(make_sgd(make_model()), name)
    said = re.search(r"`optreg (list [^`]+)` shows the (\d+) ", str(exc.value))
    assert said, str(exc.value)
    assert main(said.group(1).split()) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"{kind} ({said.group(2)}):"


def test_python_text_given_as_a_config_says_that_a_python_config_is_read_from_its_file():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "examples" / "libai" / "vit_finetune.py").read_text()
    for fmt in ("libai", None):
        with pytest.raises(ConfigError) as exc:
            optreg.build(text, make_model(), format=fmt)
        assert str(exc.value.errors[0]).endswith("an experiment config is a mapping with optimizer:, got str; a Python "
                                                 "config (LiBai's, MMEngine's) is read from its file: give its path, "
                                                 "a .py file")
    with pytest.raises(ConfigError) as exc:
        optreg.build("just words", make_model())
    assert exc.value.errors[0].message == "an experiment config is a mapping with optimizer:, got str"


@pytest.mark.parametrize("text, position, message", [
    ('{"optimizer": {"name": "AdamW", "lr": 1e-3,}}\n', (1, 44), "Expecting property name enclosed in double quotes"),
    ('{\n  # a comment\n  "optimizer": {"name": "AdamW"}\n}\n', (2, 3),
     "Expecting property name enclosed in double quotes"),
])
def test_a_json_file_is_json(tmp_path, text, position, message):
    """What YAML takes and JSON does not is an error at its position in a .json file (DeepSpeed's json.load refuses
    it too); the same text in a .yaml file reads."""
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as exc:
        optreg.load_config(path)
    (error,) = exc.value.errors
    assert error.message == f"not valid JSON: {message}"
    assert (error.location.file, error.location.line, error.location.column) == (str(path), *position)
    (tmp_path / "c.yaml").write_text(text)
    assert optreg.load_config(tmp_path / "c.yaml").optimizer["name"] == "AdamW"


REFUSED = "torch.Adam refused the configuration: `fused` does not support `differentiable`"
NO_PARAMETERS = "optimizer got an empty parameter list: the model has no parameters"


@pytest.mark.parametrize("action, expected", [
    (opt("adam", fused=True, differentiable=True), [("fused", REFUSED)]),
    (lambda: optreg.build({"optimizer": {"name": "adam", "fused": True, "differentiable": True}}, make_model()),
     [("optimizer.fused", REFUSED)]),
    (lambda: optreg.configure_optimizer("adam", torch.nn.Module()), [("params", NO_PARAMETERS)]),
    (lambda: optreg.build({"optimizer": {"name": "adam"}}, torch.nn.Module()), [("model", NO_PARAMETERS)]),
], ids=["configure_optimizer refused", "build refused", "configure_optimizer no parameters",
        "build no parameters"])
def test_what_torch_refuses_and_a_model_without_parameters_have_a_path(action, expected):
    with pytest.raises(ConfigError) as info:
        action()
    assert [(e.path, e.message) for e in info.value.errors] == expected


def test_a_refused_configuration_in_a_file_is_at_the_options_position(tmp_path):
    file = tmp_path / "c.yaml"
    file.write_text("optimizer:\n  name: adam\n  fused: true\n  differentiable: true\n")
    with pytest.raises(ConfigError) as info:
        optreg.build(file, make_model())
    (error,) = info.value.errors
    assert (error.path, error.message, error.location.line) == ("optimizer.fused", REFUSED, 3)


@pytest.mark.parametrize("spec, kwargs, path, message", [
    ({"name": "StepLR", "step_size": 2, "gamma": 0.1}, {"gamma": 0.5}, "gamma",
     "given both in the spec (0.1) and as gamma=0.5; give it once"),
    ("StepLR", {"name": "ExponentialLR", "step_size": 2}, "name",
     "given both in the learning_rate argument ('StepLR') and as name='ExponentialLR'; give it once"),
    ({"name": "CosineDecayLR", "dialect": "oneflow", "decay_steps": 3}, {"dialect": "cerebras"}, "dialect",
     "given both in the spec ('oneflow') and as dialect='cerebras'; give it once"),
])
def test_a_scheduler_key_given_in_the_spec_and_as_a_keyword_is_refused(spec, kwargs, path, message):
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(make_sgd(make_model()), spec, **kwargs)
    assert [(e.path, e.message) for e in info.value.errors] == [(path, message)]


@pytest.mark.parametrize("call", [lambda **kw: optreg.configure_optimizer("adamw", make_model(), **kw),
                                  lambda **kw: optreg.optimizer_class("adamw", **kw)],
                         ids=["configure_optimizer", "optimizer_class"])
@pytest.mark.parametrize("key", ["name", "type", "optimizer_type"])
def test_an_optimizer_named_again_as_a_keyword_is_refused(call, key):
    """As configure_lr_scheduler refuses it, and a file's section with name: and type:; it was 'unknown option of
    torch.AdamW', which `type` and `optimizer_type`, aliases of name, are not."""
    with pytest.raises(ConfigError) as info:
        call(**{key: "sgd"})
    assert [(e.path, e.message) for e in info.value.errors] == [
        (key, f"given both in the name argument ('adamw') and as {key}='sgd'; give it once")]


@pytest.mark.parametrize("call, expected", [
    (lambda m: optreg.configure_optimizer(params=m, lr=1e-3), [("name", "required: the optimizer's name")]),
    (lambda m: optreg.configure_optimizer(params=m, nmae="adamw"),
     [("nmae", "unknown key, and the optimizer's name is missing")]),
    (lambda m: optreg.configure_optimizer(name="adamw", type="sgd", params=m),
     [("type", "both 'name' and 'type' name the optimizer; keep one")]),
    (lambda m: optreg.configure_optimizer(name="adamw"),
     [("params", "required: the parameters to optimize (a Module, its named_parameters(), tensors or group dicts)")]),
    (lambda m: optreg.configure_lr_scheduler(name="StepLR", step_size=2),
     [("optimizer", "required: the optimizer to schedule")]),
    (lambda m: optreg.configure_lr_scheduler(optimizer=make_sgd(m), nmae="StepLR", step_size=2),
     [("nmae", "unknown key, and the scheduler's name is missing")]),
    (lambda m: optreg.configure_lr_scheduler(optimizer=make_sgd(m), name="StepLR", gama=0.5, step_size=2),
     [("gama", "unknown option of torch.StepLR")]),
], ids=["no-name", "misspelt-name", "two-names", "no-params", "no-optimizer",
        "scheduler-misspelt-name", "scheduler-option"])
def test_a_bad_keyword_call_is_a_config_error_at_its_key(call, expected):
    """The keyword form of the Python calls (`configure_optimizer(params=..., **cfg["optimizer"])`, a Hydra node's
    `_target_: optreg.configure_optimizer`): it was a TypeError (`missing 2 required positional arguments`)."""
    model = make_model()
    with pytest.raises(ConfigError) as info:
        call(model)
    assert [(e.path, e.message) for e in info.value.errors] == expected


def test_a_misspelt_scheduler_key_gets_a_did_you_mean(tmp_path):
    from optreg.schedules.adapter import ScheduleLR
    from optreg.schedules.engine import KEYS

    file = tmp_path / "c.yaml"
    file.write_text("optimizer: {name: SGD, lr: 0.1, momentum: 0.9}\nscheduler:\n  name: sequential\n  key: momentun\n"
                    "  schedulers: [{name: StepLR, step_size: 2}]\n")
    message = f"must be one of {', '.join(KEYS)}, got 'momentun'"
    with pytest.raises(ConfigError) as info:
        optreg.build(file, make_model())
    (error,) = info.value.errors
    assert (error.path, error.message, error.suggestion, error.location.line) == ("scheduler.key", message,
                                                                                 "momentum", 4)
    assert str(error).endswith("(did you mean 'momentum'?)")
    with pytest.raises(ConfigError) as info:
        ScheduleLR(make_sgd(make_model()), [], key="momentun")
    assert [tuple(e)[::3] for e in info.value.errors] == [("key", "momentum")]


def test_a_misspelt_choice_gets_the_near_one(tmp_path, capsys):
    """A value of a fixed set of choices (a Literal) that is one letter off names the choice meant."""
    from optreg.cli import main

    path = tmp_path / "choice.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler: {name: CosineAnnealingLR, warmup: {steps: 2, "
                    "type: linera}}\ntrain: {steps: 10}\n")
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().err.strip().endswith(
        "scheduler.warmup.type: must be one of 'linear', 'constant' or 'exponential', got 'linera' "
        "(did you mean 'linear'?)")
    assert main(["validate", str(path), "scheduler.warmup.type=zzz"]) == 1
    assert capsys.readouterr().err.strip().endswith("got 'zzz'")


@pytest.mark.parametrize("name", ["oneflow.AdamW", "mindspore.Adam", "cerebras.SGD"])
def test_fused_and_foreach_together_are_refused_by_validation_as_by_the_constructor(name):
    """A first-party optimizer's constructor refuses foreach=True with fused=True; validation (optreg validate,
    load_config) gives the same verdict, and a group that ends up with both (a rule's fused under the
    optimizer's foreach, or both in one rule) is refused at the rule, as torch's rows refuse it."""
    lr = "learning_rate: 0.1" if name.startswith("mindspore") else "lr: 0.1"
    with pytest.raises(ConfigError) as info:
        optreg.load_config(f"optimizer: {{name: {name}, {lr}, fused: true, foreach: true}}")
    assert [e.path for e in info.value.errors] == ["optimizer.fused"]
    options = {"learning_rate" if name.startswith("mindspore") else "lr": 0.1}
    for top, rule in (({"foreach": True}, {"fused": True}), ({}, {"fused": True, "foreach": True})):
        with pytest.raises(ConfigError) as info:
            optreg.configure_optimizer(name, make_model(), **options, **top,
                                       param_groups=[{"max_ndim": 1, **rule}])
        assert [e.path for e in info.value.errors] == ["param_groups[0].fused"]
        assert "not both" in str(info.value)


def test_a_bad_optimizer_option_leaves_the_rules_checked():
    """Every problem at once: a bad option of the optimizer does not hide a misspelt key of a rule."""
    text = ("optimizer:\n  name: oneflow.AdamW\n  state_dtype: int4\n  param_groups:\n"
            "    - {params: '*.bias', weigth_decay: 0.0}\n")
    with pytest.raises(ConfigError) as info:
        optreg.load_config(text)
    assert sorted(e.path for e in info.value.errors) == ["optimizer.param_groups[0].weigth_decay",
                                                         "optimizer.state_dtype"]


def test_a_tensor_of_param_groups_given_to_an_optimizer_that_takes_the_model_is_refused_at_its_key():
    # its truth was asked: RuntimeError (Boolean value of Tensor with more than one value is ambiguous)
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("mindspore.thor", make_model(), learning_rate=0.1, damping=0.03, momentum=0.9,
                                   param_groups=torch.tensor([1.0, 2.0]))
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("param_groups", "mindspore.thor updates every trainable parameter of the model; it takes no param_groups")]


@pytest.mark.parametrize("optimizer, path, words", [
    ({"name": "mindspore.thor", "learning_rate": 0.1, "damping": 0.03, "momentum": 0.9,
      "param_groups": [{"max_ndim": 1, "weight_decay": 0.0}]}, "optimizer.param_groups", "takes no param_groups"),
    ({"name": "mindspore.thor", "learning_rate": 0.1, "damping": 0.03, "momentum": 0.9, "no_weight_decay": True},
     "optimizer.no_weight_decay", "not supported"),
    ({"name": "mindspore.AdaFactor", "relative_step": False}, "optimizer.relative_step", "learning_rate is required"),
], ids=["thor-param_groups", "thor-setting", "adafactor-no-lr"])
def test_what_build_refuses_whatever_the_model_validate_refuses_without_one(optimizer, path, words):
    """optreg validate gives build's verdict on everything that needs no model."""
    from optreg.api import to_experiment

    with pytest.raises(ConfigError) as info:
        to_experiment({"optimizer": optimizer})
    assert [e.path for e in info.value.errors] == [path] and words in info.value.errors[0].message
    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": optimizer}, make_model())
    assert [e.path for e in info.value.errors] == [path]


def test_a_scheduler_over_an_optimizer_without_an_lr_says_the_fix_at_the_scheduler():
    """mindspore.AdaFactor sets its own step size by default (relative_step, no learning_rate): a scheduler over it
    is refused at the scheduler, saying what to change."""
    from optreg.api import to_experiment

    with pytest.raises(ConfigError) as info:
        to_experiment({"optimizer": {"name": "mindspore.AdaFactor"},
                       "scheduler": {"name": "CosineAnnealingLR", "T_max": 10}})
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("scheduler", "parameter group 0 has no 'lr' to schedule (it is None); set relative_step: false and a "
                      "learning_rate, or leave the scheduler out")]


def test_build_says_the_optimizer_s_problems_beside_the_run_s_as_validate_does():
    """A file whose train: or scheduler: has an error is not planned against the model, so build says the optimizer
    section's own problems beside them (it said the run's and the scheduler's alone), in validate's order."""
    text = ("optimizer:\n  name: AdamW\n  param_groups:\n    - {params: 'head.*', lr_mult: -1}\n"
            "scheduler: {name: StepLR, step_size: 0}\ntrain: {steps: 10, accumulation_steps: 20}\n")
    read, built = read_and_built(text, make_model())
    assert built == read and [e[0] for e in built] == [
        "optimizer.param_groups[0].lr_mult", "train.accumulation_steps", "scheduler.step_size"]
    assert built[0][1] == "must be >= 0, got -1"


def test_param_groups_that_are_no_list_read_the_same_in_validate_build_and_python():
    """A mapping for param_groups (one rule without its list) is one message in every entry point."""
    message = "expected a list of rules ({params: <glob>, ...}), got {'params': '*.bias', 'weight_decay': 0}"
    text = "optimizer: {name: AdamW, param_groups: {params: '*.bias', weight_decay: 0}}\n"
    for call in (lambda: optreg.load_config(text), lambda: optreg.build(text, make_model()),
                 lambda: optreg.configure_optimizer("AdamW", make_model(),
                                                    param_groups={"params": "*.bias", "weight_decay": 0})):
        with pytest.raises(ConfigError) as info:
            call()
        assert [(e.path.removeprefix("optimizer."), e.message) for e in info.value.errors] == [
            ("param_groups", message)]


@pytest.mark.parametrize("written, shown", [("''", "''"), ("0", "0"), ("false", "False"), ("{}", "{}")])
def test_param_groups_that_are_empty_but_no_list_are_refused_by_build_as_by_validate(written, shown):
    # build read them as no rules (split_optimizer's `or []`) and built one group; validate refused them
    text = f"optimizer: {{name: AdamW, param_groups: {written}}}\n"
    for call in (lambda: optreg.load_config(text), lambda: optreg.build(text, make_model())):
        with pytest.raises(ConfigError) as info:
            call()
        assert [str(e) for e in info.value.errors] == [
            f"<string>:1:26: optimizer.param_groups: expected a list of rules ({{params: <glob>, ...}}), got {shown}"]


def test_param_groups_null_is_no_rules_in_a_file_as_none_is_in_a_python_call():
    """`param_groups: null` (how a Hydra config says none) is no rules, as configure_optimizer's
    param_groups=None is: one group of every parameter with the section's options (the file's was an error)."""
    def groups(optimizer):
        return [({k: v for k, v in g.items() if k != "params"}, len(g["params"])) for g in optimizer.param_groups]

    text = "optimizer: {name: AdamW, lr: 0.01, weight_decay: 0.1, param_groups: null}\n"
    optreg.load_config(text)
    from_python = optreg.configure_optimizer("AdamW", make_model(), lr=0.01, weight_decay=0.1, param_groups=None)
    from_file = optreg.build(text, make_model()).optimizer
    from_dict = optreg.build({"optimizer": {"name": "AdamW", "lr": 0.01, "weight_decay": 0.1,
                                            "param_groups": None}}, make_model()).optimizer
    assert groups(from_file) == groups(from_dict) == groups(from_python) == \
        groups(optreg.configure_optimizer("AdamW", make_model(), lr=0.01, weight_decay=0.1))
    assert len(from_file.param_groups) == 1


MISSPELT = ("optimizer:\n  name: cerebras.SGD\n  lrr: 0.1\n"
            "scheduler:\n  name: StepLR\n  step_sizee: 10\n  gamma: 0.5\n")


def test_a_misspelt_required_key_is_one_error_at_the_misspelling(tmp_path, capsys):
    """A misspelt key whose did-you-mean names a required option that is missing is one error, the misspelling's,
    at its position: the missing option is what it explains (before, also `lr: required option is missing` at the
    section's position), in validate, build and a Python call alike."""
    from optreg.cli import main

    file = tmp_path / "c.yaml"
    file.write_text(MISSPELT)
    expected = [("optimizer.lrr", "unknown option of cerebras.SGD", optreg.Location(str(file), 3, 3), "lr"),
                ("scheduler.step_sizee", "unknown option of torch.StepLR", optreg.Location(str(file), 6, 3),
                 "step_size")]
    with pytest.raises(ConfigError) as info:
        optreg.load_config(file)
    assert [tuple(e) for e in info.value.errors] == expected
    file.write_text(MISSPELT.replace("lrr", "lr"))
    with pytest.raises(ConfigError) as info:
        optreg.build(file, make_model())
    assert [tuple(e) for e in info.value.errors] == expected[1:]
    file.write_text(MISSPELT)
    assert main(["validate", str(file)]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{file}:3:3: optimizer.lrr: unknown option of cerebras.SGD (did you mean 'lr'?)",
        f"{file}:6:3: scheduler.step_sizee: unknown option of torch.StepLR (did you mean 'step_size'?)"]
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("mindspore.Momentum", make_model(), learning_rat=0.1, momentum=0.9)
    assert [tuple(e) for e in info.value.errors] == [("learning_rat", "unknown option of mindspore.Momentum", None,
                                                      "learning_rate")]
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(make_sgd(make_model()), [{"name": "StepLR", "step_sizee": 10},
                                                               {"name": "ExponentialLR", "gama": 0.9}])
    assert [tuple(e) for e in info.value.errors] == [
        ("schedulers[0].step_sizee", "unknown option of torch.StepLR", None, "step_size"),
        ("schedulers[1].gama", "unknown option of torch.ExponentialLR", None, "gamma")]


@pytest.mark.parametrize("spec, expected", [
    ({"name": "StepLR"}, [("step_size", "required option is missing", None, None)]),
    ({"name": "StepLR", "gama": 0.5}, [("gama", "unknown option of torch.StepLR", None, "gamma"),
                                       ("step_size", "required option is missing", None, None)]),
], ids=["missing", "beside-another-misspelling"])
def test_a_missing_required_key_no_misspelling_explains_is_its_own_error(spec, expected):
    """A required option is still said missing when no key beside it is a misspelling of it."""
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(make_sgd(make_model()), spec)
    assert [tuple(e) for e in info.value.errors] == expected


NAMELESS = """\
optimizer:
  nmae: SGD
  lr: 0.1
scheduler:
  name: sequential
  schedulers:
    - {tpye: StepLR, step_size: 3}
"""


def test_a_misspelt_name_key_is_the_error_with_its_did_you_mean(tmp_path, capsys):
    """A spec whose name key is misspelt (`nmae`, `tpye`) is one error at that key, with the did-you-mean, where it
    was `required: the optimizer's name` at the section's first line; the same from a file, validate, a Python
    call, a wrapped optimizer and a composite's rule. A spec with no key near a name key is still `required`."""
    from optreg.cli import main

    file = tmp_path / "n.yaml"
    file.write_text(NAMELESS)
    expected = [("optimizer.nmae", "unknown key, and the optimizer's name is missing",
                 optreg.Location(str(file), 2, 3), "name"),
                ("scheduler.schedulers[0].tpye", "unknown key, and the scheduler's name is missing",
                 optreg.Location(str(file), 7, 8), "type")]
    with pytest.raises(ConfigError) as info:
        optreg.load_config(file)
    assert [tuple(e) for e in info.value.errors] == expected
    assert main(["validate", str(file)]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{file}:2:3: optimizer.nmae: unknown key, and the optimizer's name is missing (did you mean 'name'?)",
        f"{file}:7:8: scheduler.schedulers[0].tpye: unknown key, and the scheduler's name is missing "
        f"(did you mean 'type'?)"]
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(make_sgd(make_model()), {"nam": "StepLR", "step_size": 3})
    assert [tuple(e) for e in info.value.errors] == [("nam", "unknown key, and the scheduler's name is missing",
                                                      None, "name")]
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("mindspore.LARS", make_model(), optimizer={"nmae": "Momentum", "momentum": 0.9})
    assert [tuple(e) for e in info.value.errors] == [
        ("optimizer.nmae", "unknown key, and the wrapped optimizer's name is missing", None, "name")]
    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": {"name": "Muon", "lr": 0.02, "param_groups": [
            {"max_ndim": 1, "optimizer": {"nmae": "AdamW", "lr": 3e-4}}]}}, make_model())
    assert [tuple(e) for e in info.value.errors] == [
        ("optimizer.param_groups[0].optimizer.nmae",
         "unknown key, and the name of the optimizer for the parameters this rule selects is missing", None, "name")]
    file.write_text("optimizer: {lr: 0.1}\n")
    with pytest.raises(ConfigError) as info:
        optreg.load_config(file)
    assert [tuple(e) for e in info.value.errors] == [
        ("optimizer.name", "required: the optimizer's name", optreg.Location(str(file), 1, 1), None)]


@pytest.mark.parametrize("spec, path, suggestion", [
    ("{dtype: float32, lr: 0.1}", "optimizer.name", None),
    ("{dtype: float32, tpye: SGD}", "optimizer.tpye", "type"),
    ("{typee: cerebras.AdamW}", "optimizer.typee", "type"),
    ("{namee: float32}", "optimizer.name", None),
    ("{nmae: whatever}", "optimizer.nmae", "name"),
], ids=["another-word", "the-misspelling-beside-it", "doubled-letter", "doubled-letter-no-name", "misspelt"])
def test_a_key_that_holds_a_name_key_whole_misspells_it_only_when_it_names_a_component(spec, path, suggestion):
    """`dtype` is close to `type` but is another word: without a name beside it, the error is the missing name, not
    a misspelt `type` (and `tpye: SGD` beside it is the misspelling); a key that holds a name key whole and a
    component's name (`typee: cerebras.AdamW`) misspells it; one that does not hold a name key whole (`nmae`) does,
    whatever its value."""
    with pytest.raises(ConfigError) as info:
        optreg.load_config(f"optimizer: {spec}\n")
    what = "required: the optimizer's name" if suggestion is None else \
        "unknown key, and the optimizer's name is missing"
    assert [(e.path, e.message, e.suggestion) for e in info.value.errors] == [(path, what, suggestion)]


@pytest.mark.parametrize("inner, error", [
    ("{nmae: Momentum, momentum: 0.9}",
     "3:15: optimizer.optimizer.nmae: unknown key, and the wrapped optimizer's name is missing (did you mean 'name'?)"),
    ("Momentum", "3:3: optimizer.optimizer: required: the optimizer to wrap, a nested spec with name: and its options"),
    (None, "1:1: optimizer.optimizer: required: the optimizer to wrap, a nested spec with name: and its options"),
], ids=["misspelt-name", "no-mapping", "absent"])
def test_validate_words_a_wrapped_optimizer_s_problems_as_build_does(tmp_path, capsys, inner, error):
    """MindSpore LARS's nested optimizer without a name, or with none at all: validate said `the component's name`
    and `expected a mapping, got NoneType None` where build says the wrapped optimizer's name and the optimizer to
    wrap; both now give build's words."""
    from optreg.cli import main

    file = tmp_path / "lars.yaml"
    file.write_text("optimizer:\n  name: mindspore.LARS\n" + (f"  optimizer: {inner}\n" if inner else ""))
    assert main(["validate", str(file)]) == 1
    assert capsys.readouterr().err.strip() == f"{file}:{error}"
    with pytest.raises(ConfigError) as info:
        optreg.build(file, make_model())
    assert str(info.value) == f"{file}:{error}"


@pytest.mark.parametrize("optimizer, first", [
    ("{name: SGD, lrr: 0.1}", ("optimizer.lrr", "unknown option of torch.SGD", 1, 24)),
    ("{name: SDG, lr: 0.1}", ("optimizer.name", "unknown torch optimizer 'SDG'", 1, 13)),
    # known only against the model: validate reports the scheduler's alone
    ("{name: SGD, lr: 0.1, param_groups: [{params: [nomatch.*], lr: 0.5}]}",
     ("optimizer.param_groups[0].params[0]", "pattern 'nomatch.*' matches no parameter", 1, 58)),
], ids=["option", "name", "rule"])
def test_build_reports_the_scheduler_s_problems_beside_the_optimizer_s(tmp_path, optimizer, first):
    """Every problem at once in build() too: an optimizer that fails to plan against the model no longer hides the
    scheduler section's own problems (validate reported both, build the optimizer's alone)."""
    file = tmp_path / "both.yaml"
    file.write_text(f"optimizer: {optimizer}\nscheduler: {{name: StepLR, step_sizee: 3}}\n")
    with pytest.raises(ConfigError) as info:
        optreg.build(file, make_model())
    path, message, line, column = first
    assert [(e.path, e.message, e.location) for e in info.value.errors] == [
        (path, message, optreg.Location(str(file), line, column)),
        ("scheduler.step_sizee", "unknown option of torch.StepLR", optreg.Location(str(file), 2, 27))]


def test_build_plans_the_scheduler_beside_a_failed_optimizer_with_the_run_final(tmp_path):
    """The scheduler planned beside an optimizer that fails against the model is planned for build's run, which is
    final: a schedule in epochs without the steps per epoch is said there too, as validate says it (it was left out)."""
    file = tmp_path / "epochs.yaml"
    file.write_text("optimizer: {name: SGD, lr: 0.1, momentm: 0.9}\n"
                    "scheduler: {name: CosineAnnealingLR, by_epoch: true}\ntrain: {epochs: 5}\n")
    read, built = read_and_built(file, make_model())
    assert built == read and [(e[0], e[2]) for e in built] == [
        ("optimizer.momentm", optreg.Location(str(file), 1, 33)),
        ("scheduler.by_epoch", optreg.Location(str(file), 2, 38)), ("train.epochs", optreg.Location(str(file), 3, 9))]
    assert built[1][1].startswith("a schedule counted in epochs needs the steps per epoch")


EXPECTED_PARAMETERS = ("expected a torch.nn.Module, its named_parameters() or an iterable of tensors or group dicts, "
                       "got ")


@pytest.mark.parametrize("model, given", [("notamodel", "str 'notamodel'"), (None, "NoneType None"), (42, "int 42")])
def test_a_bad_model_is_an_error_at_the_argument_not_in_the_file(model, given, tmp_path):
    """build's model is an argument, not the file's content: the error is at `model`, with no file position (it was
    at `params`, at the file's first key); configure_optimizer's second argument says the same at `params`."""
    path = tmp_path / "cfg.yaml"
    path.write_text("# a comment\noptimizer: {name: AdamW, lr: 0.001}\n")
    for call, where in ((lambda: optreg.build(str(path), model), "model"),
                        (lambda: optreg.configure_optimizer("adamw", model, lr=0.001), "params")):
        with pytest.raises(ConfigError) as info:
            call()
        assert [(e.path, e.message, e.location) for e in info.value.errors] == [(where, EXPECTED_PARAMETERS + given,
                                                                                 None)]
        assert str(info.value) == f"{where}: {EXPECTED_PARAMETERS}{given}"


def test_a_model_argument_of_tensors_is_quoted_on_one_line(tmp_path):
    """A tensor's repr has several lines (`Parameter containing:\\ntensor(...)`): quoted in a message, on one line,
    so that each error stays one line of the ConfigError's text."""
    modelzoo = tmp_path / "mz.yaml"
    modelzoo.write_text("trainer:\n  init:\n    optimizer:\n      AdamW: {learning_rate: 0.001}\n")
    with pytest.raises(ConfigError) as info:
        optreg.build(str(modelzoo), [torch.nn.Parameter(torch.ones(2, 2))])
    assert str(info.value) == ("model: expected a torch.nn.Module: a Model Zoo config groups the parameters of its "
                               "modules, got list [Parameter containing: tensor([[]")
    assert optreg.errors.show(torch.ones(2, 2)) == "tensor([[1., 1.], [1., 1.]])"


def test_what_the_model_holds_is_at_the_argument_too(tmp_path):
    """A model whose parameters are all frozen, and a Model Zoo file's model that is no Module: at `model`, with no
    file position, as the model's type is."""
    path = tmp_path / "cfg.yaml"
    path.write_text("optimizer: {name: AdamW, lr: 0.001}\n")
    modelzoo = tmp_path / "mz.yaml"
    modelzoo.write_text("trainer:\n  init:\n    optimizer:\n      AdamW: {learning_rate: 0.001}\n")
    for config, model, message in (
            (path, make_model().requires_grad_(False), "every parameter is frozen (requires_grad=False; 4 of them): "
                                                       "nothing to optimize"),
            (modelzoo, "notamodel", "expected a torch.nn.Module: a Model Zoo config groups the parameters of its "
                                    "modules, got str 'notamodel'")):
        with pytest.raises(ConfigError) as info:
            optreg.build(str(config), model)
        assert [(e.path, e.message, e.location) for e in info.value.errors] == [("model", message, None)]

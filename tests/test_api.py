"""The public API as DESIGN.md states it: lookup, listing, describe, registration, schema, import cost."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
from torch_cases import make_model

from optreg import ConfigError
import optreg


@pytest.mark.parametrize("spelling", ["AdamW", "adamw", "adam_w", "ADAM-W", "torch.AdamW"])
def test_names_ignore_case_dashes_and_underscores(spelling):
    assert type(optreg.configure_optimizer(spelling, make_model())) is torch.optim.AdamW


@pytest.mark.parametrize("spelling", ["CosineAnnealingLR", "cosine_annealing", "CosineAnnealing", "cosineannealinglr"])
def test_scheduler_names_match_with_or_without_lr_suffix(spelling):
    o = torch.optim.SGD(make_model().parameters(), lr=0.1)
    assert type(optreg.configure_lr_scheduler(o, spelling, T_max=5)).__name__ == "CosineAnnealingLR"


def test_aliases_are_one_table_for_python_and_yaml():
    m = make_model()
    o = optreg.configure_optimizer("Adam", m, learning_rate=0.02, epsilon=1e-6, beta1=0.5)
    assert (o.defaults["lr"], o.defaults["eps"], o.defaults["betas"]) == (0.02, 1e-6, (0.5, 0.999))
    built = optreg.build("optimizer: {type: Adam, learning_rate: 0.02, epsilon: 1.0e-6, beta1: 0.5}\n", make_model())
    assert built.optimizer.defaults["betas"] == (0.5, 0.999) and built.optimizer.defaults["lr"] == 0.02
    s = optreg.configure_lr_scheduler(o, {"name": "StepLR", "step_size": 2, "last_step": -1})
    assert s.last_epoch == 0


def test_plain_number_sets_lr_and_returns_none():
    o = torch.optim.SGD(make_model().parameters(), lr=0.1)
    assert optreg.configure_lr_scheduler(o, 0.25) is None
    assert all(g["lr"] == 0.25 for g in o.param_groups)
    # a numeric string is the number, as every numeric option reads it (it was looked up as a scheduler's name)
    assert optreg.configure_lr_scheduler(o, "1e-3") is None
    assert all(g["lr"] == 0.001 for g in o.param_groups)
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_lr_scheduler(o, "nan")
    # as the own form's lr says it (it said 'must be a finite number >= 0, got nan', and '... >= 0, got -1')
    assert [(e.path, e.message) for e in info.value.errors] == [("learning_rate", "must be a finite number, got nan")]
    for value, message in [(-1, "must be >= 0, got -1"), (1e10, "must be <= 1000000000, got 10000000000.0")]:
        with pytest.raises(optreg.ConfigError) as info:
            optreg.configure_lr_scheduler(o, value)
        assert str(info.value) == f"learning_rate: {message}"
        with pytest.raises(optreg.ConfigError) as info:
            optreg.build({"optimizer": {"name": "SGD", "lr": value}}, make_model())
        assert str(info.value) == f"optimizer.lr: {message}"


def test_a_plain_number_refuses_the_keywords_a_scheduler_would_take():
    """A number builds no scheduler: keywords beside it (a schedule's option, a misspelling, the dialect) are errors
    at each, not dropped, and no lr is set (Model Zoo 2.0-2.3's adjust_learning_rate beside it is the constant
    schedule Model Zoo builds: tests/test_modelzoo_configs.py)."""
    o = torch.optim.SGD(make_model().parameters(), lr=0.1)
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_lr_scheduler(o, 0.01, adjust_learning_rate={"embedding": 0.5}, T_max=5, dialect="torch")
    assert [(e.path, e.message) for e in info.value.errors] == [
        (key, f"a number as learning_rate (0.01) sets every group's lr and builds no scheduler, which would take "
              f"{key}; give a schedule (a name or a spec, cerebras.ConstantLR for a constant lr) with it")
        for key in ("dialect", "T_max")]
    assert all(g["lr"] == 0.1 for g in o.param_groups)


def test_the_calls_take_a_section_by_keywords_as_a_config_writes_it():
    """`configure_optimizer(params=..., **cfg["optimizer"])` and `configure_lr_scheduler(optimizer=...,
    **cfg["scheduler"])` (a Hydra node of `_target_: optreg.configure_optimizer` is called so) build what the
    positional calls build; they were a TypeError (name, params and optimizer were positional only)."""
    cfg = {"optimizer": {"name": "adamw", "lr": 3e-3, "param_groups": [{"params": "*.bias", "weight_decay": 0.0}]},
           "scheduler": {"name": "StepLR", "step_size": 2, "gamma": 0.5}}
    model = make_model()
    optimizer = optreg.configure_optimizer(params=model, **cfg["optimizer"])
    options = {k: v for k, v in cfg["optimizer"].items() if k != "name"}
    positional = optreg.configure_optimizer("adamw", model, **options)
    strip = [{k: v for k, v in g.items() if k != "params"} for g in positional.param_groups]
    assert [{k: v for k, v in g.items() if k != "params"} for g in optimizer.param_groups] == strip
    assert [len(g["params"]) for g in optimizer.param_groups] == [len(g["params"]) for g in positional.param_groups]
    assert type(optreg.configure_optimizer(optimizer_type="AdamW", params=model.parameters())) is torch.optim.AdamW
    scheduler = optreg.configure_lr_scheduler(optimizer=optimizer, **cfg["scheduler"])
    assert (type(scheduler), scheduler.step_size, scheduler.gamma) == (torch.optim.lr_scheduler.StepLR, 2, 0.5)
    lrs = []
    for _ in range(4):
        optimizer.step()
        scheduler.step()
        lrs.append(optimizer.param_groups[0]["lr"])
    assert lrs == pytest.approx([3e-3, 1.5e-3, 1.5e-3, 7.5e-4])
    assert optreg.configure_lr_scheduler(optimizer=optimizer, learning_rate=0.5) is None   # Cerebras' keyword call
    assert [g["lr"] for g in optimizer.param_groups] == [0.5, 0.5]


def test_list_optimizers_and_schedulers():
    torch_opts = optreg.list_optimizers(dialect="torch")
    assert torch_opts == sorted(torch_opts, key=str.lower) and "AdamW" in torch_opts
    assert "torch.AdamW" in optreg.list_optimizers()
    assert optreg.list_optimizers("adam*", dialect="torch") == ["Adam", "Adamax", "AdamW"]
    assert optreg.list_schedulers("*step*", dialect="torch") == ["MultiStepLR", "StepLR"]


def test_describe():
    d = optreg.describe("SGD")
    assert (d.qualname, d.kind, d.dialect) == ("torch.SGD", "optimizer", "torch")
    params = {p.name: p for p in d.params}
    assert params["lr"].default == 0.001 and params["lr"].constraint == ">= 0"
    assert "requires momentum > 0" in params["nesterov"].constraint
    assert "torch" in d.source
    assert "lr" in str(d)
    s = optreg.describe("ReduceLROnPlateau")
    assert {p.name: p for p in s.params}["factor"].constraint == ">= 0, < 1"
    # the bounds of each alternative of a union, as the type shows them: an int count or a fraction below 1 (they
    # read `>= 0, >= 0, < 1`, as if a count of 10 were refused, which build takes); a number or a list of them
    warmup = {p.name: p for p in optreg.describe("hf.linear").params}["num_warmup_steps"]
    assert (warmup.type, warmup.constraint) == ("int | float", ">= 0 | >= 0, < 1")
    base = {p.name: p for p in optreg.describe("CyclicLR").params}["base_lr"]
    assert (base.type, base.constraint) == ("float | list[float]", ">= 0 | each >= 0")
    with pytest.raises(ConfigError, match="did you mean 'SGD'"):
        optreg.describe("SDG")


def test_group_table_from_build():
    built = optreg.build(open("examples/quickstart.yaml").read(), __import__("optreg.train").train.make_model(8, 1, 0))
    table = built.group_table()
    assert [row["rule"] for row in table] == ["optimizer.param_groups[0]", "default"]
    assert table[0]["weight_decay"] == 0.0 and table[1]["weight_decay"] == 0.05
    assert all(n.endswith(".bias") or "norm" in n for n in table[0]["names"])
    assert sum(r["params"] for r in table) == len(list(built.optimizer.param_groups[0]["params"])) + \
        len(list(built.optimizer.param_groups[1]["params"]))


def test_register_optimizer_and_scheduler_decorators(scratch_registry):
    @optreg.register_optimizer("MySignSGD", aliases=("sign_sgd_test",))
    class MySignSGD(torch.optim.Optimizer):
        """Sign SGD: w -= lr·sign(g)."""

        def __init__(self, params, lr: float = 0.01):
            super().__init__(params, {"lr": lr})

        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.add_(p.grad.sign(), alpha=-group["lr"])

    m = make_model()
    o = optreg.configure_optimizer("sign_sgd_test", m, lr=0.5)
    assert isinstance(o, MySignSGD) and o.defaults["lr"] == 0.5
    with pytest.raises(ConfigError, match="must be >= 0"):
        optreg.configure_optimizer("MySignSGD", m, lr=-1)
    assert "MySignSGD" in optreg.list_optimizers(dialect="torch")
    with pytest.raises(ConfigError, match="clashes"):
        optreg.register_optimizer("mysignsgd")(MySignSGD)
    with pytest.raises(ConfigError, match="clashes"):
        optreg.register_optimizer("Adam")(MySignSGD)

    @optreg.register_scheduler("HalvingLR")
    class HalvingLR(torch.optim.lr_scheduler.LambdaLR):
        def __init__(self, optimizer, every: int = 10, last_epoch: int = -1):
            super().__init__(optimizer, lambda s: 0.5 ** (s // every), last_epoch)

    s = optreg.configure_lr_scheduler(o, "Halving", every=2)
    assert isinstance(s, HalvingLR)


def test_json_schema_is_draft07_and_covers_every_component():
    schema = optreg.json_schema()
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    titles = {m.get("title") for m in schema["properties"]["optimizer"]["anyOf"]}
    assert {f"torch.{n}" for n in optreg.list_optimizers(dialect="torch")} <= titles
    adam = next(m for m in schema["properties"]["optimizer"]["anyOf"] if m.get("title") == "torch.Adam")
    betas = adam["properties"]["betas"]["anyOf"][0]   # [1]: a ${...} interpolation
    betas = schema["definitions"][betas["$ref"].split("/")[-1]]   # the schema the Adam family shares
    assert betas["additionalItems"] is False and betas["items"][1]["anyOf"][0]["exclusiveMaximum"] == 1
    assert adam["oneOf"] == [{"required": ["name"]}, {"required": ["optimizer_type"]}, {"required": ["type"]}]
    text = json.dumps(schema)
    assert '"prefixItems"' not in text and '"$defs"' not in text and '"ge":' not in text and '"lt":' not in text


def test_json_schema_validates_examples_and_rejects_mistakes():
    jsonschema = pytest.importorskip("jsonschema")
    import yaml

    validator = jsonschema.Draft7Validator(optreg.json_schema())
    good = yaml.safe_load(open("examples/quickstart.yaml"))
    assert list(validator.iter_errors(good)) == []
    bad_key = {"optimizer": {"name": "AdamW", "weigth_decay": 0.1}}
    bad_range = {"optimizer": {"name": "AdamW", "betas": [0.9, 1.5]}}
    assert list(validator.iter_errors(bad_key)) and list(validator.iter_errors(bad_range))


def test_import_is_light():
    code = ("import sys, optreg; heavy = [m for m in ('torch', 'pydantic', 'hydra', 'omegaconf', 'yaml', 'numpy') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_shipped_example_is_the_embedded_default():
    from optreg.cli import default_config_text

    assert open("examples/quickstart.yaml").read() == default_config_text()


def test_clip_gradients_clips_each_group_by_its_own_norm_where_groups_set_one():
    """OneFlow's per-group clip_grad_max_norm / clip_grad_norm_type (LiBai's files) are part of the config's
    clipping: `Built.clips` says so and `clip_gradients` applies them after `clip_grad:` (optreg run, the Hydra app
    and a user's loop alike); the other groups' gradients are left as they are."""
    model = torch.nn.Linear(4, 3)
    built = optreg.build({"optimizer": {"name": "oneflow.SGD", "lr": 0.1, "param_groups": [
        {"params": ["bias"], "clip_grad_max_norm": 0.5, "clip_grad_norm_type": 2.0},
        {"params": ["weight"], "clip_grad_max_norm": 1e9, "clip_grad_norm_type": 2.0}]}}, model)
    assert built.clip is None and built.clips
    model.bias.grad, model.weight.grad = torch.full((3,), 3.0), torch.full((3, 4), 3.0)
    assert built.clip_gradients(model) is None
    assert torch.linalg.vector_norm(model.bias.grad).item() == pytest.approx(0.5, rel=1e-5)
    assert torch.equal(model.weight.grad, torch.full((3, 4), 3.0))
    plain = optreg.build({"optimizer": {"name": "oneflow.SGD", "lr": 0.1}}, torch.nn.Linear(4, 3))
    assert not plain.clips


def _step_both(pairs, models, steps=4):
    """`steps` optimizer and scheduler steps of each (optimizer, scheduler) pair on its model, the same gradients
    for all; each step's lr of every pair."""
    lrs = []
    for step in range(steps):
        for model in models:
            for i, p in enumerate(model.parameters()):
                p.grad = torch.full_like(p, 0.1 * (i + 1) * (-1) ** step)
        for optimizer, scheduler in pairs:
            optimizer.step()
            scheduler.step()
        lrs.append([optimizer.param_groups[0]["lr"] for optimizer, _ in pairs])
    return lrs


@pytest.mark.parametrize("options", [{}, {"fused": True}], ids=["for-loop", "fused"])
def test_a_tensor_lr_is_the_tensor_torch_keeps(options):
    """torch.optim keeps a tensor lr as the groups' lr (a compiled or captured step reads it on the device, a
    scheduler fills it in place): optreg hands torch's class the tensor itself, so the lrs, under torch's scheduler
    and optreg's closed forms, and the weights are torch's bit for bit. It became a float rounded to float32."""
    torch.manual_seed(0)
    models = [torch.nn.Linear(3, 2) for _ in range(3)]
    models[1].load_state_dict(models[0].state_dict())
    models[2].load_state_dict(models[0].state_dict())
    lr = torch.tensor(0.01)
    ours = optreg.configure_optimizer("adamw", models[0], lr=lr, **options)
    assert ours.param_groups[0]["lr"] is lr
    theirs = torch.optim.AdamW(models[1].parameters(), lr=lr.clone(), **options)
    closed = optreg.configure_optimizer("adamw", models[2], lr=lr.clone(), **options)
    pairs = [(ours, optreg.configure_lr_scheduler(ours, {"name": "CosineAnnealingLR", "T_max": 5})),
             (theirs, torch.optim.lr_scheduler.CosineAnnealingLR(theirs, 5)),
             (closed, optreg.configure_lr_scheduler(closed, [{"name": "CosineAnnealingLR", "T_max": 5},
                                                             {"name": "nemo.CosineAnnealing", "max_steps": 3}]))]
    for row in _step_both(pairs, models):
        assert all(isinstance(value, torch.Tensor) for value in row)
        assert row[0].item() == row[1].item() == pytest.approx(row[2].item(), rel=1e-6)
    assert ours.param_groups[0]["lr"] is lr   # filled in place, as torch fills it
    assert all(torch.equal(a, b) for a, b in zip(models[0].parameters(), models[1].parameters()))


def test_a_groups_tensor_lr_and_optimizer_class_s_are_kept_too():
    """A torch-style group dict's, a param_groups rule's and optimizer_class()'s tensor lr are the group's lr too."""
    model = torch.nn.Linear(3, 2)
    lr = torch.tensor(0.5)
    built = [optreg.configure_optimizer("adamw", [{"params": [model.weight], "lr": lr}, {"params": [model.bias]}],
                                        lr=0.1),
             optreg.configure_optimizer("adamw", model, lr=0.1, param_groups=[{"params": "weight", "lr": lr}])]
    for optimizer in built:
        assert optimizer.param_groups[0]["lr"] is lr and optimizer.param_groups[1]["lr"] == 0.1
    assert optreg.optimizer_class("adamw", lr=lr)(model.parameters()).param_groups[0]["lr"] is lr


def test_a_tensor_lr_is_refused_where_it_cannot_be_the_groups_lr():
    """torch refuses a tensor lr with foreach=True unless capturable: its refusal, a ConfigError at lr. A first-party
    or MindSpore optimizer steps with a number: refused, not turned silently into a float."""
    model = torch.nn.Linear(3, 2)
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("adamw", model, lr=torch.tensor(0.01), foreach=True)
    assert str(info.value) == "lr: torch.AdamW refused the configuration: lr as a Tensor is not supported for " \
                              "capturable=False and foreach=True"
    refusal = "oneflow.AdamW takes a number, not a tensor: only torch.optim's own classes step with a tensor lr; " \
              "give float(lr)"
    for name, key in (("oneflow.AdamW", "lr"), ("mindspore.Adam", "learning_rate")):
        with pytest.raises(ConfigError) as info:
            optreg.configure_optimizer(name, model, **{key: torch.tensor(0.01)})
        assert str(info.value) == f"{key}: " + refusal.replace("oneflow.AdamW", name).replace("lr", key)
    for call, path in ((lambda: optreg.configure_optimizer("oneflow.AdamW", [{"params": [model.weight],
                                                                             "lr": torch.tensor(0.01)}]), "params[0]"),
                       (lambda: optreg.configure_optimizer("oneflow.AdamW", model, param_groups=[
                           {"params": "weight", "lr": torch.tensor(0.01)}]), "param_groups[0]"),
                       (lambda: optreg.optimizer_class("oneflow.AdamW", lr=torch.tensor(0.01)), "")):
        with pytest.raises(ConfigError) as info:
            call()
        assert str(info.value) == f"{path}{'.' if path else ''}lr: {refusal}"


def _trained(optimizer, model, steps=3):
    """`steps` steps of `optimizer` over `model` with the same gradients each time; the weights after them."""
    for step in range(steps):
        for i, p in enumerate(model.parameters()):
            p.grad = torch.full_like(p, 0.1 * (i + 1) * (-1) ** step)
        optimizer.step()
    return [p.detach().clone() for p in model.parameters()]


def test_tensor_betas_and_weight_decay_are_the_tensors_torch_keeps():
    """torch 2.13 declares a tensor for Adam's and AdamW's betas and SGD's weight_decay as for every lr: optreg hands
    torch's class the tensors themselves (the optimizer's, beta1 / beta2, a rule's, optimizer_class()'s), and the
    weights are torch's bit for bit. They became floats."""
    torch.manual_seed(0)
    models = [torch.nn.Linear(3, 2) for _ in range(2)]
    models[1].load_state_dict(models[0].state_dict())
    betas = (torch.tensor(0.8), torch.tensor(0.99))
    ours = optreg.configure_optimizer("adamw", models[0], betas=betas)
    assert all(a is b for a, b in zip(ours.param_groups[0]["betas"], betas))
    theirs = torch.optim.AdamW(models[1].parameters(), betas=tuple(b.clone() for b in betas))
    assert all(torch.equal(a, b) for a, b in zip(_trained(ours, models[0]), _trained(theirs, models[1])))
    split = optreg.configure_optimizer("adamw", models[0], beta1=betas[0], beta2=betas[1])
    assert all(a is b for a, b in zip(split.param_groups[0]["betas"], betas))
    assert optreg.optimizer_class("adamw", betas=betas)(models[0].parameters()).param_groups[0]["betas"][1] is betas[1]
    decay = torch.tensor(0.25)
    ours = optreg.configure_optimizer("sgd", models[0], lr=0.1, weight_decay=decay)
    assert ours.param_groups[0]["weight_decay"] is decay
    theirs = torch.optim.SGD(models[1].parameters(), lr=0.1, weight_decay=decay.clone())
    assert all(torch.equal(a, b) for a, b in zip(_trained(ours, models[0]), _trained(theirs, models[1])))
    ruled = optreg.configure_optimizer("sgd", models[0], lr=0.1, param_groups=[{"params": "bias",
                                                                                "weight_decay": decay}])
    assert ruled.param_groups[0]["weight_decay"] is decay and ruled.param_groups[1]["weight_decay"] == 0


def test_a_closed_form_fills_tensor_betas_in_place():
    """A schedule of betas[0] over tensor betas starts from the tensor's value and fills it in place, as it does a
    tensor lr (it read no base from the tensor: 'gives no usable betas[0] at step 0')."""
    model = torch.nn.Linear(3, 2)
    betas = (torch.tensor(0.9), torch.tensor(0.999))
    optimizer = optreg.configure_optimizer("adamw", model, betas=betas)
    scheduler = optreg.configure_lr_scheduler(optimizer, {"name": "oneflow.LinearLR", "start_factor": 1.0,
                                                          "end_factor": 0.5, "total_iters": 4, "key": "betas[0]"})
    _trained(optimizer, model, 0)
    for _ in range(3):
        optimizer.step()
        scheduler.step()
    assert optimizer.param_groups[0]["betas"][0] is betas[0]
    assert betas[0].item() == pytest.approx(0.9 * (1 - 0.5 * 3 / 4), rel=1e-6)
    assert betas[1].item() == torch.tensor(0.999).item()   # not driven


def test_a_tensor_option_torch_does_not_take_is_refused_at_its_key():
    """An option torch's class declares no tensor for (AdamW's weight_decay, SGD's momentum, AdamW's eps), and every
    option of another implementation: a ConfigError at its key, not a float. torch's own refusals (betas that mix a
    tensor and a number; tensor betas with foreach=True) at betas."""
    model = torch.nn.Linear(3, 2)
    tensor = torch.tensor(0.01)
    adamw = "torch.AdamW takes a number, not a tensor: torch's AdamW takes one for betas, lr only; give "
    cases = [
        (lambda: optreg.configure_optimizer("adamw", model, weight_decay=tensor),
         "weight_decay: " + adamw + "float(weight_decay)"),
        (lambda: optreg.configure_optimizer("adamw", model, eps=tensor), "eps: " + adamw + "float(eps)"),
        (lambda: optreg.configure_optimizer("sgd", model, lr=0.1, momentum=tensor),
         "momentum: torch.SGD takes a number, not a tensor: torch's SGD takes one for lr, weight_decay only; "
         "give float(momentum)"),
        (lambda: optreg.configure_optimizer("adamw", model, param_groups=[{"params": "bias", "weight_decay": tensor}]),
         "param_groups[0].weight_decay: " + adamw + "float(weight_decay)"),
        (lambda: optreg.configure_optimizer("adamw", [{"params": [model.weight], "weight_decay": tensor}]),
         "params[0].weight_decay: " + adamw + "float(weight_decay)"),
        (lambda: optreg.optimizer_class("adamw", weight_decay=tensor),
         "weight_decay: " + adamw + "float(weight_decay)"),
        (lambda: optreg.configure_optimizer("oneflow.AdamW", model, betas=(tensor, tensor)),
         "betas: oneflow.AdamW takes a number, not a tensor: only torch.optim's own classes step with a tensor betas; "
         "give numbers"),
        (lambda: optreg.configure_optimizer("oneflow.SGD", model, lr=0.1, weight_decay=tensor),
         "weight_decay: oneflow.SGD takes a number, not a tensor: only torch.optim's own classes step with a tensor "
         "weight_decay; give float(weight_decay)"),
        (lambda: optreg.configure_optimizer("adamw", model, betas=(tensor, 0.999)),
         "betas: torch.AdamW refused the configuration: betas must be either both floats or both Tensors"),
        (lambda: optreg.configure_optimizer("adamw", model, betas=(tensor, tensor), foreach=True),
         "betas: torch.AdamW refused the configuration: betas[0] as a Tensor is not supported for capturable=False "
         "and foreach=True"),
    ]
    for call, expected in cases:
        with pytest.raises(ConfigError) as info:
            call()
        assert str(info.value) == expected


def test_configure_lr_scheduler_takes_a_warmup_of_steps_as_build_does():
    """The README: a warmup `ratio` needs build()'s run length; a warmup of `steps` does not, and the call's lrs are
    build's."""
    spec = {"name": "CosineAnnealingLR", "T_max": 10, "warmup": {"steps": 3, "start_factor": 0.1}}
    built = optreg.build({"optimizer": {"name": "SGD", "lr": 0.1}, "scheduler": spec}, make_model())
    optimizer = optreg.configure_optimizer("SGD", make_model(), lr=0.1)
    scheduler = optreg.configure_lr_scheduler(optimizer, spec)
    lrs = []
    for pair in ((built.optimizer, built.scheduler), (optimizer, scheduler)):
        lrs.append([])
        for _ in range(13):
            lrs[-1].append(pair[0].param_groups[0]["lr"])
            pair[0].step()
            pair[1].step()
    assert lrs[0] == lrs[1] and lrs[0][:4] == pytest.approx([0.01, 0.04, 0.07, 0.1])
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(optimizer, {**spec, "warmup": {"ratio": 0.1}})
    assert [e.path for e in info.value.errors] == ["warmup.ratio"]

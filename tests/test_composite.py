"""Composite optimizers: param_groups rules that name their own optimizer (Muon for the matrices, AdamW for the
1-D parameters and the embedding / head), against the same optimizers built by hand on the same split (torch 2.13's
torch.optim.Muon and AdamW)."""

from __future__ import annotations

import io

import pytest
import torch

import optreg
from optreg import ConfigError
from optreg.core.composite_optimizer import Composite

MUON_ADAMW = {
    "name": "Muon", "lr": 0.02,
    "param_groups": [
        {"max_ndim": 1, "optimizer": {"name": "AdamW", "lr": 3e-4, "betas": [0.9, 0.95]}},
        {"params": ["embed.*", "head.*"], "optimizer": {"name": "AdamW", "lr": 3e-4}},
    ],
}


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(16, 8)
        self.body = torch.nn.Linear(8, 8)
        self.norm = torch.nn.LayerNorm(8)
        self.head = torch.nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.norm(torch.tanh(self.body(self.embed(x)))))


def _net() -> Net:
    torch.manual_seed(0)
    return Net()


DATA = torch.randint(0, 16, (32,), generator=torch.Generator().manual_seed(3))


def _steps(model: Net, optimizer, n: int, scheduler=None) -> None:
    for _ in range(n):
        optimizer.zero_grad()
        model(DATA).square().mean().backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()


def _by_hand(model: Net) -> list[torch.optim.Optimizer]:
    named = dict(model.named_parameters())
    return [torch.optim.Muon([named["body.weight"]], lr=0.02),
            torch.optim.AdamW([named["body.bias"], named["norm.weight"], named["norm.bias"], named["head.bias"]],
                              lr=3e-4, betas=(0.9, 0.95)),
            torch.optim.AdamW([named["embed.weight"], named["head.weight"]], lr=3e-4)]


class _Both:
    def __init__(self, parts):
        self.parts = parts

    def zero_grad(self):
        for p in self.parts:
            p.zero_grad()

    def step(self):
        for p in self.parts:
            p.step()


def test_composite_steps_equal_the_hand_split_bit_for_bit():
    hand, ours = _net(), _net()
    _steps(hand, _Both(_by_hand(hand)), 5)
    built = optreg.build({"optimizer": MUON_ADAMW}, ours)
    assert isinstance(built.optimizer, Composite) and isinstance(built.optimizer, torch.optim.Optimizer)
    _steps(ours, built.optimizer, 5)
    for (name, a), b in zip(hand.named_parameters(), ours.parameters()):
        assert torch.equal(a, b), name
    assert not torch.equal(hand.body.weight, _net().body.weight)


def test_groups_in_rule_order_each_naming_its_optimizer():
    built = optreg.build({"optimizer": MUON_ADAMW}, _net())
    rows = built.group_table()
    assert [(r["rule"], r["optimizer"], r["names"]) for r in rows] == [
        ("optimizer.param_groups[0]", "torch.AdamW", ["body.bias", "norm.weight", "norm.bias", "head.bias"]),
        ("optimizer.param_groups[1]", "torch.AdamW", ["embed.weight", "head.weight"]),
        ("default", "torch.Muon", ["body.weight"]),
    ]
    assert [g["optimizer"] for g in built.optimizer.param_groups] == ["torch.AdamW", "torch.AdamW", "torch.Muon"]
    assert [g["betas"] for g in built.optimizer.param_groups[:2]] == [(0.9, 0.95), (0.9, 0.999)]


def test_lr_mult_scales_the_rules_own_optimizer():
    spec = {**MUON_ADAMW, "param_groups": [{**MUON_ADAMW["param_groups"][0], "lr_mult": 0.5},
                                           MUON_ADAMW["param_groups"][1]]}
    built = optreg.build({"optimizer": spec}, _net())
    assert [g["lr"] for g in built.optimizer.param_groups] == [1.5e-4, 3e-4, 0.02]


def _straight_and_saved(config):
    """A model stepped 6 times by the config's build; the checkpoint (weights_only) of another after 3 steps; a
    third model holding that checkpoint's weights, to resume on."""
    straight = _net()
    whole = optreg.build(config, straight)
    _steps(straight, whole.optimizer, 6, whole.scheduler)
    first = _net()
    run = optreg.build(config, first)
    _steps(first, run.optimizer, 3, run.scheduler)
    buffer = io.BytesIO()
    torch.save({"model": first.state_dict(), "optimizer": run.optimizer.state_dict(),
                "scheduler": run.scheduler.state_dict()}, buffer)
    buffer.seek(0)
    saved = torch.load(buffer, weights_only=True)
    resumed = _net()
    resumed.load_state_dict(saved["model"])
    return straight, saved, resumed


def test_state_dict_resumes_exactly_and_loads_with_weights_only():
    config = {"optimizer": MUON_ADAMW, "scheduler": {"name": "CosineAnnealingLR", "T_max": 10}}
    straight, saved, resumed = _straight_and_saved(config)
    again = optreg.build(config, resumed)
    again.optimizer.load_state_dict(saved["optimizer"])
    again.scheduler.load_state_dict(saved["scheduler"])
    assert [g["optimizer"] for g in again.optimizer.param_groups] == ["torch.AdamW", "torch.AdamW", "torch.Muon"]
    _steps(resumed, again.optimizer, 3, again.scheduler)
    for (name, a), b in zip(straight.named_parameters(), resumed.parameters()):
        assert torch.equal(a, b), name


@pytest.mark.parametrize("form", ["torch", "per-part"])
def test_the_state_dict_has_torchs_shape_and_the_older_per_part_form_still_loads(form):
    """torch's shape over the composite's groups (what torch.distributed.checkpoint reads); optreg 0.2 wrote one
    state dict per part, which still resumes exactly."""
    straight = _net()
    built = optreg.build({"optimizer": MUON_ADAMW}, straight)
    _steps(straight, built.optimizer, 6)
    first = _net()
    run = optreg.build({"optimizer": MUON_ADAMW}, first)
    _steps(first, run.optimizer, 3)
    sd = run.optimizer.state_dict()
    assert set(sd) == {"state", "param_groups", "optimizers"}
    numbered = [i for g in sd["param_groups"] for i in g["params"]]
    assert numbered == list(range(len(numbered))) and set(sd["state"]) == set(numbered)
    if form == "per-part":
        sd = {"optimizers": run.optimizer.names, "parts": [part.state_dict() for part in run.optimizer.parts]}
    resumed = _net()
    resumed.load_state_dict(first.state_dict())
    again = optreg.build({"optimizer": MUON_ADAMW}, resumed)
    again.optimizer.load_state_dict(sd)
    _steps(resumed, again.optimizer, 3)
    for (name, a), b in zip(straight.named_parameters(), resumed.parameters()):
        assert torch.equal(a, b), name


def test_a_scheduler_scales_each_group_from_its_own_initial_lr():
    import math

    built = optreg.build({"optimizer": MUON_ADAMW, "scheduler": {"name": "CosineAnnealingLR", "T_max": 10}}, _net())
    _steps(_net(), built.optimizer, 0)
    for _ in range(4):
        built.optimizer.step()
        built.scheduler.step()
    factor = 0.5 * (1 + math.cos(math.pi * 4 / 10))
    for group, base in zip(built.optimizer.param_groups, [3e-4, 3e-4, 0.02]):
        assert group["lr"] == pytest.approx(base * factor, rel=1e-12)
        assert group["initial_lr"] == base


def test_an_absolute_schedule_over_a_composite_is_refused():
    config = {"optimizer": MUON_ADAMW, "scheduler": {"name": "cerebras.LinearLR", "initial_learning_rate": 0.1,
                                                     "end_learning_rate": 0.0, "total_iters": 10}}
    with pytest.raises(ConfigError) as info:
        optreg.build(config, _net())
    assert info.value.errors[0].path == "scheduler" and "absolute lr" in info.value.errors[0].message


def test_a_scheduled_key_some_part_lacks_is_refused():
    """OneCycleLR cycles momentum (Muon's) by default: AdamW's groups have none."""
    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": MUON_ADAMW, "scheduler": {"name": "OneCycleLR", "max_lr": 0.1,
                                                               "total_steps": 10}}, _net())
    (error,) = info.value.errors
    assert error.path == "scheduler.cycle_momentum"
    assert error.message == ("the composite's parts share neither momentum nor betas (torch.Muon: momentum, "
                             "torch.AdamW: betas), one of which it cycles in every group; set cycle_momentum: "
                             "false")
    optimizer = optreg.configure_optimizer("Muon", _net(), lr=0.02, param_groups=MUON_ADAMW["param_groups"])
    with pytest.raises(ConfigError) as info:   # configure_lr_scheduler over the built composite says the same
        optreg.configure_lr_scheduler(optimizer, "OneCycleLR", max_lr=0.1, total_steps=10)
    assert [(e.path, e.message) for e in info.value.errors] == [("cycle_momentum", error.message)]


def test_a_scheduled_key_a_part_lacks_names_that_part():
    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": MUON_ADAMW, "scheduler": {"name": "oneflow.CosineAnnealingLR", "T_max": 10,
                                                               "key": "momentum"}}, _net())
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("scheduler.key", "torch.AdamW (part of the composite) has no 'momentum' to schedule")]


def test_muon_alone_names_the_parameter_and_the_rule_to_add():
    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": {"name": "Muon", "lr": 0.02}}, _net())
    (first,) = info.value.errors   # one error for the model's four vectors, the first three named
    assert first.path == "optimizer.params"
    assert "'embed.weight'" not in first.message
    assert first.message == ("Muon updates only 2-D parameters, held whole (not a shard of an FSDP2 DTensor: it "
                             "would orthogonalise the shard); 'body.bias' has shape (8,), 'norm.weight' has shape "
                             "(8,), 'norm.bias' has shape (8,) and 1 more: route them to another optimizer with a "
                             "param_groups rule, e.g. {max_ndim: 1, optimizer: {name: AdamW}}")


def test_the_rule_to_add_routes_the_refused_parameters_that_are_not_vectors():
    """Muon refuses a 4-D kernel or a 3-D token too: the rule to add names them, as `max_ndim: 1` would leave them
    with Muon (it was the hint for every refused parameter)."""
    class Conv(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.token = torch.nn.Parameter(torch.zeros(1, 1, 4))
            self.conv = torch.nn.Conv2d(4, 4, 3, bias=False)
            self.fc = torch.nn.Linear(4, 4, bias=False)

    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": {"name": "Muon", "lr": 0.02}}, Conv())
    (first,) = info.value.errors
    assert first.message.endswith("'token' has shape (1, 1, 4), 'conv.weight' has shape (4, 4, 3, 3): route them to "
                                  "another optimizer with a param_groups rule, e.g. {params: [token, conv.weight], "
                                  "optimizer: {name: AdamW}}")
    rule = {"params": ["token", "conv.weight"], "optimizer": {"name": "AdamW"}}
    optreg.build({"optimizer": {"name": "Muon", "lr": 0.02, "param_groups": [rule]}}, Conv())


def test_an_unrouted_parameter_of_a_composite_is_refused_with_the_same_hint():
    spec = {**MUON_ADAMW, "param_groups": [MUON_ADAMW["param_groups"][1]]}
    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": spec}, _net())
    assert {e.path for e in info.value.errors} == {"optimizer.params"}
    assert any("'norm.weight' has shape (8,)" in e.message for e in info.value.errors)


@pytest.mark.parametrize("rule, path, words", [
    ({"max_ndim": 1, "optimizer": {"name": "AdamW", "param_groups": [{"params": "*"}]}},
     "optimizer.param_groups[0].optimizer.param_groups", "cannot nest"),
    ({"max_ndim": 1, "lr": 0.1, "optimizer": {"name": "AdamW"}}, "optimizer.param_groups[0].lr",
     "put lr inside optimizer:"),
    ({"max_ndim": 1, "optimizer": {"name": "mindspore.LARS", "optimizer": {"name": "Momentum", "learning_rate": 0.1,
                                                                             "momentum": 0.9}}},
     "optimizer.param_groups[0].optimizer.name", "wraps another optimizer"),
    ({"max_ndim": 1, "optimizer": {"name": "mindspore.Adam", "learning_rate": [0.1, 0.05, 0.01]}},
     "optimizer.param_groups[0].optimizer.learning_rate", "inside a composite"),
    ({"max_ndim": 1, "optimizer": {"lr": 0.1}}, "optimizer.param_groups[0].optimizer.name", "required"),
])
def test_refusals(rule, path, words):
    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": {"name": "Muon", "param_groups": [rule, MUON_ADAMW["param_groups"][1]]}}, _net())
    hits = [e for e in info.value.errors if e.path == path]
    assert hits and words in hits[0].message, info.value


def test_a_main_rule_shadowed_by_a_routed_rule_names_the_rule_and_the_parameters():
    """A main-optimizer rule whose parameters an earlier rule routed to its own optimizer is the error of a shadowed
    rule (as a plain optimizer's), at the rule's params, naming the earlier rule and the first parameters it took."""
    spec = {**MUON_ADAMW, "param_groups": [*MUON_ADAMW["param_groups"], {"params": "*.bias", "lr_mult": 0.5}]}
    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": spec}, _net())
    assert [(e.path, e.message) for e in info.value.errors] == [(
        "optimizer.param_groups[2].params", "every parameter it matches (body.bias, norm.bias, head.bias) is already "
                                            "taken by optimizer.param_groups[0] (the first matching rule wins); put "
                                            "this rule first")]


def test_a_main_rule_selects_a_tied_parameter_by_its_other_name():
    """The main optimizer's rules select a tied parameter by any of its names, as a plain optimizer's do
    (`lm_head.weight` is `embed.weight`): it said 'pattern 'lm_head.weight' matches no parameter'."""
    from tests.test_param_group_selectors import Tied

    model = Tied()
    built = optreg.build({"optimizer": {"name": "SGD", "lr": 0.1, "param_groups": [
        {"params": "proj.bias", "optimizer": {"name": "AdamW", "lr": 3e-4}},
        {"params": "lm_head.weight", "lr_mult": 0.5}]}}, model)
    assert [(r["rule"], r["names"], r["optimizer"]) for r in built.group_table()] == [
        ("optimizer.param_groups[0]", ["proj.bias"], "torch.AdamW"),
        ("optimizer.param_groups[1]", ["embed.weight"], "torch.SGD"), ("default", ["proj.weight"], "torch.SGD")]
    assert [g["lr"] for g in built.optimizer.param_groups] == [3e-4, 0.05, 0.1]


def test_validate_without_the_model_checks_each_part():
    from optreg.api import to_experiment

    bad = {**MUON_ADAMW, "param_groups": [{"max_ndim": 1, "optimizer": {"name": "AdamW", "betas": [0.9, 1.5]}}]}
    with pytest.raises(ConfigError) as info:
        to_experiment({"optimizer": bad})
    assert [e.path for e in info.value.errors] == ["optimizer.param_groups[0].optimizer.betas[1]"]
    to_experiment({"optimizer": MUON_ADAMW, "scheduler": {"name": "CosineAnnealingLR", "T_max": 10}})


def test_rebuilding_a_composite_from_its_class_is_refused():
    built = optreg.build({"optimizer": MUON_ADAMW}, _net())
    with pytest.raises(ConfigError) as info:
        type(built.optimizer)(list(_net().parameters()), **built.optimizer.defaults)
    assert "ZeroRedundancyOptimizer" in info.value.errors[0].message


def test_a_closure_is_evaluated_once():
    model = _net()
    built = optreg.build({"optimizer": MUON_ADAMW}, model)
    calls = []

    def closure():
        calls.append(1)
        built.optimizer.zero_grad()
        loss = model(DATA).square().mean()
        loss.backward()
        return loss

    assert built.optimizer.step(closure) is not None and calls == [1]


def test_lightning_trains_with_a_composite():
    lightning = pytest.importorskip("lightning.pytorch")

    class Module(lightning.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = _net()

        def training_step(self, batch, _):
            return self.net(batch[0]).square().mean()

        def configure_optimizers(self):
            built = optreg.build({"optimizer": MUON_ADAMW, "scheduler": {"name": "CosineAnnealingLR", "T_max": 10}},
                                 self.net)
            return {"optimizer": built.optimizer, "lr_scheduler": {"scheduler": built.scheduler, "interval": "step"}}

    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(DATA.repeat(3)), batch_size=32)
    module = Module()
    trainer = lightning.Trainer(max_steps=3, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                                enable_model_summary=False, accelerator="cpu", devices=1)
    trainer.fit(module, data)
    hand = _net()
    parts = _by_hand(hand)
    schedulers = [torch.optim.lr_scheduler.CosineAnnealingLR(p, T_max=10) for p in parts]
    for _ in range(3):
        for p in parts:
            p.zero_grad()
        hand(DATA).square().mean().backward()
        for p in parts:
            p.step()
        for s in schedulers:
            s.step()
    for (name, a), b in zip(hand.named_parameters(), module.net.parameters()):
        assert torch.equal(a, b), name


def test_groups_command_shows_each_groups_optimizer(capsys, monkeypatch):
    from pathlib import Path

    from optreg.cli import main

    repo = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(repo)
    args = ["groups", "examples/muon_adamw.yaml", "--model", "examples.finetune_models:tiny_vit"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "optimizer" in out and "torch.AdamW" in out and "torch.Muon" in out
    assert main([*args, "--json"]) == 0
    rows = __import__("json").loads(capsys.readouterr().out)
    assert [(r["rule"], r["optimizer"]) for r in rows] == [
        ("optimizer.param_groups[0]", "torch.AdamW"), ("optimizer.param_groups[1]", "torch.AdamW"),
        ("default", "torch.Muon")]
    assert all(n.startswith("blocks.") and n.endswith("weight") for n in rows[2]["names"])


def test_configure_optimizer_takes_the_same_rules():
    a, b = _net(), _net()
    built = optreg.build({"optimizer": MUON_ADAMW}, a)
    options = {k: v for k, v in MUON_ADAMW.items() if k != "name"}
    direct = optreg.configure_optimizer("Muon", b, **options)
    _steps(a, built.optimizer, 2)
    _steps(b, direct, 2)
    assert all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters()))


def test_a_group_added_later_joins_the_part_it_names():
    model = _net()
    extra = torch.nn.Parameter(torch.ones(3))
    built = optreg.build({"optimizer": MUON_ADAMW}, model)
    built.optimizer.add_param_group({"params": [extra], "optimizer": "torch.AdamW", "lr": 0.1})
    adamw = built.optimizer.parts[1]
    assert adamw.param_groups[-1]["params"] == [extra] and built.optimizer.param_groups[-1] is adamw.param_groups[-1]
    extra.grad = torch.ones(3)
    built.optimizer.step()
    assert extra.detach().tolist() != [1.0, 1.0, 1.0]


def test_deepcopy_keeps_every_part():
    import copy

    model = _net()
    built = optreg.build({"optimizer": MUON_ADAMW}, model)
    _steps(model, built.optimizer, 2)
    model2, optimizer2 = copy.deepcopy((model, built.optimizer))
    _steps(model, built.optimizer, 2)
    _steps(model2, optimizer2, 2)
    assert optimizer2.names == ["torch.Muon", "torch.AdamW", "torch.AdamW"]
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), model2.parameters()))
    assert all(p in optimizer2.state for p in model2.parameters())


def test_a_part_whose_groups_carry_names_joins_parts_whose_groups_do_not():
    """MindSpore's groups carry `param_names` (its binder names them), torch's do not: torch refuses an optimizer
    whose groups mix the two, so the composite must not hand them to torch's check as one optimizer's."""
    config = {"optimizer": {**MUON_ADAMW, "param_groups": [
        MUON_ADAMW["param_groups"][0],
        {"params": ["embed.*", "head.*"], "optimizer": {"name": "mindspore.Adam", "learning_rate": 3e-4}}]},
        "scheduler": {"name": "CosineAnnealingLR", "T_max": 10}}
    hand, ours = _net(), _net()
    named = dict(hand.named_parameters())
    parts = [torch.optim.Muon([named["body.weight"]], lr=0.02),
             torch.optim.AdamW([named[n] for n in ("body.bias", "norm.weight", "norm.bias", "head.bias")],
                               lr=3e-4, betas=(0.9, 0.95)),
             optreg.configure_optimizer("mindspore.Adam", [(n, named[n]) for n in ("embed.weight", "head.weight")],
                                        learning_rate=3e-4)]
    _steps(hand, _Both(parts), 4)
    built = optreg.build(config, ours)
    assert [g["optimizer"] for g in built.optimizer.param_groups] == ["torch.AdamW", "mindspore.Adam", "torch.Muon"]
    assert built.optimizer.param_groups[1]["param_names"] == ["embed.weight", "head.weight"]
    _steps(ours, built.optimizer, 4)
    for (name, a), b in zip(hand.named_parameters(), ours.parameters()):
        assert torch.equal(a, b), name

    straight, saved, resumed = _straight_and_saved(config)
    options = {k: v for k, v in config["optimizer"].items() if k != "name"}
    again = optreg.configure_optimizer("Muon", resumed, **options)
    sched = optreg.configure_lr_scheduler(again, config["scheduler"])
    again.load_state_dict(saved["optimizer"])
    sched.load_state_dict(saved["scheduler"])
    _steps(resumed, again, 3, sched)
    for (name, a), b in zip(straight.named_parameters(), resumed.parameters()):
        assert torch.equal(a, b), name


THOR = {"name": "mindspore.thor", "learning_rate": 0.1, "damping": 0.03, "momentum": 0.9}


@pytest.mark.parametrize("rule, path, words", [
    ({"max_ndim": 1, "optimizer": {"name": "mindspore.LARS", "optimizer": {"name": "Momentum", "learning_rate": 0.1,
                                                                             "momentum": 0.9}}},
     "optimizer.param_groups[0].optimizer.name", "wraps another optimizer"),
    ({"max_ndim": 1, "optimizer": {"name": "mindspore.Adam", "learning_rate": [0.1, 0.05, 0.01]}},
     "optimizer.param_groups[0].optimizer.learning_rate", "inside a composite"),
    ({"max_ndim": 1, "optimizer": THOR}, "optimizer.param_groups[0].optimizer.name", "takes the model"),
    ({"max_ndim": 1, "optimizer": {"name": "AdamW"}, "lr_mult": -2}, "optimizer.param_groups[0].lr_mult",
     "must be >= 0"),
    ({"max_ndim": "one", "optimizer": {"name": "AdamW"}}, "optimizer.param_groups[0].max_ndim", "integer"),
    ({"max_ndim": 1, "optimizer": {"name": "LBFGS"}}, "optimizer.param_groups[0].optimizer.name",
     "a composite steps its parts without a closure (it evaluates the closure once, before them), and torch.LBFGS "
     "needs one (its step evaluates the loss through it)"),
], ids=["wrapper", "dynamic-lr", "thor", "lr_mult", "selector", "closure"])
def test_validate_build_and_configure_optimizer_refuse_a_part_at_the_same_path(rule, path, words):
    """What needs no model is refused without it (`optreg validate`), at the path build and configure_optimizer
    give it: the rule's own keys at the rule, the part's at its optimizer."""
    from optreg.api import to_experiment

    spec = {"name": "Muon", "param_groups": [rule, MUON_ADAMW["param_groups"][1]]}
    for prefix, entry_point in (("optimizer.", lambda: to_experiment({"optimizer": spec})),
                                ("optimizer.", lambda: optreg.build({"optimizer": spec}, _net())),
                                ("", lambda: optreg.configure_optimizer("Muon", _net(),
                                                                        param_groups=spec["param_groups"]))):
        with pytest.raises(ConfigError) as info:
            entry_point()
        assert [e.path for e in info.value.errors] == [prefix + path.removeprefix("optimizer.")], info.value
        assert words in info.value.errors[0].message


@pytest.mark.parametrize("accumulation", [1, 2])
def test_a_part_that_steps_only_through_a_closure_is_refused_at_its_path(accumulation):
    """pytorch_optimizer's AliG (its limits: it steps only through a closure, whose argument is optional) as a part,
    and LBFGS as the main optimizer, are refused at their names (they built, and raised at the first step: the
    composite steps its parts without the closure); under gradient accumulation too, which steps without one:
    the one error, in validate (no model) as in build (gradient accumulation's check does not say it again)."""
    from optreg.api import to_experiment

    pytest.importorskip("pytorch_optimizer")
    train = {"steps": 4, "accumulation_steps": accumulation}
    alig = {"max_ndim": 1, "optimizer": {"name": "pytorch_optimizer.AliG", "max_lr": 0.1}}
    lbfgs = {"name": "LBFGS", "param_groups": [{"max_ndim": 1, "optimizer": {"name": "AdamW"}}]}
    for spec, path, name in (({**MUON_ADAMW, "param_groups": [alig, MUON_ADAMW["param_groups"][1]]},
                              "optimizer.param_groups[0].optimizer.name", "pytorch_optimizer.AliG"),
                             (lbfgs, "optimizer.name", "torch.LBFGS")):
        for entry_point in (lambda: to_experiment({"optimizer": spec, "train": train}),
                            lambda: optreg.build({"optimizer": spec, "train": train}, _net())):
            with pytest.raises(ConfigError) as info:
                entry_point()
            assert [(e.path, e.message) for e in info.value.errors] == [(
                path, f"a composite steps its parts without a closure (it evaluates the closure once, before them), "
                      f"and {name} needs one (its step evaluates the loss through it); train it alone, or give its "
                      f"parameters another optimizer")]


def test_a_parts_group_keys_go_beside_its_optimizer_as_any_rules_do():
    """A dialect's group keys are no options of its optimizer (MindSpore's grad_centralization, OneFlow's
    clip_grad_max_norm): beside `optimizer:`, where every other rule writes them, they reach the part's group, and
    the part steps as the optimizer built by hand with that group."""
    rules = [{"max_ndim": 1, "clip_grad_max_norm": 1.0, "optimizer": {"name": "oneflow.AdamW", "lr": 3e-4}},
             {"params": ["embed.*", "head.*"], "grad_centralization": True,
              "optimizer": {"name": "mindspore.Adam", "learning_rate": 3e-4}}]
    hand, ours = _net(), _net()
    named = dict(hand.named_parameters())
    vectors, tables = ("body.bias", "norm.weight", "norm.bias", "head.bias"), ("embed.weight", "head.weight")
    parts = [torch.optim.Muon([named["body.weight"]], lr=0.02),
             optreg.configure_optimizer("oneflow.AdamW", [(n, named[n]) for n in vectors], lr=3e-4,
                                        param_groups=[{"params": "*", "clip_grad_max_norm": 1.0}]),
             optreg.configure_optimizer("mindspore.Adam", [(n, named[n]) for n in tables], learning_rate=3e-4,
                                        param_groups=[{"params": "*", "grad_centralization": True}])]
    _steps(hand, _Both(parts), 3)
    built = optreg.build({"optimizer": {"name": "Muon", "lr": 0.02, "param_groups": rules}}, ours)
    assert built.optimizer.param_groups[0]["clip_grad_max_norm"] == 1.0
    assert built.optimizer.param_groups[1]["grad_centralization"] is True
    _steps(ours, built.optimizer, 3)
    for (name, a), b in zip(hand.named_parameters(), ours.parameters()):
        assert torch.equal(a, b), name


def test_a_misspelt_group_key_beside_a_parts_optimizer_is_refused_at_the_rule():
    from optreg.api import to_experiment

    rules = [{"max_ndim": 1, "optimizer": {"name": "AdamW"}},
             {"params": ["embed.*", "head.*"], "grad_centralisation": True,
              "optimizer": {"name": "mindspore.Adam", "learning_rate": 3e-4}}]
    for entry_point in (lambda: to_experiment({"optimizer": {"name": "Muon", "param_groups": rules}}),
                        lambda: optreg.build({"optimizer": {"name": "Muon", "param_groups": rules}}, _net())):
        with pytest.raises(ConfigError) as info:
            entry_point()
        [item] = info.value.errors
        assert item.path == "optimizer.param_groups[1].grad_centralisation"
        assert item.suggestion == "grad_centralization"


VIT_COMPOSITE = {
    "name": "Muon", "lr": 0.02, "weight_decay": 0.1, "no_weight_decay": True,
    "layer_decay": {"rate": 0.5, "layer": "blocks.{i}.*", "before": ["cls_token", "pos_embed", "patch_embed.*"]},
    "param_groups": [
        {"max_ndim": 1, "optimizer": {"name": "AdamW", "lr": 1e-3, "weight_decay": 0.1}},
        {"params": ["cls_token", "pos_embed"], "optimizer": {"name": "AdamW", "lr": 1e-3, "weight_decay": 0.1}},
    ],
}


def _vit_expected(model, adamw_decay_1d: bool = False) -> dict[str, tuple[str, float, float]]:
    """timm's rules over every parameter, each part's own lr and weight decay their base: layer 0 for the `before`
    names, i + 1 for blocks.{i}, 4 for the rest (3 blocks), lr = base · 0.5^(4 - layer); weight decay 0 for a
    parameter of at most one dimension and for the model's no_weight_decay() names (cls_token, pos_embed)."""
    out = {}
    for name, p in model.named_parameters():
        layer = 0 if name in ("cls_token", "pos_embed") or name.startswith("patch_embed.") else \
            int(name.split(".")[1]) + 1 if name.startswith("blocks.") else 4
        adamw = p.dim() <= 1 or name in ("cls_token", "pos_embed")
        undecayed = name in ("cls_token", "pos_embed") or (p.dim() <= 1 and not adamw_decay_1d)
        out[name] = ("torch.AdamW" if adamw else "torch.Muon", (1e-3 if adamw else 0.02) * 0.5 ** (4 - layer),
                     0.0 if undecayed else 0.1)
    return out


def _per_name(model, optimizer) -> dict[str, tuple[str, float, float]]:
    names = {id(p): n for n, p in model.named_parameters()}
    return {names[id(p)]: (g["optimizer"], g["lr"], g["weight_decay"]) for g in optimizer.param_groups
            for p in g["params"]}


def test_no_weight_decay_and_layer_decay_reach_every_part():
    """The main section's no_weight_decay and layer_decay reach every part's parameters, as timm's reach every
    parameter (its Muon's AdamW fallback included): each part's own lr and weight decay are what they scale and
    zero, and the layers are numbered over the whole model (a `before` pattern may name a routed parameter). Before,
    the AdamW part's norms and biases kept weight decay 0.1 and lr 0.001 (blocks.0's matrices 0.0025), and
    `before: [cls_token, ...]` was 'matches no parameter'. One AdamW step over a part's groups is the step of
    torch's AdamW built by hand with those values."""
    from examples.finetune_models import tiny_vit

    model = tiny_vit()
    built = optreg.build({"optimizer": VIT_COMPOSITE}, model)
    expected = _vit_expected(model)
    got = _per_name(model, built.optimizer)
    assert got.keys() == expected.keys()
    for name, (optimizer, lr, weight_decay) in expected.items():
        assert got[name][0] == optimizer and got[name][1:] == pytest.approx((lr, weight_decay)), name
    assert got["blocks.0.norm1.weight"][1:] == pytest.approx((1.25e-4, 0.0))
    assert got["blocks.0.qkv.weight"][1:] == pytest.approx((2.5e-3, 0.1))
    rows = {n: (r["lr"], r["weight_decay"]) for r in built.group_table() for n in r["names"]}
    assert rows == {n: pytest.approx(v[1:]) for n, v in got.items()}   # the table is the built optimizer's
    # configure_optimizer takes the same keys
    direct = optreg.configure_optimizer("Muon", model, **{k: v for k, v in VIT_COMPOSITE.items() if k != "name"})
    assert _per_name(model, direct) == got
    # a part that gives the key itself keeps its own: its norms and biases decay, the layers still scale them
    spec = {**VIT_COMPOSITE, "param_groups": [
        {"max_ndim": 1, "optimizer": {"name": "AdamW", "lr": 1e-3, "weight_decay": 0.1, "no_weight_decay": False}},
        VIT_COMPOSITE["param_groups"][1]]}
    own = _per_name(model, optreg.build({"optimizer": spec}, model).optimizer)
    for name, (optimizer, lr, weight_decay) in _vit_expected(model, adamw_decay_1d=True).items():
        assert own[name][0] == optimizer and own[name][1:] == pytest.approx((lr, weight_decay)), name
    # a step of the AdamW part is torch's AdamW with those values, parameter by parameter
    hand_model = tiny_vit()
    hand_model.load_state_dict(model.state_dict())
    hand = {n: p for n, p in hand_model.named_parameters()}
    adamw = [n for n, v in expected.items() if v[0] == "torch.AdamW"]
    by_hand = torch.optim.AdamW([{"params": [hand[n]], "lr": expected[n][1], "weight_decay": expected[n][2]}
                                 for n in adamw])
    for m in (model, hand_model):
        for p in m.parameters():
            p.grad = torch.full_like(p, 0.5)
    built.optimizer.step()
    by_hand.step()
    ours = dict(model.named_parameters())
    assert all(torch.equal(ours[n], hand[n]) for n in adamw)


def test_a_setting_a_part_cannot_take_is_refused_at_its_key(tmp_path, capsys, monkeypatch):
    """A part whose optimizer has no option for the main section's setting to act on (Rprop: no weight decay for
    no_weight_decay to set) is refused at the setting's key, naming the part, by validate (with the model or
    without), build and configure_optimizer alike; before, the setting was left out of that part silently. The part
    keeps out of it with the key itself (`no_weight_decay: false`)."""
    from pathlib import Path

    from examples.finetune_models import tiny_vit
    from optreg.api import to_experiment
    from optreg.cli import main

    message = "torch.Rprop (the optimizer of {}param_groups[0]) has no weight_decay option for no_weight_decay to set"
    spec = {"name": "Muon", "lr": 0.02, "no_weight_decay": True, "param_groups": [
        {"max_ndim": 1, "optimizer": {"name": "Rprop", "lr": 0.01}},
        {"params": ["cls_token", "pos_embed"], "optimizer": {"name": "AdamW", "lr": 1e-3}}]}
    expected = [("optimizer.no_weight_decay", message.format("optimizer."))]
    for entry_point in (lambda: to_experiment({"optimizer": spec}), lambda: optreg.build({"optimizer": spec},
                                                                                         tiny_vit())):
        with pytest.raises(ConfigError) as info:
            entry_point()
        assert [(e.path, e.message) for e in info.value.errors] == expected
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("Muon", tiny_vit(), **{k: v for k, v in spec.items() if k != "name"})
    assert [(e.path, e.message) for e in info.value.errors] == [("no_weight_decay", message.format(""))]
    path = tmp_path / "rprop.yaml"
    path.write_text("optimizer:\n  name: Muon\n  lr: 0.02\n  no_weight_decay: true\n  param_groups:\n"
                    "    - {max_ndim: 1, optimizer: {name: Rprop, lr: 0.01}}\n"
                    "    - {params: [cls_token, pos_embed], optimizer: {name: AdamW, lr: 1.0e-3}}\n")
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    for model in ([], ["--model", "examples.finetune_models:tiny_vit"]):
        assert main(["validate", str(path), *model]) == 1
        assert f"{path}:4:3: optimizer.no_weight_decay: {message.format('optimizer.')}" in capsys.readouterr().err
    kept_out = {**spec, "param_groups": [
        {"max_ndim": 1, "optimizer": {"name": "Rprop", "lr": 0.01, "no_weight_decay": False}},
        spec["param_groups"][1]]}
    to_experiment({"optimizer": kept_out})
    built = optreg.build({"optimizer": kept_out}, tiny_vit())
    assert [(g["optimizer"], g.get("weight_decay")) for g in built.optimizer.param_groups] == [
        ("torch.Rprop", None), ("torch.AdamW", 0.0), ("torch.Muon", 0.1)]   # the tokens: no_weight_decay()


def test_a_main_rule_selects_by_module_class():
    """The main optimizer's rules select by the class of the owning module (`modules:`) as a plain optimizer's do:
    the main part is planned within the whole model (groups.Scope). It said 'modules selects by the class of the
    module that owns a parameter: pass the Module itself', though the Module was passed."""
    model = _net()
    built = optreg.build({"optimizer": {**MUON_ADAMW, "param_groups": [
        *MUON_ADAMW["param_groups"], {"modules": "Linear", "lr_mult": 0.5}]}}, model)
    assert [(r["rule"], r["names"], r["optimizer"]) for r in built.group_table()] == [
        ("optimizer.param_groups[0]", ["body.bias", "norm.weight", "norm.bias", "head.bias"], "torch.AdamW"),
        ("optimizer.param_groups[1]", ["embed.weight", "head.weight"], "torch.AdamW"),
        ("optimizer.param_groups[2]", ["body.weight"], "torch.Muon")]
    assert [g["lr"] for g in built.optimizer.param_groups] == [3e-4, 3e-4, 0.01]

"""Name resolution, one rule for every dialect and kind: a name spelled as an entry spells it (case aside) finds
that entry; otherwise its normalised form (no case, '-', '_', spaces, nor a scheduler's LR suffix) must fit
exactly one entry of the dialect, and fitting two is a ConfigError that lists both."""

from __future__ import annotations

import textwrap

import pytest
import torch

import optreg
from optreg import ConfigError
from optreg.core.entry import OPTIMIZER, SCHEDULER
from optreg.core.registry import REGISTRY

FUNCTIONS = ("piecewise_constant_lr", "exponential_decay_lr", "natural_exp_decay_lr", "inverse_decay_lr",
             "cosine_decay_lr", "polynomial_decay_lr", "warmup_lr")
CLASSES = ("ExponentialDecayLR", "NaturalExpDecayLR", "InverseDecayLR", "CosineDecayLR", "PolynomialDecayLR",
           "WarmUpLR")


@pytest.mark.parametrize("name", FUNCTIONS + CLASSES)
def test_each_mindspore_name_finds_itself(name):
    assert REGISTRY.lookup(SCHEDULER, name, "mindspore").name == name
    assert REGISTRY.lookup(SCHEDULER, f"mindspore.{name}").name == name


def test_the_class_resolves_to_the_class_and_the_function_to_the_function():
    cls = REGISTRY.lookup(SCHEDULER, "ExponentialDecayLR", "mindspore")
    fn = REGISTRY.lookup(SCHEDULER, "exponential_decay_lr", "mindspore")
    assert cls.target.endswith(":ExponentialDecayLR") and fn.target.endswith(":DynamicExponentialDecayLR")
    assert "decay_steps" in [p.name for p in optreg.describe("ExponentialDecayLR", "mindspore").params]
    assert "total_step" in [p.name for p in optreg.describe("exponential_decay_lr", "mindspore").params]


@pytest.mark.parametrize("spelled, expected", [
    ("EXPONENTIAL_DECAY_LR", "exponential_decay_lr"),      # case never matters
    ("exponentialdecaylr", "ExponentialDecayLR"),
    ("Warmup_LR", "warmup_lr"),
    ("warmuplr", "WarmUpLR"),
    ("dynamic_cosine_decay_lr", "cosine_decay_lr"),        # the former names stay aliases
    ("dynamiccosinedecay", "cosine_decay_lr"),             # ... and normalise like any name
    ("piecewise-constant", "piecewise_constant_lr"),       # normalised, one fit
])
def test_spelled_names_win_and_a_single_normalised_fit_is_found(spelled, expected):
    assert REGISTRY.lookup(SCHEDULER, spelled, "mindspore").name == expected


@pytest.mark.parametrize("name, first, second", [
    ("exponential_decay", "ExponentialDecayLR", "exponential_decay_lr"),
    ("CosineDecay", "CosineDecayLR", "cosine_decay_lr"),
    ("warm-up-lr", "WarmUpLR", "warmup_lr"),
])
def test_a_normalised_name_that_fits_two_entries_is_an_error_listing_both(name, first, second):
    with pytest.raises(ConfigError) as info:
        REGISTRY.lookup(SCHEDULER, name, "mindspore", path="scheduler.name")
    (item,) = info.value.errors
    assert item.path == "scheduler.name"
    assert item.message == (f"{name!r} is ambiguous: it matches the mindspore schedulers {first!r} and {second!r} "
                            f"(names compare without case, '-', '_' and an LR suffix); spell one of them exactly")
    assert item.suggestion in (first, second)


def test_the_ambiguity_error_carries_the_yaml_position(tmp_path):
    path = tmp_path / "experiment.yaml"
    path.write_text(textwrap.dedent("""\
        dialect: mindspore
        optimizer: {name: Momentum, learning_rate: 0.1, momentum: 0.9}
        scheduler:
          name: CosineDecay
          min_lr: 0.01
          max_lr: 0.1
          decay_steps: 10
        """))
    with pytest.raises(ConfigError) as info:
        optreg.load_config(path)
    (item,) = info.value.errors
    assert (item.path, item.location.line, item.location.column) == ("scheduler.name", 4, 3)
    assert str(item).startswith(f"{path}:4:3: scheduler.name: 'CosineDecay' is ambiguous: it matches the mindspore "
                                f"schedulers 'CosineDecayLR' and 'cosine_decay_lr'")
    assert str(item).endswith("(did you mean 'CosineDecayLR'?)")


def test_describe_and_build_refuse_an_ambiguous_name_too():
    with pytest.raises(ConfigError, match="'warmup' is ambiguous"):
        optreg.describe("warmup", "mindspore")
    opt = torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1)
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(opt, {"name": "mindspore.exponential_decay", "learning_rate": 0.1,
                                            "decay_rate": 0.9, "decay_steps": 4})
    assert [e.path for e in info.value.errors] == ["name"] and "is ambiguous" in str(info.value)


def test_unique_normalised_names_still_resolve_in_every_dialect():
    assert REGISTRY.lookup(OPTIMIZER, "adam_w").qualname == "torch.AdamW"
    assert REGISTRY.lookup(OPTIMIZER, "Adam-W", "cerebras").qualname == "cerebras.AdamW"
    assert REGISTRY.lookup(SCHEDULER, "cosine_annealing").qualname == "torch.CosineAnnealingLR"
    assert REGISTRY.lookup(SCHEDULER, "cosine_decay", "cerebras").qualname == "cerebras.CosineDecayLR"


@pytest.mark.parametrize("kind, register", [(OPTIMIZER, optreg.register_optimizer),
                                            (SCHEDULER, optreg.register_scheduler)])
def test_the_rule_holds_for_user_registrations_of_each_kind(scratch_registry, kind, register):
    class First:
        """first"""

    class Second:
        """second"""

    register("my_thing", dialect="oneflow")(First)
    register("MyThing", dialect="oneflow")(Second)
    assert REGISTRY.lookup(kind, "my_thing", "oneflow").target is First
    assert REGISTRY.lookup(kind, "MY_THING", "oneflow").target is First
    assert REGISTRY.lookup(kind, "MyThing", "oneflow").target is Second
    assert REGISTRY.lookup(kind, "mything", "oneflow").target is Second
    with pytest.raises(ConfigError) as info:
        REGISTRY.lookup(kind, "my-thing", "oneflow", path="optimizer.name")
    assert info.value.errors[0].path == "optimizer.name"
    assert f"it matches the oneflow {kind}s 'my_thing' and 'MyThing'" in info.value.errors[0].message
    with pytest.raises(ConfigError, match="clashes"):  # a spelling taken (case aside) is a clash
        register("MY_THING", dialect="oneflow")(First)


def test_every_hydra_group_file_name_names_its_component():
    """`oneflow_adamw` names oneflow.AdamW (the Hydra group option's name, a name `optreg show` takes); so do the
    group names of the dialects whose own name holds an underscore (`mindspore_experimental_adamw`,
    `mindspore_mint_adamw`), which were split at the first `_` and looked up as torch names."""
    from pathlib import Path

    import yaml

    configs = Path(optreg.__file__).parent / "configs"
    checked = 0
    for kind in (OPTIMIZER, SCHEDULER):
        for path in sorted((configs / kind).glob("*.yaml")):
            section = yaml.safe_load(path.read_text())
            dialect = section.get("dialect", "torch")
            try:
                entry = REGISTRY.lookup(kind, path.stem)
            except ConfigError as exc:   # `mindspore_cosine_decay`: CosineDecayLR and cosine_decay_lr (documented)
                assert "ambiguous" in str(exc) and section["name"] in str(exc), path.stem
                continue
            assert (entry.dialect, entry.name) == (dialect, section["name"].split(".")[-1]), path.stem
            checked += 1
    assert checked > 200
    assert REGISTRY.lookup(OPTIMIZER, "mindspore_experimental_adamw").qualname == "mindspore_experimental.AdamW"
    assert REGISTRY.lookup(OPTIMIZER, "MindSpore_Mint_AdamW").qualname == "mindspore_mint.AdamW"
    assert REGISTRY.lookup(OPTIMIZER, "mindspore_adam").qualname == "mindspore.Adam"


HOMONYM = ("'constant' without a prefix names torch.ConstantLR, by the rule of names (no case, '-', '_' or LR suffix "
           "in torch's names): lr = base_lr · (factor if t < total_iters else 1) (factor 0.3333, total_iters 5 unless "
           "given); hf.constant is hf's 'constant' (Factor 1): write hf.constant for it, or ConstantLR for this one")


def test_hf_s_constant_without_a_prefix_is_torch_s_constantlr_and_says_so(tmp_path):
    """`constant` is torch's ConstantLR by the rule of names (as the Hydra group `scheduler=constant` is), not HF's
    get_scheduler("constant"), which keeps the lr: it built lr/3 for 5 steps without a word. The torch row declares
    the homonym; describe() says it, and so does a note where a spec writes that name (not ConstantLR, hf.constant
    or `dialect: torch`)."""
    import warnings

    assert REGISTRY.lookup(SCHEDULER, "constant").qualname == "torch.ConstantLR"
    assert HOMONYM in optreg.describe("constant", kind="scheduler").notes
    path = tmp_path / "c.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler:\n  name: sequential\n  schedulers:\n"
                    "  - {name: ConstantLR, total_iters: 2}\n  - {name: constant, total_iters: 8}\n"
                    "train: {steps: 10}\n")
    with pytest.warns(optreg.ConfigWarning) as record:
        optreg.build(path, torch.nn.Linear(2, 2))
    assert [str(w.message) for w in record] == [f"{path}:6:6: scheduler.schedulers[1].name: {HOMONYM}"]
    optimizer = optreg.configure_optimizer("SGD", torch.nn.Linear(2, 2), lr=0.3)
    with pytest.warns(optreg.ConfigWarning) as record:
        scheduler = optreg.configure_lr_scheduler(optimizer, "constant")
    assert [str(w.message) for w in record] == [f"name: {HOMONYM}"] and record[0].filename == __file__
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.1) and type(scheduler).__name__ == "ConstantLR"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        optreg.configure_lr_scheduler(optimizer, "ConstantLR")
        optreg.configure_lr_scheduler(optimizer, "constant", dialect="torch")
        optimizer = optreg.configure_optimizer("SGD", torch.nn.Linear(2, 2), lr=0.3)
        scheduler = optreg.configure_lr_scheduler(optimizer, "hf.constant")
        lrs = []
        for _ in range(3):
            lrs.append(optimizer.param_groups[0]["lr"])
            optimizer.step()
            scheduler.step()
    assert lrs == [0.3, 0.3, 0.3]   # HF's constant keeps the lr

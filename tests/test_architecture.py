"""The architecture the plan rests on: core planning and the schedule engine name no dialect (issue 25 item 1).

Read from the import graph: every `import` / `from ... import` statement (top-level or inside a function) of
every module under optreg/core and optreg/schedules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import optreg
import torch

from optreg.core.dialect import DecayRule, Dialect
from optreg.core.entry import Entry
from optreg.core.registry import REGISTRY
from optreg.dialects import BUILTIN

ROOT = Path(optreg.__file__).parent


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import statement in `path`; `from optreg import dialects` reads optreg.dialects."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.append((node.lineno, node.module))
            out += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return out


@pytest.mark.parametrize("package", ["core", "schedules"])
def test_core_and_schedules_import_nothing_from_dialects(package):
    offenders = [f"{path.relative_to(ROOT)}:{line} imports {module}"
                 for path in sorted((ROOT / package).rglob("*.py"))
                 for line, module in imported_modules(path)
                 if module == "optreg.dialects" or module.startswith("optreg.dialects.")]
    assert offenders == []


def test_the_reader_sees_a_function_level_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from optreg.dialects.cerebras import modelzoo\n    from optreg import dialects\n")
    assert imported_modules(module) == [(2, "optreg.dialects.cerebras"), (2, "optreg.dialects.cerebras.modelzoo"),
                                        (3, "optreg"), (3, "optreg.dialects")]


def test_every_builtin_dialect_is_a_declared_dialect_with_its_rows():
    for name in BUILTIN:
        dialect = REGISTRY.dialect(name)
        assert isinstance(dialect, Dialect) and dialect.name == name
        assert dialect.rows or dialect.library is not None   # a library dialect's rows come from the installed library
        assert {e.dialect for e in dialect.rows} == ({name} if dialect.rows else set())
        assert all(REGISTRY.lookup(e.kind, e.qualname) is e for e in dialect.rows)


def test_planning_extensions_are_declared_by_their_dialect():
    cerebras = REGISTRY.dialect("cerebras")
    assert cerebras.default_settings == {"modelzoo_groups": True}
    assert cerebras.legacy_keys["weight_decay_rate"] == "weight_decay"
    assert cerebras.scheduler_forms and cerebras.scheduler_forms[0].claims({"LinearLR": {"total_iters": 3}})
    assert cerebras.optimizer_call is not None and "adjust_learning_rate" in cerebras.scheduler_keywords
    assert REGISTRY.dialect("torch").closed_form("CosineAnnealingLR") is not None
    others = [d for d in BUILTIN if d != "cerebras"]
    assert all(not REGISTRY.dialect(d).default_settings and not REGISTRY.dialect(d).scheduler_forms for d in others)


def test_no_decay_rules_group_binders_and_option_aliases_are_declared_by_their_dialect():
    assert [r.key for r in REGISTRY.dialect("cerebras").decay_rules] == ["modelzoo_groups"]
    assert [r.key for r in REGISTRY.dialect("hf").decay_rules] == ["hf_decay_groups"]
    assert set(REGISTRY.dialect("mindspore").group_binders) == {"mindspore", "decay_all", "ftrl"}
    assert REGISTRY.dialect("mindspore").option_aliases["learning_rate"] == "lr"
    assert REGISTRY.dialect("oneflow").option_aliases == {"last_step": "last_epoch"}
    rows = REGISTRY.entries("optimizer")
    binders = {e.bind for e in rows if e.bind is not None}   # every row's binder is its dialect's
    assert all(e.bind in REGISTRY.dialect(e.dialect).group_binders for e in rows if e.bind)
    assert binders == {"mindspore", "decay_all", "ftrl"}


class _Toy(torch.optim.SGD):
    """SGD with two options (a made-up framework, whose users spell lr `step_size`)."""

    def __init__(self, params, lr=0.1, weight_decay=0.0):
        super().__init__(params, lr=lr, weight_decay=weight_decay)


def _halve(groups, options, grouped):
    """A made-up group binder: every group's lr halved, its names dropped."""
    return [{**{k: v for k, v in g.items() if k != "param_names"}, "lr": g.get("lr", options["lr"]) / 2}
            for g in groups]


@pytest.fixture()
def toy_dialect(scratch_registry, monkeypatch):
    monkeypatch.setattr(scratch_registry, "_dialects", list(scratch_registry.dialects()))
    monkeypatch.setattr(scratch_registry, "_declared", dict(scratch_registry._declared))
    row = Entry("optimizer", "toy", "ToySGD", _Toy, bind="halve")
    scratch_registry.add_dialect(Dialect(
        "toy", (row,), "a made-up framework",
        decay_rules=(DecayRule("toy_decay_groups", "weight decay 0 for names ending in bias",
                               lambda module: lambda name: name.endswith("bias")),),
        group_binders={"halve": _halve}, option_aliases={"step_size": "lr"}))
    scratch_registry.add(row)
    yield scratch_registry


def test_a_plugin_dialect_s_decay_rule_binder_and_alias_are_what_planning_uses(toy_dialect):
    model = torch.nn.Linear(3, 2)
    config = {"dialect": "toy", "optimizer": {"name": "ToySGD", "step_size": 0.4, "weight_decay": 0.1,
                                              "toy_decay_groups": True}}
    built = optreg.build(config, model)
    groups = [(len(g["params"]), g["lr"], g["weight_decay"]) for g in built.optimizer.param_groups]
    assert groups == [(1, 0.2, 0.1), (1, 0.2, 0.0)]   # the alias read, the binder applied, the rule's split
    assert optreg.build({**config, "dialect": None,
                         "optimizer": {**config["optimizer"], "name": "toy.ToySGD"}}, model).optimizer.param_groups[1][
        "weight_decay"] == 0.0
    # any dialect's optimizer may turn the rule on; without a Module it is a located error
    torch_built = optreg.build({"optimizer": {"name": "SGD", "lr": 0.1, "weight_decay": 0.1, "toy_decay_groups": True}},
                               model)
    assert [g["weight_decay"] for g in torch_built.optimizer.param_groups] == [0.1, 0.0]
    with pytest.raises(optreg.ConfigError) as info:
        optreg.build({"optimizer": {"name": "SGD", "lr": 0.1, "weight_decay": 0.1, "toy_decay_groups": True}},
                     list(model.named_parameters()))
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("optimizer.toy_decay_groups", "toy_decay_groups reads the model's modules (its norm layers): pass the "
                                       "Module itself, not named_parameters() or tensors")]
    schema = optreg.json_schema()
    adamw = next(m for m in schema["properties"]["optimizer"]["anyOf"] if m["title"] == "torch.AdamW")
    shared = adamw["properties"]["toy_decay_groups"]["anyOf"][0]["$ref"].split("/")[-1]   # every optimizer's key
    assert schema["definitions"][shared]["description"] == "weight decay 0 for names ending in bias"


def test_a_row_naming_a_binder_its_dialect_lacks_is_a_located_error(toy_dialect):
    toy_dialect.add(Entry("optimizer", "toy", "Lost", _Toy, bind="nowhere"))
    with pytest.raises(optreg.ConfigError) as info:
        optreg.build({"optimizer": {"name": "toy.Lost", "lr": 0.1}}, torch.nn.Linear(2, 2))
    assert str(info.value) == ("optimizer: toy.Lost binds its groups with 'nowhere', which the toy dialect does not "
                               "declare (its group_binders: halve)")


def test_an_unknown_dialect_is_a_config_error_naming_the_close_one():
    with pytest.raises(optreg.ConfigError) as info:
        REGISTRY.dialect("onefow")
    assert info.value.errors[0].path == "dialect"
    assert "unknown dialect 'onefow'" in info.value.errors[0].message and "oneflow" in str(info.value)

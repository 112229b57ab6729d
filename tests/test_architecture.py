"""The architecture the plan rests on: core planning and the schedule engine name no dialect (issue 25 item 1).

Read from the import graph: every `import` / `from ... import` statement (top-level or inside a function) of
every module under optreg/core and optreg/schedules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import optreg
from optreg.core.dialect import Dialect
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


def test_an_unknown_dialect_is_a_config_error_naming_the_close_one():
    with pytest.raises(optreg.ConfigError) as info:
        REGISTRY.dialect("onefow")
    assert info.value.errors[0].path == "dialect"
    assert "unknown dialect 'onefow'" in info.value.errors[0].message and "oneflow" in str(info.value)

"""The README's examples of `optreg` output are what the command prints (scripts/readme_cli.py re-captures them)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def readme_cli():
    spec = importlib.util.spec_from_file_location("readme_cli", REPO / "scripts" / "readme_cli.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)      # its dataclasses look their module up
    spec.loader.exec_module(sys.modules[spec.name])
    module = sys.modules[spec.name]
    return module


def test_readme_examples_are_current():
    script = readme_cli()
    text = script.README.read_text(encoding="utf-8")
    found = script.examples(text)
    assert {e.args()[0] for e in found} >= {"list", "show", "groups", "plot"}
    new, stale = script.refreshed(text)
    assert not stale, f"run `python scripts/readme_cli.py`: {stale}"
    assert new == text
    for example in found:
        assert max(map(len, example.output.splitlines())) <= script.WIDTH, example.command


def test_a_drifted_example_is_found_and_rewritten():
    script = readme_cli()
    text = ("intro\n\n```\n$ optreg list 'cos*' --kind schedulers --dialect torch\nschedulers (9):\n  OldName\n"
            "```\nend\n")
    new, stale = script.refreshed(text)
    assert stale == ["$ optreg list 'cos*' --kind schedulers --dialect torch"]
    assert new.startswith("intro\n\n```\n$ optreg list 'cos*' --kind schedulers --dialect torch\nschedulers (2):\n"
                          "  CosineAnnealingLR ") and new.endswith("\n```\nend\n")
    assert script.refreshed(new) == (new, [])

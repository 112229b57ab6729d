"""The model-suite readers fuzzed as tests/test_fuzz.py fuzzes the others: real MindFormers and LiBai configs from
the corpus (tests/suites), mutated, through every entry point (build from a mapping, YAML text, a DictConfig, a
file; the LiBai .py files edited byte by byte, code included). Every input builds and steps, or raises a ConfigError
whose every item names its path or its file position; LiBai files are never executed (a marker file that an
executed edit would write never appears)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_fuzz import FUZZ_CI, FUZZ_FULL, _check_build_dictconfig, _check_build_yaml, _settings, answer, mutated
from torch_cases import Net
import libai_corpus

import optreg
from optreg.config.yaml_loader import read_yaml

SUITES = Path(__file__).parent / "suites"
MF_FILES = sorted((SUITES / "mindformers").glob("*/*.yaml"))
LIBAI_FILES = sorted(p for p in libai_corpus.tree().rglob("*.py") if "common" not in p.parts)
MARKER = "optreg_fuzz_marker"
CODE = [f"open({MARKER!r}, 'w').write('ran')", f"__import__('os').system('touch {MARKER}')",
        "(lambda: 1)()", "().__class__.__bases__[0].__subclasses__()", "exec('x=1')", "eval('1')",
        "import os\n", "if True:\n    pass\n", "def f():\n    pass\n", "for train in []:\n    pass\n",
        "train.train_iter = -5\n", "optim.lr = 'x'\n", "train.warmup_ratio = 2\n", "optim = 3\n",
        "train.scheduler = LazyCall(WarmupStepLR)(warmup_factor=0.1, step_size=0)\n", "del optim.params\n",
        "train = dict(train_iter=10 ** 400)\n", "optim.betas = (0.9, 1.5)\n", "\x00", "(", ")", ":", "=", "\n",
        "LazyCall", "LazyCall(", "**", "[" * 50, "\"\"\"", "#", "\\"]
MF_TEXT = [": ", "- ", "type: Came\n", "total_steps: -7\n", "learning_rate: 1e999\n", "warmup_ratio: 3\n",
           "\x00", "[" * 100, "&a [*a]", "!!python/object/apply:os.system [ls]", "\t", "{", "}", "type: cosine\n"]


def _mindformers(path: Path) -> dict:
    data, _ = read_yaml(str(path))
    return {**data, "train": {"steps_per_epoch": 40}}


@st.composite
def mindformers_configs(draw) -> dict:
    return draw(mutated(st.sampled_from(MF_FILES).map(_mindformers)))


def _edited(draw, text: str, pieces: list[str]) -> str:
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(text)))
        piece = draw(st.sampled_from(pieces))
        op = draw(st.sampled_from(["insert", "line", "delete"]))
        if op == "line":   # a whole statement at the start of a line
            i = text.rfind("\n", 0, i) + 1
            text = text[:i] + piece + ("" if piece.endswith("\n") else "\n") + text[i:]
        elif op == "insert":
            text = text[:i] + piece + text[i:]
        else:
            text = text[:i] + text[i + draw(st.integers(1, 8)):]
    return text


def _check_mindformers_mapping(config: dict) -> None:
    model = Net()
    answer(lambda: optreg.build(config, model), model=model)


def _check_file(path: Path, from_text: bool, **kwargs) -> None:
    model = Net()
    answer(lambda: optreg.build(str(path), model, **kwargs), from_text=from_text, model=model)


@pytest.mark.parametrize("n, derandomize", [(max(FUZZ_CI // 10, 20), True),
                                            pytest.param(FUZZ_FULL, False, marks=pytest.mark.fuzz)])
def test_mutated_mindformers_configs(n, derandomize):
    @_settings(n, derandomize)
    @given(mindformers_configs(), st.sampled_from([_check_mindformers_mapping, _check_build_yaml,
                                                   _check_build_dictconfig]))
    def run(config, check):
        check(config)
    run()


@pytest.mark.parametrize("n, derandomize", [(max(FUZZ_CI // 20, 20), True),
                                            pytest.param(FUZZ_FULL // 4, False, marks=pytest.mark.fuzz)])
def test_mutated_mindformers_files(tmp_path_factory, n, derandomize):
    @_settings(n, derandomize)
    @given(st.data())
    def run(data):
        path = data.draw(st.sampled_from(MF_FILES))
        text = _edited(data.draw, path.read_text() + "train: {steps_per_epoch: 40}\n", MF_TEXT)
        out = tmp_path_factory.mktemp("mf") / "config.yaml"
        out.write_text(text)
        _check_file(out, from_text=True)
    run()


@pytest.mark.parametrize("n, derandomize", [(max(FUZZ_CI // 10, 20), True),
                                            pytest.param(FUZZ_FULL // 2, False, marks=pytest.mark.fuzz)])
def test_mutated_libai_files_are_read_never_run(tmp_path_factory, monkeypatch, n, derandomize):
    import shutil

    root = tmp_path_factory.mktemp("libai")
    shutil.copytree(libai_corpus.tree(), root, dirs_exist_ok=True)
    monkeypatch.chdir(root)

    @_settings(n, derandomize)
    @given(st.data())
    def run(data):
        path = data.draw(st.sampled_from(LIBAI_FILES))
        target = root / path.relative_to(libai_corpus.tree())
        original = path.read_text()
        target.write_text(_edited(data.draw, original, CODE))
        try:
            _check_file(target, from_text=True, steps_per_epoch=50)
        finally:
            target.write_text(original)
        assert not (root / MARKER).exists()
    run()

"""Test-session settings: fused optimizers compile chunks of one tensor (the code path is the same; it
compiles several times faster than the default 16, and it is the very function a contiguous group's
flat step compiles, so each chain compiles once for both; `test_fused_chunks_pad_with_scratch_tensors`
covers chunks of several tensors) and wait for their compile; shared fixtures."""

import os

import pytest

os.environ.setdefault("OPTREG_FUSED_CHUNK", "1")
# a fused step compiles on its first step and waits for it (test_background_compile.py covers the default, a
# compile in the background while the steps run eager), so that every test sees the same executions
os.environ.setdefault("OPTREG_COMPILE", "wait")


def pytest_collection_modifyitems(config, items):
    """`fuzz` tests (the 10,000-example run) are skipped unless `-m fuzz` selects them."""
    if "fuzz" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="the long fuzzing run: select it with -m fuzz")
    for item in items:
        if item.get_closest_marker("fuzz") is not None:
            item.add_marker(skip)


@pytest.fixture
def scratch_registry():
    """The registry; registrations made by a test are removed afterwards, so later tests see the shipped one."""
    from optreg.core.registry import REGISTRY

    REGISTRY._load()
    saved = dict(REGISTRY._entries)
    yield REGISTRY
    REGISTRY._entries = saved


@pytest.fixture
def two_threads():
    """torch allowed two threads (the CI machine's cores), restored afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def chunk4(monkeypatch):
    """Fused chunks of 4 tensors, with functions (and graphs) of the test's own."""
    import optreg.stages.execute as execute

    monkeypatch.setattr(execute, "CHUNK", 4)
    monkeypatch.setattr(execute, "_COMPILED", {})

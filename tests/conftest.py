"""Test-session settings: fused optimizers compile small chunks (the code path is the same; a chunk of
2 compiles several times faster than the default 16); shared fixtures."""

import os

import pytest

os.environ.setdefault("OPTREG_FUSED_CHUNK", "2")


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

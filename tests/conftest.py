"""Test-session settings: fused optimizers compile small chunks (the code path is the same; a chunk of
2 compiles several times faster than the default 16)."""

import os

os.environ.setdefault("OPTREG_FUSED_CHUNK", "2")


def pytest_collection_modifyitems(config, items):
    """`fuzz` tests (the 10,000-example run) are skipped unless `-m fuzz` selects them."""
    import pytest

    if "fuzz" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="the long fuzzing run: select it with -m fuzz")
    for item in items:
        if item.get_closest_marker("fuzz") is not None:
            item.add_marker(skip)

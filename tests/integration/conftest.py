"""Shared fixtures of the integration suite (the helpers themselves are in harness.py, which the spawned
ranks import too)."""

from __future__ import annotations

import os

import pytest

# nothing in this suite may reach a hub: the Hugging Face model is built from a config
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


@pytest.fixture(scope="session")
def references():
    """(case id, sharded?, bare?) -> the uninterrupted single-process run, computed once per session."""
    from harness import CASES, reference

    cache: dict = {}

    def get(case_id: str, *, sharded: bool = False, bare: bool = False):
        key = (case_id, sharded, bare)
        if key not in cache:
            cache[key] = reference(CASES[case_id], sharded=sharded, bare=bare)
        return cache[key]

    return get

"""The hardened YAML loader: YAML 1.2-style scalars, no duplicate keys, no tags, bounded input."""

from __future__ import annotations

import pytest

from optreg import ConfigError
from optreg.config.yaml_loader import MAX_BYTES, load_yaml


@pytest.mark.parametrize("text, value", [
    ("1e-3", 0.001), ("3e-4", 0.0003), ("1.0e3", 1000.0), ("-2E+2", -200.0), (".5", 0.5), ("1_000.5", 1000.5),
    ("12", 12), ("012", 12), ("0x10", 16), ("0o17", 15), ("-7", -7),
    ("true", True), ("False", False), ("null", None), ("~", None),
])
def test_scalars(text, value):
    data, _ = load_yaml(f"v: {text}\n")
    assert data["v"] == value and type(data["v"]) is type(value)


@pytest.mark.parametrize("text", ["on", "off", "yes", "no", "y", "n", "NO", "2024-01-01", "12:30:00", "1e", "e3"])
def test_yaml11_lookalikes_stay_strings(text):
    data, _ = load_yaml(f"v: {text}\n")
    assert data["v"] == text


def test_nan_and_inf_load_as_floats_for_validation_to_refuse():
    data, _ = load_yaml("a: .nan\nb: -.inf\n")
    assert data["a"] != data["a"] and data["b"] == float("-inf")


def test_duplicate_keys_are_refused_with_position():
    with pytest.raises(ConfigError) as info:
        load_yaml("optimizer:\n  lr: 1\n  lr: 2\n", "x.yaml")
    item = info.value.errors[0]
    assert "duplicate key 'lr' (first at line 2)" in item.message
    assert (item.location.file, item.location.line, item.location.column) == ("x.yaml", 3, 3)


@pytest.mark.parametrize("text", [
    "!!python/object/apply:os.system ['echo hacked']",
    "a: !!python/name:os.system",
    "a: !!python/object/new:dict {}",
    "a: !!binary aGVsbG8=",
    "a: !!set {x}",
    "a: !custom 1",
])
def test_tags_outside_the_safe_set_are_refused(text):
    with pytest.raises(ConfigError, match="not allowed|could not determine"):
        load_yaml(text)


def test_size_limit():
    with pytest.raises(ConfigError, match="larger than"):
        load_yaml("a: '" + "x" * MAX_BYTES + "'\n")


def _many_nodes(n: int) -> str:
    return "".join(f"k{i}: {i}\n" for i in range(n))


def test_reading_time_is_bounded_in_the_reading_threads_cpu_time(monkeypatch):
    """A document that takes longer than MAX_SECONDS of the reading thread's CPU time is refused at a position; the
    wall clock does not count (a config read on a loaded machine, or while another thread holds the interpreter,
    failed now and then when it did)."""
    import time
    from types import SimpleNamespace

    import optreg.config.yaml_loader as loader

    ticks = iter(range(0, 10**9, 3600))   # an hour of the wall clock between two looks at it
    monkeypatch.setattr(loader, "time", SimpleNamespace(monotonic=lambda: float(next(ticks)),
                                                        thread_time=time.thread_time))
    data, _ = load_yaml(_many_nodes(2000))
    assert data["k1999"] == 1999
    monkeypatch.setattr(loader, "MAX_SECONDS", 0.0)
    with pytest.raises(ConfigError, match=r"<string>:\d+:\d+: YAML input takes longer than 0 s of CPU time to read"):
        load_yaml(_many_nodes(2000))


def test_time_in_the_garbage_collector_does_not_count_against_the_reading(monkeypatch):
    """A collection that falls within a reading (a full one over a large process takes a second) is not the
    document's time: with collections after every few allocations, each made 20 ms slower, a 2,000-node document
    reads within a 0.05 s bound (it failed in CI: a 92-line config 'takes longer than 0.75 s of CPU time')."""
    import gc
    import time

    import optreg.config.yaml_loader as loader

    burnt = []

    def slow(phase, info):
        if phase == "start":
            end = time.thread_time() + 0.02
            while time.thread_time() < end:
                pass
            burnt.append(0.02)

    monkeypatch.setattr(loader, "MAX_SECONDS", 0.05)
    threshold = gc.get_threshold()
    gc.callbacks.append(slow)
    gc.set_threshold(50)
    try:
        data, _ = load_yaml(_many_nodes(2000))
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(slow)
    assert data["k1999"] == 1999
    assert sum(burnt) > 0.1     # the collections within the reading took longer than the bound


def test_alias_bomb_is_refused():
    rows = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev, cur = chr(96 + i), chr(97 + i)
        rows.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    with pytest.raises(ConfigError, match="alias expansion"):
        load_yaml("\n".join(rows))


def test_small_aliases_still_work():
    data, _ = load_yaml("base: &b {lr: 0.1}\nother: *b\n")
    assert data["other"] == {"lr": 0.1}


def test_positions_of_nested_values():
    _, source = load_yaml("optimizer:\n  name: Adam\n  betas: [0.9, 1.0]\n  param_groups:\n    - params: '*.bias'\n",
                          "e.yaml")
    assert str(source("optimizer.betas[1]")) == "e.yaml:3:16"
    assert str(source("optimizer.name")) == "e.yaml:2:3"
    assert str(source("optimizer.param_groups[0].params")) == "e.yaml:5:7"
    assert str(source("optimizer.param_groups[0].lr")) == "e.yaml:5:7"  # nearest known parent


def test_empty_document():
    assert load_yaml("")[0] is None


def test_positions_of_keys_that_are_not_strings_are_under_the_paths_errors_name():
    # a key's path part was its text (`true`, `null`, `0x10`), not the key as errors name it (errors.key_text)
    _, source = load_yaml("optimizer:\n  true: 1\n  null: 2\n  0x10: 3\n  1.50: 4\n", "k.yaml")
    assert [str(source(f"optimizer.{key}")) for key in ("True", "None", "16", "1.5")] == [
        "k.yaml:2:3", "k.yaml:3:3", "k.yaml:4:3", "k.yaml:5:3"]


def test_merge_keys_merge_as_every_frameworks_loader_merges_them():
    # `<<` was a plain key: optreg's own form said `optimizer.name: required`, a foreign format's reader passed it
    # over as the application's key and built its defaults instead of the merged values
    data, source = load_yaml("base: &b {name: SGD, lr: 0.1, momentum: 0.9}\n"
                             "optimizer: {<<: *b, lr: 0.2}\n"
                             "both: {<<: [{extra: 1}, *b], x: 2}\n", "m.yaml")
    assert data["optimizer"] == {"name": "SGD", "lr": 0.2, "momentum": 0.9}
    assert data["both"] == {"extra": 1, "name": "SGD", "lr": 0.1, "momentum": 0.9, "x": 2}
    # a key the mapping writes is at its own line; a merged one where its anchor writes it
    assert [str(source(p)) for p in ("optimizer.lr", "optimizer.momentum", "both.extra")] == [
        "m.yaml:2:21", "m.yaml:1:31", "m.yaml:3:14"]


@pytest.mark.parametrize("text, message, column", [
    ("a: {<<: 5, lr: 1}\n", "expected a mapping or list of mappings for merging, but found scalar", 9),
    ("a: {<<: [x], lr: 1}\n", "expected a mapping for merging, but found scalar", 10),
    ("a: {lr: 1, lr: 2, <<: {x: 1}}\n", "duplicate key 'lr' (first at line 1)", 12),
])
def test_a_bad_merge_is_an_error_at_its_position(text, message, column):
    with pytest.raises(ConfigError) as info:
        load_yaml(text, "m.yaml")
    assert [str(e) for e in info.value.errors] == [f"m.yaml:1:{column}: {message}"]

"""The cerebras dialect against trajectories recorded from the real cerebras.pytorch 2.10 (CPU backend).

Fixtures: tests/fixtures/cerebras/{optimizers,schedulers}.json, recorded by scripts/record_cerebras.py
(layout in scripts/fixture_io.py). Every optimizer case replays the recorded float32 gradients through
optreg's optimizer built from the same config and compares the weights after every step; every scheduler
case compares the lr of every group at every step. Configurations Cerebras refuses must be refused here
too (ConfigError).
"""

from __future__ import annotations

from fixture_replay import load, make_tests

DOC, SCHED = load("cerebras")

# Where optreg and the real framework differ: case name -> what differs (measured on the fixtures).
XFAIL: dict[str, str] = {}

(test_optimizer_matches_recording, test_scheduler_matches_recording, test_every_optimizer_row_is_recorded,
 test_every_scheduler_row_is_recorded, test_recordings_are_float32_and_deterministic) = make_tests(
    "cerebras", DOC, SCHED, XFAIL)


def test_groups_and_flags_are_exercised():
    """The fixture really covers per-group options: several groups, and AdamW's correct_bias per group."""
    multi = [c for c in DOC["cases"] if c["groups"] and len(c["groups"]) > 1 and "refused" not in c]
    assert len({c["optimizer"] for c in multi}) >= 12
    adamw = next(c for c in DOC["cases"] if c["name"] == "adamw_groups")
    assert [g.get("correct_bias", True) for g in adamw["groups"]] == [False, True, True]
    assert any("weight_decay" in g for c in multi for g in c["groups"])

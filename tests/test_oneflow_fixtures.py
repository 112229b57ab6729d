"""The oneflow dialect against trajectories recorded from the real OneFlow 0.9.0 (eager, CPU).

Fixtures: tests/fixtures/oneflow/{optimizers,schedulers}.json, recorded by scripts/record_oneflow.py
(layout in scripts/fixture_io.py). Every optimizer case replays the recorded float32 gradients (with
optimizer.clip_grad() where the case clips, and no gradient where the case says so) through optreg's
optimizer built from the same config and compares the weights after every step; every scheduler case
compares the lr of every group at every step. Configurations OneFlow refuses must be refused here too.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fixture_replay import load, make_tests, worst_param_error

import optreg

DOC, SCHED = load("oneflow")

# Where optreg and the real framework differ: case name -> what differs (measured on the fixtures).
XFAIL: dict[str, str] = {}

# optreg rows that OneFlow 0.9.0 does not have (oneflow.optim.lr_scheduler has no MultiplicativeLR; LBFGS came
# after the release: tests/test_oneflow_lbfgs.py checks it against a reference written from OneFlow's source).
UNRECORDABLE = {"MultiplicativeLR", "LBFGS"}

(test_optimizer_matches_recording, test_scheduler_matches_recording, test_every_optimizer_row_is_recorded,
 test_every_scheduler_row_is_recorded, test_recordings_are_float32_and_deterministic) = make_tests(
    "oneflow", DOC, SCHED, XFAIL, UNRECORDABLE)


def test_groups_and_flags_are_exercised():
    """The fixture really covers per-group flags: do_bias_correction and adam_w_mode per group, clipping."""
    by_name = {c["name"]: c for c in DOC["cases"]}
    assert [g.get("do_bias_correction", True) for g in by_name["adamw_groups"]["groups"]] == [False, True, True]
    assert [g.get("adam_w_mode", True) for g in by_name["lamb_groups"]["groups"]] == [False, True]
    assert [g.get("do_bias_correction", True) for g in by_name["lamb_groups"]["groups"]] == [True, False]
    clipped = [c for c in DOC["cases"] if c.get("clip_grad")]
    assert {c["optimizer"] for c in clipped} == {"oneflow.SGD", "oneflow.Adam"}


ADAM_FAMILY = [c for c in DOC["cases"] if c["optimizer"] in ("oneflow.Adam", "oneflow.AdamW", "oneflow.LAMB")
               and "refused" not in c]


@pytest.mark.parametrize("case", ADAM_FAMILY, ids=[c["name"] for c in ADAM_FAMILY])
def test_adam_family_forms_its_scalars_as_oneflows_kernels(case):
    """With β, 1 - β, bias corrections, lr, eps and weight decay formed in float32 (OneFlow 0.9.0's kernels take
    them as C++ floats) every Adam, AdamW and LAMB recording is matched to 3e-7 (from float64 scalars: up to 1.5e-5)."""
    err, step, name = worst_param_error(case, {n: tuple(s) for n, s in DOC["shapes"].items()})
    assert err <= 3e-7, f"{case['name']}: relative error {err:.3g} at step {step} ({name})"


@pytest.mark.parametrize("execution", ["eager", "foreach"])
def test_float32_scalars_for_float32_tensors_float64_scalars_for_float64_tensors(execution):
    """One group with a float32 and a float64 tensor, no bias correction, one step: v = (1-β2)·g² with
    1 - β2 = 1 - 0.999f = 9.9998713e-4 in float32 for the float32 tensor and 1 - 0.999 = 1e-3 for the float64 one."""
    g = [0.5, -2.0, 3.0]
    p32 = torch.nn.Parameter(torch.zeros(3, dtype=torch.float32))
    p64 = torch.nn.Parameter(torch.zeros(3, dtype=torch.float64))
    opt = optreg.configure_optimizer("oneflow.Adam", [p32, p64], do_bias_correction=False,
                                     foreach=execution == "foreach")
    p32.grad, p64.grad = torch.tensor(g, dtype=torch.float32), torch.tensor(g, dtype=torch.float64)
    opt.step()
    one_minus_32 = np.float32(1) - np.float32(0.999)
    assert one_minus_32 == np.float32(9.9998713e-4)
    want32 = one_minus_32 * np.float32(g) * np.float32(g)
    np.testing.assert_array_equal(opt.state[p32]["exp_avg_sq"].numpy(), want32)
    np.testing.assert_array_equal(opt.state[p64]["exp_avg_sq"].numpy(), (1 - 0.999) * np.float64(g) * np.float64(g))

"""Resume: step k times, save, build fresh, load, step on == straight through, exactly (every entry)."""

from __future__ import annotations

import io
import warnings

import pytest
import torch

from optreg.schedules.adapter import ScheduleLR
from test_schedule_cases import ALL_CASES, Case

K, MORE = 137, 300


def _optimizer(case: Case):
    p = torch.nn.Parameter(torch.zeros(2))
    q = torch.nn.Parameter(torch.zeros(2))
    default = case.default if case.default is not None else case.base
    return torch.optim.SGD([{"params": [p], "lr": case.base}, {"params": [q], "lr": case.base}],
                           lr=default, momentum=0.9)


def _run(opt, sched, n):
    out = []
    for _ in range(n):
        opt.step()
        sched.step()
        out.append([g["lr"] for g in opt.param_groups])
    return out


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c.id)
def test_resume_is_exact(case: Case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = _optimizer(case)
        straight = _run(opt, ScheduleLR(opt, case.make()), K + MORE)

        opt1 = _optimizer(case)
        first = ScheduleLR(opt1, case.make())
        head = _run(opt1, first, K)
        buffer = io.BytesIO()
        torch.save({"optimizer": opt1.state_dict(), "scheduler": first.state_dict()}, buffer)
        buffer.seek(0)
        saved = torch.load(buffer, weights_only=True)

        opt2 = _optimizer(case)
        second = ScheduleLR(opt2, case.make())
        opt2.load_state_dict(saved["optimizer"])
        second.load_state_dict(saved["scheduler"])
        tail = _run(opt2, second, MORE)
    assert head + tail == straight
    assert second.last_epoch == K + MORE

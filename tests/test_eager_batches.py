"""Eager steps small neighbouring tensors together, up to `execute.EAGER_ELEMENTS` elements per call of the
chain (`execute.run_eager`), each tensor through the same operations as alone: every first-party chain gives the
same parameters and state as one tensor a call, bit for bit; and it steps on the calling thread alone."""

from __future__ import annotations

import copy
import threading

import pytest
import torch
from test_optimizer_matrix import CHAINS, _build, _ids, _loss, _model

import optreg
import optreg.stages.execute as execute
from optreg.stages.chain import Chain


@pytest.fixture
def calls(monkeypatch):
    """The tensors of each call of a chain in eager, and the thread that made it."""
    seen = []
    apply = Chain.apply

    def recording(self, b):
        seen.append((len(b.params), threading.current_thread()))
        return apply(self, b)

    monkeypatch.setattr(Chain, "apply", recording)
    return seen


def _steps(model, opt, steps=3):
    for step in range(steps):
        opt.zero_grad()
        _loss(model, step).backward()
        opt.step()


@pytest.mark.parametrize("case", CHAINS, ids=_ids(CHAINS))
def test_batched_eager_steps_bit_for_bit_as_one_tensor_a_call(case, calls, monkeypatch):
    model = _model(case)
    alone = copy.deepcopy(model)
    opt = _build(case, model)
    _steps(model, opt)
    # neighbours of a group with the same dtype and state names share a call (THOR's weights and biases differ)
    joinable = any(p.dtype == q.dtype and opt.state[p].keys() == opt.state[q].keys()
                   for group in opt.param_groups for p, q in zip(group["params"], group["params"][1:]))
    assert (max(n for n, _ in calls) > 1) == joinable
    monkeypatch.setattr(execute, "EAGER_ELEMENTS", 1)
    calls.clear()
    opt_alone = _build(case, alone)
    _steps(alone, opt_alone)
    assert {n for n, _ in calls} == {1}
    for (name, p), q in zip(model.named_parameters(), alone.parameters()):
        assert torch.equal(p, q), name
        for key, value in opt.state[p].items():
            other = opt_alone.state[q][key]
            if isinstance(value, torch.Tensor):
                assert torch.equal(value, other), (name, key)
            else:
                assert value == other, (name, key)


def test_neighbours_share_a_call_up_to_the_bound_with_the_same_dtype_and_state(calls):
    """Small tensors join while their elements stay within EAGER_ELEMENTS; a large one steps alone; a tensor of
    another dtype starts a call of its own."""
    quarter = execute.EAGER_ELEMENTS // 4
    sizes = [quarter] * 5 + [execute.EAGER_ELEMENTS + 1] + [quarter] * 2
    params = [torch.nn.Parameter(torch.ones(n)) for n in sizes]
    params.append(torch.nn.Parameter(torch.ones(8, dtype=torch.float64)))
    for p in params:
        p.grad = torch.ones_like(p)
    optreg.configure_optimizer("oneflow.SGD", params, lr=0.5, momentum=0.9).step()
    assert [n for n, _ in calls] == [4, 1, 1, 2, 1]
    assert all(bool((p == 0.5).all()) for p in params)


def test_eager_steps_on_the_calling_thread(calls, two_threads):
    """Many tensors below ATen's grain, together far above the million elements from which eager once shared
    them among threads: every call on the caller's thread, and no thread started."""
    params = [torch.nn.Parameter(torch.randn(20_000)) for _ in range(64)]
    for p in params:
        p.grad = torch.randn(20_000)
    before = threading.active_count()
    opt = optreg.configure_optimizer("oneflow.AdamW", params, lr=1e-3)
    opt.step()
    assert calls and {t for _, t in calls} == {threading.current_thread()}
    assert threading.active_count() == before

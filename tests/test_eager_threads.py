"""Eager on a CPU shares the tensors that ATen steps on one thread (below `execute.GRAIN` elements) among
torch's threads (`execute.run_eager`). Each tensor goes through the same operations as on one thread, so every
first-party chain gives the same parameters and state, bit for bit; a thread-local mode that a pool thread would
not see keeps the step on one thread; an error in a pool thread reaches the step."""

from __future__ import annotations

import copy
import multiprocessing
import os

import pytest
import torch
from test_optimizer_matrix import CHAINS, _build, _ids, _loss, _model
from torch.utils._python_dispatch import TorchDispatchMode

import optreg
import optreg.stages.execute as execute
from optreg.stages.chain import Batch


@pytest.fixture
def threaded(monkeypatch, two_threads):
    """Every tensor its own group and no floor on the elements, so that a small model's step is threaded; the
    groups each pool thread stepped, counted."""
    stepped = []
    monkeypatch.setattr(execute, "EAGER_ELEMENTS", 1)
    monkeypatch.setattr(execute, "THREADED_ELEMENTS", 0)
    pool = execute._pool(1)
    submit = pool.submit

    def counting(fn, share):
        stepped.append(len(share))
        return submit(fn, share)

    monkeypatch.setattr(pool, "submit", counting)
    return stepped


def _steps(model, opt, steps=3):
    for step in range(steps):
        opt.zero_grad()
        _loss(model, step).backward()
        opt.step()


@pytest.mark.parametrize("case", CHAINS, ids=_ids(CHAINS))
def test_threaded_eager_steps_bit_for_bit_as_one_thread(case, threaded, monkeypatch):
    model = _model(case)
    alone = copy.deepcopy(model)
    opt = _build(case, model)
    _steps(model, opt)
    assert sum(threaded) > 0, "a pool thread stepped no tensor"
    monkeypatch.setattr(execute, "THREADED_ELEMENTS", float("inf"))
    opt_alone = _build(case, alone)
    _steps(alone, opt_alone)
    for (name, p), q in zip(model.named_parameters(), alone.parameters()):
        assert torch.equal(p, q), name
        for key, value in opt.state[p].items():
            other = opt_alone.state[q][key]
            if isinstance(value, torch.Tensor):
                assert torch.equal(value, other), (name, key)
            else:
                assert value == other, (name, key)


def _small(count=64, numel=20000):
    return [torch.zeros(numel) for _ in range(count)]


def _threads(params):
    return execute._threads(params, [torch.zeros_like(p) for p in params], 64 * 20000)


def test_the_small_tensors_are_shared_only_where_they_hold_enough_elements(two_threads):
    params = _small()
    assert 64 * 20000 >= execute.THREADED_ELEMENTS
    assert _threads(params) == 2
    assert execute._threads(params, params, execute.THREADED_ELEMENTS - 1) == 1
    assert _threads([torch.zeros(2, device="meta")]) == 1
    assert _threads([*params, torch.zeros(2, device="meta")]) == 1, "a tensor outside host memory among them"


def test_one_thread_where_torch_is_allowed_one_and_at_most_max_threads(two_threads):
    torch.set_num_threads(1)
    assert _threads(_small()) == 1
    torch.set_num_threads(execute.MAX_THREADS + 2)
    assert _threads(_small()) == execute.MAX_THREADS


def test_one_thread_for_a_tensor_subclass(two_threads):
    """A subclass (DTensor, say) may run collectives inside an operation, which every rank must issue in the
    same order: its tensors stay on one thread."""

    class Sub(torch.Tensor):
        pass

    params = _small()
    assert _threads([*params[:-1], params[-1].as_subclass(Sub)]) == 1
    assert execute._threads(params, [*params[:-1], params[-1].as_subclass(Sub)], 64 * 20000) == 1
    assert _threads([torch.nn.Parameter(p) for p in params]) == 2


def test_one_thread_inside_a_pool_thread(two_threads):
    """A step run from a pool thread stays there: a pool thread waiting on the pool could wait on itself."""
    assert execute._pool(1).submit(_threads, _small()).result() == 1


def test_one_thread_under_a_mode_a_pool_thread_would_not_see(two_threads):
    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    class FunctionMode(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    params = _small()
    with Mode():
        assert _threads(params) == 1
    with torch.inference_mode():
        assert _threads(params) == 1
    with FunctionMode():
        assert _threads(params) == 1
    assert _threads(params) == 2


class _Failing:
    """A chain whose step fails on the tensor marked `bad`, wherever it runs."""

    state_names = ()

    def apply(self, b: Batch) -> None:
        for p in b.params:
            if getattr(p, "bad", False):
                raise ValueError("the marked tensor")
            p.add_(1.0)


def test_an_error_in_a_pool_thread_reaches_the_step(threaded):
    params = _small(8, 1000)
    params[-1].bad = True
    with pytest.raises(ValueError, match="the marked tensor"):
        execute.run_eager(_Failing(), params, [torch.zeros(1000)] * 8, [{} for _ in params], {})
    assert sum(threaded) > 0
    # every other tensor was stepped before the error reached the caller: no thread still writes after it
    assert all(float(p[0]) == 1.0 for p in params[:-1])


def test_a_pool_thread_steps_in_the_callers_grad_mode(threaded):
    seen = []

    class Recording(_Failing):
        def apply(self, b: Batch) -> None:
            seen.append(torch.is_grad_enabled())

    params = _small(8, 1000)
    with torch.no_grad():
        execute.run_eager(Recording(), params, [torch.zeros(1000)] * 8, [{} for _ in params], {})
    assert seen == [False] * 8 and sum(threaded) > 0


def _step_in_child(opt, done) -> None:
    opt.step()
    done.put("stepped")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX-only")
def test_a_forked_child_steps_threaded(threaded):
    """A child forked after a threaded step (a DataLoader worker, say) has none of the parent's pool threads:
    it makes a pool of its own instead of waiting on one that does not exist there."""
    params = [torch.nn.Parameter(torch.randn(1000)) for _ in range(8)]
    for p in params:
        p.grad = torch.randn(1000)
    opt = optreg.configure_optimizer("oneflow.SGD", params, lr=0.1, momentum=0.9)
    opt.step()
    assert sum(threaded) > 0
    ctx = multiprocessing.get_context("fork")
    done = ctx.Queue()
    child = ctx.Process(target=_step_in_child, args=(opt, done))
    child.start()
    try:
        assert done.get(timeout=60) == "stepped"
    finally:
        child.join(10)
        if child.is_alive():
            child.kill()
    assert child.exitcode == 0


def test_a_pool_thread_runs_on_one_openmp_thread_and_the_caller_keeps_its_own(threaded):
    """A pool thread steps tensors ATen steps on one thread anyway; an OpenMP team of its own would live as long as
    the thread, and libgomp would throttle the main thread's team for it: a fused step after a threaded eager one
    took twice as long (`execute._one_openmp_thread`)."""
    seen = []

    class Recording(_Failing):
        def apply(self, b: Batch) -> None:
            seen.append(torch.get_num_threads())

    params = _small(8, 1000)
    execute.run_eager(Recording(), params, [torch.zeros(1000)] * 8, [{} for _ in params], {})
    assert sum(threaded) > 0 and sorted(set(seen)) == [1, 2] and torch.get_num_threads() == 2

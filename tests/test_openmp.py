"""A fused plan runs its chunks of small tensors on one OpenMP thread when its chain reduces each tensor
(`optreg.stages.openmp`): set for the calling thread only, for those chunks only, and restored after the step,
an error included."""

from __future__ import annotations

import threading

import pytest
import torch

import optreg
import optreg.stages.execute as execute
from optreg.stages.openmp import _runtimes, one_thread


def _params(sizes, seed=0):
    g = torch.Generator().manual_seed(seed)
    params = [torch.nn.Parameter(0.1 * torch.randn(s, generator=g)) for s in sizes]
    for p in params:
        p.grad = 0.01 * torch.randn(p.shape, generator=g)
    return params


def _recorded(monkeypatch, opt):
    """Per chunk call of the optimizer's plans: (the chunk's largest tensor, the calling thread's OpenMP threads)."""
    calls = []

    def graph(plan, k, fn, args):
        found = original(plan, k, fn, args)
        if found is None:
            return None

        def call(a):
            calls.append((max(p.numel() for p in plan.chunks[k][2]), torch.get_num_threads()))
            return found(a)
        return call

    original = execute.FusedPlan._graph
    monkeypatch.setattr(execute.FusedPlan, "_graph", graph)
    return calls


def test_one_thread_limits_the_calling_thread_only(two_threads):
    assert _runtimes().lib_controllers, "torch's OpenMP runtime is loaded and found"
    seen = []
    limit = one_thread()
    try:
        assert torch.get_num_threads() == 1
        other = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
        other.start()
        other.join()
    finally:
        limit.restore_original_limits()
    assert seen == [2]
    assert torch.get_num_threads() == 2


@pytest.mark.parametrize("name, loops", [("oneflow.AdamW", 0), ("oneflow.SGD", 0), ("oneflow.LAMB", 1),
                                         ("cerebras.Lamb", 1), ("cerebras.Adafactor", 3)])
def test_a_chunk_runs_serial_below_its_bound_and_computes_again_from_grain_per_loop_of_its_reductions(name, loops):
    """A chain with reductions runs a chunk below SERIAL_ELEMENTS on one thread, and from GRAIN elements per loop
    of its reductions (`Chain.reductions`: oneflow.LAMB's two norm stages count once) compiles it to compute its
    values again (`execute.recompute_from`); between the two, the chunk runs on the team as Inductor compiles it
    by default. An element-wise chain does neither."""
    serial, again = execute.SERIAL_ELEMENTS, loops * execute.GRAIN
    assert serial < execute.GRAIN
    sizes = [serial - 2, serial, again - 2 if loops else execute.GRAIN, again or 2 * execute.GRAIN]
    params = _params([(2, n // 2) for n in sizes])
    opt = optreg.configure_optimizer(name, params, lr=1e-3, fused=True,
                                     **({"relative_step": False} if "Adafactor" in name else {}))
    opt.step()
    (plan,) = [p for p in opt._fused_plans.values() if p]
    parts = {id(fn): key[-1] for key, fn in execute._COMPILED.items()}
    seen = {max(p.numel() for p in chunk[2]): (s, parts[id(chunk[0])]) for chunk, s in zip(plan.chunks, plan.serial)}
    reduces = loops > 0
    assert seen == {sizes[0]: (reduces, ""), sizes[1]: (False, ""), sizes[2]: (False, ""),
                    sizes[3]: (False, "recompute" if reduces else "")}


def test_small_chunks_run_on_one_thread_and_large_ones_on_the_team(monkeypatch, two_threads, chunk4):
    big = 3 * execute.GRAIN + 256          # above cerebras.Adafactor's 3 loops × GRAIN
    sizes = [(8, 8)] * 3 + [(2, big // 2)] + [(16, 4)] * 3 + [(4, big // 4)] + [(32,)] * 2
    params = _params(sizes)
    opt = optreg.configure_optimizer("cerebras.Adafactor", params, lr=1e-3, relative_step=False, fused=True)
    opt.step()
    calls = _recorded(monkeypatch, opt)
    opt.step()
    (plan,) = [p for p in opt._fused_plans.values() if p]
    # the large matrices share a chunk of their own, apart from the small matrices they sat between
    assert sorted(max(p.numel() for p in chunk[2]) for chunk in plan.chunks) == [32, 64, 64, big]
    assert sorted(calls) == [(32, 1), (64, 1), (64, 1), (big, 2)]
    assert torch.get_num_threads() == 2


def test_an_element_wise_chain_keeps_the_team(monkeypatch, two_threads, chunk4):
    params = _params([(8, 8)] * 5)
    opt = optreg.configure_optimizer("oneflow.AdamW", params, lr=1e-3, fused=True)
    opt.step()
    calls = _recorded(monkeypatch, opt)
    opt.step()
    assert calls == [(64, 2), (64, 2)]


def test_the_team_is_restored_when_a_chunk_fails(monkeypatch, two_threads, chunk4):
    params = _params([(8, 8)] * 2)
    opt = optreg.configure_optimizer("oneflow.LAMB", params, lr=1e-3, fused=True)
    opt.step()

    def failing(plan, k, fn, args):
        def call(a):
            assert torch.get_num_threads() == 1
            raise RuntimeError("a chunk failed")
        return call

    monkeypatch.setattr(execute.FusedPlan, "_graph", failing)
    with pytest.raises(RuntimeError, match="a chunk failed"):
        opt.step()
    assert torch.get_num_threads() == 2


def test_a_graph_first_compiled_on_one_thread_steps_as_eager_on_two(two_threads):
    """A chunk of small tensors compiles on its thread's one OpenMP thread (`FusedPlan.serial`; the step's own
    compile, OPTREG_COMPILE=wait). Inductor writes the code for `execute.codegen_threads()` threads, not for the
    one it compiles on: for one it left out the `omp single` around the step count's store, and a contiguous
    group's step over stacks, whose graph Inductor's cache gave back as the same, counted each step twice on
    two threads."""
    sizes = [(7, 5), (7,), (3, 7), (3,)]
    per_tensor, contiguous, eager = _params(sizes), _params(sizes), _params(sizes)
    first = optreg.configure_optimizer("cerebras.Adafactor", per_tensor, lr=0.01, fused=True)
    first.step()
    assert all(all(plan.serial) for plan in first._fused_plans.values())
    opts = [optreg.configure_optimizer("cerebras.Adafactor", contiguous, lr=0.01, fused=True,
                                       contiguous_params=True),
            optreg.configure_optimizer("cerebras.Adafactor", eager, lr=0.01)]
    for _ in range(4):
        for opt in opts:
            opt.step()
    assert [float(opts[0].state[p]["step"]) for p in opts[0].param_groups[0]["params"]] == [4.0] * len(sizes)
    worst = max(float((a - b).abs().max() / b.abs().max())
                for a, b in zip(opts[0].param_groups[0]["params"], eager))
    assert worst <= 1e-6, f"fused on two threads differs from eager by {worst:.2e} (relative)"

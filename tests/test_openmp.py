"""A fused plan shares its chunks of small tensors among Python threads, each on one OpenMP thread, when its chain
reduces each tensor (`optreg.stages.openmp`): the limit set for those threads only and restored after the step, an
error included; the kernels let go of the interpreter's lock while they run, so the threads run at once."""

from __future__ import annotations

import threading
import time

import pytest
import torch

import optreg
import optreg.stages.execute as execute
from optreg.stages import openmp
from optreg.stages.openmp import _runtimes, gil_free_kernels, one_thread, share


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
def test_a_chunk_is_shared_below_grain_per_loop_of_its_reductions_and_computes_again_from_there(name, loops):
    """A chain with reductions shares a chunk below GRAIN elements per loop of its reductions among threads
    (`Chain.reductions`: oneflow.LAMB's two norm stages count once; `execute.shared_below`), and from there
    compiles it to compute its values again (`execute.recompute_from`), on the team. An element-wise chain does
    neither."""
    again = loops * execute.GRAIN
    sizes = [8, again - 2 if loops else execute.GRAIN, again or 2 * execute.GRAIN]
    params = _params([(2, n // 2) for n in sizes])
    opt = optreg.configure_optimizer(name, params, lr=1e-3, fused=True,
                                     **({"relative_step": False} if "Adafactor" in name else {}))
    opt.step()
    (plan,) = [p for p in opt._fused_plans.values() if p]
    parts = {id(fn): key[-1] for key, fn in execute._COMPILED.items()}
    seen = {max(p.numel() for p in chunk[2]): (s, parts[id(chunk[0])]) for chunk, s in zip(plan.chunks, plan.shared)}
    reduces = loops > 0
    assert seen == {sizes[0]: (reduces, ""), sizes[1]: (reduces, ""),
                    sizes[2]: (False, "recompute" if reduces else "")}


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
    """A chunk of small tensors compiles on its thread's one OpenMP thread (`FusedPlan.shared`; the step's own
    compile, OPTREG_COMPILE=wait). Inductor writes the code for `execute.codegen_threads()` threads, not for the
    one it compiles on: for one it left out the `omp single` around the step count's store, and a contiguous
    group's step over stacks, whose graph Inductor's cache gave back as the same, counted each step twice on
    two threads."""
    sizes = [(7, 5), (7,), (3, 7), (3,)]
    per_tensor, contiguous, eager = _params(sizes), _params(sizes), _params(sizes)
    first = optreg.configure_optimizer("cerebras.Adafactor", per_tensor, lr=0.01, fused=True)
    first.step()
    assert all(all(plan.shared) for plan in first._fused_plans.values())
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


def test_the_shared_chunks_run_on_two_threads_at_once_each_on_one_openmp_thread(monkeypatch, two_threads, chunk4):
    """Two chunks of small tensors: the calling thread and a helper each take one, at the same time (a barrier
    that two threads must reach, which one thread alone would wait at until it broke), each on one OpenMP
    thread, and the step's numbers are those of the eager step."""
    sizes = [(8, 8)] * 8
    params, eager = _params(sizes), _params(sizes)
    opt = optreg.configure_optimizer("oneflow.LAMB", params, lr=1e-2, fused=True)
    ref = optreg.configure_optimizer("oneflow.LAMB", eager, lr=1e-2)
    opt.step()
    ref.step()
    barrier = threading.Barrier(2, timeout=30)
    seen = []

    def graph(plan, k, fn, args):
        found = original(plan, k, fn, args)

        def call(a):
            seen.append((threading.current_thread().name, torch.get_num_threads()))
            barrier.wait()
            return found(a)
        return call

    original = execute.FusedPlan._graph
    monkeypatch.setattr(execute.FusedPlan, "_graph", graph)
    opt.step()
    ref.step()
    assert sorted(seen)[0] == ("MainThread", 1)
    assert sorted(seen)[1][0].startswith("optreg-step") and sorted(seen)[1][1] == 1
    assert torch.get_num_threads() == 2
    worst = max(float((a - b).abs().max()) for a, b in zip(params, eager))
    assert worst <= 1e-6


def test_every_task_runs_once_among_the_most_threads():
    """`share` over MOST threads (torch allowed more than the cores): each of many tasks runs exactly once, and
    more than one thread takes tasks (each task sleeps, which lets go of the interpreter's lock)."""
    before = torch.get_num_threads()
    torch.set_num_threads(openmp.MOST)
    ran, threads = [], set()

    def task(i):
        time.sleep(0.001)
        ran.append(i)
        threads.add(threading.current_thread().name)

    try:
        share([lambda i=i: task(i) for i in range(200)])
    finally:
        torch.set_num_threads(before)
    assert sorted(ran) == list(range(200))
    assert len(threads) > 1


def test_a_helpers_error_is_raised_once_every_thread_is_done(two_threads):
    started, done = [], []

    def slow():
        started.append(threading.current_thread().name)
        time.sleep(0.2)
        done.append(True)

    def failing():
        started.append(threading.current_thread().name)
        raise ValueError("a chunk failed")

    with pytest.raises(ValueError, match="a chunk failed"):
        share([slow, failing])
    assert len(started) == 2 and done == [True]
    assert torch.get_num_threads() == 2


def test_the_first_error_is_raised_whichever_thread_had_it(two_threads):
    """A helper's error that came first is the one raised, not the calling thread's that came after it (which
    went up the calling thread's stack)."""
    barrier = threading.Barrier(2, timeout=30)

    def failing():
        barrier.wait()                       # one task on each thread
        if threading.current_thread() is threading.main_thread():
            time.sleep(0.2)
            raise ValueError("the calling thread's, later")
        raise ValueError("a helper's, first")

    with pytest.raises(ValueError, match="a helper's, first"):
        share([failing, failing])
    assert torch.get_num_threads() == 2


def test_one_task_or_kernels_that_keep_the_lock_run_on_the_calling_thread(monkeypatch, two_threads):
    seen = []
    share([lambda: seen.append(threading.current_thread().name)])
    monkeypatch.setattr(openmp, "releases_gil", lambda: False)
    share([lambda: seen.append(threading.current_thread().name)] * 3)
    assert seen == ["MainThread"] * 4


_PROBE = """
#include <Python.h>
#include <cstdint>
extern "C" void kernel(int64_t* out) { out[0] = PyGILState_Check(); }
"""


def test_a_kernel_loaded_under_gil_free_kernels_runs_without_the_interpreters_lock():
    """Inductor's binding, as torch 2.13 writes it, calls a kernel with the lock held; loaded while
    `gil_free_kernels` is open, the same kernel runs without it (`PyGILState_Check` inside it), and the binding
    is Inductor's own again after."""
    bindings = openmp._bindings()
    assert bindings.call_entry_function == openmp.HOLDING
    out = torch.zeros(2, dtype=torch.int64)
    bindings.load_pybinding(["int64_t*"], _PROBE)(out)
    with gil_free_kernels():
        bindings.load_pybinding(["int64_t*"], _PROBE.replace("out[0]", "out[1]"))(out)
    assert out.tolist() == [1, 0]
    assert bindings.call_entry_function == openmp.HOLDING


def test_a_kernel_that_throws_under_gil_free_kernels_raises_and_the_interpreter_goes_on():
    """A kernel loaded while `gil_free_kernels` is open, by any compile in the process (a function of the user's,
    compiled while optreg's compile runs in another thread), raises its error as Inductor's binding does: an index
    out of bounds, which Inductor's CPU kernel checks and throws from, is a RuntimeError. The lock was taken back
    only after a normal return, so the binding set the error without it and the interpreter crashed (SIGSEGV)."""
    import os
    import subprocess
    import sys

    code = ("import threading, torch\n"
            "from optreg.stages.openmp import gil_free_kernels\n"
            "torch.set_num_threads(1)\n"
            "f = torch.compile(lambda x, i: x[i] + 1, dynamic=False)\n"
            "def users():\n"
            "    try:\n"
            "        f(torch.zeros(8), torch.tensor([0, 9]))\n"
            "    except RuntimeError as e:\n"
            "        print('raised:', 'index out of bounds' in str(e))\n"
            "with gil_free_kernels():\n"
            "    user = threading.Thread(target=users)\n"
            "    user.start()\n"
            "    user.join()\n"
            "print('after:', float(f(torch.ones(8), torch.tensor([1, 2])).sum()))\n")
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ), capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert out.stdout.split() == ["raised:", "True", "after:", "4.0"], out.stdout


def test_the_helpers_flush_denormals_as_the_calling_thread_does(monkeypatch, two_threads, chunk4):
    """Flushing denormal numbers to zero is a setting of each thread's (`torch.set_flush_denormal`), which a new
    thread takes from the one that starts it. Turned on after the helpers had started, the chunks that a helper
    took were stepped without it: a step of values near float32's smallest normal differed from the same step
    run on the calling thread alone (`openmp.MOST` = 1), and between two runs, with which thread took which chunk."""
    sizes = [(8, 8)] * 8

    def stepped(most):
        monkeypatch.setattr(openmp, "MOST", most)
        g = torch.Generator().manual_seed(0)
        params = [torch.nn.Parameter(1e-38 * torch.randn(s, generator=g)) for s in sizes]
        for p in params:
            p.grad = 1e-38 * torch.randn(p.shape, generator=g)
        opt = optreg.configure_optimizer("oneflow.LAMB", params, lr=1e-2, fused=True)
        opt.step()                      # compiles, and starts the helpers, without flushing
        found = execute.FusedPlan._graph
        barrier = threading.Barrier(most, timeout=30)

        def graph(plan, k, fn, args):
            call = found(plan, k, fn, args)

            def shared(a):
                seen.append((threading.current_thread().name, openmp.flushes_denormals()))
                barrier.wait()          # two threads take a chunk each
                return call(a)
            return shared

        seen = []
        monkeypatch.setattr(execute.FusedPlan, "_graph", graph)
        torch.set_flush_denormal(True)
        try:
            opt.step()
        finally:
            torch.set_flush_denormal(False)
            monkeypatch.setattr(execute.FusedPlan, "_graph", found)
        return [p.detach().clone() for p in params], seen

    if not torch.set_flush_denormal(False):
        pytest.skip("this CPU has no denormal flushing that torch sets")
    alone, _ = stepped(1)
    shared, seen = stepped(2)
    assert len({name for name, _ in seen}) == 2 and all(flushes for _, flushes in seen), seen
    assert [torch.equal(a, b) for a, b in zip(alone, shared)] == [True] * len(sizes)

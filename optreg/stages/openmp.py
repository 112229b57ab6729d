"""A fused step's chunks of small tensors shared among Python threads, each on one OpenMP thread
(`execute.FusedPlan`).

Inductor's CPU kernels run each loop of a compiled step as an OpenMP parallel region whose team the runtime
sizes from the calling thread's setting (`cpp.dynamic_threads`). A chain that reduces each tensor to values (a
trust ratio's norms, Adafactor's factored moments and RMS) opens several regions per tensor, and over a small
tensor the team's start and join cost more than the work it shares (about 0.7 us a region on 2 threads; ATen
makes the same choice per operation: one thread below `execute.GRAIN` elements). So a chunk whose tensors are all
below `execute.shared_below` elements (GRAIN per loop of the chain's reductions, `Chain.reductions`) runs whole
on one OpenMP thread, each tensor's loops back to back while its arrays sit in the core's cache, and the chunks
are shared among the calling thread and helper threads, as many in all as torch's thread count and at most `MOST`
(`share`). An element-wise chain keeps the team for every chunk (one region per loop, no reduction in it).

Python threads run in parallel here because the kernels let go of the interpreter's lock while they run: a
compile of optreg's (`direct.Compiled`) loads Inductor's kernels with a Python binding that releases it around
the kernel's call (`gil_free_kernels`; Inductor's own binding, torch 2.13's `CppPythonBindingsCodeCache`, keeps
it). Only each chunk's Python wrapper (its buffers' allocations, its sizes) holds the lock.

Measured on an AMD EPYC of 2 cores (AVX-512, torch 2.13), 25M float32 parameters in 1,000 tensors (matrices of
256 x 97, vectors of 512: `benchmarks/bench_optimizers.py`), flush-denormal on, fused per tensor, each setting in
a process of its own, the two alternated; medians of 11 steps, back to back / each after an in-place add of 256 MB
(whose team's idle thread then spins on the other core for a few ms), in ms:

    chain                 on the team (before)    shared, one OpenMP thread each
    oneflow.LAMB          22.2-22.5 / 22.7-22.8   17.7-18.4 / 20.4-21.3
    mindspore.LARS        19.0 / 19.1             14.7 / 17.2
    cerebras.Adafactor    27.9 / 28.5             19.9 / 23.2
    mindspore.AdaFactor   47.4 / 48.1             22.7 / 25.8

Over 100 tensors (250,000 elements each, above the bound: the team) sharing was 0.89x the time of the team back
to back and 1.07x after the add for oneflow.LAMB, 0.77x / 0.90x for cerebras.Adafactor; element-wise oneflow.AdamW
over 1,000 tensors 0.88x / 1.0x (not taken: its per-tensor target is met on the team). Before, a chunk ran on one
OpenMP thread of the calling thread only below 8,192 elements, and on the team above (the team was 5-27% faster
from 16,384 elements, one chunk after the other on one thread).

In the benchmark's rounds (each step after another optimizer's, 3 rounds, the add 59 GB/s), the shares of the
roofline over 1,000 tensors came to 0.44-0.53 for the LAMBs and LARS (0.36-0.43 before) and 0.20 / 0.31 for
cerebras.Adafactor / mindspore.AdaFactor (0.15 / 0.09 before).

`MOST`: at most 4 threads share a step's chunks (3 helpers): about a third of a small chunk's time is its
wrapper's Python, which one thread at a time runs, so more would mostly wait for the lock. Not measured beyond 2
cores (none here).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any, Callable, Iterator, Sequence

_LOCK = threading.Lock()
_RUNTIMES: list[Any] = []

#: the most threads, the calling one included, that share a step's chunks (see the module's docstring; read when
#: the helpers are first made)
MOST = 4


def _runtimes() -> Any:
    """The process's OpenMP runtimes, found once (threadpoolctl's controller, selected to OpenMP)."""
    if not _RUNTIMES:
        with _LOCK:
            if not _RUNTIMES:
                from threadpoolctl import ThreadpoolController
                _RUNTIMES.append(ThreadpoolController().select(user_api="openmp"))
    return _RUNTIMES[0]


def one_thread() -> Any:
    """Limit the parallel regions that the calling thread opens to one thread, until the returned limiter's
    `restore_original_limits()`. OpenMP keeps the setting per thread (`omp_set_num_threads`), so other threads,
    a background compile's say, keep theirs."""
    return _runtimes().limit(limits=1)


# ---------------------------------------------------------------------------------------------
# kernels that let go of the interpreter's lock
# ---------------------------------------------------------------------------------------------

#: how Inductor's Python binding calls a kernel (torch 2.13's `CppPythonBindingsCodeCache.call_entry_function`,
#: formatted with the parsed arguments) ...
HOLDING = "kernel({}); Py_RETURN_NONE;"
#: ... and how a binding that releases the lock around the call does: the arguments are parsed with the lock
#: held (they read Python objects), the kernel, which reads only their memory, runs without it, and the lock is
#: taken back however the kernel ends: a kernel that throws (Inductor's check of an index, "index out of bounds")
#: goes to the binding's `catch`, which sets the Python error and so must hold it (a release undone only after a
#: normal return crashed the interpreter there)
RELEASING = ("[&](auto... a) {{ struct Released {{ PyThreadState* saved = PyEval_SaveThread(); "
             "~Released() {{ PyEval_RestoreThread(saved); }} }} released; kernel(a...); }}({}); Py_RETURN_NONE;")
_DEPTH = [0]


def _bindings() -> Any:
    from torch._inductor.codecache import CppPythonBindingsCodeCache

    return CppPythonBindingsCodeCache


@contextlib.contextmanager
def gil_free_kernels() -> Iterator[None]:
    """While it is open, the CPU kernels Inductor loads (a compile's, or a cached graph's) are bound so that
    they release the interpreter's lock while they run (`RELEASING`). It changes Inductor's binding class for
    the whole process while any thread holds it open (another thread's compile in that time gets such kernels
    too, which only lets other threads run during them), and does nothing where the binding is not the one
    this was written for (`releases_gil` is then False)."""
    bindings = _bindings()
    with _LOCK:
        if _DEPTH[0] == 0 and bindings.call_entry_function == HOLDING:
            bindings.call_entry_function = RELEASING
        _DEPTH[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH[0] -= 1
            if _DEPTH[0] == 0 and bindings.call_entry_function == RELEASING:
                bindings.call_entry_function = HOLDING


def releases_gil() -> bool:
    """Whether the kernels `gil_free_kernels` loads release the interpreter's lock (Inductor's binding is the
    one it was written for)."""
    return _bindings().call_entry_function in (HOLDING, RELEASING)


# ---------------------------------------------------------------------------------------------
# the helper threads
# ---------------------------------------------------------------------------------------------

_POOL: list[Any] = []   # (the process id, the executor) once made


def _helper_start() -> None:
    """A helper thread's start: one OpenMP thread for all it runs (never restored: the thread is ours). ATen sets
    a thread's OpenMP count to torch's at the thread's first call that asks for it (`at::get_num_threads`, a
    parallel operation): that call comes first, or it would undo the limit."""
    import torch

    torch.get_num_threads()
    one_thread()


def _helpers() -> Any:
    """The executor of the helper threads (made on first use; again in a forked child, where the parent's
    threads do not exist)."""
    if not _POOL or _POOL[0][0] != os.getpid():
        from concurrent.futures import ThreadPoolExecutor

        with _LOCK:
            if not _POOL or _POOL[0][0] != os.getpid():
                _POOL[:] = [(os.getpid(), ThreadPoolExecutor(max_workers=MOST - 1, thread_name_prefix="optreg-step",
                                                             initializer=_helper_start))]
    return _POOL[0][1]


_SMALLEST = sys.float_info.min   # the smallest normal double: half of it is denormal, or 0 where flushed


def flushes_denormals() -> bool:
    """Whether the calling thread flushes denormal numbers to zero (`torch.set_flush_denormal`: a setting of each
    thread's, which a new thread takes from the one that starts it, as it is then)."""
    return _SMALLEST * 0.5 == 0.0


def share(tasks: Sequence[Callable[[], Any]]) -> None:
    """Run `tasks` (independent: a step's chunks) on the calling thread and helper threads, each thread on one
    OpenMP thread, each taking the next task left when it is free; returns when all have run. The first error
    stops the threads from taking more and is raised once every thread is done. The calling thread's grad mode
    and flushing of denormal numbers hold on the helpers (a helper kept the flushing of the thread that started
    it, and the numbers of a chunk then depended on which thread took it); with kernels that keep the
    interpreter's lock (`releases_gil` False), or one task, the calling thread runs them all."""
    import torch

    helpers = min(torch.get_num_threads(), MOST) - 1 if len(tasks) > 1 and releases_gil() else 0
    left = iter(tasks)
    taking = threading.Lock()   # each task once, also where no interpreter lock orders the threads (free-threaded)
    failed: list[BaseException] = []   # the errors, in the order they came
    grad, flush = torch.is_grad_enabled(), flushes_denormals()

    def take() -> Callable[[], Any] | None:
        with taking:
            return next(left, None)

    def work() -> None:
        try:
            torch.set_flush_denormal(flush)
            with torch.set_grad_enabled(grad):
                while (task := take()) is not None:
                    if failed:
                        return
                    task()
        except BaseException as error:
            failed.append(error)

    futures = []
    if helpers > 0:
        try:
            pool = _helpers()
            futures = [pool.submit(work) for _ in range(min(helpers, len(tasks) - 1))]
        except RuntimeError:   # the interpreter is exiting: no new threads
            futures = []
    limit = one_thread()
    try:
        work()
    finally:
        limit.restore_original_limits()
        for future in futures:   # every helper done before the step returns, or raises
            future.exception()
    if failed:
        raise failed[0]

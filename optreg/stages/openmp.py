"""One OpenMP thread for a compiled chunk of small tensors (`execute.FusedPlan`).

Inductor's CPU kernels run each loop of a compiled step as an OpenMP parallel region whose team the runtime
sizes from the calling thread's setting (`cpp.dynamic_threads`). A chain that reduces each tensor to values (a
trust ratio's norms, Adafactor's factored moments and RMS) opens several regions per tensor, and over a small
tensor the team's start and join cost more than the work it shares. ATen makes the same choice per operation:
one thread below `execute.GRAIN` elements.

A chunk runs on one thread when its chain reduces each tensor (`Chain.reductions`) and its largest tensor is
below `execute.SERIAL_ELEMENTS` (8,192); an element-wise chain always keeps the team. Measured on an AMD EPYC of 2
cores (AVX-512, torch 2.13): a fused step over 25M float32 parameters in matrices of n elements, the chunks on one
thread against the team, side by side in one process (17 alternating steps, median; the step's time on one thread
over its time on the team, above 1 where the team is faster):

    chain                 4,096 elements   8,192   16,384   26,600   65,536
    oneflow.LAMB          0.98             1.04    1.17     1.18
    cerebras.Lamb                                           1.14
    mindspore.Lamb                                          1.17
    mindspore.LARS                                          1.13
    cerebras.Adafactor                     0.99    1.05     1.12     1.27
    mindspore.AdaFactor   0.96             1.02    1.09              1.22

In the benchmark's setting (`benchmarks/bench_optimizers.py`: 1,000 tensors, matrices of 256 x 97 and vectors of
512, flush-denormal on), the earlier rule below took 1.02-1.27x as long over six chains (oneflow.LAMB,
cerebras.Lamb, mindspore.Lamb, mindspore.LARS, both Adafactors), each step after an OpenMP region or back to back.
A team is fragile where another process competes for the cores: with a niced process running beside it, a step over
teams now and then stalled for 0.1-7 s, where one thread's did not (ATen's own parallel operations share this;
OMP_NUM_THREADS=1 is the remedy there).

An earlier rule kept every tensor below 32,768 elements per loop of the reductions on one thread (three loops for
an Adafactor), from a measurement on an Intel Xeon of 2 cores (cerebras.Adafactor 2.2x as fast on one thread at
26,624 elements). It was most likely taken while the background compile's thread lived on with an idle OpenMP team
of its own, which makes libgomp throttle the spinning of every team (`execute._compile_loop`), and so every team's
start cost more than it does now; on the AMD EPYC above the rule gave away 12-27% of those steps. A machine whose
teams start slowly for another reason would again gain from a higher bound (not measured since: no such machine
here).

Not taken: the chunks of small tensors shared among two Python threads, each chunk on one OpenMP thread (the
numbers of one thread, with both cores busy). Inductor's kernels, called from its Python wrapper, hold the
interpreter's lock, so two threads took as long as one; with `cpp_wrapper` the compiled graph lets it go. On the
AMD machine, oneflow.LAMB over 1,000 tensors, side by side (14 alternating steps, median): 82.0 ms as landed
(one thread), 61.6 ms with the team, 63.6 ms on two Python threads with `cpp_wrapper`: no faster than the team,
and with the C++ wrapper the first step, its compile included, took 43-50 s (cold).
"""

from __future__ import annotations

import threading
from typing import Any

_LOCK = threading.Lock()
_RUNTIMES: list[Any] = []


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

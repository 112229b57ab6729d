"""One OpenMP thread for a compiled chunk of small tensors (`execute.FusedPlan`).

Inductor's CPU kernels run each loop of a compiled step as an OpenMP parallel region whose team the runtime
sizes from the calling thread's setting (`cpp.dynamic_threads`). A chain that reduces each tensor to values (a
trust ratio's norms, Adafactor's factored moments and RMS) opens several regions per tensor, and over a small
tensor the team's start and join cost more than the work it shares. ATen makes the same choice per operation:
one thread below `execute.GRAIN` elements.

Measured on an Intel Xeon of 2 cores (AVX-512, torch 2.13, one chunk of 16 float32 tensors of 256 × c, fused,
one thread against two; `tests/test_openmp.py` checks the setting, not the speed):

    chain                 reductions   26,624 elements   32,768   65,536   131,072   262,144
    cerebras.Adafactor    3            2.2× as fast      2.2×     1.6×     1.1×      0.8×
    oneflow.LAMB          1            1.1×              1.1×     0.9×     0.8×      0.7×
    cerebras.Lamb         1            1.2×
    oneflow.AdamW         0            0.96×             0.9×     0.7×     0.6×      0.6×
    oneflow.SGD           0            1.06×

so a chunk runs on one thread while its largest tensor is below GRAIN elements per loop of the chain's
reductions (`Chain.reductions`: a LAMB's norms count once, Adafactor's factored moment, update clipping and
parameter scale three times), and an element-wise chain always keeps the team.

The cost of a team depends on the machine: on an AMD EPYC of 2 cores (AVX2, the same torch), one such chunk
ran 0.7-0.85× as fast on one thread at 16,384-131,072 elements (cerebras.Adafactor, oneflow.LAMB,
mindspore.LARS), and the steps over 1,000 tensors of 26,600 elements took 1.0-1.14× as long as on two (a later
day, oneflow.LAMB alone: 1.20-1.38×).

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
    a background compile's or the eager pool's, keep theirs."""
    return _runtimes().limit(limits=1)

"""The step path reads no tensor value back into Python (item 4 of the GPU readiness: on an accelerator each
such read waits for the device). Every first-party chain steps in every execution under a dispatch mode that
fails on the operations a read goes through (`.item()`, `float()`, `bool()`, `torch.equal`), as it would on an
accelerator: `ops.on_host` says no tensor is in host memory, and under `fused` the traced step runs as Python
(a compiled call cannot run under a dispatch mode; `_compile` compiles with fullgraph=True, where such a read
would break the graph and fail the compile).

Excluded: MindSpore's THOR (a dialect of its own, not the stages'), whose matrix inverses take MindSpore's
fallback where a Cholesky factorisation fails, a branch on the factorisation's result.
"""

from __future__ import annotations

import copy

import pytest
import torch
from test_optimizer_matrix import CHAINS, _build, _ids, _loss, _model, _relative
from torch.utils._python_dispatch import TorchDispatchMode

import optreg.stages.execute as execute
import optreg.stages.ops as ops

#: what a read of a tensor's value into Python dispatches to
READS = {torch.ops.aten._local_scalar_dense.default, torch.ops.aten.item.default,
         torch.ops.aten.is_nonzero.default, torch.ops.aten.equal.default}

EXECUTIONS = {"eager": {}, "foreach": {"foreach": True}, "fused": {"fused": True},
              "contiguous": {"contiguous_params": True},
              "contiguous, fused": {"contiguous_params": True, "fused": True}}
STEPPED = [c for c in CHAINS if c.name != "mindspore.thor"]


class NoReads(TorchDispatchMode):
    """Fails on an operation that reads a tensor's value into Python."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in READS:
            raise AssertionError(f"the step reads a tensor's value into Python ({func})")
        return func(*args, **(kwargs or {}))


def _steps(case, model, opt, steps=3, guard=True):
    for step in range(steps):
        opt.zero_grad()
        _loss(model, step).backward()
        with NoReads() if guard else torch.no_grad():
            opt.step()
    return [p.detach().clone() for p in model.parameters()]


@pytest.fixture
def as_on_a_device(monkeypatch):
    monkeypatch.setattr(ops, "on_host", lambda x: False)
    monkeypatch.setattr(execute, "_compile", lambda fn, **options: fn)
    monkeypatch.setattr(execute, "_COMPILED", {})


@pytest.mark.parametrize("execution", list(EXECUTIONS))
@pytest.mark.parametrize("case", STEPPED, ids=_ids(STEPPED))
def test_a_step_reads_no_tensor_value(case, execution, as_on_a_device):
    model = _model(case)
    _steps(case, model, _build(case, model, **EXECUTIONS[execution]))


def test_the_reads_are_caught():
    """The guard fails on each kind of read (the test above cannot pass by missing them)."""
    x = torch.ones(3)
    for read in (lambda: x.sum().item(), lambda: float(x[0]), lambda: bool(x[0]), lambda: torch.equal(x, x)):
        with pytest.raises(AssertionError, match="reads a tensor's value"), NoReads():
            read()


PER_PARAMETER_STEP = [c for c in STEPPED if c.name in ("cerebras.Adagrad", "cerebras.NAdam", "cerebras.RAdam")]


@pytest.mark.parametrize("case", PER_PARAMETER_STEP, ids=_ids(PER_PARAMETER_STEP))
def test_a_per_parameter_step_count_on_a_device_is_computed_with_as_tensors(case, monkeypatch):
    """Cerebras' per-parameter float32 step: in host memory read as a Python float (torch's `_get_value`), on
    a device kept a 0-d tensor; both give the same steps (within 1e-12 relative in float64)."""
    model = _model(case, torch.float64)
    device_model = copy.deepcopy(model)
    host = _steps(case, model, _build(case, model), guard=False)
    monkeypatch.setattr(ops, "on_host", lambda x: False)
    device = _steps(case, device_model, _build(case, device_model))
    assert max(_relative(a, b) for a, b in zip(device, host)) <= 1e-12


def test_a_contiguous_group_reads_its_0d_state_once_after_a_load():
    """The agreement of a contiguous group's per-parameter 0-d states, which a flat step needs, is known
    without a read while they are fresh; after a loaded state it is read once, not on every step."""
    case = next(c for c in STEPPED if c.name == "cerebras.Adam")
    model = _model(case)
    opt = _build(case, model, contiguous_params=True)
    _steps(case, model, opt, steps=2)
    opt.load_state_dict(copy.deepcopy(opt.state_dict()))
    opt.zero_grad()
    _loss(model, 2).backward()
    opt.step()   # the loaded 0-d states are compared here
    buckets = [b for layout in opt._contiguous.values() for b in layout.buckets]
    assert buckets and all(b.uniform is True and any(v[1][0].dim() == 0 for v in b.state.values()) for b in buckets)
    _steps(case, model, opt, steps=2)

"""torch.compile(opt.step): the compiled step gives the eager run's learning rates and parameters, step after
step (the scheduler, stepped outside, changes the lr between compiled calls), for every first-party case.

Backend "aot_eager" traces the step with Dynamo and AOTAutograd, where a step counter or an lr kept on the Python
side gets captured, and runs ATen's kernels; two LAMBs also run through Inductor, the default backend (one
compile each: they have no scheduler). Not bit-equal, rel <= 1e-6: a traced step computes with 0-d tensor state
(Cerebras' float32 step and beta powers) as float32 tensors where the eager step reads them into Python floats,
and Inductor fuses the arithmetic. torch's own AdamW is left out: its compiled step is torch's code path, not
optreg's."""

from __future__ import annotations

import pytest
import torch

from harness import CASES, CLOSE, STEPS, assert_same, batch, case_params, loss_fn, lr_of, make_model, snapshot

# torch.compile wraps opt.step, so the scheduler's "optimizer.step() was called" flag stays unset
pytestmark = pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step\\(\\)` before:UserWarning")
FIRST_PARTY = [p for p in case_params() if not p.values[0].startswith("torch.")]


def compiled_run(case, backend):
    torch._dynamo.reset()
    model = make_model()
    opt, sched = case.build(model)
    step = torch.compile(opt.step, backend=backend)
    lrs = []
    for i in range(STEPS):
        opt.zero_grad(set_to_none=True)
        loss_fn(model, *batch(i)).backward()
        step()
        lrs.append(lr_of(opt))
        if sched is not None:
            sched.step()
    torch._dynamo.reset()
    return {"params": snapshot(model), "lrs": lrs}


@pytest.mark.parametrize("case_id", FIRST_PARTY)
def test_compiled_step_equals_eager(case_id, references):
    assert_same(compiled_run(CASES[case_id], "aot_eager"), references(case_id), CLOSE, "compiled (aot_eager)")


@pytest.mark.parametrize("case_id", [p for p in FIRST_PARTY if p.values[0] in ("oneflow.LAMB", "cerebras.Lamb")])
def test_compiled_step_with_inductor_equals_eager(case_id, references):
    assert_same(compiled_run(CASES[case_id], "inductor"), references(case_id), CLOSE, "compiled (inductor)")

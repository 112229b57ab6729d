"""torch.amp.GradScaler: a step whose gradients hold an inf is skipped (scaler.step does not call the
optimizer), the optimizer's state dict is untouched by it, and the run then equals the uninterrupted
single-process run without that step. Bit-equal: the loss scale is a power of two, so scaling and unscaling the
gradients is exact."""

from __future__ import annotations

import copy

import pytest
import torch

from harness import CASES, EXACT, STEPS, assert_same, batch, case_params, loss_fn, lr_of, make_model, snapshot

INF_AT = 2      # the iteration whose gradient gets an inf (after two real steps, so that state exists)
SCALE = 2.0 ** 8


def same_state(a, b, path="state_dict"):
    """Two state dicts hold the same keys and equal values (tensors bit for bit)."""
    assert type(a) is type(b) or (isinstance(a, (int, float)) and isinstance(b, (int, float))), path
    if isinstance(a, torch.Tensor):
        assert torch.equal(a, b), f"{path} changed"
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), f"{path}: keys {sorted(map(str, a))} vs {sorted(map(str, b))}"
        for k in a:
            same_state(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            same_state(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r} became {b!r}"


@pytest.mark.parametrize("case_id", case_params())
def test_gradscaler_skips_an_inf_step_and_leaves_state_untouched(case_id, references):
    model = make_model()
    opt, sched = CASES[case_id].build(model)
    scaler = torch.amp.GradScaler("cpu", init_scale=SCALE, growth_interval=1000)
    lrs, step = [], 0
    for it in range(STEPS + 1):
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss_fn(model, *batch(step))).backward()
        if it == INF_AT:
            next(model.parameters()).grad[0, 0] = float("inf")
            state, params = copy.deepcopy(opt.state_dict()), snapshot(model)
            scaler.step(opt)
            scaler.update()
            assert scaler.get_scale() == SCALE / 2, "the inf step was not detected"
            same_state(state, opt.state_dict())
            assert all(torch.equal(p, q) for p, q in zip(params, snapshot(model))), "a skipped step moved the weights"
            continue
        scaler.step(opt)
        scaler.update()
        lrs.append(lr_of(opt))
        if sched is not None:
            sched.step()
        step += 1
    assert_same({"params": snapshot(model), "lrs": lrs}, references(case_id), EXACT, "with a skipped inf step")

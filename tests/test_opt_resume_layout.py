"""Resume keeps every state tensor's dtype and device, and the state dict holds no configuration objects."""

from __future__ import annotations

import io

import pytest
import torch

import optreg
from optreg.core.entry import OPTIMIZER
from optreg.core.build import wraps_optimizer
from optreg.core.registry import REGISTRY

# Rows that build torch's own classes (MindSpore's experimental and mint rows) keep torch's state layout, the
# wrappers (MindSpore's LARS and AdaSum cells) keep their inner optimizer's, and OneFlow's LBFGS steps only with a
# closure: this layout test is about optreg's chain optimizers.
FIRST_PARTY = [e for e in REGISTRY.entries(OPTIMIZER) if e.dialect != "torch" and not wraps_optimizer(e)
               and not str(e.target).startswith("torch.optim:") and e.qualname != "oneflow.LBFGS"]


def _params(dtype: torch.dtype) -> list[tuple[str, torch.nn.Parameter]]:
    g = torch.Generator().manual_seed(0)
    return [(f"layer{i}.weight", torch.nn.Parameter(torch.randn(16, 32, generator=g).to(dtype))) for i in range(2)]


def _steps(opt, named, start: int, count: int) -> None:
    for step in range(start, start + count):
        g = torch.Generator().manual_seed(100 + step)
        for _, p in named:
            p.grad = torch.randn(p.shape, generator=g).to(p.dtype)
        opt.step()


def _required(entry) -> dict:
    """Values for the options this entry requires (lr / learning_rate, momentum)."""
    samples = {"learning_rate": 0.01, "lr": 0.01, "momentum": 0.9}
    return {p.name: samples[p.name] for p in optreg.describe(entry.qualname).params if p.required}


# the optimizers that take parameters (MindSpore's thor takes the model: tests/test_opt_thor.py resumes it in bf16)
TAKE_PARAMS = [e for e in FIRST_PARTY if not e.takes_model]


@pytest.mark.parametrize("entry", TAKE_PARAMS, ids=[e.qualname for e in TAKE_PARAMS])
def test_bfloat16_resume_is_exact(entry):
    kwargs = _required(entry)
    straight = _params(torch.bfloat16)
    opt = optreg.configure_optimizer(entry.qualname, straight, **kwargs)
    _steps(opt, straight, 0, 6)

    first = _params(torch.bfloat16)
    opt1 = optreg.configure_optimizer(entry.qualname, first, **kwargs)
    _steps(opt1, first, 0, 3)
    buffer = io.BytesIO()
    torch.save({"opt": opt1.state_dict(), "params": [p.detach() for _, p in first]}, buffer)
    buffer.seek(0)
    saved = torch.load(buffer, weights_only=True)   # plain tensors and values only

    resumed = _params(torch.bfloat16)
    with torch.no_grad():
        for (_, p), q in zip(resumed, saved["params"]):
            p.copy_(q)
    opt2 = optreg.configure_optimizer(entry.qualname, resumed, **kwargs)
    opt2.load_state_dict(saved["opt"])
    layout = {k: (v.dtype, v.device) for st in opt1.state.values() for k, v in st.items()
              if isinstance(v, torch.Tensor)}
    assert {k: (v.dtype, v.device) for st in opt2.state.values() for k, v in st.items()
            if isinstance(v, torch.Tensor)} == layout
    _steps(opt2, resumed, 3, 3)
    assert all(torch.equal(p, q) for (_, p), (_, q) in zip(straight, resumed))


def test_a_schedule_learning_rate_is_not_pickled_into_the_state_dict():
    named = _params(torch.float32)
    opt = optreg.configure_optimizer("mindspore.Adam", named, learning_rate={
        "name": "CosineDecayLR", "min_lr": 0.0, "max_lr": 0.1, "decay_steps": 10})
    _steps(opt, named, 0, 2)
    buffer = io.BytesIO()
    torch.save(opt.state_dict(), buffer)
    buffer.seek(0)
    state = torch.load(buffer, weights_only=True)
    opt.load_state_dict(state)
    assert opt.lr_schedule(0) is not None   # the optimizer keeps the group's schedule
    assert all(not callable(v) for g in opt.param_groups for v in g.values())  # and the groups hold no object

"""`state_dtype: "float32"`: float32 state over half-precision parameters, the step in float32 and the parameter
rounded to its dtype once per step (MindFormers 1.3's FP32StateAdamWeightDecay / FusedAdamWeightDecay on
MindSpore's AdamWeightDecay kernel).

The reference is MindSpore's AdamWeightDecay formula (mindspore.ops.AdamWeightDecay) in float64 from the stored
float32 moments, with MindFormers' roundings: the moments stored as float32, the parameter as its dtype (round
to nearest even) after each step. MindSpore 2.10's CPU kernel cannot record it (its AdamWeightDecay CPU kernel
requires var, m and v of one byte size and takes float16 or float32 var only), so the formula is the reference.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import optreg
from optreg.dialects.mindspore.adam import AdamWeightDecay
from optreg.errors import ConfigError

HALF = [torch.bfloat16, torch.float16]
LR, BETA1, BETA2, EPS, WD = 1e-2, 0.9, 0.95, 1e-8, 0.1
SHAPES = [(16, 8), (8,)]
#: each execution's options
EXECUTIONS = {"eager": {}, "foreach": {"foreach": True}, "fused": {"fused": True},
              "contiguous": {"contiguous_params": True}}
STEPS = 3
#: a float64 value this close (relative) to a rounding midpoint of the half dtype may round either way: float32
#: arithmetic in another order than the reference's is within a few float32 ulps
MIDPOINT = 1e-6


def _data(dtype: torch.dtype, seed: int = 0) -> tuple[list[torch.Tensor], list[list[torch.Tensor]]]:
    g = torch.Generator().manual_seed(seed)
    params = [torch.randn(s, generator=g).to(dtype) for s in SHAPES]
    grads = [[torch.randn(s, generator=g).to(dtype) for s in SHAPES] for _ in range(STEPS)]
    return params, grads


def _optimizer(params, **options) -> AdamWeightDecay:
    groups = [{"params": [params[0]], "weight_decay": WD}, {"params": [params[1]], "weight_decay": 0.0}]
    return AdamWeightDecay(groups, learning_rate=LR, beta1=BETA1, beta2=BETA2, eps=EPS, **options)


def _side_by_side(dtype: torch.dtype):
    """Two copies of the data's parameters stepped together, one optimizer without the option and one with float32
    state: (step, the first's parameters, the second's, the two optimizers) after each step."""
    params, grads = _data(dtype)
    plain = [torch.nn.Parameter(p.clone()) for p in params]
    wide = [torch.nn.Parameter(p.clone()) for p in params]
    opts = _optimizer(plain), _optimizer(wide, state_dtype="float32")
    for step in range(STEPS):
        for ps, opt in zip((plain, wide), opts):
            for p, g in zip(ps, grads[step]):
                p.grad = g.clone()
            opt.step()
        yield step, plain, wide, opts


def _neighbours(x: np.ndarray, dtype: torch.dtype) -> tuple[np.ndarray, np.ndarray]:
    """(x rounded to `dtype`, the other value of `dtype` x may round to where it lies near a midpoint)."""
    rounded = torch.from_numpy(x).to(dtype).to(torch.float64).numpy()
    below = torch.from_numpy(x * (1 - MIDPOINT)).to(dtype).to(torch.float64).numpy()
    above = torch.from_numpy(x * (1 + MIDPOINT)).to(dtype).to(torch.float64).numpy()
    return rounded, np.where(below != rounded, below, above)


@pytest.mark.parametrize("dtype, execution", [(dtype, execution) for dtype in HALF
                                               for execution in ("eager", "foreach", "contiguous")]
                         + [(torch.bfloat16, "fused")], ids=str)
def test_float32_state_steps_a_half_parameter_as_mindformers_fp32_state_adam_weight_decay(dtype, execution):
    """m, v float32 (β1·m + (1-β1)·g, β2·v + (1-β2)·g²), w ← round(w - lr·(m/(√v + eps) + wd·w)) in float64
    from the stored values: the moments within 1e-5 of the magnitude of their two terms (float32 arithmetic in each
    execution's order, a compiled step's included; a bfloat16 store would be 2⁻⁹ off), each parameter value the
    reference's rounding (either neighbour only within 1e-6 of a midpoint), over three steps."""
    params, grads = _data(dtype)
    params = [torch.nn.Parameter(p.clone()) for p in params]
    options = EXECUTIONS[execution]
    opt = _optimizer(params, state_dtype="float32", **options)
    ref_w = [p.detach().double().numpy() for p in params]
    ref_m = [np.zeros(s) for s in SHAPES]
    ref_v = [np.zeros(s) for s in SHAPES]
    for step in range(STEPS):
        for p, g in zip(params, grads[step]):
            p.grad = g.clone()
        opt.step()
        for i, (p, wd) in enumerate(zip(params, (WD, 0.0))):
            g = grads[step][i].double().numpy()
            scale_m = BETA1 * np.abs(ref_m[i]) + (1 - BETA1) * np.abs(g)
            scale_v = BETA2 * ref_v[i] + (1 - BETA2) * g * g
            ref_m[i] = np.float32(BETA1 * ref_m[i] + (1 - BETA1) * g).astype(np.float64)
            ref_v[i] = np.float32(BETA2 * ref_v[i] + (1 - BETA2) * g * g).astype(np.float64)
            update = ref_m[i] / (np.sqrt(ref_v[i]) + EPS) + wd * ref_w[i]
            want, other = _neighbours(ref_w[i] - LR * update, dtype)
            got = p.detach().double().numpy()
            state = opt.state[p]
            assert p.dtype == dtype
            assert state["exp_avg"].dtype == state["exp_avg_sq"].dtype == torch.float32
            assert (np.abs(state["exp_avg"].double().numpy() - ref_m[i]) <= 1e-5 * scale_m).all(), (step, i)
            assert (np.abs(state["exp_avg_sq"].double().numpy() - ref_v[i]) <= 1e-5 * scale_v).all(), (step, i)
            assert ((got == want) | (got == other)).all(), (step, i)
            assert (got == want).mean() > 0.95, (step, i)
            ref_w[i] = got   # each step from the parameter as stored (a midpoint's rounding carried on)


@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_a_half_step_in_float32_differs_from_the_half_step_with_half_state(dtype):
    """Without the option (mindspore.nn.AdamWeightDecay, MindFormers' `adamw`) the moments stay in the parameter's
    dtype, rounded there after each step: the first step's m is (1-β1)·g within an ulp of the half dtype,
    against float32's ulp with the option (values the half dtype cannot hold)."""
    grads = _data(dtype)[1]
    for step, plain, wide, opts in _side_by_side(dtype):
        if step == 0:
            exact = (1 - BETA1) * grads[0][0].double()
            m, wide_m = opts[0].state[plain[0]]["exp_avg"], opts[1].state[wide[0]]["exp_avg"]
            assert m.dtype == dtype and wide_m.dtype == torch.float32
            assert ((m.double() - exact).abs() <= torch.finfo(dtype).eps * exact.abs()).all()
            assert ((wide_m.double() - exact).abs() <= 2.0 ** -23 * exact.abs()).all()
            assert not torch.equal(wide_m.to(dtype).float(), wide_m)
    assert all(opts[0].state[p]["exp_avg_sq"].dtype == dtype for p in plain)
    assert any(not torch.equal(a, b) for a, b in zip(plain, wide))


@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_a_checkpoint_of_float32_state_over_half_parameters_resumes_exactly(dtype):
    """One step, state_dict through torch.save/load (weights_only) into a fresh optimizer, two more steps: the
    parameters and the float32 moments equal a run of three steps bit for bit."""
    import io

    params, grads = _data(dtype)
    straight = [torch.nn.Parameter(p.clone()) for p in params]
    resumed = [torch.nn.Parameter(p.clone()) for p in params]
    opt = _optimizer(straight, state_dtype="float32")
    first = _optimizer(resumed, state_dtype="float32")
    for step in range(STEPS):
        for p, g in zip(straight, grads[step]):
            p.grad = g.clone()
        opt.step()
        if step == 0:
            for p, g in zip(resumed, grads[0]):
                p.grad = g.clone()
            first.step()
            buffer = io.BytesIO()
            torch.save(first.state_dict(), buffer)
            buffer.seek(0)
            second = _optimizer(resumed, state_dtype="float32")
            second.load_state_dict(torch.load(buffer, weights_only=True))
        else:
            for p, g in zip(resumed, grads[step]):
                p.grad = g.clone()
            second.step()
    for a, b in zip(straight, resumed):
        assert torch.equal(a, b)
        for name in ("exp_avg", "exp_avg_sq"):
            assert second.state[b][name].dtype == torch.float32
            assert torch.equal(opt.state[a][name], second.state[b][name])


def test_a_checkpoint_of_half_state_loads_into_float32_state_and_back():
    """`load_state_dict` converts to the optimizer's own state_dtype: half moments widen exactly to float32, and
    float32 moments load into a plain optimizer as the parameter's dtype (round to nearest even)."""
    params, grads = _data(torch.bfloat16)
    params = [torch.nn.Parameter(p) for p in params]
    plain = _optimizer(params)
    for p, g in zip(params, grads[0]):
        p.grad = g
    plain.step()
    wide = _optimizer(params, state_dtype="float32")
    wide.load_state_dict(plain.state_dict())
    for p in params:
        assert wide.state[p]["exp_avg"].dtype == torch.float32
        assert torch.equal(wide.state[p]["exp_avg"], plain.state[p]["exp_avg"].float())
    wide.step()
    back = _optimizer(params)
    back.load_state_dict(wide.state_dict())
    for p in params:
        assert torch.equal(back.state[p]["exp_avg"], wide.state[p]["exp_avg"].to(torch.bfloat16))
    assert [g["state_dtype"] for g in back.param_groups] == [None, None]


def test_float32_parameters_are_as_without_the_option():
    for _, plain, wide, _ in _side_by_side(torch.float32):
        assert all(torch.equal(x, y) for x, y in zip(plain, wide))


def test_a_misspelt_state_dtype_names_float32():
    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": {"name": "AdamWeightDecay", "dialect": "mindspore", "state_dtype": "float23"}},
                     torch.nn.Linear(2, 2))
    assert info.value.errors[0].path == "optimizer.state_dtype"
    assert "float32" in str(info.value)


@pytest.mark.parametrize("name", ["mindspore.AdamWeightDecay", "cerebras.AdamW", "oneflow.AdamW", "oneflow.SGD",
                                  "cerebras.Lamb"])
@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_a_half_step_is_the_float32_step_rounded_once(name, dtype):
    """Each step of a half-precision model under `state_dtype: float32` equals the same optimizer's step of a float32
    copy of the model with the same state, rounded to the half dtype: the chain's stages (decay, moments, update)
    run in float32 and the parameter is rounded once, whatever the chain writes to it in between."""
    options = {"lr": 0.05, "weight_decay": 0.1} if not name.startswith("mindspore.") else \
        {"learning_rate": 0.05, "weight_decay": 0.1}
    if name == "oneflow.SGD":
        options["momentum"] = 0.9
    torch.manual_seed(0)
    half = torch.nn.Linear(24, 16).to(dtype)
    opt = optreg.configure_optimizer(name, half, state_dtype="float32", **options)
    for step in range(STEPS):
        wide = torch.nn.Linear(24, 16)
        with torch.no_grad():
            for w, h in zip(wide.parameters(), half.parameters()):
                w.copy_(h)
        reference = optreg.configure_optimizer(name, wide, **options)
        if step:
            reference.load_state_dict(copy.deepcopy(opt.state_dict()))
        for w, h in zip(wide.parameters(), half.parameters()):
            h.grad = torch.randn(h.shape).to(dtype)
            w.grad = h.grad.float()
        opt.step()
        reference.step()
        for w, h in zip(wide.parameters(), half.parameters()):
            assert torch.equal(h, w.detach().to(dtype)), (step, name)
            for key, value in opt.state[h].items():
                if value.dim():
                    assert value.dtype == torch.float32 and torch.equal(value, reference.state[w][key]), key

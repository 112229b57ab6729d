"""`state_dtype`: optimizer state in bfloat16 or in 8-bit blocks (`optreg.stages.state_codec`).

The codec against its documented error bounds; then, over every first-party chain of the matrix, the stored
layout (only the state a chain declares in `shrinks` is stored so, the rest as float32 state is), the
parameters after several steps against float32 state within the bound, an exact resume through a
`weights_only` checkpoint, and a checkpoint converted between state dtypes on load.
"""

from __future__ import annotations

import copy
import math

import pytest
import torch
from optim_cases import Case
from test_optimizer_matrix import CHAINS, _build, _ids, _model, _resume, _run

import optreg
from optreg.stages import state_codec as codec

STATE_DTYPES = ["bfloat16", "int8"]
#: int8 runs in contiguous groups, so that the matrix's small tensors (under 4,096 elements) shrink too
EXTRA = {"bfloat16": {}, "int8": {"contiguous_params": True}}
STEPS = 8


def _values(kind: str, n: int = 6000, seed: int = 0) -> torch.Tensor:
    """Values over ten orders of magnitude (both signs for the signed map), some exact zeros."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g) * torch.logspace(-10, 0, n)[torch.randperm(n, generator=g)]
    x[::97] = 0.0
    return x if kind == "signed" else x.abs()


def _roundtrip(x: torch.Tensor, kind: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    codes = torch.empty(x.shape, dtype=codec.CODE_DTYPE[kind])
    scales = torch.empty(codec.blocks(x.numel()))
    codec.encode_(codes, scales, x, kind)
    return codec.decode(codes, scales, kind, torch.float32), codes, scales


@pytest.mark.parametrize("kind", ["signed", "unsigned"])
@pytest.mark.parametrize("shape", [(6000,), (25, 256), (3, 2000)], ids=["vector", "rows", "matrix"])
def test_an_int8_store_is_within_its_documented_bound(kind, shape):
    """|x̂ - x| ≤ 2⁻⁴·|x| above the map's floor (a fraction of the block's absmax), ≤ the floor below it;
    the last block of a tensor is partial (6000 = 23·256 + 112); each block's scale is its absmax."""
    x = _values(kind, n=math.prod(shape)).reshape(shape)
    y, codes, scales = _roundtrip(x, kind)
    flat = x.reshape(-1)
    padded = torch.nn.functional.pad(flat, (0, scales.numel() * 256 - flat.numel()))
    assert torch.equal(scales, padded.view(-1, 256).abs().amax(1))
    absmax = scales.repeat_interleave(256)[:flat.numel()].view(shape)
    above = x.abs() >= absmax * codec.FLOOR[kind]
    err = (y - x).abs()
    assert (err[above] <= codec.RELATIVE_ERROR["int8"] * x.abs()[above]).all()
    assert (err[~above] <= codec.FLOOR[kind] * absmax[~above]).all()
    assert torch.equal(y[x == 0], x[x == 0])
    assert (y * x >= 0).all()                                              # no sign flips
    if kind == "unsigned":
        assert torch.equal(y > 0, x > 0)                                   # a nonzero second moment stays > 0
    assert float((err[above] / x.abs()[above]).max()) > 0.5 * codec.RELATIVE_ERROR["int8"]  # the bound is tight


def test_int8_codes_are_the_documented_minifloats():
    """Signed: |y| is the float32 of bits (c + 889) << 20 for the magnitude c; unsigned: of bits (c + 761) << 20
    for codes 1..255 (code 0 is 0); y = x / absmax. A value exactly on a code decodes to itself."""
    exact = {"signed": [(1, 2.0 ** -16 * 1.25), (8, 2.0 ** -15 * 1.125), (127, 1.0), (-127, -1.0),
                        (-9, -2.0 ** -15 * 1.25)],
             "unsigned": [(1, 2.0 ** -32 * 1.25), (255, 1.0), (247, 0.5), (248, 0.5 * 1.125)]}
    for kind, pairs in exact.items():
        x = torch.tensor([v for _, v in pairs] + [1.0] + [0.0] * 250)
        y, codes, scales = _roundtrip(x, kind)
        assert codes[:len(pairs)].tolist() == [c for c, _ in pairs], kind
        assert torch.equal(y, x)


def test_bfloat16_state_rounds_to_nearest_even():
    x = _values("signed")
    stored = torch.empty(x.shape, dtype=torch.bfloat16)
    codec.encode_(stored, None, x, "signed")
    assert torch.equal(stored, x.to(torch.bfloat16))
    err = (codec.decode(stored, None, "signed", torch.float32) - x).abs()
    assert (err <= codec.RELATIVE_ERROR["bfloat16"] * x.abs()).all()


def test_the_option_is_checked_like_the_execution_flags():
    model = torch.nn.Linear(3, 2)
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer("oneflow.AdamW", model, state_dtype="int4")
    assert info.value.errors[0].path == "state_dtype" and "'int8'" in str(info.value)
    opt = optreg.configure_optimizer("oneflow.AdamW", model, state_dtype="bfloat16")
    with pytest.raises(optreg.ConfigError) as info:
        opt.add_param_group({"params": [torch.nn.Parameter(torch.ones(2))], "state_dtype": "float16"})
    assert info.value.errors[0].path == "param_groups[1].state_dtype"


def test_a_misspelt_state_dtype_is_worded_as_the_config_words_it():
    """The optimizer's class called directly says what configure_optimizer (the own form's option) says, with the
    close choice as the suggestion (it said "must be null, 'float32', ... (did you mean 'bfloat16'?)")."""
    model = torch.nn.Linear(3, 2)
    errors = []
    for call in (lambda: optreg.optimizer_class("oneflow.AdamW")(model.parameters(), state_dtype="bf16"),
                 lambda: optreg.configure_optimizer("oneflow.AdamW", model, state_dtype="bf16")):
        with pytest.raises(optreg.ConfigError) as info:
            call()
        errors.append([tuple(e) for e in info.value.errors])
    assert errors[0] == errors[1] == [
        ("state_dtype", "must be one of 'float32', 'bfloat16' or 'int8', got 'bf16'", None, "bfloat16")]


# -------------------------------------------------------------------------------------------------
# the matrix of first-party chains
# -------------------------------------------------------------------------------------------------


def _stored(opt) -> list[tuple[str, torch.Tensor, dict]]:
    return [(name, value, state) for state in opt.state.values() for name, value in state.items()
            if isinstance(value, torch.Tensor)]


@pytest.mark.parametrize("state_dtype", STATE_DTYPES)
@pytest.mark.parametrize("case", CHAINS, ids=_ids(CHAINS))
def test_only_the_state_a_chain_declares_shrinks(case, state_dtype):
    model = _model(case)
    opt = _build(case, model, state_dtype=state_dtype, **EXTRA[state_dtype])
    _run(model, opt, 2)
    plain_model = _model(case)
    plain = _build(case, plain_model, **EXTRA[state_dtype])
    _run(plain_model, plain, 2)
    maps = opt.chain.shrinks
    padding = opt.chain.shaped   # a chain that packs slices without padding: int8 only from 4,096 elements
    for (name, value, state), (plain_name, plain_value, _) in zip(
            [s for s in _stored(opt) if not codec.is_scale(s[0])], _stored(plain)):
        assert name == plain_name
        if name not in maps or value.dim() == 0:
            assert value.dtype == plain_value.dtype, name
        elif state_dtype == "bfloat16":
            assert value.dtype == torch.bfloat16, name
        elif codec.scale_name(name) in state:
            assert value.dtype == codec.CODE_DTYPE[maps[name]] and value.shape == plain_value.shape
            assert state[codec.scale_name(name)].shape == (codec.blocks(value.numel()),)
        else:
            assert padding and value.numel() < codec.MIN_INT8_ELEMENTS and value.dtype == plain_value.dtype, name


def _movement(params, start):
    return torch.cat([(p - s).flatten() for p, s in zip(params, start)])


@pytest.mark.parametrize("state_dtype", STATE_DTYPES)
@pytest.mark.parametrize("case", CHAINS, ids=_ids(CHAINS))
def test_steps_stay_within_the_bound_of_float32_state(case, state_dtype):
    """After 8 steps the parameters' movement differs from float32 state's by at most 4 times the state dtype's
    relative error of one store (in norm over every parameter: 1.6% bfloat16, 25% int8)."""
    model = _model(case)
    start = [p.detach().clone() for p in model.parameters()]
    plain_model = copy.deepcopy(model)
    plain = _run(plain_model, _build(case, plain_model, **EXTRA[state_dtype]), STEPS)
    small = _run(model, _build(case, model, state_dtype=state_dtype, **EXTRA[state_dtype]), STEPS)
    want = _movement(plain, start)
    worst = float((_movement(small, start) - want).norm() / want.norm())
    assert worst <= 4 * codec.RELATIVE_ERROR[state_dtype], f"{state_dtype} state moved {worst:.2e} off float32's"


@pytest.mark.parametrize("state_dtype", STATE_DTYPES)
@pytest.mark.parametrize("case", CHAINS, ids=_ids(CHAINS))
def test_a_checkpoint_of_shrunk_state_resumes_exactly(case, state_dtype):
    extra = {"state_dtype": state_dtype, **EXTRA[state_dtype]}
    straight_model = _model(case)
    model = copy.deepcopy(straight_model)
    straight = _run(straight_model, _build(case, straight_model, **extra), 6)
    first = _build(case, model, **extra)
    _run(model, first, 3)
    model, second = _resume(case, model, first, **extra)
    assert all(torch.equal(a, b) for a, b in zip(straight, _run(model, second, 3, start=3)))


CONVERTED = [c for c in CHAINS if c.key in ("oneflow.AdamW", "cerebras.SGD", "mindspore.Lamb", "cerebras.Adadelta",
                                            "mindspore.thor")]


@pytest.mark.parametrize("case", CONVERTED, ids=_ids(CONVERTED))
def test_load_converts_state_to_the_optimizers_own_state_dtype(case):
    """A float32 checkpoint loaded into an int8 optimizer is encoded (the optimizer keeps its state_dtype),
    and its int8 checkpoint loaded into a float32 optimizer is decoded, value for value; through bfloat16 and
    back as well."""
    model = _model(case)
    opt = _build(case, model, contiguous_params=True)
    _run(model, opt, 3)
    maps = opt.chain.shrinks
    for first, second in (("int8", None), ("bfloat16", None), ("int8", "bfloat16")):
        _, small = _resume(case, model, opt, state_dtype=first, contiguous_params=True)
        assert all(g["state_dtype"] == first for g in small.param_groups)
        _, back = _resume(case, model, small, state_dtype=second, contiguous_params=True)
        assert all(g["state_dtype"] == second for g in back.param_groups)
        for p, q, r in zip(opt.state.values(), small.state.values(), back.state.values()):
            for name, value in p.items():
                if name not in maps or value.dim() == 0:
                    assert torch.equal(r[name], value) and torch.equal(q[name], value)
                    continue
                kind, scale = maps[name], codec.scale_name(name)
                decoded = codec.decode(q[name], q.get(scale), kind, torch.float32)
                bound = codec.RELATIVE_ERROR[first] * value.abs() + codec.FLOOR[kind] * value.abs().max()
                assert ((decoded - value).abs() <= bound).all(), name
                if second is None:
                    assert r[name].dtype == value.dtype and torch.equal(r[name], decoded) and scale not in r
                else:
                    assert r[name].dtype == torch.bfloat16 and torch.equal(r[name], decoded.to(torch.bfloat16))


AGREE = [c for c in CHAINS if c.key in ("oneflow.AdamW", "oneflow.LAMB", "cerebras.Adafactor", "mindspore.AdaFactor",
                                        "mindspore.SGD", "cerebras.Lion")]


@pytest.mark.parametrize("execution", ["foreach", "fused"])
@pytest.mark.parametrize("state_dtype", STATE_DTYPES)
@pytest.mark.parametrize("case", AGREE, ids=_ids(AGREE))
def test_executions_agree_within_the_bound(case, state_dtype, execution):
    """With state stored in fewer bytes, eager, foreach and fused (contiguous for int8) agree within the
    state dtype's bound: an ulp of difference in a value before it is stored can change its code."""
    extra = {"state_dtype": state_dtype, **EXTRA[state_dtype]}
    model = _model(case)
    start = [p.detach().clone() for p in model.parameters()]
    other_model = copy.deepcopy(model)
    eager = _run(model, _build(case, model, **extra), 3)
    other = _run(other_model, _build(case, other_model, **extra, **{execution: True}), 3)
    want = _movement(eager, start)
    worst = float((_movement(other, start) - want).norm() / want.norm())
    assert worst <= 4 * codec.RELATIVE_ERROR[state_dtype], f"{execution} differs by {worst:.2e}"


def test_an_mlp_regression_with_shrunk_state_ends_within_5_percent_of_float32():
    """The issue's quality target: an MLP 32-256-256-1 on a regression, 300 steps of oneflow.AdamW (fused,
    contiguous) on fresh batches of 256: the final loss on held-out data with either state dtype is within 5%
    of float32 state's. (Fresh batches: on a fixed set of 1,024 samples the network interpolates, every loss
    ends near 0 and their ratio is noise: bfloat16's fixed 0.4% rounding then stalls a decaying second
    moment, whose per-step change is under half an ulp, and ends at 1.8e-3 against float32's 6.6e-6.)"""

    def target(x):
        return torch.sin(x[:, :8].sum(1, keepdim=True)) + 0.1 * x[:, 8:9]

    held_out = torch.randn(2048, 32, generator=torch.Generator().manual_seed(1))

    def final_loss(state_dtype):
        torch.manual_seed(0)
        batches = torch.Generator().manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(32, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                    torch.nn.ReLU(), torch.nn.Linear(256, 1))
        opt = optreg.configure_optimizer("oneflow.AdamW", model, lr=1e-3, weight_decay=0.01, fused=True,
                                         contiguous_params=True, state_dtype=state_dtype)
        for _ in range(300):
            x = torch.randn(256, 32, generator=batches)
            opt.zero_grad()
            ((model(x) - target(x)) ** 2).mean().backward()
            opt.step()
        with torch.no_grad():
            return float(((model(held_out) - target(held_out)) ** 2).mean())

    base = final_loss(None)
    for state_dtype in STATE_DTYPES:
        assert abs(final_loss(state_dtype) - base) <= 0.05 * base, state_dtype


@pytest.mark.parametrize("name, shrinks", [("oneflow.AdamW", "exp_avg (signed), exp_avg_sq (unsigned)"),
                                           ("cerebras.Rprop", "prev (signed)"),
                                           ("cerebras.Adafactor", "exp_avg (signed)")])
def test_describe_names_what_shrinks_and_the_bounds(name, shrinks):
    text = str(optreg.describe(name))
    line = next(line for line in text.splitlines() if line.strip().startswith("state_dtype: "))
    assert f"shrinks {shrinks}" in line
    assert "step_size" not in line and "exp_avg_sq_row" not in line   # Rprop's step sizes, factored moments
    assert (f"bfloat16 ≤ {codec.RELATIVE_ERROR['bfloat16']:.2%}" in line
            and f"int8 ≤ {codec.RELATIVE_ERROR['int8']:.2%}" in line)


@pytest.mark.parametrize("contiguous", [False, True], ids=["per tensor", "contiguous"])
def test_int8_state_under_a_chain_that_needs_shapes_steps_fused_in_chunks(contiguous, monkeypatch):
    """MindSpore's AdaFactor keeps its first moment in int8 blocks, which a (rows, cols) matrix does not fill row
    by row: fused in chunks of 16 (the default; the suite runs chunks of 1), its compile failed in Inductor on the
    padding of the chunk (found by bench_optimizers.py). Such tensors step eager (equal to eager), the rest as
    close to eager as the bound allows, and the compile that is left (the vector's) succeeds."""
    from optreg.stages import execute

    monkeypatch.setattr(execute, "CHUNK", 16)
    g = torch.Generator().manual_seed(0)
    shapes = [(256, 25)] * 3 + [(512,)]

    def run(**extra):
        params = [torch.nn.Parameter(0.1 * torch.randn(s, generator=g.manual_seed(i))) for i, s in enumerate(shapes)]
        opt = optreg.configure_optimizer("mindspore.AdaFactor", params, state_dtype="int8",
                                         contiguous_params=contiguous, **extra)
        for step in range(3):
            for i, p in enumerate(params):
                p.grad = 0.01 * torch.randn(p.shape, generator=g.manual_seed(100 * step + i))
            opt.step()
            assert execute.wait_compiles(60)
        return params

    start = [0.1 * torch.randn(s, generator=g.manual_seed(i)) for i, s in enumerate(shapes)]
    eager, fused = run(), run(fused=True)
    for a, b in zip(eager[:3], fused[:3]):   # the matrices step eager
        assert torch.equal(a, b)
    want = torch.cat([(a - s).flatten() for a, s in zip(eager, start)])
    got = torch.cat([(b - s).flatten() for b, s in zip(fused, start)])
    assert float((got - want).norm() / want.norm()) <= 4 * codec.RELATIVE_ERROR["int8"]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bfloat16", "float16"])
@pytest.mark.parametrize("execution", [{}, {"foreach": True}, {"contiguous_params": True},
                                       {"contiguous_params": True, "foreach": True}],
                         ids=["eager", "foreach", "contiguous", "contiguous-foreach"])
def test_int8_state_over_half_parameters_steps_in_float32(dtype, execution):
    """int8 state over bfloat16 / float16 parameters: the state decodes into float32 and the arithmetic stays in
    float32 (the parameter and its gradient widened, the parameter rounded once, as under "float32"): the first
    step, from zero state, is the float32-state step bit for bit; the later ones move the parameters within the
    int8 bound of it."""
    g = torch.Generator().manual_seed(0)
    start = [torch.randn(64, 80, generator=g).to(dtype), torch.randn(80, generator=g).to(dtype)]
    grads = [[torch.randn(t.shape, generator=g).to(dtype) for t in start] for _ in range(4)]
    runs = {}
    for state_dtype in ("float32", "int8"):
        params = [torch.nn.Parameter(t.clone()) for t in start]
        opt = optreg.configure_optimizer("oneflow.AdamW", params, lr=1e-2, weight_decay=0.1,
                                         state_dtype=state_dtype, **execution)
        trail = []
        for step in grads:
            for p, grad in zip(params, step):
                p.grad = grad.clone()
            opt.step()
            trail.append([p.detach().clone() for p in params])
        assert all(p.dtype == dtype for p in params)
        runs[state_dtype] = (trail, opt)
    (wide, _), (coded, opt) = runs["float32"], runs["int8"]
    assert all(torch.equal(a, b) for a, b in zip(wide[0], coded[0]))
    matrix, vector = (opt.state[p] for p in opt.param_groups[0]["params"])
    assert (matrix["exp_avg"].dtype, matrix["exp_avg_sq"].dtype) == (torch.int8, torch.uint8)
    # below 4,096 elements: float32 state, as for a float32 parameter (int8 in a contiguous group)
    small = (torch.int8, torch.uint8) if execution.get("contiguous_params") else (torch.float32, torch.float32)
    assert (vector["exp_avg"].dtype, vector["exp_avg_sq"].dtype) == small
    moved = torch.cat([(a.float() - s.float()).flatten() for a, s in zip(wide[-1], start)])
    apart = torch.cat([(a.float() - b.float()).flatten() for a, b in zip(wide[-1], coded[-1])])
    assert apart.norm() <= 0.25 * moved.norm()

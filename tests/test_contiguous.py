"""contiguous_params=True (OneFlow's option): a group's tensors in flat buffers, the chain run over them
at once, and every case where it must step per tensor instead (the matrix in test_optimizer_matrix.py
runs every first-party optimizer this way in its three executions)."""

from __future__ import annotations

import copy

import pytest
import torch

import optreg


def _model(dtype=torch.float32):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2)).to(dtype)


def _loss(model, step, skip_last=False):
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(step), dtype=next(model.parameters()).dtype)
    hidden = torch.tanh(model[0](x))
    if skip_last:  # the last layer gets no gradient this step
        return hidden.pow(2).sum()
    return model[2](hidden).pow(2).sum()


def _buckets(opt):
    return [b for layout in opt._contiguous.values() for b in layout.buckets]


def _pair(name, **options):
    plain_model = _model()
    flat_model = copy.deepcopy(plain_model)
    plain = optreg.configure_optimizer(name, plain_model, **options)
    flat = optreg.configure_optimizer(name, flat_model, contiguous_params=True, **options)
    return plain_model, plain, flat_model, flat


def _step(model, opt, step, skip_last=False, set_to_none=True):
    opt.zero_grad(set_to_none=set_to_none)
    _loss(model, step, skip_last).backward()
    opt.step()


def _close(a, b, rtol=1e-6):
    """Every parameter of `a` within `rtol` of `b`'s, relative to its largest element (the executions' agreement
    the design states; an element-wise bound without atol fails on the elements near 0)."""
    return all(float((x - y).abs().max()) <= rtol * float(y.abs().max())
               for x, y in zip(a.parameters(), b.parameters()))


@pytest.mark.parametrize("name", ["oneflow.AdamW", "cerebras.Adam", "mindspore.Momentum"])
@pytest.mark.parametrize("execution", ["eager", "fused"])
def test_a_parameter_without_a_gradient_steps_the_rest_per_tensor(name, execution):
    """torch skips a parameter without a gradient; the flat step would not, so that step runs per tensor
    over the views. Cerebras' per-parameter beta powers then differ, and the group stays per tensor."""
    options = {"lr": 0.05, **({"momentum": 0.9} if "Momentum" in name else {}),
               **({"fused": True} if execution == "fused" else {})}
    plain_model, plain, flat_model, flat = _pair(name, **options)
    for step in range(5):
        for model, opt in ((plain_model, plain), (flat_model, flat)):
            _step(model, opt, step, skip_last=step == 2)
        assert _close(flat_model, plain_model), f"step {step}"
    runs = sum(b.runs for b in _buckets(flat))
    per_param_powers = name.startswith("cerebras.")
    # one bucket per group: the Cerebras dialect splits biases into a group of their own
    groups = len(flat.param_groups)
    assert runs == (2 * groups if per_param_powers else 4 * groups)


def test_gradients_accumulate_into_the_flat_buffer_after_the_first_step():
    """The first step copies the gradients into their slices and makes p.grad the slice; with
    zero_grad(set_to_none=False), OneFlow's default, the next backward adds into the slices in place."""
    plain_model, plain, flat_model, flat = _pair("oneflow.Adam", lr=0.01, fused=True)
    _step(flat_model, flat, 0, set_to_none=False)
    (bucket,) = _buckets(flat)
    grad_storage = bucket.grad.untyped_storage().data_ptr()
    for step in range(1, 4):
        flat.zero_grad()
        _loss(flat_model, step).backward()
        assert all(p.grad.untyped_storage().data_ptr() == grad_storage for p in flat_model.parameters())
        flat.step()
    for step in range(4):
        _step(plain_model, plain, step)
    assert _close(flat_model, plain_model) and bucket.runs == 4


def test_replacing_a_parameters_data_rebuilds_the_buffers():
    plain_model, plain, flat_model, flat = _pair("oneflow.AdamW", lr=0.05)
    for step in range(2):
        _step(plain_model, plain, step)
        _step(flat_model, flat, step)
    first = _buckets(flat)[0]
    for p in flat_model.parameters():  # what module.to() or a hand-made copy does
        p.data = p.data.clone()
    for step in range(2, 4):
        _step(plain_model, plain, step)
        _step(flat_model, flat, step)
    (second,) = _buckets(flat)
    assert second is not first and second.runs == 2 and _close(flat_model, plain_model)
    assert len({p.untyped_storage().data_ptr() for p in flat_model.parameters()}) == 1


def test_frozen_non_contiguous_and_other_dtype_parameters():
    """A frozen or non-contiguous parameter keeps its storage; another dtype gets a bucket of its own."""
    torch.manual_seed(0)
    params = {
        "a": torch.nn.Parameter(torch.randn(4, 3)),
        "b": torch.nn.Parameter(torch.randn(3)),
        "t": torch.nn.Parameter(torch.randn(3, 4).t()),  # not contiguous
        "frozen": torch.nn.Parameter(torch.randn(2), requires_grad=False),
        "d": torch.nn.Parameter(torch.randn(5, dtype=torch.float64)),
    }
    copies = {k: torch.nn.Parameter(v.detach().clone(), requires_grad=v.requires_grad) for k, v in params.items()}
    flat = optreg.configure_optimizer("oneflow.AdamW", list(params.values()), lr=0.1, contiguous_params=True)
    plain = optreg.configure_optimizer("oneflow.AdamW", list(copies.values()), lr=0.1)
    for step in range(3):
        for ps, opt in ((params, flat), (copies, plain)):
            opt.zero_grad()
            sum((p.double() * (step + 1)).sin().sum() for p in ps.values() if p.requires_grad).backward()
            opt.step()
    assert all(torch.allclose(params[k], copies[k], rtol=1e-6, atol=0) for k in params)
    buckets = _buckets(flat)
    assert sorted(len(b.params) for b in buckets) == [1, 2] and all(b.runs == 3 for b in buckets)
    assert not params["t"].is_contiguous() and params["frozen"].untyped_storage().data_ptr() not in \
        {b.flat.untyped_storage().data_ptr() for b in buckets}


@pytest.mark.parametrize("name, options", [
    ("oneflow.AdamW", {"lr": 0.1}),
    ("cerebras.Adam", {"lr": 0.1, "fused": True}),
    ("mindspore.Lamb", {"learning_rate": 0.1, "fused": True}),
    ("mindspore.AdaFactor", {}),
    ("mindspore.AdaFactor", {"fused": True}),
])
@pytest.mark.parametrize("shapes", [[(7,), (), (8, 5), (7,)], [(), (7,), (8, 5)]])
def test_a_0d_parameter_keeps_its_own_storage(name, options, shapes):
    """A 0-d parameter's state is 0-d like a per-parameter scalar (Cerebras' step), so it stays out of
    the buffer and steps on its own; the rest of the group still steps over the buffer."""
    torch.manual_seed(0)
    flat_params = [torch.nn.Parameter(torch.randn(s)) for s in shapes]
    plain_params = [torch.nn.Parameter(p.detach().clone()) for p in flat_params]
    flat = optreg.configure_optimizer(name, flat_params, contiguous_params=True, **options)
    plain = optreg.configure_optimizer(name, plain_params, **options)
    for step in range(4):
        grads = [torch.randn(s, generator=torch.Generator().manual_seed(10 * step + i)) for i, s in enumerate(shapes)]
        for params, opt in ((flat_params, flat), (plain_params, plain)):
            for p, g in zip(params, grads):
                p.grad = g.clone()
            opt.step()
        for a, b in zip(flat_params, plain_params):
            torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)
    (bucket,) = _buckets(flat)
    scalar = shapes.index(())
    over_stacks_only = name.endswith("AdaFactor")  # a chain that needs shapes runs whole only when fused
    assert [tuple(p.shape) for p in bucket.params] == [s for s in shapes if s != ()]
    assert bucket.runs == (0 if over_stacks_only and not options.get("fused") else 4)
    assert flat_params[scalar].untyped_storage().data_ptr() != bucket.flat.untyped_storage().data_ptr()


def test_contiguous_params_must_be_a_bool():
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer("oneflow.AdamW", _model(), contiguous_params="sometimes")
    assert info.value.errors[0].path == "contiguous_params"


@pytest.mark.parametrize("name", ["oneflow.AdamW", "cerebras.Adam"])
def test_a_checkpoint_moves_between_contiguous_and_per_tensor_layouts(name):
    """A contiguous optimizer's state dict (views of one storage) resumes a per-tensor optimizer and the
    reverse, each continuing as the uninterrupted run does. Like torch's `foreach` and `fused`, the flag
    is a group option that the checkpoint carries: the layout changes where the group's flag is set."""
    import io

    straight_model, straight, _, _ = _pair(name, lr=0.05)
    for step in range(6):
        _step(straight_model, straight, step)
    for first_flat in (True, False):
        model = _model()
        opt = optreg.configure_optimizer(name, model, lr=0.05, contiguous_params=first_flat)
        for step in range(3):
            _step(model, opt, step)
        buffer = io.BytesIO()
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, buffer)
        buffer.seek(0)
        saved = torch.load(buffer, weights_only=True)
        resumed = _model()
        resumed.load_state_dict(saved["model"])
        second = optreg.configure_optimizer(name, resumed, lr=0.05, contiguous_params=not first_flat)
        second.load_state_dict(saved["optimizer"])
        assert all(g["contiguous_params"] is first_flat for g in second.param_groups)
        for group in second.param_groups:
            group["contiguous_params"] = not first_flat
        for step in range(3, 6):
            _step(resumed, second, step)
        assert _close(resumed, straight_model), f"contiguous first: {first_flat}"
        assert sum(b.runs for b in _buckets(opt if first_flat else second)) == 3 * len(opt.param_groups)


def test_the_steady_step_notices_a_missing_gradient_and_a_loaded_state():
    """Once a step ran flat with every gradient in its slice, the next one checks identities only
    (`Contiguous.steady`): a parameter without a gradient, or state loaded from a checkpoint, takes the
    full path again, and the result stays the per-tensor optimizer's."""
    plain_model, plain, flat_model, flat = _pair("oneflow.AdamW", lr=0.05, weight_decay=0.1)
    for step in range(7):
        for model, opt in ((plain_model, plain), (flat_model, flat)):
            opt.zero_grad(set_to_none=False)
            _loss(model, step).backward()
            if step == 3:  # the last layer gets no gradient this step
                for p in model[2].parameters():
                    p.grad = None
            if step == 5:  # a checkpoint (its first moments zeroed): every state tensor is replaced
                saved = copy.deepcopy(opt.state_dict())
                for st in saved["state"].values():
                    st["exp_avg"].zero_()
                opt.load_state_dict(saved)
            opt.step()
        layout = flat._contiguous[(0, 0)]
        assert layout.flat_last is (step != 3), step
        assert _close(flat_model, plain_model), f"step {step}"
    assert layout.buckets[0].runs == 6
    for a, b in zip(flat.state_dict()["state"].values(), plain.state_dict()["state"].values()):
        assert all(torch.allclose(a[k], b[k], rtol=1e-6, atol=0) for k in b)


def test_a_compiled_step_of_a_contiguous_group():
    """torch.compile(opt.step) over a contiguous group (the buffers are built inside the first compiled
    call) steps as the eager per-tensor optimizer does."""
    plain_model, plain, flat_model, flat = _pair("oneflow.AdamW", lr=0.05, weight_decay=0.1)
    compiled = torch.compile(flat.step, backend="aot_eager")
    for step in range(4):
        _step(plain_model, plain, step)
        flat.zero_grad()
        _loss(flat_model, step).backward()
        compiled()
        assert _close(flat_model, plain_model), f"step {step}"
    assert len({p.untyped_storage().data_ptr() for p in flat_model.parameters()}) == 1


ROW_CASES = [("oneflow.LAMB", {"lr": 0.01, "weight_decay": 0.1}, torch.float32),
             ("oneflow.LAMB", {"lr": 0.01, "weight_decay": 0.1}, torch.float64),
             ("cerebras.Lamb", {"lr": 0.01, "weight_decay": 0.1}, torch.float32),
             ("cerebras.Lamb", {"lr": 0.01, "adam": True}, torch.float32),
             ("mindspore.Lamb", {"learning_rate": 0.01, "weight_decay": 0.1}, torch.float32)]


@pytest.mark.parametrize("name, options, dtype", ROW_CASES,
                         ids=[f"{n}{sorted(o)}-{str(d).split('.')[1]}" for n, o, d in ROW_CASES])
def test_a_fused_lamb_steps_a_contiguous_group_by_rows(name, options, dtype):
    """fused LAMB over a contiguous group: one norm per parameter from the rows of its slice (slices start at
    multiples of BLOCK; parameters here span one to several rows), the update in the bucket's scratch buffer.
    Every step runs over the whole group, agrees with the per-tensor eager step, and leaves the padding zero."""
    from optreg.stages.execute import BLOCK

    torch.manual_seed(0)
    plain_model = torch.nn.Sequential(torch.nn.Linear(6, 300), torch.nn.Tanh(), torch.nn.Linear(300, 2)).to(dtype)
    flat_model = copy.deepcopy(plain_model)
    plain = optreg.configure_optimizer(name, plain_model, **options)
    flat = optreg.configure_optimizer(name, flat_model, contiguous_params=True, fused=True, **options)
    # float32: 2e-6 of the tensor's largest element. On an Intel Xeon (AVX-512) Cerebras' Lamb with adam=True (no
    # trust ratio: each step moves a weight by ~lr) differs from its eager steps by 1.35e-6 after four steps, where
    # the AMD EPYC of earlier runs stayed under 1e-6: the compiled row loop rounds its divisions in another order
    rtol = 2e-6 if dtype == torch.float32 else 1e-12
    for step in range(4):
        for model, opt in ((plain_model, plain), (flat_model, flat)):
            _step(model, opt, step)
        for a, b in zip(flat_model.parameters(), plain_model.parameters()):  # relative to the tensor's largest
            assert float((a - b).abs().max() / b.abs().max()) <= rtol, f"step {step}"
    buckets = _buckets(flat)
    assert sum(b.runs for b in buckets) == 4 * len(flat.param_groups)
    for bucket in buckets:
        assert all(start % BLOCK == 0 for start in bucket.offsets)
        padding = torch.ones(bucket.offsets[-1], dtype=torch.bool)
        for start, n in zip(bucket.offsets, bucket.numels):
            padding[start:start + n] = False
        buffers = [bucket.flat, bucket.grad, bucket.scratch] + [buf for buf, _ in bucket.state.values() if buf.dim()]
        assert padding.any() and all(bool((buf[padding] == 0).all()) for buf in buffers)

def test_the_norms_of_a_rows_step_come_from_the_first_call(monkeypatch):
    """The second call of a fused LAMB over a contiguous group takes ‖u‖ and ‖w‖ from the row sums of squares that
    the first call returned (summed in its update loop), not from a pass of its own: with those sums raised by 1 per
    row, one OneFlow LAMB step (no decay, so u is the Adam direction g/(|g| + eps)) moves each parameter by
    lr·tr'·u with tr' = √(‖w‖² + rows) / √(‖u‖² + rows)."""
    from optreg.stages import execute
    from optreg.stages.execute import BLOCK
    from optreg.stages.ops import row_squares

    monkeypatch.setattr(execute, "row_squares", lambda x: row_squares(x) + 1.0)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 300), torch.nn.Tanh(), torch.nn.Linear(300, 2))
    lr, eps = 0.01, 1e-8
    opt = optreg.configure_optimizer("oneflow.LAMB", model, lr=lr, eps=eps, contiguous_params=True, fused=True)
    before = [p.detach().clone() for p in model.parameters()]
    _loss(model, 0).backward()
    grads = [p.grad.clone() for p in model.parameters()]
    opt.step()
    assert sum(b.runs for b in _buckets(opt)) == 1
    for p, w, g in zip(model.parameters(), before, grads):
        u = g / (g.abs() + eps)
        rows = -(-w.numel() // BLOCK)
        ratio = ((w.square().sum() + rows) / (u.square().sum() + rows)).sqrt()
        expected = w - lr * ratio * u
        assert torch.allclose(p.detach(), expected, rtol=1e-6, atol=1e-7), float((p - expected).abs().max())
        plain = w - lr * (w.norm() / u.norm()) * u   # the step with the true norms differs
        assert not torch.allclose(p.detach(), plain, rtol=1e-6, atol=1e-7)


class _Stacks(torch.nn.Module):
    """Runs of same-shape matrices (odd counts, so that a stack of one is left over), vectors, a 4-D kernel
    and matrices with a dimension of 1, in the order a model lists them."""

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        shapes = [(8, 5)] * 5 + [(7,)] * 3 + [(3, 4, 2, 2)] * 2 + [(6, 9), (1, 5), (4, 1)] + [(8, 5)] * 2
        self.weights = torch.nn.ParameterList(torch.nn.Parameter(torch.randn(s, generator=g)) for s in shapes)

    def grads(self, step):
        g = torch.Generator().manual_seed(100 + step)
        for p in self.weights:
            p.grad = torch.randn(p.shape, generator=g)


ADAFACTORS = [("cerebras.Adafactor", {"lr": 0.01, "weight_decay": 0.1}),
              ("mindspore.AdaFactor", {"weight_decay": 0.1, "clip_threshold": 0.5}),
              ("mindspore.AdaFactor", {"beta1": None, "compression": True})]


@pytest.mark.parametrize("name, options", ADAFACTORS, ids=["cerebras", "mindspore", "mindspore-compression"])
def test_a_fused_adafactor_steps_a_contiguous_group_in_stacks(name, options, monkeypatch):
    """A contiguous group of a chain that needs shapes runs fused over stacks of consecutive same-shape
    parameters: each stack a (B, *shape) view of the unpadded buffers (B a multiple of the thread count, a
    parameter left alone with its own shapes), its factored moments in buffers of their own. It agrees
    with the eager per-tensor step (the clipping's RMS comes from the column pass) and resumes exactly."""
    from optreg.stages import contiguous

    monkeypatch.setattr(contiguous, "STACK_ELEMENTS", 160)   # at most four (8, 5) matrices a stack
    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    plain_model, flat_model = _Stacks(), _Stacks()
    plain = optreg.configure_optimizer(name, plain_model.parameters(), **options)
    flat = optreg.configure_optimizer(name, flat_model.parameters(), fused=True, contiguous_params=True, **options)
    for step in range(3):
        for model, opt in ((plain_model, plain), (flat_model, flat)):
            model.grads(step)
            opt.step()
    (bucket,) = _buckets(flat)
    assert bucket.runs == 3 and not bucket.irregular
    assert bucket.offsets == [sum(p.numel() for p in flat_model.weights[:i])
                              for i in range(len(flat_model.weights) + 1)]
    shapes = [(tuple(params.shape), stacked) for _, params, _, _, stacked, _ in bucket.stack_plan]
    assert shapes == [((4, 8, 5), True), ((8, 5), False), ((2, 7), True), ((7,), False), ((2, 3, 4, 2, 2), True),
                      ((6, 9), False), ((1, 5), False), ((4, 1), False), ((2, 8, 5), True)]
    # matrices, stacked or alone, share the vector of ones that gives each its row of ones (long enough for
    # the (2, 3, 4, 2, 2) stack's (2, 3, 4, 1, 2)); vectors have none
    ones = [stack[-1] for stack in bucket.stack_plan]
    shared = ones[0]
    assert [o is shared for o in ones] == [True, True, False, False, True, True, True, True, True]
    assert ones[2] is None and ones[3] is None and torch.equal(shared, torch.ones(48))
    names, params, grads, states, _, _ = bucket.stack_plan[0]
    assert params.is_contiguous() and params.data_ptr() == flat_model.weights[0].data_ptr()
    state = flat.state[flat_model.weights[1]]
    row = states[names.index("exp_avg_sq_row")]
    assert row.shape == (4, 8) and row[1].data_ptr() == state["exp_avg_sq_row"].data_ptr()
    worst = max(((a - b).abs().max() / a.abs().max()).item()
                for a, b in zip(plain_model.parameters(), flat_model.parameters()))
    assert worst <= 1e-6, f"stacked fused differs from eager by {worst:.2e} (relative)"

    resumed_model = copy.deepcopy(flat_model)
    resumed = optreg.configure_optimizer(name, resumed_model.parameters(), fused=True, contiguous_params=True,
                                         **options)
    resumed.load_state_dict(copy.deepcopy(flat.state_dict()))
    for step in range(3, 5):
        for model, opt in ((plain_model, plain), (flat_model, flat), (resumed_model, resumed)):
            model.grads(step)
            opt.step()
    assert all(torch.equal(a, b) for a, b in zip(flat_model.parameters(), resumed_model.parameters()))
    assert _buckets(resumed)[0].runs == 2
    worst = max(((a - b).abs().max() / a.abs().max()).item()
                for a, b in zip(plain_model.parameters(), flat_model.parameters()))
    assert worst <= 1e-6


@pytest.mark.parametrize("missing", [[0], [1, 6, 14]], ids=["first", "several"])
def test_a_partial_step_takes_a_fused_adafactor_off_its_stacks_for_that_step_only(missing):
    """A step where some parameters have no gradient (the first one, or one mid-training) steps per tensor;
    the next steps with every gradient run over the stacks again, their states now in the slots."""
    plain_model, flat_model = _Stacks(), _Stacks()
    options = {"weight_decay": 0.1, "clip_threshold": 0.5}
    plain = optreg.configure_optimizer("mindspore.AdaFactor", plain_model.parameters(), **options)
    flat = optreg.configure_optimizer("mindspore.AdaFactor", flat_model.parameters(), fused=True,
                                      contiguous_params=True, **options)
    partial, runs = (0, 3), []
    for step in range(6):
        for model, opt in ((plain_model, plain), (flat_model, flat)):
            model.grads(step)
            for i in missing if step in partial else ():
                model.weights[i].grad = None
            opt.step()
        (bucket,) = _buckets(flat)
        runs.append(bucket.runs)
    worst = max(((a - b).abs().max() / a.abs().max()).item()
                for a, b in zip(plain_model.parameters(), flat_model.parameters()))
    assert worst <= 1e-6, f"fused differs from eager by {worst:.2e} (relative)"
    assert not bucket.irregular and runs == [0, 1, 2, 2, 3, 4], runs


def test_the_clipping_rms_of_a_fused_factored_moment_comes_from_its_column_pass(monkeypatch):
    """Fused, `FactoredSecondMoment` hands the clipping RMS(u) = √(Σⱼ cⱼ² Σᵢ rᵢ² gᵢⱼ² / n) from its column
    pass: scaled by 4 there, the clipped update of a step that clips shrinks by 4 (u / max(1, RMS/d))."""
    from optreg.stages import adafactor

    def steps(scale):
        model = _Stacks()
        for p in model.weights:   # the step is then -u exactly
            p.data.zero_()
        opt = optreg.configure_optimizer("mindspore.AdaFactor", model.parameters(), clip_threshold=0.1, beta1=None,
                                         scale_parameter=False, fused=True, contiguous_params=True)
        before = [p.detach().clone() for p in model.weights]
        original = adafactor.FactoredSecondMoment.apply

        def apply(self, b):
            original(self, b)
            if "rms_u" in b.slots:
                out, rms = b.slots["rms_u"]
                b.slots["rms_u"] = (out, [r * scale for r in rms])

        monkeypatch.setattr(adafactor.FactoredSecondMoment, "apply", apply)
        model.grads(0)
        opt.step()
        monkeypatch.undo()
        return [(b - p.detach()) for b, p in zip(before, model.weights)]

    from optreg.stages import execute
    monkeypatch.setattr(execute, "_COMPILED", {})
    base = steps(1.0)
    execute._COMPILED.clear()
    scaled = steps(4.0)
    execute._COMPILED.clear()
    matrices = [i for i, p in enumerate(_Stacks().weights) if p.dim() >= 2]
    for i in matrices:
        torch.testing.assert_close(scaled[i] * 4, base[i], rtol=1e-5, atol=0)


def test_stacks_of_many_ranks_and_sizes_of_one_compile_within_dynamos_limits():
    """Stacks of every rank from 2 to 5, with sizes of 1 in each place, in float32 and bfloat16 and across a
    change of the thread count: each rank has a compiled function of its own and a plan's first run traces
    under the shape settings, so no pattern exhausts Dynamo's recompile limit (a hard error under fullgraph)."""
    shapes = [(6, 4), (1, 6), (6, 1), (3, 4, 2), (1, 4, 2), (3, 1, 2), (3, 4, 1), (2, 3, 2, 2), (2, 3, 1, 2),
              (2, 3, 2, 1), (2, 2, 2, 2, 2)]
    g = torch.Generator().manual_seed(0)
    plain = [torch.nn.Parameter(torch.randn(s, generator=g, dtype=d)) for d in (torch.float32, torch.bfloat16)
             for s in shapes for _ in range(2)]
    flat = [torch.nn.Parameter(p.detach().clone()) for p in plain]
    a = optreg.configure_optimizer("cerebras.Adafactor", plain, lr=1e-2)
    b = optreg.configure_optimizer("cerebras.Adafactor", flat, lr=1e-2, fused=True, contiguous_params=True)
    threads = torch.get_num_threads()
    try:
        for step in range(3):
            if step == 2:
                torch.set_num_threads(1)
            for params, opt in ((plain, a), (flat, b)):
                gs = torch.Generator().manual_seed(10 + step)
                for p in params:
                    p.grad = torch.randn(p.shape, generator=gs, dtype=p.dtype)
                opt.step()
    finally:
        torch.set_num_threads(threads)
    assert [bucket.runs for bucket in _buckets(b)] == [3, 3]
    worst = max(((x - y).abs().max() / x.abs().max()).item() for x, y in zip(plain[:22], flat[:22]))
    assert worst <= 1e-6

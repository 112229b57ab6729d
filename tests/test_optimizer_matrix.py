"""Behaviour tests as a matrix over the registry, in the manner of torch's OptimizerInfo.

Every registered optimizer (torch's own and every first-party entry) runs: exact resume through a
`weights_only` checkpoint, the closure, per-group options, float64 and bfloat16, `maximize`, and an
unknown option. Every first-party case also runs its three executions (eager, foreach, fused) and
they must agree within 1e-6 relative in float32. The numeric tests against the numpy references and
the recorded framework trajectories are in the per-family test files.
"""

from __future__ import annotations

import copy
import io

import pytest
import torch
from optim_cases import Case, all_cases
from torch_cases import OPTIMIZER_CASES, EmbeddingNet, Net, batch, make_model

import optreg
from optreg.core.entry import OPTIMIZER
from optreg.core.models import options as entry_options
from optreg.core.registry import REGISTRY
import optreg.stages.ops as ops_module
from optreg.stages.contiguous import whole
from optreg.stages.optimizer import ChainOptimizer

FIRST_PARTY = [e for e in REGISTRY.entries(OPTIMIZER) if e.dialect not in ("torch",) and e.provider == "optreg"]
CASES = all_cases()


def _torch_case(name: str) -> Case:
    options, group, kind, bias = OPTIMIZER_CASES[name]
    return Case(f"torch.{name}", options, group or {}, sparse=kind is EmbeddingNet, bias=bias)


MATRIX = [*(_torch_case(n) for n in sorted(OPTIMIZER_CASES)), *CASES]


def _ids(cases):
    return [c.key for c in cases]


def _model(case: Case, dtype: torch.dtype = torch.float32) -> torch.nn.Module:
    model = make_model(EmbeddingNet if case.sparse else Net, bias=case.bias)
    return model.to(dtype)


def _build(case: Case, model: torch.nn.Module, **extra):
    rules = []
    if case.group:
        rules = [{"params": "out.*" if case.sparse else "*.bias", **case.group}]
    return optreg.configure_optimizer(case.name, model, param_groups=rules, **{**case.options, **extra})


def _loss(model, step, sign=1.0):
    x, y = batch(step, model)
    dtype = next(model.parameters()).dtype
    out = model(x.to(dtype) if x.is_floating_point() else x)
    return sign * ((out - y.to(out.dtype)) ** 2).mean()


def _run(model, opt, steps, start=0, sign=1.0):
    for step in range(start, start + steps):
        def closure():
            opt.zero_grad()
            loss = _loss(model, step, sign)
            loss.backward()
            return loss

        opt.step(closure)
    return [p.detach().clone() for p in model.parameters()]


REFERENCED = [c for c in CASES if c.reference is not None]


@pytest.mark.parametrize("case", REFERENCED, ids=_ids(REFERENCED))
def test_a_case_follows_the_reference_of_its_formula(case):
    """Two param groups (the case's options; its group's on top) stepped in float64 against the case's numpy
    reference of the documented formula (tests/optim_cases: `reference`)."""
    from test_opt_sgd import STEPS, drive, max_err, reference, torch_params, two_groups

    params = torch_params()
    opt = optreg.configure_optimizer(case.name, two_groups(params, {}, dict(case.group)), **case.options)
    expected = reference(case.reference, (dict(case.options), {**case.options, **case.group}), clock=case.clock)
    assert max_err(drive(opt, params, STEPS), expected) < 1e-12


def test_every_first_party_entry_has_a_case():
    have = {c.name for c in CASES}
    missing = [e.qualname for e in FIRST_PARTY if e.qualname not in have]
    assert not missing, f"entries without a case in tests/optim_cases: {missing}"
    assert not [c.name for c in CASES if REGISTRY.find(OPTIMIZER, c.name) is None]


def _resume(case: Case, model: torch.nn.Module, opt, **extra):
    """A fresh model and optimizer loaded from a `weights_only` checkpoint of these."""
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, buffer)
    buffer.seek(0)
    saved = torch.load(buffer, weights_only=True)
    fresh = _model(case)
    fresh.load_state_dict(saved["model"])
    second = _build(case, fresh, **extra)
    second.load_state_dict(saved["optimizer"])
    return fresh, second


@pytest.mark.parametrize("case", MATRIX, ids=_ids(MATRIX))
def test_resume_through_a_weights_only_checkpoint_is_exact(case):
    straight_model = _model(case)
    resumed_model = copy.deepcopy(straight_model)
    straight = _run(straight_model, _build(case, straight_model), 6)

    first = _build(case, resumed_model)
    _run(resumed_model, first, 3)
    model, second = _resume(case, resumed_model, first)
    resumed = _run(model, second, 3, start=3)
    assert all(torch.equal(a, b) for a, b in zip(straight, resumed))


# THOR hooks the model's layers with closures (its Recorder), which neither pickle nor follow a copied model
COPIED = [c for c in CASES if c.name != "mindspore.thor"]


@pytest.mark.parametrize("case", COPIED, ids=_ids(COPIED))
def test_a_copy_steps_as_the_original(case):
    """copy.deepcopy of a model with its optimizer after 3 steps (as a trainer that forks a run, or an EMA, takes
    it), and the pair pickled and loaded: each copy takes the same next 3 steps as the original, exactly (torch's
    Optimizer pickles only defaults, state and param_groups; an optreg optimizer keeps its dialect settings)."""
    model = _model(case)
    opt = _build(case, model)
    _run(model, opt, 3)
    twins = [copy.deepcopy((model, opt))]
    buffer = io.BytesIO()
    torch.save((model, opt), buffer)
    buffer.seek(0)
    twins.append(torch.load(buffer, weights_only=False))
    want = _run(model, opt, 3, start=3)
    for twin_model, twin in twins:
        assert all(torch.equal(a, b) for a, b in zip(_run(twin_model, twin, 3, start=3), want))


@pytest.mark.parametrize("case", MATRIX, ids=_ids(MATRIX))
def test_step_returns_the_closure_loss_and_moves_the_weights(case):
    model = _model(case)
    before = [p.detach().clone() for p in model.parameters()]
    opt = _build(case, model)
    seen = []

    def closure():
        opt.zero_grad()
        loss = _loss(model, 0)
        loss.backward()
        seen.append(loss)
        return loss

    returned = opt.step(closure)
    assert any(returned is loss for loss in seen)  # LBFGS returns its first evaluation
    after = list(model.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, after))
    assert all(torch.isfinite(p).all() for p in after)


@pytest.mark.parametrize("case", [c for c in MATRIX if c.group], ids=_ids([c for c in MATRIX if c.group]))
def test_a_group_keeps_its_own_options(case):
    grouped_model = _model(case)
    plain_model = copy.deepcopy(grouped_model)
    # one step: later gradients of the other parameters depend on the group's different update
    grouped = _run(grouped_model, _build(case, grouped_model), 1)
    plain = _run(plain_model, _build(Case(case.name, case.options, {}, case.sparse, bias=case.bias), plain_model), 1)
    names = [n for n, _ in grouped_model.named_parameters()]
    special = [("out." if case.sparse else ".bias") in n for n in names]
    assert any(not torch.equal(a, b) for a, b, s in zip(grouped, plain, special) if s)
    assert all(torch.equal(a, b) for a, b, s in zip(grouped, plain, special) if not s)


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
@pytest.mark.parametrize("case", MATRIX, ids=_ids(MATRIX))
def test_dtypes(case, dtype):
    model = _model(case, dtype)
    opt = _build(case, model)
    params = _run(model, opt, 2)
    assert all(p.dtype is dtype and torch.isfinite(p.float()).all() for p in params)
    for state in opt.state.values():
        for name, value in state.items():
            if isinstance(value, torch.Tensor) and value.dim() > 0 and value.shape != ():
                assert value.dtype in (dtype, torch.float32, torch.float16), (name, value.dtype)


def _has_option(case: Case, name: str) -> bool:
    entry = REGISTRY.lookup(OPTIMIZER, case.name)
    return any(o.name == name for o in entry_options(entry))


# OneFlow's SGD flips the whole update (L2 term included) and ignores maximize without momentum, as OneFlow
# does: test_opt_sgd.py checks it against OneFlow's formula
MAXIMIZING = [c for c in MATRIX if _has_option(c, "maximize") and c.name != "oneflow.SGD"]


@pytest.mark.parametrize("case", MAXIMIZING, ids=_ids(MAXIMIZING))
def test_maximize_climbs_what_minimize_descends(case):
    up_model = _model(case)
    down_model = copy.deepcopy(up_model)
    up = _run(up_model, _build(case, up_model, maximize=True), 3, sign=-1.0)
    down = _run(down_model, _build(case, down_model, maximize=False), 3)
    for a, b in zip(up, down):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("case", MATRIX, ids=_ids(MATRIX))
def test_a_misspelled_option_is_a_config_error(case):
    entry = REGISTRY.lookup(OPTIMIZER, case.name)
    names = [o.name for o in entry_options(entry)] or ["optimizer"]   # a wrapper without options: its `optimizer`
    target = "lr" if "lr" in names else "learning_rate" if "learning_rate" in names else names[0]
    typo = target[:-1] + target[-1] * 2 + "x"
    model = _model(case)
    with pytest.raises(optreg.ConfigError) as info:
        _build(case, model, **{typo: 0.1})
    errors = info.value.errors
    assert [e.path for e in errors] == [typo]
    assert "unknown option" in errors[0].message and repr(target) in str(info.value)


# -------------------------------------------------------------------------------------------------
# executions
# -------------------------------------------------------------------------------------------------
CHAINS = [c for c in CASES if isinstance(REGISTRY.lookup(OPTIMIZER, c.name).resolve(), type)
          and issubclass(REGISTRY.lookup(OPTIMIZER, c.name).resolve(), ChainOptimizer) and not c.sparse]


def _relative(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-12))


@pytest.mark.parametrize("execution", ["foreach", "fused"])
@pytest.mark.parametrize("case", CHAINS, ids=_ids(CHAINS))
def test_executions_agree_with_eager(case, execution):
    eager_model = _model(case)
    other_model = copy.deepcopy(eager_model)
    eager = _run(eager_model, _build(case, eager_model), 3)
    opt = _build(case, other_model, **{execution: True})
    assert all(g[execution] is True for g in opt.param_groups)
    other = _run(other_model, opt, 3)
    worst = max(_relative(a, b) for a, b in zip(other, eager))
    assert worst <= 1e-6, f"{execution} differs from eager by {worst:.2e} (relative)"


@pytest.mark.parametrize("case", CHAINS, ids=_ids(CHAINS))
def test_eager_gives_the_same_numbers_with_host_scalars_as_python_floats(case, monkeypatch):
    """Eager passes a float32 tensor's host scalars as cached 0-d tensors (`ops._operand`): bit for bit the
    numbers of the Python floats it replaces, for every chain (a large tensor alone: `tests/test_eager_kernels.py`)."""
    models = [_model(case)]
    models.append(copy.deepcopy(models[0]))
    formed = _run(models[0], _build(case, models[0]), 3)
    monkeypatch.setattr(ops_module, "_operand", lambda x, s: s)
    floats = _run(models[1], _build(case, models[1]), 3)
    for a, b in zip(formed, floats):
        assert torch.equal(a.view(torch.int32), b.view(torch.int32))


def _flat_runs(opt) -> int:
    return sum(b.runs for layout in opt._contiguous.values() for b in layout.buckets)


@pytest.mark.parametrize("execution", ["eager", "foreach", "fused"])
@pytest.mark.parametrize("case", CHAINS, ids=_ids(CHAINS))
def test_contiguous_params_agree_with_eager_and_resume(case, execution):
    """contiguous_params=True: each group's parameters share one storage; an element-wise chain runs
    over the flat buffers, and so does a chain whose per-tensor reductions are norms under fused (a
    norm per parameter's rows) or one that needs shapes (stacks of same-shape slices, Adafactor); any
    other chain runs per tensor over the views. All agree with the per-tensor eager step, and a
    weights_only checkpoint resumes exactly."""
    eager_model = _model(case)
    flat_model = copy.deepcopy(eager_model)
    eager = _run(eager_model, _build(case, eager_model), 5)
    extra = {"contiguous_params": True, **({execution: True} if execution != "eager" else {})}
    opt = _build(case, flat_model, **extra)
    _run(flat_model, opt, 3)
    for group in opt.param_groups:
        assert len({p.untyped_storage().data_ptr() for p in group["params"]}) == 1
    element_wise = sum(whole(execution, opt.chain, opt.hyper(g)) for g in opt.param_groups)  # groups that run flat
    assert _flat_runs(opt) == 3 * element_wise

    model, second = _resume(case, flat_model, opt, **extra)
    flat = _run(model, second, 2, start=3)
    worst = max(_relative(a, b) for a, b in zip(flat, eager))
    assert worst <= 1e-6, f"contiguous {execution} differs from eager by {worst:.2e} (relative)"
    assert _flat_runs(second) == 2 * element_wise


@pytest.mark.parametrize("execution", ["eager", "foreach", "fused", "contiguous"])
@pytest.mark.parametrize("case", CHAINS, ids=_ids(CHAINS))
def test_a_step_writes_the_gradient_exactly_where_the_chain_says_so(case, execution):
    """`Chain.writes_grad`, which the benchmarks' roofline counts as one more full-size store, is true
    exactly where a step changes `p.grad` (Cerebras' Rprop zeroes it where its sign flipped: the second
    step's loss is negated, so that most signs flip)."""
    model = _model(case)
    extra = {"eager": {}, "contiguous": {"contiguous_params": True, "fused": True}}.get(execution, {execution: True})
    opt = _build(case, model, **extra)
    changed = []
    for sign in (1.0, -1.0):
        opt.zero_grad()
        _loss(model, 0, sign).backward()
        before = [p.grad.clone() for p in model.parameters()]
        opt.step()
        changed += [not torch.equal(p.grad, b) for p, b in zip(model.parameters(), before)]
    assert any(changed) is opt.chain.writes_grad
    assert opt.chain.writes_grad is (case.name == "cerebras.Rprop")


def test_foreach_and_fused_together_are_a_config_error():
    model = _model(CHAINS[0]) if CHAINS else make_model()
    name = CHAINS[0].name if CHAINS else "oneflow.Adam"
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer(name, model, foreach=True, fused=True, **(CHAINS[0].options if CHAINS else {}))
    assert "not both" in str(info.value)


PADDED = [c for c in CHAINS if c.key in ("oneflow.AdamW", "cerebras.Adafactor")]


@pytest.mark.parametrize("case", PADDED, ids=_ids(PADDED))
def test_fused_chunks_pad_with_scratch_tensors(case, monkeypatch):
    """The suite compiles chunks of one tensor (conftest); in chunks of three, a bucket whose size is not a
    multiple of three is padded with scratch tensors, flat (AdamW) and with shapes (Adafactor), and the
    step is still the eager one."""
    from optreg.stages import execute

    monkeypatch.setattr(execute, "CHUNK", 3)
    eager_model = _model(case)
    fused_model = copy.deepcopy(eager_model)
    eager = _run(eager_model, _build(case, eager_model), 3)
    opt = _build(case, fused_model, fused=True)
    fused = _run(fused_model, opt, 3)
    chunks = [chunk for plan in opt._fused_plans.values() if plan for chunk in plan.chunks]
    assert all(len(ps) == 3 for _, _, ps, _, _, _ in chunks) and any(pad for _, _, _, _, pad, _ in chunks)
    worst = max(_relative(a, b) for a, b in zip(fused, eager))
    assert worst <= 1e-6, f"fused in chunks of 3 differs from eager by {worst:.2e} (relative)"


@pytest.mark.parametrize("name, options", [("mindspore.AdaFactor", {}), ("cerebras.Adafactor", {"lr": 0.01})],
                         ids=["mindspore", "cerebras"])
def test_a_factored_moment_pads_narrow_matrices_with_scratch_tensors(name, options, monkeypatch):
    """In chunks of three, narrow matrices ((8, 1), a (2, 1, 3, 3) depthwise kernel, (1, 5, 3)) are padded with
    (2, …, 2) scratch tensors, whose rows of ones are longer than any of theirs (`Traced.row_ones`): the
    step traces and is the eager one, also when a partial step leaves a single (3, 1) matrix in its chunk."""
    from optreg.stages import execute

    monkeypatch.setattr(execute, "CHUNK", 3)
    g = torch.Generator().manual_seed(4)
    shapes = [(8, 1), (2, 1, 3, 3), (1, 5, 3), (3, 1), (6,)]
    eager_params = [torch.nn.Parameter(torch.randn(s, generator=g)) for s in shapes]
    fused_params = [torch.nn.Parameter(p.detach().clone()) for p in eager_params]
    eager = optreg.configure_optimizer(name, eager_params, **options)
    fused = optreg.configure_optimizer(name, fused_params, fused=True, **options)
    for step in range(3):
        grads = [torch.randn(s, generator=g) for s in shapes]
        for params, opt in ((eager_params, eager), (fused_params, fused)):
            for i, (p, grad) in enumerate(zip(params, grads)):
                p.grad = None if step == 1 and i != 3 else grad.clone()
            opt.step()
    worst = max(_relative(a.detach(), b.detach()) for a, b in zip(fused_params, eager_params))
    assert worst <= 1e-6, f"padded fused chunks differ from eager by {worst:.2e} (relative)"


def test_fused_without_a_compiler_is_a_config_error_not_a_fallback(monkeypatch):
    from optreg.stages import execute

    monkeypatch.setattr(execute, "compile_unavailable", lambda: "no C++ compiler found")
    case = CHAINS[0]
    with pytest.raises(optreg.ConfigError) as info:
        _build(case, _model(case), fused=True)
    assert "no C++ compiler found" in str(info.value) and info.value.errors[0].path == "fused"


# the first-party optimizers that are chains (the others wrap another optimizer: MindSpore's LARS and AdaSum cells)
CHAIN_ENTRIES = [e for e in FIRST_PARTY if isinstance(e.resolve(), type) and issubclass(e.resolve(), ChainOptimizer)]


@pytest.mark.parametrize("entry", CHAIN_ENTRIES, ids=[e.qualname for e in CHAIN_ENTRIES])
def test_describe_shows_the_chain(entry):
    impl = entry.resolve()
    text = str(optreg.describe(entry.qualname))
    chain = [line for line in text.splitlines() if line.strip().startswith("chain: ")]
    assert chain and chain[0].strip() == f"chain: {impl.chain.describe()}"
    assert [type(s).__name__ for s in impl.chain] == [part.split("(")[0] for part in impl.chain.describe().split(" → ")]


SPARSE_REFUSED = [e for e in CHAIN_ENTRIES if not e.resolve().supports_sparse]


@pytest.mark.parametrize("entry", SPARSE_REFUSED, ids=[e.qualname for e in SPARSE_REFUSED])
def test_a_sparse_gradient_is_refused_by_name_where_it_is_not_supported(entry):
    case = next(c for c in CASES if c.name == entry.qualname)
    model = make_model(EmbeddingNet)
    opt = _build(Case(case.name, case.options), model)
    _loss(model, 0).backward()
    with pytest.raises(RuntimeError, match=f"{type(opt).__name__} does not support sparse gradients"):
        opt.step()


# --- checkpoints every path carries: ZeRO, torch.distributed.checkpoint, type(opt)(params, **opt.defaults) ----
_PRIMITIVE = (bool, int, float, str, type(None))


def _primitive(value) -> bool:
    """What torch.load(weights_only=True) and every checkpoint path keep as it is."""
    if isinstance(value, (list, tuple)):
        return all(_primitive(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, (str, int)) and _primitive(v) for k, v in value.items())
    return isinstance(value, _PRIMITIVE)


@pytest.mark.parametrize("case", MATRIX, ids=_ids(MATRIX))
def test_the_state_dict_is_state_and_groups_of_primitives(case):
    model = _model(case)
    opt = _build(case, model)
    _run(model, opt, 2)
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}  # what ZeRO's consolidation and DCP keep
    for i, group in enumerate(sd["param_groups"]):
        bad = {k: type(v).__name__ for k, v in group.items() if not _primitive(v)}
        assert not bad, f"group {i} holds objects: {bad}"
    for i, group in enumerate(opt.param_groups):  # ZeRO copies the live groups' keys, not the state dict's
        bad = {k: type(v).__name__ for k, v in group.items() if k != "params" and not _primitive(v)}
        assert not bad, f"live group {i} holds objects: {bad}"


# Every optimizer that takes parameters (MindSpore's LARS takes the optimizer it wraps). torch 2.13's own
# AdamW keeps `decoupled_weight_decay` in its defaults, which its __init__ refuses: torch's, kept as it is (so
# in the rows that build torch's AdamW: MindSpore's experimental and mint AdamW, mint's FusedAdamW).
TAKES_PARAMS = [c for c in MATRIX if not isinstance(c.options.get("optimizer"), dict)]
REBUILDABLE = [pytest.param(c, marks=pytest.mark.xfail(strict=True, raises=TypeError, reason="torch's AdamW"))
               if REGISTRY.lookup(OPTIMIZER, c.name).target == "torch.optim:AdamW" else c for c in TAKES_PARAMS]


def _params_of(case: Case, model: torch.nn.Module):
    """What the class takes: the parameters, or the model itself (MindSpore thor hooks its layers)."""
    return model if REGISTRY.lookup(OPTIMIZER, case.name).takes_model else list(model.parameters())


@pytest.mark.parametrize("case", REBUILDABLE, ids=_ids(TAKES_PARAMS))
def test_type_of_opt_with_its_defaults_rebuilds_the_same_algorithm(case):
    """type(opt)(params, **opt.defaults), as ZeroRedundancyOptimizer and FSDP wrappers build an optimizer;
    `defaults` keep torch's meaning (the groups' starting values: OneCycleLR looks for `betas` there)."""
    case = Case(case.name, case.options, sparse=case.sparse, id=case.id, bias=case.bias)  # one group, as ZeRO's
    model = _model(case)
    again = copy.deepcopy(model)
    opt = optreg.configure_optimizer(case.name, _params_of(case, model), **case.options)
    rebuilt = type(opt)(_params_of(case, again), **opt.defaults)
    assert rebuilt.defaults == opt.defaults
    assert all(torch.equal(a, b) for a, b in zip(_run(model, opt, 4), _run(again, rebuilt, 4)))


@pytest.mark.parametrize("case", TAKES_PARAMS, ids=_ids(TAKES_PARAMS))
def test_a_bound_class_rebuilds_from_its_defaults_too(case):
    """type(opt)(params, **opt.defaults) of an optimizer that optimizer_class() made: the bound class takes what
    its implementation takes, the groups' spelling included (MindSpore's lr and betas: 'not an argument of Adam');
    torch's AdamW, whose defaults hold an argument it does not take, is a ConfigError at it (torch: a TypeError)."""
    case = Case(case.name, case.options, sparse=case.sparse, id=case.id, bias=case.bias)
    model = _model(case)
    again = copy.deepcopy(model)
    opt = optreg.optimizer_class(case.name, **case.options)(_params_of(case, model))
    if REGISTRY.lookup(OPTIMIZER, case.name).target == "torch.optim:AdamW":
        with pytest.raises(optreg.ConfigError) as info:
            type(opt)(_params_of(case, again), **opt.defaults)
        assert str(info.value) == "decoupled_weight_decay: not an argument of AdamW (did you mean 'weight_decay'?)"
        return
    rebuilt = type(opt)(_params_of(case, again), **opt.defaults)
    assert rebuilt.defaults == opt.defaults
    assert all(torch.equal(a, b) for a, b in zip(_run(model, opt, 4), _run(again, rebuilt, 4)))


@pytest.mark.parametrize("case", [c for c in CASES if not isinstance(c.options.get("optimizer"), dict)],
                         ids=_ids([c for c in CASES if not isinstance(c.options.get("optimizer"), dict)]))
def test_optimizer_class_binds_the_options(case):
    case = Case(case.name, case.options, sparse=case.sparse, id=case.id, bias=case.bias)
    model = _model(case)
    again = copy.deepcopy(model)
    cls = optreg.optimizer_class(case.name, **case.options)
    assert issubclass(cls, type(_build(case, _model(case))))
    opt, bound = optreg.configure_optimizer(case.name, _params_of(case, model), **case.options), \
        cls(_params_of(case, again))
    assert bound.defaults == opt.defaults
    assert all(torch.equal(a, b) for a, b in zip(_run(model, opt, 4), _run(again, bound, 4)))


def test_optimizer_class_refuses_what_configure_optimizer_refuses():
    with pytest.raises(optreg.ConfigError) as info:
        optreg.optimizer_class("mindspore.Adam", beta3=0.9)
    assert str(info.value) == "beta3: unknown option of mindspore.Adam (did you mean 'beta2'?)"
    with pytest.raises(optreg.ConfigError) as info:
        optreg.optimizer_class("mindspore.LARS", optimizer={"name": "Momentum"})
    assert info.value.errors[0].path == "name" and "wraps another optimizer" in str(info.value)


def test_optimizer_class_and_a_rule_say_where_the_group_settings_go():
    """no_weight_decay, layer_decay and a dialect's decay rule make the parameter groups from the parameters' names
    and the model, which optimizer_class() does not have: refused saying where they go (not 'unknown option'),
    beside the other problems, with the option a setting sets as the did-you-mean; in a param_groups rule, refused
    saying that they go beside the optimizer's options."""
    setting = "an optimizer-wide setting (it makes the parameter groups from the parameters' names and the model), "
    elsewhere = "which optimizer_class() cannot apply: give it to configure_optimizer() or build() (a config's " \
                "optimizer section), or pass torch-style group dicts as the params of the class"
    with pytest.raises(optreg.ConfigError) as info:
        optreg.optimizer_class("mindspore.Adam", no_weight_decay=True, layer_decay={"rate": 0.5, "layer": "b.{i}.*"},
                               hf_decay_groups=True, beta3=0.9)
    assert str(info.value).splitlines() == [
        f"no_weight_decay: {setting}{elsewhere} (did you mean 'weight_decay'?)",
        f"layer_decay: {setting}{elsewhere}",
        f"hf_decay_groups: {setting}{elsewhere} (did you mean 'weight_decay'?)",
        "beta3: unknown option of mindspore.Adam (did you mean 'beta2'?)"]
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer("adamw", torch.nn.Linear(2, 2), param_groups=[{"params": "*", "no_weight_decay": 1}])
    assert str(info.value) == f"param_groups[0].no_weight_decay: {setting}not a key of a param_groups rule: give it " \
                              f"beside the optimizer's options (did you mean 'weight_decay'?)"


@pytest.mark.parametrize("name", ["oneflow.AdamW", "mindspore.Adam"])
def test_a_checkpoint_with_the_older_top_level_global_step_still_resumes(name):
    case = Case(name, {"lr": 0.01} if name.startswith("oneflow")
                else {"learning_rate": [0.01 * k for k in range(1, 7)]})
    straight_model = _model(case)
    model = copy.deepcopy(straight_model)
    straight = _run(straight_model, _build(case, straight_model), 6)
    first = _build(case, model)
    _run(model, first, 3)
    sd = first.state_dict()
    old = {"state": sd["state"], "global_step": 3,   # how optreg 0.1 wrote it
           "param_groups": [{k: v for k, v in g.items() if k != "global_step"} for g in sd["param_groups"]]}
    second = _build(case, model)
    second.load_state_dict(old)
    assert second.global_step == 3
    assert all(torch.equal(a, b) for a, b in zip(straight, _run(model, second, 3, start=3)))

"""A fused step's first compile runs in the background (`execute.Compile`): the steps run eager until it is
ready, then compiled, with the same state, so that the trajectory agrees with eager within 1e-6 and a
checkpoint resumes exactly; a compile that takes longer than `SLOW` says so once; its error reaches the step."""

from __future__ import annotations

import copy
import threading
import warnings

import pytest
import torch
from test_optimizer_matrix import CHAINS, _build, _loss, _model, _relative
from torch._dynamo.utils import counters

import optreg.stages.execute as execute

CASE = next(c for c in CHAINS if c.key == "oneflow.AdamW")


@pytest.fixture
def held(monkeypatch):
    """Compiles in the background, each held until the test sets the event."""
    release = threading.Event()
    monkeypatch.setattr(execute, "COMPILE", "background")
    monkeypatch.setattr(execute, "hold", lambda: release.wait(60))
    yield release
    release.set()


def _step(model, opt, step):
    opt.zero_grad()
    _loss(model, step).backward()
    opt.step()


def _compiles(opt):
    return [plan.compile for plan in opt._fused_plans.values() if plan]


def test_the_steps_run_eager_until_the_compile_is_ready_then_compiled(held):
    model = _model(CASE)
    eager_model = copy.deepcopy(model)
    eager = _build(CASE, eager_model)
    opt = _build(CASE, model, fused=True)
    for step in range(3):
        _step(model, opt, step)
        _step(eager_model, eager, step)
        assert all(torch.equal(a, b) for a, b in zip(model.parameters(), eager_model.parameters()))
    plans = [plan for plan in opt._fused_plans.values() if plan]
    assert plans and not any(plan.warm for plan in plans)
    held.set()
    assert all(c.wait(300) and c.error is None for c in _compiles(opt))
    graphs = counters["stats"]["unique_graphs"]
    for step in range(3, 6):
        _step(model, opt, step)
        _step(eager_model, eager, step)
    assert all(plan.warm for plan in plans)
    assert counters["stats"]["unique_graphs"] == graphs   # compiled for these very tensors: nothing traced here
    worst = max(_relative(a.detach(), b.detach()) for a, b in zip(model.parameters(), eager_model.parameters()))
    assert 0 < worst <= 1e-6


def test_a_checkpoint_taken_before_the_swap_resumes_exactly(held, monkeypatch):
    model = _model(CASE)
    opt = _build(CASE, model, fused=True)
    for step in range(2):
        _step(model, opt, step)
    saved_model, saved = copy.deepcopy(model), copy.deepcopy(opt.state_dict())
    held.set()
    assert all(c.wait(300) for c in _compiles(opt))
    for step in range(2, 4):
        _step(model, opt, step)
    monkeypatch.setattr(execute, "COMPILE", "wait")
    second = _build(CASE, saved_model, fused=True)
    second.load_state_dict(saved)
    for step in range(2, 4):
        _step(saved_model, second, step)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), saved_model.parameters()))


def test_a_slow_compile_says_so_once(held, monkeypatch):
    monkeypatch.setattr(execute, "SLOW", 0.0)
    model = _model(CASE)
    opt = _build(CASE, model, fused=True)
    with pytest.warns(RuntimeWarning) as record:
        for step in range(3):
            _step(model, opt, step)
    said = [str(w.message) for w in record if "in the background" in str(w.message)]
    assert len(said) == len(_compiles(opt)) >= 1
    assert said[0].startswith("optreg: compiling AdamMoments") and "(fused=True)" in said[0]


def test_a_fast_compile_says_nothing(monkeypatch):
    """A compile under `SLOW` seconds warns of nothing (the threshold raised here, so that a loaded machine, whose
    compile of even a cached graph can pass a second, does not decide the test)."""
    monkeypatch.setattr(execute, "COMPILE", "background")
    monkeypatch.setattr(execute, "SLOW", 120.0)
    model = _model(CASE)
    opt = _build(CASE, model, fused=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _step(model, opt, 0)
        assert all(c.wait(300) for c in _compiles(opt))
        _step(model, opt, 1)
    assert all(plan.warm for plan in opt._fused_plans.values() if plan)


def test_an_error_in_the_compile_reaches_the_step(monkeypatch):
    def fail():
        raise RuntimeError("the compiler broke")

    monkeypatch.setattr(execute, "COMPILE", "background")
    monkeypatch.setattr(execute, "hold", fail)
    model = _model(CASE)
    opt = _build(CASE, model, fused=True)
    _step(model, opt, 0)
    for c in _compiles(opt):
        c.done.wait(60)
    with pytest.raises(RuntimeError, match="the compiler broke"):
        _step(model, opt, 1)


def test_waiting_compiles_on_the_first_step(monkeypatch):
    monkeypatch.setattr(execute, "COMPILE", "wait")
    model = _model(CASE)
    opt = _build(CASE, model, fused=True)
    _step(model, opt, 0)
    assert all(plan.warm for plan in opt._fused_plans.values() if plan)


def test_the_thread_switch_interval_is_short_while_a_compile_runs(held):
    import sys

    before = sys.getswitchinterval()
    model = _model(CASE)
    opt = _build(CASE, model, fused=True)
    _step(model, opt, 0)
    assert sys.getswitchinterval() == pytest.approx(min(execute.SWITCH, before))
    held.set()
    assert all(c.wait(300) for c in _compiles(opt))
    assert sys.getswitchinterval() == before


# a contiguous group (contiguous_params=True) of each kind of chain: element-wise (over the flat buffers), with
# norms per parameter (LAMB, over rows), with shapes (Adafactor, over stacks of same-shape slices)
CONTIGUOUS = [next(c for c in CHAINS if c.key == key) for key in ("oneflow.AdamW", "cerebras.Lamb",
                                                                   "cerebras.Adafactor")]


def _bucket_compiles(opt):
    return [task for layout in opt._contiguous.values() for bucket in layout.buckets
            for task in bucket.compiles.values()]


@pytest.mark.parametrize("case", CONTIGUOUS, ids=[c.key for c in CONTIGUOUS])
def test_a_contiguous_group_steps_eager_until_its_compile_is_ready(case, held):
    """Until the bucket's compile is ready, an element-wise chain steps the whole buffers eager (as
    contiguous_params with foreach does) and the others each slice eager (as contiguous_params alone does),
    bit for bit; then the compiled step, traced on stand-ins, within 1e-6 and with nothing traced on the step."""
    model = _model(case)
    eager_model = copy.deepcopy(model)
    flat = case.key == "oneflow.AdamW"
    eager = _build(case, eager_model, contiguous_params=True, **({"foreach": True} if flat else {}))
    opt = _build(case, model, contiguous_params=True, fused=True)
    for step in range(3):
        _step(model, opt, step)
        _step(eager_model, eager, step)
        assert all(torch.equal(a, b) for a, b in zip(model.parameters(), eager_model.parameters()))
    tasks = _bucket_compiles(opt)
    assert tasks and not any(t.done.is_set() for t in tasks)
    held.set()
    assert all(t.wait(600) and t.error is None for t in tasks)
    graphs = counters["stats"]["unique_graphs"]
    for step in range(3, 6):
        _step(model, opt, step)
        _step(eager_model, eager, step)
    assert counters["stats"]["unique_graphs"] == graphs   # compiled for these very buffers: nothing traced here
    worst = max(_relative(a.detach(), b.detach()) for a, b in zip(model.parameters(), eager_model.parameters()))
    assert 0 < worst <= 1e-6


@pytest.mark.parametrize("key", ["cerebras.Adafactor", "mindspore.AdaFactor"])
def test_a_group_of_matrices_and_vectors_steps_its_slices_eager_until_the_compile_is_ready(key, held):
    """Adafactor keeps row and column factors for a matrix and a full second moment for a vector: until the
    compile is ready, a contiguous group of both steps each kind of slice in a batch of its own, bit for bit as
    contiguous_params without fused does (one batch of all of them failed on the vector's missing factors)."""
    import optreg

    g = torch.Generator().manual_seed(0)
    shapes = [(32, 16), (16,), (8, 16), (24,)]
    start = [torch.randn(s, generator=g) for s in shapes]
    grads = [[torch.randn(s, generator=g) for s in shapes] for _ in range(3)]
    runs = {}
    for fused in (False, True):
        params = [torch.nn.Parameter(t.clone()) for t in start]
        options = {"lr": 1e-2} if key == "cerebras.Adafactor" else {}
        opt = optreg.configure_optimizer(key, params, contiguous_params=True, fused=fused, **options)
        for step in range(3):
            for p, gr in zip(params, grads[step]):
                p.grad = gr.clone()
            opt.step()
        runs[fused] = params
        if fused:
            tasks = _bucket_compiles(opt)
            assert tasks and not any(t.done.is_set() for t in tasks)   # every step above ran eager
    assert all(torch.equal(a, b) for a, b in zip(runs[False], runs[True]))
    assert not all(torch.equal(a, b) for a, b in zip(runs[False], start))


def test_a_script_that_ends_while_a_compile_runs_waits_for_it_and_exits_cleanly(tmp_path):
    """The compile thread is a daemon; stopped inside the compiler's C++ at exit it aborts the process ("terminate
    called without an active exception", seen with 25M parameters): the exit waits for the compile in flight. Here
    the compile is held for a second after the script's last line; a check registered before optreg's own exit
    hook runs after it (atexit's order) and sees the compile over (Inductor, which cannot start a compile once the
    interpreter is shutting down, ends it with an error nobody reads: no step will run)."""
    import os
    import subprocess
    import sys

    code = ("import atexit, time, torch, optreg\n"
            "import optreg.stages.execute as execute\n"
            "execute.hold = lambda: time.sleep(1)\n"
            "atexit.register(lambda: print('done at exit:', all(t.done.is_set() for t in execute._STARTED)))\n"
            "params = [torch.nn.Parameter(torch.randn(64)) for _ in range(3)]\n"
            "opt = optreg.configure_optimizer('oneflow.AdamW', params, lr=1e-3, fused=True)\n"
            "for p in params:\n    p.grad = torch.randn_like(p)\n"
            "opt.step()\n"
            "print('stepped')\n")
    env = {**os.environ, "OPTREG_COMPILE": "background", "TORCHINDUCTOR_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["stepped", "done", "at", "exit:", "True"], out.stdout


def _compile_threads():
    return [t for t in threading.enumerate() if t.name == "optreg-compile"]


def test_the_compile_thread_ends_when_no_compile_is_left_and_the_next_compile_starts_one(held):
    """A compile thread that lived on kept its OpenMP team, whose idle threads made libgomp throttle the spinning
    of the main thread's team: a fused step took up to twice as long after a background compile as after one on
    the main thread (`execute._compile_loop`). It ends with its last compile; a later compile starts a new one."""
    held.set()
    for key in ("oneflow.AdamW", "cerebras.Lamb"):
        case = next(c for c in CHAINS if c.key == key)
        model = _model(case)
        opt = _build(case, model, fused=True)
        _step(model, opt, 0)
        assert _compile_threads() or all(c.done.is_set() for c in _compiles(opt))
        assert all(c.wait(300) and c.error is None for c in _compiles(opt))
        for thread in _compile_threads():
            thread.join(30)
        assert not _compile_threads() and not execute._WORKER
        _step(model, opt, 1)
        assert all(plan.warm for plan in opt._fused_plans.values() if plan)   # the compiled step, after it

"""Cerebras optimizer features on every Cerebras row: preinitialize(), state_names_to_sparsify(), the
per-parameter global step, and Adam/AdamW checkpoints exchanged with torch and Hugging Face layouts."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from optim_cases import all_cases
from test_opt_sgd import drive, gradient, max_err, torch_params, two_groups

import optreg

# options, beyond its case's in the matrix, that make an optimizer allocate every kind of state it has
FULL_STATE = {"Adam": {"amsgrad": True}, "AdamW": {"amsgrad": True}, "RMSprop": {"momentum": 0.9, "centered": True},
              "SGD": {"momentum": 0.9}}
SPARSIFY = {  # the rows of the SGD, RMSprop, Adagrad, Adadelta, ASGD, Rprop and Lion families
    "Adadelta": ["square_avg", "acc_delta"], "Adagrad": ["sum"], "ASGD": ["ax"], "Lion": ["exp_avg"],
    "RMSprop": ["square_avg", "momentum_buffer", "grad_avg"], "Rprop": ["prev", "step_size"],
    "SGD": ["momentum_buffer"],
}
GLOBAL_STEP = ("Adagrad", "ASGD")  # of these families, the ones Cerebras builds with enable_global_step=True


def cerebras_names() -> list[str]:
    return optreg.list_optimizers(dialect="cerebras")


#: every Cerebras row, with the options of its first dense case in the matrix (tests/optim_cases): a new row
#: is covered here by its case alone
CASE_OPTIONS: dict[str, dict] = {}
for _case in all_cases():
    if _case.name.startswith("cerebras.") and not _case.sparse:
        CASE_OPTIONS.setdefault(_case.name.removeprefix("cerebras."), dict(_case.options))
NAMES = sorted(CASE_OPTIONS)


def full_state(name: str) -> dict:
    return {**CASE_OPTIONS[name], **FULL_STATE.get(name, {})}


def test_every_cerebras_optimizer_is_covered():
    assert NAMES == sorted(cerebras_names())
    assert set(FULL_STATE) | set(SPARSIFY) | set(GLOBAL_STEP) <= set(NAMES)


def snapshot(opt: torch.optim.Optimizer) -> dict[int, dict[str, int]]:
    return {id(p): {k: v.data_ptr() for k, v in st.items() if isinstance(v, torch.Tensor)}
            for p, st in opt.state.items()}


@pytest.mark.parametrize("name", NAMES)
def test_state_is_complete_before_the_first_step_and_step_creates_none(name):
    params = torch_params()
    opt = optreg.configure_optimizer(name, params, dialect="cerebras", **full_state(name))
    assert all(opt.state[p] for p in params)
    before = snapshot(opt)
    drive(opt, params, 3, skip=lambda t, i: i == 1 and t == 2)
    assert snapshot(opt) == before  # same state names, same storage: nothing allocated or replaced


@pytest.mark.parametrize("name", NAMES)
def test_state_names_to_sparsify_name_states_with_the_parameters_shape(name):
    params = torch_params()
    opt = optreg.configure_optimizer(name, params, dialect="cerebras", **full_state(name))
    names = opt.state_names_to_sparsify()
    assert names and all(isinstance(n, str) for n in names)
    present = [n for n in names if any(n in opt.state[p] for p in params)]
    assert present  # (Adafactor keeps factored row/column states for matrices, exp_avg_sq for vectors)
    for p in params:
        for n in names:
            if n in opt.state[p]:
                assert opt.state[p][n].shape == p.shape, n
    if name in SPARSIFY:
        assert names == SPARSIFY[name]
        assert present == names


@pytest.mark.parametrize("name", GLOBAL_STEP)
def test_global_step_counts_each_parameters_own_steps_in_float32(name):
    params = torch_params()
    opt = optreg.configure_optimizer(name, params, dialect="cerebras")
    steps = [opt.state[p]["step"] for p in params]
    assert all(s.dtype == torch.float32 and s.dim() == 0 and float(s) == 0.0 for s in steps)
    drive(opt, params, 5, skip=lambda t, i: i == 2 and t % 2 == 0)
    assert [float(opt.state[p]["step"]) for p in params] == [5.0, 5.0, 3.0]
    assert float(opt.increment_global_step(params[0])) == 6.0


# ---------------------------------------------------------------------------------------------
# Adam / AdamW checkpoints: torch.optim.Adam/AdamW and Hugging Face AdamW, both directions
# ---------------------------------------------------------------------------------------------

G0, G1 = {"lr": 0.01}, {"lr": 0.003}
SPLIT, STEPS = 10, 20


def saved(opt: torch.optim.Optimizer) -> dict:
    buffer = io.BytesIO()
    torch.save(opt.state_dict(), buffer)
    buffer.seek(0)
    return torch.load(buffer)


def fresh(params: list[torch.Tensor]) -> list[torch.Tensor]:
    return [torch.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]


def handover(first, second, **options):
    """`first` runs SPLIT steps and saves; `second` loads that checkpoint and runs to STEPS."""
    params = torch_params()
    a = first(two_groups(params, G0, G1), **options)
    drive(a, params, SPLIT)
    params = fresh(params)
    b = second(two_groups(params, G0, G1), **options)
    b.load_state_dict(saved(a))
    return drive(b, params, STEPS, start=SPLIT + 1)


def straight(make, **options):
    params = torch_params()
    return drive(make(two_groups(params, G0, G1), **options), params, STEPS)


def cerebras(name):
    return lambda groups, **kw: optreg.configure_optimizer(name, groups, dialect="cerebras", **kw)


@pytest.mark.parametrize("name,torch_cls,options", [
    ("Adam", torch.optim.Adam, {"eps": 0.0, "weight_decay": 0.01}),
    ("AdamW", torch.optim.AdamW, {"eps": 0.0, "weight_decay": 0.1}),
])
def test_adam_checkpoints_move_between_torch_and_cerebras(name, torch_cls, options):
    """With eps = 0 the eps-hat and torch forms coincide, so each side must continue exactly as the other."""
    torch_run = straight(torch_cls, **options)
    cerebras_run = straight(cerebras(name), **options)
    assert max_err(torch_run, cerebras_run) < 1e-12
    assert max_err(handover(torch_cls, cerebras(name), **options), torch_run) < 1e-12
    assert max_err(handover(cerebras(name), torch_cls, **options), cerebras_run) < 1e-12


def test_an_off_by_one_step_would_be_seen():
    """Continuing a torch checkpoint with beta**s (one step behind) gives a different trajectory."""
    lagging = torch_params()
    a = torch.optim.Adam(two_groups(lagging, G0, G1), eps=0.0)
    drive(a, lagging, SPLIT)
    state = saved(a)
    for st in state["state"].values():
        st["step"] = st["step"] - 1
    lagging = fresh(lagging)
    b = cerebras("Adam")(two_groups(lagging, G0, G1), eps=0.0)
    b.load_state_dict(state)
    assert max_err(drive(b, lagging, STEPS, start=SPLIT + 1), straight(torch.optim.Adam, eps=0.0)) > 1e-6


def hf_adamw(ws, state, t0, t1, *, lrs=(G0["lr"], G0["lr"], G1["lr"]), betas=(0.9, 0.999), eps=1e-6):
    """Hugging Face transformers.AdamW (<= 4.49, correct_bias=True, weight_decay=0) in numpy, steps t0..t1.

    step += 1; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; w -= lr sqrt(1-b2^step)/(1-b1^step) m/(sqrt(v)+eps).
    """
    b1, b2 = betas
    for t in range(t0, t1 + 1):
        for i, w in enumerate(ws):
            st = state[i]
            g = gradient(t, i, w)
            st["step"] += 1
            st["exp_avg"] = b1 * st["exp_avg"] + (1 - b1) * g
            st["exp_avg_sq"] = b2 * st["exp_avg_sq"] + (1 - b2) * g * g
            size = lrs[i] * np.sqrt(1 - b2 ** st["step"]) / (1 - b1 ** st["step"])
            ws[i] = w - size * st["exp_avg"] / (np.sqrt(st["exp_avg_sq"]) + eps)
    return ws


def hf_state_dict(state: list[dict]) -> dict:
    """The layout HF AdamW writes: an int step per parameter and correct_bias in the groups."""
    groups = [{**G0, "betas": (0.9, 0.999), "eps": 1e-6, "weight_decay": 0.0, "correct_bias": True, "params": [0, 1]},
              {**G1, "betas": (0.9, 0.999), "eps": 1e-6, "weight_decay": 0.0, "correct_bias": True, "params": [2]}]
    return {"state": {i: {"step": st["step"], "exp_avg": torch.from_numpy(st["exp_avg"].copy()),
                          "exp_avg_sq": torch.from_numpy(st["exp_avg_sq"].copy())} for i, st in enumerate(state)},
            "param_groups": groups}


def test_hugging_face_adamw_checkpoints_move_to_cerebras_and_back():
    ws = [p.detach().numpy().copy() for p in torch_params()]
    state = [{"step": 0, "exp_avg": np.zeros_like(w), "exp_avg_sq": np.zeros_like(w)} for w in ws]
    hf_whole = hf_adamw([w.copy() for w in ws], [dict(s) for s in state], 1, STEPS)
    assert max_err(straight(cerebras("AdamW"), eps=1e-6), hf_whole) < 1e-12

    hf_half = hf_adamw(ws, state, 1, SPLIT)
    params = [torch.tensor(w.copy(), requires_grad=True) for w in hf_half]
    opt = cerebras("AdamW")(two_groups(params, G0, G1), eps=1e-6)
    opt.load_state_dict(hf_state_dict(state))
    assert max_err(drive(opt, params, STEPS, start=SPLIT + 1), hf_whole) < 1e-12

    params = torch_params()
    opt = cerebras("AdamW")(two_groups(params, G0, G1), eps=1e-6)
    drive(opt, params, SPLIT)
    ours = saved(opt)
    state = [{"step": int(float(st["step"])), "exp_avg": st["exp_avg"].numpy(), "exp_avg_sq": st["exp_avg_sq"].numpy()}
             for _, st in sorted(ours["state"].items())]
    continued = hf_adamw([p.detach().numpy().copy() for p in params], state, SPLIT + 1, STEPS)
    assert max_err(continued, hf_whole) < 1e-12

"""optreg schedulers under torch's ChainedScheduler and SequentialLR give what torch's own schedulers give.

The torch dialect builds torch's own classes; the same names in the oneflow dialect are optreg's closed forms
(ScheduleLR), with the same formulas, so they are what is compared here."""

from __future__ import annotations

import itertools
import warnings

import pytest
import torch
from torch.optim import lr_scheduler as L

import optreg

#: (torch's scheduler, the same spec in optreg) — both chainable in torch's sense
PAIRS = {
    "LinearLR": (lambda o: L.LinearLR(o, start_factor=0.25, total_iters=4), {"start_factor": 0.25, "total_iters": 4}),
    "ExponentialLR": (lambda o: L.ExponentialLR(o, gamma=0.9), {"gamma": 0.9}),
    "StepLR": (lambda o: L.StepLR(o, step_size=3, gamma=0.5), {"step_size": 3, "gamma": 0.5}),
    "MultiStepLR": (lambda o: L.MultiStepLR(o, milestones=[2, 7], gamma=0.3), {"milestones": [2, 7], "gamma": 0.3}),
}


def _maker(name: str, ours: bool):
    theirs, spec = PAIRS[name]
    return (lambda o: optreg.configure_lr_scheduler(o, {"name": name, **spec}, dialect="oneflow")) if ours else theirs


def _lrs(make, steps=14, groups=(1.0, 0.3)):
    params = [torch.nn.Parameter(torch.zeros(2)) for _ in groups]
    opt = torch.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(params, groups)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = make(opt)
        out = []
        for _ in range(steps):
            out.append([g["lr"] for g in opt.param_groups])
            opt.step()
            sched.step()
    return out


def _close(a, b):
    return all(x == pytest.approx(y, rel=1e-12) for xs, ys in zip(a, b) for x, y in zip(xs, ys))


@pytest.mark.parametrize("names", [("LinearLR", "ExponentialLR", "StepLR"), ("MultiStepLR", "LinearLR")])
def test_chained_scheduler_multiplies_as_torch_does(names):
    want = _lrs(lambda o: L.ChainedScheduler([_maker(n, False)(o) for n in names]))
    for mine in itertools.product([False, True], repeat=len(names)):
        if not any(mine):
            continue
        got = _lrs(lambda o: L.ChainedScheduler([_maker(n, m)(o) for n, m in zip(names, mine)]))
        assert _close(got, want), mine
    assert len({round(lr[0], 12) for lr in want}) > 5  # the product really changes over the run


@pytest.mark.parametrize("first,second", [("LinearLR", "ExponentialLR"), ("ExponentialLR", "StepLR")])
def test_sequential_lr_switches_as_torch_does(first, second):
    want = _lrs(lambda o: L.SequentialLR(o, [_maker(first, False)(o), _maker(second, False)(o)], milestones=[5]))
    for mine in [(True, False), (False, True), (True, True)]:
        got = _lrs(lambda o: L.SequentialLR(o, [_maker(first, mine[0])(o), _maker(second, mine[1])(o)],
                                            milestones=[5]))
        assert _close(got, want), mine


def test_alone_the_schedule_stays_closed_form_and_a_manual_change_is_kept_as_torch_keeps_it():
    params = [torch.nn.Parameter(torch.zeros(2))]
    ours, theirs = torch.optim.SGD(params, lr=1.0), torch.optim.SGD(params, lr=1.0)
    a = optreg.configure_lr_scheduler(ours, {"name": "ExponentialLR", "gamma": 0.5}, dialect="oneflow")
    assert type(a).__name__ == "ScheduleLR"
    b = L.ExponentialLR(theirs, gamma=0.5)
    for step in range(6):
        if step == 3:  # a user halves the lr by hand: both keep scaling from the new value
            ours.param_groups[0]["lr"] /= 2
            theirs.param_groups[0]["lr"] /= 2
        ours.step(), theirs.step(), a.step(), b.step()
        assert ours.param_groups[0]["lr"] == theirs.param_groups[0]["lr"]
    assert ours.param_groups[0]["lr"] == 0.5 ** 7


def test_a_chained_scheduler_resumes_exactly():
    names = ("LinearLR", "ExponentialLR")
    straight = _lrs(lambda o: L.ChainedScheduler([_maker(n, True)(o) for n in names]), steps=10)
    params = [torch.nn.Parameter(torch.zeros(2)) for _ in range(2)]
    opt = torch.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(params, (1.0, 0.3))])
    sched = L.ChainedScheduler([_maker(n, True)(opt) for n in names])
    for _ in range(4):
        opt.step(), sched.step()
    saved = opt.state_dict(), sched.state_dict()
    opt2 = torch.optim.SGD([{"params": [p], "lr": lr} for p, lr in zip(params, (1.0, 0.3))])
    sched2 = L.ChainedScheduler([_maker(n, True)(opt2) for n in names])
    opt2.load_state_dict(saved[0])
    sched2.load_state_dict(saved[1])
    got = []
    for _ in range(6):
        got.append([g["lr"] for g in opt2.param_groups])
        opt2.step(), sched2.step()
    assert got == straight[4:]


@pytest.mark.parametrize("value, said", [("x", "scheduler.last_epoch: expected an integer, got str 'x'"),
                                         (-2, "scheduler.last_epoch: must be >= -1, got -2"),
                                         (1.5, "scheduler.last_epoch: must be an integer, got 1.5")])
@pytest.mark.parametrize("spec, column", [
    ("{{name: sequential, last_epoch: {}, schedulers: [{{name: StepLR, step_size: 2}}]}}", 31),
    # torch's own class: -2 was the resume error (`resuming at last_epoch=-2 needs 'initial_lr' ...`)
    ("{{name: StepLR, step_size: 2, last_epoch: {}}}", 41),
    ("{{name: SequentialLR, milestones: [2], schedulers: [{{name: StepLR, step_size: 2}}, {{name: StepLR, "
     "step_size: 2}}], last_epoch: {}}}", 124),
], ids=["sequential", "torch_StepLR", "torch_SequentialLR"])
def test_a_combinators_bad_last_epoch_is_said_as_a_stages_is(value, said, spec, column, tmp_path, capsys):
    """A combinator's last_epoch words a bad value as a stage's own option does (models.number_message; it said
    `must be an integer >= -1, got 'x'`), and a torch class's as the adapter's (below -1: no step to resume at), at
    its position."""
    from optreg.cli import main

    path = tmp_path / "seq.yaml"
    path.write_text(f"optimizer: {{name: SGD, lr: 0.1}}\nscheduler: {spec.format(value)}\n")
    assert main(["validate", str(path)]) == 1 and capsys.readouterr().err.strip() == f"{path}:2:{column}: {said}"

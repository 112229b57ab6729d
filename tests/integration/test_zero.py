"""ZeroRedundancyOptimizer over DDP, two gloo ranks: the local optimizer is the optreg optimizer's class with
its defaults (`optimizer_class=type(opt), **opt.defaults`, as a user wraps an optimizer they configured), the
scheduler drives the ZeRO optimizer. Resumed at the midpoint through consolidate_state_dict -> rank-0
torch.save -> torch.load(weights_only=True) -> load_state_dict on every rank.

The optimizer is configured on the bare tensors (a dialect's name-based group rules are param groups, which
`opt.defaults` does not carry), and so is the single-process reference. Bit-equal to it: each rank updates whole parameters (ZeRO partitions the parameter list,
not the tensors) from the same averaged gradients, then broadcasts them."""

from __future__ import annotations

import inspect

import pytest

import optreg
from harness import CASES, EXACT, MID, STEPS, assert_same, case_params, load_checkpoint, make_model, run_distributed, \
    save_checkpoint, snapshot, train


def zero_kwargs(opt):
    """What ZeroRedundancyOptimizer forwards to the local optimizer: the optimizer's defaults.

    torch's own AdamW lists 'decoupled_weight_decay' in its defaults but its __init__ does not take it (torch
    2.13); for torch classes the keys that the constructor does not take are left out, as a user must."""
    kwargs = dict(opt.defaults)
    if type(opt).__module__.startswith("torch."):
        accepted = inspect.signature(type(opt)).parameters
        kwargs = {k: v for k, v in kwargs.items() if k in accepted}
    return kwargs


def zero_scenario(rank, world, case, workdir):
    from torch.distributed.optim import ZeroRedundancyOptimizer
    from torch.nn.parallel import DistributedDataParallel as DDP

    def fresh(seed=0):
        model = make_model(seed)
        configured, _ = case.build(list(model.parameters()))      # defaults carry no group rules: bare tensors
        zero = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=type(configured),
                                       **zero_kwargs(configured))
        sched = optreg.configure_lr_scheduler(zero, case.scheduler) if case.scheduler is not None else None
        return model, DDP(model), zero, sched

    model, ddp, zero, sched = fresh()
    lrs = train(ddp, zero, sched, 0, STEPS, rank=rank, world=world)
    full = {"params": snapshot(model), "lrs": lrs}

    model, ddp, zero, sched = fresh()
    lrs = train(ddp, zero, sched, 0, MID, rank=rank, world=world)
    zero.consolidate_state_dict(to=0)
    path = workdir / "zero.pt"
    save_checkpoint(path, rank, model, zero, sched)
    model, ddp, zero, sched = fresh(seed=1)
    load_checkpoint(path, model, zero, sched)
    lrs += train(ddp, zero, sched, MID, STEPS, rank=rank, world=world)
    return {"full": full, "resumed": {"params": snapshot(model), "lrs": lrs}}


@pytest.fixture(scope="module")
def zero_runs(tmp_path_factory):
    return run_distributed(zero_scenario, tmp_path_factory.mktemp("zero"))


@pytest.mark.parametrize("case_id", case_params())
def test_zero_equals_single_process(case_id, zero_runs, references):
    zero_runs[case_id].assert_ranks("full", references(case_id, sharded=True, bare=True), EXACT, "ZeRO")


@pytest.mark.parametrize("case_id", case_params())
def test_zero_consolidate_save_load_continue(case_id, zero_runs, references):
    zero_runs[case_id].assert_ranks("resumed", references(case_id, sharded=True, bare=True), EXACT,
                                    f"ZeRO resumed at step {MID}")


@pytest.mark.parametrize("case_id", [p for p in case_params() if not p.values[0].startswith("torch.")])
def test_class_and_defaults_rebuild_the_same_optimizer(case_id, references):
    """What ZeRO relies on, in one process: `type(opt)(params, **opt.defaults)` is the configured algorithm."""
    case = CASES[case_id]
    model = make_model()
    configured, _ = case.build(list(make_model().parameters()))
    opt = type(configured)(model.parameters(), **configured.defaults)
    sched = optreg.configure_lr_scheduler(opt, case.scheduler) if case.scheduler is not None else None
    lrs = train(model, opt, sched, 0, STEPS)
    assert_same({"params": snapshot(model), "lrs": lrs}, references(case_id, bare=True), EXACT,
                "rebuilt from type and defaults")

"""DistributedDataParallel, two gloo ranks: an optreg optimizer and scheduler on each rank, uninterrupted and
resumed at the midpoint from a rank-0 checkpoint loaded with torch.load(weights_only=True).

Bit-equal to the single-process run: each rank's gradient of its half batch is what the single process
computes for that half, and averaging two ranks (g0/2 + g1/2) equals (g0 + g1)/2 exactly."""

from __future__ import annotations

import pytest

from harness import EXACT, MID, STEPS, case_params, load_checkpoint, make_model, run_distributed, save_checkpoint, \
    snapshot, train


def ddp_scenario(rank, world, case, workdir):
    from torch.nn.parallel import DistributedDataParallel as DDP

    def fresh(seed=0):
        model = make_model(seed)
        opt, sched = case.build(model)
        return model, DDP(model), opt, sched

    model, ddp, opt, sched = fresh()
    lrs = train(ddp, opt, sched, 0, STEPS, rank=rank, world=world)
    full = {"params": snapshot(model), "lrs": lrs}

    model, ddp, opt, sched = fresh()
    lrs = train(ddp, opt, sched, 0, MID, rank=rank, world=world)
    path = workdir / "ddp.pt"
    save_checkpoint(path, rank, model, opt, sched)
    model, ddp, opt, sched = fresh(seed=1)          # other weights: the checkpoint must bring them back
    load_checkpoint(path, model, opt, sched)
    lrs += train(ddp, opt, sched, MID, STEPS, rank=rank, world=world)
    return {"full": full, "resumed": {"params": snapshot(model), "lrs": lrs}}


@pytest.fixture(scope="module")
def ddp_runs(tmp_path_factory):
    return run_distributed(ddp_scenario, tmp_path_factory.mktemp("ddp"))


@pytest.mark.parametrize("case_id", case_params())
def test_ddp_equals_single_process(case_id, ddp_runs, references):
    ddp_runs[case_id].assert_ranks("full", references(case_id, sharded=True), EXACT, "DDP")


@pytest.mark.parametrize("case_id", case_params())
def test_ddp_resume_at_midpoint(case_id, ddp_runs, references):
    ddp_runs[case_id].assert_ranks("resumed", references(case_id, sharded=True), EXACT, f"DDP resumed at step {MID}")

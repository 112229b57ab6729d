"""Lightning: `configure_optimizers` returns the optreg optimizer and scheduler (stepped every optimizer step);
`Trainer.fit` runs MID steps and saves a checkpoint, a fresh module and Trainer resume from it with
`fit(ckpt_path=...)` and go on to STEPS. Both runs equal the uninterrupted single-process loop bit for bit
(Lightning's automatic optimization is the same forward, backward, step, zero_grad, scheduler step)."""

from __future__ import annotations

import lightning.pytorch as pl
import pytest

from harness import CASES, EXACT, MID, STEPS, assert_same, batch, case_params, loss_fn, lr_of, make_model, snapshot


class Batches:
    """The global batch of each step, as a resumable loader (Lightning saves `state_dict()` in its checkpoint and
    hands it back to `load_state_dict()`, so that a mid-epoch resume continues with the next batch)."""

    def __init__(self):
        self.start = self.position = 0

    def __len__(self):
        return STEPS

    def __iter__(self):
        for i in range(self.start, STEPS):
            self.position = i + 1
            yield batch(i)
        self.start = 0

    def state_dict(self):
        return {"position": self.position}

    def load_state_dict(self, state):
        self.start = self.position = state["position"]


class Module(pl.LightningModule):
    def __init__(self, case_id: str, seed: int = 0):
        super().__init__()
        self.case_id = case_id
        self.net = make_model(seed)
        self.lrs: list[float] = []

    def training_step(self, data, index):
        x, y = data
        return loss_fn(self.net, x, y)

    def optimizer_step(self, epoch, index, optimizer, optimizer_closure=None):
        super().optimizer_step(epoch, index, optimizer, optimizer_closure)
        self.lrs.append(lr_of(optimizer))          # the lr this step used (before the scheduler steps)

    def configure_optimizers(self):
        opt, sched = CASES[self.case_id].build(self.net)
        if sched is None:
            return opt
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def trainer(root, steps):
    return pl.Trainer(max_steps=steps, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                      enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0,
                      default_root_dir=str(root))


def loader():
    return Batches()


@pytest.mark.parametrize("case_id", case_params())
def test_lightning_fit_and_resume_from_ckpt_path(case_id, references, tmp_path):
    expected = references(case_id)

    whole = Module(case_id)
    trainer(tmp_path / "whole", STEPS).fit(whole, loader())
    assert_same({"params": snapshot(whole.net), "lrs": whole.lrs}, expected, EXACT, "Lightning fit")

    first = Module(case_id)
    t = trainer(tmp_path / "first", MID)
    t.fit(first, loader())
    ckpt = tmp_path / "mid.ckpt"
    t.save_checkpoint(ckpt)

    second = Module(case_id, seed=1)           # other weights: the checkpoint must bring them back
    t = trainer(tmp_path / "second", STEPS)
    t.fit(second, loader(), ckpt_path=str(ckpt))
    assert t.global_step == STEPS
    assert_same({"params": snapshot(second.net), "lrs": first.lrs + second.lrs}, expected, EXACT,
                f"Lightning resumed from the step-{MID} checkpoint")

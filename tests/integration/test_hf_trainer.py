"""Hugging Face Trainer with `optimizers=(optimizer, scheduler)` from optreg, on a one-layer GPT-2 built from a
config (nothing is downloaded): an uninterrupted run of STEPS steps that saves a checkpoint at MID, and a fresh
model, optimizer, scheduler and Trainer that resume from that checkpoint (`resume_from_checkpoint`) and go on to
STEPS. The resumed run equals the uninterrupted one bit for bit: the same batches in the same order (the Trainer
skips the ones already seen), the same gradient clipping, and the optimizer and scheduler state from
optimizer.pt / scheduler.pt.

A case without a scheduler gets optreg's `hf.constant` schedule (the Trainer would otherwise add its own linear
decay), of weight decay where the optimizer sets its lr per step itself."""

from __future__ import annotations

import pytest
import torch
import transformers

import optreg
from harness import CASES, EXACT, MID, STEPS, case_params

SEQ, VOCAB, ROWS, BATCH_ROWS = 8, 32, 16, 4


def tiny_gpt2(seed):
    torch.manual_seed(seed)
    config = transformers.GPT2Config(vocab_size=VOCAB, n_positions=SEQ, n_embd=16, n_layer=1, n_head=2,
                                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return transformers.GPT2LMHeadModel(config)


class Tokens(torch.utils.data.Dataset):
    def __init__(self):
        g = torch.Generator().manual_seed(7)
        self.ids = torch.randint(0, VOCAB, (ROWS, SEQ), generator=g)

    def __len__(self):
        return ROWS

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


class LearningRates(transformers.TrainerCallback):
    def __init__(self):
        self.lrs = []

    def on_optimizer_step(self, args, state, control, optimizer=None, **kwargs):
        self.lrs.append(float(optimizer.param_groups[0]["lr"]))


def run(case_id, out, seed, resume=None):
    model = tiny_gpt2(seed)
    case = CASES[case_id]
    opt, sched = case.build(model)
    if sched is None:   # an optimizer that sets its lr per step itself (MindSpore's dynamic lr) refuses a scheduler of
        # lr: the Trainer's required scheduler then holds another key
        dynamic = any(opt.lr_schedule(i) is not None for i in range(len(opt.param_groups))) \
            if hasattr(opt, "lr_schedule") else False
        spec = {"name": "hf.constant", **({"key": "weight_decay"} if dynamic else {})}
        sched = optreg.configure_lr_scheduler(opt, spec)
    args = transformers.TrainingArguments(
        output_dir=str(out), max_steps=STEPS, per_device_train_batch_size=BATCH_ROWS, save_strategy="steps",
        save_steps=MID, logging_strategy="no", report_to=[], use_cpu=True, seed=0, disable_tqdm=True,
        dataloader_num_workers=0)
    lrs = LearningRates()
    trainer = transformers.Trainer(model=model, args=args, train_dataset=Tokens(), optimizers=(opt, sched),
                                   callbacks=[lrs])
    trainer.train(resume_from_checkpoint=resume)
    assert trainer.state.global_step == STEPS
    return {n: p.detach().clone() for n, p in model.named_parameters()}, lrs.lrs


@pytest.mark.parametrize("case_id", case_params())
def test_hf_trainer_resume_from_checkpoint(case_id, tmp_path):
    whole, whole_lrs = run(case_id, tmp_path / "whole", seed=0)
    checkpoint = tmp_path / "whole" / f"checkpoint-{MID}"
    assert (checkpoint / "optimizer.pt").exists() and (checkpoint / "scheduler.pt").exists()
    resumed, resumed_lrs = run(case_id, tmp_path / "resumed", seed=1, resume=str(checkpoint))
    assert len(whole_lrs) == STEPS and resumed_lrs == whole_lrs[MID:], (whole_lrs, resumed_lrs)
    assert whole.keys() == resumed.keys()
    for name in whole:
        torch.testing.assert_close(resumed[name], whole[name], **EXACT, msg=lambda m, n=name: f"{n}: {m}")
    moved = tiny_gpt2(0).state_dict()["transformer.h.0.mlp.c_fc.weight"]
    assert not torch.equal(moved, whole["transformer.h.0.mlp.c_fc.weight"]), "the run did not train"

"""The Hugging Face Trainer with a composite optimizer (Muon for GPT-2's matrices, AdamW for its embeddings and
1-D parameters) and its scheduler: a run resumed from the checkpoint of step MID (optimizer.pt, scheduler.pt)
equals the uninterrupted run bit for bit."""

from __future__ import annotations

import torch
import transformers

import optreg
from test_hf_trainer import BATCH_ROWS, Tokens, tiny_gpt2

STEPS, MID = 6, 3
CONFIG = {
    "optimizer": {
        "name": "Muon", "lr": 0.02,
        "param_groups": [
            {"max_ndim": 1, "optimizer": {"name": "AdamW", "lr": 1e-3, "betas": [0.9, 0.95]}},
            {"params": ["transformer.wte.*", "transformer.wpe.*"], "optimizer": {"name": "AdamW", "lr": 1e-3}},
        ],
    },
    "scheduler": {"name": "CosineAnnealingLR", "T_max": STEPS},
}


def run(out, resume=None):
    model = tiny_gpt2(0)
    built = optreg.build(CONFIG, model)
    args = transformers.TrainingArguments(
        output_dir=str(out), max_steps=STEPS, per_device_train_batch_size=BATCH_ROWS, save_strategy="steps",
        save_steps=MID, logging_strategy="no", report_to=[], use_cpu=True, seed=0, disable_tqdm=True,
        dataloader_num_workers=0)
    trainer = transformers.Trainer(model=model, args=args, train_dataset=Tokens(),
                                   optimizers=(built.optimizer, built.scheduler))
    trainer.train(resume_from_checkpoint=resume)
    assert trainer.state.global_step == STEPS
    return {n: p.detach().clone() for n, p in model.named_parameters()}, built


def test_hf_trainer_runs_and_resumes_a_composite(tmp_path):
    straight, built = run(tmp_path / "a")
    assert [g["optimizer"] for g in built.optimizer.param_groups] == ["torch.AdamW", "torch.AdamW", "torch.Muon"]
    assert not torch.equal(straight["transformer.h.0.attn.c_attn.weight"],
                           tiny_gpt2(0).transformer.h[0].attn.c_attn.weight)
    resumed, _ = run(tmp_path / "b", resume=str(tmp_path / "a" / f"checkpoint-{MID}"))
    for name, value in straight.items():
        assert torch.equal(value, resumed[name]), name

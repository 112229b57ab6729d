"""The Adam family: OneFlow Adam/AdamW, Cerebras Adam/AdamW/Adamax/NAdam/RAdam, MindSpore Adam/LazyAdam/
AdamOffload/AdamWeightDecay."""

from optim_cases import Case

CASES = [
    Case("oneflow.Adam", {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.003}),
    Case("oneflow.Adam", {"lr": 0.01, "amsgrad": True}, {"weight_decay": 0.05}, id="amsgrad"),
    Case("oneflow.Adam", {"lr": 0.01, "do_bias_correction": False}, {"lr": 0.003}, id="no-bias-correction"),
    Case("oneflow.AdamW", {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.003}),
    Case("oneflow.AdamW", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}, {"weight_decay": 0.0}, id="amsgrad"),
    Case("oneflow.Adam", {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.003}, sparse=True, id="sparse"),
    Case("oneflow.AdamW", {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.003}, sparse=True, id="sparse"),
    Case("cerebras.Adam", {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.003}),
    # a group's own weight_decay is ignored by cerebras.Adam (as Cerebras does): the group changes betas instead
    Case("cerebras.Adam", {"lr": 0.01, "amsgrad": True}, {"betas": (0.8, 0.99)}, id="amsgrad"),
    Case("cerebras.AdamW", {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.003}),
    Case("cerebras.AdamW", {"lr": 0.01, "weight_decay": 0.1, "correct_bias": False}, {"lr": 0.003},
         id="no-bias-correction"),
    Case("cerebras.AdamW", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}, {"weight_decay": 0.3}, id="amsgrad"),
    Case("cerebras.Adamax", {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.003}),
    Case("cerebras.NAdam", {"lr": 0.01, "weight_decay": 0.1}, {"momentum_decay": 0.01}),
    Case("cerebras.RAdam", {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.003}),
    Case("mindspore.Adam", {"learning_rate": 0.01, "weight_decay": 0.1, "loss_scale": 2.0}, {"lr": 0.003}),
    Case("mindspore.Adam", {"learning_rate": 0.01, "use_nesterov": True},
         {"grad_centralization": True, "weight_decay": 0.05}, id="nesterov-gc"),
    Case("mindspore.LazyAdam", {"learning_rate": 0.01, "weight_decay": 0.01}, {"lr": 0.003}),
    Case("mindspore.LazyAdam", {"learning_rate": 0.01}, {"lr": 0.003}, sparse=True, id="sparse"),
    Case("mindspore.AdamOffload", {"learning_rate": 0.01, "weight_decay": 0.1, "loss_scale": 2.0}, {"lr": 0.003}),
    Case("mindspore.AdamWeightDecay", {"learning_rate": 0.01, "weight_decay": 0.1}, {"weight_decay": 0.0}),
]

"""Cases of the Adagrad, ProximalAdagrad, RMSprop and FTRL entries (OneFlow, Cerebras, MindSpore)."""

from optim_cases import Case

CASES = [
    Case("oneflow.Adagrad", {"lr": 0.05, "lr_decay": 0.01, "weight_decay": 0.01}, {"lr": 0.02}),
    Case("oneflow.RMSprop", {"lr": 0.01, "weight_decay": 0.01}, {"lr": 0.003}),
    Case("oneflow.RMSprop", {"lr": 0.01, "centered": True}, {"lr": 0.003, "alpha": 0.9}, id="centered"),
    Case("cerebras.Adagrad", {"lr": 0.05, "lr_decay": 0.01, "weight_decay": 0.01, "initial_accumulator_value": 0.1},
         {"lr": 0.02}),
    Case("cerebras.RMSprop", {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.01}, {"lr": 0.003}),
    Case("cerebras.RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}, {"lr": 0.003}, id="centered"),
    Case("mindspore.Adagrad", {"learning_rate": 0.05, "weight_decay": 0.01, "loss_scale": 2.0},
         {"learning_rate": 0.02}),
    Case("mindspore.Adagrad", {"learning_rate": 0.05, "accum": 0.5, "update_slots": False}, {"learning_rate": 0.02},
         id="no_update_slots"),
    Case("mindspore.ProximalAdagrad", {"learning_rate": 0.05, "l1": 0.001, "l2": 0.01, "weight_decay": 0.01},
         {"learning_rate": 0.02}),
    Case("mindspore.RMSProp", {"learning_rate": 0.01, "momentum": 0.9, "weight_decay": 0.01, "loss_scale": 2.0},
         {"learning_rate": 0.003}),
    Case("mindspore.RMSProp", {"learning_rate": 0.01, "centered": True}, {"learning_rate": 0.003}, id="centered"),
    Case("mindspore.FTRL", {"learning_rate": 0.05, "l1": 0.001, "l2": 0.001, "weight_decay": 0.01},
         {"weight_decay": 0.0}),
    Case("mindspore.FTRL", {"learning_rate": 0.05, "l1": 0.001, "weight_decay": 0.01}, {"weight_decay": 0.0}, sparse=True,
         id="sparse"),
]

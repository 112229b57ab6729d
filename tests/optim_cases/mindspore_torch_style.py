"""MindSpore 2.10: the torch-style mindspore.experimental.optim and mindspore.mint.optim, and mindspore.nn ASGD, Rprop,
AdaMax, Adadelta."""

from optim_cases import Case

E, M = "mindspore_experimental", "mindspore_mint"

CASES = [
    Case(f"{E}.Adam", {"lr": 0.01, "weight_decay": 0.1, "maximize": False}, {"lr": 0.003}),
    Case(f"{E}.Adam", {"lr": 0.01, "amsgrad": True}, {"lr": 0.003}, id="amsgrad-ignored"),
    Case(f"{E}.AdamW", {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.003}),
    Case(f"{E}.SGD", {"lr": 0.05, "momentum": 0.9, "weight_decay": 0.01}, {"lr": 0.01}),
    Case(f"{E}.Adadelta", {"lr": 1.0, "weight_decay": 0.1}, {"rho": 0.8}),
    Case(f"{E}.Adagrad", {"lr": 0.05, "lr_decay": 0.01}, {"weight_decay": 0.1}),
    Case(f"{E}.Adamax", {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.003}),
    Case(f"{E}.ASGD", {"lr": 0.05, "t0": 2.0}, {"weight_decay": 0.1}),
    Case(f"{E}.NAdam", {"lr": 0.01, "weight_decay": 0.1}, {"momentum_decay": 0.01}),
    Case(f"{E}.RAdam", {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.003}),
    Case(f"{E}.RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}, {"weight_decay": 0.1}),
    Case(f"{E}.Rprop", {"lr": 0.01}, {"lr": 0.003}),
    Case(f"{M}.Adam", {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.003}),
    Case(f"{M}.AdamW", {"lr": 0.01}, {"weight_decay": 0.0}),
    Case(f"{M}.FusedAdamW", {"lr": 0.01}, {"weight_decay": 0.0}),
    Case(f"{M}.SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}, {"lr": 0.01}),
]

# mindspore.nn 2.10's ASGD, Rprop, AdaMax, Adadelta: MindSpore's signatures and gradient pipeline
CASES += [
    Case("mindspore.ASGD", {"learning_rate": 0.05, "t0": 2.0, "weight_decay": 0.1}, {"lr": 0.01}),
    Case("mindspore.Rprop", {"learning_rate": 0.01, "weight_decay": 0.1}, {"lr": 0.003}),
    Case("mindspore.AdaMax", {"learning_rate": 0.01, "weight_decay": 0.1, "loss_scale": 2.0}, {"lr": 0.003}),
    Case("mindspore.Adadelta", {"learning_rate": 1.0, "weight_decay": 0.1}, {"lr": 0.3}),
]

"""Cases of the SGD family: SGD / Momentum (momentum buffer started at zero or at the first gradient,
dampening, Nesterov, OneFlow's maximize), Cerebras' ASGD, Adadelta, Rprop and Lion, DeepSpeed's Lion kernels,
OneFlow's Adadelta."""

from optim_cases import Case

from optreg.reference import lion

CASES = [
    Case("oneflow.SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}, {"lr": 0.01}),
    Case("oneflow.SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}, {"lr": 0.01, "momentum": 0.5},
         id="nesterov"),
    Case("oneflow.SGD", {"lr": 0.05, "momentum": 0.9, "weight_decay": 0.01, "maximize": True}, {"lr": 0.01},
         id="maximize_flips_update"),
    Case("oneflow.SGD", {"lr": 0.05}, {"lr": 0.01, "weight_decay": 0.1}, id="plain"),
    Case("oneflow.SGD", {"lr": 0.05, "momentum": 0.9}, sparse=True, id="sparse"),
    Case("cerebras.SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}, {"lr": 0.01}),
    Case("cerebras.SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "maximize": True},
         {"lr": 0.01, "momentum": 0.5}, id="nesterov_maximize"),
    Case("cerebras.ASGD", {"lr": 0.05, "lambd": 1e-2, "t0": 2, "weight_decay": 0.01}, {"lr": 0.01, "alpha": 0.6}),
    Case("cerebras.ASGD", {"lr": 0.05, "maximize": True}, {"lr": 0.01}, id="maximize"),
    Case("cerebras.Adadelta", {"lr": 1.0, "rho": 0.8, "weight_decay": 0.01}, {"lr": 0.5, "eps": 1e-3}),
    Case("cerebras.Adadelta", {"lr": 0.5, "maximize": True}, {"lr": 0.3}, id="maximize"),
    Case("cerebras.Rprop", {"lr": 0.01}, {"lr": 0.003, "etas": (0.3, 1.5), "step_sizes": (1e-4, 0.02)}),
    Case("cerebras.Lion", {"lr": 0.01, "betas": (0.8, 0.95), "weight_decay": 0.1}, {"lr": 0.003, "weight_decay": 0.0},
         reference=lion.lion),
    Case("deepspeed.Lion", {"lr": 0.01, "betas": (0.8, 0.95), "weight_decay": 0.1}, {"lr": 0.003, "weight_decay": 0.0},
         reference=lion.deepspeed_lion),
    Case("deepspeed.FusedLion", {"lr": 0.01, "betas": (0.8, 0.95), "weight_decay": 0.1},
         {"lr": 0.003, "weight_decay": 0.0}, reference=lion.deepspeed_fused_lion),
    Case("oneflow.Adadelta", {"lr": 1.0, "rho": 0.8, "weight_decay": 0.01}, {"lr": 0.5, "eps": 1e-3}),
    Case("oneflow.Adadelta", {"lr": 0.5, "maximize": True}, {"lr": 0.3, "weight_decay": 0.05}, id="maximize"),
    Case("mindspore.Momentum", {"learning_rate": 0.05, "momentum": 0.9, "weight_decay": 0.01, "loss_scale": 8.0},
         {"lr": 0.01}),
    Case("mindspore.Momentum", {"learning_rate": [0.05, 0.04, 0.03, 0.02, 0.01, 0.01, 0.01, 0.01], "momentum": 0.9,
                                "use_nesterov": True}, {"grad_centralization": True, "weight_decay": 0.05},
         id="nesterov_gc_dynamic_lr"),
    Case("mindspore.SGD", {"learning_rate": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01,
                           "loss_scale": 4.0}, {"lr": 0.01}),
    Case("mindspore.SGD", {"learning_rate": 0.05, "momentum": 0.9, "nesterov": True}, {"lr": 0.01, "grad_centralization": True},
         id="nesterov_gc"),
    Case("mindspore.SGD", {"learning_rate": 0.05}, {"lr": 0.01, "weight_decay": 0.05}, id="plain"),
]

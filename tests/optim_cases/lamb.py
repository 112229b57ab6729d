"""Cases of the LAMB family: LAMB / Lamb (trust ratio), Adafactor (factored second moment), LARS (a wrapper), and
MindSpore's other wrappers (the AdaSum cells)."""

from optim_cases import Case

CASES = [
    Case("oneflow.LAMB", {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.003}),
    Case("oneflow.LAMB", {"lr": 0.01, "weight_decay": 0.1, "adam_w_mode": False}, {"lr": 0.003}, id="l2"),
    Case("oneflow.LAMB", {"lr": 0.01, "do_bias_correction": False}, {"lr": 0.003, "weight_decay": 0.05},
         id="no_bias_correction"),
    Case("cerebras.Lamb", {"lr": 0.01, "weight_decay": 0.1}, {"lr": 0.003}),
    Case("cerebras.Lamb", {"lr": 0.01, "weight_decay": 0.1, "adam": True}, {"lr": 0.003}, id="adam"),
    Case("mindspore.Lamb", {"learning_rate": 0.01, "weight_decay": 0.1}, {"lr": 0.003}),
    Case("mindspore.Lamb", {"learning_rate": 0.01}, {"grad_centralization": True, "weight_decay": 0.05}, id="gc"),
    Case("cerebras.Adafactor", {"lr": 0.01, "weight_decay": 0.01}, {"lr": 0.003}),
    Case("cerebras.Adafactor", {"lr": 0.01, "scale_parameter": False}, {"lr": 0.003}, id="unscaled"),
    Case("mindspore.AdaFactor", {}, {"weight_decay": 0.01}),
    Case("mindspore.AdaFactor", {"learning_rate": 0.01, "relative_step": False, "weight_decay": 0.01,
                                 "beta1": None}, {"lr": 0.003}, id="manual_lr_no_momentum"),
    Case("mindspore.AdaFactor", {"compression": True, "loss_scale": 8.0}, {"weight_decay": 0.5}, id="compression"),
    Case("mindspore.LARS", {"optimizer": {"name": "mindspore.Lamb", "learning_rate": 0.01, "weight_decay": 0.01},
                            "coefficient": 0.01, "lars_filter": []}),
    Case("mindspore.AdaSumByGradWrapCell", {"optimizer": {"name": "mindspore.Momentum", "learning_rate": 0.01,
                                                          "momentum": 0.9}}),
    Case("mindspore.AdaSumByDeltaWeightWrapCell", {"optimizer": {"name": "mindspore.Adam", "learning_rate": 0.01,
                                                                 "weight_decay": 0.01}}),
]

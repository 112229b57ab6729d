"""Cases of MindSpore THOR (second order: Kronecker-factored preconditioning of the Linear layers, then momentum).
THOR takes the model, not parameter groups: it has no group case."""

from optim_cases import Case

CASES = [
    Case("mindspore.thor", {"learning_rate": 0.05, "damping": 0.1, "momentum": 0.9, "weight_decay": 0.01,
                            "loss_scale": 4.0, "batch_size": 6, "frequency": 2}),
    Case("mindspore.thor", {"learning_rate": [0.05, 0.04, 0.03, 0.02, 0.01, 0.01, 0.01, 0.01],
                            "damping": [0.2, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05], "momentum": 0.9,
                            "use_nesterov": True, "enable_clip_grad": True, "decay_filter": ["*bias"],
                            "weight_decay": 0.01, "frequency": 3}, id="nesterov_clip_dynamic"),
]

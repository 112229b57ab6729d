"""Shared cases for the torch-dialect tests: one configuration per torch optimizer and scheduler."""

from __future__ import annotations

import copy
from typing import Any, Callable

import torch
from torch import nn

import optreg


class Net(nn.Module):
    """Small model with weight and bias tensors, so that name-based groups have something to split."""

    def __init__(self, bias: bool = True):
        super().__init__()
        self.fc1 = nn.Linear(5, 7, bias=bias)
        self.fc2 = nn.Linear(7, 3, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.tanh(self.fc1(x))).sum(-1)


class EmbeddingNet(nn.Module):
    """SparseAdam needs sparse gradients."""

    def __init__(self, bias: bool = True):
        super().__init__()
        self.emb = nn.Embedding(11, 4, sparse=True)
        self.out = nn.Embedding(11, 1, sparse=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (self.emb(x).sum(-1) * self.out(x).squeeze(-1)).sum(-1)


def batch(step: int, model: nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1000 + step)
    if isinstance(model, EmbeddingNet):
        return torch.randint(0, 11, (6, 3), generator=g), torch.randn(6, generator=g)
    return torch.randn(6, 5, generator=g), torch.randn(6, generator=g)


def make_model(kind: type = Net, bias: bool = True, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return kind(bias=bias)


# name -> (optimizer options, options of the "*.bias"/second group, model class, model has biases)
OPTIMIZER_CASES: dict[str, tuple[dict[str, Any], dict[str, Any] | None, type, bool]] = {
    "Adadelta": ({"lr": 0.5, "rho": 0.8, "weight_decay": 0.01}, {"lr": 0.1}, Net, True),
    "Adafactor": ({"lr": 0.02, "weight_decay": 0.01}, {"lr": 0.005}, Net, True),
    "Adagrad": ({"lr": 0.05, "lr_decay": 0.01, "initial_accumulator_value": 0.1}, {"lr": 0.01}, Net, True),
    "Adam": ({"lr": 0.01, "betas": [0.8, 0.99], "amsgrad": True, "weight_decay": 0.01}, {"lr": 0.001}, Net, True),
    "AdamW": ({"lr": 0.01, "betas": [0.9, 0.95], "weight_decay": 0.1}, {"weight_decay": 0.0}, Net, True),
    "Adamax": ({"lr": 0.01, "weight_decay": 0.01}, {"lr": 0.003}, Net, True),
    "ASGD": ({"lr": 0.05, "t0": 5, "lambd": 0.001}, {"lr": 0.01}, Net, True),
    "LBFGS": ({"lr": 0.5, "max_iter": 4, "history_size": 5}, None, Net, True),
    "Muon": ({"lr": 0.02, "momentum": 0.9, "weight_decay": 0.01}, None, Net, False),
    "NAdam": ({"lr": 0.01, "momentum_decay": 0.005}, {"lr": 0.002}, Net, True),
    "RAdam": ({"lr": 0.01, "decoupled_weight_decay": True, "weight_decay": 0.05}, {"lr": 0.002}, Net, True),
    "RMSprop": ({"lr": 0.01, "momentum": 0.5, "centered": True}, {"lr": 0.002}, Net, True),
    "Rprop": ({"lr": 0.01, "etas": [0.4, 1.3]}, {"lr": 0.002}, Net, True),
    "SGD": ({"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.001}, {"lr": 0.01}, Net, True),
    "SparseAdam": ({"lr": 0.05, "betas": [0.8, 0.9]}, {"lr": 0.01}, EmbeddingNet, True),
}


def torch_kwargs(options: dict[str, Any]) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}


def direct_optimizer(name: str, model: nn.Module):
    """The torch class constructed by hand, with the same groups that the config describes."""
    options, group_options, _, _ = OPTIMIZER_CASES[name]
    cls = getattr(torch.optim, name)
    if group_options is None:
        return cls(model.parameters(), **torch_kwargs(options))
    second = [p for n, p in model.named_parameters() if n.endswith(".bias") or n.startswith("out.")]
    first = [p for p in model.parameters() if all(p is not q for q in second)]
    return cls([{"params": second, **torch_kwargs(group_options)}, {"params": first}], **torch_kwargs(options))


def group_rules(name: str) -> list[dict[str, Any]]:
    _, group_options, kind, _ = OPTIMIZER_CASES[name]
    if group_options is None:
        return []
    return [{"params": "out.*" if kind is EmbeddingNet else "*.bias", **group_options}]


def registry_optimizer(name: str, model: nn.Module):
    options, _, _, _ = OPTIMIZER_CASES[name]
    return optreg.configure_optimizer(name, model, param_groups=group_rules(name), **options)


def yaml_text(name: str) -> str:
    import yaml

    options, _, _, _ = OPTIMIZER_CASES[name]
    section = {"name": name, **options}
    if group_rules(name):
        section["param_groups"] = group_rules(name)
    return yaml.safe_dump({"optimizer": section}, sort_keys=False)


def trajectory(model: nn.Module, optimizer: Any, steps: int, start: int = 0) -> list[list[torch.Tensor]]:
    """Parameters after each step, training on fixed batches (closure form, so LBFGS works too)."""
    out = []
    for step in range(start, start + steps):
        x, y = batch(step, model)

        def closure() -> torch.Tensor:
            optimizer.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            return loss

        optimizer.step(closure)
        out.append([p.detach().clone() for p in model.parameters()])
    return out


def same(a: list[list[torch.Tensor]], b: list[list[torch.Tensor]]) -> bool:
    return len(a) == len(b) and all(len(x) == len(y) and all(torch.equal(p, q) for p, q in zip(x, y))
                                    for x, y in zip(a, b))


def clone_model(model: nn.Module) -> nn.Module:
    return copy.deepcopy(model)


# name -> (scheduler options, optimizer factory); values chosen to exercise each schedule's shape.
def _sgd(model: nn.Module) -> Any:
    return torch.optim.SGD([{"params": [model.fc1.weight]}, {"params": [model.fc2.weight], "lr": 0.05}],
                           lr=0.1, momentum=0.9)


SCHEDULER_CASES: dict[str, dict[str, Any]] = {
    "LambdaLR": {"lr_lambda": "0.95 ** step"},
    "MultiplicativeLR": {"lr_lambda": "0.99 if step < 100 else 1.01"},
    "StepLR": {"step_size": 30, "gamma": 0.5},
    "MultiStepLR": {"milestones": [50, 120, 250], "gamma": 0.3},
    "ConstantLR": {"factor": 0.25, "total_iters": 40},
    "LinearLR": {"start_factor": 0.05, "end_factor": 0.9, "total_iters": 80},
    "ExponentialLR": {"gamma": 0.99},
    "PolynomialLR": {"total_iters": 200, "power": 2.0},
    "CosineAnnealingLR": {"T_max": 100, "eta_min": 0.001},
    "CosineAnnealingWarmRestarts": {"T_0": 20, "T_mult": 2, "eta_min": 0.0001},
    "CyclicLR": {"base_lr": 0.01, "max_lr": [0.1, 0.2], "step_size_up": 25, "mode": "triangular2"},
    "OneCycleLR": {"max_lr": 0.3, "total_steps": 301, "pct_start": 0.25, "three_phase": True},
    "ReduceLROnPlateau": {"mode": "min", "factor": 0.5, "patience": 3, "threshold": 0.01},
    "SequentialLR": {"schedulers": [{"name": "LinearLR", "start_factor": 0.1, "total_iters": 20},
                                    {"name": "CosineAnnealingLR", "T_max": 280}]},
    "ChainedScheduler": {"schedulers": [{"name": "ConstantLR", "factor": 0.5, "total_iters": 10},
                                        {"name": "ExponentialLR", "gamma": 0.98}]},
}


def direct_scheduler(name: str, optimizer: Any):
    s = torch.optim.lr_scheduler
    options = SCHEDULER_CASES[name]
    if name == "LambdaLR":
        return s.LambdaLR(optimizer, lambda step: 0.95 ** step)
    if name == "MultiplicativeLR":
        return s.MultiplicativeLR(optimizer, lambda step: 0.99 if step < 100 else 1.01)
    if name == "SequentialLR":
        return s.SequentialLR(optimizer, [s.LinearLR(optimizer, 0.1, total_iters=20),
                                          s.CosineAnnealingLR(optimizer, T_max=280)], milestones=[20])
    if name == "ChainedScheduler":
        return s.ChainedScheduler([s.ConstantLR(optimizer, 0.5, 10), s.ExponentialLR(optimizer, 0.98)],
                                  optimizer=optimizer)
    return getattr(s, name)(optimizer, **options)


def metric(step: int) -> float:
    """A loss curve that plateaus, for ReduceLROnPlateau."""
    return 1.0 / (1 + step) if step < 60 else 1.0 / 61 + 0.001 * ((step * 7) % 5)


def lr_sequence(scheduler: Any, optimizer: Any, steps: int, start: int = 0) -> list[tuple[float, ...]]:
    out = []
    for step in range(start, start + steps):
        optimizer.step()
        if isinstance(scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
            scheduler.step(metric(step))
        else:
            scheduler.step()
        out.append(tuple(g["lr"] for g in optimizer.param_groups) +
                   tuple(g.get("momentum", 0.0) for g in optimizer.param_groups))
    return out


def group_lrs(spec: Any, steps: int) -> list[float]:
    """The lr a one-group SGD holds at steps 0..steps-1 under the scheduler that `spec` configures."""
    import optreg

    opt = torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=1.0)
    sched = optreg.configure_lr_scheduler(opt, spec)
    out = [opt.param_groups[0]["lr"]]
    for _ in range(steps - 1):
        opt.step()
        sched.step()
        out.append(opt.param_groups[0]["lr"])
    return out


make_sgd: Callable[[nn.Module], Any] = _sgd

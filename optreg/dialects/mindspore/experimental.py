"""MindSpore 2.10's torch-style optimizers and schedulers: the sub-dialects `mindspore_experimental`
(mindspore.experimental.optim, r2.3 on, with its lr_scheduler) and `mindspore_mint` (mindspore.mint.optim).

Their names are torch's and so are their algorithms, measured on MindSpore 2.10 CPU
(tests/fixtures/mindspore_experimental), with one exception: experimental Adam runs MindSpore's ApplyAdam
kernel, the eps-hat form of nn.Adam, with its amsgrad ignored. So every row but that one builds torch's own
class, under MindSpore's signature (torch's foreach / fused / capturable / differentiable switches hidden) and
class path; `mindspore.Adam` and `mindspore_adam` stay nn.Adam. The rows are torch's rows re-labelled, so a
type or rule is written once; experimental Adam's class is in experimental_adam.py (reading rows imports no torch).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable


EXPERIMENTAL = "mindspore_experimental"
MINT = "mindspore_mint"
SOURCE = {EXPERIMENTAL: "MindSpore 2.10 mindspore.experimental.optim", MINT: "MindSpore 2.10 mindspore.mint.optim"}
#: torch switches with no MindSpore counterpart: hidden, so they keep torch's defaults
TORCH_ONLY = ("foreach", "capturable", "differentiable", "fused", "decoupled_weight_decay")


def _optimizer_rows(dialect: str, names: Iterable[str], notes: dict[str, tuple[str, ...]]) -> list[Any]:
    """torch's rows of `names` under `dialect`: the framework's class path and source, torch-only switches hidden."""
    from optreg.dialects.torch import OPTIMIZERS

    by_name = {row.name: row for row in OPTIMIZERS}
    module = "mindspore.experimental.optim" if dialect == EXPERIMENTAL else "mindspore.mint.optim"
    out = []
    for name in names:
        torch_name = "AdamW" if name == "FusedAdamW" else name
        row = by_name[torch_name]
        out.append(replace(row, dialect=dialect, name=name, class_path=f"{module}.{name}",
                           source=f"{SOURCE[dialect]}.{name}", hidden=(*row.hidden, *TORCH_ONLY),
                           rules=tuple(r for r in row.rules if not set(r.fields) & set(TORCH_ONLY)),
                           notes=(*notes.get(name, ()), f"Builds torch.optim.{torch_name}: MindSpore's {name} is its "
                                                        f"algorithm (float32 rounding aside).", *row.notes)))
    return out


def _scheduler_rows() -> list[Any]:
    """torch's lr schedulers under mindspore.experimental.optim.lr_scheduler (2.10 has no ChainedScheduler nor
    OneCycleLR); MindSpore's CyclicLR cycles no momentum."""
    from optreg.dialects.torch import SCHEDULERS

    names = ("StepLR", "LinearLR", "ExponentialLR", "PolynomialLR", "MultiplicativeLR", "ConstantLR", "MultiStepLR",
             "LambdaLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "CyclicLR", "SequentialLR",
             "ReduceLROnPlateau")
    by_name = {row.name: row for row in SCHEDULERS}
    out = []
    for name in names:
        row = by_name[name]
        extra: dict[str, Any] = {}
        if name == "CyclicLR":
            extra = dict(fixed={"cycle_momentum": False}, hidden=("cycle_momentum", "base_momentum", "max_momentum"),
                         notes=("No momentum cycling (MindSpore's CyclicLR has none): cycle_momentum is False.",
                                *row.notes))
        out.append(replace(row, dialect=EXPERIMENTAL, class_path=f"mindspore.experimental.optim.lr_scheduler.{name}",
                           source=f"{SOURCE[EXPERIMENTAL]}.lr_scheduler.{name}",
                           **{"notes": (f"Builds torch.optim.lr_scheduler.{name}: MindSpore's is its algorithm.",
                                        *row.notes), **extra}))
    return out


ADAM_ROW_NOTES = (
    "The ApplyAdam kernel (nn.Adam's eps-hat form): eps is added to √v, not to √v̂ as in torch.optim.Adam and "
    "mindspore.mint.optim.Adam; on MindSpore 2.10 CPU this is the 2e-5-of-the-movement difference from torch "
    "(unit gradients; 5e-3 with gradients of 1e-3).",
    "amsgrad is accepted and ignored, as MindSpore 2.10 does (the constructor allocates max_exp_avg_sq; construct "
    "always calls the plain kernel).",
    "One optimizer-wide step (state_step), as MindSpore counts.",
)


def experimental_rows() -> list[Any]:
    from optreg.core.entry import optimizer

    adam = optimizer(EXPERIMENTAL, "Adam", "optreg.dialects.mindspore.experimental_adam:ExperimentalAdam",
                     "Adam as MindSpore's ApplyAdam: w -= lr·√(1-β2ᵗ)/(1-β1ᵗ)·m/(√v + eps), L2 weight decay.",
                     class_path="mindspore.experimental.optim.Adam", source=f"{SOURCE[EXPERIMENTAL]}.Adam",
                     notes=ADAM_ROW_NOTES)
    others = _optimizer_rows(EXPERIMENTAL, ("AdamW", "SGD", "Adadelta", "Adagrad", "Adamax", "ASGD", "NAdam", "RAdam",
                                            "RMSprop", "Rprop"),
                             {"SGD": ("lr has no default in MindSpore; optreg keeps torch's (1e-3).",),
                              "ASGD": ("t0 must be a float in MindSpore (an int raises TypeError).",)})
    return [adam, *others, *_scheduler_rows()]


def mint_rows() -> list[Any]:
    return _optimizer_rows(MINT, ("Adam", "AdamW", "FusedAdamW", "SGD"), {
        "Adam": ("torch's Adam (eps added to √v̂; the experimental Adam adds it to √v), with one optimizer-wide "
                 "step. Not recorded: on MindSpore 2.10 CPU its step leaves the weights unchanged.",),
        "AdamW": ("Not recorded: MindSpore 2.10 has no CPU kernel for it (\"The kernel AdamW unregistered\"); its "
                  "documented formula and source are torch's AdamW.",),
        "FusedAdamW": ("AdamW in one fused kernel: the same numbers as AdamW. Not recorded: it fails on MindSpore "
                       "2.10 CPU (InplaceCopy).",),
        "SGD": ("lr has no default in MindSpore; optreg keeps torch's (1e-3). Not recorded: on MindSpore 2.10 CPU "
                "its step leaves the weights unchanged.",),
    })

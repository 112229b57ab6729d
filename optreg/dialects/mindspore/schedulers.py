"""The mindspore dialect's schedules: nn.learning_rate_schedule cells and the nn.dynamic_lr lists.

Absolute-valued. Types follow MindSpore's validators: a float option given as an int is a TypeError
there, and a ConfigError here. The dynamic-lr functions are registered under their own names
(`cosine_decay_lr`, with the alias `dynamic_cosine_decay_lr`) and the cells under theirs
(`CosineDecayLR`): each is found by its own spelling; `cosine_decay`, which fits both once case, `_`
and the LR suffix are ignored, is ambiguous (see optreg.core.registry).
"""

from __future__ import annotations

from typing import Any

from optreg.core.entry import Rule, scheduler
from optreg.core.types import Bool, PosInt, StrictFloat, StrictNonNegFloat, StrictPosFloat, integer

SRC = "MindSpore 2.x mindspore.nn"
MOD = "optreg.dialects.mindspore.schedules"
F32 = "MindSpore evaluates the cells in float32; optreg uses float64."
LIST = ("The list is read at min(step, len - 1): past its end the last value holds (MindSpore's optimizer "
        "would gather past the end of its lr tensor).", "Epoch-granular: epoch = ⌊step/step_per_epoch⌋.")

# The dynamic-lr functions materialise their list, as MindSpore's do: bounded so that a typo cannot
# allocate gigabytes (use the schedule classes, e.g. CosineDecayLR, for longer runs).
MAX_LIST = 1 << 22
TotalStep = integer(ge=1, le=MAX_LIST)

DECAY = {"learning_rate": StrictPosFloat, "decay_rate": StrictPosFloat, "decay_steps": PosInt, "is_stair": Bool}
DYN = {"learning_rate": StrictPosFloat, "decay_rate": StrictPosFloat, "total_step": TotalStep, "step_per_epoch": PosInt,
       "decay_epoch": PosInt, "is_stair": Bool}
MIN_BELOW_MAX = Rule("max_lr", ("min_lr", "max_lr"), lambda lo, hi: lo < hi, "must be greater than min_lr")


def _row(name: str, target: str, doc: str, notes: tuple[str, ...] = (), **kw: Any):
    return scheduler("mindspore", name, f"{MOD}:{target}", doc, source=SRC, values="absolute", notes=notes, **kw)


def _fn(name: str, target: str, doc: str, **kw: Any):
    """A dynamic-lr function (mindspore.nn.<name>, same signature): its per-step list as a schedule; the
    earlier name `dynamic_<name>` stays an alias."""
    return _row(name, target, doc, aliases=(f"dynamic_{name}",), **kw)


ROWS = [
    _row("ExponentialDecayLR", "ExponentialDecayLR", "lr·decay_rate^(t/decay_steps) (floored with is_stair).",
         types=DECAY, notes=(F32,)),
    _row("NaturalExpDecayLR", "NaturalExpDecayLR", "lr·e^(-decay_rate·t) (t → ⌊t/D⌋·D with is_stair).",
         types=DECAY,
         notes=("MindSpore documents p = t/decay_steps, but NaturalExpDecayLR.construct() uses p = t (and "
                "⌊t/D⌋·D with is_stair): the implemented behaviour is reproduced; this is a MindSpore bug.", F32)),
    _row("InverseDecayLR", "InverseDecayLR", "lr/(1 + decay_rate·t/decay_steps) (floored with is_stair).",
         types=DECAY, notes=(F32,)),
    _row("CosineDecayLR", "CosineDecayLR", "min_lr + ½(max_lr - min_lr)(1 + cos(π·min(t, D)/D)).",
         length="decay_steps", types={"min_lr": StrictNonNegFloat, "max_lr": StrictPosFloat, "decay_steps": PosInt},
         rules=(MIN_BELOW_MAX,), notes=(F32,)),
    _row("PolynomialDecayLR", "PolynomialDecayLR",
         "(lr - end)(1 - t'/D')^power + end; t' = min(t, D) or, with update_decay_steps, D' = D·max(⌈t/D⌉, 1).",
         length="decay_steps",
         types={"learning_rate": StrictPosFloat, "end_learning_rate": StrictNonNegFloat, "decay_steps": PosInt,
                "power": StrictPosFloat, "update_decay_steps": Bool}, notes=(F32,)),
    _row("WarmUpLR", "WarmUpLR", "lr·min(t, W)/W: 0 at step 0, lr from step W on.", length="warmup_steps",
         types={"learning_rate": StrictNonNegFloat, "warmup_steps": PosInt}, notes=(F32,)),
    # nn.dynamic_lr (mindspore.nn.exponential_decay_lr, ...)
    _fn("piecewise_constant_lr", "DynamicPiecewiseConstantLR",
        "piecewise_constant_lr(milestone, learning_rates): learning_rates[k] on [M_{k-1}, M_k).", length=None,
        types={"milestone": list[PosInt], "learning_rates": list[StrictFloat]},
        rules=(Rule("learning_rates", ("milestone", "learning_rates"), lambda m, v: len(m) == len(v),
                    "expected one learning rate per milestone"),
               Rule("milestone", ("milestone",), lambda m: all(b >= a for a, b in zip(m, m[1:])),
                    "must be increasing")),
        notes=LIST[:1]),
    _fn("exponential_decay_lr", "DynamicExponentialDecayLR",
        "exponential_decay_lr: lr·decay_rate^(epoch/decay_epoch) per step.", length="total_step", types=DYN,
        notes=LIST),
    _fn("natural_exp_decay_lr", "DynamicNaturalExpDecayLR",
        "natural_exp_decay_lr: lr·e^(-decay_rate·epoch) (epoch → ⌊epoch/decay_epoch⌋·decay_epoch with is_stair).",
        length="total_step", types=DYN, notes=LIST),
    _fn("inverse_decay_lr", "DynamicInverseDecayLR",
        "inverse_decay_lr: lr/(1 + decay_rate·epoch/decay_epoch).", length="total_step", types=DYN, notes=LIST),
    _fn("cosine_decay_lr", "DynamicCosineDecayLR",
        "cosine_decay_lr: min_lr + ½(max_lr - min_lr)(1 + cos(π·min(epoch, decay_epoch)/decay_epoch)).",
        length="total_step",
        types={"min_lr": StrictNonNegFloat, "max_lr": StrictPosFloat, "total_step": TotalStep,
               "step_per_epoch": PosInt, "decay_epoch": PosInt},
        rules=(MIN_BELOW_MAX,), notes=LIST),
    _fn("polynomial_decay_lr", "DynamicPolynomialDecayLR",
        "polynomial_decay_lr: (lr - end)(1 - e'/D')^power + end per step.", length="total_step",
        types={"learning_rate": StrictPosFloat, "end_learning_rate": StrictNonNegFloat, "total_step": TotalStep,
               "step_per_epoch": PosInt, "decay_epoch": PosInt, "power": StrictPosFloat,
               "update_decay_epoch": Bool}, notes=LIST),
    _fn("warmup_lr", "DynamicWarmupLR", "warmup_lr: lr·min(epoch, warmup_epoch)/warmup_epoch.",
        length="total_step",
        types={"learning_rate": StrictNonNegFloat, "total_step": TotalStep, "step_per_epoch": PosInt,
               "warmup_epoch": PosInt}, notes=LIST),
]

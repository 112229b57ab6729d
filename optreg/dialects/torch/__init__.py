"""The torch dialect: every optimizer in `torch.optim` and scheduler in `torch.optim.lr_scheduler`, and
`torch.optim.swa_utils.SWALR`.

These rows build the real torch classes; their names, defaults and signatures come from torch itself.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from optreg.core.dialect import Dialect
from optreg.core.entry import Rule, optimizer, scheduler
from optreg.core.types import ASGDAlpha, IncreasingInts, NonNegFloat, NonNegInt, StepFn, number

SRC = "torch 2.13 torch.optim"
SCHED = "torch 2.13 torch.optim.lr_scheduler"

# -- shared rules --------------------------------------------------------------------------------
NESTEROV = Rule("nesterov", ("nesterov", "momentum", "dampening"), lambda n, m, d: not n or (m > 0 and d == 0),
                "nesterov requires momentum > 0 and dampening = 0")


def _opt(name: str, doc: str, **kw: Any):
    return optimizer("torch", name, f"torch.optim:{name}", doc, source=SRC, **kw)


def _sched(name: str, doc: str, **kw: Any):
    return scheduler("torch", name, f"torch.optim.lr_scheduler:{name}", doc, source=SCHED,
                     values=kw.pop("values", "factor"), **kw)


def _is_whole_2d(tensor: Any) -> bool:
    """A 2-D parameter held whole: not a shard of an FSDP2 DTensor (torch 2.13's Muon orthogonalises the local
    shard as if it were the matrix: 2% off the single-process result in tests/integration/test_fsdp2.py)."""
    if tensor.ndim != 2:
        return False
    placements = getattr(tensor, "placements", None)   # a DTensor's
    return not placements or not any(p.is_shard() for p in placements)


# torch computes (1 + λ·lr·t)^α in Python floats: with λ, lr <= 1e9 and t <= 2^53 it stays finite for α <= 8

OPTIMIZERS = [
    _opt("Adadelta", "Adadelta: v = ρv + (1-ρ)g², Δ = √(u+ε)/√(v+ε)·g, u = ρu + (1-ρ)Δ², w -= lr·Δ."),
    _opt("Adafactor", "Adafactor (factored second moment, β2_t = 1 - t^beta2_decay, relative step size d).",
         types={"eps": tuple[Optional[NonNegFloat], NonNegFloat],
                "beta2_decay": number(le=0),
                "d": number(ge=1)}),
    _opt("Adagrad", "Adagrad: s += g², w -= lr/(1+(t-1)·lr_decay) · g/(√s+ε)."),
    _opt("Adam", "Adam: m̂/(√v̂+ε) with bias-corrected moments; L2 decay (or decoupled)."),
    _opt("AdamW", "AdamW: Adam with decoupled weight decay w -= lr·λ·w."),
    _opt("Adamax", "Adamax: u = max(β2·u, |g|+ε), w -= lr/(1-β1^t) · m/u."),
    _opt("ASGD", "Averaged SGD: w -= η·g with η = lr/(1+λ·lr·t)^α and a running average of w.",
         types={"alpha": ASGDAlpha}),
    _opt("LBFGS", "L-BFGS quasi-Newton (needs a closure; one parameter group).", single_group=True,
         rules=(Rule("lr", ("lr", "line_search_fn"), lambda lr, search: lr > 0,
                     "must be > 0 with line_search_fn='strong_wolfe' (its interpolation divides by the step)"),)),
    _opt("Muon", "Muon: momentum, then Newton-Schulz orthogonalisation of 2-D updates.",
         accepts=(_is_whole_2d, "Muon updates only 2-D parameters, held whole (not a shard of an FSDP2 "
                                "DTensor: it would orthogonalise the shard)")),
    _opt("NAdam", "NAdam: Adam with Nesterov momentum and the μ_t momentum-decay schedule."),
    _opt("RAdam", "RAdam: Adam with variance rectification (SGD with momentum while ρ_t ≤ 5)."),
    _opt("RMSprop", "RMSprop: v = αv + (1-α)g², w -= lr·g/(√v+ε) (centered and momentum optional)."),
    _opt("Rprop", "Rprop: per-element step sizes grow by η+ on sign agreement, shrink by η- otherwise.",
         rules=(Rule("etas", ("etas",), lambda e: 0 < e[0] < 1 < e[1], "must satisfy 0 < etaminus < 1 < etaplus"),
                Rule("step_sizes", ("step_sizes",), lambda s: s[0] <= s[1], "min step size must be <= max"))),
    _opt("SGD", "SGD with momentum: b = μb + (1-τ)g, w -= lr·(g + μb if nesterov else b).",
         rules=(NESTEROV,)),
    _opt("SparseAdam", "Adam for sparse gradients (nn.Embedding(sparse=True)): only touched rows update."),
]

SCHEDULERS = [
    _sched("LambdaLR", "lr = base_lr · λ(t).", types={"lr_lambda": StepFn}),
    _sched("MultiplicativeLR", "lr_t = lr_{t-1} · λ(t).", types={"lr_lambda": StepFn}),
    _sched("StepLR", "lr = base_lr · γ^⌊t/step_size⌋.",
           notes=("Periodic, so it has no length: inside a sequential give milestones.",)),
    _sched("MultiStepLR", "lr = base_lr · γ^(number of milestones ≤ t).", types={"milestones": IncreasingInts}),
    _sched("ConstantLR", "lr = base_lr · (factor if t < total_iters else 1).", length="total_iters",
           rules=(Rule("factor", ("factor",), lambda f: f != 0, "must be > 0: torch's ConstantLR divides the lr by "
                       "factor when the constant phase ends (a ZeroDivisionError at step total_iters)"),),
           notes=("factor 0 is refused: torch 2.13 accepts it, then divides by it at step total_iters "
                  "(ZeroDivisionError).", "total_iters 0 is accepted, as torch 2.13 accepts it: the lr is "
                  "base_lr·factor at every step (torch's recursion never undoes it)."),
           homonyms=("hf.constant",)),
    _sched("LinearLR", "lr = base_lr · (s + (e-s)·min(t,T)/T).", length="total_iters",
           types={"start_factor": number(gt=0, le=1)},
           notes=("total_iters 0 is accepted, as torch 2.13 accepts it: the lr is base_lr·start_factor at every "
                  "step (torch's recursion never reaches end_factor).",)),
    _sched("ExponentialLR", "lr = base_lr · γ^t."),
    _sched("PolynomialLR", "lr = base_lr · (1 - min(t,T)/T)^power.", length="total_iters",
           notes=("total_iters 0 is accepted, as torch 2.13 accepts it: the lr stays base_lr at every step (torch's "
                  "recursion never decays it; the formula's 0 is never reached).",)),
    _sched("CosineAnnealingLR", "lr = η_min + (base_lr-η_min)·½(1+cos(πt/T_max)); rises again after T_max.",
           length="T_max"),
    _sched("CosineAnnealingWarmRestarts", "Cosine annealing restarted every T_i steps, T_i ← T_i·T_mult."),
    _sched("CyclicLR", "Triangular cycles between base_lr and max_lr (momentum cycled inversely).", values="absolute",
           types={"scale_fn": Optional[StepFn],
                  "mode": Literal["triangular", "triangular2", "exp_range"]},
           rules=(Rule("max_lr", ("base_lr", "max_lr"), lambda b, m: _all_le(b, m), "must be >= base_lr"),),
           notes=("CyclicLR overwrites each group's lr with base_lr on construction, as torch does.",)),
    _sched("OneCycleLR", "1cycle: warm up to max_lr over pct_start, anneal to max_lr/(div·final_div).",
           length="total_steps", values="absolute", raises_past_length=True,
           rules=(Rule("total_steps", ("total_steps", "epochs", "steps_per_epoch"),
                       lambda t, e, s: t is not None or (e is not None and s is not None),
                       "give total_steps, or epochs and steps_per_epoch", skip_none=False),)),
    _sched("ReduceLROnPlateau", "lr ← max(lr·factor, min_lr) after `patience` epochs without improvement; "
           "step(metric).", types={"mode": Literal["min", "max"], "factor": number(ge=0, lt=1)}),
    _sched("SequentialLR", "Runs schedulers one after another, switching at milestones (derived from the "
           "stages' lengths when omitted).",
           types={"schedulers": list[dict[str, Any]], "milestones": Optional[IncreasingInts]},
           defaults={"milestones": None}),
    _sched("ChainedScheduler", "Steps every scheduler each step; chainable factors multiply.",
           types={"schedulers": list[dict[str, Any]]}, hidden=("optimizer",)),
    scheduler("torch", "SWALR", "torch.optim.swa_utils:SWALR",
              "lr = α(t)·swa_lr + (1-α(t))·lr₀, t = min(step/anneal_epochs, 1), α = (1-cos πt)/2 or t (linear).",
              source="torch 2.13 torch.optim.swa_utils", values="absolute", length="anneal_epochs",
              class_path="torch.optim.swa_utils.SWALR",
              types={"swa_lr": NonNegFloat | list[NonNegFloat], "anneal_epochs": NonNegInt,
                     "anneal_strategy": Literal["cos", "linear"]},
              notes=("torch's recursive form: each step undoes the previous α to recover lr₀, so the lr reaches "
                     "swa_lr after anneal_epochs steps and stays there; anneal_epochs = 0 sets swa_lr from "
                     "construction on. A group's lr changed from outside (another scheduler) becomes the new lr₀.",
                     "swa_lr: one value, or one per parameter group (torch raises on another length).")),
]


def _all_le(low: Any, high: Any) -> bool:
    lows = low if isinstance(low, list) else [low]
    highs = high if isinstance(high, list) else [high]
    if len(lows) != len(highs) and 1 not in (len(lows), len(highs)):
        return False
    n = max(len(lows), len(highs))
    return all(a <= b for a, b in zip(lows * (n // len(lows)), highs * (n // len(highs))))


ROWS = OPTIMIZERS + SCHEDULERS


def closed_form(name: str):
    """The closed form of torch's scheduler class `name` (optreg.dialects.torch.torch_forms), or None."""
    from optreg.dialects.torch.torch_forms import TORCH_FORMS

    return TORCH_FORMS.get(name)


DIALECT = Dialect("torch", ROWS, "torch.optim and torch.optim.lr_scheduler",
                  paths={"optimizer": ("torch.optim",), "scheduler": ("torch.optim.lr_scheduler",)},
                  closed_forms=closed_form)

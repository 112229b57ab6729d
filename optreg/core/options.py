"""The shared table of option types: one constrained type per option name, written once.

A component's Pydantic model takes each option's type from here (by name), unless its registry
row overrides it in `Entry.types`. Names not listed fall back to the implementation's annotation.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional

from pydantic import BeforeValidator

from optreg.core.types import (
    integer,
    Beta,
    Betas,
    Bool,
    Float,
    IncreasingInts,
    NonNegFloat,
    NonNegInt,
    OptionalBool,
    PosFloat,
    PosInt,
    UnitFloat,
)

#: the `last_epoch` (`last_step`) of a scheduler that starts fresh, the lowest one a scheduler takes (higher: it
#: resumes at that step)
FRESH = -1

PARAM_TYPES: dict[str, Any] = {
    # optimizers
    "lr": NonNegFloat,
    "learning_rate": NonNegFloat,
    "betas": Betas,
    "beta1": Beta,
    "beta2": Beta,
    "eps": NonNegFloat,
    "epsilon": NonNegFloat,
    "weight_decay": NonNegFloat,
    "momentum": NonNegFloat,
    "dampening": Float,
    "nesterov": Bool,
    "amsgrad": Bool,
    "maximize": Bool,
    "foreach": OptionalBool,
    "fused": OptionalBool,
    "capturable": Bool,
    "differentiable": Bool,
    "decoupled_weight_decay": Bool,
    "centered": Bool,
    "alpha": NonNegFloat,
    "rho": UnitFloat,
    "lr_decay": NonNegFloat,
    "initial_accumulator_value": NonNegFloat,
    "lambd": NonNegFloat,
    "t0": NonNegFloat,
    "momentum_decay": NonNegFloat,
    "etas": tuple[Float, Float],
    "step_sizes": tuple[NonNegFloat, NonNegFloat],
    "beta2_decay": Float,
    "d": PosFloat,
    "max_iter": integer(ge=1, le=10_000),   # LBFGS iterations per step(): beyond this a step() does not end
    "max_eval": Optional[PosInt],
    "tolerance_grad": NonNegFloat,
    "tolerance_change": NonNegFloat,
    "history_size": integer(ge=1, le=100_000),   # LBFGS allocates a list of this length
    "line_search_fn": Optional[Literal["strong_wolfe"]],
    "ns_coefficients": tuple[Float, Float, Float],
    "ns_steps": integer(ge=1, le=100),      # Newton-Schulz iterations per step() (torch's default 5)
    "adjust_lr_fn": Optional[Literal["original", "match_rms_adamw"]],
    "loss_scale": PosFloat,
    # schedulers
    "last_epoch": integer(ge=FRESH),
    "step_size": PosInt,
    "gamma": PosFloat,
    "milestones": IncreasingInts,
    "factor": UnitFloat,
    "total_iters": NonNegInt,
    "start_factor": UnitFloat,
    "end_factor": UnitFloat,
    "power": NonNegFloat,
    "T_max": PosInt,
    "eta_min": NonNegFloat,
    "T_0": PosInt,
    "T_mult": PosInt,
    "mode": str,
    "patience": NonNegInt,
    "threshold": NonNegFloat,
    "threshold_mode": Literal["rel", "abs"],
    "cooldown": NonNegInt,
    "min_lr": NonNegFloat | list[NonNegFloat],
    "base_lr": NonNegFloat | list[NonNegFloat],
    "max_lr": NonNegFloat | list[NonNegFloat],
    "step_size_up": PosInt,
    "step_size_down": Optional[PosInt],
    "scale_mode": Literal["cycle", "iterations"],
    "cycle_momentum": Bool,
    "base_momentum": NonNegFloat | list[NonNegFloat],
    "max_momentum": NonNegFloat | list[NonNegFloat],
    "total_steps": Optional[PosInt],
    "epochs": Optional[PosInt],
    "steps_per_epoch": Optional[PosInt],
    "pct_start": UnitFloat,
    "anneal_strategy": Literal["cos", "linear"],
    "div_factor": PosFloat,
    "final_div_factor": PosFloat,
    "three_phase": Bool,
    "warmup_steps": NonNegInt,
    "decay_steps": PosInt,
    "decay_rate": PosFloat,
    "end_learning_rate": NonNegFloat,
    "initial_learning_rate": NonNegFloat,
}


def _order(value: Any, expected: str, signs: str = "+") -> float:
    """A norm order as a float: infinity spelt as YAML or Python spell it (`inf`, `.inf`, `Infinity`, with a sign
    of `signs`), a number float() reads; a boolean, anything else and a finite value beyond ±MAX_FLOAT are a
    ValueError (`expected`: what the message says is taken)."""
    import math

    from optreg.core.types import MAX_FLOAT
    from optreg.errors import show

    if isinstance(value, bool):
        raise ValueError(f"expected {expected}, got boolean {str(value).lower()}")
    if isinstance(value, str) and value.strip().lower().lstrip(signs + ".") in ("inf", "infinity"):
        return -math.inf if value.strip().startswith("-") else math.inf
    try:
        value = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"expected {expected}, got {show(value)}") from None
    signed = "-" in signs
    if math.isfinite(value) and (abs(value) if signed else value) > MAX_FLOAT:
        raise ValueError(f"must be {'within ±' if signed else 'at most '}{MAX_FLOAT:g} or {'±' if signed else ''}"
                         f"'inf', got {show(value)}")
    return value


def norm_order(value: Any) -> Any:
    """A p-norm order: a number > 0, or infinity (`inf`, `.inf` in YAML) for the max norm."""
    import math

    value = _order(value, "a number > 0 or 'inf'")
    if math.isnan(value) or not value > 0:
        raise ValueError(f"must be a number > 0 or 'inf', got {value}")
    return value


def clip_norm_order(value: Any) -> float:
    """`clip_grad.norm_type`: every order torch 2.13's torch.nn.utils.clip_grad_norm_ takes (it calls float() on
    it): a p > 0, `inf` (the largest |g|), 0 (torch's vector_norm of order 0 counts nonzeros, so the total is the
    number of tensors whose gradient is not all zero), a negative p and `-inf` (the smallest |g| of any tensor);
    nan, which torch takes and turns every gradient into, and a boolean are refused."""
    import math

    value = _order(value, "a number or ±'inf'", "+-")
    if math.isnan(value):
        raise ValueError("must be a number or ±'inf', got nan (torch's clip_grad_norm_ would make every gradient "
                         "nan)")
    return value


NormType = Annotated[Any, BeforeValidator(norm_order)]

# OneFlow's per-group gradient clipping (Entry.group_keys of the oneflow rows; read by Optimizer.clip_grad())
ONEFLOW_GROUP_KEYS: dict[str, Any] = {"clip_grad_max_norm": NonNegFloat, "clip_grad_norm_type": NormType}

# Cerebras' per-group factors (Entry.group_keys of the cerebras rows; read by ScalePerParamLR / ScalePerParamWD)
CEREBRAS_GROUP_KEYS: dict[str, Any] = {"adjust_learning_rate": NonNegFloat, "adjust_val": NonNegFloat}

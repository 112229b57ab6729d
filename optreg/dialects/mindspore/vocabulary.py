"""MindSpore's vocabulary shared by its entries: the `learning_rate` forms, the group binder hooks, common notes."""

from __future__ import annotations

import numbers
from typing import Annotated, Any, Callable, Mapping

from pydantic import BeforeValidator, WithJsonSchema


MINDSPORE = "MindSpore 1.6 (TinyMS re-export) - 2.x mindspore.nn"
#: the names of the dialect's group binders (`DIALECT.group_binders`) its rows' `bind` names
BIND = "mindspore"
BIND_DECAY_ALL = "decay_all"
BIND_FTRL = "ftrl"

PIPELINE_NOTE = (
    "Gradient pipeline as MindSpore's: g + weight_decay·loss_scale·w (decay_weight), then grad_centralization "
    "(grouped), then × 1/loss_scale; the net effect is g/loss_scale + weight_decay·w."
)
GROUPS_NOTE = (
    "Without groups, weight decay applies only to parameters whose names contain neither 'beta' nor 'gamma' "
    "(pass a Module or named_parameters(); bare tensors count as unnamed and are decayed). Group keys: params, "
    "lr, weight_decay, grad_centralization, order_params; order_params fixes the parameter order."
)
GC_NOTE = (
    "grad_centralization reproduces MindSpore's code, not its docs: a gradient is centralised "
    "(g - mean over dims 1..n-1) when it has >= 2 dims and shape[1] % 16 == 0, whatever the layer; the docs say "
    "'convolution layers only, error otherwise', but the code neither checks for convolutions nor raises."
)
LR_NOTE = (
    "learning_rate: a number, a per-step list or 1-D tensor (step k uses entry k; past the end it raises, as "
    "MindSpore's Gather does), or a schedule (any callable step -> lr, called with the 0-based step)."
)


def _lr_number(value: Any, what: str) -> float:
    """One learning-rate number: finite, >= 0 and at most MAX_FLOAT (huge ints refused, not overflowed), in the
    words of an lr given as a number elsewhere (models.number_message, as core.optimizer.lr_table says it)."""
    from optreg.core.models import number_message
    from optreg.core.types import MAX_FLOAT
    from optreg.errors import show

    wrong = f"must be a finite number, got {show(value)}" if isinstance(value, bool) or \
        not isinstance(value, numbers.Real) else number_message(value, 0, finite=True, high=MAX_FLOAT)
    if wrong is not None:
        raise ValueError(wrong if what == "it" else f"{what} {wrong}")
    return float(value)


def per_step(noun: str, example: str) -> Callable[[Any], Any]:
    """The validator of a value MindSpore reads per step (`learning_rate`; thor's `damping`): a number >= 0, a
    per-step list or 1-D tensor, an absolute schedule spec (its closed form) or a callable. MindSpore raises
    TypeError / ValueError for the rest; here they become ConfigErrors. `noun` names the value in messages."""
    from optreg.errors import show

    def check(value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"must be a number, a list of per-step numbers or a schedule, got bool {value!r}")
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise ValueError(f"must be a number, a list of per-step numbers or a schedule, got {show(value)}") \
                    from None
        if hasattr(value, "dim") and hasattr(value, "tolist"):  # a tensor
            if value.dim() > 1:
                raise ValueError(f"a {noun} tensor must be 0-d or 1-d, got {value.dim()}-d")
            value = value.tolist()
        if isinstance(value, numbers.Real):
            return _lr_number(value, "it")
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"a per-step {noun} list must not be empty")
            return [_lr_number(v, f"entry {i}") for i, v in enumerate(value)]
        if isinstance(value, Mapping):  # a schedule spec from YAML: {name: CosineDecayLR, ...}
            return _schedule(value, example)
        if callable(value):
            return value
        raise ValueError(f"must be a number, a list of per-step numbers or a schedule, got {type(value).__name__}")

    return check


def _schedule(spec: Mapping, example: str) -> Any:
    """A nested scheduler spec as its closed form; it must give absolute values, as MindSpore's do."""
    from optreg.errors import ConfigError
    from optreg.core.build import Context, plan_scheduler

    try:
        schedule = plan_scheduler(dict(spec), Context(1, frozenset(), "mindspore", known_groups=False,
                                                    known_options=False)).closed_form("")
    except ConfigError as exc:
        more = f"; and {len(exc.errors) - 5} more" if len(exc.errors) > 5 else ""
        raise ValueError("; ".join(str(e) for e in exc.errors[:5]) + more) from None
    if schedule.values != "absolute":
        raise ValueError(f"{type(schedule).__name__} gives factors of a base value; {example}")
    return schedule


def per_step_schema(example: str, description: str) -> WithJsonSchema:
    return WithJsonSchema({
        "anyOf": [{"type": "number", "minimum": 0}, {"type": "array", "items": {"type": "number", "minimum": 0}},
                  {"type": "object", "description": f"an absolute schedule spec, e.g. {{name: {example}, ...}}"}],
        "description": description})


MS_LEARNING_RATE = Annotated[Any, BeforeValidator(per_step(
    "learning-rate", "MindSpore's learning_rate needs an absolute schedule (e.g. mindspore.CosineDecayLR)")),
    per_step_schema("CosineDecayLR", "a number, a per-step list (step k uses entry k), or an absolute schedule")]
"""MindSpore learning_rate: float/int >= 0, per-step list or 1-D tensor, or a callable schedule."""


"""Shared constrained types. Every numeric option of every component is one of these.

Booleans are not numbers (YAML 1.1 reads `on`/`yes` as booleans), NaN and infinities are
rejected, and numeric strings such as `"1e-3"` are accepted as numbers.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Sequence

from pydantic import AfterValidator, BeforeValidator, Field, Strict, WithJsonSchema
from pydantic_core import PydanticCustomError

from optreg.errors import show


#: a boolean where a number goes, in every option's words (`_no_bool`; models.number_message for the readers)
NOT_NUMBER = "expected a number, got boolean {value}"


def boolean_shown(value: Any) -> str | None:
    """How NOT_NUMBER shows `value` where it is a boolean: Python's as `true` / `false`, numpy's `bool_` or a bool
    tensor as written (pydantic would read those as 0 or 1 through their `__float__` / `__index__`); None where it is
    no boolean."""
    if isinstance(value, bool):
        return str(value).lower()
    return show(value) if str(getattr(value, "dtype", "")) in ("bool", "torch.bool") else None


def _no_bool(value: Any) -> Any:
    """Refuse a boolean where a number goes (`boolean_shown`)."""
    shown = boolean_shown(value)
    if shown is not None:
        raise PydanticCustomError("bool_not_number", NOT_NUMBER, {"value": shown})
    return value


def _no_int(value: Any) -> Any:
    """MindSpore raises TypeError for an int where it documents a float."""
    if isinstance(value, int) and not isinstance(value, bool):
        raise PydanticCustomError("int_not_float", "must be a float, got int {value}", {"value": show(value)})
    return value


def _increasing(values: Sequence[int]) -> Sequence[int]:
    for a, b in zip(values, values[1:]):
        if not b > a:
            raise PydanticCustomError("not_increasing", "must be strictly increasing, got {values}",
                                     {"values": show(list(values))})
    return values


NoBool = BeforeValidator(_no_bool)
NoInt = BeforeValidator(_no_int)


MAX_FLOAT = 1e9     # every number an option takes is within ±MAX_FLOAT unless its bounds say less: a product
                    # of four such numbers (lr · a scheduled factor² · weight decay) still fits float32
                    # (3.4e38), the narrowest dtype the steps run in
MAX_INT = 1 << 53   # step counts and lengths above this are typos (and overflow float arithmetic)


def _bounded(bounds: dict[str, float]) -> dict[str, float]:
    """`bounds` with the executable range filled in: at most MAX_FLOAT in magnitude."""
    if "le" not in bounds and "lt" not in bounds:
        bounds["le"] = MAX_FLOAT
    if "ge" not in bounds and "gt" not in bounds:
        bounds["ge"] = -MAX_FLOAT
    return bounds


def number(**bounds: float) -> Any:
    """A finite float with bounds (ge/gt/le/lt), within ±MAX_FLOAT unless the bounds say less; booleans
    refused. Bounds sit inside the validators so that they reach the JSON Schema as minimum/maximum."""
    return Annotated[float, Field(allow_inf_nan=False, **_bounded(bounds)), NoBool]


def integer(**bounds: int) -> Any:
    """An int with bounds; at most MAX_INT unless `le` says otherwise; booleans refused."""
    bounds.setdefault("le", MAX_INT)
    return Annotated[int, Field(**bounds), NoBool]


def strict_number(**bounds: float) -> Any:
    """MindSpore-style float: an int is a TypeError there."""
    return Annotated[float, Field(allow_inf_nan=False, **_bounded(bounds)), NoInt, NoBool]


Float = number()
Int = integer()
Bool = Annotated[bool, Strict()]

NonNegFloat = number(ge=0)
PosFloat = number(gt=0)
NegFloat = number(lt=0)
ASGDAlpha = number(ge=0, le=8)   # ASGD's α: (1 + λ·lr·t)^α stays a finite float
UnitFloat = number(ge=0, le=1)          # [0, 1]
Beta = number(ge=0, lt=1)               # [0, 1)
OpenUnit = number(gt=0, lt=1)           # (0, 1)
PosInt = integer(ge=1)
NonNegInt = integer(ge=0)
Betas = tuple[Beta, Beta]

StrictFloat = strict_number()
StrictNonNegFloat = strict_number(ge=0)
StrictPosFloat = strict_number(gt=0)
StrictOpenUnit = strict_number(gt=0, lt=1)

IncreasingInts = Annotated[list[NonNegInt], AfterValidator(_increasing)]
OptionalBool = Optional[Bool]
#: a first-party optimizer's `state_dtype` (`optreg.stages.state_codec`)
StateDtype = Optional[Literal["float32", "bfloat16", "int8"]]


#: the torch dtypes an option of an installed library names by string (`TorchDtype`)
TORCH_DTYPES = ("float32", "float64", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "complex64",
                "complex128", "int8", "uint8", "int16", "int32", "int64", "bool")
#: marks `TorchDtype` inside a type (`names_torch_dtype`)
TORCH_DTYPE_MARK = "torch.dtype named by string"


def _dtype_name(value: Any) -> Any:
    """A dtype's name as TORCH_DTYPES spells it: `torch.bfloat16` (the object or the string) -> 'bfloat16'."""
    if type(value).__name__ == "dtype" and type(value).__module__ == "torch":
        value = str(value)
    return value.removeprefix("torch.") if isinstance(value, str) else value


#: a torch dtype named by string ('bfloat16', 'torch.float32'); the implementation gets the dtype (`torch_dtypes`)
TorchDtype = Annotated[Literal[TORCH_DTYPES], BeforeValidator(_dtype_name), TORCH_DTYPE_MARK,
                       WithJsonSchema({"enum": list(TORCH_DTYPES), "description": "a torch dtype"})]


def _callable(value: Any) -> Any:
    if not callable(value):
        raise PydanticCustomError("not_callable", "expected a Python callable (given through the Python API), got "
                                  "{value}", {"value": show(value)})
    return value


#: a function an installed library's option takes (ADOPT's clip_lambda): only the Python API can give one
PythonCallable = Annotated[Any, AfterValidator(_callable),
                           WithJsonSchema({"description": "a Python callable (Python API only)"})]


def names_torch_dtype(type_: Any) -> bool:
    """Whether `type_` is TorchDtype or holds it (`TorchDtype | None`)."""
    import typing

    return type_ is TorchDtype or any(a == TORCH_DTYPE_MARK or names_torch_dtype(a)
                                      for a in typing.get_args(type_) if not isinstance(a, (int, float)))


def torch_dtypes(values: dict[str, Any], types: Any) -> dict[str, Any]:
    """`values` with each dtype name of an option typed TorchDtype (in `types`) as the torch dtype itself."""
    named = [k for k, v in values.items() if isinstance(v, str) and names_torch_dtype(types.get(k))]
    if not named:
        return values
    import torch

    return {k: getattr(torch, v) if k in named else v for k, v in values.items()}


def _step_function(value: Any) -> Any:
    from optreg.config.expr import StepFunction

    if isinstance(value, StepFunction) or (callable(value) and not isinstance(value, str)):
        return value
    if isinstance(value, (list, tuple)):  # one per parameter group
        return [_step_function(v) for v in value]
    return StepFunction(value)


StepFn = Annotated[
    Any,
    BeforeValidator(_step_function),
    WithJsonSchema({"type": "string", "description": "registered function name or expression in `step`, "
                                                     "e.g. '0.95 ** step'"}),
]

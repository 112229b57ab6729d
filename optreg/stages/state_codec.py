"""Optimizer state in fewer bytes: the `state_dtype` group option and the codecs that store a chain's state.

    null        the state in the parameter's dtype (the default)
    "float32"   state shaped like the parameter stored as float32 whatever the parameter's dtype, and the step
                of a bfloat16 / float16 parameter computed in float32 (the parameter and its gradient widened),
                the parameter written back in its dtype (round to nearest even) once per step: MindFormers'
                FP32StateAdamWeightDecay (MindFormers 1.3 on MindSpore 2.x). Float32 and float64 parameters
                are as under null
    "bfloat16"  state shaped like the parameter stored as bfloat16 (round to nearest even), the arithmetic
                in float32: 2 bytes a value instead of 4
    "int8"      state shaped like the parameter stored as 8-bit codes in blocks of BLOCK_SIZE consecutive
                elements of one parameter (a block never straddles two), with a float32 absmax scale per
                block (`<name>_absmax`): 1 + 4/256 bytes a value. A parameter under MIN_INT8_ELEMENTS
                elements keeps its state in float32, unless it lives in a contiguous group's buffer
                (`contiguous_params`), whose slices start at block boundaries.

Only the state a stage names in its `shrinks` (moments shaped like the parameter) is stored so; counters,
power state, Adafactor's factored moments and Rprop's step sizes stay in float32. A step decodes the
stored state into work tensors, runs the stages on them, and encodes the new values back: under `fused`
inside the compiled step, so that one loop reads the codes and writes them back (memory speed).

The two 8-bit maps (in the manner of bitsandbytes' and torchao's dynamic maps: dense near the block's
absmax, reaching far below it) are minifloats over y = x / absmax, so that a code is found with integer
arithmetic on y's float32 bits instead of a search in a table:

    "signed"    (first moments, any sign):    a sign and a magnitude c = 1..127, |y| the float32 whose bits
                are (c + 889) << 20 (a 3-bit mantissa): 16 binades, from 1.25·2⁻¹⁶ (1.9e-5) to 1; smaller
                |y| is 0
    "unsigned"  (second moments, never < 0):  code 0 is 0; c = 1..255 the float32 of bits (c + 761) << 20:
                32 binades, from 1.25·2⁻³² (2.9e-10) to 1; a nonzero y below that is the smallest code (a
                second moment never decodes to 0 where it was not 0: Adam's m/√v stays bounded)

Rounding is to the nearest code in the mantissa (half up in magnitude). Error bounds of one store:

    bfloat16             |x̂ - x| ≤ 2⁻⁸·|x|                 (0.4%: 8 significant bits)
    int8, signed         |x̂ - x| ≤ 2⁻⁴·|x|                 (6.25%) for |x| ≥ 2⁻¹⁵·absmax, else ≤ 2⁻¹⁵·absmax
    int8, unsigned       |x̂ - x| ≤ 2⁻⁴·|x|                 (6.25%) for x ≥ 2⁻³¹·absmax, else ≤ 2⁻³¹·absmax

(absmax: the largest magnitude of the value's block, as stored.) A value that is not finite is stored as 0.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Mapping, Sequence

import torch

from optreg.errors import ConfigError

#: the values of the `state_dtype` option
STATE_DTYPES = (None, "float32", "bfloat16", "int8")
#: parameter dtypes whose step `state_dtype: "float32"` computes in float32
HALF = (torch.bfloat16, torch.float16)
#: elements per int8 block (one float32 absmax each)
BLOCK_SIZE = 256
#: a parameter with fewer elements keeps float32 state under "int8" (outside a contiguous group)
MIN_INT8_ELEMENTS = 4096
#: the suffix of an int8 state's block scales in the parameter's state
SCALE = "_absmax"

#: the float32 bit pattern of y, shifted right by MANTISSA_SHIFT, is 8·(biased exponent) + 3 mantissa bits
MANTISSA_SHIFT = 20
#: code = that value minus the bias: y = 1.0 (8·127) is the largest code (127 signed, 255 unsigned)
_BIAS = {"signed": 8 * 127 - 127, "unsigned": 8 * 127 - 255}
_TOP = {"signed": 127, "unsigned": 255}
#: the storage dtype of each map's codes
CODE_DTYPE = {"signed": torch.int8, "unsigned": torch.uint8}
#: the relative error of one store, each state dtype (`describe()`, the tests' bounds)
RELATIVE_ERROR = {"bfloat16": 2.0 ** -8, "int8": 2.0 ** -4}
#: below this fraction of its block's absmax, a value's int8 error is absolute (at most that much)
FLOOR = {"signed": 2.0 ** -15, "unsigned": 2.0 ** -31}


def check_state_dtype(value: Any, path: str = "state_dtype") -> Any:
    """The option as given, or a ConfigError at `path` naming the choices, with the close one as its suggestion (the
    words and the suggestion the own form's option gives, `models.choice_message`; null is the default)."""
    if value in STATE_DTYPES and not isinstance(value, bool):
        return value
    from optreg.core.models import choice_message, choices_text
    from optreg.errors import ErrorItem, closest

    named = [v for v in STATE_DTYPES if v]
    hint = closest(value, named) if isinstance(value, str) else None
    raise ConfigError([ErrorItem(path, choice_message(choices_text(named), value), suggestion=hint)])


def scale_name(name: str) -> str:
    return name + SCALE


def is_scale(name: str) -> bool:
    return name.endswith(SCALE)


def blocks(numel: int) -> int:
    return -(-numel // BLOCK_SIZE)


# ---------------------------------------------------------------------------------------------
# the layout of one parameter's state
# ---------------------------------------------------------------------------------------------


def form(p: torch.Tensor, state_dtype: str | None, contiguous: bool = False) -> str | None:
    """How a shrinking state of parameter `p` is stored: "float32", "bfloat16", "int8" or None (as it is)."""
    if state_dtype is None or not p.is_floating_point() or p.dim() == 0:
        return None
    if state_dtype == "float32":
        return "float32" if p.dtype in HALF else None
    if state_dtype == "bfloat16":
        return "bfloat16" if p.element_size() > 2 else None
    if p.numel() >= MIN_INT8_ELEMENTS or contiguous:
        return "int8"
    return "float32" if p.dtype in HALF else None   # float32 state, as for float32 parameters


def stored_form(state: Mapping[str, Any], name: str, p: torch.Tensor) -> str | None:
    """The form a state tensor of parameter `p` has now (after a load, say): "int8" with scales, "bfloat16",
    "float32" (wider than a half-precision `p`), else None."""
    if scale_name(name) in state:
        return "int8"
    value = state.get(name)
    if not isinstance(value, torch.Tensor):
        return None
    if value.dtype == torch.bfloat16:
        return "bfloat16"
    return "float32" if value.dtype == torch.float32 and p.dtype in HALF else None


def store(state: dict[str, Any], maps: Mapping[str, str], p: torch.Tensor, target: str | None) -> dict[str, Any]:
    """Convert `state`'s shrinking tensors (names in `maps`) from whatever form they have into `target`
    (`form`): decoded into the parameter's precision, then encoded. Returns `state`, changed in place."""
    for name, kind in maps.items():
        value = state.get(name)
        if not isinstance(value, torch.Tensor) or value.dim() == 0 or value.numel() != p.numel():
            continue
        now = stored_form(state, name, p)
        if now == target and (now != "int8" or value.dtype == CODE_DTYPE[kind]):
            continue
        work = decode(value, state.pop(scale_name(name), None), kind, _work_dtype(p))
        if target is None:
            state[name] = work.to(p.dtype)
        elif target in ("bfloat16", "float32"):
            state[name] = work.to(getattr(torch, target))
        else:
            codes = torch.empty(value.shape, dtype=CODE_DTYPE[kind], device=value.device)
            scales = torch.empty(blocks(value.numel()), dtype=torch.float32, device=value.device)
            encode_(codes, scales, work, kind)
            state[name], state[scale_name(name)] = codes, scales
    return state


def _work_dtype(p: torch.Tensor) -> torch.dtype:
    return torch.promote_types(p.dtype, torch.float32)


# ---------------------------------------------------------------------------------------------
# the codecs (plain tensor operations: eager, foreach and traced alike)
# ---------------------------------------------------------------------------------------------


def _rows(flat: torch.Tensor, nblocks: int) -> torch.Tensor:
    """A 1-D tensor as (nblocks, BLOCK_SIZE) rows: a view when it fills them (what a compiled step is given:
    `whole_blocks`), else padded with zeros."""
    if flat.shape[0] == nblocks * BLOCK_SIZE:
        return flat.view(nblocks, BLOCK_SIZE)
    return torch.nn.functional.pad(flat, (0, nblocks * BLOCK_SIZE - flat.shape[0])).view(nblocks, BLOCK_SIZE)


def whole_blocks(t: torch.Tensor) -> bool:
    """Whether a tensor fills its blocks (its size a multiple of BLOCK_SIZE)."""
    return t.numel() % BLOCK_SIZE == 0


def decode(stored: torch.Tensor, scales: torch.Tensor | None, kind: str, dtype: torch.dtype) -> torch.Tensor:
    """The values a stored state holds, in `dtype` (bfloat16 widened; int8 codes times their block's scale)."""
    if scales is None:
        return stored.to(dtype)
    if _structured(stored, scales):
        codes = _blocks_of(stored).to(torch.int32)
        return _decode_codes(codes, _scales_of(scales, codes), kind, dtype).view(stored.shape)
    flat = stored.reshape(-1)
    values = _decode_codes(_rows(flat, scales.shape[0]).to(torch.int32), scales.unsqueeze(1), kind, dtype).reshape(-1)
    if values.shape[0] != flat.shape[0]:
        values = values[:flat.shape[0]]
    return values.view(stored.shape)


def _structured(stored: torch.Tensor, scales: torch.Tensor) -> bool:
    """Whether `stored` is whole blocks along its last dimension (a compiled step's (rows, 256·k) views):
    then the blocks are a view, and the step's loops keep its shape (no index arithmetic across rows)."""
    return stored.dim() >= 2 and stored.shape[-1] % BLOCK_SIZE == 0 and stored.is_contiguous()


def _blocks_of(t: torch.Tensor) -> torch.Tensor:
    """(…, k·256) as (…, k, 256)."""
    return t.view(*t.shape[:-1], t.shape[-1] // BLOCK_SIZE, BLOCK_SIZE)


def _scales_of(scales: torch.Tensor, blocks_view: torch.Tensor) -> torch.Tensor:
    """The block scales shaped to broadcast over `blocks_view` (…, k, 256): (…, k, 1)."""
    return scales.view(*blocks_view.shape[:-1], 1)


def _decode_codes(codes: torch.Tensor, scales: torch.Tensor, kind: str, dtype: torch.dtype) -> torch.Tensor:
    """Int32 codes (…, 256) times their scales (…, 1), in `dtype`."""
    mag = codes.abs() if kind == "signed" else codes
    y = torch.bitwise_left_shift(mag + _BIAS[kind], MANTISSA_SHIFT).view(torch.float32)
    y = torch.where(mag == 0, 0.0, y)
    if kind == "signed":
        y = torch.where(codes < 0, -y, y)
    return y.to(dtype) * scales.to(dtype)


def encode_(stored: torch.Tensor, scales: torch.Tensor | None, value: torch.Tensor, kind: str) -> None:
    """Store `value` into `stored` (and its block `scales` under int8), rounding to nearest."""
    if scales is None:
        stored.copy_(value)
        return
    if _structured(stored, scales):
        rows = _blocks_of(value)
        code, absmax = _encode_rows(rows, kind)
        stored.copy_(code.view(stored.shape))
        scales.copy_(absmax.view(scales.shape))
        return
    flat = value.reshape(-1)
    code, absmax = _encode_rows(_rows(flat, scales.shape[0]), kind)
    code = code.reshape(-1)
    if code.shape[0] != flat.shape[0]:
        code = code[:flat.shape[0]]
    stored.copy_(code.view(stored.shape))
    scales.copy_(absmax.view(scales.shape))


def _encode_rows(rows: torch.Tensor, kind: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(int32 codes, float32 absmax (…, 1)) of values (…, 256); a value that is not finite is stored as 0 (the
    step has already carried it to the parameter; in a contiguous group's padding, where a rule without an eps
    makes 0/0, it would otherwise spread through its block)."""
    rows = torch.nan_to_num(rows, nan=0.0, posinf=0.0, neginf=0.0)
    absmax = rows.abs().amax(-1, keepdim=True).to(torch.float32)
    inverse = torch.where(absmax > 0, 1.0 / absmax, 0.0).to(rows.dtype)
    y = (rows * inverse).to(torch.float32)
    bits = torch.bitwise_right_shift(y.abs().view(torch.int32) + (1 << (MANTISSA_SHIFT - 1)), MANTISSA_SHIFT)
    code = bits - _BIAS[kind]
    if kind == "signed":
        code = code.clamp(0, _TOP[kind])
        code = torch.where(y < 0, -code, code)
    else:
        code = torch.where(y > 0, code.clamp(1, _TOP[kind]), 0)
    return code, absmax


# ---------------------------------------------------------------------------------------------
# around a chain's stages
# ---------------------------------------------------------------------------------------------


def open_state(maps: Mapping[str, str], state: Mapping[str, list[torch.Tensor]], params: Sequence[torch.Tensor]
               ) -> tuple[dict[str, list[torch.Tensor]], list[tuple[str, list[torch.Tensor], list[Any]]]]:
    """(the batch's state with each stored shrinking list decoded into work tensors, what `close_state`
    encodes back). A list is stored when its tensors are bfloat16 below their parameters' precision or have
    block scales; scales are left out of the work state."""
    work = {n: v for n, v in state.items() if not is_scale(n)}
    opened = []
    for name, kind in maps.items():
        values = state.get(name)
        if not values or values[0].dim() == 0:
            continue
        scales = state.get(scale_name(name))
        if scales is None and not (values[0].dtype == torch.bfloat16 and params[0].dtype != torch.bfloat16):
            continue
        dtype = _work_dtype(params[0])
        work[name] = [decode(v, scales[i] if scales else None, kind, dtype) for i, v in enumerate(values)]
        opened.append((name, values, scales))
    return work, opened


def close_state(maps: Mapping[str, str], work: Mapping[str, list[torch.Tensor]],
                opened: Sequence[tuple[str, list[torch.Tensor], list[Any]]]) -> None:
    """Encode the work tensors of `open_state` back into their stored tensors."""
    for name, values, scales in opened:
        for i, (stored, value) in enumerate(zip(values, work[name])):
            encode_(stored, scales[i] if scales else None, value, maps[name])


def widened(b_params: Sequence[torch.Tensor], hp: Mapping[str, Any]) -> bool:
    """Whether a batch steps in float32 over its half-precision parameters: `state_dtype: "float32"`, and "int8",
    whose state decodes into float32 (or is float32 state, below `MIN_INT8_ELEMENTS`): its arithmetic stays in
    float32 too."""
    return hp.get("state_dtype") in ("float32", "int8") and bool(b_params) and b_params[0].dtype in HALF


def widen(tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """Float32 work copies of half-precision tensors (exact)."""
    return [t.to(torch.float32) for t in tensors]


def narrow_(params: Sequence[torch.Tensor], work: Sequence[torch.Tensor]) -> None:
    """Write the float32 work parameters back into the half-precision parameters (round to nearest even)."""
    for p, w in zip(params, work):
        p.copy_(w)


@contextlib.contextmanager
def decoded(state: dict[str, Any], maps: Mapping[str, str], p: torch.Tensor) -> Iterator[dict[str, Any]]:
    """A parameter's state with its stored tensors decoded (for an update of some rows: a sparse gradient's),
    encoded back on exit; the state as it is when nothing is stored in fewer bytes."""
    lists = {k: [v] for k, v in state.items() if isinstance(v, torch.Tensor)}
    work, opened = open_state(maps, lists, [p])
    if not opened:
        yield state
        return
    plain = {**{k: v for k, v in state.items() if not is_scale(k)}, **{k: v[0] for k, v in work.items()}}
    yield plain
    close_state(maps, {k: [v] for k, v in plain.items()}, opened)


def summary(maps: Mapping[str, str]) -> str:
    """What `state_dtype` stores in fewer bytes and the error bound of one store (`describe()`)."""
    if not maps:
        return "no state shaped like the parameter shrinks: every state stays in the parameter's dtype"
    names = ", ".join(f"{n} ({kind})" for n, kind in maps.items())
    floors = "; ".join(f"{kind}: {FLOOR[kind]:.1e} of the block absmax" for kind in sorted(set(maps.values())))
    return (f"shrinks {names}; the rest stays as it is. One store's error: bfloat16 ≤ {RELATIVE_ERROR['bfloat16']:.2%} "
            f"relative; int8 ≤ {RELATIVE_ERROR['int8']:.2%} relative above a floor ({floors}), at most the floor "
            f"below it; int8 from {MIN_INT8_ELEMENTS} elements (any size in a contiguous group); float32: these "
            f"in float32 over bfloat16/float16 parameters, their step in float32")

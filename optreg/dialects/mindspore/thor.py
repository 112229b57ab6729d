"""MindSpore's THOR (`mindspore.nn.thor`, MindSpore 1.6 - 2.x): a Kronecker-factored natural gradient, then
ApplyMomentum.

THOR takes the model, not a parameter list. Hooks on its Linear, Conv2d and Embedding layers record, in the
steps that refresh the curvature (step k with k % frequency == 0), each layer's input covariance A and
output-gradient covariance G (MindSpore's DenseThor / Conv2dThor / EmbeddingThor). Every step then turns the
gradient g = ∇w / loss_scale of a layer weight into

    g' = (G + √λ·I)⁻¹ g (A + √λ·I)⁻¹           G = E[D Dᵀ]·batch_size²/loss_scale²,  A = E[a aᵀ]

with the inverses of the last refresh (stale in between), λ = damping[k]; LayerNorm parameters get
g' = g / (g²/batch_size + √λ); other parameters (biases, BatchNorm) keep g. Then g' += weight_decay·w where
`decay_filter` keeps the parameter, ClipByNorm(1.0) per tensor with `enable_clip_grad`, and ApplyMomentum:
v = u·v + g', w -= lr·v (use_nesterov: w -= lr·(g' + u·v)).

The pieces, one job each: the layer kinds (`Dense`, `Conv`, `Embedding`: what a layer records and how its
factors are damped, inverted and applied), `LayerStatistics` (the sums one layer records in a step),
`damped_inverse` (Cholesky, by 128-blocks), `layernorm_gradient`, the `ClipByNorm` stage, and `THOR`.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Callable, Mapping, Optional, Sequence, Union

import torch
from pydantic import BeforeValidator, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from optreg.core.models import number_message
from optreg.core.optimizer import closure_loss, lr_at, lr_table
from optreg.core.types import (MAX_INT, Bool, IncreasingInts, NoBool, NonNegFloat, OptionalBool, PosInt, StateDtype,
                               StrictNonNegFloat, number)
from optreg.dialects.mindspore.lars import keeps
from optreg.dialects.mindspore.vocabulary import MS_LEARNING_RATE, per_step, per_step_schema
from optreg.errors import ConfigError, show
from optreg.stages.apply import ApplyLR
from optreg.stages.chain import Batch, Chain, Stage
from optreg.stages.optimizer import ChainOptimizer
from optreg.stages.sgd import Momentum as MomentumStage

SPLIT_DIM = 128
"""MindSpore inverts the 128×128 blocks on the diagonal of a Dense or Conv factor (GPU CholeskyTrsm(split_dim=128),
Ascend CusCholeskyTrsm + CusMatrixCombine); smaller factors whole."""

CLIP_NORM = 1.0
"""enable_clip_grad: MindSpore's thor clips each gradient to norm 1.0 (GRADIENT_CLIP_TYPE 1, GRADIENT_CLIP_VALUE)."""


# ---------------------------------------------------------------------------------------------------------------
# option types
# ---------------------------------------------------------------------------------------------------------------
#: a float where MindSpore takes an int only (check_value_type(int): a TypeError there)
NOT_FLOAT = "must be an int, got float {value}"


def _no_float(value: Any) -> Any:
    """MindSpore checks `frequency` with check_value_type(int): a float is a TypeError there."""
    if isinstance(value, float):
        raise PydanticCustomError("int_not_float", NOT_FLOAT, {"value": show(value)})
    return value


Frequency = Annotated[int, Field(ge=2, le=MAX_INT), NoBool, BeforeValidator(_no_float)]
"""An int >= 2 (MindSpore: TypeError for a non-int, ValueError below 2)."""


#: > 0 as a float32 (MindSpore holds it so; G is scaled by 1/loss_scale², which must not underflow to a division
#: by zero): at least the smallest normal float32
LossScale = number(ge=1.1754943508222875e-38)

_damping = per_step("damping", "damping needs an absolute schedule (e.g. mindspore.ExponentialDecayLR)")
DAMPING = Annotated[Any, BeforeValidator(_damping),
    per_step_schema("ExponentialDecayLR",
                    "λ: a number, a per-step list (step k uses entry k), or an absolute schedule")]

DecayFilter = Union[Sequence[str], Callable[[str], bool]]


def _decay_filter(value: Any) -> Any:
    """A list of glob patterns of parameter names left undecayed, or a callable name -> bool (True: decay)."""
    if callable(value) and not isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(f"expected a list of glob patterns of the parameter names not to decay, or a callable "
                     f"name -> bool, got {show(value)}")


DECAY_FILTER = Annotated[Any, BeforeValidator(_decay_filter), WithJsonSchema({
    "type": "array", "items": {"type": "string"},
    "description": "glob patterns of parameter names that weight decay skips (default: none)"})]


def value_at(table: float | list[float] | Callable[[int], float], index: int, what: str) -> float:
    """A per-step value (damping) at the 0-based step `index`, checked: a number >= 0."""
    try:
        value = lr_at(table, index)
    except IndexError:
        raise IndexError(f"step {index} is past the end of the per-step {what} list ({len(table)} entries)") from None
    if not (math.isfinite(value) and value >= 0.0):
        raise ConfigError(f"at step {index} the schedule gives {value!r}; it must be a finite number >= 0", what)
    return value


# ---------------------------------------------------------------------------------------------------------------
# inverses
# ---------------------------------------------------------------------------------------------------------------
def _spd_inverse(matrix: torch.Tensor) -> torch.Tensor:
    """M⁻¹ of a symmetric positive definite M by Cholesky (MindSpore's CholeskyTrsm); the pseudo-inverse where the
    factorisation fails (a singular factor: damping 0), NaN where M is not finite (as MindSpore's kernels give)."""
    if not bool(torch.isfinite(matrix).all()):
        return torch.full_like(matrix, math.nan)
    lower, info = torch.linalg.cholesky_ex(matrix)
    if int(info) == 0:
        return torch.cholesky_inverse(lower)
    try:
        return torch.linalg.pinv(matrix, hermitian=True)
    except RuntimeError:  # torch.linalg.LinAlgError: no convergence
        return torch.full_like(matrix, math.nan)


def damped_inverse(matrix: torch.Tensor, damping: float, block: int | None = None) -> torch.Tensor:
    """(M + damping·I)⁻¹; with `block`, the inverse of each `block`×`block` diagonal block (the last one smaller),
    zero elsewhere: MindSpore inverts Dense and Conv factors by 128-blocks."""
    n = matrix.shape[0]
    damped = matrix + damping * torch.eye(n, dtype=matrix.dtype, device=matrix.device)
    if block is None or n <= block:
        return _spd_inverse(damped)
    out = torch.zeros_like(matrix)
    for start in range(0, n, block):
        stop = min(start + block, n)
        out[start:stop, start:stop] = _spd_inverse(damped[start:stop, start:stop])
    return out


def layernorm_gradient(g: torch.Tensor, damping: float, batch_size: int) -> torch.Tensor:
    """MindSpore's THOR for LayerNorm parameters (`_process_layernorm`): g / (g²/batch_size + √λ)."""
    return g / (g * g / batch_size + math.sqrt(damping))


# ---------------------------------------------------------------------------------------------------------------
# layer kinds: what a layer records (rows of a and of D) and how its factors become the preconditioner
# ---------------------------------------------------------------------------------------------------------------
class Dense:
    """nn.Linear (MindSpore DenseThor): a = the layer's input rows, D = the output-gradient rows (leading dims
    flattened); A = Σ a aᵀ / rows, G = Σ D Dᵀ / rows · batch_size²/loss_scale²; g' = (G + √λI)⁻¹ g (A + √λI)⁻¹."""

    name = "dense"

    def input_rows(self, module: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(-1, x.shape[-1])

    def output_rows(self, dout: torch.Tensor) -> torch.Tensor:
        return dout.reshape(-1, dout.shape[-1])

    def covariance_a(self, stats: "LayerStatistics") -> torch.Tensor:
        return stats.a_sum / stats.a_rows

    def positions(self, stats: "LayerStatistics") -> float:
        return 1.0

    def inverses(self, stats: "LayerStatistics", damping: float, batch_size: int,
                 loss_scale: float) -> tuple[torch.Tensor, torch.Tensor]:
        """(A⁻¹, G⁻¹) with MindSpore's normalisation: a convolution's L output positions give damping √(λ/L) on
        each factor and scale each inverse by 1/√L (Dense: L = 1)."""
        positions = self.positions(stats)
        d = math.sqrt(damping / positions)
        scale = math.sqrt(1.0 / positions)
        g_cov = stats.g_sum / stats.g_rows * (batch_size * batch_size / (loss_scale * loss_scale))
        return (damped_inverse(self.covariance_a(stats), d, SPLIT_DIM) * scale,
                damped_inverse(g_cov, d, SPLIT_DIM) * scale)

    def precondition(self, g: torch.Tensor, a_inv: torch.Tensor, g_inv: torch.Tensor) -> torch.Tensor:
        """G⁻¹ g A⁻¹ on the weight as a matrix (out, in·kh·kw) (MindSpore UpdateThorGradient)."""
        return (g_inv @ g.reshape(g.shape[0], -1) @ a_inv).reshape(g.shape)


class Conv(Dense):
    """nn.Conv2d with groups=1 (MindSpore Conv2dThor): a = the input patches (im2col at the layer's padding, stride
    and dilation), one row per example and output position; D = the output gradient at each position; L = output
    positions per example. A = Σ a aᵀ / rows, G = Σ D Dᵀ / rows · batch_size²/loss_scale²."""

    name = "conv"

    def input_rows(self, module: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
        import torch.nn.functional as F

        mode = "constant" if module.padding_mode == "zeros" else module.padding_mode
        padded = F.pad(x, module._reversed_padding_repeated_twice, mode=mode)
        patches = F.unfold(padded, module.kernel_size, dilation=module.dilation, stride=module.stride)
        return patches.transpose(1, 2).reshape(-1, patches.shape[1])

    def output_rows(self, dout: torch.Tensor) -> torch.Tensor:
        return dout.permute(0, 2, 3, 1).reshape(-1, dout.shape[1])

    def positions(self, stats: "LayerStatistics") -> float:
        return stats.a_rows / stats.examples


class Embedding:
    """nn.Embedding (MindSpore EmbeddingThor): A = the count of each id in the step (a diagonal), D = the gradient
    of each looked-up row; A⁻¹ = 1/(count/batch_size + √λ), G⁻¹ = (Σ D Dᵀ / rows · batch_size²/loss_scale² + √λI)⁻¹
    (whole); g' = diag(A⁻¹) g G⁻¹."""

    name = "embedding"

    def input_rows(self, module: torch.nn.Module, ids: torch.Tensor) -> torch.Tensor:
        return torch.bincount(ids.reshape(-1), minlength=module.num_embeddings)

    def output_rows(self, dout: torch.Tensor) -> torch.Tensor:
        return dout.reshape(-1, dout.shape[-1])

    def inverses(self, stats: "LayerStatistics", damping: float, batch_size: int,
                 loss_scale: float) -> tuple[torch.Tensor, torch.Tensor]:
        d = math.sqrt(damping)
        g_cov = stats.g_sum / stats.g_rows * (batch_size * batch_size / (loss_scale * loss_scale))
        return 1.0 / (stats.a_sum / batch_size + d), damped_inverse(g_cov, d)

    def precondition(self, g: torch.Tensor, a_inv: torch.Tensor, g_inv: torch.Tensor) -> torch.Tensor:
        return (a_inv.unsqueeze(1) * g) @ g_inv


KINDS: dict[type, Any] = {torch.nn.Linear: Dense(), torch.nn.Conv2d: Conv(), torch.nn.Embedding: Embedding()}
"""The layers THOR preconditions, by exact type (MindSpore converts nn.Dense, nn.Conv2d, nn.Embedding by type)."""


def layer_kind(module: torch.nn.Module) -> Any:
    """The kind of a layer THOR preconditions, or None: an exact Linear, Conv2d (groups=1) or Embedding whose
    weight is trained."""
    kind = KINDS.get(type(module))
    if kind is None or not module.weight.requires_grad:
        return None
    if isinstance(kind, Conv) and module.groups != 1:
        return None
    return kind


class LayerStatistics:
    """The sums one layer records in a refresh step: Σ a aᵀ (an Embedding: the id counts) and its rows, Σ D Dᵀ and
    its rows, and the examples seen. Calls of one layer in one step pool their rows. Kept in `dtype` (the weight's,
    at least float32)."""

    def __init__(self, kind: Any, module: torch.nn.Module, name: str, dtype: torch.dtype) -> None:
        self.kind, self.module, self.name, self.dtype = kind, module, name, dtype
        self.reset()

    def reset(self) -> None:
        self.a_sum: torch.Tensor | None = None
        self.g_sum: torch.Tensor | None = None
        self.a_rows = self.g_rows = self.examples = 0

    @property
    def complete(self) -> bool:
        return self.a_sum is not None and self.g_sum is not None

    def add_inputs(self, x: torch.Tensor) -> None:
        rows = self.kind.input_rows(self.module, x.detach())
        if isinstance(self.kind, Embedding):
            part = rows.to(self.dtype)
        else:
            rows = rows.to(self.dtype)
            part = rows.T @ rows
        self.a_sum = part if self.a_sum is None else self.a_sum + part
        self.a_rows += rows.shape[0] if not isinstance(self.kind, Embedding) else x.numel()
        self.examples += x.shape[0] if x.dim() > 1 else 1

    def add_output_grads(self, dout: torch.Tensor) -> None:
        rows = self.kind.output_rows(dout.detach()).to(self.dtype)
        part = rows.T @ rows
        self.g_sum = part if self.g_sum is None else self.g_sum + part
        self.g_rows += rows.shape[0]


class Recorder:
    """The hooks on the model's layers. They record only while `capture` is set (the optimizer sets it for the
    steps that refresh the curvature) and gradients are enabled (an evaluation pass records nothing)."""

    def __init__(self, layers: list[LayerStatistics]) -> None:
        self.layers = layers
        self.capture = True
        self.handles = [layer.module.register_forward_hook(self._forward(layer)) for layer in layers]

    def _forward(self, layer: LayerStatistics) -> Callable[..., None]:
        def hook(module: torch.nn.Module, inputs: tuple, output: Any) -> None:
            if not (self.capture and torch.is_grad_enabled()) or not isinstance(output, torch.Tensor):
                return
            layer.add_inputs(inputs[0])
            if output.requires_grad:
                output.register_hook(lambda grad: layer.add_output_grads(grad))
        return hook

    def reset(self, capture: bool) -> None:
        for layer in self.layers:
            layer.reset()
        self.capture = capture

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.handles = []


def allreduce_groups(n_layers: int, split_indices: Sequence[int] | None) -> list[list[int]]:
    """The A/G layer indices of each all-reduce fusion group (MindSpore: split_indices [26, 53] over 54 layers
    gives layers 0-26 and 27-53; None: one group)."""
    ends = list(split_indices or [n_layers - 1])
    groups, start = [], 0
    for end in ends:
        groups.append(list(range(start, end + 1)))
        start = end + 1
    if start < n_layers:
        groups.append(list(range(start, n_layers)))
    return [g for g in groups if g]


# ---------------------------------------------------------------------------------------------------------------
# the optimizer
# ---------------------------------------------------------------------------------------------------------------
class ClipByNorm(Stage):
    """enable_clip_grad: u = u·c / max(‖u‖, c) per tensor, c = 1.0 (MindSpore nn.ClipByNorm in thor's
    clip_gradient)."""

    per_tensor = True

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        hp["clip_on"] = bool(group.get("enable_clip_grad"))

    def apply(self, b: Batch) -> None:
        if b.hp["clip_on"]:
            factors = b.ops.smap(lambda n: CLIP_NORM / torch.clamp(n, min=CLIP_NORM), b.ops.norm(b.u))
            b.u = b.ops.mul(b.u, factors)


class THOR(ChainOptimizer):
    """mindspore.nn.thor (MindSpore 1.6 - 2.x; ThorGpu / ThorAscend with DenseThor, Conv2dThor, EmbeddingThor):

        g = ∇w / loss_scale
        refresh (step k % frequency == 0), per Linear / Conv2d / Embedding layer, from this step's records:
            A⁻¹ = (A + √λ·I)⁻¹,  G⁻¹ = (G·batch_size²/loss_scale² + √λ·I)⁻¹       λ = damping[k]
        g = G⁻¹ g A⁻¹ (stale A⁻¹, G⁻¹ between refreshes);  LayerNorm: g / (g²/batch_size + √λ)
        g += weight_decay·w where decay_filter keeps the name;  ClipByNorm(1.0) with enable_clip_grad
        v = u·v + g (v₀ = 0);  w -= lr·(g + u·v) if use_nesterov else lr·v

    `net` is the model: its trainable parameters are updated, in one group. The hooks stay on the model while the
    optimizer is used; `remove_hooks()` takes them off. A/G inverses live in the state of each layer's weight
    (`a_inv`, `g_inv`), so a checkpoint resumes between refreshes exactly.
    """

    chain = Chain(ClipByNorm(), MomentumStage(start="zero", nesterov="use_nesterov"), ApplyLR())
    supports_sparse = False

    def __init__(self, net: torch.nn.Module, learning_rate: MS_LEARNING_RATE, damping: DAMPING,
                 momentum: StrictNonNegFloat, weight_decay: NonNegFloat = 0.0, loss_scale: LossScale = 1.0,
                 batch_size: PosInt = 32, use_nesterov: Bool = False, decay_filter: DECAY_FILTER = (),
                 split_indices: Optional[IncreasingInts] = None, enable_clip_grad: Bool = False,
                 frequency: Frequency = 100, *, foreach: OptionalBool = None, fused: OptionalBool = None,
                 contiguous_params: Bool = False, state_dtype: StateDtype = None) -> None:
        if not isinstance(net, torch.nn.Module):
            raise ConfigError(f"must be the model (a torch.nn.Module), got {type(net).__name__}", "net")
        named = [(n, p) for n, p in net.named_parameters() if p.requires_grad]
        if not named:
            raise ConfigError("the model has no trainable parameters", "net")
        # the options' words (Frequency, PosInt) where the class is called directly
        wrong = NOT_FLOAT.format(value=show(frequency)) if isinstance(frequency, float) else \
            number_message(frequency, 2, integer=True)
        if wrong is not None:
            raise ConfigError(wrong, "frequency")
        if (wrong := number_message(batch_size, 1, integer=True)) is not None:
            raise ConfigError(wrong, "batch_size")
        table = lr_table(_checked(_damping, damping, "damping"), "damping")
        decay_filter = _checked(_decay_filter, decay_filter, "decay_filter")
        layers = _layers(net)
        _check_split(split_indices, len(layers))
        super().__init__([{"params": [p for _, p in named], "param_names": [n for n, _ in named]}],
                         dict(lr=learning_rate, momentum=momentum, weight_decay=weight_decay, loss_scale=loss_scale,
                              use_nesterov=use_nesterov, enable_clip_grad=enable_clip_grad, batch_size=batch_size),
                         foreach=foreach, fused=fused, contiguous_params=contiguous_params, state_dtype=state_dtype,
                         loss_scale=loss_scale)
        # the options the groups do not carry, so that type(opt)(net, **opt.defaults) rebuilds the same optimizer
        self.defaults.update(damping=damping, decay_filter=decay_filter, split_indices=split_indices,
                             frequency=frequency)
        self.net = net
        self.damping = table
        self.frequency = frequency
        self.split_indices = list(split_indices) if split_indices is not None else None
        self.layers = layers
        self._decay = {id(p): keeps(decay_filter, n) for n, p in named}   # LARS's filter rule: globs keep out
        self._layer_of = {id(layer.module.weight): layer for layer in layers}
        self._layernorm = {id(p) for m in net.modules() if type(m) is torch.nn.LayerNorm for p in m.parameters()}
        self.recorder = Recorder(layers)
        self.recorder.capture = self.refreshes(self.global_step)

    # -- what MindSpore's thor exposes ------------------------------------------------------------------------
    def get_frequency(self) -> int:
        """The interval of the A/G refreshes (ModelThor reads it)."""
        return self.frequency

    def refreshes(self, index: int) -> bool:
        """Whether step `index` (0-based) records A and G and recomputes their inverses."""
        return index % self.frequency == 0

    def allreduce_groups(self) -> list[list[str]]:
        """The layer names of each all-reduce fusion group that `split_indices` sets (no effect in one process)."""
        return [[self.layers[i].name for i in group] for group in allreduce_groups(len(self.layers),
                                                                                    self.split_indices)]

    def remove_hooks(self) -> None:
        """Take the recording hooks off the model."""
        self.recorder.remove()

    # -- state --------------------------------------------------------------------------------------------------
    def init_state(self, p: torch.Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """The chain's state, and for a layer weight its A⁻¹ and G⁻¹ (zeros until the first refresh, as
        MindSpore initialises them), in the statistics' dtype."""
        state = super().init_state(p, group)
        layer = getattr(self, "_layer_of", {}).get(id(p))
        if layer is not None:
            like = dict(dtype=layer.dtype, device=p.device)
            if isinstance(layer.kind, Embedding):   # A⁻¹ a diagonal (one per id), G⁻¹ over the embedding size
                state["a_inv"] = torch.zeros(p.shape[0], **like)
                state["g_inv"] = torch.zeros(p.shape[1], p.shape[1], **like)
            else:                                   # the weight as a matrix (out, in·kh·kw)
                state["a_inv"] = torch.zeros(p[0].numel(), p[0].numel(), **like)
                state["g_inv"] = torch.zeros(p.shape[0], p.shape[0], **like)
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        super().load_state_dict(state_dict)
        self.recorder.reset(self.refreshes(self.global_step))

    # -- the step -----------------------------------------------------------------------------------------------
    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Refresh the inverses (on a refresh step), turn each gradient into THOR's, then the momentum chain."""
        loss = closure_loss(closure)
        self._refuse_sparse()
        index = self.global_step
        group = self.param_groups[0]
        damping = value_at(self.damping, index, "damping") if self.refreshes(index) or self._layernorm else 0.0
        if self.refreshes(index):
            self._refresh(group, index, damping)
        saved = []
        try:
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        saved.append((p, p.grad))
                        p.grad = self._natural_gradient(p, group, damping)
            super().step()
        finally:
            for p, grad in saved:
                p.grad = grad
        self.recorder.reset(self.refreshes(self.global_step))
        return loss

    def _refuse_sparse(self) -> None:
        if any(p.grad is not None and p.grad.is_sparse for g in self.param_groups for p in g["params"]):
            raise RuntimeError(f"{type(self).__name__} does not support sparse gradients")

    def _refresh(self, group: dict[str, Any], index: int, damping: float) -> None:
        """A⁻¹, G⁻¹ of every layer that has a gradient, from the statistics recorded in this step."""
        for layer in self.layers:
            weight = layer.module.weight
            if weight.grad is None:
                continue
            if not layer.complete:
                raise RuntimeError(
                    f"THOR: layer {layer.name!r} has a gradient but recorded no A/G statistics in step {index} (a "
                    f"refresh step): run the model's forward (with gradients enabled) and backward before step()")
            state = self._state_for(weight, group)
            a_inv, g_inv = layer.kind.inverses(layer, damping, group["batch_size"], group["loss_scale"])
            state["a_inv"].copy_(a_inv)
            state["g_inv"].copy_(g_inv)

    def _natural_gradient(self, p: torch.Tensor, group: dict[str, Any], damping: float) -> torch.Tensor:
        """g / loss_scale, preconditioned by the parameter's layer, plus weight_decay·w where it decays."""
        g = p.grad / group["loss_scale"] if group["loss_scale"] != 1.0 else p.grad
        layer = self._layer_of.get(id(p))
        if layer is not None:
            state = self._state_for(p, group)
            g = layer.kind.precondition(g.to(layer.dtype), state["a_inv"], state["g_inv"]).to(p.dtype)
        elif id(p) in self._layernorm:
            g = layernorm_gradient(g, damping, group["batch_size"])
        if group["weight_decay"] and self._decay.get(id(p), True):
            g = g + group["weight_decay"] * p
        return g


def _checked(validator: Callable[[Any], Any], value: Any, path: str) -> Any:
    """A value the registry has validated already, or one a Python caller passes straight to the class."""
    try:
        return validator(value)
    except ValueError as exc:
        raise ConfigError(str(exc), path) from None


def _layers(net: torch.nn.Module) -> list[LayerStatistics]:
    """The layers THOR preconditions, in the model's order (the A/G layer indices of split_indices)."""
    out = []
    for name, module in net.named_modules():
        kind = layer_kind(module)
        if kind is not None:
            dtype = torch.promote_types(module.weight.dtype, torch.float32)
            out.append(LayerStatistics(kind, module, name, dtype))
    return out


def _check_split(split_indices: Sequence[int] | None, n_layers: int) -> None:
    """split_indices: strictly increasing A/G layer indices, each within the model's layers."""
    if split_indices is None:
        return
    for i, index in enumerate(split_indices):
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise ConfigError(f"must be a layer index >= 0, got {show(index)}", f"split_indices[{i}]")
        if index >= n_layers:
            raise ConfigError(f"layer index {index} is past the model's {n_layers} A/G layers "
                              f"(0-{n_layers - 1})" if n_layers else
                              f"layer index {index}: the model has no Linear, Conv2d or Embedding layer",
                              f"split_indices[{i}]")
        if i and index <= split_indices[i - 1]:
            raise ConfigError(f"must be strictly increasing, got {show(list(split_indices))}", "split_indices")

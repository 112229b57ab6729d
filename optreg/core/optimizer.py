"""The first-party optimizer base: torch's Optimizer with the dialect features every entry may use.

The update itself is a chain of stages (`optreg.stages.optimizer.ChainOptimizer` runs it); this class
holds what the frameworks add around it. Every feature is off by default; a dialect's class turns it
on through the keyword arguments it passes here.

MindSpore (nn.Optimizer, 1.6 - 2.x)
    * `lr` given as a number, a per-step list / 1-D tensor (step k uses entry k; past the end
      `step()` raises IndexError, as MindSpore's Gather does), or a schedule (any callable
      `step -> lr`, e.g. an absolute-valued `Schedule`, called with the 0-based step).
    * `loss_scale` (> 0), validated here; the gradient stages unscale.
    * an optimizer-wide step counter (`global_step`) that advances once per `step()`.
OneFlow (oneflow.optim.Optimizer)
    * the same optimizer-wide step counter (it advances for params that got no gradient too);
    * per-group `clip_grad_max_norm` / `clip_grad_norm_type` and `clip_grad()`;
    * `zero_grad(set_to_none=False)` by default (`set_to_none=False`).
Cerebras (cerebras.pytorch.optim.Optimizer)
    * `preinit=True`: `preinitialize()` allocates every state tensor in the constructor, so the
      state dict is complete before the first step and `step()` creates no new state;
    * `state_names_to_sparsify()`; `enable_global_step` / `increment_global_step(p)`.
"""

from __future__ import annotations

import functools
import inspect
import numbers
import warnings
from typing import Any, Callable, Iterable, Sequence, Union

import torch

from optreg.core.models import number_message
from optreg.core.names import TUPLE_ALIASES, option_aliases
from optreg.core.types import MAX_FLOAT
from optreg.errors import ConfigError

LearningRate = Union[float, Sequence[float], torch.Tensor, Callable[[int], float]]



# ---------------------------------------------------------------------------------------------
# learning-rate forms (MindSpore)
# ---------------------------------------------------------------------------------------------


def lr_table(value: Any, path: str = "lr") -> float | list[float] | Callable[[int], float]:
    """Normalise a learning rate: a float, a list of per-step floats, or a callable `step -> lr`.

    Raises ConfigError for what MindSpore refuses: a negative number, a tensor of rank >= 2, an
    empty table, a boolean, or anything that is neither a number, a sequence nor a callable; and, as the options
    read an lr (mindspore.vocabulary), a number or a list's entry that is not finite or is past MAX_FLOAT.
    """
    if isinstance(value, bool):
        raise ConfigError(f"must be a number, a list of per-step numbers or a schedule, got {value!r}", path)
    if isinstance(value, torch.Tensor):
        if value.dim() == 0:
            value = float(value)
        elif value.dim() == 1:
            value = [float(v) for v in value.detach().cpu().tolist()]
        else:
            raise ConfigError(f"a learning-rate tensor must be 0-d or 1-d, got shape {tuple(value.shape)}", path)
    if isinstance(value, numbers.Real):
        wrong = number_message(value, 0, finite=True, high=MAX_FLOAT)
        if wrong is not None:
            raise ConfigError(wrong, path)
        return float(value)
    if isinstance(value, (list, tuple)):
        if not value:
            raise ConfigError("a per-step learning-rate list must not be empty", path)
        table = []
        for i, v in enumerate(value):   # each entry by the rule of an lr given as a number, as the options read it
            wrong = f"must be a finite number, got {v!r}" if isinstance(v, bool) or not isinstance(v, numbers.Real) \
                else number_message(v, 0, finite=True, high=MAX_FLOAT)
            if wrong is not None:
                raise ConfigError(wrong, f"{path}[{i}]")
            table.append(float(v))
        return table
    if callable(value):
        return value
    raise ConfigError(
        f"must be a number, a list of per-step numbers or a schedule, got {type(value).__name__}", path
    )


def lr_at(table: float | list[float] | Callable[[int], float], index: int) -> float:
    """The learning rate of the step with 0-based `index`.

    A list gives entry `index`; past its end it raises IndexError, as MindSpore does (its Gather
    of `learning_rate[global_step]` fails with "input_indices should be in the range [0, n)").
    A callable is called with `index` (MindSpore calls `LearningRateSchedule(global_step)` with
    the 0-based step).
    """
    if isinstance(table, float):
        return table
    if isinstance(table, list):
        if index >= len(table):
            raise IndexError(
                f"step {index} is past the end of the per-step learning-rate list ({len(table)} entries)"
            )
        return table[index]
    return float(table(index))


def closure_loss(closure: Callable[[], Any] | None) -> Any:
    """The closure's loss, computed with gradients enabled inside a no-grad step (torch's convention)."""
    if closure is None:
        return None
    with torch.enable_grad():
        return closure()


# ---------------------------------------------------------------------------------------------
# the groups' spelling in a constructor call
# ---------------------------------------------------------------------------------------------

def group_spellings(init: Callable[..., None]) -> dict[str, tuple[str, ...]]:
    """The options that constructor `init` of an optreg optimizer also takes in the groups' spelling (`lr`, `betas`)
    where it spells them otherwise, each with the names it passes them on as (MindSpore: `learning_rate`; `beta1`,
    `beta2`); none for another constructor."""
    if not getattr(init, "accepts_group_spelling", False):
        return {}
    names = set(inspect.signature(init).parameters)
    spellings = {**{target: (alias,) for alias, target in option_aliases().items()}, **TUPLE_ALIASES}
    return {key: spelled for key, spelled in spellings.items()
            if key not in names and all(n in names for n in spelled)}


def _accepting_group_spelling(init: Callable[..., None]) -> Callable[..., None]:
    """Wrap a constructor so that a call may give options in the groups' spelling (`lr`, `betas`) where
    the constructor spells them otherwise (MindSpore: `learning_rate`, `beta1`, `beta2`), so that
    `type(opt)(params, **opt.defaults)` works; they are passed on under the constructor's names."""
    renames: dict[str, tuple[str, ...]] | None = None   # made on the first call: the dialects declare the aliases

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        nonlocal renames
        if renames is None:
            renames = group_spellings(__init__)
        for key in renames.keys() & kwargs.keys():
            value, spelled = kwargs.pop(key), renames[key]
            kwargs.update(zip(spelled, value) if len(spelled) > 1 else [(spelled[0], value)])
        init(self, *args, **kwargs)

    __init__.accepts_group_spelling = True   # type: ignore[attr-defined]
    return __init__


# ---------------------------------------------------------------------------------------------
# the base class
# ---------------------------------------------------------------------------------------------


class Optimizer(torch.optim.Optimizer):
    """torch's Optimizer plus the dialect features; `init_state` gives a parameter's state.

    Everything a checkpoint must carry lives where torch's, ZeRO's and torch.distributed.checkpoint's
    state dicts carry it: tensors in `state`, primitives in `param_groups` (the optimizer-wide step is
    each group's `global_step`). A dynamic lr is configuration: kept beside the groups, not in them.
    `type(opt)(params, **opt.defaults)` rebuilds the same optimizer, in every dialect's spelling.
    """

    #: state names with the parameter's shape (Cerebras `state_names_to_sparsify`)
    sparsify_states: tuple[str, ...] = ()
    #: whether the rule accepts sparse COO gradients (otherwise a sparse grad is an error)
    supports_sparse: bool = False
    #: attributes that are caches the next step rebuilds, left out of copies and pickles
    transient: tuple[str, ...] = ()

    def __getstate__(self) -> dict[str, Any]:
        """Every attribute but the caches (torch's Optimizer keeps only defaults, state and param_groups, and
        `copy.deepcopy` or pickle would lose the dialect settings: loss scale, lr tables, step counters)."""
        return {k: v for k, v in self.__dict__.items() if k not in self.transient}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = _accepting_group_spelling(cls.__dict__["__init__"])  # type: ignore[method-assign]

    def __init__(
        self,
        params: Iterable[Any],
        defaults: dict[str, Any],
        *,
        loss_scale: float = 1.0,
        preinit: bool = False,
        enable_global_step: bool = False,
        set_to_none: bool = True,
    ) -> None:
        if (wrong := number_message(loss_scale, above=0)) is not None:
            raise ConfigError(wrong, "loss_scale")
        self.loss_scale = float(loss_scale)
        self.preinit = bool(preinit)
        self.enable_global_step = bool(enable_global_step)
        self.set_to_none = bool(set_to_none)
        self._lr_tables: list[Any] = []
        defaults = dict(defaults)
        super().__init__(params, defaults)
        if self.preinit:
            self.preinitialize()

    # -- the optimizer-wide step ----------------------------------------------------------------

    @property
    def global_step(self) -> int:
        """Steps taken (MindSpore's and OneFlow's optimizer-wide counter): each group's `global_step`."""
        groups = self.__dict__.get("param_groups") or [{}]
        return int(groups[0].get("global_step", 0))

    @global_step.setter
    def global_step(self, value: int) -> None:
        for group in self.param_groups:
            group["global_step"] = int(value)

    # -- groups ---------------------------------------------------------------------------------

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """torch's add_param_group, plus the dynamic-lr forms (a per-step list or a schedule, kept in
        `lr_schedule(index)`; the group holds the lr of the next step) and the optimizer-wide step."""
        index = len(getattr(self, "param_groups", []))
        defaults = self.defaults
        lr = param_group.get("lr", defaults.get("lr"))
        table = None
        param_group = dict(param_group)
        if "lr" in defaults and lr is not None and not isinstance(lr, float):  # None: none (Adafactor's relative step)
            table = lr_table(lr, f"param_groups[{index}].lr" if index else "lr")
            param_group["lr"] = table if isinstance(table, float) else lr_at(table, self.global_step)
            table = None if isinstance(table, float) else table
        param_group["global_step"] = self.global_step
        super().add_param_group(param_group)
        self._lr_tables.append(table)
        if getattr(self, "preinit", False) and hasattr(self, "state"):
            self._preinit_group(self.param_groups[-1])

    def lr_schedule(self, index: int) -> list[float] | Callable[[int], float] | None:
        """Group `index`'s dynamic lr (a per-step list or a callable `step -> lr`), or None for a fixed lr."""
        return self._lr_tables[index] if index < len(self._lr_tables) else None

    def _group_lr(self, index: int, group: dict[str, Any]) -> float:
        """The group's lr for the step about to run; a dynamic lr is read at the 0-based step index."""
        table = self.lr_schedule(index)
        if table is not None:
            group["lr"] = lr_at(table, group["global_step"] - 1)
        return group["lr"]

    # -- state ----------------------------------------------------------------------------------

    def init_state(self, p: torch.Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """Every state entry of `p`; subclasses override (the default has none)."""
        return {}

    def _state_for(self, p: torch.Tensor, group: dict[str, Any]) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            fresh = self._initial_state(p, group)
            if self.preinit and fresh:  # a stateless param (SGD, momentum 0) is fine
                raise RuntimeError("step() must not create state when preinit=True; was the parameter added later?")
            state.update(fresh)
        return state

    def _initial_state(self, p: torch.Tensor, group: dict[str, Any]) -> dict[str, Any]:
        """`init_state` and the per-parameter step count (`enable_global_step`). Its 0-d tensors are marked
        `optreg_initial`: equal across a group's parameters until they step (`contiguous.Bucket.adopt`)."""
        state = self.init_state(p, group)
        if self.enable_global_step:
            state["step"] = torch.tensor(0.0, dtype=torch.float32, device=p.device)
        for value in state.values():
            if isinstance(value, torch.Tensor) and value.dim() == 0:
                value.optreg_initial = True
        return state

    def _preinit_group(self, group: dict[str, Any]) -> None:
        for p in group["params"]:
            state = self.state[p]
            if not state:
                state.update(self._initial_state(p, group))

    def preinitialize(self) -> None:
        """Allocate every state tensor now (Cerebras): the state dict is complete before step 1."""
        for group in self.param_groups:
            self._preinit_group(group)

    def state_names_to_sparsify(self) -> list[str]:
        """Per-parameter states that have the parameter's shape (Cerebras sparsity masking)."""
        return list(self.sparsify_states)

    def increment_global_step(self, p: torch.Tensor) -> torch.Tensor:
        """Add 1 to `state[p]["step"]` (a float32 scalar) and return it (Cerebras)."""
        step = self.state[p]["step"]
        step.add_(1.0)
        return step

    # -- OneFlow features -----------------------------------------------------------------------

    def clip_grad(self, error_if_nonfinite: bool = False) -> None:
        """Clip each group's gradients by that group's own norm (OneFlow `Optimizer.clip_grad`).

        A group takes part when it has both `clip_grad_max_norm` and `clip_grad_norm_type`;
        a group without them is skipped with a warning, as OneFlow does.
        """
        for i, group in enumerate(self.param_groups):
            if "clip_grad_max_norm" in group and "clip_grad_norm_type" in group:
                params = [p for p in group["params"] if p.grad is not None]
                if params:
                    torch.nn.utils.clip_grad_norm_(
                        params,
                        group["clip_grad_max_norm"],
                        group["clip_grad_norm_type"],
                        error_if_nonfinite=error_if_nonfinite,
                    )
            else:
                warnings.warn(
                    f"param group {i} has no clip_grad_max_norm / clip_grad_norm_type; its gradients are not clipped",
                    stacklevel=2,
                )

    @property
    def support_sparse(self) -> bool:
        """OneFlow's `Optimizer.support_sparse`: whether sparse gradients are accepted."""
        return self.supports_sparse

    def zero_grad(self, set_to_none: bool | None = None) -> None:
        """torch's zero_grad; the default of `set_to_none` is the dialect's (OneFlow: False)."""
        super().zero_grad(set_to_none=self.set_to_none if set_to_none is None else set_to_none)

    # -- checkpoints ----------------------------------------------------------------------------

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """torch's load_state_dict. The groups' `global_step` comes from the dict: from its groups, else from
        the top-level `global_step` that optreg 0.1 wrote, else 0 (a dict written by torch).

        The groups keep their own dynamic lr. torch casts every state tensor but `step` to the
        parameter's dtype and device; a state that `init_state` keeps in another dtype or on another
        device (float32 beta powers of a bf16 parameter, AdamOffload's host-side moments, a float16
        compressed moment) is kept out of that cast and restored with its own layout, losslessly."""
        state_dict = dict(state_dict)
        legacy_step = int(state_dict.pop("global_step", 0))
        own_layout: dict[tuple[int, str], tuple[torch.Tensor, torch.Tensor]] = {}
        saved_state = dict(state_dict.get("state", {}))
        for saved, group in zip(state_dict.get("param_groups", []), self.param_groups):
            for key, p in zip(saved.get("params", []), group["params"]):
                st = saved_state.get(key)
                if not st:
                    continue
                fresh = self.init_state(p, group)
                for name, value in st.items():
                    like = fresh.get(name)
                    if isinstance(value, torch.Tensor) and isinstance(like, torch.Tensor) and name != "step" and \
                            (like.dtype != p.dtype or like.device != p.device):
                        own_layout[(id(p), name)] = (value, like)
                saved_state[key] = {n: v for n, v in st.items() if (id(p), n) not in own_layout}
        super().load_state_dict({**state_dict, "state": saved_state})
        for group in self.param_groups:
            group.setdefault("global_step", legacy_step)
            for p in group["params"]:
                for name in [n for (pid, n) in own_layout if pid == id(p)]:
                    value, like = own_layout[(id(p), name)]
                    self.state[p][name] = value.to(dtype=like.dtype, device=like.device)

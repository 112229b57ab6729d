"""OneFlow's `contiguous_params`: a param group's parameters, gradients and state in one flat buffer
per (dtype, device), so that one step of the chain is one call over the whole group.

    flat = [p₁ ·· | p₂ ·· | … | pₙ ··]     pᵢ.data, pᵢ.grad and pᵢ's state tensors are views of their slices

Each slice starts at a multiple of BLOCK elements (the padding `··` stays zero), so that the buffers
viewed as rows of BLOCK elements give every parameter whole rows.

(OneFlow 0.9 `ContiguousParamsBuffer`.) `state_dict()`, checkpoints and `load_state_dict` see ordinary
per-parameter tensors: a state that arrives from elsewhere (a loaded checkpoint, a lazily created
state) is copied into its slice. A step runs the chain once over the flat tensors when every
parameter of the bucket has a dense gradient, the chain is element-wise (`Chain.flat`: no
per-tensor norm, no shapes; under `fused` also a chain whose per-tensor reductions are norms, which
are then sums of rows: `Chain.segmented`, the LAMBs) and the per-parameter 0-d state (Cerebras'
beta powers and step counts) is equal across the bucket; otherwise it runs per tensor over the same
views, with the same result.

The parameters of a group then share one storage, as in OneFlow: a format that refuses shared
storage (safetensors) needs the weights cloned first.
"""

from __future__ import annotations

from operator import is_, itemgetter
from typing import Any, Mapping, Sequence

import torch

from optreg.stages.chain import Chain
from optreg.stages.execute import BLOCK, run_flat, run_rows


def whole(mode: str, chain: Chain, hp: Mapping[str, Any]) -> bool:
    """Whether this step of `chain` can run over a whole bucket at once: an element-wise chain in every
    execution, a chain whose per-tensor reductions are norms under `fused`."""
    return chain.flat(hp) or (mode == "fused" and chain.segmented(hp))


def eligible(p: torch.Tensor) -> bool:
    """A plain dense, contiguous tensor that autograd gives a gradient (DTensors, subclasses, frozen
    and channels-last parameters keep their own storage)."""
    return (type(p) in (torch.Tensor, torch.nn.Parameter) and p.layout == torch.strided and p.requires_grad
            and p.numel() > 0 and p.is_contiguous())


class Bucket:
    """The flat buffers of one (dtype, device) of a group: parameters, gradients, and per state name
    either a flat full-size buffer or, for 0-d state, a vector with one entry per parameter."""

    def __init__(self, params: list[torch.Tensor]) -> None:
        self.params = params
        self.numels = [p.numel() for p in params]
        #: where each slice starts (a multiple of BLOCK), and the buffers' length
        self.offsets = [0]
        for n in self.numels:
            self.offsets.append(self.offsets[-1] + -(-n // BLOCK) * BLOCK)
        like = params[0]
        self.flat = torch.zeros(self.offsets[-1], dtype=like.dtype, device=like.device)
        for p, view in zip(params, self._views(self.flat)):
            view.copy_(p.detach())
            p.data = view
        self.ptrs = [p.data_ptr() for p in params]
        self.grad = torch.zeros_like(self.flat)
        self.grads = self._views(self.grad)
        #: state name -> (flat buffer or per-parameter vector, the per-parameter views)
        self.state: dict[str, tuple[torch.Tensor, list[torch.Tensor | None]]] = {}
        #: state name -> how many parameters have it in their slice
        self.filled: dict[str, int] = {}
        #: a state that cannot be flattened (another shape, dtype or device than its bucket's)
        self.irregular = False
        #: whether the per-parameter 0-d states agree (None: not known since the last change)
        self.uniform: bool | None = True
        #: steps run over the flat buffers
        self.runs = 0
        #: for norms per parameter (`run_rows`): each row's parameter index, a tensor with one element per
        #: parameter, a (rows, 1) column of ones, and the buffer of the update (made on the first such step)
        self.row_owner: torch.Tensor | None = None
        self.count: torch.Tensor | None = None
        self.ones: torch.Tensor | None = None
        self.scratch: torch.Tensor | None = None

    def _views(self, flat: torch.Tensor) -> list[torch.Tensor]:
        return [flat[a:a + n].view(p.shape) for p, a, n in zip(self.params, self.offsets, self.numels)]

    def fits(self) -> bool:
        """Whether every parameter still lives in its slice (`p.data = ...` or `module.to()` move it)."""
        return [p.data_ptr() for p in self.params] == self.ptrs

    def adopt(self, i: int, state: dict[str, Any]) -> None:
        """Copy parameter i's state tensors into their slices and put the views in the state."""
        p = self.params[i]
        for name, value in state.items():
            if not isinstance(value, torch.Tensor):
                continue
            slot = self.state.get(name)
            if slot is not None and slot[1][i] is value:
                continue
            scalar = value.dim() == 0
            if not scalar and value.shape != p.shape:
                self.irregular = True
                continue
            if slot is None:
                size = len(self.params) if scalar else self.offsets[-1]
                buffer = torch.zeros(size, dtype=value.dtype, device=value.device)
                slot = self.state[name] = (buffer, [None] * len(self.params))
            buffer, views = slot
            if (buffer.dtype, buffer.device) != (value.dtype, value.device):
                self.irregular = True
                continue
            view = buffer[i] if scalar else buffer[self.offsets[i]:self.offsets[i] + self.numels[i]].view(p.shape)
            view.copy_(value)
            self.filled[name] = self.filled.get(name, 0) + (views[i] is None)
            views[i] = state[name] = view
            if scalar:
                self.uniform = None

    def adopt_all(self, states: Sequence[dict[str, Any]]) -> None:
        """`adopt` for every parameter (`states` in the bucket's order), after one pass of identity checks
        that finds the usual step, where every state is already in its slice, with nothing to do."""
        if len(states[0]) == len(self.state) and all(
                all(map(is_, [st.get(name) for st in states], views)) for name, (_, views) in self.state.items()):
            return
        for i, st in enumerate(states):
            self.adopt(i, st)

    def complete(self, names: Sequence[str]) -> bool:
        """Every parameter has each of `names` (that any has) in its slice."""
        return not self.irregular and all(self.filled[n] == len(self.params) for n in names if n in self.filled)

    def agrees(self) -> bool:
        """Whether every 0-d state is equal across the parameters (checked once after a change)."""
        if self.uniform is None:
            self.uniform = all(bool((buffer == buffer[0]).all()) for buffer, views in self.state.values()
                               if views and views[0] is not None and views[0].dim() == 0)
        return self.uniform

    def run(self, mode: str, chain: Chain, hp: dict[str, Any]) -> None:
        """One step of the chain over the flat tensors; the gradients are copied into their slices
        unless they already are views of them (the next backward then accumulates into the slices)."""
        grads = [p.grad for p in self.params]
        if not all(map(is_, grads, self.grads)):
            moved = [(view, g) for g, view in zip(grads, self.grads) if g is not view]
            torch._foreach_copy_([v for v, _ in moved], [g for _, g in moved])
            for p, view in zip(self.params, self.grads):
                p.grad = view
        names = [n for n in chain.state_names if n in self.state]
        state = {n: [self.state[n][0] if self.state[n][1][0].dim() else self.state[n][1][0]] for n in names}
        if chain.flat(hp):
            run_flat(mode, chain, self.flat, self.grad, state, hp)
        else:
            if self.row_owner is None:
                device = self.flat.device
                rows = [(self.offsets[i + 1] - self.offsets[i]) // BLOCK for i in range(len(self.params))]
                self.row_owner = torch.repeat_interleave(torch.arange(len(rows), device=device),
                                                         torch.tensor(rows, device=device))
                self.count = torch.empty(len(rows), device=device)
                self.ones = torch.ones(len(self.row_owner), 1, dtype=self.flat.dtype, device=device)
            if self.scratch is None and chain.around_norms()[0]:
                self.scratch = torch.zeros_like(self.flat)
            run_rows(chain, self.flat, self.grad, state, self.scratch, self.ones, self.row_owner, self.count, hp)
        self.runs += 1
        for n in names:
            buffer, views = self.state[n]
            if views[0].dim() == 0 and len(views) > 1:
                buffer[1:].copy_(buffer[0].expand(len(views) - 1))


class Contiguous:
    """A group's buckets; `step` runs the flat buckets and returns what must run per tensor."""

    def __init__(self, params: Sequence[torch.Tensor]) -> None:
        self.params = list(params)
        by_kind: dict[Any, list[torch.Tensor]] = {}
        for p in params:
            if eligible(p):
                by_kind.setdefault((p.dtype, p.device), []).append(p)
        self.buckets = [Bucket(ps) for ps in by_kind.values()]
        self.where = {p: (b, i) for b in self.buckets for i, p in enumerate(b.params)}
        #: whether the last step ran the group's only bucket flat, every parameter in it (`steady`)
        self.flat_last = False

    def fits(self, params: Sequence[torch.Tensor]) -> bool:
        return (len(params) == len(self.params) and all(a is b for a, b in zip(params, self.params))
                and all(b.fits() for b in self.buckets))

    def steady(self, params: Sequence[torch.Tensor], state: Mapping[torch.Tensor, dict[str, Any]]) -> bool:
        """Whether this step is the last one again: the group's only bucket ran flat, and its
        parameters, gradients and state are still the bucket's slices. A few identity checks at C speed
        instead of the per-parameter loop (`rerun` then steps)."""
        if not self.flat_last:
            return False
        (bucket,) = self.buckets
        if not (len(params) == len(bucket.params) and all(map(is_, params, bucket.params)) and bucket.fits()
                and all(map(is_, [p.grad for p in params], bucket.grads))):
            return False
        states = list(map(state.get, params))
        if None in states or set(map(len, states)) != {len(bucket.state)}:
            return False
        return all(all(map(is_, map(itemgetter(name), states), views)) for name, (_, views) in bucket.state.items())

    def rerun(self, mode: str, chain: Chain, hp: dict[str, Any]) -> bool:
        """The flat step of a `steady` group (False, doing nothing, when this step's options take the
        chain off the flat path)."""
        if not whole(mode, chain, hp):
            return False
        self.buckets[0].run(mode, chain, hp)
        return True

    def step(self, mode: str, chain: Chain, params: list[torch.Tensor], grads: list[torch.Tensor],
             states: list[dict[str, Any]], hp: dict[str, Any]) -> tuple[list, list, list]:
        """Adopt the state of `params` (those with a dense gradient), run every bucket that all of its
        parameters are in flat, and return the (params, grads, states) left to run per tensor."""
        flat = whole(mode, chain, hp)
        if len(self.buckets) == 1 and len(params) == len(self.buckets[0].params) \
                and all(map(is_, params, self.buckets[0].params)):  # the usual step: one bucket, every gradient
            bucket = self.buckets[0]
            bucket.adopt_all(states)
            if flat and bucket.complete(chain.state_names) and bucket.agrees():
                bucket.run(mode, chain, hp)
                self.flat_last = len(self.params) == len(bucket.params)
                return [], [], []
            bucket.uniform = None
            self.flat_last = False
            return params, grads, states
        self.flat_last = False
        seen: dict[int, int] = {}
        for p, st in zip(params, states):
            spot = self.where.get(p)
            if spot is not None:
                bucket, i = spot
                bucket.adopt(i, st)
                seen[id(bucket)] = seen.get(id(bucket), 0) + 1
        ran = set()
        for bucket in self.buckets:
            if flat and seen.get(id(bucket)) == len(bucket.params) and bucket.complete(chain.state_names) \
                    and bucket.agrees():
                bucket.run(mode, chain, hp)
                ran.add(id(bucket))
            elif seen.get(id(bucket)):
                bucket.uniform = None  # a per-tensor step may advance some 0-d states and not others
        if not ran:
            return params, grads, states
        keep = [k for k, p in enumerate(params) if p not in self.where or id(self.where[p][0]) not in ran]
        return [params[k] for k in keep], [grads[k] for k in keep], [states[k] for k in keep]

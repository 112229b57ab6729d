"""OneFlow's `contiguous_params`: a param group's parameters, gradients and state in one flat buffer
per (dtype, device), so that one step of the chain is one call over the whole group.

    flat = [p₁ ·· | p₂ ·· | … | pₙ ··]     pᵢ.data, pᵢ.grad and pᵢ's state tensors are views of their slices

Each slice starts at a multiple of BLOCK elements (the padding `··` stays zero), so that the buffers
viewed as rows of BLOCK elements give every parameter whole rows; for a chain that always needs shapes
(Adafactor), which never runs by rows, the slices follow each other without padding, so that the
parameters of a stack of same shape are one contiguous (B, *shape) tensor.

(OneFlow 0.9 `ContiguousParamsBuffer`.) `state_dict()`, checkpoints and `load_state_dict` see ordinary
per-parameter tensors: a state that arrives from elsewhere (a loaded checkpoint, a lazily created
state) is copied into its slice. A step runs the chain once over the flat tensors when every
parameter of the bucket has a dense gradient, the chain is element-wise (`Chain.flat`: no
per-tensor norm, no shapes; under `fused` also a chain whose per-tensor reductions are norms, which
are then sums of rows: `Chain.segmented`, the LAMBs) and the per-parameter 0-d state (Cerebras'
beta powers and step counts) is equal across the bucket; under `fused`, a chain that needs shapes
(`Chain.stacked`, the Adafactors) runs over stacks of consecutive same-shape slices (`Bucket.stacks`),
each state in a slot; otherwise it runs per tensor over the same views, with the same result.

The parameters of a group (0-d ones aside) then share one storage, as in OneFlow: a format that refuses shared
storage (safetensors) needs the weights cloned first.
"""

from __future__ import annotations

from operator import attrgetter, is_, methodcaller
from typing import Any, Mapping, Sequence

import torch

from optreg.stages.chain import Chain
from optreg.stages.execute import (BLOCK, Compile, alias, run_eager, run_flat, run_rows, run_stacked, split_hp,
                                   standins)
from optreg.stages.ops import rows_of_ones
from optreg.stages.state_codec import BLOCK_SIZE, blocks, is_scale

#: a tensor's data pointer and a parameter's gradient, mapped over a group at C speed (`steady`)
_data_ptr = torch.Tensor.data_ptr
_grad = attrgetter("grad")


#: a stack of same-shape slices (`Bucket.stacks`) holds at most this many elements, or one slice: a few
#: MB, which the passes of a factored moment then find in the cache
STACK_ELEMENTS = 1 << 21


def whole(mode: str, chain: Chain, hp: Mapping[str, Any]) -> bool:
    """Whether this step of `chain` can run over a whole bucket at once: an element-wise chain in every
    execution; under `fused`, a chain whose per-tensor reductions are norms, or one that needs shapes and
    runs over stacks of same-shape slices (`Chain.stacked`)."""
    return chain.flat(hp) or (mode == "fused" and (chain.segmented(hp) or chain.stacked(hp)))


def eligible(p: torch.Tensor) -> bool:
    """A plain dense, contiguous tensor of at least one dimension that autograd gives a gradient
    (DTensors, subclasses, frozen, channels-last and 0-d parameters keep their own storage: a 0-d
    parameter's state would be taken for a per-parameter scalar)."""
    return (type(p) in (torch.Tensor, torch.nn.Parameter) and p.layout == torch.strided and p.requires_grad
            and p.dim() > 0 and p.numel() > 0 and p.is_contiguous())


class Bucket:
    """The flat buffers of one (dtype, device) of a group: parameters, gradients, and per state name
    either a flat full-size buffer or, for 0-d state, a vector with one entry per parameter; a state of
    another shape (Adafactor's row and column moments) has a buffer of its own (`shaped`), its slices
    in the parameters' order."""

    def __init__(self, params: list[torch.Tensor], align: int = BLOCK) -> None:
        self.params = params
        self.numels = [p.numel() for p in params]
        #: where each slice starts (a multiple of `align`), and the buffers' length
        self.offsets = [0]
        for n in self.numels:
            self.offsets.append(self.offsets[-1] + -(-n // align) * align)
        like = params[0]
        self.align = align
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
        #: state name -> (buffer, the per-parameter views, where each starts, their shapes), for a state
        #: whose shape is not its parameter's (made by `adopt_all`)
        self.shaped: dict[str, tuple[torch.Tensor, list[torch.Tensor | None], list[int | None], list[Any]]] = {}
        #: how many state tensors the slots hold, and the stacks of the last `run_stacked` (reset by a change)
        self.held = 0
        self.stack_plan: list[tuple] | None = None
        self.stack_warm = False
        self.stack_threads = 0
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
        #: the background compiles of the fused step, by chain, static settings and path (`compiled`)
        self.compiles: dict[Any, Compile] = {}

    def _views(self, flat: torch.Tensor) -> list[torch.Tensor]:
        return [flat[a:a + n].view(p.shape) for p, a, n in zip(self.params, self.offsets, self.numels)]

    def fits(self) -> bool:
        """Whether every parameter still lives in its slice (`p.data = ...` or `module.to()` move it)."""
        return list(map(_data_ptr, self.params)) == self.ptrs

    def adopt(self, i: int, state: dict[str, Any]) -> None:
        """Copy parameter i's state tensors into their slices and put the views in the state."""
        p = self.params[i]
        for name, value in state.items():
            if not isinstance(value, torch.Tensor):
                continue
            slot = self.state.get(name)
            if slot is not None and slot[1][i] is value:
                continue
            if is_scale(name):
                self.irregular |= not self._adopt_scales(i, name, value, state)
                continue
            scalar = value.dim() == 0
            if not scalar and value.shape != p.shape:
                if not self._adopt_shaped(i, name, value, state):
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
            self.held += views[i] is None
            views[i] = state[name] = view
            self.stack_plan = None
            if scalar and not (self.runs == 0 and self.uniform and getattr(value, "optreg_initial", False)):
                self.uniform = None   # a fresh state is its group's initial value: no need to read it

    def _adopt_scales(self, i: int, name: str, value: torch.Tensor, state: dict[str, Any]) -> bool:
        """Copy parameter i's int8 block scales into their slice of the bucket's scales, which has one per
        block of the flat buffers (a slice starts at a block boundary; its padding's blocks are zero); False
        when the slices do not start at block boundaries (a chain that packs them without padding)."""
        if self.align % BLOCK_SIZE or value.shape != (blocks(self.numels[i]),) or value.dtype != torch.float32:
            return False
        slot = self.state.get(name)
        if slot is None:
            buffer = torch.zeros(self.offsets[-1] // BLOCK_SIZE, dtype=torch.float32, device=value.device)
            slot = self.state[name] = (buffer, [None] * len(self.params))
        buffer, views = slot
        if buffer.device != value.device:
            return False
        start = self.offsets[i] // BLOCK_SIZE
        view = buffer[start:start + value.numel()]
        view.copy_(value)
        self.filled[name] = self.filled.get(name, 0) + (views[i] is None)
        self.held += views[i] is None
        views[i] = state[name] = view
        self.stack_plan = None
        return True

    def _adopt_shaped(self, i: int, name: str, value: torch.Tensor, state: dict[str, Any]) -> bool:
        """Copy a state of another shape than its parameter's into its slice (False: it has none)."""
        slot = self.shaped.get(name)
        if slot is None:
            return False
        buffer, views, starts, shapes = slot
        if views[i] is value:
            return True
        if shapes[i] != value.shape or (buffer.dtype, buffer.device) != (value.dtype, value.device):
            return False
        view = buffer[starts[i]:starts[i] + value.numel()].view(value.shape)
        view.copy_(value)
        self.held += views[i] is None
        views[i] = state[name] = view
        self.stack_plan = None
        return True

    def _shape_slots(self, states: Sequence[dict[str, Any]]) -> None:
        """A buffer for each state name whose tensors have other shapes than their parameters (one dtype
        and device: the first parameter's that has it), with a slice for each parameter that has it."""
        for name in dict.fromkeys(n for st in states for n in st):
            if name in self.shaped or is_scale(name):
                continue
            values = [st.get(name) for st in states]
            values = [v if isinstance(v, torch.Tensor) and v.dim() > 0 and v.shape != p.shape else None
                      for v, p in zip(values, self.params)]
            first = next((v for v in values if v is not None), None)
            if first is None:
                continue
            starts: list[int | None] = []
            end = 0
            for v in values:
                same = v is not None and (v.dtype, v.device) == (first.dtype, first.device)
                starts.append(end if same else None)
                end += v.numel() if same else 0
            buffer = torch.zeros(end, dtype=first.dtype, device=first.device)
            self.shaped[name] = (buffer, [None] * len(values), starts,
                                 [v.shape if s is not None else None for v, s in zip(values, starts)])

    def holds(self, states: Sequence[dict[str, Any]]) -> bool:
        """Whether every state tensor of `states` (in the bucket's order) is already its slot's view."""
        if self.irregular or sum(map(len, states)) != self.held:
            return False
        slots = [(n, slot[1]) for n, slot in self.state.items()] + [(n, slot[1]) for n, slot in self.shaped.items()]
        return all(all(map(is_, map(methodcaller("get", name), states), views)) for name, views in slots)

    def adopt_all(self, states: Sequence[dict[str, Any]]) -> None:
        """`adopt` for every parameter (`states` in the bucket's order), after one pass of identity checks
        that finds the usual step, where every state is already in its slice, with nothing to do."""
        if self.holds(states):
            return
        self.irregular = False   # found again by `adopt`: an early partial step does not last
        self._shape_slots(states)
        for i, st in enumerate(states):
            self.adopt(i, st)

    def ready(self, mode: str, chain: Chain, hp: Mapping[str, Any], states: Sequence[dict[str, Any]]) -> bool:
        """Whether this step can run over the whole bucket (its state adopted): a chain over stacks needs
        every state tensor in a slot; the flat and row steps also need every parameter to have each state
        and its 0-d states to agree."""
        if not chain.flat(hp) and not chain.segmented(hp):
            return self.holds(states)
        return self.complete(chain.state_names) and self.agrees()

    def complete(self, names: Sequence[str]) -> bool:
        """Every parameter has each of `names` (that any has) in its slice."""
        return not self.irregular and all(self.filled[n] == len(self.params) for n in names if n in self.filled)

    def agrees(self) -> bool:
        """Whether every 0-d state is equal across the parameters: known while every one is its group's initial
        value and none has stepped (`adopt`), read from the tensors once after another change (a loaded state,
        a step per tensor)."""
        if self.uniform is None:
            self.uniform = all(bool((buffer == buffer[0]).all()) for buffer, views in self.state.values()
                               if views and views[0] is not None and views[0].dim() == 0)
        return self.uniform

    def run(self, mode: str, chain: Chain, hp: dict[str, Any], in_slices: bool = False) -> None:
        """One step of the chain over the flat tensors; the gradients are copied into their slices
        unless they already are views of them (the next backward then accumulates into the slices;
        `in_slices`: the caller has just checked that they are)."""
        grads = [] if in_slices else list(map(_grad, self.params))
        if grads and not all(map(is_, grads, self.grads)):
            moved = [(view, g) for g, view in zip(grads, self.grads) if g is not view]
            torch._foreach_copy_([v for v, _ in moved], [g for _, g in moved])
            for p, view in zip(self.params, self.grads):
                p.grad = view
        ready = mode != "fused" or self.compiled(chain, hp)
        if not ready and not chain.flat(hp):   # norms or shapes: each slice eager until the compile is ready
            self.run_slices(chain, hp)
            self.runs += 1
            return
        if not chain.flat(hp) and not chain.segmented(hp):   # over stacks of same-shape slices
            run_stacked(chain, self.stacks_now(chain), hp, self.stack_warm)
            self.stack_warm = True
            self.runs += 1
            return
        names = [n for n in chain.state_names if n in self.state]
        state = {n: [self.state[n][0] if self.state[n][1][0].dim() else self.state[n][1][0]] for n in names}
        if chain.flat(hp):   # until the compile is ready, the same step over the whole buffers, eager
            run_flat(mode if ready else "foreach", chain, self.flat, self.grad, state, hp)
        else:
            run_rows(chain, self.flat, self.grad, state, *self.rows_of(chain), hp)
        self.runs += 1
        for n in names:
            buffer, views = self.state[n]
            if views[0].dim() == 0 and len(views) > 1:
                buffer[1:].copy_(buffer[0].expand(len(views) - 1))

    def rows_of(self, chain: Chain) -> tuple:
        """What `run_rows` takes beside the buffers: the update's scratch buffer (None when no stage precedes
        the norms), the (rows, 1) column of ones, each row's parameter index and a per-parameter vector."""
        if self.row_owner is None:
            device = self.flat.device
            rows = [(self.offsets[i + 1] - self.offsets[i]) // BLOCK for i in range(len(self.params))]
            self.row_owner = torch.repeat_interleave(torch.arange(len(rows), device=device),
                                                     torch.tensor(rows, device=device))
            self.count = torch.empty(len(rows), device=device)
            self.ones = torch.ones(len(self.row_owner), 1, dtype=self.flat.dtype, device=device)
        if self.scratch is None and chain.around_norms()[0]:
            self.scratch = torch.zeros_like(self.flat)
        return self.scratch, self.ones, self.row_owner, self.count

    def stacks_now(self, chain: Chain) -> list[tuple]:
        """The stacks of same-shape slices (`stacks`), made again when the thread count has changed."""
        if self.stack_plan is None or self.stack_threads != torch.get_num_threads():
            self.stack_plan, self.stack_warm = self.stacks(chain.state_names), False
            self.stack_threads = torch.get_num_threads()
        return self.stack_plan

    def compiled(self, chain: Chain, hp: dict[str, Any]) -> bool:
        """Whether the fused step's compiled functions for this bucket are ready, starting their compile in the
        background on the first call (`execute.Compile`: on stand-ins of the buffers, so the real ones are never
        touched). A chain with norms or shapes and shrunk state (`state_dtype`) compiles on its first step."""
        if not chain.flat(hp) and hp.get("state_dtype"):
            return True
        static, _, _ = split_hp(hp)
        key = (id(chain), static, chain.flat(hp), chain.segmented(hp))
        task = self.compiles.get(key)
        if task is None:
            what = f"{chain.describe()} over a contiguous group of {len(self.params)} tensors (fused=True)"
            task = self.compiles[key] = Compile(what, lambda: self._compile(chain, dict(hp)))
        return task.ready()

    def _compile(self, chain: Chain, hp: dict[str, Any]) -> None:
        """The fused step's compiled calls, once, on stand-ins of this bucket's buffers (the compile thread)."""
        if not chain.flat(hp) and not chain.segmented(hp):
            run_stacked(chain, standins(self.stacks_now(chain)), hp)
            return
        names = [n for n in chain.state_names if n in self.state]
        state = {n: [self.state[n][0] if self.state[n][1][0].dim() else self.state[n][1][0]] for n in names}
        memo: dict = {}
        flat, grad, state = standins((self.flat, self.grad, state), memo)
        if chain.flat(hp):
            run_flat("fused", chain, flat, grad, state, hp)
        else:
            run_rows(chain, flat, grad, state, *standins(self.rows_of(chain), memo), hp)

    def run_slices(self, chain: Chain, hp: dict[str, Any]) -> None:
        """One step of the chain over each parameter's slice, eager (while the fused step compiles): `run_eager`
        over the slices, as contiguous_params without fused steps them (a parameter without one of the states,
        a vector beside Adafactor's factored matrices, in a batch of its own)."""
        names = [n for n in chain.state_names if n in self.state or n in self.shaped]
        views = {n: (self.state.get(n) or self.shaped[n])[1] for n in names}
        states = [{n: views[n][i] for n in names if views[n][i] is not None} for i in range(len(self.params))]
        run_eager(chain, list(self.params), list(self.grads), states, hp)
        self.uniform = None   # the 0-d states stepped one by one


    def _slot(self, name: str, i: int) -> tuple[torch.Tensor, int, tuple[int, ...], int, torch.dtype] | None:
        """Where parameter i's state `name` lies: (buffer, start, shape, the distance to the next
        parameter's slice when they stack, dtype); None when it has none. A 0-d state has shape ()."""
        slot = self.state.get(name)
        if slot is not None and slot[1][i] is not None:
            if slot[1][i].dim() == 0:
                return slot[0], i, (), 1, slot[0].dtype
            return (slot[0], self.offsets[i], tuple(self.params[i].shape), self.offsets[i + 1] - self.offsets[i],
                    slot[0].dtype)
        slot = self.shaped.get(name)
        if slot is not None and slot[1][i] is not None:
            shape = tuple(slot[3][i])
            return slot[0], slot[2][i], shape, slot[1][i].numel(), slot[0].dtype
        return None

    def stacks(self, names: Sequence[str]) -> list[tuple]:
        """The bucket as stacks of consecutive same-shape parameters with the same state (at most
        STACK_ELEMENTS elements each, or one parameter): per stack the names of its state, (B, *shape)
        views of the parameters, gradients and each state (0-d states as (B, 1, …, 1)), whether it is
        stacked (a parameter alone has views of its own shapes, which the per-tensor compiled chain takes),
        and for matrices the vector of ones that gives them their rows of ones (`ops.Traced`), else None."""
        out = []
        n = len(self.params)
        i = 0
        while i < n:
            shape = tuple(self.params[i].shape)
            kind = [(name, (v[2], v[3], v[4]) if v else None) for name in names for v in [self._slot(name, i)]]
            pitch = self.offsets[i + 1] - self.offsets[i]
            most = max(1, STACK_ELEMENTS // pitch)
            j = i + 1
            while j < n and j - i < most and tuple(self.params[j].shape) == shape and all(
                    (None if v is None else (v[2], v[3], v[4])) == k for (name, k) in kind
                    for v in [self._slot(name, j)]):
                j += 1
            # a compiled stack shares its matrices among the threads (Inductor fuses a matrix's loops into one
            # loop over the stack): a multiple of the thread count, and a matrix alone runs unstacked
            threads = torch.get_num_threads()
            if j - i > threads:
                j -= (j - i) % threads
            b = j - i
            held = tuple(name for name, k in kind if k is not None)
            lead = (b,) if b > 1 else ()
            states = []
            for name in held:
                buffer, start, sshape, step, _ = self._slot(name, i)
                size = sshape if sshape or not lead else tuple([1] * len(shape))   # a 0-d state: (B, 1, …, 1)
                view = alias(buffer, start, (*lead, *size), (step,) * len(lead) + _strides(size))
                for d in range(1, view.dim() if lead and not sshape else 1):
                    torch._dynamo.mark_static(view, d)   # its sizes 1 are not dynamic sizes
                states.append(view)
            params = alias(self.flat, self.offsets[i], (*lead, *shape), (pitch,) * len(lead) + _strides(shape))
            grads = alias(self.grad, self.offsets[i], (*lead, *shape), (pitch,) * len(lead) + _strides(shape))
            out.append((held, params, grads, states, b > 1))
            i = j
        # one vector of ones gives the matrices and stacks of them the ones of their rows (`Traced.row_ones`)
        matrices = [s[1].dim() - (1 if s[4] else 0) >= 2 for s in out]   # a member's rank: a stack's less B
        ones = rows_of_ones([s[1] for s, matrix in zip(out, matrices) if matrix])
        return [(*s, ones if matrix else None) for s, matrix in zip(out, matrices)]


def _strides(shape: Sequence[int]) -> tuple[int, ...]:
    """The strides of a contiguous tensor of `shape`."""
    out, step = [], 1
    for size in reversed(shape):
        out.append(step)
        step *= size
    return tuple(reversed(out))


class Contiguous:
    """A group's buckets; `step` runs the flat buckets and returns what must run per tensor."""

    def __init__(self, params: Sequence[torch.Tensor], align: int = BLOCK) -> None:
        self.params = list(params)
        by_kind: dict[Any, list[torch.Tensor]] = {}
        for p in params:
            if eligible(p):
                by_kind.setdefault((p.dtype, p.device), []).append(p)
        self.buckets = [Bucket(ps, align) for ps in by_kind.values()]
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
                and all(map(is_, map(_grad, params), bucket.grads))):
            return False
        states = list(map(state.get, params))
        return None not in states and bucket.holds(states)

    def rerun(self, mode: str, chain: Chain, hp: dict[str, Any]) -> bool:
        """The flat step of a `steady` group (False, doing nothing, when this step's options take the
        chain off the flat path)."""
        if not whole(mode, chain, hp):
            return False
        self.buckets[0].run(mode, chain, hp, in_slices=True)
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
            if flat and bucket.ready(mode, chain, hp, states):
                bucket.run(mode, chain, hp)
                self.flat_last = len(self.params) == len(bucket.params)
                return [], [], []
            bucket.uniform = None
            self.flat_last = False
            return params, grads, states
        self.flat_last = False
        mine = {id(b): [None] * len(b.params) for b in self.buckets}
        for p, st in zip(params, states):
            spot = self.where.get(p)
            if spot is not None:
                mine[id(spot[0])][spot[1]] = st
        ran = set()
        for bucket in self.buckets:
            have = mine[id(bucket)]
            if None not in have:
                bucket.adopt_all(have)
                if flat and bucket.ready(mode, chain, hp, have):
                    bucket.run(mode, chain, hp)
                    ran.add(id(bucket))
                    continue
            else:
                for i, st in enumerate(have):
                    if st is not None:
                        bucket.adopt(i, st)
            if any(st is not None for st in have):
                bucket.uniform = None  # a per-tensor step may advance some 0-d states and not others
        if not ran:
            return params, grads, states
        keep = [k for k, p in enumerate(params) if p not in self.where or id(self.where[p][0]) not in ran]
        return [params[k] for k in keep], [grads[k] for k in keep], [states[k] for k in keep]

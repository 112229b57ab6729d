"""`Composite`: one torch.optim.Optimizer over several optimizers, each over its own parameters (see
optreg.core.composite for the config that builds one)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch


class Composite(torch.optim.Optimizer):
    """Steps every part; its `param_groups` are the parts' own group dicts (a scheduler that changes a group's lr
    changes the part's), in the config's rule order, each with `optimizer: "<dialect.Name>"`.

    `state` is the parts' states together (read-only view); `state_dict()` has torch's shape over the
    composite's groups (torch.distributed.checkpoint reads it under FSDP2) and `load_state_dict` gives each part
    its share back, so a run resumes exactly.
    `Composite(params)` is refused: a composite is built from a config (its routing needs parameter names), so
    ZeRO's and `type(opt)(params, **opt.defaults)`'s rebuild from unnamed tensors cannot make one."""

    def __init__(self, parts: Sequence[torch.optim.Optimizer] | Any, names: Sequence[str] = (),
                 order: Sequence[tuple[int, int]] = (), **defaults: Any) -> None:
        if not names or not isinstance(parts, (list, tuple)) or not all(
                isinstance(p, torch.optim.Optimizer) for p in parts):
            from optreg.errors import ConfigError

            raise ConfigError("a composite optimizer is built from a config whose param_groups rules name an "
                              "optimizer (its routing needs parameter names); it cannot be rebuilt from bare "
                              "parameters and defaults (ZeroRedundancyOptimizer, type(opt)(params, **opt.defaults))",
                              "optimizer")
        self.parts = list(parts)
        self.names = list(names)
        groups = []
        for p, g in order or [(p, g) for p, part in enumerate(parts) for g in range(len(part.param_groups))]:
            group = self.parts[p].param_groups[g]
            group["optimizer"] = self.names[p]
            groups.append(group)
        self._ready = False
        # torch refuses an optimizer whose groups mix named and unnamed ones; the parts' groups are each part's
        # own (MindSpore's carry `param_names`, torch's do not), so the check is not the composite's to make
        named = [(g, g.pop("param_names")) for g in groups if "param_names" in g]
        try:
            super().__init__(groups, {})
        finally:
            for group, param_names in named:
                group["param_names"] = param_names
        self._ready = True

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Before construction: torch's own. After: the group joins the part its `optimizer` key names (the main
        optimizer, the first part, by default), as Lightning's fine-tuning callbacks add unfrozen layers."""
        if not getattr(self, "_ready", False):
            return super().add_param_group(param_group)
        name = param_group.pop("optimizer", self.names[0])
        if name not in self.names:
            raise ValueError(f"no part of this composite is {name!r}; its parts: {', '.join(self.names)}")
        part = self.parts[self.names.index(name)]
        part.add_param_group(param_group)
        part.param_groups[-1]["optimizer"] = name
        self.param_groups.append(part.param_groups[-1])

    @property
    def state(self) -> dict[Any, Any]:   # type: ignore[override]
        """Every part's state, by parameter."""
        if not getattr(self, "_ready", False):
            return {}
        return {p: s for part in self.parts for p, s in part.state.items()}

    @state.setter
    def state(self, value: Any) -> None:   # Optimizer.__init__ assigns an empty one: the parts hold the state
        pass

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One step of every part (the closure, when given, is evaluated once, before them: a part that needs one
        is refused when the composite is planned)."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for part in self.parts:
            part.step()
        return loss

    def state_dict(self) -> dict[str, Any]:
        """torch's shape, over the composite's groups: `state` by the composite's parameter index (its groups'
        parameters in order) and `param_groups` (each with its part's `optimizer` name), as torch.distributed.
        checkpoint, Lightning and the HF Trainer read an optimizer's; `optimizers` names the parts."""
        index = self._index()
        state: dict[int, Any] = {}
        saved = []
        for part in self.parts:
            sd = part.state_dict()
            local = [p for g in part.param_groups for p in g["params"]]
            state.update({index[id(local[k])]: v for k, v in sd["state"].items()})
            saved.append(sd["param_groups"])
        groups = [{**saved[p][g], "params": [index[id(t)] for t in self.parts[p].param_groups[g]["params"]]}
                  for p, g in self._order()]
        return {"state": state, "param_groups": groups, "optimizers": list(self.names)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """A dict of `state_dict()`'s shape (`optimizers`, when present, must name these parts; a checkpoint
        through torch.distributed.checkpoint carries only `state` and `param_groups`), or of optreg 0.2's
        `{"optimizers", "parts"}`; each part loads its own share, so a run resumes exactly."""
        names = state_dict.get("optimizers", self.names)
        if names != self.names:
            raise ValueError(f"the state dict is of a composite of {names}, this one is of {self.names}")
        order = self._order()
        if "parts" in state_dict:   # optreg 0.2: one state dict per part
            shares = list(state_dict["parts"])
        else:
            groups = state_dict["param_groups"]
            if len(groups) != len(order) or any(g.get("optimizer", self.names[p]) != self.names[p]
                                                for g, (p, _) in zip(groups, order)):
                raise ValueError(f"the state dict's {len(groups)} parameter groups do not match this composite's "
                                 f"{len(order)} ({', '.join(self.names)})")
            saved_state = state_dict.get("state", {})
            shares = [{"state": {}, "param_groups": [None] * len(part.param_groups)} for part in self.parts]
            offsets = [0] * len(self.parts)
            starts = {}
            for p, part in enumerate(self.parts):   # each part's own parameter index of its group g's first one
                for g, group in enumerate(part.param_groups):
                    starts[p, g] = offsets[p]
                    offsets[p] += len(group["params"])
            for (p, g), group in zip(order, groups):
                local = list(range(starts[p, g], starts[p, g] + len(group["params"])))
                shares[p]["param_groups"][g] = {**group, "params": local}
                shares[p]["state"].update({k: saved_state[i] for k, i in zip(local, group["params"])
                                           if i in saved_state})
        if len(shares) != len(self.parts):
            raise ValueError(f"the state dict has {len(shares)} parts, this composite {len(self.parts)}")
        for part, share in zip(self.parts, shares):
            part.load_state_dict(share)   # new group dicts (with their `optimizer` key): point the composite at them
        self.param_groups = [self.parts[p].param_groups[g] for p, g in order]

    def _index(self) -> dict[int, int]:
        """id(parameter) -> its index in the composite's groups, in order (torch's numbering)."""
        index: dict[int, int] = {}
        for group in self.param_groups:
            for p in group["params"]:
                index.setdefault(id(p), len(index))
        return index

    def _order(self) -> list[tuple[int, int]]:
        where = {id(g): (p, i) for p, part in enumerate(self.parts) for i, g in enumerate(part.param_groups)}
        return [where[id(g)] for g in self.param_groups]

    def __getstate__(self) -> dict[str, Any]:   # the whole composite (torch's Optimizer keeps only three keys)
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        return f"Composite({', '.join(self.names)})"

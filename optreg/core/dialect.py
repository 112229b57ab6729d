"""A declared dialect: a framework's vocabulary (its rows) and every way it extends planning.

Core planning names no dialect: where a framework reads a config differently from torch, its package declares
it here and planning asks `REGISTRY.dialect(name)`. A built-in dialect package (`optreg.dialects.<name>`) and a
plugin's module (the `optreg.dialects` entry point) expose the same object as `DIALECT`.

What a dialect may declare (each defaults to torch's reading):

- `rows`: its registry entries (timm-like table rows, `optreg.core.entry`);
- `paths`: kind -> the framework's modules of its classes (`{"optimizer": ("torch.optim",)}`): `torch.optim.AdamW`
  names the entry `AdamW` in Python, YAML, Hydra and the CLI alike;
- `default_settings`: optimizer-wide group settings on by default when a Module is given and the optimizer has the
  option the setting scales (Cerebras Model Zoo's bias/norm grouping: `{"modelzoo_groups": True}`);
- `decay_rules`: the framework's rules for which parameters weight decay skips, each an optimizer-wide setting
  (`DecayRule`: Model Zoo's `modelzoo_groups`, the HF Trainer's `hf_decay_groups`) that any dialect's optimizer
  may turn on;
- `group_binders`: name -> how the framework's optimizers read their group dicts (MindSpore's `order_params`,
  `grad_centralization` and beta/gamma weight-decay rule), named by a row's `bind`: `(group dicts with
  param_names, optimizer values, grouped) -> group dicts`;
- `group_keys`: name -> `optreg.core.groups.Key` (type and description) of the keys its binders read in a group
  beside the options (MindSpore's `grad_centralization`, `order_params`), as a row's own `group_keys` (OneFlow's
  `clip_grad_max_norm`) are declared on the row; the JSON Schema lists them in the rules of its binding rows, and
  an unknown key of another dialect's optimizer names the dialects whose groups take it;
- `option_aliases`: the framework's spellings of option names (`learning_rate` for `lr`), read in every dialect;
- `scheduler_forms`: other spellings of a scheduler spec (Cerebras' `{scheduler: Linear}` / `{LinearLR: {...}}`):
  `claims(spec)`, `read(spec, path) -> {name: ..., <options>}` (a `ReadSpec`, whose errors are at the form's own
  paths: its class key, a renamed option's key) and optionally `schema(options_of, ref)`, the JSON Schema of the
  form for `optreg schema` (`options_of(class)`: the schemas of the options of the dialect's scheduler row `class`;
  `ref`: the form's own `$ref`, for nested schedulers);
- `closed_forms(name)`: the closed form (`optreg.schedules.engine.Schedule`) of one of its scheduler classes, for
  composing and plotting (torch's LRScheduler classes);
- absolute vs factor values: each scheduler row's `values` (planning refuses an absolute schedule over groups
  whose lr a multiplier scales);
- `legacy_keys`: option keys the framework used to accept and now refuses, with what to write instead;
- `optimizer_call(entry, params, kwargs, unknown_keys) -> (params, kwargs, group extras)`: how the framework's
  own `configure_optimizer` reads its arguments (Model Zoo 2.0-2.3's call);
- `scheduler_call(optimizer, spec) -> scheduler | None`: a spec form of `configure_lr_scheduler` the framework
  builds itself (Model Zoo's trainer schedulers), None when the spec is not one;
- `scheduler_keywords`: keyword arguments of `configure_lr_scheduler` the dialect owns, each a wrapper
  `(plan, optimizer) -> scheduler` (cerebras.pytorch <= 2.3's `adjust_learning_rate`);
- `library`: an installed library whose classes are rows too, derived from their signatures when a name of the
  dialect is first looked up (`optreg.core.library.Library`: pytorch_optimizer, torchao, bitsandbytes, timm).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence


@dataclass(frozen=True)
class SchedulerForm:
    """Another spelling of a scheduler spec: `claims(spec)` says whether `spec` is one, `read(spec, path=...)`
    turns it into optreg's `{name: ..., <options>}` (ConfigError at the spec's paths); `schema(options_of, ref)`,
    where given, is its JSON Schema (see the module doc)."""

    claims: Callable[[Any], bool]
    read: Callable[..., dict[str, Any]]
    schema: Callable[[Callable[[str], Mapping[str, Any]], str], dict[str, Any]] | None = None


class ReadSpec(dict):
    """A scheduler spec that a `SchedulerForm` read, and `written`: where the form writes each part of it, a path
    relative to the spec (`""` the spec itself, `schedulers[0]`, `schedulers[0].initial_learning_rate`) -> the
    source's path (`scheduler[0].learning_rate`); a part not listed is where its longest listed prefix is, as
    optreg.config.translate.source_path reads them. Planning the spec puts its errors there (`plan_scheduler`)."""

    def __init__(self, spec: Mapping[str, Any] = (), written: Mapping[str, str] | None = None):
        super().__init__(spec)
        self.written = dict(written or {})

    def at(self, path: str) -> dict[str, str]:
        """`written` for the spec planned at `path`: own-form path -> the source's."""
        from optreg.errors import join_path

        return {join_path(path, k): v for k, v in self.written.items() if join_path(path, k) != v}


@dataclass(frozen=True)
class DecayRule:
    """A framework's rule for the parameters weight decay skips, turned on by the optimizer-wide setting `key`:
    `undecayed(module)` gives a test of a parameter name (the rule reads the module's structure: its norm layers).
    A rule's weight decay 0 yields to a `param_groups` rule's own weight decay or decay_mult."""

    key: str
    doc: str
    undecayed: Callable[[Any], Callable[[str], bool]]


def _no_closed_form(name: str) -> None:
    return None


@dataclass(frozen=True, eq=False)
class Dialect:
    """One dialect, declared by its package (see the module doc for each field)."""

    name: str
    rows: Sequence[Any] = ()
    doc: str = ""
    paths: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    default_settings: Mapping[str, Any] = field(default_factory=dict)
    decay_rules: tuple[DecayRule, ...] = ()
    group_binders: Mapping[str, Callable[..., list[dict[str, Any]]]] = field(default_factory=dict)
    group_keys: Mapping[str, Any] = field(default_factory=dict)
    option_aliases: Mapping[str, str] = field(default_factory=dict)
    scheduler_forms: tuple[SchedulerForm, ...] = ()
    closed_forms: Callable[[str], Any] = _no_closed_form
    legacy_keys: Mapping[str, str] = field(default_factory=dict)
    optimizer_call: Callable[..., tuple[Any, dict[str, Any], list[dict[str, Any]]]] | None = None
    scheduler_call: Callable[[Any, Any], Any] | None = None
    scheduler_keywords: Mapping[str, Callable[[Any, Any], Any]] = field(default_factory=dict)
    library: Any = None

    def closed_form(self, name: str) -> Any:
        """The closed form of the scheduler class `name` of this dialect, or None."""
        return self.closed_forms(name)


def plain(name: str, rows: Sequence[Any] = ()) -> Dialect:
    """A dialect that declares only its rows (a plugin module with `ROWS` and no `DIALECT` object)."""
    return Dialect(name, tuple(rows))


__all__ = ["DecayRule", "Dialect", "ReadSpec", "SchedulerForm", "plain"]

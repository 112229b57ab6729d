"""A registry entry: one row of a table, the way timm's `OptimInfo` describes an optimizer."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

OPTIMIZER = "optimizer"
SCHEDULER = "scheduler"

@dataclass(frozen=True)
class Rule:
    """A constraint across options: `ok(*values of fields)` must hold, else `message` at `path`.

    Skipped when one of its fields failed its own validation, or is None unless `skip_none` is False.
    """

    path: str
    fields: tuple[str, ...]
    ok: Callable[..., bool]
    message: str
    skip_none: bool = True


@dataclass(frozen=True, eq=False)
class Entry:
    """One component of one dialect.

    kind      "optimizer" or "scheduler".
    dialect   a known dialect (`optreg.dialects.BUILTIN` or one a plugin adds): a framework's vocabulary.
    name      as the framework spells it ("AdamW", "CosineDecayLR").
    target    "module:Attr" of the implementation, imported on first use.
    aliases   other names that find this entry ("adam_w" is found anyway: lookup ignores case, - and _).
    rename    option name in this dialect -> parameter name of the target (dialect rows that reuse
              a shared implementation under their own vocabulary: {"learning_rate": "lr"}).
    types     option -> constrained type, where the shared table in core.options does not fit.
    defaults  option -> default, where this dialect's default differs from the target's signature.
    fixed     target parameter -> value: knob settings of this row, not user options.
    hidden    target parameters this dialect does not expose (they keep the target's default).
    rules     constraints across options.
    values    schedulers: "factor" (times the group's base lr) or "absolute".
    length    schedulers: the option that gives the schedule's length (for sequential milestones).
    raises_past_length  schedulers: stepping it past its length raises (torch's OneCycleLR), so a run that steps
              it further is a ConfigError, not a warning (`optreg.core.lint.overrun_errors`).
    group_keys  extra per-group keys the implementation reads, with their types (OneFlow's
              clip_grad_max_norm); validated like options and passed in the group dicts.
    single_group  the implementation takes one parameter group only (LBFGS).
    takes_model  the implementation's first argument is the model itself (a torch.nn.Module), not its
              parameters (MindSpore thor hooks the model's layers); list that argument in `hidden`.
    accepts   (predicate on a parameter tensor, what it requires): parameters it cannot update (Muon: 2-D only).
    bind      the name of one of its dialect's `group_binders`, which turns the resolved parameter groups into
              what the target takes (MindSpore's beta/gamma weight-decay rule, order_params); None: as torch.
    source    the framework and version whose numbers this entry reproduces.
    class_path  the dotted path under which its framework documents it
              (`cerebras.pytorch.optim.weight_decay_scheduler.CosineDecayWD`); the name finds the entry too.
    notes     decisions and quirks, shown by describe().
    """

    kind: Literal["optimizer", "scheduler"]
    dialect: str
    name: str
    target: str | Callable[..., Any]
    doc: str = ""
    aliases: tuple[str, ...] = ()
    rename: Mapping[str, str] = field(default_factory=dict)
    types: Mapping[str, Any] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    fixed: Mapping[str, Any] = field(default_factory=dict)
    hidden: tuple[str, ...] = ()
    rules: tuple[Rule, ...] = ()
    values: Literal["factor", "absolute"] | None = None
    length: str | None = None
    raises_past_length: bool = False
    group_keys: Mapping[str, Any] = field(default_factory=dict)
    single_group: bool = False
    takes_model: bool = False
    accepts: tuple[Callable[[Any], bool], str] | None = None
    bind: str | None = None
    source: str = ""
    class_path: str = ""
    notes: tuple[str, ...] = ()
    provider: str = "optreg"

    @property
    def qualname(self) -> str:
        return f"{self.dialect}.{self.name}"

    def resolve(self) -> Callable[..., Any]:
        """Import and return the implementation (a class or a factory function)."""
        if callable(self.target):
            return self.target
        module, _, attr = self.target.partition(":")
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
        return obj

    def target_name(self, option: str) -> str:
        """The implementation's parameter name for a dialect option."""
        return self.rename.get(option, option)


def optimizer(dialect: str, name: str, target: str, doc: str = "", **kw: Any) -> Entry:
    """A table row for an optimizer."""
    return Entry(OPTIMIZER, dialect, name, target, doc, **kw)


def scheduler(dialect: str, name: str, target: str, doc: str = "", **kw: Any) -> Entry:
    """A table row for a scheduler."""
    return Entry(SCHEDULER, dialect, name, target, doc, **kw)

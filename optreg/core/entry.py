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


#: how an optimizer with `Limits.step` is stepped instead of `loss.backward(); optimizer.step()`
STEP_LIMITS = {
    "second_order": "steps on gradients that keep their graph (a second-order backward)",
    "closure": "steps only through a closure (optimizer.step(closure))",
    "two_pass": "steps on gradients computed before it and again by its closure (sharpness-aware: it perturbs the "
                "parameters from the first)",
    "fused": "has no usable step(): it updates the parameters inside the backward pass",
    "distributed": "steps only within an initialized torch.distributed process group",
}


@dataclass(frozen=True)
class Limits:
    """What keeps an optimizer from stepping as a plain training loop steps it (`loss.backward();
    optimizer.step()`), declared on its row (`Entry.limits`): describe() says it, build refuses what it can know
    (a module that is not installed, a class that cannot step), `optreg run` a step its loop cannot drive.

    step      how it is stepped instead (a key of STEP_LIMITS); None: as a plain loop steps it. optreg run's loop
              (`optimizer.step(closure)`, the closure calling loss.backward()) steps "closure" but none of the
              others; gradient accumulation steps neither of the two that need a closure.
    how       the calls that step it, as its library documents them ("loss.backward(create_graph=True), then
              optimizer.step()").
    modules   module -> the distribution that installs it: what it imports when built or stepped, beyond its
              library's own dependencies.
    broken    why the installed class cannot step at all, whatever the loop: build refuses it.
    group_keys  key -> (type, what its values do): a key the class reads from every parameter group and has no
              default for (pytorch_optimizer's Muon: use_muon, which picks Muon's update or AdamW's). Its row takes
              it as a group key (`Entry.group_keys`), set in each param_groups rule; planning refuses a group
              without it (`optreg.core.build.check_group_keys`).
    """

    step: Literal["second_order", "closure", "two_pass", "fused", "distributed"] | None = None
    how: str = ""
    modules: Mapping[str, str] = field(default_factory=dict)
    broken: str = ""
    group_keys: Mapping[str, tuple[Any, str]] = field(default_factory=dict)

    def said(self) -> tuple[str, ...]:
        """The limits as describe() says them, one sentence each."""
        out = [f"{STEP_LIMITS[self.step]}: {self.how}" if self.how else STEP_LIMITS[self.step]] if self.step else []
        out += [f"imports {module} (pip install {package})" for module, package in self.modules.items()]
        out += [self.group_key_said(key) for key in self.group_keys]
        return (*out, *self._broken())

    def group_key_said(self, key: str) -> str:
        """What its parameter groups must say of `key` (one of `group_keys`), with what its values do."""
        return f"reads {key} from every parameter group, with no default: set it in each param_groups rule, " \
               f"{self.group_keys[key][1]}"

    def _broken(self) -> list[str]:
        return [f"cannot step: {self.broken}"] if self.broken else []

    def refusals(self, qualname: str, run_loop: bool) -> list[str]:
        """What a build of it refuses, each naming it: a module it imports that is not installed, a class that
        cannot step, and for optreg run's loop (`run_loop`) a step that loop cannot drive (`loop_refusal`)."""
        out = [f"{qualname} imports {m}, which is not installed: pip install {p}" for m, p in self.missing()]
        out += [f"{qualname} {said}" for said in self._broken()]
        refusal = self.loop_refusal(qualname) if run_loop else None
        return out + ([refusal] if refusal else [])

    @property
    def needs_closure(self) -> bool:
        """Whether its step takes a closure it cannot do without (gradient accumulation steps without one)."""
        return self.step in ("closure", "two_pass")

    def missing(self) -> list[tuple[str, str]]:
        """(module, distribution) of each module it imports that is not installed."""
        import importlib.util

        return [(m, p) for m, p in self.modules.items() if importlib.util.find_spec(m) is None]

    def loop_refusal(self, qualname: str) -> str | None:
        """Why `optreg run`'s loop (`loss.backward()`, then `optimizer.step(closure)`, in one process) cannot step
        it, with what to do; None where it can."""
        if self.step in (None, "closure"):
            return None
        return (f"{qualname} {STEP_LIMITS[self.step]}, which optreg run's loop (loss.backward(), then "
                f"optimizer.step(closure), in one process) does not do; train it in a loop of your own: {self.how}")


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
    limits    what keeps it from stepping as a plain training loop steps it (`Limits`): a second-order backward,
              no step(), a module that is not installed.
    bind      the name of one of its dialect's `group_binders`, which turns the resolved parameter groups into
              what the target takes (MindSpore's beta/gamma weight-decay rule, order_params); None: as torch.
    source    the framework and version whose numbers this entry reproduces.
    class_path  the dotted path under which its framework documents it
              (`cerebras.pytorch.optim.weight_decay_scheduler.CosineDecayWD`); the name finds the entry too.
    notes     decisions and quirks, shown by describe().
    homonyms  qualified names of other dialects' components whose own name, written without a prefix, finds this
              one by the rule of names (`constant`, HF's hf.constant, is torch's ConstantLR): describe() says so,
              and a spec that writes that name gets a note (registry.homonym_note).
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
    limits: Limits | None = None
    bind: str | None = None
    source: str = ""
    class_path: str = ""
    notes: tuple[str, ...] = ()
    homonyms: tuple[str, ...] = ()
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

    def needs_closure(self) -> bool:
        """Whether its step cannot do without a closure: its step() requires one (LBFGS), or its limits say it
        steps only through one (pytorch_optimizer's AliG, whose closure argument is optional; BSAM)."""
        import inspect

        if self.limits is not None and self.limits.needs_closure:
            return True
        cls = self.resolve()
        step = getattr(cls, "step", None) if isinstance(cls, type) else None
        closure = inspect.signature(step).parameters.get("closure") if step is not None else None
        return closure is not None and closure.default is inspect.Parameter.empty


#: why an optimizer that `Entry.needs_closure` cannot step where its caller steps it without one
NEEDS_CLOSURE = "needs one (its step evaluates the loss through it)"


def optimizer(dialect: str, name: str, target: str, doc: str = "", **kw: Any) -> Entry:
    """A table row for an optimizer."""
    return Entry(OPTIMIZER, dialect, name, target, doc, **kw)


def scheduler(dialect: str, name: str, target: str, doc: str = "", **kw: Any) -> Entry:
    """A table row for a scheduler."""
    return Entry(SCHEDULER, dialect, name, target, doc, **kw)

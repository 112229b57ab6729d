"""`describe()` and `list_*()`: what a component takes, read from its model (the one source of truth)."""

from __future__ import annotations

import ast
import fnmatch
import inspect
import re
from dataclasses import dataclass
from typing import Any

from optreg.core import models
from optreg.core.entry import OPTIMIZER, SCHEDULER, Entry
from optreg.core.loop import FROM_RUN, describe_loop, required_length
from optreg.core.registry import REGISTRY, homonym_note
from optreg.errors import ConfigError, ErrorItem, show

_BOUNDS = (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<"))


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    default: Any
    constraint: str
    doc: str
    example: Any = None     # a value to paste where the option is required and has no default (or None)
    #: a schedule's length that a spec leaves out or writes null to take from the run (optreg.core.loop)
    from_run: bool = False

    @property
    def required(self) -> bool:
        return self.default is inspect.Parameter.empty and not self.from_run

    @property
    def default_text(self) -> str:
        """The default as `optreg show` prints it: the value's repr, "required", or FROM_RUN."""
        return FROM_RUN if self.from_run else "required" if self.required else repr(self.default)


@dataclass(frozen=True)
class Description:
    name: str
    dialect: str
    kind: str
    doc: str
    source: str
    values: str | None
    notes: tuple[str, ...]
    params: tuple[Param, ...]
    provider: str
    chain: str = ""
    class_path: str = ""     # where the framework documents it (`source` names the framework and version)
    #: what `state_dtype` stores in fewer bytes, with the error bounds (first-party optimizers)
    state: str = ""
    #: what keeps it from stepping as a plain training loop steps it (`Entry.limits`) and the parameters it cannot
    #: update (`Entry.accepts`), one sentence each
    limits: tuple[str, ...] = ()

    @property
    def documented(self) -> str:
        """Where the component is documented: its class path, then the framework and version it reproduces."""
        return f"{self.class_path} ({self.source})" if self.class_path else self.source

    @property
    def qualname(self) -> str:
        return f"{self.dialect}.{self.name}"

    def __str__(self) -> str:
        lines = [f"{self.qualname} ({self.kind}{', ' + self.values + ' values' if self.values else ''})"]
        if self.doc:
            lines.append(f"  {self.doc}")
        if self.source:
            lines.append(f"  reproduces: {self.source}")
        if self.class_path:
            lines.append(f"  documented: {self.documented}")
        if self.chain:
            lines.append(f"  chain: {self.chain}")
        if self.state:
            lines.append(f"  state_dtype: {self.state}")
        lines += [f"  limit: {limit}" for limit in self.limits]
        for p in self.params:
            lines.append(f"  {p.name:<24} {p.type:<22} {p.default_text:<18} {p.constraint}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def _type_text(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        return " | ".join(_type_text(s) for s in schema["anyOf"])
    if "oneOf" in schema:   # a union told apart by a discriminator: betas of two or three, a named kind of mapping
        kinds = schema["oneOf"]
        named = schema.get("title") and all(s.get("type") == "object" for s in kinds)
        return schema["title"] if named else " | ".join(_type_text(s) for s in kinds)
    if "const" in schema:
        return repr(schema["const"])
    if "enum" in schema:
        return " | ".join(repr(v) for v in schema["enum"])
    kind = schema.get("type", "any")
    if kind == "object" and schema.get("title"):   # a named kind of mapping (an MMEngine scheduler entry)
        return schema["title"]
    if kind == "array":
        items = schema.get("prefixItems")
        if items:
            return "[" + ", ".join(_type_text(i) for i in items) + "]"
        return f"list[{_type_text(schema.get('items', {}))}]"
    return {"number": "float", "integer": "int", "boolean": "bool", "string": "str", "null": "None"}.get(kind, kind)


def _constraint_text(schema: dict[str, Any]) -> str:
    """The bounds of `schema`: its own, its alternatives' (a oneOf's, told apart by a discriminator, and an anyOf's,
    each for itself as the type shows them: `>= 0, < 1 | >= 0, < 1, <= 1`, `>= 0 | >= 0, < 1` of `int | float`),
    a tuple's items' each once, a list's items'."""
    from optreg.core.types import MAX_FLOAT, MAX_INT

    if "oneOf" in schema:
        texts = [_constraint_text(sub) for sub in schema["oneOf"]]
        return " | ".join(texts) if any(texts) else ""
    # ±MAX_FLOAT bounds every number and MAX_INT every count (the executable range, documented once in the
    # README), so neither is repeated here
    parts = [f"{sign} {schema[key]}" for key, sign in _BOUNDS
             if key in schema and abs(schema[key]) not in (MAX_FLOAT, MAX_INT)]
    alternatives = list(dict.fromkeys(filter(None, (_constraint_text(sub) for sub in schema.get("anyOf", [])))))
    if alternatives:   # bounds that hold in one alternative only: not joined as if all held (`int | float`)
        parts.append(" | ".join(alternatives))
    for item in schema.get("prefixItems", []):
        parts += [part for part in _constraint_text(item).split(", ") if part and part not in parts]
    if "items" in schema and isinstance(schema["items"], dict):
        text = _constraint_text(schema["items"])
        if text:
            parts.append(f"each {text}")
    return ", ".join(parts)


def params_of(entry: Entry) -> tuple[Param, ...]:
    schema = models.model(entry).model_json_schema(mode="validation")
    props = schema.get("properties", {})
    defs = schema.get("$defs", {})
    from optreg.config.json_schema import option_docs

    docs = option_docs(entry)
    out = []
    from_run = required_length(entry) if entry.kind == SCHEDULER else None
    from optreg.core.build import wrapped_example, wraps_optimizer

    if wraps_optimizer(entry):  # the wrapped optimizer: required, a nested spec (not a field of the model)
        out.append(Param("optimizer", "optimizer spec", inspect.Parameter.empty,
                         "a mapping with name: and the wrapped optimizer's options",
                         "the optimizer to wrap (its dialect defaults to this one's)", wrapped_example(entry)))
    for opt in models.options(entry):
        prop = props.get(opt.name, {})
        if "$ref" in prop:
            prop = defs.get(prop["$ref"].split("/")[-1], prop)
        rules = [r.message for r in entry.rules if r.path == opt.name]
        constraint = "; ".join(filter(None, [_constraint_text(prop), *rules]))
        out.append(Param(opt.name, _type_text(prop), opt.default, constraint,
                         agreeing_doc(prop.get("description") or docs.get(opt.name, ""), opt.name, opt.default, entry),
                         from_run=opt.name == from_run))
    return tuple(out)


_DOC_DEFAULT = re.compile(r"\(default: ((?:[^()]|\([^()]*\))*)\)")


def _same(a: Any, b: Any) -> bool:
    """Equal as numbers (1e-2 == 0.01), element by element for tuples and lists."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b or a == b
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return a == b


def agreeing_doc(doc: str, option: str, default: Any, entry: Entry) -> str:
    """`doc` with a "(default: X)" that contradicts the declared default replaced by which one holds and why: the
    text comes from a framework's docstring (torch's Adafactor says weight_decay 1e-2, its signature 0.0; a
    dialect's row declares its framework's own default over the docstring it shares)."""
    match = _DOC_DEFAULT.search(doc or "")
    if match is None:
        return doc
    if default is inspect.Parameter.empty:
        return doc[:match.start()] + f"(required: the docstring this comes from gives a default, {match.group(1)}, " \
            f"that this component does not have)" + doc[match.end():]
    try:
        said = ast.literal_eval(match.group(1).strip())
    except (ValueError, SyntaxError):
        return doc
    if _same(said, default):
        return doc
    why = (f"the {entry.dialect} row declares it ({entry.source})" if option in entry.defaults else
           "the implementation's signature takes it")
    return doc[:match.start()] + f"(default: {default!r}; the docstring this comes from says {match.group(1)}, but " \
        f"{default!r} holds: {why})" + doc[match.end():]


def describe(name: str, dialect: str | None = None, kind: str | None = None) -> Description:
    """Parameters (type, default, constraint, doc), the dialect, and the source a component reproduces.

    Optimizers and schedulers are both searched (`kind` narrows it), by the registry's one rule of names; a bare
    name that none of `dialect` (torch by default) has is looked for in every dialect, and two components that
    it names are a ConfigError listing both."""
    kinds = (kind,) if kind else (OPTIMIZER, SCHEDULER)
    if dialect is not None:
        REGISTRY.check_dialect(dialect)
    found, missing = [], None
    for k in kinds:
        try:
            entry = REGISTRY.find(k, name, dialect)
        except ConfigError as exc:   # e.g. a dialect whose optimizers are a library that is not installed
            missing = missing or exc
            continue
        if entry is not None:
            found.append(entry)
    if missing is not None and not found:
        raise missing
    if not found and dialect is None and "." not in str(name):
        found = [e for k in kinds for e in REGISTRY.everywhere(k, name)]
    if len(found) > 1:
        listed = ", ".join(f"{e.qualname} ({e.kind})" for e in found)
        raise ConfigError([ErrorItem("name", f"{show(name)} names {len(found)} components: {listed}; give one with "
                                             f"its dialect prefix", None, found[0].qualname)])
    if not found:  # the message lookup gives, for every kind looked in
        if not isinstance(name, str) or not name.strip():
            REGISTRY.lookup(kinds[0], name, dialect)   # the message of a name that is no string
        raise REGISTRY.unknown(kinds, name, dialect)
    entry = found[0]
    homonym = homonym_note(entry)
    notes = entry.notes + ((homonym,) if homonym else ()) + (describe_loop(entry) if entry.kind == SCHEDULER else ())
    return Description(entry.name, entry.dialect, entry.kind, entry.doc, entry.source, entry.values, notes,
                       params_of(entry), entry.provider, chain_of(entry), entry.class_path, state_of(entry),
                       limits_of(entry))


def limits_of(entry: Entry) -> tuple[str, ...]:
    """What keeps an entry from stepping as a plain training loop steps it, and the parameters it cannot update, as
    describe() says them."""
    return (*(entry.limits.said() if entry.limits else ()), *((entry.accepts[1],) if entry.accepts else ()))


def state_of(entry: Entry) -> str:
    """What a first-party optimizer's `state_dtype` shrinks and the error bounds of one store; "" otherwise."""
    impl = entry.resolve() if entry.kind == OPTIMIZER else None
    chain = getattr(impl, "chain", None) if isinstance(impl, type) else None
    if chain is None or not hasattr(chain, "shrinks"):
        return ""
    from optreg.stages.state_codec import summary

    return summary(chain.shrinks)


def chain_of(entry: Entry) -> str:
    """The stages of a first-party optimizer, in order (`CoupledDecay → AdamMoments → ...`); "" otherwise."""
    impl = entry.resolve() if entry.kind == OPTIMIZER else None
    chain = getattr(impl, "chain", None) if isinstance(impl, type) else None
    return chain.describe() if chain is not None and hasattr(chain, "describe") else ""


def _listing(kind: str, pattern: str | None, dialect: str | None) -> list[str]:
    if dialect is not None:
        REGISTRY.dialect(dialect)   # an unknown dialect is a ConfigError, not an empty list
    if pattern is not None and not isinstance(pattern, str):
        raise ConfigError(f"expected an fnmatch pattern (a string), got {type(pattern).__name__}", "pattern")
    names = REGISTRY.names(kind, dialect)
    if pattern:
        names = [n for n in names if fnmatch.fnmatch(n.lower(), pattern.lower())
                 or fnmatch.fnmatch(n.split(".")[-1].lower(), pattern.lower())]
    return sorted(names, key=str.lower)


def list_optimizers(pattern: str | None = None, dialect: str | None = None) -> list[str]:
    """Sorted optimizer names (`dialect.Name` unless a dialect is given), filtered by an fnmatch pattern."""
    return _listing(OPTIMIZER, pattern, dialect)


def list_schedulers(pattern: str | None = None, dialect: str | None = None) -> list[str]:
    """Sorted scheduler names (`dialect.Name` unless a dialect is given), filtered by an fnmatch pattern."""
    return _listing(SCHEDULER, pattern, dialect)

"""JSON Schema (draft-07, what yaml-language-server reads) of the experiment config in optreg's own form, from the
registry: it takes what `optreg validate` takes of one key at a time (a format reader's files are not its own)."""

from __future__ import annotations

import inspect
import json
import re
from collections import Counter
from functools import lru_cache
from typing import Any, Sequence

from pydantic.json_schema import GenerateJsonSchema

from optreg.core import models
from optreg.core.build import COMBINATOR_DOCS
from optreg.core.entry import OPTIMIZER, SCHEDULER, Entry
from optreg.core.loop import FROM_RUN, required_length
from optreg.core.names import (NAME_KEYS, SCHEDULER_SUFFIX, SEPARATORS, TUPLE_ALIASES, any_case, normalise,
                               synonyms)
from optreg.core.options import FRESH
from optreg.core.registry import REGISTRY
from optreg.core.validate import binder_keys
from optreg.integrations.hydra.support import targets
from optreg.schedules.engine import KEYS

DRAFT_07 = "http://json-schema.org/draft-07/schema#"


#: definitions of the other forms of a value beside the components' schemas (each name before a `:`): a `${...}`
#: interpolation, a scheduler by its name alone, a dialect's scheduler forms (`scheduler_form:cerebras:0`), a Hydra
#: primary config's unnamed section
INTERPOLATION = "interpolation"
SCHEDULER_NAME = "scheduler_by_name"
SCHEDULER_FORM = "scheduler_form"
COMPOSED = "composed_section"
NUMERIC_STRING = "numeric_string"
#: the definitions of a value's schema that many members share (`_shared`: `shared:warmup`, `shared:group:lr_mult`,
#: `shared:optimizer:state_dtype`)
SHARED = "shared"
OTHER_FORMS = (INTERPOLATION, SCHEDULER_NAME, SCHEDULER_FORM, COMPOSED, NUMERIC_STRING)
_ANNOTATIONS = ("title", "description", "default", "examples")


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/definitions/{name}"}


def _shared(name: str, node: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """`node`, a value's schema that many members share (a scheduler's warmup, a param_groups rule's keys), once in
    `definitions` (`shared:<name>`, its description with it); where it is used, a `$ref` to it with the value's
    other forms beside (`_or_interpolation`, as they would be beside the schema written there)."""
    definitions[f"{SHARED}:{name}"] = node
    others = [] if _takes_any_string(node) else [*_numeric_forms(node), _ref(INTERPOLATION)]
    return {"anyOf": [_ref(f"{SHARED}:{name}"), *others]} if others else _ref(f"{SHARED}:{name}")


#: the size (characters of compact JSON) from which an option's schema that members declare alike is shared
SHARED_SIZE = 120


def _share_options(members: Sequence[dict[str, Any]], kind: str, definitions: dict[str, Any]) -> None:
    """Each option's schema that several members declare alike (`state_dtype`, the Adam family's `betas`, Hydra's
    `_target_`), from `SHARED_SIZE` characters, once: a shared definition (`shared:<kind>:<option>`, then
    `...:<option>:2`, `:3` for other schemas of an option of that name), used where each member declares it, its
    param_groups rules' options included (the same schemas)."""
    def text(node: Any) -> str:
        return json.dumps(node, sort_keys=True, separators=(",", ":"))

    counts = Counter((key, text(node)) for member in members for key, node in member["properties"].items())
    variants: dict[str, list[str]] = {}   # option -> its shared schemas, in the members' order
    sites: dict[int, dict[str, Any]] = {}   # id of a schema shared -> its use
    for member in members:
        for key, node in member["properties"].items():
            written = text(node)
            if counts[key, written] < 2 or len(written) < SHARED_SIZE:
                continue
            known = variants.setdefault(key, [])
            known += [written] if written not in known else []
            number = known.index(written) + 1
            sites[id(node)] = _shared(f"{kind}:{key}" + (f":{number}" if number > 1 else ""), node, definitions)
    for member in members:
        _use_shared(member, sites)


def _use_shared(node: Any, sites: dict[int, dict[str, Any]]) -> None:
    """Every property of `node` and below whose schema is shared (`sites`: its id -> its use) replaced by its use."""
    if isinstance(node, list):
        for item in node:
            _use_shared(item, sites)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key != "properties" or not isinstance(value, dict):
                _use_shared(value, sites)
                continue
            for name, prop in value.items():
                if id(prop) in sites:
                    value[name] = sites[id(prop)]
                else:
                    _use_shared(prop, sites)


class Draft07(GenerateJsonSchema):
    """Pydantic's generator with draft-07 tuples: `items` + `additionalItems` instead of `prefixItems`; a default
    that JSON cannot hold (a peer library's `torch.bfloat16`, a function) is left out without a warning."""

    ignored_warning_kinds = {*GenerateJsonSchema.ignored_warning_kinds, "non-serializable-default"}

    def tuple_schema(self, schema: Any) -> dict[str, Any]:
        out = super().tuple_schema(schema)
        if "prefixItems" in out:
            out["items"] = out.pop("prefixItems")
            out["additionalItems"] = False
            out.pop("maxItems", None)
            out.pop("minItems", None)
            out["minItems"] = out["maxItems"] = len(out["items"])
        return out


# Descriptions for options whose implementation documents no `Args:` entry.
COMMON_DOCS = {
    "lr": "learning rate",
    "learning_rate": "learning rate",
    "betas": "coefficients of the running averages of the gradient and of its square",
    "beta1": "decay rate of the first moment",
    "beta2": "decay rate of the second moment",
    "eps": "term added to the denominator for numerical stability",
    "epsilon": "term added to the denominator for numerical stability",
    "weight_decay": "weight decay (L2 penalty or decoupled decay, as the component defines it)",
    "momentum": "momentum factor",
    "dampening": "dampening for momentum",
    "nesterov": "use Nesterov momentum",
    "contiguous_params": "keep each param group's parameters, gradients and state in one buffer per dtype and "
                         "device (OneFlow's option), so that a step of an element-wise update (and, fused, of "
                         "LAMB) runs over the whole group at once; the group's parameters then share one storage",
    "state_dtype": "store the optimizer state shaped like each parameter in fewer bytes: null (the parameter's "
                   "dtype), 'float32' (float32 for any parameter dtype; a half-precision parameter's step in "
                   "float32, the parameter rounded once), 'bfloat16' (round to nearest even, arithmetic in float32) "
                   "or 'int8' (8-bit codes in "
                   "blocks of 256 with a float32 absmax per block; parameters under 4,096 elements keep float32)",
    "use_nesterov": "use Nesterov momentum",
    "amsgrad": "use the AMSGrad variant (maximum of past second moments)",
    "maximize": "maximize the objective instead of minimizing",
    "loss_scale": "loss scale: gradients are divided by it before the update",
    "last_epoch": "index of the last step (-1 starts fresh)",
    "total_iters": "number of steps the schedule spans",
    "warmup_steps": "number of warmup steps",
    "use_locking": "MindSpore's lock flag for parameter updates (no effect on the numbers)",
    "l1": "L1 regularization strength",
    "l2": "L2 regularization strength",
}

# Schedulers only: the vocabulary the frameworks share for schedule shapes.
SCHEDULE_DOCS = {
    "initial_learning_rate": "learning rate at step 0 (absolute)",
    "end_learning_rate": "learning rate at the end of the schedule (absolute)",
    "min_lr": "lowest learning rate the schedule reaches",
    "max_lr": "highest learning rate the schedule reaches",
    "decay_rate": "decay rate of the schedule",
    "decay_steps": "number of steps of one decay period",
    "total_step": "total number of steps of the schedule",
    "step_per_epoch": "number of steps per epoch",
    "decay_epoch": "number of epochs of one decay period",
    "warmup_epoch": "number of warmup epochs",
    "is_stair": "decay in whole periods (a staircase) instead of continuously",
    "staircase": "decay in whole periods (a staircase) instead of continuously",
    "power": "exponent of the polynomial",
    "cycle": "restart the decay after each period instead of holding the end value",
    "num_warmup_steps": "number of warmup steps (or a fraction of num_training_steps)",
    "num_training_steps": "total number of training steps",
    "num_cycles": "number of cosine cycles (or half-cycles, as the component defines it)",
    "max_steps": "total number of steps of the schedule",
    "warmup_ratio": "fraction of max_steps spent warming up",
    "hold_steps": "number of steps held at the peak after warmup",
    "hold_ratio": "fraction of max_steps held at the peak after warmup",
    "t_initial": "number of steps of the first cycle",
    "lr_min": "lowest learning rate (absolute)",
    "cycle_mul": "factor applied to the cycle length at each restart",
    "cycle_decay": "factor applied to the peak learning rate at each restart",
    "cycle_limit": "number of cycles",
    "warmup_t": "number of warmup steps",
    "warmup_lr_init": "learning rate at the start of warmup (absolute)",
    "warmup_prefix": "count warmup steps before the schedule instead of inside it",
    "k_decay": "exponent applied to the schedule's progress",
    "decay_t": "step(s) at which the learning rate decays",
    "milestones": "steps at which the schedule changes",
    "learning_rates": "learning rate of each piece",
    "schedulers": "the schedules to combine (each a scheduler spec with name:)",
    "scheduler": "the schedule to wrap (a scheduler spec with name:)",
}

_ARGS = re.compile(r"^(\s*)(Args|Arguments|Parameters|Params)\s*:?\s*$")
#: `name (type): text`, the type's parentheses holding one level of their own (`(tuple, defaults to (0.9, 0.999))`)
_ITEM = re.compile(r"^(\s*)(\*{0,2}[A-Za-z_][A-Za-z0-9_]*)\s*(\((?:[^()]|\([^()]*\))*\))?\s*:\s*(.*)$")
_RST = [(re.compile(r":\w+:`~?([^`]*)`"), r"\1"), (re.compile(r"``([^`]*)``"), r"\1"),
        (re.compile(r"`([^`]*)`_?"), r"\1")]


def _clean_doc(text: str) -> str:
    """One line, rst roles unwrapped, the first sentence only (hover text, not a manual)."""
    text = " ".join(text.split())
    for pattern, repl in _RST:
        text = pattern.sub(repl, text)
    text = re.split(r"(?<=[.;])\s+(?=[A-Z])", text, maxsplit=1)[0]
    return text if len(text) <= 200 else text[:197].rsplit(" ", 1)[0] + " …"


def parse_args_section(doc: str) -> dict[str, str]:
    """`name (type): text` entries of a Google-style `Args:` section (continuation lines joined)."""
    out: dict[str, str] = {}
    lines = inspect.cleandoc(doc or "").splitlines()
    section_indent: int | None = None
    item_indent: int | None = None
    current: str | None = None
    for line in lines:
        if section_indent is None:
            m = _ARGS.match(line)
            if m:
                section_indent = len(m.group(1))
            continue
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent <= section_indent:
            if _ARGS.match(line):
                section_indent, item_indent, current = len(_ARGS.match(line).group(1)), None, None
                continue
            section_indent, current = None, None
            continue
        m = _ITEM.match(line)
        if m and (item_indent is None or indent == item_indent):
            item_indent = indent
            current = m.group(2).lstrip("*")
            out[current] = m.group(4).strip()
        elif current is not None:
            out[current] += " " + line.strip()
    return {k: _clean_doc(v) for k, v in out.items() if v.strip()}


@lru_cache(maxsize=None)
def _documented(entry: Entry) -> dict[str, str]:
    """Option name -> the implementation's own `Args:` text."""
    target = entry.resolve()
    docs: dict[str, str] = {}
    for obj in (target, getattr(target, "__init__", None)):
        if obj is not None and obj is not object.__init__:
            for key, text in parse_args_section(inspect.getdoc(obj) or "").items():
                docs.setdefault(key, text)
    return {opt.name: docs.get(opt.target) or docs.get(opt.name) for opt in models.options(entry)
            if docs.get(opt.target) or docs.get(opt.name)}


def option_docs(entry: Entry) -> dict[str, str]:
    """Option name (as the dialect spells it) -> description: the implementation's docstring, else the same option
    of the same-named component of another dialect (OneFlow StepLR's step_size is torch's), else a common table."""
    own = _documented(entry)
    borrowed: dict[str, str] = {}
    for other in REGISTRY.same_name(entry):
        try:
            for key, text in _documented(other).items():
                borrowed.setdefault(key, text)
        except Exception:  # an unimportable plugin row must not break the schema
            continue
    out = {}
    for opt in models.options(entry):
        text = (own.get(opt.name) or borrowed.get(opt.name) or COMMON_DOCS.get(opt.name) or COMMON_DOCS.get(opt.target)
                or (SCHEDULE_DOCS.get(opt.name) if entry.kind == SCHEDULER else None))
        if text:
            out[opt.name] = text
    return out


def _hydra_keys(kind: str) -> dict[str, Any]:
    """`_target_` (optreg's builder only) and Hydra's instantiate flags, which the Hydra group files carry."""
    flag = "Hydra instantiate flag (ignored by optreg.build)"
    return {"_target_": {"enum": list(targets(kind)), "description": "optional, for hydra.utils.instantiate: only "
                                                                     "optreg's own builder or call is accepted"},
            "_recursive_": {"type": "boolean", "description": flag},
            "_convert_": {"enum": ["none", "partial", "object", "all"], "description": flag},
            "_partial_": {"type": "boolean", "description": flag}}


def _class_paths(entry: Entry) -> list[str]:
    """The framework's class paths (`oneflow.optim.AdamW`, `torch.optim.lr_scheduler.StepLR`), which name the entry
    too (`Registry.place`: matched as written, spaces around aside)."""
    return sorted(path for (kind, path), e in REGISTRY.framework_paths().items() if e is entry and kind == entry.kind)


def _names(entry: Entry) -> list[str]:
    names = []
    for n in (entry.name, *entry.aliases):
        names += [n, n.lower(), f"{entry.dialect}.{n}", f"{entry.dialect}.{n}".lower()]
    return sorted(set(names + _class_paths(entry)))


_SEPARATORS = f"[{SEPARATORS}]*"   # a character class of them as written, without escapes (an editor's regex: ECMA)


def _name_pattern(entry: Entry) -> str:
    """Every spelling the registry takes for the entry (`names.normalise`: any case, `-`, `_` and spaces anywhere, a
    scheduler's trailing `LR` optional), with or without its dialect's prefix (`oneflow.`, or `oneflow_` as a Hydra
    group name has it) or its framework's module path (`oneflow.optim.`, as `Registry.place` reads it), or a class
    path of it (`_class_paths`)."""
    keys = sorted({normalise(n, entry.kind) for n in (entry.name, *entry.aliases)})
    lr = f"({_SEPARATORS}{any_case(SCHEDULER_SUFFIX, _SEPARATORS)})?" if entry.kind == SCHEDULER else ""
    spelt = "|".join(any_case(key, _SEPARATORS) for key in keys)
    dialect = any_case(entry.dialect)   # `oneflow.AdamW`, or a Hydra group name's `oneflow_adamw`
    modules = "".join(f"|{re.escape(m)}\\." for m in REGISTRY.dialect(entry.dialect).paths.get(entry.kind, ()))
    paths = "".join(f"|^\\s*{re.escape(path)}\\s*$" for path in _class_paths(entry))
    return rf"^\s*({dialect}\s*\.|{dialect}_{modules})?{_SEPARATORS}({spelt}){lr}{_SEPARATORS}\s*${paths}"


def _option_aliases(props: dict[str, Any]) -> dict[str, Any]:
    """The other spellings of the options in `props` that validation takes (`names.synonyms`: `learning_rate` for
    `lr`; `names.TUPLE_ALIASES`: `beta1`/`beta2` for `betas`, or `betas` for the two), each as its option's schema."""
    out: dict[str, Any] = {}
    for name, prop in props.items():
        for alias in sorted(synonyms(name) - set(props)):
            out[alias] = {**{k: v for k, v in prop.items() if k not in ("default", "description")},
                          "description": f"another spelling of {name}"}
    for joined, parts in TUPLE_ALIASES.items():
        items = props.get(joined, {}).get("items")
        if isinstance(items, list) and len(items) == len(parts):
            out.update({part: {**item, "description": f"{joined}[{i}]"}
                        for i, (part, item) in enumerate(zip(parts, items)) if part not in props})
        elif joined not in props and all(part in props for part in parts):
            out[joined] = {"type": "array", "items": [{k: v for k, v in props[part].items() if k not in ("default",
                                                                                                      "description")}
                                                      for part in parts],
                           "additionalItems": False, "minItems": len(parts), "maxItems": len(parts),
                           "description": f"{', '.join(parts)} as one list"}
    return out


def _name_keys(name: dict[str, Any]) -> dict[str, Any]:
    """`name` and the other keys that name a component (`names.NAME_KEYS`: `type`, `optimizer_type`), each taking
    what `name` takes (the schema `name`, a `$ref` where it is large)."""
    first, *others = NAME_KEYS
    return {first: name, **{key: {"allOf": [name], "description": f"another spelling of {first}"} for key in others}}


def _one_name() -> list[dict[str, Any]]:
    """A component's spec gives exactly one of the keys that name it (`experiment._section`: 'keep one')."""
    return [{"required": [key]} for key in NAME_KEYS]


def _component(entry: Entry, definitions: dict[str, Any]) -> dict[str, Any]:
    schema = models.model(entry).model_json_schema(schema_generator=Draft07, ref_template="#/definitions/{model}")
    definitions.update(schema.pop("$defs", {}))
    props = schema.setdefault("properties", {})
    for option, text in option_docs(entry).items():
        if option in props and "description" not in props[option]:
            props[option]["description"] = text
    for prop in props.values():
        prop.pop("title", None)
    props.update(_option_aliases(props))
    name = f"name:{entry.kind}:{entry.qualname}"   # one definition for every key that names it
    definitions[name] = _or_interpolation({"anyOf": [{"enum": _names(entry)},
                                                     {"type": "string", "pattern": _name_pattern(entry)}],
                                           "description": entry.doc or entry.name})
    props.update(_name_keys(_ref(name)))
    props["dialect"] = {"enum": [entry.dialect], "description": "the framework whose names, defaults and numerics "
                                                                "this component follows"}
    props.update(_hydra_keys(entry.kind))
    schema.pop("required", None)
    schema["oneOf"] = _one_name()
    schema["additionalProperties"] = False
    schema["description"] = " ".join(filter(None, [entry.doc, f"Reproduces {entry.source}." if entry.source else ""]))
    schema["title"] = entry.qualname
    return schema


def _group_keys(keys: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """Schemas of the group keys (optreg.core.groups: RULE_KEYS, SETTINGS; a dialect's binder keys), from their
    declared types and descriptions, each a shared definition (every optimizer's rules, or a dialect's, take them)."""
    from pydantic import TypeAdapter

    out = {}
    for name, key in keys.items():
        schema = TypeAdapter(key.type).json_schema(schema_generator=Draft07, ref_template="#/definitions/{model}")
        definitions.update(schema.pop("$defs", {}))
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        out[name] = _shared(f"group:{name}", {**schema, "description": key.doc}, definitions)
    return out


def infinity(signs: str) -> dict[str, Any]:
    """A string that optreg.core.options._order reads as infinity: `inf` or `infinity` in any case, after any run of
    the characters of `signs` and `.` (`Infinity`, `.inf`, `+inf`; `-inf` with "+-"), spaces around."""
    return {"type": "string", "pattern": rf"^\s*[{re.escape(signs)}.]*{any_case('inf')}({any_case('inity')})?\s*$"}


#: a norm order > 0 or inf (optreg.core.options.norm_order: OneFlow's per-group clip_grad_norm_type)
NORM_ORDER = {"anyOf": [{"type": "number", "exclusiveMinimum": 0}, infinity("+")]}


def _group_key(key: str, kind: Any, definitions: dict[str, Any]) -> dict[str, Any]:
    """The schema of an entry's group key (`Entry.group_keys`), from its declared type; a norm order (a validator
    alone) as NORM_ORDER."""
    from pydantic import TypeAdapter

    schema = TypeAdapter(kind).json_schema(schema_generator=Draft07, ref_template="#/definitions/{model}")
    definitions.update(schema.pop("$defs", {}))
    schema.pop("title", None)
    if not schema and key.endswith("norm_type"):
        schema = dict(NORM_ORDER)
    return {**schema, "description": f"{key}: a key of this rule's group, read per group by the optimizer"}


def _optimizer(entry: Entry, definitions: dict[str, Any]) -> dict[str, Any]:
    from optreg.core.groups import RULE_KEYS, SELECTORS, settings_table

    schema = _component(entry, definitions)
    from optreg.core.build import wrapped_example, wraps_optimizer
    from optreg.core.composite import ROUTE_KEY

    options = {k: v for k, v in schema["properties"].items() if k not in ("name", "dialect") and not k.startswith("_")}
    wraps = wraps_optimizer(entry)   # its rules are planned with the optimizer it wraps (any): that one's options
    binder = binder_keys(entry)   # the keys its dialect's binder reads (MindSpore's grad_centralization, order_params)
    selected = [{"required": [k]} for k in SELECTORS]
    rule = {"type": "object", "additionalProperties": entry.bind is not None or wraps,
            "description": "a parameter group: the parameters every selector holds for (the first matching rule "
                           "wins), with its own options" + (" (the wrapped optimizer's)" if wraps else ""),
            "properties": {**_group_keys(RULE_KEYS, definitions), **({} if wraps else options)},
            "anyOf": [*selected, *({"required": [k]} for k, key in binder.items() if key.alone)]}   # order_params

    for key, kind in entry.group_keys.items():   # a group's own keys beside the options (OneFlow's per-group
        rule["properties"][key] = _group_key(key, kind, definitions)   # clipping, Model Zoo's muP adjustments)
    rule["properties"].update(_group_keys(binder, definitions))
    items: dict[str, Any] = rule
    if not wraps and not entry.takes_model:   # a composite's rule: its own optimizer
        route = _shared("route", {
            "type": "object", "oneOf": _one_name(), "properties": _name_keys({"type": "string"}),
            "description": "the optimizer that takes the parameters this rule selects (a nested spec with name: and "
                           "its options; optreg.core.composite)"}, definitions)
        rule["properties"][ROUTE_KEY] = route
        # beside its optimizer, a composite's rule takes that optimizer's group keys (any dialect's), not this one's
        items = {"anyOf": [rule, _shared("composite_rule", {
            "type": "object", "required": [ROUTE_KEY], "additionalProperties": True,
            "description": rule["description"], "properties": {**_group_keys(RULE_KEYS, definitions), ROUTE_KEY: route},
            "anyOf": selected}, definitions)]}
    # null: no rules (groups.not_rules), as a Python call's None
    schema["properties"]["param_groups"] = {"type": ["array", "null"], "items": items}
    schema["properties"].update(_group_keys(settings_table(), definitions))
    if wraps:  # MindSpore LARS: the optimizer it wraps, a nested spec (required)
        example = wrapped_example(entry)
        schema["properties"]["optimizer"] = {
            "type": "object", "oneOf": _one_name(), "properties": _name_keys({"type": "string"}),
            "description": "the optimizer to wrap: a nested spec with name: and its options (its dialect defaults "
                           "to this one's)", "examples": [example]}
        schema["required"] = ["optimizer"]
    return schema


def _scheduler(entry: Entry, definitions: dict[str, Any]) -> dict[str, Any]:
    schema = _component(entry, definitions)
    props = schema["properties"]
    if "schedulers" in props:
        props["schedulers"] = {"type": "array", "items": {"$ref": "#/definitions/scheduler"}, "minItems": 1}
    from optreg.core.build import _is_engine

    if _is_engine(entry):   # the adapter's options of a closed form (core.build._pop_adapter_options): `key` (the
        own = getattr(entry.resolve(), "param_group_key", None)   # one a weight-decay schedule drives) and last_epoch
        props["key"] = {"enum": [own] if own else list(KEYS)}
        props.update({k: v for k, v in _last_epoch().items() if k not in props})
    else:   # a torch class drives the lr (core.build.check_key)
        props["key"] = {"enum": ["lr"]}
    props.update(_loop_keys(definitions))
    from_run = required_length(entry)   # left out or null, the run's (core.loop); another length's null: left out
    for option in dict.fromkeys(filter(None, (entry.length, from_run))):
        length = props.get(option)
        if length is None or ({"type": "null"} in length.get("anyOf", []) and option != from_run):
            continue
        if {"type": "null"} not in length.get("anyOf", []):
            outer = {k: length.pop(k) for k in ("default", "description") if k in length}
            length = props[option] = {"anyOf": [length, {"type": "null"}], **outer}
        what = f"left out or null: {FROM_RUN}" if option == from_run else "null: as if left out"
        length["description"] = f"{length.get('description', option)} ({what})"
    return schema


def _last_epoch() -> dict[str, Any]:
    """`last_epoch` and its other spellings (`last_step`) of a schedule the adapter drives: -1 starts fresh."""
    prop = {"last_epoch": {"type": "integer", "minimum": FRESH, "description": COMMON_DOCS["last_epoch"]}}
    return {**prop, **_option_aliases(prop)}


def _model_schema(model: Any) -> dict[str, Any]:
    """A pydantic model's draft-07 schema, without titles."""
    schema = model.model_json_schema(schema_generator=Draft07)
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def _loop_keys(definitions: dict[str, Any]) -> dict[str, Any]:
    """The training loop's keys of every scheduler spec (optreg.core.loop); the warmup's schema a shared
    definition."""
    from optreg.schedules.warmup import WarmupSpec

    warmup = _model_schema(WarmupSpec)
    warmup["description"] = WarmupSpec.__doc__.split("\n")[0]
    return {
        "by_epoch": {"type": "boolean", "description": "the schedule counts epochs of train.steps_per_epoch steps: "
                                                       "value(t) = f(floor(t / steps_per_epoch)) (MMEngine)"},
        "convert_to_iter_based": {"type": "boolean", "description": "with by_epoch: its step counts times "
                                                                    "steps_per_epoch, changing every step (MMEngine)"},
        "warmup": _shared("warmup", {"description": warmup["description"] + "; null: none (a Hydra group file's "
                                                                          "default)",
                                     "anyOf": [warmup, {"type": "null"}]}, definitions),
    }


def _clip_schema() -> dict[str, Any]:
    from optreg.config.run import ClipGrad

    schema = _model_schema(ClipGrad)
    schema["properties"]["norm_type"] = {"anyOf": [{"type": "number"}, infinity("+-")], "default": 2.0}
    schema["description"] = ClipGrad.__doc__.split("\n")[0]
    return schema


def _combinators(definitions: dict[str, Any]) -> list[dict[str, Any]]:
    """optreg's own `sequential` and `chained` (not registry rows: they compose rows of any dialect)."""
    nested = {"type": "array", "items": {"$ref": "#/definitions/scheduler"}, "minItems": 1}
    restart = {"enum": ["local", "global"]}
    common = {"schedulers": nested, "key": {"enum": list(KEYS)},
              **_last_epoch(), **_hydra_keys(SCHEDULER), **_loop_keys(definitions)}
    return [
        {"title": "sequential", "type": "object", "additionalProperties": False, "required": ["schedulers"],
         "oneOf": _one_name(), "description": COMBINATOR_DOCS["sequential"],
         "properties": {**_name_keys({"enum": ["sequential", "Sequential"]}), **common,
                        "milestones": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                        "restart": {"anyOf": [restart, {"type": "array", "items": restart}]}}},
        {"title": "chained", "type": "object", "additionalProperties": False, "required": ["schedulers"],
         "oneOf": _one_name(), "description": COMBINATOR_DOCS["chained"],
         "properties": {**_name_keys({"enum": ["chained", "Chained"]}), **common}},
    ]


def _interpolation() -> dict[str, Any]:
    """A `${...}` string (`experiment.composes`: OmegaConf resolves it before validation, as `optreg validate` and
    `optreg run` read the file), in place of any option's value."""
    return {"type": "string", "pattern": r"\$\{", "description": "an OmegaConf interpolation (${...}), resolved "
                                                                 "before the config is validated"}


def _takes_any_string(node: Any) -> bool:
    """Whether a value's schema takes every string already (an interpolation among them): no constraint, or a
    string (or an anyOf branch) without a pattern, a length, a format or a choice."""
    if not isinstance(node, dict):
        return True
    if any(k in node for k in ("$ref", "allOf", "oneOf", "not", "enum", "const", "pattern", "minLength", "maxLength",
                               "format")):
        return False
    kinds = node.get("type", "string")
    return "string" in ([kinds] if isinstance(kinds, str) else kinds) and \
        ("anyOf" not in node or any(_takes_any_string(b) for b in node["anyOf"]))


def _numeric_strings() -> dict[str, Any]:
    """Definitions of the strings validation reads as numbers (`core.types`: `"1e-3"`, as pydantic parses them:
    spaces around, `_` between digits; an integer's as `"10"` or `"10.0"`), signed or not (a lower bound >= 0)."""
    digits = r"\d+(_\d+)*"
    numbers = {"number": rf"({digits}(\.({digits})?)?|\.{digits})([eE][-+]?\d+)?", "integer": rf"{digits}(\.0+)?"}
    return {f"{NUMERIC_STRING}:{kind}{':unsigned' * unsigned}": {
        "type": "string", "pattern": rf"^\s*[{'+' if unsigned else '-+'}]?{number}\s*$",
        "description": f"a{'n' * (kind == 'integer')} {kind} written as a string"}
        for kind, number in numbers.items() for unsigned in (False, True)}


def _numeric_forms(node: dict[str, Any]) -> list[dict[str, str]]:
    """The numeric strings (`_numeric_strings`) that stand for the numbers `node` (or a branch of its anyOf)
    takes."""
    refs = []
    for branch in node.get("anyOf", [node]):
        kind = branch.get("type") if isinstance(branch, dict) else None
        if kind in ("number", "integer"):
            unsigned = any(branch.get(k, -1) >= 0 for k in ("minimum", "exclusiveMinimum"))
            ref = _ref(f"{NUMERIC_STRING}:{kind}{':unsigned' * unsigned}")
            refs += [ref] if ref not in refs else []
    return refs


def _or_interpolation(node: Any) -> Any:
    """`node`, a value's schema (a section's, an option's, an item's), taking an interpolation too, and a number a
    numeric string."""
    if _takes_any_string(node):
        return node
    others = [form for form in [*_numeric_forms(node), _ref(INTERPOLATION)] if form not in node.get("anyOf", [])]
    if not others:   # taken already (a shared definition's use: `_shared`)
        return node
    if "anyOf" in node and set(node) - {"anyOf"} <= set(_ANNOTATIONS):
        return {**node, "anyOf": [*node["anyOf"], *others]}
    return {"anyOf": [{k: v for k, v in node.items() if k not in _ANNOTATIONS}, *others],
            **{k: node[k] for k in _ANNOTATIONS if k in node}}


def _interpolable(node: Any) -> Any:
    """A copy of a schema in which every value (a section, an option, a list's item) may be an interpolation; the
    keywords that negate or condition (`not`, `if`, `propertyNames`) and data are left alone."""
    if not isinstance(node, dict):
        return node
    out = dict(node)
    for key in ("properties", "patternProperties"):
        if isinstance(node.get(key), dict):
            out[key] = {k: _or_interpolation(_interpolable(v)) for k, v in node[key].items()}
    for key in ("items", "additionalProperties", "additionalItems"):
        if isinstance(node.get(key), dict):
            out[key] = _or_interpolation(_interpolable(node[key]))
        elif isinstance(node.get(key), list):
            out[key] = [_or_interpolation(_interpolable(v)) for v in node[key]]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(node.get(key), list):
            out[key] = [_interpolable(v) for v in node[key]]
    for key in ("definitions", "then", "else"):
        if isinstance(node.get(key), dict):
            out[key] = ({k: _interpolable(v) for k, v in node[key].items()} if key == "definitions"
                        else _interpolable(node[key]))
    return out


def _other_forms(schedulers: dict[int, dict[str, Any]], definitions: dict[str, Any]) -> list[dict[str, Any]]:
    """The declared dialects' other spellings of a scheduler that have a schema (`SchedulerForm.schema`: Cerebras'
    `{LinearLR: {...}}`), each a definition, with the options of that dialect's rows (`schedulers`: an entry's id
    -> its schema)."""
    refs = []
    for dialect in REGISTRY.declared():
        for i, form in enumerate(dialect.scheduler_forms):
            if form.schema is None:
                continue
            name = f"{SCHEDULER_FORM}:{dialect.name}:{i}"

            def options_of(cls: str, dialect: str = dialect.name) -> dict[str, Any]:
                return schedulers[id(REGISTRY.lookup(SCHEDULER, cls, dialect))]["properties"]

            definitions[name] = form.schema(options_of, f"#/definitions/{name}")
            refs.append(_ref(name))
    return refs


def _scheduler_name(schedulers: list[dict[str, Any]]) -> dict[str, Any]:
    """The scheduler section given as a name alone (`scheduler: ConstantLR`, read as {name: ConstantLR}; not an
    item of a list): any spelling of a registered scheduler's name (each member's `name`, a `$ref`)."""
    return {"anyOf": [s["properties"]["name"] for s in schedulers],
            "description": "a scheduler by its name alone, with its defaults"}


def _composed_section() -> dict[str, Any]:
    """A section of a Hydra primary config that leaves its name (and so its options' schema) to the config group
    its `defaults:` list chooses (`experiment.composes`), e.g. the param_groups every optimizer takes."""
    return {"type": "object", "not": {"anyOf": _one_name()},
            "description": "a section without its name: the one the defaults: list composes completes it"}


def experiment_schema(libraries: Sequence[str] = ()) -> dict[str, Any]:
    """The whole experiment config of optreg's own form (not a format reader's: DeepSpeed, Hugging Face, ...);
    every registered component of every dialect is a member, and the optimizers of each installed library dialect
    named in `libraries` (`pytorch_optimizer`: read from the installed package). What `optreg validate` reads
    before it validates is taken as it is: an application's own top-level keys, `${...}` interpolations, a
    dialect's scheduler forms, a Hydra primary config's sections that its `defaults:` completes."""
    from optreg.config.experiment import DEFAULTS, TOP_KEYS, near_miss_pattern
    from optreg.config.run import TrainSpec

    definitions: dict[str, Any] = {}
    rows = {id(e): e for e in REGISTRY.entries(OPTIMIZER)}
    for dialect in libraries:
        rows.update((id(e), e) for e in REGISTRY.entries(OPTIMIZER, REGISTRY.dialect(dialect).name))
    optimizers = [_optimizer(e, definitions) for e in rows.values()]
    entries = REGISTRY.entries(SCHEDULER)
    schedulers = [_scheduler(e, definitions) for e in entries]
    _share_options(optimizers, OPTIMIZER, definitions)
    _share_options(schedulers, SCHEDULER, definitions)
    forms = _other_forms({id(e): s for e, s in zip(entries, schedulers)}, definitions)
    definitions[SCHEDULER_NAME] = _scheduler_name(schedulers)
    definitions["scheduler"] = {"anyOf": schedulers + _combinators(definitions) + forms}
    definitions[INTERPOLATION] = _interpolation()
    definitions.update(_numeric_strings())
    definitions[COMPOSED] = _composed_section()
    train = TrainSpec.model_json_schema(schema_generator=Draft07)
    scheduler = [_ref("scheduler"), {"type": "array", "items": _ref("scheduler")}, _ref(SCHEDULER_NAME),
                 {"type": "null"}]
    return _interpolable({
        "$schema": DRAFT_07,
        "title": "optreg experiment config",
        "type": "object",
        # an application's own keys (`model:`, `seed:`) are its business; a near-miss of a section's is refused
        "propertyNames": {"anyOf": [{"enum": list(TOP_KEYS)}, {"not": {"pattern": near_miss_pattern()}}]},
        "properties": {
            "dialect": {"enum": [*REGISTRY.dialects(), None], "description": "default dialect of the names below"},
            "optimizer": {"anyOf": [*optimizers, _ref(COMPOSED)]},
            "scheduler": {"anyOf": [*scheduler, _ref(COMPOSED)]},
            "train": {"anyOf": [train, {"type": "null"}]},   # null: as if left out (run.read_train, read_clip)
            "clip_grad": {"anyOf": [_clip_schema(), {"type": "null"}]},
        },
        # a Hydra primary config (a `defaults:` list) may leave its sections' names to the groups it composes
        "if": {"required": [DEFAULTS]},
        "else": {"required": ["optimizer"],
                 "properties": {"optimizer": {"oneOf": _one_name()}, "scheduler": {"anyOf": scheduler}}},
        "definitions": definitions,
    })


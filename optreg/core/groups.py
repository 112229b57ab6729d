"""Parameter groups: torch-style group dicts, or config rules that select parameters by name, owning module and
number of dimensions, with per-rule options and multipliers, plus the optimizer-wide fine-tuning settings
`no_weight_decay` (timm) and `layer_decay` (BEiT / timm). Every key's type is declared once below (`RULE_KEYS`,
`SETTINGS`, and the dialects' decay rules: `settings_table()`); validation and the JSON Schema read those tables."""

from __future__ import annotations

import fnmatch
import re
import sys
from dataclasses import dataclass, field
from typing import Annotated, Any, Iterable, Mapping, Sequence

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationError, WithJsonSchema
from pydantic_core import PydanticCustomError

from optreg.core.types import Bool, NonNegFloat, NonNegInt, number
from optreg.errors import Collector, ConfigError, ErrorItem, closest, first_few, join_path, show

_GLOB = set("*?[")


# ---------------------------------------------------------------------------------------------------
# the keys: each declared once (type + doc); validation and the JSON Schema read these tables
# ---------------------------------------------------------------------------------------------------
def _strings(what: str, allow_empty: bool = False, classes: bool = False):
    """A string or a list of non-empty strings -> list (a single string is a list of one); with `classes`, a class
    given from Python stands for its dotted path (`class_path`)."""

    def check(value: Any) -> list[str]:
        values = [value] if isinstance(value, str) or classes and isinstance(value, type) else value
        if classes and isinstance(values, (list, tuple)):
            values = [class_path(v) if isinstance(v, type) else v for v in values]
        if not isinstance(values, (list, tuple)) or not (values or allow_empty) or \
                not all(isinstance(v, str) and v for v in values):
            raise PydanticCustomError("strings", "expected {what} or a list of them, got {value}",
                                      {"what": what, "value": show(value)})
        return list(values)

    one = {"type": "string", "minLength": 1}
    many = {"type": "array", "items": one, **({} if allow_empty else {"minItems": 1})}
    return Annotated[list[str], BeforeValidator(check), WithJsonSchema({"anyOf": [one, many]})]


Patterns = _strings("a glob pattern")
#: a list of glob patterns that may be empty (`LayerDecay.before`)
OptionalPatterns = _strings("a glob pattern", allow_empty=True)
ClassNames = _strings("a class name", classes=True)


def _layer_pattern(value: Any) -> Any:
    if isinstance(value, str) and value.count("{i}") != 1:
        raise PydanticCustomError("layer_pattern", "must contain {token} once, where the layer index is (e.g. "
                                                   "{example}), got {value}",
                                  {"token": "'{i}'", "example": "'blocks.{i}.*'", "value": show(value)})
    return value


class LayerDecay(BaseModel):
    """`layer_decay: {rate, layer, before}`: layer-wise lr decay (BEiT; timm's `param_groups_layer_decay`).

    A parameter whose name matches `layer` ("blocks.{i}.*") is in layer i + 1, one matching a `before` pattern in
    layer 0, any other in layer L + 1 (L = the highest index found + 1). lr *= rate ** (L + 1 - layer)."""

    model_config = ConfigDict(extra="forbid")

    rate: Annotated[number(gt=0, le=1), Field(description="decay per layer, 0 < rate <= 1: the last "
                                                                  "layer keeps rate**1, the head rate**0")]
    layer: Annotated[str, Field(min_length=1, pattern=r"\{i\}",     # before the validator: the JSON Schema has it
                                description="glob pattern with {i} where the layer index is, e.g. 'blocks.{i}.*'"),
                     BeforeValidator(_layer_pattern)]
    before: Annotated[OptionalPatterns,
                      Field(description="glob patterns of the parameters before the first layer (layer 0): "
                                        "embeddings, cls_token, pos_embed")] = []


@dataclass(frozen=True)
class Key:
    """A group key: its type (validation and schema), its description, and the option it scales or sets."""

    type: Any
    doc: str
    scales: str | None = None     # "lr" or "weight_decay": the component must have that option
    verb: str = "scale"           # what the key does to that option ("set": no_weight_decay, modelzoo_groups)
    alone: bool = False           # a rule of this key alone, without selectors (MindSpore's order_params dict)


SELECTORS: dict[str, Key] = {
    "params": Key(Patterns, "glob pattern(s) over parameter names"),
    "modules": Key(ClassNames, "class name(s) of the module that owns the parameter directly (LayerNorm, "
                               "Embedding; a dotted path for your own class)"),
    "max_ndim": Key(NonNegInt, "parameters with at most this many dimensions (1: biases and norm weights)"),
}
MULTIPLIERS: dict[str, Key] = {
    "lr_mult": Key(NonNegFloat, "multiplies the optimizer's lr for this rule's parameters (MMEngine)", "lr"),
    "decay_mult": Key(NonNegFloat, "multiplies the optimizer's weight decay for this rule's parameters (MMEngine)",
                      "weight_decay"),
}
RULE_KEYS: dict[str, Key] = {**SELECTORS, **MULTIPLIERS}
SETTINGS: dict[str, Key] = {
    "no_weight_decay": Key(Bool, "weight decay 0 for every parameter with at most one dimension and for the "
                                 "names the model's no_weight_decay() returns (timm)", "weight_decay", "set"),
    "layer_decay": Key(LayerDecay, "layer-wise lr decay (BEiT, timm): lr *= rate ** (L + 1 - layer)", "lr"),
}


def decay_rules() -> dict[str, Any]:
    """Setting key -> the `DecayRule` a dialect declares (Model Zoo's `modelzoo_groups`, the HF Trainer's
    `hf_decay_groups`, ...): every optimizer may turn one on."""
    from optreg.core.registry import REGISTRY

    return {rule.key: rule for dialect in REGISTRY.declared() for rule in dialect.decay_rules}


def settings_table() -> dict[str, Key]:
    """Every optimizer-wide setting: optreg's own (`SETTINGS`) and each dialect's decay rules."""
    return {**SETTINGS, **{key: Key(Bool, rule.doc, "weight_decay", "set") for key, rule in decay_rules().items()}}


_ADAPTERS: dict[str, TypeAdapter] = {}


def _adapter(key: str) -> TypeAdapter:
    if key not in _ADAPTERS:
        _ADAPTERS[key] = TypeAdapter({**RULE_KEYS, **settings_table()}[key].type)
    return _ADAPTERS[key]


def _validate(table: Mapping[str, Key], raw: Mapping[str, Any], path: str, errors: Collector) -> dict[str, Any]:
    """The keys of `table` that `raw` gives, validated; problems at their paths."""
    from optreg.core.models import UNKNOWN_KEY, number_message, pydantic_errors

    out: dict[str, Any] = {}
    for key in table:
        if key in raw:
            try:
                out[key] = _adapter(key).validate_python(raw[key])
            except ValidationError as exc:
                for item in pydantic_errors(exc):
                    where = join_path(join_path(path, key), item.path)
                    if item.message == UNKNOWN_KEY:   # an unknown key of layer_decay
                        fields = list(LayerDecay.model_fields)
                        errors.add(where, f"unknown key of {key} (expected {', '.join(fields)})",
                                   closest(where.rpartition(".")[2], fields))
                    elif key == "layer_decay" and number_message(raw[key]) is None:   # timm's layer_decay=0.75
                        errors.add(where, f"expected a mapping {{{', '.join(LayerDecay.model_fields)}}}, got "
                                          f"{show(raw[key])}: timm's number is the rate, and the layers, which timm "
                                          f"reads from the model's group_matcher, are a pattern here (e.g. {{rate: "
                                          f"{show(raw[key])}, layer: 'blocks.{{i}}.*'}})")
                    else:
                        errors.add(where, item.message)
    return out


def split_settings(options: Mapping[str, Any], path: str, errors: Collector) -> tuple[dict[str, Any], dict[str, Any]]:
    """(validated optimizer-level group settings, the other options) of an optimizer section or kwargs."""
    table = settings_table()
    settings = _validate(table, options, path, errors)
    return settings, {k: v for k, v in options.items() if k not in table}


def split_rule(rule: Mapping[str, Any], path: str, errors: Collector) -> tuple[dict[str, Any], dict[str, Any]]:
    """(validated selectors and multipliers, the optimizer options) of one `param_groups` rule."""
    keys = _validate(RULE_KEYS, rule, path, errors)
    for mult, option in ((k, key.scales) for k, key in MULTIPLIERS.items()):
        if mult in rule and option in rule:
            errors.add(join_path(path, mult), f"both {option!r} and {mult!r} are given; keep one "
                                              f"({mult} multiplies the optimizer's {option})")
    return keys, {k: v for k, v in rule.items() if k not in RULE_KEYS}


def setting_elsewhere(key: str, option_names: Sequence[str], place: str) -> ErrorItem:
    """The refusal of optimizer-wide setting `key` (`no_weight_decay`, `layer_decay`, a dialect's decay rule) given
    where it cannot act; `place` says where that is and where the setting goes instead. The did-you-mean is the
    option a setting sets, which the caller can give itself (no_weight_decay: weight_decay; none for layer_decay,
    which scales the lr)."""
    declared = settings_table()[key]
    hint = scaled_options(option_names).get(declared.scales or "") if declared.verb == "set" else None
    return ErrorItem(key, f"an optimizer-wide setting (it makes the parameter groups from the parameters' names and "
                          f"the model), {place}", None, hint)


def scaled_options(option_names: Sequence[str]) -> dict[str, str | None]:
    """The component's own names of the two options that multipliers scale: {"lr": "learning_rate" (MindSpore),
    "weight_decay": ...}; None when the component has no such option."""
    from optreg.core.names import synonyms

    return {target: next((n for n in option_names if n in synonyms(target)), None)
            for target in ("lr", "weight_decay")}


def check_support(names: Mapping[str, str | None], qualname: str, keys: Iterable[str], path: str,
                  errors: Collector) -> None:
    """A multiplier or setting needs the option it scales (`lr_mult` an lr, `no_weight_decay` a weight decay)."""
    declared = {**RULE_KEYS, **settings_table()}
    for key in keys:
        option = declared[key].scales if key in declared else None
        if option is not None and names.get(option) is None:
            errors.add(join_path(path, key), f"{qualname} has no {option} option for {key} to {declared[key].verb}")


# ---------------------------------------------------------------------------------------------------
# what the user passed
# ---------------------------------------------------------------------------------------------------
@dataclass
class Group:
    """One resolved parameter group: its tensors, their names (when known), its own options."""

    params: list[Any]
    names: list[str] | None
    options: dict[str, Any] = field(default_factory=dict)
    rule: str = "default"          # what made it: "param_groups[1]", "params[0]" or "default"
    extra: dict[str, Any] = field(default_factory=dict)  # dialect group keys handled by the row's bind hook
    patterns: list[str] = field(default_factory=list)    # the rule's glob patterns
    selectors: dict[str, Any] = field(default_factory=dict)    # the rule's params / modules / max_ndim
    multipliers: dict[str, float] = field(default_factory=dict)  # the rule's lr_mult / decay_mult
    origin: dict[str, str] = field(default_factory=dict)   # option -> the key that set it (lr_mult, layer_decay)
    layer: int | None = None       # layer_decay's layer id of every parameter here
    no_decay: bool = False         # no_weight_decay put these parameters here
    lr: Any = None                 # the lr and weight decay the group is built with (before any schedule)
    weight_decay: Any = None
    optimizer: str | None = None   # a composite's part that updates the group ("torch.AdamW"); None: the one

    def torch_dict(self) -> dict[str, Any]:
        return {"params": list(self.params), **self.options}


@dataclass
class Source:
    """The parameters to optimize: named tensors or torch-style group dicts, the Module when one was given
    (for `modules` and `no_weight_decay()`), the frozen parameters (requires_grad=False) left out, and the other
    names of tied parameters (`lm_head.weight` -> `embed.weight`, the name the tensor is placed under)."""

    named: list[tuple[str | None, Any]] | None
    dicts: list[dict] | None
    module: Any = None
    frozen: list[tuple[str | None, Any]] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)

    @property
    def every_name(self) -> list[str]:
        """Trainable and frozen names (what a pattern may legitimately match)."""
        return [n for n, _ in [*(self.named or []), *self.frozen] if n is not None]


@dataclass
class Scope:
    """What a composite's part (optreg.core.composite) is planned within: the whole model's parameters (`source`:
    layer_decay numbers the layers of every name, no_weight_decay reads the model's `no_weight_decay()`) and the
    optimizer-wide settings of the composite's main section (`settings`, validated, written at `path`), which reach
    every part's parameters as timm's reach every parameter; a part's own key wins."""

    source: Source
    settings: dict[str, Any] = field(default_factory=dict)
    path: str = ""


def is_tensor(obj: Any) -> bool:
    """Whether `obj` is a torch tensor (no tensor exists before torch is imported: this never imports it)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


#: what an optimizer's parameters are given as (configure_optimizer's params, build's model, the CLI's --model)
PARAMETERS = "a torch.nn.Module, its named_parameters() or an iterable of tensors or group dicts"


def check_params(params: Any, path: str = "params") -> None:
    """ConfigError at `path` (the argument that gave `params`) unless it is an iterable an optimizer can take its
    tensors or groups from (a Module is taken before this check, where it is taken)."""
    if is_tensor(params):
        raise ConfigError(f"expected {PARAMETERS}, got a single tensor (give it in a list)", path)
    if isinstance(params, (str, bytes, Mapping)) or not isinstance(params, Iterable):
        raise ConfigError(f"expected {PARAMETERS}, got {type(params).__name__} {show(params)}", path)


def parameters_argument(value: Any, path: str, needs_module: str | None = None) -> Any:
    """`value`, an API's argument that gives the parameters (build's `model`, the CLI's `--model`), checked as
    `collect` checks them before a config is planned against it: a ConfigError at `path`, with no file position (the
    argument is no part of the file); `needs_module`: the refusal of anything but a Module, where a planner takes
    only one. An iterator (`named_parameters()`) is returned as a list, to be read again."""
    import torch

    if needs_module and not isinstance(value, torch.nn.Module):
        raise ConfigError(f"{needs_module}, got {type(value).__name__} {show(value)}", path)
    if not isinstance(value, (torch.nn.Module, list, tuple)):
        check_params(value, path)
        value = list(value)
    collect(value, path)
    return value


def collect(params: Any, path: str = "params") -> Source:
    """Split what the user passed into named tensors or torch-style group dicts.

    Accepts a torch Module, `named_parameters()`, an iterable of tensors, or an iterable of group dicts. From a
    Module, (name, tensor) pairs or tensors, each parameter is placed once (a tied tensor under its first name,
    its other names in `aliases`) and the frozen ones (requires_grad=False) are left out and listed in `frozen`,
    however they are passed. Torch-style group dicts are taken as torch takes them: every tensor each dict lists,
    frozen or not (a dict is a group of its own, whose index a scheduler or a checkpoint refers to)."""
    import torch

    if isinstance(params, torch.nn.Module):
        try:   # every name of a tied parameter, so that a rule may select it by any of them
            pairs = list(params.named_parameters(remove_duplicate=False))
        except TypeError:   # a Module whose own named_parameters() has no remove_duplicate
            pairs = list(params.named_parameters())
        source = _named(pairs, path)
        source.module = params
        return source
    check_params(params, path)
    items = list(params)
    if not items:
        raise ConfigError("optimizer got an empty parameter list", path)
    if all(isinstance(i, Mapping) for i in items):
        return Source(None, [dict(i) for i in items])
    if all(isinstance(i, tuple) and len(i) == 2 and isinstance(i[0], str) and is_tensor(i[1]) for i in items):
        return _named(items, path)
    if all(is_tensor(i) for i in items):
        return _named([(None, t) for t in items], path)
    kinds = sorted({type(i).__name__ for i in items})
    raise ConfigError(f"mixes or contains unsupported items ({', '.join(kinds)}); give tensors, (name, tensor) "
                      f"pairs or group dicts", path)


def _named(pairs: list[tuple[str | None, Any]], path: str = "params") -> Source:
    """Each tensor once, under its first name (a later name of it -> `aliases`); the frozen ones apart."""
    first: dict[int, str | None] = {}
    named, frozen, aliases = [], [], {}
    for name, tensor in pairs:
        if id(tensor) in first:   # tied (or given twice): placed once, under its first name
            if name is not None and first[id(tensor)] is not None and name != first[id(tensor)]:
                aliases.setdefault(name, first[id(tensor)])
            continue
        first[id(tensor)] = name
        (named if tensor.requires_grad else frozen).append((name, tensor))
    if not named and frozen:
        raise ConfigError(f"every parameter is frozen (requires_grad=False; {len(frozen)} of them): nothing to "
                          f"optimize", path)
    if not named:   # torch's own words for an empty list, at the argument that gave it
        raise ConfigError("optimizer got an empty parameter list: the model has no parameters", path)
    return Source(named, None, frozen=frozen, aliases=aliases)


# ---------------------------------------------------------------------------------------------------
# rules
# ---------------------------------------------------------------------------------------------------
def class_path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def class_matches(name: str, cls: type) -> bool:
    """`LayerNorm` matches the class named so; a dotted name matches the class's module path, or a package of it
    (`torch.nn.LayerNorm` matches torch.nn.modules.normalization.LayerNorm)."""
    if "." not in name:
        return cls.__name__ == name or cls.__qualname__ == name
    package, _, leaf = name.rpartition(".")
    full = class_path(cls)
    return full == name or (cls.__qualname__ == leaf and (cls.__module__ + ".").startswith(package + "."))


def _owners(source: Source) -> dict[str, type]:
    """Parameter name (a tied parameter's other names too) -> class of the module that owns it directly."""
    module = source.module
    out: dict[str, type] = {}
    for name in [*source.every_name, *source.aliases]:
        owner = name.rpartition(".")[0]
        try:
            out[name] = type(module.get_submodule(owner) if owner else module)
        except AttributeError:   # a name the module's own named_parameters() made up: no owner to select by
            continue
    return out


def _rule_hits(keys: Mapping[str, Any], names: list[str], tensors: Mapping[str, Any],
               owners: Mapping[str, type]) -> list[str]:
    """Names that every selector of the rule holds for."""
    hits = []
    for name in names:
        if "params" in keys and not any(fnmatch.fnmatchcase(name, p) for p in keys["params"]):
            continue
        if "modules" in keys and not (name in owners and any(class_matches(m, owners[name]) for m in keys["modules"])):
            continue
        if "max_ndim" in keys and tensors[name].dim() > keys["max_ndim"]:
            continue
        hits.append(name)
    return hits


def _check_modules(keys: Mapping[str, Any], raw: Any, source: Source, owners: Mapping[str, type], path: str,
                   errors: Collector) -> None:
    """Every class name of `modules` names a class of the model's modules (did-you-mean from them)."""
    if source.module is None:
        errors.add(path, "modules selects by the class of the module that owns a parameter: pass the Module itself, "
                         "not named_parameters() or tensors")
        return
    present = {type(m) for m in source.module.modules()}
    names = sorted({c.__name__ for c in present} | {class_path(c) for c in present})
    for j, name in enumerate(keys["modules"]):
        if not any(class_matches(name, c) for c in present):
            where = path if isinstance(raw, str) else join_path(path, j)
            hint = closest(name, names) or closest(name.rpartition(".")[2], [c.__name__ for c in present])
            errors.add(where, f"no module of the model is a {name} (its module types: "
                              f"{show(sorted({c.__name__ for c in present}), 200)[1:-1]})", hint)


_WORD = re.compile(r"[A-Za-z0-9]+")


def _respelt(pattern: str, names: Sequence[str]) -> str | None:
    """`pattern` with one misspelt word replaced by the closest word of the names (`*.bais` -> `*.bias`, `*nrom*`
    -> `*norm*`) when the result matches a name, else None. A word is misspelt when no name contains it."""
    if "[" in pattern:   # a character class: its letters are not a word
        return None
    words = {w for n in names for w in _WORD.findall(n)}
    for m in _WORD.finditer(pattern):
        if any(m.group() in n for n in names):
            continue
        near = closest(m.group(), words, cutoff=0.75)
        fixed = pattern[:m.start()] + near + pattern[m.end():] if near else None
        if fixed is not None and any(fnmatch.fnmatchcase(n, fixed) for n in names):
            return fixed
    return None


def _check_patterns(patterns: Sequence[str], raw: Any, names: Sequence[str], path: str, errors: Collector) -> None:
    """A list of glob patterns (a rule's `params`, layer_decay's `before`) against every parameter name (frozen
    parameters and a tied parameter's other names included). A pattern that matches nothing is an error when none
    of the list matches anything, or when one corrected word makes it match (a typo: `*.bais` -> did you mean
    '*.bias'?); otherwise it is skipped, as MMEngine skips a custom_keys key and timm a no_weight_decay name the
    model does not have, so that a rule such as `["*.bias", "*norm*"]` fits a model without biases."""
    dead = [j for j, p in enumerate(patterns) if not any(fnmatch.fnmatchcase(n, p) for n in names)]
    for j in dead:
        fixed = _respelt(patterns[j], names)
        if fixed is None and len(dead) < len(patterns):   # the rule's other patterns select its parameters
            continue
        where = path if isinstance(raw, str) else join_path(path, j)
        errors.add(where, f"pattern {show(patterns[j])} matches no parameter", fixed or closest(patterns[j], names))


#: the error of a rule that selects nothing (`from_rules`, and before any model: `config.experiment`)
NO_SELECTOR = "required: a glob pattern or list of patterns over parameter names (or a modules / max_ndim selector)"


def not_rules(value: Any) -> str | None:
    """The message of a `param_groups` that is no list of rules (a mapping, a number, ''), else None: a list of
    rules, or null, which is no rules in every entry point (a Python call's None, YAML's and Hydra's
    `param_groups: null`, as `warmup: null` is no warmup)."""
    if value is None or isinstance(value, (list, tuple)):
        return None
    return f"expected a list of rules ({{params: <glob>, ...}}), got {show(value)}"


def from_rules(named: list[tuple[str | None, Any]], rules: Sequence[Mapping[str, Any]], errors: Collector,
               path: str = "param_groups", paramless_ok: bool = False, source: Source | None = None,
               notes: list[str] | None = None, dropped: list[Group] | None = None) -> list[Group]:
    """Rule i -> group i (first matching rule wins; every selector of a rule must hold); unmatched parameters form
    a last, default group. A rule whose parameters are all frozen makes no group: a note (`frozen_rule_note`) to
    `notes`. The rules that make no group (those, and a rule in error) go to `dropped`, as groups of no
    parameters, for their options to be checked all the same (as `validate` checks every rule's, model or not).

    Selectors: `params` (glob patterns over names; which of them may match nothing: `_check_patterns`), `modules`
    (class of the owning module), `max_ndim`. A tied parameter is selected by any of its names, and placed under its
    first: a rule selecting it by another name takes it unless an earlier rule did (the first matching rule wins).
    paramless_ok: a rule without selectors is kept as a group of no parameters, for a dialect hook
    (MindSpore's `order_params` dict)."""
    source = source if source is not None else Source(named, None)
    names = [n for n, _ in named]
    unnamed = any(n is None for n in names)
    frozen = {n for n, _ in source.frozen if n is not None}
    aliases = source.aliases     # a tied parameter's other name -> the name it is placed under
    tensors = {n: t for n, t in [*named, *source.frozen] if n is not None}
    tensors.update({alias: tensors[name] for alias, name in aliases.items() if name in tensors})
    every = [n for n in names if n is not None] + [n for n, _ in source.frozen if n is not None] + \
        [a for a in aliases if a in tensors]
    owners = _owners(source) if source.module is not None and any(
        isinstance(r, Mapping) and "modules" in r for r in rules) else {}
    claimed: dict[str, int] = {}
    owner: dict[str, int] = {}
    groups: list[Group] = []
    for i, rule in enumerate(rules):
        here = join_path(path, i)
        if not isinstance(rule, Mapping):
            errors.add(here, f"expected a mapping with params: <glob> and options, got {show(rule)}")
            groups.append(Group([], [], rule=here))
            continue
        local = Collector()
        keys, options = split_rule(rule, here, local)
        selected = [k for k in SELECTORS if k in rule]
        if not selected and not (paramless_ok and rule):
            local.add(join_path(here, "params"), NO_SELECTOR)
        if unnamed and ("params" in rule or "modules" in rule):
            if not any(e.path == path for e in errors.items):
                errors.add(path, "param_groups with name patterns need parameter names: pass the Module or "
                                 "model.named_parameters(), not bare tensors")
            local.add(here, "")   # nothing more to check in this rule
        if "modules" in keys and not unnamed:
            _check_modules(keys, rule["modules"], source, owners, join_path(here, "modules"), local)
        patterns = keys.get("params", [])
        for pattern in patterns if not unnamed else []:
            if not (_GLOB & set(pattern)):
                if pattern in claimed:
                    local.add(join_path(here, "params"), f"parameter {show(pattern)} is claimed twice "
                                                         f"(also by {path}[{claimed[pattern]}])")
                claimed.setdefault(pattern, i)
        if patterns and not unnamed:
            _check_patterns(patterns, rule["params"], every, join_path(here, "params"), local)
        group = Group([], [], options, rule=here, patterns=list(patterns),
                      selectors={k: keys[k] for k in SELECTORS if k in keys},
                      multipliers={k: keys[k] for k in MULTIPLIERS if k in keys})
        groups.append(group)
        errors.extend([e for e in local.items if e.message])
        if local or not selected:
            continue
        if unnamed:   # max_ndim alone: the tensors themselves
            hits = [j for j, (_, t) in enumerate(named) if t.dim() <= keys["max_ndim"]]
            for j in hits:
                owner.setdefault(j, i)
            frozen_hits = [f"a tensor of shape {tuple(t.shape)}" for _, t in source.frozen
                           if t.dim() <= keys["max_ndim"]]
            if not hits and frozen_hits and notes is not None:
                notes.append(frozen_rule_note(here, frozen_hits))
            elif not hits:
                errors.add(join_path(here, "max_ndim"), f"no parameter has at most {keys['max_ndim']} dimensions")
            continue
        hits = _rule_hits(keys, every, tensors, owners)
        for n in hits:
            if aliases.get(n, n) not in frozen:
                owner.setdefault(aliases.get(n, n), i)
        if not hits and len(selected) > 1:  # each selector matches something, not all of them together
            errors.add(here, f"no parameter is selected by all of {', '.join(selected)} together")
        elif not hits and "modules" in keys:
            errors.add(join_path(here, "modules"), f"no parameter is owned directly by a "
                                                   f"{' or '.join(keys['modules'])} module")
        elif not hits and "max_ndim" in keys:
            errors.add(join_path(here, "max_ndim"), f"no parameter has at most {keys['max_ndim']} dimensions")
        group.selectors["_hits"] = hits
    rest = Group([], [], rule="default")
    for j, (name, tensor) in enumerate(named):
        k = owner.get(j if unnamed else name)
        target = groups[k] if k is not None else rest
        target.params.append(tensor)
        target.names.append(name)
    for group in groups:  # every match taken by an earlier rule, or frozen: the rule would do nothing
        hits = group.selectors.pop("_hits", [])
        placed = {n: aliases.get(n, n) for n in hits}
        taken = sorted({owner[m] for m in placed.values() if m in owner and groups[owner[m]] is not group})
        where = join_path(group.rule, "params") if group.patterns else group.rule
        if hits and not group.params and not taken and notes is not None:
            notes.append(frozen_rule_note(where, [n for n in hits if aliases.get(n, n) in frozen]))
        if hits and not group.params and taken:
            earlier = ", ".join(f"{path}[{k}]" for k in taken)
            ties = [f"{n} is tied to {m}" for n, m in placed.items() if n != m]
            errors.add(where, f"every parameter it matches ({first_few(hits)}) is already taken by {earlier} "
                              f"(the first matching rule wins{'; ' + ', '.join(ties) if ties else ''}); "
                              f"put this rule first")
    if unnamed:  # bare tensors: no names to report or to match
        rest.names = None
        for group in groups:
            group.names = None
    # a rule whose parameters are all frozen makes no group; a rule without selectors is a dialect's (order_params)
    if dropped is not None:
        dropped.extend(g for g in groups if not (g.params or not g.selectors))
    return [g for g in groups if g.params or not g.selectors] + ([rest] if rest.params else [])


def frozen_rule_note(where: str, names: Sequence[str]) -> str:
    """The note of a rule whose parameters are all frozen (requires_grad=False): a warning, not an error, as
    freezing is often a phase of training (the same file unfreezes them later) and neither timm nor MMEngine says
    anything of it (timm leaves frozen parameters out, MMEngine applies no custom_keys to them), while a pattern
    that matches no name at all is an error (`_check_patterns`)."""
    return (f"{where}: every parameter it matches is frozen (requires_grad=False: {first_few(list(names))}), so it "
            f"makes no group; frozen parameters stay out of the optimizer: build it again once they are unfrozen")


def from_dicts(dicts: list[dict], errors: Collector, path: str = "params",
               names_of: Mapping[int, str] | None = None, paramless_ok: bool = False) -> list[Group]:
    """Torch-style group dicts; a tensor in two groups is an error. paramless_ok: as in from_rules."""
    seen: dict[int, int] = {}
    groups = []
    for i, d in enumerate(dicts):
        here = join_path(path, i)
        raw = d.get("params")
        if raw is None and paramless_ok and d:
            groups.append(Group([], None, {k: v for k, v in d.items() if k != "params"}, rule=here))
            continue
        if raw is None:
            errors.add(join_path(here, "params"), "group has no 'params'")
            continue
        if is_tensor(raw):
            tensors = [raw]
        elif isinstance(raw, Iterable) and not isinstance(raw, (str, bytes, Mapping)):
            tensors = list(raw)
        else:
            errors.add(join_path(here, "params"), f"expected tensors, got {type(raw).__name__}")
            continue
        pairs = [(t[0], t[1]) if isinstance(t, tuple) and len(t) == 2 else ((names_of or {}).get(id(t)), t)
                 for t in tensors]
        for j, (_, t) in enumerate(pairs):
            if not is_tensor(t):
                errors.add(join_path(join_path(here, "params"), j), f"expected a tensor, got {type(t).__name__}")
            elif id(t) in seen:
                errors.add(join_path(here, "params"), f"a parameter is claimed twice (also in {path}[{seen[id(t)]}])")
            else:
                seen[id(t)] = i
        names = [n for n, _ in pairs]
        options = {k: v for k, v in d.items() if k not in ("params", "param_names")}
        groups.append(Group([t for _, t in pairs], names if all(n is not None for n in names) else None,
                            options, rule=here))
    return groups


# ---------------------------------------------------------------------------------------------------
# multipliers, no_weight_decay and layer_decay: each rule's group split by (layer, decay) and scaled
# ---------------------------------------------------------------------------------------------------
def _layer_index(name: str, head: str, tail: str) -> int | None:
    """i when `name` is head + i + tail (globs around a whole run of digits), else None."""
    for m in re.finditer(r"\d+", name):
        if fnmatch.fnmatchcase(name[:m.start()], head) and fnmatch.fnmatchcase(name[m.end():], tail):
            return int(m.group())
    return None


def layer_ids(spec: LayerDecay, names: Sequence[str], path: str, errors: Collector) -> tuple[dict[str, int], int]:
    """({name: layer id}, L) of BEiT's rule: `before` -> 0, `layer` with index i -> i + 1, others -> L + 1, where
    L = the highest index found + 1 (frozen layers count, so freezing early blocks keeps the later ones' lr).
    The `before` patterns may match nothing as a rule's `params` may (`_check_patterns`)."""
    head, _, tail = spec.layer.partition("{i}")
    _check_patterns(spec.before, spec.before, names, join_path(path, "before"), errors)
    found = {n: i for n in names if (i := _layer_index(n, head, tail)) is not None}
    if not found:
        near = closest(spec.layer.replace("{i}", "0"), names)
        errors.add(join_path(path, "layer"), f"pattern {show(spec.layer)} matches no parameter" +
                   (f" (the closest name is {show(near)})" if near else ""))
        return {}, 0
    top = max(found.values()) + 1
    ids = {}
    for n in names:
        if any(fnmatch.fnmatchcase(n, p) for p in spec.before):
            ids[n] = 0
        else:
            ids[n] = found[n] + 1 if n in found else top + 1
    return ids, top


def _model_no_decay(module: Any, path: str, errors: Collector) -> list[str]:
    """The names (or glob patterns) the model's `no_weight_decay()` returns (timm); none without the method."""
    method = getattr(module, "no_weight_decay", None)
    if not callable(method):
        return []
    try:
        value = method()
    except Exception as exc:  # the model's own code: reported, not raised through
        errors.add(path, f"the model's no_weight_decay() raised {type(exc).__name__}: {str(exc)[:80]}")
        return []
    values = [value] if isinstance(value, str) else list(value) if isinstance(value, Iterable) else None
    if values is None or not all(isinstance(v, str) for v in values):
        errors.add(path, f"the model's no_weight_decay() must return parameter names, got {show(value)}")
        return []
    return values


def _scale(value: Any, factor: float, what: str, path: str, errors: Collector) -> Any:
    """value * factor for a number or a per-step list of numbers (MindSpore's dynamic lr)."""
    if factor == 1.0:
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value * factor
    if isinstance(value, (list, tuple)) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                for v in value):
        return [v * factor for v in value]
    errors.add(path, f"cannot scale a {what} of {show(value)}: give the optimizer a number "
                     f"(or a per-step list) as its {what}")
    return value


def apply_settings(groups: list[Group], settings: Mapping[str, Any], values: Mapping[str, Any],
                   names: Mapping[str, str | None], source: Source | None, errors: Collector,
                   path: str, whole: Source | None = None, at: Mapping[str, str] | None = None) -> list[Group]:
    """Each group split by (layer, decay) and its lr and weight decay set:

        lr = (the rule's lr, else the optimizer's) * lr_mult * rate ** (L + 1 - layer)
        weight_decay = 0 if no_weight_decay selects the parameter, else (rule's, else optimizer's) * decay_mult

    Fills `Group.lr` / `Group.weight_decay` of every group (the table's values). `whole`: the model's parameters
    when these are a composite's part (`Scope.source`: the layers are numbered and the model read over all of them);
    `at`: where a setting is written when not beside this optimizer's options (a composite's main section)."""
    lr_name, wd_name = names.get("lr"), names.get("weight_decay")
    model = whole if whole is not None else source

    def key_path(key: str) -> str:
        return (at or {}).get(key) or join_path(path, key)

    spec: LayerDecay | None = settings.get("layer_decay")
    no_decay_on = bool(settings.get("no_weight_decay"))
    rules = {key: rule for key, rule in decay_rules().items() if settings.get(key)}
    rule_key = "no_weight_decay" if no_decay_on else next(iter(rules), None)
    ids: dict[str, int] = {}
    top = 0
    if spec is not None or no_decay_on or rules:
        if source is not None and source.dicts is not None:
            key = "layer_decay" if spec is not None else rule_key
            errors.add(key_path(key), f"{key} needs the Module or named_parameters(), not torch-style group "
                                      f"dicts (they carry their own options)")
            return groups
    if spec is not None:
        every = model.every_name if model is not None else [n for g in groups for n in (g.names or [])]
        if not every:
            errors.add(key_path("layer_decay"), "layer_decay needs parameter names: pass the Module or "
                                                "model.named_parameters(), not bare tensors")
            return groups
        ids, top = layer_ids(spec, every, key_path("layer_decay"), errors)
    model_names = _model_no_decay(model.module, key_path("no_weight_decay"), errors) \
        if no_decay_on and model is not None and model.module is not None else []
    for key in rules:
        if model is None or model.module is None:
            errors.add(key_path(key), f"{key} reads the model's modules (its norm layers): pass the Module "
                                      f"itself, not named_parameters() or tensors")
    undecayed = [rule.undecayed(model.module) for rule in rules.values()] if not errors else []
    if errors:
        return groups
    out: list[Group] = []
    for group in groups:
        if not group.params:   # a dialect's parameterless group (MindSpore's order_params)
            out.append(group)
            continue
        buckets: dict[tuple[int | None, bool], list[int]] = {}
        # a rule's own weight decay (or decay_mult) wins over Model Zoo's bias / norm rule
        own_decay = group.options.get(wd_name) if wd_name in group.options else group.multipliers.get("decay_mult")
        for j, tensor in enumerate(group.params):
            name = group.names[j] if group.names else None
            layer = ids.get(name) if spec is not None else None
            nd = no_decay_on and (tensor.dim() <= 1 or (name is not None and any(
                fnmatch.fnmatchcase(name, p) for p in model_names))) or \
                (name is not None and own_decay is None and any(test(name) for test in undecayed))
            buckets.setdefault((layer, nd), []).append(j)
        where = path if group.rule == "default" else group.rule
        for (layer, nd), members in sorted(buckets.items(), key=lambda kv: (-1 if kv[0][0] is None else kv[0][0],
                                                                            kv[0][1])):
            options = dict(group.options)
            lr = options.get(lr_name, values.get(lr_name)) if lr_name else None
            wd = options.get(wd_name, values.get(wd_name)) if wd_name else None
            factor = group.multipliers.get("lr_mult", 1.0) * (spec.rate ** (top + 1 - layer) if layer is not None
                                                               else 1.0)
            if factor != 1.0:
                origin = join_path(where, "lr_mult") if "lr_mult" in group.multipliers else key_path("layer_decay")
                lr = _scale(lr, factor, "lr", origin, errors)
                options[lr_name] = lr
                part_origin = {"lr": origin}
            else:
                part_origin = {}
            if nd:
                wd = 0.0
                options[wd_name] = wd
                part_origin["weight_decay"] = key_path(rule_key)
            elif "decay_mult" in group.multipliers:
                part_origin["weight_decay"] = join_path(where, "decay_mult")
                wd = _scale(wd if wd is not None else 0.0, group.multipliers["decay_mult"], "weight decay",
                            join_path(where, "decay_mult"), errors)
                options[wd_name] = wd
            part = Group([group.params[j] for j in members],
                         [group.names[j] for j in members] if group.names is not None else None, options,
                         rule=group.rule, extra=dict(group.extra), patterns=group.patterns,
                         selectors=group.selectors, multipliers=group.multipliers, origin=part_origin,
                         layer=layer, no_decay=nd,
                         lr=lr, weight_decay=wd)
            out.append(part)
    return out


def locate(error: ConfigError, groups: Sequence[Group], path: str, rules: str | None = None) -> list[ErrorItem]:
    """A dialect hook's errors about the group dicts (`param_groups[k].lr`) at what the user wrote: the rule, or
    the key that set the value (`lr_mult`, `layer_decay`, `no_weight_decay`). `rules`: where the rules are written
    (default: `path`'s param_groups; a wrapped optimizer's are its wrapper's)."""
    rules = rules or join_path(path, "param_groups")
    out = []
    for item in error.errors:
        m = re.match(r"param_groups\[(\d+)\]\.?(.*)", item.path)
        ruled = m is not None and int(m.group(1)) < len(groups) and (
            groups[int(m.group(1))].rule == "default" or groups[int(m.group(1))].rule.startswith(rules))
        if not ruled:   # torch-style group dicts: the hook's paths are the user's
            out.append(ErrorItem(join_path(path, item.path), item.message, item.location, item.suggestion))
            continue
        group, rest = groups[int(m.group(1))], m.group(2)
        key = rest.split(".")[0].split("[")[0]
        key = "lr" if key == "learning_rate" else key
        where = group.origin.get(key) or join_path(path if group.rule == "default" else group.rule, rest)
        if not any(e.path == where and e.message == item.message for e in out):   # one per key, not per split
            out.append(ErrorItem(where, item.message, item.location, item.suggestion))
    return out


def scaled_lr_keys(groups: Sequence[Group], key: str = "lr") -> list[str]:
    """The paths of the keys that gave groups values of `key` of their own: lrs (lr_mult, layer_decay, a composite's
    routing), weight decays (no_weight_decay, decay_mult, a decay rule such as hf_decay_groups; not the cerebras
    dialect's Model Zoo grouping, `modelzoo_groups`, whose groups Cerebras' weight-decay schedules drive too)."""
    keys = {g.origin[key] for g in groups if key in g.origin}
    if key == "weight_decay":
        keys = {k for k in keys if k.rpartition(".")[2] != "modelzoo_groups"}
    return sorted(keys)


#: the attribute where a built optimizer keeps the `scaled_lr_keys` of the groups it was built with, per key
SCALED_LR = "optreg_scaled_lr"
SCALED = {"lr": SCALED_LR, "weight_decay": "optreg_scaled_weight_decay"}


def remember_scaled_lr(optimizer: Any, groups: Sequence[Group]) -> Any:
    """`optimizer`, keeping the keys that gave its groups lrs (weight decays) of their own (`scaled_lr_keys`) as its
    `optreg_scaled_lr` (`optreg_scaled_weight_decay`), set only when there are some: the groups' dicts do not say
    which key set a value, and configure_lr_scheduler checks a schedule against these as build checks it against
    the plan's groups."""
    for key, attribute in SCALED.items():
        keys = scaled_lr_keys(groups, key)
        if keys:
            setattr(optimizer, attribute, tuple(keys))
    return optimizer


def scaled_lr_of(optimizer: Any, key: str = "lr") -> tuple[str, ...]:
    """The `scaled_lr_keys` of `key` an optimizer optreg built keeps (`remember_scaled_lr`); () for any other."""
    return tuple(getattr(optimizer, SCALED[key], ()))


# ---------------------------------------------------------------------------------------------------
# the table (`optreg groups`, Built.group_table)
# ---------------------------------------------------------------------------------------------------
def lrs_by_parameter(optimizer: Any) -> dict[int, float | None]:
    """The lr of each parameter's group in `optimizer` (as get_last_lr() reads it), by the parameter's id."""
    from optreg.schedules.adapter import group_lrs

    return {id(p): lr for group, lr in zip(optimizer.param_groups, group_lrs(optimizer)) for p in group["params"]}


def _replaced(first: Any, own: Any) -> bool:
    """Whether a group's lr at the first step (`first`, a schedule's that sets the lr itself) is another than the
    lr it is built with (`own`: a number or a 0-d tensor), beyond float32's rounding (lint.same_lr)."""
    from optreg.core.lint import same_lr

    if first is own or first is None or own is None or isinstance(own, (bool, list, tuple)) or callable(own):
        return False
    try:
        return not same_lr(float(first), float(own))
    except (TypeError, ValueError, RuntimeError):   # a value of no single number (a tensor of several)
        return False


def table_rows(groups: Sequence[Group], frozen: Sequence[tuple[str, Any]] = (),
               lrs: Mapping[int, float | None] | None = None) -> list[dict[str, Any]]:
    """One row per group (index, rule, selectors, multipliers, counts, lr, weight decay, names, layer), then one
    row `frozen` for the parameters left out (requires_grad=False), if any (bare tensors: no names). `lrs`: the
    optimizer's lrs at the first step (lrs_by_parameter, once the scheduler is made, where it sets the lr itself):
    a group's is that of its first parameter (the optimizer's groups may be ordered or split otherwise: MindSpore's
    order_params, its weight-decay rule), and `own_lr` is the lr the group is built with where it is another;
    without them, the lr each group is built with."""
    rows = []
    for i, group in enumerate(groups):
        lr = lrs.get(id(group.params[0]), group.lr) if lrs and group.params else group.lr
        rows.append({
            "group": i,
            "rule": group.rule,
            "patterns": list(group.patterns),
            "selectors": dict(group.selectors),
            "multipliers": dict(group.multipliers),
            "params": len(group.params),
            "numel": sum(p.numel() for p in group.params),
            "names": list(group.names or []),
            "options": {**group.options, **group.extra},   # a dialect's group keys too (grad_centralization)
            "lr": lr,
            **({"own_lr": group.lr} if _replaced(lr, group.lr) else {}),
            "weight_decay": group.weight_decay,
            "layer": group.layer,
            "no_weight_decay": group.no_decay,
            # the setting that put weight decay 0 here (no_weight_decay, or a dialect's decay rule)
            "no_decay_key": group.origin.get("weight_decay", "").rpartition(".")[2] if group.no_decay else None,
            **({"optimizer": group.optimizer} if group.optimizer else {}),
        })
    if frozen:
        rows.append({"group": None, "rule": "frozen", "patterns": [], "selectors": {}, "multipliers": {},
                     "params": len(frozen), "numel": sum(t.numel() for _, t in frozen),
                     "names": [n for n, _ in frozen if n is not None], "options": {}, "lr": None, "weight_decay": None,
                     "layer": None, "no_weight_decay": False, "no_decay_key": None})
    return rows

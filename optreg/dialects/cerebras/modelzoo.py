"""Cerebras Model Zoo configs, whole: what Model Zoo 2.10 (with cerebras.pytorch 2.10) builds from them.

Two forms are read:
- the legacy params file (Model Zoo 1.x-2.3): top-level `optimizer:` with `optimizer_type`, `learning_rate` (a
  number, a scheduler mapping or a list of them), `adjust_learning_rate`, `max_gradient_norm`, ...; converted as
  Model Zoo 2.10's `convert_legacy_params_to_trainer_params` does (a number becomes a ConstantLR, a list a
  SequentialLR, or a ChainedScheduler with `main_scheduler: chained`; `adjust_learning_rate` wraps it in
  ScalePerParamLR; the precision keys leave the optimizer);
- the trainer form (2.3 on): `trainer: {init: {optimizer: {Name: {...}}, schedulers: [...], precision: {...}}}`.

Parameter groups follow Model Zoo's `configure_param_groups` (`modelzoo_groups`, on by default):
1. tagged rules `params: [{params: <globs>, tag: <name>}]` split the parameters by their set of tags (a glob
   matches the end of a name, as Model Zoo's regex search does);
2. each of those splits in two: weight decay for the others, 0 for parameters whose name contains "bias" or
   that sit under a normalisation module (torch's LayerNorm, BatchNorm*, InstanceNorm*, GroupNorm, SyncBatchNorm
   and any class named RMSNorm; names compared by substring, as Model Zoo does); empty halves are dropped only
   when tags are used;
3. muP: the model's `lr_adjustment_groups` (name -> globs and scale): those the model carries (a Model Zoo model),
   else those Model Zoo 2.10's model of the config's `model:` section would carry, with the muP scales it computes
   from `mup_base_hidden_size`, `mup_base_filter_size`, `mup_base_d_model`, ... (optreg.dialects.cerebras.mup),
   else Model Zoo's defaults (`embedding` and `decoder_kernel`, scale 1); their scales overridden by
   `adjust_learning_rate`; every group with a scale other than 1 gets `adjust_learning_rate`, and each schedule of
   the lr is then multiplied per group by it (ScalePerParamLR).
Schedulers with `param_group_tags` drive only the groups whose tags meet them (untagged groups have the tag null).
"""

from __future__ import annotations

import fnmatch
import inspect
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from optreg.core.models import bool_message
from optreg.dialects.cerebras.mup import lr_adjustment_groups, model_key_uses, scale_message
from optreg.dialects.cerebras.schedules import Scaled, group_scale
from optreg.errors import Collector, ConfigError, closest, join_path, key_text, says_required, show


NORM_CLASSES = ("LayerNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
                "InstanceNorm3d", "GroupNorm", "SyncBatchNorm")


def modelzoo_no_decay(module: Any) -> Any:
    """Cerebras Model Zoo 2.10's rule (`configure_param_groups`): no weight decay for a parameter whose name
    contains "bias" or the name of a normalisation module (torch's norms, any class named RMSNorm), matched
    as substrings, as Model Zoo matches them. The `modelzoo_groups` setting (the cerebras dialect's default)."""
    import torch

    norms = [n for n, m in module.named_modules() if n and (type(m).__name__ == "RMSNorm" or any(
        isinstance(m, getattr(torch.nn, c)) for c in NORM_CLASSES if hasattr(torch.nn, c)))]
    return lambda name: "bias" in name or any(m in name for m in norms)

#: Keys Model Zoo's trainer applies around the optimizer, not to it (`init.precision`, `init.loop`).
CLIPPING = {"max_gradient_norm": "max_norm", "max_gradient_value": "max_value"}   # -> optreg's clip_grad
AROUND = {
    "loss_scaling_factor": "loss scaling (cstorch.amp GradScaler)",
    "initial_loss_scale": "loss scaling", "steps_per_increase": "loss scaling", "min_loss_scale": "loss scaling",
    "max_loss_scale": "loss scaling", "log_loss_scale": "a loss-scale summary", "log_summaries": "norm summaries",
    "enabled": "mixed precision", "fp16_type": "mixed precision", "precision_opt_level": "the compiler's precision",
    "grad_accum_steps": "gradient accumulation in the training loop",
    "sparsity": "weight sparsity: cstorch.sparse masks the weights and the optimizer's state, which optreg leaves "
                "dense",
}
#: Keys older releases accepted and Model Zoo 2.10 refuses: key -> (replacement, what happened, and when).
DROPPED = {
    "steps": ("total_iters", "a scheduler's length was `steps` up to Model Zoo 1.9 and is `total_iters` since 2.0; "
                             "Model Zoo 2.10 refuses `steps`"),
    "decay_steps": ("total_iters", "a scheduler's length was `decay_steps` up to Model Zoo 1.9 and is "
                                   "`total_iters` since 2.0; Model Zoo 2.10 refuses `decay_steps`"),
    "disable_lr_steps_reset": (None, "stages that see the global step were dropped with Model Zoo 2.0's schedulers; "
                                     "Model Zoo 2.10 refuses the key in a scheduler (stages run on their own step)"),
    "main_scheduler": (None, "only the legacy `learning_rate:` list reads `main_scheduler`; in a `schedulers:` "
                             "entry write SequentialLR or ChainedScheduler"),
}
#: renamed optimizer keys that Model Zoo 2.10 warns about and drops (the default applies)
RENAMED = {"weight_decay_rate": "weight_decay (renamed in Model Zoo 2.0)",
           "beta1": "betas: [beta1, beta2] (Model Zoo 2.0)", "beta2": "betas: [beta1, beta2] (Model Zoo 2.0)"}
DEFAULT_LR_GROUPS = {"embedding": (["*embedding*weight"], 1.0),
                     "decoder_kernel": (["*decoder*dense*weight", "*decoder*linear*weight"], 1.0)}
LR_PLACEHOLDER = 0.1   # Model Zoo's default for a required float `lr` (a schedule sets the real value)


def is_modelzoo(data: Any) -> bool:
    """A Model Zoo config: the signature of its trainer form or of its legacy params file."""
    from optreg.dialects.cerebras.modelzoo_format import LEGACY_FORMAT, TRAINER_FORMAT

    return hasattr(data, "keys") and (TRAINER_FORMAT.claims(data) or LEGACY_FORMAT.claims(data))


@dataclass
class Section:
    """A Model Zoo config read into optreg's terms (paths are the config's own)."""

    name: Any
    options: dict[str, Any]                   # optimizer options (Cerebras 2.10 names), before validation
    path: str                                 # the optimizer section's path
    schedulers: list[tuple[Any, str]] = field(default_factory=list)   # (current-form spec, its path)
    around: dict[str, tuple[Any, str]] = field(default_factory=dict)  # key -> (value, path)
    form: str = "trainer"
    groups: bool = True                       # modelzoo_groups
    lr_groups: Any = None                     # the muP lr-adjustment groups of the `model:` section (mup.Groups)
    model_keys: list = field(default_factory=list)   # KeyUse of each `model:` key (mup.model_key_uses)
    written: dict[str, str] = field(default_factory=dict)   # a converted scheduler's path -> the file's (legacy)


# ---------------------------------------------------------------------------------------------------
# reading the two forms
# ---------------------------------------------------------------------------------------------------
def _legacy_scheduler(spec: Any, path: str, errors: Collector, written: dict[str, str], at: str | None = None) -> Any:
    """A legacy `learning_rate` schedule (at `path`) -> the current `{Name: {...}}` form, as Model Zoo 2.10 converts
    it (names completed with `LR`; a list is a SequentialLR, or a ChainedScheduler with main_scheduler: chained);
    `written`: each path of the current form (read at `at`, by default `path`) -> the file's path."""
    from optreg.dialects.cerebras.forms import class_name

    at = path if at is None else at

    if isinstance(spec, (list, tuple)):
        mains = {str(item["main_scheduler"]).lower() for item in spec
                 if isinstance(item, Mapping) and "main_scheduler" in item}
        if len(mains) > 1:
            errors.add(path, f"conflicting main_scheduler values {sorted(mains)}; give one")
        chained = bool(mains) and next(iter(mains)) in ("chained", "chainedlr")
        combinator = "ChainedScheduler" if chained else "SequentialLR"
        single = len(spec) == 1 and not chained
        items = []
        for i, item in enumerate(spec):
            if not isinstance(item, Mapping):
                errors.add(join_path(path, i), f"expected a scheduler mapping, got {show(item)}")
                continue
            item = {k: v for k, v in item.items() if k != "main_scheduler"}
            inner = at if single else join_path(join_path(join_path(at, combinator), "schedulers"), len(items))
            items.append(_legacy_scheduler(item, join_path(path, i), errors, written, inner))
        if single:
            return items[0] if items else None
        written[join_path(at, combinator)] = path   # its stages too: the list the file writes is they
        written[join_path(join_path(at, combinator), "schedulers")] = path
        return {combinator: {"schedulers": items}}
    if not isinstance(spec, Mapping):
        errors.add(path, f"expected a scheduler mapping or a list of them, got {show(spec)}")
        return None
    spec = dict(spec)
    if "scheduler" not in spec:
        errors.add(join_path(path, "scheduler"), "required: the scheduler's name")
        return None
    try:
        name = class_name(spec.pop("scheduler"), join_path(path, "scheduler"))
    except ConfigError as exc:
        errors.extend(exc)
        return None
    written[join_path(at, name)] = path
    return {name: spec}


def _read_legacy(data: Mapping[str, Any], errors: Collector) -> Section | None:
    raw = data["optimizer"]
    options = dict(raw)
    section = Section(options.pop("optimizer_type"), {}, "optimizer", form="legacy")
    section.lr_groups = lr_adjustment_groups(data.get("model"), "model", errors)
    section.model_keys = model_key_uses(data.get("model"), "model")
    for key in list(options):
        if key in CLIPPING or key in AROUND:
            section.around[key] = (options.pop(key), join_path("optimizer", key))
    if data.get("sparsity") is not None:   # the params file's own section
        section.around["sparsity"] = (data["sparsity"], "sparsity")
    lr = options.pop("learning_rate", None) if "learning_rate" in options else None
    if lr is not None:
        where = "optimizer.learning_rate"
        if isinstance(lr, (Mapping, list, tuple)):
            spec = _legacy_scheduler(lr, where, errors, section.written)
        else:
            options["learning_rate"] = lr        # a constant: the optimizer's lr, and an explicit ConstantLR
            try:
                value = float(lr) if not isinstance(lr, bool) else None
            except (TypeError, ValueError):
                value = None
            if value is None:
                errors.add(where, f"expected a number or a schedule, got {show(lr)}")
            spec = {"ConstantLR": {"learning_rate": value}}
            section.written[join_path(where, "ConstantLR.learning_rate")] = where
        if spec is not None:   # with adjust_learning_rate, plan() scales it per group (ScalePerParamLR)
            section.schedulers.append((spec, where))
    section.options = options
    return section


def _read_trainer(data: Mapping[str, Any], errors: Collector) -> Section | None:
    trainer = data["trainer"]
    path = "trainer"
    if isinstance(trainer, (list, tuple)):
        if len(trainer) != 1 or not isinstance(trainer[0], Mapping) or "trainer" not in trainer[0]:
            errors.add(path, "a multi-phase trainer list: build each phase's `trainer:` as a config of its own")
            return None
        trainer, path = trainer[0]["trainer"], "trainer[0].trainer"
    init = trainer.get("init") if isinstance(trainer, Mapping) else None
    if not isinstance(init, Mapping):
        errors.add(join_path(path, "init"), "required: the trainer's init section (optimizer:, schedulers:)")
        return None
    path = join_path(path, "init")
    lr_groups = lr_adjustment_groups(init.get("model"), join_path(path, "model"), errors)
    optimizer = init.get("optimizer")
    if not isinstance(optimizer, Mapping) or len(optimizer) != 1:
        errors.add(join_path(path, "optimizer"), f"expected one optimizer {{Name: {{...}}}}, got {show(optimizer)}")
        return None
    (name, options), = optimizer.items()
    if options is not None and not isinstance(options, Mapping):
        errors.add(join_path(join_path(path, "optimizer"), key_text(name)), f"expected a mapping of options, got "
                                                                             f"{show(options)}")
        return None
    section = Section(name, dict(options or {}), join_path(join_path(path, "optimizer"), key_text(name)),
                      lr_groups=lr_groups, model_keys=model_key_uses(init.get("model"), join_path(path, "model")))
    schedulers = init.get("schedulers")
    if isinstance(schedulers, Mapping):
        schedulers = [schedulers]
    if schedulers is not None and not isinstance(schedulers, (list, tuple)):
        errors.add(join_path(path, "schedulers"), f"expected a list of {{Name: {{...}}}} schedulers, got "
                                                  f"{show(schedulers)}")
        schedulers = None
    for i, spec in enumerate(schedulers or []):
        where = join_path(join_path(path, "schedulers"), i)
        section.schedulers.append((spec, where))   # plan() scales the lr schedulers of scaled groups
    precision = init.get("precision") or {}
    if isinstance(precision, Mapping):
        for key, value in precision.items():
            section.around[key] = (value, join_path(join_path(path, "precision"), key_text(key)))
    loop = init.get("loop") or {}
    if isinstance(loop, Mapping) and "grad_accum_steps" in loop:
        section.around["grad_accum_steps"] = (loop["grad_accum_steps"], join_path(path, "loop.grad_accum_steps"))
    if init.get("sparsity") is not None:
        section.around["sparsity"] = (init["sparsity"], join_path(path, "sparsity"))
    return section


def read(data: Mapping[str, Any], form: str | None = None) -> Section:
    """The optimizer, schedulers and surrounding keys of a Model Zoo config (`form`: "trainer" or "legacy"; by
    default the trainer form when the config has `trainer:`)."""
    errors = Collector()
    form = form or ("trainer" if "trainer" in data else "legacy")
    if form == "trainer" and "trainer" not in data:
        raise ConfigError("required: Model Zoo's trainer section (trainer: {init: {optimizer: ..., schedulers: "
                          "...}})", "trainer")
    if form == "legacy" and not (isinstance(data.get("optimizer"), Mapping) and "optimizer_type" in data["optimizer"]):
        raise ConfigError("required: the legacy params file's optimizer section with optimizer_type",
                          "optimizer.optimizer_type")
    section = _read_trainer(data, errors) if form == "trainer" else _read_legacy(data, errors)
    errors.raise_if_any()
    assert section is not None
    flag = section.options.pop("modelzoo_groups", True)
    if (wrong := bool_message(flag)) is not None:
        raise ConfigError(wrong, join_path(section.path, "modelzoo_groups"))
    section.groups = flag
    return section


# ---------------------------------------------------------------------------------------------------
# parameter groups (Model Zoo's configure_param_groups)
# ---------------------------------------------------------------------------------------------------
def _adjustments(adjust: Any, path: str, errors: Collector) -> Mapping[str, Any]:
    """The optimizer section's `adjust_learning_rate` (at `path`), a mapping of lr adjustment group names to scales,
    checked as far as it can be without the model (whose groups the names are): a scale is mup.scale_message's."""
    where = join_path(path, "adjust_learning_rate")
    if not isinstance(adjust or {}, Mapping):
        errors.add(where, f"expected a mapping of lr adjustment group names to scales, got {show(adjust)}")
        return {}
    for key, value in (adjust or {}).items():
        wrong = scale_message(value)
        if wrong is not None:
            errors.add(join_path(where, key_text(key)), wrong)
    return adjust or {}


def _unknown_groups(adjust: Mapping[str, Any], groups: Mapping[str, Any], path: str, errors: Collector) -> None:
    """An error at each name of `adjust` (at `path`, adjust_learning_rate's) that is not one of the model's lr
    adjustment groups `groups`, with the closest name."""
    for key in adjust:
        if key not in groups:
            errors.add(join_path(path, key_text(key)), f"the model has no lr adjustment group {key!r} (its groups: "
                                                       f"{', '.join(sorted(groups))})", closest(str(key), list(groups)))


def _group_names(section: Section, adjust: Mapping[str, Any], errors: Collector) -> list[str]:
    """adjust_learning_rate's group names, checked without the model: against the groups of the config's `model:`
    section (`Section.lr_groups`), which the model built from it carries: an error, as plan() says it against the
    model. A config without them leaves the names to the model (its own lr_adjustment_groups, else Model Zoo's
    defaults): a note for each name that is not a default group, which only a model carrying it can build."""
    path = join_path(section.path, "adjust_learning_rate")
    if section.lr_groups is not None:
        _unknown_groups(adjust, section.lr_groups, path, errors)
        return []
    notes = []
    for key in (k for k in adjust if k not in DEFAULT_LR_GROUPS):
        near = closest(str(key), list(DEFAULT_LR_GROUPS))
        notes.append(f"{join_path(path, key_text(key))}: not one of Model Zoo's default lr adjustment groups "
                     f"({', '.join(DEFAULT_LR_GROUPS)}){f' (did you mean {near!r}?)' if near else ''}; the model "
                     f"decides the names (its lr_adjustment_groups), and one that carries no group {key!r} fails "
                     f"to build: give the model (validate --model) to check it")
    return notes


def _lr_groups(model: Any, adjust: Mapping[str, Any], path: str, errors: Collector,
               configured: Mapping[str, Any] | None = None) -> list[tuple[float, list[str]]]:
    """[(scale, glob patterns)] of the model's lr-adjustment groups whose scale is not 1, equal scales merged, as
    Model Zoo 2.10's `process_lr_adjustment_params` makes them: the groups the model carries, else `configured`
    (those of the config's `model:` section), else Model Zoo's defaults."""
    raw = getattr(model, "lr_adjustment_groups", None)
    if raw is None:
        raw = DEFAULT_LR_GROUPS if configured is None else configured
    groups: dict[str, tuple[list[str], float]] = {}
    for name, group in raw.items():
        if isinstance(group, (tuple, list)) and len(group) == 2:
            patterns, scale = group
        else:
            patterns, scale = getattr(group, "param_filter_patterns", None), getattr(group, "scale", 1.0)
        groups[name] = ([patterns] if isinstance(patterns, str) else list(patterns or []), float(scale or 1.0))
    out: list[tuple[float, list[str]]] = []
    _unknown_groups(adjust, groups, path, errors)
    for name, (patterns, scale) in groups.items():
        if name in adjust:
            value = adjust[name]
            if scale_message(value) is not None:
                continue   # _adjustments says so
            scale = float(value)
        if scale != 1.0:
            for i, (s, _) in enumerate(out):
                if s == scale:
                    out[i][1].extend(patterns)
                    break
            else:
                out.append((scale, list(patterns)))
    return out


def param_groups(model: Any, weight_decay: float, tag_rules: Any, adjust: Mapping[str, Any], path: str,
                 errors: Collector, lr_groups: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Model Zoo 2.10's parameter groups of `model` (see the module docstring): dicts with `params` as
    (name, tensor) pairs, `weight_decay`, and `tags` / `adjust_learning_rate` where Model Zoo sets them;
    `lr_groups`: the lr-adjustment groups of the config's model section, for a model that carries none."""
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    names = [n for n, _ in named]
    if tag_rules is not None and not isinstance(tag_rules, (Mapping, list, tuple)):
        errors.add(join_path(path, "params"), f"expected a list of {{params: <glob or globs>, tag: <name>}}, got "
                                              f"{show(tag_rules)}")
        tag_rules = None
    rules = [tag_rules] if isinstance(tag_rules, Mapping) else list(tag_rules or [])
    tags: dict[str, list[str]] = {n: [] for n in names}
    for i, rule in enumerate(rules):
        here = join_path(join_path(path, "params"), i)
        if not isinstance(rule, Mapping) or "params" not in rule or "tag" not in rule:
            errors.add(here, f"expected {{params: <glob or globs>, tag: <name>}}, got {show(rule)}")
            continue
        globs = rule["params"] if isinstance(rule["params"], (list, tuple)) else [rule["params"]]
        if not globs or not all(isinstance(g, str) for g in globs):
            errors.add(join_path(here, "params"), f"expected glob patterns, got {show(rule['params'])}")
            continue
        regexes = [re.compile(fnmatch.translate(g)) for g in globs]
        hits = [n for n in names if any(r.search(n) for r in regexes)]
        if not hits:
            errors.add(join_path(here, "params"), f"tag {rule['tag']!r}: no parameter matches {show(globs)}",
                       closest(str(globs[0]), names))
        for n in hits:
            tags[n].append(rule["tag"])
    if errors:
        return []
    split: dict[frozenset, list] = {}
    for n, p in named:
        split.setdefault(frozenset(tags[n]), []).append((n, p))
    tagged = [{"params": ps, **({"tags": set(t)} if t else {})} for t, ps in split.items()]
    no_decay = modelzoo_no_decay(model)
    halves: list[dict[str, Any]] = []
    for group in tagged:
        keep = [(n, p) for n, p in group["params"] if not no_decay(n)]
        drop = [(n, p) for n, p in group["params"] if (n, p) not in keep]
        extra = {"tags": group["tags"]} if "tags" in group else {}
        halves += [{"params": keep, "weight_decay": weight_decay, **extra},
                   {"params": drop, "weight_decay": 0.0, **extra}]
    if any("tags" in g for g in halves):
        halves = [g for g in halves if g["params"]]
    scales = _lr_groups(model, adjust, join_path(path, "adjust_learning_rate"), errors, lr_groups)
    if not scales or errors:
        return halves
    every = [n for n, _ in model.named_parameters()]
    matched = [[n for n in every if any(fnmatch.fnmatchcase(n, g) for g in patterns)] for _, patterns in scales]
    out: list[dict[str, Any]] = []
    for group in halves:
        parts = [{"params": [], "weight_decay": group["weight_decay"], "adjust_learning_rate": s,
                  **({"tags": group["tags"]} if "tags" in group else {})} for s in [*(s for s, _ in scales), 1.0]]
        for n, p in group["params"]:
            hit = False
            for i, names_i in enumerate(matched):
                if any(m in n for m in names_i):
                    parts[i]["params"].append((n, p))
                    hit = True
            if not hit:
                parts[-1]["params"].append((n, p))
        parts = [g for g in parts if g["params"]]
        if "tags" in group:
            out += parts
            continue
        for scale in dict.fromkeys(g["adjust_learning_rate"] for g in parts):
            out.append({"params": [pair for g in parts if g["adjust_learning_rate"] == scale for pair in g["params"]],
                        "weight_decay": group["weight_decay"], "adjust_learning_rate": scale})
    return out


# ---------------------------------------------------------------------------------------------------
# schedulers
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Keep:
    """A group a scheduler does not drive (its tags do not meet the scheduler's): the value stays (`keeps`: the
    adapter, optreg.schedules.adapter.ScheduleLR, neither computes nor writes it)."""

    values = "factor"
    keeps = True

    def bind(self, bases, default):
        return self

    def apply(self, step: int, base: float) -> float:
        return base

    def __call__(self, step: int) -> float:
        return 1.0

    length = None


class Schedulers:
    """Several schedulers stepped together (Model Zoo's `schedulers:` list: e.g. one for the lr, one for the
    weight decay). step(), get_last_lr() (of the lr scheduler), state_dict() / load_state_dict() as a list."""

    def __init__(self, schedulers: Sequence[Any]):
        self.schedulers = list(schedulers)

    def step(self, *args: Any) -> None:
        for s in self.schedulers:
            s.step(*args)

    def get_last_lr(self) -> list[float]:
        lr = [s for s in self.schedulers if getattr(s, "key", "lr") == "lr"]
        return (lr or self.schedulers)[0].get_last_lr()

    @property
    def last_epoch(self) -> int:
        return self.schedulers[0].last_epoch

    def state_dict(self) -> dict[str, Any]:
        return {"schedulers": [s.state_dict() for s in self.schedulers]}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        for s, d in zip(self.schedulers, state["schedulers"]):
            s.load_state_dict(d)

    def __iter__(self):
        return iter(self.schedulers)

    def __len__(self) -> int:
        return len(self.schedulers)

    def __getitem__(self, i: int) -> Any:
        return self.schedulers[i]


@dataclass
class SchedulerSpec:
    spec: dict[str, Any]          # optreg's canonical spec (forms.to_spec: a ReadSpec)
    path: str
    tags: set | None = None
    scaled: bool = False


def _unwrap(raw: Any, path: str, errors: Collector) -> SchedulerSpec | None:
    """ScalePerParamLR and param_group_tags taken off a current-form scheduler, which forms.to_spec reads;
    Model Zoo 2.10's refusals with what replaced the key (into `errors`, where another scheduler's may be already:
    this one is planned unless it has its own)."""
    from optreg.dialects.cerebras.forms import to_spec

    found = len(errors.items)

    if not isinstance(raw, Mapping) or len(raw) != 1:
        errors.add(path, f"expected a single-key mapping {{SchedulerName: {{...}}}}, got {show(raw)}")
        return None
    (name, params), = raw.items()
    where = join_path(path, key_text(name))
    params = dict(params or {}) if isinstance(params, Mapping) or params is None else params
    if not isinstance(params, dict):
        errors.add(where, f"expected a mapping of options, got {show(params)}")
        return None
    tags = params.pop("param_group_tags", None)
    if "scaleperparam" in str(name).lower().replace("_", ""):
        inner = params.pop("scheduler", None)
        for key in params:
            errors.add(join_path(where, key), "unknown option of ScalePerParamLR (it takes scheduler, "
                                              "param_group_tags)", closest(key, ["scheduler", "param_group_tags"]))
        if inner is None:
            errors.add(join_path(where, "scheduler"), "required: the scheduler whose lr ScalePerParamLR scales")
            return None
        spec = _unwrap(inner, join_path(where, "scheduler"), errors)
        if spec is not None:
            spec.scaled = True
            if tags is not None:
                spec.tags = _tags(tags, join_path(where, "param_group_tags"), errors)
        return spec
    _refused(params, where, errors)
    if str(name).lower().replace("_", "") in ("sequentiallr", "chainedscheduler", "chainedlr", "sequentialwd",
                                              "chainedwd"):
        children = params.get("schedulers")
        for i, child in enumerate(children if isinstance(children, (list, tuple)) else []):
            if isinstance(child, Mapping) and len(child) == 1:
                (cname, cparams), = child.items()
                here = join_path(join_path(join_path(where, "schedulers"), i), key_text(cname))
                if isinstance(cparams, Mapping):
                    if "param_group_tags" in cparams:
                        errors.add(join_path(here, "param_group_tags"), "a nested scheduler takes no "
                                   "param_group_tags; give them to the outer scheduler (Model Zoo 2.10 refuses it)")
                    _refused(cparams, here, errors)
                    if "sequential" in str(name).lower() and i < len(params["schedulers"]) - 1 and \
                            "total_iters" not in cparams:
                        from optreg.config.formats import misspelt

                        near = misspelt(cparams, ["total_iters"])   # `total_iter: 5`: at the key, did you mean
                        errors.add(join_path(here, near[0]) if near else here, "every stage of a SequentialLR but "
                                   "the last needs total_iters (Model Zoo 2.10 derives the milestones from them)",
                                   near[1] if near else None)
        if "milestones" in params and "sequential" in str(name).lower() and len(errors.items) == found:
            lengths = [next(iter(c.values())).get("total_iters") for c in params.get("schedulers", [])[:-1]
                       if isinstance(c, Mapping) and len(c) == 1 and isinstance(next(iter(c.values())), Mapping)]
            expected = [sum(lengths[:k + 1]) for k in range(len(lengths))]
            if params["milestones"] != expected:
                errors.add(join_path(where, "milestones"), f"must be the running sums of the stages' total_iters "
                                                           f"{expected} (Model Zoo 2.10 refuses others), got "
                                                           f"{show(params['milestones'])}")
    if len(errors.items) > found:
        return None
    try:
        spec = to_spec({name: params}, path=path)
    except ConfigError as exc:
        errors.extend(exc)
        return None
    return SchedulerSpec(spec, path, _tags(tags, join_path(where, "param_group_tags"), errors) if tags is not None
                         else None)


def _refused(params: Mapping[str, Any], where: str, errors: Collector) -> None:
    for key in params:
        if key in DROPPED:
            replacement, why = DROPPED[key]
            errors.add(join_path(where, key), why + (f"; use {replacement!r}" if replacement else ""), replacement)


def _tags(value: Any, path: str, errors: Collector) -> set | None:
    values = list(value) if isinstance(value, (list, tuple, set)) else [value]
    if not all(v is None or isinstance(v, str) for v in values):
        errors.add(path, f"expected a tag or a list of tags, got {show(value)}")
        return None
    if len(set(values)) != len(values):
        errors.add(path, f"duplicate tags in {show(value)}")
    return set(values)


def _applies(tags: set | None, group: Mapping[str, Any]) -> bool:
    return tags is None or bool(tags & (set(group.get("tags") or ()) or {None}))


# ---------------------------------------------------------------------------------------------------
# building
# ---------------------------------------------------------------------------------------------------
@dataclass
class Plan:
    """A validated Model Zoo config against a model: the optimizer plan, the group extras Model Zoo puts into the
    groups, the scheduler plans, and what the trainer applies around the optimizer."""

    optimizer: Any                                  # OptimizerPlan
    extras: list[dict[str, Any]]                    # per group: tags, adjust_learning_rate
    schedulers: list[tuple[SchedulerSpec, Any]]     # (spec, SchedulerPlan)
    clip: Any                                       # optreg.config.run.ClipGrad or None
    notes: list[str]

    def build(self) -> tuple[Any, Any]:
        """(optimizer, scheduler), as an experiment plan builds them (optreg.config.experiment.Plan)."""
        optimizer = with_extras(self, self.optimizer.build())
        return optimizer, build_schedulers(self, optimizer)

    def stand_in(self) -> Any:
        """The optimizer's stand-in (OptimizerPlan.stand_in) with Model Zoo's group extras."""
        optimizer = self.optimizer.stand_in()
        return with_extras(self, optimizer) if optimizer is not None else None

    def build_scheduler(self, optimizer: Any) -> Any:
        """The schedulers over `optimizer` (the built one, or its stand-in), or None."""
        return build_schedulers(self, optimizer)

    @property
    def absolute_lr(self) -> bool:
        """Whether a scheduler sets the lr itself (Model Zoo's lr schedules, ScalePerParamLR's scaled ones too: each
        group's lr is then the schedule's value times its adjust_learning_rate)."""
        from optreg.core.build import absolute_key

        return any(absolute_key(sp) == "lr" for _, sp in self.schedulers)


def _defaults(entry: Any) -> dict[str, Any]:
    target = entry.resolve()
    out = {}
    for name, p in inspect.signature(target).parameters.items():
        out[name] = p.default
    return out


def plan(section: Section, model: Any) -> Plan:
    """Validate a Model Zoo config against the model; ConfigError lists every problem; nothing is built."""
    import torch

    from optreg.core.build import Context, check_schedule, plan_optimizer, plan_scheduler
    from optreg.core.entry import OPTIMIZER
    from optreg.core.registry import REGISTRY

    errors = Collector()
    entry = REGISTRY.lookup(OPTIMIZER, section.name, path=section.path, default="cerebras")
    options = dict(section.options)
    tag_rules = options.pop("params", None)
    adjust = _adjustments(options.pop("adjust_learning_rate", None), section.path, errors)
    defaults = _defaults(entry)
    notes = _dropped(section, options)
    from optreg.core.names import synonyms

    lr_keys = [k for k in options if k in synonyms("lr") or k == "lr"]
    if not lr_keys and "lr" in defaults and defaults["lr"] is inspect.Parameter.empty:
        options["lr"] = LR_PLACEHOLDER
    if not isinstance(model, torch.nn.Module):
        errors.add("model", f"{_plan_experiment.needs_module}, got {type(model).__name__} {show(model)}")
        errors.raise_if_any()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from optreg.core.validate import validate_options

        try:
            values = validate_options(entry, options, path=section.path, unknown_keys="warn")
        except ConfigError as exc:
            errors.extend(exc)
            values = {}
    notes += [str(w.message) for w in caught]
    errors.raise_if_any()
    wd = values.get("weight_decay", defaults.get("weight_decay", 0.0))
    wd = 0.0 if wd is inspect.Parameter.empty or wd is None else wd
    if section.groups:
        groups = param_groups(model, wd, tag_rules, adjust, section.path, errors, section.lr_groups)
    else:
        if tag_rules or adjust:
            errors.add(join_path(section.path, "modelzoo_groups"), "params tags and adjust_learning_rate need "
                                                                    "Model Zoo's grouping; remove modelzoo_groups: "
                                                                    "false")
        groups = [{"params": [(n, p) for n, p in model.named_parameters() if p.requires_grad]}]
    errors.raise_if_any()
    has_wd = "weight_decay" in values
    dicts, extras = [], []
    for g in groups:
        extras.append({k: g[k] for k in ("tags", "adjust_learning_rate") if k in g})
        d = {"params": g["params"]}
        if "weight_decay" in g and has_wd:
            d["weight_decay"] = g["weight_decay"]
        elif "weight_decay" in g:
            extras[-1]["weight_decay"] = g["weight_decay"]
        dicts.append(d)
    given = {k: v for k, v in options.items() if k in values or any(s in values for s in synonyms(k))}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt_plan = plan_optimizer(entry.qualname, [d for d in dicts if d["params"]] or dicts, dialect="cerebras",
                                      options=given, path=section.path, unknown_keys="warn")
    except ConfigError as exc:
        raise ConfigError(exc.errors) from None
    extras = [e for e, d in zip(extras, dicts) if d["params"]] or extras
    specs = [_unwrap(raw, where, errors) for raw, where in section.schedulers]
    errors.raise_if_any()
    scaled_groups = any("adjust_learning_rate" in e for e in extras)
    context = Context(len(opt_plan.groups), opt_plan.group_keys(), "cerebras")
    keys: dict[str, list] = {}
    planned = []
    for spec in specs:
        assert spec is not None
        if scaled_groups and spec.spec.get("key", "lr") == "lr":
            spec.scaled = True      # Model Zoo wraps every lr scheduler in ScalePerParamLR when groups carry scales
        try:
            sp = plan_scheduler(spec.spec, context, spec.path)
        except ConfigError as exc:
            errors.extend(exc)
            continue
        if sp.schedule is None:
            errors.add(spec.path, f"{sp.name} has no closed form")
            continue
        if not any(_applies(spec.tags, e) for e in extras):
            errors.add(spec.path, f"param_group_tags {sorted(map(str, spec.tags or ()))} meet no parameter group "
                                  f"(tags: {sorted({str(t) for e in extras for t in e.get('tags', {None})})})")
        for other in keys.get(sp.key, []):
            if spec.tags is None or other.tags is None or spec.tags & other.tags:
                errors.add(spec.path, f"two schedulers drive {sp.key!r} of the same parameter groups (also "
                                      f"{other.path}); Model Zoo refuses it")
        keys.setdefault(sp.key, []).append(spec)
        errors.extend(check_schedule(sp, opt_plan.base_values(sp.key)[0], None, spec.path))
        planned.append((spec, sp))
    clip = _clip(section, errors)
    notes += _around(section, clip)
    errors.raise_if_any()
    return Plan(opt_plan, extras, planned, clip, notes)


def _dropped(section: Section, options: dict[str, Any]) -> list[str]:
    """The notes of the optimizer's keys that Model Zoo 2.10 ignores there (a key of the trainer's precision, a
    renamed option), taken out of `options`."""
    notes = []
    for key in list(options):
        if key in CLIPPING or key in AROUND:   # in the optimizer of a trainer config: Model Zoo warns and drops
            notes.append(f"{join_path(section.path, key)}: not an optimizer option; Model Zoo 2.10 ignores it "
                         f"there (give it under trainer.init.precision)")
            options.pop(key)
        elif key in RENAMED:
            notes.append(f"{join_path(section.path, key)}: Model Zoo 2.10 ignores it (use {RENAMED[key]}); "
                         f"the default applies")
            options.pop(key)
    return notes


def _around(section: Section, clip: Any) -> list[str]:
    """The note of the config's keys that Cerebras' trainer applies around the optimizer (none without them);
    `clip`: the config's gradient clipping (`_clip`)."""
    around = [(k, v) for k, v in section.around.items() if k not in CLIPPING]
    if not around:
        return []
    listed = ", ".join(f"{where}={show(value)}" for value, where in (v for _, v in around))
    what = sorted({AROUND.get(k, "the trainer") for k, _ in around})
    return [f"not the optimizer's: {listed}. Cerebras' trainer applies them around the optimizer "
            f"({'; '.join(what)}); optreg builds the optimizer and its schedules only"
            + ("; gradient clipping is Built.clip_gradients(model), called between backward() and step()"
               if clip else "")]


def _clip(section: Section, errors: Collector) -> Any:
    """The clip_grad (optreg.config.run.ClipGrad) of the config's max_gradient_norm / max_gradient_value, or None;
    a value Cerebras' trainer cannot clip by, or both given, goes to `errors`."""
    from optreg.config.run import ClipGrad, clip_message

    clip = None
    for key, mode in CLIPPING.items():
        if key in section.around and section.around[key][0] is not None:
            value, where = section.around[key]
            if (wrong := clip_message(value, mode)) is not None:
                errors.add(where, wrong)
            elif clip is not None:
                errors.add(where, "both max_gradient_norm and max_gradient_value are given; Cerebras clips by one")
            else:
                clip = ClipGrad(**{mode: float(value)})
    return clip


def with_extras(p: Plan, optimizer: Any) -> Any:
    """`optimizer` with the group extras Model Zoo puts into its groups (tags, adjust_learning_rate)."""
    for group, extra in zip(optimizer.param_groups, p.extras):
        group.update(extra)
    return optimizer


def build_schedulers(p: Plan, optimizer: Any) -> Any:
    from optreg.schedules.adapter import ScheduleLR

    built = []
    for spec, sp in p.schedulers:
        schedules = []
        for group in optimizer.param_groups:
            if not _applies(spec.tags, group):
                schedules.append(Keep())
            elif spec.scaled:
                schedules.append(Scaled(sp.schedule, group_scale(group)))
            else:
                schedules.append(sp.schedule)
        built.append(ScheduleLR(optimizer, schedules, key=sp.key, last_epoch=sp.last_epoch))
    if not built:
        return None
    return built[0] if len(built) == 1 else Schedulers(built)


def _plan_experiment(experiment: Any, model: Any) -> Plan:
    """The Model Zoo plan, with the schedule linter's warnings for the run (optreg.core.lint)."""
    from optreg.core.lint import lint_schedule

    p = plan(experiment.modelzoo, model)
    for spec, sp in p.schedulers:
        bases, _ = p.optimizer.base_values(sp.key)
        p.notes += lint_schedule(sp, experiment.run, bases, None, spec.path)
    return p


def _nominal_notes(experiment: Any) -> list[str]:
    """The schedule linter's warnings of `_plan_experiment` without the model (`optreg validate`): each scheduler over
    the experiment's run, the groups' lrs unknown."""
    from optreg.core.build import Context, plan_scheduler
    from optreg.core.lint import lint_schedule

    notes: list[str] = []
    context = Context(1, frozenset(), "cerebras", known_groups=False, known_options=False,
                      run_steps=experiment.run.steps)
    for raw, where in experiment.modelzoo.schedulers:
        spec = _unwrap(raw, where, Collector())
        try:
            planned = plan_scheduler(spec.spec, context, spec.path) if spec is not None else None
        except ConfigError:   # said by check() when the file was read
            planned = None
        notes += lint_schedule(planned, experiment.run, None, None, spec.path) if planned is not None else []
    return notes


#: why the planner takes only a Module (Experiment.plan checks the model argument against it)
_plan_experiment.needs_module = "expected a torch.nn.Module: a Model Zoo config groups the parameters of its modules"
#: what it warns of without the model (Experiment.check_final)
_plan_experiment.nominal_notes = _nominal_notes


__all__ = ["is_modelzoo", "read", "plan", "param_groups", "Schedulers", "Section", "Plan"]


def check(section: Section) -> list[str]:
    """What can be checked without the model: the optimizer's name and options, the clipping and the schedulers;
    returns the notes that plan() gives too (a key Model Zoo ignores in the optimizer, an unknown option, the keys
    the trainer applies around the optimizer)."""
    from optreg.core.build import Context, check_schedule, plan_scheduler
    from optreg.core.entry import OPTIMIZER
    from optreg.core.registry import REGISTRY
    from optreg.core.validate import validate_options

    errors = Collector()
    try:
        entry = REGISTRY.lookup(OPTIMIZER, section.name, path=section.path, default="cerebras")
    except ConfigError as exc:
        errors.extend(exc)
        entry = None
    caught: list[Any] = []
    options = {k: v for k, v in section.options.items() if k not in ("params", "adjust_learning_rate")}
    notes = _dropped(section, options)
    if entry is not None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                validate_options(entry, options, path=section.path, unknown_keys="warn")
            except ConfigError as exc:
                errors.extend([e for e in exc.errors if not (e.path.endswith(".lr") and says_required(e.message))])
    clip = _clip(section, errors)
    notes += _group_names(section, _adjustments(section.options.get("adjust_learning_rate"), section.path, errors),
                          errors)
    context = Context(1, frozenset(), "cerebras", known_groups=False, known_options=False)
    for raw, where in section.schedulers:
        spec = _unwrap(raw, where, errors)
        if spec is not None:
            try:   # and the values it gives, as plan() checks them over the model's groups
                errors.extend(check_schedule(plan_scheduler(spec.spec, context, spec.path), None, None, spec.path))
            except ConfigError as exc:
                errors.extend(exc)
    errors.raise_if_any()
    return notes + [str(w.message) for w in caught] + _around(section, clip)


# ---------------------------------------------------------------------------------------------------
# Model Zoo 2.0-2.3's calls: cstorch.optim.configure_optimizer / configure_lr_scheduler
# ---------------------------------------------------------------------------------------------------
def optimizer_call(entry: Any, params: Any, kwargs: dict[str, Any], unknown_keys: str) -> tuple[Any, dict, list]:
    """(params, options, group extras) of `configure_optimizer` in the cerebras dialect, as Model Zoo 2.0-2.3 called
    cerebras.pytorch: a schedule given as `learning_rate` belongs to configure_lr_scheduler (a required lr is then a
    placeholder until it runs; with no lr at all it stays required), and a Module is grouped as Model Zoo groups it
    (`modelzoo_groups: false` keeps one group)."""
    import torch

    from optreg.core.names import synonyms

    kwargs = dict(kwargs)
    scheduled = False
    for key in [k for k in kwargs if k == "lr" or k in synonyms("lr")]:
        if isinstance(kwargs[key], (Mapping, list, tuple)):
            kwargs.pop(key)
            scheduled = True
    defaults = _defaults(entry)
    if scheduled and not any(k == "lr" or k in synonyms("lr") for k in kwargs) and \
            defaults.get("lr", None) is inspect.Parameter.empty:
        kwargs["lr"] = LR_PLACEHOLDER   # a required lr that the schedule owns
    grouped = kwargs.pop("modelzoo_groups", True)
    if (wrong := bool_message(grouped)) is not None:
        raise ConfigError(wrong, "modelzoo_groups")
    if not grouped:
        kwargs["modelzoo_groups"] = False   # and not the dialect's default grouping either
    tag_rules = kwargs.pop("params", None)
    adjust = kwargs.pop("adjust_learning_rate", None) or {}
    notes = [k for k in kwargs if k in CLIPPING or k in AROUND]
    if notes:
        warnings.warn(f"not the optimizer's: {', '.join(notes)}; Cerebras' trainer applies them around the optimizer "
                      f"(gradient clipping, loss scaling, summaries); they are ignored here", UserWarning, stacklevel=4)
        for k in notes:
            kwargs.pop(k)
    # as the dialect's default setting groups a Module in build(): a split by weight decay needs one to split (or
    # tags and lr scales to apply)
    splits = "weight_decay" in defaults or bool(tag_rules or adjust)
    if not (grouped and splits and isinstance(params, torch.nn.Module) and "param_groups" not in kwargs):
        if tag_rules or adjust:
            raise ConfigError("params tags and adjust_learning_rate group the parameters of a Module as Model Zoo "
                              "does: pass the Module (and leave modelzoo_groups on)",
                              "adjust_learning_rate" if adjust else "params")
        return params, kwargs, []
    from optreg.core.validate import validate_options

    errors = Collector()
    adjust = _adjustments(adjust, "", errors)
    errors.raise_if_any()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            values = validate_options(entry, kwargs, unknown_keys=unknown_keys)
        except ConfigError:
            values = {}    # reported with the paths of the real validation, by the caller's plan
    wd = values.get("weight_decay", defaults.get("weight_decay", 0.0))
    wd = 0.0 if wd is inspect.Parameter.empty or wd is None else wd
    groups = param_groups(params, wd, tag_rules, adjust, "", errors)
    errors.raise_if_any()
    dicts, extras = [], []
    for g in groups:
        if not g["params"]:
            continue
        extra = {k: g[k] for k in ("tags", "adjust_learning_rate") if k in g}
        d = {"params": g["params"]}
        if "weight_decay" in defaults or "weight_decay" in values:
            d["weight_decay"] = g["weight_decay"]
        dicts.append(d)
        extras.append(extra)
    return dicts, kwargs, extras


def scale_per_param(plan: Any, optimizer: Any) -> Any:
    """ScalePerParamLR: the plan's absolute schedule times each group's `adjust_learning_rate`."""
    from optreg.schedules.adapter import ScheduleLR

    if plan.schedule is None:
        raise ConfigError(f"adjust_learning_rate scales a Cerebras schedule; {plan.name} has none to scale",
                          "adjust_learning_rate")
    schedules = [Scaled(plan.schedule, group_scale(g)) for g in optimizer.param_groups]
    return ScheduleLR(optimizer, schedules, key=plan.key, last_epoch=plan.last_epoch)


def wants_trainer_scheduler(spec: Any, optimizer: Any) -> bool:
    """A `{Name: {...}}` scheduler of the trainer form that needs Model Zoo's handling: ScalePerParamLR,
    param_group_tags, or groups that carry adjust_learning_rate (Model Zoo wraps their lr schedulers)."""
    if not (isinstance(spec, Mapping) and len(spec) == 1 and isinstance(next(iter(spec.values())), Mapping)):
        return False
    name, params = next(iter(spec.items()))
    return "scaleperparam" in str(name).lower() or "param_group_tags" in params or \
        any("adjust_learning_rate" in g for g in optimizer.param_groups)


def scheduler_call(optimizer: Any, spec: Any) -> Any:
    """`configure_lr_scheduler(optimizer, spec)` of a trainer-form scheduler that needs Model Zoo's handling
    (see wants_trainer_scheduler), as Model Zoo 2.10 creates it; None for any other spec."""
    return trainer_scheduler(optimizer, spec) if wants_trainer_scheduler(spec, optimizer) else None


def trainer_scheduler(optimizer: Any, spec: Mapping[str, Any]) -> Any:
    """One scheduler of the trainer's `schedulers:` list on a built optimizer, as Model Zoo 2.10 creates it."""
    from optreg.core.build import context_of, plan_scheduler

    errors = Collector()
    unwrapped = _unwrap(spec, "", errors)
    errors.raise_if_any()
    assert unwrapped is not None
    sp = plan_scheduler(unwrapped.spec, context_of(optimizer, "cerebras"), "")
    if unwrapped.tags is not None and not any(_applies(unwrapped.tags, g) for g in optimizer.param_groups):
        raise ConfigError(f"param_group_tags {sorted(map(str, unwrapped.tags))} meet no parameter group",
                          "param_group_tags")
    scaled = unwrapped.scaled or (sp.key == "lr" and any("adjust_learning_rate" in g for g in optimizer.param_groups))
    unwrapped.scaled = scaled
    return build_schedulers(Plan(None, [], [(unwrapped, sp)], None, []), optimizer)

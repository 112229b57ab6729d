"""MindFormers' parameter groups (mindformers.trainer.optimizer_grouped_parameters, 1.5-dev): which parameters it
exempts from weight decay, made against the model and given to optreg's planner as a `param_groups` rule.

get_optimizer_grouped_parameters(model, weight_decay):
- with the model's `no_weight_decay()` names or `no_weight_decay_keywords()` (substrings), exactly those are exempt;
- otherwise every 1-D parameter and every name ending in `.bias`;
- groups `decay` and `no_decay` in the order their first parameter comes; a quirk kept: once a no-decay parameter
  has been seen the function's `weight_decay` is 0, so when one comes before the first decayed parameter the
  `decay` group gets weight decay 0 too.
"""

from __future__ import annotations

import dataclasses
from typing import Any


def _names(model: Any, method: str) -> set[str]:
    fn = getattr(model, method, None)
    return set(fn()) if callable(fn) else set()


def exempt(model: Any, named: list[tuple[str, Any]]) -> tuple[list[str], bool]:
    """(the names MindFormers exempts from weight decay, whether the decay group keeps its weight decay)."""
    skip, keywords = _names(model, "no_weight_decay"), _names(model, "no_weight_decay_keywords")
    out, keeps, seen_exempt = [], True, False
    decay_seen = False
    for name, tensor in named:
        if skip or keywords:
            free = name in skip or any(k in name for k in keywords)
        else:
            free = tensor.dim() == 1 or name.endswith(".bias")
        if free:
            out.append(name)
            seen_exempt = True
        elif not decay_seen:
            decay_seen = True
            keeps = not seen_exempt
    return out, keeps


def named_source(model: Any) -> Any:
    """The model, or its (name, tensor) pairs as a list (read twice: by `for_model` and by the planner), as
    `optreg.core.groups.collect` reads them; anything else is a ConfigError at `params`: MindFormers groups
    parameters by their names and dimensions."""
    from optreg.core.groups import collect
    from optreg.errors import ConfigError

    if hasattr(model, "named_parameters"):
        return model
    source = collect(model)
    if source.named is None or any(name is None for name, _ in source.named):
        raise ConfigError("MindFormers groups parameters by their names (1-D tensors and biases without weight "
                          "decay): pass the model or its named_parameters()", "params")
    return source.named + source.frozen


def for_model(experiment: Any, model: Any) -> Any:
    """The MindFormers experiment in optreg's own form for this model: its optimizer section with MindFormers'
    weight-decay groups as a `param_groups` rule of the exempt parameters' names (`optreg convert --model`)."""
    from optreg.config.formats import exact_pattern

    model = named_source(model)
    module = model if hasattr(model, "named_parameters") else None
    named = list(model.named_parameters() if module is not None else model)
    trainable = [(n, p) for n, p in named if getattr(p, "requires_grad", True)]
    names, keeps = exempt(module, trainable)
    section = dict(experiment.optimizer)
    if names and len(names) < len(trainable):
        section["param_groups"] = [{"params": [exact_pattern(n) for n in names], "weight_decay": 0.0}]
        if not keeps:
            section["weight_decay"] = 0.0
    elif names:   # every parameter exempt: one group without weight decay
        section["weight_decay"] = 0.0
    return dataclasses.replace(experiment, optimizer=section, planner=None)


def plan_mindformers(experiment: Any, model: Any) -> Any:
    """optreg's plan of a MindFormers experiment: its optimizer with MindFormers' weight-decay groups."""
    from optreg.config.experiment import plan_own

    model = named_source(model)
    return plan_own(for_model(experiment, model), model)


#: what the planner decides against the model, which optreg's own form cannot say without it (`optreg convert`
#: refuses, or writes it for the model `--model` gives)
plan_mindformers.keeps = ("optimizer.weight_decay (MindFormers' parameter groups)",)
plan_mindformers.for_model = for_model   # what it decides, in optreg's own form for one model

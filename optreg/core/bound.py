"""`optimizer_class`: a registered optimizer as a class with its options bound, for code that builds the
optimizer itself from a class and keyword arguments (ZeroRedundancyOptimizer's `optimizer_class`,
FSDP and DeepSpeed wrappers, `torch.optim.swa_utils` recipes, a trainer's `optimizer_cls`).

    cls = optreg.optimizer_class("mindspore.Adam", learning_rate=sched, beta2=0.98)
    zero = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=cls)

The options are validated once, now, exactly as `configure_optimizer` validates them; `cls(params)`
builds the optimizer (`params` checked as `configure_optimizer` checks them, but for a Module, which goes to the
implementation as it is: MindSpore's THOR takes the model),
and keyword arguments given to `cls` override the bound ones: they reach the implementation as they are, in
its own spelling (ZeRO passes an optimizer's `defaults` back, torch's `decoupled_weight_decay` or MindSpore's
`lr` beside `learning_rate`), so it is the implementation that checks their values; a name its constructor does
not take is a ConfigError at that name (with a did-you-mean), a Module given to an implementation that does not
take one is a ConfigError at `params`, and what the implementation refuses (torch's `Invalid learning rate: -1`)
is a ConfigError that says so, as `configure_optimizer` reports it; so is what the row's limits refuse (a module
it imports that is not installed, a class that cannot step), at `name`, when the class is made. The bound options
never pass through the caller, so a schedule bound as the learning rate stays out of a wrapper's
param groups (and out of its checkpoints).
"""

from __future__ import annotations

from typing import Any

from optreg.core.build import check_limits, plain_arguments, tensor_options, with_tensors, wraps_optimizer
from optreg.core.entry import OPTIMIZER
from optreg.core.groups import check_params, setting_elsewhere, settings_table
from optreg.core.names import named_twice
from optreg.core.registry import REGISTRY
from optreg.core.validate import option_names, to_target_kwargs, validate_options
from optreg.errors import Collector, ConfigError, ErrorItem, check_input, closest


def optimizer_class(name: str, /, *, dialect: str | None = None, **options: Any) -> type:
    """The implementation of optimizer `name` with `options` bound: `cls(params, **overrides)` builds it."""
    options = plain_arguments(options, OPTIMIZER)
    check_input(options)
    twice = Collector()
    named_twice(twice, name, options)
    twice.raise_if_any()
    entry = REGISTRY.lookup(OPTIMIZER, name, dialect)
    if wraps_optimizer(entry):
        raise ConfigError(f"{entry.qualname} wraps another optimizer: build that one with optimizer_class() "
                          f"and wrap it with configure_optimizer({entry.name!r}, ...)", "name")
    if "param_groups" in options:
        raise ConfigError("param_groups rules need parameter names: pass torch-style group dicts as the params "
                          "of the class instead", "param_groups")
    errors = Collector()
    check_limits(entry, errors, "")   # a module not installed, a class that cannot step: as configure_optimizer
    settings = settings_table()
    for key in (k for k in options if k in settings):   # no_weight_decay: the groups are the caller's here
        errors.extend([setting_elsewhere(key, option_names(entry), "which optimizer_class() cannot apply: give "
                                              "it to configure_optimizer() or build() (a config's optimizer "
                                              "section), or pass torch-style group dicts as the params of the class")])
    bound: dict[str, Any] = {}
    tensors = tensor_options(entry, options, "", errors)
    try:
        values = validate_options(entry, {k: v for k, v in options.items() if k not in settings})
        bound = to_target_kwargs(entry, with_tensors(values, tensors))
    except ConfigError as exc:
        errors.extend(exc)
    errors.raise_if_any()
    target = entry.resolve()

    takes = _keywords(target)

    def __init__(self: Any, params: Any, **overrides: Any) -> None:
        import torch

        if not isinstance(params, torch.nn.Module):
            check_params(params)
        elif not entry.takes_model:   # a Module is the implementation's to take only where it takes the model
            raise ConfigError(f"{entry.qualname} takes the parameters, not the Module: pass model.parameters() or "
                              f"model.named_parameters()", "params")
        unknown = [k for k in overrides if takes is not None and k not in takes]
        if unknown:
            raise ConfigError([ErrorItem(k, f"not an argument of {target.__qualname__}", None, closest(k, takes))
                               for k in unknown])
        try:
            target.__init__(self, params, **{**bound, **overrides})
        except (ValueError, TypeError, KeyError) as exc:   # the implementation's own checks of the values
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError(f"{entry.qualname} refused the configuration: {exc}",
                              ", ".join(overrides) or "params") from exc

    return type(target.__name__, (target,), {
        "__init__": __init__,
        "__module__": target.__module__,
        "__qualname__": target.__qualname__,
        "__doc__": f"{entry.qualname} with {bound!r} bound.\n\n{target.__doc__ or ''}",
    })


def _keywords(target: type) -> list[str] | None:
    """The keyword arguments `target`'s constructor takes after the parameters, the groups' spelling of its options
    included (MindSpore's `lr`, `betas`: `optimizer.group_spellings`), or None when it takes any (`**kwargs`)."""
    import inspect

    from optreg.core.optimizer import group_spellings

    parameters = list(inspect.signature(target.__init__).parameters.values())[2:]   # after self and params
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)] + \
        list(group_spellings(target.__init__))

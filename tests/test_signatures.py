"""Each component's Pydantic model agrees with its implementation's signature (names and defaults)."""

from __future__ import annotations

import inspect

import pytest

from optreg.core import models
from optreg.core.entry import OPTIMIZER, SCHEDULER
from optreg.core.registry import REGISTRY

ENTRIES = REGISTRY.entries(OPTIMIZER) + REGISTRY.entries(SCHEDULER)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.qualname for e in ENTRIES])
def test_model_agrees_with_signature(entry):
    impl = entry.resolve()
    params = list(inspect.signature(impl).parameters.values())
    if params and params[0].name in ("params", "optimizer"):
        params = params[1:]
    assert not any(p.kind is p.VAR_KEYWORD for p in params), f"{entry.qualname}: **kwargs hides its options"
    signature = {p.name: p for p in params if p.kind is not p.VAR_POSITIONAL}
    fields = models.model(entry).model_fields
    back = {target: option for option, target in entry.rename.items()}
    exposed = {back.get(n, n) for n in signature if n not in entry.fixed and n not in entry.hidden}
    assert set(fields) == exposed, entry.qualname
    for target in entry.fixed:
        assert target in signature, f"{entry.qualname}: knob {target!r} is not a parameter of its implementation"
    for name, field in fields.items():
        p = signature[entry.target_name(name)]
        expected = entry.defaults.get(name, p.default)
        if expected is inspect.Parameter.empty:
            assert field.is_required(), (entry.qualname, name)
        else:
            assert not field.is_required() and field.default == expected, (entry.qualname, name)
    for option in entry.defaults:
        assert option in fields, f"{entry.qualname}: default for unknown option {option!r}"
    for option in entry.types:
        assert option in fields, f"{entry.qualname}: type for unknown option {option!r}"
    for rule in entry.rules:
        assert set(rule.fields) <= set(fields), f"{entry.qualname}: rule over unknown options {rule.fields}"


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.qualname for e in ENTRIES])
def test_defaults_pass_their_own_validation(entry):
    """Every default satisfies its own option's type and range (a default outside its constraint is a bug)."""
    from pydantic import TypeAdapter

    for option in models.options(entry):
        if not option.required:
            TypeAdapter(option.type).validate_python(option.default)

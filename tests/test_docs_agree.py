"""What `describe` / `optreg show` tell agrees with what builds (issue 25 items 8 and 9): a doc that names another
default than the declared one says which holds and why; the YAML snippet `show` prints builds the same optimizer or
scheduler as the Python call with the same values."""

from __future__ import annotations

import ast
import re
import warnings

import pytest
import torch
import yaml

import optreg
from optreg.cli import yaml_snippet
from optreg.core.describe import agreeing_doc
from optreg.core.entry import OPTIMIZER, SCHEDULER
from optreg.core.loop import required_length
from optreg.core.registry import REGISTRY

OPTIMIZERS = [e for e in REGISTRY.entries(OPTIMIZER) if not e.accepts and not e.takes_model]
SCHEDULERS = REGISTRY.entries(SCHEDULER)


def _as_tuple(value):
    return tuple(_as_tuple(v) for v in value) if isinstance(value, (list, tuple)) else value


@pytest.mark.parametrize("kind", [OPTIMIZER, SCHEDULER])
def test_every_doc_default_agrees_with_the_declared_one_or_says_which_holds(kind):
    contradictions = []
    for entry in REGISTRY.entries(kind):
        for p in optreg.describe(entry.qualname, kind=kind).params:
            for said in re.findall(r"\(default: ((?:[^();]|\([^()]*\))*)\)", p.doc):
                try:
                    value = ast.literal_eval(said.strip())
                except (ValueError, SyntaxError):
                    continue
                if _as_tuple(value) != _as_tuple(p.default):
                    contradictions.append(f"{entry.qualname}.{p.name}: doc {said}, declared {p.default!r}")
    assert contradictions == []


@pytest.mark.parametrize("name, option, said, holds", [
    ("torch.Adafactor", "weight_decay", "1e-2", "0.0 holds: the implementation's signature takes it"),
    ("oneflow.AdamW", "weight_decay", "1e-2", "0.0 holds"),
    ("cerebras.Adam", "eps", "1e-8", "1e-06 holds"),
])
def test_the_contradictions_found_say_which_default_holds(name, option, said, holds):
    doc = next(p.doc for p in optreg.describe(name).params if p.name == option)
    assert f"the docstring this comes from says {said}, but {holds}" in doc


def test_a_doc_that_agrees_is_left_as_it_is():
    entry = REGISTRY.lookup(OPTIMIZER, "Adam")
    assert agreeing_doc("coefficient (default: 1e-3)", "lr", 0.001, entry) == "coefficient (default: 1e-3)"
    assert agreeing_doc("pair (default: (0.9, 0.999))", "betas", (0.9, 0.999), entry) == \
        "pair (default: (0.9, 0.999))"


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.LayerNorm(3), torch.nn.Linear(3, 2))


def _snippet(entry) -> dict:
    return yaml.safe_load(yaml_snippet(optreg.describe(entry.qualname, kind=entry.kind)))[entry.kind]


def _groups(optimizer):
    return [sorted((k, v) for k, v in g.items() if k != "params") for g in optimizer.param_groups]


def _is_template(entry) -> bool:
    """A snippet with a required option left `???` (a template: `show` cannot know the value)."""
    return "???" in _snippet(entry).values()


COMPLETE_OPTIMIZERS = [e for e in OPTIMIZERS if not _is_template(e)]
COMPLETE_SCHEDULERS = [e for e in SCHEDULERS if not _is_template(e)]
TEMPLATES = [e for e in (*OPTIMIZERS, *SCHEDULERS) if _is_template(e)]


@pytest.mark.parametrize("entry", COMPLETE_OPTIMIZERS, ids=lambda e: e.qualname)
def test_the_optimizer_snippet_builds_what_the_python_call_builds(entry):
    snippet = _snippet(entry)
    options = {k: v for k, v in snippet.items() if k not in ("name", "dialect")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_yaml = optreg.build({"optimizer": snippet}, _model()).optimizer
        from_python = optreg.configure_optimizer(entry.qualname, _model(), **options)
    assert type(from_yaml) is type(from_python)
    assert _groups(from_yaml) == _groups(from_python)


@pytest.mark.parametrize("entry", COMPLETE_SCHEDULERS, ids=lambda e: e.qualname)
def test_the_scheduler_snippet_builds_what_the_python_call_builds(entry):
    """The snippet as pasted into a 4-step run builds what the Python call builds, whose length left null in the
    snippet (the run's) is the run's 4 steps; where the defaults miss a rule between options (NeMo's
    NoamHoldAnnealing needs warmup_steps or warmup_ratio), both refuse them alike."""
    snippet = _snippet(entry)
    options = {k: v for k, v in snippet.items() if k not in ("name", "dialect")}
    length = required_length(entry)
    if length is not None:
        assert options[length] is None
        options[length] = 4
    config = {"optimizer": {"name": "SGD", "lr": 0.1, "momentum": 0.9}, "scheduler": snippet, "train": {"steps": 4}}
    lrs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        optimizer = optreg.configure_optimizer("SGD", _model(), lr=0.1, momentum=0.9)
        try:
            scheduler = optreg.configure_lr_scheduler(optimizer, entry.qualname, **options)
        except optreg.ConfigError as exc:
            with pytest.raises(optreg.ConfigError) as info:
                optreg.build(config, _model())
            assert [(e.path, e.message) for e in info.value.errors] == \
                [(f"scheduler.{e.path}", e.message) for e in exc.errors]
            return
        built = optreg.build(config, _model())
        for opt, sched in ((built.optimizer, built.scheduler), (optimizer, scheduler)):
            seen = []
            for _ in range(4):
                seen.append([g["lr"] for g in opt.param_groups])
                opt.step()
                sched.step(1.0) if isinstance(sched, torch.optim.lr_scheduler.ReduceLROnPlateau) else sched.step()
            lrs.append(seen)
    assert lrs[0] == lrs[1]


@pytest.mark.parametrize("entry", TEMPLATES, ids=lambda e: e.qualname)
def test_a_template_snippet_is_refused_at_exactly_its_required_options(entry):
    """A snippet that leaves a required option `???` builds nothing: the error names each `???` key, and only
    those (every other value of the snippet is valid as it stands)."""
    snippet = _snippet(entry)
    required = sorted(f"{entry.kind}.{k}" for k, v in snippet.items() if v == "???")
    config = {entry.kind: snippet} if entry.kind == OPTIMIZER else \
        {"optimizer": {"name": "SGD", "lr": 0.1, "momentum": 0.9}, "scheduler": snippet}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(optreg.ConfigError) as info:
            optreg.build(config, _model())
    assert sorted(e.path for e in info.value.errors) == required, str(info.value)
    assert {e.message for e in info.value.errors} == {"missing value (???): set it in the config or with an override"}

"""Installed optimizer libraries as dialects (pytorch_optimizer 4.1, torchao 0.18, bitsandbytes 0.50, on the CPU):
rows derived from the classes' signatures on first use, options validated from annotations, defaults and the
ranges the constructors check, and optreg's build stepping exactly as the class built by hand.

timm's optimizer classes (the timm dialect's library) are not exercised here: `import timm` imports torchvision,
whose PyPI wheel for torch 2.13 is a CUDA build that does not load beside the CPU torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import optreg
from optreg import ConfigError
from optreg.core.dialect import Dialect
from optreg.core.entry import OPTIMIZER
from optreg.core.library import Library, option_type, validator_checks
from optreg.core.registry import REGISTRY
from optreg.dialects import pytorch_optimizer as pytorch_optimizer_dialect

ROOT = Path(__file__).resolve().parents[1]
pytorch_optimizer = pytest.importorskip("pytorch_optimizer")
torchao_optim = pytest.importorskip("torchao.optim")
bnb_optim = pytest.importorskip("bitsandbytes.optim")


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    # 64 x 128 = 8192 elements: enough for torchao's and bitsandbytes' quantized (8-bit / 4-bit) state
    return torch.nn.Sequential(torch.nn.Linear(128, 64), torch.nn.Tanh(), torch.nn.Linear(64, 4))


def _run(make, steps: int = 3) -> list[torch.Tensor]:
    """Parameters after `steps` steps of the optimizer `make(model)` on one fixed batch."""
    model = _model()
    optimizer = make(model)
    data = torch.randn(16, 128, generator=torch.Generator().manual_seed(1))
    for _ in range(steps):
        optimizer.zero_grad()
        model(data).square().mean().backward()
        optimizer.step()
    return [p.detach().clone() for p in model.parameters()]


CASES = [
    ("pytorch_optimizer.Lion", pytorch_optimizer.Lion, {"lr": 1e-3, "betas": (0.9, 0.98), "weight_decay": 0.1}),
    ("pytorch_optimizer.AdEMAMix", pytorch_optimizer.AdEMAMix, {"lr": 1e-3, "betas": (0.9, 0.99, 0.999),
                                                                "alpha": 4.0}),
    ("pytorch_optimizer.Lamb", pytorch_optimizer.Lamb, {"lr": 1e-2, "weight_decay": 0.01}),
    ("pytorch_optimizer.ADOPT", pytorch_optimizer.ADOPT, {"lr": 1e-3}),
    ("torchao.optim.AdamW8bit", torchao_optim.AdamW8bit, {"lr": 1e-3, "weight_decay": 0.05}),
    ("torchao.optim.Adam4bit", torchao_optim.Adam4bit, {"lr": 1e-3, "betas": (0.8, 0.99)}),
    ("bitsandbytes.optim.AdamW8bit", bnb_optim.AdamW8bit, {"lr": 1e-3, "weight_decay": 0.05}),
    ("bitsandbytes.optim.Lion8bit", bnb_optim.Lion8bit, {"lr": 1e-4, "betas": (0.9, 0.95)}),
    ("bitsandbytes.optim.SGD", bnb_optim.SGD, {"lr": 0.1, "momentum": 0.9}),
]


@pytest.mark.parametrize("name, cls, options", CASES, ids=[c[0] for c in CASES])
def test_build_steps_as_the_class_built_by_hand(name, cls, options):
    by_hand = _run(lambda m: cls(m.parameters(), **options))
    built = _run(lambda m: optreg.configure_optimizer(name, m, **{k: list(v) if isinstance(v, tuple) else v
                                                                  for k, v in options.items()}))
    before = [p.detach() for p in _model().parameters()]
    assert any(not torch.equal(a, b) for a, b in zip(before, by_hand)), "the steps changed nothing"
    for a, b in zip(by_hand, built):
        assert torch.equal(a, b)


def test_config_file_builds_the_library_class():
    built = optreg.build({"optimizer": {"name": "bitsandbytes.optim.AdamW8bit", "lr": 2e-3}}, _model())
    assert type(built.optimizer) is bnb_optim.AdamW8bit and built.optimizer.defaults["lr"] == 2e-3


@pytest.mark.parametrize("options, path, message", [
    ({"lr": -1.0}, "optimizer.lr", "must be >= 0, got -1.0"),
    ({"betas": [0.9, 1.0]}, "optimizer.betas[1]", "must be < 1, got 1.0"),
    ({"weight_decouple": "yes"}, "optimizer.weight_decouple", "expected true or false, got str 'yes'"),
    ({"weight_decoupel": True}, "optimizer.weight_decoupel", "unknown option of pytorch_optimizer.Lion"),
])
def test_bad_options_are_refused_at_their_paths(options, path, message):
    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": {"name": "pytorch_optimizer.Lion", **options}}, _model())
    (error,) = info.value.errors
    assert (error.path, error.message) == (path, message)
    if "weight_decoupel" in options:
        assert error.suggestion == "weight_decouple"


def test_a_misspelled_class_name_gets_a_did_you_mean():
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("bitsandbytes.optim.AdamW8bt", _model())
    (error,) = info.value.errors
    assert (error.path, error.message, error.suggestion) == (
        "name", "unknown bitsandbytes optimizer 'optim.AdamW8bt'", "optim.AdamW8bit")


def test_three_betas_are_checked_as_a_triple():
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("pytorch_optimizer.AdEMAMix", _model(), betas=[0.9, 0.99, 1.5])
    assert [(e.path, e.message) for e in info.value.errors] == [("betas[2]", "must be <= 1, got 1.5")]
    # the library's own check: the third beta is in [0, 1], the first two in [0, 1)
    pytorch_optimizer.AdEMAMix(_model().parameters(), betas=(0.9, 0.99, 1.0))
    with pytest.raises(ValueError):
        pytorch_optimizer.AdEMAMix(_model().parameters(), betas=(0.9, 0.99, 1.5))


@pytest.mark.parametrize("dialect, name, option, bad", [
    ("torchao", "AdamW8bit", "eps", -1e-8),
    ("torchao", "AdamW8bit", "betas", [1.0, 0.999]),
    ("bitsandbytes", "AdamW8bit", "weight_decay", -0.1),
    ("bitsandbytes", "LARS", "momentum", 0.0),
    ("bitsandbytes", "LARS", "momentum", 1.0),
    ("bitsandbytes", "SGD", "momentum", 1.0),
    ("bitsandbytes", "SGD32bit", "momentum", -0.5),
    ("bitsandbytes", "Adagrad8bit", "lr_decay", 0.1),
])
def test_declared_ranges_are_what_the_constructor_refuses(dialect, name, option, bad):
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer(f"{dialect}.{name}", _model(), lr=0.01, **{option: bad})
    assert info.value.errors[0].path.startswith(option)
    cls = getattr(torchao_optim if dialect == "torchao" else bnb_optim, name)
    with pytest.raises((ValueError, NotImplementedError)):
        cls(_model().parameters(), lr=0.01, **{option: tuple(bad) if isinstance(bad, list) else bad})


def _outside(bounds) -> list[float]:
    """A value just outside each bound."""
    out = []
    if "ge" in bounds:
        out.append(bounds["ge"] - 1e-3)
    if "gt" in bounds:
        out.append(bounds["gt"])
    if "le" in bounds:
        out.append(bounds["le"] + 1e-3)
    if "lt" in bounds:
        out.append(bounds["lt"])
    return out


def test_every_range_read_from_pytorch_optimizer_is_one_its_constructor_enforces():
    """Each scalar bound read from a constructor's validate_* calls: a value just outside it is refused by optreg
    and raises in the class itself (the other options at their defaults)."""
    from optreg.core import models
    from optreg.core.build import wraps_optimizer

    checked = 0
    for entry in REGISTRY.entries(OPTIMIZER, "pytorch_optimizer"):
        if entry.takes_model or wraps_optimizer(entry) or any(o.required for o in models.options(entry)):
            continue
        cls = entry.resolve()
        for option, bounds in validator_checks(cls).items():
            if not isinstance(bounds, dict) or "choices" in bounds:
                continue
            for value in _outside(bounds):
                try:
                    optreg.configure_optimizer(entry.qualname, _tiny(), **{option: value})
                except ConfigError as exc:
                    # beside what its row's limits refuse (a module DeMo imports, not installed)
                    assert option in [e.path for e in exc.errors], (entry.qualname, option, value, exc)
                else:
                    raise AssertionError(f"{entry.qualname}: {option}={value} accepted")
                with pytest.raises(Exception):
                    cls(_tiny(), **{option: value})
                checked += 1
    assert checked > 200


def _tiny() -> list[torch.Tensor]:
    return [torch.zeros(4, 4, requires_grad=True)]


def test_options_come_from_annotations_and_defaults():
    from typing import Literal, Optional

    from pydantic import TypeAdapter, ValidationError

    assert TypeAdapter(option_type(float, 1.0, {"ge": 0.0})).validate_python(2) == 2.0
    with pytest.raises(ValidationError):
        TypeAdapter(option_type(float, 1.0, {"ge": 0.0})).validate_python(-1)
    with pytest.raises(ValidationError):
        TypeAdapter(option_type(float, 1.0)).validate_python(True)
    assert TypeAdapter(option_type(Optional[bool], None)).validate_python(None) is None
    assert TypeAdapter(option_type(Literal["a", "b"], "a")).validate_python("b") == "b"
    assert TypeAdapter(option_type(None, 0)).validate_python(0.01) == 0.01      # weight_decay=0: a number
    with pytest.raises(ValidationError):
        TypeAdapter(option_type(None, 256)).validate_python(2.5)                # block_size=256: an integer


def test_list_show_describe_schema(capsys, tmp_path):
    from optreg.cli import main
    from optreg.config.json_schema import experiment_schema
    from optreg.core.describe import describe

    assert main(["list", "optimizers", "--dialect", "torchao"]) == 0
    listed = capsys.readouterr().out.split()
    assert {"AdamW8bit", "Adam4bit", "AdamWFp8"} <= set(listed) and "CPUOffloadOptimizer" not in listed
    assert main(["show", "bitsandbytes.optim.AdamW8bit"]) == 0
    shown = capsys.readouterr().out
    assert "min_8bit_size" in shown and "args" not in shown.split()
    d = describe("pytorch_optimizer.Lion")
    assert [p.name for p in d.params][:3] == ["lr", "betas", "weight_decay"]
    assert len(REGISTRY.entries(OPTIMIZER, "pytorch_optimizer")) == len(
        {pytorch_optimizer.load_optimizer(n) for n in pytorch_optimizer.get_supported_optimizers()})
    jsonschema = pytest.importorskip("jsonschema")
    schema = experiment_schema(["torchao"])
    jsonschema.validate({"optimizer": {"name": "torchao.AdamW8bit", "lr": 1e-3}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"optimizer": {"name": "torchao.AdamW8bit", "betas": [0.9, 2.0]}}, schema)
    assert "AdamW8bit" in json.dumps(schema) and "AdamW8bit" not in json.dumps(experiment_schema()), \
        "library rows are in the schema only on request"


def test_hydra_groups_for_an_installed_library_on_request(tmp_path):
    from omegaconf import OmegaConf

    from optreg.cli import main

    assert main(["hydra-configs", "--provider", "bitsandbytes", "-o", str(tmp_path)]) == 0
    group = OmegaConf.load(tmp_path / "optimizer" / "bitsandbytes_adam_w8bit.yaml")
    assert (group.name, group.dialect, group.min_8bit_size) == ("AdamW8bit", "bitsandbytes", 4096)
    built = optreg.build({"optimizer": OmegaConf.to_container(group)}, _model())
    assert type(built.optimizer) is bnb_optim.AdamW8bit


def test_a_library_rows_group_option_says_its_file_is_written_on_request(capsys, monkeypatch):
    """optreg ships no group file of a library's row: `optreg show` says which command writes it beside the group
    option it prints, and `optreg run optimizer=<that option>` says so and what to write instead, which runs."""
    from optreg.cli import main

    monkeypatch.setenv("COLUMNS", "200")
    assert main(["show", "pytorch_optimizer.Lion"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == (
        "# Hydra group option: optimizer=pytorch_optimizer_lion (its file: optreg hydra-configs --provider "
        "pytorch_optimizer -o DIR)")
    assert main(["run", "optimizer=pytorch_optimizer_lion", "train.steps=2"]) == 1
    assert capsys.readouterr().err.strip() == (
        "override optimizer=pytorch_optimizer_lion: optimizer: no optimizer config 'pytorch_optimizer_lion' in the "
        "Hydra group 'optimizer'; pytorch_optimizer.Lion is an installed library's row, whose group file optreg does "
        "not ship (optreg hydra-configs --provider pytorch_optimizer -o DIR writes it for an app of your own): set "
        "optimizer.name=pytorch_optimizer.Lion instead")
    assert main(["run", "optimizer.name=pytorch_optimizer.Lion", "train.steps=2"]) == 0


def test_library_not_installed_names_the_package(scratch_registry, monkeypatch):
    ghost = Dialect("ghostlib", (), "not installed", library=Library("ghost-optim", "ghost_optim_pkg.optim"))
    monkeypatch.setattr(scratch_registry, "_dialects", list(scratch_registry.dialects()))
    scratch_registry.add_dialect(ghost)
    try:
        with pytest.raises(ConfigError) as info:
            optreg.build({"optimizer": {"name": "ghostlib.AdamW", "lr": 0.1}}, _model())
        (error,) = info.value.errors
        assert error.path == "optimizer.name"
        assert "ghost_optim_pkg.optim, which is not installed" in error.message and \
            "pip install ghost-optim" in error.message
    finally:
        scratch_registry._declared.pop("ghostlib", None)


def test_import_optreg_and_the_registry_import_no_library():
    code = ("import sys, optreg\n"
            "from optreg.core.registry import REGISTRY\n"
            "optreg.configure_optimizer('AdamW', [__import__('torch').zeros(2, requires_grad=True)])\n"
            "print(REGISTRY.dialects())\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pytorch_optimizer', 'torchao', 'bitsandbytes', 'timm')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    dialects, imported = out.strip().splitlines()
    assert "pytorch_optimizer" in dialects and "torchao" in dialects and "bitsandbytes" in dialects
    assert imported == "[]"


def test_a_library_rows_hydra_group_name_names_it_on_first_use():
    """`pytorch_optimizer_lion` (the Hydra group option `optreg show pytorch_optimizer.Lion` prints) names the row
    as `oneflow_adamw` names oneflow.AdamW, also as the first name of the library a process looks up (the rows are
    read on first use: the name found nothing before them, and something after)."""
    code = ("import optreg\n"
            "for name in ('pytorch_optimizer_lion', 'bitsandbytes_lion8bit'):\n"
            "    print(optreg.configure_optimizer(name, [__import__('torch').zeros(2, requires_grad=True)])"
            ".__class__.__module__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.split() == ["pytorch_optimizer.optimizer.lion", "bitsandbytes.optim.lion"], out.stderr


def test_torch_is_still_the_cpu_build():
    assert torch.version.cuda is None and torch.__version__.startswith("2.13")


def test_timm_optimizer_classes_join_its_schedulers(scratch_registry, monkeypatch):
    """The timm dialect's library wiring, on a stand-in `timm.optim` module (the real timm cannot be imported beside
    the CPU torch here): its optimizer classes are rows by class name, spelled `timm.optim.X` too; the schedulers
    stay."""
    import types

    class Lion(torch.optim.SGD):
        """A stand-in optimizer class."""

        def __init__(self, params, lr: float = 1e-4, betas: tuple[float, float] = (0.9, 0.99),
                     weight_decay: float = 0.0):
            super().__init__(params, lr=lr, weight_decay=weight_decay)

    package, module = types.ModuleType("timm"), types.ModuleType("timm.optim")
    module.Lion, package.optim = Lion, module
    monkeypatch.setitem(sys.modules, "timm", package)
    monkeypatch.setitem(sys.modules, "timm.optim", module)
    monkeypatch.setattr(scratch_registry, "_libraries", set(scratch_registry._libraries) - {"timm"})
    monkeypatch.setattr(scratch_registry, "_library_rows", set(scratch_registry._library_rows))
    entry = scratch_registry.lookup(OPTIMIZER, "timm.optim.Lion")
    assert (entry.qualname, entry.target) == ("timm.Lion", "timm.optim:Lion")
    assert scratch_registry.lookup(OPTIMIZER, "Lion", "timm") is entry
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("timm.Lion", _model(), lr="fast")
    assert info.value.errors[0].path == "lr"
    assert optreg.list_schedulers(dialect="timm") and optreg.list_optimizers(dialect="timm") == ["Lion"]
    assert "timm.Lion" not in optreg.list_optimizers()


@pytest.mark.parametrize("name, option, bad, message", [
    ("torchao.optim.AdamW8bit", "block_size", 0, "must be >= 1"),
    ("torchao.optim.Adam4bit", "block_size", -1, "must be >= 1"),
    ("bitsandbytes.optim.AdamW", "optim_bits", 7, "8"),
    ("bitsandbytes.optim.PytorchLARS", "momentum", 0.0, "must be > 0, got 0.0"),
])
def test_a_value_the_class_takes_but_fails_on_at_its_first_step_is_refused(name, option, bad, message):
    """torchao's block_size (`numel % block_size` at the first step: ZeroDivisionError for 0, a negative size for
    torch.zeros below it) and bitsandbytes' optim_bits (NotImplementedError at the first step unless 8 or 32):
    the constructors take them, the first step raises; a config is refused at the option, before anything runs."""
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer(name, _model(), lr=0.01, **{option: bad})
    assert [e.path for e in info.value.errors] == [option] and message in str(info.value)
    dialect, _, cls_name = name.partition(".optim.")
    model = _model()
    raw = getattr(torchao_optim if dialect == "torchao" else bnb_optim, cls_name)(model.parameters(), lr=0.01,
                                                                                 **{option: bad})
    model(torch.ones(2, 128)).sum().backward()
    with pytest.raises((ZeroDivisionError, RuntimeError, NotImplementedError, UnboundLocalError)):
        raw.step()


def test_a_default_the_class_fails_on_is_no_default(tmp_path, capsys):
    """bitsandbytes' PytorchLARS defaults to momentum=0, on which its step fails (UnboundLocalError): momentum is
    required, as for LARS and SGD (8-bit and 32-bit too), whose constructors refuse their own default
    (NotImplementedError): a file without it is refused at the option to set, where a missing option is."""
    from optreg.cli import main

    for name in ("bitsandbytes.optim.PytorchLARS", "bitsandbytes.optim.LARS", "bitsandbytes.SGD",
                 "bitsandbytes.SGD8bit", "bitsandbytes.SGD32bit"):
        with pytest.raises(ConfigError) as info:
            optreg.configure_optimizer(name, _model(), lr=0.01)
        assert [(e.path, e.message) for e in info.value.errors] == [("momentum", "required option is missing")]
    with pytest.raises(NotImplementedError, match="SGD without momentum"):
        bnb_optim.SGD(_model().parameters(), lr=0.01)
    path = tmp_path / "sgd.yaml"
    path.write_text("train:\n  steps: 2\noptimizer:\n  name: bitsandbytes.SGD\n  lr: 0.1\n")
    assert main(["run", str(path)]) == 1
    missing = f"{path}:3:1: optimizer.momentum: required option is missing"
    assert capsys.readouterr().err.strip().splitlines()[-1] == missing
    (momentum,) = [p for p in optreg.describe("bitsandbytes.SGD").params if p.name == "momentum"]
    assert (momentum.required, momentum.constraint) == (True, "> 0.0, < 1.0")


def _dtype_options() -> list[tuple[str, str]]:
    from optreg.core.types import names_torch_dtype

    return [(e.qualname, option) for dialect in ("pytorch_optimizer", "bitsandbytes", "torchao")
            for e in REGISTRY.entries(OPTIMIZER, dialect) for option, type_ in e.types.items()
            if names_torch_dtype(type_)]


def test_every_library_option_has_a_type_a_config_is_checked_against():
    """No option of an installed library is typed Any (a value it cannot take would pass validation and fail at
    the first step): the model a class hooks is hidden, and what a config cannot give is None only."""
    from typing import Any

    untyped = [(e.qualname, option) for dialect in ("pytorch_optimizer", "bitsandbytes", "torchao")
               for e in REGISTRY.entries(OPTIMIZER, dialect) for option, type_ in e.types.items()
               if type_ is Any and option not in e.hidden]
    assert untyped == []
    assert {("pytorch_optimizer.AdaFactor", "momentum_dtype"), ("pytorch_optimizer.Kron", "precondition_dtype"),
            ("pytorch_optimizer.Kron", "mu_dtype"), ("pytorch_optimizer.FAdam", "fim_dtype")} <= set(_dtype_options())
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("pytorch_optimizer.ADOPT", _model(), clip_lambda="min")
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("clip_lambda", "expected a Python callable (given through the Python API), got 'min'")]


@pytest.mark.parametrize("name, option", _dtype_options())
def test_a_dtype_option_takes_a_dtype_name(name, option):
    """A torch.dtype option (AdaFactor's momentum_dtype) takes the dtype's name, with or without `torch.`, and the
    class gets the dtype itself: it builds and steps."""
    built = optreg.build({"optimizer": {"name": name, "lr": 1e-3, option: "torch.float64"}}, _model())
    assert built.optimizer.defaults.get(option, getattr(built.optimizer, option, None)) is torch.float64
    model = _model()
    optimizer = optreg.configure_optimizer(name, model, lr=1e-3, **{option: "float32"})
    model(torch.ones(2, 128)).sum().backward()
    optimizer.step()


def test_a_misspelled_dtype_is_refused_with_a_did_you_mean(capsys):
    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": {"name": "pytorch_optimizer.AdaFactor", "momentum_dtype": "bfloat61"}}, _model())
    (error,) = info.value.errors
    assert (error.path, error.suggestion) == ("optimizer.momentum_dtype", "bfloat16")
    assert error.message.startswith("must be one of 'float32', ") and error.message.endswith("got 'bfloat61'")
    optimizer = optreg.configure_optimizer("pytorch_optimizer.AdaFactor", _model(), momentum_dtype="bfloat16")
    assert optimizer.momentum_dtype is torch.bfloat16
    from optreg.cli import main

    assert main(["show", "pytorch_optimizer.AdaFactor"]) == 0
    assert "momentum_dtype: bfloat16" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------------
# limits: what keeps a library's class from stepping as a plain training loop steps it (Entry.limits)
# ---------------------------------------------------------------------------------------------------
LIBRARY_ROWS = [e for dialect in ("pytorch_optimizer", "bitsandbytes", "torchao")
                for e in REGISTRY.entries(OPTIMIZER, dialect)]


def _declared_refusals(entry) -> list[str]:
    """What the row's declarations say a build for `optreg run`'s loop refuses: its missing modules, a class that
    cannot step, a step the loop cannot drive, a key every parameter group sets (the file has no rules to set it),
    and (the loop's model has vectors) the parameters it cannot update."""
    limits = entry.limits
    said = [] if limits is None else [f"imports {m}, which is not installed: pip install {p}"
                                       for m, p in limits.missing()]
    said += [limits.broken] if limits is not None and limits.broken else []
    said += [limits.group_key_said(key) for key in limits.group_keys] if limits is not None else []
    said += [r for r in [limits.loop_refusal(entry.qualname) if limits is not None else None] if r]
    return said + ([entry.accepts[1]] if entry.accepts else [])


@pytest.mark.parametrize("entry", LIBRARY_ROWS, ids=[e.qualname for e in LIBRARY_ROWS])
def test_every_library_row_steps_in_the_run_loop_or_is_refused_as_its_row_declares(entry):
    """Each installed library's optimizer, built as `optreg run` builds it (run_loop: its model, the required
    options given), steps in the run's training loop (optreg.train), or is refused with a ConfigError saying what
    its row declares (Entry.limits, Entry.accepts), before the class is made: never by the class's own refusal
    (pytorch_optimizer's Muon without `use_muon` groups, bitsandbytes' SGD without momentum were), and no list of
    names: an exception is declared on its row."""
    from optreg.core.build import run_loop
    from optreg.core.describe import describe
    from optreg.train import make_model, train

    required = {p.name: p.example if p.example is not None else 10 if p.type == "int" else 0.01
                for p in describe(entry.qualname).params if p.required}   # a wrapper's: the optimizer it wraps
    model = make_model(16, 1, 0)
    declared = _declared_refusals(entry)
    try:
        with run_loop():
            built = optreg.build({"optimizer": {"name": entry.qualname, **required}}, model)
    except ConfigError as exc:
        text = str(exc)
        assert declared and all(said in text for said in declared), (declared, text)
        assert "refused the configuration" not in text, text
        return
    assert not declared, f"{entry.qualname} built, though its row declares {declared}"
    result = train(model, built.optimizer, built.scheduler, 2, 8, 0)
    assert len(result.losses) == 2


def test_every_declared_class_is_one_the_library_has():
    """The dialect's declarations (LIMITS, its Library's accepts) name classes of the installed pytorch_optimizer,
    each reaching its row: a class the library renames leaves no declaration behind unnoticed."""
    for name, declared in pytorch_optimizer_dialect.LIMITS.items():
        assert REGISTRY.lookup(OPTIMIZER, name, "pytorch_optimizer").limits is declared
    for name, declared in pytorch_optimizer_dialect.LIBRARY.accepts.items():
        assert REGISTRY.lookup(OPTIMIZER, name, "pytorch_optimizer").accepts is declared


def test_a_second_order_or_stepless_optimizer_is_refused_by_run_at_its_name(tmp_path, capsys):
    """AdaHessian's step reads the Hessian from gradients that keep their graph, LOMO has no step() (it updates in
    fused_backward): `optreg run`'s loop (plain backward, then step(closure)) cannot step either, so run refuses
    them at the file's name, saying why and what to do; a composite's part alike, at its rule."""
    from optreg.cli import main

    loop = "which optreg run's loop (loss.backward(), then optimizer.step(closure), in one process) does not do"
    for name, why, how in [
        ("AdaHessian", "steps on gradients that keep their graph (a second-order backward)",
         "loss.backward(create_graph=True), then optimizer.step() (or optimizer.step(hessian=...) with a Hessian "
         "diagonal of your own)"),
        ("LOMO", "has no usable step(): it updates the parameters inside the backward pass",
         "optimizer.fused_backward(loss, lr) in place of loss.backward() and optimizer.step() (with clip_grad_norm, "
         "optimizer.grad_norm(loss) before it)"),
    ]:
        path = tmp_path / f"{name}.yaml"
        path.write_text(f"optimizer:\n  name: pytorch_optimizer.{name}\ntrain:\n  steps: 2\n")
        assert main(["run", str(path)]) == 1
        assert capsys.readouterr().err.strip() == (f"{path}:2:3: optimizer.name: pytorch_optimizer.{name} {why}, "
                                                   f"{loop}; train it in a loop of your own: {how}")
    path = tmp_path / "part.yaml"
    path.write_text("optimizer:\n  name: AdamW\n  param_groups:\n    - params: '*.bias'\n      optimizer:\n"
                    "        name: pytorch_optimizer.SophiaH\n")
    assert main(["run", str(path), "--steps", "2"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{path}:6:9: optimizer.param_groups[0].optimizer.name: pytorch_optimizer.SophiaH steps "
                          f"on gradients that keep their graph"), err


def test_a_second_order_optimizer_builds_for_a_loop_of_ones_own():
    """Outside `optreg run`, AdaHessian builds as its class does and steps on a second-order backward, as the
    limit says; a plain backward fails in the class's own step (what run refuses)."""
    built = optreg.build({"optimizer": {"name": "pytorch_optimizer.AdaHessian", "lr": 0.1}}, model := _model())
    before = [p.detach().clone() for p in model.parameters()]
    model(torch.ones(2, 128)).square().mean().backward(create_graph=True)
    built.optimizer.step()
    assert all(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    model(torch.ones(2, 128)).square().mean().backward()
    with pytest.raises(RuntimeError):
        built.optimizer.step()


def test_alig_runs_in_the_run_loop(tmp_path, capsys):
    """AliG takes the loss through its closure, which it calls under no_grad: `optreg run`'s closure enables grad
    itself, so the run steps; AliG has no lr (its step size comes from the loss): `lr none`."""
    from optreg.cli import main

    path = tmp_path / "alig.yaml"
    path.write_text("optimizer:\n  name: pytorch_optimizer.AliG\ntrain:\n  steps: 2\n")
    assert main(["run", str(path)]) == 0
    assert "(after 2 steps)  lr none" in capsys.readouterr().out


def test_alig_is_refused_under_accumulation(tmp_path):
    """Gradient accumulation steps without a closure, and AliG steps only through one (its step's closure argument
    is optional, so its row's limits say it): a file that asks for both is refused at the key, as for LBFGS."""
    path = tmp_path / "alig.yaml"
    path.write_text("optimizer:\n  name: pytorch_optimizer.AliG\ntrain:\n  steps: 2\n  accumulation_steps: 2\n")
    with pytest.raises(ConfigError) as info:
        optreg.build(str(path), _model())
    (error,) = info.value.errors
    assert (error.path, error.message) == ("train.accumulation_steps", (
        "gradient accumulation steps the optimizer without a closure, and pytorch_optimizer.AliG needs one (its step "
        "evaluates the loss through it); use accumulation_steps: 1"))


def test_a_module_a_class_imports_is_named_with_the_pip_command():
    """DeMo imports einops when it is built (ImportError from its constructor): a ConfigError at its name."""
    pytest.importorskip("pytorch_optimizer")
    if REGISTRY.lookup(OPTIMIZER, "DeMo", "pytorch_optimizer").limits.missing() == []:
        pytest.skip("einops is installed")
    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": {"name": "pytorch_optimizer.DeMo"}}, _model())
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("optimizer.name", "pytorch_optimizer.DeMo imports einops, which is not installed: pip install einops")]
    with pytest.raises(ConfigError) as info:   # not the ImportError of cls(params)
        optreg.optimizer_class("pytorch_optimizer.DeMo")
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("name", "pytorch_optimizer.DeMo imports einops, which is not installed: pip install einops")]
    with pytest.raises(ImportError, match="einops"):
        pytorch_optimizer.DeMo(_model().parameters())


def test_a_parameter_that_is_not_2d_is_named_for_spectral_sphere():
    """SpectralSphere's step raises on a parameter that is not 2-D: build names them, and a rule that routes them
    to another optimizer builds and steps."""
    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": {"name": "pytorch_optimizer.SpectralSphere"}}, _model())
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("optimizer.params", "SpectralSphere updates only 2-D parameters; '0.bias' has shape (64,), '2.bias' has "
                             "shape (4,): route them to another optimizer with a param_groups rule, e.g. "
                             "{max_ndim: 1, optimizer: {name: AdamW}}")]
    steps = _run(lambda m: optreg.build({"optimizer": {
        "name": "pytorch_optimizer.SpectralSphere",
        "param_groups": [{"max_ndim": 1, "optimizer": {"name": "AdamW"}}]}}, m).optimizer)
    assert all(torch.isfinite(p).all() for p in steps)
    model = _model()
    raw = pytorch_optimizer.SpectralSphere(model.parameters())
    model(torch.ones(2, 128)).sum().backward()
    with pytest.raises(ValueError, match="only supports 2D parameters"):
        raw.step()


USE_MUON = ("reads use_muon from every parameter group, with no default: set it in each param_groups rule, true for "
            "the hidden weight matrices (Muon's update), false for embeddings, the output head, biases and gains "
            "(AdamW's, with the adamw_* options)")


@pytest.mark.parametrize("name", ["Muon", "AdaMuon", "AdaGO", "NorMuon", "MuonClip", "DistributedMuon"])
def test_the_muon_family_takes_use_muon_in_each_rule(name, tmp_path, capsys):
    """pytorch_optimizer's Muon family raises ValueError ('`use_muon` must be set.') when built with a group that has
    no use_muon key: its row declares the key (Limits.group_keys), so show says it, a rule takes it as a group key,
    and validate and build refuse a group without it at the key to set, before the class is made."""
    from optreg.cli import main

    qualname = f"pytorch_optimizer.{name}"
    said = f"{qualname} {USE_MUON}"
    assert USE_MUON in optreg.describe(qualname).limits
    with pytest.raises(ValueError, match="`use_muon` must be set"):
        getattr(pytorch_optimizer, name)([{"params": list(_model().parameters())}])
    none, one = tmp_path / "none.yaml", tmp_path / "one.yaml"
    none.write_text(f"train:\n  steps: 2\noptimizer:\n  name: {qualname}\n  lr: 0.02\n")
    one.write_text(f"optimizer:\n  name: {qualname}\n  param_groups:\n    - max_ndim: 1\n      lr: 0.001\n")
    assert main(["validate", str(none), str(one)]) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        f"{none}:3:1: optimizer.param_groups: {said}; there is no rule to set it: give one per kind of parameter, "
        f"the last {{params: '*', use_muon: ...}} for every parameter no earlier rule selects",
        f"{one}:4:7: optimizer.param_groups[0].use_muon: required: {said}"]
    with pytest.raises(ConfigError) as info:   # the parameters no rule selects form a group without it
        optreg.build({"optimizer": {"name": qualname, "param_groups": [{"max_ndim": 1, "use_muon": False}]}},
                     _model())
    assert [(e.path, e.message) for e in info.value.errors] == [(
        "optimizer.param_groups", f"{said}; no rule selects '0.weight', '2.weight': add one that sets use_muon "
                                  f"for them (a last {{params: '*', use_muon: ...}} selects every parameter no "
                                  f"earlier rule does)")]
    with pytest.raises(ConfigError) as info:
        optreg.build({"optimizer": {"name": qualname, "use_muon": True}}, _model())
    assert info.value.errors[0].message == ("'use_muon' is a param_groups key of " + qualname + ", not an option: "
                                            "give it in a rule, param_groups: [{params: '*', use_muon: True}]")
    if name == "DistributedMuon":   # it reads torch.distributed's rank when built
        return
    rules = [{"max_ndim": 1, "use_muon": False, "lr": 1e-3}, {"params": "*", "use_muon": True}]
    by_hand = _run(lambda m: getattr(pytorch_optimizer, name)([
        {"params": [p for p in m.parameters() if p.ndim < 2], "use_muon": False, "lr": 1e-3},
        {"params": [p for p in m.parameters() if p.ndim >= 2], "use_muon": True}]))
    built = _run(lambda m: optreg.build({"optimizer": {"name": qualname, "param_groups": rules}}, m).optimizer)
    assert all(torch.equal(a, b) for a, b in zip(by_hand, built))


@pytest.mark.parametrize("name, instead", [("AdEMAMix32bit", "AdEMAMix"), ("PagedAdEMAMix32bit", "PagedAdEMAMix")])
def test_bitsandbytes_ademamix32bit_is_refused_on_any_device(name, instead):
    """bitsandbytes 0.50's AdEMAMix32bit subclasses Optimizer2State, not AdEMAMix: one state buffer where the
    update reads two (issue #2075). Its first step fails on the CPU, as built by hand; not a limit of the device
    (the CUDA kernel reads past the buffer), so build refuses it everywhere and names the class that steps."""
    if issubclass(getattr(bnb_optim, name), bnb_optim.AdEMAMix):
        pytest.skip("fixed in the installed bitsandbytes")
    said = (f"bitsandbytes.{name} cannot step: its state holds one buffer where its update reads two (bitsandbytes "
            f"issue #2075: its first step fails); {instead} with optim_bits: 32 is the same optimizer")
    for make in (lambda: optreg.configure_optimizer(f"bitsandbytes.{name}", _model()),
                 lambda: optreg.optimizer_class(f"bitsandbytes.{name}")):
        with pytest.raises(ConfigError) as info:
            make()
        assert [(e.path, e.message) for e in info.value.errors] == [("name", said)]
    model = _model()
    raw = getattr(bnb_optim, name)(model.parameters())
    model(torch.ones(2, 128)).sum().backward()
    with pytest.raises(RuntimeError):
        raw.step()
    _run(lambda m: optreg.configure_optimizer(f"bitsandbytes.{instead}", m, optim_bits=32))


def test_validate_refuses_what_build_refuses_at_the_name(tmp_path, capsys):
    """validate gives build's verdict without a model: a class that cannot step (bitsandbytes' AdEMAMix32bit) is an
    error at its name, in the section and in a composite's part; a second-order optimizer, which builds for a loop
    of one's own, is valid (only optreg run refuses it)."""
    from optreg.cli import main

    if issubclass(bnb_optim.AdEMAMix32bit, bnb_optim.AdEMAMix):
        pytest.skip("fixed in the installed bitsandbytes")
    said = ("bitsandbytes.AdEMAMix32bit cannot step: its state holds one buffer where its update reads two "
            "(bitsandbytes issue #2075: its first step fails); AdEMAMix with optim_bits: 32 is the same optimizer")
    whole, part, second = tmp_path / "whole.yaml", tmp_path / "part.yaml", tmp_path / "second.yaml"
    whole.write_text("optimizer:\n  name: bitsandbytes.AdEMAMix32bit\n")
    part.write_text("optimizer:\n  name: AdamW\n  param_groups:\n    - params: '*.bias'\n      optimizer:\n"
                    "        name: bitsandbytes.AdEMAMix32bit\n")
    second.write_text("optimizer:\n  name: pytorch_optimizer.AdaHessian\n")
    assert main(["validate", str(whole), str(part), str(second)]) == 1
    out = capsys.readouterr()
    assert out.err.strip().splitlines() == [f"{whole}:2:3: optimizer.name: {said}",
                                            f"{part}:6:9: optimizer.param_groups[0].optimizer.name: {said}"]
    assert out.out.strip() == f"{second}: ok"


def test_show_says_the_type_and_range_of_a_union_option():
    """pytorch_optimizer's `betas: tuple[float, float] | tuple[float, float, float]` is a union told apart by its
    length (a oneOf in the schema): describe says both forms and the bounds validation enforces, not `any`."""
    from optreg.core.describe import describe

    (betas,) = [p for p in describe("pytorch_optimizer.Lion").params if p.name == "betas"]
    assert (betas.type, betas.constraint) == ("[float, float] | [float, float, float]",
                                          ">= 0.0, < 1.0 | >= 0.0, < 1.0, <= 1.0")


def test_show_says_each_limit(capsys):
    from optreg.cli import main
    from optreg.core.describe import describe

    assert describe("pytorch_optimizer.DeMo").limits == (
        "steps only within an initialized torch.distributed process group: torch.distributed.init_process_group() "
        "before its first step (a group of one process will do)", "imports einops (pip install einops)")
    assert "  limit: SpectralSphere updates only 2-D parameters" in str(describe("pytorch_optimizer.SpectralSphere"))
    assert describe("pytorch_optimizer.Lion").limits == ()
    assert main(["show", "pytorch_optimizer.AdaHessian"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert ("limit: steps on gradients that keep their graph (a second-order backward): "
            "loss.backward(create_graph=True), then optimizer.step()") in shown


def test_a_library_rows_missing_required_option_is_located_as_a_first_party_rows(tmp_path, capsys):
    """BSAM's num_data (no default) missing is reported at the optimizer section's line with its dotted path, as a
    first-party row's missing required option is (cerebras.SGD's lr), in the section and in a composite's part."""
    from optreg.cli import main

    lines = []
    for name, option in (("pytorch_optimizer.BSAM", "num_data"), ("cerebras.SGD", "lr")):
        whole, part = tmp_path / f"{option}.yaml", tmp_path / f"{option}_part.yaml"
        whole.write_text(f"train:\n  steps: 3\noptimizer:\n  name: {name}\n")
        part.write_text(f"optimizer:\n  name: AdamW\n  param_groups:\n    - params: '*.bias'\n      optimizer:\n"
                        f"        name: {name}\n")
        assert main(["validate", str(whole), str(part)]) == 1
        lines += [(whole, part, option, capsys.readouterr().err.strip().splitlines())]
    for whole, part, option, said in lines:
        assert said == [f"{whole}:3:1: optimizer.{option}: required option is missing",
                        f"{part}:5:7: optimizer.param_groups[0].optimizer.{option}: required option is missing"]

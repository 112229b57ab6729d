"""Third-party plugins through entry points: a real package (tests/plugin_pkg/good) installed into a temporary
directory with pip; its components register lazily with provenance, its broken entry point only warns, its Hydra
groups appear; a package reusing a built-in name (tests/plugin_pkg/clash) raises; a package can add a dialect
(tests/plugin_pkg/dialect)."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir

from optreg import ConfigError
import optreg
from optreg.core.registry import REGISTRY
from optreg.dialects import BUILTIN
from optreg.integrations.hydra import configs as hc

TESTS = Path(__file__).resolve().parent
PLUGINS = TESTS / "plugin_pkg"
APP_CONF = TESTS.parent / "examples" / "hydra_app" / "conf"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, Path]:
    """pip-install both test packages (no deps, no network, no build isolation) into their own target dirs."""
    root = tmp_path_factory.mktemp("plugins")
    jobs = {}
    for name in ("good", "clash", "dialect"):
        source = root / "src" / name        # a copy: pip builds in the source tree
        shutil.copytree(PLUGINS / name, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        jobs[name] = subprocess.Popen(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--no-build-isolation",
             "--disable-pip-version-check", "--target", str(root / name), str(source)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for name, job in jobs.items():
        out, err = job.communicate(timeout=300)
        assert job.returncode == 0, f"pip install {name}: {out}{err}"
    return {name: root / name for name in jobs}


def _fresh_registry(monkeypatch) -> None:
    """Make the registry read its tables and plugins again on next use; every piece of its state is restored after
    the test (a reload resets the record of which library rows were read: left reset, a library's rows read
    earlier would be listed with the built-in ones)."""
    for name, value in (("_entries", {}), ("_dialects", []), ("_declared", {}), ("_libraries", set()),
                        ("_library_rows", set()), ("_loaded", False)):
        monkeypatch.setattr(REGISTRY, name, value)


def _activate(path: Path, monkeypatch) -> None:
    """Put an installed plugin on sys.path and make the registry read tables and plugins again on next use."""
    monkeypatch.syspath_prepend(str(path))
    importlib.invalidate_caches()
    _fresh_registry(monkeypatch)
    for module in [m for m in sys.modules
                   if m.startswith(("optreg_testplugin", "optreg_clashplugin", "optreg_dialectplugin"))]:
        monkeypatch.delitem(sys.modules, module)


@pytest.fixture
def plugin(installed, monkeypatch):
    _activate(installed["good"], monkeypatch)
    yield
    for module in [m for m in sys.modules if m.startswith("optreg_testplugin")]:
        del sys.modules[module]


def _load_with_warning() -> None:
    with pytest.warns(RuntimeWarning) as record:
        REGISTRY.entries("optimizer")
    assert [str(w.message) for w in record] == [
        "optreg plugin 'broken' (optreg.optimizers, from optreg-testplugin) failed to load: "
        "ImportError('optreg_testplugin.broken is broken on purpose')"]


def test_plugins_load_lazily_and_a_broken_one_only_warns(plugin):
    assert "optreg_testplugin" not in sys.modules
    _load_with_warning()
    assert "optreg_testplugin" in sys.modules
    names = optreg.list_optimizers(dialect="torch")
    assert "SignSGD" in names and "AdamW" in names and "broken" not in [n.lower() for n in names]
    assert "HalvingLR" in optreg.list_schedulers(dialect="torch")
    d = optreg.describe("sign_sgd")
    assert (d.qualname, d.provider, d.source) == ("torch.SignSGD", "optreg-testplugin", "optreg-testplugin 0.1")
    assert [(p.name, p.default) for p in d.params] == [("lr", 0.01), ("weight_decay", 0.0)]


def test_plugin_components_build_validate_and_step(plugin):
    _load_with_warning()
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.randn(5))
    opt = optreg.configure_optimizer("SignSGD", [w], lr=0.1, weight_decay=0.5)
    start = w.detach().clone()
    w.grad = torch.tensor([0.3, -2.0, 0.0, 1e-9, -1e-9])
    opt.step()
    expected = start - 0.1 * (torch.sign(w.grad) + 0.5 * start)        # w -= lr (sign(g) + wd w)
    torch.testing.assert_close(w.detach(), expected)
    scheduler = optreg.configure_lr_scheduler(opt, "Halving", every=2)
    lrs = []
    for _ in range(6):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        scheduler.step()
    assert lrs == [0.1 * 0.5 ** (t // 2) for t in range(6)]
    with pytest.raises(ConfigError) as exc:
        optreg.configure_optimizer("SignSGD", [w], lr=-1, weigth_decay=0.1)
    assert {e.path for e in exc.value.errors} == {"lr", "weigth_decay"}
    assert any(e.suggestion == "weight_decay" for e in exc.value.errors)


def test_plugin_hydra_groups_appear(plugin):
    from hydra.core.global_hydra import GlobalHydra

    _load_with_warning()
    with initialize_config_dir(config_dir=str(APP_CONF), version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        assert "sign_sgd" in loader.get_group_options("optimizer") and "adamw" in loader.get_group_options("optimizer")
        assert "halving" in loader.get_group_options("scheduler")
        cfg = compose("config", ["optimizer=sign_sgd", "optimizer.lr=0.5", "scheduler=halving", "scheduler.every=3"])
    built = optreg.build(cfg, _model())
    assert type(built.optimizer).__name__ == "SignSGD" and type(built.scheduler).__name__ == "HalvingLR"
    assert [g["lr"] for g in built.optimizer.param_groups] == [0.5, 0.5]
    assert [g["weight_decay"] for g in built.optimizer.param_groups] == [0.0, 0.0]
    assert built.scheduler.every == 3


def test_plugin_group_files_are_generated_by_optreg(plugin):
    _load_with_warning()
    files = hc.group_files(hc.entries_of("optreg-testplugin"))
    assert sorted(f.path.as_posix() for f in files) == ["optimizer/sign_sgd.yaml", "scheduler/halving.yaml"]
    assert hc.stale(PLUGINS / "good" / "optreg_testplugin" / "conf", files) == []


def test_a_name_clash_raises(installed, monkeypatch):
    _activate(installed["clash"], monkeypatch)
    with pytest.raises(ConfigError, match=r"optimizer name 'torch.AdamW' \(optreg-clashplugin\) clashes with "
                                          r"'torch.AdamW' \(optreg\)"):
        REGISTRY.entries("optimizer")


def test_a_plugin_adds_a_dialect(installed, monkeypatch):
    _activate(installed["dialect"], monkeypatch)
    assert "optreg_dialectplugin" not in sys.modules
    from optreg.dialects import BUILTIN

    assert REGISTRY.dialects() == (*BUILTIN, "mydialect")
    assert optreg.list_optimizers(dialect="mydialect") == ["X"]
    assert "mydialect.X" in optreg.list_optimizers()
    d = optreg.describe("mydialect.X")
    assert (d.qualname, d.provider) == ("mydialect.X", "optreg-dialectplugin")
    assert REGISTRY.dialect("mydialect") is sys.modules["optreg_dialectplugin"].DIALECT

    w = torch.nn.Parameter(torch.ones(3))
    opt = optreg.configure_optimizer("mydialect.X", [w], lr=0.5)
    assert type(opt).__name__ == "X" and opt.param_groups[0]["lr"] == 0.5
    assert type(optreg.configure_optimizer("x", [w], dialect="mydialect")).__name__ == "X"
    with pytest.raises(ConfigError) as info:   # the range its row declares
        optreg.build({"optimizer": {"name": "mydialect.X", "lr": 0.0}}, [w])
    assert [(e.path, e.message) for e in info.value.errors] == [("optimizer.lr", "must be > 0, got 0.0")]
    w.grad = torch.tensor([1.0, -2.0, 0.0])
    opt.step()
    torch.testing.assert_close(w.detach(), torch.tensor([0.5, 2.0, 1.0]))
    # built-in dialect prefixes still split; an unknown dialect still errors, with a did-you-mean
    assert type(optreg.configure_optimizer("mindspore.Adam", [w])).__name__ == "Adam"
    with pytest.raises(ConfigError, match=r"unknown dialect 'mydialekt'; dialects: torch, .*, mydialect "
                                          r"\(did you mean 'mydialect'\?\)"):
        optreg.configure_optimizer("X", [w], dialect="mydialekt")
    with pytest.raises(ConfigError, match=r"'X' is not a torch optimizer; mydialect.X has it"):
        optreg.configure_optimizer("X", [w])


def test_without_the_plugin_its_dialect_is_unknown(monkeypatch):
    _fresh_registry(monkeypatch)
    assert "mydialect" not in REGISTRY.dialects()
    with pytest.raises(ConfigError, match=r"unknown dialect 'mydialect'"):
        optreg.configure_optimizer("X", [torch.nn.Parameter(torch.ones(1))], dialect="mydialect")


def _model():
    from optreg.train import make_model

    return make_model(8, 1, 0)

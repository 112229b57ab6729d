"""Hydra: the SearchPathPlugin, composing with overrides, build() from a DictConfig, errors, `_target_`,
`instantiate`, `optreg run` with Hydra overrides, and a multirun of the example app."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf, open_dict

from optreg import ConfigError
import optreg
from optreg.cli import main
from optreg.integrations.hydra.configs import builtin_entries, option_name
from optreg.train import make_model

REPO = Path(__file__).resolve().parents[1]
APP = REPO / "examples" / "hydra_app"
QUICKSTART = str(REPO / "examples" / "quickstart.yaml")


def composed(*overrides: str, hydra: bool = False, conf: Path = APP / "conf"):
    with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
        return compose("config", list(overrides), return_hydra_config=hydra)


def model():
    return make_model(8, 1, 0)


def messages(exc: pytest.ExceptionInfo) -> list[str]:
    return [str(e) for e in exc.value.errors]


# ---------------------------------------------------------------------------------------------------
# discovery
# ---------------------------------------------------------------------------------------------------
def test_searchpath_plugin_is_discovered_and_lists_every_group_file():
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.plugins import Plugins
    from hydra.plugins.search_path_plugin import SearchPathPlugin

    names = [p.__name__ for p in Plugins.instance().discover(SearchPathPlugin)]
    assert "OptregSearchPathPlugin" in names
    with initialize_config_dir(config_dir=str(APP / "conf"), version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        optimizers, schedulers = loader.get_group_options("optimizer"), loader.get_group_options("scheduler")
    assert "adamw" in optimizers and "cosine_annealing" in schedulers
    entries = builtin_entries()
    assert {option_name(e) for e in entries if e.kind == "optimizer"} <= set(optimizers)
    assert {option_name(e) for e in entries if e.kind == "scheduler"} <= set(schedulers)


# ---------------------------------------------------------------------------------------------------
# compose + build
# ---------------------------------------------------------------------------------------------------
def test_a_file_that_composes_builds_inside_a_hydra_app(tmp_path):
    """A file that optreg composes with Hydra (an interpolation, a primary config's defaults list) built, planned and
    plotted from inside a Hydra app (a `@hydra.main` task, an `initialize()` block) failed: 'cannot compose the
    config: GlobalHydra is already initialized'. It builds as outside, and the app's Hydra is left as it was."""
    from hydra.core.global_hydra import GlobalHydra

    path = tmp_path / "experiment.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler:\n  name: CosineAnnealingLR\n  T_max: ${train.steps}\n"
                    "train: {steps: 20}\n")
    outside = optreg.build(path, model()).scheduler.T_max
    with initialize_config_dir(config_dir=str(APP / "conf"), version_base="1.3"):
        app = GlobalHydra.instance().hydra
        assert optreg.build(path, model()).scheduler.T_max == outside == 20
        assert type(optreg.build(APP / "conf" / "config.yaml", model()).optimizer) is torch.optim.AdamW
        assert GlobalHydra.instance().hydra is app
        assert compose("config", ["optimizer=sgd"]).optimizer.name == "SGD"
    assert not GlobalHydra.instance().is_initialized()


def test_issue_example_overrides_build_the_right_objects():
    cfg = composed("optimizer=adamw", "optimizer.lr=3e-4", "scheduler=cosine_annealing", "scheduler.T_max=1000")
    built = optreg.build(cfg, model())
    assert type(built.optimizer) is torch.optim.AdamW
    assert all(g["lr"] == 3e-4 for g in built.optimizer.param_groups)
    betas = built.optimizer.defaults["betas"]
    assert type(betas) is tuple and betas == (0.9, 0.999)           # a ListConfig in the config
    assert type(built.scheduler) is torch.optim.lr_scheduler.CosineAnnealingLR and built.scheduler.T_max == 1000
    # the primary config's param_groups rule applies on top of the group file
    assert [r["weight_decay"] for r in built.group_table()] == [0.0, 0.01]


def test_group_switch_replaces_the_section_and_interpolations_resolve():
    cfg = composed("optimizer=sgd", "optimizer.momentum=0.9", "train.steps=7")
    built = optreg.build(cfg, model())
    assert type(built.optimizer) is torch.optim.SGD and "betas" not in built.optimizer.defaults
    assert built.optimizer.defaults["momentum"] == 0.9
    assert built.scheduler.T_max == 7                                    # T_max null: the run's length


def test_non_torch_dialect_group():
    cfg = composed("optimizer=mindspore_adam", "scheduler=mindspore_cosine_decay",
                   "scheduler.min_lr=0.0", "scheduler.max_lr=0.1", "scheduler.decay_steps=10")
    built = optreg.build(cfg, model())
    expected = optreg.configure_optimizer("mindspore.Adam", model(), learning_rate=cfg.optimizer.learning_rate)
    assert type(built.optimizer) is type(expected) and built.experiment.optimizer["dialect"] == "mindspore"
    assert all(g["lr"] == pytest.approx(0.1) for g in built.optimizer.param_groups)   # absolute: max_lr at step 0
    built.optimizer.step()
    built.scheduler.step()
    assert all(0.0 < g["lr"] < 0.1 for g in built.optimizer.param_groups)


def test_missing_value_is_an_error_naming_the_key_and_the_override():
    with pytest.raises(ConfigError) as exc:
        optreg.build(composed("scheduler=step", hydra=True), model())
    assert messages(exc) == ["override scheduler=step: scheduler.step_size: missing value (???): set it in the "
                             "config or with an override"]
    with pytest.raises(ConfigError) as exc:
        optreg.build(composed("scheduler=step"), model())                 # no hydra node: the dotted path alone
    assert exc.value.errors[0].path == "scheduler.step_size" and exc.value.errors[0].location is None


def test_unresolvable_interpolation_is_an_error_naming_the_key():
    with pytest.raises(ConfigError) as exc:
        optreg.build(composed("scheduler.T_max=${train.nope}"), model())
    assert [(e.path, e.message) for e in exc.value.errors] == [
        ("scheduler.T_max", "cannot resolve interpolation: Interpolation key 'train.nope' not found")]


def test_a_misspelt_interpolation_key_suggests_the_closest_key_path_at_its_position(tmp_path):
    """`${train.stepz}` names a key the composed config lacks: the error keeps its path and position and suggests the
    closest key path of the config; a relative interpolation's key is not matched against absolute paths."""
    config = tmp_path / "c.yaml"
    config.write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler:\n  name: CosineAnnealingLR\n"
                      "  T_max: '${train.stepz}'\n  eta_min: ${.trainn}\ntrain: {steps: 100}\n")
    with pytest.raises(ConfigError) as exc:
        optreg.load_config(config)
    assert [(e.path, e.message, e.suggestion, e.location.line, e.location.column) for e in exc.value.errors] == [
        ("scheduler.T_max", "cannot resolve interpolation: Interpolation key 'train.stepz' not found", "train.steps",
         4, 3),
        ("scheduler.eta_min", "cannot resolve interpolation: Interpolation key 'trainn' not found", None, 5, 3)]


def test_an_interpolation_of_a_train_key_the_file_leaves_out_is_not_found_and_overrides_still_apply(tmp_path):
    """`train:` keys the file leaves out are there for overrides (`train.steps=8` without `+`), but not as values:
    `${train.steps}` of a file that gives its run in epochs is a key not found at its position (it resolved to the
    default, None: 'expected a number'), and a key nobody sets keeps the run's default."""
    from optreg.config.run import TrainSpec
    from optreg.config.yaml_loader import read_yaml
    from optreg.integrations.hydra.support import load_with_overrides

    def load(path, overrides):
        data, source = read_yaml(path)
        return load_with_overrides(data, source, overrides, path)

    config = tmp_path / "c.yaml"
    config.write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler:\n  name: CosineAnnealingLR\n"
                      "  T_max: ${train.steps}\ntrain: {epochs: 5, steps_per_epoch: 4}\n")
    with pytest.raises(ConfigError) as exc:
        load(config, ["train.seed=3"])
    assert [(e.path, e.message, e.location.line) for e in exc.value.errors] == [
        ("scheduler.T_max", "cannot resolve interpolation: Interpolation key 'train.steps' not found", 4)]
    experiment = load(config, ["train.batch_size=4", "~train.epochs", "train.steps=8"])
    assert experiment.train.steps == 8 and experiment.train.batch_size == 4
    assert experiment.scheduler["T_max"] == 8 and experiment.train.seed == TrainSpec().seed


def test_an_override_past_the_end_of_a_list_says_so():
    """Hydra's "Error merging override" alone said nothing of what failed: the cause is said with it."""
    from optreg.config.yaml_loader import load_yaml
    from optreg.integrations.hydra.support import load_with_overrides

    data, source = load_yaml("optimizer:\n  name: SGD\n  lr: 0.1\n  param_groups:\n"
                             "    - {params: ['*.bias'], lr_mult: 2}\n", "c.yaml")
    with pytest.raises(ConfigError) as exc:
        load_with_overrides(data, source, ["optimizer.param_groups.5.lr_mult=3"])
    assert [(e.path, e.message) for e in exc.value.errors] == [
        ("optimizer.param_groups[5].lr_mult", "Error merging override optimizer.param_groups.5.lr_mult=3: list index "
                                              "out of range at optimizer.param_groups[5]")]


def test_an_override_error_writes_a_list_index_as_every_other_error_does(tmp_path, capsys):
    """An error about an override's key is at the path other errors give (`scheduler.schedulers[1].T_mx`, as a bad
    value there is), not at Hydra's dotted key (`scheduler.schedulers.1.T_mx`); the override itself, and the key to
    write as its did-you-mean, stay in Hydra's syntax."""
    from optreg.config.yaml_loader import load_yaml
    from optreg.integrations.hydra.support import load_with_overrides, override_location

    text = "optimizer: {name: AdamW, lr: 0.1}\nscheduler:\n  name: sequential\n  schedulers:\n" \
           "    - {name: LinearLR, total_iters: 10}\n    - {name: CosineAnnealingLR, T_max: 90}\n"
    misspelt, bad, sweep = ("scheduler.schedulers.1.T_mx=100", "scheduler.schedulers.1.T_max=0",
                            "scheduler.schedulers.1.T_max=1,2")
    expected = {
        misspelt: ("scheduler.schedulers[1].T_mx", "Could not override 'scheduler.schedulers.1.T_mx'. To append to "
                   "your config use +scheduler.schedulers.1.T_mx=100", override_location(misspelt),
                   "scheduler.schedulers.1.T_max"),
        bad: ("scheduler.schedulers[1].T_max", "must be >= 1, got 0", override_location(bad), None),
        sweep: ("scheduler.schedulers[1].T_max", "the override is a sweep; `optreg run` takes one value per key "
                "(sweeps need a Hydra app with --multirun)", override_location(sweep), None)}
    data, source = load_yaml(text, "c.yaml")
    for override, error in expected.items():
        with pytest.raises(ConfigError) as exc:
            load_with_overrides(data, source, [override])
        assert [tuple(e) for e in exc.value.errors] == [error]
    config = tmp_path / "c.yaml"
    config.write_text(text)
    assert main(["validate", str(config), misspelt]) == 1
    assert capsys.readouterr().err.strip() == (
        f"{config}: override {misspelt}: scheduler.schedulers[1].T_mx: Could not override "
        f"'scheduler.schedulers.1.T_mx'. To append to your config use +scheduler.schedulers.1.T_mx=100 "
        f"(did you mean 'scheduler.schedulers.1.T_max'?)")


def test_a_bracket_index_in_an_override_says_how_hydra_writes_it(tmp_path, capsys):
    """`a.b[1].c=...` is not Hydra's override grammar (Hydra's lexer error alone said so): the error, at the
    override's key, says to write the index as a key part and gives the override so written."""
    from optreg.config.yaml_loader import load_yaml
    from optreg.integrations.hydra.support import load_with_overrides

    text = "optimizer: {name: AdamW, lr: 0.1}\nscheduler:\n  name: sequential\n  schedulers:\n" \
           "    - {name: LinearLR, total_iters: 10}\n    - {name: CosineAnnealingLR, T_max: 90}\n"
    override = "scheduler.schedulers[1].T_max=100"
    message = (f"bad override: LexerNoViableAltException: {override} (Hydra override syntax: key=value, "
               f"group=option, +key=value, ~key; a list index is a key part: .1. not [1])")
    data, source = load_yaml(text, "c.yaml")
    with pytest.raises(ConfigError) as exc:
        load_with_overrides(data, source, [override])
    assert [(e.path, e.message, str(e.location), e.suggestion) for e in exc.value.errors] == [
        ("scheduler.schedulers[1].T_max", message, f"override {override}", "scheduler.schedulers.1.T_max=100")]
    config = tmp_path / "c.yaml"
    config.write_text(text)
    for command, prefix in (("validate", f"{config}: "), ("run", "")):
        assert main([command, str(config), override]) == 1
        assert capsys.readouterr().err.splitlines() == [
            f"{prefix}override {override}: scheduler.schedulers[1].T_max: {message} (did you mean "
            f"'scheduler.schedulers.1.T_max=100'?)"]
    assert main(["validate", str(config), "scheduler.schedulers.1.T_max=100"]) == 0


def test_errors_name_the_override_that_set_the_value():
    cfg = composed("optimizer.lr=-1", "optimizer.betas=[0.9,1.0]", hydra=True)
    with pytest.raises(ConfigError) as exc:
        optreg.build(cfg, model())
    assert messages(exc) == ["override optimizer.lr=-1: optimizer.lr: must be >= 0, got -1",
                             "override optimizer.betas=[0.9,1.0]: optimizer.betas[1]: must be < 1, got 1.0"]


def test_errors_inside_a_hydra_main_task_use_hydraconfig():
    from hydra.core.hydra_config import HydraConfig

    full = composed("optimizer.weight_decay=-0.5", hydra=True)
    task = OmegaConf.masked_copy(full, ["optimizer", "scheduler", "train"])
    HydraConfig.instance().set_config(full)
    try:
        with pytest.raises(ConfigError) as exc:
            optreg.build(task, model())
    finally:
        HydraConfig.instance().cfg = None
    assert messages(exc) == ["override optimizer.weight_decay=-0.5: optimizer.weight_decay: must be >= 0, got -0.5"]


def _app_writing_t_max(tmp_path: Path) -> tuple[Path, int]:
    """A copy of the example app's primary config that also writes `scheduler.T_max` (at the line returned)."""
    conf = tmp_path / "conf"
    conf.mkdir()
    text = (APP / "conf" / "config.yaml").read_text(encoding="utf-8") + "\nscheduler:\n  T_max: ${train.steps}\n"
    (conf / "config.yaml").write_text(text, encoding="utf-8")
    return conf, len(text.splitlines())


def test_a_key_omegaconf_cannot_hold_in_a_composed_file_is_at_its_position(tmp_path):
    # a file with an interpolation is composed; a null key had neither path nor position
    path = tmp_path / "exp.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1, momentum: '${train.steps}', null: 1}\ntrain: {steps: 5}\n")
    with pytest.raises(ConfigError) as exc:
        optreg.load_config(str(path))
    assert [str(e) for e in exc.value.errors] == [
        f"{path}:1:61: optimizer.None: OmegaConf cannot hold this: KeyValidationError: Incompatible key type "
        f"'NoneType'"]


def test_a_value_of_the_primary_config_is_located_in_its_file(tmp_path):
    """A value the app's primary config writes, which a group switch makes unknown (StepLR has no T_max), is blamed
    on the file's line, as `optreg run` blames it, not on the switch; a value the switch's group file lacks still
    names the switch. The file is found from the config's hydra node, or from HydraConfig inside a task."""
    from hydra.core.hydra_config import HydraConfig

    conf, line = _app_writing_t_max(tmp_path)
    full = composed("scheduler=step", "scheduler.step_size=20", hydra=True, conf=conf)
    with pytest.raises(ConfigError) as exc:
        optreg.build(full, model())
    (error,) = exc.value.errors
    assert (error.path, error.message) == ("scheduler.T_max", "unknown option of torch.StepLR")
    assert Path(error.location.file).resolve() == conf.resolve() / "config.yaml"
    assert (error.location.line, error.location.column) == (line, 3)
    HydraConfig.instance().set_config(full)
    try:
        with pytest.raises(ConfigError) as task_exc:
            optreg.build(OmegaConf.masked_copy(full, ["optimizer", "scheduler", "train"]), model())
    finally:
        HydraConfig.instance().cfg = None
    assert messages(task_exc) == messages(exc)
    result = subprocess.run([sys.executable, "train.py", "--config-path", str(conf), "scheduler=step",
                             "scheduler.step_size=20", "hydra/job_logging=none", "hydra/hydra_logging=none",
                             f"hydra.run.dir={tmp_path / 'run'}", "hydra.output_subdir=null"],
                            capture_output=True, text=True, timeout=300, cwd=APP)
    assert result.returncode == 1
    assert f"conf/config.yaml:{line}:3: scheduler.T_max: unknown option of torch.StepLR" in result.stderr


def test_the_example_app_switches_to_a_scheduler_without_t_max(tmp_path):
    """The app's own config leaves the schedule's length to the run: a switch to StepLR needs nothing removed."""
    result = subprocess.run([sys.executable, "train.py", "scheduler=step", "scheduler.step_size=20", "train.steps=5",
                             "hydra/job_logging=none", "hydra/hydra_logging=none", f"hydra.run.dir={tmp_path}",
                             "hydra.output_subdir=null"],
                            capture_output=True, text=True, timeout=300, cwd=APP)
    assert result.returncode == 0, result.stderr
    assert "StepLR" not in result.stderr and "after 5 steps" in result.stdout


def test_app_keys_are_ignored_and_near_misses_reported():
    cfg = composed()
    with open_dict(cfg):
        cfg.model = {"width": 8}
        cfg.trainer = {"max_steps": 3}
    assert type(optreg.build(cfg, model()).optimizer) is torch.optim.AdamW
    with open_dict(cfg):
        cfg.schedular = {"name": "StepLR"}
    with pytest.raises(ConfigError, match=r"schedular: unknown top-level key.*did you mean 'scheduler'"):
        optreg.build(cfg, model())


@pytest.mark.parametrize("section, kind, name", [("optimizer", "optimizer", "AdamW"),
                                                 ("scheduler", "scheduler", "CosineAnnealingLR")])
def test_a_section_given_as_the_whole_config_says_so(section, kind, name):
    """build(cfg.optimizer, model) was told the optimizer section is missing and that `weight_decay` is a Hugging
    Face key; the section's own name says what it is, in a composed node and a plain mapping alike."""
    cfg = composed()
    expected = [("optimizer", f"required: the optimizer section (name: and its options); these keys are {kind} "
                              f"section's own (name: {name!r}): give the whole config, build(cfg, model), or "
                              f"{{{kind}: <them>}}")]
    for given in (cfg[section], OmegaConf.to_container(cfg[section])):
        with pytest.raises(ConfigError) as exc:
            optreg.build(given, model())
        assert [(e.path, e.message) for e in exc.value.errors] == expected


# ---------------------------------------------------------------------------------------------------
# _target_ and instantiate
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("where, path", [
    ("optimizer", "optimizer._target_"),
    ("scheduler", "scheduler._target_"),
    ("train", "train._target_"),
])
def test_foreign_target_is_refused(where, path):
    cfg = composed()
    with open_dict(cfg):
        cfg[where]["_target_"] = "os.system"
    with pytest.raises(ConfigError) as exc:
        optreg.build(cfg, model())
    assert [e.path for e in exc.value.errors] == [path]
    assert "'os.system' is refused" in exc.value.errors[0].message


def test_target_of_the_wrong_kind_and_nested_targets_are_refused():
    data = {"optimizer": {"_target_": "optreg.integrations.hydra.support.scheduler_factory", "name": "SGD"},
            "scheduler": {"name": "sequential", "schedulers": [
                {"_target_": "torch.optim.lr_scheduler.StepLR", "name": "StepLR", "step_size": 2},
                {"_target_": "optreg.integrations.hydra.support.scheduler_factory", "name": "ConstantLR"}]}}
    with pytest.raises(ConfigError) as exc:
        optreg.build(OmegaConf.create(data), model())
    assert [e.path for e in exc.value.errors] == ["optimizer._target_", "scheduler.schedulers[0]._target_"]


def test_instantiate_returns_validating_factories():
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    cfg = composed("optimizer.lr=0.01", "scheduler.T_max=${train.steps}")   # a factory has no run to take it from
    net = model()
    opt = instantiate(cfg.optimizer)(net)
    built = optreg.build(cfg, model())
    assert type(opt) is type(built.optimizer)
    assert [{k: v for k, v in g.items() if k not in ("params", "initial_lr")} for g in opt.param_groups] == \
        [{k: v for k, v in g.items() if k not in ("params", "initial_lr")} for g in built.optimizer.param_groups]
    scheduler = instantiate(cfg.scheduler)(opt)
    assert type(scheduler) is type(built.scheduler) and scheduler.T_max == built.scheduler.T_max
    partial = instantiate(cfg.optimizer, _partial_=True)                # lightning-hydra-template style
    assert type(partial(params=model())) is torch.optim.AdamW
    cfg.optimizer.lr = -1.0                                             # validated before any parameter exists
    with pytest.raises(InstantiationException) as exc:
        instantiate(cfg.optimizer)
    assert isinstance(exc.value.__cause__, ConfigError)
    assert str(exc.value.__cause__) == "optimizer.lr: must be >= 0, got -1.0"


def test_a_node_whose_target_is_optreg_s_call_is_instantiated_built_and_validated():
    """`_target_: optreg.configure_optimizer` / `optreg.configure_lr_scheduler`, instantiated with `params=` /
    `optimizer=` (Hydra calls them by keyword: a TypeError before), and the same node given to build() or to the
    call as `**cfg.optimizer` (its `_target_` was refused: only the group files' factories were optreg's). A bad
    value through instantiate is Hydra's InstantiationException, its text holding the ConfigError's path (relative
    to the node, whose key full_key says) and its cause the ConfigError; with `_partial_: true` the call that builds
    raises the ConfigError itself."""
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    cfg = OmegaConf.create({"optimizer": {"_target_": "optreg.configure_optimizer", "name": "SGD", "lr": 0.1},
                            "scheduler": {"_target_": "optreg.configure_lr_scheduler", "name": "StepLR",
                                          "step_size": 2, "gamma": 0.5}})
    opt = instantiate(cfg.optimizer, params=model().parameters())
    sched = instantiate(cfg.scheduler, optimizer=opt)
    built = optreg.build(cfg, model())
    again = optreg.configure_optimizer(params=model(), **cfg.optimizer)
    lrs = []
    for o, s in ((opt, sched), (built.optimizer, built.scheduler),
                 (again, optreg.configure_lr_scheduler(optimizer=again, **cfg.scheduler))):
        lrs.append([])
        for _ in range(4):
            lrs[-1].append(o.param_groups[0]["lr"])
            o.step()
            s.step()
    assert lrs == [[0.1, 0.1, 0.05, 0.05]] * 3
    cfg.optimizer.lr = -1.0
    with pytest.raises(InstantiationException) as exc:
        instantiate(cfg.optimizer, params=model().parameters())
    assert isinstance(exc.value.__cause__, ConfigError) and str(exc.value.__cause__) == "lr: must be >= 0, got -1.0"
    assert "ConfigError('lr: must be >= 0, got -1.0')" in str(exc.value) and "full_key: optimizer" in str(exc.value)
    with pytest.raises(ConfigError) as info:
        instantiate(cfg.optimizer, _partial_=True)(params=model().parameters())
    assert [(e.path, e.message) for e in info.value.errors] == [("lr", "must be >= 0, got -1.0")]


@pytest.mark.parametrize("switch, length", [("scheduler=cosine_annealing", "T_max"),
                                            ("scheduler=hf_linear", "num_training_steps")])
def test_instantiate_of_a_group_file_s_null_length_says_to_set_it(switch, length):
    """A group file's null length is the run's in build(); instantiate has no run, and says so (it was `required
    option is missing` alone, for the example app's own scheduler)."""
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    cfg = composed(switch, "scheduler.num_warmup_steps=2" if "hf" in switch else "train.steps=50")
    with pytest.raises(InstantiationException) as exc:
        instantiate(cfg.scheduler)
    assert str(exc.value.__cause__) == f"scheduler.{length}: required option is missing; null is the run's length " \
        f"in optreg.build(cfg, model), and instantiate has no run: set it (scheduler.{length}=${{train.steps}})"


def test_the_warmup_stable_decay_group_file_takes_its_length_from_the_run():
    """hf.warmup_stable_decay's null num_training_steps is the run's length, as HF's Trainer passes it (the entry
    declared no length: `give num_training_steps or num_stable_steps`)."""
    import math

    cfg = composed("scheduler=hf_warmup_stable_decay", "scheduler.num_warmup_steps=2", "scheduler.num_decay_steps=4",
                   "train.steps=10")
    built = optreg.build(cfg, model())
    assert built.scheduler.schedules[0].num_training_steps == 10
    lrs = []
    for _ in range(10):
        lrs.append(built.optimizer.param_groups[0]["lr"])
        built.optimizer.step()
        built.scheduler.step()
    lr = cfg.optimizer.lr   # warmup 2, stable 10 - 2 - 4 = 4, cosine decay 4
    decay = [lr * 0.5 * (1 + math.cos(math.pi * k / 4)) for k in range(4)]
    assert lrs == pytest.approx([0.0, lr / 2, *[lr] * 4, *decay])


@pytest.mark.parametrize("switch, key", [("optimizer=cerebras_sgd", "optimizer.lr"),   # lr left out: learning_rate
                                         ("scheduler=mindspore_cosine_with_warm_up", "scheduler.learning_rate")])
def test_a_required_option_a_group_file_leaves_out_is_advised_with_plus_at_the_switch(switch, key, capsys):
    """A group file leaves out a required option that has another spelling (Cerebras' lr, MindFormers' warmup
    family's learning_rate), so `optimizer.lr=…` cannot override it (Hydra: append it with `+`): the error at the
    group switch says to add it so, in validate and run, a composed config's build and the example app; the
    advised override then builds."""
    group, option = switch.split("=")
    message = (f"override {switch}: {key}: required option is missing; the group file {group}/{option} leaves it "
               f"out: add it with +{key}=<value>")
    config = str(APP / "conf" / "config.yaml")
    for argv in (["validate", config, switch], ["run", QUICKSTART, switch, "--steps", "2"]):
        assert main(argv) == 1
        assert capsys.readouterr().err.strip().endswith(message), argv
    with pytest.raises(ConfigError) as info:
        optreg.build(composed(switch, hydra=True), model())
    assert messages(info) == [message]
    app = subprocess.run([sys.executable, str(APP / "train.py"), switch, "train.steps=2"], capture_output=True,
                         text=True, timeout=300, cwd=APP)
    assert app.returncode == 1 and message in app.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # MindFormers' schedule sets the lr itself
        optreg.build(composed(switch, f"+{key}=0.1", hydra=True), model())


def test_an_override_of_param_groups_to_null_drops_the_primary_config_s_rules(capsys):
    """`optimizer.param_groups=null` (Hydra's none) leaves the group file's optimizer with no rules, in build(), the
    group file's factory and `optreg validate`, as configure_optimizer(param_groups=None) has none."""
    from hydra.utils import instantiate

    cfg = composed("optimizer.param_groups=null")
    built = optreg.build(cfg, model())
    python = optreg.configure_optimizer("AdamW", model(), param_groups=None)
    factory = instantiate(cfg.optimizer)(model())
    assert [len(o.param_groups) for o in (built.optimizer, factory, python)] == [1, 1, 1]
    assert built.optimizer.param_groups[0]["weight_decay"] == factory.param_groups[0]["weight_decay"] == 0.01
    assert len(optreg.build(composed(), model()).optimizer.param_groups) == 2   # the primary config's rule
    assert main(["validate", str(APP / "conf" / "config.yaml"), "optimizer.param_groups=null"]) == 0
    assert capsys.readouterr().out.endswith(": ok\n")


# ---------------------------------------------------------------------------------------------------
# optreg run CONFIG [OVERRIDES…]
# ---------------------------------------------------------------------------------------------------
def test_run_with_group_switch_and_value_override(capsys):
    assert main(["run", QUICKSTART, "optimizer=cerebras_lamb", "optimizer.lr=1e-3", "train.steps=3"]) == 0
    out = capsys.readouterr().out
    assert "optimizer: optreg.dialects.cerebras.lamb.Lamb" in out and "after 3 steps" in out


def test_run_overrides_without_a_config_file(capsys):
    assert main(["run", "optimizer=sgd", "scheduler=step", "scheduler.step_size=2", "train.steps=3"]) == 0
    out = capsys.readouterr().out
    assert "torch.optim.sgd.SGD" in out and "StepLR" in out and "after 3 steps" in out


def test_plus_adds_a_group_the_file_lacks_and_a_group_it_has_is_switched_without_it(tmp_path, capsys):
    """`+scheduler=step` adds a group as a Hydra app adds one its defaults list lacks (it was Hydra's 'Multiple values
    for scheduler. To override a value use 'override scheduler: step'', a defaults list's syntax); a group the
    config sets already is switched without the `+`, which the error says, for a plain file and a primary config."""
    config = tmp_path / "c.yaml"
    config.write_text("optimizer: {name: SGD, lr: 0.1}\ntrain: {steps: 4}\n")
    assert main(["plot", str(config), "+scheduler=step", "scheduler.step_size=2", "--csv"]) == 0
    assert [float(line.split(",")[3]) for line in capsys.readouterr().out.splitlines()[1:]] == \
        pytest.approx([0.1, 0.1, 0.01, 0.01])
    primary = str(APP / "conf" / "config.yaml")
    for file, override in ((str(config), "+optimizer=adamw"), (primary, "+scheduler=step"),
                           (primary, "+optimizer=adamw")):
        assert main(["validate", file, override]) == 1
        group, option = override[1:].split("=")
        assert capsys.readouterr().err == f"{file}: override {override}: {group}: the config sets {group} already: " \
            f"`+{group}=` adds a group the config lacks; switch this one with {group}={option}\n"


@pytest.mark.parametrize("override, close", [
    ("optimizer=adamx", ["adamax", "adam", "adamw"]),
    ("optimizer=lamb", ["cerebras_lamb", "mindspore_lamb", "oneflow_lamb"]),
    ("scheduler=cosine_anealing", ["cosine_annealing"]),
])
def test_unknown_group_option_lists_close_ones(override, close, capsys):
    assert main(["run", QUICKSTART, override]) == 1
    err = capsys.readouterr().err
    group, option = override.split("=")
    assert err.startswith(f"override {override}: {group}: no {group} config {option!r} in the Hydra group")
    listed = err.split("close: ")[1].strip().split(", ")
    assert set(close) <= set(listed) and len(listed) <= 5


@pytest.mark.parametrize("config, override, meant", [
    (QUICKSTART, "optimizer.lrr=0.5", "optimizer.lr"),
    (str(REPO / "examples" / "deepspeed" / "ds_config.json"), "optimizer.params.lrr=0.5", "optimizer.params.lr"),
    (str(REPO / "examples" / "hf" / "training_args.yaml"), "learning_rat=0.5", "learning_rate"),
    (QUICKSTART, "optimizer.zzz=0.5", None),
    # an option the file leaves at its default: to be added with `+`
    (QUICKSTART, "optimizer.amsgrda=true", "+optimizer.amsgrad"),
    (QUICKSTART, "scheduler.eta_mni=0.1", None),   # the file's scheduler is a `sequential`: no option of its own
    # a list item (Hydra's index in the key), the key the stage writes and the option it leaves at its default
    (QUICKSTART, "scheduler.schedulers.1.T_mx=100", "scheduler.schedulers.1.T_max"),
    (QUICKSTART, "scheduler.schedulers.0.last_epch=3", "+scheduler.schedulers.0.last_epoch"),
    # a misspelt section on the way to the key
    (QUICKSTART, "schedular.name=StepLR", "scheduler.name"),
    # the key of what the override applies to: a primary config's group files, a group switch's file (the section
    # it replaced said '+optimizer.lr', which mindspore.Adam refuses beside its learning_rate)
    (str(APP / "conf" / "config.yaml"), "optimizer.lrr=0.5", "optimizer.lr"),
    (str(APP / "conf" / "config.yaml"), "scheduler.T_mx=10", "scheduler.T_max"),
    (QUICKSTART, "optimizer=mindspore_adam optimizer.lr=0.5", "optimizer.learning_rate"),
])
def test_an_override_of_a_key_the_file_lacks_names_the_near_one(config, override, meant, capsys):
    """Hydra's answer to a misspelt override is to append it with `+`; the key beside it that was meant is named
    (in optreg's own form and in a foreign file alike), or the component's option that the file does not write."""
    *switch, override = override.split()
    assert main(["plot", config, *switch, override, "--steps", "2", "--csv"]) == 1
    key = override.split("=")[0]
    err = capsys.readouterr().err.strip()
    path = re.sub(r"\.(\d+)\.", r"[\1].", key)   # a list index as every error path writes it
    assert err.startswith(f"override {override}: {path}: Could not override '{key}'")
    assert err.endswith(f"(did you mean '{meant}'?)" if meant else f"+{override}")


@pytest.mark.parametrize("written, override", [("learning_rate", "lr"), ("lr", "learning_rate")])
def test_an_override_spelling_an_alias_of_a_key_the_file_writes_names_the_files_spelling(written, override, tmp_path,
                                                                                          capsys):
    """`optimizer.lr=0.5` over a file that writes `learning_rate`: Hydra's `+optimizer.lr=0.5` would give the option
    twice (an error); the file's own spelling is the key meant."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"optimizer: {{name: mindspore.Adam, {written}: 0.01}}\ntrain: {{steps: 3}}\n")
    assert main(["validate", str(cfg), f"optimizer.{override}=0.5"]) == 1
    assert capsys.readouterr().err.strip().endswith(f"(did you mean 'optimizer.{written}'?)")


def test_run_keeps_file_positions_and_names_overrides(tmp_path, capsys):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("optimizer:\n  name: SGD\n  lr: -1\n  momentum: 0.9\ntrain: {steps: 3}\n")
    assert main(["run", str(cfg), "optimizer.momentum=-2", "train.steps=4"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [f"{cfg}:3:3: optimizer.lr: must be >= 0, got -1",
                   "override optimizer.momentum=-2: optimizer.momentum: must be >= 0, got -2"]


def test_a_warning_about_a_key_an_override_set_names_that_override_as_an_error_does(tmp_path, capsys):
    """The schedule linter's note on a key an override set is from that override (`override ...: warning: ...`), as
    an error there is, in validate, run and build(); a key the file writes keeps its file position (the note had no
    position and no override)."""
    import warnings

    from optreg.config.yaml_loader import read_yaml
    from optreg.integrations.hydra.support import load_with_overrides, override_location

    cfg = tmp_path / "cos.yaml"
    cfg.write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler: {name: CosineAnnealingLR, T_max: 50, eta_min: 0.0}\n"
                   "train: {steps: 50}\n")
    override = "scheduler.eta_min=0.5"
    note = ("scheduler.eta_min: eta_min 0.5 is at or above the lr 0.1, which it rises to, of group 0: the schedule "
            "never decays; lower scheduler.eta_min below the optimizer's lr")
    t_max = ("scheduler.T_max: T_max 50 spans 50 steps, more than the 4 steps of the run (train.steps or --steps): "
             "the schedule never finishes; set scheduler.T_max to 4")
    assert main(["validate", str(cfg), override]) == 0
    assert capsys.readouterr().err.splitlines() == [f"{cfg}: override {override}: warning: {note}"]
    assert main(["run", str(cfg), override, "--steps", "4"]) == 0
    assert capsys.readouterr().err.splitlines() == [f"{cfg}:2:38: warning: {t_max}",
                                                    f"override {override}: warning: {note}"]
    experiment = load_with_overrides(*read_yaml(cfg), [override], cfg)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optreg.build(experiment, model())
    assert [(w.message.note, w.message.location) for w in caught] == [(note, override_location(override))]


def test_overrides_resolve_only_the_formats_sections(tmp_path, capsys):
    """A composed file is read as its format reads it: the application's `???` and broken interpolations are left
    alone, optreg's own sections' are errors naming the key (a foreign format's reader reports its own)."""
    cfg = tmp_path / "app.yaml"
    cfg.write_text("optimizer: {name: SGD, lr: 0.1}\ntrain: {steps: 3}\ndata: {path: '???', n: '${nope}'}\n")
    assert main(["validate", str(cfg), "optimizer.lr=0.2"]) == 0
    assert main(["validate", str(cfg), "optimizer.lr=???"]) == 1
    assert capsys.readouterr().err.splitlines() == [f"{cfg}: override optimizer.lr=???: optimizer.lr: missing value "
                                                    f"(???): set it in the config or with an override"]


@pytest.mark.parametrize("override, text", [
    ("optimizer.eps=1e-6", "+optimizer.eps=1e-6"),        # not in the file: Hydra wants `+`
    ("optimizer.lr=0.1,0.2", "is a sweep"),
    ("optimizer.lr=[", "bad override"),
])
def test_run_bad_overrides(override, text, capsys):
    assert main(["run", QUICKSTART, override]) == 1
    assert text in capsys.readouterr().err


@pytest.mark.parametrize("override, path, says, suggestion", [
    ("scheduler=null", "scheduler", "Config group override must be a string or a list. Got NoneType", "~scheduler"),
    ("optimizer=1", "optimizer", "Config group override must be a string or a list. Got int", None),
    ("~optimizer.betas.0", "optimizer.betas[0]", "list indices must be integers or slices, not str", None),
    ("optimizer.param_groups.abc=1", "optimizer.param_groups.abc", "invalid literal for int() with base 10: 'abc'",
     None),
])
def test_an_override_hydra_cannot_apply_is_named_with_its_key(override, path, says, suggestion, capsys):
    """What Hydra raises as a ValueError or TypeError applying an override it parsed is that override's, at its key
    (it was `config.yaml:5:1: cannot compose the config: ...`, at the primary file's first key)."""
    config = str(APP / "conf" / "config.yaml")
    assert main(["validate", config, "train.steps=3", override]) == 1
    hint = f" (did you mean {suggestion!r}?)" if suggestion else ""
    assert capsys.readouterr().err == f"{config}: override {override}: {path}: Hydra cannot apply this override: " \
        f"{says}{hint}\n"


def test_run_and_validate_a_hydra_primary_config(capsys):
    config = str(APP / "conf" / "config.yaml")
    assert main(["validate", config, QUICKSTART]) == 0
    assert main(["run", config, "optimizer=sgd", "train.steps=2"]) == 0
    assert "torch.optim.sgd.SGD" in capsys.readouterr().out


def test_example_app_multirun(tmp_path):
    result = subprocess.run(
        [sys.executable, str(APP / "train.py"), "-m", "optimizer=adamw,sgd", "train.steps=3",
         f"hydra.sweep.dir={tmp_path}", "hydra/job_logging=none", "hydra/hydra_logging=none"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    finals = [line for line in result.stdout.splitlines() if "final loss" in line]
    assert [line.split(":")[0] for line in finals] == ["AdamW", "SGD"]
    assert all("after 3 steps" in line for line in finals)
    assert (tmp_path / "multirun.yaml").is_file() and (tmp_path / "1" / ".hydra" / "overrides.yaml").is_file()


# ---------------------------------------------------------------------------------------------------
# a scheduler group's length (null in its file) from the run
# ---------------------------------------------------------------------------------------------------
def _plot_rows(capsys, *args: str) -> list[str]:
    """`optreg plot --csv` of the quickstart with `args`: its rows (step, group, key, value)."""
    assert main(["plot", QUICKSTART, *args, "--csv"]) == 0, capsys.readouterr().err
    return capsys.readouterr().out.splitlines()[1:]


@pytest.mark.parametrize("overrides, explicit", [
    (["scheduler=one_cycle", "scheduler.max_lr=0.01"], "scheduler.total_steps=5"),
    (["scheduler=cosine_annealing"], "scheduler.T_max=5"),
    (["scheduler=cosine_annealing", "scheduler.T_max=null"], "scheduler.T_max=5"),
    (["scheduler=cosine_annealing", "scheduler.warmup={steps: 2}"], "scheduler.T_max=3"),   # run − the warmup
    (["scheduler=hf_cosine_with_min_lr", "scheduler.num_warmup_steps=2", "scheduler.min_lr=0"],
     "scheduler.num_training_steps=5"),
])
def test_a_scheduler_group_takes_its_length_from_the_run(overrides, explicit, capsys):
    """A group file writes the schedule's length null; `optreg run` and `optreg plot` fill it from the run, step
    for step what the length written as run − warmup gives."""
    assert main(["run", QUICKSTART, *overrides, "--steps", "5"]) == 0, capsys.readouterr().err
    implicit_run = capsys.readouterr().out.splitlines()[-2:]
    assert main(["run", QUICKSTART, *overrides, explicit, "--steps", "5"]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == implicit_run
    assert implicit_run[0].startswith("final loss") and implicit_run[1].startswith("lr: g0 ")
    rows = _plot_rows(capsys, *overrides, "--steps", "5")
    assert len(rows) >= 10 and rows == _plot_rows(capsys, *overrides, explicit, "--steps", "5")


def test_a_composed_scheduler_group_takes_its_length_from_train_steps():
    """The example app's config composed with a group switch and `train.steps`: build() gives the length left null
    the run's (− the warmup), value for value as written out."""
    for overrides, explicit in [(["scheduler=one_cycle", "scheduler.max_lr=0.01"],
                                 "scheduler.total_steps=6"),
                                (["scheduler.T_max=null", "scheduler.warmup={steps: 2}"], "scheduler.T_max=4")]:
        implicit = optreg.build(composed(*overrides, "train.steps=6", hydra=True), model())
        written = optreg.build(composed(*overrides, explicit, "train.steps=6", hydra=True), model())
        got = []
        for built in (implicit, written):
            got.append([])
            for _ in range(6):
                got[-1].append([g["lr"] for g in built.optimizer.param_groups])
                built.optimizer.step()
                built.scheduler.step()
        assert got[0] == got[1] and len({lr for lrs in got[0] for lr in lrs}) >= 5, overrides


@pytest.mark.parametrize("group, more", [
    ("mindspore_cosine_with_warm_up", ()), ("mindspore_cosine_with_restarts_and_warm_up", ()),
    ("mindspore_polynomial_with_warm_up", ()),
    ("mindspore_warm_up_stable_decay", ("scheduler.decay_start_steps=3",)),
    ("mindspore_constant_with_cool_down", ()), ("mindspore_linear_with_warm_up", ()),
])
def test_a_mindformers_schedule_group_takes_total_steps_from_train_steps(group, more):
    """MindFormers' warmup schedules' group files write total_steps null: the run's train.steps, value for value as
    written out (their rows leave the length undeclared, and they were refused: `required: total_steps`); without a
    run length it is the error of one left out, at the override that removed it (it was at the group switch, in the
    closed form's own words)."""
    overrides = (f"scheduler={group}", "+scheduler.learning_rate=0.01", "scheduler.warmup_steps=2", *more)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optreg.ConfigWarning)   # the schedule sets the lr AdamW's lr gives
        implicit = optreg.build(composed(*overrides, "train.steps=6", hydra=True), model())
        written = optreg.build(composed(*overrides, "scheduler.total_steps=6", "train.steps=6", hydra=True), model())
    schedule, expected = implicit.scheduler.schedules[0], written.scheduler.schedules[0]   # (each group's alike)
    assert schedule.total_steps == 6 and [schedule(t) for t in range(8)] == [expected(t) for t in range(8)]
    with pytest.raises(ConfigError) as exc:
        optreg.build(composed(*overrides, "~train.steps", hydra=True), model())
    assert messages(exc) == [f"override ~train.steps: {REMOVED.replace('T_max', 'total_steps')}"]


REMOVED = ("scheduler.T_max: required option is missing: left out or null, the schedule's length comes from the run's "
           "length (train.steps, train.epochs × steps_per_epoch, or build(total_steps=)), which this override removed")


def test_a_null_length_without_a_run_length_is_an_error_as_one_left_out(tmp_path, capsys):
    """A length left to the run (null in the group file, or by an override) whose run length an override removed:
    the error says so at that override (it was `scheduler.T_max: required option is missing` alone, and after a
    group switch advised `+scheduler.T_max`, which Hydra refuses for a key the group file has)."""
    null = composed("scheduler.T_max=null", "~train.steps", hydra=True)
    absent = composed("~train.steps", hydra=True)
    errors = []
    for cfg in (null, absent):
        with pytest.raises(ConfigError) as exc:
            optreg.build(cfg, model())
        errors.append(messages(exc))
    assert errors == [[f"override ~train.steps: {REMOVED}"]] * 2   # null in the group file
    config = str(APP / "conf" / "config.yaml")
    for argv in (["validate", config, "~train.steps"], ["plot", "--csv", config, "~train.steps"],
                 ["run", config, "~train.steps"], ["validate", QUICKSTART, "scheduler=cosine_annealing", "~train"]):
        assert main(argv) == 1
        removal = argv[-1]
        assert capsys.readouterr().err.strip().endswith(f"override {removal}: {REMOVED}"), argv
    path = tmp_path / "no_run.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler: {name: OneCycleLR, max_lr: 0.1}\n")
    assert main(["validate", str(path), "+scheduler.total_steps=null"]) == 1
    assert main(["validate", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [f"{path}: override +scheduler.total_steps=null: scheduler.total_steps: give total_steps, or epochs "
                   f"and steps_per_epoch",
                   f"{path}:2:1: scheduler.total_steps: give total_steps, or epochs and steps_per_epoch"]


# ---------------------------------------------------------------------------------------------------
# an override of a list element
# ---------------------------------------------------------------------------------------------------
def test_an_override_of_a_list_element_is_named_by_the_cli(capsys):
    """Hydra spells a list element `param_groups.0`, optreg's paths `param_groups[0]`: the error names the
    override, not the file's line of the element it replaced."""
    assert main(["run", QUICKSTART, "optimizer.param_groups.0.params=[nothing.*]"]) == 1
    assert capsys.readouterr().err.strip() == ("override optimizer.param_groups.0.params=[nothing.*]: "
                                               "optimizer.param_groups[0].params[0]: pattern 'nothing.*' matches no "
                                               "parameter")


def test_an_override_of_a_list_element_is_named_by_the_hydra_app(tmp_path):
    result = subprocess.run([sys.executable, "train.py", "optimizer.param_groups.0.weight_decay=-1",
                             "hydra/job_logging=none", "hydra/hydra_logging=none", f"hydra.run.dir={tmp_path}",
                             "hydra.output_subdir=null"],
                            capture_output=True, text=True, timeout=300, cwd=APP)
    assert result.returncode == 1
    assert ("optreg.errors.ConfigError: override optimizer.param_groups.0.weight_decay=-1: "
            "optimizer.param_groups[0].weight_decay: must be >= 0, got -1") in result.stderr.splitlines()


def test_an_override_of_a_list_element_names_that_element_alone():
    """`param_groups.1.lr` sets element 1 (not 10, not 0), and all of it below; the rest keeps the file's place."""
    from optreg.errors import Location
    from optreg.integrations.hydra.support import override_locator

    locate = override_locator(["optimizer.param_groups.1.lr=-1", "scheduler.schedulers.0={name: StepLR}"],
                              lambda path: Location("file.yaml", 1, 1))
    assert [str(locate(path)) for path in ("optimizer.param_groups[1].lr", "optimizer.param_groups[10].lr",
                                           "optimizer.param_groups[0].lr", "optimizer.param_groups[1]",
                                           "scheduler.schedulers[0].step_size", "scheduler.schedulers[1].name")] == \
        ["override optimizer.param_groups.1.lr=-1", "file.yaml:1:1", "file.yaml:1:1", "file.yaml:1:1",
         "override scheduler.schedulers.0={name: StepLR}", "file.yaml:1:1"]


def test_the_example_app_trains_as_optreg_run_does(tmp_path, capsys):
    """The app's loop is `optreg run`'s: the same composed config (clipping, accumulation, a length in epochs)
    gives the same final loss in both."""
    overrides = ["+clip_grad.max_norm=0.05", "+train.accumulation_steps=2", "~train.steps", "+train.epochs=3",
                 "+train.steps_per_epoch=4"]
    composed_file = tmp_path / "composed.yaml"
    composed_file.write_text(OmegaConf.to_yaml(composed(*overrides)), encoding="utf-8")
    assert main(["run", str(composed_file)]) == 0, capsys.readouterr().err
    cli = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("final loss"))
    result = subprocess.run([sys.executable, "train.py", *overrides, "hydra/job_logging=none",
                             "hydra/hydra_logging=none", f"hydra.run.dir={tmp_path / 'run'}",
                             "hydra.output_subdir=null"],
                            capture_output=True, text=True, timeout=300, cwd=APP)
    assert result.returncode == 0, result.stderr
    app_loss = result.stdout.split("final loss ")[1].split()[0]
    assert cli.split()[2] == app_loss and "(after 12 steps, 6 optimizer steps)" in cli
    assert "(after 12 steps)" in result.stdout


def test_a_warmup_of_the_whole_run_is_refused_with_the_schedules_length_from_the_group_or_written(capsys):
    """The app's config leaves T_max to the run: a warmup of 60 steps in the 50-step run is the one error, and the
    same with T_max written (no warning with a negative length)."""
    config = str(APP / "conf" / "config.yaml")
    message = ("override scheduler.warmup={steps: 60}: scheduler.warmup: a warmup of 60 steps leaves none of the "
               "50-step run to CosineAnnealingLR; shorten the warmup")
    for extra in ([], ["scheduler.T_max=10"]):
        assert main(["validate", config, "scheduler.warmup={steps: 60}", *extra]) == 1
        assert capsys.readouterr().err == f"{config}: {message}\n", extra


def test_the_python_calls_take_a_composed_config_s_nodes_as_build_takes_it():
    """configure_optimizer(**cfg.optimizer-like nodes), configure_lr_scheduler(opt, cfg.scheduler) and
    optimizer_class() read OmegaConf lists and mappings as build() reads the DictConfig (param_groups, a ListConfig,
    was 'expected a list of rules'); `???` and a broken interpolation are errors at their key."""
    cfg = OmegaConf.create({"train": {"steps": 6}, "optimizer": {"lr": 0.1, "betas": [0.8, 0.9], "param_groups": [
        {"params": ["*.bias"], "weight_decay": 0.0}]}, "scheduler": [{"name": "LinearLR", "total_iters": 2},
                                                                  {"name": "StepLR", "step_size": "${train.steps}"}]})
    model = make_model(32, 2, 0)
    opt = optreg.configure_optimizer("AdamW", model, **cfg.optimizer)
    sched = optreg.configure_lr_scheduler(opt, cfg.scheduler)
    plain = OmegaConf.to_container(cfg, resolve=True)
    built = optreg.build({"optimizer": {"name": "AdamW", **plain["optimizer"]}, "scheduler": plain["scheduler"]},
                         make_model(32, 2, 0))
    assert [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups] == \
        [{k: v for k, v in g.items() if k != "params"} for g in built.optimizer.param_groups]
    lrs = []
    for o, s in ((opt, sched), (built.optimizer, built.scheduler)):
        lrs.append([])
        for _ in range(8):
            lrs[-1].append(o.param_groups[0]["lr"])
            o.step()
            s.step()
    assert lrs[0] == lrs[1]
    bound = optreg.optimizer_class("AdamW", betas=cfg.optimizer.betas)
    assert bound(model.parameters()).defaults["betas"] == (0.8, 0.9)
    broken = OmegaConf.create({"lr": "???", "param_groups": [{"params": "${nope}"}]})
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("AdamW", model, param_groups=broken.param_groups)
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("param_groups[0].params", "cannot resolve interpolation: Interpolation key 'nope' not found")]


def test_the_python_calls_take_a_shipped_group_file_s_node_as_build_takes_it():
    """A group file carries optreg's `_target_` and `_recursive_`: configure_optimizer(name, model, **node),
    configure_lr_scheduler(opt, cfg.scheduler) and optimizer_class() read them as build() does (they were 'unknown
    option of torch.AdamW'); another `_target_` is refused with build()'s words, at its key."""
    cfg = composed("optimizer=adamw", "optimizer.lr=0.1", "scheduler=step", "scheduler.step_size=3",
                   "scheduler.warmup={steps: 2}")
    options = {k: v for k, v in cfg.optimizer.items() if k != "name"}
    opt = optreg.configure_optimizer(cfg.optimizer.name, model(), **options)
    sched = optreg.configure_lr_scheduler(opt, cfg.scheduler)
    built = optreg.build(cfg, model())
    lrs = []
    for o, s in ((opt, sched), (built.optimizer, built.scheduler)):
        lrs.append([])
        for _ in range(7):
            lrs[-1].append([g["lr"] for g in o.param_groups])
            o.step()
            s.step()
    assert lrs[0] == lrs[1] and [lr[0] for lr in lrs[0]] == pytest.approx([1e-4, 0.05005, 0.1, 0.1, 0.1, 0.01, 0.01])
    bound = optreg.optimizer_class("AdamW", **{k: v for k, v in options.items() if k != "param_groups"})
    assert bound(model().parameters()).defaults["lr"] == 0.1
    refused = "_target_ 'os.system' is refused (optreg builds components from their name); only " \
              "'optreg.integrations.hydra.support.{0}_factory', 'optreg.configure_{1}', " \
              "'optreg.core.build.configure_{1}' are accepted here"
    with pytest.raises(ConfigError) as info:
        optreg.configure_optimizer("SGD", model(), lr=0.1, _target_="os.system")
    assert [(e.path, e.message) for e in info.value.errors] == [("_target_", refused.format("optimizer", "optimizer"))]
    with pytest.raises(ConfigError) as info:
        optreg.configure_lr_scheduler(opt, [{**cfg.scheduler, "_target_": "os.system"}])
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("schedulers[0]._target_", refused.format("scheduler", "lr_scheduler"))]

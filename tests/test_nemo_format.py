"""The `nemo` config format against NeMo's own code: the corpus (tests/fixtures/nemo/configs: NeMo's
examples/**/conf files, and synthetic configs for its rules) replayed against runs recorded from NeMo's
lr_scheduler.py / optimizers.py (scripts/record_nemo.py): the lr at the recorded steps and the weights after three
optimizer steps on the stand-in (tests/nemo_standin.py)."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest
import libai_corpus
import torch
from nemo_standin import model as standin, set_grads

import optreg
from optreg import ConfigError
from optreg.api import to_experiment

FIXTURES = Path(__file__).parent / "fixtures" / "nemo"
CONFIGS = sorted(p for p in (FIXTURES / "configs").glob("*.yaml") if not p.stem.startswith("refused_"))
REFUSED = sorted((FIXTURES / "configs").glob("refused_*.yaml"))
RUNS = {p.stem: p for p in (FIXTURES / "runs").glob("*.json")}
PROVENANCE = re.compile(r"^# from (NVIDIA/NeMo@[0-9a-f]{40}:examples/\S+/conf/\S+\.yaml$|optreg \(synthetic\): )")


def _needs_library(path: Path) -> None:
    """NeMo's Novograd is read as pytorch_optimizer's NovoGrad (the `libraries` extra): skipped without it."""
    if "name: novograd" in path.read_text():
        pytest.importorskip("pytorch_optimizer")


def _build(path: Path, fixture: dict, model: torch.nn.Module):
    _needs_library(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the warning of a schedule NeMo does not build (tested below)
        return optreg.build(str(path), model, steps_per_epoch=fixture["steps_per_epoch"])


def test_corpus_size_and_provenance():
    real = [p for p in CONFIGS if not p.stem.startswith("synthetic")]
    assert len(real) >= 15 and len(REFUSED) >= 4
    assert {p.stem for p in CONFIGS} == set(RUNS)
    for path in CONFIGS + REFUSED:
        assert PROVENANCE.match(path.read_text().splitlines()[0]), path.name


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_lr_as_nemo_schedules_it(path):
    fixture = json.loads(RUNS[path.stem].read_text())
    assert fixture["config"] == path.relative_to(FIXTURES.parent.parent.parent).as_posix()
    built = _build(path, fixture, standin())
    assert (built.scheduler is None) == (fixture["scheduler"] is None)
    steps = fixture["record_steps"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row = 0
        for t in range(steps[-1] + 1):
            if t == steps[row]:
                got = [g["lr"] for g in built.optimizer.param_groups]
                assert got == pytest.approx(fixture["lrs"][row], rel=1e-6, abs=1e-15), f"step {t}"
                row += 1
            if built.scheduler is not None:
                built.scheduler.step()


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_three_steps_of_weights(path):
    fixture = json.loads(RUNS[path.stem].read_text())
    model = standin()
    built = _build(path, fixture, model)
    for t, want in enumerate(fixture["weights"]):
        set_grads(model, t)
        built.clip_gradients(model)
        built.optimizer.step()
        if built.scheduler is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                built.scheduler.step()
        for name, p in model.named_parameters():
            torch.testing.assert_close(p.detach(), torch.tensor(want[name]).reshape(p.shape), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("path, where, fragment", [
    ("refused_synthetic_novograd_grad_averaging", "model.optim.grad_averaging", "not the same first step"),
    ("refused_megatron_falcon_config", "model.optim.name", "data-parallel"),
    ("refused_rad-tts_dec", "model.optim.name", "NeMo's optimizers"),
    ("refused_vits", "model.optim.sched.lr_decay", "unknown"),
])
def test_refused_configs_name_the_reason(path, where, fragment):
    path = FIXTURES / "configs" / f"{path}.yaml"
    with pytest.raises(ConfigError) as info:
        optreg.load_config(str(path))
    assert where in [e.path for e in info.value.errors], str(info.value)
    assert fragment in str(info.value)
    assert str(info.value).startswith(f"{path}:")   # located in the file


def test_max_steps_minus_one_builds_no_schedule_and_warns():
    path = FIXTURES / "configs" / "synthetic_max_steps_minus_one.yaml"
    with pytest.warns(UserWarning, match="max_steps is -1"):
        experiment = optreg.load_config(str(path))
    assert experiment.scheduler is None
    assert any("constant" in note for note in experiment.notes)
    assert any(u.path == "model.optim.sched.max_steps" for u in experiment.report)


def test_trainer_max_steps_replaces_the_schedules():
    config = {"model": {"optim": {"name": "adamw", "lr": 0.1, "sched": {"name": "CosineAnnealing", "max_steps": 7}}},
              "trainer": {"max_steps": 50}}
    experiment = to_experiment(config)
    assert experiment.format == "nemo"
    assert experiment.scheduler["max_steps"] == 50 and experiment.run.steps == 50
    uses = {u.path: u for u in experiment.report}
    assert "trainer.max_steps" in uses["model.optim.sched.max_steps"].why


def test_a_run_length_given_beside_the_file_replaces_trainer_max_steps():
    """trainer.max_steps is the file's own run length: build(total_steps=) replaces it, as `--steps` does (it was
    read as a train.steps the file does not have, and total_steps=3 was a ConfigError at that key)."""
    config = {"model": {"optim": {"name": "adamw", "lr": 0.1, "sched": {"name": "CosineAnnealing"}}},
              "trainer": {"max_steps": 50}}
    assert to_experiment(config).run.source == "trainer.max_steps"
    with pytest.warns(UserWarning, match="more than the 3 steps of the run"):
        built = optreg.build(config, torch.nn.Linear(2, 2), total_steps=3)
    assert built.scheduler is not None


def test_translated_to_optregs_own_form():
    path = FIXTURES / "configs" / "synthetic_accumulate_fused_adam.yaml"
    experiment = optreg.load_config(str(path))
    assert experiment.optimizer == {"name": "Adam", "lr": 0.001, "weight_decay": 0.0001, "betas": [0.9, 0.98]}
    assert experiment.scheduler == {"name": "WarmupHoldPolicy", "dialect": "nemo", "warmup_ratio": 0.1,
                                    "hold_steps": 10, "min_lr": 1e-05}
    assert experiment.train.epochs == 3 and experiment.clip.max_norm == 1.0
    verdicts = {u.path: u.verdict for u in experiment.report}
    assert verdicts["trainer.accumulate_grad_batches"] == "trainer"
    assert verdicts["model.optim.adam_w_mode"] == "exact"


def test_unresolvable_interpolation_is_located(tmp_path):
    path = tmp_path / "cfg.yaml"
    path.write_text("model:\n  optim:\n    name: adam\n    lr: ${model.missing}\ntrainer: {max_steps: 10}\n")
    with pytest.raises(ConfigError) as info:
        optreg.load_config(str(path))
    assert info.value.errors[0].path == "model.optim.lr"
    assert str(info.value).startswith(f"{path}:4:")


def test_optimizer_option_errors_point_at_the_nemo_keys(tmp_path):
    path = tmp_path / "cfg.yaml"
    path.write_text("model:\n  optim:\n    name: adamw\n    lr: 0.1\n    betas: [0.9, 1.5]\n")
    with pytest.raises(ConfigError) as info:
        optreg.load_config(str(path))
    assert info.value.errors[0].path.startswith("model.optim.betas")
    assert str(info.value).startswith(f"{path}:5:")


def test_optim_param_groups_are_refused():
    config = {"model": {"optim": {"name": "sgd", "lr": 0.1}, "optim_param_groups": {"encoder": {"lr": 0.01}}}}
    with pytest.raises(ConfigError) as info:
        optreg.build(config, standin())
    assert [e.path for e in info.value.errors] == ["model.optim_param_groups"]


def test_a_value_omegaconf_cannot_read_is_located():
    """Found by the fuzz suite: a nesting deeper than OmegaConf recurses, in a key of the application's."""
    deep: object = 1
    for _ in range(1500):
        deep = [deep]
    with pytest.raises(ConfigError) as info:
        optreg.build({"model": {"optim": {"name": "adam", "lr": 0.1}}, "key": deep}, standin())
    assert info.value.errors[0].path == "key" and "RecursionError" in str(info.value)


def test_a_key_omegaconf_cannot_hold_in_a_file_is_at_its_position(tmp_path):
    # the error had its path but no position in the file
    path = tmp_path / "cfg.yaml"
    path.write_text("model:\n  optim: {name: adam, lr: 0.1}\n  encoder: {null: 1}\ntrainer: {max_steps: 10}\n")
    with pytest.raises(ConfigError) as info:
        optreg.load_config(str(path))
    assert [str(e) for e in info.value.errors] == [
        f"{path}:3:13: model.encoder.None: OmegaConf cannot hold this: KeyValidationError: Incompatible key type "
        f"'NoneType'"]   # at the key, as a composed file's (test_hydra_compose), in the same words


def test_novograd_is_pytorch_optimizers_novograd():
    """NeMo's Novograd (citrinet_384, recorded above with NeMo's own class) is read as pytorch_optimizer's NovoGrad;
    its options that NovoGrad lacks are refused only when on."""
    _needs_library(FIXTURES / "configs" / "citrinet_384.yaml")
    experiment = optreg.load_config(str(FIXTURES / "configs" / "citrinet_384.yaml"))
    assert (experiment.optimizer["name"], experiment.optimizer["dialect"]) == ("NovoGrad", "pytorch_optimizer")
    text = (FIXTURES / "configs" / "citrinet_384.yaml").read_text()
    off = text.replace("    weight_decay: 0.001\n", "    weight_decay: 0.001\n    amsgrad: false\n    luc: false\n"
                                                       "    luc_trust: 0.1\n")
    report = {u.path: u.why for u in optreg.load_config(off).report}
    assert report["model.optim.amsgrad"] == "off" and report["model.optim.luc_trust"] == "unused without luc"
    for key in ("amsgrad", "luc"):
        with pytest.raises(ConfigError) as info:
            optreg.load_config(off.replace(f"{key}: false", f"{key}: true"))
        assert [e.path for e in info.value.errors] == [f"model.optim.{key}"]


def test_the_optimizer_args_form_is_read_as_nemo_reads_it():
    """NeMo's older `model.optim.args` form (setup_optimization, parse_optimizer_args): params moved up into args;
    with `name: auto` the optimizer takes the fields of <name>_params, args' keys over their defaults (AdamW's
    weight_decay 0, not torch's 0.01), model.optim.lr over args.lr; what beside args NeMo does not read is said (the
    corpus' synthetic_optim_args_auto is NeMo's lr and weights)."""
    path = FIXTURES / "configs" / "synthetic_optim_args_auto.yaml"
    with pytest.warns(UserWarning, match=r"NeMo does not read model.optim.weight_decay 0.5: its args form gives the "
                                         r"optimizer the defaults of adamw_params"):
        experiment = optreg.load_config(str(path))
    assert experiment.optimizer == {"name": "AdamW", "lr": 0.01, "betas": [0.8, 0.9], "eps": 1e-8, "weight_decay": 0,
                                    "amsgrad": False}
    report = {u.path: (u.verdict, u.why) for u in experiment.report}
    assert report["model.optim.args.name"] == ("exact", "NeMo gives the optimizer the fields of adamw_params: args' "
                                                        "keys over its defaults (eps 1e-08, weight_decay 0, amsgrad "
                                                        "False)")
    assert report["model.optim.args.params.betas"] == ("exact", "")
    assert report["model.optim.weight_decay"] == ("exact", "not read by NeMo beside args")
    # SpeakerNet's Novograd: args' keys without params, read as the plain form reads them
    config = {"model": {"optim": {"name": "novograd", "lr": 0.01, "args": {"name": "auto", "betas": [0.95, 0.5]}}},
              "trainer": {"max_steps": 10}}
    pytest.importorskip("pytorch_optimizer")
    assert to_experiment(config, "nemo").optimizer == {"name": "NovoGrad", "dialect": "pytorch_optimizer",
                                                       "lr": 0.01, "betas": [0.95, 0.5], "eps": 1e-8,
                                                       "weight_decay": 0}


@pytest.mark.parametrize("optim, where, message, near", [
    ({"name": "adam", "lr": 0.1, "args": {"name": "auto", "params": {"betas": [0.8, 0.9]}}},
     "model.optim.args.params.betas", "not a field of NeMo's adam_params, which refuses it (OmegaConf.merge)", None),
    ({"name": "adamw", "args": {"name": "auto"}}, "model.optim.args.name",
     "NeMo's adamw_params leaves lr missing (???) unless model.optim.lr or args.lr gives it", None),
    ({"name": "fused_adam", "lr": 0.1, "args": {"name": "auto"}}, "model.optim.args.name",
     "auto takes fused_adam_params, which NeMo does not register", None),
    ({"name": "adamw", "lr": 0.1, "args": {"name": "adamw_parms"}}, "model.optim.args.name",
     "not one of NeMo's optimizer parameter classes", "adamw_params"),
    ({"name": "adamw", "lr": 0.1, "args": {"cls": "nemo.core.config.AdamWParams"}}, "model.optim.args.cls",
     "NeMo's _target_ form of args instantiates an optimizer parameter class by path", None),
    ({"name": "sgd", "lr": 0.1, "args": {"params": [0.9]}}, "model.optim.args.params",
     "NeMo moves params' keys into args: expected a mapping, got [0.9]", None),
    ({"name": "sgd", "lr": 0.1, "args": {"params": {"momentum": -0.9}}}, "model.optim.args.params.momentum",
     "must be >= 0", None),
])
def test_the_optimizer_args_form_refuses_what_nemo_refuses(optim, where, message, near):
    """What NeMo fails on in the args form (a key that is no field of the parameter class, its lr left missing, an
    unregistered class: apex's fused_adam has none) or instantiates by class path is an error at its key; so is a bad
    value of args, as the plain form's."""
    with pytest.raises(ConfigError) as info:
        optreg.build({"model": {"optim": optim}, "trainer": {"max_steps": 10}}, standin())
    assert [e.path for e in info.value.errors] == [where] and message in info.value.errors[0].message
    assert info.value.errors[0].suggestion == near


def test_a_schedules_params_move_up_into_it_as_nemo_moves_them(tmp_path):
    """NeMo moves a schedule's params: up into it before reading (maybe_update_config_version), over a key of the
    same name and over the max_steps trainer.max_steps gave it (the corpus' synthetic_sched_params is NeMo's lr);
    a key inside params is located there."""
    experiment = optreg.load_config(str(FIXTURES / "configs" / "synthetic_sched_params.yaml"))
    assert experiment.scheduler == {"name": "CosineAnnealing", "dialect": "nemo", "warmup_steps": 10,
                                    "min_lr": 0.01, "max_steps": 60}
    report = {u.path: u.verdict for u in experiment.report}
    assert report["model.optim.sched.params.min_lr"] == "exact"
    own = tmp_path / "own.yaml"
    own.write_text("model:\n  optim:\n    name: sgd\n    lr: 0.1\n    sched:\n      name: CosineAnnealing\n"
                   "      params:\n        min_lr: 0.01\n        warmup_stesp: 10\ntrainer: {max_steps: 50}\n")
    with pytest.raises(ConfigError) as info:
        optreg.load_config(str(own))
    assert [(e.path, e.location.line) for e in info.value.errors] == [("model.optim.sched.params.warmup_stesp", 9)]


def test_a_schedule_without_name_builds_none_and_warns():
    """prepare_lr_scheduler warns and builds no scheduler from a schedule without name: the optimizer trains at
    its constant lr (the corpus' synthetic_sched_no_name is NeMo's lr), said in the notes and the report."""
    path = FIXTURES / "configs" / "synthetic_sched_no_name.yaml"
    with pytest.warns(UserWarning, match="NeMo builds no scheduler from a schedule without name"):
        experiment = optreg.load_config(str(path))
    assert experiment.scheduler is None
    assert any(note.startswith("model.optim.sched: NeMo builds no scheduler") for note in experiment.notes)
    report = {u.path: (u.verdict, u.why) for u in experiment.report}
    assert report["model.optim.sched.warmup_steps"] == ("exact", "not read: NeMo builds no scheduler without a "
                                                                 "name")
    assert "the lr stays constant" in report["model.optim.sched"][1]


def test_the_sched_args_form_is_read_as_nemo_reads_it(tmp_path):
    """NeMo's older `sched.args` form (prepare_lr_scheduler): with `name:` (auto: the schedule's name + Params) the
    schedule takes that parameter class's defaults, and what else args holds is said, not read (the corpus'
    synthetic_sched_args_auto is NeMo's lr); without `name:` args' keys are the keywords, at their own paths."""
    path = FIXTURES / "configs" / "synthetic_sched_args_auto.yaml"
    with pytest.warns(UserWarning, match="NeMo does not read model.optim.sched.args.warmup_ratio 0.1"):
        experiment = optreg.load_config(str(path))
    assert experiment.scheduler == {"name": "CosineAnnealing", "dialect": "nemo", "warmup_steps": None,
                                    "warmup_ratio": None, "last_epoch": -1, "constant_steps": None,
                                    "constant_ratio": None, "min_lr": 0.0, "max_steps": 100}
    report = {u.path: (u.verdict, u.why) for u in experiment.report}
    assert report["model.optim.sched.args.name"] == ("exact", "NeMo builds the schedule from the defaults of "
                                                     "CosineAnnealingParams (warmup_steps None, warmup_ratio None, "
                                                     "last_epoch -1, constant_steps None, constant_ratio None, "
                                                     "min_lr 0.0)")
    assert report["model.optim.sched.args.params.min_lr"][1] == ("not read by NeMo, which takes the defaults of "
                                                                 "CosineAnnealingParams")
    assert report["model.optim.sched.warmup_steps"] == ("exact", "not read by NeMo beside args")
    own = tmp_path / "own.yaml"
    own.write_text("model:\n  optim:\n    name: sgd\n    lr: 0.1\n    sched:\n      name: WarmupAnnealing\n"
                   "      args:\n        warmup_steps: 10\n        warmup_ratoi: 0.1\ntrainer: {max_steps: 50}\n")
    with pytest.raises(ConfigError) as info:
        optreg.load_config(str(own))
    assert [(e.path, e.location.line) for e in info.value.errors] == [("model.optim.sched.args.warmup_ratoi", 9)]
    experiment = optreg.load_config(own.read_text().replace("        warmup_ratoi: 0.1\n", ""))
    assert (experiment.scheduler["warmup_steps"], experiment.scheduler["max_steps"]) == (10, 50)
    assert {u.path: u.verdict for u in experiment.report}["model.optim.sched.args.warmup_steps"] == "exact"


@pytest.mark.parametrize("fixture, position, begins", [
    ("synthetic_sched_args_auto", "10:7", "NeMo does not read model.optim.sched.args.warmup_ratio 0.1"),
    ("synthetic_max_steps_minus_one", "11:7", "NeMo builds no scheduler when the schedule's max_steps is -1"),
    ("synthetic_optim_args_auto", "7:5", "NeMo does not read model.optim.weight_decay 0.5"),
])
def test_a_readers_warning_is_at_the_keys_file_position(fixture, position, begins, capsys):
    """What the reader warns of while reading a file (args it does not read, a schedule NeMo builds none of) is at
    the position of the key it is about (sched.args, sched.max_steps, optim.args), as an error there is: a
    ConfigWarning with its location, which validate prints as `file:line:col: warning: ...`."""
    from optreg.cli import main
    from optreg.errors import ConfigWarning

    path = str(FIXTURES / "configs" / f"{fixture}.yaml")
    with pytest.warns(ConfigWarning) as caught:
        optreg.load_config(path)
    assert [f"{w.message.location}" for w in caught if isinstance(w.message, ConfigWarning)] == \
        [f"{path}:{position}"]
    main(["validate", path])
    assert capsys.readouterr().err.startswith(f"{path}:{position}: warning: {begins}")


@pytest.mark.parametrize("args, where, message", [
    ({"name": "auto"}, "model.optim.sched.args.name", "auto takes StepLRParams, which NeMo does not register"),
    ({"name": "CosineAnealingParams"}, "model.optim.sched.args.name", "not one of NeMo's scheduler parameter"),
    ({"cls": "nemo.core.config.schedulers.StepLRParams"}, "model.optim.sched.args.cls", "_target_ form"),
    ({"name": "auto", "params": 3}, "model.optim.sched.args.params", "expected a mapping, got 3"),
])
def test_the_sched_args_form_refuses_what_nemo_refuses(args, where, message):
    """What prepare_lr_scheduler fails on (an unregistered parameter class: StepLR has none registered) or
    instantiates by class path is an error at its key."""
    config = {"model": {"optim": {"name": "sgd", "lr": 0.1, "sched": {"name": "StepLR", "args": args}}},
              "trainer": {"max_steps": 10}}
    with pytest.raises(ConfigError) as info:
        optreg.build(config, standin())
    assert [e.path for e in info.value.errors] == [where] and message in info.value.errors[0].message
    if "Anealing" in str(args):
        assert info.value.errors[0].suggestion == "CosineAnnealingParams"


BLANK_EPOCHS = """\
max_epochs: ???
max_steps: 50
model:
  optim:
    _target_: torch.optim.AdamW
    lr: 1.0e-3
    sched: {name: StepLR, step_size: 10, gamma: 0.5}
trainer:
  max_steps: ${max_steps}
  max_epochs: ${max_epochs}
"""


def test_a_blank_max_epochs_is_lightnings_unless_it_is_the_run():
    """audio_codec_16000.yaml leaves max_epochs `???` for the command line beside max_steps 200000: NeMo's schedule
    and the run follow max_steps, so the blank is Lightning's (the file was refused at it). Without max_steps it is
    the run's, an error at its key, unless a run length is given beside the file."""
    experiment = optreg.load_config(BLANK_EPOCHS)
    assert experiment.run.steps == 50 and experiment.scheduler["step_size"] == 10
    assert {u.path: u.verdict for u in experiment.report}["trainer.max_epochs"] == "trainer"
    no_steps = BLANK_EPOCHS.replace("  max_steps: ${max_steps}\n", "")
    with pytest.raises(ConfigError) as info:
        optreg.load_config(no_steps)
    assert [e.path for e in info.value.errors] == ["trainer.max_epochs"]
    built = optreg.build(no_steps, standin(), total_steps=30)
    assert built.run.steps == 30


def test_an_epoch_schedule_without_its_steps_per_epoch_is_said_at_its_name(tmp_path):
    """NeMo steps ExponentialLR per epoch (EPOCH_SCHEDULERS): without the steps per epoch the error was at
    model.optim.sched.by_epoch, a key the file does not write, located at sched:."""
    path = tmp_path / "cfg.yaml"
    path.write_text("model:\n  optim:\n    name: adam\n    lr: 0.01\n    sched:\n      name: ExponentialLR\n"
                    "      gamma: 0.9\ntrainer:\n  max_steps: 30\n")
    with pytest.raises(ConfigError) as info:
        optreg.build(str(path), standin())
    assert [(e.path, e.location.line, e.location.column) for e in info.value.errors] == [
        ("model.optim.sched.name", 6, 7)]
    assert info.value.errors[0].message.startswith("a schedule counted in epochs needs the steps per epoch")


# ---------------------------------------------------------------------------------------------------
# with Hydra overrides (the file composed) and as a DictConfig: only what the reader reads is resolved
# ---------------------------------------------------------------------------------------------------
FINETUNE = FIXTURES / "configs" / "speech_to_text_finetune.yaml"   # model.train_ds.manifest_filepath: ???


def _with_overrides(path: Path, *overrides: str):
    from optreg.config.yaml_loader import read_yaml
    from optreg.integrations.hydra.support import load_with_overrides

    data, source = read_yaml(path)
    return load_with_overrides(data, source, list(overrides), path)


def test_an_override_leaves_the_applications_blanks_alone(capsys):
    """The dataset paths the file leaves `???` are the application's, with an override as without one (they were
    `missing value` errors once the file was composed); the override's values are what is built."""
    from optreg.cli import main

    assert main(["validate", str(FINETUNE), "--steps", "20000"]) == 0   # its max_steps from the epochs: the run's
    assert main(["validate", str(FINETUNE), "model.optim.lr=1e-3", "--steps", "20000"]) == 0
    assert capsys.readouterr().out.strip().endswith(": ok")
    experiment = _with_overrides(FINETUNE, "model.optim.lr=1e-3", "model.optim.sched.min_lr=1e-5",
                                 "trainer.max_steps=20000")
    built = optreg.build(experiment, standin())
    assert built.optimizer.defaults["lr"] == 1e-3 and built.run.steps == 20000
    assert built.scheduler.schedules[0].min_lr == 1e-5 and built.scheduler.schedules[0].max_steps == 20000


@pytest.mark.parametrize("name", ["asr_adaptation_hp", "hifigan", "megatron_bart_config"])
def test_an_override_on_a_file_with_its_own_defaults_and_hydra_nodes(name):
    """A NeMo file's own `defaults:` and `hydra:` (its launcher, a sweep) name NeMo's Hydra tree, which no reader
    reads: with an override it composes without them (Hydra looked for hydra/launcher/nemo_launcher) and builds what
    it builds without the override, but for the override's value."""
    path = FINETUNE.parent / f"{name}.yaml"
    plain = optreg.build(str(path), standin(), total_steps=1000)
    experiment = _with_overrides(path, "model.optim.lr=0.125")
    built = optreg.build(experiment, standin(), total_steps=1000)
    assert built.optimizer.defaults["lr"] == 0.125 != plain.optimizer.defaults["lr"]
    assert type(built.optimizer) is type(plain.optimizer) and type(built.scheduler) is type(plain.scheduler)


@pytest.mark.parametrize("override, message", [
    ("model.optim.lr=-1", "must be >= 0, got -1"),
    ("model.optim.lr=${model.train_ds.manifest_filepath}", "Missing mandatory value"),   # a blank the reader reads
    ("model.optim.lr=${nope}", "Interpolation key 'nope' not found"),
])
def test_a_bad_override_of_what_the_reader_reads_names_the_override(override, message):
    with pytest.raises(ConfigError) as info:
        _with_overrides(FINETUNE, override)
    (item,) = info.value.errors
    assert item.path == "model.optim.lr" and message in item.message and str(item.location) == f"override {override}"


def test_a_misspelt_interpolation_is_said_as_in_optreg_s_own_form(tmp_path):
    """An interpolation the reader resolves that names a key the file lacks: the own form's words and its closest key
    (it was "OmegaConf cannot resolve this value: InterpolationKeyError: ...", without one), at the key, from the
    file or from an override; a value left `???`, the own form's missing value."""
    from optreg.errors import MISSING_VALUE

    path = tmp_path / "conf.yaml"
    path.write_text("model:\n  encoder: {d_model: 256}\n  optim:\n    name: adamw\n    lr: 2.0\n    sched:\n"
                    "      name: NoamAnnealing\n      d_model: ${model.encoder.d_modl}\n      warmup_steps: 10\n"
                    "trainer: {max_steps: 100}\n")
    for read, line in ((lambda: optreg.load_config(path), "8:7"),
                       (lambda: _with_overrides(path, "model.optim.sched.d_model=${model.encoder.dmodel}"), None)):
        with pytest.raises(ConfigError) as info:
            read()
        (item,) = info.value.errors
        key = "model.encoder.d_modl" if line else "model.encoder.dmodel"
        assert (item.path, item.message, item.suggestion) == (
            "model.optim.sched.d_model", f"cannot resolve interpolation: Interpolation key '{key}' not found",
            "model.encoder.d_model")
        assert str(item.location).endswith(f"conf.yaml:{line}") if line else str(item.location).startswith("override")
    path.write_text(path.read_text().replace("lr: 2.0", "lr: ???"))   # a blank the reader reads: as a composed one's
    with pytest.raises(ConfigError) as info:
        optreg.load_config(path)
    assert [(e.path, e.message, str(e.location)) for e in info.value.errors] == [
        ("model.optim.lr", MISSING_VALUE, f"{path}:5:5")]


@pytest.mark.parametrize("override, path, message", [
    ("+optimizer=sgd", "optimizer", "the nemo format does not read optreg's optimizer: section (it reads model.optim); "
                                    "set it there: model.optim.name=sgd"),
    ("scheduler=step", "scheduler", "the nemo format does not read optreg's scheduler: section (it reads "
                                    "model.optim.sched); set it there: model.optim.sched.name=step"),
    ("+clip_grad.max_norm=1", "clip_grad.max_norm", "the nemo format does not read optreg's clip_grad: section (it "
                                                    "reads trainer); set it there: trainer.gradient_clip_val=1"),
    # without `+` too (Hydra refused it as a key the file lacks: "Could not override 'optimizer.lr'", no NeMo key)
    ("optimizer.lr=0.1", "optimizer.lr", "the nemo format does not read optreg's optimizer: section (it reads "
                                         "model.optim); set it there: model.optim.lr=0.1"),
    ("clip_grad.max_norm=1", "clip_grad.max_norm", "the nemo format does not read optreg's clip_grad: section (it "
                                                   "reads trainer); set it there: trainer.gradient_clip_val=1"),
])
def test_an_override_of_a_section_the_reader_does_not_read_is_an_error(override, path, message):
    """optreg's own sections added to a NeMo file by an override were passed over without a word (the reader reads
    model.optim): an error at the override, saying where NeMo takes the value, whether the override adds the key
    or sets it; optreg's train: beside it is read."""
    with pytest.raises(ConfigError) as info:
        _with_overrides(FINETUNE, override)
    assert [(e.path, e.message, str(e.location)) for e in info.value.errors] == [
        (path, message, f"override {override}")]
    assert _with_overrides(FINETUNE, "+train.steps=20000").run.steps == 20000


def test_an_override_of_optreg_s_optimizer_on_another_foreign_file_is_an_error(tmp_path):
    """The same rule for every foreign format: an HF file stays HF's with `+optimizer=sgd` (its keys were dropped
    for the group file's, as optreg's own form); a DeepSpeed file does not read optreg's clip_grad:."""
    hf = tmp_path / "args.yaml"
    hf.write_text("learning_rate: 0.001\nlr_scheduler_type: linear\nmax_steps: 100\n")
    ds = tmp_path / "ds.yaml"
    ds.write_text("train_batch_size: 8\noptimizer: {type: Adam, params: {lr: 0.001}}\n")
    with pytest.raises(ConfigError) as info:
        _with_overrides(hf, "+optimizer=sgd")
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("optimizer", "the hf format does not read optreg's optimizer: section (it reads optim); set it there: "
                      "+optim=sgd")]
    with pytest.raises(ConfigError) as info:
        _with_overrides(hf, "optimizer.lr=0.1", "learning_rate=0.01")
    assert [(e.path, e.message, str(e.location)) for e in info.value.errors] == [
        ("optimizer.lr", "the hf format does not read optreg's optimizer: section (it reads learning_rate); set it "
                         "there: learning_rate=0.1", "override optimizer.lr=0.1")]
    with pytest.raises(ConfigError) as info:
        _with_overrides(ds, "+clip_grad.max_norm=1")
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("clip_grad.max_norm", "the deepspeed format does not read optreg's clip_grad: section (it reads "
                               "gradient_clipping); set it there: +gradient_clipping=1")]


LIBAI_BERT = libai_corpus.tree() / "configs" / "bert_large_pretrain.py"   # optim: LazyCall(flow.optim.AdamW)
MMENGINE_ADAMW = FIXTURES.parent / "mmengine" / "configs" / "imagenet_bs2048_AdamW.yaml"
MINDFORMERS_LLAMA2 = FIXTURES.parents[1] / "suites" / "mindformers" / "1.3.0" / "llama2_finetune_llama2_13b.yaml"
HF_ZEPHYR = FIXTURES.parent / "hf" / "corpus" / "zephyr-7b-beta__sft__config_full.yaml"   # no optim: AdamW's


@pytest.mark.parametrize("fmt, path, override, advice, beside, built", [
    ("nemo", FINETUNE, "optimizer=sgd", "(it reads model.optim); set it there: model.optim.name=sgd",
     ["~model.optim.betas"], "torch.optim.sgd.SGD"),
    ("hf", HF_ZEPHYR, "optimizer=sgd", "(it reads optim); set it there: +optim=sgd", [], "torch.optim.sgd.SGD"),
    ("hf", HF_ZEPHYR, "optimizer=adamw", "(it reads optim); set it there: +optim=adamw_torch", [],
     "torch.optim.adamw.AdamW"),
    ("libai", LIBAI_BERT, "optimizer=sgd", "(it reads optim); set it there: optim._target_=oneflow.optim.SGD",
     ["~optim.betas", "~optim.eps", "~optim.do_bias_correction"], "optreg.dialects.oneflow.sgd.SGD"),
    ("mmengine", MMENGINE_ADAMW, "optimizer=sgd", "(it reads optim_wrapper.optimizer); set it there: "
                                                  "optim_wrapper.optimizer.type=SGD", [], "torch.optim.sgd.SGD"),
    ("mindformers", MINDFORMERS_LLAMA2, "optimizer=sgd", "(it reads optimizer.type); set it there: optimizer.type=SGD",
     ["~optimizer.beta1", "~optimizer.beta2", "~optimizer.eps", "+train.steps_per_epoch=200"],
     "optreg.dialects.mindspore.sgd.SGD"),
    ("mindformers", MINDFORMERS_LLAMA2, "optimizer=adamw",
     "(it reads optimizer.type); set it there: optimizer.type=AdamW", ["+train.steps_per_epoch=200"],
     "torch.optim.adamw.AdamW"),   # mindspore_mint.AdamW
])
def test_the_override_said_for_a_group_switch_builds_that_optimizer(fmt, path, override, advice, beside, built):
    """A group switch on a foreign file is told the value of the format's key that its reader builds the group's
    optimizer from (the format's `choices`). It was told the group's name, which LiBai's optim._target_ (a class
    path), MMEngine's type (a class name) and HF's optim (adamw) do not take, and MindFormers' type reads as another
    optimizer (adamw: AdamWeightDecay); a MindFormers file's own optimizer:, which the group's file replaced, was the
    reader's error (`expected a mapping with type:`). The advice builds the group's optimizer, in the format's
    dialect, once the file's options that it has not are taken away (`beside`)."""
    with pytest.raises(ConfigError) as info:
        _with_overrides(path, override)
    section = override.split("=")[0]
    assert [(e.path, e.message, str(e.location)) for e in info.value.errors] == [
        (section, f"the {fmt} format does not read optreg's {section}: section {advice}", f"override {override}")]
    experiment = _with_overrides(path, advice.rsplit(": ", 1)[1], *beside)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the lengths of the files' schedules beside the run
        optimizer = optreg.build(experiment, standin(), steps_per_epoch=200).optimizer
    assert f"{type(optimizer).__module__}.{type(optimizer).__name__}" == built


def test_a_dictconfig_with_the_applications_blanks_builds():
    from omegaconf import OmegaConf

    cfg = OmegaConf.load(FINETUNE)
    assert OmegaConf.is_missing(cfg.model.train_ds, "manifest_filepath")
    cfg.model.optim.lr = 2e-3
    built = optreg.build(cfg, standin(), steps_per_epoch=200)
    assert built.optimizer.defaults["lr"] == 2e-3 and built.run.steps == 50 * 200
    cfg.model.optim.lr = "${model.train_ds.manifest_filepath}"
    with pytest.raises(ConfigError) as info:
        optreg.build(cfg, standin(), steps_per_epoch=200)
    assert [e.path for e in info.value.errors] == ["model.optim.lr"]


def test_a_misspelt_trainer_key_optreg_reads_is_an_error_not_lightning_s_business():
    """`trainer.gradient_clip_vall` / `trainer.max_step`: Lightning's Trainer(**cfg.trainer) refuses them (a
    TypeError); reported as "Lightning's, the training loop's business", the clipping and the run length were
    dropped without a word. Lightning's own other keys (min_steps, min_epochs) stay the trainer's."""

    config = {"model": {"optim": {"name": "adamw", "lr": 0.1, "sched": {"name": "CosineAnnealing"}}},
              "trainer": {"max_step": 50, "gradient_clip_vall": 1.0, "min_steps": 2, "min_epochs": 1,
                          "max_epochs": 3}}
    with pytest.raises(ConfigError) as info:
        to_experiment(config)
    assert [(e.path, e.suggestion) for e in info.value.errors] == [
        ("trainer.max_step", "max_steps"), ("trainer.gradient_clip_vall", "gradient_clip_val")]
    del config["trainer"]["max_step"], config["trainer"]["gradient_clip_vall"]
    uses = {u.path: u.verdict for u in to_experiment(config).report}
    assert uses["trainer.min_steps"] == uses["trainer.min_epochs"] == "trainer"


@pytest.mark.parametrize("name, extra", [("WarmupPolicy", {}), ("CosineAnnealing", {})])
def test_a_nemo_schedule_whose_max_steps_ends_it_takes_it_from_the_run(name, extra):
    """NeMo's prepare_lr_scheduler gives every schedule the run's max_steps: WarmupPolicy's (min_lr past it, no end
    when left out) too, so its warmup_ratio is int(ratio·run) steps beside train.steps as for the others (it was
    'warmup_ratio needs max_steps'); without a run it keeps no end. NoamAnnealing's max_steps ends nothing (its
    lr decays for ever): it is not the run's, and its warmup_ratio needs it written."""
    spec = {"name": f"nemo.{name}", "warmup_ratio": 0.1, **extra}
    built = optreg.build({"optimizer": {"name": "SGD", "lr": 0.5}, "scheduler": spec, "train": {"steps": 100}},
                         torch.nn.Linear(2, 2))
    lrs = []
    for _ in range(12):
        lrs.append(built.optimizer.param_groups[0]["lr"])
        built.optimizer.step()
        built.scheduler.step()
    want = [0.5 * (t + 1) / 11 for t in range(11)]   # W = int(0.1 · 100) = 10 warmup steps: NeMo's (t + 1)/(W + 1)
    assert lrs[:11] == pytest.approx(want, rel=1e-12)
    if name != "CosineAnnealing":
        optimizer = optreg.configure_optimizer("SGD", torch.nn.Linear(2, 2), lr=0.5)
        with pytest.raises(optreg.ConfigError, match="warmup_ratio needs max_steps"):
            optreg.configure_lr_scheduler(optimizer, spec)


def test_noam_s_warmup_ratio_needs_its_max_steps_written():
    spec = {"name": "nemo.NoamAnnealing", "d_model": 64, "warmup_ratio": 0.1}
    with pytest.raises(ConfigError, match="warmup_ratio needs max_steps"):
        optreg.build({"optimizer": {"name": "SGD", "lr": 0.5}, "scheduler": spec, "train": {"steps": 100}},
                     torch.nn.Linear(2, 2))


NEMO_RUN = "model:\n  optim:\n    name: adamw\n    lr: 0.1\n    sched: {name: CosineAnnealing, max_steps: %s}\n%s\n"


@pytest.mark.parametrize("sched, trainer, said", [
    (5, "trainer: {max_steps: -2}", "6:11: trainer.max_steps: must be >= -1, got -2"),
    (5, "trainer: {max_steps: x}", "6:11: trainer.max_steps: expected an integer, got str 'x'"),
    (5, "trainer: {max_steps: 10, max_epochs: 0}", "6:26: trainer.max_epochs: must be >= 1, got 0 (or -1: no limit)"),
    (5, "trainer: {max_epochs: 1.5}", "6:11: trainer.max_epochs: must be an integer, got 1.5 (or -1: no limit)"),
    (-3, "", "5:36: model.optim.sched.max_steps: must be >= 0, got -3 (or -1: no schedule)"),
])
def test_a_bad_run_length_is_said_as_the_own_form_says_it(sched, trainer, said, tmp_path, capsys):
    """trainer.max_steps / max_epochs and the schedule's max_steps word a bad number by models.number_message, as
    the own form's options do, with the -1 each takes besides (they said 'must be an integer >= -1 (Lightning's)',
    'must be an integer >= 1 or -1', 'must be an integer >= 0 (NeMo asserts it)'), at the key's position."""
    from optreg.cli import main

    path = tmp_path / "nemo.yaml"
    path.write_text(NEMO_RUN % (sched, trainer))
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().err.strip() == f"{path}:{said}"

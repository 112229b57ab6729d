"""The `optreg` command line: run, list, show, validate, schema."""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from optreg.cli import main

ROOT = Path(__file__).resolve().parent.parent


def optreg_cmd(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "optreg.cli", *args], capture_output=True, text=True, timeout=300)


def test_run_default_config_prints_groups_and_final_loss():
    result = optreg_cmd("run", "--steps", "25")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "parameter groups" in out and "default" in out and "param_groups[0]" in out
    final = [line for line in out.splitlines() if line.startswith("final loss")]
    assert final and "after 25 steps" in final[0]
    loss = float(final[0].split()[2])
    assert 0 < loss < 1.0


def test_run_names_the_optimizer_class_or_a_composites_parts():
    """The header names the class it built; a composite (Muon + AdamW rules) its parts, not its own class path."""
    plain = optreg_cmd("run", "--steps", "2")
    composite = optreg_cmd("run", str(ROOT / "examples" / "muon_adamw.yaml"), "--steps", "2")
    assert plain.returncode == 0 and composite.returncode == 0, plain.stderr + composite.stderr
    assert "optimizer: torch.optim.adamw.AdamW" in plain.stdout
    header = " ".join(composite.stdout.split("parameter groups")[0].split())
    assert "optimizer: Composite(torch.Muon, torch.AdamW, torch.AdamW)" in header
    assert "composite_optimizer" not in composite.stdout


def test_run_with_config_and_overrides(tmp_path):
    cfg = tmp_path / "sgd.yaml"
    cfg.write_text("optimizer: {name: SGD, lr: 0.05, momentum: 0.9}\ntrain: {steps: 5}\n")
    result = optreg_cmd("run", str(cfg), "optimizer.lr=0.01", "train.steps=7")
    assert result.returncode == 0, result.stderr
    assert "after 7 steps" in result.stdout and "lr 0.01" in result.stdout


@pytest.mark.parametrize("command", ["run", "plot"])
def test_overrides_after_options_are_overrides_and_anything_else_is_refused(command, tmp_path, capsys):
    """Hydra overrides may follow options (`optreg run FILE --steps 5 optimizer.lr=0.01`), as after any Hydra app's
    flags; an unknown option stays an argparse error."""
    cfg = tmp_path / "sgd.yaml"
    cfg.write_text("optimizer: {name: SGD, lr: 0.05, momentum: 0.9}\nscheduler: {name: StepLR, step_size: 1, "
                   "gamma: 0.5, by_epoch: true}\n")
    extra = ["--csv"] if command == "plot" else []
    assert main([command, str(cfg), "--steps", "4", *extra, "optimizer.lr=0.01", "train.steps_per_epoch=2"]) == 0
    out = capsys.readouterr().out
    assert "0.01" in out and "0.05" not in out
    with pytest.raises(SystemExit):
        main([command, str(cfg), "--steps", "4", "--bogus"])
    assert "unrecognized arguments: --bogus" in capsys.readouterr().err


def test_run_reports_errors_and_exits_1(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("optimizer:\n  name: SGD\n  lr: -1\n")
    result = optreg_cmd("run", str(cfg))
    assert result.returncode == 1
    assert f"{cfg}:3:3: optimizer.lr: must be >= 0, got -1" in result.stderr


def test_validate_exit_status(tmp_path, capsys):
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text("optimizer: {name: Adam, lr: 1e-3}\n")
    bad.write_text("optimizer: {name: Adam, lr: 1e-3, betas: [0.9, 1.0]}\n")
    assert main(["validate", str(good)]) == 0
    assert main(["validate", str(good), str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:1:48: optimizer.betas[1]: must be < 1, got 1.0" in err


def test_validate_names_a_file_once_however_its_path_is_written(tmp_path, monkeypatch, capsys):
    """A file given as `./a.yaml` is read as `a.yaml`: its errors and warnings at a position in it start with that
    position alone, as those of `a.yaml` do (not `./a.yaml: a.yaml:1:24: ...`)."""
    monkeypatch.chdir(tmp_path)
    Path("bad.yaml").write_text("optimizer: {name: SGD, lr: -0.1}\n")
    Path("short.yaml").write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler: {name: CosineAnnealingLR, T_max: 5}\n"
                                  "train: {steps: 100}\n")
    assert main(["validate", "./bad.yaml", "./short.yaml"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == ["./short.yaml: ok"]
    assert err.splitlines() == [
        "bad.yaml:1:24: optimizer.lr: must be >= 0, got -0.1",
        "short.yaml:2:38: warning: scheduler.T_max: T_max 5 spans 5 steps, under 0.9 × the 100 steps of the run "
        "(train.steps or --steps): the schedule ends early; set scheduler.T_max to 100"]


def test_validate_names_the_file_of_a_readers_warning(capsys):
    """A warning a reader gives while it reads a file (NeMo's args form: what NeMo does not read) names the file, as
    validate's other lines do: among several files, which one it is about; at the key's position (sched.args)."""
    nemo = "tests/fixtures/nemo/configs/synthetic_sched_args_auto.yaml"
    assert main(["validate", "examples/quickstart.yaml", nemo]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ["examples/quickstart.yaml: ok", f"{nemo}: ok"]
    assert err.splitlines() == [
        f"{nemo}:10:7: warning: NeMo does not read model.optim.sched.args.warmup_ratio 0.1, "
        "model.optim.sched.args.params.min_lr 0.0001, model.optim.sched.warmup_steps 20: its args form builds the "
        "schedule from the defaults of CosineAnnealingParams"]


def test_validate_shipped_examples():
    assert main(["validate", "examples/quickstart.yaml"]) == 0


def test_validate_applies_the_overrides_to_each_file(tmp_path, capsys):
    """`optreg validate FILE... OVERRIDE...` reads each file with the overrides on top, as `run` reads one (before,
    an override was validated alone, against the embedded quickstart, and reported as a file)."""
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text("optimizer: {name: Adam, lr: 1e-3}\n")
    b.write_text("optimizer: {name: SGD, lr: 0.1}\n")
    assert main(["validate", str(a), str(b), "optimizer.lr=0.5"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"{a}: ok", f"{b}: ok"]
    assert main(["validate", str(a), str(b), "--steps", "3", "optimizer.lr=-1"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{path}: override optimizer.lr=-1: optimizer.lr: must be >= 0, got -1" for path in (a, b)]
    assert main(["validate", "optimizer.lr=-1"]) == 1
    assert capsys.readouterr().err.strip() == \
        "<optreg>/quickstart.yaml: override optimizer.lr=-1: optimizer.lr: must be >= 0, got -1"


@pytest.mark.parametrize("override, path, said", [
    ("optimizer.lr==1", "optimizer.lr", "Error parsing override 'optimizer.lr==1'"),
    ("optimizer..lr=1", "optimizer..lr", "LexerNoViableAltException: optimizer..lr=1"),
])
def test_an_override_that_does_not_parse_is_from_that_override_as_any_override_error_is(override, path, said,
                                                                                        tmp_path, capsys):
    """An override Hydra cannot parse is an error from that override in `run` and `validate` alike, as an error
    about a value an override sets is (it had no `override ...`, and in `run` nothing but its key)."""
    cfg = tmp_path / "sgd.yaml"
    cfg.write_text("optimizer: {name: SGD, lr: 0.1}\n")
    error = (f"override {override}: {path}: bad override: {said} (Hydra override syntax: key=value, group=option, "
             f"+key=value, ~key)")
    for overrides, line in ((["optimizer.lr=-1"], "override optimizer.lr=-1: optimizer.lr: must be >= 0, got -1"),
                            ([override], error)):
        assert main(["run", str(cfg), "--steps", "2", *overrides]) == 1
        assert capsys.readouterr().err.strip() == line
        assert main(["validate", str(cfg), *overrides]) == 1
        assert capsys.readouterr().err.strip() == f"{cfg}: {line}"


def test_a_file_with_interpolations_or_defaults_reads_the_same_everywhere(tmp_path, capsys):
    """A file of optreg's own form with `${...}` or a Hydra primary config (`defaults:`) is read through Hydra's
    composition by build(), load_config() and every command, with or without overrides (before, only a command
    given an override resolved it, and build() read the `${...}` as a string)."""
    import torch

    import optreg

    path = tmp_path / "h.yaml"
    path.write_text("optimizer: {name: AdamW}\nscheduler:\n  name: CosineAnnealingLR\n  T_max: ${train.steps}\n"
                    "train: {steps: 5}\n")
    model = torch.nn.Linear(2, 2)
    assert optreg.build(str(path), model).scheduler.T_max == 5
    assert optreg.build(path.read_text(), model).scheduler.T_max == 5
    assert optreg.load_config(path).run.steps == 5
    assert main(["validate", str(path)]) == 0
    assert main(["plot", "--csv", str(path), "--steps", "4"]) == 0
    rows = [line.split(",") for line in capsys.readouterr().out.splitlines()[1:]]
    assert float(rows[-1][3]) == pytest.approx(1e-3 * (1 + math.cos(math.pi * 3 / 4)) / 2)
    hydra_app = "examples/hydra_app/conf/config.yaml"
    assert optreg.load_config(hydra_app).optimizer == optreg.cli._load(hydra_app, []).optimizer


@pytest.mark.parametrize("command", ["run", "plot"])
def test_a_run_in_epochs_without_its_steps_per_epoch_is_an_error_at_its_position(command, tmp_path, capsys):
    path = tmp_path / "epochs.yaml"
    path.write_text("optimizer: {name: AdamW}\ntrain: {epochs: 2}\n")
    assert main([command, str(path), *(["--csv"] if command == "plot" else [])]) == 1
    assert capsys.readouterr().err.strip() == (f"{path}:2:9: train.epochs: 2 epochs need the steps per epoch to "
                                               f"give a run length: train.steps_per_epoch or --steps N "
                                               f"(build(..., steps_per_epoch=))")


def test_a_value_a_group_switch_brings_is_blamed_on_the_switch(capsys):
    """`scheduler=step` brings `step_size: ???`: the error names the switch, not the position of the file's
    `scheduler:` section (which the switch replaced); a key the file writes itself keeps the file's position."""
    assert main(["run", "examples/quickstart.yaml", "scheduler=step"]) == 1
    assert capsys.readouterr().err.strip() == ("override scheduler=step: scheduler.step_size: missing value "
                                               "(???): set it in the config or with an override")
    assert main(["validate", "examples/quickstart.yaml", "optimizer=sgd", "optimizer.lr=-1"]) == 1
    assert "override optimizer.lr=-1: optimizer.lr: must be >= 0, got -1" in capsys.readouterr().err


def test_a_key_of_a_section_a_group_switch_replaced_is_the_switch_s(tmp_path, monkeypatch, capsys):
    """A switch replaces a plain file's section whole: a key the switch's group file brings is the switch's even
    where the replaced section wrote it too (`gamma: ???` was said at the file's `gamma: 0.5`)."""
    monkeypatch.chdir(tmp_path)
    Path("c.yaml").write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler: {name: StepLR, step_size: 5, gamma: 0.5}\n")
    for command in ("validate", "run"):
        assert main([command, "c.yaml", "scheduler=exponential"]) == 1
        assert capsys.readouterr().err.strip().endswith(
            "override scheduler=exponential: scheduler.gamma: missing value (???): set it in the config or with an "
            "override")


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_section_an_override_deletes_is_missing_from_that_override(command, capsys):
    """`~optimizer` is no group switch: the section it leaves missing is the override's, as what `~optimizer.name`
    leaves missing is (it was at the position of the file's `optimizer:`)."""
    assert main([command, "examples/quickstart.yaml", "~optimizer"]) == 1
    assert capsys.readouterr().err.strip().endswith(
        "override ~optimizer: optimizer: required: the optimizer section (name: and its options)")


def test_an_unknown_provider_lists_the_providers_and_the_closest(tmp_path, capsys):
    assert main(["hydra-configs", "--provider", "bitsandbyte", "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "provider: no registered component comes from 'bitsandbyte' (the providers: bitsandbytes, optreg," in err
    assert err.rstrip().endswith("(did you mean 'bitsandbytes'?)") and not any(tmp_path.iterdir())


def test_steps_that_are_not_a_number_are_refused_in_words(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--steps", "abc"])
    assert "argument --steps: expected a whole number >= 1, got 'abc'" in capsys.readouterr().err


def test_list_and_show(capsys):
    assert main(["list", "optimizers", "--dialect", "torch"]) == 0
    out = capsys.readouterr().out
    assert "AdamW" in out and "LBFGS" in out
    assert main(["show", "AdamW"]) == 0
    out = capsys.readouterr().out
    assert "weight_decay" in out and "0.01" in out and "optimizer:" in out and "name: AdamW" in out
    import optreg
    assert all(p.doc for p in optreg.describe("AdamW").params if p.name in ("lr", "betas", "weight_decay"))
    assert main(["show", "adamx"]) == 1
    assert "did you mean 'Adamax'" in capsys.readouterr().err


def test_list_kind_takes_the_singular_in_any_case(capsys):
    """`--kind optimizer` (as a user says it) is `--kind optimizers`; a word that is neither stays argparse's error."""
    assert main(["list", "--kind", "optimizers", "--dialect", "oneflow"]) == 0
    plural = capsys.readouterr().out
    for kind in ("optimizer", "Optimizer", "OPTIMIZERS"):
        assert main(["list", "--kind", kind, "--dialect", "oneflow"]) == 0
        assert capsys.readouterr().out == plural
    with pytest.raises(SystemExit):
        main(["list", "--kind", "optimisers"])
    assert "invalid choice: 'optimisers'" in capsys.readouterr().err


def test_show_snippet_is_valid_config(capsys):
    import yaml

    import optreg

    assert main(["show", "CosineAnnealingLR"]) == 0
    out = capsys.readouterr().out
    snippet = yaml.safe_load(out[out.index("scheduler:"):])
    snippet["scheduler"]["T_max"] = 10
    optreg.load_config(yaml.safe_dump({"optimizer": {"name": "SGD"}, **snippet}))


def test_schema_command(tmp_path):
    out = tmp_path / "optreg.schema.json"
    assert main(["schema", "-o", str(out)]) == 0
    assert json.loads(out.read_text())["$schema"].startswith("http://json-schema.org/draft-07")


def test_unknown_command_exits_2():
    with pytest.raises(SystemExit) as info:
        main(["nope"])
    assert info.value.code == 2


@pytest.mark.parametrize("argv, fragment", [
    (["run", "examples/quickstart.yaml", "optimizer=null"], "override optimizer=null: optimizer: Hydra cannot apply"),
    (["run", "examples/quickstart.yaml", "optimizer=[1,2]"], "override optimizer=[1,2]: optimizer: Hydra cannot apply"),
    (["hydra-configs", "--provider", "no-such-plugin"], "give -o DIR"),
])
def test_odd_command_lines_are_errors_not_tracebacks(argv, fragment, capsys):
    assert main(argv) == 1
    assert fragment in capsys.readouterr().err


def test_scheduler_stepped_past_its_end_is_reported(tmp_path, capsys):
    cfg = tmp_path / "oc.yaml"
    cfg.write_text("optimizer: {name: SGD, lr: 0.1, momentum: 0.9}\n"
                   "scheduler: {name: OneCycleLR, max_lr: 0.1, total_steps: 10}\n")
    assert main(["plot", str(cfg), "--steps", "50", "--text"]) == 1
    assert capsys.readouterr().err == (f"{cfg}:2:44: scheduler.total_steps: torch.OneCycleLR fails when stepped past "
                                       f"its length (10 steps), and the run (train.steps or --steps) steps it 50 "
                                       f"times; set scheduler.total_steps to 50\n")


@pytest.mark.parametrize("command", [["run"], ["plot", "--csv"]])
@pytest.mark.parametrize("text, error", [
    ("optimizer: {name: mindspore.Adam, learning_rate: [0.1, 0.05, 0.01, 0.005]}\n",
     "c.yaml:1:35: optimizer.learning_rate: a per-step list of 4 values is shorter than the run (100 steps: optreg "
     "run's default); give one value per step"),
    ("optimizer: {name: SGD, lr: 0.1}\ntrain: {accumulation_steps: 200}\n",
     "c.yaml:2:9: train.accumulation_steps: 200 micro-batches per optimizer step are more than the 100 steps of the "
     "run (optreg run's default 100): the optimizer would never step; make accumulation_steps at most 100"),
])
def test_the_default_run_of_run_and_plot_is_checked_as_a_given_one(command, text, error, tmp_path, monkeypatch,
                                                                    capsys):
    """A file without a run length runs DEFAULT_STEPS steps: what needs the run is checked against them (the per-step
    list raised an IndexError at its fifth step; the optimizer never stepped), with no linter warning about them."""
    monkeypatch.chdir(tmp_path)
    Path("c.yaml").write_text(text)
    assert main([command[0], "c.yaml", *command[1:]]) == 1
    assert capsys.readouterr().err.strip() == error
    Path("c.yaml").write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler: {name: CosineAnnealingLR, T_max: 10}\n")
    assert main([command[0], "c.yaml", *command[1:]]) == 0
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize("command", [["validate"], ["plot", "--csv"], ["groups"]])
def test_a_command_with_a_model_reports_every_error_build_does(command, tmp_path, monkeypatch, capsys):
    """Planned against a model, a file is read as build() reads it: an option's error no longer stops the reading
    before the model's plan, whose errors (a layer pattern the model lacks) came only from build()."""
    import optreg
    from examples.finetune_models import tiny_vit

    monkeypatch.chdir(tmp_path)
    Path("c.yaml").write_text("optimizer:\n  name: AdamW\n  lr: -1\n"
                              "  layer_decay: {rate: 0.75, layer: 'block.{i}.*'}\n")
    with pytest.raises(optreg.ConfigError) as info:
        optreg.build("c.yaml", tiny_vit())
    assert len(info.value.errors) == 2
    assert main([*command[:1], "c.yaml", *command[1:], "--model", "examples.finetune_models:tiny_vit"]) == 1
    assert capsys.readouterr().err.splitlines() == str(info.value).splitlines()


def test_a_reader_that_goes_away_ends_the_output_quietly(monkeypatch, capsys):
    """`optreg list | head`: the closed pipe is no error (exit 0, nothing on stderr), as for ls or cat."""
    class ClosedPipe(io.StringIO):
        def fileno(self):
            return sys.__stdout__.fileno()

        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

    saved = os.dup(sys.__stdout__.fileno())
    try:
        monkeypatch.setattr(sys, "stdout", ClosedPipe())
        assert main(["list", "optimizers"]) == 0
    finally:
        os.dup2(saved, sys.__stdout__.fileno())
        os.close(saved)
    assert capsys.readouterr().err == ""


NEMO_EPOCHS = "tests/fixtures/nemo/configs/speech_to_text_finetune.yaml"   # trainer.max_epochs, warmup_steps 5000


@pytest.mark.parametrize("command", ["validate", "plot", "run"])
def test_an_error_without_a_position_names_the_file_in_every_command(command, capsys):
    """A composed Hydra config's error that no position locates (the scheduler a group switch chose) is said with
    the file's name in plot and run, as validate says it (they printed it bare)."""
    config = str(Path("examples") / "hydra_app" / "conf" / "config.yaml")
    assert main([command, config, "optimizer=mindspore_ada_factor"]) == 1
    assert capsys.readouterr().err == (
        f"{config}: scheduler: parameter group 0 has no 'lr' to schedule (it is None); set relative_step: false and a "
        f"learning_rate, or leave the scheduler out\n")


@pytest.mark.parametrize("command", ["validate", "plot", "convert"])
def test_validate_checks_the_run_length_given_as_the_other_commands_do(command, capsys):
    """A NeMo schedule whose max_steps NeMo computes from the epochs is checked against `--steps` (validate checked
    it against a stand-in length of 10⁶ steps and warned about that, where plot and convert refused the warmup)."""
    argv = [command, NEMO_EPOCHS, "--steps", "1000", *(["--csv"] if command == "plot" else [])]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert (f"{NEMO_EPOCHS}:73:7: model.optim.sched.warmup_steps: a warmup of 5000 steps is longer than the schedule "
            f"(model.optim.sched.max_steps 1000): lower model.optim.sched.warmup_steps or raise "
            f"model.optim.sched.max_steps") in err
    assert "1000000" not in err
    assert main([command, NEMO_EPOCHS, "--steps", "6000", *(["--csv"] if command == "plot" else [])]) == 0
    assert "1000000" not in capsys.readouterr().err


@pytest.mark.parametrize("command", ["validate", "plot", "run", "convert"])
def test_steps_gives_a_libai_run_in_epochs_its_length_in_every_command(command, capsys, monkeypatch):
    """A LiBai config with train.train_epoch: `--steps` is the run's length for plot, run and convert as for
    validate (they asked for build(steps_per_epoch=), which no command can give)."""
    from pathlib import Path

    import libai_corpus

    monkeypatch.chdir(Path(__file__).parent)    # --model's module is found from the current directory
    path = str(libai_corpus.tree() / "configs" / "vit_imagenet.py")
    extra = {"plot": ["--csv"], "convert": ["--model", "mmengine_standin:model"]}.get(command, [])
    assert main([command, path, "--steps", "30", *extra]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    if command == "plot":
        assert out.splitlines()[-1].startswith("29,")
    if command == "convert":
        assert "train:\n  steps: 30\n" in out and "train.steps" not in out   # --steps', not a key of LiBai's train


@pytest.mark.parametrize("name, keys, alike", [
    ("chained", "schedulers, key, last_epoch, by_epoch", "cerebras.ChainedLR"),
    ("Sequential", "schedulers, milestones, restart, key", "torch.SequentialLR"),
])
def test_show_of_a_combinator_describes_optreg_s_own(name, keys, alike, capsys):
    """`name: chained` in a config is optreg's combinator, not Cerebras' absolute ChainedLR: `show` says the same."""
    from optreg.core.build import COMBINATOR_DOCS

    assert main(["show", name]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith(f"{name.lower()} (optreg's scheduler combinator) {COMBINATOR_DOCS[name.lower()]}")
    assert f"keys: {keys}" in out and f"optreg show {alike})" in out
    assert main(["show", name, "--dialect", "cerebras"]) == 0   # a dialect asks for its class
    assert capsys.readouterr().out.startswith("cerebras.")


def test_run_clips_each_group_by_its_own_norm_as_libai_s_trainer_does(tmp_path):
    """OneFlow's per-group clip_grad_max_norm / clip_grad_norm_type (every LiBai file's, and optreg convert's
    output of it) are applied by LiBai's trainer with optimizer.clip_grad() before each step; `optreg run` applied
    only the global clip_grad, so a LiBai run trained unclipped: the same loss for a max norm of 1e-9 as without."""
    def final_loss(max_norm):
        path = tmp_path / f"clip{max_norm}.yaml"
        rule = f", clip_grad_max_norm: {max_norm}, clip_grad_norm_type: 2.0" if max_norm else ""
        path.write_text(f"optimizer: {{name: oneflow.SGD, lr: 0.1, param_groups: [{{params: '*'{rule}}}]}}\n")
        result = optreg_cmd("run", str(path), "--steps", "5")
        assert result.returncode == 0, result.stderr
        return next(line for line in result.stdout.splitlines() if line.startswith("final loss")).split()[2]

    assert final_loss(1e-9) != final_loss(None) == final_loss(1e9)

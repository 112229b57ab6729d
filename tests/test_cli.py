"""The `optreg` command line: run, list, show, validate, schema."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from optreg.cli import main


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


def test_validate_shipped_examples():
    assert main(["validate", "examples/quickstart.yaml"]) == 0


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
    (["run", "examples/quickstart.yaml", "optimizer=null"], "cannot compose the config"),
    (["run", "examples/quickstart.yaml", "optimizer=[1,2]"], "cannot compose the config"),
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
    assert "total steps is 10" in capsys.readouterr().err


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

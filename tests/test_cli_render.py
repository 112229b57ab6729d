"""The `optreg` command as a user sees it: every line fits the width (COLUMNS, a terminal, or 80 when piped),
no name is split across lines, `--version`, `list`'s descriptions, plot's legends and titles, and `run`'s
progress, run length, per-group lr and warnings."""

from __future__ import annotations

import importlib.metadata
import math
import os
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from optreg import cli_render as render
from optreg import plot
from optreg.cli import main
from optreg.core.describe import describe
from optreg.core.entry import OPTIMIZER, SCHEDULER
from optreg.core.registry import REGISTRY

REPO = Path(__file__).resolve().parents[1]
WIDTHS = (80, 120, 200)
QUICKSTART = str(REPO / "examples" / "quickstart.yaml")
MODELS = {"examples/finetune_vit.yaml": "examples.finetune_models:tiny_vit",
          "examples/finetune_resnet.yaml": "examples.finetune_models:tiny_resnet"}
LAYER_DECAY = """
optimizer:
  name: AdamW
  lr: 1.0e-3
  layer_decay: {rate: 0.5, layer: "blocks.{i}.*", before: ["inp.*"]}
  param_groups:
    - params: ["*.bias", "*norm*"]
      weight_decay: 0.0
train: {steps: 2, depth: 4}
"""


def optreg_cmd(*args: str, columns: int | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """The command as typed, its output piped (COLUMNS unset unless given)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    if columns:
        env["COLUMNS"] = str(columns)
    return subprocess.run([sys.executable, "-m", "optreg.cli", *args], capture_output=True, text=True,
                          timeout=300, env=env, cwd=cwd)


def run_main(argv: list[str], columns: int, monkeypatch, capsys, status: int = 0) -> str:
    """The command through the CLI's main at `columns` columns: its stdout (stderr when it fails)."""
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(argv) == status
    captured = capsys.readouterr()
    return captured.err if status else captured.out


def assert_fits(text: str, width: int) -> None:
    long = [line for line in text.splitlines() if len(line) > width]
    assert not long, f"{len(long)} line(s) longer than {width}: {long[:3]}"


def shown_as(name: str, cell: str) -> bool:
    """`cell` is `name`, or `name` shortened in its middle (`start…end`)."""
    if cell == name:
        return True
    head, sep, tail = cell.partition(render.ELLIPSIS)
    return bool(sep) and name.startswith(head) and name.endswith(tail) and len(cell) < len(name)


# ---------------------------------------------------------------------------------------------------
# 1. width
# ---------------------------------------------------------------------------------------------------
def table_rows(out: str, header: str) -> list[str]:
    """The lines of the table whose header line starts with `header`, up to the blank line after it."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    assert set(lines[start + 1].replace(" ", "")) == {"─"}
    rows = []
    for line in lines[start + 2:]:
        if not line:
            break
        rows.append(line)
    return rows


@pytest.mark.parametrize("width", WIDTHS)
def test_show_fits_for_every_component_and_keeps_each_option_name_whole(width, monkeypatch, capsys):
    entries = REGISTRY.entries(OPTIMIZER) + REGISTRY.entries(SCHEDULER)
    assert len(entries) > 100
    for entry in entries:
        out = run_main(["show", entry.name, "--dialect", entry.dialect], width, monkeypatch, capsys)
        assert_fits(out, width)
        params = [p.name for p in describe(entry.name, entry.dialect, entry.kind).params]
        if not params:
            continue
        first_cells = [row.split("  ")[0] for row in table_rows(out, "parameter ") if not row.startswith(" ")]
        assert len(first_cells) == len(params), (entry.qualname, first_cells)
        assert all(shown_as(name, cell) for name, cell in zip(params, first_cells)), (entry.qualname, first_cells)
        header = out.splitlines()[0]
        assert header.startswith(entry.qualname + " ("), header


#: what a user must never read in `optreg show`: a Python repr, pydantic's marker of no default, the executable
#: range every number and count has (`types.MAX_FLOAT`, `types.MAX_INT`: said once in the README, not per option)
REPR_JUNK = ("<object", " object at 0x", "<function", "<class ", "<built-in", "PydanticUndefined", "Ellipsis",
             "9007199254740992", "1000000000.0")


def test_show_says_what_a_user_gets_for_every_component(monkeypatch, capsys):
    """`optreg show` of every component runs and prints no repr; its snippet leaves `???` (a template's blank)
    exactly at the options that are required, and a length left to the run is "the run's length" in the table and
    null in the snippet (what planning reads as the run's), not `required`, `None` or `???`."""
    import yaml

    from optreg.core.loop import FROM_RUN, required_length

    lengths = 0
    for entry in REGISTRY.entries(OPTIMIZER) + REGISTRY.entries(SCHEDULER):
        out = run_main(["show", entry.name, "--dialect", entry.dialect], 200, monkeypatch, capsys)
        assert not [junk for junk in REPR_JUNK if junk in out], (entry.qualname, out)
        params = describe(entry.name, entry.dialect, entry.kind).params
        snippet = yaml.safe_load(out[out.index(f"\n{entry.kind}:"):])[entry.kind]
        assert {k for k, v in snippet.items() if v == "???"} == \
            {p.name for p in params if p.required and p.example is None}, entry.qualname
        length = required_length(entry) if entry.kind == SCHEDULER else None
        if length is None:
            continue
        lengths += 1
        row = next(r for r in table_rows(out, "parameter ") if r.split()[0] == length)
        assert row.split("  ")[0] == length and FROM_RUN in row and "required" not in row, (entry.qualname, row)
        assert snippet[length] is None and out.count(f"{length} left out or null") == 1, entry.qualname
    assert lengths > 50


@pytest.mark.parametrize("width", WIDTHS)
def test_list_prints_one_fitting_line_per_component(width, monkeypatch, capsys):
    out = run_main(["list"], width, monkeypatch, capsys)
    assert_fits(out, width)
    lines = out.splitlines()
    for kind, title in ((OPTIMIZER, "optimizers"), (SCHEDULER, "schedulers")):
        names = sorted((e.qualname for e in REGISTRY.entries(kind)), key=str.lower)
        start = lines.index(f"{title} ({len(names)}):")
        shown = lines[start + 1: start + 1 + len(names)]
        assert [line.split()[0] for line in shown] == names


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("config", sorted(MODELS))
def test_groups_fit_and_keep_names_and_headers_whole(config, width, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    out = run_main(["groups", config, "--model", MODELS[config]], width, monkeypatch, capsys)
    assert_fits(out, width)
    words = {word.rstrip(":") for word in out.replace(",", " ").split()}   # a stacked column reads `header: …`
    assert {"group", "rule", "selectors", "params", "numel", "lr", "weight_decay", "layer"} <= words
    assert "first names" in out
    rows = optreg_rows(config)
    for row in rows:
        assert row["rule"].removeprefix("optimizer.") in words
        assert set(row["names"][:3]) <= words, row["names"][:3]


def optreg_rows(config: str) -> list[dict]:
    import optreg
    module, _, factory = MODELS[config].partition(":")
    import importlib

    return optreg.api.group_table(config, getattr(importlib.import_module(module), factory)())


@pytest.mark.parametrize("command", [["show", "CosineAnnealingWarmRestarts"], ["list", "--dialect", "nemo"],
                                     ["groups", "examples/finetune_vit.yaml", "--model", MODELS[
                                         "examples/finetune_vit.yaml"]], ["run", "--steps", "3"]])
def test_piped_output_is_80_columns(command):
    result = optreg_cmd(*command)
    assert result.returncode == 0, result.stderr
    assert_fits(result.stdout, 80)
    assert max(len(line) for line in result.stdout.splitlines()) > 60      # the width is used, not a fixed 60


@pytest.mark.parametrize("width", WIDTHS)
def test_run_tables_and_progress_fit(width, tmp_path, monkeypatch, capsys):
    config = tmp_path / "layers.yaml"
    config.write_text(LAYER_DECAY)
    out = run_main(["run", str(config)], width, monkeypatch, capsys)
    assert_fits(out, width)
    assert "blocks.0.norm.weight" in out.replace(",", " ").split() and "train " in out


def test_a_long_name_is_shortened_in_its_middle_never_split():
    long = "encoder.layers.10.self_attention.query_key_value.weight"
    lines = [line.plain for line in render.table(
        [render.Column("parameter"), render.Column("doc", "text")], [[long, "the doc " * 20]], 30)]
    assert_fits("\n".join(lines), 30)
    cell = lines[2].split("  ")[0]
    assert shown_as(long, cell) and len(cell) == 30
    assert render.wrap("a " + long + " b", 20) == ["a", render.shorten(long, 20), "b"]
    assert render.shorten(long, 11) == "encod…eight"


def test_stacked_columns_move_under_their_row_at_80():
    columns = [render.Column("name"), render.Column("value"), render.Column("notes", "text", least=40)]
    lines = [line.plain for line in render.table(columns, [["lr", "0.1", "a word " * 10]], 50)]
    assert lines[0].split() == ["name", "value"]
    assert lines[3].startswith(" " * render.INDENT + "notes: a word a word")
    assert_fits("\n".join(lines), 50)


# ---------------------------------------------------------------------------------------------------
# 2. --version
# ---------------------------------------------------------------------------------------------------
def test_version_is_the_installed_distributions():
    result = optreg_cmd("--version")
    assert result.returncode == 0 and result.stdout == f"optreg {importlib.metadata.version('optreg')}\n"


# ---------------------------------------------------------------------------------------------------
# 3. list
# ---------------------------------------------------------------------------------------------------
def test_list_pattern_without_a_kind_with_first_sentences(monkeypatch, capsys):
    out = run_main(["list", "adam*"], 80, monkeypatch, capsys)
    lines = out.splitlines()
    names = [line.split()[0] for line in lines if line.startswith("  ")]
    assert "torch.Adam" in names and "oneflow.AdamW" in names and "mindspore.AdamWeightDecay" in names
    assert all(n.split(".")[-1].lower().startswith("adam") for n in names)
    assert lines[0].startswith("optimizers (") and not any(line.startswith("schedulers") for line in lines)
    for line in lines:
        if not line.startswith("  "):
            continue
        qualname, description = line.split(maxsplit=1)
        entry = REGISTRY.find(OPTIMIZER, qualname)
        sentence = render.first_sentence(entry.doc, entry.name)
        assert description == sentence or (description.endswith(render.ELLIPSIS)
                                           and sentence.startswith(description[:-1].rstrip())), line
    torch_adamw = next(line for line in lines if line.startswith("  torch.AdamW "))
    assert torch_adamw.split(maxsplit=1)[1] == "Adam with decoupled weight decay w -= lr·λ·w."


def test_list_kind_option_and_the_older_positional_kind(monkeypatch, capsys):
    new = run_main(["list", "cos*", "--kind", "schedulers", "--dialect", "torch"], 120, monkeypatch, capsys)
    old = run_main(["list", "schedulers", "cos*", "--dialect", "torch"], 120, monkeypatch, capsys)
    assert new == old
    assert [line.split()[0] for line in new.splitlines()] == ["schedulers", "CosineAnnealingLR",
                                                              "CosineAnnealingWarmRestarts"]


def test_a_pattern_that_matches_nothing_says_so(monkeypatch, capsys):
    assert run_main(["list", "nothing*"], 80, monkeypatch, capsys) == "no optimizer or scheduler matches 'nothing*'\n"
    assert run_main(["list", "nothing*", "--kind", "optimizers"], 80, monkeypatch, capsys) == "optimizers (0):\n"


def test_first_sentence():
    assert render.first_sentence("Lamb: m̂ = m/(1-β1ᵗ). Then the trust ratio.", "Lamb") == "m̂ = m/(1-β1ᵗ)."
    assert render.first_sentence("lr = base_lr · γ^(t/T). Steps each call.") == "lr = base_lr · γ^(t/T)."


@pytest.mark.parametrize("argv", [["list", "--dialect", "torh"], ["show", "Adam", "--dialect", "torh"]])
def test_an_unknown_dialect_is_a_usage_error_with_a_close_match(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    result = capsys.readouterr()
    assert info.value.code == 2 and result.out == ""
    assert result.err.splitlines()[-1] == (
        f"optreg {argv[0]}: error: argument --dialect: unknown dialect 'torh'; dialects: "
        f"{', '.join(REGISTRY.dialects())} (did you mean 'torch'?)")


def test_two_patterns_are_refused(capsys):
    with pytest.raises(SystemExit) as info:
        main(["list", "adam*", "cos*"])
    assert info.value.code == 2 and "list takes one PATTERN, got 'adam*' and 'cos*'" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------------
# 4. plot
# ---------------------------------------------------------------------------------------------------
@pytest.fixture
def drawn(monkeypatch):
    """The matplotlib Figures `optreg plot` draws, in order."""
    pytest.importorskip("matplotlib")
    figures = []
    original = plot.figure

    def spy(*args, **kwargs):
        figures.append(original(*args, **kwargs))
        return figures[-1]

    monkeypatch.setattr(plot, "figure", spy)
    return figures


def legend_of(fig) -> list[str]:
    return [text.get_text() for text in fig.axes[0].get_legend().get_texts()]


def test_plot_legend_title_and_log_axis(drawn, tmp_path, capsys):
    assert main(["plot", QUICKSTART, "--log", "-o", str(tmp_path / "lr.png")]) == 0
    fig, = drawn
    assert legend_of(fig) == ["*.bias, *norm*", "other parameters"]
    assert fig._suptitle.get_text() == "AdamW + sequential(LinearLR, CosineAnnealingLR)"
    assert [ax.get_yscale() for ax in fig.axes] == ["log"]
    assert main(["plot", QUICKSTART, "--steps", "5", "-o", str(tmp_path / "lr.png")]) == 0
    assert drawn[1].axes[0].get_yscale() == "linear"


SELECTORS = """
optimizer:
  name: sgd
  lr: 0.1
  weight_decay: 1.0e-4
  param_groups:
    - {params: "head.*", lr_mult: 10}
    - {modules: LayerNorm, decay_mult: 0}
scheduler: {name: StepLR, step_size: 2}
"""


def test_plot_legends_name_selector_rules_and_layers(drawn, tmp_path, capsys):
    config = tmp_path / "selectors.yaml"
    config.write_text(SELECTORS)
    assert main(["plot", str(config), "--steps", "5", "-o", str(tmp_path / "a.png")]) == 0
    assert legend_of(drawn[0]) == ["head.*", "modules: LayerNorm", "other parameters"]
    assert drawn[0]._suptitle.get_text() == "sgd + StepLR"
    config.write_text(LAYER_DECAY)
    assert main(["plot", str(config), "--steps", "2", "-o", str(tmp_path / "b.png")]) == 0
    assert legend_of(drawn[1]) == [f"*.bias, *norm* (layer {i})" for i in range(6)] + [
        f"other parameters (layer {i})" for i in range(6)]
    assert drawn[1]._suptitle.get_text() == "AdamW"


def test_plot_title_of_a_model_zoo_config(drawn, tmp_path, capsys):
    assert main(["plot", str(REPO / "examples" / "cerebras" / "trainer_llama.yaml"), "-o",
                 str(tmp_path / "lr.png")]) == 0
    assert drawn[0]._suptitle.get_text() == "AdamW + SequentialLR(LinearLR, CosineDecayLR)"
    assert "20 steps" in capsys.readouterr().out      # the config's own length (train.steps: 20)


# ---------------------------------------------------------------------------------------------------
# 5. run
# ---------------------------------------------------------------------------------------------------
TRAINER = "trainer:\n  init:\n    optimizer: {SGD: {lr: 0.01}}\n    loop: {max_steps: %s}\n"
LEGACY = "optimizer: {optimizer_type: SGD, learning_rate: 0.01}\nrunconfig: {max_steps: %s}\n"


def final_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith("final loss"))


@pytest.mark.parametrize("form, text", [("trainer", TRAINER % 6), ("legacy", LEGACY % 4),
                                        ("trainer with train.steps", TRAINER % 6 + "train: {steps: 3}\n")])
def test_run_honours_a_model_zoo_configs_max_steps(form, text, tmp_path, monkeypatch, capsys):
    config = tmp_path / "modelzoo.yaml"
    config.write_text(text)
    steps = {"trainer": 6, "legacy": 4, "trainer with train.steps": 3}[form]
    out = run_main(["run", str(config)], 80, monkeypatch, capsys)
    assert f"(after {steps} steps)" in final_line(out) and f" {steps}/{steps} " in out
    out = run_main(["run", str(config), "--steps", "2"], 80, monkeypatch, capsys)     # the command line wins
    assert "(after 2 steps)" in final_line(out)
    out = run_main(["run", str(config), "--steps", "1"], 80, monkeypatch, capsys)
    assert "(after 1 step)" in final_line(out)


@pytest.mark.parametrize("text, said", [
    (TRAINER % 0, "4:12: trainer.init.loop.max_steps: must be >= 1, got 0"),
    (LEGACY % "'many'", "2:13: runconfig.max_steps: expected an integer, got str 'many'"),
    (LEGACY % 2.5, "2:13: runconfig.max_steps: must be an integer, got 2.5"),
])
def test_a_bad_max_steps_is_a_located_error(text, said, tmp_path, monkeypatch, capsys):
    # in the own form's words (models.number_message); it said 'must be an integer >= 1, got 0'
    config = tmp_path / "modelzoo.yaml"
    config.write_text(text)
    err = run_main(["run", str(config)], 80, monkeypatch, capsys, status=1)
    assert err.strip() == f"{config}:{said}"


def at_a_terminal(*args: str, columns: int = 80) -> tuple[int, str]:
    """Run the command on a pseudo-terminal (as typed in a shell): its output with rich's live redraws."""
    import pty

    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "LINES"}
    env.update(COLUMNS=str(columns), PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]),
               TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "optreg.cli", *args], stdin=slave, stdout=slave, stderr=slave,
                            env=env, cwd=REPO, close_fds=True)
    os.close(slave)
    chunks = []
    try:
        while select.select([master], [], [], 120)[0]:
            try:
                data = os.read(master, 65536)
            except OSError:        # EIO: the other end closed
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
        proc.wait(timeout=60)
    return proc.returncode, re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode("utf-8", "replace"))


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
def test_the_progress_bar_only_ever_shows_real_numbers():
    code, screen = at_a_terminal("run", "--steps", "200", "optimizer=sgd")
    assert code == 0, screen
    assert "nan" not in screen.lower()
    frames = re.findall(r"(\d+)/200 loss (\S+)\s+lr (\S+)", screen)
    assert frames and all(int(done) >= 1 and math.isfinite(float(loss)) and float(lr) > 0
                          for done, loss, lr in frames), frames[:3]
    assert frames[-1][0] == "200"


def test_warnings_print_one_line_each_without_their_source(tmp_path):
    result = optreg_cmd("run", "examples/cerebras/trainer_llama.yaml", "--steps", "2")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    # a note on a key of the file at the key's position (optreg.ConfigWarning), any other warning without one
    at = re.compile(r"examples/cerebras/trainer_llama\.yaml:\d+:\d+: warning: trainer\.init\.")
    assert lines and all(line.startswith("warning: ") or at.match(line) for line in lines), lines
    assert any(at.match(line) for line in lines), lines
    assert any(line.startswith("warning: not the optimizer's: trainer.init.precision.enabled=True") for line in lines)
    assert "UserWarning" not in result.stderr and ".py:" not in result.stderr


def test_a_warning_line():
    assert render.warning_line("two\n  lines") == "warning: two lines"
    assert render.warning_line("old", DeprecationWarning) == "warning (DeprecationWarning): old"


def test_run_shows_each_groups_lr(monkeypatch, capsys):
    out = run_main(["run", QUICKSTART, "--steps", "5"], 80, monkeypatch, capsys)
    lr = 3.0e-3 * (0.01 + 0.99 * 4 / 20)       # LinearLR(0.01 -> 1 over 20 steps) at step 4, the last of 5: both groups
    lines = out.splitlines()
    final = lines.index(final_line(out))
    assert lines[final + 1] == f"lr: g0 {lr:.4g}  g1 {lr:.4g}"
    assert lines.count(lines[final + 1]) == 1    # once: the bar's last frame leaves out what the summary says


def test_past_five_groups_run_shows_each_rules_range(tmp_path, monkeypatch, capsys):
    config = tmp_path / "layers.yaml"
    config.write_text(LAYER_DECAY)
    out = run_main(["run", str(config)], 80, monkeypatch, capsys)
    lines = out.splitlines()
    final = lines.index(final_line(out))
    low, high = 1e-3 * 0.5 ** 5, 1e-3             # layer decay 0.5 over 6 layers (inp, 4 blocks, head)
    assert lines[final + 1:] == [f"lr: param_groups[0] {low:.4g}..{high:.4g} (6 groups)",
                                 f"    default {low:.4g}..{high:.4g} (6 groups)"]


@pytest.mark.parametrize("width", [24, 40, 60])
def test_narrow_terminals_narrow_or_stack_name_columns_and_still_fit(width, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    config = "examples/finetune_resnet.yaml"
    out = run_main(["groups", config, "--model", MODELS[config]], width, monkeypatch, capsys)
    assert_fits(out, width)
    cells = out.replace(",", " ").split()
    for row in optreg_rows(config):
        rule = row["rule"].removeprefix("optimizer.")
        assert any(shown_as(rule, cell) for cell in cells), (rule, width)


def test_a_group_without_an_lr_is_shown_as_none():
    """An optimizer whose groups have no lr (pytorch_optimizer's AliG: the loss sets its step size) is shown by a
    run as `none`, in one group, a few, and a rule's range past MAX_GROUPS_SHOWN."""
    assert render.lr_summary([None], ["default"]) == ["none"]
    assert render.lr_summary([None, 0.1], ["a", "b"]) == ["g0 none", "g1 0.1"]
    many = render.lr_summary([None] * 6 + [0.1, 0.2], ["a"] * 6 + ["b"] * 2)
    assert many == ["a none (6 groups)", "b 0.1..0.2 (2 groups)"]

"""The shipped Hydra config groups: one file per registered component, generated from the registry, up to date."""

from __future__ import annotations

import inspect

import pytest
import torch
from omegaconf import OmegaConf

import optreg
from optreg import ConfigError
from optreg.cli import main
from optreg.core import models
from optreg.core.build import wraps_optimizer
from optreg.core.entry import SCHEDULER
from optreg.core.loop import LOOP_KEYS, warmup_refusal
from optreg.core.names import synonyms
from optreg.core.registry import REGISTRY
from optreg.core.validate import validate_options
from optreg.integrations.hydra import configs as hc

ENTRIES = hc.builtin_entries()
ROOT = hc.default_root()


def test_group_files_are_up_to_date():
    problems = hc.stale(ROOT, hc.group_files(ENTRIES))
    assert not problems, "Hydra group files are stale; run `optreg hydra-configs`:\n" + "\n".join(problems)


def test_every_registered_component_of_every_dialect_has_a_file():
    registered = {e.qualname for kind in hc.GROUPS for e in REGISTRY.entries(kind) if e.provider == "optreg"}
    shipped = {f.entry.qualname for f in hc.group_files(ENTRIES)}
    assert registered == shipped
    dialects = {e.dialect for e in ENTRIES}
    assert {"torch", "oneflow", "cerebras", "mindspore"} <= dialects
    for f in hc.group_files(ENTRIES):
        assert (ROOT / f.path).is_file()


@pytest.mark.parametrize("dialect, name, kind, expected", [
    ("torch", "AdamW", "optimizer", "adamw"),
    ("torch", "SGD", "optimizer", "sgd"),
    ("torch", "RMSprop", "optimizer", "rmsprop"),
    ("torch", "RAdam", "optimizer", "radam"),
    ("torch", "SparseAdam", "optimizer", "sparse_adam"),
    ("torch", "CosineAnnealingLR", "scheduler", "cosine_annealing"),
    ("torch", "ReduceLROnPlateau", "scheduler", "reduce_lr_on_plateau"),
    ("torch", "OneCycleLR", "scheduler", "one_cycle"),
    ("mindspore", "Adam", "optimizer", "mindspore_adam"),
    ("mindspore", "RMSProp", "optimizer", "mindspore_rmsprop"),
    ("mindspore", "AdamWeightDecay", "optimizer", "mindspore_adam_weight_decay"),
    ("mindspore", "dynamic_cosine_decay_lr", "scheduler", "mindspore_dynamic_cosine_decay_lr"),
    ("cerebras", "CosineDecayLR", "scheduler", "cerebras_cosine_decay"),
    ("hf", "cosine_with_min_lr", "scheduler", "hf_cosine_with_min_lr"),
    ("nemo", "T5InverseSquareRootAnnealing", "scheduler", "nemo_t5_inverse_square_root_annealing"),
])
def test_file_name_rule(dialect, name, kind, expected):
    from optreg.core.entry import Entry

    assert hc.option_name(Entry(kind, dialect, name, "x:y")) == expected


def test_file_names_are_unique():
    from optreg.core.entry import Entry

    with pytest.raises(ValueError, match="both map to optimizer/adamw.yaml"):
        hc.group_files([REGISTRY.lookup("optimizer", "AdamW"),
                        Entry("optimizer", "torch", "ADAMW", "torch.optim:AdamW")])


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.qualname)
def test_file_holds_defaults_and_marks_required_options(entry):
    """Read as Hydra reads it (OmegaConf's loader): defaults validate, `???` marks exactly the required options but
    a schedule's length, which is null."""
    cfg = OmegaConf.load(ROOT / entry.kind / f"{hc.option_name(entry)}.yaml")
    assert cfg._target_ == hc.BUILDERS[entry.kind] and cfg._recursive_ is False
    assert REGISTRY.lookup(entry.kind, cfg.name, cfg.dialect) is entry
    options = models.options(entry)
    # a wrapping optimizer (MindSpore LARS) carries its required nested `optimizer:` as an example that builds
    nested = ("optimizer",) if wraps_optimizer(entry) else ()
    # a required option with another spelling (lr / learning_rate) is left out, not `???` (the primary config may
    # give it under the other one)
    left_out = {o.name for o in options if o.default is inspect.Parameter.empty and len(synonyms(o.name)) > 1}
    # a schedule's training-loop keys, off (warmup where the schedule takes one: optreg.core.loop)
    loop = [k for k in LOOP_KEYS if k != "warmup" or warmup_refusal(entry) is None] if entry.kind == SCHEDULER else []
    assert [k for k in cfg if not k.startswith("_") and k not in ("name", "dialect")] == \
        [*nested, *loop, *(o.name for o in options if o.name not in left_out)]
    assert [cfg[k] for k in loop] == [False, False, None][:len(loop)]
    if nested:
        assert isinstance(optreg.build({"optimizer": OmegaConf.to_container(cfg)}, torch.nn.Linear(2, 2)).optimizer,
                          torch.optim.Optimizer)
    required = {o.name for o in options if o.default is inspect.Parameter.empty} - left_out
    # a schedule's required length is null, not `???`: planning reads it as left out (the run's length)
    length = required & {entry.length}
    assert [cfg[k] for k in length] == [None] * len(length)
    missing = set(OmegaConf.missing_keys(cfg))
    assert missing == required - length
    given = {k: v for k, v in OmegaConf.to_container(cfg).items()
             if k not in missing | length and not k.startswith("_") and k not in ("name", "dialect", *nested, *loop)}
    try:
        values = validate_options(entry, given, path=entry.kind)
    except ConfigError as exc:
        assert {e.message for e in exc.errors} == {"required option is missing"}, str(exc)
        assert {e.path.split(".", 1)[1] for e in exc.errors} == missing | left_out | length
    else:
        assert not missing and not left_out and not length
        for o in options:
            expected = list(o.default) if isinstance(o.default, tuple) else o.default
            got = list(values[o.name]) if isinstance(values[o.name], tuple) else values[o.name]
            assert got == expected, o.name


def test_check_command_reports_stale_files(tmp_path, capsys):
    assert main(["hydra-configs", "-o", str(tmp_path)]) == 0
    assert main(["hydra-configs", "--check", "-o", str(tmp_path)]) == 0
    adamw = tmp_path / "optimizer" / "adamw.yaml"
    adamw.write_text(adamw.read_text().replace("lr: 0.001", "lr: 0.002"))
    (tmp_path / "scheduler" / "step.yaml").unlink()
    (tmp_path / "optimizer" / "handmade.yaml").write_text("name: SGD\n")
    capsys.readouterr()
    assert main(["hydra-configs", "--check", "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "out of date: optimizer/adamw.yaml (torch.AdamW)" in err
    assert "missing: scheduler/step.yaml (torch.StepLR)" in err
    assert "not generated: optimizer/handmade.yaml" in err
    assert main(["hydra-configs", "-o", str(tmp_path)]) == 0
    assert "lr: 0.001" in adamw.read_text()
    assert (tmp_path / "optimizer" / "handmade.yaml").exists()  # not ours: reported, never deleted


def test_show_prints_the_hydra_option(capsys):
    assert main(["show", "CosineAnnealingLR"]) == 0
    assert "# Hydra group option: scheduler=cosine_annealing" in capsys.readouterr().out


def test_a_library_s_groups_leave_out_defaults_a_config_cannot_write_and_build(tmp_path, capsys):
    """`hydra-configs --provider pytorch_optimizer` crashed (TypeError: a torch dtype default cannot be written to
    YAML; an enum member made yaml raise) and wrote Prodigy's `growth_rate: .inf`, which validation refuses: such an
    option is left out, named in a comment, and the file composes and builds at the class's own default."""
    pytest.importorskip("pytorch_optimizer")
    from hydra import compose, initialize_config_dir

    assert main(["hydra-configs", "--provider", "pytorch_optimizer", "-o", str(tmp_path)]) == 0
    capsys.readouterr()
    left = {"prodigy": "growth_rate", "ada_shift": "reduce_func"}
    assert "\nmomentum_dtype: bfloat16\n" in (tmp_path / "optimizer" / "pytorch_optimizer_ada_factor.yaml").read_text()
    for option, key in left.items():
        text = (tmp_path / "optimizer" / f"pytorch_optimizer_{option}.yaml").read_text()
        assert f"# Left out, at the class's own default, which a config cannot write: {key}\n" in text
        assert f"\n{key}:" not in text
    (tmp_path / "config.yaml").write_text("defaults:\n  - optimizer: pytorch_optimizer_prodigy\n  - _self_\n")
    with initialize_config_dir(config_dir=str(tmp_path), version_base="1.3"):
        cfg = compose("config", [])
    optimizer = optreg.build(cfg, torch.nn.Linear(2, 2)).optimizer
    assert optimizer.param_groups[0]["growth_rate"] == float("inf")


def test_a_library_default_its_own_type_refuses_is_a_value_to_give(tmp_path, capsys):
    """bitsandbytes' LARS has momentum=0 and refuses it (`must be > 0`): its file wrote `momentum: 0`, which never
    built; such a default is `???`, a value the user gives, as a required option's is."""
    pytest.importorskip("bitsandbytes")
    from optreg.core import models

    entry = REGISTRY.lookup("optimizer", "LARS", "bitsandbytes")
    momentum = next(o for o in models.options(entry) if o.name == "momentum")
    assert momentum.required   # bitsandbytes' default, 0, is no default
    assert main(["hydra-configs", "--provider", "bitsandbytes", "-o", str(tmp_path)]) == 0
    capsys.readouterr()
    assert OmegaConf.missing_keys(OmegaConf.load(tmp_path / "optimizer" / "bitsandbytes_lars.yaml")) == {"momentum"}


def test_a_row_that_cannot_step_has_no_group_file(tmp_path, capsys):
    """`hydra-configs --provider bitsandbytes` wrote files for AdEMAMix32bit and PagedAdEMAMix32bit, whose limits say
    they cannot step (`Limits.broken`) and which every entry point refuses: they have no file, a file of theirs left
    from before is stale to --check and removed by a write, and `optreg show` prints no group option for them."""
    pytest.importorskip("bitsandbytes")
    dead = tmp_path / "optimizer" / "bitsandbytes_ad_emamix32bit.yaml"
    assert main(["hydra-configs", "--provider", "bitsandbytes", "-o", str(tmp_path)]) == 0
    assert sorted(p.name for p in (tmp_path / "optimizer").glob("*ad_emamix*")) == [
        "bitsandbytes_ad_emamix.yaml", "bitsandbytes_ad_emamix8bit.yaml", "bitsandbytes_paged_ad_emamix.yaml",
        "bitsandbytes_paged_ad_emamix8bit.yaml"]
    dead.write_text(f"{hc.HEADER}\nname: AdEMAMix32bit\n")
    capsys.readouterr()
    assert main(["hydra-configs", "--provider", "bitsandbytes", "--check", "-o", str(tmp_path)]) == 1
    assert capsys.readouterr().err.splitlines()[0] == "not generated: optimizer/bitsandbytes_ad_emamix32bit.yaml"
    assert main(["hydra-configs", "--provider", "bitsandbytes", "-o", str(tmp_path)]) == 0
    assert "removed optimizer/bitsandbytes_ad_emamix32bit.yaml" in capsys.readouterr().out
    assert not dead.exists()
    assert main(["show", "bitsandbytes.AdEMAMix32bit"]) == 0
    assert "Hydra group option" not in capsys.readouterr().out
    assert main(["show", "bitsandbytes.AdEMAMix"]) == 0
    assert "# Hydra group option: optimizer=bitsandbytes_ad_emamix " in capsys.readouterr().out


def test_a_row_optreg_run_refuses_has_its_limits_in_its_header():
    """A row whose step optreg run's loop cannot drive (a second-order backward) still builds for a loop of the
    user's own: its file is written, its header saying the limit and that optreg run refuses it."""
    pytest.importorskip("pytorch_optimizer")
    entry = REGISTRY.lookup("optimizer", "pytorch_optimizer.AdaHessian")
    assert hc.buildable(entry)
    header = [line for line in hc.render(entry).splitlines() if line.startswith("#")]
    assert header[3:] == [
        "# Limit: steps on gradients that keep their graph (a second-order backward): "
        "loss.backward(create_graph=True), then optimizer.step() (or optimizer.step(hessian=...) with a Hessian "
        "diagonal of your own)",
        "# optreg run refuses it: build it for a loop of your own"]

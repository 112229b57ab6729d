"""`optreg convert`: a DeepSpeed or Hugging Face config written as optreg's own YAML, which validates and builds the
same optimizer and schedule as the source (every parameter's lr over the whole run, its weight decay and three
optimizer steps), with the report of every source key."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

import optreg
from optreg.cli import main
from tests.format_replay import STAND_IN, cases, config_of

PICKED = {"deepspeed": ["compression__cifar__config__ds_config.json",
                        "training__BingBertSquad__deepspeed_bsz24_config.json", "warmup_log", "warmup_decay_auto",
                        "warmup_cosine", "one_cycle", "range_test_stairs", "torch_steplr"],
          "hf": ["zephyr-7b-beta__sft__config_full.yaml", "smollm3__sft__mid.yaml",
                 "constitutional-ai__dpo__config_anthropic.yaml", "linear_decay", "wsd", "constant_warmup_sgd",
                 "min_lr_rmsprop", "polynomial"]}
CASES = [(fmt, c) for fmt, names in PICKED.items() for c in cases(fmt) if c["name"] in names]


def _source(fmt, case, tmp_path):
    source = config_of(fmt, case)
    if isinstance(source, dict):
        path = tmp_path / ("ds_config.json" if fmt == "deepspeed" else "training_args.json")
        path.write_text(json.dumps(source))
        return path
    return source


def _trajectory(built, net, case):
    """Every parameter's lr at every step of the run, its weight decay, and the weights after three steps."""
    names = {id(p): n for n, p in net.named_parameters()}
    torch.manual_seed(1)
    lrs, weights = [], []
    for step in range(case["total_steps"]):
        lrs.append({names[id(p)]: g["lr"] for g in built.optimizer.param_groups for p in g["params"]})
        if step < 3:
            for p in net.parameters():
                p.grad = torch.randn_like(p)
            built.clip_gradients(net)
            built.optimizer.step()
            weights.append([p.detach().clone() for p in net.parameters()])
        if built.scheduler is not None:
            built.scheduler.step()
    decay = {names[id(p)]: g["weight_decay"] for g in built.optimizer.param_groups for p in g["params"]}
    return lrs, decay, weights


@pytest.mark.parametrize("fmt, case", CASES, ids=[f"{f}-{c['name']}" for f, c in CASES])
def test_converted_file_builds_what_the_source_builds(fmt, case, tmp_path, capsys):
    source = _source(fmt, case, tmp_path)
    out = tmp_path / "native.yaml"
    assert main(["convert", str(source), "--steps", str(case["total_steps"]), "-o", str(out)]) == 0
    report = capsys.readouterr().out.splitlines()
    assert report[-1] == f"wrote {out} ({fmt} -> optreg)"
    data = yaml.safe_load(out.read_text())
    assert set(data) <= {"optimizer", "scheduler", "clip_grad", "train"} and data["train"]["steps"] == \
        case["total_steps"]
    native = optreg.load_config(out)
    assert native.format == "optreg"
    want_net, got_net = STAND_IN.model(), STAND_IN.model()
    want = _trajectory(optreg.build(source, want_net, total_steps=case["total_steps"]), want_net, case)
    got = _trajectory(optreg.build(native, got_net), got_net, case)
    assert got[0] == want[0] and got[1] == want[1]
    for a, b in zip(got[2], want[2]):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=0, atol=1e-7)


def test_every_source_key_is_reported(tmp_path, capsys):
    source = config_of("hf", next(c for c in cases("hf") if c["name"] == "zephyr-7b-beta__sft__config_full.yaml"))
    assert main(["convert", str(source), "--steps", "100"]) == 0
    text = capsys.readouterr().out
    verdicts = ("#   exact ", "#   approximate ", "#   trainer ")
    reported = {line.split()[2].rstrip(":").split(".")[0] for line in text.splitlines() if line.startswith(verdicts)}
    assert reported == set(yaml.safe_load(source.read_text()))
    assert "#   trainer      dataset_mixture: not a TrainingArguments field" in text
    assert max(map(len, text.splitlines())) <= 100
    assert optreg.load_config(text).format == "optreg"


NEMO_EPOCHS = """\
trainer: {max_epochs: 3, gradient_clip_val: 1.0}
model:
  optim:
    name: adamw
    lr: 0.001
    sched: {name: CosineAnnealing, warmup_steps: 10}
"""


@pytest.mark.parametrize("trainer, train, steps, epochs_use, sched_use", [
    ("{max_epochs: 3}", "", ["--steps", "100"],
     "approximate  trainer.max_epochs: replaced by the run length given (train:, --steps): NeMo's run is "
     "trainer.max_epochs × the dataloader's length",
     "approximate  model.optim.sched.name: max_steps: replaced by the run length given (train:, --steps): NeMo's run "
     "is trainer.max_epochs × the dataloader's length"),
    ("{max_epochs: 3}", "train: {steps_per_epoch: 10}\n", [], "exact        trainer.max_epochs",
     "exact        model.optim.sched.name: max_steps: trainer.max_epochs × the dataloader's length, as NeMo "
     "computes it"),
    ("{max_epochs: 3, max_steps: 40}", "", ["--steps", "100"],
     "trainer      trainer.max_epochs: Lightning stops after max_epochs or at max_steps, whichever comes first; "
     "NeMo's schedule and optreg's run follow max_steps", None),
    # NeMo's compute_max_steps: ⌈batches / accumulate_grad_batches⌉ a epoch, one schedule step per optimizer step
    ("{max_epochs: 3, accumulate_grad_batches: 4}", "train: {steps_per_epoch: 10}\n", [],
     "exact        trainer.max_epochs",
     "exact        model.optim.sched.name: max_steps: trainer.max_epochs × its optimizer steps per epoch, ⌈the "
     "dataloader's length / trainer.accumulate_grad_batches 4⌉, as NeMo computes it"),
], ids=["steps-given", "epochs-read", "beside-max-steps", "accumulation"])
def test_convert_reports_nemo_max_epochs_as_what_it_became(trainer, train, steps, epochs_use, sched_use, tmp_path,
                                                           capsys):
    """trainer.max_epochs is the run (train.epochs) and the schedule's max_steps only when nothing replaces it: a
    run length given (--steps) replaces both, and trainer.max_steps makes it Lightning's other stop. convert said
    'exact' for it, and for the schedule's max_steps, whatever the run was."""
    source, out = tmp_path / "nemo.yaml", tmp_path / "native.yaml"
    source.write_text(NEMO_EPOCHS.replace("{max_epochs: 3, gradient_clip_val: 1.0}", trainer) + train)
    assert main(["convert", str(source), *steps, "-o", str(out)]) == 0
    report = capsys.readouterr().out.splitlines()
    assert [line for line in report if "max_epochs" in line] == [epochs_use, *([sched_use] if sched_use else [])]


def test_convert_steps_reports_hf_num_train_epochs_as_replaced(capsys):
    """The Trainer's run is num_train_epochs × the dataloader's length; --steps replaces it, and convert said
    'exact' for it. Read without a length given, it is train.epochs, exactly."""
    source = config_of("hf", next(c for c in cases("hf") if c["name"] == "zephyr-7b-beta__sft__config_full.yaml"))
    assert main(["convert", str(source), "--steps", "100"]) == 0
    assert [line for line in capsys.readouterr().out.splitlines() if "num_train_epochs" in line] == [
        "#   approximate  num_train_epochs: replaced by the run length given (train:, --steps): the Trainer's",
        "#                 run is num_train_epochs × the dataloader's length"]
    uses = {u.path: (u.verdict, u.why) for u in optreg.load_config(source).report}
    assert uses["num_train_epochs"] == ("exact", "train.epochs × the dataloader's length")


def test_hf_epochs_under_gradient_accumulation_are_optimizer_steps(tmp_path, capsys):
    """The Trainer steps its schedule once per optimizer step, ⌈batches / gradient_accumulation_steps⌉ of them an
    epoch (Trainer.set_initial_training_values): the steps per epoch to give beside the file. The report said the
    dataloader's length, a run A times too long for a schedule given len(dataloader)."""
    source = tmp_path / "args.yaml"
    source.write_text("output_dir: out\nlearning_rate: 1.0e-3\nnum_train_epochs: 2\ngradient_accumulation_steps: 4\n")
    uses = {u.path: (u.verdict, u.why) for u in optreg.load_config(source).report}
    assert uses["num_train_epochs"] == ("exact", "train.epochs × its optimizer steps per epoch, ⌈the dataloader's "
                                                 "length / gradient_accumulation_steps 4⌉")
    assert main(["convert", str(source), "--steps", "30", "-o", str(tmp_path / "native.yaml")]) == 0
    assert [line for line in capsys.readouterr().out.splitlines() if "num_train_epochs" in line] == [
        "approximate  num_train_epochs: replaced by the run length given (train:, --steps): the Trainer's run is "
        "num_train_epochs × its optimizer steps per epoch, ⌈the dataloader's length / gradient_accumulation_steps 4⌉"]


def test_overrides_on_the_files_own_keys_are_written_converted(tmp_path, capsys):
    """convert takes Hydra overrides on the source file's keys, as run, plot and validate do (it took none): the
    written file has them converted, and plots the lrs the source plots under the same overrides; a misspelt
    override is the same error as in run, with its did-you-mean."""
    name = "constitutional-ai__sft__config_anthropic.yaml"
    source = config_of("hf", next(c for c in cases("hf") if c["name"] == name))
    out = tmp_path / "native.yaml"
    overrides = ["learning_rate=1e-4", "max_steps=50"]
    assert main(["convert", str(source), *overrides, "-o", str(out)]) == 0
    data = yaml.safe_load(out.read_text())
    assert (data["optimizer"]["lr"], data["train"]["steps"]) == (1e-4, 50)
    assert (data["scheduler"]["num_warmup_steps"], data["scheduler"]["num_training_steps"]) == (5, 50)  # ratio 0.1
    capsys.readouterr()
    assert main(["plot", str(source), *overrides, "--csv"]) == 0
    from_source = capsys.readouterr().out
    assert main(["plot", str(out), "--csv"]) == 0
    assert capsys.readouterr().out == from_source and len(from_source.splitlines()) == 1 + 50 * 2   # 2 groups
    for command in (["convert", str(source)], ["run", str(source)]):
        assert main([*command, "max_step=50"]) == 1
        assert capsys.readouterr().err == ("override max_step=50: max_step: Could not override 'max_step'. To append "
                                           "to your config use +max_step=50 (did you mean 'max_steps'?)\n")


def test_a_run_length_left_to_the_trainer_needs_steps(capsys):
    source = config_of("hf", next(c for c in cases("hf") if c["name"] == "zephyr-7b-beta__sft__config_full.yaml"))
    assert main(["convert", str(source)]) == 1
    assert capsys.readouterr().err == (f"{source}:45:1: num_train_epochs: 1 epoch needs the steps per epoch to give "
                                       f"a run length: train.steps_per_epoch or --steps N (build(..., "
                                       f"steps_per_epoch=))\n")


@pytest.mark.parametrize("source", ["examples/deepspeed/ds_config.json",
                                    "tests/fixtures/hf/corpus/zephyr-7b-beta__sft__config_full.yaml"])
def test_convert_reports_the_source_files_error_as_validate_does(source, capsys):
    """convert checks the file as validate does before writing it: the error is the source's, at its position (it
    was the converted text's, `<string>:26:1: scheduler.total_num_steps: required option is missing`)."""
    assert main(["validate", source]) == 1
    said = capsys.readouterr().err.strip()
    assert said.startswith(f"{source}:") and ("the run length, which the file leaves to the trainer" in said or
                                              "1 epoch needs the steps per epoch to give a run length" in said)
    assert main(["convert", source]) == 1
    assert capsys.readouterr().err.strip() == said


def test_an_unsupported_key_is_a_located_error(capsys):
    from tests.format_replay import FIXTURES

    source = FIXTURES / "deepspeed" / "corpus" / "training__bing_bert__deepspeed_bsz64k_lamb_config_seq128.json"
    assert main(["convert", str(source)]) == 1
    assert f"{source}:7:5: optimizer.type: Lamb: DeepSpeed's Lamb is FusedLamb" in capsys.readouterr().err


def test_an_own_file_converts_to_itself(tmp_path, capsys):
    path = tmp_path / "own.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1, momentum: 0.9}\nscheduler: {name: StepLR, step_size: 3}\n")
    assert main(["convert", str(path)]) == 0
    data = yaml.safe_load(capsys.readouterr().out)
    assert data == {"optimizer": {"name": "SGD", "lr": 0.1, "momentum": 0.9},
                    "scheduler": {"name": "StepLR", "step_size": 3}}


def test_steps_replace_the_run_length_of_an_own_file_as_in_run_and_plot(tmp_path, capsys):
    """`convert --steps` sets the run as `run --steps` and `plot --steps` do: it replaces the file's train.steps
    (it was a ConfigError, 'total_steps=3 and train.steps 200 disagree')."""
    path = tmp_path / "own.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler: {name: StepLR, step_size: 3}\ntrain: {steps: 200}\n")
    assert main(["convert", str(path), "--steps", "3"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["train"] == {"steps": 3}


@pytest.mark.parametrize("source, kept", [
    ("examples/mmengine/swin_adamw.yaml", "the mmengine reader plans optim_wrapper.paramwise_cfg.norm_decay_mult, "
                                          "optim_wrapper.paramwise_cfg.bias_decay_mult"),
    ("examples/cerebras/trainer_llama.yaml", "the modelzoo reader plans the whole modelzoo file"),
    ("examples/mindformers/finetune.yaml", "the mindformers reader plans optimizer.weight_decay (MindFormers' "
                                           "parameter groups)"),
    ("examples/libai/vit_finetune.py", "the libai reader plans optim.params (get_default_optimizer_params' groups)"),
])
def test_a_file_whose_reader_plans_part_of_it_is_not_converted(source, kept, capsys):
    """No key of the source is dropped: what a reader keeps to plan against the model (MMEngine's per-parameter
    rules, MindFormers' and LiBai's weight-decay groups, a whole Model Zoo file) cannot be written in optreg's own
    form without the model, so convert refuses and says what."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / source
    assert main(["convert", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path.name} cannot be written in optreg's own form: {kept}" in err
    assert "use the file as it is" in err


def _lrs_per_parameter(built, model, steps: int) -> list[dict[str, tuple[float, float]]]:
    """Each parameter's (lr, weight decay) at each of `steps` steps of the built optimizer and scheduler."""
    names = {id(p): n for n, p in model.named_parameters()}
    out = []
    for _ in range(steps):
        out.append({names[id(p)]: (g["lr"], g["weight_decay"]) for g in built.optimizer.param_groups
                    for p in g["params"]})
        built.optimizer.step()
        if built.scheduler is not None:
            built.scheduler.step()
    return out


@pytest.mark.parametrize("source", ["examples/mindformers/finetune.yaml", "examples/libai/vit_finetune.py"])
def test_with_a_model_convert_writes_the_groups_its_reader_decides_for_that_model(source, tmp_path, capsys,
                                                                                   monkeypatch):
    """MindFormers' and LiBai's weight-decay groups are decided against the model: with `--model` they are written
    as param_groups rules of that model's parameter names, and the converted file trains as the source does (every
    parameter's lr and weight decay over 30 steps)."""
    from pathlib import Path

    import mmengine_standin

    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(Path(__file__).parent)    # --model's module is found from the current directory
    out = tmp_path / "converted.yaml"
    assert main(["convert", str(root / source), "--model", "mmengine_standin:model", "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    converted = yaml.safe_load(out.read_text())
    assert converted["optimizer"]["param_groups"]            # the groups, for this model's names
    model = mmengine_standin.model()
    source_run = _lrs_per_parameter(optreg.build(str(root / source), model), model, 30)
    converted_run = _lrs_per_parameter(optreg.build(str(out), model), model, 30)
    assert converted_run == source_run
    assert len({wd for step in source_run for _, wd in step.values()}) == 2   # decayed and exempt parameters


def test_convert_steps_gives_a_run_length_the_source_leaves_to_the_dataset(tmp_path, capsys, monkeypatch):
    """MindFormers' `lr_schedule.total_steps: -1` is the run's length: `convert --steps` gives it as plot's and
    run's --steps do (convert refused it, asking for train.steps_per_epoch), and the converted file trains as the
    source does for that run."""
    from pathlib import Path

    import mmengine_standin

    source = Path(__file__).parent / "suites" / "mindformers" / "1.3.0" / "llama2_finetune_llama2_13b.yaml"
    assert yaml.safe_load(source.read_text())["lr_schedule"]["total_steps"] == -1
    monkeypatch.chdir(Path(__file__).parent)
    out = tmp_path / "converted.yaml"
    assert main(["convert", str(source), "--steps", "40", "--model", "mmengine_standin:model", "-o", str(out)]) == 0
    converted = yaml.safe_load(out.read_text())
    assert (converted["scheduler"]["total_steps"], converted["train"]) == (40, {"steps": 40})
    model = mmengine_standin.model()
    given = {**yaml.safe_load(source.read_text()), "train": {"steps": 40}}   # as plot --steps 40 reads it
    assert _lrs_per_parameter(optreg.build(str(out), model), model, 40) == _lrs_per_parameter(
        optreg.build(given, model), model, 40)


@pytest.mark.parametrize("source", ["tests/fixtures/nemo/configs/synthetic_exponential_epochs.yaml",
                                    "tests/fixtures/hf/corpus/smollm__sft__config.yaml"])
def test_convert_steps_states_a_run_in_epochs_in_steps_alone(source, tmp_path, capsys):
    """A run in epochs converted with --steps N is written as train.steps N alone (it was train.epochs beside it,
    and the converted file then refused the train.steps_per_epoch the source accepts), and reads back that long."""
    out = tmp_path / "converted.yaml"
    assert main(["convert", source, "--steps", "1000", "-o", str(out)]) == 0
    assert yaml.safe_load(out.read_text())["train"] == {"steps": 1000}
    assert optreg.load_config(out).run.steps == 1000
    capsys.readouterr()
    assert main(["validate", source, "--steps", "1000", "+train.steps_per_epoch=100"]) == 0, capsys.readouterr()
    assert main(["validate", str(out), "+train.steps_per_epoch=100"]) == 0, capsys.readouterr()


MMENGINE = Path(__file__).parent / "fixtures" / "mmengine"
MMENGINE_FILES = [*sorted(p for p in (MMENGINE / "configs").glob("*.yaml") if not p.stem.startswith("refused_")),
                  Path(__file__).resolve().parents[1] / "examples" / "mmengine" / "swin_adamw.yaml"]


def _values(built, model) -> dict[str, tuple]:
    """Each parameter's lr, weight decay and momentum (an Adam's betas) in the optimizer now."""
    names = {id(p): n for n, p in model.named_parameters()}
    return {names[id(p)]: (g["lr"], g["weight_decay"], g.get("momentum", g.get("betas")))
            for g in built.optimizer.param_groups for p in g["params"]}


@pytest.mark.parametrize("source", MMENGINE_FILES, ids=lambda p: p.stem)
def test_an_mmengine_file_converts_and_trains_as_the_source(source, tmp_path, capsys, monkeypatch):
    """Every MMEngine corpus file (windows of their own, chained entries, convert_to_iter_based, momentum and
    weight-decay entries) and the example convert (paramwise_cfg for the model --model gives) into optreg's own
    form, `mmengine.ParamSchedulers`, and the converted file trains as the source: every parameter's lr, weight
    decay and momentum at every recorded step of the run, and the same weights after three optimizer steps."""
    import warnings

    import mmengine_standin

    monkeypatch.chdir(Path(__file__).parent)    # --model's module is found from the current directory
    recorded = MMENGINE / "runs" / f"{source.stem}.json"
    fixture = json.loads(recorded.read_text()) if recorded.exists() else {"steps_per_epoch": 1251,
                                                                         "record_steps": list(range(40))}
    out = tmp_path / "native.yaml"
    assert main(["convert", str(source), "--model", "mmengine_standin:model", "-o", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"wrote {out} (mmengine -> optreg)"
    data = yaml.safe_load(out.read_text())
    assert data["scheduler"]["name"] == "mmengine.ParamSchedulers"
    assert optreg.load_config(out).format == "optreg"
    per_epoch = fixture["steps_per_epoch"]
    runs = []
    for path in (source, out):
        model = mmengine_standin.model()
        built = optreg.build(str(path), model, steps_per_epoch=per_epoch)
        values = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # torch: scheduler.step() without optimizer.step()
            for t in range(fixture["record_steps"][-1] + 1):
                if t in fixture["record_steps"]:
                    values.append(_values(built, model))
                built.scheduler.step()
        model = mmengine_standin.model()
        built = optreg.build(str(path), model, steps_per_epoch=per_epoch)
        for t in range(3):
            mmengine_standin.set_grads(model, t)
            built.clip_gradients(model)
            built.optimizer.step()
            built.scheduler.step()
        runs.append((values, {n: p.detach().clone() for n, p in model.named_parameters()}))
    (want, want_weights), (got, got_weights) = runs
    assert got == want
    for name, weight in want_weights.items():
        assert torch.equal(got_weights[name], weight), name


def test_a_bad_entry_in_the_own_form_is_located_with_a_did_you_mean(tmp_path):
    """optreg's own mmengine.ParamSchedulers checks every entry as MMEngine's constructors do, each problem at its
    key: an unknown type or option with a did-you-mean, a value out of MMEngine's range, a missing required one."""
    path = tmp_path / "own.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1, momentum: 0.9}\n"
                    "scheduler:\n"
                    "  name: mmengine.ParamSchedulers\n"
                    "  param_scheduler:\n"
                    "    - {type: LinearLR, start_factr: 0.1, by_epoch: false, end: 5}\n"
                    "    - {type: CosineAnealingLR, by_epoch: false, begin: 5}\n"
                    "    - {type: StepLR, gamma: 2000, by_epoch: false}\n")
    with pytest.raises(optreg.ConfigError) as info:
        optreg.load_config(path)
    assert [(e.path, e.suggestion) for e in info.value.errors] == [
        ("scheduler.param_scheduler[0].start_factr", "start_factor"),
        ("scheduler.param_scheduler[1].type", "CosineAnnealingLR"),
        ("scheduler.param_scheduler[2].step_size", None), ("scheduler.param_scheduler[2].gamma", None)]
    assert str(info.value).splitlines() == [
        f"{path}:5:24: scheduler.param_scheduler[0].start_factr: unknown option of MMEngine's LinearLR "
        f"(did you mean 'start_factor'?)",
        f"{path}:6:8: scheduler.param_scheduler[1].type: unknown MMEngine scheduler 'CosineAnealingLR' "
        f"(did you mean 'CosineAnnealingLR'?)",
        f"{path}:7:7: scheduler.param_scheduler[2].step_size: required option is missing (StepLR)",
        f"{path}:7:22: scheduler.param_scheduler[2].gamma: must be <= 1000, got 2000"]


def test_an_epoch_based_entry_of_the_own_form_needs_the_steps_per_epoch(tmp_path):
    path = tmp_path / "own.yaml"
    path.write_text("optimizer: {name: SGD, lr: 0.1}\nscheduler:\n  name: mmengine.ParamSchedulers\n"
                    "  param_scheduler:\n    - {type: MultiStepLR, milestones: [2]}\ntrain: {epochs: 3}\n")
    assert optreg.load_config(path).format == "optreg"   # the steps per epoch may still come from build()
    with pytest.raises(optreg.ConfigError) as info:
        optreg.build(str(path), torch.nn.Linear(2, 2))
    assert str(info.value).splitlines() == [   # the entry's problem and the run's, at once
        f"{path}:5:7: scheduler.param_scheduler[0].by_epoch: an epoch-based entry (MMEngine's default) needs the "
        f"steps per epoch, MMEngine's len(train_dataloader): train.steps_per_epoch (in the file, or the override "
        f"train.steps_per_epoch=N of optreg run / plot / groups) or build(..., steps_per_epoch=)",
        f"{path}:6:9: train.epochs: 3 epochs need the steps per epoch to give a run length: "
        f"train.steps_per_epoch or --steps N (build(..., steps_per_epoch=))"]
    path.write_text(path.read_text().replace("train: {epochs: 3}", "train: {steps: 6}"))
    with pytest.raises(optreg.ConfigError) as info:
        optreg.build(str(path), torch.nn.Linear(2, 2))
    assert str(info.value).startswith(f"{path}:5:7: scheduler.param_scheduler[0].by_epoch: an epoch-based entry "
                                      f"(MMEngine's default) needs the steps per epoch")
    built = optreg.build(str(path), torch.nn.Linear(2, 2), steps_per_epoch=2)
    lrs = []
    for _ in range(6):
        lrs.append(built.optimizer.param_groups[0]["lr"])
        built.optimizer.step()
        built.scheduler.step()
    assert lrs == [0.1] * 4 + [pytest.approx(0.01)] * 2   # x 0.1 at the end of epoch 2 (MMEngine's milestone)


@pytest.mark.parametrize("text, name", [
    ('{"optimizer": {"type": "AdamW", "params": {"lr": 0.001}}, "scheduler": {"type": "WarmupDecayLR", "params": '
     '{"warmup_max_lr": 0.001, "warmup_num_steps": 3, "total_num_steps": 10}}}', "ds_config.json"),
    ('{"output_dir": "out", "learning_rate": 0.001, "lr_scheduler_type": "cosine", "max_steps": 50}',
     "training_args.json"),
])
def test_steps_on_the_command_line_set_the_run_of_a_foreign_file(text, name, tmp_path, capsys):
    """`optreg run --steps N` wins over a format's own run length (the training-loop precedence), also for readers
    that read their library's own run keys rather than optreg's `train:`."""
    from optreg.cli import _load

    path = tmp_path / name
    path.write_text(text)
    assert _load(str(path), [], None, 6).run.steps == 6
    assert main(["run", str(path), "--steps", "6"]) == 0
    assert "(after 6 steps)" in capsys.readouterr().out

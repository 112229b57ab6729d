"""Cerebras YAML forms → canonical specs, and the schedule rows' option validation."""

from __future__ import annotations

import numpy as np
import pytest

from optreg.api import to_experiment
from optreg.core.registry import REGISTRY
from optreg.core.validate import to_target_kwargs, validate_options
from optreg.dialects.cerebras import schedules as C
from optreg.dialects.cerebras.forms import to_spec, to_specs
from optreg.errors import ConfigError
from optreg.schedules.engine import Schedule, Sequential

LEGACY = [
    {"scheduler": "Linear", "initial_learning_rate": 0.0, "end_learning_rate": 1.77e-4, "steps": 3200},
    {"scheduler": "Linear", "initial_learning_rate": 1.77e-4, "end_learning_rate": 0.0, "decay_steps": 77600},
]
CURRENT = {"SequentialLR": {"schedulers": [
    {"LinearLR": {"initial_learning_rate": 0.0, "end_learning_rate": 4.06e-4, "total_iters": 12500}},
    {"CosineDecayLR": {"initial_learning_rate": 4.06e-4, "end_learning_rate": 1.0e-6, "total_iters": 112500}}]}}


def build(spec: dict) -> Schedule:
    """A schedule from a canonical spec through the registry rows (validation included)."""
    spec = dict(spec)
    name, dialect = spec.pop("name"), spec.pop("dialect", None)
    spec.pop("key", None)
    children = [build(c) for c in spec.pop("schedulers", [])]
    if dialect is None:  # the generic engine combinator
        return Sequential(children, spec.get("milestones"), spec.get("restart", "local"))
    entry = REGISTRY.lookup("scheduler", name, dialect)
    values = validate_options(entry, spec) if not children else spec
    kwargs = to_target_kwargs(entry, values) if not children else {**values, "schedulers": children}
    return entry.resolve()(**kwargs)


def paths(exc) -> list[str]:
    return [e.path for e in exc.value.errors]


def test_number_and_numeric_string_are_constants():
    assert to_spec(0.1) == {"name": "ConstantLR", "dialect": "cerebras", "learning_rate": 0.1}
    assert to_spec("1e-5")["learning_rate"] == 1e-5
    with pytest.raises(ConfigError):
        to_spec("fast")


def test_legacy_list_becomes_cerebras_sequential_with_step_aliases():
    spec = to_spec(LEGACY)
    assert spec["name"] == "SequentialLR" and spec["dialect"] == "cerebras"
    assert [s["total_iters"] for s in spec["schedulers"]] == [3200, 77600]
    schedule = build(spec)
    assert schedule.inner.milestones == (3200,)
    assert schedule(3200) == pytest.approx(1.77e-4) and schedule(1600) == pytest.approx(1.77e-4 / 2)
    assert schedule(3200 + 77600) == 0.0


def test_current_form_gives_the_same_kind_of_spec():
    spec = to_spec(CURRENT)
    assert spec["name"] == "SequentialLR" and spec["dialect"] == "cerebras"
    schedule = build(spec)
    assert schedule(12500) == pytest.approx(4.06e-4)
    assert to_spec([CURRENT]) == spec


def test_legacy_aliases_map_to_each_class_option():
    assert to_spec({"scheduler": "Exponential", "learning_rate": 0.1, "gamma": 0.5, "decay_steps": 10}) == \
        {"name": "ExponentialLR", "dialect": "cerebras", "total_iters": 10, "initial_learning_rate": 0.1,
         "decay_rate": 0.5}
    assert to_spec({"scheduler": "Constant", "base_lr": 0.1, "steps": 5}) == \
        {"name": "ConstantLR", "dialect": "cerebras", "learning_rate": 0.1, "total_iters": 5}
    assert to_spec({"scheduler": "PiecewiseConstant", "values": [0.1, 0.01], "boundaries": [100]}) == \
        {"name": "PiecewiseConstantLR", "dialect": "cerebras", "learning_rates": [0.1, 0.01], "milestones": [100]}
    assert to_spec({"scheduler": "CosineAnnealingWarmRestarts", "learning_rate": 0.1, "t_0": 10})["T_0"] == 10
    assert to_spec({"scheduler": "Cyclic", "learning_rate": 0.01, "max_lr": 0.1})["base_lr"] == 0.01
    # legacy Exponential without steps decays every step (R1.9 defaulted decay_steps to 1)
    assert to_spec({"scheduler": "Exponential", "learning_rate": 0.1, "decay_rate": 0.5})["total_iters"] == 1


def test_main_scheduler_chained():
    spec = to_spec([{"scheduler": "Constant", "learning_rate": 0.1, "main_scheduler": "chained"},
                    {"scheduler": "Exponential", "learning_rate": 1.0, "decay_rate": 0.5, "steps": 10}])
    assert spec["name"] == "ChainedLR" and spec["dialect"] == "cerebras"
    assert build(spec)(20) == pytest.approx(0.1 * 0.25)


def test_disable_lr_steps_reset_gives_a_global_step_sequential():
    items = [{"scheduler": "Constant", "learning_rate": 0.1, "steps": 10},
             {"scheduler": "Exponential", "learning_rate": 0.1, "decay_rate": 0.5, "steps": 10}]
    local = build(to_spec(items))
    shared = to_spec(items, disable_lr_steps_reset=True)
    assert shared["restart"] == "global" and shared["milestones"] == [10]
    shared_schedule = build(shared)
    assert local(15) == pytest.approx(0.1 * 0.5 ** 0.5)
    assert shared_schedule(15) == pytest.approx(0.1 * 0.5 ** 1.5)
    flagged = [dict(items[0], disable_lr_steps_reset=True), items[1]]
    assert to_spec(flagged)["restart"] == "global"


def test_legacy_stages_without_total_iters_use_their_steps_as_milestones():
    spec = to_spec([{"scheduler": "Step", "learning_rate": 0.1, "step_size": 3, "gamma": 0.5, "steps": 12},
                    {"scheduler": "Constant", "learning_rate": 0.01}])
    assert "dialect" not in spec and spec["milestones"] == [12] and spec["restart"] == "local"
    schedule = build(spec)
    assert schedule(11) == pytest.approx(0.1 * 0.5 ** 3) and schedule(12) == 0.01


def test_weight_decay_twins_and_the_schedulers_list():
    specs = to_specs([{"CosineDecayWD": {"initial_val": 0.04, "end_val": 0.4, "total_iters": 125}}, CURRENT])
    assert specs[0] == {"name": "CosineDecayLR", "dialect": "cerebras", "initial_learning_rate": 0.04,
                        "end_learning_rate": 0.4, "total_iters": 125, "key": "weight_decay"}
    assert build(specs[0])(125) == pytest.approx(0.4)
    with pytest.raises(ConfigError) as err:
        to_specs([CURRENT, CURRENT])
    assert paths(err) == ["schedulers"]


@pytest.mark.parametrize("value,path", [
    ([{"scheduler": "Linear", "initial_learning_rate": 0.0, "end_learning_rate": 1.0},
      {"scheduler": "Linear", "initial_learning_rate": 1.0, "end_learning_rate": 0.0, "steps": 5}], "learning_rate[0]"),
    ({"scheduler": "CosineDecay", "initial_learning_rate": 1e-3, "end_learning_rate": 0.0, "stepz": 10},
     "learning_rate.stepz"),
    ({"scheduler": "Cosine"}, "learning_rate.scheduler"),
    ({"initial_learning_rate": 0.1}, "learning_rate.scheduler"),
    ({"scheduler": "Linear", "learning_rate": 0.1, "initial_learning_rate": 0.1, "end_learning_rate": 0.0,
      "steps": 3}, "learning_rate.initial_learning_rate"),
    ([{"scheduler": "Linear", "steps": 3, "initial_learning_rate": 0, "end_learning_rate": 1,
       "main_scheduler": "chained"},
      {"scheduler": "Linear", "steps": 3, "initial_learning_rate": 0, "end_learning_rate": 1,
       "main_scheduler": "sequential"}], "learning_rate.main_scheduler"),
    ({"scheduler": "Linear", "steps": 0, "initial_learning_rate": 0, "end_learning_rate": 1}, "learning_rate.steps"),
    ({"LinearLR": {"initial_learning_rate": 0.0, "end_learning_rate": 1.0, "total_iters": 5,
                   "param_group_tags": "x"}}, "learning_rate.LinearLR.param_group_tags"),
    ({"ScalePerParamLR": {"scheduler": {}}}, "learning_rate.ScalePerParamLR"),
    ({"SequentialLR": {"schedulers": [{"LinearLR": {}}, 3]}}, "learning_rate.SequentialLR.schedulers[1]"),
    ([], "learning_rate"),
])
def test_bad_cerebras_forms_are_config_errors_with_the_path(value, path):
    with pytest.raises(ConfigError) as err:
        to_spec(value)
    assert path in paths(err)


@pytest.mark.parametrize("scheduler, path, line, column", [
    ("{scheduler: Linear, initial_learning_rate: 0.1, end_learning_rate: 0.0, steps: 0}", "scheduler.steps", 2, 84),
    ("\n  - {scheduler: Linear, initial_learning_rate: 0.1, end_learning_rate: 0.0, decay_steps: 0}",
     "scheduler[0].decay_steps", 3, 77),
])
def test_a_legacy_item_s_length_is_refused_at_the_key_the_file_writes(tmp_path, scheduler, path, line, column):
    """A legacy item's `steps: 0` is refused at its own key and position, alone as in a list (the single item's was
    at scheduler.total_iters, the section's line: the key the form maps it to)."""
    config = tmp_path / "c.yaml"
    config.write_text(f"optimizer: {{name: cerebras.SGD, lr: 0.1}}\nscheduler: {scheduler}\n")
    with pytest.raises(ConfigError) as err:
        to_experiment(str(config))
    assert [(e.path, e.message, e.location.line, e.location.column) for e in err.value.errors] == [
        (path, "must be >= 1, got 0", line, column)]


@pytest.mark.parametrize("value, message", [(0, "must be >= 1, got 0"), (1.5, "must be an integer, got 1.5")])
def test_a_stage_length_says_one_thing_through_python_and_from_a_file(tmp_path, value, message):
    """`total_iters: 0` says what the own form's total_iters says, in each Cerebras form, handed to
    configure_lr_scheduler or written in a file (the legacy item said `must be an integer >= 1`)."""
    import torch

    import optreg

    legacy = {"scheduler": "Linear", "initial_learning_rate": 0.1, "end_learning_rate": 0.0, "total_iters": value}
    trainer = {"LinearLR": {"initial_learning_rate": 0.1, "end_learning_rate": 0.0, "total_iters": value}}
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.1)
    for spec, path in [(legacy, "total_iters"), ([legacy], "[0].total_iters"),
                       (trainer, "total_iters")]:
        with pytest.raises(ConfigError) as err:
            optreg.configure_lr_scheduler(optimizer, spec)
        assert [(e.path, e.message) for e in err.value.errors] == [(path, message)]
    for scheduler, path in [(f"{{scheduler: Linear, initial_learning_rate: 0.1, end_learning_rate: 0.0, "
                             f"total_iters: {value}}}", "scheduler.total_iters"),
                            (f"{{name: LinearLR, dialect: cerebras, initial_learning_rate: 0.1, end_learning_rate: "
                             f"0.0, total_iters: {value}}}", "scheduler.total_iters")]:
        config = tmp_path / "c.yaml"
        config.write_text(f"optimizer: {{name: cerebras.SGD, lr: 0.1}}\nscheduler: {scheduler}\n")
        with pytest.raises(ConfigError) as err:
            to_experiment(str(config))
        assert [(e.path, e.message) for e in err.value.errors] == [(path, message)]


LEGACY_ALIASES = """optimizer: {name: cerebras.AdamW, lr: 0.1, weight_decay: 0.1}
scheduler:
  - scheduler: Linear
    learning_rate: -1.0
    end_learning_rate: 1.0e-4
    steps: 100
  - scheduler: Exponential
    base_lr: -2.0
    gamma: -0.5
    decay_steps: 10
  - scheduler: CosineAnnealing
    learning_rate: 0.1
    t_max: 0
"""


@pytest.mark.parametrize("text, expected", [
    # legacy spellings of the lr (learning_rate, base_lr), of the rate (gamma) and of T_max: they were said at
    # the options they are read as, scheduler.schedulers[0].initial_learning_rate and so on, at the item's line
    (LEGACY_ALIASES, [("scheduler[0].learning_rate", "must be >= 0, got -1.0", 4, 5),
                      ("scheduler[1].base_lr", "must be >= 0, got -2.0", 8, 5),
                      ("scheduler[1].gamma", "must be > 0, got -0.5", 9, 5),
                      ("scheduler[2].t_max", "must be >= 1, got 0", 13, 5)]),
    # the weight-decay twin's generic names: it was scheduler.initial_learning_rate, at the section's line
    ("optimizer: {name: cerebras.AdamW, lr: 0.1, weight_decay: 0.1}\nscheduler:\n  CosineDecayWD:\n"
     "    initial_val: -1.0\n    end_val: 0.0\n    total_iters: 10\n",
     [("scheduler.CosineDecayWD.initial_val", "must be >= 0, got -1.0", 4, 5)]),
])
def test_a_value_under_a_legacy_or_generic_name_is_said_at_that_name(tmp_path, capsys, text, expected):
    """A Cerebras form's option read under another name (a legacy item's learning_rate as initial_learning_rate, a
    weight-decay twin's initial_val) has its errors at the key the file writes, in validate and build alike."""
    import torch

    import optreg
    from optreg.cli import main

    path = tmp_path / "legacy.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        optreg.build(str(path), torch.nn.Linear(2, 2))
    assert [(e.path, e.message, e.location.line, e.location.column) for e in info.value.errors] == expected
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().err.splitlines() == [f"{path}:{line}:{column}: {p}: {m}"
                                                    for p, m, line, column in expected]


# ---------------------------------------------------------------------------------------------------
# row-level validation (the registry's models over the Cerebras rows)
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dialect,name,options,path", [
    ("cerebras", "OneCycleLR", {"initial_learning_rate": 1e-4, "max_lr": 1e-3, "pct_start": 1.2}, "pct_start"),
    ("cerebras", "CyclicLR", {"base_lr": 1e-2, "max_lr": 1e-3}, "max_lr"),
    ("cerebras", "LinearLR", {"initial_learning_rate": 0.0, "end_learning_rate": 1.0, "total_iters": 0}, "total_iters"),
    ("cerebras", "LinearLR", {"initial_learning_rate": 0.0, "end_learning_rate": 1.0, "total_iters": 5, "power": 2},
     "power"),
    ("cerebras", "PiecewiseConstantLR", {"learning_rates": [0.1], "milestones": [5]}, "learning_rates"),
    ("mindspore", "CosineDecayLR", {"min_lr": 0.1, "max_lr": 0.01, "decay_steps": 10}, "max_lr"),
    ("mindspore", "ExponentialDecayLR", {"learning_rate": 1, "decay_rate": 0.9, "decay_steps": 10}, "learning_rate"),
    ("mindspore", "WarmUpLR", {"learning_rate": 0.1, "warmup_steps": 0}, "warmup_steps"),
    ("oneflow", "MultiStepLR", {"milestones": [30, 10]}, "milestones"),
    ("oneflow", "LinearLR", {"start_factor": 1.5}, "start_factor"),
    ("hf", "linear", {"num_warmup_steps": 10}, "num_training_steps"),
    ("hf", "cosine", {"num_warmup_steps": 1.5, "num_training_steps": 100}, "num_warmup_steps"),
    ("timm", "cosine", {"t_initial": 0}, "t_initial"),
    ("nemo", "CosineAnnealing", {"warmup_steps": 10}, "max_steps"),
])
def test_rows_reject_bad_options_with_the_path(dialect, name, options, path):
    entry = REGISTRY.lookup("scheduler", name, dialect)
    with pytest.raises(ConfigError) as err:
        values = validate_options(entry, options)
        entry.resolve()(**to_target_kwargs(entry, values))
    assert path in paths(err)


def test_rows_accept_fractions_and_keep_linear_a_polynomial():
    entry = REGISTRY.lookup("scheduler", "linear", "hf")
    values = validate_options(entry, {"num_warmup_steps": 0.05, "num_training_steps": 1000})
    assert entry.resolve()(**to_target_kwargs(entry, values)).num_warmup_steps == 50
    linear = REGISTRY.lookup("scheduler", "cerebras.Linear")
    schedule = linear.resolve()(**to_target_kwargs(linear, validate_options(
        linear, {"initial_learning_rate": 0.0, "end_learning_rate": 1.0, "total_iters": 4})))
    assert isinstance(schedule, C.PolynomialLR) and [schedule(t) for t in range(5)] == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_names_are_unique_per_dialect_and_reach_their_rows():
    for dialect, name in [("hf", "cosine_with_min_lr"), ("hf", "CosineWithMinLR"), ("timm", "CosineLRScheduler"),
                          ("nemo", "noam_annealing"), ("mindspore", "dynamic_cosine_decay_lr"),
                          ("mindspore", "CosineDecayLR"), ("oneflow", "WarmUpLR"), ("cerebras", "ChainedScheduler"),
                          ("cerebras", "sequential"), ("cerebras", "chained")]:
        assert REGISTRY.lookup("scheduler", name, dialect).dialect == dialect
    # MindSpore's function and its class are each found by their own spelling (tests/test_name_resolution.py)
    mindspore = {n: REGISTRY.lookup("scheduler", n, "mindspore").name for n in ("cosine_decay_lr", "CosineDecayLR")}
    assert mindspore == {"cosine_decay_lr": "cosine_decay_lr", "CosineDecayLR": "CosineDecayLR"}


def test_values_and_lengths_of_rows_agree_with_their_schedules():
    for entry in REGISTRY.entries("scheduler"):
        target = entry.resolve()
        if entry.dialect in ("torch",) or not (isinstance(target, type) and issubclass(target, Schedule)):
            continue
        if target.values in ("factor", "absolute"):
            assert entry.values == target.values, entry.qualname
        if entry.length is not None:
            assert entry.length in {f for f in target.__dataclass_fields__}, entry.qualname
    assert np.isfinite(1.0)


TORCH_OPTIONS_IN_CEREBRAS_FORM = """\
optimizer: {name: torch.SGD, lr: 0.1, momentum: 0.9}
scheduler:
  - LinearLR: {start_factor: 0.1, total_iters: 5}
  - CosineAnnealingLR: {T_max: 10}
  - StepLR: {initial_learning_rate: 0.1, step_size: 2, gamma: 0.5}
train: {steps: 15}
"""


def test_a_cerebras_form_item_with_torch_s_options_says_how_to_write_torch_s(tmp_path, capsys):
    """`{Name: {...}}` is Cerebras' form: an item Cerebras' class refuses whose keys are all torch's same-named
    scheduler's is one error at the item's path and position, naming the form and torch's spelling (it was
    'scheduler.schedulers[0].LinearLR.start_factor: unknown option of Cerebras LinearLR' and a missing
    initial_learning_rate at the list); an item Cerebras takes (StepLR with its options) is read as before."""
    import torch

    import optreg
    from optreg.cli import main

    path = tmp_path / "torch_in_cerebras_form.yaml"
    path.write_text(TORCH_OPTIONS_IN_CEREBRAS_FORM)
    expected = [
        ("scheduler.schedulers[0]", "start_factor is an option of torch's LinearLR, not of Cerebras'; the {Name: "
                                    "{...}} form reads Cerebras' schedulers: write `- {name: torch.LinearLR, "
                                    "start_factor: 0.1, total_iters: 5}` for torch's", 3),
        ("scheduler.schedulers[1]", "T_max is an option of torch's CosineAnnealingLR too, and Cerebras' needs "
                                    "initial_learning_rate; the {Name: {...}} form reads Cerebras' schedulers: "
                                    "write `- {name: torch.CosineAnnealingLR, T_max: 10}` for torch's", 4)]
    with pytest.raises(ConfigError) as info:
        optreg.build(str(path), torch.nn.Linear(2, 2))
    assert [(e.path, e.message, e.location.line, e.location.column) for e in info.value.errors] == \
        [(p, m, line, 5) for p, m, line in expected]
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().err.splitlines() == [f"{path}:{line}:5: {p}: {m}" for p, m, line in expected]
    fixed = TORCH_OPTIONS_IN_CEREBRAS_FORM.replace(
        "- LinearLR: {start_factor: 0.1, total_iters: 5}", "- {name: torch.LinearLR, start_factor: 0.1, "
                                                            "total_iters: 5}").replace(
        "- CosineAnnealingLR: {T_max: 10}", "- {name: torch.CosineAnnealingLR, T_max: 10}")
    assert optreg.load_config(fixed).scheduler[0] == {"name": "torch.LinearLR", "start_factor": 0.1,
                                                      "total_iters": 5}
    with pytest.raises(ConfigError) as info:   # a section's one item: torch's spec, not a list's item
        optreg.load_config("optimizer: {name: SGD, lr: 0.1}\nscheduler: {StepLR: {step_size: 2}}\n")
    assert [(e.path, e.message) for e in info.value.errors] == [
        ("scheduler", "step_size is an option of torch's StepLR too, and Cerebras' needs initial_learning_rate, "
                      "gamma; the {Name: {...}} form reads Cerebras' schedulers: write `{name: torch.StepLR, "
                      "step_size: 2}` for torch's")]
    with pytest.raises(ConfigError) as info:   # a Model Zoo file's learning_rate, where torch's has no place
        to_spec({"LinearLR": {"start_factor": 0.1, "total_iters": 5}})
    assert [(e.path, e.message) for e in info.value.errors] == \
        [("learning_rate.LinearLR.start_factor", "unknown option of Cerebras LinearLR")]


@pytest.mark.parametrize("scheduler, path, column", [
    ("  LinearLR: {initial_learning_rate: 0.1, end_learning_rate: 0.01, total_iters: 5}\n",
     "scheduler.LinearLR.total_iters", 67),
    ("  - {scheduler: Linear, initial_learning_rate: 0.1, end_learning_rate: 0.01, total_iters: 5}\n",
     "scheduler[0].total_iters", 78),
], ids=["current", "legacy_item"])
def test_a_cerebras_form_s_warning_is_at_the_path_and_position_of_an_error_on_the_same_key(tmp_path, capsys,
                                                                                           scheduler, path, column):
    """The schedule linter's warning on an option of a Cerebras form in optreg's own file is at the key the file
    writes, as an error there is (it was at scheduler.total_iters, the section's position 2:1)."""
    from optreg.cli import main

    file = tmp_path / "form.yaml"
    file.write_text(f"optimizer: {{name: cerebras.SGD, lr: 0.1}}\nscheduler:\n{scheduler}train: {{steps: 20}}\n")
    assert main(["validate", str(file)]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"{file}:3:{column}: warning: {path}: total_iters 5 spans 5 steps, under 0.9 × the 20 steps of the run "
        f"(train.steps or --steps): the schedule ends early; set {path} to 20"]
    file.write_text(file.read_text().replace("total_iters: 5", "total_iters: -5"))
    assert main(["validate", str(file)]) == 1
    assert capsys.readouterr().err.splitlines() == [f"{file}:3:{column}: {path}: must be >= 1, got -5"]


def test_a_legacy_list_s_warning_on_the_whole_sequence_is_at_the_section(tmp_path, capsys):
    """A warning about the stages of a several-item Cerebras legacy list in optreg's own file together is at the
    list the file writes (`scheduler`, its position): it was at scheduler.schedulers, which is no key of the file."""
    from optreg.cli import main

    file = tmp_path / "form.yaml"
    file.write_text("optimizer: {name: cerebras.SGD, lr: 0.1}\nscheduler:\n"
                    "  - {scheduler: Linear, initial_learning_rate: 0.0, end_learning_rate: 0.1, total_iters: 5}\n"
                    "  - {scheduler: Linear, initial_learning_rate: 0.1, end_learning_rate: 0.0, total_iters: 95}\n"
                    "train: {steps: 50}\n")
    assert main(["validate", str(file)]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"{file}:2:1: warning: scheduler: the stages span 100 steps, more than the 50 steps of the run (train.steps "
        f"or --steps): the schedule never finishes; make the lengths of scheduler add up to 50"]


def test_a_cerebras_form_s_unusable_values_are_refused_at_the_key_the_file_writes(tmp_path, capsys):
    """The values a schedule written in a Cerebras form gives (check_schedule) are refused at the key the file
    writes it with and that key's position, as its planning errors are, in validate with and without --model and in
    build: the error was at `scheduler`, the section's position (3:1)."""
    file = tmp_path / "form.yaml"
    file.write_text("optimizer: {name: cerebras.SGD, lr: 0.1}\ntrain: {steps: 100}\nscheduler:\n  SequentialLR:\n"
                    "    schedulers:\n"
                    "      - LinearLR: {initial_learning_rate: 0.0, end_learning_rate: 0.1, total_iters: 5}\n"
                    "      - ExponentialLR: {initial_learning_rate: 0.1, decay_rate: 1.0e+9, total_iters: 1}\n")
    said = f"{file}:4:3: scheduler.SequentialLR: SequentialLR gives no usable lr at step 8 (1e+26)"
    _refused_alike(file, said, capsys)


LR_MULT = "optimizer:\n  name: cerebras.SGD\n  lr: 0.1\n  param_groups:\n    - {params: '*bias', lr_mult: 0.5}\n"
ABSOLUTE = ("scheduler.{key}: {key} sets an absolute lr, the same in every group, which would undo "
            "optimizer.param_groups[0].lr_mult; use a schedule whose values are factors of each group's lr (torch, "
            "OneFlow, HF, timm)")


@pytest.mark.parametrize("text, line, key, message", [
    (LR_MULT + "scheduler:\n  CosineDecayLR: {initial_learning_rate: 0.1, end_learning_rate: 0.0, total_iters: 20}\n",
     7, "CosineDecayLR", ABSOLUTE),
    (LR_MULT + "scheduler:\n  SequentialLR:\n    schedulers:\n"
     "      - LinearLR: {initial_learning_rate: 0.0, end_learning_rate: 0.1, total_iters: 10}\n"
     "      - CosineDecayLR: {initial_learning_rate: 0.1, end_learning_rate: 0.0, total_iters: 20}\n",
     7, "SequentialLR", ABSOLUTE),
    ("dialect: cerebras\noptimizer: {name: mindspore.Adam, learning_rate: [0.1, 0.05, 0.01]}\ntrain: {steps: 3}\n"
     "scheduler:\n  CosineDecayLR: {initial_learning_rate: 0.1, end_learning_rate: 0.0, total_iters: 3}\n", 5,
     "CosineDecayLR", "scheduler.{key}: {key} drives lr, but optimizer.learning_rate is a per-step list or schedule "
     "(a dynamic learning_rate) that the optimizer sets at every step: the scheduler would change nothing and the "
     "groups would report an lr that is not the one applied; give a number as the optimizer's lr, or no scheduler "
     "for lr"),
], ids=["absolute over lr_mult", "a sequence of them", "per-step lr"])
def test_a_cerebras_form_s_conflict_with_the_groups_is_at_the_key_the_file_writes(text, line, key, message,
                                                                                   tmp_path, capsys):
    """What planning finds of the schedule against the optimizer's groups (an absolute lr over an lr_mult, an lr the
    optimizer sets per step itself) is at the class key a Cerebras form writes and its position, as check_schedule's
    problems are, in validate with and without --model and in build: it was at `scheduler`, the section's (6:1)."""
    file = tmp_path / "form.yaml"
    file.write_text(text)
    said = f"{file}:{line}:3: {message.format(key=key)}"
    _refused_alike(file, said, capsys)


def _refused_alike(file, said: str, capsys) -> None:
    """`file` is refused with the one error `said` by validate, with and without --model, and by build."""
    import optreg
    from optreg.cli import main

    for model in ([], ["--model", "tests.test_schedule_forms:_model"]):
        assert main(["validate", str(file), *model]) == 1
        assert capsys.readouterr().err.strip() == said
    with pytest.raises(ConfigError) as info:
        optreg.build(str(file), _model())
    assert str(info.value) == said


def _model():
    """A model for `optreg validate --model`."""
    import torch

    return torch.nn.Linear(2, 2)

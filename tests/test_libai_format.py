"""The LiBai format: LazyConfig files read with ast (never run), translated into the oneflow dialect's form, with
LiBai's run length, schedulers (libai/scheduler/lr_scheduler.py composed of OneFlow's) and parameter groups."""

from __future__ import annotations

import math
import shutil
import textwrap
import warnings
from pathlib import Path

import pytest
import torch

import optreg
from optreg.config.experiment import load_config
from optreg.errors import ConfigError, Location

import libai_corpus

COMMON = libai_corpus.tree() / "configs" / "common"   # LiBai's own, from the corpus
MAIN = """\
from libai.config import LazyCall
from .common.train import train
from .common.optim import optim

train.train_iter = 200
train.warmup_ratio = 0.05
optim.lr = 5e-4
{extra}
"""


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "configs" / "common").mkdir(parents=True)
    for name in ("optim.py", "train.py"):
        shutil.copy(COMMON / name, tmp_path / "configs" / "common" / name)

    def write(extra: str = "") -> str:
        path = tmp_path / "configs" / "main.py"
        path.write_text(MAIN.format(extra=textwrap.dedent(extra)))
        return str(path)
    return write


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.norm = torch.nn.LayerNorm(4)


def test_lazyconfig_translates_to_the_oneflow_form(tree):
    e = load_config(tree())
    assert e.format == "libai" and e.run.steps == 200
    assert e.optimizer == {"name": "AdamW", "dialect": "oneflow", "lr": 5e-4, "weight_decay": 0.01,
                           "betas": [0.9, 0.999], "eps": 1e-8, "do_bias_correction": True}
    # warmup_iter = ceil(200 * 0.05) = 10 (DefaultTrainer.auto_scale_hyperparams); max_iter = train_iter
    assert e.scheduler == {"name": "WarmupLR", "warmup_factor": 0.001, "warmup_iters": 10, "warmup_method": "linear",
                           "scheduler": {"name": "CosineDecayLR", "alpha": 0.01, "decay_steps": 200}}


def test_the_run_length_given_beside_the_file_replaces_train_iter(tree, capsys):
    """train_iter is the file's own run length: `build(total_steps=)` and `--steps` replace it, as they replace
    DeepSpeed's and the Trainer's (it was read as a `train.steps` the file does not have, and the two disagreed)."""
    from optreg.cli import main

    assert load_config(tree()).with_run(total_steps=3).run.steps == 3
    assert main(["plot", tree(), "--steps", "3", "--csv"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "step,group,key,value" and {r.split(",")[0] for r in rows[1:]} == {"0", "1", "2"}


def test_warmup_cosine_values_and_groups(tree):
    net = Net()
    b = optreg.build(tree(), net)
    names = {id(p): n for n, p in net.named_parameters()}
    groups = {frozenset(names[id(p)] for p in g["params"]): (g["weight_decay"], g["clip_grad_max_norm"])
              for g in b.optimizer.param_groups if g["params"]}
    assert groups == {frozenset({"proj.weight"}): (0.01, 1.0),
                      frozenset({"proj.bias", "norm.weight", "norm.bias"}): (0.0, 1.0)}
    lrs = []
    for _ in range(30):
        lrs.append(b.optimizer.param_groups[0]["lr"])
        b.optimizer.step()
        b.scheduler.step()
    for t, lr in enumerate(lrs):   # OneFlow's WarmUpLR (linear, not prefixed) around CosineDecayLR(200, alpha)
        cosine = (1 - 0.01) * 0.5 * (1 + math.cos(math.pi * t / 200)) + 0.01
        if t < 10:
            end = (1 - 0.01) * 0.5 * (1 + math.cos(math.pi * 10 / 200)) + 0.01
            factor = 0.001 + (end - 0.001) * t / 10
        else:
            factor = cosine
        assert lr == pytest.approx(5e-4 * factor, rel=1e-9)


@pytest.mark.parametrize("warmup_ratio", [0.05, 0.0])
def test_a_warmup_schedules_argument_is_refused_at_the_key_the_file_writes(warmup_ratio, tmp_path, capsys):
    """WarmupCosineLR's alpha is an argument of the scheduler's call, beside warmup_factor, whether the translated
    schedule wraps it in a warmup (`scheduler.scheduler.alpha` in optreg's form) or not: validate, plot (through an
    override too) and build say `train.scheduler.alpha`, at the argument."""
    from optreg.cli import main

    example = Path(__file__).resolve().parent.parent / "examples" / "libai" / "vit_finetune.py"
    path = tmp_path / "vit.py"
    path.write_text(example.read_text().replace("alpha=0.01", "alpha=-0.01")
                    .replace("warmup_ratio=0.05", f"warmup_ratio={warmup_ratio}"))
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "alpha=-0.01" in text)
    column = path.read_text().splitlines()[line - 1].index("alpha=") + 1   # at the keyword, as a YAML file's key
    error = f"{path}:{line}:{column}: train.scheduler.alpha: must be >= 0, got -0.01"
    with pytest.raises(ConfigError) as info:
        optreg.build(str(path), Net())
    assert str(info.value) == error
    assert main(["validate", str(path)]) == 1 and capsys.readouterr().err.strip().endswith(error)
    assert main(["plot", str(example), "train.scheduler.alpha=-1", "--csv"]) == 1
    assert capsys.readouterr().err.strip() == ("override train.scheduler.alpha=-1: train.scheduler.alpha: must be "
                                               ">= 0, got -1")


def test_an_arguments_error_is_at_its_keyword(tree):
    """An argument of a LazyCall (or dict(...)) and a key of a dict literal are located at the keyword or key the
    file writes (`lr` of `lr=-1`), as a YAML file's key is and as the other readers place their errors (it was at
    the value)."""
    path = tree("""\
        import oneflow as flow
        from libai.scheduler import WarmupCosineLR
        optim = LazyCall(flow.optim.AdamW)(params=optim.params,
                                           lr=-1, betas=(0.9, 0.999))
        train.scheduler = {"_target_": WarmupCosineLR, "warmup_factor": 0.001,
                           "alpha": -0.5, "warmup_method": "linear"}
        """)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert sorted(str(e) for e in exc.value.errors) == [f"{path}:11:36: optim.lr: must be >= 0, got -1",
                                                        f"{path}:13:20: train.scheduler.alpha: must be >= 0, got -0.5"]


@pytest.mark.parametrize("model", [[], ["--model", "mmengine_standin:model"]])
def test_a_bad_clip_grad_max_norm_is_one_error_at_its_keyword(model, tree, capsys):
    """get_default_optimizer_params' clip_grad_max_norm, every group's, is checked as a param_groups rule's
    (ONEFLOW_GROUP_KEYS) when the file is read: one error at the keyword, in validate without a model (it passed)
    and with one, and in build (it was said once per group, at `optim`)."""
    from optreg.cli import main

    path = tree()
    common = Path(path).parent / "common" / "optim.py"   # LiBai's own, where the file's optim comes from
    common.write_text(common.read_text().replace("clip_grad_max_norm=1.0", "clip_grad_max_norm=-1"))
    line = next(i for i, t in enumerate(common.read_text().splitlines(), 1) if "clip_grad_max_norm=-1" in t)
    column = common.read_text().splitlines()[line - 1].index("clip_grad_max_norm") + 1
    error = f"{common}:{line}:{column}: optim.params.clip_grad_max_norm: must be >= 0, got -1"
    assert main(["validate", path, *model]) == 1
    assert capsys.readouterr().err.strip() == f"{path}: {error}"
    with pytest.raises(ConfigError) as info:
        optreg.build(path, Net())
    assert [str(e) for e in info.value.errors] == [error]


def test_a_file_that_would_run_code_is_refused_without_running_it(tree, tmp_path):
    marker = tmp_path / "marker"
    for code in (f"open({str(marker)!r}, 'w').write('ran')",
                 f"__import__('os').system('touch {marker}')",
                 f"train.x = (lambda: open({str(marker)!r}, 'w'))()",
                 "optim.lr = ().__class__.__bases__[0]",
                 f"def f():\n    open({str(marker)!r}, 'w')\nf()"):
        with pytest.raises(ConfigError) as exc:
            load_config(tree(code))
        assert "without running" in str(exc.value) and "main.py:" in str(exc.value)
    assert not marker.exists()


def test_a_module_of_code_the_config_imports_is_not_read_but_refuses_nothing_it_does_not_give(tree, tmp_path):
    """SimCSE's, Stable Diffusion's and MOCOV3's configs import their datasets (`from projects.SimCSE.dataset.dataset
    import TrainDataset_sup`): a module with classes, which LiBai imports as code. Its names are not read, an error
    only where the optimizer or the schedule takes one (the whole config was refused at the module's class)."""
    (tmp_path / "projects" / "demo").mkdir(parents=True)
    (tmp_path / "projects" / "demo" / "dataset.py").write_text("import oneflow\n\n\nclass Data:\n    pass\n\n\n"
                                                               "LR = 0.1\n")
    path = tree("from projects.demo.dataset import Data, LR\ndataloader = dict(train=LazyCall(Data)(root='x'))")
    experiment = load_config(path)
    assert (experiment.optimizer["lr"], experiment.run.steps) == (5e-4, 200)
    with pytest.raises(ConfigError) as info:
        load_config(tree("from projects.demo.dataset import LR\noptim.lr = LR"))
    dataset = tmp_path / "projects" / "demo" / "dataset.py"
    assert [(e.path, e.message, e.location.line) for e in info.value.errors] == [
        ("optim.lr", f"not read: LR of {dataset}:4:1: a lambda or a function or class definition; optreg reads "
                     f"LazyConfig files without running them", 9)]


@pytest.mark.parametrize("extra, column", [("train.update(dict(train_iter=200, warmup_ratio=1.5))", 35),
                                           ("train.update(warmup_ratio=1.5)", 14)])
def test_a_key_that_update_sets_is_located_at_the_update(tree, extra, column):
    """SimCSE's configs set their run with `train.update(dict(train_epoch=1, train_iter=1000, ...))`: an error at a
    key it sets was located at the imported common/train.py, which the file overrides."""
    path = tree(extra)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert [(e.path, e.location) for e in info.value.errors] == [("train.warmup_ratio", Location(path, 8, column))]


def test_a_missing_common_import_is_named(tmp_path):
    path = tmp_path / "alone.py"
    path.write_text(MAIN.format(extra=""))
    with pytest.raises(ConfigError) as exc:
        load_config(str(path))
    assert ".common.optim" in str(exc.value) and "not beside the file" in str(exc.value)


GET_CONFIG = """\
from libai.config import get_config

optim = get_config("common/optim.py").optim
train = get_config({arg}).train
train.train_iter = 100
"""


def test_get_config_reads_only_libais_configs_folder_as_libai_does(tree, tmp_path):
    """LiBai's get_config(config_path) is pkg_resources.resource_filename("libai.config", "configs/" + path): a path
    of its packaged configs/ folder (here the tree's, found from an ancestor of the file). An absolute path or `..`
    (which pkg_resources does not allow, and which optreg followed out of the tree) and a call LiBai's signature
    refuses are errors at the call; the file they name is not read."""
    tree()   # configs/common/{optim,train}.py
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "train.py").write_text("train = dict(train_iter=7)\n")
    path = tmp_path / "projects" / "demo" / "configs" / "config.py"
    path.parent.mkdir(parents=True)
    for arg in ('"common/train.py"', 'config_path="common/train.py"', '"common/../common/train.py"'):
        path.write_text(GET_CONFIG.format(arg=arg))   # a `..` within configs/ names a file of it, as in LiBai
        assert load_config(str(path)).run.steps == 100
    for arg, said in (
            (repr(str(tmp_path / "elsewhere" / "train.py")), "an absolute path or a `..` out of that folder leaves"),
            ('"../../../elsewhere/train.py"', "an absolute path or a `..` out of that folder leaves it"),
            ('"common/../../elsewhere/train.py"', "pkg_resources deprecates both in a resource path; optreg reads no "
                                                  "file outside the folder"),
            ('"common/train.py", "x"', "get_config takes one config path (get_config(config_path)), got 2 arguments "
                                       "and no keywords"),
            ('path="common/train.py"', "got 0 arguments and path")):
        path.write_text(GET_CONFIG.format(arg=arg))
        with pytest.raises(ConfigError) as info:
            load_config(str(path))
        assert [(e.path, e.location) for e in info.value.errors] == [("", Location(str(path), 4, 9))], arg
        assert said in info.value.errors[0].message, arg


def test_a_get_config_file_that_is_not_there_is_named_with_the_closest(tree, tmp_path):
    """A get_config path no configs/ folder up the file's folders has (LiBai: not available in LiBai configs) is an
    error where the reader needs its value, saying where it was looked for, with the closest file of its folder."""
    tree()
    path = tmp_path / "projects" / "demo" / "configs" / "config.py"
    path.parent.mkdir(parents=True)
    path.write_text(GET_CONFIG.format(arg='"common/trian.py"'))
    with pytest.raises(ConfigError) as info:
        load_config(str(path))
    (error,) = info.value.errors
    assert (error.path, error.suggestion) == ("train", "common/train.py")
    assert error.message == ("not read: an attribute of get_config('common/trian.py') (config.py:4): no configs/ "
                             "folder up the file's folders has common/trian.py (LiBai: not available in LiBai "
                             "configs) (config.py:4)")


def test_a_not_python_lazyconfig_is_not_claimed(tmp_path):
    path = tmp_path / "plain.py"
    path.write_text("x = 1\n")
    with pytest.raises(ConfigError) as exc:
        load_config(str(path))
    assert "none recognised this one" in str(exc.value)


def test_scheduler_errors_carry_the_line(tree):
    with pytest.raises(ConfigError) as exc:
        load_config(tree("from libai.scheduler import WarmupCosinLR\n"
                         "train.scheduler = LazyCall(WarmupCosinLR)(warmup_factor=0.1)"))
    (item,) = exc.value.errors
    assert item.path == "train.scheduler" and "did you mean 'WarmupCosineLR'" in str(exc.value)
    assert item.location.line == 9 and item.location.file.endswith("main.py")


@pytest.mark.parametrize("extra, path, message", [
    ("train.scheduler = LazyCall(WarmupCosineLR)(warmup_factor=0.001, alpha=0.1)", "train.scheduler",
     "LazyCall's target is not read: the name 'WarmupCosineLR' (main.py:8) is neither imported nor bound in the "
     "file; import it as LiBai's configs do: from libai.scheduler import WarmupCosineLR"),
    ("train.scheduler = LazyCall(WarmupCosinLR)(warmup_factor=0.001)", "train.scheduler",
     "LazyCall's target is not read: the name 'WarmupCosinLR' (main.py:8) is neither imported nor bound in the "
     "file; LiBai's configs import their scheduler from libai.scheduler (WarmupCosineLR, WarmupCosineAnnealingLR, "
     "WarmupStepLR, WarmupMultiStepLR, WarmupExponentialLR, WarmupPolynomialLR) (did you mean 'WarmupCosineLR'?)"),
    ("optim = LazyCall(AdamW)(lr=1e-4)", "optim",
     "LazyCall's target is not read: the name 'AdamW' (main.py:8) is neither imported nor bound in the file; "
     "LiBai's configs write `import oneflow as flow` and LazyCall(flow.optim.AdamW)"),
])
def test_a_lazycall_of_a_name_not_imported_says_so_and_the_import(tree, extra, path, message):
    """A LazyCall whose target the file never imports is one error at the section saying so in full, with the
    import LiBai's configs write; it was 'expected LazyCall(<LiBai scheduler>)(...) of ..., got "the name
    'WarmupCosineLR' (train.py:2), not boun…(61 chars)'."""
    with pytest.raises(ConfigError) as exc:
        load_config(tree(extra))
    assert [(e.path, e.location.line, e.message + (f" (did you mean {e.suggestion!r}?)" if e.suggestion else ""))
            for e in exc.value.errors] == [(path, 8, message)]


GRAPH = "from .common.models.graph import graph\n"


@pytest.fixture
def eager_tree(tree, tmp_path):
    """`tree` with LiBai's configs/common/models/graph.py (graph.enabled = True, from the corpus)."""
    (tmp_path / "configs" / "common" / "models").mkdir()
    shutil.copy(COMMON / "models" / "graph.py", tmp_path / "configs" / "common" / "models" / "graph.py")
    return tree


@pytest.mark.parametrize("extra, said", [
    ("train.train_iter = 'x'", "8:1: train.train_iter: expected an integer, got str 'x'"),
    ("train.train_epoch = -1", "8:1: train.train_epoch: must be >= 0, got -1"),
    ("train.warmup_ratio = 1.5", "8:1: train.warmup_ratio: must be < 1, got 1.5"),
    ("train.warmup_ratio = -0.5", "8:1: train.warmup_ratio: must be >= 0, got -0.5"),
    ("train.warmup_ratio = 'a'", "8:1: train.warmup_ratio: expected a number, got str 'a'"),
    (GRAPH + "graph.enabled = 0\ntrain.num_accumulation_steps = 4", "9:1: graph.enabled: expected true or false, got "
                                                                     "int 0"),
    (GRAPH + "graph.enabled = False\ntrain.num_accumulation_steps = 0",
     "10:1: train.num_accumulation_steps: must be >= 1, got 0"),
])
def test_a_bad_run_number_or_flag_says_what_the_own_form_says(eager_tree, extra, said):
    """The run length, warmup ratio, accumulation steps and graph.enabled word a bad value as the own form's options
    do (models.number_message, bound_message, bool_message; they said 'must be an integer >= 0, got 'x'', 'must be a
    number in [0, 1), got 1.5', 'must be True or False, got 0'), at the line that binds it (graph.enabled had
    none)."""
    path = eager_tree(extra)
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert [str(e) for e in exc.value.errors] == [f"{path}:{said}"]


def test_eager_accumulation_steps_the_scheduler_on_every_micro_batch(eager_tree):
    """graph.enabled = False with num_accumulation_steps 4: auto_scale_hyperparams multiplies train_iter (200) and
    warmup_iter (ceil(200 × 0.05) = 10) by 4 (not ceil(800 × 0.05)); the run counts micro-batches."""
    e = load_config(eager_tree(GRAPH + "graph.enabled = False\ntrain.num_accumulation_steps = 4\n"
                                       "train.warmup_ratio = 0.033\n"))
    assert e.run.steps == 800 and e.run.accumulation == 4 and e.train.accumulation_steps == 4
    # ceil(200 × 0.033) = 7 iterations → 28 micro-batches (ceil(800 × 0.033) would be 27)
    assert e.scheduler["warmup_iters"] == 28 and e.scheduler["scheduler"]["decay_steps"] == 800
    verdicts = {u.path: u.verdict for u in e.report}
    assert verdicts["graph.enabled"] == verdicts["train.num_accumulation_steps"] == "exact"
    assert verdicts["graph.debug"] == "trainer"


@pytest.mark.parametrize("extra", ["train.num_accumulation_steps = 4\n",              # graph mode (its default)
                                   "graph.enabled = False\n",                          # eager, no accumulation
                                   "graph.enabled = False\ntrain.num_accumulation_steps = 1\n"])
def test_graph_mode_or_no_accumulation_is_one_step_per_iteration(eager_tree, extra):
    e = load_config(eager_tree(GRAPH + extra))
    assert e.run.steps == 200 and e.run.accumulation == 1 and e.scheduler["warmup_iters"] == 10
    assert "accumulation_steps" not in e.train.model_dump(exclude_defaults=True)


def test_eager_accumulation_with_train_epoch_scales_the_epochs_run(eager_tree):
    """train_epoch: LiBai's run max(train_epoch × iterations per epoch, train_iter), then × A in eager mode."""
    path = eager_tree(GRAPH + "graph.enabled = False\ntrain.num_accumulation_steps = 2\ntrain.train_epoch = 3\n")
    built = optreg.build(path, Net(), steps_per_epoch=100)
    assert built.run.steps == 600 and built.run.accumulation == 2
    experiment = load_config(path).with_run(steps_per_epoch=100)
    own = experiment.planner.for_model(experiment, Net())   # warmup 2 × ceil(300 × 0.05) = 30 micro-batches
    assert own.scheduler["warmup_iters"] == 30 and own.scheduler["scheduler"]["decay_steps"] == 600


def test_a_run_length_given_stands_for_the_epochs(eager_tree):
    """With train_epoch, the run's length in steps (build(total_steps=), --steps) stands for train_epoch ×
    iterations per epoch × A: the schedule is the one those iterations per epoch give (before, total_steps was
    refused, asking for steps_per_epoch); a length below train_iter's keeps LiBai's max(·, train_iter)."""
    path = eager_tree(GRAPH + "graph.enabled = False\ntrain.num_accumulation_steps = 2\ntrain.train_epoch = 3\n")
    by_steps, by_epoch = optreg.build(path, Net(), total_steps=600), optreg.build(path, Net(), steps_per_epoch=100)
    assert by_steps.run.steps == by_epoch.run.steps == 600
    lrs = [[], []]
    for built, out in zip((by_steps, by_epoch), lrs):
        for _ in range(600):
            out.append(built.scheduler.get_last_lr())
            built.scheduler.step()
    assert lrs[0] == lrs[1]
    short = optreg.build(path, Net(), total_steps=100)   # train_iter 200 × A 2 of schedule, a run of 100 steps
    assert short.run.steps == 100
    assert optreg.build(path, Net(), total_steps=400).scheduler.state_dict() == short.scheduler.state_dict() != \
        by_steps.scheduler.state_dict()
    with pytest.raises(ConfigError, match="give them as build\\(..., steps_per_epoch=\\), or the run's length as "
                                          "--steps N"):
        optreg.build(path, Net())


STEPS_PER_EPOCH = ("train.steps_per_epoch: LiBai's train has no steps_per_epoch: LiBai reads the iterations per epoch "
                   "from the dataset; give them as build(..., steps_per_epoch=), or the run's length as --steps N "
                   "(build(..., total_steps=N))")


@pytest.mark.parametrize("command", [["validate"], ["plot", "--csv"], ["run"]])
def test_steps_per_epoch_in_libai_s_train_is_an_error_naming_what_gives_them(tree, command, capsys):
    """`train` is LiBai's trainer's section, which has no steps per epoch: the own form's override
    `train.steps_per_epoch=N` (or the key in the file) is an error at it that names what gives them (it was taken
    for a key of LiBai's trainer and dropped: the run said it had none); --steps and build(steps_per_epoch=) do."""
    from optreg.cli import main

    path = tree("train.train_epoch = 2\ntrain.train_iter = 0\n")
    for override in ("train.steps_per_epoch=5", "+train.steps_per_epoch=5"):
        assert main([*command, path, override]) == 1
        assert capsys.readouterr().err.strip().endswith(f"override {override}: {STEPS_PER_EPOCH}")
    assert main([*command, path, "--steps", "10"]) == 0
    assert optreg.build(path, Net(), steps_per_epoch=5).run.steps == 10
    written = tree("train.train_epoch = 2\ntrain.train_iter = 0\ntrain.steps_per_epoch = 5\n")   # the same file
    with pytest.raises(ConfigError) as info:
        optreg.build(written, Net(), steps_per_epoch=5)
    assert [str(e) for e in info.value.errors] == [f"{written}:10:1: {STEPS_PER_EPOCH}"]


NEVER_FINISHES = "decay_steps 400 spans 400 steps, more than the 300 steps of the run ({}): the schedule never finishes"
ENDS_EARLY = "train_iter 200 spans 200 steps, under 0.9 × the 300 steps of the run ({}): the schedule ends early"


@pytest.mark.parametrize("extra, said, advice", [
    ("graph.enabled = False\ntrain.num_accumulation_steps = 2\n", NEVER_FINISHES,   # iterations of 2 micro-batches
     "150 (× train.num_accumulation_steps 2 = 300 steps)"),
    ("train.num_accumulation_steps = 2\n", ENDS_EARLY, "300"),                        # graph mode: one step each
    ("graph.enabled = False\ntrain.num_accumulation_steps = 1\n", ENDS_EARLY, "300"),
])
def test_a_length_advised_for_train_iter_counts_its_iterations(eager_tree, capsys, extra, said, advice):
    """The schedule linter's advice for train_iter is in iterations, as LiBai reads it back: in eager mode each is
    num_accumulation_steps A micro-batches of the schedule (auto_scale_hyperparams' max_iter = A × train_iter), so
    a run of 300 steps wants train_iter 150 (it said 300, a schedule of 600); in graph mode, or with A 1, an
    iteration is a step, and the note names train_iter where its value is the schedule's (not optreg's decay_steps)."""
    from optreg.cli import main

    path = eager_tree(GRAPH + extra)
    note = f"train.train_iter: {said}; set train.train_iter to {advice}"   # the run's source left to fill
    assert main(["validate", path, "--steps", "300"]) == 0
    assert capsys.readouterr().err.splitlines() == [f"{path}:5:1: warning: {note.format('--steps')}"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = optreg.build(path, Net(), total_steps=300)
    assert built.notes == [note.format("total_steps=")]
    assert [str(w.message) for w in caught if isinstance(w.message, optreg.ConfigWarning)] == \
        [f"{path}:5:1: {built.notes[0]}"]


def test_a_length_advised_for_train_iter_with_train_epoch_counts_its_iterations(eager_tree):
    """With train_epoch, LiBai's run is max(train_epoch × iterations per epoch, train_iter) iterations of A
    micro-batches: for a run of 300 steps, train_iter 200 keeps a schedule of 400; 150 would make it 300."""
    path = eager_tree(GRAPH + "graph.enabled = False\ntrain.num_accumulation_steps = 2\ntrain.train_epoch = 3\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = optreg.build(path, Net(), total_steps=300)
    note = (f"train.train_iter: {NEVER_FINISHES.format('total_steps=')}; set train.train_iter to 150 "
            f"(× train.num_accumulation_steps 2 = 300 steps)")
    assert built.notes == [note]
    assert [str(w.message) for w in caught if isinstance(w.message, optreg.ConfigWarning)] == [f"{path}:5:1: {note}"]


@pytest.mark.parametrize("steps, lines, notes", [
    (300, (5,), [f"train.train_iter: {NEVER_FINISHES}; set train.train_iter to 150 (× train.num_accumulation_steps 2 "
                 f"= 300 steps)"]),
    (301, (10, 5), ["train.num_accumulation_steps: the 301 steps of the run ({}) are not a multiple of "
                    "accumulation_steps 2: the last micro-batch makes no optimizer step (its gradients are never "
                    "applied); make the run a multiple of 2",
                    "train.train_iter: decay_steps 400 spans 400 steps, more than the 301 steps of the run ({}): the "
                    "schedule never finishes; set train.train_iter to 151 (× train.num_accumulation_steps 2 = 302 "
                    "steps)"]),
])
def test_validate_warns_of_the_schedule_of_train_epoch_as_build_does(eager_tree, capsys, steps, lines, notes):
    """With train_epoch the scheduler is made when the experiment is planned, for the run: validate (without a
    model, it said "ok" and linted nothing; with --model) warns of it as build does, in the same words at the same
    key, each warning once (the run's accumulation is said by the reading's checks too); without the run's length,
    validate says build's error."""
    from optreg.cli import main

    path = eager_tree(GRAPH + "graph.enabled = False\ntrain.num_accumulation_steps = 2\ntrain.train_epoch = 3\n")
    for model in ([], ["--model", "mmengine_standin:model"]):
        assert main(["validate", path, "--steps", str(steps), *model]) == 0
        assert capsys.readouterr().err.splitlines() == [f"{path}:{line}:1: warning: {note.format('--steps')}"
                                                        for line, note in zip(lines, notes)], model
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert optreg.build(path, Net(), total_steps=steps).notes == [n.format("total_steps=") for n in notes]
    with pytest.raises(ConfigError) as exc:
        optreg.build(path, Net())
    assert main(["validate", path]) == 1
    assert capsys.readouterr().err.splitlines() == [str(exc.value)] == [
        f"{path}:11:1: train.train_epoch: train_epoch 3 × the dataset's iterations per epoch, which LiBai reads "
        f"from the dataset: give them as build(..., steps_per_epoch=), or the run's length as --steps N "
        f"(build(..., total_steps=N))"]


def test_what_is_said_of_the_accumulation_is_at_num_accumulation_steps(eager_tree, capsys):
    """The run's accumulation is said at the key the file writes, train.num_accumulation_steps (it was said at
    train.accumulation_steps, optreg's own form's, placed at train.py's `train`): a run that is no multiple of A
    (beside the advice for train_iter, the fewest iterations that cover it), a run shorter than A."""
    from optreg.cli import main

    path = eager_tree(GRAPH + "graph.enabled = False\ntrain.num_accumulation_steps = 2\n")
    notes = ["train.num_accumulation_steps: the 301 steps of the run ({}) are not a multiple of accumulation_steps 2: "
             "the last micro-batch makes no optimizer step (its gradients are never applied); make the run a multiple "
             "of 2",
             "train.train_iter: decay_steps 400 spans 400 steps, more than the 301 steps of the run ({}): the schedule "
             "never finishes; set train.train_iter to 151 (× train.num_accumulation_steps 2 = 302 steps)"]
    assert main(["validate", path, "--steps", "301"]) == 0
    assert capsys.readouterr().err.splitlines() == [f"{path}:{line}:1: warning: {note.format('--steps')}"
                                                    for line, note in zip((10, 5), notes)]
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert optreg.build(path, Net(), total_steps=301).notes == [note.format("total_steps=") for note in notes]
    with pytest.raises(ConfigError) as exc:
        optreg.build(path, Net(), total_steps=1)
    assert [str(e) for e in exc.value.errors] == [
        f"{path}:10:1: train.num_accumulation_steps: 2 micro-batches per optimizer step are more than the 1 step of "
        f"the run (total_steps=1): the optimizer would never step; make accumulation_steps at most 1"]


def test_eager_accumulation_trains_through_the_loop(eager_tree):
    """optreg's loop (`optreg run`'s): the optimizer steps after every 4th micro-batch (scheduler steps 3, 7, 11 by
    then), with the mean of the 4 micro-batches' gradients; the scheduler steps on each."""
    import copy

    from optreg.train import Teacher, make_model, train

    path = eager_tree(GRAPH + "graph.enabled = False\ntrain.num_accumulation_steps = 4\n")
    model = make_model(8, 1, 0)
    twin = copy.deepcopy(model)
    built = optreg.build(path, model)
    steps, original = [], built.optimizer.step
    built.optimizer.step = lambda *a, **k: (steps.append(built.scheduler.last_epoch), original(*a, **k))[1]
    result = train(model, built.optimizer, built.scheduler, 12, 4, 0, accumulation=built.run.accumulation)
    assert steps == [3, 7, 11] and len(result.lrs) == 12
    assert result.lrs == [built.scheduler.base_lrs[0] * built.scheduler.schedules[0](t) for t in range(12)]
    # one window by hand: the summed gradients of loss / 4, then the optimizer's step at the lr of step 3
    reference = optreg.build(path, twin)
    for _ in range(3):
        reference.scheduler.step()
    teacher = Teacher(0)
    for _ in range(4):
        x, y = teacher.batch(4)
        (torch.nn.functional.mse_loss(twin(x), y) / 4).backward()
    reference.optimizer.step()
    first = make_model(8, 1, 0)
    again = optreg.build(path, first)
    train(first, again.optimizer, again.scheduler, 4, 4, 0, accumulation=4)
    for a, b in zip(first.parameters(), twin.parameters()):
        assert torch.allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("extra, path, words, where", [
    ("graph.enabled = False\ntrain.global_batch_size = 64\ntrain.train_micro_batch_size = 8\n",
     "train.num_accumulation_steps", "data-parallel size", "train.py"),   # LiBai's default there: None
    ("from .common.models.missing import graph\ngraph.enabled = False\ntrain.num_accumulation_steps = 4\n",
     "graph", "give the graph config", "main.py"),
    ("graph.enabled = 0\ntrain.num_accumulation_steps = 4\n", "graph.enabled", "expected true or false, got int 0",
     "main.py"),
])
def test_accumulation_that_depends_on_what_the_file_does_not_say_is_located(eager_tree, extra, path, words, where):
    text = extra if "missing" in extra else GRAPH + extra
    with pytest.raises(ConfigError) as exc:
        load_config(eager_tree(text))
    (item,) = exc.value.errors
    assert item.path == path and words in item.message
    assert item.location is not None and item.location.file.endswith(where)


# ---------------------------------------------------------------------------------------------------
# with Hydra overrides: a value the file does not let optreg read (NotRead) composes and stays unread
# ---------------------------------------------------------------------------------------------------
BERT = libai_corpus.tree() / "configs" / "bert_large_pretrain.py"   # train.dist.pipeline_num_layers: an import's


def _with_overrides(path, *overrides: str):
    from optreg.config.yaml_loader import read_yaml
    from optreg.integrations.hydra.support import load_with_overrides

    data, source = read_yaml(Path(path))
    return load_with_overrides(data, source, list(overrides), Path(path))


def test_overrides_on_a_corpus_file_with_values_not_read(capsys):
    """`cannot compose the config: Value 'NotRead' is not a supported primitive type` once: the value the file
    imports is left as it is, not read, as without an override."""
    from optreg.cli import main

    assert main(["validate", str(BERT), "optim.lr=1e-3", "train.train_iter=50"]) == 0
    built = optreg.build(_with_overrides(BERT, "optim.lr=1e-3", "train.train_iter=50", "optim.weight_decay=0.2"),
                         Net())
    assert built.run.steps == 50 and built.optimizer.defaults["lr"] == 1e-3
    assert {g["weight_decay"] for g in built.optimizer.param_groups if g["params"]} == {0.2, 0.0}
    with pytest.raises(ConfigError) as exc:
        _with_overrides(BERT, "optim.lr=-1")
    (item,) = exc.value.errors
    assert item.path == "optim.lr" and "must be >= 0" in item.message and str(item.location) == "override optim.lr=-1"


def test_a_value_not_read_that_the_reader_needs_is_its_error_with_an_override_too(tree):
    path = tree("train.train_iter = int('200')")
    with pytest.raises(ConfigError) as before:
        load_config(path)
    with pytest.raises(ConfigError) as after:
        _with_overrides(path, "optim.lr=1e-3")
    (item,) = after.value.errors
    assert item.path == "train.train_iter" and item.message.startswith("not read: a call to int")
    assert [str(e) for e in after.value.errors] == [str(e) for e in before.value.errors]
    assert item.location.line == 8 and item.location.file.endswith("main.py")
    assert _with_overrides(path, "train.train_iter=100").run.steps == 100   # an override replaces it


@pytest.mark.parametrize("extra, want", [
    # the scheduler's unknown argument (the reader's) and the optimizer's (optreg's own form's)
    ("train.scheduler.alpah = 0.1\noptim.lrr = 1e-3\n",
     [("train.scheduler.alpah", 8, "not an argument of LiBai's WarmupCosineLR"),
      ("optim.lrr", 9, "unknown option of oneflow.AdamW")]),
    # the run length (the reader's) hid the scheduler's and the optimizer's
    ("train.train_iter = 'x'\ntrain.scheduler.warmup_method = 'linar'\noptim.eps = -1\n",
     [("train.train_iter", 8, "expected an integer, got str 'x'"), ("optim.eps", 10, "must be >= 0, got -1"),
      ("train.scheduler.warmup_method", 9, "must be one of 'linear' or 'constant', got 'linar'")]),
    # the warmup ratio (the reader's) hid the warmup's method
    ("train.warmup_ratio = 1.5\ntrain.scheduler.warmup_method = 'linar'\n",
     [("train.warmup_ratio", 8, "must be < 1, got 1.5"),
      ("train.scheduler.warmup_method", 9, "must be one of 'linear' or 'constant', got 'linar'")]),
    # a section bound to what the file computes (not read) hid the other's
    ("train = make_train()\noptim.lrr = 1e-3\n",
     [("train", 8, "not read: a call to make_train (main.py:8)"), ("optim.lrr", 9, "unknown option of oneflow.AdamW")]),
    ("optim = make_optim()\ntrain.scheduler.warmup_method = 'linar'\n",
     [("optim", 8, "not read: a call to make_optim (main.py:8)"),
      ("train.scheduler.warmup_method", 9, "must be one of 'linear' or 'constant', got 'linar'")]),
    # the run length misspelt, which LiBai's trainer passes over (it ran train.py's 10000 iterations silently)
    ("train.train_itr = 100\noptim.eps = -1\n",
     [("train.train_itr", 8, "not a key LiBai's trainer reads, which runs without it"),
      ("optim.eps", 9, "must be >= 0, got -1")]),
    # the optimizer's parameters (the reader's) hid the optimizer's own options
    ("optim.params = LazyCall(my_groups)(wd=0.1)\noptim.betaz = (0.9, 0.99)\n",
     [("optim.params._target_", 8, "not read: the name 'my_groups' (main.py:8) is neither imported nor bound"),
      ("optim.betaz", 9, "unknown option of oneflow.AdamW")]),
    ("optim.params.weight_decay_norm = wd_norm\noptim.betaz = (0.9, 0.99)\n",
     [("optim.params.weight_decay_norm", 8, "not read: the name 'wd_norm' (main.py:8) is neither imported nor bound"),
      ("optim.betaz", 9, "unknown option of oneflow.AdamW")]),
])
def test_an_error_in_one_section_does_not_hide_another_s(tree, extra, want):
    """Every problem at once: an error the reader finds in one section (optim, train's run length, train.scheduler)
    no longer hides those of the others, each at its path and line."""
    with pytest.raises(ConfigError) as exc:
        load_config(tree(extra))
    assert [(e.path, e.location.line) for e in exc.value.errors] == [(path, line) for path, line, _ in want]
    assert all(e.message.startswith(message) and e.location.file.endswith("main.py")
               for e, (_, _, message) in zip(exc.value.errors, want))


def test_validate_names_a_lazyconfig_file_and_its_imports_as_the_user_named_it(tree, tmp_path, monkeypatch, capsys):
    """A position names the file as a YAML file's does, by the path given (relative here), once; a file it imports by
    that path's folder (configs/common/optim.py), after the file validated, not by its absolute path."""
    from optreg.cli import main

    tree("optim.lrr = 1e-4")
    (tmp_path / "configs" / "common" / "optim.py").write_text(
        (COMMON / "optim.py").read_text().replace("weight_decay=0.01", "weight_decay=-1.0"))
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "configs/main.py"]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["configs/main.py:8:1: optim.lrr: unknown option of oneflow.AdamW (did you mean 'lr'?)",
                     "configs/main.py: configs/common/optim.py:17:5: optim.weight_decay: must be >= 0, got -1.0"]
    assert not any(str(tmp_path) in line for line in lines)


def test_a_misspelt_required_argument_is_one_error_at_the_misspelling(tree):
    """WarmupCosineLR's `warmup_factr` is one error, the misspelling's with its did-you-mean, at its argument: the
    missing warmup_factor it explains is not said too; without a misspelling it is said missing."""
    path = tree("from libai.scheduler import WarmupCosineLR\n"
                "train.scheduler = LazyCall(WarmupCosineLR)(warmup_factr=0.001, alpha=0.01)")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert [tuple(e) for e in exc.value.errors] == [
        ("train.scheduler.warmup_factr", "not an argument of LiBai's WarmupCosineLR", optreg.Location(path, 9, 44),
         "warmup_factor")]
    path = tree("from libai.scheduler import WarmupCosineLR\n"
                "train.scheduler = LazyCall(WarmupCosineLR)(alpha=0.01)")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert [(e.path, e.message, e.suggestion) for e in exc.value.errors] == [
        ("train.scheduler.warmup_factor", "required: LiBai's WarmupCosineLR takes warmup_factor", None)]


OVERRIDES = ('optim.params.overrides = {"pos_embed": {"weight_decay": 0.0}, "pos_embd": {"weight_decay": 0.0},\n'
             '                          "backbone.cls_token": {"weight_decay": 0.0}}\n')


def test_an_overrides_value_that_is_a_list_groups_its_parameters(tree):
    """An overrides option whose value is a list (betas) was a TypeError (unhashable type: 'list') once a model was
    given; the biases get a group of their own with those betas, every other parameter the optimizer's."""
    path = tree('optim.params.overrides = {"bias": {"betas": [0.5, 0.75]}}')
    net = Net()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = optreg.build(path, net)
    names = {id(p): n for n, p in net.named_parameters()}
    betas = {names[id(p)]: tuple(g["betas"]) for g in built.optimizer.param_groups for p in g["params"]}
    assert betas == {"proj.weight": (0.9, 0.999), "proj.bias": (0.5, 0.75), "norm.weight": (0.9, 0.999),
                     "norm.bias": (0.5, 0.75)}


def test_an_overrides_key_that_matches_no_parameter_is_a_warning_with_a_model(tree, capsys):
    """get_default_optimizer_params' overrides match a parameter's own name within its module; LiBai passes over a
    key that matches none (a misspelling, a full name) silently, as MMEngine over a custom_keys key. With a model
    (build, validate --model) each such key is a warning at the key, with a did-you-mean; without one, nothing."""
    from mmengine_standin import model as standin

    from optreg.cli import main

    path = tree(OVERRIDES)
    lines = Path(path).read_text().splitlines()
    tail = ("matches no parameter: LiBai matches a parameter's own name within its module (bias, pos_embed) and "
            "passes over this key")
    said = [(8, lines[7].index('"pos_embd"') + 1, f"optim.params.overrides.pos_embd: 'pos_embd' {tail} (did you "
                                                  f"mean 'pos_embed'?)"),
            (9, lines[8].index('"backbone') + 1, f"optim.params.overrides.backbone.cls_token: 'backbone.cls_token' "
                                                 f"{tail} (did you mean 'cls_token'?)")]
    model = standin()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = optreg.build(path, model)
    assert built.notes == [note for _, _, note in said]
    assert [str(w.message) for w in caught if isinstance(w.message, optreg.ConfigWarning)] == \
        [f"{path}:{line}:{column}: {note}" for line, column, note in said]
    decay = {id(p): g["weight_decay"] for g in built.optimizer.param_groups for p in g["params"]}
    named = dict(model.named_parameters())   # the key that matches is LiBai's; the others are passed over
    assert (decay[id(named["backbone.pos_embed"])], decay[id(named["backbone.cls_token"])]) == (0.0, 0.01)
    assert main(["validate", path, "--model", "mmengine_standin:model"]) == 0
    assert capsys.readouterr().err.splitlines() == [f"{path}:{line}:{column}: warning: {note}"
                                                    for line, column, note in said]
    assert main(["validate", path]) == 0 and capsys.readouterr().err == ""


@pytest.mark.parametrize("value, said", [
    ("[1]", "8:1: optim.params.overrides: expected a mapping of parameter names to options, such as {'pos_embed': "
            "{'weight_decay': 0.0}}, got [1]"),
    ('{"pos_embed": 5}', "8:27: optim.params.overrides.pos_embed: expected a parameter's own name with the options "
                         "of its group, such as 'pos_embed': {'weight_decay': 0.0}, got 'pos_embed': 5"),
])
def test_overrides_that_are_no_mapping_of_options_are_an_error_at_the_key(tree, value, said):
    """A wrong overrides value was a TypeError from the grouping once a model was given ('int' object is not
    iterable); it is a ConfigError at its key when the file is read."""
    path = tree(f"optim.params.overrides = {value}")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert [str(e) for e in exc.value.errors] == [f"{path}:{said}"]


@pytest.mark.parametrize("extra, said", [
    ("optim.params.weight_decay_norm = -1", ["8:1: optim.params.weight_decay_norm: must be >= 0, got -1"]),
    ('optim.params.overrides = {"pos_embed": {"weight_decya": 0.0, "lr": "x"}}',
     ["8:41: optim.params.overrides.pos_embed.weight_decya: unknown option of oneflow.AdamW (did you mean "
      "'weight_decay'?)", "8:62: optim.params.overrides.pos_embed.lr: expected a number, got str 'x'"]),
    # optreg's rule keys are no options of LiBai's group dict: lr_mult would have scaled the lr LiBai leaves alone
    ('optim.params.overrides = {"pos_embed": {"lr_mult": 2, "optimizer": {"name": "SGD"}}}',
     ["8:41: optim.params.overrides.pos_embed.lr_mult: unknown option of oneflow.AdamW: LiBai puts it into the "
      "group dict, where OneFlow does not read it",
      "8:55: optim.params.overrides.pos_embed.optimizer: unknown option of oneflow.AdamW: LiBai puts it into the "
      "group dict, where OneFlow does not read it"]),
])
def test_a_bad_option_of_the_groups_is_an_error_at_its_key_model_or_not(tree, extra, said):
    """weight_decay_norm, weight_decay_bias and the overrides' options are checked as param_groups rules' options
    when the file is read: validate said nothing without a model, and build said them at rules the file does not
    have (`optim.param_groups[2].weight_decay`), located at common/optim.py's `optim = LazyCall(...)`."""
    path = tree(extra)
    for read in (lambda: load_config(path), lambda: optreg.build(path, Net())):
        with pytest.raises(ConfigError) as exc:
            read()
        assert sorted(str(e) for e in exc.value.errors) == [f"{path}:{s}" for s in said]


@pytest.mark.parametrize("key, kind", [("[1]", "list"), ("{}", "dict"), ("(1, [2])", "tuple")])
def test_a_mapping_with_a_key_python_cannot_hash_is_not_read(tree, key, kind):
    # it raised TypeError (unhashable type) while the file was read
    with pytest.raises(ConfigError) as info:
        load_config(tree(f"optim.lr = {{{key}: 2}}"))
    assert [(e.path, e.message, e.location.line) for e in info.value.errors] == [
        ("optim.lr", f"not read: a mapping with a {kind} key (main.py:8)", 8)]


@pytest.mark.parametrize("extra", ["x = 9 ** 64\nx = x ** 64\nx = x ** 64\nx = x ** 64\noptim.lr = x ** 64",
                                   "x = 10 ** 64\n" + "x = x * x\n" * 30 + "optim.lr = x",
                                   "x = 10 ** 64\n" + "x **= 64\n" * 6 + "optim.lr = x"])
def test_arithmetic_on_integers_beyond_float_range_is_not_read(tree, extra):
    # a chain of powers or products ran for minutes (the integers' digits grew 64-fold a line); an operand not read
    # is the error itself, not nested in another arithmetic's
    with pytest.raises(ConfigError) as info:
        load_config(tree(extra))
    (item,) = info.value.errors
    assert item.path == "optim.lr" and item.message.startswith("not read: arithmetic on ")
    assert len(item.message) < 200 and ("…(" in item.message or "digits>" in item.message)   # errors.show


@pytest.mark.parametrize("extra", ["optim.update(**{'lr': 0.25})", "optim.update(dict(**{'lr': 0.25}))",
                                   "optim.update({**{'lr': 0.25}})"])
def test_keywords_unpacked_from_a_mapping_are_read(tree, extra):
    # `**` was dropped: the file's lr 5e-4 was built
    assert load_config(tree(extra)).optimizer["lr"] == 0.25


@pytest.mark.parametrize("extra, path, message", [
    ("optim.betas = dict(**foo)", "optim.betas", "not read: the name 'foo' (main.py:8) is neither imported nor bound "
                                                 "in the file"),
    ("optim.betas = {**[1]}", "optim.betas", "not read: ** of list (main.py:8)"),
    ("optim.update(**foo)", "", "optim.update(...) of a value optreg does not read; optreg reads LazyConfig files "
                                "without running them"),
    ("optim.update(3)", "", "optim.update(...) of a value optreg does not read; optreg reads LazyConfig files without "
                            "running them"),
])
def test_keywords_unpacked_from_a_value_not_read_are_not_dropped(tree, extra, path, message):
    # they were dropped without a word, and the file's other values built
    with pytest.raises(ConfigError) as info:
        load_config(tree(extra))
    assert [(e.path, e.message, e.location.line) for e in info.value.errors] == [(path, message, 8)]


@pytest.mark.parametrize("body, name", [("optim['lr'] = 0.5", "optim"), ("optim.lr *= 2", "optim"),
                                        ("optim.update(lr=0.5)", "optim"), ("del optim.lr", "optim"),
                                        ("optim.lr, x = 0.5, 1", "optim"), ("train['train_iter'] = 10", "train")])
def test_a_loop_that_changes_a_config_name_in_place_is_refused(tree, body, name):
    # only `name.attr = ...` was seen: an item, an augmented assignment, an update, a del or a tuple target was
    # skipped with the loop, and the file's values before it built
    with pytest.raises(ConfigError) as info:
        load_config(tree(f"for i in range(3):\n    {body}"))
    assert [(e.message, e.location.line) for e in info.value.errors] == [
        (f"a loop that assigns to {name}; optreg reads LazyConfig files without running them", 8)]


def test_a_loop_over_other_names_is_still_skipped(tree):
    assert load_config(tree("for i in range(3):\n    dataloader[i] = optim.lr")).optimizer["lr"] == 5e-4

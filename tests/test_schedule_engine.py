"""The engine: milestone derivation, restarts, chaining, continuity, bad input, and no drift at 1M steps."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

from optreg.dialects.cerebras import schedules as C
from optreg.dialects.deepspeed import schedules as DS
from optreg.dialects.hf import schedules as HF
from optreg.dialects.mindspore import schedules as M
from optreg.dialects.nemo import schedules as NEMO
from optreg.dialects.oneflow import schedules as O
from optreg.dialects.timm import schedules as TIMM
from optreg.dialects.torch import torch_forms as T
from optreg.errors import ConfigError
from optreg.reference import schedules as R
from optreg.schedules.adapter import ScheduleLR
from optreg.schedules.engine import Chained, Sequential, derive_milestones


def paths(exc: pytest.ExceptionInfo) -> list[str]:
    return [e.path for e in exc.value.errors]


# ---------------------------------------------------------------------------------------------------
# sequential
# ---------------------------------------------------------------------------------------------------
def test_milestones_are_derived_from_stage_lengths():
    seq = Sequential([T.LinearLR(0.1, 1.0, 30), T.ConstantLR(0.5, 70), T.CosineAnnealingLR(200)])
    assert seq.milestones == (30, 100)
    assert seq.length == 300
    assert derive_milestones([M.WarmUpLR(0.1, 5), C.CosineDecayLR(0.1, 0.0, 10)]) == [5]


def test_local_restart_evaluates_each_stage_on_its_own_step():
    seq = Sequential([T.ConstantLR(0.1, 10), T.ExponentialLR(0.5)], [10])
    assert [seq(t) for t in (9, 10, 11, 12)] == [0.1, 1.0, 0.5, 0.25]


def test_global_restart_evaluates_stages_on_the_global_step():
    seq = Sequential([T.ConstantLR(0.1, 10), T.ExponentialLR(0.5)], [10], "global")
    assert [seq(t) for t in (9, 10, 11)] == [0.1, 0.5 ** 10, 0.5 ** 11]


def test_restart_per_boundary():
    seq = Sequential([T.ConstantLR(0.1, 5), T.ExponentialLR(0.5), T.ExponentialLR(0.5)], [5, 8], ["global", "local"])
    assert [seq(t) for t in (5, 7, 8, 9)] == [0.5 ** 5, 0.5 ** 7, 1.0, 0.5]


def test_oneflow_sequential_is_global_by_default_torch_is_local():
    stages = [T.ConstantLR(0.1, 100), T.ExponentialLR(0.9)]
    assert O.SequentialLR(stages, [100])(101) == pytest.approx(0.9 ** 101)
    assert O.SequentialLR(stages, [100], interval_rescaling=True)(101) == pytest.approx(0.9)
    assert T.SequentialLR(stages, [100])(101) == pytest.approx(0.9)


def test_a_non_final_stage_without_length_is_a_config_error():
    with pytest.raises(ConfigError) as err:
        Sequential([T.ExponentialLR(0.9), T.ConstantLR(0.5, 3), T.ExponentialLR(0.9)])
    assert paths(err) == ["schedulers[0]"]


def test_zero_length_stage_is_a_config_error():
    with pytest.raises(ConfigError) as err:
        Sequential([T.ConstantLR(0.5, 0), T.ExponentialLR(0.9)])
    assert paths(err) == ["schedulers[0]"]


@pytest.mark.parametrize("milestones", [[10, 10], [20, 10], [-1, 5]])
def test_non_increasing_or_negative_milestones_are_config_errors(milestones):
    with pytest.raises(ConfigError) as err:
        Sequential([T.ConstantLR(), T.ConstantLR(), T.ConstantLR()], milestones)
    assert all(p.startswith("milestones") for p in paths(err))


def test_a_bad_milestone_is_said_as_the_own_form_says_it():
    """Each milestone in the own form's words (models.number_message; it said `must be an integer in [0, 2**53],
    got -1` whatever was wrong)."""
    with pytest.raises(ConfigError) as err:
        Sequential([T.ConstantLR()] * 5, [2 ** 60, -1, "x", 1.5])
    assert [(e.path, e.message) for e in err.value.errors] == [
        ("milestones[0]", "must be <= 9007199254740992, got 1152921504606846976"),
        ("milestones[1]", "must be >= 0, got -1"), ("milestones[2]", "expected an integer, got str 'x'"),
        ("milestones[3]", "must be an integer, got 1.5")]


def test_numpy_integer_milestones_are_integers():
    """A numpy integer is a milestone as the options take it (engine.check_milestones; it said `expected an
    integer, got int64 np.int64(3)`), kept as an int; a bad one is said as a Python one is."""
    s = Sequential([C.ConstantLR(0.5), C.ConstantLR(0.25)], [np.int64(3)])
    assert s.milestones == (3,) and type(s.milestones[0]) is int and (s(2), s(3)) == (0.5, 0.25)
    assert C.PiecewiseConstantLR(learning_rates=[0.1, 0.01], milestones=[np.int32(3)])(3) == 0.01
    with pytest.raises(ConfigError) as err:
        Sequential([T.ConstantLR()] * 3, [np.int64(-1), np.int64(2)])
    assert [(e.path, e.message) for e in err.value.errors] == [("milestones[0]", "must be >= 0, got np.int64(-1)")]
    with pytest.raises(ConfigError) as err:
        Sequential([T.ConstantLR()] * 3, [np.int64(4), np.int64(4)])
    assert [(e.path, e.message) for e in err.value.errors] == [
        ("milestones", "must be strictly increasing, got [np.int64(4), np.int64(4)]")]


def test_a_numpy_integer_step_count_is_a_count():
    """engine.resolve_steps takes a numpy integer as a count, as an int (it said `expected a step count (int) or a
    fraction in [0, 1), got np.int64(-2)` of a negative one, and kept a good one a numpy integer)."""
    assert type(HF.ConstantWithWarmup(num_warmup_steps=np.int64(2)).num_warmup_steps) is int
    with pytest.raises(ConfigError) as err:
        HF.ConstantWithWarmup(num_warmup_steps=np.int64(-2))
    assert [(e.path, e.message) for e in err.value.errors] == [("num_warmup_steps", "must be >= 0, got -2")]


def test_milestone_count_and_restart_values_are_checked():
    with pytest.raises(ConfigError) as err:
        Sequential([T.ConstantLR(), T.ConstantLR()], [1, 2], restart="sometimes")
    assert set(paths(err)) == {"milestones", "restart"}


@pytest.mark.parametrize("make, said", [
    (lambda: T.CosineAnnealingWarmRestarts(T_0=0, T_mult=0), [("T_0", "must be >= 1, got 0"),
                                                              ("T_mult", "must be >= 1, got 0")]),
    (lambda: O.CosineAnnealingWarmRestarts(T_0=0, T_mult=0), [("T_0", "must be >= 1, got 0"),
                                                              ("T_mult", "must be >= 1, got 0")]),
    (lambda: DS.WarmupDecayLR(warmup_num_steps=-1, total_num_steps=0), [("warmup_num_steps", "must be >= 0, got -1"),
                                                                        ("total_num_steps", "must be >= 1, got 0")]),
])
def test_a_count_below_its_bound_is_said_as_the_own_form_says_it(make, said):
    """A schedule built directly words a count below its bound as the own form's options do (`must be >= 1, got
    0`; it said `must be an integer >= 1, got 0`)."""
    with pytest.raises(ConfigError) as err:
        make()
    assert [(e.path, e.message) for e in err.value.errors] == said


# ---------------------------------------------------------------------------------------------------
# chained
# ---------------------------------------------------------------------------------------------------
def test_chained_factor_schedules_compose():
    chain = Chained([T.ConstantLR(0.1, 5), T.ExponentialLR(0.9)])
    assert chain.apply(3, 2.0) == pytest.approx(2.0 * 0.1 * 0.9 ** 3)
    assert chain.apply(7, 2.0) == pytest.approx(2.0 * 0.9 ** 7)


def test_cerebras_chain_normalises_later_stages_by_their_initial_lr():
    chain = C.ChainedLR([C.ConstantLR(0.02), C.StepLR(4.0, 10, 0.5)])
    assert chain(25) == pytest.approx(0.02 * (4.0 * 0.25) / 4.0)


def test_absolute_stage_after_a_factor_stage_is_refused():
    with pytest.raises(ConfigError) as err:
        Chained([T.ExponentialLR(0.9), C.ConstantLR(0.1)])
    assert paths(err) == ["schedulers[1]"]


# ---------------------------------------------------------------------------------------------------
# Cerebras sequential rules
# ---------------------------------------------------------------------------------------------------
def test_cerebras_stages_may_jump():
    jump = C.SequentialLR([C.PolynomialLR(0.0, 1e-3, 100), C.CosineDecayLR(2e-3, 0.0, 900), C.ConstantLR(0.0)])
    assert (jump(99), jump(100), jump(1000)) == (pytest.approx(0.99e-3), 2e-3, 0.0)


def test_cerebras_milestones_default_to_the_running_sum_of_total_iters_and_may_differ():
    stages = [C.ConstantLR(0.1, 10), C.ConstantLR(0.2, 20), C.ConstantLR(0.3)]
    assert C.SequentialLR(stages).inner.milestones == (10, 30)
    assert C.SequentialLR(stages, [10, 30])(35) == 0.3
    assert [C.SequentialLR(stages, [10, 25])(t) for t in (9, 10, 24, 25)] == [0.1, 0.2, 0.2, 0.3]
    with pytest.raises(ConfigError) as err:
        C.SequentialLR(stages, [10])
    assert paths(err) == ["milestones"]


# ---------------------------------------------------------------------------------------------------
# bad input through each schedule's own checks
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make,path", [
    (lambda: C.OneCycleLR(1e-4, 1e-3, 100, pct_start=1.5), "pct_start"),
    (lambda: T.OneCycleLR(0.1, 100, pct_start=-0.1), "pct_start"),
    (lambda: M.CosineDecayLR(0.1, 0.01, 100), "max_lr"),
    (lambda: M.DynamicCosineDecayLR(0.1, 0.01, 100, 10, 5), "max_lr"),
    (lambda: C.CyclicLR(1e-3, 1e-4), "max_lr"),
    (lambda: C.OneCycleLR(1e-2, 1e-3), "max_lr"),
    (lambda: C.PolynomialLR(0.1, 0.0, 0), "total_iters"),
    (lambda: M.WarmUpLR(0.1, 0), "warmup_steps"),
    (lambda: O.CosineDecayLR(0), "decay_steps"),
    (lambda: T.StepLR(0), "step_size"),
    (lambda: C.CosineAnnealingWarmRestarts(0.1, 10, T_mult=2), "T_mult"),
    (lambda: C.PiecewiseConstantLR([0.1, 0.2], [5, 10]), "learning_rates"),
    (lambda: HF.Linear(0.1, None), "num_warmup_steps"),
    (lambda: HF.ConstantWithWarmup(0.1), "num_warmup_steps"),
    (lambda: HF.Linear(1.5, 100), "num_warmup_steps"),
    (lambda: HF.CosineWithMinLR(10, 100), "min_lr_rate"),
    (lambda: HF.CosineWithMinLR(10, 100, min_lr=0.1, min_lr_rate=0.1), "min_lr"),
    (lambda: HF.WarmupStableDecay(10, 10), "num_training_steps"),
    (lambda: NEMO.WarmupPolicy(warmup_steps=5, warmup_ratio=0.1, max_steps=10), "warmup_ratio"),
    (lambda: NEMO.WarmupPolicy(warmup_ratio=0.1), "warmup_ratio"),
    (lambda: NEMO.NoamHoldAnnealing(100), "warmup_steps"),
    (lambda: TIMM.TimmTanh(100, lb=3.0, ub=-7.0), "ub"),
])
def test_bad_options_are_config_errors_with_their_path(make, path):
    with pytest.raises(ConfigError) as err:
        make()
    assert path in paths(err)


def test_noam_hold_annealing_on_its_defaults_says_which_keys_give_its_warmup():
    """nemo.NoamHoldAnnealing has no warmup by default and needs one: the error names the keys that give it."""
    from optreg.api import to_experiment

    with pytest.raises(ConfigError) as err:
        to_experiment({"optimizer": {"name": "SGD", "lr": 0.1}, "scheduler": {"name": "nemo.NoamHoldAnnealing"},
                       "train": {"steps": 100}})
    assert [(e.path, e.message) for e in err.value.errors] == [
        ("scheduler.warmup_steps", "NoamHoldAnnealing needs warmup steps: set warmup_steps or warmup_ratio (the "
                                   "fraction of max_steps)")]


def test_a_ratio_past_its_bounds_is_worded_as_the_options_word_it():
    """A schedule built directly words pct_start outside [0, 1] as its option does through a config (`must be <= 1,
    got 1.5`; it said `must be in [0, 1], got 1.5`)."""
    for make, message in [(lambda: C.OneCycleLR(1e-4, 1e-3, 100, pct_start=1.5), "must be <= 1, got 1.5"),
                          (lambda: T.OneCycleLR(0.1, 100, pct_start=-0.1), "must be >= 0, got -0.1")]:
        with pytest.raises(ConfigError) as err:
            make()
        assert [(e.path, e.message) for e in err.value.errors] == [("pct_start", message)]


def test_every_problem_is_reported_at_once():
    with pytest.raises(ConfigError) as err:
        C.OneCycleLR(1e-2, 1e-3, 0, pct_start=2.0)
    assert set(paths(err)) == {"total_steps", "pct_start", "max_lr"}


# ---------------------------------------------------------------------------------------------------
# quirks reproduced on purpose
# ---------------------------------------------------------------------------------------------------
def test_mindspore_natural_exp_decay_does_not_divide_by_decay_steps():
    schedule = M.NaturalExpDecayLR(0.1, 0.5, 10)
    assert schedule(10) == pytest.approx(0.1 * math.exp(-0.5 * 10))     # as implemented
    assert schedule(10) != pytest.approx(0.1 * math.exp(-0.5 * 1))      # as documented


def test_cerebras_polynomial_cycle_changes_nothing():
    with_cycle, without = C.PolynomialLR(1e-3, 1e-5, 100, 2.0, True), C.PolynomialLR(1e-3, 1e-5, 100, 2.0, False)
    assert [with_cycle(t) for t in range(400)] == [without(t) for t in range(400)]
    assert with_cycle(250) == float(np.float32(1e-5))   # the end value, as Cerebras' float32 tensor holds it


def test_cerebras_warm_restarts_alternate_whole_cycles():
    schedule = C.CosineAnnealingWarmRestarts(1.0, 10, 1, 0.0)
    assert [schedule(t) for t in (10, 15, 19)] == [1.0, 1.0, 1.0]
    assert [schedule(t) for t in (20, 25, 29)] == [0.0, 0.0, 0.0]
    assert schedule(30) == 1.0


def test_oneflow_cyclic_polynomial_starts_one_step_in():
    assert O.PolynomialLR(10, 0.0, 1.0, cycle=True).apply(0, 1.0) == pytest.approx(0.9)
    assert O.PolynomialLR(10, 0.0, 1.0, cycle=False).apply(0, 1.0) == 1.0


def test_nemo_square_root_annealing_ignores_the_warmup_in_its_decay():
    schedule = NEMO.SquareRootAnnealing(100, 0.0, warmup_steps=20)
    assert schedule.apply(50, 1.0) == pytest.approx(math.sqrt(50 / 100))


def test_mindspore_dynamic_lists_hold_their_last_value():
    schedule = M.DynamicWarmupLR(0.1, 6, 2, 2)
    assert [schedule(t) for t in range(8)] == [0.0, 0.0, 0.05, 0.05, 0.1, 0.1, 0.1, 0.1]
    assert M.warmup_lr(0.1, 6, 2, 2) == [0.0, 0.0, 0.05, 0.05, 0.1, 0.1]
    assert M.cosine_decay_lr(0.01, 0.1, 6, 2, 2) == pytest.approx([0.1, 0.1, 0.055, 0.055, 0.01, 0.01])
    assert M.piecewise_constant_lr([2, 5, 10], [0.1, 0.05, 0.01]) == [0.1] * 2 + [0.05] * 3 + [0.01] * 5


def test_fractions_of_the_total():
    assert HF.Linear(0.05, 1000).num_warmup_steps == 50
    assert TIMM.TimmCosine(300, warmup_t=0.05).warmup_t == 15
    assert HF.WarmupStableDecay(0.1, 0.2, 1000).stable == 700


# ---------------------------------------------------------------------------------------------------
# no drift: the adapter's values are the closed form at every step
# ---------------------------------------------------------------------------------------------------
def _cosine():
    return T.CosineAnnealingLR(1_000_000, 1e-5)


def _warmup_cosine():
    return T.SequentialLR([T.LinearLR(0.01, 1.0, 10_000), T.CosineAnnealingLR(990_000, 1e-5)])


def _ref_cosine(t):
    return R.torch_cosine_annealing(t, 0.1, 1_000_000, 1e-5)


def _ref_warmup_cosine(t):
    return R.sequential(t, [lambda s: R.torch_linear(s, 0.1, 0.01, 1.0, 10_000),
                            lambda s: R.torch_cosine_annealing(s, 0.1, 990_000, 1e-5)], [10_000])


@pytest.mark.parametrize("make,ref", [(_cosine, _ref_cosine), (_warmup_cosine, _ref_warmup_cosine)],
                         ids=["cosine", "warmup-cosine"])
def test_no_drift_over_a_million_steps(make, ref):
    """Consecutive steps through the adapter at the start and near the end of a 1M-step run (the value
    is recomputed from the step each time, so resuming at 990,000 is the same as having stepped there)."""
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = ScheduleLR(opt, make())
        got = [opt.param_groups[0]["lr"]]
        for _ in range(9_999):
            sched.step()
            got.append(opt.param_groups[0]["lr"])
        sched.step(990_000)
        got.append(opt.param_groups[0]["lr"])
        for _ in range(9_999):
            sched.step()
            got.append(opt.param_groups[0]["lr"])
    t = np.concatenate([np.arange(10_000), np.arange(990_000, 1_000_000)])
    want = ref(t)
    assert np.max(np.abs(np.array(got) - want)) <= 1e-15
    # and sampled points over the whole million, straight from the closed form
    sample = np.linspace(0, 999_999, 2_001).astype(np.int64)
    schedule = make()
    assert np.max(np.abs(np.array([schedule.apply(int(s), 0.1) for s in sample]) - ref(sample))) <= 1e-15

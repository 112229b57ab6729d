"""One case per scheduler entry: an engine schedule, its numpy reference and the row it belongs to.

Shared by the schedule tests (reference, resume); the test here checks that every engine-backed row of
every dialect (a new one's included; DeepSpeed's rows are replayed from recordings instead) has at least one
case.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from optreg.config.expr import StepFunction
from optreg.dialects.cerebras import schedules as C
from optreg.dialects.hf import schedules as HF
from optreg.dialects.mindspore import schedules as M
from optreg.dialects.mindspore.mindformers import schedules as MF
from optreg.dialects.nemo import schedules as NEMO
from optreg.dialects.oneflow import schedules as O
from optreg.dialects.timm import schedules as TIMM
from optreg.dialects.torch import torch_forms as T
from optreg.reference import schedules as R

STEPS = 1200


@dataclass
class Case:
    id: str                                   # a readable id
    entry: str                                # the row's qualname
    make: Callable[[], Any]                   # -> Schedule
    ref: Callable[[np.ndarray, float], np.ndarray]
    base: float = 0.1
    default: float | None = None              # optimizer.defaults[key] for bind()
    steps: int = STEPS
    extra: dict = field(default_factory=dict)


def _lin_then_cos(t):
    return R.sequential(t, [lambda s: R.torch_linear(s, 0.1, 0.1, 1.0, 50),
                            lambda s: R.torch_cosine_annealing(s, 0.1, 400, 0.001)], [50])


def _of_warmup_ref(t, b, prefix):
    main = (lambda s: R.oneflow_cosine_decay(s, b, 300, 0.1))
    return R.oneflow_warmup(t, b, main, 0.25, 40, "linear", prefix)


def _cb_seq_ref(t, b):
    return R.sequential(t, [lambda s: R.cerebras_polynomial(s, 0.0, 4e-4, 100),
                            lambda s: R.cerebras_cosine_decay(s, 4e-4, 1e-6, 900)], [100])


def _cb_chain_ref(t, b):
    return R.cerebras_cosine_decay(t, 0.1, 0.001, 1000) * R.cerebras_exponential(t, 0.5, 100, 0.9) / 0.5


def _timm_tanh_ref(t, b, prefix):
    shape = lambda tc, ti: 0.5 * (1 - np.tanh(-6.0 * (1 - tc / ti) + 4.0 * (tc / ti)))  # noqa: E731
    kw = dict(lr_min=1e-4, cycle_mul=1.0, cycle_decay=0.7, cycle_limit=3, warmup_t=30, warmup_lr_init=1e-5,
              warmup_prefix=prefix)
    target = None
    if not prefix:
        target = float(R.timm_cycles(np.array([30]), b, 300, shape, **{**kw, "warmup_t": 0})[0])
    return R.timm_cycles(t, b, 300, shape, warmup_target=target, **kw)


def _nemo_cos(k):
    return lambda s: 0.5 * (1 + np.cos(np.pi * s / k))


LAM = StepFunction("0.5 + 0.5 * cos(step / 50)")
MUL = StepFunction("0.999 if step % 7 else 1.01")

CASES: list[Case] = [
    # ------------------------------------------------------------------ oneflow
    Case("of-constant", "oneflow.ConstantLR", lambda: T.ConstantLR(0.25, 300),
         lambda t, b: R.torch_constant(t, b, 0.25, 300)),
    Case("of-linear", "oneflow.LinearLR", lambda: T.LinearLR(0.0, 0.8, 400),
         lambda t, b: R.torch_linear(t, b, 0.0, 0.8, 400)),
    Case("of-step", "oneflow.StepLR", lambda: T.StepLR(90, 0.7), lambda t, b: R.torch_step(t, b, 90, 0.7)),
    Case("of-multistep", "oneflow.MultiStepLR", lambda: T.MultiStepLR([100, 350, 900], 0.3),
         lambda t, b: R.torch_multistep(t, b, [100, 350, 900], 0.3)),
    Case("of-exponential", "oneflow.ExponentialLR", lambda: T.ExponentialLR(0.997),
         lambda t, b: R.torch_exponential(t, b, 0.997)),
    Case("of-poly", "oneflow.PolynomialLR", lambda: O.PolynomialLR(500, 1e-3, 2.0),
         lambda t, b: R.oneflow_polynomial(t, b, 500, 1e-3, 2.0)),
    Case("of-poly-cycle", "oneflow.PolynomialLR", lambda: O.PolynomialLR(300, 1e-3, 1.5, cycle=True),
         lambda t, b: R.oneflow_polynomial(t, b, 300, 1e-3, 1.5, True)),
    Case("of-cosine-decay", "oneflow.CosineDecayLR", lambda: O.CosineDecayLR(700, 0.05),
         lambda t, b: R.oneflow_cosine_decay(t, b, 700, 0.05)),
    Case("of-cosine-annealing", "oneflow.CosineAnnealingLR", lambda: T.CosineAnnealingLR(300, 0.002),
         lambda t, b: R.torch_cosine_annealing(t, b, 300, 0.002)),
    Case("of-warm-restarts", "oneflow.CosineAnnealingWarmRestarts",
         lambda: O.CosineAnnealingWarmRestarts(50, 2, 1e-3, 0.8, 4),
         lambda t, b: R.oneflow_warm_restarts(t, b, 50, 2, 1e-3, 0.8, 4)),
    Case("of-warm-restarts-10", "oneflow.CosineAnnealingWarmRestarts", lambda: O.CosineAnnealingWarmRestarts(10, 10),
         lambda t, b: R.oneflow_warm_restarts(t, b, 10, 10)),
    Case("of-lambda", "oneflow.LambdaLR", lambda: T.LambdaLR(LAM), lambda t, b: R.torch_lambda(t, b, LAM)),
    Case("of-multiplicative", "oneflow.MultiplicativeLR", lambda: T.MultiplicativeLR(MUL),
         lambda t, b: R.torch_multiplicative(t, b, MUL)),
    Case("of-sequential-global", "oneflow.SequentialLR",
         lambda: O.SequentialLR([T.ConstantLR(0.1, 100), T.ExponentialLR(0.998)], [100]),
         lambda t, b: R.sequential(t, [lambda s: R.torch_constant(s, b, 0.1, 100),
                                       lambda s: R.torch_exponential(s, b, 0.998)], [100], "global")),
    Case("of-sequential-local", "oneflow.SequentialLR",
         lambda: O.SequentialLR([T.ConstantLR(0.1, 100), T.ExponentialLR(0.998)], [100], True),
         lambda t, b: R.sequential(t, [lambda s: R.torch_constant(s, b, 0.1, 100),
                                       lambda s: R.torch_exponential(s, b, 0.998)], [100], "local")),
    Case("of-chained", "oneflow.ChainedScheduler",
         lambda: T.ChainedScheduler([T.ConstantLR(0.1, 200), T.ExponentialLR(0.999), T.CosineAnnealingLR(500, 0.001)]),
         lambda t, b: R.torch_cosine_annealing(t, R.torch_exponential(t, R.torch_constant(t, b, 0.1, 200), 0.999),
                                               500, 0.001)),
    Case("of-warmup", "oneflow.WarmupLR", lambda: O.WarmupLR(O.CosineDecayLR(300, 0.1), 0.25, 40),
         lambda t, b: _of_warmup_ref(t, b, False)),
    Case("of-warmup-prefix", "oneflow.WarmupLR",
         lambda: O.WarmupLR(O.CosineDecayLR(300, 0.1), 0.25, 40, warmup_prefix=True),
         lambda t, b: _of_warmup_ref(t, b, True)),
    Case("of-warmup-constant", "oneflow.WarmupLR", lambda: O.WarmupLR(None, 0.5, 60, "constant"),
         lambda t, b: R.torch_constant(t, b, 0.5, 60)),
    # ------------------------------------------------------------------ cerebras
    Case("cb-constant", "cerebras.ConstantLR", lambda: C.ConstantLR(3e-4, 100), lambda t, b: np.full(len(t), 3e-4)),
    Case("cb-poly", "cerebras.PolynomialLR", lambda: C.PolynomialLR(1e-3, 1e-5, 800, 2.0, cycle=True),
         lambda t, b: R.cerebras_polynomial(t, 1e-3, 1e-5, 800, 2.0)),
    Case("cb-linear", "cerebras.LinearLR", lambda: C.PolynomialLR(0.0, 1e-3, 600, 1.0),
         lambda t, b: R.cerebras_polynomial(t, 0.0, 1e-3, 600, 1.0)),
    Case("cb-exponential", "cerebras.ExponentialLR", lambda: C.ExponentialLR(1e-3, 100, 0.8),
         lambda t, b: R.cerebras_exponential(t, 1e-3, 100, 0.8)),
    Case("cb-exponential-stair", "cerebras.ExponentialLR", lambda: C.ExponentialLR(1e-3, 100, 0.8, True),
         lambda t, b: R.cerebras_exponential(t, 1e-3, 100, 0.8, True)),
    Case("cb-inverse-time", "cerebras.InverseExponentialTimeDecayLR",
         lambda: C.InverseExponentialTimeDecayLR(1e-3, 2, 1000, 0.5, True),
         lambda t, b: R.cerebras_inverse_time(t, 1e-3, 2, 1000, 0.5, True)),
    Case("cb-inverse-time-smooth", "cerebras.InverseExponentialTimeDecayLR",
         lambda: C.InverseExponentialTimeDecayLR(1e-3, 1, 100, 0.5),
         lambda t, b: R.cerebras_inverse_time(t, 1e-3, 1, 100, 0.5)),
    Case("cb-inverse-sqrt", "cerebras.InverseSquareRootDecayLR", lambda: C.InverseSquareRootDecayLR(2e-3, 0.5, 100),
         lambda t, b: R.cerebras_inverse_sqrt(t, 2e-3, 0.5, 100)),
    Case("cb-cosine-decay", "cerebras.CosineDecayLR", lambda: C.CosineDecayLR(1e-3, 1e-5, 900),
         lambda t, b: R.cerebras_cosine_decay(t, 1e-3, 1e-5, 900)),
    Case("cb-cosine-annealing", "cerebras.CosineAnnealingLR", lambda: C.CosineAnnealingLR(1e-3, 400, 1e-5),
         lambda t, b: R.torch_cosine_annealing(t, 1e-3, 400, 1e-5)),
    Case("cb-warm-restarts", "cerebras.CosineAnnealingWarmRestarts",
         lambda: C.CosineAnnealingWarmRestarts(1e-3, 100, 1, 1e-5),
         lambda t, b: R.cerebras_warm_restarts(t, 1e-3, 100, 1e-5)),
    Case("cb-step", "cerebras.StepLR", lambda: C.StepLR(1e-3, 150, 0.5), lambda t, b: R.torch_step(t, 1e-3, 150, 0.5)),
    Case("cb-multistep", "cerebras.MultiStepLR", lambda: C.MultiStepLR(1e-3, 0.2, [200, 500]),
         lambda t, b: R.torch_multistep(t, 1e-3, [200, 500], 0.2)),
    Case("cb-piecewise", "cerebras.PiecewiseConstantLR", lambda: C.PiecewiseConstantLR([1e-3, 5e-4, 1e-4], [300, 700]),
         lambda t, b: R.cerebras_piecewise(t, [1e-3, 5e-4, 1e-4], [300, 700])),
    Case("cb-lambda", "cerebras.LambdaLR", lambda: C.LambdaLR(1e-3, LAM), lambda t, b: R.torch_lambda(t, 1e-3, LAM)),
    Case("cb-multiplicative", "cerebras.MultiplicativeLR", lambda: C.MultiplicativeLR(1e-3, 0.998),
         lambda t, b: R.torch_exponential(t, 1e-3, 0.998)),
    Case("cb-cyclic", "cerebras.CyclicLR", lambda: C.CyclicLR(1e-4, 1e-3, 100, 60, "triangular2"),
         lambda t, b: R.torch_cyclic(t, 1e-4, 1e-3, 100, 60, "triangular2")),
    Case("cb-cyclic-exp", "cerebras.CyclicLR", lambda: C.CyclicLR(1e-4, 1e-3, 80, None, "exp_range", 0.999),
         lambda t, b: R.torch_cyclic(t, 1e-4, 1e-3, 80, None, "exp_range", 0.999)),
    Case("cb-onecycle", "cerebras.OneCycleLR", lambda: C.OneCycleLR(4e-5, 1e-3, 1000, 0.25),
         lambda t, b: R.cerebras_one_cycle(t, 4e-5, 1e-3, 1000, 0.25)),
    Case("cb-onecycle-3", "cerebras.OneCycleLR", lambda: C.OneCycleLR(4e-5, 1e-3, 1000, 0.3, 1e3, True, "linear"),
         lambda t, b: R.cerebras_one_cycle(t, 4e-5, 1e-3, 1000, 0.3, 1e3, True, "linear")),
    Case("cb-sequential", "cerebras.SequentialLR",
         lambda: C.SequentialLR([C.PolynomialLR(0.0, 4e-4, 100), C.CosineDecayLR(4e-4, 1e-6, 900)]), _cb_seq_ref),
    Case("cb-chained", "cerebras.ChainedLR",
         lambda: C.ChainedLR([C.CosineDecayLR(0.1, 0.001, 1000), C.ExponentialLR(0.5, 100, 0.9)]), _cb_chain_ref),
    # ------------------------------------------------------------------ mindspore
    Case("ms-exp", "mindspore.ExponentialDecayLR", lambda: M.ExponentialDecayLR(0.1, 0.9, 100),
         lambda t, b: R.ms_exponential_decay(t, 0.1, 0.9, 100)),
    Case("ms-exp-stair", "mindspore.ExponentialDecayLR", lambda: M.ExponentialDecayLR(0.1, 0.9, 100, True),
         lambda t, b: R.ms_exponential_decay(t, 0.1, 0.9, 100, True)),
    Case("ms-natural", "mindspore.NaturalExpDecayLR", lambda: M.NaturalExpDecayLR(0.1, 0.004, 100),
         lambda t, b: R.ms_natural_exp_decay(t, 0.1, 0.004, 100)),
    Case("ms-natural-stair", "mindspore.NaturalExpDecayLR", lambda: M.NaturalExpDecayLR(0.1, 0.004, 100, True),
         lambda t, b: R.ms_natural_exp_decay(t, 0.1, 0.004, 100, True)),
    Case("ms-inverse", "mindspore.InverseDecayLR", lambda: M.InverseDecayLR(0.1, 0.5, 100, True),
         lambda t, b: R.ms_inverse_decay(t, 0.1, 0.5, 100, True)),
    Case("ms-cosine", "mindspore.CosineDecayLR", lambda: M.CosineDecayLR(0.001, 0.1, 800),
         lambda t, b: R.ms_cosine_decay(t, 0.001, 0.1, 800)),
    Case("ms-poly", "mindspore.PolynomialDecayLR", lambda: M.PolynomialDecayLR(0.1, 0.001, 500, 0.5),
         lambda t, b: R.ms_polynomial_decay(t, 0.1, 0.001, 500, 0.5)),
    Case("ms-poly-update", "mindspore.PolynomialDecayLR", lambda: M.PolynomialDecayLR(0.1, 0.001, 300, 2.0, True),
         lambda t, b: R.ms_polynomial_decay(t, 0.1, 0.001, 300, 2.0, True)),
    Case("ms-warmup", "mindspore.WarmUpLR", lambda: M.WarmUpLR(0.1, 250), lambda t, b: R.ms_warmup(t, 0.1, 250)),
    # MindFormers' schedules (rows of the mindspore dialect)
    Case("mf-constant-warmup", "mindspore.ConstantWarmUpLR", lambda: MF.ConstantWarmUpLR(0.1, 100, 0.01),
         lambda t, b: R.mf_constant_warmup(t, 0.1, 100, 0.01)),
    Case("mf-linear", "mindspore.LinearWithWarmUpLR", lambda: MF.LinearWithWarmUpLR(0.1, 1000, warmup_ratio=0.05),
         lambda t, b: R.mf_linear_warmup(t, 0.1, 1000, 50)),
    Case("mf-cosine", "mindspore.CosineWithWarmUpLR",
         lambda: MF.CosineWithWarmUpLR(0.1, 60, 1000, 0.5, 1e-3, decay_steps=900),
         lambda t, b: R.mf_cosine_warmup(t, 0.1, 1000, 60, 0.5, 1e-3, decay=900)),
    Case("mf-cosine-restarts", "mindspore.CosineWithRestartsAndWarmUpLR",
         lambda: MF.CosineWithRestartsAndWarmUpLR(0.1, 50, 1000, 3.0, 1e-3),
         lambda t, b: R.mf_cosine_restarts(t, 0.1, 1000, 50, 3.0, 1e-3)),
    Case("mf-polynomial", "mindspore.PolynomialWithWarmUpLR",
         lambda: MF.PolynomialWithWarmUpLR(0.1, 1000, 100, 1e-4, 2.0),
         lambda t, b: R.mf_polynomial_warmup(t, 0.1, 1000, 100, 1e-4, 2.0)),
    Case("mf-wsd", "mindspore.WarmUpStableDecayLR",
         lambda: MF.WarmUpStableDecayLR(0.1, 1e-3, 100, total_steps=1100, decay_start_ratio=0.5),
         lambda t, b: R.mf_warmup_stable_decay(t, 0.1, 1100, 100, 550, 1e-3)),
    Case("mf-cooldown", "mindspore.ConstantWithCoolDownLR",
         lambda: MF.ConstantWithCoolDownLR(0.1, 50, keep_steps=300, decay_steps=500, lr_end1=1e-3, final_steps=100,
                                           lr_end2=1e-4),
         lambda t, b: R.mf_constant_cooldown(t, 0.1, 50, 300, 500, 100, 1e-3, 1e-4)),
    Case("mf-cosine-annealing", "mindspore.CosineAnnealingLR", lambda: MF.CosineAnnealingLR(0.1, 500, 1e-3),
         lambda t, b: R.mf_cosine_annealing(t, 0.1, 500, 1e-3)),
    Case("mf-cosine-annealing-restarts", "mindspore.CosineAnnealingWarmRestarts",
         lambda: MF.CosineAnnealingWarmRestarts(0.1, 100, 2, 1e-3),
         lambda t, b: R.mf_cosine_annealing_restarts(t, 0.1, 100, 2, 1e-3)),
    Case("ms-dyn-piecewise", "mindspore.piecewise_constant_lr",
         lambda: M.DynamicPiecewiseConstantLR([200, 500, 1000], [0.1, 0.05, 0.01]),
         lambda t, b: R.ms_list(R.ms_dyn_piecewise([200, 500, 1000], [0.1, 0.05, 0.01]), t)),
    Case("ms-dyn-exp", "mindspore.exponential_decay_lr",
         lambda: M.DynamicExponentialDecayLR(0.1, 0.9, 1000, 10, 3, True),
         lambda t, b: R.ms_list(R.ms_dyn_exponential(0.1, 0.9, 1000, 10, 3, True), t)),
    Case("ms-dyn-natural", "mindspore.natural_exp_decay_lr",
         lambda: M.DynamicNaturalExpDecayLR(0.1, 0.02, 1000, 10, 4, True),
         lambda t, b: R.ms_list(R.ms_dyn_natural_exp(0.1, 0.02, 1000, 10, 4, True), t)),
    Case("ms-dyn-inverse", "mindspore.inverse_decay_lr", lambda: M.DynamicInverseDecayLR(0.1, 0.5, 1000, 10, 5),
         lambda t, b: R.ms_list(R.ms_dyn_inverse(0.1, 0.5, 1000, 10, 5), t)),
    Case("ms-dyn-cosine", "mindspore.cosine_decay_lr", lambda: M.DynamicCosineDecayLR(0.001, 0.1, 1000, 10, 80),
         lambda t, b: R.ms_list(R.ms_dyn_cosine(0.001, 0.1, 1000, 10, 80), t)),
    Case("ms-dyn-poly", "mindspore.polynomial_decay_lr",
         lambda: M.DynamicPolynomialDecayLR(0.1, 0.001, 1000, 10, 30, 2.0, True),
         lambda t, b: R.ms_list(R.ms_dyn_polynomial(0.1, 0.001, 1000, 10, 30, 2.0, True), t)),
    Case("ms-dyn-warmup", "mindspore.warmup_lr", lambda: M.DynamicWarmupLR(0.1, 1000, 10, 20),
         lambda t, b: R.ms_list(R.ms_dyn_warmup(0.1, 1000, 10, 20), t)),
    # ------------------------------------------------------------------ hf
    Case("hf-linear", "hf.linear", lambda: HF.Linear(100, 1000), lambda t, b: R.hf_linear(t, b, 100, 1000)),
    Case("hf-linear-frac", "hf.linear", lambda: HF.Linear(0.05, 1000), lambda t, b: R.hf_linear(t, b, 50, 1000)),
    Case("hf-cosine", "hf.cosine", lambda: HF.Cosine(100, 1000), lambda t, b: R.hf_cosine(t, b, 100, 1000)),
    Case("hf-cosine-cycles", "hf.cosine", lambda: HF.Cosine(0, 900, 1.5), lambda t, b: R.hf_cosine(t, b, 0, 900, 1.5)),
    Case("hf-restarts", "hf.cosine_with_restarts", lambda: HF.CosineWithRestarts(100, 1000, 3),
         lambda t, b: R.hf_cosine_restarts(t, b, 100, 1000, 3)),
    Case("hf-poly", "hf.polynomial", lambda: HF.Polynomial(100, 1000, 1e-4, 2.0), default=0.2,
         ref=lambda t, b: R.hf_polynomial(t, b, 100, 1000, 0.2, 1e-4, 2.0)),
    Case("hf-constant", "hf.constant", lambda: HF.Constant(), lambda t, b: np.full(len(t), b)),
    Case("hf-constant-warmup", "hf.constant_with_warmup", lambda: HF.ConstantWithWarmup(150),
         lambda t, b: R.hf_constant_with_warmup(t, b, 150)),
    Case("hf-inverse-sqrt", "hf.inverse_sqrt", lambda: HF.InverseSqrt(100), lambda t, b: R.hf_inverse_sqrt(t, b, 100)),
    Case("hf-inverse-sqrt-0", "hf.inverse_sqrt", lambda: HF.InverseSqrt(0, 500),
         lambda t, b: R.hf_inverse_sqrt(t, b, 0, 500)),
    Case("hf-cosine-min-lr", "hf.cosine_with_min_lr", lambda: HF.CosineWithMinLR(100, 1000, min_lr=0.01), default=0.2,
         ref=lambda t, b: R.hf_cosine(t, b, 100, 1000, 0.5, 0.05)),
    Case("hf-cosine-min-rate", "hf.cosine_with_min_lr", lambda: HF.CosineWithMinLR(100, 1000, min_lr_rate=0.1),
         lambda t, b: R.hf_cosine(t, b, 100, 1000, 0.5, 0.1)),
    Case("hf-cosine-warmup-min", "hf.cosine_warmup_with_min_lr",
         lambda: HF.CosineWarmupWithMinLR(100, 1000, min_lr_rate=0.1, warmup_lr_rate=0.05),
         lambda t, b: R.hf_cosine_warmup_min(t, b, 100, 1000, 0.1, warmup_lr_rate=0.05)),
    Case("hf-cosine-warmup-min-0", "hf.cosine_warmup_with_min_lr",
         lambda: HF.CosineWarmupWithMinLR(100, 1000, min_lr_rate=0.1),
         lambda t, b: R.hf_cosine_warmup_min(t, b, 100, 1000, 0.1)),
    Case("hf-wsd", "hf.warmup_stable_decay", lambda: HF.WarmupStableDecay(100, 300, 1000, min_lr_ratio=0.1),
         lambda t, b: R.hf_wsd(t, b, 100, 300, 600, min_ratio=0.1)),
    Case("hf-wsd-sqrt", "hf.warmup_stable_decay",
         lambda: HF.WarmupStableDecay(0.1, 0.2, 1000, warmup_type="1-sqrt", decay_type="1-sqrt"),
         lambda t, b: R.hf_wsd(t, b, 100, 200, 700, "1-sqrt", "1-sqrt")),
    Case("hf-wsd-cos", "hf.warmup_stable_decay",
         lambda: HF.WarmupStableDecay(50, 200, num_stable_steps=400, warmup_type="cosine", decay_type="linear"),
         lambda t, b: R.hf_wsd(t, b, 50, 200, 400, "cosine", "linear")),
    # ------------------------------------------------------------------ timm
    Case("timm-cosine", "timm.cosine", lambda: TIMM.TimmCosine(300, lr_min=1e-4, cycle_mul=1.0, cycle_decay=0.5,
                                                                    cycle_limit=3, warmup_t=0.05, warmup_lr_init=1e-5),
         lambda t, b: R.timm_cycles(t, b, 300, lambda c, i: 0.5 * (1 + np.cos(np.pi * c / i)),
                                    1e-4, 1.0, 0.5, 3, 15, 1e-5)),
    Case("timm-cosine-mul", "timm.cosine",
         lambda: TIMM.TimmCosine(100, 1.5, lr_min=1e-4, cycle_mul=2.0, cycle_decay=0.8,
                                 cycle_limit=4, warmup_t=20, warmup_prefix=True),
         lambda t, b: R.timm_cycles(t, b, 100, lambda c, i: 0.5 * (1 + np.cos(np.pi * c ** 1.5 / i ** 1.5)),
                                    1e-4, 2.0, 0.8, 4, 20, 0.0, True)),
    Case("timm-poly", "timm.poly", lambda: TIMM.TimmPoly(400, 0.7, lr_min=1e-4, cycle_mul=1.0, cycle_decay=0.9,
                                                                cycle_limit=2, warmup_t=30),
         lambda t, b: R.timm_cycles(t, b, 400, lambda c, i: (1 - c / i) ** 0.7, 1e-4, 1.0, 0.9, 2, 30, 0.0)),
    Case("timm-tanh", "timm.tanh", lambda: TIMM.TimmTanh(300, -6.0, 4.0, lr_min=1e-4, cycle_decay=0.7, cycle_limit=3,
                                                                warmup_t=30, warmup_lr_init=1e-5),
         lambda t, b: _timm_tanh_ref(t, b, False)),
    Case("timm-tanh-prefix", "timm.tanh",
         lambda: TIMM.TimmTanh(300, -6.0, 4.0, lr_min=1e-4, cycle_decay=0.7, cycle_limit=3,
                               warmup_t=30, warmup_lr_init=1e-5, warmup_prefix=True),
         lambda t, b: _timm_tanh_ref(t, b, True)),
    Case("timm-step", "timm.step", lambda: TIMM.TimmStep(150, 0.5, 40, 1e-5),
         lambda t, b: R.timm_step(t, b, 150, 0.5, 40, 1e-5)),
    Case("timm-multistep", "timm.multistep", lambda: TIMM.TimmMultiStep([200, 600], 0.1, 40, 1e-5, False),
         lambda t, b: R.timm_step(t, b, [200, 600], 0.1, 40, 1e-5, False, multistep=True)),
    # ------------------------------------------------------------------ nemo
    Case("nemo-warmup", "nemo.WarmupPolicy", lambda: NEMO.WarmupPolicy(warmup_ratio=0.1, max_steps=1000, min_lr=1e-4),
         lambda t, b: R.nemo(t, b, 100, 1000, 1e-4, lambda s: np.full(s.shape, b))),
    Case("nemo-hold", "nemo.WarmupHoldPolicy",
         lambda: NEMO.WarmupHoldPolicy(1000, warmup_steps=100, hold_steps=300, min_lr=1e-4),
         lambda t, b: R.nemo(t, b, 100, 1000, 1e-4, lambda s: np.full(s.shape, b), 400)),
    Case("nemo-square", "nemo.SquareAnnealing", lambda: NEMO.SquareAnnealing(1000, 1e-4, warmup_steps=100),
         lambda t, b: R.nemo(t, b, 100, 1000, 1e-4, lambda s: np.maximum(b * ((900 - (s - 100)) / 900) ** 2, 1e-4))),
    Case("nemo-sqrt", "nemo.SquareRootAnnealing", lambda: NEMO.SquareRootAnnealing(1000, 1e-4, warmup_steps=100),
         lambda t, b: R.nemo(t, b, 100, 1000, 1e-4, lambda s: np.maximum(b * np.sqrt(np.maximum(1000 - s, 0) / 1000),
                                                                1e-4))),
    Case("nemo-cosine", "nemo.CosineAnnealing", lambda: NEMO.CosineAnnealing(1000, 1e-4, warmup_steps=100),
         lambda t, b: R.nemo(t, b, 100, 1000, 1e-4, lambda s: (b - 1e-4) * _nemo_cos(900)(s - 100) + 1e-4)),
    Case("nemo-cosine-megatron", "nemo.CosineAnnealing",
         lambda: NEMO.CosineAnnealing(1000, 1e-4, warmup_steps=100, constant_steps=200),
         lambda t, b: R.nemo_cosine_megatron(t, b, 100, 200, 1000, 1e-4)),
    Case("nemo-noam", "nemo.NoamAnnealing", lambda: NEMO.NoamAnnealing(512, 100, min_lr=1e-5), base=2.0,
         ref=lambda t, b: R.nemo_noam(t, b, 512, 100, 1e-5)),
    Case("nemo-noam-hold", "nemo.NoamHoldAnnealing",
         lambda: NEMO.NoamHoldAnnealing(1000, 0.5, 1e-5, warmup_steps=100, hold_steps=200),
         lambda t, b: R.nemo(t, b, 100, 1000, 1e-5,
                             lambda s: np.maximum(b * 100 ** 0.5 / np.maximum(1, np.maximum(s - 200, 0) ** 0.5),
                                                  1e-5), 300)),
    Case("nemo-warmup-annealing", "nemo.WarmupAnnealing", lambda: NEMO.WarmupAnnealing(1000, 1e-4, warmup_steps=100),
         lambda t, b: R.nemo(t, b, 100, 1000, 1e-4, lambda s: 1e-4 + (1 - (s - 100) / 900) * (b - 1e-4))),
    Case("nemo-inv-sqrt", "nemo.InverseSquareRootAnnealing",
         lambda: NEMO.InverseSquareRootAnnealing(1000, 1e-4, warmup_steps=100),
         lambda t, b: R.nemo(t, b, 100, 1000, 1e-4, lambda s: b / np.sqrt((s + 1) / 101))),
    Case("nemo-t5", "nemo.T5InverseSquareRootAnnealing", lambda: NEMO.T5InverseSquareRootAnnealing(1000, 100, 1e-3),
         lambda t, b: np.select([t <= 100, t > 1000], [100 ** -0.5, 1e-3], 1 / np.sqrt(np.maximum(t, 1)))),
    Case("nemo-poly", "nemo.PolynomialDecayAnnealing",
         lambda: NEMO.PolynomialDecayAnnealing(1000, 1e-4, 2.0, False, warmup_steps=100),
         lambda t, b: R.nemo(t, b, 100, 1000, 1e-4, lambda s: R.nemo_poly(s - 100, b, 900, 2.0, 1e-4, False))),
    Case("nemo-poly-cycle", "nemo.PolynomialDecayAnnealing",
         lambda: NEMO.PolynomialDecayAnnealing(1000, 1e-4, 1.0, True, warmup_steps=100),
         lambda t, b: R.nemo(t, b, 100, 1000, 1e-4, lambda s: R.nemo_poly(s - 100, b, 900, 1.0, 1e-4, True))),
    Case("nemo-poly-hold", "nemo.PolynomialHoldDecayAnnealing",
         lambda: NEMO.PolynomialHoldDecayAnnealing(1000, 1e-4, 1.0, False, warmup_steps=100, hold_steps=200),
         lambda t, b: R.nemo(t, b, 100, 1000, 1e-4, lambda s: R.nemo_poly(s - 300, b, 700, 1.0, 1e-4, False), 300)),
]

CASES.append(Case("cb-scale-per-param", "cerebras.ScalePerParamLR",
                  lambda: C.ScalePerParamLR(C.CosineDecayLR(1e-3, 1e-5, 900)),
                  lambda t, b: R.cerebras_cosine_decay(t, 1e-3, 1e-5, 900)))   # a group without a factor: 1


def _weight_decay_twin(schedule: Any, name: str | None = None) -> Any:
    """The `*WD` twin of a Cerebras lr schedule (its nested stages too), with the same options."""
    from optreg.schedules.engine import options_of

    twins = {lr: wd for wd, lr in C.WD_TWINS.items() if wd != "LinearWD"}
    options = dict(options_of(schedule))
    if "schedulers" in options:
        options["schedulers"] = [_weight_decay_twin(s) for s in options["schedulers"]]
    if "scheduler" in options:
        options["scheduler"] = _weight_decay_twin(options["scheduler"])
    return getattr(C, name or twins[type(schedule).__name__])(**options)


def _weight_decay_cases() -> list[Case]:
    """Each Cerebras weight-decay row: its lr twin's first case on the `*WD` class (the same reference)."""
    out = []
    for wd, lr in C.WD_TWINS.items():
        lr_entry = "cerebras." + ("LinearLR" if wd == "LinearWD" else lr)
        case = next(c for c in CASES if c.entry == lr_entry)
        out.append(Case(case.id + "-wd", f"cerebras.{wd}", lambda case=case, wd=wd: _weight_decay_twin(case.make(), wd),
                        case.ref, case.base, case.default, case.steps, case.extra))
    return out


CASES += _weight_decay_cases()

# The engine's torch forms and combinators, compared with numpy here and with torch in test_schedule_torch.
TORCH_CASES: list[Case] = [
    Case("t-step", "", lambda: T.StepLR(50, 0.5), lambda t, b: R.torch_step(t, b, 50, 0.5)),
    Case("t-cyclic", "", lambda: T.CyclicLR(1e-3, 1e-2, 70, 30, "exp_range", 0.9995),
         lambda t, b: R.torch_cyclic(t, 1e-3, 1e-2, 70, 30, "exp_range", 0.9995)),
    Case("t-onecycle", "", lambda: T.OneCycleLR(0.1, 1200, pct_start=0.2),
         lambda t, b: R.torch_one_cycle(t, 0.1, 1200, 0.2)),
    Case("t-polynomial", "", lambda: T.PolynomialLR(600, 3.0), lambda t, b: R.torch_polynomial(t, b, 600, 3.0)),
    Case("t-warm-restarts", "", lambda: T.CosineAnnealingWarmRestarts(30, 3, 1e-4),
         lambda t, b: R.torch_warm_restarts(t, b, 30, 3, 1e-4)),
    Case("t-sequential", "", lambda: T.SequentialLR([T.LinearLR(0.1, 1.0, 50), T.CosineAnnealingLR(400, 0.001)]),
         lambda t, b: _lin_then_cos(t) * b / 0.1),
]

ALL_CASES = CASES + TORCH_CASES
#: dialects whose scheduler rows are checked against recordings of the framework instead
#: (tests/test_format_deepspeed.py, tests/test_mmengine_format.py)
RECORDED_ONLY = ("deepspeed", "mmengine")


def test_every_engine_row_has_a_reference_case():
    from optreg.core.registry import REGISTRY
    from optreg.schedules.engine import Schedule

    covered = {c.entry for c in CASES}
    missing = []
    for entry in REGISTRY.entries("scheduler"):
        if entry.dialect in RECORDED_ONLY:
            continue
        target = entry.resolve()
        if isinstance(target, type) and issubclass(target, Schedule) and entry.qualname not in covered:
            missing.append(entry.qualname)
    assert not missing
    assert len(covered) >= 70


def test_case_rows_target_the_case_class():
    """A case's schedule is an instance of its row's target, so the reference checks the row's code."""
    from optreg.core.registry import REGISTRY

    for case in CASES:
        dialect, name = case.entry.split(".", 1)
        entry = REGISTRY.lookup("scheduler", name, dialect)
        assert isinstance(case.make(), entry.resolve()), case.id


__all__ = ["Case", "CASES", "TORCH_CASES", "ALL_CASES", "STEPS", "math"]

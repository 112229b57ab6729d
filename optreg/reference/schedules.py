"""Numpy references for every schedule, written from each framework's documented formula.

Each function takes the step array `t` (integers >= 0) and, for factor schedules, the base value `b`,
and returns the value every step gets. They are vectorised and independent of optreg.schedules.
Sources: torch 2.13 docs, OneFlow master docs, cerebras_pytorch 2.10, MindSpore 2.x nn docs,
transformers optimization.py, timm 1.0 scheduler, NeMo lr_scheduler.py.
"""

from __future__ import annotations

import math

import numpy as np

PI = np.pi


def _t(t) -> np.ndarray:
    return np.asarray(t, dtype=np.int64)


def _cos(x):
    return 0.5 * (1.0 + np.cos(PI * x))


def sgdr(t, t0: int, mult: int):
    """(cycle, T_cur, T_i) of SGDR restarts, computed per element from the geometric series."""
    t = _t(t)
    if mult == 1:
        return t // t0, t % t0, np.full(t.shape, t0)
    # cycle n starts at t0 (mult^n - 1)/(mult - 1); find the largest n with start <= t (exact integers)
    starts, lengths, n, s, length = [], [], 0, 0, t0
    top = int(t.max()) if t.size else 0
    while s <= top:
        starts.append(s)
        lengths.append(length)
        s, length, n = s + length, length * mult, n + 1
    starts_arr = np.asarray(starts)
    cycle = np.searchsorted(starts_arr, t, side="right") - 1
    return cycle, t - starts_arr[cycle], np.asarray(lengths)[cycle]


# ---------------------------------------------------------------------------------------------------
# torch (and OneFlow where identical)
# ---------------------------------------------------------------------------------------------------
def torch_lambda(t, b, fn):
    return b * np.array([fn(int(s)) for s in _t(t)], dtype=float)


def torch_multiplicative(t, b, fn):
    t = _t(t)
    factors = np.array([1.0] + [fn(k) for k in range(1, int(t.max()) + 1)])
    return b * np.cumprod(factors)[t]


def torch_step(t, b, step_size, gamma=0.1):
    return b * gamma ** (_t(t) // step_size)


def torch_multistep(t, b, milestones, gamma=0.1):
    t = _t(t)
    count = (t[:, None] >= np.asarray(milestones)[None, :]).sum(axis=1)
    return b * gamma ** count


def torch_constant(t, b, factor=1 / 3, total_iters=5):
    return b * np.where(_t(t) < total_iters, factor, 1.0)


def torch_linear(t, b, start_factor=1 / 3, end_factor=1.0, total_iters=5):
    frac = np.minimum(_t(t), total_iters) / total_iters
    return b * (start_factor + (end_factor - start_factor) * frac)


def torch_exponential(t, b, gamma):
    return b * gamma ** _t(t).astype(float)


def torch_polynomial(t, b, total_iters=5, power=1.0):
    return b * (1.0 - np.minimum(_t(t), total_iters) / total_iters) ** power


def torch_cosine_annealing(t, b, T_max, eta_min=0.0):
    return eta_min + (b - eta_min) * _cos(_t(t) / T_max)


def torch_warm_restarts(t, b, T_0, T_mult=1, eta_min=0.0):
    _, t_cur, t_i = sgdr(t, T_0, T_mult)
    return eta_min + (b - eta_min) * _cos(t_cur / t_i)


def torch_cyclic(t, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular", gamma=1.0):
    """The CLR triangle: cycle = ⌊1 + t/(2s)⌋, x = |t/s - 2·cycle + 1| for a symmetric cycle; general up/down here."""
    t = _t(t).astype(float)
    down = step_size_down or step_size_up
    total = step_size_up + down
    cycle = np.floor(1 + t / total)
    pos = t - (cycle - 1) * total                   # steps into the cycle
    height = np.where(pos <= step_size_up, pos / step_size_up, (total - pos) / down)
    if mode == "triangular":
        scale = 1.0
    elif mode == "triangular2":
        scale = 0.5 ** (cycle - 1)
    else:
        scale = gamma ** t
    return base_lr + (max_lr - base_lr) * height * scale


def torch_one_cycle(t, max_lr, total_steps, pct_start=0.3, anneal_strategy="cos", div_factor=25.0,
                    final_div_factor=1e4, three_phase=False):
    t = _t(t).astype(float)
    initial = max_lr / div_factor
    low = initial / final_div_factor
    up_end = pct_start * total_steps - 1
    if three_phase:
        bounds = [(0.0, up_end, initial, max_lr), (up_end, 2 * pct_start * total_steps - 2, max_lr, initial),
                  (2 * pct_start * total_steps - 2, total_steps - 1, initial, low)]
    else:
        bounds = [(0.0, up_end, initial, max_lr), (up_end, total_steps - 1, max_lr, low)]
    out = np.empty_like(t)
    for i, (s0, s1, v0, v1) in enumerate(bounds):
        mask = (t > s0 if i else t >= s0) & ((t <= s1) if i < len(bounds) - 1 else True)
        p = (t[mask] - s0) / (s1 - s0)
        if anneal_strategy == "cos":
            out[mask] = v1 + (v0 - v1) * _cos(p)
        else:
            out[mask] = v0 + (v1 - v0) * p
    return out


def sequential(t, parts, milestones, restart="local"):
    """parts: functions of t (already bound to their options); restart per boundary ('local'/'global')."""
    t = _t(t)
    modes = [restart] * len(milestones) if isinstance(restart, str) else list(restart)
    edges = [0, *milestones]
    out = np.empty(t.shape, dtype=float)
    for k, fn in enumerate(parts):
        lo = edges[k]
        hi = milestones[k] if k < len(milestones) else np.iinfo(np.int64).max
        mask = (t >= lo) & (t < hi)
        if not mask.any():
            continue
        local = t[mask] - lo if k > 0 and modes[k - 1] == "local" else t[mask]
        out[mask] = fn(local)
    return out


# ---------------------------------------------------------------------------------------------------
# OneFlow
# ---------------------------------------------------------------------------------------------------
def oneflow_polynomial(t, b, decay_batch, end_learning_rate=1e-4, power=1.0, cycle=False):
    t = _t(t)
    if cycle:
        cur = np.maximum(t, 1)
        decay = decay_batch * np.ceil(cur / decay_batch)
    else:
        cur, decay = np.minimum(t, decay_batch), decay_batch
    return (b - end_learning_rate) * (1 - cur / decay) ** power + end_learning_rate


def oneflow_cosine_decay(t, b, decay_steps, alpha=0.0):
    t = _t(t)
    inside = (1 - alpha) * _cos(np.minimum(t, decay_steps) / decay_steps) + alpha
    return b * np.where(t < decay_steps, inside, alpha)


def oneflow_warm_restarts(t, b, T_0, T_mult=1, eta_min=0.0, decay_rate=1.0, restart_limit=0):
    cycle, t_cur, t_i = sgdr(t, T_0, T_mult)
    value = eta_min + (b * decay_rate ** cycle - eta_min) * _cos(t_cur / t_i)
    if restart_limit > 0:
        value = np.where(cycle >= restart_limit, eta_min, value)
    return value


def oneflow_warmup(t, b, main, warmup_factor=1 / 3, warmup_iters=5, warmup_method="linear", warmup_prefix=False):
    """main: function of t (or None). Linear warmup ends at main(W)/b unless warmup_prefix."""
    t = _t(t)
    if warmup_method == "constant":
        ramp = lambda s: torch_constant(s, b, warmup_factor, warmup_iters)  # noqa: E731
    else:
        end = 1.0 if (main is None or warmup_prefix) else float(main(np.array([warmup_iters]))[0]) / b
        ramp = lambda s: torch_linear(s, b, warmup_factor, end, warmup_iters)  # noqa: E731
    if main is None:
        return ramp(t)
    return sequential(t, [ramp, main], [warmup_iters], "local" if warmup_prefix else "global")


# ---------------------------------------------------------------------------------------------------
# Cerebras (absolute)
# ---------------------------------------------------------------------------------------------------
def cerebras_polynomial(t, initial_learning_rate, end_learning_rate, total_iters, power=1.0):
    """In float32 (Cerebras' tensors): each numpy float32 operation rounds as a float32 tensor's does."""
    f = np.float32
    t = _t(t)
    fraction = f(1) - np.minimum(t, total_iters).astype(f) / f(total_iters)
    value = (fraction.astype(float) ** power).astype(f) * f(initial_learning_rate - end_learning_rate) + \
        f(end_learning_rate)
    return np.where(t >= total_iters, f(end_learning_rate), value).astype(float)


def cerebras_exponential(t, initial_learning_rate, total_iters, decay_rate, staircase=False):
    p = _t(t) / total_iters
    return initial_learning_rate * decay_rate ** (np.floor(p) if staircase else p)


def cerebras_inverse_time(t, initial_learning_rate, step_exponent, total_iters, decay_rate, staircase=False):
    alpha = _t(t).astype(float) ** step_exponent / total_iters
    if staircase:
        alpha = np.floor(alpha)
    return initial_learning_rate / (1 + decay_rate * alpha)


def cerebras_inverse_sqrt(t, initial_learning_rate=1.0, scale=1.0, warmup_steps=1):
    return initial_learning_rate * scale / np.sqrt(np.maximum(_t(t), warmup_steps))


def cerebras_cosine_decay(t, initial_learning_rate, end_learning_rate, total_iters):
    progress = np.minimum(_t(t), total_iters) / total_iters
    return end_learning_rate + (initial_learning_rate - end_learning_rate) * _cos(progress)


def cerebras_warm_restarts(t, initial_learning_rate, T_0, eta_min=0.0):
    """As cerebras_pytorch writes T_cur: t before T_0, then ⌊t/T_0⌋·T_0 - T_0 (its quirk)."""
    t = _t(t)
    t_cur = np.where(t < T_0, t, (t // T_0) * T_0 - T_0)
    return eta_min + (initial_learning_rate - eta_min) * _cos(t_cur / T_0)


def cerebras_piecewise(t, learning_rates, milestones):
    idx = (_t(t)[:, None] >= np.asarray(milestones)[None, :]).sum(axis=1)
    return np.asarray(learning_rates, dtype=float)[idx]


def cerebras_one_cycle(t, initial_learning_rate, max_lr, total_steps=1000, pct_start=0.3, final_div_factor=1e4,
                       three_phase=False, anneal_strategy="cos"):
    """torch's phases, continuing the last phase's formula past total_steps."""
    t = _t(t).astype(float)
    low = initial_learning_rate / final_div_factor
    m0 = pct_start * total_steps - 1
    if three_phase:
        phases = [(0.0, m0, initial_learning_rate, max_lr), (m0, 2 * pct_start * total_steps - 2, max_lr,
                                                             initial_learning_rate),
                  (2 * pct_start * total_steps - 2, total_steps - 1, initial_learning_rate, low)]
    else:
        phases = [(0.0, m0, initial_learning_rate, max_lr), (m0, total_steps - 1, max_lr, low)]
    out = np.empty_like(t)
    for i, (s0, s1, v0, v1) in enumerate(phases):
        last = i == len(phases) - 1
        mask = ((t > s0) if i else np.ones_like(t, bool)) & (True if last else (t <= s1))
        p = (t[mask] - s0) / (s1 - s0)
        out[mask] = v1 + (v0 - v1) * _cos(p) if anneal_strategy == "cos" else v0 + (v1 - v0) * p
    return out


# ---------------------------------------------------------------------------------------------------
# MindSpore (absolute)
# ---------------------------------------------------------------------------------------------------
def ms_exponential_decay(t, learning_rate, decay_rate, decay_steps, is_stair=False):
    p = _t(t) / decay_steps
    return learning_rate * decay_rate ** (np.floor(p) if is_stair else p)


def ms_natural_exp_decay(t, learning_rate, decay_rate, decay_steps, is_stair=False):
    """As implemented by MindSpore: p = t (or ⌊t/D⌋·D); its docs' p = t/D is not what construct() does."""
    t = _t(t)
    p = (t // decay_steps) * decay_steps if is_stair else t
    return learning_rate * np.exp(-decay_rate * p)


def ms_inverse_decay(t, learning_rate, decay_rate, decay_steps, is_stair=False):
    p = _t(t) / decay_steps
    return learning_rate / (1 + decay_rate * (np.floor(p) if is_stair else p))


def ms_cosine_decay(t, min_lr, max_lr, decay_steps):
    return min_lr + 0.5 * (max_lr - min_lr) * (1 + np.cos(PI * np.minimum(_t(t), decay_steps) / decay_steps))


def ms_polynomial_decay(t, learning_rate, end_learning_rate, decay_steps, power, update_decay_steps=False):
    t = _t(t)
    if update_decay_steps:
        decay = decay_steps * np.maximum(np.ceil(t / decay_steps), 1)
        cur = t
    else:
        decay, cur = decay_steps, np.minimum(t, decay_steps)
    return (learning_rate - end_learning_rate) * (1 - cur / decay) ** power + end_learning_rate


def ms_warmup(t, learning_rate, warmup_steps):
    return learning_rate * np.minimum(_t(t), warmup_steps) / warmup_steps


def ms_list(values, t):
    """A dynamic-lr list read at step t, holding the last value past its end."""
    values = np.asarray(values, dtype=float)
    return values[np.minimum(_t(t), len(values) - 1)]


def ms_epoch(total_step, step_per_epoch):
    return np.arange(total_step) // step_per_epoch


def ms_dyn_piecewise(milestone, learning_rates):
    i = np.arange(milestone[-1])
    return np.asarray(learning_rates, dtype=float)[(i[:, None] >= np.asarray(milestone)[None, :]).sum(axis=1)]


def ms_dyn_exponential(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False):
    p = ms_epoch(total_step, step_per_epoch) / decay_epoch
    return learning_rate * decay_rate ** (np.floor(p) if is_stair else p)


def ms_dyn_natural_exp(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False):
    e = ms_epoch(total_step, step_per_epoch)
    if is_stair:
        e = (e // decay_epoch) * decay_epoch
    return learning_rate * np.exp(-decay_rate * e)


def ms_dyn_inverse(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair=False):
    p = ms_epoch(total_step, step_per_epoch) / decay_epoch
    return learning_rate / (1 + decay_rate * (np.floor(p) if is_stair else p))


def ms_dyn_cosine(min_lr, max_lr, total_step, step_per_epoch, decay_epoch):
    e = np.minimum(ms_epoch(total_step, step_per_epoch), decay_epoch)
    return min_lr + 0.5 * (max_lr - min_lr) * (1 + np.cos(PI * e / decay_epoch))


def ms_dyn_polynomial(learning_rate, end_learning_rate, total_step, step_per_epoch, decay_epoch, power,
                      update_decay_epoch=False):
    e = ms_epoch(total_step, step_per_epoch)
    if update_decay_epoch:
        decay = decay_epoch * np.maximum(np.ceil(e / decay_epoch), 1)
    else:
        decay, e = decay_epoch, np.minimum(e, decay_epoch)
    return (learning_rate - end_learning_rate) * (1 - e / decay) ** power + end_learning_rate


def ms_dyn_warmup(learning_rate, total_step, step_per_epoch, warmup_epoch):
    return learning_rate * np.minimum(ms_epoch(total_step, step_per_epoch), warmup_epoch) / warmup_epoch


# ---------------------------------------------------------------------------------------------------
# HF transformers (factors)
# ---------------------------------------------------------------------------------------------------
def _hf_ramp(t, w):
    return t / max(1, w)


def hf_constant_with_warmup(t, b, w):
    t = _t(t)
    return b * np.where(t < w, _hf_ramp(t, w), 1.0)


def hf_linear(t, b, w, total):
    t = _t(t)
    return b * np.where(t < w, _hf_ramp(t, w), np.maximum(0.0, (total - t) / max(1, total - w)))


def hf_cosine(t, b, w, total, num_cycles=0.5, min_rate=0.0):
    t = _t(t)
    p = (t - w) / max(1, total - w)
    c = 0.5 * (1 + np.cos(2 * PI * num_cycles * p))
    return b * np.where(t < w, _hf_ramp(t, w), np.maximum(0.0, c * (1 - min_rate) + min_rate))


def hf_cosine_restarts(t, b, w, total, num_cycles=1):
    t = _t(t)
    p = (t - w) / max(1, total - w)
    c = 0.5 * (1 + np.cos(PI * np.mod(num_cycles * p, 1.0)))
    return b * np.where(t < w, _hf_ramp(t, w), np.where(p >= 1, 0.0, c))


def hf_polynomial(t, b, w, total, lr_init, lr_end=1e-7, power=1.0):
    t = _t(t)
    decay = ((lr_init - lr_end) * np.clip(1 - (t - w) / (total - w), 0, None) ** power + lr_end) / lr_init
    return b * np.where(t < w, _hf_ramp(t, w), np.where(t > total, lr_end / lr_init, decay))


def hf_inverse_sqrt(t, b, w, timescale=None):
    t = _t(t)
    tau = timescale if timescale is not None else (w or 10_000)
    with np.errstate(divide="ignore"):
        return b * np.where(t < w, _hf_ramp(t, w), 1 / np.sqrt(np.maximum(t + tau - w, 0) / tau))


def hf_cosine_warmup_min(t, b, w, total, min_rate, num_cycles=0.5, warmup_lr_rate=None):
    t = _t(t).astype(float)
    ramp = (t + 1) / max(1, w) if warmup_lr_rate is None else warmup_lr_rate + (1 - warmup_lr_rate) * t / max(1, w - 1)
    p = (t - w + 1) / max(1, total - w)
    c = 0.5 * (1 + np.cos(2 * PI * num_cycles * p))
    return b * np.where(t < w, ramp, np.maximum(0, c * (1 - min_rate) + min_rate))


def hf_wsd(t, b, w, decay, stable, warmup_type="linear", decay_type="cosine", min_ratio=0.0, num_cycles=0.5):
    t = _t(t).astype(float)
    x = np.clip(t / max(1, w), 0, 1)
    up = {"linear": x, "cosine": 0.5 * (1 - np.cos(PI * x)), "1-sqrt": 1 - np.sqrt(1 - x)}[warmup_type]
    y = np.clip((t - w - stable) / max(1, decay), 0, 1)
    down = {"linear": 1 - y, "cosine": 0.5 * (1 + np.cos(2 * PI * num_cycles * y)),
            "1-sqrt": 1 - np.sqrt(y)}[decay_type]
    out = np.select([t < w, t < w + stable, t < w + stable + decay],
                    [np.maximum(0, up * (1 - min_ratio) + min_ratio), 1.0,
                     np.maximum(0, down * (1 - min_ratio) + min_ratio)], min_ratio)
    return b * out


# ---------------------------------------------------------------------------------------------------
# timm (factors with absolute lr_min / warmup_lr_init)
# ---------------------------------------------------------------------------------------------------
def timm_cycles(t, b, t_initial, shape, lr_min=0.0, cycle_mul=1.0, cycle_decay=1.0, cycle_limit=1, warmup_t=0,
                warmup_lr_init=0.0, warmup_prefix=False, warmup_target=None):
    """shape(t_curr, t_i) in [0, 1]. Cycle i of length t_initial·cycle_mul^i (geometric sums)."""
    t = _t(t).astype(float)
    s = t - warmup_t if warmup_prefix else t
    if cycle_mul == 1:
        i = np.floor(s / t_initial)
        t_i = np.full_like(s, t_initial)
        t_curr = s - i * t_initial
    else:
        i = np.floor(np.log(1 - s / t_initial * (1 - cycle_mul)) / np.log(cycle_mul))
        t_i = cycle_mul ** i * t_initial
        t_curr = s - (1 - cycle_mul ** i) / (1 - cycle_mul) * t_initial
    peak = b * cycle_decay ** i
    main = np.where(i < cycle_limit, lr_min + (peak - lr_min) * shape(t_curr, t_i), lr_min)
    if not warmup_t:
        return main
    target = b if warmup_target is None else warmup_target
    ramp = warmup_lr_init + t * (target - warmup_lr_init) / warmup_t
    return np.where(t < warmup_t, ramp, main)


def timm_step(t, b, decay_t, decay_rate=1.0, warmup_t=0, warmup_lr_init=0.0, warmup_prefix=True, multistep=False):
    t = _t(t).astype(float)
    s = t - warmup_t if warmup_prefix else t
    n = (s[:, None] >= np.asarray(decay_t)[None, :]).sum(axis=1) if multistep else np.floor(s / decay_t)
    main = b * decay_rate ** n
    if not warmup_t:
        return main
    return np.where(t < warmup_t, warmup_lr_init + t * (b - warmup_lr_init) / warmup_t, main)


# ---------------------------------------------------------------------------------------------------
# NeMo (factors with absolute min_lr)
# ---------------------------------------------------------------------------------------------------
def nemo(t, b, w, max_steps, min_lr, decay, hold_end=None):
    """Warmup b(t+1)/(W+1) for t <= W (W > 0), hold b on [W, hold_end), min_lr past max_steps, else decay(t)."""
    t = _t(t)
    conds = [(t <= w) & (w > 0)]
    vals = [b * (t + 1) / (w + 1)]
    if hold_end is not None:
        conds.append((t >= w) & (t < hold_end))
        vals.append(np.full(t.shape, float(b)))
    if max_steps is not None:
        conds.append(t > max_steps)
        vals.append(np.full(t.shape, float(min_lr)))
    with np.errstate(all="ignore"):
        return np.select(conds, vals, decay(t))


def nemo_cosine_megatron(t, peak, w, constant, max_steps, min_lr):
    t = _t(t).astype(float)
    decay_steps = max_steps - constant - w
    ratio = np.clip((t - w) / decay_steps, 0, 1)
    cosine = min_lr + 0.5 * (np.cos(PI * ratio) + 1) * (peak - min_lr)
    return np.select([(t <= w) & (w > 0), t > w + decay_steps], [peak * t / max(w, 1), min_lr], cosine)


def nemo_noam(t, b, d_model, w, min_lr=0.0):
    s = np.maximum(_t(t), 1).astype(float)
    mult = d_model ** -0.5 * (np.minimum(s ** -0.5, s * w ** -1.5) if w > 0 else s ** -0.5)
    out = b * mult
    return np.where(s > w, np.maximum(out, min_lr), out)


def nemo_poly(s, b, decay_steps, power, min_lr, cycle):
    s = np.asarray(s, dtype=float)
    if cycle:
        d = decay_steps * np.where(s == 0, 1.0, np.ceil(s / decay_steps))
    else:
        d, s = decay_steps, np.minimum(s, decay_steps)
    with np.errstate(all="ignore"):
        return (b - min_lr) * (1 - s / d) ** power + min_lr


# ---------------------------------------------------------------------------------------------------
# MindFormers' lr schedules (mindformers/core/lr/lr_schedule.py, dev 2025), from their construct()
# ---------------------------------------------------------------------------------------------------
def _mf_warmup(t, warmup, start, end):
    return start + (end - start) * t / max(warmup, 1)


def mf_constant_warmup(t, lr, warmup, lr_init=0.0):
    t = _t(t)
    return np.where(t < warmup, _mf_warmup(t, warmup, lr_init, lr), lr)


def mf_linear_warmup(t, lr, total, warmup, lr_init=0.0):
    t = _t(t)
    return np.where(t < warmup, _mf_warmup(t, warmup, lr_init, lr),
                    lr * np.maximum(0.0, (total - t) / max(1, total - warmup)))


F32 = np.float32


def _mf_f32_anneal(low, span, angle):
    """In float32 (MindFormers' tensors): low + span·max(0, ½(1 + cos(angle))), cos correctly rounded."""
    percent = np.maximum(F32(0), F32(0.5) * (F32(1) + np.cos(np.asarray(angle, F32).astype(float)).astype(F32)))
    return (F32(low) + F32(span) * percent).astype(float)


def mf_cosine_warmup(t, lr, total, warmup, cycles=0.5, lr_end=0.0, lr_init=0.0, decay=None):
    t = _t(t)
    decay = max(1, decay if decay is not None else total)
    progress = (t - warmup).astype(F32) / F32(max(1, total - warmup))
    cos = _mf_f32_anneal(lr_end, F32(lr) - F32(lr_end), F32(PI * cycles * 2.0) * progress)
    return np.where(t >= decay, lr_end, np.where(t < warmup, _mf_warmup(t, warmup, lr_init, lr), cos))


def mf_cosine_restarts(t, lr, total, warmup, cycles=1.0, lr_end=0.0, lr_init=0.0):
    t = _t(t)
    progress = (t - warmup) / max(1, total - warmup)
    cos = lr_end + (lr - lr_end) * np.maximum(0.0, 0.5 * (1 + np.cos(PI * np.mod(cycles * progress, 1.0))))
    after = np.where(progress < 1.0, cos, 0.0)
    return np.where(t >= max(1, total), lr_end, np.where(t < warmup, _mf_warmup(t, warmup, lr_init, lr), after))


def mf_polynomial_warmup(t, lr, total, warmup, lr_end=1e-7, power=1.0, lr_init=0.0, decay=None):
    t = _t(t)
    decay = max(1, decay if decay is not None else total - warmup)
    remaining = np.maximum(F32(1) - (t - warmup).astype(F32) / F32(decay), F32(0))   # float32, as MindFormers
    value = (F32(lr) - F32(lr_end)) * (remaining.astype(float) ** power).astype(F32) + F32(lr_end)
    poly = (F32(lr) * (value / F32(lr))).astype(float)
    return np.where(t < warmup, _mf_warmup(t, warmup, lr_init, lr), np.where(t > total, lr_end, poly))


def mf_warmup_stable_decay(t, lr, total, warmup, decay_start, lr_end=1e-7, lr_init=0.0):
    t = _t(t)
    return np.where(t < warmup, _mf_warmup(t, warmup, lr_init, lr),
                    np.where(t < decay_start, lr, (F32(lr) - (F32(lr) - F32(lr_end)) * (
                        (t - decay_start).astype(F32) / F32(total - decay_start))).astype(float)))


def mf_constant_cooldown(t, lr, warmup, keep, decay, final, lr_end1, lr_end2, cycles=0.5, lr_init=0.0):
    t = _t(t)
    cos = lr_end1 + (lr - lr_end1) * np.maximum(0.0, 0.5 * (1 + np.cos(PI * cycles * 2.0 * (t - keep - warmup)
                                                                       / decay)))
    return np.select([t < warmup, t < warmup + keep, t < warmup + keep + decay, t < warmup + keep + decay + final],
                     [_mf_warmup(t, warmup, lr_init, lr), lr, cos, lr_end1], lr_end2)


def mf_cosine_annealing(t, base_lr, t_max, eta_min=0.0):
    return _mf_f32_anneal(eta_min, base_lr - eta_min, F32(PI) * _t(t).astype(F32) / F32(t_max))


def mf_cosine_annealing_restarts(t, base_lr, t_0, t_mult=1, eta_min=0.0):
    t = _t(t)
    if t_mult == 1:
        cur, length = np.mod(t, t_0), t_0
    else:   # cycle i spans t_0·t_mult^i steps; MindFormers finds i in float32
        x = t.astype(F32) / F32(t_0) * F32(t_mult - 1.0) + F32(1)
        logs = np.log(x.astype(float)).astype(F32)
        i = np.where(t < t_0, 0, np.floor(logs / F32(math.log(t_mult))))
        start = t_0 * (t_mult ** i - 1) / (t_mult - 1)
        cur, length = t - start, t_0 * t_mult ** i
    return _mf_f32_anneal(eta_min, base_lr - eta_min, (F32(PI) * np.asarray(cur, F32)) / np.asarray(length, F32))

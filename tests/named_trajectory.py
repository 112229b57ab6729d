"""Float64 trajectories over named parameters, for the tests that compare an optimizer with its numpy reference
(MindSpore-style names: the name decides weight decay and filters): parameters and gradient noise by seed, a run
that records every step, and an exact-resume check."""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np
import torch


def named_params(shapes: Mapping[str, tuple], seed: int = 0, zero: tuple = ()) -> dict[str, torch.nn.Parameter]:
    """Parameters of the given shapes, drawn in float64 from `seed`; those named in `zero` start at 0."""
    gen = torch.Generator().manual_seed(seed)
    out = {}
    for n, s in shapes.items():
        t = torch.randn(*s, generator=gen, dtype=torch.float64)
        out[n] = torch.nn.Parameter(torch.zeros_like(t) if n in zero else t)
    return out


def gradient_noise(shapes: Mapping[str, tuple], steps: int, seed: int = 1) -> list[dict[str, np.ndarray]]:
    """Per-step gradient noise of the given shapes."""
    rng = np.random.default_rng(seed)
    return [{n: rng.standard_normal(s) for n, s in shapes.items()} for _ in range(steps)]


def adam_start(init: Mapping[str, np.ndarray]) -> tuple[dict, dict, dict]:
    """(weights, first moments, second moments) of an Adam-family numpy reference at its start: copies of the
    initial weights, zeros."""
    w = {n: v.copy() for n, v in init.items()}
    return w, {n: np.zeros_like(v) for n, v in w.items()}, {n: np.zeros_like(v) for n, v in w.items()}


def run_named(opt, params, noise, scale: float = 1.0) -> list[dict[str, np.ndarray]]:
    """Step `opt` once per noise entry with grad = scale·(noise + 0.1·w); the weights after each step."""
    out = []
    for step in noise:
        for n, p in params.items():
            p.grad = torch.from_numpy(scale * (step[n] + 0.1 * p.detach().numpy()))
        opt.step()
        out.append({n: p.detach().numpy().copy() for n, p in params.items()})
    return out


def assert_exact_resume(build: Callable, params: Callable, noise, split: int) -> None:
    """A run stopped after `split` steps and resumed from its state dict on fresh parameters continues bit for bit
    as the uninterrupted run. `build(named_params)` makes the optimizer; `params()` fresh parameters."""
    a = params()
    full = run_named(build(a), a, noise)
    b = params()
    first = build(b)
    run_named(first, b, noise[:split])
    sd = first.state_dict()
    c = params()
    for n, p in c.items():
        p.data.copy_(b[n].detach())
    resumed = build(c)
    resumed.load_state_dict(sd)
    for x, y in zip(full[split:], run_named(resumed, c, noise[split:])):
        for n in x:
            assert np.array_equal(x[n], y[n]), n

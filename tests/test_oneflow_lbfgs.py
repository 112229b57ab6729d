"""oneflow.optim.LBFGS against a numpy reference written from OneFlow's source
(python/oneflow/nn/optimizer/lbfgs.py at commit 6f5e0f6cf03a; LBFGS is not in the OneFlow 0.9.0 release, so
nothing can be recorded), and against torch.optim.LBFGS where the two are the same algorithm."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import optreg

# --- the objective: a Rosenbrock chain, its value and gradient in numpy ----------------------------


def rosenbrock(x: np.ndarray) -> tuple[float, np.ndarray]:
    """f = Σ 100·(x[i+1] - x[i]²)² + (1 - x[i])², with its gradient."""
    a, b = x[:-1], x[1:]
    f = float(np.sum(100.0 * (b - a ** 2) ** 2 + (1 - a) ** 2))
    g = np.zeros_like(x)
    g[:-1] += -400.0 * a * (b - a ** 2) - 2 * (1 - a)
    g[1:] += 200.0 * (b - a ** 2)
    return f, g


def torch_rosenbrock(x: torch.Tensor) -> torch.Tensor:
    a, b = x[:-1], x[1:]
    return torch.sum(100.0 * (b - a ** 2) ** 2 + (1 - a) ** 2)


START = np.array([-1.2, 1.0, -0.5, 0.8, 1.3, 0.2])


# --- the reference ----------------------------------------------------------------------------------
def quadratic(x1, f1, g1, x2, f2, bounds=None):
    """The vertex of p(x) = f1 + g1·(x - x1) + c·(x - x1)², p(x2) = f2, clamped to bounds (default [x1, x2])."""
    c = (f2 - f1 - g1 * (x2 - x1)) / (x2 - x1) ** 2
    low, high = bounds if bounds is not None else sorted((x1, x2))
    return float(np.clip(x1 - g1 / (2 * c), low, high))


def line_search(fun, x, t, d, f, g, gtd, tol_change, c1=1e-4, c2=0.9, max_ls=25):
    """OneFlow's `_strong_wolfe`: bracketing with quadratic steps, then zoom (no else after the Armijo test)."""
    d_norm = np.abs(d).max()
    f_new, g_new = fun(x + t * d)
    evals, ls_iter, done = 1, 0, False
    gtd_new = g_new @ d
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g.copy(), gtd
    area = area_f = area_g = area_gtd = None
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new > f_prev):
            area, area_f, area_g, area_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            area, area_f, area_g, done = [t], [f_new], [g_new], True
            break
        step = quadratic(t_prev, f_prev, gtd_prev, t, f_new, bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.copy(), gtd_new
        t = step
        f_new, g_new = fun(x + t * d)
        evals += 1
        gtd_new = g_new @ d
        ls_iter += 1
    if ls_iter == max_ls:
        area, area_f, area_g = [0, t], [f, f_new], [g, g_new]
    low, high = (0, 1) if area_f[0] <= area_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(area[1] - area[0]) * d_norm < tol_change:
            break
        t = quadratic(area[0], area_f[0], area_gtd[0], area[1], area_f[1])
        f_new, g_new = fun(x + t * d)
        evals += 1
        gtd_new = g_new @ d
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= area_f[low]:
            area[high], area_f[high], area_g[high], area_gtd[high] = t, f_new, g_new.copy(), gtd_new
            low, high = (0, 1) if area_f[0] <= area_f[1] else (1, 0)
        if abs(gtd_new) <= -c2 * gtd:
            done = True
        elif gtd_new * (area[high] - area[low]) >= 0:
            area[high], area_f[high], area_g[high], area_gtd[high] = area[low], area_f[low], area_g[low], area_gtd[low]
        area[low], area_f[low], area_g[low], area_gtd[low] = t, f_new, g_new.copy(), gtd_new
    return area_f[low], area_g[low], area[low], evals


def reference_lbfgs(x, steps, lr=1e-3, max_iter=20, max_eval=None, tol_grad=1e-7, tol_change=1e-9, history=100,
                    line_search_fn=None):
    """OneFlow's LBFGS.step, `steps` times from x (float64): the weights after each step."""
    max_eval = max_iter * 1.25 if max_eval is None else max_eval
    x = x.copy()
    st = {"n_iter": 0}
    out = []
    for _ in range(steps):
        loss, g = rosenbrock(x)
        evals = 1
        if np.abs(g).max() <= tol_grad:
            out.append(x.copy())
            continue
        for n_iter in range(1, max_iter + 1):
            st["n_iter"] += 1
            if st["n_iter"] == 1:
                d, st["Y"], st["S"], st["ro"], st["H"] = -g, [], [], [], 1.0
            else:
                y, s = g - st["pg"], st["d"] * st["t"]
                ys = y @ s
                if ys > 1e-10:
                    if len(st["Y"]) == history:
                        st["Y"].pop(0), st["S"].pop(0), st["ro"].pop(0)
                    st["Y"].append(y), st["S"].append(s), st["ro"].append(1.0 / ys)
                    st["H"] = ys / (y @ y)
                al = [0.0] * len(st["Y"])
                q = -g
                for i in range(len(st["Y"]) - 1, -1, -1):
                    al[i] = (st["S"][i] @ q) * st["ro"][i]
                    q = q - al[i] * st["Y"][i]
                d = q * st["H"]
                for i in range(len(st["Y"])):
                    d = d + (al[i] - (st["Y"][i] @ d) * st["ro"][i]) * st["S"][i]
            st["pg"], prev_loss = g.copy(), loss
            t = min(1.0, 1.0 / np.abs(g).sum()) * lr if st["n_iter"] == 1 else lr
            st["d"], st["t"] = d, t
            gtd = g @ d
            if gtd > -tol_change:
                break
            spent = 0
            if line_search_fn is None:
                x = x + t * d
                if n_iter != max_iter:
                    (loss, g), spent = rosenbrock(x), 1
            else:
                loss, g, t, spent = line_search(rosenbrock, x, t, d, loss, g, gtd, tol_change)
                st["t"] = t
                x = x + t * d
            evals += spent
            if (n_iter == max_iter or evals >= max_eval or np.abs(g).max() <= tol_grad
                    or np.abs(d * t).max() <= tol_change or abs(loss - prev_loss) < tol_change):
                break
        out.append(x.copy())
    return out


def run(opt_factory, steps):
    w = torch.nn.Parameter(torch.tensor(START, dtype=torch.float64))
    opt = opt_factory([w])

    def closure():
        opt.zero_grad()
        loss = torch_rosenbrock(w)
        loss.backward()
        return loss

    out = []
    for _ in range(steps):
        opt.step(closure)
        out.append(w.detach().numpy().copy())
    return out, opt


CASES = [dict(lr=1.0, max_iter=5), dict(lr=0.8, max_iter=3, history_size=2),
         dict(lr=1.0, max_iter=5, line_search_fn="strong_wolfe"),
         dict(lr=4.0, max_iter=6, line_search_fn="strong_wolfe"),
         dict()]


@pytest.mark.parametrize("options", CASES, ids=[str(c) for c in CASES])
def test_matches_the_reference_from_oneflow_source(options):
    """float64, 4 steps: the iterations amplify the rounding of autograd's gradient against the analytic one
    (measured: at most 5.2e-12 of a movement of 1.5)."""
    got, opt = run(lambda p: optreg.configure_optimizer("oneflow.optim.LBFGS", p, **options), 4)
    ref_options = {("history" if k == "history_size" else k): v for k, v in options.items()}
    want = reference_lbfgs(START, 4, **ref_options)
    moved = np.abs(want[-1] - START).max()
    assert moved > 0.1
    for k, (g, w) in enumerate(zip(got, want)):
        assert np.abs(g - w).max() <= 1e-10 * moved, f"step {k + 1}"
    assert opt.state[opt._params[0]]["n_iter"] > 4


def test_without_a_line_search_it_is_torchs_algorithm():
    """The same iterations as torch.optim.LBFGS given OneFlow's defaults explicitly (max_eval = 25 = 1.25·20)."""
    ours, _ = run(lambda p: optreg.configure_optimizer("oneflow.LBFGS", p, lr=0.9), 5)
    theirs, _ = run(lambda p: torch.optim.LBFGS(p, lr=0.9, max_eval=25), 5)
    assert all(np.array_equal(a, b) for a, b in zip(ours, theirs))


def test_where_oneflow_and_torch_differ():
    """max_eval unrounded (max_iter 3: torch stops after 2 iterations) and the line search (quadratic steps)."""
    ours, _ = run(lambda p: optreg.configure_optimizer("oneflow.LBFGS", p, lr=0.8, max_iter=3), 1)
    theirs, _ = run(lambda p: torch.optim.LBFGS(p, lr=0.8, max_iter=3), 1)
    assert not np.array_equal(ours[0], theirs[0])
    ours, _ = run(lambda p: optreg.configure_optimizer("oneflow.LBFGS", p, lr=4.0, line_search_fn="strong_wolfe"), 3)
    theirs, _ = run(lambda p: torch.optim.LBFGS(p, lr=4.0, max_eval=25, line_search_fn="strong_wolfe"), 3)
    assert not np.allclose(ours[-1], theirs[-1], rtol=0, atol=1e-6)


def test_defaults_and_refusals_are_oneflow_s():
    w = torch.nn.Parameter(torch.zeros(3))
    opt = optreg.configure_optimizer("oneflow.optim.LBFGS", [w])
    group = opt.param_groups[0]
    assert (group["lr"], group["max_iter"], group["max_eval"], group["history_size"]) == (1e-3, 20, 25.0, 100)
    assert opt.support_sparse is False
    w.grad = torch.ones(3)
    opt.zero_grad()
    assert w.grad is not None and not w.grad.any()
    with pytest.raises(optreg.ConfigError) as info:
        optreg.configure_optimizer("oneflow.LBFGS", [w], line_search_fn="wolfe")
    assert info.value.errors[0].path == "line_search_fn"
    with pytest.raises(optreg.ConfigError):
        optreg.configure_optimizer("oneflow.LBFGS", [{"params": [w]}, {"params": [torch.nn.Parameter(torch.ones(1))]}])

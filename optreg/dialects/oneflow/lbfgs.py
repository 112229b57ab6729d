"""OneFlow's LBFGS (oneflow.optim.LBFGS, python/oneflow/nn/optimizer/lbfgs.py at commit 6f5e0f6cf03a, 2023-06-26,
unchanged on master 25c8978c1c8b; not in the 0.9.0 release).

Without a line search it is torch.optim.LBFGS's algorithm step for step (two-loop recursion over the last
`history_size` curvature pairs, pairs with yᵀs <= 1e-10 skipped, H₀ = yᵀs/yᵀy, first step size
min(1, 1/‖g‖₁)·lr, the same stopping tests). What differs:
- defaults: lr 1e-3 (torch 1), max_eval = 1.25·max_iter unrounded (torch ⌊5·max_iter/4⌋: with max_iter 3, torch
  stops after 2 iterations, OneFlow runs 3);
- `line_search_fn="strong_wolfe"`: OneFlow's own search. Its interpolation is quadratic (from f₁, f₂ and the
  slope g₁; torch's is cubic), it allows 25 evaluations whatever max_eval says (torch: max_eval minus those
  spent), its bracketing phase goes on after a point with a non-negative slope (torch stops there) and its zoom
  has no insufficient-progress safeguard; a zoom trial that fails the sufficient decrease still replaces the
  bracket's low end (torch keeps the low end then).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

import torch

#: the strong Wolfe constants and the evaluation limit of OneFlow's `_strong_wolfe`
C1, C2, MAX_LS = 1e-4, 0.9, 25


def quadratic_minimum(x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, bounds: tuple[Any, Any] | None = None) -> Any:
    """The minimiser of the parabola through (x1, f1) with slope g1 at x1 and through (x2, f2), clamped to
    `bounds` (default: between x1 and x2), as OneFlow's `_quadratic_interpolate` computes it."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    if x1 == 0:
        t = -(g1 * x2 ** 2) / (2 * (f2 - f1 - g1 * x2))
    else:
        curvature = -(f1 - f2 - g1 * (x1 - x2)) / (x1 - x2) ** 2
        t = x1 - g1 / (2 * curvature)
    return min(high, max(low, t))


class _Point:
    """A trial step t with its loss, gradient and slope gᵀd."""

    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t: Any, f: float, g: torch.Tensor, gtd: Any) -> None:
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def strong_wolfe(evaluate: Callable[[Any], tuple[float, torch.Tensor]], t: Any, d: torch.Tensor, f: float,
                 g: torch.Tensor, gtd: Any, tolerance_change: float = 1e-9) -> tuple[float, torch.Tensor, Any, int]:
    """OneFlow's strong-Wolfe line search along d from step t: (loss, gradient, step, evaluations).

    Bracketing: accept t when |gᵀd| <= -c2·gtd₀; bracket [previous, t] when the sufficient decrease fails (or the
    loss rose after the second trial) and stop; a non-negative slope records a bracket but the search goes on;
    otherwise the next t is the parabola's minimum within [t + 0.01·(t - t_prev), 10·t]. Zoom: the parabola's
    minimum of the bracket becomes its low end (after it replaced the high end when the decrease was not
    sufficient), until the curvature condition holds, the bracket is shorter than tolerance_change/max|d|, or 25
    evaluations are spent."""
    d_norm = d.abs().max()
    start = _Point(0, f, g.clone(), gtd)
    prev = start
    f_new, g_new = evaluate(t)
    evals, trials, done = 1, 0, False
    new = _Point(t, f_new, g_new, g_new.dot(d))
    bracket: list[_Point] = []
    while trials < MAX_LS:
        if new.f > f + C1 * new.t * gtd or (trials > 1 and new.f > prev.f):
            bracket = [prev, _Point(new.t, new.f, new.g.clone(), new.gtd)]
            break
        if abs(new.gtd) <= -C2 * gtd:
            bracket, done = [new], True
            break
        if new.gtd >= 0:
            bracket = [prev, _Point(new.t, new.f, new.g.clone(), new.gtd)]
        step = quadratic_minimum(prev.t, prev.f, prev.gtd, new.t, new.f,
                                 bounds=(new.t + 0.01 * (new.t - prev.t), new.t * 10))
        prev = _Point(new.t, new.f, new.g.clone(), new.gtd)
        f_new, g_new = evaluate(step)
        new = _Point(step, f_new, g_new, g_new.dot(d))
        evals += 1
        trials += 1
    if trials == MAX_LS:
        bracket = [_Point(0, f, g, None), _Point(new.t, new.f, new.g, None)]
    low, high = (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)
    while not done and trials < MAX_LS:
        if abs(bracket[1].t - bracket[0].t) * d_norm < tolerance_change:
            break
        step = quadratic_minimum(bracket[0].t, bracket[0].f, bracket[0].gtd, bracket[1].t, bracket[1].f)
        f_new, g_new = evaluate(step)
        point = _Point(step, f_new, g_new.clone(), g_new.dot(d))
        evals += 1
        trials += 1
        if point.f > f + C1 * step * gtd or point.f >= bracket[low].f:
            bracket[high] = point
            low, high = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
        if abs(point.gtd) <= -C2 * gtd:
            done = True
        elif point.gtd * (bracket[high].t - bracket[low].t) >= 0:
            bracket[high] = bracket[low]
        bracket[low] = point
    best = bracket[low]
    return best.f, best.g, best.t, evals


class LBFGS(torch.optim.LBFGS):
    """oneflow.optim.LBFGS: L-BFGS over one parameter group (a closure is required),

        d = -H·g by the two-loop recursion over the last history_size pairs (s, y), H₀ = yᵀs/yᵀy;
        w += t·d, t = min(1, 1/‖g‖₁)·lr on the first iteration, lr after, or OneFlow's strong-Wolfe search

    zero_grad() defaults to set_to_none=False, as OneFlow's; contiguous_params has no numeric effect.
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, max_iter: int = 20, max_eval: Optional[float] = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: Optional[str] = None, contiguous_params: bool = False) -> None:
        super().__init__(params, lr=lr, max_iter=max_iter, max_eval=max_iter * 1.25 if max_eval is None else max_eval,
                         tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                         history_size=history_size, line_search_fn=line_search_fn)
        self.defaults["contiguous_params"] = contiguous_params
        self.param_groups[0].setdefault("contiguous_params", contiguous_params)

    def __setstate__(self, state: dict[str, Any]) -> None:
        """A copied or unpickled optimizer (torch pickles defaults, state and groups only) finds its parameters."""
        super().__setstate__(state)
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    @property
    def support_sparse(self) -> bool:
        """OneFlow's `Optimizer.support_sparse`: False (LBFGS does not override it)."""
        return False

    def zero_grad(self, set_to_none: bool = False) -> None:
        """torch's zero_grad with OneFlow's default (the gradients are zeroed, not dropped)."""
        super().zero_grad(set_to_none=set_to_none)

    def _direction(self, state: dict[str, Any], flat_grad: torch.Tensor, history_size: int) -> torch.Tensor:
        """The new direction: -g on the very first iteration, else the two-loop recursion after storing the
        last pair (s, y) when yᵀs > 1e-10 (the oldest pair dropped beyond history_size)."""
        if state["n_iter"] == 1:
            state.update(old_diffs=[], old_step_size=[], ro=[], H_diag=1)
            return flat_grad.neg()
        y = flat_grad.sub(state["prev_flat_grad"])
        s = state["d"].mul(state["t"])
        ys = y.dot(s)
        if ys > 1e-10:
            if len(state["old_diffs"]) == history_size:
                for name in ("old_diffs", "old_step_size", "ro"):
                    state[name].pop(0)
            state["old_diffs"].append(y)
            state["old_step_size"].append(s)
            state["ro"].append(1.0 / ys)
            state["H_diag"] = ys / y.dot(y)
        alpha = state.setdefault("alpha", [None] * history_size)
        pairs = list(zip(state["old_diffs"], state["old_step_size"], state["ro"]))
        q = flat_grad.neg()
        for i in range(len(pairs) - 1, -1, -1):
            alpha[i] = pairs[i][1].dot(q) * pairs[i][2]
            q.add_(pairs[i][0], alpha=-alpha[i])
        d = q.mul(state["H_diag"])
        for i, (y_i, s_i, ro_i) in enumerate(pairs):
            d.add_(s_i, alpha=alpha[i] - y_i.dot(d) * ro_i)
        return d

    @torch.no_grad()
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Up to max_iter L-BFGS iterations; returns the closure's first loss."""
        if closure is None:
            raise RuntimeError("LBFGS needs a closure that re-evaluates the loss")
        closure = torch.enable_grad()(closure)
        group = self.param_groups[0]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        first = closure()
        loss, evals = float(first), 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= group["tolerance_grad"]:
            return first
        for n_iter in range(1, group["max_iter"] + 1):
            state["n_iter"] += 1
            d = self._direction(state, flat_grad, group["history_size"])
            prev_flat = state.get("prev_flat_grad")
            state["prev_flat_grad"] = flat_grad.clone() if prev_flat is None else prev_flat.copy_(flat_grad)
            state["prev_loss"] = prev_loss = loss
            lr = float(group["lr"])
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            state["d"], state["t"] = d, t
            gtd = flat_grad.dot(d)
            if gtd > -group["tolerance_change"]:
                break
            spent = 0
            if group["line_search_fn"] is None:
                self._add_grad(t, d)
                if n_iter != group["max_iter"]:
                    loss, flat_grad, spent = float(closure()), self._gather_flat_grad(), 1
            elif group["line_search_fn"] == "strong_wolfe":
                start = self._clone_param()
                loss, flat_grad, t, spent = strong_wolfe(
                    lambda step: self._directional_evaluate(closure, start, step, d), t, d, loss, flat_grad, gtd)
                state["t"] = t
                self._add_grad(t, d)
            else:
                raise RuntimeError("only 'strong_wolfe' is supported")
            evals += spent
            state["func_evals"] += spent
            if (n_iter == group["max_iter"] or evals >= group["max_eval"]
                    or flat_grad.abs().max() <= group["tolerance_grad"]
                    or d.mul(t).abs().max() <= group["tolerance_change"]
                    or abs(loss - prev_loss) < group["tolerance_change"]):
                break
        return first

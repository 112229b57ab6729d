"""Quasi-Newton: OneFlow's LBFGS (one parameter group, a closure)."""

from optim_cases import Case

CASES = [
    Case("oneflow.LBFGS", {"lr": 0.5, "max_iter": 4, "history_size": 5}),
    Case("oneflow.LBFGS", {"lr": 0.5, "max_iter": 4, "line_search_fn": "strong_wolfe"}, id="strong-wolfe"),
]

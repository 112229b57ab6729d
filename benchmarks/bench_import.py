"""Cost of `import optreg` and of `configure_optimizer("adamw", ...)` on a 1,000-tensor model.

Everything is measured side by side in one run: `import optreg` against `import torch` (fresh
interpreters), and optreg's build against constructing `torch.optim.AdamW` directly. Prints markdown.

    python benchmarks/bench_import.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time


def fresh_import(statement: str, repeat: int) -> float:
    """Median wall time (ms) of `statement` in a fresh interpreter, interpreter start-up subtracted."""
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    times = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                  env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}).stdout) for _ in range(repeat)]
    return 1e3 * statistics.median(times)


def first_call(repeat: int) -> float:
    """Median ms of the first configure_optimizer in a fresh interpreter (tables read, model built lazily).

    torch's own one-off cost (its first optimizer imports torch._dynamo, ~2 s) is paid before timing."""
    code = ("import time, torch, optreg; ps=[torch.nn.Parameter(torch.zeros(4)) for _ in range(1000)]; "
            "torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))]); "
            "t=time.perf_counter(); optreg.configure_optimizer('adamw', ps, lr=1e-3); "
            "print(time.perf_counter()-t)")
    times = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  check=True).stdout) for _ in range(repeat)]
    return 1e3 * statistics.median(times)


def warm_calls(repeat: int) -> tuple[float, float, float]:
    import torch

    import optreg

    model = torch.nn.ModuleDict({f"layer{i}": torch.nn.Linear(4, 4) for i in range(500)})  # 1,000 tensors
    assert sum(1 for _ in model.parameters()) == 1000
    rules = [{"params": "*.bias", "weight_decay": 0.0}]
    optreg.configure_optimizer("adamw", model, lr=1e-3, param_groups=rules)  # warm the caches

    def median_ms(fn) -> float:
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return 1e3 * statistics.median(times)

    bias = [p for n, p in model.named_parameters() if n.endswith(".bias")]
    rest = [p for n, p in model.named_parameters() if not n.endswith(".bias")]
    direct = median_ms(lambda: torch.optim.AdamW([{"params": bias, "weight_decay": 0.0}, {"params": rest}], lr=1e-3))
    plain = median_ms(lambda: optreg.configure_optimizer("adamw", model.parameters(), lr=1e-3))
    grouped = median_ms(lambda: optreg.configure_optimizer("adamw", model, lr=1e-3, param_groups=rules))
    return direct, plain, grouped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    base = fresh_import("pass", args.repeat)
    optreg_ms = fresh_import("import optreg", args.repeat)
    torch_ms = fresh_import("import torch", args.repeat)
    first = first_call(args.repeat)
    direct, plain, grouped = warm_calls(args.repeat)
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, median of {args.repeat}\n")
    print("| measurement | ms |")
    print("|---|---|")
    print(f"| `import optreg` (fresh interpreter) | {optreg_ms:.1f} |")
    print(f"| `import torch` (fresh interpreter, for scale) | {torch_ms:.1f} |")
    print(f"| empty statement (timer overhead) | {base:.2f} |")
    print(f"| first `configure_optimizer('adamw', 1,000 tensors)` (tables, model built) | {first:.1f} |")
    print(f"| `torch.optim.AdamW(...)` directly, 1,000 tensors, 2 groups | {direct:.2f} |")
    print(f"| `configure_optimizer('adamw', params)` warm, 1,000 tensors | {plain:.2f} |")
    print(f"| `configure_optimizer('adamw', model, param_groups=[*.bias])` warm | {grouped:.2f} |")


if __name__ == "__main__":
    main()

"""The first fused step on a cold Inductor cache, the way a new user meets it: per tensor and over a contiguous
group, with the compile in the background (the default: the steps run eager until it is ready) and with
`OPTREG_COMPILE=wait` (the compile inside the first step), for an element-wise chain (oneflow.AdamW), one with
norms (cerebras.Lamb) and one with shapes (mindspore.AdaFactor).

Each cell runs in a fresh process with an empty TORCHINDUCTOR_CACHE_DIR, on 25M float32 parameters in 100 tensors
(`--quick`: 0.2M in 12), and reports the first step's seconds and the median of the next five steps (eager while a
background compile runs).

    python benchmarks/bench_first_step.py [--quick] [--only NAME] [--modes background,wait]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHAINS = {"oneflow.AdamW": {"lr": 1e-3}, "cerebras.Lamb": {"lr": 1e-3}, "mindspore.AdaFactor": {}}
LAYOUTS = {"per tensor": {}, "contiguous": {"contiguous_params": True}}


def cell(name: str, layout: str, mode: str, count: int, total: int) -> dict:
    """One measurement in a fresh process (its own cold Inductor cache)."""
    env = {**os.environ, "OPTREG_COMPILE": mode, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(prefix="inductor-")}
    code = f"""
import json, time, warnings
import torch, optreg
warnings.simplefilter("ignore")
torch.manual_seed(0)
params = [torch.nn.Parameter(torch.randn({total // count})) for _ in range({count})]
opt = optreg.configure_optimizer({name!r}, params, fused=True, **{ {**CHAINS[name], **LAYOUTS[layout]}!r})
times = []
for _ in range(6):
    for p in params:
        p.grad = torch.randn_like(p)
    t = time.perf_counter()
    opt.step()
    times.append(time.perf_counter() - t)
print(json.dumps(times))
"""
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    times = json.loads(out.stdout.strip().splitlines()[-1])
    return {"first": times[0], "next": sorted(times[1:])[len(times[1:]) // 2]}


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="0.2M parameters in 12 tensors")
    parser.add_argument("--only", default=None, help="one optimizer (e.g. oneflow.AdamW)")
    parser.add_argument("--modes", default="background,wait", help="background, wait, or both")
    args = parser.parse_args(argv)
    count, total = (12, 200_004) if args.quick else (100, 25_000_000)
    names = [args.only] if args.only else list(CHAINS)
    modes = args.modes.split(",")
    lines = [f"first fused step on a cold Inductor cache: {total / 1e6:.1f}M float32 parameters in {count} tensors, "
             f"{os.cpu_count()} CPUs, torch threads as set",
             "| optimizer | layout | " + " | ".join(f"{m}: first s | {m}: next ms" for m in modes) + " |",
             "|---|---|" + "---:|---:|" * len(modes)]
    for name in names:
        for layout in LAYOUTS:
            cells = [cell(name, layout, mode, count, total) for mode in modes]
            lines.append(f"| {name} | {layout} | " + " | ".join(f"{c['first']:.2f} | {1e3 * c['next']:.0f}"
                                                                 for c in cells) + " |")
    text = "\n".join(lines)
    print(text)
    return text


if __name__ == "__main__":
    main()

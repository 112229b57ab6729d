"""MindSpore THOR against MindSpore Momentum on a small CNN: training loss after N steps and time per step.

The data are made here (nothing is downloaded): 10 classes of 12×12 single-channel images, each class a fixed
random template plus noise. The CNN: Conv2d(1, 8, 3) → ReLU → Conv2d(8, 16, 3, stride 2) → ReLU → mean pool →
Linear(16, 10). Each optimizer starts from the same weights and sees the same batches; the loss is the mean
cross-entropy over the whole training set after the last step. THOR refreshes its inverses every `--frequency`
steps (MindSpore's examples use damping and lr lists; a constant of each here). Prints a markdown table.

    python benchmarks/bench_thor.py [--steps 200] [--batch 32] [--frequency 10] [--seeds 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn

import optreg

CLASSES, SIZE, SAMPLES = 10, 12, 2048


def dataset(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Images: the class template (fixed) plus Gaussian noise; labels uniform."""
    g = torch.Generator().manual_seed(seed)
    templates = torch.randn(CLASSES, 1, SIZE, SIZE, generator=g)
    labels = torch.randint(0, CLASSES, (SAMPLES,), generator=g)
    images = templates[labels] + 1.5 * torch.randn(SAMPLES, 1, SIZE, SIZE, generator=g)
    return images, labels


def cnn(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.Conv2d(8, 16, 3, stride=2), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, CLASSES))


def optimizers(args: argparse.Namespace) -> dict[str, callable]:
    """name -> model -> optimizer, each with the best lr (and damping) of a small sweep on seed 0: Momentum lr in
    {0.05, 0.1, 0.2}; THOR (lr, damping) in {(0.1, 0.03), (0.05, 0.1), (0.1, 0.3), (0.2, 0.3), (0.05, 0.01),
    (0.3, 1.0)}."""
    return {
        "mindspore.Momentum": lambda m: optreg.configure_optimizer(
            "mindspore.Momentum", m, learning_rate=0.1, momentum=0.9),
        "mindspore.thor": lambda m: optreg.configure_optimizer(
            "mindspore.thor", m, learning_rate=0.05, damping=0.1, momentum=0.9, batch_size=args.batch,
            frequency=args.frequency),
    }


def run(make, seed: int, args: argparse.Namespace) -> tuple[float, float, float]:
    """(final training loss, median and mean ms per step: forward, backward and step; THOR's refresh steps, one in
    `frequency`, weigh in the mean)."""
    images, labels = dataset(seed)
    model = cnn(seed)
    opt = make(model)
    loss_fn = nn.CrossEntropyLoss()
    order = torch.Generator().manual_seed(seed + 1)
    times = []
    for _ in range(args.steps):
        idx = torch.randint(0, SAMPLES, (args.batch,), generator=order)
        start = time.perf_counter()
        opt.zero_grad()
        loss_fn(model(images[idx]), labels[idx]).backward()
        opt.step()
        times.append(time.perf_counter() - start)
    with torch.no_grad():
        final = float(loss_fn(model(images), labels))
    return final, 1000 * statistics.median(times), 1000 * statistics.mean(times)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--frequency", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    lines = [f"torch {torch.__version__}, {torch.get_num_threads()} threads; CNN on synthetic {SIZE}×{SIZE} images, "
             f"{CLASSES} classes, batch {args.batch}, {args.steps} steps, THOR frequency {args.frequency}; "
             f"mean over {args.seeds} seeds", "",
             "| optimizer | training loss after the last step | ms per step (median) | ms per step (mean) |",
             "|---|---:|---:|---:|"]
    for name, make in optimizers(args).items():
        results = [run(make, seed, args) for seed in range(args.seeds)]
        loss = statistics.mean(r[0] for r in results)
        median = statistics.mean(r[1] for r in results)
        mean = statistics.mean(r[2] for r in results)
        lines.append(f"| {name} | {loss:.4f} | {median:.2f} | {mean:.2f} |")
    text = "\n".join(lines)
    print(text)
    return text


if __name__ == "__main__":
    main()

"""A small language model trained with float32, bfloat16 and int8 optimizer state (`state_dtype`), its loss
curves side by side in one PNG (docs/state_dtype_lm.png, the README's figure).

The model is a 2-layer causal transformer (width 64, 4 heads, 0.11M parameters) over a 32-token vocabulary.
The data is synthetic: each token follows the two before it by a fixed random rule with probability 0.75,
and is uniform otherwise, so the loss has a known floor (the entropy of the next token given the rule,
printed and drawn). Each state dtype trains the same initial weights on the same batches with oneflow.AdamW
(contiguous_params=True, as the benchmark's state-dtype rows); only `state_dtype` differs.

    python benchmarks/lm_state_dtype.py [--steps 400] [--out docs/state_dtype_lm.png]

It prints a markdown table: the mean training loss of the last 50 steps, the loss on 64 held-out sequences,
the bytes of optimizer state per parameter and the seconds each run took. matplotlib is the `plot` extra.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import torch

import optreg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_optimizers import state_per_param  # noqa: E402

STATE_DTYPES = (None, "bfloat16", "int8")
VOCAB, CONTEXT, WIDTH, HEADS, LAYERS = 32, 32, 64, 4, 2
#: the probability that a token is the rule's successor of the two before it
FOLLOW = 0.75


class TinyLM(torch.nn.Module):
    """Token and position embeddings, pre-norm causal transformer layers, a linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens = torch.nn.Embedding(VOCAB, WIDTH)
        self.positions = torch.nn.Embedding(CONTEXT, WIDTH)
        layer = torch.nn.TransformerEncoderLayer(WIDTH, HEADS, 4 * WIDTH, dropout=0.0, batch_first=True,
                                                 norm_first=True)
        self.layers = torch.nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.norm = torch.nn.LayerNorm(WIDTH)
        self.head = torch.nn.Linear(WIDTH, VOCAB)
        self.register_buffer("mask", torch.nn.Transformer.generate_square_subsequent_mask(CONTEXT), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.tokens(x) + self.positions.weight[: x.shape[1]]
        return self.head(self.norm(self.layers(h, mask=self.mask[: x.shape[1], : x.shape[1]], is_causal=True)))


class Rule:
    """Sequences where a token is rule[a, b] after a, b with probability FOLLOW, else uniform."""

    def __init__(self, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        self.next = torch.randint(VOCAB, (VOCAB, VOCAB), generator=g)

    def batch(self, size: int, g: torch.Generator) -> torch.Tensor:
        seq = torch.empty(size, CONTEXT + 1, dtype=torch.long)
        seq[:, :2] = torch.randint(VOCAB, (size, 2), generator=g)
        for t in range(2, CONTEXT + 1):
            follow = torch.rand(size, generator=g) < FOLLOW
            seq[:, t] = torch.where(follow, self.next[seq[:, t - 2], seq[:, t - 1]],
                                    torch.randint(VOCAB, (size,), generator=g))
        return seq

    @staticmethod
    def floor() -> float:
        """The entropy (nats) of a token given the two before it, over the tokens a model can predict (t ≥ 2)."""
        hit = FOLLOW + (1 - FOLLOW) / VOCAB
        miss = (1 - FOLLOW) / VOCAB
        return -(hit * math.log(hit) + (VOCAB - 1) * miss * math.log(miss))


def loss_of(model: TinyLM, seq: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the next token, from the third position on (the first two have no rule)."""
    logits = model(seq[:, :-1])[:, 1:]
    return torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), seq[:, 2:].reshape(-1))


def train(state_dtype: str | None, steps: int, batch: int, lr: float) -> dict:
    """One run: the loss of every step, the held-out loss, the state's bytes per parameter, the seconds."""
    rule = Rule()
    torch.manual_seed(0)
    model = TinyLM()
    opt = optreg.configure_optimizer("oneflow.AdamW", list(model.parameters()), lr=lr, weight_decay=0.01,
                                     contiguous_params=True, state_dtype=state_dtype)
    held_out = rule.batch(64, torch.Generator().manual_seed(1))
    g = torch.Generator().manual_seed(2)
    losses = []
    start = time.perf_counter()
    for _ in range(steps):
        loss = loss_of(model, rule.batch(batch, g))
        opt.zero_grad(set_to_none=False)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    seconds = time.perf_counter() - start
    with torch.no_grad():
        held = loss_of(model, held_out).item()
    return {"losses": losses, "held_out": held, "bytes": state_per_param(opt, list(model.parameters())),
            "seconds": seconds, "params": sum(p.numel() for p in model.parameters())}


def smooth(values: list[float], beta: float = 0.9) -> list[float]:
    """An exponential moving average with bias correction (what a training log shows)."""
    out, avg = [], 0.0
    for i, v in enumerate(values, 1):
        avg = beta * avg + (1 - beta) * v
        out.append(avg / (1 - beta ** i))
    return out


def plot(runs: dict, out: Path, steps: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    for (name, run), style in zip(runs.items(), ("-", "--", ":")):
        ax.plot(range(1, steps + 1), smooth(run["losses"]), style, linewidth=1.4,
                label=f"{name} state (held-out {run['held_out']:.3f})")
    ax.axhline(Rule.floor(), color="grey", linewidth=0.8, linestyle="-.", label=f"entropy floor {Rule.floor():.3f}")
    ax.set_xlabel("step")
    ax.set_ylabel("training loss (nats, EMA 0.9)")
    ax.set_ylim(Rule.floor() - 0.1, math.log(VOCAB) + 0.1)
    ax.set_title(f"oneflow.AdamW (contiguous_params), {runs['float32']['params'] / 1e6:.2f}M-parameter causal LM, "
                 "synthetic data", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs" / "state_dtype_lm.png"))
    args = parser.parse_args(argv)
    runs = {}
    for sd in STATE_DTYPES:
        runs[sd or "float32"] = train(sd, args.steps, args.batch, args.lr)
        print(f"{sd or 'float32'}: {runs[sd or 'float32']['seconds']:.0f} s", file=sys.stderr, flush=True)
    plot(runs, Path(args.out), args.steps)
    base = runs["float32"]
    lines = [f"{args.steps} steps of {args.batch} sequences of {CONTEXT} tokens, lr {args.lr}, "
             f"{torch.get_num_threads()} threads; entropy floor {Rule.floor():.3f} nats", "",
             "| state | last 50 steps' loss | held-out loss | × float32 held-out | state B / param | s |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, run in runs.items():
        last = sum(run["losses"][-50:]) / len(run["losses"][-50:])
        lines.append(f"| {name} | {last:.4f} | {run['held_out']:.4f} | {run['held_out'] / base['held_out']:.3f} | "
                     f"{run['bytes']:.2f} | {run['seconds']:.0f} |")
    text = "\n".join(lines)
    print(text)
    return text


if __name__ == "__main__":
    main(sys.argv[1:])

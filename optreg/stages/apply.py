"""The last stages of a chain: decoupled weight decay and the step itself."""

from __future__ import annotations

from typing import Any, Mapping

from optreg.stages.chain import Batch, Stage


class DecoupledDecay(Stage):
    """u += wd·w (AdamW, Loshchilov & Hutter 2019); applied with the lr by `ApplyLR`.

    when: a group option that switches this decay on (OneFlow LAMB `adam_w_mode`); None: always.
    """

    def __init__(self, when: str | None = None) -> None:
        self.when = when

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        hp["decoupled_on"] = float(group.get("weight_decay", 0.0) or 0.0) != 0.0 and \
            (self.when is None or bool(group.get(self.when, True)))

    def apply(self, b: Batch) -> None:
        if b.hp["decoupled_on"]:
            b.u = b.ops.add(b.u, b.params, alpha=b.hp["weight_decay"])


class ApplyLR(Stage):
    """w -= lr·u. (A float32 tensor takes the lr as a float32 alpha: OneFlow's float32 lr, with no setting.)"""

    def host(self, group: Mapping[str, Any], hp: dict[str, Any]) -> None:
        hp["neg_lr"] = -float(group["lr"])

    def apply(self, b: Batch) -> None:
        b.ops.add_(b.params, b.u, alpha=b.hp["neg_lr"])

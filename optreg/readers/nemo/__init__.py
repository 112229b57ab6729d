"""The `nemo` config format: a NeMo (2.x, `ModelPT.setup_optimization`) training config: `model.optim` (the
optimizer by NeMo's name, its `sched` in the nemo dialect) and `trainer` (Lightning's: max_steps, max_epochs,
gradient clipping), with interpolations resolved by OmegaConf. Read into optreg's own form (optreg.readers.nemo.reader).
"""

from __future__ import annotations

from typing import Any, Mapping


class NeMoFormat:
    """NeMo's config: `model.optim` and `trainer` (the model's other keys and the rest are the application's)."""

    name = "nemo"
    doc = "NeMo 2.x training config: model.optim (name, lr, sched) and trainer (max_steps, gradient_clip_val)"
    signature = "model.optim"
    keys = ("model", "trainer")

    def claims(self, data: Mapping[str, Any]) -> bool:
        from optreg.config.formats import has

        return has(data, "model.optim")

    def sections(self, data: Mapping[str, Any]) -> list[Any]:
        return [k for k in ("model", "trainer", "train") if k in data]

    @property
    def choices(self) -> dict[str, Any]:
        """The key that chooses the optimizer (the reader's `CHOICES`)."""
        from optreg.readers.nemo.reader import CHOICES

        return CHOICES

    def read(self, data: Mapping[str, Any], source: Any = None) -> Any:
        from optreg.readers.nemo.reader import read

        return read(data, source)


NEMO_FORMAT = NeMoFormat()

__all__ = ["NEMO_FORMAT", "NeMoFormat"]

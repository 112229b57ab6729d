"""The `mmengine` config format: the dict an MMEngine (0.10) `Config` holds, as a JSON / YAML dump or a mapping, or
a `.py` config loaded by mmengine's own `Config.fromfile` when mmengine is installed.

Read into optreg's own form: `optim_wrapper` (`optimizer` -> optreg's optimizer section in the torch dialect;
`paramwise_cfg` -> one param_groups rule per parameter, written against the model's module types by the reader's
planner (optreg.readers.mmengine.params); `clip_grad` -> optreg's clip_grad; `accumulative_counts`, AMP settings:
the trainer's), `param_scheduler` (optreg's `mmengine.ParamSchedulers`, which runs the list as MMEngine's runner
does: optreg.dialects.mmengine), `train_cfg` (the format's run length: max_epochs × steps_per_epoch, or
max_iters, which `build(total_steps=)` / `--steps` replace; and the end of an entry that leaves it out). MMEngine
takes the steps per epoch from its dataloader; here they come from `train.steps_per_epoch` or
`build(..., steps_per_epoch=)`.
"""

from __future__ import annotations

from typing import Any, Mapping


WRAPPER_KEYS = ("type", "optimizer", "paramwise_cfg", "clip_grad", "accumulative_counts", "constructor",
                "loss_scale", "dtype", "use_fsdp")
WRAPPERS = ("OptimWrapper", "AmpOptimWrapper")
TRAINER_KEYS = {"accumulative_counts": "gradient accumulation: MMEngine's OptimWrapper steps the optimizer every N "
                                       "iterations while iteration-based schedules still step every iteration; "
                                       "the training loop's business",
                "loss_scale": "AMP loss scaling (AmpOptimWrapper): the training loop's business",
                "dtype": "AMP autocast dtype (AmpOptimWrapper): the training loop's business",
                "use_fsdp": "FSDP gradient scaling (AmpOptimWrapper): the training loop's business"}
LOOP_TYPES = {"EpochBasedTrainLoop": True, "IterBasedTrainLoop": False}
SECTIONS = ("optim_wrapper", "param_scheduler", "train_cfg", "train")


class MMEngineFormat:
    """MMEngine's config: `optim_wrapper`, `param_scheduler`, `train_cfg` (its other keys are the application's).
    A `.py` config is read by mmengine's `Config.fromfile`, which executes it: only with mmengine installed."""

    name = "mmengine"
    doc = "MMEngine 0.10 Config: optim_wrapper, param_scheduler, train_cfg (.py through mmengine's Config.fromfile)"
    signature = "optim_wrapper"
    keys = SECTIONS

    def claims(self, data: Mapping[str, Any]) -> bool:
        from optreg.config.formats import has

        return has(data, "optim_wrapper.optimizer")

    def sections(self, data: Mapping[str, Any]) -> list[Any]:
        return [k for k in SECTIONS if k in data]

    @property
    def choices(self) -> dict[str, Any]:
        """The key that chooses the optimizer (the reader's `CHOICES`)."""
        from optreg.readers.mmengine.reader import CHOICES

        return CHOICES

    def read(self, data: Mapping[str, Any], source: Any = None) -> Any:
        from optreg.readers.mmengine.reader import read

        return read(data, source)

    def read_python(self, text: str, name: str, path: Any) -> tuple[Any, Any] | None:
        from optreg.readers.mmengine.reader import read_python

        return read_python(text, name, path)


MMENGINE_FORMAT = MMEngineFormat()

__all__ = ["MMENGINE_FORMAT", "MMEngineFormat"]

"""The mmengine dialect's scheduler: MMEngine's whole `param_scheduler` list (its runner's ParamSchedulerHook)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from optreg.core.entry import scheduler
from optreg.core.types import PosInt
from optreg.dialects.mmengine.param_scheduler import TYPES, json_schema

class _EntriesSchema:
    """The JSON Schema of the list: every entry type's keys (made when a schema is asked for, not on import)."""

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> dict[str, Any]:
        return json_schema()


#: a list of entries, each checked against its type's model when the schedule is planned
#: (param_scheduler.read_entry: every problem at its key, with a did-you-mean)
Entries = Annotated[list[Any], Field(min_length=1), _EntriesSchema()]

ROWS = [
    scheduler("mmengine", "ParamSchedulers", "optreg.dialects.mmengine.schedules:ParamSchedulers",
              "MMEngine's param_scheduler list: each entry on its own [begin, end) window of epochs (by_epoch, the "
              "default) or iterations, entries chained on the group's current value.",
              aliases=("param_scheduler",), hidden=("run",),
              types={"param_scheduler": Entries, "max_epochs": PosInt, "max_iters": PosInt},
              source="MMEngine 0.10 mmengine/optim/scheduler (ParamSchedulerHook's order)",
              notes=(f"Entry types: {', '.join(TYPES)}; each takes MMEngine's options and begin, end, by_epoch, "
                     f"convert_to_iter_based (a *ParamScheduler also param_name: lr | momentum | weight_decay).",
                     "Iteration entries step after every optimizer step, then epoch entries at epoch ends; every "
                     "entry also steps once when it is built. Epoch entries need the steps per epoch "
                     "(train.steps_per_epoch or build(..., steps_per_epoch=)).",
                     "An end left out is the train loop's, as MMEngine's runner gives it: max_epochs (× E for an "
                     "iteration-based entry) or max_iters (one epoch for an epoch-based entry); without them the "
                     "run's end (⌈steps / E⌉ epochs, or its steps); unbounded without a run length.",
                     "Momentum entries drive momentum, or betas[0] of an Adam-style optimizer; after the last "
                     "window a value stays.")),
]

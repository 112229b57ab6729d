"""The cerebras dialect: Cerebras Model Zoo (cerebras.pytorch.optim).

`ROWS` holds every entry of the dialect: its optimizers (`entries.py`, classes in the family modules) and its
schedulers (`schedulers.py`; closed forms in `schedules.py`).
"""

from __future__ import annotations

from optreg.core.dialect import DecayRule, Dialect, SchedulerForm
from optreg.dialects.cerebras import forms

from optreg.dialects.cerebras.schedulers import ROWS as SCHEDULER_ROWS

from optreg.dialects.cerebras.entries import ROWS as OPTIMIZER_ROWS  # noqa: E402

ROWS = [*OPTIMIZER_ROWS, *SCHEDULER_ROWS]


def _modelzoo(name: str):
    """The function `name` of the Model Zoo reader (`modelzoo.py`), imported on its first call: reading the dialect's
    declaration (every build does) does not import the reader and its schedules."""
    def call(*args, **kwargs):
        from optreg.dialects.cerebras import modelzoo

        return getattr(modelzoo, name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


#: keys Cerebras used to accept and now refuses with a migration error (pre-2.2 optimizer and scheduler keys)
LEGACY_KEYS = {
    "beta1": "betas: [beta1, beta2]",
    "beta2": "betas: [beta1, beta2]",
    "weight_decay_rate": "weight_decay",
    "eps1": "eps: [eps1, eps2]",
    "eps2": "eps: [eps1, eps2]",
    "steps": "total_iters",
    "decay_steps": "total_iters",
}

DIALECT = Dialect(
    "cerebras", ROWS, "Cerebras Model Zoo (cerebras.pytorch.optim)",
    paths={"optimizer": ("cerebras.pytorch.optim",), "scheduler": ("cerebras.pytorch.optim.lr_scheduler",)},
    default_settings={"modelzoo_groups": True},
    decay_rules=(DecayRule("modelzoo_groups", "weight decay 0 for bias and normalisation parameters, as Cerebras "
                                              "Model Zoo's configure_param_groups (on by default in the cerebras "
                                              "dialect with a Module)", _modelzoo("modelzoo_no_decay")),),
    option_aliases={"learning_rate": "lr"},
    scheduler_forms=(SchedulerForm(forms.claims, forms.read_form, forms.schema),),
    legacy_keys=LEGACY_KEYS,
    optimizer_call=_modelzoo("optimizer_call"),
    scheduler_call=_modelzoo("scheduler_call"),
    scheduler_keywords={"adjust_learning_rate": _modelzoo("scale_per_param")},
)

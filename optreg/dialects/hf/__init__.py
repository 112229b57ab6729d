"""The hf dialect: HF transformers: `get_scheduler` names.

`ROWS` holds every entry of the dialect (schedulers only); `schedules` has the closed forms.
"""

from __future__ import annotations

from optreg.core.dialect import DecayRule, Dialect

from optreg.dialects.hf.groups import hf_no_decay
from optreg.dialects.hf.schedulers import ROWS as SCHEDULER_ROWS

ROWS = [*SCHEDULER_ROWS]

DIALECT = Dialect(
    "hf", ROWS, "HF transformers' get_scheduler",
    decay_rules=(DecayRule("hf_decay_groups", "weight decay only where the Hugging Face Trainer decays "
                                              "(get_decay_parameter_names: 0 for biases, LayerNorm modules and "
                                              "names with layernorm, rmsnorm or norm)", hf_no_decay),),
)

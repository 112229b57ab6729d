"""The Hugging Face Trainer's weight-decay rule (transformers 5: `Trainer.get_decay_parameter_names`), the
`hf_decay_groups` setting."""

from __future__ import annotations

import re
from typing import Any, Callable

#: the name patterns transformers 5's Trainer.get_decay_parameter_names leaves undecayed (searched in the lower-cased
#: name), beside the parameters of an nn.LayerNorm
HF_NO_DECAY_NAMES = (r"bias", r"layernorm", r"rmsnorm", r"(?:^|\.)norm(?:$|\.)", r"_norm(?:$|\.)")


def hf_no_decay(module: Any) -> Callable[[str], bool]:
    """transformers 5's rule (`Trainer.get_decay_parameter_names`, through `get_parameter_names(model,
    [nn.LayerNorm], HF_NO_DECAY_NAMES)`): no weight decay for a parameter of an nn.LayerNorm (or a subclass) at any
    depth, or whose lower-cased name one of HF_NO_DECAY_NAMES finds."""
    import torch

    patterns = [re.compile(p) for p in HF_NO_DECAY_NAMES]
    norms = {n for n, m in module.named_modules() if n and isinstance(m, torch.nn.LayerNorm)}

    def undecayed(name: str) -> bool:
        parts = name.split(".")[:-1]
        return any(p.search(name.lower()) for p in patterns) or \
            any(".".join(parts[:i]) in norms for i in range(1, len(parts) + 1))

    return undecayed

"""The bitsandbytes dialect: the optimizers of the installed `bitsandbytes.optim` (8-bit, 32-bit and paged), named
as bitsandbytes spells them (`bitsandbytes.optim.AdamW8bit`; `bitsandbytes.AdamW8bit` too), read on first use.

Ranges: the checks of bitsandbytes 0.50's constructors (bitsandbytes/optim/optimizer.py, Optimizer1State and
Optimizer2State: lr, eps and weight_decay >= 0, each beta in [0, 1); adagrad.py: initial_accumulator_value and
lr_decay must be 0; sgd.py and lars.py: SGD and LARS (their 8-bit and 32-bit classes too) refuse momentum 0, their
default ("SGD without momentum is not supported!": NotImplementedError), and give (momentum, dampening) as
Optimizer1State's betas, so momentum in (0, 1) and dampening in [0, 1); PytorchLARS: lr and weight_decay >= 0); and
what the constructors take but the first step refuses: optim_bits other than 8 or 32 (`init_state`:
NotImplementedError), PytorchLARS' momentum 0, its default (its step sets the update only under momentum:
UnboundLocalError), so momentum > 0 there too. A default outside these ranges is none: SGD, LARS and PytorchLARS
need momentum given.
`args` (bitsandbytes' internal settings object) is not an option.

AdEMAMix32bit and PagedAdEMAMix32bit (0.50) subclass Optimizer2State rather than AdEMAMix, so their state holds one
buffer where the ademamix update reads two (m1 and m2): the first step raises on the CPU and, from the CUDA kernel's
source, reads and writes past the buffer on a GPU (bitsandbytes issue #2075). Their limit holds while they do not
subclass AdEMAMix; AdEMAMix with optim_bits 32 is the same optimizer and steps.
"""

from __future__ import annotations

from typing import Any

from optreg.core.dialect import Dialect
from optreg.core.entry import Limits
from optreg.core.library import Library, interval

NON_NEGATIVE = {"ge": 0.0}
ZERO = {"ge": 0.0, "le": 0.0}
STATE_CHECKS = {"lr": NON_NEGATIVE, "eps": NON_NEGATIVE, "weight_decay": NON_NEGATIVE,
                "betas": [interval(0.0, 1.0)] * 3, "optim_bits": {"choices": [8, 32]}}


def checks(cls: type) -> dict[str, Any]:
    """The ranges `cls`'s constructor checks (see the module doc)."""
    name = cls.__name__
    if name == "PytorchLARS":
        return {"lr": NON_NEGATIVE, "momentum": {"gt": 0.0}, "weight_decay": NON_NEGATIVE}
    out: dict[str, Any] = dict(STATE_CHECKS)
    if name.startswith("Adagrad"):
        out.update(initial_accumulator_value=ZERO, lr_decay=ZERO)
    if name.startswith(("SGD", "LARS")):   # (momentum, dampening) are its betas, and momentum 0 is refused
        out.update(momentum={"gt": 0.0, "lt": 1.0}, dampening=interval(0.0, 1.0))
    return out


def limits(cls: type) -> Limits | None:
    """What keeps `cls` from stepping (see the module doc): the 32-bit AdEMAMix classes outside AdEMAMix."""
    from bitsandbytes.optim import AdEMAMix

    if cls.__name__.endswith("AdEMAMix32bit") and not issubclass(cls, AdEMAMix):
        paged = "Paged" if cls.__name__.startswith("Paged") else ""
        return Limits(broken=f"its state holds one buffer where its update reads two (bitsandbytes issue #2075: "
                             f"its first step fails); {paged}AdEMAMix with optim_bits: 32 is the same optimizer")
    return None


LIBRARY = Library("bitsandbytes", "bitsandbytes.optim", spelled="optim.", checks=checks, hidden=("args",),
                  limits=limits, notes=("bitsandbytes keeps 32-bit state for a parameter with fewer than "
                                        "min_8bit_size elements (4096 by default).",))

DIALECT = Dialect("bitsandbytes", (), "the optimizers of the installed bitsandbytes.optim", library=LIBRARY)

"""The pytorch_optimizer dialect: every optimizer the installed pytorch_optimizer lists in
`get_supported_optimizers()`, as its class (`pytorch_optimizer.Lion`), read when a name of the dialect is first
looked up. Ranges are the checks each constructor makes through its BaseOptimizer's `validate_*` methods
(pytorch_optimizer 4.x), read from the constructor's code (`optreg.core.library.validator_checks`).

Options a class takes only through `**kwargs` (pytorch_optimizer's shared extras) are not options here: a config
names the class's own parameters.

Limits (pytorch_optimizer 4.1's step methods): AdaHessian and SophiaH estimate the Hessian's diagonal from gradients
that keep their graph; AliG calls its closure under no_grad for the loss, and without one raises NoClosureError, as
BSAM does, which perturbs the parameters from the gradients of a backward before its step (without them its state
is never made, and the step raises RuntimeError), then takes the closure's; LOMO and AdaLOMO's step() raises
NotImplementedError (the update runs in `fused_backward`); DeMo imports einops to build and, at its step, gathers
through torch.distributed's default group (ValueError without `init_process_group`); SpectralSphere's step raises
ValueError on a parameter that is not 2-D. The Muon family (Muon, AdaMuon, AdaGO, NorMuon, MuonClip, DistributedMuon:
MuonBase's subclasses) raises ValueError ('`use_muon` must be set.') when built with a parameter group that has no
`use_muon` key, which picks the group's update (Muon's orthogonalized momentum, or AdamW's with the adamw_* options);
DistributedMuon reads torch.distributed's rank and world size when built (ValueError without `init_process_group`).
"""

from __future__ import annotations

from typing import Any

from optreg.core.dialect import Dialect
from optreg.core.entry import Limits
from optreg.core.library import Library, validator_checks


def supported(module: Any) -> list[tuple[str, type]]:
    """(class name, class) of each name `get_supported_optimizers()` lists, through `load_optimizer`."""
    classes = [module.load_optimizer(name) for name in module.get_supported_optimizers()]
    return [(cls.__name__, cls) for cls in classes]


SECOND_ORDER = Limits("second_order", "loss.backward(create_graph=True), then optimizer.step() (or "
                                       "optimizer.step(hessian=...) with a Hessian diagonal of your own)")
FUSED = Limits("fused", "optimizer.fused_backward(loss, lr) in place of loss.backward() and optimizer.step() "
                        "(with clip_grad_norm, optimizer.grad_norm(loss) before it)")
#: the Muon family's group key (see the module doc)
USE_MUON = {"use_muon": (bool, "true for the hidden weight matrices (Muon's update), false for embeddings, the "
                               "output head, biases and gains (AdamW's, with the adamw_* options)")}
MUON = Limits(group_keys=USE_MUON)
#: class name -> what keeps it from stepping as a plain training loop steps it (see the module doc)
LIMITS = {
    **dict.fromkeys(("Muon", "AdaMuon", "AdaGO", "NorMuon", "MuonClip"), MUON),
    "DistributedMuon": Limits("distributed", "torch.distributed.init_process_group() before building it (a group of "
                                             "one process will do)", group_keys=USE_MUON),
    "AdaHessian": SECOND_ORDER,
    "SophiaH": SECOND_ORDER,
    "AliG": Limits("closure", "loss.backward(), then optimizer.step(lambda: float(loss))"),
    "BSAM": Limits("two_pass", "loss.backward(), then optimizer.step(closure), the closure zeroing the gradients and "
                               "computing the loss and its gradients again"),
    "LOMO": FUSED,
    "AdaLOMO": FUSED,
    "DeMo": Limits("distributed", "torch.distributed.init_process_group() before its first step (a group of one "
                                  "process will do)", modules={"einops": "einops"}),
}


def limits(cls: type) -> Limits | None:
    """What keeps `cls` from stepping as a plain training loop steps it (LIMITS)."""
    return LIMITS.get(cls.__name__)


def _two_dimensional(tensor: Any) -> bool:
    return tensor.ndim == 2


LIBRARY = Library("pytorch_optimizer", "pytorch_optimizer", classes=supported, checks=validator_checks,
                  limits=limits, accepts={"SpectralSphere": (_two_dimensional, "SpectralSphere updates only 2-D "
                                                                               "parameters")})

DIALECT = Dialect("pytorch_optimizer", (), "the optimizers of the installed pytorch_optimizer", library=LIBRARY)

"""Record what TRL's config classes default differently from TrainingArguments into tests/fixtures/hf/trl.json,
checked by tests/test_format_hf.py against the hf reader's TRL table. A manual step: the tests need only the
recorded file.

TRL installs beside the project's transformers without its dependencies (only the config dataclasses are read):

    pip install --target <DIR> --no-deps trl==1.16.0
    PYTHONPATH=<DIR> python scripts/record_trl.py

Recorded per class (the config classes of TRL's trainers, trl.trainer: SFTConfig, DPOConfig, GRPOConfig,
RLOOConfig, KTOConfig, RewardConfig, DistillationConfig; and ORPOConfig, which TRL 1.16 keeps under
trl.experimental.orpo and whose package imports pandas: its config module is loaded on its own): its fields that
TrainingArguments has not, those of them no other of these classes has, and each dataclass default that differs
from TrainingArguments' among the keys the hf reader reads (optreg.readers.hf.READ).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def orpo_config(trl_dir: Path) -> type:
    """trl.experimental.orpo.orpo_config.ORPOConfig without importing the package (its trainer needs pandas)."""
    for name, sub in (("trl.experimental", "experimental"), ("trl.experimental.orpo", "experimental/orpo")):
        module = sys.modules.setdefault(name, types.ModuleType(name))
        module.__path__ = [str(trl_dir / sub)]
    name = "trl.experimental.orpo.orpo_config"
    spec = importlib.util.spec_from_file_location(name, trl_dir / "experimental" / "orpo" / "orpo_config.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.ORPOConfig


def main() -> None:
    import transformers
    import trl
    from transformers import TrainingArguments
    from trl import DistillationConfig, DPOConfig, GRPOConfig, KTOConfig, RewardConfig, RLOOConfig, SFTConfig

    from optreg.readers.hf import READ

    classes = [SFTConfig, DPOConfig, orpo_config(Path(trl.__file__).parent), GRPOConfig, RLOOConfig, KTOConfig,
               RewardConfig, DistillationConfig]
    base = {f.name: f.default for f in dataclasses.fields(TrainingArguments)}
    fields = {c.__name__: {f.name: f.default for f in dataclasses.fields(c)} for c in classes}
    out = {"framework": f"trl {trl.__version__}", "transformers": transformers.__version__, "classes": {}}
    for name, own in fields.items():
        others = set(base).union(*(set(f) for n, f in fields.items() if n != name))
        out["classes"][name] = {"fields": sorted(set(own) - set(base)), "own_fields": sorted(set(own) - others),
                                "defaults": {k: own[k] for k in READ if k in own and own[k] != base.get(k)}}
    path = ROOT / "tests" / "fixtures" / "hf" / "trl.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(path)


if __name__ == "__main__":
    main()

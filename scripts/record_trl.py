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

TRL's experimental config classes (trl.experimental.<name>.<name>_config: AsyncGRPOConfig, GOLDConfig,
OnlineDPOConfig, TPOConfig, ...) are recorded from a TRL source tree (a checkout's directory that holds `trl/`), each
config module loaded on its own (the packages' __init__ import their trainers' dependencies), into the file's
"experimental" entry, beside the classes above, which it keeps:

    python scripts/record_trl.py --experimental <TRL SOURCE DIR> "<where the tree is from>"

Their own fields are those no other recorded class (of the trainers or experimental) has. A class already recorded
as a trainer's (DistillationConfig, experimental before TRL 1.16) is left out.
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


def experimental_configs(trl_dir: Path) -> dict[str, type]:
    """name -> class of each TrainingArguments subclass in trl/experimental/*/*_config.py, each module loaded with
    its packages as bare modules (their __init__ not run), a class it imports from a sibling package set on that
    package as its __init__ would export it (XPOConfig's OnlineDPOConfig)."""
    from transformers import TrainingArguments

    packages = [("trl", trl_dir), ("trl.trainer", trl_dir / "trainer"), ("trl.experimental", trl_dir / "experimental")]
    packages += [(f"trl.experimental.{d.name}", d) for d in sorted((trl_dir / "experimental").iterdir())
                 if (d / "__init__.py").exists()]
    for name, path in packages:
        sys.modules.setdefault(name, types.ModuleType(name)).__path__ = [str(path)]
    pending = sorted((trl_dir / "experimental").glob("*/*_config.py"))
    found: dict[str, type] = {}
    while pending:   # a module that imports another's class waits for it
        left = []
        for path in pending:
            package = "trl.experimental." + path.parent.name
            try:
                module = importlib.import_module(f"{package}.{path.stem}")
            except ImportError:
                left.append(path)
                continue
            for name, value in vars(module).items():
                if isinstance(value, type) and issubclass(value, TrainingArguments) and \
                        value.__module__ == module.__name__:
                    setattr(sys.modules[package], name, value)
                    found[name] = value
        if len(left) == len(pending):
            raise ImportError(f"cannot load {', '.join(str(p) for p in left)}")
        pending = left
    return found


def record(classes: list[type], others: set[str]) -> dict[str, dict]:
    """Per class: its fields that TrainingArguments has not, those of them no other class (of `classes`, and the
    fields `others`) has, and its defaults of the keys read that differ from TrainingArguments'."""
    from transformers import TrainingArguments

    from optreg.readers.hf import READ

    base = {f.name: f.default for f in dataclasses.fields(TrainingArguments)}
    fields = {c.__name__: {f.name: f.default for f in dataclasses.fields(c)} for c in classes}
    out = {}
    for name, own in fields.items():
        rest = set(base) | others
        rest = rest.union(*(set(f) for n, f in fields.items() if n != name))
        out[name] = {"fields": sorted(set(own) - set(base)), "own_fields": sorted(set(own) - rest),
                     "defaults": {k: own[k] for k in READ if k in own and own[k] != base.get(k)}}
    return out


FIXTURE = ROOT / "tests" / "fixtures" / "hf" / "trl.json"


def main_experimental(source: Path, framework: str) -> None:
    """Record the experimental classes of the TRL source tree `source` into the fixture (see the module doc)."""
    import transformers

    recorded = json.loads(FIXTURE.read_text())
    trainers = recorded["classes"]
    classes = [c for name, c in sorted(experimental_configs(source / "trl").items()) if name not in trainers]
    others = {f for rec in trainers.values() for f in rec["fields"]}
    recorded["experimental"] = {"framework": framework, "transformers": transformers.__version__,
                                "classes": record(classes, others)}
    FIXTURE.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    print(FIXTURE)


def main() -> None:
    import transformers
    import trl
    from trl import DistillationConfig, DPOConfig, GRPOConfig, KTOConfig, RewardConfig, RLOOConfig, SFTConfig

    classes = [SFTConfig, DPOConfig, orpo_config(Path(trl.__file__).parent), GRPOConfig, RLOOConfig, KTOConfig,
               RewardConfig, DistillationConfig]
    out = {"framework": f"trl {trl.__version__}", "transformers": transformers.__version__,
           "classes": record(classes, set())}
    if FIXTURE.exists() and "experimental" in (kept := json.loads(FIXTURE.read_text())):
        out["experimental"] = kept["experimental"]
    FIXTURE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(FIXTURE)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--experimental"]:
        main_experimental(Path(sys.argv[2]), sys.argv[3])
    else:
        main()

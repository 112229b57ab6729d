"""The LiBai corpus (tests/suites/libai): LiBai's own LazyConfig files, kept as data (`<name>.py.txt`: another
project's configs, not this project's code), and `tree()`, the folder the tests read them from: a copy made once per
process with their `.py` names, laid out as LiBai's tree is (a file imports `configs/common/*.py` beside it)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

SOURCE = Path(__file__).parent / "suites" / "libai"
SUFFIX = ".txt"   # what the stored name adds to the file's own


@lru_cache(maxsize=None)
def tree() -> Path:
    """The corpus as LiBai's files (`configs/...py`, `projects/...py`, recorded.json), in a temporary folder removed
    at exit."""
    root = Path(tempfile.mkdtemp(prefix="libai-corpus-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    for path in SOURCE.rglob("*"):
        if path.is_file():
            name = path.relative_to(SOURCE).as_posix()
            target = root / (name[: -len(SUFFIX)] if name.endswith(".py" + SUFFIX) else name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    return root

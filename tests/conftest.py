"""Test-session settings: fused optimizers compile small chunks (the code path is the same; a chunk of
2 compiles several times faster than the default 16)."""

import os

os.environ.setdefault("OPTREG_FUSED_CHUNK", "2")

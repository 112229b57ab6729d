"""Re-capture the README's examples of `optreg` output, so that they stay what the command prints.

An example is a fenced block whose first line is `$ optreg ARGS`; the rest of the block is the command's
standard output at WIDTH columns, run from the repository root. `python scripts/readme_cli.py` rewrites the
blocks; `--check` only reports the stale ones (exit 1), as tests/test_readme_cli.py does.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
WIDTH = 100
PROMPT = "$ optreg "
BLOCK = re.compile(r"^```[^\n]*\n(\$ optreg [^\n]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Example:
    command: str        # the `$ optreg ...` line
    output: str         # what the README shows under it
    span: tuple[int, int]

    def args(self) -> list[str]:
        return shlex.split(self.command[len(PROMPT):])


def examples(text: str) -> list[Example]:
    """The README's `$ optreg ...` blocks, in order."""
    return [Example(m.group(1), m.group(2), m.span(2)) for m in BLOCK.finditer(text)]


def capture(args: list[str], width: int = WIDTH) -> str:
    """What `optreg ARGS` prints on stdout at `width` columns, run from the repository root."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from optreg.cli import main

    out = io.StringIO()
    saved_dir, saved_columns = Path.cwd(), os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        os.chdir(ROOT)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            status = main(args)
    finally:
        os.chdir(saved_dir)
        if saved_columns is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved_columns
    if status:
        raise RuntimeError(f"`optreg {shlex.join(args)}` exited with {status}")
    return out.getvalue()


def refreshed(text: str) -> tuple[str, list[str]]:
    """`text` with every example's output re-captured, and the commands whose output changed."""
    stale, parts, end = [], [], 0
    for example in examples(text):
        output = capture(example.args())
        if output != example.output:
            stale.append(example.command)
        parts += [text[end:example.span[0]], output]
        end = example.span[1]
    return "".join(parts) + text[end:], stale


def main(argv: list[str]) -> int:
    text = README.read_text(encoding="utf-8")
    new, stale = refreshed(text)
    for command in stale:
        print(f"stale: {command}")
    if "--check" in argv:
        return 1 if stale else 0
    if stale:
        README.write_text(new, encoding="utf-8")
    print(f"{len(examples(text))} example(s) in {README.name}, {len(stale)} rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

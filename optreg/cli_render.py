"""Text layout of the `optreg` command: lines that fit the terminal's width and never split a name.

The width is `$COLUMNS` when set, else the terminal's, else 80 (output piped to a file or another program).
A table keeps each cell of a name column on one line (a name longer than its column keeps its two ends around a
`…`); a text column wraps between words only. When the columns do not fit side by side, the rightmost text
columns move under their row as `header: text` lines, so a narrow terminal gets the same facts, stacked.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

ELLIPSIS = "…"
GAP = 2             # spaces between two columns
INDENT = 4          # indent of a row's stacked `header: text` lines
TEXT_MIN = 16       # a text column narrower than this moves under its row
NAME_MIN = 8        # a name column is never made narrower than this (nor than its header)
PIPED_WIDTH = 80


def terminal_width() -> int:
    """`$COLUMNS` when it is a positive integer, else the terminal's width, else 80 (piped output)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if sys.stdout.isatty():
        return shutil.get_terminal_size((PIPED_WIDTH, 24)).columns
    return PIPED_WIDTH


def console() -> Any:
    """A rich Console of `terminal_width()` columns (no syntax highlighting of numbers and paths); a reader that
    goes away (`optreg list | head`) raises BrokenPipeError, which the command ends on quietly."""
    from rich.console import Console

    class PipedConsole(Console):
        def on_broken_pipe(self) -> None:     # rich's own exits with status 1
            raise BrokenPipeError(32, "Broken pipe")

    return PipedConsole(highlight=False, width=terminal_width())


def shorten(text: str, width: int) -> str:
    """`text` when it fits, else its start and end around `…` (`blocks.0.n…weight`): a name stays recognisable."""
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    tail = (width - 1) // 2
    return text[: width - 1 - tail] + ELLIPSIS + (text[-tail:] if tail else "")


def cut(text: str, width: int) -> str:
    """`text` cut to `width` characters, the last one `…` when something was left out (a description)."""
    return text if len(text) <= width else text[: max(0, width - 1)].rstrip() + ELLIPSIS


def wrap_items(items: Sequence[str], width: int, indent: str = "", first: str = "", sep: str = " ") -> list[str]:
    """`first` then the items joined by `sep`, a new line (starting with `indent`) where the next item would pass
    `width`; an item longer than a line is shortened in its middle, never broken across lines."""
    lines: list[str] = []
    line = first
    start = len(line)
    for item in items:
        if len(line) > start and len(line) + len(sep) + len(item) > width:
            lines.append(line.rstrip())
            line = indent
            start = len(line)
        joint = sep if len(line) > start else ""
        line += joint + shorten(item, max(1, width - len(line) - len(joint)))
    lines.append(line.rstrip())
    return lines


def pieces(text: str, breaks: str = " ") -> list[str]:
    """`text` cut where it may wrap: at each `breaks` (`"; "` keeps `lr_mult: 10` whole), the separator's
    visible part (`;`) kept at the end of the piece before it."""
    parts = text.split(breaks)
    mark = breaks.rstrip()
    return [part + mark for part in parts[:-1]] + parts[-1:]


def wrap(text: str, width: int, indent: str = "", first: str = "", breaks: str = " ") -> list[str]:
    """`first + text` wrapped at `breaks` to `width`, later lines starting with `indent` (a new line in `text`
    starts a new one); a piece longer than a line is shortened in its middle, never broken across lines."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        lines += wrap_items(pieces(paragraph, breaks), width, indent, first if not lines else indent)
    return lines


def listing(names: Sequence[str], descriptions: Sequence[str], width: int, indent: str = "  ") -> list[str]:
    """One line per name: the name (padded to the longest, up to 45% of the width), then its description cut to
    the width with `…`; a longer name pushes its own description right (or off, on a narrow terminal)."""
    pad = min(max((len(n) for n in names), default=0), max(NAME_MIN, width * 45 // 100))
    lines = []
    for name, text in zip(names, descriptions):
        head = f"{indent}{shorten(name, width - len(indent))}"
        room = width - len(indent) - max(pad, len(name)) - GAP
        if text and room >= TEXT_MIN // 2:
            head = f"{head.ljust(len(indent) + pad)}{' ' * GAP}{cut(text, room)}"
        lines.append(head)
    return lines


def first_sentence(doc: str, name: str = "") -> str:
    """The doc's first sentence on one line, without a leading `name:` that repeats the component's name."""
    text = " ".join(doc.split())
    match = re.search(r"(?<=[.!?])\s+(?=[A-Z(`])", text)
    if match:
        text = text[: match.start()]
    if name and text.lower().startswith(name.lower() + ":"):
        text = text[len(name) + 1:].lstrip()
    return text


@dataclass(frozen=True)
class Column:
    """A table column: `name` cells stay on one line (shortened in the middle when they must be); `text` cells
    wrap at `breaks`, and the column moves under its row when the width leaves it fewer than `least`."""

    header: str
    kind: str = "name"          # "name" | "text"
    right: bool = False         # right-justified (counts)
    least: int = TEXT_MIN       # a text column that would be narrower moves under its row
    breaks: str = " "           # where a text cell may wrap (`"; "`, `", "`: between whole items)
    share: float = 1.0          # a name column's largest share of the width (a default value: 0.25)


def _least(column: Column, cells: Sequence[str], width: int) -> int:
    """The narrowest a column may be and stay beside the others: a text column as wide as its longest piece (up
    to half the width) and `least`; a name column as its longest cell, up to its share of the width."""
    natural = max([len(column.header)] + [len(c) for c in cells])
    if column.kind == "text":
        longest = max((len(p) for c in cells for p in pieces(c, column.breaks)), default=0)
        return max(len(column.header), min(natural, column.least), min(longest, width // 2))
    return max(len(column.header), min(natural, max(NAME_MIN, int(width * column.share))))


def _span(widths: Sequence[int]) -> int:
    return sum(widths) + GAP * (len(widths) - 1)


def _fit(columns: Sequence[Column], widths: dict[int, int], width: int) -> list[int]:
    """The columns that stay side by side within `width`: the rightmost text columns are stacked first, then the
    rightmost others (stacking keeps a name whole); a first column wider than the terminal alone is narrowed."""
    inline = list(widths)
    while _span([widths[i] for i in inline]) > width and len(inline) > 1:
        stackable = [i for i in inline[1:] if columns[i].kind == "text"]
        inline.remove(stackable[-1] if stackable else inline[-1])
    if _span([widths[i] for i in inline]) > width:
        widths[inline[0]] = max(1, width)
    return inline


def _grow(columns: Sequence[Column], natural: Sequence[int], inline: Sequence[int], widths: dict[int, int],
          width: int) -> None:
    """Share the width left over among the inline text columns, one character in turn, up to their natural
    width."""
    spare = width - _span([widths[i] for i in inline])
    growing = [i for i in inline if columns[i].kind == "text" and widths[i] < natural[i]]
    while spare > 0 and growing:
        for i in list(growing):
            if spare == 0:
                break
            widths[i] += 1
            spare -= 1
            if widths[i] >= natural[i]:
                growing.remove(i)


def _layout(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int) -> tuple[list[int], list[int]]:
    """(inline column indices, their widths); the other columns are stacked under each row."""
    cells = [[r[i] for r in rows] for i in range(len(columns))]
    natural = [max([len(c.header)] + [len(v) for v in cells[i]]) for i, c in enumerate(columns)]
    widths = {i: _least(c, cells[i], width) for i, c in enumerate(columns)}
    inline = _fit(columns, widths, width)
    _grow(columns, natural, inline, widths, width)
    return inline, [widths[i] for i in inline]


def table(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int,
          styles: Sequence[str | None] | None = None) -> list[Any]:
    """The table as rich Text lines, none longer than `width`: a bold header, a rule, then each row (its stacked
    columns as `header: text` lines under it)."""
    from rich.text import Text

    inline, widths = _layout(columns, rows, width)

    def cells(values: Sequence[str], bold: bool = False) -> list[str]:
        wrapped = []
        for i, w in zip(inline, widths):
            text = values[i]
            wrapped.append(wrap(text, w, breaks=columns[i].breaks) if columns[i].kind == "text" and not bold
                           else [shorten(text, w)])
        height = max(len(c) for c in wrapped)
        lines = []
        for k in range(height):
            parts = []
            for (i, w), cell in zip(zip(inline, widths), wrapped):
                part = cell[k] if k < len(cell) else ""
                parts.append(part.rjust(w) if columns[i].right else part.ljust(w))
            lines.append((" " * GAP).join(parts).rstrip())
        return lines

    out = [Text(line, style="bold") for line in cells([c.header for c in columns], bold=True)]
    out.append(Text((" " * GAP).join("─" * w for w in widths)))
    stacked = [i for i in range(len(columns)) if i not in inline]
    for n, row in enumerate(rows):
        style = (styles[n] if styles else None) or ""
        lines = cells(row)
        for i in stacked:
            if row[i]:
                lines += wrap(row[i], width, " " * (INDENT + 2), f"{' ' * INDENT}{columns[i].header}: ",
                              columns[i].breaks)
        out += [Text(line, style=style) for line in lines]
    return out


def print_lines(lines: Sequence[Any], target: Any = None) -> None:
    """Print rendered lines as they are (no wrapping, no markup)."""
    target = target or console()
    for line in lines:
        target.print(line, markup=False, emoji=False, overflow="ignore", crop=False, soft_wrap=True)


# ---------------------------------------------------------------------------------------------------
# warnings: one line each
# ---------------------------------------------------------------------------------------------------
def warning_line(message: Any, category: type = UserWarning) -> str:
    """`warning: <message>` on one line (the message's whitespace collapsed; not Python's source file and line), a
    config's note at its file position as an error is: `file:line:column: warning: <note>` (`ConfigWarning`)."""
    from optreg.errors import ConfigWarning

    if isinstance(message, ConfigWarning) and message.location is not None:
        return f"{message.location}: warning: {' '.join(message.note.split())}"
    text = " ".join(str(message).split())
    return f"warning: {text}" if issubclass(category, UserWarning) else f"warning ({category.__name__}): {text}"


@contextlib.contextmanager
def one_line_warnings(of: Callable[[str], str] = str) -> Iterator[None]:
    """While inside, each warning prints as `of(warning_line())` on stderr (Python's own format adds the source line
    that raised it, which tells a command-line user nothing; `of`: validate names the file a line is of)."""
    with warnings.catch_warnings():
        def show(message: Any, category: type, filename: str, lineno: int, file: Any = None, line: Any = None):
            print(of(warning_line(message, category)), file=file or sys.stderr)

        warnings.showwarning = show
        yield


# ---------------------------------------------------------------------------------------------------
# learning rates of a run
# ---------------------------------------------------------------------------------------------------
MAX_GROUPS_SHOWN = 5


def lr_text(lr: float | None, digits: int = 4) -> str:
    """A group's lr as a run shows it; `none` for a group without one (pytorch_optimizer's AliG, whose step size
    comes from the loss)."""
    return "none" if lr is None else f"{lr:.{digits}g}"


def lr_summary(lrs: Sequence[float | None], rules: Sequence[str]) -> list[str]:
    """The lr of each group (`0.003`, or `g0 0.003  g1 0.0015` for several), and past MAX_GROUPS_SHOWN groups the
    range of each rule's groups (`default 1e-05..0.003 (12 groups)`)."""
    if len(lrs) == 1:
        return [lr_text(lrs[0])]
    if len(lrs) <= MAX_GROUPS_SHOWN:
        return [f"g{i} {lr_text(lr)}" for i, lr in enumerate(lrs)]
    by_rule: dict[str, list[float | None]] = {}
    for rule, lr in zip(rules, lrs):
        by_rule.setdefault(rule, []).append(lr)
    out = []
    for rule, values in by_rule.items():
        known = [v for v in values if v is not None]
        low, high = (min(known), max(known)) if known else (None, None)
        span = lr_text(low) if low == high else f"{lr_text(low)}..{lr_text(high)}"
        out.append(f"{rule} {span}" + (f" ({len(values)} groups)" if len(values) > 1 else ""))
    return out


def lr_lines(lrs: Sequence[float], rules: Sequence[str], width: int) -> list[str]:
    """`lr: g0 0.003  g1 0.0015` (lr_summary()) wrapped to `width`; no lines for a single group (its lr goes
    on the line of the loss)."""
    return wrap_items(lr_summary(lrs, rules), width, "    ", "lr: ", sep="  ") if len(lrs) > 1 else []


class RunProgress:
    """`optreg run`'s progress: a bar with steps, loss and time, and the lr of each group under it while the run
    goes (one group: on the bar's line). Nothing is drawn before the first step, so every number shown is a real
    one."""

    def __init__(self, target: Any, steps: int, rules: Sequence[str]):
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
        from rich.text import Text

        self.rules = list(rules)
        self.width = target.width
        self.below: list[str] = []
        owner = self

        class _Progress(Progress):
            def get_renderables(self):
                yield self.make_tasks_table(self.tasks)
                for line in owner.below:
                    yield Text(line)

        single = len(self.rules) == 1       # one group: its lr on the bar's line
        self.progress = _Progress(
            TextColumn("[bold]train"), BarColumn(bar_width=None), TextColumn("{task.completed}/{task.total}"),
            TextColumn("loss {task.fields[loss]}" + ("  lr {task.fields[lr]}" if single else "")),
            TimeElapsedColumn(), console=target, transient=False, expand=True)
        self.task = self.progress.add_task("train", total=steps, loss="", lr="", visible=False)

    def __enter__(self) -> "RunProgress":
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.below = []   # the run's summary gives the last lrs: the bar's last frame leaves them out
        self.progress.refresh()
        self.progress.__exit__(*exc)

    def advance(self, loss: float, lrs: Sequence[float]) -> None:
        self.below = lr_lines(lrs, self.rules, self.width)
        self.progress.update(self.task, advance=1, loss=f"{loss:.4g}", lr=lr_text(lrs[0]), visible=True)

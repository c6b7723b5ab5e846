"""How the CLI prints a table: as a table when it can be read in the window, else as records.

A rich table squeezed into fewer columns than it needs wraps every cell, so ids and reasons come
out a word per line. Output that is piped has no window: its width is ``COLUMNS``, or 80. So a
table is drawn only when its ids and other unbreakable columns fit whole, with some room left for
the text columns (a reason, a question) to wrap at spaces; otherwise each row is printed as a
record, one ``column  value`` line per field, values wrapped at spaces only, so that no line is
wider than the window and an id is never cut (one longer than the window itself is the only one
split). ``--json`` stays the form for programs.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

from rich.console import Console
from rich.table import Table
from rich.text import Text

PROSE_MIN = 30
"""The fewest characters a text column (cells with spaces) is given before records are chosen."""


def _plain(value: object) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def _columns(table: Table) -> list[tuple[str, list[str]]]:
    return [(_plain(c.header), [_plain(cell) for cell in c.cells]) for c in table.columns]


def _needs(header: str, cells: list[str]) -> tuple[int, bool]:
    """The width a column needs and whether it may wrap (its cells hold text with spaces)."""
    lines = [header, *(line for cell in cells for line in cell.splitlines())]
    natural = max(len(line) for line in lines)
    words = [len(word) for line in lines for word in line.split()] or [0]
    prose = any(" " in cell.strip() for cell in cells) and natural > PROSE_MIN
    return (min(natural, max(max(words), PROSE_MIN)) if prose else natural), prose


def fits(table: Table, width: int) -> bool:
    """Whether ``table`` reads well in ``width`` columns; marks its unbreakable columns
    ``no_wrap`` so that rich narrows only the text columns."""
    needs = [_needs(header, cells) for header, cells in _columns(table)]
    for column, (_, prose) in zip(table.columns, needs, strict=True):
        column.no_wrap = not prose
    return sum(n for n, _ in needs) + 3 * len(needs) + 1 <= width


def records(table: Table, width: int) -> Iterator[str]:
    """The table's rows as records of ``column  value`` lines no wider than ``width``."""
    columns = _columns(table)
    if table.title:
        yield from textwrap.wrap(_plain(table.title), width) or [""]
    key_width = min(max((len(h) for h, _ in columns), default=0) + 2, width // 3)
    rows = len(columns[0][1]) if columns else 0
    if rows == 0:
        yield "(no rows)"
    for row in range(rows):
        yield ""
        for header, cells in columns:
            yield from _field(header, cells[row], key_width, width)


def _field(header: str, value: str, key_width: int, width: int) -> Iterator[str]:
    prefix = header.ljust(key_width - 1) + " "
    indent = " " * key_width
    lines = value.splitlines() or [""]
    for n, line in enumerate(lines):
        wrapped = textwrap.wrap(
            line,
            width,
            initial_indent=prefix if n == 0 else indent,
            subsequent_indent=indent,
            break_on_hyphens=False,
        )
        yield from wrapped or [prefix.rstrip()]


def show(console: Console, table: Table) -> None:
    """Print ``table`` on ``console``: drawn when it fits (``fits``), else as records."""
    if fits(table, console.width):
        console.print(table)
        return
    for line in [*records(table, console.width), ""]:  # a blank line before what follows
        console.print(line, markup=False, highlight=False, soft_wrap=True)

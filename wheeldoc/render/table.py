"""Tables for text reports, laid out by wheeldoc itself so that the plain and the coloured form
are the same text and both fit the terminal (`COLUMNS`, else the terminal's width; no limit in
a pipe or a file).

A table that is too wide first closes its column gaps to one space, then wraps the widest
columns (words where there are spaces, else at the column's width) until it fits; the title
and the caption wrap at words. Cells are plain text: they are escaped when written, and no
markup language is involved (a library named `[bold]x` prints as such).
"""

from __future__ import annotations

import textwrap

MIN_COLUMN = 6  # a column is never wrapped narrower than this (or its widest word, if smaller)

Cell = tuple  # (text, style); style "" for none


def _natural(header: list[str], rows: list[list[Cell]]) -> list[int]:
    return [max(len(c) for c in [header[i], *(r[i][0] for r in rows)]) for i in range(len(header))]


def fit_widths(natural: list[int], width: int | None) -> tuple[list[int], int]:
    """Column widths and the gap between columns for a table of these natural widths."""
    n = len(natural)
    if width is None or sum(natural) + 2 * (n - 1) <= width:
        return list(natural), 2
    widths = list(natural)
    room = width - (n - 1)
    floor = [min(w, MIN_COLUMN) for w in natural]
    while sum(widths) > room:
        i = max(range(n), key=lambda k: (widths[k] - floor[k] > 0, widths[k]))
        if widths[i] <= floor[i]:
            break  # cannot fit: the terminal is narrower than the narrowest table we draw
        widths[i] -= 1
    return widths, 1


def _wrap(text: str, w: int) -> list[str]:
    if len(text) <= w:
        return [text]
    return textwrap.wrap(text, w, break_long_words=True, break_on_hyphens=False) or [""]


def table_lines(header: list[str], rows: list[list[Cell]], width: int | None = None,
                highlight: int | None = None) -> list[list[Cell]]:
    """The table as styled lines (lists of (text, style) segments), one list per printed line."""
    widths, gap = fit_widths(_natural(header, rows), width)
    sep = (" " * gap, "")
    out: list[list[Cell]] = []

    def emit(cells: list[Cell], bold: bool = False) -> None:
        wrapped = [_wrap(text, w) for (text, _), w in zip(cells, widths)]
        for k in range(max(len(x) for x in wrapped)):
            line: list[Cell] = []
            for i, ((_, style), parts, w) in enumerate(zip(cells, wrapped, widths)):
                if i:
                    line.append(sep)
                text = parts[k] if k < len(parts) else ""
                last = i == len(cells) - 1
                if bold:
                    style = "bold reverse" if i == highlight else "bold"
                line.append((text if last else text.ljust(w), style))
            while line and not line[-1][0].strip():
                line.pop()
            if line:
                line[-1] = (line[-1][0].rstrip(), line[-1][1])
            out.append(line)

    emit([(h, "") for h in header], bold=True)
    emit([("-" * w, "dim") for w in widths])
    for row in rows:
        emit(row)
    return out


def wrap_text(text: str, width: int | None) -> list[str]:
    """A title or a caption, wrapped at words to the width (one line without a limit)."""
    if width is None or len(text) <= width:
        return [text]
    return textwrap.wrap(text, width, break_on_hyphens=False) or [""]


def add_table(out, title: str, header: list[str], rows: list[list[Cell]], *,
              highlight: int | None = None, caption: str | None = None) -> None:
    """Title, blank line, table, (blank line, caption) into a `render.text.Lines` sink."""
    for line in wrap_text(title, out.width):
        out.add((line, "bold"))
    out.add()
    for line in table_lines(header, rows, out.width, highlight):
        out.add(*line)
    if caption:
        out.add()
        for line in wrap_text(caption, out.width):
            out.add((line, "dim"))


def plain_table(header: list[str], rows: list[list[str]], width: int | None = None) -> str:
    """The table as plain text (cells without styles)."""
    lines = table_lines(header, [[(c, "") for c in r] for r in rows], width)
    return "\n".join("".join(t for t, _ in line) for line in lines)

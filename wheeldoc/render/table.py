"""Tables for text reports: aligned plain text, or a rich table built only when drawn in colour.

rich is imported only when a table is really drawn: sections hand `Lines.add_renderable` a
`Lazy` object whose `__rich__` builds the table.
"""

from __future__ import annotations

from typing import Callable


class Lazy:
    """A rich renderable built on first use (rich calls `__rich__`)."""

    def __init__(self, build: Callable[[], object]) -> None:
        self.build = build

    def __rich__(self) -> object:
        return self.build()


def plain_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    fmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt(header), fmt(["-" * w for w in widths]), *map(fmt, rows)])


def rich_table(title: str, header: list[str], rows: list[list[tuple[str, str]]],
                highlight: int | None = None, caption: str | None = None) -> object:
    from rich import box
    from rich.table import Table

    t = Table(title=title, box=box.SIMPLE_HEAD, caption=caption, caption_justify="left",
              title_justify="left")
    for i, h in enumerate(header):
        hl = i == highlight
        # the library column folds; the others keep their words whole
        t.add_column(h, header_style="bold reverse" if hl else "bold",
                     style="on grey15" if hl else None, no_wrap=i > 0,
                     overflow="fold" if i == 0 else "ellipsis",
                     min_width=max([len(h)] + [len(r[i][0]) for r in rows]) if i > 0 else None)
    for row in rows:
        t.add_row(*[(f"[{style}]{text}[/]" if style else text).replace("[]", "")
                    for text, style in row])
    return t


# -- listing ----------------------------------------------------------------------------------

"""Find wheels of one project version in local folders: flat find-links folders and PEP 503
simple indexes on disk (`file:///…/simple`), following the project page's links."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

MAX_PAGE = 8 * 1024 * 1024


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href)


def _page_wheels(page: Path) -> list[Path]:
    try:
        if page.stat().st_size > MAX_PAGE:
            return []
        text = page.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    parser = _Links()
    parser.feed(text)
    out = []
    for href in parser.hrefs:
        url = urlsplit(href)
        if url.scheme not in ("", "file"):
            continue
        target = Path(unquote(url.path)) if url.scheme == "file" else page.parent / unquote(url.path)
        if target.name.endswith(".whl") and target.is_file():
            out.append(target)
    return out


def find_local_wheels(sources: list[Path], name: str, version: str) -> list[Path]:
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    want = _norm(name)
    found: list[Path] = []
    for src in sources:
        candidates = [*src.glob("*.whl")]
        page = src / want / "index.html"
        if page.is_file():
            candidates += _page_wheels(page)
        elif (src / want).is_dir():
            candidates += (src / want).glob("*.whl")
        for whl in candidates:
            try:
                wname, wversion, _, _ = parse_wheel_filename(whl.name)
            except InvalidWheelFilename:
                continue
            if wname == want and str(wversion) == version and whl not in found:
                found.append(whl)
    return found

"""Requires-Dist of a local wheel, read from its METADATA member only (bounded, never extracted)."""

from __future__ import annotations

import zipfile
from email.parser import HeaderParser
from pathlib import Path

MAX_METADATA = 4 * 1024 * 1024


def requires_dist(wheel: Path) -> list[str]:
    try:
        with zipfile.ZipFile(wheel) as zf:
            names = [n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            if len(names) != 1 or zf.getinfo(names[0]).file_size > MAX_METADATA:
                return []
            text = zf.read(names[0]).decode("utf-8", "replace")
    except (OSError, zipfile.BadZipFile, KeyError):
        return []
    return HeaderParser().parsestr(text).get_all("Requires-Dist") or []

"""The file names `wheeldoc check` reads: one definition for the directory walk, the verb and the
pre-commit hooks (`.pre-commit-hooks.yaml` spells these two regular expressions verbatim, and
tests/verbs/test_discovery.py holds them equal and runs the real pre-commit on them).

Each pattern is matched with `re.search` on a path relative to the project root, with `/`
separators, as pre-commit matches `files:`.
"""

from __future__ import annotations

import re

# Dockerfile, Containerfile, Dockerfile.prod, Dockerfile-cuda, Dockerfile_dev, app.dockerfile,
# x.Containerfile; not the ignore files BuildKit pairs with them, nor templates that need a
# renderer first (Dockerfile.j2, Dockerfile.in, …), nor notes about them.
DOCKERFILE_PATTERN = (
    r"(?i)(^|/)((dockerfile|containerfile)([._-][^/]*)?|[^/]+\.(dockerfile|containerfile))"
    r"(?<!\.dockerignore)(?<!\.j2)(?<!\.jinja)(?<!\.jinja2)(?<!\.tmpl)(?<!\.tpl)(?<!\.template)"
    r"(?<!\.in)(?<!\.md)(?<!\.rst)(?<!\.orig)(?<!\.bak)(?<!\.swp)$"
)

# uv.lock, pylock.toml, pylock.<name>.toml, *requirements*.txt, *constraints*.txt, Rye's
# requirements*.lock, *.lock.txt, and every .txt in a requirements/ folder (requirements/base.txt).
LOCKFILE_PATTERN = (
    r"(^|/)(uv\.lock|pylock(\.[^/.]+)?\.toml|[^/]*(requirements|constraints)[^/]*\.txt"
    r"|requirements[^/]*\.lock|[^/]+\.lock\.txt|requirements/[^/]+\.txt)$"
)

_DOCKERFILE = re.compile(DOCKERFILE_PATTERN)
_LOCKFILE = re.compile(LOCKFILE_PATTERN)


def is_dockerfile_path(path: str) -> bool:
    return _DOCKERFILE.search(path.replace("\\", "/")) is not None


def is_lockfile_path(path: str) -> bool:
    return _LOCKFILE.search(path.replace("\\", "/")) is not None

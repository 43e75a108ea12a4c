"""What a package index page shows: the built wheel's metadata, the LICENSE, and README links
that work there (absolute, under wheeldoc.REPOSITORY, naming files that exist).

PyPI renders README.md without the repository around it: a relative link (`docs/x.md`) points
into pypi.org, and an in-page anchor (`#abi`) finds no heading id. Every link is therefore
absolute; those under the repository name a file or folder of this checkout.
The two tests that build the wheel are slow (`uv run pytest -m slow`).
"""

from __future__ import annotations

import email
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

import wheeldoc

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
REF_LINK = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)", re.M)
HREF = re.compile(r"""(?:href|src)=["']([^"']+)["']""")


def _pyproject() -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


@pytest.fixture(scope="module")
def metadata(tmp_path_factory) -> email.message.Message:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(["uv", "build", "--wheel", "-o", str(out)], cwd=ROOT, check=True, capture_output=True,
                   timeout=300)
    (wheel,) = out.glob("wheeldoc-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        dist = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        assert f"{dist}/licenses/LICENSE" in names
        assert z.read(f"{dist}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        return email.message_from_bytes(z.read(f"{dist}/METADATA"))


def test_version_is_one_number():
    assert _pyproject()["project"]["version"] == wheeldoc.__version__ == "0.2.0"


@pytest.mark.slow
def test_license_file_is_apache_2(metadata):
    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert metadata["License-Expression"] == _pyproject()["project"]["license"] == "Apache-2.0"


@pytest.mark.slow
def test_metadata_a_registry_page_needs(metadata):
    assert metadata["Name"] == "wheeldoc" and metadata["Version"] == wheeldoc.__version__
    assert metadata["Author"] == "wheeldoc developers"
    assert metadata["Summary"] and metadata["Requires-Python"] == ">=3.10"
    assert {"cuda", "wheel", "pytorch"} <= set(metadata["Keywords"].split(","))
    urls = dict(u.split(", ", 1) for u in metadata.get_all("Project-URL"))
    assert {"Homepage", "Documentation", "Repository", "Issues"} <= set(urls)
    assert all(u.startswith(wheeldoc.REPOSITORY) for u in urls.values()), urls
    classifiers = metadata.get_all("Classifier")
    assert "Environment :: Console" in classifiers
    pythons = sorted(c.rsplit(" ", 1)[1] for c in classifiers
                     if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    assert pythons == ["3.10", "3.11", "3.12", "3.13"]  # the floor in Requires-Python, and each tested
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata.get_payload(decode=True).decode("utf-8").strip() == (ROOT / "README.md").read_text().strip()


def _links(text: str) -> list[str]:
    return LINK.findall(text) + REF_LINK.findall(text) + HREF.findall(text)


def test_readme_links_work_on_a_package_page():
    text = (ROOT / "README.md").read_text()
    links = _links(text)
    assert links, "no links found: the pattern is broken"
    bad = [u for u in links if not u.startswith(("https://", "http://", "mailto:"))]
    assert not bad, f"relative links break on the package index page: {bad}"
    base = wheeldoc.REPOSITORY + "/"
    for url in links:
        if not url.startswith(base):
            continue
        m = re.fullmatch(re.escape(base) + r"(?:(blob|tree)/main/([^#?]+)|issues|releases|pulls)(?:#.*)?", url)
        assert m, f"{url}: a repository link is {base}blob/main/FILE or {base}tree/main/FOLDER"
        if m.group(1):
            target = ROOT / m.group(2).rstrip("/")
            assert target.exists(), f"{url}: {m.group(2)} is not in the repository"
            assert target.is_file() == (m.group(1) == "blob"), f"{url}: blob/ for files, tree/ for folders"


def test_pre_commit_docs_use_the_release_tag():
    rev = f"v{wheeldoc.__version__}"
    for path in (ROOT / ".pre-commit-hooks.yaml", ROOT / "README.md"):
        revs = re.findall(r"^\s*#?\s*rev:\s*(\S+)", path.read_text(), re.M)
        assert revs and set(revs) == {rev}, (path.name, revs)
        assert f"repo: {wheeldoc.REPOSITORY}" in path.read_text()

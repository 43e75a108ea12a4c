"""One small fixture (a Dockerfile with a safe fix, a requirements lock with an error) through
every output format, compared byte for byte with tests/golden/formats/
(regenerate: WHEELDOC_UPDATE_GOLDEN=1 uv run pytest tests/verbs/test_golden_formats.py)."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import ROOT
from tests.render.test_render import report_schema, sarif_validator

GOLDEN = ROOT / "tests" / "golden" / "formats"
INPUTS = ("fixtures/dockerfiles/rules/wd401-story.Dockerfile", "fixtures/story")
FORMATS = {"full": "txt", "concise": "txt", "json": "json", "sarif": "sarif", "github": "txt"}
ROOT_URI = "file:///SRCROOT/"  # the working directory's URI in the SARIF golden


@pytest.fixture(autouse=True)
def _plain_terminal(monkeypatch):
    for name in ("COLUMNS", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("fmt", FORMATS)
def test_golden(cli, fmt):
    res = cli("check", *INPUTS, "--output-format", fmt)
    assert res.code == 1 and res.err == ""
    out = res.out.replace(ROOT.as_uri() + "/", ROOT_URI) if fmt == "sarif" else res.out
    golden = GOLDEN / f"check.{fmt}.{FORMATS[fmt]}"
    if os.environ.get("WHEELDOC_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(out, encoding="utf-8")
    assert out == golden.read_text(encoding="utf-8")


def test_goldens_are_valid():
    """The committed goldens themselves validate (so a regenerated golden cannot be broken)."""
    import jsonschema

    jsonschema.Draft202012Validator(report_schema()).validate(
        json.loads((GOLDEN / "check.json.json").read_text()))
    sarif_validator().validate(json.loads((GOLDEN / "check.sarif.sarif").read_text()))

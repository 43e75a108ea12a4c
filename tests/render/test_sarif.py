"""SARIF: relative URIs under %SRCROOT%, partialFingerprints that survive line moves, a
helpUri per rule that points at a committed page of docs/rules/."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import ROOT
from tests.render.test_render import sample_report, sarif_validator
from wheeldoc.render import sarif as render_sarif

STORY = ROOT / "fixtures/dockerfiles/rules/wd401-story.Dockerfile"


def _run(cli, *paths, cwd=None) -> dict:
    res = cli("check", *map(str, paths), "--output-format", "sarif", cwd=cwd)
    doc = json.loads(res.out)
    sarif_validator().validate(doc)
    return doc["runs"][0]


def test_uris_are_relative_to_srcroot(cli, tmp_path):
    outside = tmp_path / "Dockerfile"
    outside.write_text(STORY.read_text())
    run = _run(cli, "fixtures/dockerfiles/rules/wd401-story.Dockerfile", outside)
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": ROOT.as_uri() + "/"}}
    locs = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]
    assert {"uri": "fixtures/dockerfiles/rules/wd401-story.Dockerfile", "uriBaseId": "%SRCROOT%"} in locs
    assert {"uri": outside.as_uri()} in locs  # outside the working directory: absolute, no base
    change = run["results"][0]["fixes"][0]["artifactChanges"][0]["artifactLocation"]
    assert "uriBaseId" in change or change["uri"].startswith("file://")


def test_absolute_path_under_the_root_becomes_relative(cli):
    run = _run(cli, STORY)  # given absolute, lies under the working directory
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] == \
        {"uri": "fixtures/dockerfiles/rules/wd401-story.Dockerfile", "uriBaseId": "%SRCROOT%"}


def test_uri_is_percent_encoded(tmp_path):
    loc = render_sarif.artifact_location("dir with space/a#b.txt", tmp_path)
    assert loc == {"uri": "dir%20with%20space/a%23b.txt", "uriBaseId": "%SRCROOT%"}
    assert render_sarif.artifact_location("../x", tmp_path / "sub") == {"uri": (tmp_path / "x").as_uri()}


def _fingerprints(run) -> list[str]:
    return [r["partialFingerprints"]["wheeldoc/v1"] for r in run["results"]]


def test_fingerprints_survive_runs_and_line_moves(cli, tmp_path):
    a = tmp_path / "a" / "Dockerfile"
    a.parent.mkdir()
    a.write_text(STORY.read_text())
    first = _run(cli, "Dockerfile", cwd=a.parent)
    assert _fingerprints(first) == _fingerprints(_run(cli, "Dockerfile", cwd=a.parent))
    assert _fingerprints(first) == _fingerprints(_run(cli, "./Dockerfile", cwd=a.parent))
    # five lines inserted above everything: every line number (and "(line 14)" in the message) moves
    a.write_text("# a\n# b\n# c\n# d\n# e\n" + STORY.read_text())
    moved = _run(cli, "Dockerfile", cwd=a.parent)
    assert moved["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] == \
        first["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] + 5
    assert "(line 19)" in moved["results"][0]["message"]["text"]
    assert _fingerprints(moved) == _fingerprints(first)
    # what the finding says changes: a new alert
    a.write_text(STORY.read_text().replace("UV_HTTP_TIMEOUT=600", "UV_HTTP_TIMEOUT=900"))
    assert _fingerprints(_run(cli, "Dockerfile", cwd=a.parent)) != _fingerprints(first)


def test_fingerprints_differ_per_finding():
    doc = json.loads(render_sarif.render(sample_report(), "warning"))
    fps = _fingerprints(doc["runs"][0])
    assert len(set(fps)) == len(fps) == 3 and all(len(f) == 64 for f in fps)


def test_help_uri_points_at_a_committed_rule_page(cli):
    run = _run(cli, STORY, "fixtures/story")
    rules = run["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} == {"WD101", "WD401"}
    for r in rules:
        assert r["helpUri"] == render_sarif.RULE_DOCS_URL.format(code=r["id"])
        rel = r["helpUri"].split("/blob/main/", 1)[1]
        assert (ROOT / rel).is_file(), rel

"""Requirements files as users write them: inputs that are not locks, unpinned lines (no finding
is ever built from a missing version), and `-r` / `-c` includes followed inside the project."""

from __future__ import annotations

from pathlib import Path

import pytest

from wheeldoc.lockfile.requirements import MAX_INCLUDE_DEPTH, MAX_INCLUDED_FILES


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def findings(cli, *argv, cwd):
    res = cli("check", *argv, "--format", "json", cwd=cwd)
    return res, res.json()["findings"]


# -- inputs, not locks ---------------------------------------------------------------------------
@pytest.mark.parametrize("name,hint", [("requirements.in", "uv pip compile requirements.in -o requirements.txt"),
                                       ("pyproject.toml", "its uv.lock (`uv lock`)")])
def test_an_input_is_not_reported_as_clean(cli, tmp_path, name, hint):
    text = "torch==2.10.0+cpu\nvllm\n" if name.endswith(".in") else \
        '[project]\nname = "x"\nversion = "1"\ndependencies = ["torch==2.10.0+cpu"]\n'
    root = project(tmp_path, {name: text})
    res, found = findings(cli, name, "--gpu", "h200", cwd=root)
    assert res.code == 1 and [f["rule"] for f in found] == ["WD002"]
    msg = found[0]["message"]
    assert f"{name} is an input, not a lock" in msg and f"wheeldoc check --resolve {name}" in msg and hint in msg
    text_out = cli("check", name, cwd=root).out
    assert "No findings" not in text_out and "is an input, not a lock" in text_out


# -- unpinned requirements -----------------------------------------------------------------------
@pytest.mark.parametrize("line", ["torch", "torch>=2.9", "torch[opt]", "torch ; sys_platform == 'linux'"])
def test_an_unpinned_torch_yields_no_build_finding(cli, tmp_path, line):
    root = project(tmp_path, {"requirements.txt": f"vllm==0.11.0\n{line}\ntorchvision\n"})
    res, found = findings(cli, "requirements.txt", "--gpu", "gb10", "--driver", "580", cwd=root)
    assert [f["rule"] for f in found] == ["WD002"], [f["message"] for f in found]
    assert found[0]["line"] == 2
    assert "2 requirements not pinned to a version (torch, torchvision)" in found[0]["message"]
    for f in found:
        assert "==+" not in str(f) and "None" not in f["message"] and "  " not in f["message"]


def test_a_pinned_torch_beside_an_unpinned_companion(cli, tmp_path):
    """torch 2.14 pinned, torchvision open: no 'torchvision  belongs to another release' (WD103)."""
    root = project(tmp_path, {"requirements.txt": "torch==2.14.1+cu130\ntorchvision\n"})
    res, found = findings(cli, "requirements.txt", "--gpu", "h200", cwd=root)
    assert [f["rule"] for f in found] == ["WD002"]


def test_the_lockfile_facts_hold_no_versionless_entry():
    from wheeldoc.core.target import build_target
    from wheeldoc.lockfile.facts import LockFacts
    from wheeldoc.lockfile.requirements import parse_requirements

    lock = parse_requirements("r.txt", "torch\ntorchvision==0.29.1\nnvidia-cublas\n")
    facts = LockFacts(lock, build_target(gpu="gb10"))
    assert [p.name for p in facts.packages] == ["torchvision"]
    assert facts.get("torch") == () and [p.name for p in facts.unpinned] == ["torch", "nvidia-cublas"]
    assert all(p.version for p, _ in facts.torch_family())


# -- -r / -c includes ----------------------------------------------------------------------------
def test_includes_are_followed_with_their_own_file_and_line(cli, tmp_path):
    root = project(tmp_path, {
        "requirements.txt": "-r requirements/base.txt\nvllm==0.11.0\n",
        "requirements/base.txt": "# shared\n-r common.txt\n",
        "requirements/common.txt": "numpy==2.0\ntorch==2.10.0+cpu\n",
    })
    res, found = findings(cli, "requirements.txt", "--gpu", "h200", cwd=root)
    wd101 = [f for f in found if f["rule"] == "WD101"]
    assert len(wd101) == 1 and wd101[0]["path"] == "requirements/common.txt"
    assert wd101[0]["line"] == 2 and res.code == 1
    text = cli("check", "requirements.txt", "--gpu", "h200", cwd=root).out
    assert "requirements/common.txt:2: WD101" in text


def test_a_constraint_pins_what_the_requirement_leaves_open(cli, tmp_path):
    root = project(tmp_path, {
        "requirements.txt": "-c constraints.txt\ntorch\nvllm==0.11.0\n",
        "constraints.txt": "torch==2.10.0+cpu\nnumpy==1.0+cpu\n",
    })
    res, found = findings(cli, "requirements.txt", "--gpu", "h200", cwd=root)
    assert [(f["rule"], f["path"], f["line"]) for f in found] == \
        [("WD101", "constraints.txt", 1)]
    assert found[0]["data"]["package"] == "torch"


@pytest.mark.parametrize("include,why", [
    ("-r ../outside.txt", "outside the project folder"),
    ("-r https://example.invalid/r.txt", "only files inside the project"),
    ("-r missing.txt", "not read: cannot read"),
    ("--requirement=missing.txt", "not read: cannot read"),
])
def test_an_include_not_followed_is_a_skip_with_its_line(cli, tmp_path, include, why):
    (tmp_path / "outside.txt").write_text("torch==2.10.0+cpu\n")
    root = project(tmp_path / "proj", {"requirements.txt": f"numpy==2.0\n{include}\n"})
    res, found = findings(cli, "requirements.txt", "--gpu", "h200", cwd=root)
    assert [f["rule"] for f in found] == ["WD002"] and why in found[0]["message"]
    assert (found[0]["path"], found[0]["line"]) == ("requirements.txt", 2)


def test_cycles_and_limits_are_bounded(cli, tmp_path):
    files = {"requirements.txt": "-r a.txt\n", "a.txt": "-r requirements.txt\n-r a.txt\nnumpy==2.0\n"}
    n = MAX_INCLUDE_DEPTH + 2
    files["requirements.txt"] += "-r d0.txt\n"
    for i in range(n):
        files[f"d{i}.txt"] = f"-r d{i + 1}.txt\n" if i + 1 < n else "torch==2.10.0+cpu\n"
    root = project(tmp_path, files)
    res, found = findings(cli, "requirements.txt", "--gpu", "h200", cwd=root)
    skips = [f for f in found if f["rule"] == "WD002"]
    assert len(skips) == 1 and "more than" in skips[0]["message"]
    assert not any(f["rule"] == "WD101" for f in found)  # the file past the limit was not read
    many = {"requirements.txt": "".join(f"-r m{i}.txt\n" for i in range(MAX_INCLUDED_FILES + 3))}
    many.update({f"m{i}.txt": f"pkg{i}==1.0\n" for i in range(MAX_INCLUDED_FILES + 3)})
    res, found = findings(cli, "requirements.txt", cwd=project(tmp_path / "many", many))
    assert len([f for f in found if f["rule"] == "WD002"]) == 3

"""The GitHub Action (action.yml) run locally: scripts/action_run.sh with GitHub's variables
faked (RUNNER_TEMP, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) on fixtures; its outputs, the SARIF file
and the exit codes it passes on. The fast tests point WHEELDOC_ACTION_EXE at this environment's
wheeldoc; the slow one installs the action's checkout with uv, as the action does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wheeldoc import __version__

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "action_run.sh"
STORY = "fixtures/story/requirements.txt"
CLEAN = "fixtures/locks/clean/ok-uv-project-cu130/uv.lock"
ARCH = "fixtures/dockerfiles/rules/wd406-arch-lists.Dockerfile"
EXE = str(Path(sys.executable).parent / "wheeldoc")


def _supports_github_format() -> bool:
    out = subprocess.run([EXE, "check", "--help"], capture_output=True, text=True).stdout
    return "--output-format" in out and "github" in out


def run_action(tmp_path: Path, *, install: bool = False, **inputs: str):
    """Run the script as action.yml does; returns (rc, stdout, stderr, outputs, summary)."""
    temp = tmp_path / "runner-temp"
    temp.mkdir(exist_ok=True)
    out_file, summary = tmp_path / "github-output", tmp_path / "step-summary"
    out_file.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WD_", "GITHUB_", "VIRTUAL_ENV"))}
    env.update({"RUNNER_TEMP": str(temp), "GITHUB_OUTPUT": str(out_file), "GITHUB_STEP_SUMMARY": str(summary),
                "WD_ACTION_PATH": str(ROOT), "NO_COLOR": "1"})
    if not install:
        env["WHEELDOC_ACTION_EXE"] = EXE
    env.update({"WD_" + k.upper(): v for k, v in inputs.items()})
    proc = subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    outputs = dict(line.split("=", 1) for line in out_file.read_text().splitlines() if "=" in line)
    return proc.returncode, proc.stdout, proc.stderr, outputs, summary.read_text() if summary.exists() else ""


def test_findings_give_exit_code_1_and_a_sarif_report(tmp_path):
    rc, out, err, outputs, summary = run_action(tmp_path, paths=STORY, sarif="true")
    assert rc == 0, out + err  # the step that runs wheeldoc succeeds: the upload must still run
    assert outputs["exit-code"] == "1" and outputs["version"] == __version__
    sarif = json.loads(Path(outputs["sarif-file"]).read_text())
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    assert any(r["ruleId"] == "WD101" for r in results), results
    assert "WD101" in out  # the log (annotations or text) shows it too
    assert f"### wheeldoc {__version__}" in summary and "findings at or above `warning`" in summary


def test_clean_input_gives_exit_code_0_and_no_sarif_unless_asked(tmp_path):
    rc, out, err, outputs, summary = run_action(tmp_path, paths=CLEAN)
    assert rc == 0 and outputs["exit-code"] == "0", out + err
    assert "sarif-file" not in outputs and not (tmp_path / "runner-temp" / "wheeldoc.sarif").exists()
    assert "no findings" in summary


@pytest.mark.slow
def test_fail_on_never_and_error(tmp_path):
    assert run_action(tmp_path, paths=STORY, fail_on="never")[3]["exit-code"] == "0"
    warning_only = "fixtures/dockerfiles/rules/wd401-story.Dockerfile"  # WD401, a warning
    assert run_action(tmp_path, paths=warning_only, fail_on="error")[3]["exit-code"] == "0"
    assert run_action(tmp_path, paths=warning_only)[3]["exit-code"] == "1"


@pytest.mark.slow
def test_target_inputs_reach_wheeldoc(tmp_path):
    _, out, _, outputs, _ = run_action(tmp_path, paths=ARCH)
    assert outputs["exit-code"] == "0" and "WD406" not in out
    _, out, _, outputs, _ = run_action(tmp_path, paths=ARCH, gpu="gb10", driver="580.95.05")
    assert outputs["exit-code"] == "1" and "WD406" in out


@pytest.mark.slow
def test_paths_one_per_line_and_extra_args(tmp_path):
    rc, out, err, outputs, _ = run_action(tmp_path, paths=f"\n  {STORY}\n{ARCH}  \n", gpu="gb10")
    assert outputs["exit-code"] == "1" and "WD101" in out and "WD406" in out, out + err
    _, out, _, outputs, _ = run_action(tmp_path, paths=f"{STORY} {ARCH}", gpu="gb10", args="--select WD4")
    assert outputs["exit-code"] == "1" and "WD406" in out and "WD101" not in out


def test_unreadable_input_gives_exit_code_2(tmp_path):
    rc, out, err, outputs, summary = run_action(tmp_path, paths="no/such/uv.lock", sarif="true")
    assert rc == 0 and outputs["exit-code"] == "2", out + err
    assert "an input or usage error" in summary


@pytest.mark.parametrize("inputs,message", [
    ({"fail_on": "sometimes"}, "fail-on must be error, warning, info or never"),
    ({"sarif": "yes"}, "sarif must be true or false"),
])
def test_bad_inputs_stop_the_step(tmp_path, inputs, message):
    rc, out, err, outputs, _ = run_action(tmp_path, paths=STORY, **inputs)
    assert rc == 2 and "exit-code" not in outputs
    assert f"::error title=wheeldoc action::{message}" in out


@pytest.mark.slow
def test_annotations_use_the_github_format_when_wheeldoc_has_it(tmp_path):
    _, out, err, outputs, _ = run_action(tmp_path, paths=STORY)
    assert outputs["exit-code"] == "1"
    if _supports_github_format():
        assert re.search(r"^::(error|warning) [^\n]*file=fixtures/story/requirements\.txt", out, re.M), out
    else:
        assert "has no --output-format github: printing the text report instead of annotations" in out
        assert "WD101" in out
    _, out, _, _, _ = run_action(tmp_path, paths=STORY, annotations="false")  # the text report
    assert "WD101" in out and "--output-format github" not in out and not re.search(r"^::", out, re.M)


def test_action_yml_maps_every_input_the_script_reads():
    yaml = pytest.importorskip("yaml")
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "wheeldoc")
    assert step["run"] == 'bash "$WD_ACTION_PATH/scripts/action_run.sh"'
    read = set(re.findall(r"\bWD_[A-Z_]+", SCRIPT.read_text()))
    assert read == set(step["env"]), (read ^ set(step["env"]))
    for name, expr in step["env"].items():
        m = re.fullmatch(r"\$\{\{ inputs\.([a-z-]+) \}\}", expr)
        if m:
            assert m.group(1) in action["inputs"], name
            assert name == "WD_" + m.group(1).upper().replace("-", "_")
    used = set(re.findall(r"inputs\.([a-z-]+)", (ROOT / "action.yml").read_text()))
    assert used == set(action["inputs"]), set(action["inputs"]) ^ used
    upload = next(s for s in action["runs"]["steps"] if "upload-sarif" in s.get("uses", ""))
    assert "steps.wheeldoc.outputs.sarif-file" in upload["with"]["sarif_file"]
    assert set(action["outputs"]) == {"exit-code", "sarif-file", "version"}


@pytest.mark.slow
def test_installs_the_actions_own_checkout_with_uv(tmp_path):
    if not shutil.which("uv"):
        pytest.skip("uv is not on PATH")
    rc, out, err, outputs, _ = run_action(tmp_path, install=True, paths=STORY, sarif="true")
    assert rc == 0, out + err
    assert outputs["version"] == __version__ and outputs["exit-code"] == "1"
    assert (tmp_path / "runner-temp" / "wheeldoc-action-venv" / "bin" / "wheeldoc").exists()
    assert Path(outputs["sarif-file"]).stat().st_size > 0

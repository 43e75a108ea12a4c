"""Partial results stay honest: when one library of a wheel, an environment or an image cannot
be read, the others are still analyzed, and the report names what was skipped and why.

The README's contract: exit 2 only for an input that could not be read (WD001); a part of an
input that could not be analyzed is a WD002 warning (exit 1 under the default `--fail-on
warning`, 0 under `--fail-on error`); a member the archive reader refused (traversal, absolute
name, symlink, bomb) is such a part too, never silently dropped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.robustness.hostile import Hostile, build

GPU = ("--gpu", "h200", "--driver", "580.95.05")
REPO = Path(__file__).resolve().parents[2]
REFUSED = {"../evil.so": "path traversal", "/abs/evil.so": "absolute path",
           "canary_pkg/link.so": "symlink entry", "canary_pkg/zeros.bin": "zip bomb"}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Hostile:
    return build(tmp_path_factory.mktemp("hostile"))


def wheeldoc(tmp: Path, *argv: str) -> tuple[int, dict, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "WHEELDOC_CACHE_DIR": str(tmp / "cache"), "NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-m", "wheeldoc", *argv, "--format", "json"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def wd002(report: dict) -> dict[str, str]:
    """Skipped part (member, else path) -> the WD002 message."""
    return {f.get("member") or f["path"]: f["message"] for f in report["findings"] if f["rule"] == "WD002"}


@pytest.mark.slow
def test_kernels_skips_the_unreadable_member_and_reads_the_rest(hostile, tmp_path):
    code, report, err = wheeldoc(tmp_path, "kernels", str(hostile.wheel), *GPU)
    skipped = wd002(report)
    assert "section header table" in skipped["canary_pkg/_broken.so"]
    for member, why in REFUSED.items():
        if member.endswith(".so"):  # kernels looks at libraries only; the bomb is a .bin
            assert why in skipped[member], member
    assert [lib["member"] for lib in report["libraries"]] == ["canary_pkg/libgpu.so"]
    assert report["summary"]["skipped"] == len(report["skipped"]) == 4
    assert code == 1 and not err  # warnings, not input errors
    assert wheeldoc(tmp_path, "kernels", str(hostile.wheel), *GPU, "--fail-on", "error")[0] == 0


@pytest.mark.slow
@pytest.mark.parametrize("verb", ["doctor", "image"])
def test_doctor_and_image_skip_the_unreadable_library_and_read_the_rest(hostile, tmp_path, verb):
    argv = ("doctor", "--site-packages", str(hostile.site)) if verb == "doctor" else ("image", str(hostile.image))
    code, report, err = wheeldoc(tmp_path, *argv, *GPU)
    skipped = wd002(report)
    (path,) = skipped
    assert path.endswith("canary_pkg/_broken.so") and "section header table" in skipped[path]
    env = report["environment"] if verb == "doctor" else report["environments"][0]["environment"]
    assert env["libraries_with_gpu_code"] == 1  # libgpu.so, read beside the broken one
    assert code == 1 and not err
    assert report["summary"]["exit_code"] == 1


def test_an_unreadable_input_given_by_name_is_exit_2(hostile, tmp_path):
    broken = REPO / "fixtures/kernels/broken/libmixed-truncated.so"
    code, report, err = wheeldoc(tmp_path, "kernels", str(broken), str(REPO / "fixtures/kernels/libmulti.so"), *GPU)
    assert code == 2 and [f["rule"] for f in report["findings"]].count("WD001") == 1
    assert len(report["libraries"]) == 1  # the readable input is still analyzed
    assert err.startswith(f"wheeldoc: error: {broken}: ")


# -- wheeldoc abi: reported in docs/robustness.md, fixed by the ABI analyzer's owner ------------


@pytest.mark.slow
def test_abi_unreadable_member_is_a_skipped_part_not_an_input_error(hostile, tmp_path):
    code, report, _ = wheeldoc(tmp_path, "abi", str(hostile.wheel), str(hostile.torch_wheel))
    rules = {f.get("member"): f["rule"] for f in report["findings"] if f["rule"] in ("WD001", "WD002")}
    assert rules.get("canary_pkg/_broken.so") == "WD002"
    assert code != 2  # not as if the wheel itself could not be read


@pytest.mark.slow
def test_abi_lists_the_members_the_wheel_reader_refused(hostile, tmp_path):
    _, report, _ = wheeldoc(tmp_path, "abi", str(hostile.wheel), str(hostile.torch_wheel))
    named = {f.get("member") for f in report["findings"]} | {s.get("member") for s in report["skipped"]}
    assert {"../evil.so", "/abs/evil.so", "canary_pkg/link.so"} <= named


def test_abi_gives_no_verdict_to_a_library_it_could_not_read(tmp_path):
    broken = REPO / "fixtures/abi/broken/dynsym_past_end.so"
    torch = REPO / "fixtures/abi/wheels/fake_torch-2.11.0+cpu-cp311-cp311-linux_x86_64.whl"
    code, report, _ = wheeldoc(tmp_path, "abi", str(broken), str(torch))
    assert code == 2 and any(f["rule"] == "WD001" for f in report["findings"])
    (ext,) = report["extensions"]
    assert ext["verdict"] == "unknown"  # no verdict for symbols it never read

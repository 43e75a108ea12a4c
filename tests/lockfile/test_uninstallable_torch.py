"""An environment whose torch the lock holds only as wheels for other platforms (a `+cu124` torch
on macOS) cannot be installed there (`uv sync` stops: no wheel for the current platform), so no
build of it is judged for that platform: one note instead of findings about a torch that never runs."""

from __future__ import annotations

from pathlib import Path

from wheeldoc.lockfile.environments import Environment, not_installable
from wheeldoc.lockfile.source import LockedPackage

ROOT = Path(__file__).resolve().parents[2]
STARTRAILS = ROOT / "fixtures" / "real" / "heldout5" / "locks" / "startrails" / "uv.lock"


def env_of(*packages: LockedPackage) -> Environment:
    return Environment("extra cu124", frozenset(), packages, {})


def torch(version: str, *wheels: str, sdist: str | None = None) -> LockedPackage:
    return LockedPackage(name="torch", version=version, line=None, wheels=wheels, sdist=sdist)


def test_a_torch_with_wheels_for_other_platforms_only():
    cu = torch("2.6.0+cu124", "https://download.pytorch.org/whl/cu124/torch-2.6.0%2Bcu124-cp311-cp311-linux_x86_64.whl",
               "https://download.pytorch.org/whl/cu124/torch-2.6.0%2Bcu124-cp311-cp311-win_amd64.whl")
    assert not_installable(env_of(cu), "macos-arm64") is cu
    assert not_installable(env_of(cu), "linux-x86_64") is None
    assert not_installable(env_of(cu), "linux-aarch64") is cu
    universal = torch("2.6.0", "torch-2.6.0-cp311-none-macosx_11_0_arm64.whl",
                      "torch-2.6.0-cp311-cp311-manylinux_2_28_aarch64.whl")
    assert not_installable(env_of(universal), "macos-arm64") is None
    assert not_installable(env_of(torch("2.6.0", "x-linux_x86_64.whl", sdist="torch-2.6.0.tar.gz")), "macos-arm64") is None
    other = LockedPackage(name="nvidia-nccl-cu12", version="2.27.3", line=None, wheels=("n-py3-none-manylinux2014_x86_64.whl",))
    # any package of the environment decides (held-out 9's text-to-lora: vllm-flash-attn has x86-64 wheels
    # only and no sdist, so `uv sync` on aarch64 stops there; its CPU torch is never installed)
    assert not_installable(env_of(other), "macos-arm64") is other
    assert not_installable(env_of(other), "linux-x86_64") is None


def test_the_check_notes_the_extras_it_cannot_install(cli):
    res = cli("check", str(STARTRAILS), "--platform", "macos-arm64", "--format", "json", "--fail-on", "never")
    assert res.code == 0, res.err
    report = res.json()
    assert not [f for f in report["findings"] if f["rule"].startswith("WD1") and f["severity"] != "info"]
    notes = [f["message"] for f in report["findings"] if f["rule"] == "WD002"]
    assert any("torch 2.6.0+cu124 has no wheel for macos-arm64" in n for n in notes)
    linux = cli("check", str(STARTRAILS), "--format", "json", "--fail-on", "never").json()
    assert [f for f in linux["findings"] if f["rule"] == "WD102"]  # on linux the mix is still found


EXPERIMENT = ROOT / "fixtures" / "real" / "heldout5" / "locks" / "the-experiment" / "uv.lock"


def test_an_untagged_torch_from_a_cuda_index_is_its_cpu_build(cli):
    # the cu124 index serves torch 2.5.1 / torchvision 0.20.1 for linux-aarch64 with no +cu124 tag and
    # no CUDA runtime dependency: its CPU builds; on x86-64 the same lock holds the +cu124 builds
    arm = cli("check", str(EXPERIMENT), "--platform", "linux-aarch64", "--format", "json", "--fail-on", "never").json()
    loud = [f for f in arm["findings"] if f["rule"].startswith("WD1") and f["severity"] != "info"]
    assert [(f["rule"], f["data"]["package"]) for f in loud] == [("WD101", "torch")]
    assert loud[0]["data"]["cpu_companions"] == ["torchvision"]
    x86 = cli("check", str(EXPERIMENT), "--format", "json", "--fail-on", "never").json()
    assert not [f for f in x86["findings"] if f["rule"].startswith("WD1") and f["severity"] != "info"]


def test_an_untagged_companion_edge_without_a_version(cli, tmp_path):
    # uv.lock names the torch version on an edge only when it holds several torch entries; with one
    # untagged CPU torch the edge is bare, and the companion built for it is still the CPU build
    text = EXPERIMENT.read_text()
    lock = tmp_path / "uv.lock"
    lock.write_text(text.replace('{ name = "torch", version = "2.5.1", source = { registry = '
                                 '"https://download.pytorch.org/whl/cu124" }, marker = "platform_machine == '
                                 "'aarch64' and sys_platform == 'linux'\" }",
                                 '{ name = "torch", marker = "platform_machine == \'aarch64\' and sys_platform '
                                 '== \'linux\'" }', 1))
    assert lock.read_text() != text
    arm = cli("check", str(lock), "--platform", "linux-aarch64", "--format", "json", "--fail-on", "never").json()
    loud = [f for f in arm["findings"] if f["rule"].startswith("WD1") and f["severity"] != "info"]
    assert [(f["rule"], f["data"]["package"]) for f in loud] == [("WD101", "torch")]
    assert loud[0]["data"]["cpu_companions"] == ["torchvision"]


def test_an_input_whose_environments_all_fail_to_install_is_still_listed(cli):
    # the-experiment's torch on macOS is the +cu124 build (wheels for linux and Windows only)
    report = cli("check", str(EXPERIMENT), "--platform", "macos-arm64", "--format", "json", "--fail-on", "never").json()
    assert [(e["input"], e["environments"]) for e in report["environments"]] == [(str(EXPERIMENT), [])]
    assert any("has no wheel for macos-arm64" in f["message"] for f in report["findings"] if f["rule"] == "WD002")

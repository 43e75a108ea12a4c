"""False positives found by the real-world precision scan (docs/real-world-precision-scan.md),
lockfile side. Minimal reductions written here (not copied); strict xfail until the rule is
fixed, each with a control that must keep its finding."""

from __future__ import annotations

from pathlib import Path

HEAD = 'version = 1\nrevision = 3\nrequires-python = "==3.12.*"\n'


def pkg(name: str, version: str, index: str = "https://pypi.org/simple", deps: tuple[str, ...] = (),
        cu13: tuple[str, ...] = ()) -> str:
    text = f'\n[[package]]\nname = "{name}"\nversion = "{version}"\nsource = {{ registry = "{index}" }}\n'
    if deps:
        text += "dependencies = [\n" + "".join(f'    {{ name = "{d}" }},\n' for d in deps) + "]\n"
    if cu13:
        text += "\n[package.optional-dependencies]\ncu13 = [\n" + "".join(f'    {{ name = "{d}" }},\n' for d in cu13) + "]\n"
    return text


def lock(*extra: str, cutlass: bool = True) -> str:
    """A project on torch 2.11.0+cu130 that installs nvidia-cutlass-dsl[cu13] as NVIDIA documents it:
    the package requires libs-cu12 always and adds libs-cu13 with its [cu13] extra."""
    deps = '    { name = "torch" },\n' + "".join(f'    {{ name = "{d}" }},\n' for d in extra)
    if cutlass:
        deps = '    { name = "nvidia-cutlass-dsl", extra = ["cu13"] },\n' + deps
    text = HEAD + f'\n[[package]]\nname = "demo"\nversion = "0.1.0"\nsource = {{ virtual = "." }}\ndependencies = [\n{deps}]\n'
    if cutlass:
        text += pkg("nvidia-cutlass-dsl", "4.6.0", deps=("nvidia-cutlass-dsl-libs-base", "nvidia-cutlass-dsl-libs-cu12"),
                    cu13=("nvidia-cutlass-dsl-libs-cu13",))
        text += pkg("nvidia-cutlass-dsl-libs-base", "4.6.0")
        text += pkg("nvidia-cutlass-dsl-libs-cu12", "4.6.0", deps=("nvidia-cutlass-dsl-libs-base",))
        text += pkg("nvidia-cutlass-dsl-libs-cu13", "4.6.0", deps=("nvidia-cutlass-dsl-libs-base",))
    for d in extra:
        text += pkg(d, "12.8.4.1")
    return text + pkg("torch", "2.11.0+cu130", index="https://download.pytorch.org/whl/cu130")


def loud(cli, tmp_path: Path, text: str) -> list[dict]:
    path = tmp_path / "uv.lock"
    path.write_text(text)
    res = cli("check", str(path), "--format", "json", "--fail-on", "never")
    assert res.code == 0, res.err
    return [f for f in res.json()["findings"] if f["rule"] == "WD102" and f["severity"] in ("warning", "error")]


def test_wd102_cutlass_dsl_libs_cu12_is_not_a_cuda12_runtime(cli, tmp_path: Path) -> None:
    """nvidia-cutlass-dsl 4.6.0's METADATA: Requires-Dist nvidia-cutlass-dsl-libs-cu12==4.6.0 (always)
    and nvidia-cutlass-dsl-libs-cu13==4.6.0; extra == "cu13". The two install side by side
    (nvidia_cutlass_dsl/cu12/, nvidia_cutlass_dsl/cu13/) and load no cuBLAS, cuDNN or cudart."""
    assert loud(cli, tmp_path, lock()) == []


def test_wd102_control_a_real_cuda12_library_beside_cu130_torch(cli, tmp_path: Path) -> None:
    """Control: nvidia-cublas-cu12 beside the same torch is a second cuBLAS, and stays an error."""
    assert loud(cli, tmp_path, lock("nvidia-cublas-cu12", cutlass=False))

"""`wheeldoc kernels` end to end on the committed fixtures (fixtures/kernels/, built with real
nvcc): listing parity with cuobjdump through the CLI, verdicts for an H200 with a CUDA 13.0
driver and a GB10 with 580.95.05 (expectations written by hand from the build recipe and the
H200 ground truth), JSON against the committed schema, broken inputs, partial results."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import ROOT, run_subprocess

K = "fixtures/kernels"
STORY = f"{K}/story/storyvllm-0.0.1+cu133-cp38-abi3-manylinux_2_28_x86_64.whl"
GB10 = ("--gpu", "gb10", "--driver", "580.95.05")
H200 = ("--gpu", "h200", "--driver", "13.0")
CUOBJDUMP = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" \
    / "site-packages" / "nvidia" / "cu13" / "bin" / "cuobjdump"
needs_cuobjdump = pytest.mark.skipif(not CUOBJDUMP.exists(), reason="nvidia-cuda-cuobjdump not installed")
VALIDATOR = jsonschema.Draft202012Validator(json.loads(
    resources.files("wheeldoc.render").joinpath("report.schema.json").read_text()))


def run_json(cli, *argv: str, cwd=None) -> dict:
    res = cli("kernels", *argv, "--format", "json", "--fail-on", "never", cwd=cwd)
    assert res.code in (0, 2), res.err
    doc = res.json()
    VALIDATOR.validate(doc)
    return doc


def loads(doc: dict) -> dict:
    """library short name -> (verdict, cuda_error, native, jit, fail)."""
    out = {}
    for lib in doc["libraries"]:
        load = lib["load"]
        n = load["counts"]
        out[lib["member"] or Path(lib["path"]).name] = (load["verdict"], load["cuda_error"],
                                                         n["native"], n["jit"], n["fail"])
    return out


def rules(doc: dict) -> set[tuple[str, str]]:
    return {(f["rule"], f["member"] or Path(f["path"]).name) for f in doc["findings"]}


def same_but_f_quirk(mine: list[str], theirs: list[str]) -> bool:
    return len(mine) == len(theirs) and all(
        a == b or re.sub(r"(\.sm_\d+)f\.cubin$", r"\1.cubin", a) == b for a, b in zip(mine, theirs))


# -- listing ----------------------------------------------------------------------------------

LISTED = ["libmixed.so", "libmulti.so", "libdebug.so", "libident.so", "concat-mixed.fatbin",
          "libnvlink.so", "sm_121f.cubin", "story/_vllm_fa2_C.abi3.so", "librdc.so", "libembedded.so"]


@needs_cuobjdump
@pytest.mark.parametrize("name", LISTED)
def test_list_is_cuobjdump_line_for_line(name, cli, tmp_path):
    path = str(ROOT / K / name)
    theirs = subprocess.run([str(CUOBJDUMP), "-lelf", "-lptx", path], capture_output=True,
                            text=True).stdout.splitlines()
    # from the repository root (pyproject.toml: the full report path) and from elsewhere (the
    # short path that races cuobjdump): same output, and cuobjdump's
    for cwd in (ROOT, tmp_path):
        res = cli("kernels", "--list", path, cwd=cwd)
        assert res.code == 0, res.err
        assert same_but_f_quirk(res.out.splitlines(), theirs), (cwd, res.out, theirs)


def test_list_json_entries_follow_the_manifest(cli):
    manifest = {m["file"]: m for m in json.loads((ROOT / K / "manifest.json").read_text())["fixtures"]}
    doc = run_json(cli, "--list", f"{K}/libmulti.so", f"{K}/abi7-lz4.fatbin", f"{K}/compute_90-isa9.5.ptx")
    by_lib: dict[str, list] = {}
    for e in doc["entries"]:
        by_lib.setdefault(e["library"], []).append(e)
    assert list(by_lib) == [f"{K}/libmulti.so", f"{K}/abi7-lz4.fatbin", f"{K}/compute_90-isa9.5.ptx"]
    for lib, entries in by_lib.items():
        fx = manifest[lib.split("/", 2)[2]]
        got = sorted(json.dumps([e["container"], e["kind"], e["arch"], e["ptx_isa"], e["compression"]])
                     for e in entries)
        want = sorted(json.dumps([i, x["kind"], x["arch"], x["ptx_isa"], x["compression"]])
                      for i, c in enumerate(fx["containers"]) for x in c)
        assert got == want, lib
        assert all(e["size"] > 0 for e in entries)
    assert doc["libraries"][0]["load"] is None and doc["findings"] == []


def test_list_of_a_wheel_reads_its_members(cli):
    """The wheel's members give the same listing as the same libraries on disk."""
    res = cli("kernels", "--list", STORY)
    blocks = {}
    for block in res.out.strip().split("\n\n"):
        head, *lines = block.splitlines()
        blocks[head] = lines
    assert res.code == 0 and list(blocks) == [
        "# storyvllm/_C.abi3.so", "# storyvllm/_gdn_C.abi3.so",
        "# storyvllm/vllm_flash_attn/_vllm_fa2_C.abi3.so"]
    for head, lines in blocks.items():
        alone = cli("kernels", "--list", f"{K}/story/{head.rsplit('/', 1)[1]}")
        assert lines == alone.out.splitlines()


def test_several_files_are_listed_in_blocks_and_host_only_ones_noted(cli, tmp_path):
    res = cli("kernels", "--list", str(ROOT / K / "fb-sm90.fatbin"), str(ROOT / K / "libhostonly.so"),
              str(ROOT / K / "sm_80.cubin"), cwd=tmp_path)
    assert res.code == 0
    assert res.out == ("# fb-sm90.fatbin\nELF file    1: fb-sm90.1.sm_90.cubin\n\n"
                       "# sm_80.cubin\nELF file    1: sm_80.sm_80.cubin\n")
    assert "libhostonly.so: no GPU code" in res.err


# -- verdicts ---------------------------------------------------------------------------------


def test_story_wheel_on_gb10_with_a_580_driver(cli):
    """Trap 3: the flash-attention library fails with 222, the main path loads sm_120."""
    doc = run_json(cli, STORY, *GB10)
    assert loads(doc) == {
        "storyvllm/_C.abi3.so": ("native", None, 1, 0, 0),
        "storyvllm/_gdn_C.abi3.so": ("jit", "CUDA_ERROR_NO_BINARY_FOR_GPU", 0, 1, 1),
        "storyvllm/vllm_flash_attn/_vllm_fa2_C.abi3.so":
            ("fail", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 0, 0, 2)}
    assert rules(doc) == {("WD302", "storyvllm/vllm_flash_attn/_vllm_fa2_C.abi3.so"),
                          ("WD303", "storyvllm/_gdn_C.abi3.so"), ("WD304", "storyvllm/_gdn_C.abi3.so"),
                          ("WD305", "storyvllm/_gdn_C.abi3.so")}
    wd302 = next(f for f in doc["findings"] if f["rule"] == "WD302")
    assert wd302["data"]["gpu"] == "sm_121" and wd302["data"]["verdict"] == "fail"
    assert wd302["data"]["cuda_error"] == "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"
    assert wd302["data"]["counts"] == {"containers": 2, "native": 0, "jit": 0, "fail": 2,
                                       "errors": {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION": 2}}
    assert wd302["data"]["ptx_isa_needed"] == "9.5" and wd302["data"]["cuda_needed"] == "13.5"
    assert "CUDA ≤ 13.0" in wd302["fix"]["title"] and "sm_121" in wd302["fix"]["title"]
    assert wd302["path"] == STORY and wd302["section"] == ".nv_fatbin"
    assert doc["summary"]["error"] == 1


def test_story_wheel_on_an_h200_with_a_13_0_driver(cli):
    doc = run_json(cli, STORY, *H200)
    assert loads(doc) == {
        "storyvllm/_C.abi3.so": ("native", None, 1, 0, 0),
        "storyvllm/_gdn_C.abi3.so": ("native+jit", None, 1, 1, 0),
        "storyvllm/vllm_flash_attn/_vllm_fa2_C.abi3.so":
            ("fail", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 0, 0, 2)}  # as measured on the H200
    assert rules(doc) == {("WD302", "storyvllm/vllm_flash_attn/_vllm_fa2_C.abi3.so")}
    chosen = {c["entry"] for lib in doc["libraries"] for c in lib["load"]["containers"]}
    assert chosen == {"sm_90", "sm_90a", "compute_80 PTX 9.0", "compute_80 PTX 9.5"}


@pytest.mark.parametrize("argv,want", [
    # fixture -> (verdict, error, native, jit, fail) for an H200 + CUDA 13.0 driver
    ((f"{K}/libmixed.so",), ("native", None, 1, 0, 0)),
    ((f"{K}/libmulti.so",), ("native", "CUDA_ERROR_NO_BINARY_FOR_GPU", 2, 0, 1)),
    ((f"{K}/libnvlink.so",), ("jit", "CUDA_ERROR_NO_BINARY_FOR_GPU", 0, 1, 1)),
    ((f"{K}/libptxonly.so",), ("jit", None, 0, 1, 0)),  # the empty nvlink container is not counted
    ((f"{K}/libconcat.so",), ("fail", "CUDA_ERROR_NO_BINARY_FOR_GPU", 0, 0, 1)),
    ((f"{K}/libisa95.so",), ("native", None, 1, 0, 0)),
    ((f"{K}/libptx95only.so",), ("fail", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 0, 0, 1)),
    ((f"{K}/compute_120f-isa9.0.ptx",), ("fail", "CUDA_ERROR_INVALID_PTX", 0, 0, 1)),
    ((f"{K}/fb-ptx90-ptx90a.fatbin",), ("jit", None, 0, 1, 0)),
    ((f"{K}/two-containers.fatbin",), ("native", "CUDA_ERROR_NO_BINARY_FOR_GPU", 1, 0, 1)),
])
def test_h200_verdicts(cli, argv, want):
    (got,) = loads(run_json(cli, *argv, *H200)).values()
    assert got == want


@pytest.mark.parametrize("argv,want", [
    ((f"{K}/libmixed.so",), ("native", None, 1, 0, 0)),
    ((f"{K}/libmulti.so",), ("jit", "CUDA_ERROR_NO_BINARY_FOR_GPU", 0, 2, 1)),
    ((f"{K}/libisa95.so",), ("fail", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 0, 0, 1)),
    ((f"{K}/concat-mixed.fatbin",), ("native", None, 1, 0, 0)),  # sm_120f sits outside the concat
    ((f"{K}/sm_121a.cubin",), ("native", None, 1, 0, 0)),
    ((f"{K}/fb-sm100a-sm120-ptx120.fatbin",), ("native", None, 1, 0, 0)),
    ((f"{K}/compute_120f-isa9.0.ptx",), ("jit", None, 0, 1, 0)),
])
def test_gb10_verdicts(cli, argv, want):
    (got,) = loads(run_json(cli, *argv, *GB10)).values()
    assert got == want


def test_chosen_entries_per_container(cli):
    doc = run_json(cli, f"{K}/libmixed.so", "--gpu", "gb10", "--driver", "13.0")
    assert [c["entry"] for c in doc["libraries"][0]["load"]["containers"]] == ["sm_121a"]
    doc = run_json(cli, f"{K}/libmixed.so", "--gpu", "rtx5090", "--driver", "13.0")
    assert [c["entry"] for c in doc["libraries"][0]["load"]["containers"]] == ["sm_120f"]


def test_gpu_without_driver_assumes_a_new_enough_one_and_says_so(cli):
    res = cli("kernels", STORY, "--gpu", "gb10")
    assert "no --driver given: PTX is assumed to JIT" in res.out
    assert "ISA 9.5, which needs a driver for CUDA 13.5 or newer" in res.out
    doc = run_json(cli, STORY, "--gpu", "gb10")
    assert doc["target"]["driver"] is None
    assert "WD302" not in {r for r, _ in rules(doc)}
    fa2 = next(f for f in doc["findings"] if f["rule"] == "WD303" and "fa2" in f["member"])
    assert "assuming a driver that JIT-compiles PTX 9.5" in fa2["message"]


# -- coverage ---------------------------------------------------------------------------------


def test_default_view_is_the_coverage_table(cli):
    doc = run_json(cli, STORY, "--driver", "580.95.05")
    cov = doc["coverage"]
    assert cov["archs"] == ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_103", "sm_110",
                            "sm_120", "sm_121"]
    assert cov["highlight"] is None and cov["driver_assumed"] is False
    modes = {c["library"].rsplit("/", 1)[1]: [c["cells"][a]["mode"] for a in cov["archs"]]
             for c in cov["libraries"]}
    assert modes == {
        "_C.abi3.so": ["native"] * 6 + ["none", "native", "native"],
        "_gdn_C.abi3.so": ["native"] * 3 + ["native+jit"] * 2 + ["jit"] * 4,
        "_vllm_fa2_C.abi3.so": ["native"] * 3 + ["ptx-too-new", "native"] + ["ptx-too-new"] * 4}
    assert doc["findings"] == [] and all(lib["load"] is None for lib in doc["libraries"])
    text = cli("kernels", STORY, "--driver", "580.95.05").out
    assert "Coverage: which GPU architectures can run each library" in text
    assert re.search(r"vllm_flash_attn/_vllm_fa2_C\.abi3\.so +native +native +native +PTX>drv", text)


def test_coverage_highlights_the_target_and_adds_its_arch(cli):
    doc = run_json(cli, f"{K}/libmixed.so", "--gpu", "sm_87", "--driver", "13.0", "--coverage")
    assert doc["coverage"]["highlight"] == "sm_87"
    assert doc["coverage"]["archs"][:4] == ["sm_80", "sm_86", "sm_87", "sm_89"]
    text = cli("kernels", f"{K}/libmixed.so", "--gpu", "sm_87", "--coverage").out
    assert "[sm_87]" in text and "GPU code on sm_87" in text


def test_coverage_renders_with_rich_on_a_terminal(cli):
    res = cli("kernels", STORY, "--gpu", "gb10", "--driver", "580.95.05", "--coverage",
              "--color", "always")
    assert "\x1b[" in res.out and "PTX>drv" in res.out and "storyvllm/_C.abi3.so" in res.out


# -- inputs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name,offset", [("truncated.fatbin", 0x8), ("bad-magic.fatbin", 0x0),
                                         ("huge-payload.fatbin", 0x18),
                                         ("libmixed-huge-container.so", None)])
def test_broken_input_exits_2_with_one_line_naming_file_and_offset(cli, name, offset):
    path = f"{K}/broken/{name}"
    for argv in (("--list", path), (path, *GB10), (path, "--format", "json")):
        res = cli("kernels", *argv)
        assert res.code == 2, (argv, res.err)
        lines = res.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"wheeldoc: error: {path}: "), res.err
        assert re.search(r"\(at offset 0x[0-9a-f]+\)$", lines[0]), lines[0]
        if offset is not None:
            assert lines[0].endswith(f"(at offset {offset:#x})")


def test_missing_input_is_an_input_error(cli):
    res = cli("kernels", "no/such/lib.so", "--gpu", "h200")
    assert res.code == 2 and "no/such/lib.so: no such file or directory" in res.err


def test_directory_with_one_unreadable_library_analyzes_the_others(cli, tmp_path):
    lib = tmp_path / "site-packages" / "pkg"
    lib.mkdir(parents=True)
    shutil.copy(ROOT / K / "libmixed.so", lib / "libmixed.so.1")
    shutil.copy(ROOT / K / "story" / "_C.abi3.so", lib / "_C.abi3.so")
    shutil.copy(ROOT / K / "broken" / "libmixed-truncated.so", lib / "_broken.so")
    shutil.copy(ROOT / K / "libhostonly.so", lib / "libhost.so")
    (lib / "libmixed.so").symlink_to("libmixed.so.1")
    (lib / "libc.so").write_text("/* GNU ld script */\nGROUP ( libc.so.6 )\n")
    (lib / "notes.txt").write_text("not a library")
    doc = run_json(cli, str(tmp_path / "site-packages"), *GB10)
    assert doc["summary"]["exit_code"] == 0 and doc["summary"]["skipped"] == 1
    assert [Path(lib["path"]).name for lib in doc["libraries"]] == ["_C.abi3.so", "libmixed.so.1"]
    (skip,) = doc["skipped"]
    assert skip["path"].endswith("_broken.so") and "offset 0x" in skip["reason"]
    wd002 = [f for f in doc["findings"] if f["rule"] == "WD002"]
    assert len(wd002) == 1 and wd002[0]["path"].endswith("_broken.so")
    res = cli("kernels", str(tmp_path / "site-packages"), *GB10)
    assert res.code == 1 and "WD002" in res.out  # the skip is a warning: it counts


def test_wheel_is_read_in_place_and_its_headers_cached(cli, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(cache))
    from wheeldoc.kernels import facts

    monkeypatch.setattr(facts, "CACHE_MIN_MEMBER", 0)  # the story's members are small
    (tmp_path / "w").mkdir()
    wheel = tmp_path / "w" / Path(STORY).name
    shutil.copy(ROOT / STORY, wheel)
    first = run_json(cli, str(wheel), *GB10, cwd=tmp_path / "w")
    assert [p.name for p in (tmp_path / "w").iterdir()] == [wheel.name]  # nothing extracted
    assert len(list((cache / "fatbin-headers").rglob("*.1-*"))) == 3  # one per library member
    # a verdict may need the containers kept in data sections: they were searched while each
    # member was open for its headers (no second inflation), and cached beside them
    assert len(list((cache / "fatbin-embedded").rglob("*.1-*"))) == 3
    from wheeldoc.binary.members import WheelArchive

    real_open = WheelArchive.open

    def no_reading(self, name):
        assert not name.endswith(".so"), f"{name} read again despite the cache"
        return real_open(self, name)

    monkeypatch.setattr(WheelArchive, "open", no_reading)
    second = run_json(cli, str(wheel), *GB10, cwd=tmp_path / "w")
    assert second == first


def test_broken_member_in_a_wheel_is_skipped_and_the_others_analyzed(cli, tmp_path):
    from tests.wheelfactory import WheelSpec, wheel_bytes

    files = {"pkg/_ok.so": (ROOT / K / "libmixed.so").read_bytes(),
             "pkg/_bad.so": (ROOT / K / "broken" / "libmixed-huge-container.so").read_bytes()}
    spec = WheelSpec("pkg", "1.0", platform="manylinux_2_28_x86_64", python_tag="cp312",
                     abi_tag="cp312", files=files)
    wheel = tmp_path / spec.filename
    wheel.write_bytes(wheel_bytes(spec))
    doc = run_json(cli, str(wheel), *H200)
    assert [lib["member"] for lib in doc["libraries"]] == ["pkg/_ok.so"]
    assert [(s["member"], "declares" in s["reason"]) for s in doc["skipped"]] == [("pkg/_bad.so", True)]
    assert doc["summary"]["warning"] == 1 and doc["findings"][0]["rule"] == "WD002"
    assert cli("kernels", str(wheel), *H200).code == 1


def test_host_only_library_has_no_gpu_code(cli):
    doc = run_json(cli, f"{K}/libhostonly.so", *GB10)
    assert doc["libraries"] == [] and doc["findings"] == []
    assert "no GPU code in: fixtures/kernels/libhostonly.so" in cli("kernels", f"{K}/libhostonly.so", *GB10).out


def test_sarif_output(cli):
    res = cli("kernels", STORY, *GB10, "--format", "sarif")
    doc = json.loads(res.out)
    assert res.code == 1
    assert {r["ruleId"] for r in doc["runs"][0]["results"]} == {"WD302", "WD303", "WD304", "WD305"}


def test_real_interpreter_runs_the_fast_listing(tmp_path):
    env_lib = str(ROOT / K / "libmulti.so")
    res = run_subprocess("kernels", "--list", env_lib, cwd=tmp_path)
    assert res.code == 0 and res.out.splitlines()[0] == "ELF file    1: libmulti.1.sm_90a.cubin"
    assert os.path.isfile(env_lib)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_command_ends_its_quick_listing_with_everything_written(fmt, cli, tmp_path):
    """Run as a command (`main()` without arguments), the quick listing ends the process itself
    (cli._end, no interpreter teardown): stdout and stderr, block-buffered into pipes here, arrive
    whole, with the exit code, as in-process."""
    argv = ["kernels", "--list", "--format", fmt, str(ROOT / K / "libhostonly.so"),
            str(ROOT / K / "libmulti.so")]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    proc = subprocess.run([sys.executable, "-m", "wheeldoc", *argv], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120)
    inside = cli(*argv, cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (inside.code, inside.out, inside.err)
    assert proc.returncode == 0 and "libmulti" in proc.stdout
    assert "libhostonly.so: no GPU code" in proc.stderr or fmt == "json"


@pytest.mark.parametrize("argv,rule,words", [
    ((f"{K}/fb-sm86.fatbin", *GB10), "WD301",
     "its only container has no code sm_121 can run: it carries cubin sm_86; launching any of its "
     "kernels fails with CUDA_ERROR_NO_BINARY_FOR_GPU (209)"),
    ((f"{K}/fb-sm90a.fatbin", *GB10), "WD308",
     "its code is built only for sm_90a (h100, h200, gh200): the feature it implements has no "
     "code for sm_121. Importing it succeeds"),
    ((f"{K}/compute_120-isa9.5.ptx", "--gpu", "h200", "--driver", "580.95.05"), "WD302",
     "A newer driver would not help: with one for CUDA 13.5 the load then fails with "
     "CUDA_ERROR_INVALID_PTX (218), because PTX for compute_120 cannot be compiled for sm_90 | "
     "fix: Rebuild as an sm_90 cubin"),
    ((f"{K}/libmulti.so", "--gpu", "sm_75", "--driver", "13.0"), "WD301",
     "none of its 3 containers has code sm_75 can run"),
    ((f"{K}/story/_vllm_fa2_C.abi3.so", *GB10), "WD302",
     "both containers can only JIT compute_80 PTX 9.5 ×2, PTX from CUDA 13.5 or newer; driver "
     "580.95.05 (CUDA 13.0) JIT-compiles PTX up to ISA 9.0, so launching its kernels fails with "
     "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)"),
    ((f"{K}/libptx95only.so", "--gpu", "b200", "--driver", "590.44.01"), "WD302",
     "upgrade to a driver for CUDA 13.5 or newer"),
    ((f"{K}/story/_gdn_C.abi3.so", *GB10), "WD304", "the fast path does not exist on your GPU"),
    ((f"{K}/story/_gdn_C.abi3.so", *GB10), "WD305", "the other 1 loads (native 0, jit 1)"),
    ((f"{K}/libconcat.so", *H200), "WD306", "keeps sm_90, sm_80 inside --concat entries"),
])
def test_messages_state_the_facts(cli, argv, rule, words):
    doc = run_json(cli, *argv)
    texts = [f["message"] + " | fix: " + (f["fix"] or {}).get("title", "") for f in doc["findings"]
             if f["rule"] == rule]
    assert texts and any(words in t for t in texts), texts


def test_ptx_too_new_names_the_driver_that_would_fix_it(cli):
    """PTX 9.3 (the story's CUDA 13.3) on a 580 driver: the fix names CUDA 13.3's minimum driver."""
    doc = run_json(cli, f"{K}/fb-ptx80v91.fatbin", "--gpu", "h200", "--driver", "580.95.05")
    (f,) = [f for f in doc["findings"] if f["rule"] == "WD302"]
    assert f["data"]["cuda_needed"] == "13.1"
    assert f["fix"]["title"] == ("Rebuild with CUDA ≤ 13.0 or with an sm_90 cubin; or "
                                 "upgrade to a driver for CUDA 13.1 or newer (≥ 590.44.01)")
    assert [c["loads"] for c in f["data"]["fixes_checked"]] == [True, True, True]


def test_a_driver_upgrade_that_cannot_work_is_never_proposed(cli):
    """PTX 9.5 text for compute_120 on an H200: the 13.0 driver rejects its .version (222);
    a 13.5 driver would read it and then fail with 218 (the H200 cannot run compute_120 code,
    docs/kernels-groundtruth.md), so the upgrade is checked, found not to load, and left out."""
    doc = run_json(cli, f"{K}/compute_120-isa9.5.ptx", "--gpu", "h200", "--driver", "580.95.05")
    (f,) = [f for f in doc["findings"] if f["rule"] == "WD302"]
    assert "upgrade" not in f["fix"]["title"].lower()
    by_fix = {c["fix"]: (c["loads"], c["then"]) for c in f["data"]["fixes_checked"]}
    assert by_fix["driver for CUDA 13.5"] == (False, ["CUDA_ERROR_INVALID_PTX"])
    assert by_fix["add an sm_90 cubin"] == (True, [])
    # and the model agrees: with the 13.5 driver applied, the file gives 218
    res = run_json(cli, f"{K}/compute_120-isa9.5.ptx", "--gpu", "h200", "--driver", "13.5")
    assert [lib["load"]["cuda_error"] for lib in res["libraries"]] == ["CUDA_ERROR_INVALID_PTX"]


@pytest.mark.slow
@needs_cuobjdump
def test_cublas_wheel_read_in_place(cli):
    """The real cuBLAS wheel: libcublasLt.so.13 listed from the zip equals cuobjdump on the
    extracted file, and a GB10 loads natively exactly the containers that hold an sm_12x cubin."""
    from tests.kernels.test_fatbin import extract_member
    from wheeldoc.kernels.fatbin import open_fatbin

    wheels = sorted(Path("/opt/pypi-more/files").glob("nvidia_cublas-13*.whl"))
    if not wheels:
        pytest.skip("no local nvidia-cublas wheel")
    member = "nvidia/cu13/lib/libcublasLt.so.13"
    res = cli("kernels", "--list", str(wheels[0]))
    assert res.code == 0
    blocks = {b.splitlines()[0]: b.splitlines()[1:] for b in res.out.strip().split("\n\n")}
    lib = extract_member("nvidia_cublas-13*.whl", member)
    theirs = subprocess.run([str(CUOBJDUMP), "-lelf", "-lptx", str(lib)], capture_output=True,
                            text=True).stdout.splitlines()
    assert same_but_f_quirk(blocks[f"# {member}"], theirs) and len(theirs) > 5000
    doc = run_json(cli, str(wheels[0]), *GB10)
    (lt,) = [x for x in doc["libraries"] if x["member"] == member]
    containers = [c for c in open_fatbin(lib).containers if c.entries]
    sm12 = sum(any(e.kind == "cubin" and e.sm in (120, 121) and e.suffix != "a" for e in c.entries)
               or any(e.kind == "cubin" and e.arch == "sm_121a" for e in c.entries)
               for c in containers)
    n = lt["load"]["counts"]
    assert n["containers"] == len(containers) and n["native"] == sm12 > 1000
    assert n["native"] + n["jit"] + n["fail"] == len(containers)


def test_containers_kept_outside_nv_fatbin_are_found_when_it_has_nothing(cli):
    """libembedded.so: .nv_fatbin has an sm_75 cubin; two containers sit in .rodata (as in cuFFT)."""
    doc = run_json(cli, f"{K}/libembedded.so", *H200)
    (lib,) = doc["libraries"]
    assert lib["containers"] == 1 and lib["load"]["source"] == "embedded"
    assert lib["load"]["embedded_sections"] == [".rodata"]
    assert [c["entry"] for c in lib["load"]["containers"]] == ["sm_90", None]
    assert rules(doc) == {("WD307", "libembedded.so"), ("WD305", "libembedded.so")}
    t4 = run_json(cli, f"{K}/libembedded.so", "--gpu", "t4", "--driver", "13.0")
    assert t4["libraries"][0]["load"]["source"] == "nv_fatbin" and t4["findings"] == []
    cov = run_json(cli, f"{K}/libembedded.so", "--driver", "13.0")["coverage"]["libraries"][0]["cells"]
    assert [cov[a]["mode"] for a in ("sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "sm_121")] == \
        ["jit", "jit", "native", "jit", "native+jit", "native+jit"]


@pytest.mark.slow
def test_cufft_keeps_its_kernels_in_ldata(cli, tmp_path, monkeypatch):
    """The real cuFFT wheel: .nv_fatbin holds one sm_75 cubin, the kernels live in .ldata."""
    wheels = sorted(Path("/opt/pypi-more/files").glob("nvidia_cufft-12*.whl"))
    if not wheels:
        pytest.skip("no local nvidia-cufft wheel")
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(tmp_path))
    for _ in range(2):  # the second run takes both scans from the cache
        doc = run_json(cli, str(wheels[0]), *H200)
        (fft,) = [x for x in doc["libraries"] if x["member"].endswith("libcufft.so.12")]
        load = fft["load"]
        assert fft["containers"] == 1 and load["source"] == "embedded"
        assert load["embedded_sections"] == [".ldata"]
        assert load["counts"]["native"] > 300 and load["counts"]["containers"] > 10000
        assert "WD301" not in {f["rule"] for f in doc["findings"] if f["member"] == fft["member"]}


@pytest.mark.parametrize("argv", [
    (f"{K}/libmixed.so",),
    (f"{K}/libmulti.so", f"{K}/sm_121f.cubin", f"{K}/compute_90-isa9.0.ptx",
     f"{K}/libhostonly.so", f"{K}/concat-mixed.fatbin", f"{K}/libident.so"),
    (f"{K}/story/_vllm_fa2_C.abi3.so", "--fail-on", "error"),
])
def test_fast_json_listing_is_the_full_paths_document_byte_for_byte(argv, tmp_path, monkeypatch):
    """`--list --format json` of plain files takes a short path without the report machinery
    (the JSON listing races the text one); it must print exactly what the full path prints."""
    import argparse

    from wheeldoc.kernels import command

    monkeypatch.chdir(ROOT)
    paths = [a for a in argv if not a.startswith("--") and a != "error"]
    fail_on = "error" if "error" in argv else None
    ns = dict(paths=paths, list=True, coverage=False, gpu=None, driver=None, platform=None,
              python_version=None, format="json", config=None, fail_on=fail_on, select=None,
              ignore=None, color="never")
    fast, full = tmp_path / "fast.json", tmp_path / "full.json"
    assert command._fast_list_json(argparse.Namespace(**ns, output=str(fast))) == 0
    monkeypatch.setattr(command, "_plain_listing", lambda args, fmt="text": False)
    assert command.run(argparse.Namespace(**ns, output=str(full))) == 0
    assert fast.read_text() == full.read_text()
    VALIDATOR.validate(json.loads(fast.read_text()))


def test_fast_json_listing_of_a_large_listing_is_byte_for_byte_too(tmp_path, monkeypatch):
    """More than render.jsontext.BIG entries take the f-string records: same bytes."""
    import argparse

    from wheeldoc.kernels import command

    big = tmp_path / "många \"containers\".fatbin"
    big.write_bytes((ROOT / K / "fb-sm80-ptx80.fatbin").read_bytes() * 150
                    + (ROOT / K / "concat-mixed.fatbin").read_bytes())
    paths = [str(big), str(ROOT / K / "libident.so")]
    ns = dict(paths=paths, list=True, coverage=False, gpu=None, driver=None, platform=None,
              python_version=None, format="json", config=None, fail_on=None, select=None,
              ignore=None, color="never")
    fast, full = tmp_path / "fast.json", tmp_path / "full.json"
    assert command._fast_list_json(argparse.Namespace(**ns, output=str(fast))) == 0
    monkeypatch.setattr(command, "_plain_listing", lambda args, fmt="text": False)
    assert command.run(argparse.Namespace(**ns, output=str(full))) == 0
    assert len(json.loads(fast.read_text())["entries"]) > 300
    assert fast.read_text() == full.read_text()


@pytest.mark.parametrize("name", ["plain.fatbin", "hf_aB3dE5fG7hI9jK1lM3nO5pQ7.fatbin",
                                  "tok \u00eauth=abcdefghijklmnopqrstuvwxyz.fatbin"])
def test_fast_json_listing_to_stdout_redacts_as_the_full_path(name, tmp_path, monkeypatch, capsys):
    """The fast JSON listing looks for secrets only in the paths and identifiers it prints
    (one look instead of two over megabytes); what reaches stdout is still exactly the full
    path's redacted document, for a plain name and for names that hold a token (ASCII-escaped
    `\\u00ea` + `uth` reads `auth` only once encoded)."""
    import argparse

    from wheeldoc.kernels import command

    big = tmp_path / name
    big.write_bytes((ROOT / K / "fb-sm80-ptx80.fatbin").read_bytes() * 150)
    ns = dict(paths=[str(big), str(ROOT / K / "libident.so")], list=True, coverage=False,
              gpu=None, driver=None, platform=None, python_version=None, format="json",
              config=None, fail_on=None, select=None, ignore=None, color="never", output=None)
    assert command._fast_list_json(argparse.Namespace(**ns)) == 0
    fast = capsys.readouterr().out
    monkeypatch.setattr(command, "_plain_listing", lambda args, fmt="text": False)
    assert command.run(argparse.Namespace(**ns)) == 0
    full = capsys.readouterr().out
    assert fast == full and len(json.loads(fast)["entries"]) > 256
    assert ("***" in fast) == (name != "plain.fatbin")


@pytest.mark.parametrize("argv", [
    ("--list", f"{K}/libmulti.so"),
    (f"{K}/libmulti.so", f"{K}/libident.so", "--list"),
    ("--list", f"{K}/libmixed.so", "--format", "json"),
    ("--list", "--format=json", f"{K}/libmulti.so", f"{K}/sm_121f.cubin"),
    ("--list", "--output-format", "json", f"{K}/concat-mixed.fatbin"),
    ("--list", "--format", "text", f"{K}/libmulti.so"),
    ("--list", "--output-format", "full", f"{K}/libmulti.so"),
    ("--list", "--format", "full", f"{K}/libhostonly.so", f"{K}/libmulti.so"),
])
def test_quick_listing_prints_what_the_parser_path_prints(argv, cli, monkeypatch):
    """`wheeldoc.cli` hands `kernels --list …` to command_list.quick_listing before building its
    parser: the same output, code and stderr as through argparse and the command."""
    from wheeldoc import cli as cli_module
    from wheeldoc.kernels import command_list

    taken = []
    real = command_list.quick_listing
    monkeypatch.setattr(command_list, "quick_listing", lambda a: taken.append(real(a)) or taken[-1])
    quick = cli("kernels", *argv)
    assert taken == [0]  # it took this command line itself
    monkeypatch.setattr(cli_module, "_quick_listing", lambda argv: None)
    full = cli("kernels", *argv)
    assert (quick.code, quick.out, quick.err) == (full.code, full.out, full.err)
    assert quick.code == 0 and quick.out


@pytest.mark.parametrize("argv", [
    (f"{K}/libmulti.so", "--list", f"{K}/libident.so"),  # two runs of paths: argparse's error
    ("--list", "--output-format", "text", f"{K}/libmulti.so"),  # not a choice of that flag
    ("--list", "--format", "sarif", f"{K}/libmulti.so"),
    ("--list", "--format"),
    ("--list",),
    ("--list", "--gpu", "gb10", f"{K}/libmulti.so"),
    ("--list", "--lis", f"{K}/libmulti.so"),
    ("--list", "-o", "out.txt", f"{K}/libmulti.so"),
    ("--list", "--", f"{K}/libmulti.so"),
    ("--list", "--coverage", f"{K}/libmulti.so"),
    (f"{K}/libmulti.so",),
])
def test_quick_listing_leaves_every_other_command_line_to_the_parser(argv):
    from wheeldoc.kernels import command_list

    assert command_list.quick_listing(list(argv)) is None


def test_quick_listing_leaves_wheels_directories_and_corrupt_files_to_the_full_path(tmp_path):
    from wheeldoc.kernels import command_list

    bad = tmp_path / "bad.fatbin"
    bad.write_bytes((ROOT / K / "fb-sm86.fatbin").read_bytes()[:40])
    for path in (str(tmp_path), str(bad), str(tmp_path / "x.whl"), str(tmp_path / "missing.so")):
        assert command_list.quick_listing(["--list", path]) is None


def test_quick_listing_steps_aside_for_a_project_configuration(tmp_path, monkeypatch):
    from wheeldoc.kernels import command_list

    (tmp_path / "pyproject.toml").write_text("[tool.wheeldoc]\nformat = 'json'\n")
    monkeypatch.chdir(tmp_path)
    assert command_list.quick_listing(["--list", str(ROOT / K / "libmulti.so")]) is None


def test_the_quick_listing_imports_neither_the_parser_nor_typing(tmp_path):
    """What `kernels --list` costs at start-up is what it imports (bench/bench_kernels.py races
    it against cuobjdump): no argparse, typing, re or json, and no report machinery."""
    code = ("import sys; from wheeldoc.cli import main; main(['kernels', '--list', '--format', "
            f"'json', {str(ROOT / K / 'libmulti.so')!r}]); "
            "print(sorted(m for m in sys.modules if m in ('argparse', 'typing', 're', 'json', "
            "'enum') or m.startswith(('wheeldoc.render.output', 'wheeldoc.core.engine'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=tmp_path).stdout.splitlines()
    assert json.loads("\n".join(out[:-1]))["entries"]
    assert out[-1] == "[]"


@pytest.mark.parametrize(("text", "settings"), [
    (b"[tool.wheeldoc]\nformat = 'json'\n", True),
    (b"tool.wheeldoc.format = 'json'\n", True),
    (b"[tool]\nwheeldoc = { format = 'json' }\n", True),
    (b"[project.scripts]\nwheeldoc = 'wheeldoc.cli:main'\n", False),
    (b"[project]\ndependencies = ['wheeldoc>=0.2']\n", False),
])
def test_the_quick_listing_leaves_wheeldoc_settings_to_the_full_path(text, settings):
    from wheeldoc.kernels.command_list import _names_settings

    assert _names_settings(text) is settings

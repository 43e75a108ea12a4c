"""kernelfacts: library names, the header cache's round trip, per-library load summaries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wheeldoc.kernels.facts import (decode_fatbin, encode_fatbin, is_library_name,
                                           predict_library, read_inputs)
from wheeldoc.kernels.fatbin import open_fatbin

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "fixtures" / "kernels"
GOOD = [m["file"] for m in json.loads((KERNELS / "manifest.json").read_text())["fixtures"]
        if "broken" not in m]


@pytest.mark.parametrize("name,ok", [
    ("libcublasLt.so.13", True), ("libfoo.so", True), ("_C.abi3.so", True),
    ("libnvjpeg.36e11081.so.13", True), ("x.cpython-312-x86_64-linux-gnu.so", True),
    ("pkg/lib/libnccl.so.2", True), ("socket.py", False), ("libfoo.sock", False),
    ("x.so.py", True), ("README", False), ("a.sobig", False)])
def test_library_names(name, ok):
    assert is_library_name(name) is ok


@pytest.mark.parametrize("name", GOOD)
def test_header_cache_round_trip(name):
    fb = open_fatbin(KERNELS / name)
    doc = json.loads(json.dumps(encode_fatbin(fb)))
    assert decode_fatbin(doc, fb.path, fb.member) == fb


def test_header_cache_refuses_another_layout():
    fb = open_fatbin(KERNELS / "libmixed.so")
    doc = encode_fatbin(fb)
    doc["fields"] = doc["fields"][:-1]
    with pytest.raises(ValueError):
        decode_fatbin(doc, fb.path, None)


def test_library_load_summary():
    (lib,) = read_inputs([str(KERNELS / "story" / "_gdn_C.abi3.so")]).libraries
    load = predict_library(lib, (12, 1), (9, 0), (13, 0))
    assert load.verdict == "jit" and load.cuda_error == "CUDA_ERROR_NO_BINARY_FOR_GPU"
    assert load.counts == {"containers": 2, "native": 0, "jit": 1, "fail": 1,
                           "errors": {"CUDA_ERROR_NO_BINARY_FOR_GPU": 1}}
    assert load.chosen("jit") == "compute_80 PTX 9.0"
    assert predict_library(lib, (9, 0), (9, 0), (13, 0)).verdict == "native+jit"
    assert predict_library(lib, (7, 5), (9, 0), (13, 0)).verdict == "fail"


def test_empty_and_lto_only_containers_are_not_counted():
    inputs = read_inputs([str(KERNELS / "libptxonly.so"), str(KERNELS / "liblto.so")])
    (lib,) = inputs.libraries
    assert len(lib.fatbin.containers) == 2 and len(lib.containers) == 1
    assert inputs.without_gpu_code == [str(KERNELS / "liblto.so")]


def test_scan_finds_the_whole_containers_kept_in_data_sections(tmp_path):
    from wheeldoc.kernels.embedded import scan, scan_file

    manifest = {m["file"]: m for m in json.loads((KERNELS / "manifest.json").read_text())["fixtures"]}
    want = manifest["libembedded.so"]["embedded"]
    found = scan_file(str(KERNELS / "libembedded.so"))
    got = [[{"kind": e.kind, "arch": e.arch, "ptx_isa": e.ptx_isa, "compression": e.compression}
            for e in c.entries] for _, c in found]
    assert [s for s, _ in found] == [".rodata", ".rodata"] and got == want
    # a container whose entry header is damaged no longer counts; the other one still does
    data = bytearray((KERNELS / "libembedded.so").read_bytes())
    second = found[1][1].offset
    data[second + 16 + 4: second + 16 + 8] = (7).to_bytes(4, "little")  # entry header_size 7
    assert [c.offset for _, c in scan(bytes(data), "copy")] == [found[0][1].offset]
    # no data section, or no container in it: nothing
    assert scan_file(str(KERNELS / "libmixed.so")) == ()

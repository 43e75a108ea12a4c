"""The ABI analyzer's data tables (wheeldoc/data/): the manylinux policies, the libstdc++ release
table, the system symbol names and the CUDA wheel contents; and the target they build."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from wheeldoc.data.abi_tables import (
    cuda_packages,
    manylinux_table,
    policy_for_tag,
    split_version,
    system_names,
    system_target,
    vkey,
)


def test_manylinux_2_28_caps_match_auditwheel():
    t = system_target(("manylinux_2_28_x86_64",))
    assert t.label == "manylinux_2_28 (x86_64)" and t.source == "tag"
    assert t.allows("GLIBC_2.28") and not t.allows("GLIBC_2.29") and not t.allows("GLIBC_2.34")
    assert t.allows("GLIBCXX_3.4.24") and not t.allows("GLIBCXX_3.4.25")
    assert t.allows("CXXABI_1.3.11") and not t.allows("CXXABI_1.3.12") and t.allows("CXXABI_TM_1")
    assert t.allows("GCC_7.0.0") and not t.allows("GCC_12.0.0")
    assert t.allows("GLIBC_PRIVATE") is False
    assert t.allows("LIBX_2.0") is None and t.allows("ZLIB_1.2.9") is None  # not a system family here
    assert {"libc.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libdl.so.2"} <= t.libraries


def test_newest_tag_wins_and_flags_override():
    t = system_target(("manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_28_x86_64"))
    assert t.cap_text("GLIBC") == "GLIBC_2.28"
    assert system_target(("manylinux2014_x86_64",)).cap_text("GLIBC") == "GLIBC_2.17"
    assert policy_for_tag("manylinux1_x86_64") == ("manylinux_2_5", "x86_64")
    assert policy_for_tag("linux_x86_64") is None and policy_for_tag("any") is None
    t = system_target(("manylinux_2_28_x86_64",), glibc="2.34", libstdcxx="3.4.30")
    assert t.source == "tag+flags" and t.cap_text("GLIBC") == "GLIBC_2.34"
    assert t.cap_text("GLIBCXX") == "GLIBCXX_3.4.30" and t.cap_text("CXXABI") == "CXXABI_1.3.13"
    assert t.cap_text("GCC") == "GCC_12.0.0"
    aarch = system_target(("manylinux_2_28_aarch64",))
    assert aarch.arch == "aarch64" and aarch.cap_text("GLIBC") == "GLIBC_2.28"


def test_no_tag_no_caps():
    t = system_target(("linux_x86_64",))
    assert not t.known and t.allows("GLIBC_2.99") is None and t.label == "unknown"
    with pytest.raises(ValueError):
        system_target(glibc="2.x")
    with pytest.raises(ValueError):
        system_target(libstdcxx="new")


def test_every_policy_has_numeric_caps_for_x86_64():
    for name, policy in manylinux_table()["policies"].items():
        caps = policy["versions"]["x86_64"]
        glibc = tuple(int(x) for x in name.split("_")[1:3])
        # the newest GLIBC_ version that glibc release defines (2.37 added none: its cap is 2.36)
        assert vkey(caps["GLIBC"]["max"]) <= glibc, name
        assert glibc > (2, 36) or vkey(caps["GLIBC"]["max"]) == glibc, name


def test_libstdcxx_table_is_ordered_and_covers_gcc_15():
    rows = manylinux_table()["libstdcxx"]
    keys = [vkey(r["GLIBCXX"]) for r in rows]
    assert keys == sorted(keys) and rows[-1]["gcc"].startswith("15")
    assert split_version("GLIBCXX_3.4.32") == ("GLIBCXX", "3.4.32") and split_version("LIBX_1") is None


def test_system_names_carry_their_oldest_version():
    names = system_names()
    assert names["libc.so.6"]["dlsym"] == "GLIBC_2.2.5"  # libdl's until 2.34, then libc's
    assert names["libc.so.6"]["__libc_single_threaded"] == "GLIBC_2.32"
    assert names["libc.so.6"]["memcpy"] == "GLIBC_2.2.5"
    assert names["libstdc++.so.6"]["__cxa_throw"] == "CXXABI_1.3"
    assert names["libgcc_s.so.1"]["_Unwind_Resume"] == "GCC_3.0"
    assert "crc32" in names["libz.so.1"]  # a library every manylinux policy assumes


def test_cuda_table_lists_the_cu13_libraries():
    packages, extras = cuda_packages()
    assert packages["nvidia-cuda-runtime"].libraries["libcudart.so.13"] == "nvidia/cu13/lib/libcudart.so.13"
    assert packages["nvidia-cudnn-cu13"].libraries["libcudnn.so.9"] == "nvidia/cudnn/lib/libcudnn.so.9"
    assert extras["cudart"] == ("nvidia-cuda-runtime",)
    assert set(extras["cublas"]) == {"nvidia-cublas", "nvidia-cuda-nvrtc"}


@pytest.mark.parametrize("folder", ["/opt/pypi-more/files", "/opt/pypi/files"])
def test_cuda_table_matches_the_real_wheels(folder):
    wheels = sorted(Path(folder).glob("nvidia_*.whl"))
    if not wheels:
        pytest.skip(f"no CUDA wheels in {folder}")
    from packaging.utils import parse_wheel_filename

    packages, _ = cuda_packages()
    for whl in wheels:
        name = parse_wheel_filename(whl.name)[0]
        with zipfile.ZipFile(whl) as zf:
            libs = {n.rsplit("/", 1)[1]: n for n in zf.namelist() if ".so" in n.rsplit("/", 1)[-1]}
        if name in packages:
            assert packages[name].libraries == libs, name
        else:
            assert not libs, f"{name} installs libraries the table lacks"

"""Kilobyte-sized inputs that used to cost minutes or gigabytes, each driven through every verb
that can meet it: bounded in time and memory (tests/hostile/runner.py), no traceback, a defined
exit code, and where a budget trips, the limit named in the output.

Generators: tests/hostile/bombs.py (ELF and fatbin shapes from tests/hostile/elfgen.py).
"""

from __future__ import annotations

import pytest

from tests.hostile import bombs as b
from tests.hostile.runner import wheeldoc

# shape -> (generator, verbs that must say which limit refused it)
ELF_SHAPES = {
    "needed-unterminated": (b.needed_unterminated, {"abi-file", "abi-wheel", "doctor", "image"}),
    "symbols-one-8mb-string": (b.symbols_one_string, {"abi-file"}),
    "verneed-records-x-counts": (b.verneed_product, {"abi-file", "abi-wheel"}),
    "needed-x-runpath": (lambda: b.needed_times_runpath(3_000, 30_000), set()),
    "section-names-unterminated": (b.section_names_unterminated, {"kernels-file", "kernels-wheel", "abi-file",
                                                                  "abi-wheel", "doctor", "image"}),
    "overlapping-containers": (b.overlapping_containers, {"kernels-file", "kernels-wheel", "doctor", "image"}),
}
LIMIT_WORDS = ("limit", "exceed")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = {}
    for shape, (make, _) in ELF_SHAPES.items():
        tmp = tmp_path_factory.mktemp(shape)
        out[shape] = (tmp, b.placements(tmp, make()))
    return out


@pytest.mark.parametrize("verb", ["kernels-file", "kernels-wheel", "abi-file", "abi-wheel", "doctor", "image"])
@pytest.mark.parametrize("shape", list(ELF_SHAPES))
def test_elf_and_fatbin_shapes_stay_bounded(built, shape, verb):
    tmp, argv = built[shape]
    r = wheeldoc(tmp, *argv[verb]).check(0, 1, 2)
    if verb in ELF_SHAPES[shape][1]:
        assert any(w in r.text for w in LIMIT_WORDS), f"{shape} via {verb}: no limit named\n{r.text[-2000:]}"
        assert r.code in (1, 2)


def test_needed_x_runpath_is_linear_and_the_message_short(built):
    tmp, argv = built["needed-x-runpath"]
    r = wheeldoc(tmp, *argv["abi-file"], "--format", "json").check(1)
    import json

    found = [f for f in json.loads(r.out)["findings"] if f["rule"] == "WD201"]
    assert len(found) == 3_000  # one per DT_NEEDED name, none dropped
    assert all(len(f["message"]) < 2_000 and "more folders" in f["message"] for f in found)


def test_sparse_gigabyte_of_zero_padding(tmp_path):
    lib = b.sparse_padding(tmp_path / "libsparse.so")
    assert lib.stat().st_size > 1 << 30
    r = wheeldoc(tmp_path, "kernels", str(lib), *b.GPU).check(2)
    assert "zero padding" in r.err and "limit" in r.err and "libsparse.so" in r.err
    site = b.site(tmp_path / "site", b"")
    (site / "pkg/_ext.so").unlink()
    (site / "pkg/_ext.so").symlink_to(lib)  # RECORD's digest no longer matches: read, not cached
    r = wheeldoc(tmp_path, "doctor", "--site-packages", str(site), *b.GPU).check(0, 1)
    assert "zero padding" in r.out


def test_fatbin_with_1_2_million_entries_is_refused_early(tmp_path):
    fb = b.many_entries(tmp_path / "many.fatbin")
    r = wheeldoc(tmp_path, "kernels", str(fb), *b.GPU).check(2)
    assert "fatbin entries (limit" in r.err and "many.fatbin" in r.err


def test_200k_empty_members_refused_from_the_end_record(tmp_path):
    whl = b.empty_members_wheel(tmp_path)
    for argv in (("kernels", str(whl), *b.GPU), ("abi", str(whl), str(tmp_path))):
        r = wheeldoc(tmp_path, *argv).check(2)
        assert "200,003 members declared (limit 100,000)" in r.err


@pytest.mark.parametrize("kind", ["ENV", "ARG"])
def test_doubling_variable_chain_in_a_dockerfile(tmp_path, kind):
    df = tmp_path / "Dockerfile"
    df.write_text(b.doubling_dockerfile(kind))
    assert df.stat().st_size < 2048
    for extra in ((), ("--format", "json"), ("--diff",)):
        r = wheeldoc(tmp_path, "check", str(df), *extra).check(2)
        assert "limit" in r.err and "Dockerfile" in r.err


def test_a_honest_chain_that_grows_linearly_is_fine(tmp_path):
    df = tmp_path / "Dockerfile"
    lines = ["FROM python:3.12-slim", "ENV P=/opt/bin"] + [f"ENV P=${{P}}:/opt/x{i}" for i in range(200)]
    df.write_text("\n".join(lines + ["RUN echo $P"]) + "\n")
    wheeldoc(tmp_path, "check", str(df)).check(0, 1)


def test_image_layer_of_200k_empty_members(tmp_path):
    """1.4 MB of gzip holding 200k empty tar members: refused once past 100,000 (the tree costs
    about 1 KB per member however well the layer compresses)."""
    import io
    import tarfile

    from tests import imagefactory as im

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        for i in range(200_000):
            tf.addfile(tarfile.TarInfo(f"m/{i}"))
    oci = im.write_oci_layout(tmp_path / "oci", [buf.getvalue()], im.config(), compression="gzip")
    r = wheeldoc(tmp_path, "image", str(oci), *b.GPU).check(2)
    assert "more than 100,000 members" in r.err and "limit" in r.err


@pytest.mark.parametrize("shape", ["shared-string", "sliding-offsets"])
def test_image_loader_cache_whose_entries_share_names(tmp_path, shape):
    """/etc/ld.so.cache in an image: 262,144 entries naming one 4 KB string (2 GB of names when each
    was decoded anew), or 64 runs of 4 KB named at every offset (512 MB): each name is decoded once
    per offset, within 4x the cache's size + 1 MiB."""
    cache = b.loader_cache(regions=64, sliding=True) if shape == "sliding-offsets" else b.loader_cache()
    img = b.image_with_file(tmp_path / "oci", "etc/ld.so.cache", cache)
    wheeldoc(tmp_path, "image", str(img), *b.GPU).check(1)  # no Python inside: a WD002 says so

"""wheeldoc.image.reader: real OCI layouts and docker-save archives built in the test (layer
tars, config, manifests, sha256 digests), layers applied with whiteouts, files read in place,
Python environments found and inspected through the image; and hostile archives."""

from __future__ import annotations

import gzip
import io
import json
import mmap
import os
import shutil
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from tests import envfactory as ef
from tests import imagefactory as im
from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.environment.reader import inspect_environment
from wheeldoc.image.reader import Limits, find_python_environments, open_image

SITE = "opt/venv/lib/python3.11/site-packages"
ENV = ["PATH=/opt/venv/bin:/usr/local/bin:/usr/bin:/bin", "UV_TORCH_BACKEND=auto",
       "LD_LIBRARY_PATH=/usr/local/cuda/lib64", "UV_TORCH_BACKEND=cu130"]


def _base_layer() -> bytes:
    return im.layer([
        im.dir_("etc"), im.file_("etc/os-release", b"ID=debian\nVERSION_ID=12\n"),
        im.file_("etc/secret", b"s3cret"), im.file_("etc/passwd", b"root:x:0:0:image passwd\n"),
        im.dir_("data"), im.file_("data/a", b"a"), im.dir_("data/sub"), im.file_("data/sub/c", b"c"),
        im.dir_("usr/bin"), im.file_("usr/bin/python3.11", b"\x7fELF fake interpreter", mode=0o755),
        im.dir_("opt/venv/bin"), im.file_("opt/venv/pyvenv.cfg", b"home = /usr/bin\nversion_info = 3.11.7\n"),
        im.symlink("opt/venv/bin/python", "/usr/bin/python3.11"),
        im.symlink("opt/venv/lib64", "lib"),
        *im.torch_files(SITE, "2.14.1+cu130", "13.0"),
        im.dir_(f"{SITE}/torch/lib"), im.file_(f"{SITE}/torch/lib/libtorch_cuda.so", b"\x7fELF" + b"\0" * 60),
    ], fmt=tarfile.GNU_FORMAT)


def _cpu_layer() -> bytes:
    """`pip install torch==2.13.0+cpu` over it: the old dist-info and CUDA library whited out,
    version.py rewritten; plus an opaque /data and a deleted /etc/secret."""
    return im.layer([
        im.whiteout(f"{SITE}/torch-2.14.1+cu130.dist-info"),
        im.whiteout(f"{SITE}/torch/lib/libtorch_cuda.so"),
        *im.torch_files(SITE, "2.13.0+cpu", None),
        im.whiteout("etc/secret"),
        im.dir_("data"), im.file_("data/new", b"new"), im.opaque("data"),  # marker after the new file
        im.hardlink("etc/os-release-copy", "etc/os-release"),
    ])


def _cfg(layers):
    return im.config(layers, env=ENV, entrypoint=["/opt/venv/bin/python"], cmd=["-m", "app"], workdir="/app",
                     user="1000:1000", labels={"org.opencontainers.image.source": "https://example.org/app"},
                     history=["ADD rootfs /", "RUN pip install torch==2.13.0+cpu"])


WRITERS = {
    "oci-gzip": lambda d, ls, c: im.write_oci_layout(d / "oci", ls, c, compression="gzip"),
    "oci-zstd": lambda d, ls, c: im.write_oci_layout(d / "oci", ls, c, compression="zstd"),
    "oci-none-multiplatform": lambda d, ls, c: im.write_oci_layout(d / "oci", ls, c, compression="none",
                                                                   multi_platform=True),
    "docker-classic": lambda d, ls, c: im.write_docker_save(d / "img.tar", ls, c, style="classic"),
    "docker-oci": lambda d, ls, c: im.write_docker_save(d / "img.tar", ls, c, style="oci"),
    "oci-archive-gzipped": lambda d, ls, c: im.write_docker_save(d / "img.tar.gz", ls, c, style="oci-archive",
                                                                 outer="gzip"),
}


FORMATS = {"oci-gzip": "oci-layout", "oci-zstd": "oci-layout", "oci-none-multiplatform": "oci-layout",
           "docker-classic": "docker-save", "docker-oci": "docker-save", "oci-archive-gzipped": "oci-archive"}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_layers_whiteouts_and_a_cpu_torch_in_a_later_layer(tmp_path, writer, monkeypatch):
    layers = [_base_layer(), _cpu_layer()]
    path = WRITERS[writer](tmp_path, layers, _cfg(layers))
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    before = sorted(p.name for p in tmp_path.iterdir())
    with open_image(path, platform="linux/amd64", verify=True) as image:
        assert image.format == FORMATS[writer]
        assert image.ref in ("app:latest", "docker.io/library/app:latest")
        c = image.config
        assert c.entrypoint == ("/opt/venv/bin/python",) and c.cmd == ("-m", "app")
        assert (c.working_dir, c.user, c.architecture, c.os) == ("/app", "1000:1000", "amd64", "linux")
        assert c.labels == {"org.opencontainers.image.source": "https://example.org/app"}
        assert image.env["UV_TORCH_BACKEND"] == "cu130"  # the later ENV entry wins
        assert image.env["LD_LIBRARY_PATH"] == "/usr/local/cuda/lib64"
        assert [lay.created_by for lay in image.layers] == ["ADD rootfs /", "RUN pip install torch==2.13.0+cpu"]
        assert [lay.size for lay in image.layers] == [len(x) for x in layers]
        f = image.files
        assert f.read("/etc/os-release", 100) == b"ID=debian\nVERSION_ID=12\n"
        assert f.read("etc/os-release-copy", 100) == b"ID=debian\nVERSION_ID=12\n"  # hard link
        assert not f.exists("/etc/secret") and "secret" not in f.listdir("/etc")
        assert f.listdir("/data") == ["new"] and not f.exists("/data/sub/c")  # opaque folder
        assert f.listdir(f"/{SITE}") == ["torch", "torch-2.13.0+cpu.dist-info"]
        assert f.listdir(f"/{SITE}/torch/lib") == []
        assert f.stat("/opt/venv/bin/python", follow=False).type == "symlink"
        assert f.readlink("/opt/venv/bin/python") == "/usr/bin/python3.11"
        assert f.read("/opt/venv/bin/python", 100) == b"\x7fELF fake interpreter"
        assert f.is_dir("/opt/venv/lib64/python3.11") and f.realpath("/opt/venv/lib64") == "/opt/venv/lib"
        assert f.glob("/opt/venv/lib*/python3.*/site-packages/torch-*.dist-info") == [
            "/opt/venv/lib/python3.11/site-packages/torch-2.13.0+cpu.dist-info",
            "/opt/venv/lib64/python3.11/site-packages/torch-2.13.0+cpu.dist-info"]
        (loc,) = find_python_environments(image)
        assert loc.site_packages == (f"/{SITE}",) and loc.kind == "venv" and loc.prefix == "/opt/venv"
        assert loc.origin == "image" and loc.markers["python_full_version"] == "3.11.7"
        assert loc.markers["platform_machine"] == "x86_64"
        env = inspect_environment(loc, fs=f)
        assert [d.version for d in env.distributions] == ["2.13.0+cpu"]
        assert env.torch.version == "2.13.0+cpu" and env.torch.cuda is None and env.torch.kind == "cpu"
        assert env.distribution("torch").installer == "pip"
    assert sorted(p.name for p in tmp_path.iterdir()) == before and not any(workdir.iterdir())


def test_the_base_layer_alone_still_has_cuda_torch(tmp_path):
    layers = [_base_layer()]
    with open_image(im.write_oci_layout(tmp_path / "oci", layers, _cfg(layers))) as image:
        (loc,) = find_python_environments(image)
        env = inspect_environment(loc, fs=image.files, libraries=False)
        assert env.torch.version == "2.14.1+cu130" and env.torch.cuda == "13.0"
        assert image.files.exists("/etc/secret") and image.files.listdir("/data") == ["a", "sub"]


def test_opaque_marker_before_and_after_same_layer_entries(tmp_path):
    base = im.layer([im.dir_("d"), im.file_("d/old", b"1"), im.dir_("d/deep"), im.file_("d/deep/x", b"2")])
    upper = im.layer([im.opaque("d"), im.file_("d/mine", b"3"), im.dir_("d/deep"), im.file_("d/deep/y", b"4")])
    layers = [base, upper]
    with open_image(im.write_docker_save(tmp_path / "i.tar", layers, im.config(layers))) as image:
        assert image.files.listdir("/d") == ["deep", "mine"]
        assert image.files.listdir("/d/deep") == ["y"]


def test_overlay_replacements(tmp_path):
    """A file over a folder hides the folder's contents; a folder under a lower symlink hides the link."""
    base = im.layer([im.dir_("a"), im.file_("a/inside", b"x"), im.symlink("lib", "usr/lib"),
                     im.dir_("usr/lib"), im.file_("usr/lib/libz.so", b"z")])
    upper = im.layer([im.file_("a", b"now a file"), im.file_("lib/new.so", b"n")])
    layers = [base, upper]
    with open_image(im.write_oci_layout(tmp_path / "oci", layers, im.config(layers), compression="none")) as image:
        f = image.files
        assert f.is_file("/a") and not f.exists("/a/inside") and f.read("/a", 100) == b"now a file"
        assert f.stat("/lib", follow=False).type == "dir" and f.listdir("/lib") == ["new.so"]
        assert f.listdir("/usr/lib") == ["libz.so"]


def test_symlinks_stay_inside_the_image(tmp_path):
    lay = im.layer([
        im.file_("etc/passwd", b"root:x:0:0:image passwd\n"),
        im.symlink("escape", "../../../../../../etc/passwd"),
        im.symlink("abs", "/etc/passwd"),
        im.symlink("up/dir/link", "../../../../etc"),
        im.symlink("loop1", "loop2"), im.symlink("loop2", "loop1"),
        im.symlink("dangling", "/nonexistent/file"),
    ])
    with open_image(im.write_oci_layout(tmp_path / "oci", [lay], im.config([lay]))) as image:
        f = image.files
        assert f.read("/escape", 100) == b"root:x:0:0:image passwd\n"  # the image's, not the host's
        assert f.read("/abs", 100) == f.read("/escape", 100)
        assert f.listdir("/up/dir/link") == ["passwd"]
        assert not f.exists("/dangling") and f.stat("/dangling", follow=False).link == "/nonexistent/file"
        with pytest.raises(InputError, match="symbolic links"):
            f.exists("/loop1")
        with pytest.raises(InputError, match="no such file"):
            f.read("/dangling", 10)


def test_special_files_and_absolute_member_names(tmp_path):
    lay = im.layer([im.Entry("dev/null", "char"), im.Entry("run/fifo", "fifo"),
                    im.file_("/etc/abs-name", b"absolute member names land inside the root"),
                    im.file_("./dot/slash", b"ok")])
    with open_image(im.write_oci_layout(tmp_path / "oci", [lay], im.config([lay]))) as image:
        f = image.files
        assert f.stat("/dev/null").type == "char" and f.stat("/run/fifo").type == "fifo"
        with pytest.raises(InputError, match=r"not a regular file \(char\)"):
            f.read("/dev/null", 10)
        assert f.read("/etc/abs-name", 100).startswith(b"absolute")
        assert f.read("/dot/slash", 10) == b"ok"


def test_open_buffer_maps_real_elf_in_place(tmp_path):
    if not ef.TORCHVISION_0_29_1.is_file():
        pytest.skip("torchvision wheel not present")
    with zipfile.ZipFile(ef.TORCHVISION_0_29_1) as zf:
        libz = zf.read("torchvision.libs/libz.915b4635.so.1")
    site = "usr/local/lib/python3.12/site-packages"
    dist = f"{site}/zpkg-1.0.dist-info"
    lay = im.layer([im.file_(f"{site}/zpkg/libz.so.1", libz), im.file_(f"{dist}/METADATA",
                    b"Metadata-Version: 2.1\nName: zpkg\nVersion: 1.0\n"),
                    im.file_(f"{dist}/RECORD", b"zpkg/libz.so.1,,\n")])
    for compression in ("none", "gzip"):
        with open_image(im.write_oci_layout(tmp_path / compression, [lay], im.config([lay], architecture="arm64"),
                                            compression=compression)) as image:
            with image.files.open_buffer(f"/{site}/zpkg/libz.so.1") as buf:
                assert bytes(buf) == libz
            with image.files.open_file(f"/{site}/zpkg/libz.so.1") as fh:
                assert fh.name != f"/{site}/zpkg/libz.so.1" and fh.read() == libz
                assert mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ)[:4] == b"\x7fELF"
            (loc,) = find_python_environments(image)
            assert loc.kind == "system" and loc.markers["python_version"] == "3.12"
            assert loc.markers["platform_machine"] == "aarch64"  # from the image config
            env = inspect_environment(loc, fs=image.files)
            (lib,) = env.libraries
            assert lib.needed == ("libc.so.6",) and lib.soname == "libz.so.1" and lib.distribution == "zpkg"


def test_find_python_environments_kinds(tmp_path):
    def meta(site, name):
        return [im.file_(f"{site}/{name}-1.0.dist-info/METADATA",
                         f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode())]
    lay = im.layer([
        *meta("usr/local/lib/python3.12/site-packages", "sysdist"),
        im.file_("usr/bin/python3.11", b""), im.file_("usr/bin/python3.9", b""),
        *meta("usr/lib/python3/dist-packages", "debdist"),
        im.dir_("opt/conda/conda-meta"), *meta("opt/conda/lib/python3.10/site-packages", "condadist"),
        im.dir_("usr/lib/python3.11/site-packages"),  # empty: not an environment
    ])
    with open_image(im.write_oci_layout(tmp_path / "oci", [lay], im.config([lay]))) as image:
        got = {loc.site_packages[0]: (loc.kind, loc.markers["python_version"], loc.prefix)
               for loc in find_python_environments(image)}
    assert got == {"/opt/conda/lib/python3.10/site-packages": ("conda", "3.10", "/opt/conda"),
                   "/usr/lib/python3/dist-packages": ("system", "3.11", "/usr"),
                   "/usr/local/lib/python3.12/site-packages": ("system", "3.12", "/usr/local")}


def test_several_images_need_a_ref(tmp_path):
    lay = im.layer([im.file_("x", b"1")])
    path = im.write_docker_save(tmp_path / "a.tar", [lay], im.config([lay]), tags=("one:1",))
    with tarfile.open(path) as tf:
        manifest = json.loads(tf.extractfile("manifest.json").read())
    entry = dict(manifest[0], RepoTags=["two:2"])
    raw = path.read_bytes()
    _rewrite_member(path, raw, "manifest.json", json.dumps(manifest + [entry]).encode())
    with pytest.raises(InputError, match="2 images in one archive; pick one with ref= \\(one:1, two:2\\)"):
        open_image(path)
    with open_image(path, ref="two:2") as image:
        assert image.ref == "two:2" and image.files.read("/x", 1) == b"1"
    with pytest.raises(InputError, match="no image named 'three'"):
        open_image(path, ref="three")


def _rewrite_member(path: Path, raw: bytes, name: str, data: bytes) -> None:
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(raw)) as src, tarfile.open(fileobj=out, mode="w") as dst:
        for m in src.getmembers():
            body = data if m.name == name else src.extractfile(m).read() if m.isfile() else None
            if body is not None:
                m.size = len(body)
            dst.addfile(m, io.BytesIO(body) if body is not None else None)
    path.write_bytes(out.getvalue())


# -- hostile archives -------------------------------------------------------------------------

def test_dotdot_traversal_is_refused_and_nothing_is_written(tmp_path, monkeypatch):
    cwd = tmp_path / "cwd" / "deep"
    cwd.mkdir(parents=True)
    monkeypatch.chdir(cwd)
    lay = im.layer([im.file_("ok", b"1"), im.file_("../../escaped", b"pwned"), im.file_("a/../../../x", b"2")])
    path = im.write_docker_save(tmp_path / "evil.tar", [lay], im.config([lay]))
    with pytest.raises(InputError) as e:
        open_image(path)
    assert e.value.member == "../../escaped" and "climbs out of the image root" in e.value.message
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "cwd" / "escaped").exists()
    lay = im.layer([im.file_("etc/passwd", b"x"), im.hardlink("h", "../../../etc/passwd")])
    with pytest.raises(InputError, match="hard link 'h' -> '../../../etc/passwd' points out of the image root"):
        open_image(im.write_oci_layout(tmp_path / "oci", [lay], im.config([lay])))


@pytest.mark.slow
def test_decompression_bomb_is_stopped(tmp_path):
    zeros = im.layer([im.file_("zeros", bytes(80 << 20))])  # 80 MiB that compress about 1000x
    for compression in ("gzip", "zstd"):
        d = im.write_oci_layout(tmp_path / compression, [zeros], im.config([zeros]), compression=compression)
        blob = max((d / "blobs" / "sha256").iterdir(), key=lambda p: p.stat().st_size)
        assert blob.stat().st_size * 500 < len(zeros)
        t0 = time.perf_counter()
        with pytest.raises(LimitExceeded, match=r"layer inflates [0-9,]+x .*max_ratio 200\): a decompression bomb"):
            open_image(d)
        assert time.perf_counter() - t0 < 10
    # the same layer is fine under limits that allow it
    with open_image(tmp_path / "gzip", limits=Limits(max_ratio=5000)) as image:
        assert image.files.size("/zeros") == 80 << 20


def test_resource_limits(tmp_path):
    many = im.layer([im.file_(f"f{i}", b"") for i in range(50)])
    d = im.write_oci_layout(tmp_path / "many", [many], im.config([many]))
    with pytest.raises(LimitExceeded, match="more than 20 members in the image \\(limit max_members 20\\)"):
        open_image(d, limits=Limits(max_members=20))
    with pytest.raises(LimitExceeded, match=r"more than 10 members in one layer \(limit max_layer_members 10\)"):
        open_image(d, limits=Limits(max_layer_members=10))
    two = im.write_docker_save(tmp_path / "two.tar", [many, many], im.config([many, many]))
    with open_image(two, limits=Limits(max_layer_members=50)) as image:  # 50 a layer, 100 in all
        assert [lay.members for lay in image.layers] == [50, 50]
    with pytest.raises(LimitExceeded, match=r"more than 80 members in the image") as e:
        open_image(two, limits=Limits(max_layer_members=50, max_members=80))
    assert e.value.path.endswith("/layer.tar")  # the second layer, named
    with pytest.raises(LimitExceeded, match=r"more than 3 members in the archive \(limit max_archive_members 3"):
        open_image(two, limits=Limits(max_archive_members=3))
    deep = im.layer([im.file_("/".join(["d"] * 40) + "/f", b"")])
    with pytest.raises(LimitExceeded, match="40 folders deep|41 folders deep"):
        open_image(im.write_oci_layout(tmp_path / "deep", [deep], im.config([deep])),
                   limits=Limits(max_path_depth=32))
    with pytest.raises(LimitExceeded, match="max_total_bytes"):
        open_image(d, limits=Limits(max_total_bytes=1000))
    with pytest.raises(LimitExceeded, match="limit 100 for metadata"):
        open_image(d, limits=Limits(max_json_bytes=100))
    with pytest.raises(LimitExceeded, match="2 layers \\(limit 1\\)"):
        open_image(im.write_oci_layout(tmp_path / "two", [many, many], im.config([many, many])),
                   limits=Limits(max_layers=1))


def test_truncated_and_corrupt_layers(tmp_path):
    lay = im.layer([im.file_("big", os.urandom(10_000)), im.file_("after", b"x")])
    cut = lay[:6000]
    d = im.write_oci_layout(tmp_path / "cut", [cut], im.config([cut]), compression="none")
    with pytest.raises(InputError, match="truncated tar: member 0 declares 10,000 bytes"):
        open_image(d)
    gz = im.compress(lay, "gzip")
    d = im.write_oci_layout(tmp_path / "gz", [lay], im.config([lay]), compression="gzip")
    blob = next(p for p in (d / "blobs" / "sha256").iterdir() if p.read_bytes() == gz)
    blob.write_bytes(gz[: len(gz) // 2])
    with pytest.raises(InputError, match="truncated gzip stream"):
        open_image(d)
    blob.write_bytes(gz[:10] + b"\xff" * 40 + gz[50:])
    with pytest.raises(InputError, match="corrupt gzip data"):
        open_image(d)
    bad = bytearray(lay)
    bad[0] ^= 0x41  # name changes, checksum no longer matches
    d = im.write_oci_layout(tmp_path / "sum", [bytes(bad)], im.config([bytes(bad)]), compression="none")
    with pytest.raises(InputError, match="header checksum mismatch at member 0"):
        open_image(d)
    d = im.write_oci_layout(tmp_path / "zst", [lay], im.config([lay]), compression="zstd")
    blob = max((d / "blobs" / "sha256").iterdir(), key=lambda p: p.stat().st_size)
    blob.write_bytes(blob.read_bytes()[:-100])
    with pytest.raises(InputError, match="zstd"):
        open_image(d)


def test_hostile_layouts(tmp_path):
    lay = im.layer([im.file_("x", b"1")])
    d = im.write_oci_layout(tmp_path / "oci", [lay], im.config([lay]))
    index = json.loads((d / "index.json").read_text())
    good = index["manifests"][0]["digest"]
    index["manifests"][0]["digest"] = "sha256:../../../../etc/passwd"
    (d / "index.json").write_text(json.dumps(index))
    with pytest.raises(InputError, match="refusing malformed digest"):
        open_image(d)
    index["manifests"][0]["digest"] = good
    (d / "index.json").write_text(json.dumps(index))
    manifest = json.loads((d / "blobs" / "sha256" / good.split(":")[1]).read_text())
    layer_blob = d / "blobs" / "sha256" / manifest["layers"][0]["digest"].split(":")[1]
    outside = tmp_path / "outside"
    outside.write_bytes(gzip.compress(lay))
    layer_blob.unlink()
    layer_blob.symlink_to(outside)
    with pytest.raises(InputError, match="symbolic link is refused"):
        open_image(d)
    layer_blob.unlink()
    with pytest.raises(InputError, match="is not in the image"):
        open_image(d)
    layer_blob.write_bytes(gzip.compress(im.layer([im.file_("x", b"2")])))  # tampered
    with open_image(d) as image:  # digests are not checked unless asked
        assert image.files.read("/x", 1) == b"2"
    with pytest.raises(InputError, match="does not match its blob digest"):
        open_image(d, verify=True)
    (d / "index.json").write_text("{nope")
    with pytest.raises(InputError, match="index.json: not valid JSON"):
        open_image(d)
    with pytest.raises(InputError, match="neither a docker save archive"):
        open_image(_plain_tar(tmp_path / "plain.tar"))
    with pytest.raises(InputError, match="no such file or folder"):
        open_image(tmp_path / "missing")
    (tmp_path / "junk").write_bytes(b"\x00\x01junk" * 100)
    with pytest.raises(InputError, match="not a tar archive or corrupt"):
        open_image(tmp_path / "junk")


def _plain_tar(path: Path) -> Path:
    with tarfile.open(path, "w") as tf:
        info = tarfile.TarInfo("hello.txt")
        info.size = 2
        tf.addfile(info, io.BytesIO(b"hi"))
    return path


# -- a real environment inside an image, slow ----------------------------------------------------

@pytest.fixture(scope="session")
def real_cuda_image(request) -> Path:
    wheels = [ef.TORCH_CUDA, ef.TORCHVISION_0_29_1]
    if ef.missing(wheels) or not shutil.which("uv"):
        pytest.skip("real wheels missing")
    cache = Path(request.config.cache.mkdir("wheeldoc-real-envs"))
    prefix = ef.real_env(cache, "img-cuda", wheels)
    image = cache / f"{prefix.name}.docker.tar"
    if not image.is_file():
        tmp = image.with_suffix(".building")
        layer_path = tmp.with_suffix(".layer")
        with tarfile.open(layer_path, "w", format=tarfile.PAX_FORMAT) as tf:
            tf.add(prefix, arcname="opt/venv", filter=lambda ti: ti if ti.name != "opt/venv/.complete" else None)
        raw = layer_path.read_bytes()
        im.write_docker_save(tmp, [raw], im.config([raw], env=["PATH=/opt/venv/bin:/usr/bin"]))
        layer_path.unlink()
        tmp.rename(image)
    return image


@pytest.mark.slow
def test_real_cuda_torch_environment_inside_an_image(real_cuda_image):
    t0 = time.perf_counter()
    with open_image(real_cuda_image) as image:
        t1 = time.perf_counter()
        (loc,) = find_python_environments(image)
        env = inspect_environment(loc, fs=image.files)
        t2 = time.perf_counter()
        size = image.layers[0].size
        print(f"\nreal image {size / 1e6:.0f} MB, {image.layers[0].members} members: open {1e3 * (t1 - t0):.0f} ms, "
              f"environment with {len(env.libraries)} libraries {1e3 * (t2 - t1):.0f} ms")
        assert env.torch.version == "2.14.1+cu130" and env.torch.cuda == "13.0"
        tv = {lib.name: lib for lib in env.torch_linked}
        assert set(tv) == {"_C_stable.so", "image_stable.so"}
        assert {"libc10.so", "libtorch_cuda.so"} <= set(tv["_C_stable.so"].needed)
        cuda = next(lib for lib in env.libraries if lib.name == "libtorch_cuda.so")
        assert ".nv_fatbin" in cuda.gpu_sections and cuda.size > 100 << 20
        assert env.skipped == ()


@pytest.mark.parametrize("fmt", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT, tarfile.USTAR_FORMAT])
def test_long_names_in_every_tar_format(tmp_path, fmt):
    long_dir = "d" * 120 if fmt == tarfile.USTAR_FORMAT else "d" * 150  # ustar: 155-byte prefix + 100-byte name
    name = f"{long_dir}/{'f' * 90}"
    target = "t" * 99 if fmt == tarfile.USTAR_FORMAT else "/" + "t" * 200
    lay = im.layer([im.file_(name, b"long"), im.symlink("link", target)], fmt=fmt)
    with open_image(im.write_oci_layout(tmp_path / "oci", [lay], im.config([lay]))) as image:
        assert image.files.read("/" + name, 10) == b"long"
        assert image.files.readlink("/link") == target


def test_classic_docker_save_with_a_linked_duplicate_layer(tmp_path):
    """Old `docker save` stores a layer used twice once, the second `layer.tar` a symlink to it."""
    lay = im.layer([im.file_("same", b"1")])
    cfg = json.dumps(im.config([lay, lay])).encode()
    path = tmp_path / "dup.tar"
    with tarfile.open(path, "w") as tf:
        def add(name, data=None, link=None):
            info = tarfile.TarInfo(name)
            if link:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tf.addfile(info)
            else:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
        add("aaa/layer.tar", lay)
        add("bbb/layer.tar", link="../aaa/layer.tar")
        add("cfg.json", cfg)
        add("manifest.json", json.dumps([{"Config": "cfg.json", "RepoTags": None,
                                          "Layers": ["aaa/layer.tar", "bbb/layer.tar"]}]).encode())
    with open_image(path, verify=True) as image:
        assert [x.size for x in image.layers] == [len(lay), len(lay)] and image.ref is None
        assert image.files.read("/same", 1) == b"1"


@pytest.mark.slow
def test_mutated_layers_raise_only_input_errors(tmp_path):
    """Random byte flips and cuts of a real layer (headers, names, sizes, links): the image
    opens or is refused with an InputError; never another exception."""
    import random

    base = im.layer([im.dir_("a"), im.file_("a/f", b"x" * 700), im.symlink("a/l", "../a/f"),
                     im.hardlink("a/h", "a/f"), im.file_("a/.wh.gone"), im.file_("d" * 120 + "/n", b"y"),
                     im.opaque("a")], fmt=tarfile.PAX_FORMAT)
    rng = random.Random(11)
    d = im.write_oci_layout(tmp_path / "oci", [base], im.config([base]), compression="none")
    blob = max((d / "blobs" / "sha256").iterdir(), key=lambda p: p.stat().st_size)
    seen = {"opened": 0, "refused": 0}
    for _ in range(300):
        data = bytearray(base)
        for _ in range(rng.randint(1, 6)):
            data[rng.randrange(len(data))] = rng.choice([0, 0x2E, 0x2F, 0x30, 0x37, 0xFF, rng.randrange(256)])
        if rng.random() < 0.2:
            data = data[: rng.randrange(len(data))]
        blob.write_bytes(bytes(data))
        try:
            with open_image(d, limits=Limits(max_symlink_hops=8)) as image:
                for path, entry in image.files.walk():
                    if entry.type == "file":
                        image.files.read(path, 1 << 20)
                    image.files.exists(path)
            seen["opened"] += 1
        except InputError:
            seen["refused"] += 1
    assert seen["opened"] and seen["refused"]


def test_library_path_of_an_image(tmp_path):
    """The machine reader on an image: its ENV LD_LIBRARY_PATH and its own /etc/ld.so.cache."""
    from wheeldoc.environment.machine import parse_ld_so_cache, read_library_path

    host_cache = Path("/etc/ld.so.cache")
    if not host_cache.is_file():
        pytest.skip("no loader cache on this machine to put in the image")
    cache = host_cache.read_bytes()
    lay = im.layer([im.file_("etc/ld.so.cache", cache), im.file_("usr/local/cuda/lib64/libcudart.so.12.8.90", b""),
                    im.symlink("usr/local/cuda/lib64/libcudart.so.12", "libcudart.so.12.8.90")])
    cfg = im.config([lay], env=["PATH=/usr/bin", "LD_LIBRARY_PATH=/usr/local/cuda/lib64:/missing"])
    with open_image(im.write_oci_layout(tmp_path / "oci", [lay], cfg)) as image:
        lp = read_library_path(image.env, fs=image.files)
    assert lp.ld_library_path == ("/usr/local/cuda/lib64", "/missing") and lp.cache == "/etc/ld.so.cache"
    assert [(x.name, x.major, x.source) for x in lp.libraries if x.source == "LD_LIBRARY_PATH"] == [
        ("libcudart.so.12", 12, "LD_LIBRARY_PATH"), ("libcudart.so.12.8.90", 12, "LD_LIBRARY_PATH")]
    expected = [e.path for e in parse_ld_so_cache(cache) if e.name.startswith("libcudart.so")]
    assert [x.path for x in lp.libraries if x.source == "ld.so.cache" and x.family == "cudart"] == expected

"""No traceback from nesting or from numbers: deeply nested TOML (uv.lock, pylock, the user's own
pyproject config), JSON-form RUN/CMD, image configs / manifests / indexes, direct_url.json,
`${A:-${A:-…}}`, `ONBUILD ONBUILD …`, a hostile torch/version.py, integers over 4,300 digits and
Unicode digits ('²') in image tags, `COPY --from`, RECORD sizes and versions.

Each input comes from tests/hostile/deep.py and runs through the verb that reads it. Refused
inputs give one message naming the file and exit 2; inputs with a part that cannot be read give
a report (exit 0/1). All within the bounds of tests/hostile/runner.py.
"""

from __future__ import annotations

import shutil

import pytest

from tests import imagefactory as im
from tests.hostile import deep as d
from tests.hostile.runner import wheeldoc

GPU = ("--gpu", "h200", "--driver", "580.95.05")
REFUSED = (2,)
READ = (0, 1)


@pytest.mark.parametrize("name", list(d.dockerfiles()))
def test_dockerfiles(tmp_path, name):
    text = d.dockerfiles()[name]
    path = tmp_path / "Dockerfile"
    path.write_text(text)
    for fmt in ("text", "json"):
        r = wheeldoc(tmp_path, "check", str(path), "--format", fmt).check(0, 1, 2)
        if r.code == 2:
            assert str(path) in r.err and len(r.err) < 2_000
    if name == "onbuild-chain":
        assert r.code == 2 and "ONBUILD ONBUILD" in r.err


LOCKS = {
    "uv.lock": {"nested": d.uv_lock("x = " + d.nested_array()), "big-int": d.uv_lock("size = " + d.BIG),
                "big-version": d.uv_lock("").replace('"2.11.0"', f'"{d.BIG}"'),
                "super-version": d.uv_lock("").replace('"2.11.0"', f'"2.1{d.SUPER}"')},
    "pylock.toml": {"nested": d.pylock("x = " + d.nested_array()), "big-int": d.pylock("x = " + d.BIG),
                    "big-version": d.pylock("").replace('"2.11.0"', f'"{d.BIG}"')},
    "requirements.txt": {"big-version": f"torch=={d.BIG}\n", "super-version": f"torch==2.1{d.SUPER}\n",
                         "big-local": f"torch==2.11.0+cu{d.BIG}\n"},
}


@pytest.mark.parametrize("fname,case", [(f, c) for f, cases in LOCKS.items() for c in cases])
def test_lockfiles(tmp_path, fname, case):
    path = tmp_path / fname
    path.write_text(LOCKS[fname][case])
    r = wheeldoc(tmp_path, "check", str(path), *GPU).check(0, 1, 2)
    if case in ("nested", "big-int"):
        assert r.code == 2 and str(path) in r.err and ("nests more than" in r.err or "invalid TOML" in r.err)


@pytest.mark.parametrize("value", [d.nested_array(), d.BIG])
def test_the_users_own_config(tmp_path, value):
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text(d.pyproject_config(value))
    df = tmp_path / "Dockerfile"
    df.write_text("FROM python:3.12\n")
    for argv in (("check", str(df), "--config", str(cfg)), ("kernels", str(df), "--config", str(cfg), *GPU)):
        r = wheeldoc(tmp_path, *argv).check(*REFUSED)
        assert str(cfg) in r.err


SITES = {
    "direct-url-nested": dict(direct_url=d.nested_object_json()),
    "direct-url-big-int": dict(direct_url='{"url": "https://x.example/t.whl", "n": ' + d.BIG + "}"),
    "version-py-unary-chain": dict(version_py="__version__ = " + "-" * 200_000 + "1\n"),
    "version-py-parentheses": dict(version_py="__version__ = " + "(" * 100_000 + "'1'" + ")" * 100_000 + "\n"),
    "version-py-100k-lines": dict(version_py="__version__ = '2.11.0'\n" + "x = 1\n" * 100_000),
    "record-size-superscript": dict(record=f"torch/__init__.py,sha256=x,{d.SUPER}\ntorch/version.py,,\n"),
    "record-size-big": dict(record=f"torch/__init__.py,sha256=x,{d.BIG}\ntorch/version.py,,\n"),
    "metadata-version-big": dict(version=d.BIG),
    "metadata-version-superscript": dict(version=f"2.1{d.SUPER}"),
}


@pytest.mark.parametrize("case", list(SITES))
def test_installed_environments(tmp_path, case):
    site = d.site(tmp_path / "site", **SITES[case])
    wheeldoc(tmp_path, "doctor", "--site-packages", str(site), *GPU).check(*READ)
    wheeldoc(tmp_path, "doctor", "--site-packages", str(site), *GPU, "--format", "json").check(*READ)
    # the same files inside an image
    entries = [im.file_("usr/bin/python3.12", b"", 0o755)]
    for p in sorted(site.rglob("*")):
        if p.is_file():
            entries.append(im.file_(f"usr/lib/python3.12/site-packages/{p.relative_to(site)}", p.read_bytes()))
    image = im.write_docker_save(tmp_path / "img.tar", [im.layer(entries)], im.config())
    wheeldoc(tmp_path, "image", str(image), *GPU).check(*READ)
    shutil.rmtree(site)


IMAGES = {
    "config-nested": dict(config=d.nested_object_json().encode()),
    "manifest-nested": dict(manifest=d.nested_array().encode()),
    "index-nested": dict(index=d.nested_object_json().encode()),
    "config-big-int": dict(config=('{"architecture":"amd64","os":"linux","config":{"Env":[]},'
                                   '"rootfs":{"type":"layers","diff_ids":[]},"x":' + d.BIG + "}").encode()),
    "tag-big": dict(tag="app:" + d.BIG),
    "tag-superscript": dict(tag=f"app:1{d.SUPER}"),
}


@pytest.mark.parametrize("case", list(IMAGES))
def test_images(tmp_path, case):
    image = d.image_with(tmp_path / "img.tar", **IMAGES[case])
    r = wheeldoc(tmp_path, "image", str(image), *GPU).check(0, 1, 2)
    if case in ("config-nested", "manifest-nested", "config-big-int"):
        assert r.code == 2 and "img.tar" in r.err

"""`docker save` tarballs whose uncompressed layers hold hundreds of thousands of empty members: a
512-byte header each, so a 100 MB layer lists 200,000 of them and a gigabyte two million, each
costing about 400 bytes of lists and tree (before the bound, 1M members took 15.8 s and 812 MB).
The members an image may hold are bounded per image in proportion to its layers' bytes, per layer
and per image by fixed caps, and in the archive itself; each refusal names its limit, in bounded
time and memory. Generator: `bombs.many_members_image` (headers written directly, streamed)."""

from __future__ import annotations

import pytest

from tests.hostile import bombs as b
from tests.hostile.runner import wheeldoc


def _image(tmp_path, argv_extra=(), **kw):
    img = b.many_members_image(tmp_path / "many.tar", **kw)
    runs = [wheeldoc(tmp_path, "image", str(img), *b.GPU, *argv_extra).check(2),
            wheeldoc(tmp_path, "image", str(img), *b.GPU, "--format", "json").check(2)]
    import json

    (finding,) = json.loads(runs[1].out)["findings"]
    assert finding["rule"] == "WD001" and finding["path"].startswith(str(img))
    return runs[0].err, finding["message"]


def test_layer_of_200k_empty_members_pays_for_100k(tmp_path):
    """102 MB of uncompressed tar pays for 100,001 members (one per 1,024 bytes): refused there."""
    err, msg = _image(tmp_path, layers=[200_000])
    assert "more than 100,001 members in 102,401,024 bytes of uncompressed tar" in err
    assert "limit: 100,000 per image, or one per 16 compressed or 1,024 uncompressed layer bytes" in msg


def test_layers_that_each_pass_are_bounded_together(tmp_path):
    """Three layers of 60,000 empty members: each alone under the floor, the image over it."""
    err, _ = _image(tmp_path, layers=[60_000, 60_000, 60_000])
    assert "more than 100,000 members" in err and "and the layers below" in err and "/layer.tar" in err


@pytest.mark.slow
def test_layer_that_pays_for_its_members_still_stops_at_the_fixed_cap(tmp_path):
    """200,001 members of 512 bytes each (205 MB): the proportional budget allows them, the
    per-layer cap does not."""
    err, _ = _image(tmp_path, layers=[200_001], pad=512)
    assert "more than 200,000 members in one layer (limit max_layer_members 200,000)" in err


def test_archive_of_100k_junk_members(tmp_path):
    err, _ = _image(tmp_path, layers=[1], archive_members=100_001)
    assert "more than 100,000 members in the archive (limit max_archive_members 100,000" in err


def test_a_layer_of_50k_members_is_read(tmp_path):
    """Under every bound: the image is read (no Python inside it: a WD002 says so)."""
    img = b.many_members_image(tmp_path / "ok.tar", layers=[50_000])
    r = wheeldoc(tmp_path, "image", str(img), *b.GPU).check(1)
    assert "no Python environment" in r.out

"""The lesser holes: RECORD rows that point outside site-packages, a sparse 1 GiB METADATA, a
7 MB logical requirements line (the 1.2M-entry fatbin is in test_bombs.py)."""

from __future__ import annotations

import json
import os

from tests.hostile import bombs as b
from tests.hostile.runner import wheeldoc

GPU = ("--gpu", "h200", "--driver", "580.95.05")


def test_record_rows_outside_site_packages_are_refused_not_read(tmp_path):
    site = b.site(tmp_path / "venv/site", b.eg.shared_object(b"\0libc.so.6\0", [(b.eg.DT_NEEDED, 1)]))
    outside = tmp_path / "venv/outside.so"  # a real library the host has, outside site-packages
    outside.write_bytes(b.eg.shared_object(b"\0libsecret.so\0", [(b.eg.DT_NEEDED, 1)]))
    rec = site / "pkg-1.0.dist-info/RECORD"
    rec.write_text(rec.read_text() + "../outside.so,,\n" + f"{outside},,\n")
    r = wheeldoc(tmp_path, "doctor", "--site-packages", str(site), *GPU, "--format", "json").check(1)
    doc = json.loads(r.out)
    assert "libsecret.so" not in r.out and "outside.so" in r.out
    refused = [f for f in doc["findings"] if f["rule"] == "WD002" and "points outside site-packages" in f["message"]]
    assert len(refused) == 2


def test_sparse_gigabyte_metadata_is_a_wd002_naming_the_limit(tmp_path):
    site = b.site(tmp_path / "site", b"")
    meta = site / "pkg-1.0.dist-info/METADATA"
    with open(meta, "ab") as fh:
        fh.write(b"\n")
    os.truncate(meta, 1 << 30)
    r = wheeldoc(tmp_path, "doctor", "--site-packages", str(site), *GPU).check(1)
    assert "WD002" in r.out and "METADATA is 1,073,741,824 bytes (limit 16,777,216)" in r.out


def test_seven_megabyte_logical_line_gives_a_short_error(tmp_path):
    big = "y" * (7 << 20)
    cases = {"invalid-url": f"torch @ http://[{big}\n", "marker": f"torch==2.11.0; python_version {big}\n",
             "extras": f"torch[{big}\n", "continued": "torch==2.11.0 \\\n" + ("x" * 1000 + " \\\n") * 7000 + "\n",
             "option": f"--frobnicate {big}\n", "include": f"-r {big}\n"}
    for name, text in cases.items():
        req = tmp_path / f"{name}.txt"
        req.write_text(text)
        r = wheeldoc(tmp_path, "check", str(req), *GPU).check(0, 1, 2)
        assert len(r.out) + len(r.err) < 5_000, f"{name}: {len(r.out) + len(r.err)} bytes of output"
        if name in ("invalid-url", "marker", "extras"):
            assert "characters left out" in r.out + r.err

"""An install that replaces the image's torch, followed in the same stage by moving a saved copy of the
torch package back into site-packages by hand (held-out 9's whisper-service on NGC 25.01): the
replacement happens, and the file undoes it on purpose, so WD403 says it at info."""

from __future__ import annotations

TEXT = """
    FROM nvcr.io/nvidia/pytorch:25.01-py3
    RUN cp -r /usr/local/lib/python3.12/dist-packages/torch /tmp/torch_nvidia
    RUN pip install --no-cache-dir "pyannote.audio==3.3.2"
    RUN rm -rf /usr/local/lib/python3.12/dist-packages/torch && \\
        {restore}
"""


def wd403(findings: list[dict]) -> list[tuple[int, str]]:
    return [(f["line"], f["severity"]) for f in findings if f["rule"] == "WD403"]


def test_a_torch_moved_back_by_hand_makes_the_replacement_deliberate(check):
    got = check(TEXT.format(restore="mv /tmp/torch_nvidia /usr/local/lib/python3.12/dist-packages/torch"))
    [f] = [f for f in got if f["rule"] == "WD403"]
    assert f["severity"] == "info" and "moves a saved copy of the torch package back" in f["message"]


def test_without_the_restore_it_is_an_error(check):
    assert wd403(check(TEXT.format(restore="echo removed"))) == [(3, "error")]
    # copying torch away (the source is site-packages) is no restore
    assert wd403(check(TEXT.format(restore="cp -r /usr/local/lib/python3.12/dist-packages/torch /backup"))) == \
        [(3, "error")]

"""WD403: an exact torch pin over the exact torch an earlier line installed undoes that line's
choice (its version and its index); the same release, a held torch, or the torch stack replaced
together is not flagged."""

from __future__ import annotations

EARLIER = """
    FROM nvidia/cuda:12.1.1-devel-ubuntu22.04
    RUN pip install torch==2.2.2 --index-url https://download.pytorch.org/whl/cu121
    COPY requirements.txt .
    RUN pip install -r requirements.txt
"""


def wd403(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["rule"] == "WD403" and f["severity"] in ("warning", "error")]


def test_a_second_exact_torch_pin_undoes_the_first(check):
    [f] = wd403(check(EARLIER, files={"requirements.txt": "numpy==2.0.0\ntorch==2.7.1\n"}))
    assert f["severity"] == "warning" and f["line"] == 4
    assert "torch==2.7.1 over the torch 2.2.2 installed on line 2" in f["message"]
    assert f["data"]["torch_installed"] == "2.2.2" and f["data"]["torch_required"] == "==2.7.1"


def test_the_same_release_or_a_held_torch_is_clean(check):
    assert wd403(check(EARLIER, files={"requirements.txt": "torch==2.2.2\n"})) == []
    held = EARLIER.replace("pip install -r requirements.txt", "pip install -c /c.txt -r requirements.txt")
    held = held.replace("COPY requirements.txt .", "COPY requirements.txt .\n    RUN echo torch==2.2.2 > /c.txt")
    assert wd403(check(held, files={"requirements.txt": "torch==2.7.1\n"})) == []


def test_the_torch_stack_replaced_together_is_clean(check):
    stack = "torch==2.7.1\ntorchvision==0.22.1\ntorchaudio==2.7.1\n"
    assert wd403(check(EARLIER, files={"requirements.txt": stack})) == []


def test_an_unpinned_earlier_torch_is_not_a_choice_of_version(check):
    text = EARLIER.replace("torch==2.2.2 ", "torch ")
    assert wd403(check(text, files={"requirements.txt": "torch==2.7.1\n"})) == []

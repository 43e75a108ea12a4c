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


def test_the_newest_release_capping_torch_below_the_image_torch_is_a_no():
    # the newest release's specifier (`picked`): its cap is a no as of the table, like its floor;
    # a torch inside it a yes; a specifier not picked (an exact release) is judged as written
    from wheeldoc.dockerfile.dependents import admits
    from wheeldoc.dockerfile.torch_state import TorchState

    exact = TorchState(True, version="2.6.0+cu124")
    assert admits("<2.3.0,>=2.2.0", exact, picked=True) is False
    assert admits(">=2.4,<2.7", exact, picked=True) is True
    assert admits(">=2.4", exact, picked=True) is True
    newest = TorchState(True, lowest="2.15.0")  # an unpinned torch: PyPI's newest, 2.15.0 or later
    assert admits(">=2.4.0,<2.15.0", newest, picked=True) is False
    assert admits(">=2.4.0,<2.16.0", newest, picked=True) is None  # 2.15.x admitted, a later one not


def test_a_ranged_image_torch_that_every_bound_admits_is_admitted():
    # runpod/pytorch:2.2.0-… holds a torch of series 2.2 to 2.5: `>=2.0.0` admits all of it
    from wheeldoc.dockerfile.dependents import admits
    from wheeldoc.dockerfile.torch_state import TorchState

    ranged = TorchState(True, lowest="2.2.0.dev0", highest="2.5")
    assert admits(">=2.0.0", ranged, picked=True) is True
    assert admits(">=2.0,<3", ranged, picked=False) is True
    assert admits(">=2.3", ranged, picked=False) is None  # 2.2.x is not admitted, 2.3+ is
    assert admits("<2.5.1", ranged, picked=False) is None  # 2.5.1+ would not be


def test_a_later_build_sees_the_torch_an_unpinned_install_moved(check):
    # line 2 takes vLLM's newest, which pins a CUDA 13 torch from PyPI; line 3 then compiles against
    # that torch with the image's nvcc 12.4 (the packages line 2 names are not "already there" for it)
    text = """
        FROM pytorch/pytorch:2.6.0-cuda12.4-cudnn9-devel
        RUN pip install vllm
        RUN pip install flash-attn --no-build-isolation
    """
    found = [(f["rule"], f["line"]) for f in check(text) if f["severity"] in ("warning", "error")]
    assert ("WD403", 2) in found and ("WD405", 3) in found

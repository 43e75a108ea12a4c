"""pytorch/pytorch:<torch>-cuda… images: the Python of each, per torch release, from public files
that state it (scripts/make_base_images.py PYTORCH_IMAGE_PYTHONS); a release not read takes the
Python of the read releases on both sides only when they agree."""

from __future__ import annotations

import pytest

from wheeldoc.data.base_images import base_image


@pytest.mark.parametrize(("tag", "python"), [
    ("2.6.0-cuda12.4-cudnn9-devel", "3.11"),      # read for that release
    ("2.1.2-cuda12.1-cudnn8-devel", "3.10"),      # between 2.1.0 and 2.2.2, both 3.10
    ("2.7.1-cuda12.8-cudnn9-runtime", "3.11"),    # between 2.6.0 and 2.8.0, both 3.11
    ("2.3.0-cuda12.1-cudnn8-runtime", None),      # between 2.2.2 (3.10) and 2.4.0 (3.11): not known
    ("2.10.0-cuda12.8-cudnn9-runtime", None),     # between 2.9.1 (3.11) and 2.11.0 (3.12): not known
    ("2.15.0-cuda13.0-cudnn9-runtime", None),     # past the newest read release: not known
])
def test_python_of_the_image(tag: str, python: str | None) -> None:
    img = base_image(f"pytorch/pytorch:{tag}")
    assert img is not None and img.python == python
    if python:
        assert f"Python {python}" in img.source


def test_the_source_names_the_tag_values() -> None:
    img = base_image("pytorch/pytorch:2.6.0-cuda12.4-cudnn9-devel")
    assert "torch 2.6.0 built for CUDA 12.4" in img.source and "{torch}" not in img.source

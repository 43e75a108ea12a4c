"""NGC PyTorch releases read from the image's own start banner ('NVIDIA Release YY.MM (build …) PyTorch
Version …') in public files that run the exact tag, or from a translation of the release notes:
base_image() answers what they say."""

from __future__ import annotations

import pytest

from wheeldoc.data.base_images import base_image


@pytest.mark.parametrize("tag,torch", [("22.03", "1.12.0a0+2c916ef"), ("23.01", "1.14.0a0+44dac51"),
                                       ("23.07", "2.1.0a0+b5021ba"), ("23.10", "2.1.0a0+32f93b1"),
                                       ("26.03", "2.11.0a0+a6c236b")])
def test_a_banner_read_release_answers_its_build(tag, torch):
    img = base_image(f"nvcr.io/nvidia/pytorch:{tag}-py3")
    assert img.torch.version == torch and img.torch.prerelease
    assert "a public file about that tag" in img.torch.via and f"NVIDIA Release {tag} (build" in img.source


def test_a_banner_gives_the_torch_only():
    img = base_image("nvcr.io/nvidia/pytorch:23.07-py3")
    assert img.cuda is None  # the banner says neither CUDA nor Python
    assert img.python == "3.10" and "as for 23.05 and 23.08 on either side" in img.source  # its read neighbours
    assert base_image("nvcr.io/nvidia/pytorch:26.03-py3").cuda == (13, 2)  # from a second file about the tag


def test_a_release_read_from_a_translation_of_its_notes():
    img = base_image("nvcr.io/nvidia/pytorch:23.08-py3")
    assert img.torch.version == "2.1.0a0+29c30b1" and img.python == "3.10" and img.cuda == (12, 2)
    assert "rel-23-08" in img.source

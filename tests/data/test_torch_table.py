"""torch.json holds only facts read from published wheels (scripts/make_torch_table.py)."""

from wheeldoc.data.torch import torch_table


def test_every_companion_and_pypi_cuda_fact_names_its_wheel():
    for s in torch_table().series.values():
        sources = dict(s.sources)
        for comp in ("torchvision", "torchaudio"):
            if getattr(s, comp) is not None:
                assert sources[comp].split()[0].startswith(comp + "-")
        for platform, _ in s.pypi_cuda:
            assert sources[f"torch {platform}"].startswith(f"torch-{s.series}.")


def test_no_invented_torchaudio_releases():
    # torchaudio's last series on the index is 2.11 (2.11.1 requires torch>=2.11): later torch
    # series have no torchaudio, so nothing is judged about one.
    t = torch_table().series
    assert t["2.11"].torchaudio == "2.11"
    assert all(t[s].torchaudio is None for s in ("2.12", "2.13", "2.14"))


def test_pypi_cuda_per_platform_from_requires_dist():
    t = torch_table().series
    assert t["2.10"].pypi_cuda_major("linux-x86_64") == (True, 12)
    assert t["2.10"].pypi_cuda_major("linux-aarch64") == (True, None)  # CPU-only on PyPI
    assert t["2.11"].pypi_cuda_major("linux-aarch64") == (True, 13)
    assert t["2.11"].pypi_cuda_major("macos-arm64") == (False, None)  # not read: unknown

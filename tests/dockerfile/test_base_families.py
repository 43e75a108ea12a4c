"""WD403 and WD409 over the base images the table learnt from a scan of public Dockerfiles
(SGLang's `latest`/`dev` and suffixed release tags, Jetson PyTorch images): a dependent pinning
another torch replaces the image's torch (error); a protected or compatible install is left alone;
where the row does not know a fact (a torch inside the tag's series, the image's whole ENV) the
rules stay at info."""

from __future__ import annotations


def wd(findings: list[dict], rule: str = "WD403") -> list[tuple[int, str]]:
    return [(f["line"], f["severity"]) for f in findings if f["rule"] == rule]


def test_sglang_latest_an_older_pin_replaces_its_torch(check):
    f = check("""
        FROM lmsysorg/sglang:latest
        RUN pip install sglang==0.4.6.post1
    """)
    assert wd(f) == [(2, "error")]
    [hit] = [x for x in f if x["rule"] == "WD403"]
    assert "at least the newest sglang in the table" in hit["message"] and hit["data"]["torch_installed"] is None


def test_sglang_latest_protected_or_compatible_installs_are_clean(check):
    f = check("""
        FROM lmsysorg/sglang:latest
        RUN pip install --no-deps sglang==0.4.6.post1
        RUN pip install accelerate==1.15.0
    """)
    assert wd(f) == []  # --no-deps leaves torch alone; accelerate asks torch>=2.0.0, which the image's admits


def test_sglang_dev_an_old_vllm_replaces_its_torch_with_uv_too(check):
    assert wd(check("FROM lmsysorg/sglang:dev\nRUN uv pip install --system vllm==0.9.1\n")) == [(2, "error")]


def test_sglang_suffixed_release_tag_holds_that_release_torch(check):
    base = "FROM lmsysorg/sglang:v0.5.10.post1-runtime\n"  # sglang 0.5.10.post1: torch==2.9.1
    assert wd(check(base + "RUN pip install vllm==0.9.1\n")) == [(2, "error")]  # torch==2.7.0
    assert wd(check(base + "RUN pip install torchvision==0.24.1\n")) == []  # torch==2.9.1: kept
    assert wd(check(base + "RUN uv pip install --system vllm==0.9.1 --override o.txt\n",
                    files={"o.txt": "torch==2.9.1\n"})) == []


def test_sglang_rocm_tag_stays_unknown(check):
    f = check("FROM lmsysorg/sglang:latest-rocm\nRUN pip install vllm==0.9.1\n")
    assert wd(f) == [(2, "info")] and f[0]["data"]["base_known"] is False


def test_jetson_series_tag_a_pin_outside_the_series_replaces_torch(check):
    f = check("FROM dustynv/pytorch:2.7-r36.4.0\nRUN pip install vllm==0.6.3\n")  # torch==2.4.0
    assert wd(f) == [(2, "error")] and "a torch of series 2.7" in f[0]["message"]
    f = check("FROM nvcr.io/nvidia/l4t-pytorch:r35.2.1-pth2.0-py3\nRUN pip install vllm==0.6.3\n")
    assert wd(f) == [(2, "error")]


def test_jetson_series_tag_a_pin_inside_the_series_is_not_judged(check):
    # torch==2.7.0 on an image of series 2.7: kept if the image has 2.7.0, replaced if it has an NVIDIA 2.7 build
    assert wd(check("FROM dustynv/pytorch:2.7-r36.4.0\nRUN pip install vllm==0.9.1\n")) == [(2, "info")]
    assert wd(check("FROM dustynv/pytorch:2.7-r36.4.0\nRUN pip install accelerate==1.15.0\n")) == []
    assert wd(check("FROM dustynv/pytorch:2.7-r36.4.0\nRUN pip install --no-deps vllm==0.6.3\n")) == []


PYTORCH3D = 'RUN FORCE_CUDA=1 pip install "git+https://github.com/facebookresearch/pytorch3d.git@stable"\n'


def test_wd409_jetson_image_that_sets_the_arch_list(check):
    assert wd(check("FROM dustynv/pytorch:2.7-r36.4.0\n" + PYTORCH3D), "WD409") == []


def test_wd409_image_whose_env_the_table_does_not_fully_know_is_info(check):
    for base in ("nvcr.io/nvidia/l4t-pytorch:r35.2.1-pth2.0-py3", "dustynv/pytorch:2.1-r36.2.0",
                 "lmsysorg/sglang:latest"):
        f = check(f"FROM {base}\n" + PYTORCH3D)
        assert wd(f, "WD409") == [(2, "info")], base
        assert "does not know all the ENV" in f[0]["message"]
    # control: a base whose ENV the table knows in full keeps its warning
    assert wd(check("FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN pip install torch==2.5.1\n" + PYTORCH3D),
              "WD409") == [(3, "warning")]


def test_pytorch_1_9_1_devel_judged_against_the_torch_it_holds(check):
    base = "FROM pytorch/pytorch:1.9.1-cuda11.1-cudnn8-devel\n"
    assert wd(check(base + "RUN pip install torchvision==0.11.1\n")) == []  # torch==1.10.0: the image's own
    assert wd(check(base + "RUN pip install torchvision==0.10.1\n")) == [(2, "error")]  # torch==1.9.1 replaces it


def test_verl_base_a_pin_outside_the_series_replaces_torch(check):
    base = "FROM verlai/verl:base-verl0.5-cu126-cudnn9.8-torch2.7.1-fa2.8.0-fi0.2.6\n"
    assert wd(check(base + "RUN pip install vllm==0.6.3\n")) == [(2, "error")]  # torch==2.4.0
    assert wd(check(base + "RUN pip install vllm==0.9.1\n")) == [(2, "info")]  # torch==2.7.0: 2.7.0 or 2.7.1 there
    assert wd(check(base + PYTORCH3D), "WD409") == []  # TORCH_CUDA_ARCH_LIST comes from the NGC base

"""WD403 over the build context, base images the table knows or does not, torch's companions
(torchvision/torchaudio, their pins read from real metadata), and WD409 on bases that set the
architecture list (docs/real-world-heldout.md, "after the cause fixes")."""

from __future__ import annotations

import os


RUNPOD = "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04"


def wd403(findings):
    return [(f["line"], f["severity"]) for f in findings if f["rule"] == "WD403"]


# -- the build context ------------------------------------------------------------------------

PROJECT = f"""
    FROM {RUNPOD}
    WORKDIR /app
    COPY pyproject.toml ./
    RUN uv pip install --system .
"""


def test_project_requirements_from_pyproject_replace_the_base_torch(check):
    f = check(PROJECT, files={"pyproject.toml": '[project]\nname = "x"\nversion = "0"\n'
                                                'dependencies = ["fastapi", "vllm>=0.6.0"]\n'})
    assert wd403(f) == [(4, "error")]
    d = f[0]["data"]
    assert d["package"] == "vllm" and d["torch_installed"] is None and d["known"] is True
    assert "a requirement of the project ." in d["requirement_from"]
    assert "series 2.4 to 2.6" in f[0]["message"]


def test_project_extras_and_dynamic_dependencies(check):
    f = check(PROJECT.replace("install --system .", 'install --system ".[serve]"'),
              files={"pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = []\n'
                                       '[project.optional-dependencies]\nserve = ["vllm"]\n'})
    assert wd403(f) == [(4, "error")]
    f = check(PROJECT.replace("COPY pyproject.toml ./", "COPY . ."),
              files={"pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndynamic = ["dependencies"]\n'
                                       '[tool.setuptools.dynamic]\ndependencies = {file = ["req.txt"]}\n',
                     "req.txt": "vllm==0.9.1\n"})
    assert wd403(f) == [(4, "error")] and f[0]["data"]["torch_required"] == "==2.7.0"


def test_project_that_admits_the_torch_or_holds_it_is_clean(check):
    ok = '[project]\nname = "x"\nversion = "0"\ndependencies = ["fastapi", "vllm==0.6.1"]\n'  # torch==2.4.0
    exact = PROJECT.replace(RUNPOD, "runpod/pytorch:1.0.2-cu1241-torch240-ubuntu2204")  # torch==2.4.0 exactly
    assert wd403(check(exact, files={"pyproject.toml": ok})) == []
    # the old tag holds a torch of series 2.4 to 2.6: whether ==2.4.0 admits it is not known, said as info
    f = check(PROJECT, files={"pyproject.toml": ok})
    assert wd403(f) == [(4, "info")] and f[0]["data"]["known"] is False
    held = ('[project]\nname = "x"\nversion = "0"\ndependencies = ["vllm"]\n'
            '[tool.uv]\noverride-dependencies = ["torch==2.4.0"]\n')
    assert wd403(check(PROJECT, files={"pyproject.toml": held})) == []
    marker = '[project]\nname = "x"\nversion = "0"\ndependencies = ["vllm; sys_platform == \'darwin\'"]\n'
    assert wd403(check(PROJECT, files={"pyproject.toml": marker})) == []


def test_requirements_file_read_through_copy_without_workdir(check):
    text = """
        FROM nvcr.io/nvidia/pytorch:23.12-py3
        COPY requirements.txt .
        RUN pip install -r requirements.txt
    """
    f = check(text, files={"requirements.txt": "vllm\ntransformers==4.40.2\n"})
    assert wd403(f) == [(3, "error")]
    assert "in requirements.txt" in f[0]["data"]["requirement_from"]
    # a pinned torch in the same requirements is a deliberate choice, but it swaps out the base image's
    # build under the packages the image built against it: a warning, not an error
    f = check(text, files={"requirements.txt": "torch==2.5.1\nvllm==0.6.4\n"})
    assert wd403(f) == [(3, "warning")] and "deliberate pin" in f[0]["message"]
    # with its companions in the same install, the torch stack is replaced on purpose
    assert wd403(check(text, files={"requirements.txt": "torch==2.5.1\ntorchvision==0.20.1\nvllm==0.6.4\n"})) == []


def test_absent_context_file_is_an_info_never_a_warning(check):
    f = check(PROJECT)  # no pyproject.toml next to the Dockerfile
    assert wd403(f) == [(4, "info")]
    assert f[0]["data"]["unread"] == ["."] and f[0]["data"]["known"] is False
    # a project nothing copies in (a clone) is not "unread": nothing to say
    f = check(f"FROM {RUNPOD}\nRUN git clone https://github.com/o/p && cd p && pip install .\n")
    assert wd403(f) == []


def test_context_option(check, tmp_path):
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\ndependencies = ["vllm"]\n')
    assert wd403(check(PROJECT, "--context", str(ctx))) == [(4, "error")]
    res = check(PROJECT, "--context", str(tmp_path / "nope"), code=2)
    assert "--context" in res.err and "not a directory" in res.err


def test_context_is_read_safely(check, tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-outside.toml"
    outside.write_text('[project]\nname = "x"\nversion = "0"\ndependencies = ["vllm"]\n')
    (tmp_path / "pyproject.toml").symlink_to(outside)
    f = check(PROJECT)
    assert wd403(f) == [(4, "info")]  # a symlink out of the context is not followed
    (tmp_path / "pyproject.toml").unlink()
    os.mkfifo(tmp_path / "pyproject.toml")  # a FIFO would block a naive open()
    f = check(PROJECT)
    assert wd403(f) == [(4, "info")]
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / "pyproject.toml").write_text("[project\nthis is not toml")
    assert wd403(check(PROJECT)) == []  # broken: the build fails on it, nothing judged here


# -- base images ------------------------------------------------------------------------------

def test_runpod_rows():
    from wheeldoc.data.base_images import base_image

    old = base_image(RUNPOD)
    assert old.torch.version is None and old.torch.lowest == "2.4.0.dev0" and old.torch.highest_series == "2.6"
    assert old.ships == frozenset({"torchvision", "torchaudio"}) and old.cuda == (12, 4)
    assert base_image("runpod/pytorch:2.8.0-py3.11-cuda12.8.1-cudnn-devel-ubuntu22.04").torch.highest_series == "2.8"
    new = base_image("runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404")
    assert new.torch.version == "2.8.0" and new.cuda == (12, 8)
    assert base_image("runpod/pytorch:0.7.0-dev-ubuntu2204-cu1241-torch240").torch.version == "2.4.0"
    assert base_image("runpod/pytorch:1.13.0-py3.10-cuda11.7.1-devel-ubuntu22.04") is None  # 1.x: not described
    assert base_image("nvcr.io/nvidia/pytorch:25.01-py3").ships is None  # its package list is not published


def test_runpod_base_and_unpinned_vllm(check):
    assert wd403(check(f"FROM {RUNPOD}\nRUN pip install vllm\n")) == [(2, "error")]
    f = check(f"FROM {RUNPOD}\nRUN pip install vllm==0.6.3\n")  # torch==2.4.0: the image's may be 2.4 to 2.6
    assert wd403(f) == [(2, "info")] and f[0]["data"]["known"] is False


def test_unknown_base_says_so_once(check):
    f = check("FROM example.org/team/pytorch-gpu:3\nRUN pip install vllm\nRUN pip install timm\n")
    assert wd403(f) == [(2, "info")]
    assert "its name suggests it ships torch" in f[0]["message"] and f[0]["data"]["base_known"] is False
    f = check("FROM example.org/team/app:3\nRUN pip install requests\n")
    assert wd403(f) == []  # nothing torch-related installed: what the base ships does not matter


# -- torch's companions -----------------------------------------------------------------------

def test_companion_pins_come_from_real_metadata():
    from wheeldoc.data.base_images import torch_requirement

    assert torch_requirement("torchvision", "0.20.1") == ("==2.5.1", False)
    assert torch_requirement("torchaudio", "2.5.1") == ("==2.5.1", False)


CU121 = """
    FROM nvidia/cuda:12.1.0-cudnn8-devel-ubuntu22.04
    RUN pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu121
"""


def test_unpinned_companion_upgrade_replaces_torch(check):
    f = check(CU121 + "RUN pip install -U torchvision --extra-index-url https://download.pytorch.org/whl/cu121\n")
    assert wd403(f) == [(3, "error")] and f[0]["data"]["package"] == "torchvision"
    # only the PyTorch index: its newest torchvision is the one for its torch
    assert wd403(check(CU121 + "RUN pip install -U torchvision --index-url https://download.pytorch.org/whl/cu121\n")) == []
    # uv takes torchvision from the first index that has it
    assert wd403(check(CU121 + "RUN uv pip install --system -U torchvision "
                               "--extra-index-url https://download.pytorch.org/whl/cu121\n")) == []
    # pinned to the torch that is there
    assert wd403(check(CU121 + "RUN pip install torchvision==0.20.1\n")) == []


def test_unpinned_companion_that_may_already_be_there_is_info(check):
    # pytorch/pytorch ships torchvision: a plain install keeps it
    assert wd403(check("FROM pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime\nRUN pip install torchvision\n")) == []
    # NGC's package list is not published: torchvision may be there, and then it is kept
    ngc = "FROM nvcr.io/nvidia/pytorch:24.07-py3\nRUN pip install torch==2.5.1\n"
    f = check(ngc + "RUN pip install torchvision\n")
    assert wd403(f) == [(2, "warning"), (3, "info")] and "If torchvision is already installed" in f[1]["message"]
    # with -U the newest torchvision is taken whatever is there
    assert wd403(check(ngc + "RUN pip install -U torchvision\n")) == [(2, "warning"), (3, "error")]


# -- WD409 -----------------------------------------------------------------------------------

def test_wd409_ngc_sets_the_arch_list_and_detectron2_needs_force_cuda(check):
    xf = "RUN pip install -v --no-build-isolation git+https://github.com/facebookresearch/xformers.git\n"
    assert [f for f in check("FROM nvcr.io/nvidia/pytorch:25.01-py3\n" + xf) if f["rule"] == "WD409"] == []
    assert [f["severity"] for f in check("FROM nvidia/cuda:12.8.1-devel-ubuntu24.04\n" + xf)
            if f["rule"] == "WD409"] == ["warning"]
    d2 = "RUN pip install git+https://github.com/facebookresearch/detectron2.git\n"
    base = "FROM nvidia/cuda:12.1.0-cudnn8-devel-ubuntu22.04\n"
    assert [f for f in check(base + d2) if f["rule"] == "WD409"] == []
    assert [f["severity"] for f in check(base + "ENV FORCE_CUDA=1\n" + d2) if f["rule"] == "WD409"] == ["warning"]


def test_a_copy_to_a_path_a_workdir_names_lands_inside_that_directory(check):
    text = f"""
        FROM {RUNPOD}
        COPY requirements.txt /workspace
        WORKDIR /workspace
        RUN pip install -r requirements.txt
    """
    f = check(text, files={"requirements.txt": "vllm>=0.6.0\n"})
    assert wd403(f) == [(4, "error")]  # /workspace is a directory (WORKDIR on a file fails the build)
    f = check(text.replace("WORKDIR /workspace", "WORKDIR /srv"), files={"requirements.txt": "vllm>=0.6.0\n"})
    assert wd403(f) != [(4, "error")]  # /workspace is then a file: `-r requirements.txt` is not it

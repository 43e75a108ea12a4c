"""WD4xx rules: what each raises on the committed fixtures (hits and non-hits, with lines and
fixes) and on small inline Dockerfiles for the cases in between."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from wheeldoc.dockerfile.facts import DockerFacts
from wheeldoc.dockerfile.rules import _parse_cmake_list, _parse_flags, _parse_torch_list
from wheeldoc.data.tool_env import tool_env
from wheeldoc.dockerfile.parser import parse_dockerfile, parse_text
from wheeldoc.dockerfile.stages import analyze

ROOT = Path(__file__).resolve().parents[2]
D = ROOT / "fixtures" / "dockerfiles"
R = D / "rules"


@pytest.fixture
def check(cli, tmp_path):
    """Lint Dockerfile text (or a fixture path); returns the JSON findings."""

    def run(text_or_path, *flags: str, files: dict[str, str] | None = None, name: str = "Dockerfile"):
        if isinstance(text_or_path, Path):
            path = text_or_path
        else:
            path = tmp_path / name
            path.write_text(textwrap.dedent(text_or_path).lstrip("\n"))
            for rel, body in (files or {}).items():
                (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / rel).write_text(body)
        res = cli("check", str(path), *flags, "--format", "json", "--fail-on", "never")
        assert res.code == 0, res.err
        return res.json()["findings"]

    return run


def rules_at(findings, code=None):
    return sorted((f["rule"], f["line"]) for f in findings if code is None or f["rule"] == code)


# -- WD401 ---------------------------------------------------------------------------------------


def test_wd401_story_names_variable_setter_and_command(check):
    f = check(R / "wd401-story.Dockerfile")
    assert rules_at(f) == [("WD401", 14)]
    (hit,) = f
    assert hit["severity"] == "warning"
    assert "UV_HTTP_TIMEOUT" in hit["message"] and "stage 'base' sets UV_HTTP_TIMEOUT=600 (ENV, line 4)" in \
        hit["message"]
    assert "nvidia-cublas==13.1.1.3" in hit["message"] and "stage 'runner'" in hit["message"]
    assert hit["fix"]["applicability"] == "safe"
    assert hit["fix"]["edits"] == [{"path": str(R / "wd401-story.Dockerfile"), "line": 11,
                                    "content": "ENV UV_HTTP_TIMEOUT=600", "action": "insert_after",
                                    "end_line": None}]


def test_wd401_fixed_story_and_suppression(check):
    assert check(R / "wd401-story-fixed.Dockerfile") == []
    assert rules_at(check(R / "wd401-suppressed.Dockerfile"), "WD401") == []


def test_wd401_global_arg_is_redeclared(check):
    f = check(R / "wd401-global-arg.Dockerfile")
    by_var = {x["data"]["variable"]: x for x in f}
    assert set(by_var) == {"PIP_INDEX_URL", "PIP_DEFAULT_TIMEOUT"}
    assert by_var["PIP_INDEX_URL"]["severity"] == "error"
    assert "visible to FROM lines only" in by_var["PIP_INDEX_URL"]["message"]
    assert by_var["PIP_INDEX_URL"]["fix"]["edits"][0]["content"] == "ARG PIP_INDEX_URL"


def test_wd401_covered_by_inline_export_flag_alias_or_ancestor(check):
    base = """
        FROM nvidia/cuda:13.0.1-devel-ubuntu24.04 AS base
        ENV UV_HTTP_TIMEOUT=600 UV_INDEX_URL=https://mirror.example/simple
        FROM python:3.12 AS a
        RUN UV_HTTP_TIMEOUT=600 uv pip install --system --index-url https://mirror.example/simple requests
        FROM python:3.12 AS b
        RUN export UV_HTTP_TIMEOUT=900 && uv pip install --system --default-index https://x.example requests
        FROM python:3.12 AS c
        ENV UV_REQUEST_TIMEOUT=600 UV_DEFAULT_INDEX=https://mirror.example/simple
        RUN uv pip install --system requests
        FROM base AS d
        RUN uv pip install --system requests
        FROM python:3.12 AS e
        RUN uv pip install --system --offline requests
    """
    assert rules_at(check(base), "WD401") == []


def test_wd401_sees_no_inheritance_through_copy_from_and_reports_once_per_stage(check):
    f = check("""
        FROM python:3.12 AS base
        ENV PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cu130
        FROM python:3.12 AS app
        COPY --from=base /usr/local /usr/local
        RUN pip install torch==2.11.0
        RUN pip install torchvision==0.26.0
    """)
    hits = [x for x in f if x["rule"] == "WD401"]
    assert len(hits) == 1 and hits[0]["line"] == 5 and hits[0]["severity"] == "error"


def test_wd401_build_variables_need_a_source_build(check):
    text = """
        FROM nvidia/cuda:13.0.1-devel-ubuntu24.04 AS ext
        ENV TORCH_CUDA_ARCH_LIST=12.1 MAX_JOBS=4
        RUN pip install --no-build-isolation ./csrc
        FROM nvidia/cuda:13.0.1-devel-ubuntu24.04 AS other
        RUN pip install requests
        RUN python3 setup.py bdist_wheel
    """
    f = check(text)
    assert sorted(x["data"]["variable"] for x in f if x["rule"] == "WD401") == ["MAX_JOBS", "TORCH_CUDA_ARCH_LIST"]
    assert all(x["line"] == 6 for x in f if x["rule"] == "WD401")


def test_wd401_build_variables_only_for_builds_that_compile_native_code(check):
    f = check("""
        FROM python:3.12 AS ext
        ENV MAX_JOBS=4
        RUN pip install torch==2.11.0 && pip install --no-build-isolation ./csrc
        FROM python:3.12 AS app
        RUN pip install git+https://github.com/huggingface/transformers.git
        RUN pip install --no-build-isolation ./kernels
    """)
    assert rules_at(f, "WD401") == [("WD401", 6)]  # the pure-Python git install compiles nothing


def test_wd401_a_later_stage_is_not_carried_over(check):
    f = check("""
        FROM nvidia/cuda:13.0.1-devel-ubuntu24.04 AS first
        RUN pip install --no-build-isolation ./a
        FROM first AS kernels
        ENV MAX_JOBS=4
        RUN pip install --no-build-isolation ./b
        FROM nvidia/cuda:13.0.1-devel-ubuntu24.04 AS last
        RUN pip install --no-build-isolation ./c
    """)
    assert rules_at(f, "WD401") == [("WD401", 7)]  # MAX_JOBS is set after `first`, before `last`


def test_wd401_a_torch_constraint_matters_to_torch_installs_only(check):
    f = check("""
        FROM python:3.12 AS builder
        ENV PIP_CONSTRAINT=/tmp/torch-constraints.txt
        FROM python:3.12 AS runtime
        RUN pip install uv
        RUN pip install vllm==0.12.0
    """)
    assert [(x["line"], x["severity"]) for x in f if x["rule"] == "WD401"] == [(5, "error")]


def test_wd401_break_system_packages_not_needed_where_the_same_base_ran_pip_without_it(check):
    text = """
        FROM ubuntu:24.04 AS builder
        RUN apt-get update && apt-get install -y python3-pip
        RUN pip install uv
        ENV PIP_BREAK_SYSTEM_PACKAGES=1
        RUN pip install requests
        FROM ubuntu:24.04 AS runtime
        RUN apt-get update && apt-get install -y python3-pip
        RUN pip install uv
    """
    assert rules_at(check(text), "WD401") == []  # line 3 ran pip on that base without it
    # without that evidence (the builder sets it first), the runtime stage is told
    assert rules_at(check(text.replace("RUN pip install uv\n        ENV", "ENV", 1)), "WD401") == [("WD401", 7)]


def test_wd401_path_values_and_unknown_values_are_not_safe(check):
    f = check("""
        FROM python:3.12 AS a
        ARG TIMEOUT
        ENV UV_PYTHON=/opt/venv/bin/python UV_HTTP_TIMEOUT=${TIMEOUT}
        FROM python:3.12 AS b
        RUN uv pip install requests
    """)
    fixes = {x["data"]["variable"]: x["fix"] for x in f if x["rule"] == "WD401"}
    assert fixes["UV_PYTHON"]["applicability"] == "unsafe"
    assert fixes["UV_HTTP_TIMEOUT"]["applicability"] == "display-only"


def test_wd401_torch_backend_only_for_torch_installs(check):
    f = check("""
        FROM python:3.12 AS a
        ENV UV_TORCH_BACKEND=cu130
        FROM python:3.12 AS b
        RUN uv pip install --system requests
        RUN uv pip install --system torch
    """)
    assert [(x["data"]["variable"], x["line"]) for x in f if x["rule"] == "WD401"] == [("UV_TORCH_BACKEND", 5)]


def test_wd401_onbuild_triggers_are_not_run_here(check):
    assert rules_at(check(D / "onbuild.Dockerfile"), "WD401") == []


def test_wd401_escape_backtick_quoting(check):
    f = check("""
        # escape=`
        FROM python:3.12 AS a
        ENV PIP_EXTRA_INDEX_URL="https://a.example/simple https://b.example/simple"
        FROM python:3.12 AS b
        RUN pip install requests
    """)
    (hit,) = [x for x in f if x["rule"] == "WD401"]
    assert hit["fix"]["edits"][0]["content"] == \
        'ENV PIP_EXTRA_INDEX_URL="https://a.example/simple https://b.example/simple"'


# -- WD402 ---------------------------------------------------------------------------------------


def test_wd402_global_and_platform_args(check):
    f = check(R / "wd402-global-arg.Dockerfile")
    got = sorted((x["data"]["arg"], x["line"], x["fix"]["edits"][0]["line"]) for x in f if x["rule"] == "WD402")
    assert got == [("TARGETARCH", 6, 4), ("TORCH_CUDA_ARCH_LIST", 9, 8), ("UV_VERSION", 6, 4)]
    assert all(x["fix"]["applicability"] == "safe" for x in f)
    assert rules_at(check(R / "wd402-redeclared.Dockerfile")) == []


def test_wd402_heredoc_line_and_shell_locals(check):
    f = check("""
        ARG PY=3.12
        ARG MODE=prod
        FROM python:3.12-slim
        RUN <<EOF
        set -e
        echo "$MODE"
        EOF
        RUN for MODE in a b; do echo "$MODE"; done
        RUN MODE=x sh -c 'echo $MODE'
    """)
    assert rules_at(f, "WD402") == [("WD402", 6)]


def test_wd402_exec_form_expands_nothing_unless_a_shell_runs_it(check):
    f = check("""
        ARG MODE=prod
        FROM python:3.12-slim
        RUN ["echo", "$MODE"]
        RUN ["/bin/sh", "-c", "echo $MODE"]
    """)
    assert rules_at(f, "WD402") == [("WD402", 4)]


def test_wd402_base_image_variable_is_info(check):
    f = check("""
        ARG CUDA_VERSION=13.0.1
        FROM nvidia/cuda:${CUDA_VERSION}-devel-ubuntu24.04
        RUN echo "$CUDA_VERSION"
    """)
    (hit,) = [x for x in f if x["rule"] == "WD402"]
    assert hit["severity"] == "info" and "sets its own CUDA_VERSION" in hit["message"]


def test_wd402_inherited_declaration_counts(check):
    assert rules_at(check("""
        ARG V=1
        FROM alpine AS a
        ARG V
        FROM a AS b
        RUN echo $V
    """), "WD402") == []


# -- WD403 / WD404 -------------------------------------------------------------------------------


def test_wd403_reads_requirements_from_the_build_context(check):
    f = check(R / "wd403-unpinned.Dockerfile")
    # line 6 installs over the torch line 5 brought in; which torch that is is not known, so only line 5 is said
    assert rules_at(f, "WD403") == [("WD403", 5)]
    first = next(x for x in f if x["line"] == 5)
    assert first["severity"] == "info"  # PyPI's x86-64 torch is a CUDA build; the platform is not given
    assert "vllm==0.11.0 (in /tmp/requirements-serving.txt)" in first["message"]
    assert "--torch-backend cu130" in first["fix"]["title"]
    assert first["fix"]["edits"][0]["content"] == \
        "RUN uv pip install --torch-backend cu130 --system -r /tmp/requirements-serving.txt"


def test_wd403_unpinned_torch_on_aarch64_is_a_warning(check):
    f = check("""
        FROM --platform=linux/arm64 nvidia/cuda:13.0.1-runtime-ubuntu24.04
        RUN pip install --break-system-packages vllm
    """)
    assert [(x["line"], x["severity"]) for x in f if x["rule"] == "WD403"] == [(2, "warning")]


def test_wd403_trap1_models_the_installer(check):
    """An installed torch is kept only while every new requirement admits it."""
    f = check("""
        FROM vllm/vllm-openai:v0.7.3
        RUN pip install vllm==0.7.3 flash-attn
        RUN uv pip install --system vllm==0.9.1
        FROM pytorch/pytorch:2.6.0-cuda12.4-cudnn9-runtime AS pt
        RUN pip install vllm==0.8.5.post1
        RUN pip install vllm==0.9.1 --no-deps
        FROM nvcr.io/nvidia/pytorch:25.06-py3 AS ngc
        RUN pip install vllm==0.9.1
        RUN uv pip install --system vllm
        FROM nvcr.io/nvidia/pytorch:25.06-py3 AS cleared
        ENV PIP_CONSTRAINT=""
        RUN pip install vllm==0.9.1
        FROM nvcr.io/nvidia/pytorch:25.06-py3 AS ngc-uv
        RUN uv pip install --system vllm
    """)
    got = [(x["line"], x["severity"]) for x in f if x["rule"] == "WD403"]
    # line 9: vllm is already there (line 8 installed it) and nothing upgrades it: uv keeps it, torch stays
    assert got == [(3, "error"), (8, "error"), (12, "error"), (14, "error")]
    by_line = {x["line"]: x for x in f if x["rule"] == "WD403"}
    assert by_line[3]["data"]["torch_installed"] == "2.5.1" and by_line[3]["data"]["torch_required"] == "==2.7.0"
    assert "--override" in by_line[3]["fix"]["title"]
    assert "pip refuses" in by_line[8]["message"] and by_line[8]["data"]["pip_constraint"] == "/etc/pip/constraint.txt"
    assert "-c" in by_line[8]["fix"]["title"]
    assert "replaces the torch" in by_line[12]["message"] and by_line[12]["data"]["pip_constraint"] is None


def test_wd403_cpu_index_next_to_gpu_packages_is_an_error(check):
    (hit,) = check(R / "wd403-cpu-index.Dockerfile")
    assert hit["rule"] == "WD403" and hit["severity"] == "error" and "/whl/cpu" in hit["message"]


def test_wd403_every_way_of_pinning(check):
    assert rules_at(check(R / "wd403-pinned.Dockerfile")) == []


def test_wd403_unreadable_override_counts_and_readable_unpinned_does_not(check):
    f = check("""
        FROM nvidia/cuda:13.0.1-runtime-ubuntu24.04
        COPY overrides.txt /o/
        COPY <<EOF /o/loose.txt
        torch>=2.9
        EOF
        RUN uv pip install --system vllm --override /o/missing.txt
        RUN uv pip install --system vllm --override /o/loose.txt
        RUN uv pip install --system vllm --override /o/overrides.txt
    """, files={"overrides.txt": "torch==2.11.0+cu130\n"})
    assert rules_at(f, "WD403") == [("WD403", 7)]


def test_wd403_intentional_cpu_and_rocm_and_no_deps(check):
    assert rules_at(check("""
        FROM python:3.12-slim
        RUN pip install torch --index-url https://download.pytorch.org/whl/cpu
        RUN pip install torch torchvision --index-url https://download.pytorch.org/whl/rocm6.4
        RUN pip install --no-deps /wheels/vllm-0.11.0-cp38-abi3-manylinux_2_28_x86_64.whl
        RUN pip download vllm -d /tmp
    """, "--gpu", "h100"), "WD403") == []


def test_wd403_needs_a_cuda_intent(check):
    assert rules_at(check("FROM python:3.12-slim\nRUN pip install accelerate\n"), "WD403") == []
    assert rules_at(check("FROM python:3.12-slim\nRUN pip install accelerate\n", "--gpu", "gb10"),
                    "WD403") == [("WD403", 2)]


def test_wd403_earlier_cuda_torch_in_the_stage_chain(check):
    f = check("""
        FROM nvidia/cuda:12.8.1-devel-ubuntu24.04 AS torch
        RUN pip install --break-system-packages --index-url https://download.pytorch.org/whl/cu128 torch==2.8.0
        FROM torch AS ext
        RUN pip install --break-system-packages ./csrc
        RUN pip install --break-system-packages --upgrade vllm
    """)
    assert rules_at(f, "WD403") == [("WD403", 5)]


def test_wd404_env_and_flag(check):
    f = check(R / "wd404-auto.Dockerfile")
    assert rules_at(f) == [("WD404", 5), ("WD404", 6)]
    env_hit, flag_hit = sorted((x for x in f), key=lambda x: x["line"])
    assert env_hit["fix"]["edits"][0] == {"path": str(R / "wd404-auto.Dockerfile"), "line": 3,
                                          "content": "ENV UV_TORCH_BACKEND=cu128", "action": "replace",
                                          "end_line": 3}
    assert flag_hit["fix"]["edits"][0]["content"] == "RUN uv pip install --system --torch-backend=cu128 vllm"
    assert check(R / "wd404-device.Dockerfile") == []


def test_wd404_not_for_non_torch_installs(check):
    assert rules_at(check("""
        FROM python:3.12
        ENV UV_TORCH_BACKEND=auto
        RUN uv pip install --system requests
    """), "WD404") == []


# -- WD405 / WD408 -------------------------------------------------------------------------------


def test_wd405_judges_only_a_cuda_build_across_majors(check):
    (major,) = [x for x in check(R / "wd405-mismatch.Dockerfile") if x["rule"] == "WD405"]
    assert major["severity"] == "error" and major["line"] == 7
    assert major["data"] == {"stage": "0", "image_cuda": "12.8", "nvcc_cuda": "12.8", "torch_cuda": "13.0"}
    assert "mismatches the version that was used to compile PyTorch" in major["message"]
    # a minor difference only warns in torch; a runtime image newer than torch's CUDA is fine
    assert [x for x in check(R / "wd405-minor.Dockerfile") if x["rule"] == "WD405"] == []
    assert [x for x in check(R / "wd405-runtime-newer.Dockerfile") if x["rule"] == "WD405"] == []
    assert [x for x in check(R / "wd405-match.Dockerfile") if x["rule"] == "WD405"] == []


def test_wd405_ngc_and_pytorch_images(check):
    f = check("""
        FROM nvcr.io/nvidia/pytorch:25.12-py3 AS ngc
        RUN pip install "torch==2.9.0+cu128"
        FROM pytorch/pytorch:2.9.0-cuda12.8-cudnn9-devel AS pt
        RUN pip install --index-url https://download.pytorch.org/whl/cu130 torch
        RUN TORCH_CUDA_ARCH_LIST=9.0 pip install --no-build-isolation git+https://github.com/facebookresearch/xformers.git
        FROM pytorch/pytorch:2.9.0-cuda12.8-cudnn9-devel AS same
        RUN TORCH_CUDA_ARCH_LIST=9.0 pip install --no-build-isolation git+https://github.com/facebookresearch/xformers.git
        FROM pytorch/pytorch:2.9.0-cuda13.0-cudnn9-runtime AS runtime
        RUN pip install --index-url https://download.pytorch.org/whl/cu128 torch
    """)
    assert rules_at(f, "WD405") == [("WD405", 5)]  # the NGC CUDA is not in the table: not judged


def test_wd408_driver(check):
    f = check(R / "wd405-mismatch.Dockerfile", "--driver", "570.172.08")
    wd408 = [x for x in f if x["rule"] == "WD408"]
    assert [(x["line"], x["severity"]) for x in wd408] == [(5, "error")]
    assert "cudaErrorInsufficientDriver" in wd408[0]["message"]
    f = check(R / "wd405-match.Dockerfile", "--driver", "12.9")
    assert {x["severity"] for x in f if x["rule"] == "WD408"} == {"error"}


# -- WD406 ---------------------------------------------------------------------------------------


def test_arch_list_parsers():
    names = tool_env().torch_arch_names
    assert _parse_torch_list("8.0;9.0+PTX", names) == (((80, "", "cubin"), (90, "", "cubin"), (90, "", "ptx")), None)
    assert _parse_torch_list("Hopper 12.1a", names)[0] == ((90, "", "cubin"), (90, "", "ptx"), (121, "a", "cubin"))
    assert _parse_torch_list("native", names) == ((), "native")
    assert _parse_cmake_list("90a-real;120-virtual;100") == (
        ((90, "a", "cubin"), (120, "", "ptx"), (100, "", "cubin"), (100, "", "ptx")), None)
    assert _parse_flags("-gencode=arch=compute_120a,code=[sm_120a,compute_120a] -arch=sm_90")[0] == (
        (120, "a", "cubin"), (120, "a", "ptx"), (90, "", "cubin"), (90, "", "ptx"))
    assert _parse_flags("-O3") is None


def test_wd406_every_syntax_for_gb10(check):
    f = check(R / "wd406-arch-lists.Dockerfile", "--gpu", "gb10")
    got = [(x["line"], x["severity"], x["data"]["variable"]) for x in f if x["rule"] == "WD406"]
    assert got == [(3, "warning", "TORCH_CUDA_ARCH_LIST"), (4, "error", "CMAKE_CUDA_ARCHITECTURES"),
                   (5, "error", "NVCC_APPEND_FLAGS"), (6, "warning", "FLASHINFER_CUDA_ARCH_LIST"),
                   (7, "error", "TORCH_CUDA_ARCH_LIST"), (8, "error", "-DCMAKE_CUDA_ARCHITECTURES")]
    edits = {x["line"]: x["fix"]["edits"][0]["content"] for x in f if x["fix"]["edits"]}
    assert edits[3] == 'ENV TORCH_CUDA_ARCH_LIST="8.0;9.0+PTX;12.1"'
    assert edits[4] == "ENV CMAKE_CUDA_ARCHITECTURES=90a;100a;121"
    assert edits[8].endswith("-DCMAKE_CUDA_ARCHITECTURES=120a-real;121 && cmake --build build")
    assert check(R / "wd406-arch-lists.Dockerfile") == []  # only with --gpu


def test_wd406_cubin_compatibility_and_ptx_vs_driver(check):
    text = """
        FROM nvidia/cuda:13.0.1-devel-ubuntu24.04
        ENV TORCH_CUDA_ARCH_LIST="12.0"
        ENV FLASHINFER_CUDA_ARCH_LIST="12.0a"
        ENV CUDAARCHS="90-virtual"
    """
    f = check(text, "--gpu", "gb10")
    assert [(x["line"], x["severity"]) for x in f if x["rule"] == "WD406"] == [(3, "error"), (4, "warning")]
    f = check(text, "--gpu", "gb10", "--driver", "12.8")
    assert [(x["line"], x["severity"]) for x in f if x["rule"] == "WD406"] == [(3, "error"), (4, "error")]
    assert "cudaErrorUnsupportedPtxVersion" in [x for x in f if x["line"] == 4][0]["message"]


# -- WD407 / WD409 -------------------------------------------------------------------------------


def test_wd407_bare_pip_and_python_m_pip(check):
    (hit,) = check(R / "wd407-pip-in-uv-venv.Dockerfile")
    assert hit["rule"] == "WD407" and "system pip" in hit["message"]
    assert hit["fix"]["edits"][0]["content"] == "RUN uv pip install --no-cache-dir requests==2.32.3"
    f = check(D / "monorepo-ten-stages.Dockerfile")
    assert [(x["line"], "No module named pip" in x["message"]) for x in f if x["rule"] == "WD407"] == [(39, True)]


def test_wd407_seeded_venv_is_fine(check):
    assert rules_at(check("""
        FROM python:3.12-slim
        RUN uv venv --seed /opt/venv
        ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH
        RUN pip install requests
        FROM python:3.12-slim AS other
        RUN uv venv /opt/venv && uv pip install --python /opt/venv/bin/python pip
        ENV PATH=/opt/venv/bin:$PATH
        RUN pip install requests
    """), "WD407") == []


def test_wd409(check):
    (hit,) = check(R / "wd409-no-arch-list.Dockerfile", "--gpu", "gb10")
    assert hit["rule"] == "WD409" and hit["data"]["project"] == "xformers" and hit["severity"] == "warning"
    assert hit["data"]["confidence"] == "high"
    assert hit["fix"]["edits"][0] == {"path": str(R / "wd409-no-arch-list.Dockerfile"), "line": 2,
                                      "content": 'ENV TORCH_CUDA_ARCH_LIST="12.1"', "action": "insert_after",
                                      "end_line": None}


def test_wd409_projects_with_their_own_architectures_and_evidence(check):
    f = check("""
        FROM nvidia/cuda:12.8.1-devel-ubuntu24.04
        RUN pip install "torch==2.9.0+cu128" --index-url https://download.pytorch.org/whl/cu128
        RUN pip install --no-build-isolation flash-attn==2.8.3
        RUN pip install --no-build-isolation git+https://github.com/NVIDIA/apex.git
        RUN MAMBA_SKIP_CUDA_BUILD=TRUE pip install --no-build-isolation mamba-ssm
        RUN git clone https://github.com/deepseek-ai/DeepEP.git && cd DeepEP && python setup.py install
        RUN git clone https://github.com/example/sam3.git && cd sam3 && SAM3_BUILD_CUDA=1 pip install --no-build-isolation .
        RUN git clone https://github.com/example/tool.git && cd tool && pip install --no-build-isolation .
    """)
    got = [(x["line"], x["severity"], x["data"]["confidence"]) for x in f if x["rule"] == "WD409"]
    assert got == [(7, "warning", "high"), (8, "info", "low")]


# -- real-world style fixtures: 8+ stages, heredocs, uv in several stages -------------------------


def test_vllm_fixture_findings(check):
    f = check(D / "vllm-gb10-multistage.Dockerfile", "--gpu", "gb10", "--driver", "580.95.05")
    assert len(analyze(parse_dockerfile(D / "vllm-gb10-multistage.Dockerfile")).stages) >= 8
    assert [(x["rule"], x["line"], x["severity"], x["data"].get("variable")) for x in f] == [
        ("WD404", 67, "error", None),
        ("WD401", 92, "info", "UV_COMPILE_BYTECODE"),
        ("WD401", 92, "warning", "UV_HTTP_TIMEOUT"),
        ("WD401", 92, "info", "UV_LINK_MODE"),
    ]


def test_monorepo_fixture_findings(check):
    f = check(D / "monorepo-ten-stages.Dockerfile", "--gpu", "gb10")
    assert sorted((x["rule"], x["line"], x["data"].get("variable") or "") for x in f) == [
        ("WD401", 56, "UV_EXTRA_INDEX_URL"),
        ("WD401", 56, "UV_HTTP_TIMEOUT"),
        ("WD401", 56, "UV_INDEX_STRATEGY"),
        ("WD403", 56, ""),
        ("WD404", 58, ""),
        ("WD406", 34, "TORCH_CUDA_ARCH_LIST"),
        ("WD407", 39, ""),
    ]



def test_vllm_upstream_style_fixture_findings(check):
    """vLLM's own Dockerfile shape: 8 stages, uv in most, a CUDA index the shell computes (no
    false WD403 there); only the stage added on top misses the uv settings."""
    path = D / "vllm-upstream-style.Dockerfile"
    assert len(analyze(parse_dockerfile(path)).stages) == 8
    f = check(path, "--gpu", "gb10")
    assert [(x["rule"], x["line"], x["severity"], x["data"].get("variable")) for x in f] == [
        ("WD403", 113, "info", None),  # -r requirements/dev.txt is copied from a build context not here
        ("WD401", 137, "warning", "UV_HTTP_TIMEOUT"),
        ("WD401", 137, "warning", "UV_INDEX_STRATEGY"),
        ("WD401", 137, "info", "UV_LINK_MODE"),
        ("WD401", 138, "error", "UV_INDEX_URL"),
    ]
    assert f[0]["data"]["unread"] == ["-r requirements/dev.txt"] and f[0]["data"]["known"] is False
    assert f[4]["fix"]["edits"][0]["content"] == "ARG UV_INDEX_URL"
    assert "global ARG UV_INDEX_URL (line 13)" in f[4]["message"]


def test_facts_follow_files_through_stages_and_mounts(tmp_path):
    (tmp_path / "req.txt").write_text("-r more.txt\n--extra-index-url https://download.pytorch.org/whl/cu128\n")
    (tmp_path / "more.txt").write_text("vllm==0.11.0  # serving\n")
    text = textwrap.dedent("""
        FROM python:3.12 AS a
        COPY <<EOF /etc/o.txt
        torch==2.11.0+cu130
        EOF
        RUN printf '%s\\n' 'torchvision==0.26.0+cu130' >> /etc/o.txt
        FROM a AS b
        COPY --from=a /etc/o.txt /cfg/o.txt
        RUN --mount=type=bind,source=req.txt,target=/r/req.txt --mount=type=bind,source=more.txt,target=/r/more.txt \\
            uv pip install -r /r/req.txt --override /cfg/o.txt
    """).lstrip()
    path = tmp_path / "Dockerfile"
    path.write_text(text)
    df = parse_text(text, str(path))
    facts = DockerFacts(df, analyze(df), text=text)
    step = facts.steps[-1]
    o = facts.requirements(step, "/cfg/o.txt")
    assert [r.line for r in o.requirements] == ["torch==2.11.0+cu130", "torchvision==0.26.0+cu130"]
    req = facts.requirements(step, "/r/req.txt")
    assert [r.name for r in req.requirements] == ["vllm"] and req.index_urls[0].endswith("/cu128")
    assert req.origin == "bind mount of req.txt (build context), line 8"
    assert sorted((s.kind, s.variant) for s in facts.torch_sources(step)) == [("index", "cu128"), ("override", "cu130")]

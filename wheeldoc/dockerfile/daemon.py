"""`check Dockerfile --pull-base`: read the real config of each base image from the Docker daemon.

Only with the flag (or `pull-base = true` in [tool.wheeldoc]); the plain `check` path never
imports this module. For every FROM whose base is not a stage, the Docker SDK (the optional
`docker` extra, imported here and only here) inspects the image the daemon already has
(`images.get(ref)`: inspect only, nothing is pulled; `docker pull REF` first to judge an image
the daemon lacks). From its `Config.Env` only the variables in `ENV_KEYS` are kept (nothing
else of the image's environment is read into memory the rules see, so no secret of it can reach
the output), and they feed the same base facts the table (`wheeldoc/data/base_images.json`)
feeds; the daemon's value wins. Each fact records its source, "table" or "daemon".

Without the SDK, or with no daemon answering, one note (WD002, info) per Dockerfile says the
bases were judged from the table, and nothing else changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from wheeldoc.data.base_images import BaseImage, BaseTorch, base_image

# The variables of an image's Config.Env the rules read; nothing else is kept.
ENV_KEYS = ("CUDA_VERSION", "NV_CUDA_LIB_VERSION", "NVIDIA_REQUIRE_CUDA", "TORCH_CUDA_ARCH_LIST",
            "CMAKE_CUDA_ARCHITECTURES", "CUDAARCHS", "PIP_CONSTRAINT", "PYTHON_VERSION", "PYTORCH_VERSION",
            "NVIDIA_PYTORCH_VERSION")
ARCH_KEYS = ("TORCH_CUDA_ARCH_LIST", "CMAKE_CUDA_ARCHITECTURES", "CUDAARCHS")
_MAX_VALUE = 512
_USERINFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://)[^\s/?#@]{1,1024}@")
_TIMEOUT_S = 10


@dataclass
class DaemonBases:
    """What the daemon said: per image reference the kept Env, or why it said nothing."""

    env: dict[str, dict[str, str]] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)  # ref -> why the daemon had nothing
    unavailable: str | None = None  # no SDK / no daemon: nothing was asked


def _clean(value: str) -> str:
    """An allow-listed value as the rules may quote it: bounded, URL userinfo masked."""
    return _USERINFO.sub(r"\1***@", value[:_MAX_VALUE])


def keep_env(env_list) -> dict[str, str]:
    """The allow-listed variables of a Config.Env list (["K=V", …]); everything else is dropped."""
    out: dict[str, str] = {}
    for item in env_list or ():
        if not isinstance(item, str):
            continue
        k, eq, v = item.partition("=")
        if eq and k in ENV_KEYS:
            out[k] = _clean(v)
    return out


def inspect_bases(refs) -> DaemonBases:
    """Ask the daemon for each reference's config (inspect only, never a pull)."""
    result = DaemonBases()
    refs = list(dict.fromkeys(refs))
    if not refs:
        return result
    try:
        import docker  # the optional `docker` extra
    except ImportError:
        result.unavailable = "the Docker SDK is not installed (pip install 'wheeldoc[docker]')"
        return result
    try:
        client = docker.from_env(timeout=_TIMEOUT_S)
        client.ping()
    except Exception as e:  # DockerException, or a socket error the SDK lets through
        result.unavailable = f"no Docker daemon answered ({type(e).__name__})"
        return result
    try:
        for ref in refs:
            try:
                image = client.images.get(ref)
            except docker.errors.ImageNotFound:
                result.missing[ref] = f"the Docker daemon has no image {ref} (`docker pull {ref}` first)"
                continue
            except Exception as e:
                result.missing[ref] = f"the Docker daemon could not inspect {ref} ({type(e).__name__})"
                continue
            config = (image.attrs or {}).get("Config") or {}
            result.env[ref] = keep_env(config.get("Env"))
    finally:
        try:
            client.close()
        except Exception:
            pass
    return result


def _cuda(text: str | None) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", text or "")
    return (int(m[1]), int(m[2])) if m else None


def merge(ref: str, env: dict[str, str]) -> BaseImage:
    """The table's facts about `ref` overlaid with the daemon's Env (the daemon wins)."""
    table = base_image(ref)
    sources: dict[str, str] = {}
    if table is None:
        base = BaseImage(ref, "", None, None, None, {}, None, "", torch_known=False, ships=None)
    else:
        base = table
        for k in ("cuda", "nvcc", "torch", "constraint"):
            if (k != "torch" and getattr(table, k) is not None) or (k == "torch" and table.torch_known):
                sources[k] = "table"
    new_env = {**base.env}
    for k, v in base.env.items():
        if v is not None:
            sources[f"env.{k}"] = "table"
    for k, v in env.items():
        new_env[k] = v
        sources[f"env.{k}"] = "daemon"
    changes: dict = {"env": new_env, "env_complete": True}  # the daemon's config holds the whole ENV
    cuda = _cuda(env.get("CUDA_VERSION"))
    if cuda is not None:
        changes["cuda"] = cuda
        sources["cuda"] = "daemon"
    tv = env.get("PYTORCH_VERSION")
    if tv and re.match(r"\d+\.\d+", tv):
        pre = bool(re.search(r"\d(?:a|b|rc|\.dev)\d*", tv.split("+", 1)[0]))
        changes["torch"] = BaseTorch(tv, pre, f"PYTORCH_VERSION={tv} in the image's config, read from the Docker daemon")
        changes["torch_known"] = True
        sources["torch"] = "daemon"
    pc = env.get("PIP_CONSTRAINT")
    if pc and base.constraint is not None:  # the table says this image's constraint file pins torch
        changes["constraint"] = pc
        sources["constraint"] = "daemon"
    changes["sources"] = sources
    changes["source"] = f"the image's config from the Docker daemon; {base.source}" if base.source else \
        "the image's config from the Docker daemon"
    return replace(base, **changes)


def external_bases(facts) -> list:
    """The root stages whose base is an image (not a stage, not scratch, not built from ARGs the file leaves open)."""
    names = {s.name.lower() for s in facts.graph.stages if s.name}
    out = []
    for st in facts.graph.stages:
        if st.parent is not None or st.base_unknown or st.is_scratch or st.base.lower() in names:
            continue
        out.append(st)
    return out


def base_records(facts, bases: dict[str, BaseImage], daemon: DaemonBases) -> list[dict]:
    """One record per external FROM: where each base fact came from ("table" / "daemon")."""
    out = []
    for st in external_bases(facts):
        img = bases.get(st.base) or base_image(st.base)
        if st.base in daemon.env:
            source = "daemon"
        else:
            source = "table" if img is not None else "unknown"
        rec: dict = {"path": facts.path, "line": st.line, "stage": st.label, "image": st.base, "source": source}
        if img is not None:
            srcs = img.sources or {k: "table" for k in ("cuda", "nvcc", "torch", "constraint")
                                   if (getattr(img, k) is not None if k != "torch" else img.torch_known)}
            fcts: dict = {}
            if img.cuda is not None:
                fcts["cuda"] = {"value": f"{img.cuda[0]}.{img.cuda[1]}", "source": srcs.get("cuda", "table")}
            if img.nvcc is not None:
                fcts["nvcc"] = {"value": img.nvcc, "source": srcs.get("nvcc", "table")}
            if img.torch_known:
                fcts["torch"] = {"value": (img.torch.version or "unknown version") if img.torch else None,
                                 "source": srcs.get("torch", "table")}
            if img.constraint:
                fcts["constraint"] = {"value": img.constraint, "source": srcs.get("constraint", "table")}
            for k, v in sorted(img.env.items()):
                if v is not None:
                    fcts[f"env.{k}"] = {"value": v, "source": srcs.get(f"env.{k}", "table")}
            rec["facts"] = fcts
        why = daemon.unavailable or daemon.missing.get(st.base)
        if why:
            rec["note"] = why
        out.append(rec)
    return out

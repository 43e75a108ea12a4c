"""`wheeldoc image IMAGE [--gpu …] [--driver …]`: the doctor on every Python environment of a
container image, without running it.

IMAGE is a `docker save` tarball, an OCI image layout (a folder, or an archive of one), or a
reference the Docker daemon knows (`python:3.12`, through the Docker SDK: the optional `docker`
extra, imported only then; the image is streamed into one temporary tarball and read like any
other). Layers are applied in order with whiteouts honoured and only the files needed are read
(wheeldoc.image.reader). The machine is the target the flags give; the library path and the
variables are the image's own: its final `ENV` and its `/etc/ld.so.cache`.

Decided where the issue is silent: `UV_TORCH_BACKEND=auto` (or `cuXXX`) in the final ENV is
shown but not reported: it only matters to a `uv pip install` run in the container and then
follows the driver of the machine it runs on. A CPU backend or a CPU index there is reported
(WD509): the next install would replace the image's CUDA torch.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from typing import Iterator

# Variables of the final ENV the image section shows (besides installer settings from tool_env).
RUNTIME_VARS = ("LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES",
                "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_REQUIRE_CUDA",
                "TORCH_CUDA_ARCH_LIST", "PYTORCH_CUDA_ALLOC_CONF", "VIRTUAL_ENV", "PYTHONPATH")


def run(args: argparse.Namespace) -> int:
    from wheeldoc.core.settings import guarded

    return guarded(_run)(args)


@contextlib.contextmanager
def image_file(arg: str) -> Iterator[str]:
    """The image as a path: the argument itself, or a daemon's image saved to a temporary tarball."""
    if os.path.exists(arg):
        yield arg
        return
    from wheeldoc.core.settings import UsageError

    if "/" in arg and (arg.startswith((".", "/")) or arg.endswith((".tar", ".tar.gz", ".tgz"))):
        raise UsageError(f"{arg}: no such file or folder")
    try:
        import docker  # the optional `docker` extra
    except ImportError:
        raise UsageError(f"{arg}: no such file or folder; to read an image from the Docker daemon by reference, "
                         "install the docker extra (pip install 'wheeldoc[docker]')") from None
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix="wheeldoc-image-", suffix=".tar")
    try:
        try:
            client = docker.from_env()
            image = client.images.get(arg)
            with os.fdopen(fd, "wb") as fh:
                for chunk in image.save(named=True):
                    fh.write(chunk)
        except docker.errors.ImageNotFound:
            raise UsageError(f"the Docker daemon has no image {arg!r} (docker pull it first)") from None
        except docker.errors.DockerException as e:
            raise UsageError(f"cannot read {arg!r} from the Docker daemon: {e}") from None
        yield tmp
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _oci_platform(platform: str | None) -> str | None:
    return {"linux-x86_64": "linux/amd64", "linux-aarch64": "linux/arm64"}.get(platform or "")


def _run(args: argparse.Namespace) -> int:
    from wheeldoc.doctor.diagnose import diagnose, verdict
    from wheeldoc.environment.facts import Machine
    from wheeldoc.core.cache import Cache
    from wheeldoc.core.settings import settings_from
    from wheeldoc.doctor.command import emit_diagnosis, take_driver_none
    from wheeldoc.core.engine import finalize, input_error_finding
    from wheeldoc.core.errors import InputError
    from wheeldoc.core.model import Finding, Location, Report, Severity
    from wheeldoc.image.reader import find_python_environments, open_image
    from wheeldoc.environment.machine import read_library_path

    no_driver = take_driver_none(args)
    settings = settings_from(args)
    target = settings.target
    report = Report("image", target.to_dict(), inputs=[args.image])
    cache = None if args.no_cache else Cache()
    diags = []
    from wheeldoc.core.terminal import progress

    progress(f"reading image {args.image}")
    try:
        with image_file(args.image) as path, \
                open_image(path, ref=args.ref, platform=_oci_platform(target.platform)) as image:
            env = image.env
            lp = read_library_path(env, fs=image.files, ldconfig=False)
            machine = Machine("image", None, no_driver, lp, env)
            locations = find_python_environments(image)
            from wheeldoc.doctor.view import progress_bar

            for loc in locations:
                with progress_bar(f"reading {loc.site_packages[0]}") as progress:
                    diags.append(diagnose(loc, target, machine, fs=image.files, image=args.image,
                                          selection=settings.selection, cache=cache, progress=progress))
            info = _image_record(image, diags)
    except InputError as e:
        report.input_errors = 1
        finalize(report, [input_error_finding(e)], settings.selection)
        return emit_diagnosis(report, settings, None, args)
    findings = [f for d in diags for f in d.findings]
    if not diags:
        findings.append(Finding("WD002", "part of an input could not be analyzed", Severity.WARNING,
                                Location(args.image), "no Python environment with installed distributions "
                                "in the image (site-packages / dist-packages holding *.dist-info)"))
    from wheeldoc.core.model import Skipped

    for d in diags:
        report.skipped.extend(Skipped(s.path, s.reason) for s in d.env.skipped)
    finalize(report, findings, settings.selection)
    report.extra["image"] = info
    if settings.fmt != "text":
        report.extra["environments"] = [_env_record(d, report.findings) for d in diags]
        return emit_diagnosis(report, settings, None, args)
    v, root = verdict(report.findings, report.input_errors)
    return _text(report, settings, diags, info, v, root, args)


def _env_record(d, findings) -> dict:
    from wheeldoc.doctor.diagnose import verdict
    from wheeldoc.doctor.view import abi_record, environment_record, verdict_record

    mine = [f for f in findings if f in d.findings or f.location.path.startswith(d.facts.where)]
    v, root = verdict(mine)
    return {**verdict_record(v, root, mine), "environment": environment_record(d), "abi": abi_record(d),
            "kernels": [r.record() for r in d.kernel_rows]}


def _image_record(image, diags) -> dict:
    from wheeldoc.data.tool_env import tool_env

    env = image.env
    known = tool_env().variables
    installer = {k: v for k, v in env.items() if k in known or any(k in var.same_as for var in known.values())}
    return {"path": image.path, "format": image.format, "ref": image.ref,
            "architecture": image.config.architecture, "os": image.config.os,
            "layers": len(image.layers), "environments": [d.facts.where for d in diags],
            "env": {k: env[k] for k in env if k in RUNTIME_VARS or k in installer or k.startswith(("CUDA", "NVIDIA"))},
            "install_settings": sorted(installer)}


def _text(report, settings, diags, info, v, root, args) -> int:
    from wheeldoc.doctor.view import (VERDICT_STYLE, abi_section, environment_section,
                                               findings_section, kernel_sections, reason_text, render_text)
    from wheeldoc.render.text import Lines

    def head(out: Lines) -> None:
        ref = f" ({info['ref']})" if info.get("ref") else ""
        out.add((f"wheeldoc image: {report.inputs[0]}{ref}", "bold"),
                (f"  ({info['format']}, {info['layers']} layers, {info['os']}/{info['architecture']})", "dim"))
        out.add((v.upper(), VERDICT_STYLE[v]), f" — {reason_text(v, root, report.findings)}")
        out.add(f"  {len(diags)} Python environment{'s' if len(diags) != 1 else ''}: "
                + (", ".join(info["environments"]) or "none"))
        out.add()

    def env_vars(out: Lines) -> None:
        out.add(("Final ENV (what the container starts with)", "bold"))
        shown = info["env"]
        if not shown:
            out.add("  nothing CUDA- or install-related")
        for k, val in shown.items():
            note = ""
            if k in info["install_settings"]:
                note = "install-time only: read by pip/uv when something installs in the container"
                if k == "UV_TORCH_BACKEND" and val.strip().lower() != "cpu":
                    note += "; harmless at run time (auto follows the driver of the machine it runs on)"
            out.add(f"  {k}={val}", (f"  ({note})" if note else "", "dim"))
        out.add()

    def target_line(out: Lines) -> None:
        t = diags[0].facts.target if diags else None
        out.add(("Target", "bold"), "  " + (diags[0].facts.machine.describe(t) if diags else "-"))
        out.add()

    sections = [head, target_line, env_vars]
    for d in diags:
        def env_head(out: Lines, d=d) -> None:
            out.add((f"── {d.facts.where}", "bold"))
            out.add()
        sections += [env_head, environment_section(d), abi_section(d), *kernel_sections(d)]
    return render_text(report, settings, sections, findings_section(report.findings))

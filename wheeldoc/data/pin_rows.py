"""One torch-pin table row from a wheel's METADATA: its torch requirement and its requirements on
other table packages, markers evaluated for linux on each machine x Python of the table's marker
axes. Shared by scripts/make_torch_pins.py (the table) and `check --resolve` (a package the table
does not hold, read from the index), so both read metadata the same way."""

from __future__ import annotations


def final_file(name: str, sdists: tuple[str, ...] = (".tar.gz", ".zip")):
    """(version, the wheel's tags, or None for an sdist) of a final release's file; None for any
    other file (a pre-release, dev or local version, a name that does not parse)."""
    from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename
    from packaging.version import InvalidVersion

    try:
        if name.endswith(".whl"):
            _, ver, _, tags = parse_wheel_filename(name)
        elif name.endswith(sdists):
            ver, tags = parse_sdist_filename(name)[1], None
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    if ver.is_prerelease or ver.is_devrelease or ver.local:
        return None
    return ver, tags


def wheel_rank(name: str, tags) -> tuple | None:
    """How good a wheel is to read its release's METADATA from (higher is better): a pure-Python
    wheel, then the linux x86-64 wheel of the newest CPython; None for another platform's."""
    plats = {t.platform for t in tags}
    if "any" in plats:
        return (2, 0, name)
    if any("linux" in p and "x86_64" in p for p in plats):
        return (1, max((int(t.interpreter[2:]) for t in tags if t.interpreter.startswith("cp")
                        and t.interpreter[2:].isdigit()), default=0), name)
    return None




MARKER_PYTHONS = ("3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14")
MARKER_MACHINES = ("x86_64", "aarch64")


def encode_marker(marker: str) -> int:
    """A marker evaluated here for linux, each machine and Python of MARKER_MACHINES x MARKER_PYTHONS:
    bit (m * len(MARKER_PYTHONS) + p) set where it holds. wheeldoc then needs no marker parser."""
    from packaging.markers import Marker

    m, bits = Marker(marker), 0
    for i, mach in enumerate(MARKER_MACHINES):
        for j, py in enumerate(MARKER_PYTHONS):
            env = {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix", "extra": "",
                   "implementation_name": "cpython", "platform_python_implementation": "CPython",
                   "python_version": py, "python_full_version": py + ".0", "platform_machine": mach,
                   "platform_release": "", "platform_version": ""}
            if m.evaluate(env):
                bits |= 1 << (i * len(MARKER_PYTHONS) + j)
    return bits


def split(meta_text: str, extras: tuple[str, ...], names: set[str]) -> tuple[list[str] | None, dict[str, str]]:
    """(torch requirement lines, requirements on other table packages) from a METADATA text, markers
    kept except `extra == …` (dropped with the line when the extra does not count). A torch line that
    is not a valid PEP 508 requirement (`torch (>=1.9.*)`, in old lightning wheels) makes the torch
    requirement unknown (None): installers differ on such metadata."""
    from email.parser import Parser

    from packaging.markers import Marker
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    from packaging.requirements import InvalidRequirement

    torch: list[str] | None = []
    deps: dict[str, str] = {}
    for line in Parser().parsestr(meta_text).get_all("Requires-Dist") or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            if canonicalize_name(line.split(";")[0].split("(")[0].split(">")[0].split("=")[0].split("<")[0]
                                 .split("[")[0].strip()) == "torch":
                torch = None
            continue
        name = canonicalize_name(req.name)
        if name != "torch" and name not in names:
            continue
        marker = str(req.marker) if req.marker else ""
        if "extra" in marker:
            if not any(Marker(marker).evaluate({"extra": e}) for e in extras):
                continue
            marker = ""  # the counted extra's own lines; other markers on them are rare and kept below
            if req.marker and any(k in str(req.marker) for k in ("python_version", "sys_platform", "platform_")):
                marker = str(req.marker)
        text = str(req.specifier) + (f";@{encode_marker(marker)}" if marker else "")
        if name == "torch":
            if torch is not None:
                torch.append(text)
        else:
            deps[name] = text if name not in deps else deps[name] + " | " + text
    return torch, deps


def release_files(files, since: str = "") -> dict:
    """Version -> {"python": its Requires-Python, "wheel": the file to read its METADATA from (None:
    sdist only), "key": that wheel's rank}, over a project's PEP 691 `files`: final releases, not
    yanked, uploaded since `since` (an ISO date; "" for all)."""
    out: dict = {}
    for f in files:
        name = f["filename"]
        if f.get("yanked") or (since and (f.get("upload-time") or "") < since):
            continue
        got = final_file(name)
        if got is None:
            continue
        ver, tags = got
        row = out.setdefault(ver, {"python": f.get("requires-python") or "", "wheel": None, "key": None})
        key = wheel_rank(name, tags) if tags is not None else None
        if key is not None and (row["key"] is None or key > row["key"]):
            row.update(key=key, wheel=f, python=f.get("requires-python") or row["python"])
    return out

"""The shell around the analyzers: crashes have their own exit code, flag and config values never
produce a traceback, `-o` into a missing folder is a usage error, `--driver 580` is a branch."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, run_subprocess

STORY = "fixtures/story"
FATBIN = "fixtures/kernels/comp-all.fatbin"
SITE = "fixtures/envs/cuda-ok/lib/python3.12/site-packages"
EXT = "fixtures/abi/wheels/ext-1.0-cp311-cp311-linux_x86_64.whl"
TORCH = "fixtures/abi/wheels/fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl"
VERBS = {
    "check": ("check", STORY),
    "kernels": ("kernels", FATBIN),
    "doctor": ("doctor", "--site-packages", SITE, "--driver", "580.95.05"),
    "abi": ("abi", EXT, TORCH),
    "image": ("image", "fixtures/images/cuda-ok", "--driver", "580.95.05"),
}


# -- internal errors ---------------------------------------------------------------------------
@pytest.fixture
def broken_check(monkeypatch):
    import wheeldoc.verbs.check as check

    def boom(args):
        raise RuntimeError("synthetic failure\nsecond line")

    monkeypatch.setattr(check, "run", boom)
    monkeypatch.delenv("WHEELDOC_DEBUG", raising=False)


def test_a_crash_is_exit_3_one_line_no_traceback(cli, broken_check):
    res = cli("check", STORY)
    assert res.code == 3 and res.out == ""
    lines = res.err.splitlines()
    assert len(lines) == 1 and "Traceback" not in res.err
    assert lines[0].startswith("wheeldoc: internal error (RuntimeError: synthetic failure)")
    assert "/issues" in lines[0] and "--debug" in lines[0]


def test_a_crash_with_debug_prints_the_traceback(cli, broken_check, monkeypatch):
    res = cli("check", STORY, "--debug")
    assert res.code == 3 and "Traceback (most recent call last)" in res.err and "synthetic failure" in res.err
    monkeypatch.setenv("WHEELDOC_DEBUG", "1")
    res = cli("check", STORY)
    assert res.code == 3 and "Traceback (most recent call last)" in res.err


@pytest.mark.parametrize("verb", [*VERBS, "rule"])
def test_every_verb_takes_debug(cli, verb):
    argv = VERBS.get(verb, ("rule", "WD101"))
    assert cli(*argv, "--debug", "--fail-on", "never").code == 0 if verb != "rule" else \
        cli(*argv, "--debug").code == 0


def test_exit_3_is_documented_and_unused_elsewhere():
    from wheeldoc.cli import EXIT_CRASH
    from wheeldoc.core import engine

    assert EXIT_CRASH == 3 and 3 not in (engine.EXIT_OK, engine.EXIT_FINDINGS, engine.EXIT_ERROR)
    readme = (ROOT / "README.md").read_text()
    assert "| 3 |" in readme


# -- -o ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [VERBS["check"], ("kernels", FATBIN, "--list"), VERBS["kernels"]])
def test_output_into_a_missing_folder_is_a_usage_error(cli, tmp_path, argv):
    target = tmp_path / "no" / "such" / "report.txt"
    res = cli(*argv, "-o", str(target))
    assert res.code == 2 and res.out == "" and "does not exist" in res.err and str(target) in res.err
    assert not target.parent.exists()


def test_output_naming_a_folder_is_a_usage_error(cli, tmp_path):
    res = cli("check", STORY, "-o", str(tmp_path))
    assert res.code == 2 and "is a directory" in res.err


def test_unwritable_output_is_an_input_error_not_a_crash(cli, tmp_path, monkeypatch):
    import wheeldoc.render.output as output

    def refuse(self, *a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(output.Path, "write_text", refuse)
    res = cli("check", STORY, "-o", str(tmp_path / "r.txt"))
    assert res.code == 2 and "cannot write the report: Permission denied" in res.err


# -- the driver as a branch, config values by type ----------------------------------------------
@pytest.mark.parametrize("driver,cuda", [("580", "13.0"), ("575", "12.9"), ("590", "13.1")])
def test_a_bare_driver_branch_is_that_branch(cli, driver, cuda):
    doc = cli("check", STORY, "--driver", driver, "--format", "json").json()
    assert doc["target"]["driver"] == {"version": driver, "cuda": cuda,
                                       "max_ptx_isa": doc["target"]["driver"]["max_ptx_isa"]}


def _project(tmp_path, body: str):
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "pyproject.toml").write_text("[tool.wheeldoc]\n" + body + "\n")
    return tmp_path


def test_config_integer_driver_is_that_driver(cli, tmp_path):
    doc = cli("check", str(ROOT / STORY), "--format", "json", cwd=_project(tmp_path, "driver = 580")).json()
    assert doc["target"]["driver"]["version"] == "580" and doc["target"]["driver"]["cuda"] == "13.0"


@pytest.mark.parametrize("body,msg", [
    ("python = 3.10", "python must be a quoted string: unquoted, TOML reads it as the number 3.1"),
    ("gpu = true", "gpu must be a string, got bool True"),
    ("driver = [580]", "driver must be a string, got list"),
    ('driver = "58"', "[tool.wheeldoc] driver: cannot read driver '58'"),
    ('gpu = "voodoo5"', "[tool.wheeldoc] gpu: unknown GPU 'voodoo5'"),
    ('format = "xml"', "[tool.wheeldoc] format: unknown output format 'xml'"),
    ('fail-on = "sometimes"', "[tool.wheeldoc] fail-on: unknown fail-on level"),
    ('python = "three"', "[tool.wheeldoc] python: cannot read Python version 'three'"),
])
def test_config_value_errors_name_the_file(cli, tmp_path, body, msg):
    res = cli("check", str(ROOT / STORY), cwd=_project(tmp_path, body))
    assert res.code == 2 and msg in res.err and str(tmp_path / "pyproject.toml") in res.err
    assert "Traceback" not in res.err


# -- no flag value crashes any verb --------------------------------------------------------------
ODD = ["", " ", "0", "-1", "580", "580.", ".", "13", "13.0.0.0", "1e9", "nan", "None", "\u00e4", "9" * 500,
       "sm_", "sm_999", "12.10", "99.9", "580.95.05.01", "abc", "0.0", "100.0", "3", "WD", "wd1", ",", "x,,y"]
FLAGS = ["--gpu", "--driver", "--platform", "--python-version", "--config"]


@pytest.mark.parametrize("verb", ["check", "kernels", "doctor", "abi"])
def test_odd_flag_values_never_crash(cli, verb):
    crashes = []
    for flag in FLAGS:
        for value in ODD:
            res = cli(*VERBS[verb], flag, value, "--format", "json")
            if res.code not in (0, 1, 2) or "Traceback" in res.err:
                crashes.append((flag, value, res.code, res.err[-300:]))
            elif res.code == 2 and flag != "--config" and value.strip():
                assert res.err.startswith("wheeldoc: error:") and len(res.err.splitlines()) == 1, (flag, value)
    assert crashes == []


CONFIG_VALUES = ["580", "3.10", "true", "[1]", "{a = 1}", '""', '"x"', "[]", "1979-05-27", "-1", "inf"]


@pytest.mark.parametrize("key", ["select", "ignore", "fail-on", "severity", "format", "gpu", "driver",
                                 "platform", "python", "glibc", "libstdcxx"])
def test_odd_config_values_never_crash(cli, tmp_path, key):
    for value in CONFIG_VALUES:
        res = cli("check", str(ROOT / STORY), cwd=_project(tmp_path, f"{key} = {value}"))
        assert res.code in (0, 1, 2) and "Traceback" not in res.err, (key, value, res.err)
        if res.code == 2:
            assert "pyproject.toml" in res.err, (key, value, res.err)


def test_the_console_entry_point_reports_a_bad_flag_in_one_line():
    res = run_subprocess("check", STORY, "--driver", "58.0.0.0.0")
    assert res.code == 2 and res.err.count("\n") == 1 and "Traceback" not in res.err


# -- unknown codes are usage errors, never a selection that checks nothing --------------------------
@pytest.mark.parametrize("flag,value", [("--select", "WD999"), ("--select", "WD9"), ("--ignore", "WD1,WD77"),
                                        ("--select", "E501"), ("--select", "WD1000"), ("--ignore", "wd8")])
def test_unknown_codes_on_the_command_line(cli, flag, value):
    res = cli("check", STORY, flag, value)
    assert res.code == 2 and res.out == "" and f"{flag}: no rule has the code or prefix" in res.err


@pytest.mark.parametrize("body,key", [('select = ["WD999"]', "[tool.wheeldoc] select"),
                                      ('ignore = "WD7"', "[tool.wheeldoc] ignore"),
                                      ('[tool.wheeldoc.severity]\nWD999 = "info"', "[tool.wheeldoc.severity]"),
                                      ('[tool.wheeldoc.severity]\nWD1 = "info"', "[tool.wheeldoc.severity]")])
def test_unknown_codes_in_the_config(cli, tmp_path, body, key):
    res = cli("check", str(ROOT / STORY), cwd=_project(tmp_path, body))
    assert res.code == 2 and key in res.err and "no rule has the code" in res.err


@pytest.mark.parametrize("value", ["WD", "WD1", "WD10", "WD101", "wd4", "WD0", "WD001"])
def test_known_codes_and_prefixes_are_accepted(cli, value):
    assert cli("check", STORY, "--select", value).code in (0, 1)


@pytest.mark.parametrize("argv", [
    ("check", STORY, "--find-links", ""), ("check", STORY, "--find-links", "."),
    ("check", STORY, "--index-url", "."), ("check", STORY, "--extra-index-url", "fixtures"),
    ("check", STORY, "-o", "9" * 300), ("kernels", FATBIN, "--list", "-o", "9" * 300),
    ("doctor", "--driver", "none", "--python", "/"), ("doctor", "--driver", "none", "--site-packages", "/"),
])
def test_more_odd_values_never_crash(cli, argv):
    """Found by the odd-value loop: relative sources made into file URIs, a file name too long."""
    res = cli(*argv, "--format", "json")
    assert res.code in (0, 1, 2) and "internal error" not in res.err, res.err

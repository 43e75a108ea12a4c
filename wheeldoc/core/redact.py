"""Credentials never leave the process: URL userinfo and secret-looking values are masked.

`render.output` passes every report (text, JSON, SARIF; stdout or `-o`), every listing and every
one-line error through `redact_text` / `redact_json_text` before it is written, so a rule, a view
or an error message may quote an input as it is and still never print a token. What counts as a
secret:

- the userinfo of any URL (`https://user:token@host/…` -> `https://***@host/…`);
- well-known token shapes wherever they stand: GitHub (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`,
  `github_pat_`), Hugging Face (`hf_`), GitLab (`glpat-`), PyPI (`pypi-`), AWS access key ids
  (`AKIA…`, `ASIA…`), Slack (`xox?-`);
- the value after a name that says it is one (`…TOKEN`, `…PASSWORD`, `…SECRET`, `…KEY`,
  `…CREDENTIALS`, `…AUTH`, `=` or `:` or a blank between) when that value is 16 or more
  characters of hex / base64 / token alphabet.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MASK = "***"

# scheme://userinfo@ : userinfo is everything up to the last '@' before the host's '/', blanks
# and quotes excluded so a match never runs across words or out of a JSON string.
# (Compiled on first use, by `re`'s own cache: a text the hints below clear needs no `re`.)
_USERINFO = r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://)(?P<info>[^\s/?#@\"'<>`]{1,4096})@"
_TOKENS = (
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|hf_[A-Za-z0-9]{20,}"
    r"|glpat-[A-Za-z0-9_\-]{20,}|pypi-[A-Za-z0-9_\-]{20,}|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|xox[abprs]-[A-Za-z0-9\-]{10,})")
_KEYWORDS = r"(?:TOKEN|PASSWORD|PASSWD|SECRET|_KEY|APIKEY|ACCESS_KEY|CREDENTIALS?|AUTH)"
_NAMES = rf"[A-Za-z0-9_.\-]*{_KEYWORDS}"  # a whole key of a JSON object (fullmatch only)
# The name's last word, then the value: the name's own prefix stays as it is, so the pattern
# never starts a match with an unbounded run (no quadratic backtracking on long words).
_NAMED = rf"(?P<name>{_KEYWORDS})(?P<sep>\s*[=:]\s*[\"']?|\s+[\"']?)(?P<value>[A-Za-z0-9+/=_\-.~]{{16,}})"
_TOKEN_HINTS = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "hf_", "glpat-", "pypi-", "akia",
                "asia", "xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-")
_NAME_HINTS = ("token", "passw", "secret", "_key", "apikey", "credential", "auth")


def redact_text(text: str) -> str:
    """`text` with every URL userinfo and secret-looking value replaced by `***`. Each pattern
    runs only when a plain substring test says it may match (linear, and fast on big reports)."""
    if not text:
        return text
    import re

    if "://" in text and "@" in text:
        text = re.compile(_USERINFO).sub(lambda m: f"{m['scheme']}{MASK}@", text)
    lower = text.lower()
    if any(h in lower for h in _TOKEN_HINTS):
        text = re.compile(_TOKENS).sub(MASK, text)
    if any(h in lower for h in _NAME_HINTS):
        text = re.compile(_NAMED, re.IGNORECASE).sub(lambda m: f"{m['name']}{m['sep']}{MASK}", text)
    return text


def _suspect(text: str) -> bool:
    if "://" in text and "@" in text:
        return True
    lower = text.lower()
    return any(h in lower for h in _TOKEN_HINTS) or any(h in lower for h in _NAME_HINTS)


def may_hold_secret(text: str) -> bool:
    """Whether `redact_text` or `redact_json_text` could change `text`: the substring tests that
    gate their patterns (False: both return `text` as it is)."""
    return bool(text) and _suspect(text)


def has_secret(text: str | None) -> bool:
    """Whether `text` holds something `redact_text` would mask."""
    return bool(text) and redact_text(text) != text


def redact_data(obj: Any) -> Any:
    """The same, over decoded JSON: every string, and a string value under a secret-named key."""
    if isinstance(obj, str):
        return redact_text(obj)
    if isinstance(obj, list):
        return [redact_data(x) for x in obj]
    if isinstance(obj, dict):
        import re

        out = {}
        for k, v in obj.items():
            if isinstance(v, str) and isinstance(k, str) and re.fullmatch(_NAMES, k, re.IGNORECASE) \
                    and len(v) >= 16 and re.fullmatch(r"[A-Za-z0-9+/=_\-.~]+", v):
                out[redact_text(k)] = MASK
            else:
                out[redact_text(k) if isinstance(k, str) else k] = redact_data(v)
        return out
    return obj


def redact_json_text(text: str, indent: int | None = 2) -> str:
    """A rendered JSON document, redacted value by value (never by editing its escaped text),
    and written back in the same layout; unchanged when nothing in it looks like a secret."""
    if not _suspect(text):
        return text
    import json

    try:
        doc = json.loads(text)
    except ValueError:
        return redact_text(text)
    end = "\n" if text.endswith("\n") else ""
    return json.dumps(redact_data(doc), indent=indent) + end

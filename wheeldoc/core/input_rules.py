"""WD0xx: inputs that could not be read, or parts of them that were skipped.

These are produced by the engine and the commands, not by checks over facts; the
functions below exist so the registry documents them like every other rule.
"""

from __future__ import annotations

from wheeldoc.core.model import Severity
from wheeldoc.core.registry import Example, rule


@rule("WD001", "input-error", title="input could not be read", severity=Severity.ERROR,
      examples=(Example(("check", "fixtures/broken/truncated-uv.lock"), True),
                Example(("check", "fixtures/story"), False)))
def input_error(facts, ctx):
    """
    ## What it does
    Reports an input that wheeldoc could not read or parse: a truncated TOML lockfile, binary
    garbage, a corrupt ELF or zip, a Dockerfile with an unterminated heredoc. The message names
    the file and the line (or byte offset) where reading stopped.

    ## Why is this bad?
    Nothing in that input was checked. wheeldoc exits with code 2, never 0 or 1, so a CI job
    cannot mistake an unreadable input for a clean one.

    ## Example
    ```
    fixtures/broken/truncated-uv.lock:41: invalid TOML: Unclosed array
    ```

    ## Fix
    Regenerate the file with the tool that made it (`uv lock`, `uv pip compile`, …) or point
    wheeldoc at the right file.
    """
    return ()


@rule("WD002", "input-skipped", title="part of an input could not be analyzed", severity=Severity.WARNING,
      examples=(Example(("check", "fixtures/broken/no-lockfile"), True),
                Example(("check", "fixtures/story"), False)))
def input_skipped(facts, ctx):
    """
    ## What it does
    Reports a part of an input that was skipped while the rest was analyzed: one unreadable
    library inside a wheel, a file in a directory whose format wheeldoc does not know, a
    requirement line it cannot parse.

    ## Why is this bad?
    The verdict for the rest stands, but it is partial: what was skipped was not checked.

    ## Example
    ```
    dist/ext.whl!pkg/_broken.so: skipped: truncated ELF section table
    ```

    ## Fix
    Check the skipped part by hand or report the file to wheeldoc if it is valid.
    """
    return ()

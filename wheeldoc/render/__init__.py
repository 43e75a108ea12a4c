"""One report in every format: text (ANSI colour on a terminal), JSON with its committed schema and
SARIF 2.1.0, plus the shared table helpers and the writer that decides the exit code.
"""

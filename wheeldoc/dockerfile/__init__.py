"""Dockerfiles in `wheeldoc check`: BuildKit's lexer and parser, the stage model, shell commands
inside RUN, the facts and WD4xx rules, their fixes and the command that applies them.
"""

"""Fuzz the Dockerfile reader as `wheeldoc check` runs it: `parse_text` (BuildKit's parser:
directives, continuations, heredocs, JSON forms, flags), `dockerfile_model.analyze` (stages,
ARG/ENV scopes, word expansion) and `shell.commands_in_run` + `find_installs` on every RUN."""

from __future__ import annotations

from _harness import contract, instrumented, main, read_seed_files

with instrumented():
    from wheeldoc.dockerfile.parser import parse_text
    from wheeldoc.dockerfile.stages import analyze, mounts
    from wheeldoc.dockerfile.shell import commands_in_run, find_installs
    from wheeldoc.core.errors import LimitExceeded
    from wheeldoc.dockerfile.lexer import ExpansionLimit, expansion_budget


def _fixture_seeds() -> list[bytes]:
    return read_seed_files(["fixtures/dockerfiles/**/*Dockerfile", "dockerfiles/**/*Dockerfile"],
                           max_size=32 << 10)


def seeds() -> list[bytes]:
    import _hostile_seeds

    return _fixture_seeds() + _hostile_seeds.dockerfile()  # the shapes tests/hostile/ proves bounded


@contract
def test_one_input(data: bytes) -> None:
    df = parse_text(data, "Dockerfile")
    df.syntax
    try:
        with expansion_budget(len(data)):  # as `check` analyzes (dockerfile.command.analyze_text)
            _analyze(df)
    except ExpansionLimit as e:
        raise LimitExceeded("Dockerfile", str(e)) from None


def _analyze(df) -> None:
    graph = analyze(df)
    for ins in df.instructions:
        df.ignored_codes(ins)
        graph.scope(ins)
        if ins.keyword == "RUN":
            mounts(ins)
            find_installs(commands_in_run(ins))


if __name__ == "__main__":
    main(__file__, test_one_input, seeds)

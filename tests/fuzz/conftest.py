import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fuzz: short coverage-guided fuzz runs of the parsers (also slow: `uv run pytest -m slow`, .ci/run)")

"""The abi tests leave no reader thread behind (a test that forks needs a one-thread process)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_reader_threads_left():
    yield
    from wheeldoc.abi.site import shutdown_readers

    shutdown_readers()

"""Scheduling hints for work off the critical path.

A cold `abi` run inflates several big members at once on two cores; the longest one decides when
the answer is ready, so the others (and the hashing of stored bytes) yield to it. Linux keeps a
nice value per thread; elsewhere these hints do nothing.
"""

from __future__ import annotations

import os
import sys
import threading

BACKGROUND = 5  # nice steps: such a thread gets about a third of a core beside a busy one


def lower_this_thread(step: int = BACKGROUND) -> None:
    """Lower the calling thread's CPU priority by `step` nice levels (never raised back)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + step))
    except (AttributeError, OSError):
        pass

"""`depth` (one level at a time) against a plain recursive count, on random shapes and limits."""

from __future__ import annotations

import random

from wheeldoc.core.safeload import depth


def _naive(obj, limit):
    if not isinstance(obj, (dict, list)):
        return 0
    values = obj.values() if isinstance(obj, dict) else obj
    return 1 + max((_naive(v, limit) for v in values), default=0)


def test_depth_counts_nesting_and_stops_past_the_limit() -> None:
    rnd = random.Random(7)

    def shape(n):
        if n == 0 or rnd.random() < 0.3:
            return rnd.choice([1, "x", None])
        if rnd.random() < 0.5:
            return [shape(n - 1) for _ in range(rnd.randint(0, 3))]
        return {str(i): shape(n - 1) for i in range(rnd.randint(0, 3))}

    for _ in range(5_000):
        obj, limit = shape(rnd.randint(0, 8)), rnd.randint(1, 6)
        want = _naive(obj, limit)
        assert depth(obj, limit) == (want if want <= limit else limit + 1)
    deep: list = []
    for _ in range(10_000):
        deep = [deep]
    assert depth(deep) == 129  # stops one level past MAX_DEPTH, whatever the real depth

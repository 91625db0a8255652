"""How many examples a hypothesis test tries: all of them in a whole run (``python -m
pytest``, as CI runs it), a fifth in the fast tier (``-m "not slow"``), so the fast tier stays
fast and the full run still searches as long as before. conftest.py says which at start-up."""

from __future__ import annotations

#: the share of each test's examples to try (conftest.py sets it before test modules load)
SHARE = [1.0]


def examples(n: int) -> int:
    """``n`` examples in a whole run, fewer (at least 10) in the fast tier."""
    return max(10, round(n * SHARE[0]))

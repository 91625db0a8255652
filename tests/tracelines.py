"""Format-2 trace events as a real Tracer writes them, for the transport and fault tests
(tests/test_trace.py, tests/test_trace_recovery.py): step records (``steps`` lines) between
episode-level events, never lines built by hand that the writers could not produce."""

from __future__ import annotations

from typing import Any

import orjson

from bdi_rl.trace.kinds import TraceLevel
from bdi_rl.trace.tracer import Tracer


def rl_data(i: int) -> dict[str, Any]:
    """An ``rl.step``'s data (RlStepData), told apart by ``s``; ``q_before`` is ``q[a]``, as a
    record rebuilds it."""
    q = [0.25, 0.5, 0.125, 0.0]
    return {
        "s": i,
        "a": i % 4,
        "r": 0.0,
        "s2": i + 1,
        "done": False,
        "q_before": q[i % 4],
        "q_after": 0.25,
        "epsilon": 0.1,
        "q": q,
    }


def end_data(i: int) -> dict[str, Any]:
    """An ``episode.end``'s data (EpisodeEndData), told apart by ``length``."""
    return {"return": 1.0, "length": i, "outcome": "goal", "epsilon": 0.1}


def record(tracer: Tracer, i: int, steps: int = 1) -> None:
    """``steps`` env steps into the tracer's open record, from step ``i`` on: a percept and a
    Q-update each."""
    for k in range(i, i + steps):
        tracer.stamp(0, k)
        tracer.emit("belief.add", {"belief": f"state({k})", "source": "percept"})
        tracer.emit("rl.step", rl_data(k))


def fill(tracer: Tracer, count: int, steps: int = 1) -> None:
    """``count`` more events numbered by ``tracer``: a ``steps`` record (``steps`` env steps,
    the n-th record's from step ``n * steps``) at each even seq, an ``episode.end`` at each odd one."""
    for seq in range(tracer.seq, tracer.seq + count):
        if seq % 2:
            tracer.emit("episode.end", end_data(seq))
        else:
            record(tracer, seq // 2 * steps, steps)
            tracer.flush_record()


def events(count: int, run: str = "r", agent: str = "a@x", steps: int = 1) -> list[dict[str, Any]]:
    """``count`` events of one agent as its tracer numbers them, seq 0 on (:func:`fill`)."""
    tracer = Tracer(run, agent, TraceLevel.STEP)
    fill(tracer, count, steps)
    assert tracer.seq == count
    return list(tracer.pending)


def line(event: dict[str, Any], **fields: Any) -> bytes:
    """``event`` as telemetry writes it (one JSONL line), with ``fields`` replaced."""
    return orjson.dumps({**event, **fields}) + b"\n"

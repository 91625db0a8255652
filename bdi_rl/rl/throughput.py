"""Training throughput as users quote it: env steps over the wall time during which the run
was training, one definition for ``summary.json`` (live agents and the trace), the progress bar
and the benchmarks.

A learner trains from its first reset to its last training episode, evaluations during
training left out. The run's training phase lasts from its first learner's first reset to its
last learner's last training episode, less the evaluations during which no learner trained:
whether its learners ran side by side in processes of their own (about the longest span) or
took turns in one process (every turn, and what the run did between turns). Dividing all
learners' steps by the longest single span instead overstated a 1000-learner run a
thousandfold.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

Interval = tuple[float, float]


@dataclass
class TrainingSpan:
    """One learner's training, on one clock: ``start`` at its first reset, ``end`` at its last
    training episode (None while it trains), ``pauses`` the evaluations in between."""

    start: float
    end: float | None = None
    pauses: list[Interval] = field(default_factory=list)

    def active(self, now: float) -> list[Interval]:
        """The intervals it trained in, up to ``now`` if it still trains."""
        end = now if self.end is None else self.end
        intervals: list[Interval] = []
        cursor = self.start
        for pause_start, pause_end in sorted(self.pauses):
            if pause_start > cursor:
                intervals.append((cursor, min(pause_start, end)))
            cursor = max(cursor, pause_end)
            if cursor >= end:
                break
        if cursor < end:
            intervals.append((cursor, end))
        return [(a, b) for a, b in intervals if b > a]

    def seconds(self, now: float) -> float:
        return sum(b - a for a, b in self.active(now))


def union_seconds(intervals: Iterable[Interval]) -> float:
    """The length of the union of ``intervals``."""
    total = 0.0
    current: Interval | None = None
    for start, end in sorted(intervals):
        if current is None or start > current[1]:
            if current is not None:
                total += current[1] - current[0]
            current = (start, end)
        elif end > current[1]:
            current = (current[0], end)
    if current is not None:
        total += current[1] - current[0]
    return total


def training_seconds(spans: Sequence[TrainingSpan], now: float) -> float:
    """The wall time of the run's training phase (``now`` ends the spans still open)."""
    if not spans:
        return 0.0
    first = min(span.start for span in spans)
    last = max(now if span.end is None else span.end for span in spans)
    active = [interval for span in spans for interval in span.active(now)]
    pauses = [pause for span in spans for pause in span.pauses]
    paused_alone = union_seconds(active + pauses) - union_seconds(active)
    return max(0.0, last - first - paused_alone)


def steps_per_second(env_steps: int, seconds: float) -> float:
    """The figure printed and saved (0.0 when nothing trained)."""
    return round(env_steps / seconds, 1) if seconds > 0 else 0.0

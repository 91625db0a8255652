"""How sure a measured policy is: 95 % intervals for an evaluation's success rate and mean
return (``bdi-rl play``'s summary).

Success is a count of successes in independent episodes: its interval is Wilson's score
interval, which stays inside [0, 1] and is right near 0 and 1, where a trained policy's rate
often is (the normal approximation would give [1, 1] for 1000 successes in 1000). The mean
return has no such shape (Taxi's returns run from -200 to 15): its interval is the
percentile bootstrap, resampled with a fixed seed, so one evaluation always reports the same
interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

#: The standard normal quantile of a two-sided 95 % interval.
Z95 = 1.959963984540054
#: Bootstrap resamples of the mean return (10,000: the interval's ends move by < 0.5 % of
#: its width between seeds), drawn in blocks that keep memory under ~16 MB.
RESAMPLES = 10_000
_BLOCK_BYTES = 16 << 20
SUCCESS_METHOD = "Wilson score interval"
RETURN_METHOD = f"percentile bootstrap, {RESAMPLES} resamples"


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for a proportion of ``successes`` in ``n`` trials."""
    if n <= 0:
        raise ValueError(f"wilson_interval: need n > 0, got {n}")
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact at the ends (no 1e-19 of rounding)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def bootstrap_mean_interval(
    values: Sequence[float], seed: int = 0, resamples: int = RESAMPLES, level: float = 0.95
) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of ``values``."""
    data = np.asarray(values, dtype=np.float64)
    n = data.size
    if n == 0:
        raise ValueError("bootstrap_mean_interval: no values")
    if np.ptp(data) == 0.0:  # every resample has the same mean
        return float(data[0]), float(data[0])
    rng = np.random.default_rng(seed)
    block = max(1, min(resamples, _BLOCK_BYTES // (8 * n)))
    means = np.empty(resamples)
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        means[start:stop] = data[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def evaluation_summary(returns: Sequence[float], successes: Sequence[bool], lengths: Sequence[int]) -> dict[str, Any]:
    """Mean return and success rate of greedy episodes, each with its 95 % interval (the
    ``evaluation`` of a play's ``summary.json``)."""
    n = len(returns)
    if n == 0:
        return {"episodes": 0}
    wins = int(sum(bool(s) for s in successes))
    return {
        "episodes": n,
        "mean_return": float(np.mean(returns)),
        "return_ci95": list(bootstrap_mean_interval(returns)),
        "success_rate": wins / n,
        "success_ci95": list(wilson_interval(wins, n)),
        "mean_length": float(np.mean(lengths)),
    }

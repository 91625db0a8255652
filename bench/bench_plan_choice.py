"""Choosing among hand-written plans (issue 31): Taxi driven by routes (asl/taxi-routes.asl), the
route to each station chosen three ways, with the same hyper-parameters
(agents/taxi-routes.toml's [learning]):

- ``learned``: the routes' ``learned(taxi)`` labels, the choice by value (SMDP Q-learning);
- ``source order``: the labels without the annotation, so Jason's selection: the first
  applicable route in source order (the middle row, never blocked);
- ``random``: one of the same three routes, drawn uniformly at each choice (``.random``).

Each runs on bdi-rl's mind in this process (the real .rl_* actions, no XMPP), the three in
turn per seed. Every ``--every`` training episodes it is evaluated through its plans over
``--episodes`` episodes, and solved at the first evaluation optimal from every start it met
(within ``--regret`` per episode on average; bench_taxi_hierarchy.py says how). The ways that
learn nothing (source order, random) are evaluated once, after ``--every`` episodes: their
evaluation would be the same at any budget. Reported per way: the training env steps when
solved (median, IQM with its 95 % bootstrap CI over the seeds; censored at ``--budget``
episodes) and the last evaluation's mean return and mean regret per episode.

    python bench/bench_plan_choice.py --seeds 10
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_taxi_hierarchy import ROOT, evaluating_plans, solve

from bdi_rl.readers.curves import iqm, iqm_ci
from bdi_rl.spec import load_spec

ROUTES = ROOT / "asl" / "taxi-routes.asl"

#: The three routes, as the learned choice has them.
_LEARNED_ROUTES = [
    f"@via_{name}[learned(taxi)]\n+!navigate(L) : station(L, R, C) <- !row({row}); !col(C); !row(R).\n"
    for name, row in (("middle", 2), ("top", 0), ("bottom", 4))
]

#: One plan drawing one of the same three rows uniformly at each choice.
_RANDOM_ROUTE = (
    "@via_random\n+!navigate(L) : station(L, R, C) <-\n"
    "    .random(X); V = math.floor(X * 3) * 2; !row(V); !col(C); !row(R).\n"
)


def variants() -> dict[str, str]:
    """The plans of each way, from the shipped file."""
    text = ROUTES.read_text()
    for route in _LEARNED_ROUTES:
        assert route in text, "taxi-routes.asl's routes changed: update the bench"
    random = text.replace(_LEARNED_ROUTES[0], _RANDOM_ROUTE)
    for route in _LEARNED_ROUTES[1:]:
        random = random.replace(route, "")
    return {"learned": text, "source order": text.replace("[learned(taxi)]", ""), "random": random}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--every", type=int, default=100, help="training episodes between evaluations")
    parser.add_argument("--episodes", type=int, default=1000, help="greedy episodes per evaluation")
    parser.add_argument("--budget", type=int, default=5000, help="training episodes at most")
    parser.add_argument(
        "--regret", type=float, default=0.0, help="solved: mean return at most this below the optimum's"
    )
    args = parser.parse_args()
    config = load_spec(ROOT / "agents" / "taxi-routes.toml").learning  # the spec's [learning], whole
    learns = {"learned": True, "source order": False, "random": False}
    steps: dict[str, list[float]] = {name: [] for name in learns}
    censored = dict.fromkeys(learns, 0)
    returns: dict[str, list[float]] = {name: [] for name in learns}
    regrets: dict[str, list[float]] = {name: [] for name in learns}
    with tempfile.TemporaryDirectory() as tmp_name:
        plans: dict[str, Path] = {}
        for name, text in variants().items():
            folder = Path(tmp_name) / name.replace(" ", "-")
            folder.mkdir()
            plans[name] = evaluating_plans(ROUTES, text, folder, args.every)
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            began = time.perf_counter()
            line = [f"seed {seed}:"]
            for name, path in plans.items():
                budget = args.budget if learns[name] else args.every
                result = solve(path, config, seed, args.every, args.episodes, budget, False, args.regret)
                steps[name].append(result.steps if result.steps is not None else result.budget_steps)
                censored[name] += result.steps is None
                returns[name].append(result.last_return)
                regrets[name].append(result.last_regret)
                line.append(f"{name} {result.steps} (return {result.last_return:.3f}, regret {result.last_regret:.3f})")
            print(" ".join(line), f"{time.perf_counter() - began:.0f} s", flush=True)
    print()
    print(
        f"Taxi-v4 by routes, solved: {args.episodes} episodes through the plans, mean regret <= {args.regret} "
        f"(0: optimal from every start), evaluated every {args.every} episodes, at most {args.budget}"
    )
    print("| choice | seeds solved | env steps to optimal: median | IQM [95 % CI] | last evaluation: return | regret |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, values in steps.items():
        solved = args.seeds - censored[name]
        if solved == 0:
            shown, interval = "never" if not learns[name] else "censored", "-"
        elif len(values) < 2:
            shown, interval = f"{values[0]:,.0f}", "-"
        else:
            low, high = iqm_ci(np.array(values))
            shown = f"{statistics.median(values):,.0f}"
            interval = f"{float(iqm(values)):,.0f} [{float(low[0]):,.0f}, {float(high[0]):,.0f}]"
        print(
            f"| {name} | {solved}/{args.seeds} | {shown} | {interval} | "
            f"{statistics.mean(returns[name]):.3f} | {statistics.mean(regrets[name]):.3f} |"
        )


if __name__ == "__main__":
    main()

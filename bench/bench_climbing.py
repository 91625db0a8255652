"""Independent vs hysteretic Q-learning on the climbing and penalty games (issue 19, step 1).

For each game and rule, N seeds each train a pair of learners (``bdi_rl.rl.sharedworld``)
for the same budget of joint steps (one step per episode); a seed counts if the learners'
greedy joint action is then an optimum of the game (climbing: (0, 0) = 11; penalty:
(0, 2) or (2, 0) = 10). The table also names the joint action most seeds settled on.

Hyper-parameters are chosen honestly: ``--tune`` searches the same grid of alpha and
epsilon schedules for both rules (plus beta for hysteretic) on tuning seeds disjoint from
the measured ones, picks each rule's best by its mean success over both games, and then
measures both on the N seeds. Without ``--tune``, ``--setup tuned`` uses the picks of the
last tuning run (BENCHMARKS.md) and ``--setup textbook`` one untuned setup for both.

    python bench/bench_climbing.py --seeds 200 --episodes 1000 --tune
    python bench/bench_climbing.py --seeds 200 --episodes 1000 --setup textbook
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass

from bdi_rl.rl.matrixgames import ClimbingGame, MatrixGame, PenaltyGame
from bdi_rl.rl.qlearning import LearningConfig
from bdi_rl.rl.sharedworld import RULES, greedy_actions, make_world_learners, run_joint_episode

GAMES: dict[str, type[MatrixGame]] = {"climbing": ClimbingGame, "penalty": PenaltyGame}
TUNING_SEEDS = range(10_000, 10_050)  # disjoint from the measured seeds 0..N-1


@dataclass(frozen=True)
class Setup:
    """One rule's hyper-parameters; epsilon goes linearly from 1 to ``eps_end`` over the
    first ``decay`` fraction of the budget, then stays."""

    alpha: float
    decay: float
    eps_end: float
    beta_ratio: float | None = None  # hysteretic: beta = beta_ratio * alpha

    def config(self, episodes: int) -> LearningConfig:
        return LearningConfig(
            alpha=self.alpha,
            epsilon_start=1.0,
            epsilon_end=self.eps_end,
            epsilon_decay_episodes=max(1, round(self.decay * episodes)),
        )

    def __str__(self) -> str:
        beta = "" if self.beta_ratio is None else f", beta {self.beta_ratio * self.alpha:g}"
        return f"alpha {self.alpha:g}{beta}, epsilon 1 -> {self.eps_end:g} over {self.decay:.0%} of the budget"


#: ``--setup tuned``: the picks of the last tuning run (``--tune`` at 1000 episodes, BENCHMARKS.md).
TUNED = {
    "independent": Setup(alpha=0.5, decay=0.25, eps_end=0.2),
    "hysteretic": Setup(alpha=0.05, decay=0.9, eps_end=0.2, beta_ratio=0.01),
}
#: ``--setup textbook``: one untuned setup for both, Matignon et al.'s alpha 0.1 and beta 0.01.
TEXTBOOK = {
    "independent": Setup(alpha=0.1, decay=0.5, eps_end=0.05),
    "hysteretic": Setup(alpha=0.1, decay=0.5, eps_end=0.05, beta_ratio=0.1),
}
SETUPS = {"tuned": TUNED, "textbook": TEXTBOOK}

GRID_ALPHA = (0.05, 0.1, 0.2, 0.5)
GRID_DECAY = (0.25, 0.5, 0.9)
GRID_EPS_END = (0.0, 0.05, 0.2)
GRID_BETA_RATIO = (0.01, 0.1, 0.3)


def grid(rule: str) -> list[Setup]:
    base = itertools.product(GRID_ALPHA, GRID_DECAY, GRID_EPS_END)
    if rule == "independent":
        return [Setup(a, d, e) for a, d, e in base]
    return [Setup(a, d, e, b) for (a, d, e), b in itertools.product(base, GRID_BETA_RATIO)]


def greedy_joint(game: str, rule: str, setup: Setup, seed: int, episodes: int) -> tuple[int, int]:
    """Train one pair of learners; their greedy joint action."""
    env = GAMES[game]()
    beta = None if setup.beta_ratio is None else setup.beta_ratio * setup.alpha
    learners = make_world_learners(env, rule, setup.config(episodes), beta=beta, seed=seed)
    for _ in range(episodes):
        run_joint_episode(env, learners)
    g = greedy_actions(learners, {agent: 0 for agent in env.possible_agents})
    return g["player_0"], g["player_1"]


def measure(game: str, rule: str, setup: Setup, seeds: range, episodes: int) -> Counter[tuple[int, int]]:
    return Counter(greedy_joint(game, rule, setup, seed, episodes) for seed in seeds)


def success(game: str, joints: Counter[tuple[int, int]]) -> float:
    _, optima = GAMES[game]().optimum()
    return sum(n for joint, n in joints.items() if joint in optima) / sum(joints.values())


def tune(rule: str, episodes: int) -> Setup:
    """The grid point with the best mean success over both games on the tuning seeds
    (ties: the first, i.e. the smaller alpha and faster decay)."""
    scores = []
    for setup in grid(rule):
        scores.append(statistics.mean(success(g, measure(g, rule, setup, TUNING_SEEDS, episodes)) for g in GAMES))
    i = max(range(len(scores)), key=scores.__getitem__)
    good = sum(x >= 0.95 for x in scores)
    print(
        f"tuned {rule} on {len(TUNING_SEEDS)} seeds: {grid(rule)[i]} (mean success {scores[i]:.2f}; "
        f"{good} of {len(scores)} grid points reach 0.95, median {statistics.median(scores):.2f})",
        flush=True,
    )
    return grid(rule)[i]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--episodes", type=int, default=1000, help="joint steps per seed (one per episode)")
    parser.add_argument("--setup", choices=SETUPS, default="tuned", help="hyper-parameters when not --tune")
    parser.add_argument("--tune", action="store_true", help="pick each rule's hyper-parameters on tuning seeds first")
    args = parser.parse_args()
    print("$ python bench/bench_climbing.py " + " ".join(sys.argv[1:]), flush=True)
    t0 = time.perf_counter()
    setups = {rule: tune(rule, args.episodes) if args.tune else SETUPS[args.setup][rule] for rule in RULES}
    seeds = range(args.seeds)
    print(f"\n{args.seeds} seeds (0..{args.seeds - 1}), {args.episodes} joint steps each\n")
    print("| game | rule | greedy joint action is optimal | most seeds settled on | hyper-parameters |")
    print("|---|---|---:|---|---|")
    for game, cls in GAMES.items():
        env = cls()
        for rule in RULES:
            joints = measure(game, rule, setups[rule], seeds, args.episodes)
            n_opt = round(success(game, joints) * args.seeds)
            top = ", ".join(
                f"{joint} = {env.payoff[joint]:g}: {n}" for joint, n in sorted(joints.items(), key=lambda x: -x[1])[:3]
            )
            print(f"| {game} | {rule} | **{n_opt} / {args.seeds}** | {top} | {setups[rule]} |", flush=True)
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()

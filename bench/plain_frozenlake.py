"""The plain Python Q-learning loop a user would write for FrozenLake 4x4 (slippery), as a
whole process: gymnasium and numpy only, the README's first command's budget (6000 training
episodes, 1000 greedy evaluation episodes) and its hyper-parameters (agents/frozenlake-4x4.toml).
The yardstick of bench/bench_whole_process.py."""

from __future__ import annotations

import random

import gymnasium as gym
import numpy as np

EPISODES, EVAL_EPISODES, SEED = 6000, 1000, 1
ALPHA, ALPHA_MIN, ALPHA_DECAY, GAMMA = 0.2, 0.005, 0.9995, 0.99
EPS_START, EPS_END, EPS_DECAY = 1.0, 0.05, 2000


def main() -> None:
    env = gym.make("FrozenLake-v1", map_name="4x4", is_slippery=True)
    q = np.zeros((16, 4))
    rng = random.Random(SEED)
    alpha, steps = ALPHA, 0
    env.reset(seed=SEED)
    for episode in range(EPISODES):
        eps = max(EPS_END, EPS_START - (EPS_START - EPS_END) * episode / EPS_DECAY)
        s, _ = env.reset()
        done = False
        while not done:
            a = rng.randrange(4) if rng.random() < eps else int(np.argmax(q[s]))
            s2, r, term, trunc, _ = env.step(a)
            target = r if term else r + GAMMA * q[s2].max()
            q[s, a] += alpha * (target - q[s, a])
            s, done = s2, term or trunc
            steps += 1
        alpha = max(ALPHA_MIN, alpha * ALPHA_DECAY)
    successes = 0
    env.reset(seed=SEED + 10_000)
    for _ in range(EVAL_EPISODES):
        s, _ = env.reset()
        done = False
        while not done:
            s, r, term, trunc, _ = env.step(int(np.argmax(q[s])))
            done = term or trunc
        successes += r > 0
    print(f"{steps} training steps, success {successes / EVAL_EPISODES:.3f}")


if __name__ == "__main__":
    main()

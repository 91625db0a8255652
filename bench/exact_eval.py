"""Exact value of a greedy policy on a Gymnasium toy-text env (its transition table ``P``).

The benchmarks judge "solved" with this instead of sampled episodes: no evaluation noise
and no extra env steps, so step counts compare learners, not luck of the evaluation.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class TransitionModel:
    """``P`` of a toy-text env as arrays, for repeated finite-horizon policy evaluation."""

    def __init__(self, unwrapped_env: Any, horizon: int) -> None:
        P = unwrapped_env.P
        n_states = len(P)
        self.horizon = horizon
        self.start = np.asarray(unwrapped_env.initial_state_distrib, dtype=np.float64)
        self.n_states = n_states
        # per (s, a): successor states, probabilities, rewards, terminal flags
        self.rows: list[list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]] = []
        for s in range(n_states):
            per_action = []
            for a in range(len(P[s])):
                outcomes = P[s][a]
                per_action.append(
                    (
                        np.array([o[1] for o in outcomes], dtype=np.int64),
                        np.array([o[0] for o in outcomes], dtype=np.float64),
                        np.array([o[2] for o in outcomes], dtype=np.float64),
                        np.array([o[3] for o in outcomes], dtype=bool),
                    )
                )
            self.rows.append(per_action)

    def greedy_value(self, q: np.ndarray) -> tuple[float, float]:
        """(expected undiscounted return, probability of a positive-reward termination) of
        the first-max greedy policy of ``q`` within ``horizon`` steps from the start states."""
        policy = np.argmax(q, axis=1)
        succ, prob, rew, term = [], [], [], []
        for s in range(self.n_states):
            nxt, p, r, t = self.rows[s][policy[s]]
            succ.append(nxt)
            prob.append(p)
            rew.append(r)
            term.append(t)
        width = max(len(x) for x in succ)
        S = np.zeros((self.n_states, width), dtype=np.int64)
        W = np.zeros((self.n_states, width))
        R = np.zeros((self.n_states, width))
        T = np.zeros((self.n_states, width), dtype=bool)
        for s in range(self.n_states):
            k = len(succ[s])
            S[s, :k], W[s, :k], R[s, :k], T[s, :k] = succ[s], prob[s], rew[s], term[s]
        expected_reward = (W * R).sum(axis=1)
        win = (W * ((R > 0) & T)).sum(axis=1)
        cont = W * ~T
        ret = np.zeros(self.n_states)
        success = np.zeros(self.n_states)
        for _ in range(self.horizon):
            ret = expected_reward + (cont * ret[S]).sum(axis=1)
            success = win + (cont * success[S]).sum(axis=1)
        return float(self.start @ ret), float(self.start @ success)

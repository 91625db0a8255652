"""Learners that act in one world together, and the loop that steps it.

Each agent of a PettingZoo ``ParallelEnv`` with ``Discrete`` observations and actions
gets a :class:`~bdi_rl.rl.qlearning.QLearner` over its own observations and actions, and a
rule that updates it from its own reward. They are *independent learners*: none sees
another's action or table, so what they learn depends on how the others explore. Two
rules, selected by name (:data:`RULES`):

- ``independent``: plain Q-learning per agent (``QLearner.update``), the baseline.
- ``hysteretic``: hysteretic Q-learning (Matignon, Laurent & Le Fort-Piat 2007): a positive
  TD error moves Q by ``alpha``, a negative one by ``beta < alpha``. A low reward is more
  often a partner's exploration than a bad own action, so it is believed less: each agent
  stays optimistic about the joint action that once paid off.

The table, schedules and random streams are the ``QLearner``'s own, so checkpoints and
traces treat a shared-world learner as any other. The loop itself is :func:`joint_step`
(every agent's action in, one world step, each learner updated from its own transition),
which the BDI layer calls once every agent has chosen; :func:`run_joint_episode` runs it
with each learner choosing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
from gymnasium.spaces import Discrete
from pettingzoo import ParallelEnv

from bdi_rl.rl.qlearning import LearningConfig, QLearner

__all__ = [
    "RULES",
    "JointEpisodeResult",
    "JointStep",
    "WorldLearner",
    "checked_joint_action",
    "greedy_actions",
    "joint_step",
    "make_world_learner",
    "make_world_learners",
    "run_joint_episode",
]

#: The update rules a shared-world learner can be built with, by name.
RULES: Final = ("independent", "hysteretic")

#: ``beta`` of a hysteretic learner when not told: a tenth of ``alpha``, Matignon et al.'s
#: ratio (alpha 0.1, beta 0.01).
DEFAULT_BETA_RATIO: Final = 0.1


def checked_joint_action(env: ParallelEnv, actions: dict[str, int]) -> list[int]:
    """``actions`` in ``possible_agents`` order, once each is known to be one of its agent's
    (a world steps on every live agent's action or not at all); what every shipped
    ParallelEnv's ``step`` checks first."""
    name = env.metadata["name"]
    if not env.agents:
        raise RuntimeError(f"{name}: step() outside an episode; call reset() first")
    if set(actions) != set(env.agents):
        raise ValueError(f"{name}: need one action from each of {env.agents}, got {actions!r}")
    joint = []
    for agent in env.possible_agents:
        a, space = actions[agent], env.action_space(agent)
        if not space.contains(a):
            raise ValueError(f"{name}: {agent}'s action {a!r} is not in {space}")
        joint.append(int(a))
    return joint


@dataclass
class WorldLearner:
    """One agent's learner in a shared world: a ``QLearner`` and the rule that updates it.

    ``beta`` is the learning rate of negative TD errors; for ``independent`` it is None (the
    ``QLearner``'s own update, one rate for both signs).
    """

    learner: QLearner
    rule: str
    beta: float | None = None

    def act(self, s: int) -> int:
        """Epsilon-greedy action for training (the ``QLearner``'s)."""
        return self.learner.act(s)

    def greedy(self, s: int) -> int:
        """Greedy action (the ``QLearner``'s, random tie-break on its evaluation stream)."""
        return self.learner.greedy(s)

    def update(self, s: int, a: int, r: float, s2: int, terminated: bool) -> tuple[float, float]:
        """One TD update by this learner's rule; returns (Q[s,a] before, after). Counts the step."""
        learner = self.learner
        learner.env_steps += 1
        if self.beta is None:
            return learner.update(s, a, r, s2, terminated)
        q = learner.q
        before = float(q[s, a])
        target = r if terminated else r + learner.config.gamma * float(q[s2].max())
        delta = target - before
        after = before + (learner.alpha if delta >= 0.0 else self.beta) * delta
        q[s, a] = after
        return before, after

    def end_episode(self) -> None:
        """Advance the ``QLearner``'s schedules."""
        self.learner.end_episode()


def make_world_learner(
    rule: str,
    n_states: int,
    n_actions: int,
    config: LearningConfig | None = None,
    *,
    beta: float | None = None,
    seed: int | None = None,
) -> WorldLearner:
    """A learner of ``rule`` (one of :data:`RULES`).

    For ``hysteretic``, ``beta`` defaults to a tenth of ``config.alpha`` and must be in
    ``[0, alpha]`` at every point of the alpha schedule (so ``<= alpha_min`` when alpha
    decays); ``beta == alpha`` is plain Q-learning, ``beta == 0`` ignores every loss
    (distributed Q-learning, Lauer & Riedmiller 2000, safe only in deterministic games).
    ``independent`` takes no ``beta``.
    """
    if rule not in RULES:
        raise ValueError(f"shared-world learner: rule must be one of {', '.join(RULES)}, got {rule!r}")
    learner = QLearner(n_states, n_actions, config, seed=seed)
    if rule == "independent":
        if beta is not None:
            raise ValueError("shared-world learner: beta is a parameter of the hysteretic rule only")
        return WorldLearner(learner, rule)
    cfg = learner.config
    floor = cfg.alpha_min if cfg.alpha_min is not None else cfg.alpha
    if beta is None:
        beta = DEFAULT_BETA_RATIO * floor
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not 0.0 <= beta <= floor:
        raise ValueError(f"hysteretic learner: beta must be in [0, {floor:g}] (the lowest alpha), got {beta!r}")
    return WorldLearner(learner, rule, float(beta))


def make_world_learners(
    env: ParallelEnv[str, Any, Any],
    rule: str,
    config: LearningConfig | None = None,
    *,
    beta: float | None = None,
    seed: int | None = None,
) -> dict[str, WorldLearner]:
    """One learner of ``rule`` per possible agent of ``env``, sized by its spaces.

    Every agent's observation and action space must be ``Discrete``. With ``seed``, each
    agent's learner gets its own seed, spawned from it (reproducible, and no two agents
    share a random stream).
    """
    agents = list(env.possible_agents)
    seeds: list[int | None] = [None] * len(agents)
    if seed is not None:
        children = np.random.SeedSequence(seed).spawn(len(agents))
        seeds = [int(child.generate_state(1, np.uint64)[0]) for child in children]
    learners = {}
    for agent, agent_seed in zip(agents, seeds, strict=True):
        obs_space, act_space = env.observation_space(agent), env.action_space(agent)
        for what, space in (("observation", obs_space), ("action", act_space)):
            if not isinstance(space, Discrete):
                raise ValueError(f"shared world: {agent}'s {what} space must be Discrete, got {space}")
        learners[agent] = make_world_learner(
            rule, int(obs_space.n), int(act_space.n), config, beta=beta, seed=agent_seed
        )
    return learners


@dataclass
class JointStep:
    """What one world step gave each agent that acted."""

    obs: dict[str, int]
    rewards: dict[str, float]
    terminations: dict[str, bool]
    truncations: dict[str, bool]
    infos: dict[str, dict[str, Any]]
    done: bool
    """no agent is left: the episode is over"""


def joint_step(
    env: ParallelEnv[str, Any, Any],
    learners: dict[str, WorldLearner],
    obs: dict[str, int],
    actions: dict[str, int],
    *,
    learn: bool = True,
) -> JointStep:
    """Step ``env`` once with every live agent's action; with ``learn``, update each acting
    agent's learner from its own (obs, action, reward, next obs, terminated).

    An agent the env removes without a last observation bootstraps from nothing new: its
    next state is taken to be its current one (a termination cuts the bootstrap anyway).
    """
    obs2, rewards, terms, truncs, infos = env.step(actions)
    next_obs = {agent: int(o) for agent, o in obs2.items()}
    if learn:
        for agent, a in actions.items():
            s = obs[agent]
            learners[agent].update(s, a, float(rewards[agent]), next_obs.get(agent, s), bool(terms[agent]))
    return JointStep(
        obs=next_obs,
        rewards={agent: float(r) for agent, r in rewards.items()},
        terminations={agent: bool(t) for agent, t in terms.items()},
        truncations={agent: bool(t) for agent, t in truncs.items()},
        infos=infos,
        done=not env.agents,
    )


def greedy_actions(learners: dict[str, WorldLearner], obs: dict[str, int]) -> dict[str, int]:
    """Each observing agent's greedy action: the joint action the learners have settled on."""
    return {agent: learners[agent].greedy(s) for agent, s in obs.items()}


@dataclass
class JointEpisodeResult:
    """One finished episode of a shared world."""

    returns: dict[str, float] = field(default_factory=dict)
    """each agent's undiscounted return"""
    length: int = 0
    """world steps taken"""
    last_actions: dict[str, int] = field(default_factory=dict)
    """the joint action of the last step"""


def run_joint_episode(
    env: ParallelEnv[str, Any, Any],
    learners: dict[str, WorldLearner],
    *,
    learn: bool = True,
    seed: int | None = None,
    max_steps: int | None = None,
) -> JointEpisodeResult:
    """Play one episode of ``env``, every live agent choosing with its own learner: epsilon-
    greedy and learning with ``learn``, else greedy. With ``learn``, every learner's episode
    count and schedules advance at the end.

    ``max_steps`` stops an env that never ends by itself (not a truncation: nothing is
    bootstrapped differently).
    """
    obs_raw, _ = env.reset(seed=seed)
    obs = {agent: int(o) for agent, o in obs_raw.items()}
    result = JointEpisodeResult(returns={agent: 0.0 for agent in env.agents})
    while env.agents and (max_steps is None or result.length < max_steps):
        live = list(env.agents)
        if learn:
            actions = {agent: learners[agent].act(obs[agent]) for agent in live}
        else:
            actions = {agent: learners[agent].greedy(obs[agent]) for agent in live}
        step = joint_step(env, learners, obs, actions, learn=learn)
        for agent, r in step.rewards.items():
            result.returns[agent] = result.returns.get(agent, 0.0) + r
        result.length += 1
        result.last_actions = actions
        obs = step.obs
    if learn:
        for learner in learners.values():
            learner.end_episode()
    return result

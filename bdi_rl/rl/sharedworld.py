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

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from gymnasium.spaces import Discrete

if TYPE_CHECKING:  # pettingzoo is imported where a world is made (rl.worldenv), not by a Gym run
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
        # an int in a Discrete's range is one of its actions: what contains() answers, without
        # its dtype checks (a tenth of a one-step game's joint step)
        fast = type(a) is int and type(space) is Discrete
        if not (space.start <= a < space.start + space.n if fast else space.contains(a)):
            raise ValueError(f"{name}: {agent}'s action {a!r} is not in {space}")
        joint.append(int(a))
    return joint


@dataclass
class WorldLearner:
    """One agent's learner in a shared world: a ``QLearner`` and the name of its rule
    (``hysteretic`` when its config has a ``beta``: the ``QLearner`` updates by it)."""

    learner: QLearner
    rule: str

    @property
    def beta(self) -> float | None:
        """learning rate of negative TD errors (None: independent, alpha for both signs)"""
        return self.learner.config.beta

    def act(self, s: int) -> int:
        """Epsilon-greedy action for training (the ``QLearner``'s)."""
        return self.learner.act(s)

    def greedy(self, s: int) -> int:
        """Greedy action (the ``QLearner``'s, random tie-break on its evaluation stream)."""
        return self.learner.greedy(s)

    def update(self, s: int, a: int, r: float, s2: int, terminated: bool) -> tuple[float, float]:
        """One TD update by this learner's rule; returns (Q[s,a] before, after). Counts the step."""
        self.learner.env_steps += 1
        return self.learner.update(s, a, r, s2, terminated)

    def end_episode(self) -> None:
        """Advance the ``QLearner``'s schedules."""
        self.learner.end_episode()


def rule_config(rule: str, config: LearningConfig | None = None, beta: float | None = None) -> LearningConfig:
    """``config`` for a learner of ``rule`` (one of :data:`RULES`): ``hysteretic`` sets
    ``beta``, by default a tenth of the lowest alpha of the schedule (Matignon et al.'s
    ratio); ``independent`` takes no ``beta``. ValueError names what is wrong."""
    if rule not in RULES:
        raise ValueError(f"shared-world learner: rule must be one of {', '.join(RULES)}, got {rule!r}")
    config = config if config is not None else LearningConfig()
    if rule == "independent":
        if beta is not None or config.beta is not None:
            raise ValueError("shared-world learner: beta is a parameter of the hysteretic rule only")
        return config
    if beta is None:
        beta = config.beta
    if beta is None:
        floor = config.alpha_min if config.alpha_min is not None else config.alpha
        beta = DEFAULT_BETA_RATIO * floor
    return dataclasses.replace(config, beta=beta)


def make_world_learner(
    rule: str,
    n_states: int,
    n_actions: int,
    config: LearningConfig | None = None,
    *,
    beta: float | None = None,
    seed: int | None = None,
) -> WorldLearner:
    """A learner of ``rule`` (one of :data:`RULES`, see :func:`rule_config`). ``beta`` must
    be in ``[0, alpha]`` at every point of the alpha schedule (so ``<= alpha_min`` when alpha
    decays); ``beta == alpha`` is plain Q-learning, ``beta == 0`` ignores every loss
    (distributed Q-learning, Lauer & Riedmiller 2000, safe only in deterministic games)."""
    return WorldLearner(QLearner(n_states, n_actions, rule_config(rule, config, beta), seed=seed), rule)


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

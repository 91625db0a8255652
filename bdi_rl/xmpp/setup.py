"""The agents' set-up records (:class:`LearnerSetup`, :class:`CoordinatorSetup`), built and
checked from the spec before anything of a run is created.

Order matters for "nothing half-written": :func:`prepare_experiment` makes every env and
Q-table, loads warm starts (or, resumed, the run's own checkpoints), checks every plan file
and the XMPP domain, and raises SpecError/AslError/EnvError on bad input; only then does the
runner (``bdi_rl.xmpp.runner``) or an agent process (``bdi_rl.xmpp.roles``) create anything.
"""

from __future__ import annotations

import dataclasses
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bdi_rl.bdi.actions import register_signatures
from bdi_rl.bdi.mind import AslError, check_asl
from bdi_rl.bdi.policycache import CachedPolicy, PolicyFileError, load_policies, policy_file
from bdi_rl.bdi.runtime import Actions
from bdi_rl.bdi.runtime import Agent as Mind
from bdi_rl.bdi.runtime.triggers import ADD_BEL
from bdi_rl.rl.checkpoint import Checkpoint, CheckpointError, check_env, find_checkpoint, load_checkpoint, task_change
from bdi_rl.rl.envs import EnvAdapter, make_env, probe_reset
from bdi_rl.rl.goals import goal_envs, map_goal
from bdi_rl.rl.qlearning import FrozenLearner, LearningConfig, QLearner
from bdi_rl.rl.worldenv import Seat, make_world
from bdi_rl.spec import AgentGroup, ExperimentSpec, SpecError
from bdi_rl.store import QTABLE_DIR, TRACE_FILE
from bdi_rl.trace.errors import TraceFileError
from bdi_rl.trace.reading import check_trace
from bdi_rl.xmpp.society import created_plan_files

#: Most Q-values (float64) all learners of one run may hold together: 2 GB.
MAX_Q_ENTRIES = 250_000_000


@dataclass
class LearnerSetup:
    """Everything one learner needs, built and checked before anything is written."""

    name: str
    group: AgentGroup
    index: int
    seed: int
    env: EnvAdapter
    learner: QLearner
    episodes: int
    warm_start: Checkpoint | None = None
    goals: list[tuple[tuple[int, int], EnvAdapter]] = field(default_factory=list)
    """moving goals: each goal cell with its env (``env`` is the first's)"""
    task_change: str | None = None
    """how this run's task differs from the warm start's (e.g. the goal moved)"""
    policies: dict[tuple[int, int], CachedPolicy] = field(default_factory=dict)
    """cached policies it starts with (from a warm start's or the resumed run's cache)"""
    resumed: Checkpoint | None = None
    """the run's own latest checkpoint of this learner, when the run is resumed"""
    seat: Seat | None = None
    """its place in the shared world (``[world]``), whose seat is also its ``env``"""

    @property
    def prior_episodes(self) -> int:
        """Training episodes behind the table from before this run (warm starts)."""
        if self.resumed is not None:
            return self.resumed.prior_episodes
        return self.warm_start.episodes if self.warm_start is not None else 0


@dataclass
class CoordinatorSetup:
    """A plans-only agent (role ``coordinator``)."""

    name: str
    group: AgentGroup


AgentSetup = LearnerSetup | CoordinatorSetup


def prepare_experiment(spec: ExperimentSpec, resume: Path | None = None) -> list[AgentSetup]:
    """Every check a run makes before it creates anything: envs, warm starts, plan files, the
    XMPP domain and, for ``resume``, the run's trace and checkpoints. Returns the agents'
    set-ups (``resume``: with each learner back at its latest checkpoint)."""
    setups = agent_setups(spec, load_warm_starts=resume is None)
    check_plan_files(setups)
    check_xmpp(spec)
    if resume is not None:
        resume_learners(setups, resume)
    return setups


def agent_setups(spec: ExperimentSpec, load_warm_starts: bool = True) -> list[AgentSetup]:
    """Every agent of the spec: learners (with env and Q-table) and coordinators.
    ``load_warm_starts`` False: a resumed run starts from its own checkpoints instead."""
    learners = iter(learner_setups(spec, load_warm_starts))
    setups: list[AgentSetup] = []
    for group in spec.agents:
        for name in group.agent_names():
            setups.append(next(learners) if group.role == "learner" else CoordinatorSetup(name, group))
    return setups


def learner_setups(spec: ExperimentSpec, load_warm_starts: bool = True) -> list[LearnerSetup]:
    """Build every learner's env and Q-table (raises EnvError/SpecError on bad input)."""
    setups: list[LearnerSetup] = []
    index = q_entries = 0
    seats = world_seats(spec)
    for group in spec.agents:
        if group.role != "learner":
            continue
        config = spec.learning_for(group)
        if group.warm_start is not None:  # it knows the task: explore little from the start
            warm_epsilon = config.epsilon_end if group.warm_epsilon is None else group.warm_epsilon
            config = dataclasses.replace(config, epsilon_start=warm_epsilon)
        for name in group.agent_names():
            seed = spec.seed + index
            seat = seats.get(name)
            goals = (
                goal_envs(spec.env.id, spec.env.kwargs, spec.env.max_episode_steps, spec.env.goals)
                if spec.env.goals
                else []
            )
            env: Any
            if seat is not None:
                env = seat
            else:
                env = goals[0][1] if goals else make_env(spec.env.id, spec.env.kwargs, spec.env.max_episode_steps)
                own_goal = map_goal(env)
                if not goals and own_goal is not None:  # plans perceive goal(X, Y) on any map
                    goals = [(own_goal, env)]
            checkpoint, change, policies = None, None, {}
            learner_config = config
            if group.warm_start is not None and load_warm_starts:
                where = f"agents[{spec.agents.index(group)}].warm_start ({name})"
                checkpoint = _warm_start(Path(group.warm_start), name, env, where)
                change = task_change(checkpoint, env.task_signature())
                learner_config = _continue_alpha(config, checkpoint)
                policies = _cached_policies(Path(group.warm_start), name, env, where)
            if name == group.agent_names()[0]:  # before the group's other envs are made
                q_entries += env.n_states * env.n_actions * group.count
            if q_entries > MAX_Q_ENTRIES:
                raise SpecError(
                    f"env: {env.n_states} states x {env.n_actions} actions for "
                    f"{len(spec.agent_names('learner'))} learners is more Q-table than "
                    f"one run holds ({MAX_Q_ENTRIES:,} values, 2 GB); a tabular "
                    "learner needs a smaller state space"
                )
            if name == group.agent_names()[0] and seat is None:  # one env of each group is enough
                probe_reset(spec.env.id, spec.env.kwargs, env.reset)
            if spec.play is not None and checkpoint is not None:  # an evaluation (bdi-rl play): frozen
                learner: QLearner = FrozenLearner(checkpoint.q, learner_config, seed=seed)
            else:
                learner = QLearner(env.n_states, env.n_actions, learner_config, seed=seed)
                if checkpoint is not None:
                    learner.load_table(checkpoint.q)
            setups.append(
                LearnerSetup(
                    name,
                    group,
                    index,
                    seed,
                    env,
                    learner,
                    group.episodes or spec.episodes,
                    checkpoint,
                    goals,
                    change,
                    policies,
                    seat=seat,
                )
            )
            index += 1
    return setups


def world_seats(spec: ExperimentSpec) -> dict[str, Seat]:
    """The shared world's seat of each learner (``[world]``; none without one): the world is
    built here, and a binding that names no agent of it is a SpecError."""
    if spec.world is None:
        return {}
    world = make_world(spec.env.id, spec.env.kwargs, spec.env.max_episode_steps)
    probe_reset(spec.env.id, spec.env.kwargs, world.reset)
    learners = spec.agent_names("learner")
    bind = dict(spec.world.bind) or dict(zip(world.agents, learners, strict=False))
    for seat in bind:
        if seat not in world.seats:
            known = ", ".join(world.agents)
            raise SpecError(f"world.bind.{seat}: the world has no agent {seat!r} (its agents: {known})")
    if len(learners) > len(world.agents):
        raise SpecError(
            f"agents: {len(learners)} learners for a world of {len(world.agents)} agents ({', '.join(world.agents)})"
        )
    for seat, agent in world.seats.items():
        if seat not in bind:
            raise SpecError(f"world.bind: the world's agent {seat!r} has no learner (bind one to every agent)")
        if spec.world.default_action >= agent.n_actions:
            raise SpecError(
                f"world.default_action: {spec.world.default_action} is not an action of {seat} "
                f"(0..{agent.n_actions - 1})"
            )
    world.bound = {seat: bind[seat] for seat in world.agents}
    return {name: world.seats[seat] for seat, name in bind.items()}


def resume_learners(setups: list[AgentSetup], run_dir: Path) -> dict[str, int]:
    """Put each learner back where its latest checkpoint in ``run_dir`` left it (table,
    episodes, env steps, schedules); a learner without one starts from scratch. Returns the
    episode each learner resumes at. SpecError for a checkpoint that cannot be used, or a
    trace that cannot be continued (checked here, before the server starts)."""
    try:
        if (run_dir / TRACE_FILE).exists():  # none: the run was stopped before it traced
            check_trace(run_dir / TRACE_FILE, run_dir.name)
    except TraceFileError as exc:
        raise SpecError(f"--resume: {exc}") from None
    resumed: dict[str, int] = {}
    for setup in setups:
        if not isinstance(setup, LearnerSetup):
            continue
        path = run_dir / QTABLE_DIR / f"{setup.name}.npz"
        resumed[setup.name] = 0
        if not path.exists():
            continue
        try:
            checkpoint = load_checkpoint(path)
            check_env(checkpoint, setup.env.state_space_signature())
        except CheckpointError as exc:
            raise SpecError(f"--resume: {exc}") from None
        learner = setup.learner
        learner.restore(checkpoint.q, checkpoint.header.episodes, checkpoint.header.env_steps, checkpoint.epsilon)
        setup.resumed = checkpoint
        setup.policies = _cached_policies(run_dir, setup.name, setup.env, "--resume")
        resumed[setup.name] = learner.episodes
    return resumed


def _continue_alpha(config: LearningConfig, checkpoint: Checkpoint) -> LearningConfig:
    """A warm-started table is already learned: its learning rate goes on from where the
    checkpoint's schedule was (a fresh, high alpha would unlearn a converged table on a
    stochastic env), never above the spec's own starting alpha."""
    saved = checkpoint.alpha  # checked by the reader: None or in (0, 1]
    if saved is None or not saved < config.alpha:
        return config
    alpha = max(float(saved), config.alpha_min or 0.0)
    return dataclasses.replace(
        config, alpha=alpha, alpha_min=None if config.alpha_min is None else min(config.alpha_min, alpha)
    )


def _warm_start(source: Path, name: str, env: EnvAdapter, where: str) -> Checkpoint:
    """The checkpoint ``name`` starts from, checked against ``env`` (SpecError otherwise)."""
    try:
        checkpoint = load_checkpoint(find_checkpoint(source, name))
        check_env(checkpoint, env.state_space_signature())
    except CheckpointError as exc:
        raise SpecError(f"{where}: {exc}") from None
    return checkpoint


def _cached_policies(source: Path, name: str, env: EnvAdapter, where: str) -> dict[tuple[int, int], CachedPolicy]:
    """The policy cache beside a warm start's table, if its run kept one."""
    run_dir = source if source.is_dir() else source.parent
    if run_dir.name == QTABLE_DIR:
        run_dir = run_dir.parent
    path = policy_file(run_dir, name)
    if not path.is_file():
        return {}
    try:
        return load_policies(path, env)
    except PolicyFileError as exc:
        raise SpecError(f"{where}: {exc}") from None


def check_plan_files(setups: list[AgentSetup]) -> None:
    """Refuse, before anything starts, plan files that cannot be parsed or would do nothing,
    and an experiment in which no agent has an initial goal (it would wait forever)."""
    minds: dict[str, Mind] = {}
    for setup in setups:
        path = setup.group.asl
        if path not in minds:
            minds[path] = mind = check_asl(path, _checking_actions(setup))
            if not any(mind.plans.values()):
                raise AslError(f"{path}: no plans: an agent running it would do nothing")
            _check_created(path, {path})
    if minds and not any(map(_can_start, minds.values())):
        raise AslError(
            f"{', '.join(minds)}: no initial goal (such as !start.) and no plan for a "
            "new belief: no agent of the experiment would ever start"
        )


def _checking_actions(setup: AgentSetup) -> Actions:
    """The action set an agent's plans will see (the runtime's standard ones, ``.send``
    included, and the agent's own), to catch unknown actions before the run."""
    actions = Actions()
    if isinstance(setup, CoordinatorSetup):
        actions.add_procedure(".finish", (), lambda: None)
        return actions
    register_signatures(actions)
    return actions


def _check_created(path: str | Path, seen: set[Any]) -> None:
    """The plan files ``path``'s plans create agents from (``.create_agent``), and theirs,
    loaded as the agents they will be (plans only)."""
    for created in created_plan_files(path):
        if str(created) in seen:
            continue
        seen.add(str(created))
        if not created.is_file():
            raise AslError(f"{created}: no such plan file (an agent is created from it in {path})")
        check_asl(created, Actions())
        _check_created(created, seen)


def _can_start(mind: Mind) -> bool:
    """Whether an agent with this mind acts on its own: an initial goal (posted by
    check_asl: an event), or a plan for a new belief (the start percepts, or a ``tell`` from
    any XMPP client, may trigger it). Achieve requests come only from the experiment's
    agents, so a plan for a goal alone never runs."""
    return bool(mind.events) or any(plans and ttype == ADD_BEL for (ttype, _, _), plans in mind.plans.items())


def check_xmpp(spec: ExperimentSpec) -> None:
    """The XMPP domain must resolve (to loopback only, for the embedded server, which binds
    it): found before the run directory exists, not when the server or an agent starts."""
    from bdi_rl.xmpp.server import XmppServerError, check_domain

    if spec.xmpp.server == "embedded":
        try:
            check_domain(spec.xmpp.domain)
        except XmppServerError as exc:  # "XMPP domain 'x' does not resolve; use 'localhost'"
            raise SpecError(f"xmpp.domain: {str(exc).removeprefix('XMPP domain ')}") from None
        if spec.xmpp.trust:
            raise SpecError(
                "xmpp.trust: the embedded server has accounts for the run's agents only, so no outside "
                'client can log in to be trusted; trust needs an external server (xmpp.server = "host:port")'
            )
        return
    try:
        socket.getaddrinfo(spec.xmpp.domain, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, socket.gaierror) else str(exc)
        raise SpecError(
            f"xmpp.domain: {spec.xmpp.domain!r} does not resolve ({reason}); agents connect to their JID's domain"
        ) from None

"""``bdi-rl run``: one experiment in one process, on the embedded XMPP server by default.

Order matters for "nothing half-written": the spec, the env and every plan library are
checked before the run directory exists; only then are the server, the telemetry agent
and the learners started.
"""

from __future__ import annotations

import asyncio
import gc
import dataclasses
import functools
import hashlib
import logging
import secrets
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Literal

import tomli_w

from bdi_rl.bdi.actions import PERCEPT, RlBridge, register_signatures
from bdi_rl.bdi.checkpointing import CheckpointSchedule
from bdi_rl.bdi.episode import EpisodeSession, Percepts
from bdi_rl.bdi.play import PlayedTable, PlaySession, evaluation
from bdi_rl.bdi.world import SeatClient, SharedWorld
from bdi_rl.rl.checkpoint import (
    Checkpoint,
    CheckpointError,
    check_env,
    find_checkpoint,
    load_checkpoint,
    task_change,
)
from bdi_rl.rl.envs import EnvAdapter, make_env, probe_reset
from bdi_rl.rl.worldenv import Seat, make_world
from bdi_rl.rl.goals import goal_envs, map_goal
from bdi_rl.bdi.mind import AslError, check_asl
from bdi_rl.bdi.policycache import CachedPolicy, PolicyCache, PolicyFileError, as_beliefs, load_policies, policy_file
from bdi_rl.rl.qlearning import FrozenLearner, LearningConfig, QLearner
from bdi_rl.spec import AgentGroup, ExperimentSpec, SpecError, packaged_asl_dir, parse_host_port
from bdi_rl.store import (
    QTABLE_DIR,
    SPEC_FILE,
    SUMMARY_FILE,
    TRACE_FILE,
    atomic_write_bytes,
    RunWriter,
    atomic_write_json,
    new_run_dir,
)
from bdi_rl.trace.errors import TraceFileError
from bdi_rl.trace.kinds import RUN_RESUME, RUN_START, RUN_STOP, TraceLevel
from bdi_rl.trace.reading import check_trace
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp.liveness import IDLE_WARNING_FIRST, STALL_SECONDS, STALLED, Stall, StallWatch
from bdi_rl.xmpp.society import STOPPED, Society, created_plan_files
from bdi_rl.bdi.runtime import Actions
from bdi_rl.bdi.runtime import Agent as Mind
from bdi_rl.bdi.runtime.triggers import ADD_BEL
from bdi_rl.bdi.runtime.terms import Struct, atom
from bdi_rl.bdi.wire import parse_literal

log = logging.getLogger("bdi_rl.xmpp.runner")

#: Seconds the other agents may still finish after one agent's mind has failed.
FAILURE_GRACE = 10.0
#: Most Q-values (float64) all learners of one run may hold together: 2 GB.
MAX_Q_ENTRIES = 250_000_000
#: Seconds an interrupted run waits for telemetry's next acknowledgement before it gives up.
INTERRUPTED_FLUSH = 5.0
#: What a stall of a process's agents does (``bdi_rl.xmpp.liveness``): end the run, or warn.
Stalls = Literal["fail", "warn"]


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


@dataclass
class Progress:
    """A snapshot for the progress bar."""

    episodes_done: int
    episodes_total: int
    mean_return: float | None
    epsilon: float


@dataclass
class RunResult:
    run_dir: Path
    summary: dict[str, Any]
    failures: dict[str, str] = field(default_factory=dict)


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


def world_percepts(seat: Seat, domain: str) -> list[Struct]:
    """What a seated learner knows of its world: ``world_seat(S)`` (its agent's name there)
    and ``world_agents([...])``, the JIDs of the world's agents in the world's order (the
    shipped coordination plans make the first the leader)."""
    agents = tuple(f"{name}@{domain}" for name in seat.host.bound.values())
    return [Struct("world_seat", (atom(seat.agent),), PERCEPT), Struct("world_agents", (agents,), PERCEPT)]


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


def _checking_actions(setup: AgentSetup) -> Actions:
    """The action set an agent's plans will see (the runtime's standard ones, ``.send``
    included, and the agent's own), to catch unknown actions before the run."""
    actions = Actions()
    if isinstance(setup, CoordinatorSetup):
        actions.add_procedure(".finish", (), lambda: None)
        return actions
    register_signatures(actions)
    return actions


async def wait_for_server(host: str, port: int, first_delay: float = 0.5, longest: float = 10.0) -> None:
    """Return once the XMPP server accepts connections, trying again with growing pauses and
    a log line for each: a container may start before its server, or while it restarts.
    Without this SPADE waits on a refused connection forever, silently."""
    delay, waited = first_delay, 0.0
    while True:
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 5)
        except (OSError, TimeoutError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "no answer"
            log.warning("waiting for the XMPP server at %s:%d (%s); trying again in %g s", host, port, reason, delay)
            await asyncio.sleep(delay)
            waited += delay
            delay = min(delay * 2, longest)
            continue
        writer.close()
        if waited:
            log.warning("the XMPP server at %s:%d answered after %.0f s", host, port, waited)
        return


def spec_names(spec: ExperimentSpec) -> list[str]:
    """The name of every agent the spec names (its groups' agents, then the world agent)."""
    names = [name for group in spec.agents for name in group.agent_names()]
    if spec.world is not None:
        names.append(spec.world.name)
    return names


def spec_jids(spec: ExperimentSpec, domain: str) -> list[str]:
    """The JIDs of every agent the spec names: the only senders whose trace batches
    telemetry writes (and who are trusted, see :func:`trusted_jids`)."""
    return [f"{name}@{domain}" for name in spec_names(spec)]


def trusted_jids(spec: ExperimentSpec, domain: str) -> tuple[str, ...]:
    """Whom the agents trust: every agent of the spec, then the outside clients the spec lets
    in on purpose (``xmpp.trust``). Agents execute their achieve requests, and perceive each
    as ``trusted(J)``, which the shipped plans require of a tell before they act on it."""
    jids = [*spec_jids(spec, domain), *spec.xmpp.trust]
    return tuple(dict.fromkeys(jid.lower() for jid in jids))


@functools.lru_cache(maxsize=8)
def _shared_jid_set(jids: tuple[str, ...]) -> frozenset[str]:
    """One set for all agents of a run (200 agents each holding their own copy of 200 JIDs
    would be 40,000 strings)."""
    return frozenset(jid.lower() for jid in jids)


@functools.lru_cache(maxsize=8)
def _trusted_percepts(jids: tuple[str, ...]) -> tuple[Struct, ...]:
    """``trusted(J)`` for each JID, shared by all agents of a run (as :func:`_shared_jid_set`)."""
    return tuple(Struct("trusted", (jid,), PERCEPT) for jid in jids)


def team_percepts(spec: ExperimentSpec, name: str, domain: str) -> list[Struct]:
    """What every agent knows of its team from the spec: ``coordinator(C)`` (the first
    coordinator), ``teammates([...])`` (the other learners), for coordinators
    ``learners([...])`` and ``team_size(N)``, and ``trusted(J)`` for every other JID of
    :func:`trusted_jids` (not its own: what it adds itself is ``source(self)``). Peers are
    bare JID strings, as in ``source(...)``. Each functor/arity here is in
    ``bdi_rl.xmpp.agent.PERCEIVED``: nobody may tell it."""

    def jid(local: str) -> str:
        return f"{local}@{domain}"

    learners = spec.agent_names("learner")
    coordinators = spec.agent_names("coordinator")
    percepts = [Struct("teammates", (tuple(jid(n) for n in learners if n != name),), PERCEPT)]
    if coordinators:
        percepts.append(Struct("coordinator", (jid(coordinators[0]),), PERCEPT))
    if name in coordinators:
        percepts.append(Struct("learners", (tuple(jid(n) for n in learners),), PERCEPT))
        percepts.append(Struct("team_size", (len(learners),), PERCEPT))
    me = jid(name).lower()
    percepts.extend(p for p in _trusted_percepts(trusted_jids(spec, domain)) if p.args[0] != me)
    return percepts


def start_beliefs(group: AgentGroup) -> list[Struct]:
    """The group's ``beliefs`` from the spec (already checked by load_spec)."""
    return [parse_literal(text) for text in group.beliefs]


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


async def check_login(jid: str, password: str, port: int) -> None:
    """Log in as ``jid`` once and leave (registering it if it has no account yet): spade's
    AuthenticationFailure for a wrong password, before anything of the run is created."""
    from spade.agent import Agent

    probe = Agent(jid, password, port=port, verify_security=False)
    try:
        await probe.start(auto_register=True)
    finally:
        await probe.stop()
        probe.container.unregister(str(probe.jid))


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


async def run_experiment(
    spec: ExperimentSpec,
    runs_dir: Path,
    on_progress: Callable[[Progress], None] | None = None,
    on_episode: Callable[[EpisodeSession], None] | None = None,
    resume: Path | None = None,
    setups: list[AgentSetup] | None = None,
    xmpp_password: str | None = None,
    on_run_dir: Callable[[Path], None] | None = None,
    writer: RunWriter | None = None,
) -> RunResult:
    """Check, then run the whole experiment; returns the run directory and its summary.

    ``on_episode`` is called after every training episode of every learner. ``resume``: an
    interrupted run directory to continue (its spec is ``spec``): learners start from their
    latest checkpoints and the trace goes on where it stopped. ``setups``: what
    :func:`prepare_experiment` returned (it is called when None). ``xmpp_password``: the
    agents' password on an external server (the embedded one gets a random one).
    ``on_run_dir``: called with the run directory as soon as it exists (``bdi-rl serve``
    learns its children's run ids so). ``writer``: ``resume``'s writer lock, if the caller
    took it already (it is taken here otherwise; a new run's with its directory); it is
    released once the summary is written (store.RunWriter)."""
    from bdi_rl.crashlog import note_run_dir
    from bdi_rl.xmpp.telemetry import TelemetryAgent
    from bdi_rl.xmpp.server import EmbeddedXmppServer

    if resume is not None and writer is None:
        writer = RunWriter.acquire(resume, "bdi-rl run --resume")
    if setups is None:
        setups = prepare_experiment(spec, resume)

    # An external server's accounts outlive a run: it takes the password the user set, agents
    # register themselves, and telemetry logs in once before the run exists. The embedded
    # server is new each run, with an account for each of the run's agents and no others,
    # under one random password only this process knows.
    password = xmpp_password or secrets.token_urlsafe(16)
    register = spec.xmpp.server != "embedded"
    if register:
        domain, port = spec.xmpp.domain, parse_host_port(spec.xmpp.server)[1]
        await wait_for_server(domain, port)
        await check_login(f"{spec.telemetry.name}@{domain}", password, port)

    if resume is None:
        run_dir, writer = new_run_dir(runs_dir, spec.env.id, spec.name, spec.seed, "bdi-rl run")
        atomic_write_bytes(run_dir / SPEC_FILE, tomli_w.dumps(spec.to_dict()).encode())
        resumed_at: dict[str, int] | None = None
    else:
        run_dir = resume
        assert writer is not None
        writer.announce()  # every check passed: the run goes on
        resumed_at = {
            setup.name: setup.learner.episodes if setup.resumed is not None else 0
            for setup in setups
            if isinstance(setup, LearnerSetup)
        }
        if not (run_dir / TRACE_FILE).exists():  # stopped before it traced: it starts here
            resumed_at = None
    note_run_dir(run_dir)
    if on_run_dir is not None:
        on_run_dir(run_dir)
    run = run_dir.name

    server = telemetry = None
    agents: list[Any] = []
    society: Society | None = None
    started = time.time()
    released = stopped_in_startup = False
    try:
        if spec.xmpp.server == "embedded":
            accounts = dict.fromkeys([*spec_names(spec), spec.telemetry.name], password)
            server = EmbeddedXmppServer(
                host=spec.xmpp.domain, port=spec.xmpp.port, data_dir=run_dir / "xmpp", accounts=accounts
            )
            await server.start()
            domain, port = server.domain, server.port
        telemetry_jid = f"{spec.telemetry.name}@{domain}"
        telemetry = TelemetryAgent(
            telemetry_jid, password, run_dir / TRACE_FILE, port=port, senders=spec_jids(spec, domain)
        )
        telemetry.on_trace_failure = lambda _: None  # the run stops and reports it (run_learners' halt)
        await telemetry.start(auto_register=register)
        if resumed_at is None:
            telemetry.record_run_event(
                RUN_START, {"spec": spec.name, "env": spec.env.id, "agents": [p.name for p in setups]}
            )
        else:  # the point where the trace goes on; readers drop the episodes re-run after it
            telemetry.record_run_event(
                RUN_RESUME, {"agents": {f"{name}@{domain}": episode for name, episode in resumed_at.items()}}
            )
        next_seq = telemetry.trace_log.next_seq  # resumed: each agent's seqs go on gapless
        world_agent = make_world_agent(
            spec,
            setups,
            run,
            domain,
            port,
            password,
            telemetry_jid,
            first_seq=next_seq.get(f"{spec.world.name}@{domain}", 0) if spec.world else 0,
        )
        shared = world_agent.shared if world_agent is not None else None
        agents = [
            make_agent(
                setup,
                spec,
                run,
                run_dir,
                domain,
                port,
                password,
                telemetry_jid,
                first_seq=next_seq.get(f"{setup.name}@{domain}", 0),
                shared=shared,
            )
            for setup in setups
        ]
        if world_agent is not None:
            agents.append(world_agent)
        for agent in filter(_is_learner, agents):
            agent.bridge.session.on_episode = on_episode
        make, start = created_agents(spec, run, domain, port, password, telemetry, server, register)
        society = Society(domain, spec_names(spec), agents, reserved=[spec.telemetry.name], make=make, start=start)
        await asyncio.gather(*(agent.start(auto_register=register) for agent in agents))
        gc.freeze()  # the start-up heap (libraries, agents, connections) is never garbage:
        # the collector then scans only what the run allocates (BENCHMARKS.md, "Trace v2")
        released = True
        # outside clients the spec trusts may still wake a stalled run: then a stall is a warning
        failures = await run_learners(
            agents,
            on_progress,
            stalls="warn" if spec.xmpp.trust else "fail",
            halt=functools.partial(_trace_failure, telemetry),
            society=society,
        )
        telemetry.record_run_event(RUN_STOP, {"failures": failures})
    except asyncio.CancelledError:
        if resume is not None or released:
            raise  # a resumed run keeps the summary it had; run_learners handled its own
        # Ctrl-C before the learners were released: nothing was learned, but the new run
        # directory gets its summary (interrupted), so it is not a half-made run
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()
        stopped_in_startup = True
        failures = {str(agent.jid): "interrupted" for agent in agents}
        for agent in agents:
            agent.failure = agent.failure or "interrupted"
    finally:
        if society is not None:
            await society.settle()
        await asyncio.gather(*(agent.stop() for agent in agents if not agent.retired), return_exceptions=True)
        if telemetry is not None:
            await telemetry.stop()
        if server is not None:
            await server.stop()

    summary = _summary(run, spec, agents, time.time() - started)
    if resumed_at is not None:
        summary["resumed"] = resumed_summary(resumed_at, agents)
    if stopped_in_startup or any(agent.failure == "interrupted" for agent in agents):
        summary["interrupted"] = True
    atomic_write_json(run_dir / SUMMARY_FILE, summary)
    assert writer is not None
    writer.release()  # after the summary: a reader never finds neither a writer nor a summary
    return RunResult(run_dir, summary, failures)


def make_agent(
    setup: AgentSetup,
    spec: ExperimentSpec,
    run: str,
    run_dir: Path,
    domain: str,
    port: int,
    password: str,
    telemetry_jid: str,
    first_seq: int = 0,
    shared: SharedWorld | None = None,
) -> Any:
    """A held agent for ``setup`` (released by :func:`run_learners`); its first trace event
    gets ``first_seq`` (a resumed run continues each agent's numbering). ``shared``: the
    world a learner with a seat acts in."""
    from bdi_rl.xmpp.agent import CoordinatorAgent, LearnerAgent

    jid = f"{setup.name}@{domain}"
    tracer = Tracer(run, jid, TraceLevel.parse(spec.trace))
    tracer.seq = tracer.acked = first_seq
    common: dict[str, Any] = dict(
        tracer=tracer,
        telemetry=telemetry_jid,
        flush_seconds=spec.telemetry.flush_seconds,
        port=port,
        hold=True,
        percepts=team_percepts(spec, setup.name, domain)
        + (world_percepts(setup.seat, domain) if isinstance(setup, LearnerSetup) and setup.seat is not None else []),
        achieve_from=_shared_jid_set(trusted_jids(spec, domain)),
        beliefs=start_beliefs(setup.group) + (as_beliefs(setup.policies) if isinstance(setup, LearnerSetup) else []),
        cycle=setup.group.reasoning_cycle(),
    )
    if isinstance(setup, CoordinatorSetup):
        return CoordinatorAgent(jid, password, setup.group.asl, **common)
    playing = spec.play is not None  # an evaluation (bdi-rl play): greedy, nothing learned or saved
    session = (PlaySession if playing else EpisodeSession)(
        setup.env,
        setup.learner,
        tracer,
        Percepts(),
        episodes=setup.episodes,
        eval_episodes=spec.eval_episodes,
        eval_every=spec.eval_every,
        seed=setup.seed,
        goals=setup.goals,
        goal_every=spec.env.goal_every,
    )
    checkpoints = (PlayedTable if playing else CheckpointSchedule)(
        session,
        run_dir / QTABLE_DIR / f"{setup.name}.npz",
        checkpoint_meta(setup, spec, run),
        every=spec.checkpoint_every,
        warm_start=setup.warm_start,
        prior_episodes=setup.prior_episodes,
        after_trace=True,
        task_change=setup.task_change,
    )
    bridge = RlBridge(
        session, checkpoints, PolicyCache(session, setup.policies, policy_file(run_dir, setup.name), setup.name)
    )
    seat = None
    if setup.seat is not None:
        seat = SeatClient(setup.seat, session)
        if shared is not None:  # the world lives in this process: no messages between them
            seat.port = shared
            shared.seat(setup.seat.agent, setup.name, seat)
    return LearnerAgent(jid, password, setup.group.asl, bridge=bridge, mode=setup.group.mode, seat=seat, **common)


def make_world_agent(
    spec: ExperimentSpec,
    setups: list[AgentSetup],
    run: str,
    domain: str,
    port: int,
    password: str,
    telemetry_jid: str,
    first_seq: int = 0,
) -> Any:
    """The world agent of a spec with ``[world]`` (None without one): it hosts the shared
    world the seated learners step together, and traces every joint step."""
    from bdi_rl.xmpp.agent import WorldAgent

    seats = [setup.seat for setup in setups if isinstance(setup, LearnerSetup) and setup.seat is not None]
    if spec.world is None or not seats:
        return None
    jid = f"{spec.world.name}@{domain}"
    tracer = Tracer(run, jid, TraceLevel.parse(spec.trace))
    tracer.seq = tracer.acked = first_seq
    shared = SharedWorld(
        seats[0].host,
        tracer,
        seed=spec.seed,
        deadline_s=spec.world.step_deadline_ms / 1000.0,
        default_action=spec.world.default_action,
        schedule=asyncio.get_running_loop().call_later,
        eval_episodes=spec.eval_episodes,
    )
    return WorldAgent(
        jid,
        password,
        str(packaged_asl_dir() / "world.asl"),
        shared=shared,
        tracer=tracer,
        telemetry=telemetry_jid,
        flush_seconds=spec.telemetry.flush_seconds,
        port=port,
        hold=True,
    )


def created_agents(
    spec: ExperimentSpec,
    run: str,
    domain: str,
    port: int,
    password: str,
    telemetry: Any,
    server: Any,
    register: bool,
) -> tuple[Callable[[str, Path, Any], Any], Callable[[Any], Awaitable[None]]]:
    """How ``bdi-rl run`` makes and starts the agents plans create (bdi_rl/xmpp/society.py):
    a plans-only agent with the team's percepts and its own trace, trusted by the run's
    agents, with an account on the embedded server and its batches taken by telemetry."""
    from bdi_rl.xmpp.agent import CreatedAgent

    def make(name: str, asl: Path, creator: Any) -> Any:
        jid = f"{name}@{domain}"
        for agent in creator.society.agents:  # its requests are taken, as a spec agent's
            if agent.achieve_from is not None:
                agent.achieve_from = agent.achieve_from | {jid}
        return CreatedAgent(
            jid,
            password,
            str(asl),
            creator=str(creator.jid),
            tracer=Tracer(run, jid, TraceLevel.parse(spec.trace)),
            telemetry=f"{spec.telemetry.name}@{domain}",
            flush_seconds=spec.telemetry.flush_seconds,
            port=port,
            hold=True,
            percepts=team_percepts(spec, name, domain),
            achieve_from=creator.achieve_from,
        )

    async def start(agent: Any) -> None:
        if server is not None:
            await server.add_account(agent.name, password)
        telemetry.accept_sender(str(agent.jid))
        await agent.start(auto_register=register)
        agent.release()

    return make, start


def connect_world(
    spec: ExperimentSpec, every_setup: list[AgentSetup], agents: list[Any], world_agent: Any, domain: str
) -> None:
    """Across processes: the seated learners of ``agents`` reach a world agent elsewhere over
    XMPP; the world agent here (if any) reaches the seats whose agents run elsewhere."""
    from bdi_rl.xmpp.worldlink import connect_seat, host_remote_seats

    assert spec.world is not None
    world_jid = f"{spec.world.name}@{domain}"
    here = {agent.name for agent in agents}
    if world_agent is None:
        for agent in agents:
            if getattr(agent, "seat", None) is not None:
                port = connect_seat(agent, agent.seat, world_jid, spec.world.offline_grace_ms / 1000.0)
                agent.world_bounced = port.bounced
        return
    seat_jids = {
        setup.seat.agent: f"{setup.name}@{domain}"
        for setup in every_setup
        if isinstance(setup, LearnerSetup) and setup.seat is not None
    }
    remote = {seat: jid for seat, jid in seat_jids.items() if jid.split("@", 1)[0] not in here}
    host_remote_seats(world_agent, world_agent.shared, remote, seat_jids, spec.world.offline_grace_ms / 1000.0)


def spec_hash(spec: ExperimentSpec) -> str:
    """SHA-256 of the resolved spec, as written to the run's ``spec.toml``."""
    return "sha256:" + hashlib.sha256(tomli_w.dumps(spec.to_dict()).encode()).hexdigest()


def checkpoint_meta(setup: LearnerSetup, spec: ExperimentSpec, run: str) -> dict[str, Any]:
    """What every checkpoint of this learner records besides its progress."""
    warm = setup.warm_start
    if setup.resumed is not None:  # the lineage of the table it resumes
        lineage = setup.resumed.lineage
    else:
        lineage = None if warm is None else warm.as_warm_start()
    return {
        "agent": setup.name,
        "run": run,
        "env": setup.env.state_space_signature(),
        "env_kwargs": setup.env.kwargs,
        "max_episode_steps": setup.env.max_episode_steps,
        "learning": dataclasses.asdict(setup.learner.config),
        "spec_hash": spec_hash(spec),
        "warm_start": lineage,
    }


def _trace_failure(telemetry: Any) -> str | None:
    """Why the run cannot go on because its trace cannot be written (a full disk), or None."""
    failure = telemetry.trace_log.failure
    return None if failure is None else f"the trace cannot be written: {failure.filename}: {failure.strerror}"


async def run_learners(
    agents: list[Any],
    on_progress: Callable[[Progress], None] | None,
    stalls: Stalls = "fail",
    halt: Callable[[], str | None] = lambda: None,
    society: Society | None = None,
) -> dict[str, str]:
    """Release started learners together, wait until they finish, flush their traces.

    ``stalls``: what a stall of these agents does (``bdi_rl.xmpp.liveness``): "fail" ends
    the run (every agent of the experiment is here), "warn" logs what each waits for.
    ``halt`` says why the whole run must stop now (None: it need not), e.g. its trace cannot
    be written: every agent still going stops with that reason, and nothing is flushed.
    ``society``: the process's agents as a MAS (``.stopMAS`` ends the wait; created agents
    join ``agents``; bdi_rl/xmpp/society.py).
    Returns the failures by agent JID (an empty dict when every learner finished)."""
    if society is None:
        society = Society("", [], agents)
    for agent in agents:
        agent.release()
    try:
        await _wait_for_learners(agents, on_progress, stalls, halt, society)
    except asyncio.CancelledError:
        # Ctrl-C (the CLI cancels this task): stop the minds, keep what was learned and traced.
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()
        for agent in agents:
            agent.pause_bdi()
            if not agent.finished and agent.failure is None:
                agent.failure = "interrupted"
                if _is_learner(agent):
                    agent.keep_learned()
    await society.settle()  # agents being created or killed: started or stopped by now
    running = [agent for agent in agents if not agent.retired]  # the killed have closed their traces
    for agent in running:
        agent.pause_bdi()  # a stopped agent reasons no more (peers may still be talking to it)
        if _is_learner(agent):  # its throughput counts the time it trained, however it ended
            agent.bridge.session.stop_training_clock()
            if agent.stopped and agent.failure is None:  # .stopMAS, or a peer's failure: kept
                agent.keep_learned()
        agent.close_trace()
    # Stopped by a signal, the process has compose's 10 s grace before SIGKILL: a telemetry
    # agent that stopped too (compose down stops every service at once) gets 5 s.
    interrupted = any(agent.failure == "interrupted" for agent in agents)
    halted = halt() is not None
    flushed = await asyncio.gather(
        *(
            agent.flush_trace(stall_seconds=INTERRUPTED_FLUSH if interrupted else 30.0)
            for agent in running
            if not halted  # nothing more can be written: no acknowledgement will come
        )
    )
    failures = {str(a.jid): a.failure for a in agents if a.failure}
    for agent, ok in zip(running, flushed, strict=False):
        if not ok:
            failures[str(agent.jid)] = "trace events were not acknowledged by telemetry"
    for agent in filter(_is_learner, agents):
        checkpoints = agent.bridge.checkpoints
        try:
            checkpoints.write()  # the final table is kept even if telemetry is gone
        except OSError as exc:  # a full disk: the previous checkpoint is whole (atomic writes)
            why = f"its last checkpoint could not be written ({exc.strerror}); {checkpoints.path} is the one before"
            failures[str(agent.jid)] = "; ".join(filter(None, (failures.get(str(agent.jid)), why)))
    return failures


def _is_learner(agent: Any) -> bool:
    return hasattr(agent, "bridge")


async def _wait_for_learners(
    agents: list[Any],
    on_progress: Callable[[Progress], None] | None,
    stalls: Stalls = "fail",
    halt: Callable[[], str | None] = lambda: None,
    society: Society | None = None,
) -> None:
    """Until every agent is done, or ``halt`` gives a reason to stop them all; once one has
    failed, the others get FAILURE_GRACE seconds (team plans wait for each other: without
    this a failed teammate would hang the run). A stall (``bdi_rl.xmpp.liveness``) ends the
    wait at once with ``stalls`` "fail" (each agent not done fails, saying what it waited
    for; after another agent's failure, as stopped by it), and is logged with back-off with
    "warn". A ``.stopMAS`` (``society.stopped_by``) ends it at once, every agent stopping
    cleanly; agents created meanwhile are watched too, but not waited for."""
    waiters = [asyncio.ensure_future(agent.done.wait()) for agent in agents]
    learners = [agent for agent in agents if _is_learner(agent)]
    total = sum(agent.bridge.session.episodes_target for agent in learners)
    failed_at: float | None = None
    watch = StallWatch(agents, STALL_SECONDS if stalls == "fail" else IDLE_WARNING_FIRST)
    try:
        while True:
            done, _ = await asyncio.wait(waiters, timeout=0.1)
            if on_progress is not None and learners:
                on_progress(_progress(learners, total))
            if len(done) == len(waiters):
                return
            if society is not None and society.stopped_by is not None:
                for agent in agents:
                    if not agent.done.is_set() and not agent.failure and not agent.stopped:
                        agent.stopped = STOPPED + society.stopped_by
                return
            stop = halt()
            if stop is not None:
                for agent in agents:
                    if not agent.done.is_set():
                        agent.failure = f"stopped: {stop}"
                return
            failed = [agent for agent in agents if agent.failure]
            if failed and failed_at is None:
                failed_at = time.monotonic()
            stall = watch.check()
            if stall is not None and stalls == "warn":
                _warn_idle(stall, watch.snooze())
            elif stall is not None or (failed_at is not None and time.monotonic() - failed_at > FAILURE_GRACE):
                for agent in agents:
                    if agent.done.is_set() or agent.failure:
                        continue
                    if failed:
                        agent.failure = f"stopped: {failed[0].name} failed"
                    elif stall is not None:
                        agent.failure = STALLED + stall.waits[agent.name]
                return
    finally:
        for waiter in waiters:
            waiter.cancel()


def _warn_idle(stall: Stall, next_s: float) -> None:
    """An agent process's agents cannot act by themselves (a peer elsewhere may still wake them)."""
    for name, what in stall.waits.items():
        log.warning(
            "%s: idle for %.0f s: %s (nothing in this process can wake it; a message from another "
            "process may; next warning in %.0f s)",
            name,
            stall.seconds,
            what,
            next_s - stall.seconds,
        )


def _progress(agents: list[Any], total: int) -> Progress:
    returns: list[float] = []
    for agent in agents:
        returns.extend(agent.bridge.stats.returns[-100:])
    return Progress(
        episodes_done=sum(agent.bridge.stats.episodes for agent in agents),
        episodes_total=total,
        mean_return=sum(returns) / len(returns) if returns else None,
        epsilon=sum(agent.bridge.session.learner.epsilon for agent in agents) / len(agents),
    )


def _summary(run: str, spec: ExperimentSpec, agents: list[Any], wall: float) -> dict[str, Any]:
    per_agent: dict[str, Any] = {}
    steps = 0
    # Learners train side by side: throughput is all their steps over the longest training.
    learners = [agent for agent in agents if _is_learner(agent)]
    learn_seconds = max((a.bridge.stats.train_seconds for a in learners), default=0.0)
    for agent in agents:
        stopped = {"stopped": agent.stopped} if agent.stopped and not agent.failure else {}
        if not _is_learner(agent):
            per_agent[agent.name] = {
                **agent.summary(),
                **({"failure": agent.failure} if agent.failure else {}),
                **stopped,
            }
            continue
        stats = agent.bridge.stats
        steps += stats.env_steps - stats.resumed_env_steps
        entry: dict[str, Any] = {"episodes": stats.episodes, "env_steps": stats.env_steps, "qtable": stats.qtable}
        if stats.replayed_steps:
            entry["replayed_steps"] = stats.replayed_steps
        if stats.eval is not None:
            entry["eval"] = {
                "episodes": stats.eval.episodes,
                "mean_return": stats.eval.mean_return,
                "success_rate": stats.eval.success_rate,
            }
        if agent.failure:
            entry["failure"] = agent.failure
        per_agent[agent.name] = {**entry, **stopped}
    summary = run_summary(run, spec, per_agent, steps, learn_seconds, wall)
    if spec.play is not None:  # what the play measured, with 95 % intervals
        summary["evaluation"] = evaluation(
            spec.play.policy_only,
            {
                a.name: (a.bridge.session.played, a.bridge.checkpoints.warm_start, a.bridge.checkpoints.task_change)
                for a in learners
                if isinstance(a.bridge.session, PlaySession)
            },
        )
    return summary


def resumed_summary(resumed_at: dict[str, int], agents: list[Any]) -> dict[str, Any]:
    """What a resumed run's summary says of it: the episode each learner resumed at and the
    env steps done before (not part of ``env_steps_per_second``, which is this process's)."""
    before = sum(a.bridge.stats.resumed_env_steps for a in agents if _is_learner(a))
    return {"episodes": dict(resumed_at), "env_steps_before": before}


def run_summary(
    run: str, spec: ExperimentSpec, per_agent: dict[str, Any], env_steps: int, train_seconds: float, wall: float
) -> dict[str, Any]:
    """``summary.json``, the same from ``bdi-rl run`` (its live agents) and from the telemetry
    role (the trace): learners train side by side, so throughput is all their steps over
    the longest training. Both count the steps and the seconds of this process only (a
    resumed run's earlier part is in ``resumed``); ``wall_seconds`` is this process's too."""
    return {
        "run": run,
        "env": spec.env.id,
        "experiment": spec.name,
        "seed": spec.seed,
        "trace": spec.trace,
        "wall_seconds": round(wall, 3),
        "env_steps_per_second": round(env_steps / train_seconds, 1) if train_seconds > 0 else 0.0,
        "agents": per_agent,
    }

"""Making a run's agents from their set-up records (``bdi_rl.xmpp.setup``) and the one
:class:`Wiring` every agent of the run shares: where it logs in, where its trace and files
go, whom it trusts, what it knows of its team.

``bdi-rl run`` (``bdi_rl.xmpp.runner``) and an agent process (``bdi_rl.xmpp.roles``) make
their agents here, the same way; an agent process learns its run only once an agent has
started, and then moves its agents into it (:func:`enter_run`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tomli_w

from bdi_rl.bdi.actions import PERCEPT, RlBridge
from bdi_rl.bdi.checkpointing import CheckpointSchedule
from bdi_rl.bdi.episode import EpisodeSession, Percepts
from bdi_rl.bdi.play import PlayedTable, PlaySession
from bdi_rl.bdi.policycache import PolicyCache, as_beliefs, policy_file
from bdi_rl.bdi.runtime.terms import Struct, atom
from bdi_rl.bdi.wire import parse_literal
from bdi_rl.bdi.world import SeatClient, SharedWorld
from bdi_rl.rl.worldenv import Seat
from bdi_rl.spec import AgentGroup, ExperimentSpec, packaged_asl_dir
from bdi_rl.store import QTABLE_DIR
from bdi_rl.trace.kinds import TraceLevel
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp.agentroles import CoordinatorRole, CreatedRole, LearnerRole, WorldRole, learner_of, world_of
from bdi_rl.xmpp.setup import AgentSetup, CoordinatorSetup, LearnerSetup

if TYPE_CHECKING:  # the agents' module imports SPADE: loaded only when agents are made
    from bdi_rl.xmpp.agent import TracedBdiAgent


@dataclass(frozen=True)
class Wiring:
    """What every agent of one run shares, passed down to whatever makes one of its agents."""

    spec: ExperimentSpec
    run: str
    """the run's id (in an agent process "" until it joins telemetry's run)"""
    run_dir: Path
    """where learners keep their checkpoints and policy caches"""
    domain: str
    port: int
    password: str
    register: bool
    """whether agents register their own accounts (an external server's outlive a run)"""
    first_seqs: Mapping[str, int] = field(default_factory=dict)
    """the first trace seq of each agent by JID (a resumed run continues each one's numbering)"""

    def jid(self, name: str) -> str:
        return f"{name}@{self.domain}"

    @property
    def telemetry_jid(self) -> str:
        return self.jid(self.spec.telemetry.name)

    @property
    def trusted(self) -> frozenset[str]:
        """Whose requests the run's agents take (:func:`trusted_jids`), one set for all of them."""
        return _shared_jid_set(trusted_jids(self.spec, self.domain))

    def tracer(self, jid: str, first_seq: int | None = None) -> Tracer:
        """A tracer of the run for ``jid``, numbering from ``first_seq`` (its ``first_seqs`` when None)."""
        tracer = Tracer(self.run, jid, TraceLevel.parse(self.spec.trace))
        tracer.seq = tracer.acked = self.first_seqs.get(jid, 0) if first_seq is None else first_seq
        return tracer


def checkpoint_path(run_dir: Path, name: str) -> Path:
    """Where learner ``name`` keeps its Q-table in ``run_dir``."""
    return run_dir / QTABLE_DIR / f"{name}.npz"


def make_agents(
    wiring: Wiring, setups: list[AgentSetup], every_setup: list[AgentSetup], host_world: bool = True
) -> list[TracedBdiAgent]:
    """Held agents for ``setups`` (released by ``bdi_rl.xmpp.waiting.run_learners``), then the
    world agent if ``host_world`` and the spec has a world (``every_setup``: every agent of the
    spec, whose seats it hosts); the seated learners of ``setups`` act in it directly."""
    world_agent = make_world_agent(wiring, every_setup) if host_world else None
    world = world_of(world_agent) if world_agent is not None else None
    shared = world.shared if world is not None else None
    agents: list[TracedBdiAgent] = [make_agent(setup, wiring, shared) for setup in setups]
    if world_agent is not None:
        agents.append(world_agent)
    return agents


def make_agent(setup: AgentSetup, wiring: Wiring, shared: SharedWorld | None = None) -> TracedBdiAgent:
    """A held agent for ``setup``. ``shared``: the world a learner with a seat acts in, when
    it lives in this process."""
    from bdi_rl.xmpp.agent import TracedBdiAgent

    spec = wiring.spec
    jid = wiring.jid(setup.name)
    tracer = wiring.tracer(jid)
    common: dict[str, Any] = dict(
        tracer=tracer,
        telemetry=wiring.telemetry_jid,
        flush_seconds=spec.telemetry.flush_seconds,
        port=wiring.port,
        hold=True,
        percepts=team_percepts(spec, setup.name, wiring.domain)
        + (
            world_percepts(setup.seat, wiring.domain)
            if isinstance(setup, LearnerSetup) and setup.seat is not None
            else []
        ),
        achieve_from=wiring.trusted,
        beliefs=start_beliefs(setup.group) + (as_beliefs(setup.policies) if isinstance(setup, LearnerSetup) else []),
        cycle=setup.group.reasoning_cycle(),
    )
    if isinstance(setup, CoordinatorSetup):
        return TracedBdiAgent(jid, wiring.password, setup.group.asl, role=CoordinatorRole(), **common)
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
        state_facts=setup.group.state_facts,
    )
    checkpoints = (PlayedTable if playing else CheckpointSchedule)(
        session,
        checkpoint_path(wiring.run_dir, setup.name),
        checkpoint_meta(setup, spec, wiring.run),
        every=spec.checkpoint_every,
        warm_start=setup.warm_start,
        prior_episodes=setup.prior_episodes,
        after_trace=True,
        task_change=setup.task_change,
        resumed=setup.resumed,
    )
    bridge = RlBridge(
        session, checkpoints, PolicyCache(session, setup.policies, policy_file(wiring.run_dir, setup.name), setup.name)
    )
    seat = None
    if setup.seat is not None:
        seat = SeatClient(setup.seat, session)
        if shared is not None:  # the world lives in this process: no messages between them
            seat.port = shared
            shared.seat(setup.seat.agent, setup.name, seat)
    role = LearnerRole(bridge, setup.group.mode, seat)
    return TracedBdiAgent(jid, wiring.password, setup.group.asl, role=role, **common)


def make_world_agent(wiring: Wiring, every_setup: list[AgentSetup]) -> TracedBdiAgent | None:
    """The world agent of a spec with ``[world]`` (None without one): it hosts the shared
    world the seated learners step together, and traces every joint step."""
    from bdi_rl.xmpp.agent import TracedBdiAgent

    spec = wiring.spec
    seats = [setup.seat for setup in every_setup if isinstance(setup, LearnerSetup) and setup.seat is not None]
    if spec.world is None or not seats:
        return None
    jid = wiring.jid(spec.world.name)
    tracer = wiring.tracer(jid)
    shared = SharedWorld(
        seats[0].host,
        tracer,
        seed=spec.seed,
        deadline_s=spec.world.step_deadline_ms / 1000.0,
        default_action=spec.world.default_action,
        schedule=asyncio.get_running_loop().call_later,
        eval_episodes=spec.eval_episodes,
    )
    return TracedBdiAgent(
        jid,
        wiring.password,
        str(packaged_asl_dir() / "world.asl"),
        role=WorldRole(shared),
        tracer=tracer,
        telemetry=wiring.telemetry_jid,
        flush_seconds=spec.telemetry.flush_seconds,
        port=wiring.port,
        hold=True,
    )


def created_agents(
    wiring: Wiring, telemetry: Any, server: Any
) -> tuple[Callable[[str, Path, Any], Any], Callable[[Any], Awaitable[None]]]:
    """How ``bdi-rl run`` makes and starts the agents plans create (bdi_rl/xmpp/society.py):
    a plans-only agent with the team's percepts and its own trace, trusted by the run's
    agents, with an account on the embedded server and its batches taken by telemetry."""
    from bdi_rl.xmpp.agent import TracedBdiAgent

    spec = wiring.spec

    def make(name: str, asl: Path, creator: Any) -> Any:
        jid = wiring.jid(name)
        for agent in creator.society.agents:  # its requests are taken, as a spec agent's
            if agent.inbox.achieve_from is not None:
                agent.inbox.achieve_from = agent.inbox.achieve_from | {jid}
        return TracedBdiAgent(
            jid,
            wiring.password,
            str(asl),
            role=CreatedRole(str(creator.jid)),
            tracer=wiring.tracer(jid, first_seq=0),
            telemetry=wiring.telemetry_jid,
            flush_seconds=spec.telemetry.flush_seconds,
            port=wiring.port,
            hold=True,
            percepts=team_percepts(spec, name, wiring.domain),
            achieve_from=creator.inbox.achieve_from,
        )

    async def start(agent: Any) -> None:
        if server is not None:
            await server.add_account(agent.name, wiring.password)
        telemetry.accept_sender(str(agent.jid))
        await agent.start(auto_register=wiring.register)
        agent.release()

    return make, start


def connect_world(wiring: Wiring, every_setup: list[AgentSetup], agents: list[TracedBdiAgent]) -> None:
    """Across processes: the seated learners of ``agents`` reach a world agent elsewhere over
    XMPP; the world agent among ``agents`` (if any) reaches the seats whose agents run elsewhere."""
    from bdi_rl.xmpp.worldlink import connect_seat, host_remote_seats

    spec = wiring.spec
    assert spec.world is not None
    world_jid = wiring.jid(spec.world.name)
    here = {agent.name for agent in agents}
    world = next(filter(None, map(world_of, agents)), None)
    if world is None:
        for agent in agents:
            learner = learner_of(agent)
            if learner is not None and learner.seat is not None:
                connect_seat(agent, learner.seat, world_jid, spec.world.offline_grace_ms / 1000.0)
        return
    seat_jids = {
        setup.seat.agent: wiring.jid(setup.name)
        for setup in every_setup
        if isinstance(setup, LearnerSetup) and setup.seat is not None
    }
    remote = {seat: jid for seat, jid in seat_jids.items() if jid.split("@", 1)[0] not in here}
    host_remote_seats(world.agent, world.shared, remote, seat_jids, spec.world.offline_grace_ms / 1000.0)


def enter_run(agents: list[TracedBdiAgent], run: str, run_dir: Path) -> None:
    """Move agents made before their run was known into ``run`` (an agent process learns it
    from telemetry once an agent has started): their traces, and the learners' checkpoints and
    policy caches, go there, at the paths :func:`make_agent` gives."""
    for agent in agents:
        agent.tracer.set_run(run)
        learner = learner_of(agent)
        if learner is not None:
            bridge = learner.bridge
            bridge.checkpoints.path = checkpoint_path(run_dir, agent.name)
            bridge.checkpoints.meta["run"] = run
            bridge.policy_cache.path = policy_file(run_dir, agent.name)


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
    ``bdi_rl.xmpp.inbox.PERCEIVED``: nobody may tell it."""

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


def world_percepts(seat: Seat, domain: str) -> list[Struct]:
    """What a seated learner knows of its world: ``world_seat(S)`` (its agent's name there)
    and ``world_agents([...])``, the JIDs of the world's agents in the world's order (the
    shipped coordination plans make the first the leader)."""
    agents = tuple(f"{name}@{domain}" for name in seat.host.bound.values())
    return [Struct("world_seat", (atom(seat.agent),), PERCEPT), Struct("world_agents", (agents,), PERCEPT)]


def start_beliefs(group: AgentGroup) -> list[Struct]:
    """The group's ``beliefs`` from the spec (already checked by load_spec)."""
    return [parse_literal(text) for text in group.beliefs]


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

"""``bdi-rl play``: greedy episodes of a trained Q-table, learning nothing, written as an
ordinary run directory marked as an evaluation.

A play is a spec like any run's, built from what is played (:func:`prepare_play`): the env of
the played run's ``spec.toml`` (or, for a checkpoint with no run beside it, of the
checkpoint's own metadata) with the asked overrides, one learner named as the played agent
with its group's plans, mode and beliefs, its ``warm_start`` the played table, and ``[play]``.
So every check of a run applies before anything is written, and a table made for another
state space is refused with the very line ``--warm-start`` gives. Then the episodes are
played through the agent's plans (:func:`bdi_rl.xmpp.runner.run_experiment`: beliefs,
intentions and messages traced as in a run), or ``policy_only`` in a plain loop
(:func:`play_policy_only`: the same session and tracer, no plans, no XMPP). The played run is
only read: its files are never opened for writing.
"""

from __future__ import annotations

import re
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bdi_rl.bdi.actions import RlBridge
from bdi_rl.bdi.episode import EpisodeSession, Percepts, training_speed
from bdi_rl.bdi.play import PlayedTable, PlaySession
from bdi_rl.bdi.policycache import PolicyCache
from bdi_rl.rl.checkpoint import CheckpointError, CheckpointMeta, find_checkpoint, load_checkpoint
from bdi_rl.rl.worldenv import is_world_id
from bdi_rl.spec import MAX_NAME, ExperimentSpec, packaged_asl_dir, spec_from_table
from bdi_rl.store import QTABLE_DIR, SPEC_FILE, TRACE_FILE, save_summary
from bdi_rl.trace.kinds import AGENT_START, AGENT_STOP, RUN_START, RUN_STOP, AgentStartData, TraceLevel
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp.agentroles import LearnerRole
from bdi_rl.xmpp.rundirs import new_spec_run_dir
from bdi_rl.xmpp.runner import RunResult
from bdi_rl.xmpp.setup import LearnerSetup, learner_setups, prepare_experiment
from bdi_rl.xmpp.summary import agents_summary
from bdi_rl.xmpp.telemetry import TraceLog
from bdi_rl.xmpp.waiting import Progress

#: Played episodes when ``--episodes`` is not given.
DEFAULT_EPISODES = 100
#: Largest ``spec.toml`` read from a played run (a spec is a few KB).
MAX_SPEC_BYTES = 1 << 20
#: Episodes between two shipments of the plain loop's trace (and progress reports).
_SHIP_EVERY = 64


class PlayError(ValueError):
    """What cannot be played, and why; one line naming the file or the option."""


@dataclass
class PlayRequest:
    """What ``bdi-rl play`` (or the control surface's play button) asks for."""

    source: Path
    """a run directory, or one checkpoint file"""
    agent: str | None = None
    """whose table, in a run directory of several (its checkpoint's name, ``learner-2``)"""
    episodes: int = DEFAULT_EPISODES
    seed: int | None = None
    """the env's and the tie-breaks' seed (default: the played run's)"""
    env: dict[str, Any] = field(default_factory=dict)
    """env kwargs to change (``is_slippery``, ``map_name``, ``desc`` ...): same state space only"""
    goal: tuple[int, int] | None = None
    """move the map's goal to this (x, y) cell (FrozenLake; start and holes stay)"""
    policy_only: bool = False


@dataclass
class PreparedPlay:
    """A play checked whole, ready to run: nothing is written before this exists."""

    spec: ExperimentSpec
    setups: list[Any]
    checkpoint: Path


def prepare_play(request: PlayRequest) -> PreparedPlay:
    """The play's spec and agents, every check made (the source, the table, the env and its
    overrides, the state space, the plans): PlayError, SpecError, CheckpointError or
    EnvError, one line each, before anything exists."""
    path, agent, spec_table = _resolve(request)
    header = load_checkpoint(path).header  # read again (and checked against the env) by learner_setups
    table = _play_table(request, path, agent, spec_table, header)
    spec = spec_from_table(table, packaged_asl_dir())
    setups = learner_setups(spec) if request.policy_only else prepare_experiment(spec)
    return PreparedPlay(spec, setups, path)


def _resolve(request: PlayRequest) -> tuple[Path, str, dict[str, Any] | None]:
    """The checkpoint to play, the agent's name, and the played run's spec table (None when
    the table has no run beside it: a file, or an imported run)."""
    source = request.source
    try:
        is_file, is_dir = source.is_file(), source.is_dir()
    except OSError as exc:
        raise PlayError(f"{source}: cannot use this path ({exc.strerror})") from None
    if is_file:
        folder = source.parent
        run_dir = folder.parent if folder.name == QTABLE_DIR else None
        path = source
    elif is_dir:
        run_dir, path = source, _table_of(source, request.agent)
    else:
        raise PlayError(f"{source}: no such run directory or checkpoint file")
    agent = request.agent or _recorded_agent(path)
    spec_table = _read_spec(run_dir / SPEC_FILE) if run_dir is not None and (run_dir / SPEC_FILE).is_file() else None
    return path, agent, spec_table


def _table_of(run_dir: Path, agent: str | None) -> Path:
    """The checkpoint of ``agent`` in ``run_dir``, or its one checkpoint when none is named."""
    if agent is not None:
        return find_checkpoint(run_dir, agent)
    folder = run_dir / QTABLE_DIR
    tables = sorted(folder.glob("*.npz"), key=lambda p: p.stem) if folder.is_dir() else []
    if not tables:
        raise PlayError(f"{run_dir}: no Q-table checkpoint to play (no {QTABLE_DIR}/*.npz)")
    if len(tables) > 1:
        names = ", ".join(p.stem for p in tables[:20]) + (" ..." if len(tables) > 20 else "")
        raise PlayError(f"{run_dir}: has tables of {names}: say which with --agent")
    return tables[0]


def _recorded_agent(path: Path) -> str:
    """The agent a checkpoint says it belongs to, else its file name's stem."""
    return load_checkpoint(path).header.agent or path.stem


def _read_spec(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_SPEC_BYTES + 1)
        if len(raw) > MAX_SPEC_BYTES:
            raise PlayError(f"{path}: larger than {MAX_SPEC_BYTES >> 20} MB: not a run's spec")
        return tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
        raise PlayError(f"{path}: the played run's spec cannot be read ({type(exc).__name__})") from None


#: What a played agent keeps of its group in the played run's spec.
_GROUP_KEYS = ("asl", "mode", "beliefs", "learning")


def _play_table(
    request: PlayRequest, path: Path, agent: str, spec: dict[str, Any] | None, header: CheckpointMeta
) -> dict[str, Any]:
    """The play's spec as a TOML table (checked by the spec loader next)."""
    if spec is not None:
        if spec.get("world") is not None or is_world_id(str((spec.get("env") or {}).get("id", ""))):
            raise PlayError(_WORLD_REFUSAL.format(source=request.source, env=(spec.get("env") or {}).get("id")))
        group = _group_of(spec, agent, path)
        env = dict(spec.get("env") or {})
        base = spec.get("name", "play")
        learning = spec.get("learning", {})
        played = {k: v for k, v in group.items() if k in _GROUP_KEYS}
        seed = spec.get("seed", 0)
        trace = "cycle" if spec.get("trace") == "cycle" else "step"
    else:
        env = _env_of_checkpoint(path, header)
        made_by = re.fullmatch(r".+?__(.+)__[0-9]{1,10}__[0-9]+(?:-[0-9]+)?", header.run)  # a run id
        base = made_by[1] if made_by else agent
        learning, played, seed, trace = {}, {"asl": "learner.asl", "mode": "step"}, 0, "step"
    env["kwargs"] = _with_overrides(dict(env.get("kwargs") or {}), request.env)
    if request.goal is not None:
        env["goals"], env["goal_every"] = [list(request.goal)], 0
    return {
        "name": f"{str(base)[: MAX_NAME - 5]}-play",
        "episodes": request.episodes,
        "seed": request.seed if request.seed is not None else seed,
        "trace": trace,
        "eval_episodes": 0,
        "checkpoint_every": 0,
        "env": env,
        "learning": learning,
        "agents": [{"name": agent, **played, "warm_start": str(path.resolve())}],
        "play": {"policy_only": request.policy_only},
    }


_WORLD_REFUSAL = (
    "{source}: a shared world's run ({env}): its seats' tables act only together, and play "
    "plays one agent's table; play a single-agent run's"
)


def _group_of(spec: dict[str, Any], agent: str, path: Path) -> dict[str, Any]:
    """The learner group of ``agent`` in the played run's spec table."""
    groups = [g for g in spec.get("agents") or [] if isinstance(g, dict)]
    learners = []
    for group in groups:
        if group.get("role", "learner") != "learner":
            continue
        name, count = str(group.get("name", "")), group.get("count", 1)
        names = [name] if count == 1 else [f"{name}-{i}" for i in range(1, int(count) + 1)]
        if agent in names:
            return group
        learners += names
    shown = ", ".join(learners[:20]) or "none"
    raise PlayError(f"{path}: its run's {SPEC_FILE} has no learner {agent!r} (learners: {shown}); say --agent")


def _env_of_checkpoint(path: Path, header: CheckpointMeta) -> dict[str, Any]:
    """The env a checkpoint was trained on, from its metadata alone: only a registered
    gymnasium id (a ``module:Class`` named by a file would import and run code it names)."""
    made = header.env
    if made is None:
        raise CheckpointError(f"{path}: the checkpoint does not say which env it is for")
    if is_world_id(made.env_id):
        raise PlayError(_WORLD_REFUSAL.format(source=path, env=made.env_id))
    if ":" in made.env_id:
        raise PlayError(
            f"{path}: made for the env entry point {made.env_id!r}: play builds a file's env only for "
            "registered gymnasium ids (it never runs code a file names); play its run directory"
        )
    kwargs = dict(header.env_kwargs or made.kwargs)
    kwargs.pop("grid", None)  # the state space's size, not a kwarg
    if header.task.desc:  # the map the table was last trained on
        kwargs = {k: v for k, v in kwargs.items() if k != "map_name"} | {"desc": list(header.task.desc)}
    env: dict[str, Any] = {"id": made.env_id, "kwargs": kwargs}
    if isinstance(header.max_episode_steps, int):
        env["max_episode_steps"] = header.max_episode_steps
    return env


def _with_overrides(kwargs: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """The env's kwargs with ``overrides``; a map given one way replaces one given the other
    (``map_name`` drops ``desc`` and the other way round)."""
    for key, value in overrides.items():
        if key == "map_name":
            kwargs.pop("desc", None)
        elif key == "desc":
            kwargs.pop("map_name", None)
        kwargs[key] = value
    return kwargs


# -- the plain loop (--policy-only) -----------------------------------------------------------
class _NoMind:
    """Where a plain loop's percepts go: nowhere (there are no plans to read them)."""

    def replace_percept(self, functor: str, args: tuple[Any, ...]) -> None:
        pass

    def drop_percepts(self, functor: str, arity: int) -> None:
        pass


@dataclass
class _LoopAgent:
    """A learner of the plain loop, as the runner's summary reads one."""

    name: str
    role: LearnerRole
    failure: str | None = None
    stopped: str | None = None


def play_policy_only(
    prepared: PreparedPlay,
    runs: Path,
    stopping: Callable[[], bool],
    on_progress: Callable[[Progress], None] | None = None,
    on_run_dir: Callable[[Path], None] | None = None,
) -> RunResult:
    """Play the table alone: each episode greedy in Python, traced at the spec's level by the
    learner's own tracer and written by telemetry's trace log, as a run's trace is (so the
    viewer, the world player and ``render`` read it). Once ``stopping()`` (Ctrl-C: the CLI's
    ``stop_asked``) it stops between episodes as a run stops:
    what was played is kept, and the summary says ``interrupted``."""
    spec = prepared.spec
    (setup,) = [p for p in prepared.setups if isinstance(p, LearnerSetup)]
    run_dir, writer = new_spec_run_dir(runs, spec, "bdi-rl play --policy-only")
    if on_run_dir is not None:
        on_run_dir(run_dir)
    started = time.time()
    run, domain = run_dir.name, spec.xmpp.domain
    log = TraceLog(run_dir / TRACE_FILE, run)
    telemetry = Tracer(run, f"{spec.telemetry.name}@{domain}", TraceLevel.EPISODE)
    telemetry.emit(RUN_START, {"spec": spec.name, "env": spec.env.id, "agents": [setup.name]})
    agent = _loop_agent(spec, setup, run, run_dir, domain)
    session = agent.role.bridge.session
    tracers = [telemetry, session.tracer]
    while session.learner.episodes < session.episodes_target:
        if stopping():  # Ctrl-C, SIGTERM: between episodes, the trace whole
            agent.failure = "interrupted"
            break
        session.run_episode()
        if session.learner.episodes % _SHIP_EVERY == 0:
            _ship(tracers, log)
            if on_progress is not None:
                on_progress(_progress(session))
    else:
        session.evaluate()
    session.stop_training_clock()
    tracer = session.tracer
    tracer.flush_record()
    tracer.emit(AGENT_STOP, {"reason": agent.failure or "finished", "emitted": tracer.seq + 1})
    tracer.close()
    telemetry.emit(RUN_STOP, {"failures": {f"{setup.name}@{domain}": agent.failure} if agent.failure else {}})
    _ship(tracers, log)
    log.close()
    summary = agents_summary(run, spec, [agent], time.time() - started)
    if agent.failure == "interrupted":
        summary["interrupted"] = True
    save_summary(run_dir, summary)
    writer.release()  # after the summary, as a run does
    return RunResult(run_dir, summary, {f"{setup.name}@{domain}": agent.failure} if agent.failure else {})


def _loop_agent(spec: ExperimentSpec, setup: LearnerSetup, run: str, run_dir: Path, domain: str) -> _LoopAgent:
    """The plain loop's learner: a play session with its tracer, its ``agent.start`` traced
    as a learner agent traces it, and the played table announced."""
    jid = f"{setup.name}@{domain}"
    tracer = Tracer(run, jid, TraceLevel.parse(spec.trace))
    percepts = Percepts()
    percepts.mind = _NoMind()
    session = PlaySession(
        setup.env,
        setup.learner,
        tracer,
        percepts,
        episodes=setup.episodes,
        eval_episodes=0,
        seed=setup.seed,
        goals=setup.goals,
        goal_every=spec.env.goal_every,
    )
    table = PlayedTable(
        session,
        run_dir / QTABLE_DIR / f"{setup.name}.npz",
        {},
        warm_start=setup.warm_start,
        task_change=setup.task_change,
    )
    start: AgentStartData = {"jid": jid, "asl": "", "env": setup.env.env_id, "actions": setup.env.action_names}
    world = setup.env.world()
    if world is not None:
        start["world"] = world  # type: ignore[typeddict-item]
    tracer.emit(AGENT_START, start)
    session.static_percepts("episode")
    table.announce_warm_start()
    bridge = RlBridge(session, table, PolicyCache(session, {}, None, setup.name))
    return _LoopAgent(setup.name, LearnerRole(bridge, "episode"))


def _ship(tracers: list[Tracer], log: TraceLog) -> None:
    """What the agents' shippers and telemetry's receiver do, minus XMPP: every event in
    batches, each line checked, appended in order, acknowledged."""
    for tracer in tracers:
        tracer.flush_record()
        while tracer.pending:
            upto, _ = log.accept(tracer.next_local_batch())
            tracer.ack(upto)


def _progress(session: EpisodeSession) -> Progress:
    stats = session.stats
    returns = stats.returns[-100:]
    speed = training_speed([stats], time.time())
    return Progress(
        session.learner.episodes, session.episodes_target, sum(returns) / len(returns) if returns else None, 0.0, speed
    )

"""Experiment spec: one TOML file defines a whole experiment (docs/ARCHITECTURE.md).

Every table is a msgspec ``Struct`` with a docstring per field: the one schema of a spec.
msgspec checks every field's type *and* range (``Meta``) and names the key of the first
error; :func:`load_spec` then checks what relates fields to each other and what the XMPP
server and the file system will accept, so a spec that loads is a spec that can run, and a
typo never silently falls back to a default.

The schema, the checks that relate its fields and the wording of msgspec's errors as spec
keys stay one module past ~500 lines: a new field touches all three, and the wording walks
the schema's own types.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import msgspec
from msgspec import Meta, Struct

from bdi_rl.bdi.wire import WireError, parse_literal
from bdi_rl.rl.qlearning import LearningConfig
from bdi_rl.rl.worldenv import is_world_id
from bdi_rl.store import run_id

T = TypeVar("T")


class SpecError(ValueError):
    """A spec that cannot run; the message is one line naming the file and key."""


#: Most agents one experiment may run (all groups together). 200 learners take ~0.9 MB each
#: (README, Performance); a count typed with a few zeros too many must not eat the machine.
MAX_AGENTS = 1000
#: Upper bounds on counts: far above any real experiment, far below what would exhaust memory.
MAX_EPISODES = 1_000_000_000
MAX_EVAL_EPISODES = 10_000_000
MAX_STEPS = 10_000_000
MAX_SEED = 2**32 - 1
#: Longest name that still leaves room in a 255-byte file name (``.<agent>.npz.XXXXXXXX.tmp``).
MAX_NAME = 64
#: Longest run directory name (``<env>__<experiment>__<seed>__<time>`` plus a suffix).
MAX_RUN_ID = 200

_NAME_RULE = "lower-case ASCII letters, digits, '-' or '_', starting with a letter or digit"
_JID_LOCAL = re.compile(r"[a-z0-9][a-z0-9_-]*")
_HOST_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")

Count = Annotated[int, Meta(ge=1, le=MAX_EPISODES)]
Port = Annotated[int, Meta(ge=1, le=65535)]
Probability = Annotated[float, Meta(ge=0.0, le=1.0)]
Name = Annotated[str, Meta(min_length=1, max_length=MAX_NAME)]


class _Table(Struct, forbid_unknown_fields=True, kw_only=True):
    """A TOML table: unknown keys are errors naming the key (a typo never falls back silently)."""


class EnvSpec(_Table):
    id: Annotated[str, Meta(min_length=1, max_length=200)]
    """Registered Gymnasium id (``FrozenLake-v1``) or ``module:Class`` entry point."""
    kwargs: dict[str, Any] = {}
    """Keyword arguments for the env constructor (``map_name``, ``is_slippery``, ``desc`` ...)."""
    max_episode_steps: Annotated[int, Meta(ge=1, le=MAX_STEPS)] | None = None
    """Episode step limit; None keeps the env's own (a safe default when it has none)."""
    goals: Annotated[
        list[Annotated[list[Annotated[int, Meta(ge=0, le=10_000)]], Meta(min_length=2, max_length=2)]],
        Meta(max_length=10_000),
    ] = []
    """FrozenLake only: goal cells ``[x, y]`` the map's goal moves to (start and holes stay);
    learners perceive ``goal(X, Y)``. Empty: the map's own goal."""
    goal_every: Annotated[int, Meta(ge=0, le=MAX_EPISODES)] = 0
    """Episodes before the goal moves on to the next of ``goals`` (cycling); needed when
    ``goals`` lists more than one."""


#: the reasoning cycle of each role's minds when the spec does not name one: a learner's step
#: loop runs fastest on the fast cycle (BENCHMARKS.md, "Jason's reasoning cycle")
DEFAULT_CYCLE = {"learner": "fast", "coordinator": "jason"}


class AgentGroup(_Table):
    name: Name
    """Group name; agents are ``name`` (count 1) or ``name-1`` ... ``name-N``."""
    count: Annotated[int, Meta(ge=1, le=MAX_AGENTS)] = 1
    """How many agents of this group run."""
    asl: Annotated[str, Meta(min_length=1, max_length=4096)] = "learner.asl"
    """Plan library: a path relative to the spec file, or a file shipped in ``bdi_rl/asl``."""
    role: Literal["learner", "coordinator"] = "learner"
    """``learner`` trains a Q-table; ``coordinator`` runs plans only (no env): it forms the
    team and assigns work. Every agent perceives ``coordinator(C)`` (the first coordinator)
    and ``teammates([...])`` (the other learners), so team plans know whom to talk to."""
    mode: Literal["step", "episode"] = "step"
    """``step``: one plan iteration per env step; ``episode``: Python runs whole episodes."""
    cycle: Literal["jason", "fast"] | None = None
    """The mind's reasoning cycle: ``jason`` (Jason's: one deed of one intention per cycle,
    intentions in turn) or ``fast`` (an intention runs until it blocks: docs/AGENTSPEAK.md
    says which programs can tell). Default: ``fast`` for learners, ``jason`` for
    coordinators."""
    state_facts: bool = False
    """Perceive what the env's state is made of, at every step (Taxi: ``taxi(Row, Col)``,
    ``passenger(P)``, ``destination(D)``): for plans that abstract the state (a hierarchy's
    sub-goals, asl/taxi-hierarchy.asl). Off by default: they are beliefs to trace each step."""
    episodes: Count | None = None
    """Training episodes for this group (default: the experiment's ``episodes``)."""
    learning: dict[str, Any] = {}
    """Overrides of the experiment's ``[learning]`` table for this group."""
    beliefs: Annotated[list[str], Meta(max_length=10_000)] = []
    """Initial beliefs added before the first reasoning cycle (AgentSpeak literals such as
    ``"share_every(5)"``): one plan library, tuned per experiment."""
    warm_start: Annotated[str, Meta(min_length=1, max_length=4096)] | None = None
    """Start from earlier Q-tables: a run directory (each agent takes ``qtables/<its
    name>.npz``) or one checkpoint file for every learner of the group. Relative to the spec
    file. Checked against this run's env before anything starts."""
    warm_epsilon: Probability | None = None
    """Epsilon a warm-started learner starts from (default: the group's ``epsilon_end``: it
    already knows the task); the schedule then goes on to ``epsilon_end`` as configured."""

    def reasoning_cycle(self) -> str:
        """The cycle its minds run: ``cycle``, or the role's default."""
        if self.cycle is not None:
            return self.cycle
        return DEFAULT_CYCLE[self.role]

    def agent_names(self) -> list[str]:
        if self.count == 1:
            return [self.name]
        return [f"{self.name}-{i}" for i in range(1, self.count + 1)]


class WorldSpec(_Table):
    """A shared world: the ``[env]`` is a multi-agent PettingZoo env every bound learner acts
    in together (``bdi.world``)."""

    bind: Annotated[dict[str, Name], Meta(max_length=MAX_AGENTS)] = {}
    """The world's agent (seat) each learner plays, ``{player_0 = "learner-1", ...}``; empty:
    the learners in spec order take the world's agents in its order."""
    name: Name = "world"
    """Local part of the world agent's JID (it traces every joint step)."""
    step_deadline_ms: Annotated[int, Meta(ge=1, le=3_600_000)] = 10_000
    """Longest wait, from an agent's first choice of a step, for the others' choices; then
    each missing one plays ``default_action`` (traced as defaulted)."""
    default_action: Annotated[int, Meta(ge=0, le=1_000_000)] = 0
    """The action a seat plays when its agent has not chosen by the deadline (lbforaging's
    0 is "none"; a matrix game's 0 is its first row or column)."""
    offline_grace_ms: Annotated[int, Meta(ge=0, le=3_600_000)] = 30_000
    """Across processes: how long a seated agent's XMPP session may stay offline before the
    world finishes its seat (so the others are not kept waiting for an agent whose process
    died); a reconnect within it changes nothing."""


class PlaySpec(_Table):
    """This run is an evaluation (``bdi-rl play``): each learner plays the trained table its
    ``warm_start`` names, greedily (epsilon 0), learning nothing and writing no checkpoint;
    ``episodes`` is how many it plays, and the summary's ``evaluation`` holds their mean
    return and success rate with 95 % intervals."""

    policy_only: bool = False
    """True: the table alone, in a plain loop (no plans, no XMPP); False: through the agent's
    plans, traced as a run is."""


class XmppSpec(_Table):
    server: Annotated[str, Meta(min_length=1, max_length=300)] = "embedded"
    """``embedded`` (bdi-rl's own server, in-process on loopback) or ``host:port`` of a running server."""
    domain: Annotated[str, Meta(min_length=1, max_length=253)] = "localhost"
    """XMPP domain of every agent's JID."""
    port: Port = 5222
    """Port for the embedded server (another free port is used if it is taken)."""
    trust: Annotated[list[Annotated[str, Meta(min_length=3, max_length=1024)]], Meta(max_length=MAX_AGENTS)] = []
    """Bare JIDs outside the experiment whose requests agents take and whose tells the
    shipped plans act on (the experiment's own agents are always trusted)."""


class TelemetrySpec(_Table):
    name: Name = "telemetry"
    """Local part of the telemetry agent's JID."""
    flush_seconds: Annotated[float, Meta(gt=0.0, le=60.0)] = 0.2
    """Longest time an event waits in an agent before it is shipped."""


class ViewerSpec(_Table):
    enabled: bool = False
    """Start the web viewer with the run."""
    host: Annotated[str, Meta(min_length=1, max_length=253)] = "127.0.0.1"
    """Bind address (loopback unless you mean to expose it)."""
    port: Port = 8765
    """Viewer port."""


class ExperimentSpec(_Table):
    name: Name
    """Experiment name, part of the run directory's name."""
    env: EnvSpec
    """The environment every learner trains in (with ``[world]``: the one world they share)."""
    agents: Annotated[list[AgentGroup], Meta(min_length=1, max_length=MAX_AGENTS)]
    """Agent groups."""
    world: WorldSpec | None = None
    """Present: ``env`` is a multi-agent world (a PettingZoo env) shared by the learners."""
    play: PlaySpec | None = None
    """Present: the run is an evaluation of trained tables, not training (``bdi-rl play``)."""
    episodes: Count = 1000
    """Training episodes per learner."""
    seed: Annotated[int, Meta(ge=0, le=MAX_SEED)] = 0
    """Base seed; learner ``i`` (over all groups, from 0) uses ``seed + i``."""
    trace: Literal["episode", "step", "cycle"] = "step"
    """Trace level: ``episode`` < ``step`` < ``cycle``."""
    eval_episodes: Annotated[int, Meta(ge=0, le=MAX_EVAL_EPISODES)] = 100
    """Greedy evaluation episodes after training, and at each ``eval_every`` (they never
    update the Q-table)."""
    eval_every: Annotated[int, Meta(ge=0, le=MAX_EPISODES)] = 0
    """Training episodes between two evaluations during training (0: only the final one).
    Each runs ``eval_episodes`` greedy episodes on its own env (same seed each time), so the
    evaluation curve compares like with like; their time is not counted as training time."""
    checkpoint_every: Annotated[int, Meta(ge=0, le=MAX_EPISODES)] = 1000
    """Episodes between two Q-table checkpoints of a learner (0: only the final one). Each
    costs an fsync; on a short-episode env (FrozenLake 4x4, ~6k episodes/s) every 100 took
    ~4 % of the throughput, every 1000 is negligible and a resume re-runs at most 1000."""
    learning: LearningConfig = msgspec.field(default_factory=LearningConfig)
    """Q-learning hyper-parameters shared by every group (groups may override)."""
    xmpp: XmppSpec = msgspec.field(default_factory=XmppSpec)
    telemetry: TelemetrySpec = msgspec.field(default_factory=TelemetrySpec)
    viewer: ViewerSpec = msgspec.field(default_factory=ViewerSpec)

    def learning_for(self, group: AgentGroup) -> LearningConfig:
        """The group's learning config: the experiment's, with the group's overrides."""
        merged = {**dataclasses.asdict(self.learning), **group.learning}
        where = f"agents[{self.agents.index(group)}].learning"
        _check_learning_keys(group.learning, where)
        return _convert(merged, LearningConfig, where)

    def to_dict(self) -> dict[str, Any]:
        """The resolved spec as a run directory keeps it: a plan file shipped with bdi-rl by
        its shipped name (``learner.asl``, found again wherever bdi-rl is installed), any
        other by its absolute path."""
        resolved: dict[str, Any] = _drop_none(msgspec.to_builtins(self))  # a struct's builtins: a dict
        for group in resolved.get("agents", ()):
            group["asl"] = _shipped_name(group["asl"])
        return resolved

    def agent_names(self, role: str) -> list[str]:
        """Names of every agent with ``role``, in spec order."""
        return [name for g in self.agents if g.role == role for name in g.agent_names()]


def _shipped_name(asl: str) -> str:
    """``asl`` relative to the shipped plan libraries when it is one of them."""
    try:
        return Path(asl).resolve().relative_to(packaged_asl_dir().resolve()).as_posix()
    except (ValueError, OSError):
        return asl


def _drop_none(value: Any) -> Any:
    """TOML has no null: leave unset optional keys out of the resolved spec."""
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


# -- msgspec's errors, said as the rest of bdi-rl says them -------------------------------------

_TYPE_WORDS = {
    "int": "an integer",
    "float": "a number",
    "str": "a string",
    "bool": "true or false",
    "object": "a table",
    "array": "a list",
    "null": "nothing",
}
_AT = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)


def _type_at(tp: Any, path: list[str | int]) -> Any:
    """The declared type at ``path`` inside ``tp`` (to name the allowed values of a Literal)."""
    for step in path:
        while typing.get_origin(tp) is Annotated or typing.get_origin(tp) in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            tp = args[0]
        if isinstance(step, int):
            tp = typing.get_args(tp)[0] if typing.get_args(tp) else Any
        elif isinstance(tp, type) and issubclass(tp, Struct):
            tp = typing.get_type_hints(tp, include_extras=True).get(step, Any)
        else:
            return Any
    return tp


def _split_path(path: str) -> list[str | int]:
    return [int(p) if p.isdigit() else p for p in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path) for p in p if p]


def _value_at(data: Any, path: list[str | int]) -> Any:
    for step in path:
        data = data[step]
    return data


def _dotted(path: list[str | int]) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text


def _say(exc: msgspec.ValidationError, data: Any, root: type, prefix: str = "") -> SpecError:
    """``Expected `int` >= 1 - at `$.agents[0].count``` -> ``agents[0].count: expected an
    integer >= 1, got 0``."""
    match = _AT.match(str(exc))
    assert match is not None
    what, path = match["what"], _split_path(match["path"] or "")
    field_match = re.fullmatch(r"Object (contains unknown|missing required) field `(.+)`", what)
    own = re.fullmatch(r"(\w+)\.(\w+): (.*)", what, re.S)
    if own and path and own[1] == path[-1]:  # a table's own check (LearningConfig) named its key
        return SpecError(f"{_dotted([*path, own[2]]) if not prefix else prefix + '.' + own[2]}: {own[3]}")
    if field_match:
        path.append(field_match[2])
        message = "unknown key" if field_match[1] == "contains unknown" else "missing required key"
        if field_match[1] == "contains unknown":
            parent = _type_at(root, path[:-1])
            if isinstance(parent, type) and issubclass(parent, Struct):
                message += f" (known: {', '.join(parent.__struct_fields__)})"
    elif what.startswith("Invalid enum value") or (
        what.startswith("Expected") and _literal_values(_type_at(root, path))
    ):
        allowed = _literal_values(_type_at(root, path))
        message = f"must be one of {', '.join(map(repr, allowed))}"
    else:
        message = re.sub(r"`(\w+)`", lambda m: _TYPE_WORDS.get(m[1], m[1]), what)
        message = message[0].lower() + message[1:]
    try:
        value = _value_at(data, path)
    except (KeyError, IndexError, TypeError):
        value = None
    else:
        if "got" not in message:
            message += f", got {_short(value)}"
    key = _dotted(path)
    key = f"{prefix}.{key}" if prefix and key else (prefix or key)
    return SpecError(f"{key}: {message}" if key else message)


def _literal_values(tp: Any) -> tuple[object, ...]:
    """The values of a ``Literal[...]`` type, also inside ``Literal[...] | None``."""
    if typing.get_origin(tp) is Literal:
        return typing.get_args(tp)
    return tuple(v for member in typing.get_args(tp) for v in _literal_values(member))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _convert(data: Any, tp: type[T], where: str = "") -> T:
    """``data`` as ``tp``, or a SpecError naming the key (msgspec checks types and ranges)."""
    try:
        return msgspec.convert(data, tp)
    except msgspec.ValidationError as exc:
        text = str(exc)
        if " - at `$" in text or text.startswith(("Object ", "Expected ", "Invalid ")):
            raise _say(exc, data, tp, where) from None
        # a ValueError of LearningConfig's own checks: it names its field as learning.<key>
        section = "learning."
        if where and text.startswith(section):
            text = f"{where}.{text[len(section) :]}"
        raise SpecError(text) from None


def _check_learning_keys(table: Any, where: str) -> None:
    """LearningConfig is a plain dataclass (the learner knows nothing of specs), which msgspec
    converts without refusing unknown keys: refuse them here."""
    if not isinstance(table, dict):
        return  # msgspec says "expected a table"
    known = [f.name for f in dataclasses.fields(LearningConfig)]
    for key in table:
        if key not in known:
            raise SpecError(f"{where}.{key}: unknown key (known: {', '.join(known)})")


# -- relations between fields, and names the XMPP server and the file system accept ------------


def _validate(spec: ExperimentSpec) -> None:
    names: set[str] = set()
    for i, group in enumerate(spec.agents):
        if not _is_jid_local(group.name):
            raise SpecError(f"agents[{i}].name: {group.name!r} must be {_NAME_RULE}")
        for agent in group.agent_names():
            if agent in names:
                raise SpecError(f"agents[{i}].name: agent name {agent!r} is used twice")
            names.add(agent)
        if len(names) > MAX_AGENTS:
            raise SpecError(f"agents[{i}].count: more than {MAX_AGENTS} agents in one experiment")
        spec.learning_for(group)  # overrides are checked now, not mid-run
        if group.warm_start is not None and group.role != "learner":
            raise SpecError(f"agents[{i}].warm_start: only learners have Q-tables")
        for j, text in enumerate(group.beliefs):
            try:
                parse_literal(text)
            except WireError as exc:
                raise SpecError(f"agents[{i}].beliefs[{j}]: {exc}") from None
    if not spec.agent_names("learner"):
        raise SpecError('agents: at least one group needs role = "learner"')
    learners = len(spec.agent_names("learner"))
    if spec.seed + learners - 1 > MAX_SEED:
        raise SpecError(
            f"seed: learner i uses seed + i, which must stay <= {MAX_SEED}; got {spec.seed} with {learners} learners"
        )
    _validate_world(spec, names)
    _validate_play(spec)
    if spec.eval_every and not spec.eval_episodes:
        raise SpecError("eval_every: evaluating during training needs eval_episodes of at least 1")
    if len(spec.env.goals) > 1 and spec.env.goal_every < 1:
        raise SpecError(
            f"env.goal_every: must be at least 1 when env.goals lists several goals, got {spec.env.goal_every}"
        )
    if spec.xmpp.server != "embedded" and not _is_host_port(spec.xmpp.server):
        raise SpecError(
            f"xmpp.server: expected 'embedded' or 'host:port' (port 1-65535), got {_short(spec.xmpp.server)}"
        )
    if not _is_host_name(spec.xmpp.domain):
        raise SpecError(f"xmpp.domain: {_short(spec.xmpp.domain)} is not a lower-case host name")
    for j, jid in enumerate(spec.xmpp.trust):
        local, at, domain = jid.partition("@")
        if not at or not _is_jid_local(local) or not _is_host_name(domain):
            raise SpecError(f"xmpp.trust[{j}]: {_short(jid)} is not a bare JID (local@domain, local part {_NAME_RULE})")
    if not _is_jid_local(spec.telemetry.name):
        raise SpecError(f"telemetry.name: must be {_NAME_RULE}")
    if spec.telemetry.name in names:
        raise SpecError(f"telemetry.name: {spec.telemetry.name!r} is also an agent's name")
    longest = len(run_id(spec.env.id, spec.name, spec.seed + learners, 9_999_999_999)) + 4
    if longest > MAX_RUN_ID:
        raise SpecError(
            f"name: the run directory's name (env id, name, seed, time) would be "
            f"{longest} characters, over {MAX_RUN_ID}; shorten name or env.id"
        )


def _validate_world(spec: ExperimentSpec, names: set[str]) -> None:
    """What a shared world asks of the spec (its seats are checked against the env when the
    world is built, before the run)."""
    world = spec.world
    if world is None:
        if is_world_id(spec.env.id):
            raise SpecError(f"env.id: {spec.env.id!r} is a multi-agent world: add a [world] table (world.bind)")
        return
    if not _is_jid_local(world.name):
        raise SpecError(f"world.name: must be {_NAME_RULE}")
    if world.name in names or world.name == spec.telemetry.name:
        raise SpecError(f"world.name: {world.name!r} is also an agent's name")
    if spec.env.goals:
        raise SpecError("env.goals: moving goals are for single-agent grid worlds, not a shared world")
    learners = {name: g for g in spec.agents if g.role == "learner" for name in g.agent_names()}
    bound = list(world.bind.values()) or list(learners)
    for seat, name in world.bind.items():
        if name not in learners:
            raise SpecError(f"world.bind.{seat}: {name!r} is not a learner of this spec")
        if bound.count(name) > 1:
            raise SpecError(f"world.bind.{seat}: {name!r} is bound to more than one seat")
    for name, group in learners.items():
        i = spec.agents.index(group)
        if name not in bound:
            raise SpecError(f"world.bind: learner {name!r} has no seat (every learner acts in the world)")
        if group.mode != "step":
            raise SpecError(f'agents[{i}].mode: agents of a shared world act step by step (mode = "step")')
        if (group.episodes or spec.episodes) != (learners[bound[0]].episodes or spec.episodes):
            raise SpecError(f"agents[{i}].episodes: every agent of a shared world trains the same episodes")


#: What an agent's name must be (the local part of its JID): a spec's, or one ``.create_agent`` gives.
AGENT_NAME_RULE = _NAME_RULE


def is_agent_name(name: str) -> bool:
    """Whether ``name`` can be an agent's name (see :func:`_is_jid_local`)."""
    return _is_jid_local(name)


def _validate_play(spec: ExperimentSpec) -> None:
    """What an evaluation asks of the spec: a table for every learner, and nothing that
    trains (a shared world's seats play only together: not played)."""
    if spec.play is None:
        return
    if spec.world is not None:
        raise SpecError("play: a shared world is not played (its seats act only together)")
    if spec.eval_every:
        raise SpecError("eval_every: a play is an evaluation already; leave it at 0")
    for i, group in enumerate(spec.agents):
        if group.role == "learner" and group.warm_start is None:
            raise SpecError(f"agents[{i}].warm_start: a play needs the table each learner plays")


def _is_jid_local(name: str) -> bool:
    """ASCII lower case only: XMPP servers case-fold and normalise (PRECIS) local parts, and
    servers differ in how they fold an addressee's case (docs/ARCHITECTURE.md), so any other letter
    makes an agent whose messages go to another name."""
    return len(name) <= MAX_NAME and _JID_LOCAL.fullmatch(name) is not None


def _is_host_name(host: str) -> bool:
    return len(host) <= 253 and all(_HOST_LABEL.fullmatch(label) for label in host.split("."))


def parse_host_port(text: str) -> tuple[str, int]:
    """``HOST:PORT`` with a port in 1-65535, or ValueError: the one parser of an address
    (the spec's ``xmpp.server``, the CLI's ``--xmpp`` and ``--view``)."""
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or len(port) > 5 or not 0 < int(port) < 65536:
        raise ValueError(f"expected HOST:PORT with a port in 1-65535, got {text[:80]!r}")
    return host, int(port)


def _is_host_port(value: str) -> bool:
    try:
        parse_host_port(value)
    except ValueError:
        return False
    return True


def _shipped_dir(name: str) -> Path:
    """``asl/`` or ``agents/``: inside the installed package (wheel), or beside it (checkout)."""
    here = Path(__file__).resolve().parent
    installed = here / name
    return installed if installed.is_dir() else here.parent / name


def packaged_asl_dir() -> Path:
    return _shipped_dir("asl")


def packaged_specs_dir() -> Path:
    return _shipped_dir("agents")


def resolve_spec_path(name: str) -> Path:
    """A spec path as given, or the name of a spec shipped with bdi-rl (``frozenlake-4x4``)."""
    path = Path(name)
    try:
        if path.is_file():
            return path
        shipped = packaged_specs_dir() / (path.name if path.suffix else f"{path.name}.toml")
        if not path.exists() and shipped.is_file() and len(path.parts) <= 2:
            return shipped
        if path.is_dir():
            raise SpecError(f"{name}: is a directory, not a spec file")
    except OSError as exc:  # a name too long for the file system, a loop of symlinks ...
        raise SpecError(f"{_short(name)}: cannot use this path: {exc.strerror}") from None
    raise SpecError(f"{name}: no such spec file (shipped specs: {', '.join(shipped_spec_names())})")


def shipped_spec_names() -> list[str]:
    """The specs shipped with bdi-rl, by the name ``bdi-rl run NAME`` takes."""
    try:
        return sorted(p.stem for p in packaged_specs_dir().glob("*.toml"))
    except OSError:
        return []


def resolve_asl(asl: str, spec_dir: Path) -> Path:
    """ASL files are looked up beside the spec first, then among the shipped plan libraries."""
    for candidate in (spec_dir / asl, packaged_asl_dir() / asl):
        if candidate.is_file():
            return candidate.resolve()
    raise FileNotFoundError(asl)


def _resolve_existing(name: str, spec_dir: Path, key: str) -> Path:
    """A path relative to the spec file (or absolute), which must exist."""
    path = spec_dir / Path(name).expanduser()
    if not path.exists():
        raise SpecError(f"{key}: no such run directory or checkpoint file {name!r}")
    return path.resolve()


def read_toml_file(path: Path, what: str) -> dict[str, Any]:
    """The table of a TOML file the user named (``what``: "spec", "sweep"), or one
    SpecError line naming the file and what is wrong with it."""
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise SpecError(f"{path}: no such {what} file") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not a text file (a {what} file is UTF-8 TOML)") from None
    except IsADirectoryError:
        raise SpecError(f"{path}: is a directory, not a {what} file") from None
    except OSError as exc:
        raise SpecError(f"{path}: cannot read: {exc.strerror}") from None
    except RecursionError:  # tomllib recurses per nested array or inline table
        raise SpecError(f"{path}: not valid TOML: nested too deeply") from None


def load_spec(
    path: str | Path, overrides: dict[str, Any] | None = None, settings: dict[str, Any] | None = None
) -> ExperimentSpec:
    """Read, check and resolve a spec file; ``overrides`` are top-level keys from the CLI,
    ``settings`` values by path (``bdi_rl.settings``: ``--set``, a sweep's configuration)."""
    path = Path(path)
    data = read_toml_file(path, "spec")
    data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    try:
        if settings:
            from bdi_rl.settings import apply_settings

            apply_settings(data, settings)
        return spec_from_table(data, path.parent)
    except SpecError as exc:
        raise SpecError(f"{path}: {exc}") from None


def spec_from_table(data: dict[str, Any], spec_dir: Path) -> ExperimentSpec:
    """A spec from its TOML table, checked as :func:`load_spec` checks a file's, with plan
    files and warm starts resolved against ``spec_dir`` (``bdi-rl play`` builds its spec so,
    from the played run's). SpecError naming the key."""
    spec = parse_spec(data)
    for i, group in enumerate(spec.agents):
        group.asl = str(_resolve_file(group.asl, spec_dir, f"agents[{i}].asl"))
        if group.warm_start is not None:
            try:
                group.warm_start = str(_resolve_existing(group.warm_start, spec_dir, f"agents[{i}].warm_start"))
            except OSError as exc:
                raise SpecError(
                    f"agents[{i}].warm_start: cannot use {_short(group.warm_start)}: {exc.strerror}"
                ) from None
    return spec


def parse_spec(data: dict[str, Any]) -> ExperimentSpec:
    """A spec from its TOML table: every type, range and relation checked (SpecError)."""
    _check_learning_keys(data.get("learning", {}), "learning")
    spec = _convert(data, ExperimentSpec)
    _validate(spec)
    return spec


def _resolve_file(asl: str, spec_dir: Path, key: str) -> Path:
    try:
        return resolve_asl(asl, spec_dir)
    except FileNotFoundError:
        raise SpecError(f"{key}: no such plan file {asl!r}") from None
    except OSError as exc:
        raise SpecError(f"{key}: cannot use {_short(asl)}: {exc.strerror}") from None

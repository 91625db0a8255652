"""Experiment spec: one TOML file defines a whole experiment (DESIGN.md, "Experiment spec").

Every table is a dataclass with a docstring per field; :func:`load_spec` checks the file
strictly (unknown keys and wrong types are errors naming the key) so a typo never silently
falls back to a default.
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bdi_rl.qlearning import LearningConfig
from bdi_rl.trace import TraceLevel
from bdi_rl.wire import WireError, parse_literal


class SpecError(ValueError):
    """A spec that cannot run; the message is one line naming the file and key."""


@dataclass
class EnvSpec:
    id: str
    """Registered Gymnasium id (``FrozenLake-v1``) or ``module:Class`` entry point."""
    kwargs: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments for the env constructor (``map_name``, ``is_slippery``, ``desc`` ...)."""
    max_episode_steps: int | None = None
    """Episode step limit; None keeps the env's own (a safe default when it has none)."""
    goals: list[list[int]] = field(default_factory=list)
    """FrozenLake only: goal cells ``[x, y]`` the map's goal moves to (start and holes stay);
    learners perceive ``goal(X, Y)``. Empty: the map's own goal."""
    goal_every: int = 0
    """Episodes before the goal moves on to the next of ``goals`` (cycling); needed when
    ``goals`` lists more than one."""


@dataclass
class AgentGroup:
    name: str
    """Group name; agents are ``name`` (count 1) or ``name-1`` ... ``name-N``."""
    count: int = 1
    """How many agents of this group run."""
    asl: str = "learner.asl"
    """Plan library: a path relative to the spec file, or a file shipped in ``bdi_rl/asl``."""
    role: Literal["learner", "coordinator"] = "learner"
    """``learner`` trains a Q-table; ``coordinator`` runs plans only (no env): it forms the
    team and assigns work. Every agent perceives ``coordinator(C)`` (the first coordinator)
    and ``teammates([...])`` (the other learners), so team plans know whom to talk to."""
    mode: Literal["step", "episode"] = "step"
    """``step``: one plan iteration per env step; ``episode``: Python runs whole episodes."""
    episodes: int | None = None
    """Training episodes for this group (default: the experiment's ``episodes``)."""
    learning: dict[str, Any] = field(default_factory=dict)
    """Overrides of the experiment's ``[learning]`` table for this group."""
    beliefs: list[str] = field(default_factory=list)
    """Initial beliefs added before the first reasoning cycle (AgentSpeak literals such as
    ``"share_every(5)"``): one plan library, tuned per experiment."""
    warm_start: str | None = None
    """Start from earlier Q-tables: a run directory (each agent takes ``qtables/<its
    name>.npz``) or one checkpoint file for every learner of the group. Relative to the spec
    file. Checked against this run's env before anything starts."""
    warm_epsilon: float | None = None
    """Epsilon a warm-started learner starts from (default: the group's ``epsilon_end``: it
    already knows the task); the schedule then goes on to ``epsilon_end`` as configured."""

    def agent_names(self) -> list[str]:
        if self.count == 1:
            return [self.name]
        return [f"{self.name}-{i}" for i in range(1, self.count + 1)]


@dataclass
class XmppSpec:
    server: str = "embedded"
    """``embedded`` (pyjabber in-process on loopback) or ``host:port`` of a running server."""
    domain: str = "localhost"
    """XMPP domain of every agent's JID."""
    port: int = 5222
    """Port for the embedded server (another free port is used if it is taken)."""


@dataclass
class TelemetrySpec:
    name: str = "telemetry"
    """Local part of the telemetry agent's JID."""
    flush_seconds: float = 0.2
    """Longest time an event waits in an agent before it is shipped."""


@dataclass
class ViewerSpec:
    enabled: bool = False
    """Start the web viewer with the run."""
    host: str = "127.0.0.1"
    """Bind address (loopback unless you mean to expose it)."""
    port: int = 8765
    """Viewer port."""


@dataclass
class ExperimentSpec:
    name: str
    """Experiment name, part of the run directory's name."""
    env: EnvSpec
    """The environment every learner trains in."""
    agents: list[AgentGroup]
    """Agent groups."""
    episodes: int = 1000
    """Training episodes per learner."""
    seed: int = 0
    """Base seed; learner ``i`` (over all groups, from 0) uses ``seed + i``."""
    trace: str = "step"
    """Trace level: ``episode`` < ``step`` < ``cycle``."""
    eval_episodes: int = 100
    """Greedy evaluation episodes after training (they never update the Q-table)."""
    checkpoint_every: int = 1000
    """Episodes between two Q-table checkpoints of a learner (0: only the final one). Each
    costs an fsync; on a short-episode env (FrozenLake 4x4, ~6k episodes/s) every 100 took
    ~4 % of the throughput, every 1000 is negligible and a resume re-runs at most 1000."""
    learning: LearningConfig = field(default_factory=LearningConfig)
    """Q-learning hyper-parameters shared by every group (groups may override)."""
    xmpp: XmppSpec = field(default_factory=XmppSpec)
    telemetry: TelemetrySpec = field(default_factory=TelemetrySpec)
    viewer: ViewerSpec = field(default_factory=ViewerSpec)

    def learning_for(self, group: AgentGroup) -> LearningConfig:
        """The group's learning config: the experiment's, with the group's overrides."""
        merged = {**dataclasses.asdict(self.learning), **group.learning}
        return _build(LearningConfig, merged, f"agents[{self.agents.index(group)}].learning.")

    def to_dict(self) -> dict[str, Any]:
        return _drop_none(dataclasses.asdict(self))

    def agent_names(self, role: str) -> list[str]:
        """Names of every agent with ``role``, in spec order."""
        return [name for g in self.agents if g.role == role for name in g.agent_names()]


def _drop_none(value: Any) -> Any:
    """TOML has no null: leave unset optional keys out of the resolved spec."""
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp)).replace("NoneType", "none")


def _check(value: Any, tp: Any, key: str) -> Any:
    """Return ``value`` converted to ``tp`` or raise SpecError naming ``key``."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(tp)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _check(value, option, key)
            except SpecError as exc:
                errors.append(str(exc))
        raise SpecError(errors[0])
    if origin is Literal:
        allowed = typing.get_args(tp)
        if value not in allowed:
            raise SpecError(f"{key}: must be one of {', '.join(map(repr, allowed))}, got {value!r}")
        return value
    if origin is list:
        (item_tp,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise SpecError(f"{key}: expected a list, got {type(value).__name__}")
        return [_check(v, item_tp, f"{key}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise SpecError(f"{key}: expected a table, got {type(value).__name__}")
        return dict(value)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise SpecError(f"{key}: expected a table, got {type(value).__name__}")
        return _build(tp, value, f"{key}.")
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SpecError(f"{key}: expected a number, got {value!r}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise SpecError(f"{key}: expected an integer, got {value!r}")
        return value
    if tp in (str, bool):
        if not isinstance(value, tp):
            raise SpecError(f"{key}: expected {_type_name(tp)}, got {value!r}")
        return value
    if tp is Any:
        return value
    raise TypeError(f"spec field type {tp!r} is not supported")  # a bug, not bad input


def _build(cls: type, data: dict[str, Any], prefix: str = "") -> Any:
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in data:
        if key not in fields:
            raise SpecError(f"{prefix}{key}: unknown key (known: {', '.join(fields)})")
    kwargs = {}
    for name, f in fields.items():
        if name in data:
            kwargs[name] = _check(data[name], hints[name], f"{prefix}{name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise SpecError(f"{prefix}{name}: missing required key")
    try:
        return cls(**kwargs)
    except ValueError as exc:
        message = str(exc)
        section = prefix.rstrip(".").split(".")[-1] + "."
        if message.startswith(section):  # the class already named its own section
            message = message[len(section):]
        raise SpecError(f"{prefix}{message}") from None


def _validate(spec: ExperimentSpec) -> None:
    positive = {"episodes": spec.episodes, "eval_episodes": spec.eval_episodes,
                "checkpoint_every": spec.checkpoint_every}
    for key, value in positive.items():
        if value < (1 if key == "episodes" else 0):
            raise SpecError(f"{key}: must be positive, got {value}")
    try:
        TraceLevel.parse(spec.trace)
    except ValueError as exc:
        raise SpecError(f"trace: {exc}") from None
    if not spec.agents:
        raise SpecError("agents: at least one agent group is needed")
    names: set[str] = set()
    for i, group in enumerate(spec.agents):
        if group.count < 1:
            raise SpecError(f"agents[{i}].count: must be at least 1, got {group.count}")
        if group.episodes is not None and group.episodes < 1:
            raise SpecError(f"agents[{i}].episodes: must be at least 1, got {group.episodes}")
        if not _is_jid_local(group.name):
            raise SpecError(
                f"agents[{i}].name: {group.name!r} must be lower-case letters, digits, '-' or '_'"
            )
        for agent in group.agent_names():
            if agent in names:
                raise SpecError(f"agents[{i}].name: agent name {agent!r} is used twice")
            names.add(agent)
        spec.learning_for(group)  # overrides are checked now, not mid-run
        if group.warm_epsilon is not None and not 0 <= group.warm_epsilon <= 1:
            raise SpecError(f"agents[{i}].warm_epsilon: must be in [0, 1], got {group.warm_epsilon}")
        if group.warm_start is not None and group.role != "learner":
            raise SpecError(f"agents[{i}].warm_start: only learners have Q-tables")
        for j, text in enumerate(group.beliefs):
            try:
                parse_literal(text)
            except WireError as exc:
                raise SpecError(f"agents[{i}].beliefs[{j}]: {exc}") from None
    if not spec.agent_names("learner"):
        raise SpecError("agents: at least one group needs role = \"learner\"")
    if spec.env.goal_every < 0 or (len(spec.env.goals) > 1 and spec.env.goal_every < 1):
        raise SpecError(f"env.goal_every: must be at least 1 when env.goals lists several goals, "
                        f"got {spec.env.goal_every}")
    if spec.env.max_episode_steps is not None and spec.env.max_episode_steps < 1:
        raise SpecError("env.max_episode_steps: must be at least 1")
    if spec.xmpp.server != "embedded" and not _is_host_port(spec.xmpp.server):
        raise SpecError(f"xmpp.server: expected 'embedded' or 'host:port', got {spec.xmpp.server!r}")
    if not _is_jid_local(spec.telemetry.name):
        raise SpecError("telemetry.name: must be lower-case letters, digits, '-' or '_'")
    if spec.telemetry.name in names:
        raise SpecError(f"telemetry.name: {spec.telemetry.name!r} is also an agent's name")


def _is_jid_local(name: str) -> bool:
    # Lower case only: pyjabber folds registrations but not addressees (DESIGN.md).
    return bool(name) and all(c.islower() or c.isdigit() or c in "-_" for c in name)


def _is_host_port(value: str) -> bool:
    host, _, port = value.rpartition(":")
    return bool(host) and port.isdigit() and 0 < int(port) < 65536


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
    if path.is_file():
        return path
    shipped = packaged_specs_dir() / (path.name if path.suffix else f"{path.name}.toml")
    if not path.exists() and shipped.is_file() and len(path.parts) <= 2:
        return shipped
    if path.is_dir():
        raise SpecError(f"{name}: is a directory, not a spec file")
    raise SpecError(f"{name}: no such spec file")


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


def load_spec(path: str | Path, overrides: dict[str, Any] | None = None) -> ExperimentSpec:
    """Read, check and resolve a spec file; ``overrides`` are top-level keys from the CLI."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise SpecError(f"{path}: no such spec file") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not a text file (a spec is UTF-8 TOML)") from None
    except IsADirectoryError:
        raise SpecError(f"{path}: is a directory, not a spec file") from None
    except OSError as exc:
        raise SpecError(f"{path}: cannot read: {exc.strerror}") from None
    data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    try:
        spec = _build(ExperimentSpec, data)
        _validate(spec)
        for i, group in enumerate(spec.agents):
            try:
                group.asl = str(resolve_asl(group.asl, path.parent))
            except FileNotFoundError:
                raise SpecError(f"agents[{i}].asl: no such plan file {group.asl!r}") from None
            if group.warm_start is not None:
                group.warm_start = str(_resolve_existing(group.warm_start, path.parent,
                                                         f"agents[{i}].warm_start"))
    except SpecError as exc:
        raise SpecError(f"{path}: {exc}") from None
    return spec

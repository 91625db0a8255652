"""What each kind of agent adds to the one agent class: a *role*, handed to
:class:`~bdi_rl.xmpp.agent.TracedBdiAgent` when it is made.

The agent runs the mind, the inbox and the trace shipper the same way for every kind; its role
adds internal actions and percepts, tells the stall watch (``bdi_rl.xmpp.liveness``) what else
can still happen in the agent, and adds to its ``agent.start``/``agent.stop`` events and its
``summary.json`` entry:

- :class:`AgentRole`: plans only (an agent made on its own, e.g. in the tests);
- :class:`CoordinatorRole`: a plans-only team member, ended by ``.finish``;
- :class:`CreatedRole`: an agent a plan created during the run (``.create_agent``);
- :class:`WorldRole`: the shared world's agent, hosting the world its seated learners step;
- :class:`LearnerRole`: a Q-learning agent, driven through the ``.rl_*`` actions.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Protocol, cast

from bdi_rl.bdi.actions import RlBridge
from bdi_rl.bdi.runtime import Actions
from bdi_rl.bdi.runtime import Agent as Mind
from bdi_rl.bdi.world import SeatClient, SharedWorld
from bdi_rl.trace.kinds import AgentStartData, WorldData
from bdi_rl.xmpp.wakeable import Wakeable


class RoleOwner(Protocol):
    """What the roles use of the agent they are part of (``agent.TracedBdiAgent``)."""

    asl_file: str
    finished: bool
    """it reached its end (``.finish``, ``.rl_finish``, its world done)"""
    failure: str | None
    """why its mind died"""
    stopped: str | None
    """why a plan ended it cleanly (``.kill_agent``, ``.stopMAS``)"""

    @property
    def bdi_loop(self) -> Wakeable:
        """its BDI loop, which a learner's world seat wakes when the world answers"""
        ...

    def mark_finished(self) -> None: ...


class AgentRole:
    """A plans-only agent's role, and the hooks every role may fill in (each a no-op here)."""

    #: What a stall report says of the agent when none of its intentions waits.
    nothing_left = "no intention left"

    agent: RoleOwner
    """the agent this role is part of (set by :meth:`attach`)"""

    def attach(self, agent: RoleOwner) -> None:
        """Called once by the agent this role is handed to, before its mind loads."""
        self.agent = agent

    def add_actions(self, actions: Actions) -> None:
        """The role's own internal actions, added before the plans are compiled."""

    def prepare_mind(self, mind: Mind) -> None:
        """What the mind gets before the team percepts and its first goal."""

    def start_data(self, data: AgentStartData) -> AgentStartData:
        """The ``agent.start`` event's data, given who the agent is and which plans it runs."""
        return data

    def can_act(self) -> bool:
        """Whether something outside the mind can still happen in this agent by itself."""
        return False

    def progress_mark(self) -> tuple[Any, ...]:
        """What changes, besides the mind, whenever the role does anything."""
        return ()

    def waits(self) -> str | None:
        """What the agent waits for, in words, when the role knows better than its mind."""
        return None

    def stop_data(self) -> dict[str, Any]:
        """What the role adds to the agent's ``agent.stop`` event."""
        return {}

    def summary(self) -> dict[str, Any]:
        """The agent's entry in ``summary.json`` (learners': ``bdi_rl.xmpp.summary``)."""
        return {}

    def after_burst(self) -> None:
        """Called after each burst of reasoning cycles (the mind may have just failed)."""

    def retiring(self) -> None:
        """Called as the agent stops for good while the run goes on (``.kill_agent``)."""


class CoordinatorRole(AgentRole):
    """A plans-only team member (no env): forms the team and hands out work.

    ``.finish`` ends it, like ``.rl_finish`` ends a learner."""

    nothing_left = "no intention left, .finish never called"

    def add_actions(self, actions: Actions) -> None:
        actions.add_procedure(".finish", (), self.agent.mark_finished)

    def summary(self) -> dict[str, Any]:
        return {"role": "coordinator"}


class CreatedRole(AgentRole):
    """An agent a plan created during the run (``.create_agent``, bdi_rl/xmpp/society.py):
    plans only; it ends when killed, at ``.stopMAS`` or with the run."""

    def __init__(self, creator: str) -> None:
        self.creator = creator

    def summary(self) -> dict[str, Any]:
        return {"role": "created", "created_by": self.creator, "asl": str(self.agent.asl_file)}


class WorldRole(AgentRole):
    """The shared world's agent (``[world]``): it hosts the world its seated learners step
    together (``bdi.world.SharedWorld``), traces every joint step, and is done when they are."""

    def __init__(self, shared: SharedWorld) -> None:
        self.shared = shared

    def attach(self, agent: RoleOwner) -> None:
        super().attach(agent)
        self.shared.on_finished = agent.mark_finished

    def add_actions(self, actions: Actions) -> None:
        actions.add_function(".world_info", (), self._info)

    def _info(self) -> list[Any]:
        """``.world_info(I)``: ``I = [Env, Episodes, Steps]``, where the world is (world.asl)."""
        return [self.shared.world.env_id, self.shared.episodes, self.shared.steps]

    def can_act(self) -> bool:
        return self.shared.deadline_armed  # a deadline still to pass

    def progress_mark(self) -> tuple[Any, ...]:
        return (self.shared.episodes, self.shared.steps)

    def waits(self) -> str:
        return self.shared.waiting_for()

    def start_data(self, data: AgentStartData) -> AgentStartData:
        world = self.shared.world
        data = {**data, "env": world.env_id}
        data["seats"] = [[seat, world.bound.get(seat, seat)] for seat in world.agents]
        grid = world.grid()
        if grid is not None:
            data["world"] = cast(WorldData, grid)
        return data

    def stop_data(self) -> dict[str, Any]:
        """How far the world went."""
        stop: dict[str, Any] = {"joint_episodes": self.shared.episodes, "joint_steps": self.shared.steps}
        if self.shared.left:
            stop["seats_left"] = list(self.shared.left)
        return stop

    def summary(self) -> dict[str, Any]:
        return world_summary(self.stop_data())


def world_summary(stop: Mapping[str, Any]) -> dict[str, Any]:
    """The world agent's ``summary.json`` entry from its ``agent.stop`` data: the same from
    ``bdi-rl run`` (the live agent) and from the telemetry role (the trace)."""
    entry = {"role": "world", "episodes": stop.get("joint_episodes", 0), "joint_steps": stop.get("joint_steps", 0)}
    if stop.get("seats_left"):
        entry["seats_left"] = stop["seats_left"]
    return entry


class LearnerRole(AgentRole):
    """A Q-learning BDI agent: its plans drive the learner through ``.rl_*`` actions."""

    nothing_left = "no intention left, .rl_finish never called"

    def __init__(self, bridge: RlBridge, mode: str, seat: SeatClient | None = None) -> None:
        self.bridge = bridge
        self.mode = mode
        self.seat = seat
        """its seat in a shared world"""

    def attach(self, agent: RoleOwner) -> None:
        super().attach(agent)
        self.bridge.on_finish = self._finished
        if self.seat is not None:
            self.seat.wake = agent.bdi_loop.wake

    def _finished(self) -> None:
        if self.seat is not None:
            self.seat.finish()
        self.agent.mark_finished()

    def stop_data(self) -> dict[str, Any]:
        stats = self.bridge.stats
        stop: dict[str, Any] = {"replayed_steps": stats.replayed_steps} if stats.replayed_steps else {}
        if stats.training is not None and stats.training.end is not None:  # the trace's summary times the run so
            stop["training"] = [stats.training.start, stats.training.end]
        return stop

    def keep_learned(self) -> None:
        """Stopped before it finished (Ctrl-C, ``.stopMAS``, ``.kill_agent``): its training
        clock stops (its throughput counts the time it trained) and its table, as it stands,
        is checkpointed (written once telemetry holds the events before it)."""
        self.bridge.session.stop_training_clock()
        if not self.agent.finished:
            self.bridge.checkpoints.save()

    def retiring(self) -> None:
        self.keep_learned()
        if self.seat is not None:  # the world must not wait for it
            self.seat.finish(self.agent.stopped)

    def after_burst(self) -> None:
        failure = self.agent.failure
        if failure is not None and self.seat is not None:  # the world must not wait for it
            self.seat.finish(f"its mind failed: {failure}")

    def add_actions(self, actions: Actions) -> None:
        self.bridge.register(actions)
        if self.seat is not None:
            self.seat.register(actions)

    def start_data(self, data: AgentStartData) -> AgentStartData:
        """Also the env, its action names (a trace reader says "left", not "0") and, for a
        grid world, its map (readers draw the agent's episodes on it)."""
        env = self.bridge.session.env
        data = {**data, "env": env.env_id, "actions": env.action_names}
        world = env.world()
        if world is not None:
            data["world"] = cast(WorldData, world)
        return data

    def prepare_mind(self, mind: Mind) -> None:
        self.bridge.start(mind, self.mode)
        # .random in its plans draws from its own stream, seeded like its learner (a run's
        # plan choices repeat with its seed: the coordination plans explore with it)
        mind.random = random.Random(self.bridge.session.seed)


def learner_of(agent: Any) -> LearnerRole | None:
    """The learner role of ``agent`` (None: it is no learner, or a stand-in without a role)."""
    role = getattr(agent, "role", None)
    return role if isinstance(role, LearnerRole) else None


def world_of(agent: Any) -> WorldRole | None:
    """The world role of ``agent`` (None: it hosts no shared world)."""
    role = agent.role
    return role if isinstance(role, WorldRole) else None

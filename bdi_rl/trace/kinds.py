"""The trace's kinds: the one place a kind's name is written.

What an event may be: the formats' names, the levels, the kinds (one constant each), the
level that records each, which kinds live in step records, and the fields of each kind's
``data`` (a TypedDict each: writers keep building plain dicts, at no cost, that mypy checks
where they are annotated; :mod:`bdi_rl.trace.check` builds its check of every line from
them). Everything else imports the constants (``tests/test_events.py`` holds the package to
that). It imports nothing of bdi-rl: every other trace module builds on it.

Its length is the TypedDicts': one per kind, each field with what it means.
"""

# No ``from __future__ import annotations`` here: on Python 3.11 it hides NotRequired from
# TypedDict's required keys, which the line check is built from.
from enum import IntEnum
from typing import Any, Final, NotRequired, TypedDict

SCHEMA = "bdi-rl.trace/2"
#: The format before step records (every step-level event a line of its own): still read.
SCHEMA_V1 = "bdi-rl.trace/1"
#: Longest literal / message text kept in one event (a shared-experience literal is ~12 KB).
MAX_TEXT_CHARS = 1024


def clip_text(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was (the trace stays small
    even when agents exchange large literals)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


class TraceLevel(IntEnum):
    """How much an agent records: each level includes the ones below it."""

    EPISODE = 0
    STEP = 1
    CYCLE = 2

    @classmethod
    def parse(cls, name: str) -> "TraceLevel":
        try:
            return cls[name.upper()]
        except KeyError:
            raise ValueError(f"trace level must be one of episode, step, cycle; got {name!r}") from None


#: ``TraceLevel.STEP`` bound once, for the checks made at every env step: an enum class's
#: attribute is looked up through the hook its metaclass's ``__getattr__`` installs, ~850
#: instructions from compiled code (callgrind), where a module constant costs ~10.
STEP_LEVEL: Final = TraceLevel.STEP


# -- the kinds ----------------------------------------------------------------------------
# Plain str constants (module globals: as cheap as a literal where events are emitted).
RUN_START: Final = "run.start"
RUN_STOP: Final = "run.stop"
RUN_RESUME: Final = "run.resume"
TELEMETRY_RESTART: Final = "telemetry.restart"
AGENT_START: Final = "agent.start"
AGENT_STOP: Final = "agent.stop"
EPISODE_END: Final = "episode.end"
EVAL: Final = "eval"
QTABLE_SAVE: Final = "qtable.save"
QTABLE_LOAD: Final = "qtable.load"
MSG_SEND: Final = "msg.send"
MSG_RECV: Final = "msg.recv"
INTENTION_FAIL: Final = "intention.fail"
XMPP_RECONNECT: Final = "xmpp.reconnect"
BELIEF_ADD: Final = "belief.add"
BELIEF_DEL: Final = "belief.del"
GOAL_ADD: Final = "goal.add"
INTENTION_START: Final = "intention.start"
INTENTION_END: Final = "intention.end"
ACTION: Final = "action"
RL_STEP: Final = "rl.step"
CYCLE: Final = "cycle"
OPTIONS: Final = "options"
INTENTIONS: Final = "intentions"
STEPS: Final = "steps"
WORLD_STEP: Final = "world.step"
WORLD_LATE: Final = "world.late"
PLAN_CHOICE: Final = "plan.choice"
PLAN_VALUE: Final = "plan.value"

#: The kinds format 2 keeps in step records (``bdi_rl.trace.steps``), by op code: the code is
#: the index, so never reorder, only append. Format 1 wrote each as a line of its own.
RECORD_KINDS: tuple[str, ...] = (
    BELIEF_ADD,
    BELIEF_DEL,
    GOAL_ADD,
    INTENTION_START,
    INTENTION_END,
    ACTION,
    RL_STEP,
    CYCLE,
    OPTIONS,
    INTENTIONS,
)

#: The lowest level at which each kind is recorded.
KIND_LEVEL: dict[str, TraceLevel] = {
    RUN_START: TraceLevel.EPISODE,
    RUN_STOP: TraceLevel.EPISODE,
    RUN_RESUME: TraceLevel.EPISODE,
    TELEMETRY_RESTART: TraceLevel.EPISODE,
    AGENT_START: TraceLevel.EPISODE,
    AGENT_STOP: TraceLevel.EPISODE,
    EPISODE_END: TraceLevel.EPISODE,
    EVAL: TraceLevel.EPISODE,
    QTABLE_SAVE: TraceLevel.EPISODE,
    QTABLE_LOAD: TraceLevel.EPISODE,
    MSG_SEND: TraceLevel.EPISODE,
    MSG_RECV: TraceLevel.EPISODE,
    INTENTION_FAIL: TraceLevel.EPISODE,
    XMPP_RECONNECT: TraceLevel.EPISODE,
    BELIEF_ADD: TraceLevel.STEP,
    BELIEF_DEL: TraceLevel.STEP,
    GOAL_ADD: TraceLevel.STEP,
    INTENTION_START: TraceLevel.STEP,
    INTENTION_END: TraceLevel.STEP,
    ACTION: TraceLevel.STEP,
    RL_STEP: TraceLevel.STEP,
    CYCLE: TraceLevel.CYCLE,
    OPTIONS: TraceLevel.CYCLE,
    INTENTIONS: TraceLevel.CYCLE,
    STEPS: TraceLevel.STEP,
    WORLD_STEP: TraceLevel.STEP,
    WORLD_LATE: TraceLevel.EPISODE,
    PLAN_CHOICE: TraceLevel.STEP,
    PLAN_VALUE: TraceLevel.STEP,
}


# -- each kind's data -----------------------------------------------------------------------
# What the writers put in ``data``, key for key: TypedDicts, so writers keep building plain
# dicts (no cost) that mypy checks where they are annotated, and telemetry checks every line
# received against them (:func:`check_event`): a missing, extra or wrongly typed field is
# refused. A float that is NaN or infinite is written as null (JSON has neither), so the
# check takes null for any float.


class RunStartData(TypedDict):
    spec: str
    env: str
    agents: list[str]
    """the agents' names (``bdi-rl run``) or bare JIDs (the telemetry role)"""


class RunStopData(TypedDict):
    failures: dict[str, str]
    """why each agent that did not finish stopped, by JID"""


class RunResumeData(TypedDict):
    agents: dict[str, int]
    """each learner's JID -> the episode its trace goes on from (readers drop later ones)"""


class TelemetryRestartData(TypedDict):
    recovered_events: int


class WorldData(TypedDict):
    """A grid world's map (``rl.envs.EnvAdapter.world``), so readers draw episodes on it."""

    family: str
    """frozenlake, cliffwalking, taxi or lbforaging (a shared world's open field)"""
    rows: int
    cols: int
    map: list[str]
    """a string per row, a letter per cell (FrozenLake S F H G; CliffWalking S C G .; Taxi R G Y B .)"""
    walls: NotRequired[list[list[int]]]
    """Taxi: [row, col] of each cell with a wall on its east side"""


class AgentStartData(TypedDict):
    jid: str
    asl: str
    env: NotRequired[str]
    """learners: the env id"""
    actions: NotRequired[list[str]]
    """learners: what each action index does ("left", ...)"""
    world: NotRequired[WorldData]
    """learners on a grid world: its map (traces before it lack it: readers rebuild it from the spec)"""
    seats: NotRequired[list[list[str]]]
    """a shared world's agent: ``[seat, agent name]`` of each of its agents, in its order"""


class AgentStopData(TypedDict):
    reason: str
    """why it stopped: "finished", "interrupted" or the failure"""
    emitted: int
    """events the agent emitted, this one included"""
    replayed_steps: NotRequired[int]
    training: NotRequired[list[float]]
    """learners: ``[start, end]`` of its training on the events' clock (first reset, last
    training episode), so a summary built from the trace times the run as ``bdi-rl run`` does"""
    joint_episodes: NotRequired[int]
    """a shared world's agent: the joint episodes it began"""
    joint_steps: NotRequired[int]
    """a shared world's agent: the joint steps it took"""
    seats_left: NotRequired[list[str]]
    """a shared world's agent: the agents that left it before they finished training (their
    seats played the default action from then on)"""


EpisodeEndData = TypedDict(
    "EpisodeEndData",
    {
        "return": float,
        "length": int,
        "outcome": str,
        "epsilon": float,
        "goal": NotRequired[list[int]],  # moving goals: the episode's goal cell
        "success": NotRequired[bool],  # by the env kind's rule (rl.success); older traces lack it
    },
)


class EvalData(TypedDict):
    episodes: int
    mean_return: float
    success_rate: float
    """by the env kind's rule (rl.success)"""
    mean_length: float
    after_episodes: NotRequired[int]
    """training episodes done when it ran (``eval_every``); older traces lack it"""
    seconds: NotRequired[float]
    """its wall time (summaries leave evaluations during training out of training time)"""


class WorldStepData(TypedDict):
    """One step of a shared world (``bdi.world``), written once by the world's own tracer:
    every acting agent's state, action and reward, in the world's seat order."""

    episode: int
    """the world's joint episode, from 0 (as each learner numbers its episodes)"""
    step: int
    """the step within it, from 1"""
    agents: list[str]
    """the bdi-rl agents that acted (their seats' order)"""
    states: list[int]
    """each one's observation when it chose"""
    actions: list[int]
    rewards: list[float]
    done: bool
    """the episode ended with this step"""
    defaulted: NotRequired[list[str]]
    """agents that had not chosen by the deadline: they played the world's default action"""
    positions: NotRequired[list[list[int]]]
    """a grid world: every agent's ``[x, y]`` after the step, in the world's order (all of
    ``agent.start``'s ``seats``, not only those that acted)"""
    items: NotRequired[list[list[int]]]
    """a grid world: ``[x, y, level]`` of each item still there after the step (lbforaging's food)"""


class WorldLateData(TypedDict):
    """A barrier of a shared world went on at its deadline without some of its agents
    (``bdi.world``): written by the world agent."""

    call: str
    """the barrier: ``.rl_reset``, ``.rl_act`` or ``.rl_evaluate``"""
    agents: list[str]
    """the agents it went on without (their seats played the default action)"""
    stuck: NotRequired[list[str]]
    """those of them the world finished as stuck (too many deadlines missed in a row)"""


class QtableSaveData(TypedDict):
    path: str
    """relative to the run directory"""
    episodes: int


class QtableLoadData(TypedDict):
    path: str
    episodes: int
    checksum: str | None
    """None for a checkpoint of format 1"""
    epsilon: float
    task_change: str | None


class MessageText(TypedDict):
    """A message body as ``msg.send`` and ``msg.recv`` carry it."""

    content: str
    """the body, clipped to MAX_TEXT_CHARS"""
    content_chars: NotRequired[int]
    """the body's length when it was clipped"""


class MsgSendData(TypedDict):
    to: str
    performative: str
    content: str
    content_chars: NotRequired[int]


MsgRecvData = TypedDict(
    "MsgRecvData",
    {
        "from": str,
        "performative": str | None,  # None: a message without an ilf_type
        "content": str,
        "content_chars": NotRequired[int],
        "rejected": NotRequired[str],  # why the message was refused
    },
)


class IntentionFailData(TypedDict):
    plan: str | None
    error: str


class XmppReconnectData(TypedDict):
    down_s: float


class BeliefAddData(TypedDict):
    belief: str
    source: str
    """whose belief: "self", "percept" or the telling agent's JID"""
    sources: NotRequired[list[str]]
    """every source, when there are several (a belief told by four learners; its removal
    when the last source goes); ``source`` is the first of them"""


class BeliefDelData(TypedDict):
    belief: str
    source: str
    sources: NotRequired[list[str]]


class GoalAddData(TypedDict):
    goal: str
    source: str


class IntentionStartData(TypedDict):
    trigger: str
    plan: str
    source: str


class IntentionEndData(TypedDict):
    plan: str


class ActionData(TypedDict):
    name: str
    args: list[Any]
    result: NotRequired[Any]
    """functions only"""


class RlStepData(TypedDict):
    s: int
    a: int
    r: float
    s2: int
    done: bool
    q_before: float
    q_after: float
    epsilon: float
    q: NotRequired[list[float]]
    """Q[s] the action was chosen from"""


class CycleData(TypedDict):
    n: int
    plan: str | None
    depth: int
    line: int | None
    intentions: int
    events: NotRequired[list[str]]
    """format 2: the events this cycle turned into intentions, in the order it took them"""
    pending: NotRequired[list[str]]
    """format 2: the events still waiting when the cycle ended"""


class OptionsData(TypedDict):
    """A plan selection (Jason's "options"): for an event, the plans whose trigger matches
    (relevant), those whose context holds too (applicable), and the one chosen."""

    event: str
    relevant: list[str]
    applicable: list[str]
    selected: str | None


class PlanChoiceData(TypedDict):
    """A learned choice among a goal's applicable plans (``bdi_rl.bdi.options``): the goal,
    its abstract state, each option with its value then (source order), the plan chosen, and
    whether it was chosen to explore (with probability ``epsilon``) or as the best."""

    goal: str
    state: str
    options: list[str]
    values: list[float]
    chosen: str
    exploring: bool
    epsilon: float


class PlanValueData(TypedDict):
    """A chosen plan ended and its value learned (SMDP Q-learning): how it ended
    (``achieved``, ``failed``, or cut by the ``episode_end``), the discounted reward the env
    paid while it ran over ``steps`` env steps, the state it ended in, and its value in the
    state it was chosen in, before and after."""

    goal: str
    state: str
    plan: str
    outcome: str
    reward: float
    steps: int
    next_state: str
    before: float
    after: float


class IntendedMeans(TypedDict):
    """One frame of an intention: the plan pushed for ``trigger``, and where it is."""

    trigger: str
    plan: str
    file: str
    line: int
    """of the instruction it runs next (its first, when just pushed)"""


class StackData(TypedDict):
    id: int
    means: list[IntendedMeans]
    """the stack, bottom (the intention's first plan) first"""
    state: str
    """"running", "current" (the one the cycle runs) or "suspended" (.wait, an ask)"""


class IntentionsData(TypedDict):
    """Every intention's stack of intended means, after a plan was pushed or popped."""

    intentions: list[StackData]


class RlColumns(TypedDict):
    """A record's Q-updates, one row per ``rl.step``. ``q`` holds, row after row, Q[s] as
    each action was chosen from it (each as long as the env has actions: row k is
    ``q[k*n : (k+1)*n]`` with ``n = len(q) // len(s)``, and Q[s, a] before the update is its
    element ``a``); ``done`` lists the rows that ended an episode; ``epsilon[j]`` holds from
    row ``eps_rows[j]`` on."""

    s: list[int]
    a: list[int]
    r: list[float]
    s2: list[int]
    done: list[int]
    q_after: list[float]
    q: list[float]
    epsilon: list[float]
    eps_rows: list[int]
    q_before: NotRequired[list[float]]
    """only in a record whose rows have no Q row (``q`` empty): Q[s, a] before, per row"""


class Keyframe(TypedDict):
    """The mind before a record's first entry, as definition ids."""

    beliefs: list[int]
    """``belief.add`` definitions: every belief with its source"""
    intentions: list[int]
    """``intention.start`` definitions: every running plan, oldest first"""


class StepsData(TypedDict):
    """A step record (format 2): the step-level events of one stretch of an agent's life."""

    ops: list[int]
    """per event, its kind as an index into RECORD_KINDS"""
    refs: list[int]
    """per event, its data: a definition id, or for rl.step / cycle a row of ``rl`` / ``cycles``"""
    at: list[int]
    """(entry, episode, step) triples: events from ``entry`` on happened at (episode, step)"""
    def0: int
    """the id of ``defs[0]``: each agent's definitions are numbered from 0, without gaps"""
    defs: list[dict[str, Any]]
    """new definitions, each the data of the event kind that refers to it"""
    keyframe: NotRequired[Keyframe]
    rl: NotRequired[RlColumns]
    cycles: NotRequired[list[CycleData]]


#: Each kind's ``data``.
KIND_DATA: dict[str, Any] = {
    RUN_START: RunStartData,
    RUN_STOP: RunStopData,
    RUN_RESUME: RunResumeData,
    TELEMETRY_RESTART: TelemetryRestartData,
    AGENT_START: AgentStartData,
    AGENT_STOP: AgentStopData,
    EPISODE_END: EpisodeEndData,
    EVAL: EvalData,
    QTABLE_SAVE: QtableSaveData,
    QTABLE_LOAD: QtableLoadData,
    MSG_SEND: MsgSendData,
    MSG_RECV: MsgRecvData,
    INTENTION_FAIL: IntentionFailData,
    XMPP_RECONNECT: XmppReconnectData,
    BELIEF_ADD: BeliefAddData,
    BELIEF_DEL: BeliefDelData,
    GOAL_ADD: GoalAddData,
    INTENTION_START: IntentionStartData,
    INTENTION_END: IntentionEndData,
    ACTION: ActionData,
    RL_STEP: RlStepData,
    CYCLE: CycleData,
    OPTIONS: OptionsData,
    PLAN_CHOICE: PlanChoiceData,
    PLAN_VALUE: PlanValueData,
    INTENTIONS: IntentionsData,
    STEPS: StepsData,
    WORLD_STEP: WorldStepData,
    WORLD_LATE: WorldLateData,
}
if KIND_DATA.keys() != KIND_LEVEL.keys():
    raise RuntimeError("trace.kinds: every kind needs a level in KIND_LEVEL and data in KIND_DATA")

#: The kinds a line may have in each format: format 1 wrote every kind it knew as a line;
#: format 2 writes the record kinds only inside ``steps`` lines.
LINE_KINDS = {
    SCHEMA_V1: tuple(kind for kind in KIND_DATA if kind not in (OPTIONS, INTENTIONS, STEPS)),
    SCHEMA: tuple(kind for kind in KIND_DATA if kind not in RECORD_KINDS),
}

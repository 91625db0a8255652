"""The one module of kinds (``bdi_rl.trace.kinds``): the format it pins, the data check
telemetry runs with it, real traces passing that check, and no kind named anywhere else."""

from __future__ import annotations

import ast
import math
import re
import typing
from pathlib import Path

import orjson
import pytest

from bdi_rl.bdi.mind import load_mind
from bdi_rl.readers.viewer import STATIC, create_app
from bdi_rl.trace import kinds as registry
from bdi_rl.trace.batch import decode_batch, encode_batch
from bdi_rl.trace.errors import TraceFileError, TraceFormatError
from bdi_rl.trace.kinds import KIND_DATA, KIND_LEVEL, SCHEMA, SCHEMA_V1, TraceLevel
from bdi_rl.trace.reading import check_trace, read_trace
from bdi_rl.trace.steps import expanded
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp.telemetry import TraceLog
from tests.conftest import run_cli, run_named
from tests.test_mind import _actions, _run
from tests.test_team import _team_spec

PACKAGE = Path(registry.__file__).resolve().parent.parent

#: The file format "bdi-rl.trace/2", written out: each kind, the level that records it, the
#: keys of its data (required, optional). Changing any of it changes the format. The
#: step-level kinds of RECORD_KINDS are written inside ``steps`` lines (by op code: their
#: order is the format too); format 1 wrote each as a line and knew no options, intentions or steps.
FORMAT: dict[str, tuple[str, set[str], set[str]]] = {
    "run.start": ("episode", {"spec", "env", "agents"}, set()),
    "run.stop": ("episode", {"failures"}, set()),
    "run.resume": ("episode", {"agents"}, set()),
    "telemetry.restart": ("episode", {"recovered_events"}, set()),
    "agent.start": ("episode", {"jid", "asl"}, {"env", "actions", "world", "seats"}),
    "agent.stop": (
        "episode",
        {"reason", "emitted"},
        {"replayed_steps", "training", "joint_episodes", "joint_steps", "seats_left"},
    ),
    "episode.end": ("episode", {"return", "length", "outcome", "epsilon"}, {"goal", "success"}),
    "eval": ("episode", {"episodes", "mean_return", "success_rate", "mean_length"}, {"after_episodes", "seconds"}),
    "qtable.save": ("episode", {"path", "episodes"}, set()),
    "qtable.load": ("episode", {"path", "episodes", "checksum", "epsilon", "task_change"}, set()),
    "msg.send": ("episode", {"to", "performative", "content"}, {"content_chars"}),
    "msg.recv": ("episode", {"from", "performative", "content"}, {"content_chars", "rejected"}),
    "intention.fail": ("episode", {"plan", "error"}, set()),
    "xmpp.reconnect": ("episode", {"down_s"}, set()),
    "belief.add": ("step", {"belief", "source"}, {"sources"}),
    "belief.del": ("step", {"belief", "source"}, {"sources"}),
    "goal.add": ("step", {"goal", "source"}, set()),
    "intention.start": ("step", {"trigger", "plan", "source"}, set()),
    "intention.end": ("step", {"plan"}, set()),
    "action": ("step", {"name", "args"}, {"result"}),
    "rl.step": ("step", {"s", "a", "r", "s2", "done", "q_before", "q_after", "epsilon"}, {"q"}),
    "cycle": ("cycle", {"n", "plan", "depth", "line", "intentions"}, {"events", "pending"}),
    "options": ("cycle", {"event", "relevant", "applicable", "selected"}, set()),
    "intentions": ("cycle", {"intentions"}, set()),
    "steps": ("step", {"ops", "refs", "at", "def0", "defs"}, {"keyframe", "rl", "cycles"}),
    "world.step": (
        "step",
        {"episode", "step", "agents", "states", "actions", "rewards", "done"},
        {"defaulted", "positions", "items"},
    ),
    "world.late": ("episode", {"call", "agents"}, {"stuck"}),
    "plan.choice": ("step", {"goal", "state", "options", "values", "chosen", "exploring", "epsilon"}, set()),
    "plan.value": (
        "step",
        {"goal", "state", "plan", "outcome", "reward", "steps", "next_state", "before", "after"},
        set(),
    ),
}
#: The op code of each kind a step record holds.
RECORD_OPS = [
    "belief.add",
    "belief.del",
    "goal.add",
    "intention.start",
    "intention.end",
    "action",
    "rl.step",
    "cycle",
    "options",
    "intentions",
]
#: The fields (required, optional) of what ``steps`` data holds besides its definitions.
STEPS_PARTS = {
    "rl": ({"s", "a", "r", "s2", "done", "q_after", "q", "epsilon", "eps_rows"}, {"q_before"}),
    "keyframe": ({"beliefs", "intentions"}, set()),
    "intentions": ({"id", "means", "state"}, set()),  # each stack of an ``intentions`` event
    "means": ({"trigger", "plan", "file", "line"}, set()),  # each frame of a stack
}

STEP = {
    "s": 3,
    "a": 1,
    "r": 0.0,
    "s2": 7,
    "done": False,
    "q_before": 0.5,
    "q_after": 0.25,
    "epsilon": 0.1,
    "q": [0.25, 0.5, 0.125, 0.0],
}


def _event(kind: str, data: dict, seq: int = 0) -> dict:
    return {
        "schema": SCHEMA,
        "run": "r",
        "agent": "a@x",
        "seq": seq,
        "ts": 1.5,
        "kind": kind,
        "episode": 0,
        "step": 0,
        "data": data,
    }


def test_the_module_defines_the_format_as_it_is():
    assert {kind: level.name.lower() for kind, level in KIND_LEVEL.items()} == {
        kind: level for kind, (level, _, _) in FORMAT.items()
    }
    assert {
        kind: (set(record.__required_keys__), set(record.__optional_keys__)) for kind, record in KIND_DATA.items()
    } == {kind: (req, opt) for kind, (_, req, opt) in FORMAT.items()}
    constants = {
        name: value
        for name, value in vars(registry).items()
        if name.isupper() and isinstance(value, str) and value in KIND_LEVEL
    }
    assert sorted(constants.values()) == sorted(KIND_LEVEL)  # one constant per kind
    assert all(name == kind.upper().replace(".", "_") for name, kind in constants.items())
    assert (registry.SCHEMA, registry.SCHEMA_V1) == ("bdi-rl.trace/2", "bdi-rl.trace/1")
    assert list(registry.RECORD_KINDS) == RECORD_OPS
    assert set(registry.LINE_KINDS[registry.SCHEMA]) == set(FORMAT) - set(RECORD_OPS)
    assert set(registry.LINE_KINDS[registry.SCHEMA_V1]) == set(FORMAT) - {"options", "intentions", "steps"}
    hints = typing.get_type_hints(KIND_DATA["steps"])
    parts = {
        "rl": hints["rl"],
        "keyframe": hints["keyframe"],
        "intentions": typing.get_args(typing.get_type_hints(KIND_DATA["intentions"])["intentions"])[0],
    }
    parts["means"] = typing.get_args(typing.get_type_hints(parts["intentions"])["means"])[0]
    assert {
        name: (set(record.__required_keys__), set(record.__optional_keys__)) for name, record in parts.items()
    } == STEPS_PARTS


def _steps_data(**changes) -> dict:
    """A real record's data (a percept, a Q-update), with ``changes``."""
    tracer = Tracer("r", "a@x", TraceLevel.STEP)
    tracer.emit(registry.BELIEF_ADD, {"belief": "state(3)", "source": "percept"})
    tracer.emit(registry.RL_STEP, STEP)
    tracer.flush_record()
    return {**tracer.pending[0]["data"], **changes}


END = {"return": 1.0, "length": 3, "outcome": "goal", "epsilon": 0.5}
RL = _steps_data()["rl"]


@pytest.mark.parametrize(
    "schema, kind, data, field",
    [
        (SCHEMA, "episode.end", {**END, "length": "three"}, "`data.length`"),
        (SCHEMA, "episode.end", {**END, "goal": [3, "x"]}, "`data.goal[1]`"),
        (SCHEMA, "episode.end", {k: v for k, v in END.items() if k != "outcome"}, "field `outcome`"),
        (SCHEMA, "episode.end", {**END, "note": 1}, "field `note`"),
        (SCHEMA, "steps", _steps_data(rl={**RL, "s": ["three"]}), "`data.rl.s[0]`"),
        (SCHEMA, "steps", _steps_data(rl={**RL, "r": ["high"]}), "`data.rl.r[0]`"),
        (SCHEMA, "steps", _steps_data(ops="0,6"), "`data.ops`"),
        (SCHEMA, "steps", _steps_data(defs=[7]), "`data.defs[0]`"),
        (SCHEMA, "steps", {k: v for k, v in _steps_data().items() if k != "def0"}, "field `def0`"),
        (SCHEMA, "steps", _steps_data(note=1), "field `note`"),
        (SCHEMA, "steps", _steps_data(refs=[0]), "2 ops"),  # the record's own check (check_record)
        # format 1 (old traces): a step-level kind's line checked field by field as ever
        (SCHEMA_V1, "rl.step", {**STEP, "s": "three"}, "`data.s`"),
        (SCHEMA_V1, "rl.step", {**STEP, "q": [0.5, "high"]}, "`data.q[1]`"),
        (SCHEMA_V1, "rl.step", {**STEP, "done": 0}, "`data.done`"),
        (SCHEMA_V1, "rl.step", {k: v for k, v in STEP.items() if k != "a"}, "field `a`"),
        (SCHEMA_V1, "rl.step", {**STEP, "note": 1}, "field `note`"),
    ],
)
def test_telemetry_refuses_data_that_is_not_its_kinds_naming_kind_and_field(tmp_path, schema, kind, data, field):
    event = {**_event(kind, data), "schema": schema}
    body = encode_batch("r", "a@x", [event])
    with pytest.raises(TraceFormatError, match=rf"event seq 0: {re.escape(kind)} data: .*" + re.escape(field)):
        decode_batch(body)
    path = tmp_path / "trace.jsonl"  # a trace file with such a line is not continued either
    path.write_bytes(orjson.dumps(event) + b"\n")
    with pytest.raises(TraceFileError, match=rf"trace\.jsonl:1: {re.escape(kind)} data: .*" + re.escape(field)):
        TraceLog(path, "r")


def test_data_the_writers_build_passes_and_a_non_finite_float_is_written_as_null():
    tracer = Tracer("r", "a@x", TraceLevel.STEP)
    tracer.emit(registry.RL_STEP, {**STEP, "q_after": math.nan, "q": [math.inf, 0.0]})
    tracer.emit(
        registry.EPISODE_END, {"return": -math.inf, "length": 3, "outcome": "goal", "epsilon": 0.5, "goal": [3, 3]}
    )
    tracer.emit(registry.MSG_RECV, {"from": "b@x", "performative": None, "content": "", "rejected": "why"})
    _, body = tracer.next_batch()
    record, end, _ = decode_batch(body).events
    assert (record["data"]["rl"]["q_after"], end["data"]["return"]) == ([None], None)
    step = expanded([record])[0]["data"]  # Q[s] as the record holds it
    assert (step["q_after"], step["q_before"], step["q"]) == (None, 0.0, [None, 0.0])


def test_the_minds_events_pass_the_check(tmp_path):
    """Every kind the mind writes, at cycle level, failures included, is read back by telemetry."""
    (tmp_path / "agent.asl").write_text(
        "count(0).\n!start.\n!bad.\n"
        "@start +!start : count(N) <- -+count(N + 1); !tick; .note(N).\n"
        "@tick +!tick <- .note(9).\n@bad +!bad <- .boom.\n"
    )
    tracer = Tracer("r", "a@x", TraceLevel.CYCLE)
    _run(load_mind(tmp_path / "agent.asl", _actions([]), "a", tracer))
    tracer.flush_record()
    _, body = tracer.next_batch()
    batch = decode_batch(body)
    assert set(batch.kinds) == {"steps", "intention.fail"}
    written = {e["kind"] for e in expanded(batch.events)}  # format 2 traces every internal action (.note)
    assert written == {
        "belief.add",
        "belief.del",
        "goal.add",
        "intention.start",
        "intention.end",
        "action",
        "intention.fail",
        "cycle",
        "options",
        "intentions",
    }


@pytest.mark.slow
def test_every_event_of_a_real_run_is_of_a_known_kind_with_its_data(tmp_path):
    """A team (a coordinator and three learners that talk) traced at cycle level: the trace
    telemetry wrote passes the check line by line (the check a resumed run starts with)."""
    spec = tmp_path / "team.toml"
    spec.write_text(_team_spec("ev"))
    result = run_cli(
        "run", str(spec), "--runs", str(tmp_path / "runs"), "--no-progress", "--episodes", "20", "--trace", "cycle"
    )
    assert result.returncode == 0, result.stderr
    path = run_named(tmp_path / "runs", "team") / "trace.jsonl"
    scan = check_trace(path, keep=KIND_LEVEL)
    assert scan.torn is None and scan.events == len(scan.kept) == len(path.read_bytes().splitlines())
    lines = {orjson.loads(line)["kind"] for line in scan.kept}
    assert "steps" in lines and lines <= set(registry.LINE_KINDS[SCHEMA])
    kinds = {event["kind"] for event in read_trace(path)}  # records expanded (by the one reader)
    assert kinds >= {
        "run.start",
        "run.stop",
        "agent.start",
        "agent.stop",
        "episode.end",
        "eval",
        "qtable.save",
        "msg.send",
        "msg.recv",
        "belief.add",
        "belief.del",
        "goal.add",
        "intention.start",
        "intention.end",
        "action",
        "rl.step",
        "cycle",
        "options",
        "intentions",
    }


async def test_the_viewer_serves_the_kinds_and_its_page_has_a_view_for_each(aiohttp_client, tmp_path):
    client = await aiohttp_client(create_app(tmp_path))
    response = await client.get("/api/kinds")
    assert response.status == 200
    kinds = (await response.json())["kinds"]
    assert {kind: k["level"] for kind, k in kinds.items()} == {kind: level for kind, (level, _, _) in FORMAT.items()}
    views = set(re.findall(r'^  "([a-z-]+)": d =>', (STATIC / "run.js").read_text(), re.MULTILINE))
    assert {k["view"] for k in kinds.values()} <= views and "data" in views
    assert kinds["rl.step"]["view"] == "rl-step" and kinds["run.start"]["view"] == "data"


# -- one place ----------------------------------------------------------------------------------
#: The CSV export's own row kinds ("episode", "eval"): a column of that format, not an event kind.
OTHER_VOCABULARIES = {("readers/export.py", "eval")}
_KIND_CALLS = {"emit", "record_run_event"}


def _kind_literals(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, kind) of every kind written as a literal: any string holding a dotted kind in
    quotes or equal to one, and the undotted ones ("eval", "action", "cycle": common words)
    where they are used as kinds (emitted, compared with a kind, a "kind" value)."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def about_kinds(node: ast.AST) -> bool:
        parent = parents.get(node)
        if isinstance(parent, (ast.Tuple, ast.List, ast.Set)):
            node, parent = parent, parents.get(parent)
        if isinstance(parent, ast.Call):
            name = getattr(parent.func, "attr", getattr(parent.func, "id", None))
            return name in _KIND_CALLS and parent.args[:1] == [node]
        if isinstance(parent, (ast.Compare, ast.MatchValue)):
            return "kind" in ast.unparse(parents[parent] if isinstance(parent, ast.MatchValue) else parent)
        if isinstance(parent, ast.Dict):
            keys = dict(zip(map(id, parent.values), parent.keys, strict=True))
            key = keys.get(id(node))
            return isinstance(key, ast.Constant) and key.value == "kind"
        return False

    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, (str, bytes)):
            continue
        text = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
        for kind in KIND_LEVEL:
            if "." in kind and (text == kind or f'"{kind}"' in text):
                found.append((node.lineno, kind))
            elif text == kind and about_kinds(node):
                found.append((node.lineno, kind))
    return sorted(found)


def test_no_module_but_the_event_module_names_a_kind():
    """Kinds are named once, in bdi_rl/trace/kinds.py: code imports the constants, the
    viewer's pages get them from /api/kinds."""
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name == "trace/kinds.py":
            continue
        offences += [
            f"bdi_rl/{name}:{line}: {kind!r}"
            for line, kind in _kind_literals(ast.parse(path.read_text()))
            if (name, kind) not in OTHER_VOCABULARIES
        ]
    for path in sorted((PACKAGE / "readers" / "static").iterdir()):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            offences += [
                f"bdi_rl/readers/static/{path.name}:{number}: {kind!r}"
                for kind in KIND_LEVEL
                if re.search(rf"""(["'`]){re.escape(kind)}\1""", line)
            ]
    assert not offences, "kind names written outside bdi_rl/trace/kinds.py (import its constants):\n" + "\n".join(
        offences
    )


def test_the_scan_finds_kinds_written_as_literals():
    source = (
        'tracer.emit("eval", d)\nif event["kind"] == "cycle": pass\nx = {"kind": "action"}\n'
        'y = kind in ("msg.send", "other")\nz = b\'"kind":"rl.step"\'\nlabel = "eval"\n'
    )
    assert _kind_literals(ast.parse(source)) == [
        (1, "eval"),
        (2, "cycle"),
        (3, "action"),
        (4, "msg.send"),
        (5, "rl.step"),
    ]

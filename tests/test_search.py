"""Search in a run (``readers.search``, ``/api/runs/<run>/search``, ``bdi-rl search``): the first
add and removal of each matching belief per agent and source, at the positions the Mind
Inspector counts, as folding the trace from its start gives them, in format 2 and format 1."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import orjson
import pytest

from bdi_rl.readers.pattern import PatternError, parse_pattern
from bdi_rl.readers.runindex import RunIndex
from bdi_rl.readers.search import search_run
from bdi_rl.readers.viewer import create_app
from bdi_rl.spec import load_spec
from bdi_rl.store import TRACE_FILE
from bdi_rl.trace.kinds import BELIEF_ADD, BELIEF_DEL, SCHEMA_V1, TraceLevel, clip_text
from bdi_rl.trace.reading import read_trace
from tests.conftest import MINIMAL_SPEC, run_main, run_named
from tests.fakeruns import Agent, Run
from tests.test_trace_v1 import pair  # noqa: F401  (a fixture: the format-1 fixture run and the same run made now)

LEARNERS = [f"vlearner-{i}@localhost" for i in (1, 2, 3)]
COORD = "vcoord@localhost"


def expected(run_dir: Path, matches, agent: str | None = None) -> tuple[set[tuple], int, int]:
    """The first add and removal per (agent, belief, source), folded from ``read_trace``:
    positions count each agent's events as the trace gives them."""
    positions: dict[str, int] = {}
    firsts: dict[tuple, tuple] = {}
    adds = dels = 0
    for event in read_trace(run_dir / TRACE_FILE):
        name = event["agent"]
        position = positions[name] = positions.get(name, -1) + 1
        data = event["data"]
        if event["kind"] not in (BELIEF_ADD, BELIEF_DEL) or agent not in (None, name) or not matches(data["belief"]):
            continue
        kind = "add" if event["kind"] == BELIEF_ADD else "del"
        adds, dels = adds + (kind == "add"), dels + (kind == "del")
        for source in data.get("sources") or [data["source"]]:
            key = (name, data["belief"], source, kind)
            firsts.setdefault(key, (*key, position, event["episode"], event["step"]))
    return set(firsts.values()), adds, dels


def found(run_dir: Path, pattern: str, agent: str | None = None) -> tuple[set[tuple], int, int]:
    index = RunIndex(run_dir)
    index.refresh()
    result = search_run(index, parse_pattern(pattern), agent)
    hits = {(h.agent, h.belief, h.source, h.kind, h.position, h.episode, h.step) for h in result.hits}
    assert len(hits) == len(result.hits) == result.found and not result.truncated
    times = [h.ts for h in result.hits]
    assert times == sorted(times)  # in time order
    return hits, result.adds, result.dels


#: Patterns and what they mean, written as regular expressions over belief texts.
CASES = {
    "hazard(_, _)": r"hazard\(\d+, \d+\)",
    "hazard(X, Y)": r"hazard\(\d+, \d+\)",
    "hazard(1, Y)": r"hazard\(1, \d+\)",
    "hazard(X,X)": r"hazard\((\d+), \1\)",
    "hazard": r"hazard(\(.*\))?",
    "goal_at(_, _, _)": r"goal_at\(\d+, \d+, .*\)",
    "experience": r"experience(\(.*\))?",
    "experience(_)": r'experience\(".*"\)',
    "pos(X, 3)": r"pos\(\d+, 3\)",
    "goal(3.0, 3)": r"goal\(3, 3\)",
    "trusted(_)": r"trusted\(.*\)",
    "ready": r"ready",
    "evaluated(_, _)": r"evaluated\(.*, .*\)",
}


@pytest.mark.parametrize("pattern", sorted(CASES))
def test_first_adds_and_removals_are_what_folding_the_trace_gives(runs, pattern):
    run_dir = run_named(runs, "team")
    want = expected(run_dir, lambda b: re.fullmatch(CASES[pattern], b) is not None)
    assert found(run_dir, pattern) == want
    assert want[1] > 0  # every pattern finds something in the team run


def test_told_beliefs_name_each_teller_and_the_mind_holds_them_there(runs):
    run_dir = run_named(runs, "team")
    index = RunIndex(run_dir)
    index.refresh()
    result = search_run(index, parse_pattern("hazard(X, Y)"))
    tellers = {(h.agent, h.source) for h in result.hits}
    assert {s for _, s in tellers} - {"self"} <= set(LEARNERS)  # told by learners only ...
    assert all(a != s for a, s in tellers)  # ... to the others
    assert any(s == "self" for _, s in tellers) and len({s for _, s in tellers}) >= 3
    experience = search_run(index, parse_pattern("experience"), LEARNERS[0])
    assert {h.source for h in experience.hits} == set(LEARNERS[1:])
    assert {h.kind for h in experience.hits} == {"add", "del"} and experience.adds == experience.dels > 0
    for hit in result.hits + experience.hits:  # the Mind Inspector at that position agrees
        state, _ = index.mind_at(hit.agent, hit.position)
        if hit.kind == "add":
            assert hit.source in state.beliefs[hit.belief]
        else:
            before, _ = index.mind_at(hit.agent, hit.position - 1)
            assert hit.source in before.beliefs[hit.belief] and hit.source not in state.beliefs.get(hit.belief, [])


def test_the_agent_filter_keeps_that_agents_hits(runs):
    run_dir = run_named(runs, "team")
    for agent in (LEARNERS[1], COORD):
        hits, adds, dels = found(run_dir, "evaluated", agent)
        assert {h[0] for h in hits} <= {agent}
        assert (hits, adds, dels) == expected(run_dir, lambda b: b.startswith("evaluated("), agent)
    assert found(run_dir, "evaluated", COORD)[0] and not found(run_dir, "evaluated", LEARNERS[1])[0]


def test_a_cap_on_hits_says_there_were_more(runs):
    index = RunIndex(run_named(runs, "team"))
    index.refresh()
    everything = search_run(index, parse_pattern("pos"))
    capped = search_run(index, parse_pattern("pos"), limit=5)
    assert capped.truncated and not everything.truncated and capped.found == everything.found > 5
    assert capped.hits == everything.hits[:5] and capped.adds == everything.adds


def test_several_sources_and_clipped_beliefs(tmp_path):
    """A removal naming several sources is the first removal for each; a belief clipped in
    the trace still matches on the arguments it holds."""
    (tmp_path / "tiny.toml").write_text(MINIMAL_SPEC)
    run = Run(tmp_path / "runs", load_spec(tmp_path / "tiny.toml", {"trace": "step"}))
    agent = Agent(run, "learner", "", TraceLevel.STEP)
    agent.start()
    long = 'note("' + "x" * 3000 + '")'
    for kind, data in (
        (BELIEF_ADD, {"belief": "hazard(1, 1)", "source": "a@localhost"}),
        (BELIEF_ADD, {"belief": "hazard(1, 1)", "source": "b@localhost"}),
        (BELIEF_DEL, {"belief": "hazard(1, 1)", "source": "a@localhost", "sources": ["a@localhost", "b@localhost"]}),
        (BELIEF_ADD, {"belief": clip_text(long), "source": "self"}),
        (BELIEF_ADD, {"belief": "hazard(1, 1)", "source": "b@localhost"}),
    ):
        agent.emit(kind, data)
    agent.stop()
    run_dir = run.finish()
    hits, adds, dels = found(run_dir, "hazard(1, _)")
    firsts = {(h[2], h[3]): h[4] for h in hits}
    assert (adds, dels) == (3, 1)
    assert firsts[("a@localhost", "del")] == firsts[("b@localhost", "del")] == firsts[("b@localhost", "add")] + 1
    assert firsts[("a@localhost", "add")] + 1 == firsts[("b@localhost", "add")]
    assert found(run_dir, "note(_)")[1] == found(run_dir, "note")[1] == 1
    assert found(run_dir, "note(_, _)")[1] == 1  # its arity went with its end
    assert found(run_dir, 'note("y")')[1] == found(run_dir, "note(1, _)")[1] == 0


def _as_format_1(run_dir: Path, into: Path) -> Path:
    """The run with its trace rewritten in format 1: every event a line of its own."""
    copy = into / run_dir.name
    shutil.copytree(run_dir, copy)
    events = read_trace(run_dir / TRACE_FILE)
    seqs: dict[str, int] = {}  # each event numbered on its own, as format 1 numbered them
    for e in events:
        e["seq"] = seqs[e["agent"]] = seqs.get(e["agent"], -1) + 1
    (copy / TRACE_FILE).write_bytes(b"".join(orjson.dumps({**e, "schema": SCHEMA_V1}) + b"\n" for e in events))
    return copy


@pytest.mark.parametrize("pattern", ["hazard(_, _)", "experience", "pos(X, Y)", "ready"])
def test_format_1_gives_the_same_answers(runs, tmp_path, pattern):
    run_dir = run_named(runs, "team")
    old = _as_format_1(run_dir, tmp_path)
    assert found(old, pattern) == found(run_dir, pattern)


def test_records_laid_out_otherwise_are_read_whole(runs, tmp_path):
    """The fast path reads ``ops`` and ``refs`` where the writer puts them (first in
    ``data``); a record whose data keys come in another order is parsed whole instead."""
    run_dir = run_named(runs, "team")
    copy = tmp_path / run_dir.name
    shutil.copytree(run_dir, copy)
    lines = []
    for line in (run_dir / TRACE_FILE).read_bytes().splitlines():
        event = orjson.loads(line)
        event["data"] = dict(reversed(event["data"].items()))
        lines.append(orjson.dumps(event) + b"\n")
    (copy / TRACE_FILE).write_bytes(b"".join(lines))
    assert b'"data":{"ops":[' not in (copy / TRACE_FILE).read_bytes()
    for pattern in ("hazard(_, _)", "experience", "pos"):
        assert found(copy, pattern) == found(run_dir, pattern)


@pytest.mark.slow
@pytest.mark.parametrize("pattern", ["state(_)", "outcome", "failures(X)", "episode(3)"])
def test_the_format_1_fixture_and_the_same_run_made_now_agree(pair, pattern):  # noqa: F811 (the fixture)
    old, new = pair
    assert found(old, pattern) == found(new, pattern)
    assert found(new, pattern)[1] > 0


@pytest.mark.parametrize(
    "bad, says",
    [
        ("", "empty"),
        ("Hazard", "functor"),
        ("hazard(1", "unbalanced"),
        ("hazard(1, [X])", "whole arguments"),
        ("hazard()", "every arity"),
        ("hazard(1,,2)", "empty argument"),
        ("hazard(1)[source(x)]", "annotations"),
        ('told("a)', "unbalanced"),
        ("x" * 2000, "longer"),
    ],
)
def test_bad_patterns_say_what_is_wrong(bad, says):
    with pytest.raises(PatternError, match=re.escape(says) if says != "functor" else "functor"):
        parse_pattern(bad)


async def test_the_api(aiohttp_client, runs):
    run_dir = run_named(runs, "team")
    client = await aiohttp_client(create_app(runs))
    url = f"/api/runs/{run_dir.name}/search"
    response = await client.get(url, params={"belief": "hazard(X, Y)", "agent": "vlearner-2"})
    assert response.status == 200
    body = await response.json()
    want, adds, dels = expected(run_dir, lambda b: b.startswith("hazard("), LEARNERS[1])
    assert {
        (h["agent"], h["belief"], h["source"], h["kind"], h["position"], h["episode"], h["step"]) for h in body["hits"]
    } == want
    assert (body["adds"], body["dels"], body["agent"], body["truncated"]) == (adds, dels, LEARNERS[1], False)
    bad = await client.get(url, params={"belief": "hazard(1"})
    assert bad.status == 400 and "unbalanced" in (await bad.json())["error"]
    assert (await client.get(url)).status == 400
    assert (await client.get(url, params={"belief": "hazard", "agent": "nobody"})).status == 404
    assert (await client.get("/api/runs/nosuchrun/search", params={"belief": "hazard"})).status == 404


def test_the_cli(runs):
    run_dir = run_named(runs, "team")
    result = run_main("search", str(run_dir), "hazard(X, Y)", "--agent", "vlearner-3")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    want = expected(run_dir, lambda b: b.startswith("hazard("), LEARNERS[2])[0]
    assert lines[0].startswith(f"hazard(X, Y): {len(want)} first adds/removals")
    assert len(lines) == 2 + len(want) and all(line.startswith("vlearner-3 ") for line in lines[2:])
    for args, says in ((("hazard(1",), "unbalanced"), (("hazard", "--agent", "nobody"), "no such agent")):
        bad = run_main("search", str(run_dir), *args)
        assert bad.returncode == 2 and says in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    missing = run_main("search", str(runs / "nosuchrun"), "hazard")
    assert missing.returncode == 2 and "not a run directory" in missing.stderr

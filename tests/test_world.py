"""The world view (readers/world.py, /api/.../world): maps of the grid worlds as the trace
records them (or the spec rebuilds them), positions per step, cell beliefs with their sources,
and the greedy action / max Q per cell rebuilt from the trace's rl rows. Runs are written by
tests/fakeruns.py (the package's own writers, no XMPP)."""

from __future__ import annotations

import shutil
from pathlib import Path

import gymnasium as gym
import orjson
import pytest

from bdi_rl.readers.runindex import RunIndex
from bdi_rl.readers.viewer import create_app
from bdi_rl.readers.world import WorldError, cell_beliefs, episode_world
from bdi_rl.rl.checkpoint import load_checkpoint
from bdi_rl.rl.envs import make_env, taxi_decode, taxi_encode, world_cell
from bdi_rl.trace.kinds import AGENT_START, RL_STEP
from bdi_rl.trace.reading import read_trace
from tests.conftest import MINIMAL_SPEC, beliefs_after, run_named
from tests.fakeruns import learner_run

LEARNER = "learner@localhost"
FROZENLAKE = 'id = "FrozenLake-v1"\nkwargs = { map_name = "4x4", is_slippery = false }'
SPECS = {
    "custom": ('id = "FrozenLake-v1"\nkwargs = { desc = ["SFFH", "FHFF", "FFFG"], is_slippery = false }', 8),
    "cliff": ('id = "CliffWalking-v1"\nmax_episode_steps = 40', 4),
    "taxi": ('id = "Taxi-v4"\nmax_episode_steps = 60', 3),
    "coarse": (FROZENLAKE, 4),  # traced at level episode: no steps
}


@pytest.fixture(scope="module")
def worlds(tmp_path_factory) -> Path:
    """A custom FrozenLake map, CliffWalking and Taxi traced at step level; FrozenLake at
    episode level; and a copy of the custom one whose trace predates recorded worlds."""
    base = tmp_path_factory.mktemp("worlds")
    runs = base / "runs"
    for name, (env, episodes) in SPECS.items():
        spec = base / f"{name}.toml"
        spec.write_text(
            MINIMAL_SPEC.replace('name = "tiny"', f'name = "{name}"')
            .replace(FROZENLAKE, env)
            .replace("episodes = 20", f"episodes = {episodes}")
        )
        learner_run(runs, spec, rng_seed=4, trace="episode" if name == "coarse" else "step")
    custom = run_named(runs, "custom")
    old = runs / custom.name.replace("custom", "old")
    shutil.copytree(custom, old)
    lines = []
    for line in (old / "trace.jsonl").read_bytes().splitlines():
        event = orjson.loads(line)
        if event["kind"] == AGENT_START:
            event["data"].pop("world", None)
            line = orjson.dumps(event)
        lines.append(line + b"\n")
    (old / "trace.jsonl").write_bytes(b"".join(lines))
    return runs


def _index(run_dir: Path) -> RunIndex:
    index = RunIndex(run_dir)
    index.refresh()
    return index


def _events(run_dir: Path, agent: str = LEARNER) -> list[dict]:
    return [e for e in read_trace(run_dir / "trace.jsonl") if e["agent"] == agent]


def test_frozenlake_4x4_world_is_recorded_in_agent_start(runs):
    run_dir = run_named(runs, "tiny")
    start = _events(run_dir)[0]
    assert start["kind"] == AGENT_START
    assert start["data"]["world"] == {
        "family": "frozenlake",
        "rows": 4,
        "cols": 4,
        "map": ["SFFF", "FHFH", "FFFH", "HFFG"],
    }
    payload = episode_world(_index(run_dir), LEARNER, 0)
    assert payload["world_source"] == "trace" and payload["world"]["map"][3] == "HFFG"


def test_custom_map_cliffwalking_and_taxi_worlds(worlds):
    custom = episode_world(_index(run_named(worlds, "custom")), LEARNER, 0)["world"]
    assert custom == {"family": "frozenlake", "rows": 3, "cols": 4, "map": ["SFFH", "FHFF", "FFFG"]}
    cliff = episode_world(_index(run_named(worlds, "cliff")), LEARNER, 0)["world"]
    assert (cliff["rows"], cliff["cols"]) == (4, 12)
    assert cliff["map"][3] == "S" + "C" * 10 + "G" and set("".join(cliff["map"][:3])) == {"."}
    taxi = episode_world(_index(run_named(worlds, "taxi")), LEARNER, 0)["world"]
    assert taxi["map"] == ["R...G", ".....", ".....", ".....", "Y..B."]
    # Gymnasium's MAP: "|R: | : :G|" ... a wall east of (row 0, col 1), and so on
    assert sorted(map(tuple, taxi["walls"])) == [(0, 1), (1, 1), (3, 0), (3, 2), (4, 0), (4, 2)]


def test_a_generated_map_is_recorded_as_generated():
    env = make_env("FrozenLake-v1", {"map_name": None, "desc": None, "is_slippery": False})
    desc = [b"".join(row).decode() for row in env.env.unwrapped.desc.tolist()]
    assert env.world()["map"] == desc and env.world()["rows"] == 8


def test_an_old_trace_gets_its_world_from_the_spec(worlds):
    old = run_named(worlds, "old")
    assert "world" not in _events(old)[0]["data"]
    payload = episode_world(_index(old), LEARNER, 1)
    assert payload["world_source"] == "spec" and payload["world"]["map"] == ["SFFH", "FHFF", "FFFG"]


def test_taxi_decode_is_gymnasiums():
    env = gym.make("Taxi-v4").unwrapped
    for s in range(500):
        assert taxi_decode(s) == tuple(env.decode(s))
        assert taxi_encode(*taxi_decode(s)) == s


@pytest.mark.parametrize("name", ["custom", "cliff", "taxi"])
def test_positions_follow_s2(worlds, name):
    run_dir = run_named(worlds, name)
    events = _events(run_dir)
    index = _index(run_dir)
    for episode in (0, 1):
        payload = episode_world(index, LEARNER, episode)
        rl = [e["data"] for e in events if e["kind"] == RL_STEP and e["episode"] == episode]
        steps, frames, world = payload["steps"], payload["frames"], payload["world"]
        assert [(s["s"], s["a"], s["s2"]) for s in steps] == [(d["s"], d["a"], d["s2"]) for d in rl]
        assert len(frames) == len(steps) + 1 == payload["length"] + 1
        assert frames[0]["state"] == steps[0]["s"]
        for step, frame in zip(steps, frames[1:], strict=False):
            assert frame["state"] == step["s2"] and frame["cell"] == world_cell(world, step["s2"])
            assert events[step["position"]]["kind"] == RL_STEP  # the inspector position of its event
        if name == "taxi":
            row, col, passenger, destination = taxi_decode(steps[-1]["s2"])
            assert frames[-1]["cell"] == {"x": col, "y": row, "passenger": passenger, "destination": destination}
        else:
            cols = world["cols"]
            assert frames[-1]["cell"] == {"x": steps[-1]["s2"] % cols, "y": steps[-1]["s2"] // cols}
        positions = [f["position"] for f in frames]
        assert positions == sorted(positions) and positions[-1] == index.span_of(LEARNER, episode)[1]


@pytest.mark.parametrize("name", ["cliff", "taxi"])
def test_greedy_action_and_max_q_are_those_of_the_rows_seen(worlds, name):
    run_dir = run_named(worlds, name)
    events = _events(run_dir)
    index = _index(run_dir)
    last = len(index.agents[LEARNER].episodes) - 1
    for episode, frame in ((0, 0), (1, 5), (last, 3), (last, 1)):  # forward, then back again
        payload = episode_world(index, LEARNER, episode, frame)
        position = payload["frames"][frame]["position"]
        assert payload["q"]["position"] == position
        rows: dict[int, list[float]] = {}
        for event in events[: position + 1]:
            if event["kind"] == RL_STEP:
                data = event["data"]
                rows[data["s"]] = [*data["q"][: data["a"]], data["q_after"], *data["q"][data["a"] + 1 :]]
        world, like = payload["world"], payload["frames"][frame]["cell"]
        seen = 0
        for y in range(world["rows"]):
            for x in range(world["cols"]):
                s = (
                    y * world["cols"] + x
                    if name != "taxi"
                    else taxi_encode(y, x, like["passenger"], like["destination"])
                )
                row = rows.get(s)
                assert payload["q"]["max"][y][x] == (max(row) if row else None)
                greedy = payload["q"]["greedy"][y][x]
                if row and max(row) > min(row):
                    assert greedy == row.index(max(row))
                    seen += 1
                else:
                    assert greedy is None
        assert seen or frame == 0 and episode == 0


def test_cell_beliefs_name_who_told_them(runs):
    run_dir = run_named(runs, "team")
    index = _index(run_dir)
    told = 0
    for learner in ("vlearner-1@localhost", "vlearner-2@localhost", "vlearner-3@localhost"):
        events = _events(run_dir, learner)
        last = len(index.agents[learner].episodes) - 1
        payload = episode_world(index, learner, last, 10**6)  # the last frame
        position = payload["frames"][-1]["position"]
        expected = cell_beliefs(beliefs_after(events, position), payload["world"])
        assert payload["beliefs"] == expected
        told += sum(1 for b in payload["beliefs"] if b["kind"] == "hazard" and b["sources"] != ["self"])
        assert all(b["kind"] in ("hazard", "goal", "pos") for b in payload["beliefs"])
    assert told  # hazards found by a teammate, drawn with the teammate as their source


def test_cell_beliefs_are_parsed_from_belief_text():
    world = {"family": "frozenlake", "rows": 4, "cols": 4, "map": ["SFFF"] * 4}
    beliefs = {
        "hazard(1, 2)": ["a@x", "b@x"],
        "goal_at(3, 3, 1.0)": ["self"],
        "pos(0, 0)": ["percept"],
        "hazard(9, 9)": ["a@x"],
        "note(hazard(1, 1))": ["self"],
        "state(3)": ["percept"],
    }
    assert cell_beliefs(beliefs, world) == [
        {"kind": "hazard", "x": 1, "y": 2, "belief": "hazard(1, 2)", "sources": ["a@x", "b@x"]},
        {"kind": "goal", "x": 3, "y": 3, "belief": "goal_at(3, 3, 1.0)", "sources": ["self"]},
        {"kind": "pos", "x": 0, "y": 0, "belief": "pos(0, 0)", "sources": ["percept"]},
    ]


def test_an_episode_level_trace_says_it_has_no_steps(worlds):
    payload = episode_world(_index(run_named(worlds, "coarse")), LEARNER, 2)
    assert payload["world"]["map"][0] == "SFFF" and payload["steps"] == [] and payload["frames"] == []
    assert "no steps" in payload["note"] and "episode" in payload["note"]
    assert payload["q"]["source"].startswith("the latest Q-table checkpoint (4 episodes)")
    q = load_checkpoint(run_named(worlds, "coarse") / "qtables" / "learner.npz").q
    assert [
        [None if max(q[4 * y + x]) == min(q[4 * y + x]) else int(q[4 * y + x].argmax()) for x in range(4)]
        for y in range(4)
    ] == payload["q"]["greedy"]


def test_unknown_episode_and_agents_without_a_world(runs):
    index = _index(run_named(runs, "team"))
    with pytest.raises(WorldError, match="^episode: episode 999"):
        episode_world(index, "vlearner-1@localhost", 999)
    with pytest.raises(WorldError, match="^agent: vcoord is not a learner"):
        episode_world(index, "vcoord@localhost", 0)


async def test_world_api(aiohttp_client, runs):
    client = await aiohttp_client(create_app(runs))
    run = run_named(runs, "tiny").name
    response = await client.get(f"/api/runs/{run}/agents/learner/world?episode=3&step=2")
    assert response.status == 200
    payload = await response.json()
    assert payload["agent"] == LEARNER and payload["episode"] == 3 and payload["frame"] == 2
    assert payload["moves"] == [[-1, 0], [0, 1], [1, 0], [0, -1]]
    assert len(payload["frames"]) == len(payload["steps"]) + 1
    assert {"pos"} <= {b["kind"] for b in payload["beliefs"]}
    pos = next(b for b in payload["beliefs"] if b["kind"] == "pos")
    assert [pos["x"], pos["y"]] == [payload["frames"][2]["cell"]["x"], payload["frames"][2]["cell"]["y"]]
    for url in (
        "/api/runs/nosuchrun/agents/learner/world?episode=0",
        f"/api/runs/{run}/agents/nobody/world?episode=0",
        f"/api/runs/{run}/agents/learner/world?episode=999",
        f"/api/runs/{run}/agents/learner/render?episode=999",
    ):
        assert (await client.get(url)).status == 404, url
    assert (await client.get(f"/api/runs/{run}/agents/learner/world?episode=x")).status == 400
    team = run_named(runs, "team").name
    response = await client.get(f"/api/runs/{team}/agents/vcoord/world?episode=0")
    assert response.status == 200 and "no world view" in (await response.json())["error"]
    response = await client.get(f"/api/runs/{run}/agents/learner/render?episode=3")
    assert response.status == 200 and response.content_type == "image/gif"
    assert (await response.read()).startswith(b"GIF8")


@pytest.mark.slow
def test_a_real_run_records_its_world_and_draws_it(tmp_path):
    """A real run (the CLI, agents and telemetry over XMPP): telemetry accepts the world in
    agent.start, and an episode of the trace draws on it."""
    from tests.conftest import AGENTS, ROOT, run_cli

    result = run_cli(
        "run",
        str(AGENTS / "taxi.toml"),
        "--episodes",
        "2",
        "--trace",
        "step",
        "--runs",
        str(tmp_path),
        "--no-progress",
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    run_dir = run_named(tmp_path, "taxi")
    index = _index(run_dir)
    jid = next(j for j, a in index.agents.items() if a.episodes)
    assert _events(run_dir, jid)[0]["data"]["world"]["family"] == "taxi"
    payload = episode_world(index, jid, 1)
    assert payload["world_source"] == "trace" and len(payload["frames"]) == payload["length"] + 1
    for step, frame in zip(payload["steps"], payload["frames"][1:], strict=False):
        assert frame["cell"] == world_cell(payload["world"], step["s2"])


class Corridor(gym.Env):
    """Three states in a row, walk right to the end: Discrete, but no grid world."""

    observation_space = gym.spaces.Discrete(3)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.s = 0
        return 0, {}

    def step(self, a):
        self.s = max(0, min(2, self.s + (1 if a else -1)))
        return self.s, float(self.s == 2), self.s == 2, False, {}


def test_an_env_without_a_map_has_no_world_view(tmp_path):
    spec = tmp_path / "corridor.toml"
    spec.write_text(
        MINIMAL_SPEC.replace(FROZENLAKE, 'id = "tests.test_world:Corridor"\nmax_episode_steps = 20').replace(
            "episodes = 20", "episodes = 2"
        )
    )
    run_dir = learner_run(tmp_path / "runs", spec, trace="step")
    assert "world" not in _events(run_dir)[0]["data"]
    with pytest.raises(WorldError, match=r"^env: no world view for this env \(tests.test_world:Corridor; the trace"):
        episode_world(_index(run_dir), LEARNER, 0)


def test_a_format_1_trace_draws_on_the_map_its_spec_rebuilds(tmp_path):
    """A trace of bdi-rl before step records and recorded worlds (tests/data/trace-v1): the
    map from its spec, the steps from its rl.step lines, Q rows from them."""
    from tests.test_trace_v1 import v1_run

    run_dir = v1_run("Taxi-v4__taxi__1__1795458474", tmp_path)
    events = _events(run_dir)
    index = _index(run_dir)
    payload = episode_world(index, LEARNER, 3, 7)
    assert payload["world_source"] == "spec" and payload["world"]["family"] == "taxi"
    rl = [e["data"] for e in events if e["kind"] == RL_STEP and e["episode"] == 3]
    assert [s["s2"] for s in payload["steps"]] == [d["s2"] for d in rl] and len(payload["frames"]) == len(rl) + 1
    position = payload["frames"][7]["position"]
    seen = {}
    for event in events[: position + 1]:
        if event["kind"] == RL_STEP:
            d = event["data"]
            seen[d["s"]] = [*d["q"][: d["a"]], d["q_after"], *d["q"][d["a"] + 1 :]]
    like = payload["frames"][7]["cell"]
    for y in range(5):
        for x in range(5):
            row = seen.get(taxi_encode(y, x, like["passenger"], like["destination"]))
            assert payload["q"]["max"][y][x] == (max(row) if row else None)

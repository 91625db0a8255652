"""A shared world as the readers show it, no browser: the viewer's joint-action endpoint
(the first and last tenth of training, a chosen range of episodes, one episode's steps), the
world view of the world agent (every agent on the lbforaging map at each joint step, as the
episode player plays it), ``world.step`` in the terminal inspector, and the joint steps'
export; every number checked against the trace of real runs of the shipped specs."""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path

import pytest

from bdi_rl.readers.export import export_joint_csv
from bdi_rl.readers.inspector import inspect_mind, print_mind
from bdi_rl.readers.render import render_episode
from bdi_rl.readers.runindex import RunIndex
from bdi_rl.readers.viewer import create_app
from bdi_rl.readers.viewerapi import KIND_VIEWS
from bdi_rl.readers.world import WorldError, episode_world
from bdi_rl.trace.kinds import WORLD_STEP
from bdi_rl.trace.reading import read_trace
from tests.conftest import run_cli, run_named

ROOT = Path(__file__).resolve().parent.parent
WORLD = "world@localhost"


@pytest.fixture(scope="module")
def world_runs(tmp_path_factory) -> Path:
    """The climbing game as shipped (seed 0, 1000 one-step episodes) and 20 episodes of
    lbforaging, both at trace level step (~6 s)."""
    runs = tmp_path_factory.mktemp("world-readers") / "runs"
    for args in (["agents/climbing.toml"], ["agents/foraging.toml", "--episodes", "20"]):
        result = run_cli("run", *args, "--runs", str(runs), "--no-progress", cwd=ROOT)
        assert result.returncode == 0, result.stderr
    return runs


def _steps(run_dir: Path) -> list[dict]:
    return [e["data"] for e in read_trace(run_dir / "trace.jsonl") if e["kind"] == WORLD_STEP]


def _index(run_dir: Path) -> RunIndex:
    index = RunIndex(run_dir)
    index.refresh()
    return index


async def test_the_joint_panel_counts_what_the_trace_holds(aiohttp_client, world_runs) -> None:
    run_dir = run_named(world_runs, "climbing")
    steps = _steps(run_dir)
    assert len(steps) == 1000 and all(s["step"] == 1 and s["done"] for s in steps)  # one step an episode
    client = await aiohttp_client(create_app(world_runs))
    summary = await (await client.get(f"/api/runs/{run_dir.name}/joint")).json()
    assert summary["world"] == WORLD and summary["agents"] == ["player-1", "player-2"]
    assert summary["seats"] == [["player_0", "player-1"], ["player_1", "player-2"]]
    assert summary["episodes"] == [0, 999] and summary["map"] is None  # a matrix game: no map
    for part, window in (("first", steps[:100]), ("last", steps[-100:])):
        shown = summary[part]
        assert shown["steps"] == 100 and shown["episodes"] == [window[0]["episode"], window[-1]["episode"]]
        counts = {tuple(r["actions"]): r["count"] for r in shown["joint_actions"]}
        assert sum(counts.values()) == 100 and counts == Counter(tuple(s["actions"]) for s in window)
        for row in shown["joint_actions"]:  # what each joint action paid, per agent
            paid = [s["rewards"] for s in window if s["actions"] == row["actions"]]
            assert row["rewards"] == [sum(r[i] for r in paid) / len(paid) for i in range(2)]
    # the coordination plans settle on the optimum, which pays 11 to each
    best = summary["last"]["joint_actions"][0]
    assert best["actions"] == [0, 0] and best["rewards"] == [11.0, 11.0]


async def test_a_chosen_range_of_episodes(aiohttp_client, world_runs) -> None:
    run_dir = run_named(world_runs, "climbing")
    steps = _steps(run_dir)
    client = await aiohttp_client(create_app(world_runs))
    api = f"/api/runs/{run_dir.name}/joint"
    whole = await (await client.get(api + "?from=0&to=999")).json()
    assert whole["steps"] == 1000 and whole["episodes"] == [0, 999] and not whole["cut"]
    assert sum(r["count"] for r in whole["joint_actions"]) == 1000  # every episode counted once
    part = await (await client.get(api + "?from=101&to=250")).json()
    window = [s for s in steps if 101 <= s["episode"] <= 250]
    assert {tuple(r["actions"]): r["count"] for r in part["joint_actions"]} == Counter(
        tuple(s["actions"]) for s in window
    )
    for query, error in (("from=5&to=2", "after episode"), ("from=0&to=5000", "not in the trace"), ("from=x", "from")):
        response = await client.get(f"{api}?{query}")
        assert response.status == 400 and error in (await response.json())["error"]


async def test_one_joint_episode_and_every_agent_on_the_map(aiohttp_client, world_runs) -> None:
    run_dir = run_named(world_runs, "foraging")
    steps = _steps(run_dir)
    client = await aiohttp_client(create_app(world_runs))
    summary = await (await client.get(f"/api/runs/{run_dir.name}/joint")).json()
    assert summary["map"]["family"] == "lbforaging" and summary["map"]["rows"] == 5
    for episode in (0, 7, 19):
        expected = [s for s in steps if s["episode"] == episode]
        shown = await (await client.get(f"/api/runs/{run_dir.name}/joint/{episode}")).json()
        assert [{k: v for k, v in s.items() if k != "seq"} for s in shown["steps"]] == expected
        # the world view of the world agent: one frame per joint step, every agent and the food
        view = await (await client.get(f"/api/runs/{run_dir.name}/agents/world/world?episode={episode}")).json()
        assert view["joint"] and view["world"]["family"] == "lbforaging"
        assert [f["step"] for f in view["frames"]] == [s["step"] for s in expected]
        assert [[[a["x"], a["y"]] for a in f["agents"]] for f in view["frames"]] == [s["positions"] for s in expected]
        assert [f["items"] for f in view["frames"]] == [s["items"] for s in expected]
        assert [a["name"] for a in view["frames"][0]["agents"]] == ["forager-1", "forager-2"]
        assert view["return"] == pytest.approx(sum(sum(s["rewards"]) for s in expected))
    # every frame is at its world.step event, so the inspector shows that step
    index = _index(run_dir)
    frames = episode_world(index, WORLD, 7)["frames"]
    shown = [index.events_of(WORLD, f["position"], f["position"] + 1)[0] for f in frames]
    assert all(e["kind"] == WORLD_STEP and e["data"]["episode"] == 7 for e in shown)
    assert [e["data"]["step"] for e in shown] == [f["step"] for f in frames]
    response = await client.get(f"/api/runs/{run_dir.name}/joint/20")
    assert response.status == 404


async def test_the_world_view_says_why_there_is_no_map(aiohttp_client, world_runs) -> None:
    client = await aiohttp_client(create_app(world_runs))
    climbing, foraging = run_named(world_runs, "climbing").name, run_named(world_runs, "foraging").name
    no_map = await (await client.get(f"/api/runs/{climbing}/agents/world/world?episode=3")).json()
    assert "has no map (see the joint-action panel)" in no_map["error"]
    seat = await (await client.get(f"/api/runs/{foraging}/agents/forager-1/world?episode=3")).json()
    assert seat["error"] == (
        "agent: forager-1 acts in a shared world: the map with every agent on it is the world agent's (world)"
    )
    response = await client.get(f"/api/runs/{foraging}/agents/world/world?episode=99")
    assert response.status == 404
    with pytest.raises(WorldError, match="has no map"):
        render_episode(_index(run_named(world_runs, "climbing")), WORLD, 3, "gif")


async def test_a_world_step_is_shown_as_a_joint_step(aiohttp_client, world_runs) -> None:
    assert KIND_VIEWS[WORLD_STEP] == "joint-step"
    client = await aiohttp_client(create_app(world_runs))
    kinds = (await (await client.get("/api/kinds")).json())["kinds"]
    assert kinds[WORLD_STEP] == {"level": "step", "view": "joint-step"}
    run_js = (ROOT / "bdi_rl" / "readers" / "static" / "run.js").read_text()
    assert '"joint-step": d =>' in run_js


def test_the_terminal_inspector_prints_a_joint_step_readably(world_runs) -> None:
    run_dir = run_named(world_runs, "foraging")
    view = inspect_mind(run_dir, "world", None, 4, 2)
    data = view["event"]["data"]
    assert view["event"]["kind"] == WORLD_STEP and data["step"] == 2
    out = io.StringIO()
    print_mind(view, file=out)
    text = out.getvalue()
    a1, a2 = data["actions"]
    assert f"episode 4 step 2: forager-1 a{a1} -> " in text and f"forager-2 a{a2} -> " in text
    (x, y), _ = data["positions"]
    assert f"({x}, {y})" in text and "food:" in text
    assert '"positions"' not in text  # a table, not the raw JSON


def test_export_joint_has_one_row_per_agent_per_joint_step(world_runs, tmp_path) -> None:
    run_dir = run_named(world_runs, "foraging")
    steps = _steps(run_dir)
    out = tmp_path / "world_steps.csv"
    assert export_joint_csv(run_dir, out) == 2 * len(steps)
    rows = list(csv.DictReader(out.open()))
    assert [(int(r["episode"]), int(r["step"]), r["agent"], int(r["action"])) for r in rows] == [
        (s["episode"], s["step"], agent, s["actions"][i]) for s in steps for i, agent in enumerate(s["agents"])
    ]


def test_plot_shows_the_team_return_of_each_joint_episode(world_runs) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from bdi_rl.readers.plots import _joint_panel, rolling_mean

    run_dir = run_named(world_runs, "foraging")
    steps = _steps(run_dir)
    fig, ax = plt.subplots()
    assert _joint_panel(ax, run_dir) is None and "team return" in ax.get_title()
    team = [sum(sum(s["rewards"]) for s in steps if s["episode"] == e) for e in range(20)]
    right = [a for a in fig.axes if a is not ax][0]
    assert list(right.get_lines()[0].get_ydata()) == pytest.approx(list(rolling_mean(np.array(team))))
    plt.close(fig)


async def test_the_qtable_panel_of_a_seated_learner_shows_its_own_table(aiohttp_client, world_runs) -> None:
    """A learner in a shared world: its table is its seat's (the run's [env] names the world,
    which no gymnasium registry holds): shown as numbers, saying why there is no map, as
    ``bdi-rl qtable show`` reads the same file."""
    import numpy as np

    from bdi_rl.rl.checkpoint import load_checkpoint

    client = await aiohttp_client(create_app(world_runs))
    for spec, agent in (("climbing", "player-1"), ("climbing", "player-2"), ("foraging", "forager-2")):
        run_dir = run_named(world_runs, spec)
        q = load_checkpoint(run_dir / "qtables" / f"{agent}.npz").q
        shown = await (await client.get(f"/api/runs/{run_dir.name}/agents/{agent}/qtable")).json()
        assert "error" not in shown, shown
        table = shown["table"]
        assert table["why"].startswith(f"{agent} learns in the shared world {run_dir.name.split('__')[0]}:")
        assert (table["states"], table["actions"]) == q.shape and table["agent"] == agent
        updated = [s for s in range(q.shape[0]) if np.ptp(q[s]) >= 1e-6]
        assert table["updated"] == len(updated) > 0
        assert table["rows"] == [[s, list(q[s])] for s in updated[:16]]
        assert (table["max_q"], table["min_q"]) == (q.max(), q.min())
        start = next(
            e
            for e in read_trace(run_dir / "trace.jsonl")
            if e["kind"] == "agent.start" and e["agent"].startswith(agent + "@")
        )
        assert table["action_names"] == start["data"]["actions"]
        result = run_cli("qtable", "show", str(run_dir / "qtables" / f"{agent}.npz"))
        assert result.returncode == 0 and f"{len(updated)} of {q.shape[0]} states updated" in result.stdout
    # the climbing players settled on the optimum (0, 0): the greedy action of their one state is a0
    climbing = run_named(world_runs, "climbing").name
    player = (await (await client.get(f"/api/runs/{climbing}/agents/player-1/qtable")).json())["table"]
    assert np.argmax(player["rows"][0][1]) == 0


def _nearest_ink(pixel: tuple[int, ...], inks: dict[str, str]) -> str:
    """The name of the colour in ``inks`` nearest ``pixel`` (a GIF's palette shifts colours)."""

    def distance(ink: str) -> int:
        return sum((int(ink[k : k + 2], 16) - pixel[j]) ** 2 for j, k in enumerate((1, 3, 5)))

    return min(inks, key=lambda name: distance(inks[name]))


def test_render_draws_a_joint_episode_with_every_agent_where_the_world_steps_put_it(world_runs, tmp_path) -> None:
    """``bdi-rl render`` of the world agent's joint episode on lbforaging: a frame per
    world.step, each agent drawn in its colour on the cell that step left it on, as they move."""
    from PIL import Image

    from bdi_rl.readers.render import CELL, JOINT_INK

    run_dir = run_named(world_runs, "foraging")
    steps = _steps(run_dir)
    episode = next(
        e
        for e in range(20)
        if all(len({tuple(s["positions"][i]) for s in steps if s["episode"] == e}) > 2 for i in range(2))
    )
    expected = [s for s in steps if s["episode"] == episode]
    out = tmp_path / "joint.gif"
    result = run_cli("render", str(run_dir), "--agent", "world", "--episode", str(episode), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(f"{len(expected)} frames")
    inks = {"forager-1": JOINT_INK[0], "forager-2": JOINT_INK[1], "floor": "#eeeeee", "food": "#8c8c00"}
    with Image.open(out) as gif:
        assert gif.n_frames == len(expected)
        for k, step in enumerate(expected):
            gif.seek(k)
            frame = gif.convert("RGB")
            for i, (x, y) in enumerate(step["positions"]):
                shared = sum(1 for p in step["positions"][:i] if list(p) == [x, y])
                # the left of the agent's disc (its number is written in the middle)
                point = (int((x + 0.5) * CELL + shared * CELL * 0.15 - 9), int((y + 0.5) * CELL))
                assert _nearest_ink(frame.getpixel(point), inks) == f"forager-{i + 1}", (k, i, step)
            for x, y, _ in step["items"]:  # the food left, at its cell's corner (no agent's disc there)
                assert _nearest_ink(frame.getpixel((x * CELL + 12, y * CELL + 12)), inks) == "food", (k, step)


def test_render_of_a_shared_world_without_a_map_or_of_a_seat_is_one_line(world_runs, tmp_path) -> None:
    out = tmp_path / "ep.gif"
    for spec, agent, message in (
        ("climbing", "world", "env: the shared world climbing_game_v0 has no map"),
        ("foraging", "forager-1", "agent: forager-1 acts in a shared world"),
    ):
        result = run_cli("render", str(run_named(world_runs, spec)), "--agent", agent, "--episode", "3", "-o", str(out))
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
        assert list(tmp_path.iterdir()) == []


async def test_the_world_panels_video_of_a_joint_episode(aiohttp_client, world_runs) -> None:
    from PIL import Image

    run_dir = run_named(world_runs, "foraging")
    client = await aiohttp_client(create_app(world_runs))
    response = await client.get(f"/api/runs/{run_dir.name}/agents/world/render?episode=5")
    assert response.status == 200 and response.headers["Content-Type"] == "image/gif"
    with Image.open(io.BytesIO(await response.read())) as gif:
        assert gif.n_frames == sum(1 for s in _steps(run_dir) if s["episode"] == 5)


def test_the_video_colours_are_the_world_panels() -> None:
    import re

    from bdi_rl.readers.render import JOINT_INK

    world_js = (ROOT / "bdi_rl" / "readers" / "static" / "world.js").read_text()
    listed = re.search(r"const JOINT_INK = \[([^\]]*)\]", world_js)[1]
    assert tuple(re.findall(r'"(#[0-9a-f]{6})"', listed)) == JOINT_INK

"""A shared world's joint steps as readers show them (``readers.joint``, the viewer's joint-action
panel): the numbers from real runs of the shipped specs, and the panel in a real browser
(Debian's chromium), with every agent on the lbforaging map, under the viewer's CSP."""

from __future__ import annotations

from pathlib import Path

import pytest

from bdi_rl.readers.joint import JointError, joint_episode, joint_summary
from bdi_rl.readers.runindex import RunIndex
from bdi_rl.trace.kinds import WORLD_STEP
from bdi_rl.trace.reading import read_trace
from tests.conftest import run_cli, run_named
from tests.test_charts_browser import Watched
from tests.test_viewer_browser import Viewer

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def world_runs(tmp_path_factory) -> Path:
    """The climbing game (1000 one-step episodes) and 30 episodes of lbforaging, at step level."""
    runs = tmp_path_factory.mktemp("joint") / "runs"
    for args in (["climbing"], ["foraging", "--episodes", "30"]):
        result = run_cli("run", *args, "--runs", str(runs), "--no-progress")
        assert result.returncode == 0, result.stderr
    return runs


def _index(runs: Path, experiment: str) -> RunIndex:
    index = RunIndex(run_named(runs, experiment))
    index.refresh()
    return index


pytestmark = pytest.mark.slow  # whole CLI runs (and a browser)


def test_the_summary_counts_every_joint_step_of_its_windows(world_runs) -> None:
    index = _index(world_runs, "climbing")
    summary = joint_summary(index)
    assert summary["seats"] == [["player_0", "player-1"], ["player_1", "player-2"]]
    steps = [e["data"] for e in read_trace(index.run_dir / "trace.jsonl") if e["kind"] == WORLD_STEP]
    for part, window in (("first", steps[:100]), ("last", steps[-100:])):
        shown = summary[part]
        assert shown["episodes"] == [window[0]["episode"], window[-1]["episode"]] and shown["steps"] == 100
        counted = {tuple(r["actions"]): r["count"] for r in shown["joint_actions"]}
        assert sum(counted.values()) == 100
        assert counted == {a: sum(tuple(s["actions"]) == a for s in window) for a in counted}
    # coordinated: late in training the agents play the optimum, and it pays 11 to each
    best = summary["last"]["joint_actions"][0]
    assert best["actions"] == [0, 0] and best["rewards"] == [11.0, 11.0] and best["count"] >= 90


def test_an_episodes_joint_steps_in_order(world_runs) -> None:
    index = _index(world_runs, "foraging")
    steps = [e["data"] for e in read_trace(index.run_dir / "trace.jsonl") if e["kind"] == WORLD_STEP]
    for episode in (0, 17, 29):
        expected = [s for s in steps if s["episode"] == episode]
        shown = joint_episode(index, episode)["steps"]
        assert [{k: v for k, v in s.items() if k != "seq"} for s in shown] == expected
        assert [s["step"] for s in shown] == list(range(1, len(expected) + 1))
    with pytest.raises(JointError, match="episode: the world has no joint step in episode 30"):
        joint_episode(index, 30)


def test_a_run_without_a_world_says_so(cli_run) -> None:
    index = RunIndex(cli_run)
    index.refresh()
    with pytest.raises(JointError, match=r"this run has no shared world"):
        joint_summary(index)


def test_the_joint_panel_and_every_agent_on_the_map(browser, world_runs) -> None:
    viewer = Viewer(world_runs)
    try:
        for experiment in ("climbing", "foraging"):
            watched = Watched(browser)
            page = watched.page
            page.goto(f"{viewer.url}/run/{run_named(world_runs, experiment).name}")
            page.wait_for_selector("#joint[data-ready='1']")
            last = page.locator("#joint-last tbody tr").first.locator("td").all_text_contents()
            if experiment == "climbing":
                assert last[0] == "(0, 0)" and last[2] == "11, 11"
                assert page.is_hidden("#joint-map-panel")  # a matrix game has no map
            else:
                assert page.is_visible("#joint-map-panel")
                canvas = page.locator("#joint-map")
                assert canvas.get_attribute("data-agents") == "2" and canvas.get_attribute("data-items") == "1"
                page.fill("#joint-episode", "12")
                page.click("#joint-form button")
                page.wait_for_function("() => document.getElementById('joint-shown').textContent === '12'")
                rows = page.locator("#joint-steps tbody tr").count()
                index = _index(world_runs, "foraging")
                assert rows == len(joint_episode(index, 12)["steps"])
                page.fill("#joint-map-slider", str(rows - 1))
                page.dispatch_event("#joint-map-slider", "input")
                assert f"step {rows} of {rows}" in page.text_content("#joint-map-step")
            assert not watched.problems and not watched.violations(), (watched.problems, watched.violations())
            page.close()
    finally:
        viewer.stop()


def test_export_joint_writes_one_row_per_agent_per_step(world_runs, tmp_path) -> None:
    import csv

    run_dir = run_named(world_runs, "climbing")
    out = tmp_path / "joint.csv"
    result = run_cli("export", str(run_dir), "--joint", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{out}: 2000 rows"
    rows = list(csv.DictReader(out.open()))
    steps = [e["data"] for e in read_trace(run_dir / "trace.jsonl") if e["kind"] == WORLD_STEP]
    assert [(r["episode"], r["agent"], r["action"], r["reward"]) for r in rows[:4]] == [
        (str(s["episode"]), agent, str(s["actions"][i]), str(s["rewards"][i]))
        for s in steps[:2]
        for i, agent in enumerate(s["agents"])
    ]
    # the other shipped world (lbforaging) exports as well
    result = run_cli("export", str(run_named(world_runs, "foraging")), "--joint", str(tmp_path / "lbf.csv"))
    assert result.returncode == 0 and (tmp_path / "lbf.csv").is_file(), result.stderr


def test_export_joint_of_a_run_without_a_world_is_one_line(cli_run, tmp_path) -> None:
    out = tmp_path / "joint.csv"
    result = run_cli("export", str(cli_run), "--joint", str(out))
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "this run has no shared world" in result.stderr and not out.exists()


def test_plot_shows_the_joint_actions_of_a_matrix_game_and_episode_lengths_of_foraging(world_runs, tmp_path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bdi_rl.readers.plots import _joint_panel

    _, ax = plt.subplots()
    assert _joint_panel(ax, run_named(world_runs, "climbing")) is None
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels[0] == "(0, 0)"  # the optimum: the most played late in training
    assert ax.get_lines()[0].get_ydata()[-1] > 0.9
    _, ax = plt.subplots()
    assert _joint_panel(ax, run_named(world_runs, "foraging")) is None
    assert "Joint episode length" in ax.get_title() and len(ax.get_lines()[0].get_xdata()) == 30
    result = run_cli("plot", str(run_named(world_runs, "foraging")), "-o", str(tmp_path / "f.png"))
    assert result.returncode == 0 and (tmp_path / "f.png").stat().st_size > 10_000, result.stderr


def test_inspect_goes_to_a_joint_episode_of_the_world_agent(world_runs) -> None:
    """The world agent writes no episode.end: its events' own stamps find the episode."""
    result = run_cli(
        "inspect", str(run_named(world_runs, "foraging")), "--agent", "world", "--episode", "7", "--step", "2"
    )
    assert result.returncode == 0, result.stderr
    assert "episode 7, step 2" in result.stdout and "world.step" in result.stdout
    result = run_cli("inspect", str(run_named(world_runs, "foraging")), "--agent", "world", "--episode", "99")
    assert result.returncode == 2 and "episode 99 is not in the trace (episodes 0..29)" in result.stderr

"""A shared world in a real browser (Debian's chromium, Playwright): the joint-action panel
of the climbing game (the optimum late in training, a chosen range of episodes counted), and
the lbforaging world of the world agent in the inspector's world panel, both agents and the
food on the map, stepped by the episode player; no script error and no CSP violation."""

from __future__ import annotations

from pathlib import Path

import pytest

from bdi_rl.readers.runindex import RunIndex
from bdi_rl.readers.world import episode_world
from tests.conftest import run_cli, run_named
from tests.test_charts_browser import Watched
from tests.test_viewer_browser import Viewer

pytestmark = pytest.mark.slow  # whole CLI runs and a browser

ROOT = Path(__file__).resolve().parent.parent
WORLD = "world@localhost"


@pytest.fixture(scope="module")
def world_runs(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("world-shared-browser") / "runs"
    for args in (["agents/climbing.toml"], ["agents/foraging.toml", "--episodes", "20"]):
        result = run_cli("run", *args, "--runs", str(runs), "--no-progress", cwd=ROOT)
        assert result.returncode == 0, result.stderr
    return runs


@pytest.fixture(scope="module")
def viewer(world_runs):
    server = Viewer(world_runs)
    yield server
    server.stop()


def _clean(watched: Watched) -> None:
    assert not watched.problems and not watched.violations(), (watched.problems, watched.violations())


def test_the_joint_action_panel_of_a_matrix_game(browser, viewer, world_runs) -> None:
    watched = Watched(browser)
    page = watched.page
    page.goto(f"{viewer.url}/run/{run_named(world_runs, 'climbing').name}")
    page.wait_for_selector("#joint[data-ready='1']")
    assert "player_0 = player-1" in page.text_content("#joint-world")
    top = page.locator("#joint-last tbody tr").first.locator("td").all_text_contents()
    assert top[0] == "(0, 0)" and top[2] == "11, 11"
    assert page.is_hidden("#joint-map-panel")  # a matrix game has no map
    # every episode is one joint step: the whole range counts each once
    page.fill("#joint-from", "0")
    page.fill("#joint-to", "999")
    page.click("#joint-range-form button")
    page.wait_for_function("() => document.getElementById('joint-range-panel').dataset.ready === '0-999'")
    counts = page.locator("#joint-range tbody tr td:nth-child(2)").all_text_contents()
    assert sum(int(c) for c in counts) == 1000
    page.fill("#joint-from", "10")  # a range backwards: said, nothing else changes
    page.fill("#joint-to", "5")
    page.click("#joint-range-form button")
    page.wait_for_function("() => document.getElementById('joint-range-error').textContent !== ''")
    assert "is after episode 5" in page.text_content("#joint-range-error")
    assert page.get_attribute("#joint-range-panel", "data-ready") == "0-999"
    _clean(watched)
    page.close()


def test_every_agent_and_the_food_on_the_lbforaging_map(browser, viewer, world_runs) -> None:
    run_dir = run_named(world_runs, "foraging")
    index = RunIndex(run_dir)
    index.refresh()
    expected = episode_world(index, WORLD, 3)["frames"]
    watched = Watched(browser)
    page = watched.page
    page.goto(f"{viewer.url}/run/{run_dir.name}")
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_selector("#joint[data-ready='1']")
    joint_map = page.locator("#joint-map")  # the joint panel's map of its first episode
    assert joint_map.get_attribute("data-agents") == "2" and joint_map.get_attribute("data-items") == "1"
    # the world agent in the inspector: its world panel plays the joint episode
    page.select_option("#agent", WORLD)
    page.fill("#jump-episode", "3")
    page.fill("#jump-step", "1")
    page.click("#jump button")
    page.wait_for_function(  # joint episode 3's first frame, not that of the episode shown before
        "() => { const d = document.getElementById('world-canvas').dataset; "
        "return d.episode === '3' && d.frame === '0'; }"
    )
    canvas = page.locator("#world-canvas")
    assert canvas.get_attribute("data-agents") == "2" and canvas.get_attribute("data-items") == "1"
    assert canvas.get_attribute("data-frames") == str(len(expected))
    first = expected[0]["agents"][0]
    assert canvas.get_attribute("data-agent-cell") == f"{first['x']},{first['y']}"
    assert "joint step 1 of" in page.text_content("#world-frame")
    assert "forager-1: blue" in page.text_content("#world-note")
    assert page.is_visible("#world-video")  # the joint episode as bdi-rl render draws it
    video = page.request.get(viewer.url + page.get_attribute("#world-video", "href"))
    assert video.ok and video.headers["content-type"] == "image/gif" and video.body().startswith(b"GIF8")
    page.click("#world-forward")
    page.wait_for_function("() => document.getElementById('world-canvas').dataset.frame === '1'")
    assert canvas.get_attribute("data-position") == str(expected[1]["position"])
    # the inspector follows the player: its event is that joint step
    page.wait_for_function(f"() => document.getElementById('position').value === '{expected[1]['position']}'")
    assert "world.step" in page.text_content("#event")
    _clean(watched)
    page.close()


def test_the_qtable_panel_of_a_seated_learner(browser, viewer, world_runs) -> None:
    """A climbing player's table, as numbers (no map): its one state's Q-value per action,
    the greedy one (the optimum, a0) in bold; no "no such registered environment"."""
    from bdi_rl.rl.checkpoint import load_checkpoint

    run_dir = run_named(world_runs, "climbing")
    q = load_checkpoint(run_dir / "qtables" / "player-1.npz").q
    watched = Watched(browser)
    page = watched.page
    page.goto(f"{viewer.url}/run/{run_dir.name}")
    page.wait_for_selector("body[data-ready='1']")
    page.select_option("#agent", "player-1@localhost")
    page.wait_for_function("() => document.getElementById('qtable-rows').dataset.states === '1'")
    assert page.is_hidden("#qtable-canvas") and page.is_visible("#qtable-rows")
    note = page.text_content("#qtable-note")
    assert "player-1 learns in the shared world climbing_game_v0" in note and "registered" not in note
    assert page.locator("#qtable-rows thead th").all_text_contents() == ["state", "a0", "a1", "a2"]
    cells = page.locator("#qtable-rows tbody td").all_text_contents()
    assert cells[0] == "0" and [float(c) for c in cells[1:]] == pytest.approx(list(q[0]), abs=1e-3)
    assert page.locator("#qtable-rows tbody td.greedy").all_text_contents() == [cells[1]]
    _clean(watched)
    page.close()

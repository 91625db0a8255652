"""The world panel and the episode player in a real browser (Debian's chromium, Playwright):
the map with the agent where the selected step has it, play moving the agent and the inspector
with it, step forward moving exactly one step, and no CSP violation or script error."""

from __future__ import annotations

from pathlib import Path

import pytest

from bdi_rl.readers.runindex import RunIndex
from bdi_rl.readers.world import episode_world
from tests.conftest import run_named
from tests.test_viewer_browser import Viewer

LEARNER = "learner@localhost"
#: Collects the page's securitypolicyviolation events (an init script: the page's CSP does not apply to it).
CSP_PROBE = """window.cspViolations = [];
document.addEventListener("securitypolicyviolation",
    e => window.cspViolations.push(e.violatedDirective + " " + e.blockedURI));"""


@pytest.fixture
def viewer(runs):
    server = Viewer(runs)
    yield server
    server.stop()


def _episode(runs: Path) -> tuple[str, int, dict]:
    """The tiny run's longest episode, as the world API describes it."""
    run_dir = run_named(runs, "tiny")
    index = RunIndex(run_dir)
    index.refresh()
    longest = max(index.agents[LEARNER].episodes, key=lambda e: e["length"])["episode"]
    return run_dir.name, longest, episode_world(index, LEARNER, longest)


def _open(browser, viewer, run: str, episode: int, problems: list[str]):
    page = browser.new_page()
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("console", lambda msg: problems.append(f"console: {msg.text}") if msg.type == "error" else None)
    page.add_init_script(script=CSP_PROBE)
    page.goto(f"{viewer.url}/run/{run}")
    page.wait_for_selector("body[data-ready='1']")
    page.fill("#jump-episode", str(episode))
    page.fill("#jump-step", "0")
    page.click("#jump button")
    # the jumped-to episode's first frame, not the first frame of the episode shown before it
    page.wait_for_function(
        "e => { const d = document.getElementById('world-canvas').dataset; "
        "return d.episode === e && d.frame === '0'; }",
        arg=str(episode),
    )
    return page


def _violations(page, problems: list[str]) -> list[str]:
    return problems + [f"CSP: {v}" for v in page.evaluate("() => window.cspViolations || []")]


def _cell(frame: dict) -> str:
    return f"{frame['cell']['x']},{frame['cell']['y']}"


def test_world_panel_draws_the_map_and_the_agent(browser, viewer, runs):
    run, episode, world = _episode(runs)
    problems: list[str] = []
    page = _open(browser, viewer, run, episode, problems)
    canvas = page.locator("#world-canvas")
    assert canvas.is_visible() and canvas.get_attribute("data-family") == "frozenlake"
    assert canvas.get_attribute("data-agent-cell") == _cell(world["frames"][0])
    assert canvas.get_attribute("data-frames") == str(len(world["frames"]))
    assert page.evaluate(
        "[document.getElementById('world-canvas').width, document.getElementById('world-canvas').height]"
    ) == [360, 360]  # 4x4 cells of 90 px
    # pixels drawn: the start cell's green, a hole's dark blue
    start, hole = page.evaluate("""() => {
        const ctx = document.getElementById('world-canvas').getContext('2d');
        return [Array.from(ctx.getImageData(5, 5, 1, 1).data), Array.from(ctx.getImageData(175, 95, 1, 1).data)];
    }""")
    assert start[:3] == [0xB8, 0xDC, 0xB0] and hole[:3] == [0x2F, 0x40, 0x50]
    assert "episode " + str(episode) in page.text_content("#world-note")
    href = page.get_attribute("#world-video", "href")
    assert href.endswith(f"/render?episode={episode}")
    video = page.request.get(viewer.url + href)
    assert video.ok and video.headers["content-type"] == "image/gif" and video.body().startswith(b"GIF8")
    beliefs = page.text_content("#world-beliefs")
    assert "pos(" in beliefs and "source percept" in beliefs
    assert _violations(page, problems) == []
    page.close()


def test_play_moves_the_agent_and_the_inspector(browser, viewer, runs):
    run, episode, world = _episode(runs)
    frames = world["frames"]
    problems: list[str] = []
    page = _open(browser, viewer, run, episode, problems)
    page.select_option("#world-speed", "16")
    page.click("#world-play")
    last = len(frames) - 1
    page.wait_for_function(f"() => document.getElementById('world-canvas').dataset.frame === '{last}'", timeout=20000)
    page.wait_for_function("() => document.getElementById('world-pause').disabled")  # stopped at the end
    end = frames[-1]
    page.wait_for_function(f"() => document.getElementById('position').value === '{end['position']}'")
    assert page.get_attribute("#world-canvas", "data-agent-cell") == _cell(end)
    assert f"move {last} of {last}" in page.text_content("#world-frame")
    x, y = end["cell"]["x"], end["cell"]["y"]
    page.wait_for_function(f"() => document.getElementById('beliefs').textContent.includes('pos({x}, {y})')")
    assert f"episode {episode}" in page.text_content("#where")
    assert _violations(page, problems) == []
    page.close()


def test_step_forward_moves_exactly_one_step(browser, viewer, runs):
    run, episode, world = _episode(runs)
    frames = world["frames"]
    problems: list[str] = []
    page = _open(browser, viewer, run, episode, problems)
    for k in (1, 2, 3):
        page.click("#world-forward")
        page.wait_for_function(f"() => document.getElementById('world-canvas').dataset.frame === '{k}'")
        page.wait_for_function(f"() => document.getElementById('position').value === '{frames[k]['position']}'")
        assert page.get_attribute("#world-canvas", "data-agent-cell") == _cell(frames[k])
        step = world["steps"][k - 1]
        assert f"move {k} of {len(frames) - 1} · {step['action']}" in page.text_content("#world-frame")
        # the Q-learner panel shows the step that led here
        page.wait_for_function(f"() => document.getElementById('rl').textContent.includes('state {step['s']} →')")
    page.click("#world-back")
    page.wait_for_function("() => document.getElementById('world-canvas').dataset.frame === '2'")
    assert page.get_attribute("#world-canvas", "data-agent-cell") == _cell(frames[2])
    assert _violations(page, problems) == []
    page.close()

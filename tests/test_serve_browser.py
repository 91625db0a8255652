"""Issue 18's "done means", as a user does it in a real browser (Debian's chromium): from
``bdi-rl serve``, start a 5-seed sweep of frozenlake-8x8, watch the five curves and their IQM
band grow live, stop one run, open the world view of a learner at a step; a request without
the token changes nothing."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page

from bdi_rl.readers.runindex import RunIndex
from bdi_rl.readers.world import episode_world
from bdi_rl.store import read_sweeps
from tests.test_charts_browser import _traces
from tests.test_control import Serve
from tests.test_world_browser import CSP_PROBE

pytestmark = pytest.mark.slow  # a browser and five whole runs

SEEDS = 5
EPISODES = 2500  # with the spec's eval_every = 1000: two evaluations during training, and the final one


def _page(browser, problems: list[str]) -> Page:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("console", lambda msg: problems.append(f"console: {msg.text}") if msg.type == "error" else None)
    page.add_init_script(script=CSP_PROBE)
    return page


def _curve_points(page: Page) -> list[int]:
    """How many points each run's training curve has on the compare page now."""
    return [len(t["x"]) for t in _traces(page, "chart-return") if t["meta"] == "curve"]


def test_a_sweep_from_the_browser_live_curves_stop_one_world_view(browser, tmp_path):
    serve = Serve(tmp_path / "runs", jobs=2)
    problems: list[str] = []
    try:
        control = _page(browser, problems)
        control.goto(serve.page_url)
        control.wait_for_selector("body[data-ready='1']")
        control.select_option("#spec-name", "frozenlake-8x8")
        control.wait_for_function("() => document.querySelector('#spec-text').value.includes('frozenlake-8x8')")
        control.fill("#episodes", str(EPISODES))
        control.fill("#sweep-size", str(SEEDS))
        control.click("#start-sweep")
        control.wait_for_selector(f"#queue tbody tr[data-job='{SEEDS}']")
        states = control.eval_on_selector_all("#queue tbody tr[data-job]", "rows => rows.map(r => r.dataset.state)")
        assert states == ["running", "running", "queued", "queued", "queued"]  # two at once on --jobs 2

        # The compare page follows the sweep while it runs: five curves and their IQM band grow.
        sweep_link = control.get_attribute("#queue tbody tr[data-job='1'] a[href^='/compare?sweep=']", "href")
        compare = _page(browser, problems)
        compare.goto(serve.url + sweep_link)
        compare.wait_for_selector("body[data-ready='1']")
        compare.wait_for_function("() => document.getElementById('live').hidden === false")
        first = _curve_points(compare)
        compare.wait_for_function(
            "before => document.getElementById('chart-return').data.filter(t => t.meta === 'curve')"
            ".map(t => t.x.length).reduce((a, b) => a + b, 0) > before",
            arg=sum(first),
            timeout=60_000,
        )

        # Stop the third run while it runs; the others go on to the end.
        control.wait_for_selector(
            "#queue tbody tr[data-job='3'][data-state='running'] a[href^='/run/']", timeout=120_000
        )
        control.click("#queue tbody tr[data-job='3'] button.stop")
        control.wait_for_selector("#queue tbody tr[data-job='3'][data-state='stopped']", timeout=60_000)
        for job in ("1", "2", "4", "5"):
            control.wait_for_selector(f"#queue tbody tr[data-job='{job}'][data-state='finished']", timeout=240_000)
        jobs = serve.jobs()
        assert [j["state"] for j in jobs] == ["finished", "finished", "stopped", "finished", "finished"]
        assert json.loads((serve.runs / jobs[2]["run"] / "summary.json").read_text())["interrupted"] is True
        (sweep,) = read_sweeps(serve.runs)
        assert sweep.runs == [j["run"] for j in jobs] and sweep.seeds == [1, 2, 3, 4, 5]

        compare.wait_for_function("() => document.getElementById('live').hidden === true", timeout=60_000)
        traces = _traces(compare, "chart-return")
        curves = [t for t in traces if t["meta"] == "curve"]
        assert len(curves) == SEEDS and {"iqm", "ci", "mean", "band"} <= {t["meta"] for t in traces}
        ends = sorted(max(t["x"]) for t in curves)  # the stopped run ends early, the others at the last episode
        assert ends[0] < ends[1] and ends[1:] == [EPISODES] * (SEEDS - 1)
        evaluations = [t for t in _traces(compare, "chart-eval-return") if t["meta"] == "curve"]
        assert sorted(len(t["x"]) for t in evaluations)[1:] == [3] * (SEEDS - 1)  # 1000, 2000 and the end

        # The world view of a learner of another run, at episode 2000, step 3.
        run = jobs[3]["run"]
        page = _page(browser, problems)
        page.goto(f"{serve.url}/run/{run}")
        page.wait_for_selector("body[data-ready='1']")
        page.fill("#jump-episode", "2000")
        page.fill("#jump-step", "3")
        page.click("#jump button")
        index = RunIndex(serve.runs / run)
        index.refresh()
        world = episode_world(index, "learner@localhost", 2000)
        # the inspector's step 3 of an episode-mode learner is its rl.step stamped 3 (the fourth move)
        mind = page.evaluate(
            "async u => (await fetch(u)).json()", f"/api/runs/{run}/agents/learner/mind?episode=2000&step=3"
        )
        (frame,) = [f for f in world["frames"] if f["position"] == mind["position"]]
        page.wait_for_function(
            "k => document.getElementById('world-canvas').dataset.frame === String(k)", arg=frame["frame"]
        )
        assert page.get_attribute("#world-canvas", "data-agent-cell") == f"{frame['cell']['x']},{frame['cell']['y']}"
        assert page.get_attribute("#world-canvas", "data-position") == page.input_value("#position")
        assert page.text_content("#world-frame").startswith(f"move {frame['frame']} of")
        assert page.get_attribute("#world-canvas", "data-family") == "frozenlake"
        assert "episode 2000" in page.text_content("#where")

        # Without the token nothing changes: no job, no run directory, no sweep.
        before = (serve.jobs(), sorted(p.name for p in serve.runs.iterdir()), read_sweeps(serve.runs))
        response = page.request.post(
            f"{serve.url}/api/control/sweeps",
            data={"spec": "frozenlake-8x8", "seeds": 2},
            headers={"Origin": serve.url},
        )
        assert response.status == 403
        assert (serve.jobs(), sorted(p.name for p in serve.runs.iterdir()), read_sweeps(serve.runs)) == before
        assert problems == []
        assert all(p.evaluate("window.cspViolations") == [] for p in (control, compare, page))
    finally:
        serve.stop()

"""The charts in a real browser (Debian's chromium, driven by Playwright): plotly.js served by
the viewer draws the run page's and the compare page's curves under the strict CSP, with no
violation and no script error; the x-axis and smoothing controls redraw them; hover shows values."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from playwright.sync_api import Page

from bdi_rl.store import RunWriter, Sweep, write_sweep
from tests.conftest import MINIMAL_SPEC
from tests.test_viewer_browser import Viewer

pytestmark = pytest.mark.slow  # a browser and a viewer process

GROUPED = "sweep-20261124-120000"
SWEEP = "sweep-20261123-220000"
SEEDS = 4
EPISODES = 40


@pytest.fixture(scope="module")
def chart_runs(tmp_path_factory) -> tuple[Path, list[str]]:
    """Four runs of one spec (seeds 0-3, tests/fakeruns.py) and their sweep record."""
    from tests.fakeruns import learner_run

    base = tmp_path_factory.mktemp("charts")
    spec = base / "tiny.toml"
    spec.write_text(MINIMAL_SPEC)
    runs = base / "runs"
    ids = [
        learner_run(runs, spec, rng_seed=11 + k, seed=k, episodes=EPISODES, trace="episode").name for k in range(SEEDS)
    ]
    write_sweep(runs, Sweep(id=SWEEP, spec="tiny", seeds=list(range(SEEDS)), runs=ids, created=time.time()))
    # the same runs as a sweep file's: two configurations of learning.alpha, two seeds each
    write_sweep(runs, Sweep(id=GROUPED, spec="tiny", seeds=[0, 0, 1, 1], runs=ids, created=time.time(),
                            axes=["learning.alpha"], configurations=[{"learning.alpha": 0.1}, {"learning.alpha": 0.4}],
                            configuration=[0, 1, 0, 1]))  # fmt: skip
    return runs, ids


@pytest.fixture(scope="module")
def viewer(chart_runs):
    server = Viewer(chart_runs[0])
    yield server
    server.stop()


class Watched:
    """A page whose console errors, script errors and CSP violations are collected."""

    def __init__(self, browser) -> None:
        self.page: Page = browser.new_page(viewport={"width": 1300, "height": 1000})
        self.problems: list[str] = []
        self.page.on(
            "console",
            lambda m: (
                self.problems.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "warning") or "CSP" in m.text
                else None
            ),
        )
        self.page.on("pageerror", lambda exc: self.problems.append(f"pageerror: {exc}"))
        # Playwright's init script is not subject to the page's CSP: it only listens.
        self.page.add_init_script(
            "document.addEventListener('securitypolicyviolation', e => "
            "(window.__violations = window.__violations || []).push(e.violatedDirective))"
        )

    def violations(self) -> list[str]:
        return self.page.evaluate("window.__violations || []")


def _traces(page: Page, chart: str) -> list[dict]:
    """What plotly drew in a chart: each trace's kind (meta), name and points."""
    return page.evaluate(
        "id => document.getElementById(id).data.map(t => ({meta: t.meta, name: t.name, x: t.x, y: t.y}))", chart
    )


def _redraw(page: Page, action) -> None:
    """Do ``action`` and wait until the charts are drawn anew."""
    drawn = int(page.get_attribute("body", "data-charts") or 0)
    action()
    page.wait_for_function("n => Number(document.body.dataset.charts) > n", arg=drawn)


def test_run_page_charts_controls_and_hover(browser, viewer, chart_runs):
    _, ids = chart_runs
    watched = Watched(browser)
    page = watched.page
    page.goto(f"{viewer.url}/run/{ids[0]}")
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_selector("#chart-return .main-svg")

    # plotly.js drew every chart: one curve per learner (one point per episode) and its evaluation
    ret = _traces(page, "chart-return")
    assert [t["meta"] for t in ret] == ["curve", "evaluation"]
    assert len(ret[0]["x"]) == EPISODES and ret[0]["x"][0] == 1 and ret[1]["x"] == [EPISODES]
    assert int(page.get_attribute("#chart-return", "data-points")) == EPISODES
    assert page.locator("#chart-return .scatterlayer .trace").count() == 2
    assert [t["meta"] for t in _traces(page, "chart-success")] == ["curve", "evaluation"]
    assert [t["meta"] for t in _traces(page, "chart-epsilon")] == ["curve"]
    assert {"band", "mean"} <= {t["meta"] for t in _traces(page, "chart-band")}
    assert page.locator("#chart-return .modebar").count() == 1  # zoom, pan, reset, PNG

    # smoothing: 0 is the raw returns (0 or 1 on FrozenLake), a window averages them
    smoothed = ret[0]["y"]
    page.fill("#smooth", "0")
    _redraw(page, lambda: page.dispatch_event("#smooth", "change"))
    raw = _traces(page, "chart-return")[0]["y"]
    assert set(raw) <= {0, 1} and raw != smoothed and any(0 < v < 1 for v in smoothed)
    _redraw(page, lambda: page.select_option("#smooth-method", "ema"))
    assert _traces(page, "chart-return")[0]["y"] == raw  # window 0: raw for either method
    page.fill("#smooth", "5")
    _redraw(page, lambda: page.dispatch_event("#smooth", "change"))
    assert _traces(page, "chart-return")[0]["y"] not in (raw, smoothed)

    # the x-axis: env steps (cumulative episode lengths) reach further than episodes
    episodes_range = page.evaluate("document.getElementById('chart-return').layout.xaxis.range")
    assert episodes_range[1] < EPISODES * 1.2  # plotly pads a little for the markers
    _redraw(page, lambda: page.select_option("#x-axis", "env_steps"))
    page.wait_for_function(
        f"() => document.getElementById('chart-return')._fullLayout.xaxis.range[1] > {EPISODES * 2}"
    )  # a FrozenLake episode takes several steps
    steps = _traces(page, "chart-return")
    assert steps[0]["x"][-1] > EPISODES and steps[1]["x"] == [steps[0]["x"][-1]]
    assert "env steps" in page.text_content("#chart-return .g-xtitle")
    _redraw(page, lambda: page.select_option("#x-axis", "time"))
    assert "wall time" in page.text_content("#chart-return .g-xtitle")

    # hover: the values under the mouse, put on the data point nearest a quarter of the plot's
    # width (on the wall-time axis the points bunch up wherever episodes ran fast, so the plot's
    # centre may be far from every point; and epsilon starts at 1, the plot's top edge, where
    # the modebar shows up on the right half once the mouse is over the chart and takes the hover)
    box = page.locator("#chart-epsilon .nsewdrag").bounding_box()
    x, y = page.evaluate("""() => {
        const gd = document.getElementById('chart-epsilon'), t = gd.data[0];
        const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
        const px = t.x.map(v => xa.l2p(xa.d2l(v))), aim = xa._length / 4;
        const k = px.reduce((best, p, i) => Math.abs(p - aim) < Math.abs(px[best] - aim) ? i : best, 0);
        return [px[k], ya.l2p(ya.d2l(t.y[k]))];
    }""")
    page.mouse.move(box["x"] + x - 6, box["y"] + y)
    page.mouse.move(box["x"] + x, box["y"] + y, steps=3)
    page.wait_for_function("() => document.querySelector('#chart-epsilon .hoverlayer').textContent.length > 0")
    hover = page.text_content("#chart-epsilon .hoverlayer")
    assert any(ch.isdigit() for ch in hover), hover

    # round tick labels, none repeated (the canvas charts read "0.01, 0.01")
    ticks = page.locator("#chart-success .ytick text").all_text_contents()
    assert ticks and len(set(ticks)) == len(ticks), ticks

    assert not watched.problems and not watched.violations(), (watched.problems, watched.violations())


def test_compare_page_overlays_runs_with_iqm(browser, viewer, chart_runs):
    _, ids = chart_runs
    for url in (f"/compare?runs={','.join(ids)}", f"/compare?sweep={SWEEP}"):
        watched = Watched(browser)
        page = watched.page
        page.goto(viewer.url + url)
        page.wait_for_selector("body[data-ready='1']")
        traces = _traces(page, "chart-return")
        kinds = [t["meta"] for t in traces]
        assert kinds.count("curve") == SEEDS  # each run
        assert kinds.count("iqm") == 1 and kinds.count("ci") == 1 and kinds.count("band") == 1 and "mean" in kinds
        iqm = next(t for t in traces if t["meta"] == "iqm")
        assert len(iqm["x"]) == EPISODES and all(v is not None for v in iqm["y"])
        ci = next(t for t in traces if t["meta"] == "ci")
        assert len(ci["x"]) == 2 * EPISODES  # a band: up along the top, back along the bottom
        assert page.locator("#chart-return .scatterlayer .trace").count() == len(traces)
        evals = [t["meta"] for t in _traces(page, "chart-eval-return")]
        assert evals.count("curve") == SEEDS and "iqm" in evals
        assert len(page.locator("#compare-what a").all()) == SEEDS
        # the x-axis control works here too
        _redraw(page, lambda p=page: p.select_option("#x-axis", "env_steps"))
        assert next(t for t in _traces(page, "chart-return") if t["meta"] == "iqm")["x"][-1] > EPISODES
        assert not watched.problems and not watched.violations(), (url, watched.problems, watched.violations())


def test_a_sweep_of_configurations_is_grouped_on_its_page(browser, viewer, chart_runs):
    """A sweep file's sweep: its compare page shows a table of its configurations (sortable,
    as CSV) and the metric against its axis; a sweep of seeds only shows no such table."""
    watched = Watched(browser)
    page = watched.page
    page.goto(viewer.url + f"/compare?sweep={GROUPED}")
    page.wait_for_selector("body[data-ready='1']")
    assert page.get_attribute("body", "data-groups") == "2"
    rows = page.locator("#groups-table tbody tr")
    assert rows.count() == 2
    labels = sorted(rows.nth(k).locator("td").nth(0).inner_text() for k in range(2))
    assert labels == ["learning.alpha=0.1", "learning.alpha=0.4"]
    assert all(rows.nth(k).locator("td").nth(1).inner_text() == "2/2" for k in range(2))
    page.click("#groups-table th[data-key='configuration']")  # sort by it: ascending
    assert page.locator("#groups-table tbody tr td:first-child").all_inner_texts() == labels
    page.click("#groups-table th[data-key='configuration']")  # again: descending
    assert page.locator("#groups-table tbody tr td:first-child").all_inner_texts() == labels[::-1]
    assert page.get_attribute("#groups-csv", "href") == f"/api/sweeps/{GROUPED}/groups?format=csv"
    assert page.get_attribute("#groups-chart", "data-traces") == "1"
    _redraw(page, lambda p=page: p.check("#by-configuration"))  # the curves by configuration
    groups = [t for t in _traces(page, "chart-return") if t["meta"] == "group"]
    assert sorted(t["name"] for t in groups) == [
        "learning.alpha=0.1 (2 runs, mean)",
        "learning.alpha=0.4 (2 runs, mean)",
    ]
    assert all(len(t["x"]) == EPISODES for t in groups)
    assert not [t for t in _traces(page, "chart-return") if t["meta"] == "curve"]  # no single runs
    assert not watched.problems and not watched.violations(), (watched.problems, watched.violations())
    page.goto(viewer.url + f"/compare?sweep={SWEEP}")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#groups").is_hidden() and page.locator("#by-configuration-box").is_hidden()


def test_runs_list_picks_runs_to_compare(browser, viewer, chart_runs):
    _, ids = chart_runs
    watched = Watched(browser)
    page = watched.page
    page.goto(viewer.url + "/")
    page.wait_for_selector("#runs tbody tr")
    assert page.is_disabled("#compare")
    for run in ids[:3]:
        page.check(f"input.pick[value='{run}']")
    page.click("#compare")
    page.wait_for_selector("body[data-ready='1']")
    names = [t["name"] for t in _traces(page, "chart-return") if t["meta"] == "curve"]
    assert sorted(names) == ["seed 0", "seed 1", "seed 2"]
    page.go_back()
    page.wait_for_selector("#sweeps li a")
    page.click(f"#sweeps a:text('{SWEEP}')")
    page.wait_for_selector("body[data-ready='1']")
    assert page.text_content("#compare-title") == f"sweep {SWEEP}"
    page.goto(viewer.url + "/compare?runs=../etc")
    page.wait_for_function("() => document.getElementById('compare-error').textContent.includes('404')")
    problems = [p for p in watched.problems if "404" not in p]  # the refused name's own 404
    assert not problems and not watched.violations(), (problems, watched.violations())


def test_compare_page_follows_a_live_run(browser, chart_runs, tmp_path):
    """A run still being written (no run.stop, no summary yet) grows on the compare page
    without a reload; the page stops polling once it has ended."""
    import shutil

    runs, ids = chart_runs
    live_runs = tmp_path / "runs"
    shutil.copytree(runs / ids[1], live_runs / ids[1])
    growing = live_runs / ids[0]
    growing.mkdir()
    shutil.copy(runs / ids[0] / "spec.toml", growing / "spec.toml")
    lines = (runs / ids[0] / "trace.jsonl").read_bytes().splitlines(keepends=True)
    first = lines[:22]  # run.start, agent.start and 20 episodes
    (growing / "trace.jsonl").write_bytes(b"".join(first))
    writer = RunWriter.acquire(growing, "a test's stand-in for bdi-rl run")  # live: a writer holds it
    server = Viewer(live_runs)
    try:
        watched = Watched(browser)
        page = watched.page
        page.goto(f"{server.url}/compare?runs={ids[0]},{ids[1]}")
        page.wait_for_selector("body[data-ready='1']")
        assert page.is_visible("#live")
        curve = "() => document.getElementById('chart-return').data.find(t => t.meta === 'curve').x.length"
        assert page.evaluate(curve) == 20
        with (growing / "trace.jsonl").open("ab") as trace:
            trace.write(b"".join(lines[22:]))
        shutil.copy(runs / ids[0] / "summary.json", growing / "summary.json")
        writer.release()  # as a run lets go once its summary is written
        page.wait_for_function(f"() => ({curve})() === {EPISODES}", timeout=20000)
        page.wait_for_function("() => document.getElementById('live').hidden", timeout=20000)
        assert not watched.problems and not watched.violations(), (watched.problems, watched.violations())
    finally:
        server.stop()

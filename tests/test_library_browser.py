"""The checkpoint library in a real browser (Debian's chromium via Playwright), as a user of
``bdi-rl serve`` uses it: find a checkpoint, play it, play it on a moved goal, be refused a
map of another size in the line ``--warm-start`` gives, warm-start a new run from it, and
resume a stopped run from its page. Everything shown is text (a checkpoint named like HTML
stays text), under the viewer's CSP (no console error)."""

from __future__ import annotations

import os

import pytest

from tests.checkpoints import TRAINED_SPEC, trained_run
from tests.conftest import run_main
from tests.test_control import Serve
from tests.test_control_browser import _watch

pytestmark = pytest.mark.slow  # a browser and real runs

HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture
def serve(tmp_path):
    runs = tmp_path / "runs"
    det = trained_run(runs, name="det")
    trained_run(runs, name="eight", episodes=10, map_name="8x8")
    hostile = trained_run(runs, name="odd", episodes=5)
    os.link(hostile / "qtables" / "learner.npz", hostile / "qtables" / f"{HOSTILE}.npz")
    server = Serve(runs, jobs=2)
    server.det = det.name
    yield server
    server.stop()


def _wait_job(page, text: str, timeout: float = 120_000) -> str:
    """The run a job of the library page ended with (its line says ``finished``)."""
    item = page.wait_for_selector(f"#my-jobs li[data-state='finished']:has-text('{text}') a", timeout=timeout)
    return item.text_content()


def test_find_play_warm_start_and_resume_from_the_browser(browser, serve, tmp_path):
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    errors = _watch(page)
    page.goto(serve.page_url)  # the URL serve printed: the token goes to this tab's storage
    page.wait_for_selector("body[data-ready='1']")
    page.click("a[href='/library']")
    page.wait_for_selector("body[data-ready='1']")
    groups = page.eval_on_selector_all("section.env-group", "s => s.map(x => x.dataset.group)")
    assert groups == [
        "FrozenLake-v1 · grid 4x4 · 16 states x 4 actions",
        "FrozenLake-v1 · grid 8x8 · 64 states x 4 actions",
    ]
    assert page.query_selector("img") is None and HOSTILE in page.text_content("#library")  # text, never HTML

    page.fill("#find", "eight")
    assert page.eval_on_selector_all("tr[data-key]", "rows => rows.length") == 1
    page.fill("#find", "")
    page.click("section.env-group >> nth=0 >> th[data-sort='episodes']")
    order = page.eval_on_selector_all(
        "section.env-group >> nth=0 >> tr[data-key]", "rows => rows.map(r => r.dataset.key)"
    )
    assert order[-1] == f"{serve.det}/learner" and "__odd__" in order[0]  # ascending: 5, 5, then 300 episodes
    row = f"tr[data-key='{serve.det}/learner']"

    page.fill("#play-episodes", "200")
    page.click(f"{row} button.play")
    played = _wait_job(page, f"play {serve.det}/learner")
    page.click(f"#my-jobs li a:has-text('{played}')")
    page.wait_for_selector("body[data-ready='1']")
    note = page.text_content("#evaluation")
    assert "200 greedy episodes (with its plans), success 1 [0.981, 1]" in note and "Wilson score interval" in note

    page.go_back()
    page.wait_for_selector("body[data-ready='1']")
    page.click(f"{row} button.play-on")
    page.select_option("tr.play-on-row select.map", "8x8")
    page.click("tr.play-on-row button[type=submit]")
    page.wait_for_selector("#play-result.error")
    spec = tmp_path / "eight.toml"
    spec.write_text(TRAINED_SPEC.format(name="x", episodes=5, map="8x8", agent="learner", trace="episode"))
    cli = run_main("run", str(spec), "--warm-start", str(serve.runs / serve.det), "--runs", str(tmp_path / "no"))
    expected = cli.stderr.strip().removeprefix("bdi-rl: error: ").replace(f"{serve.runs.resolve()}/", "runs/")
    assert page.text_content("#play-result") == expected  # the line --warm-start gives
    page.fill("tr.play-on-row .goal-x", "3")
    page.fill("tr.play-on-row .goal-y", "0")
    page.select_option("tr.play-on-row select.map", "")
    page.click("tr.play-on-row button[type=submit]")
    _wait_job(page, "goal (3, 0)")

    page.click(f"{row} a.warm-start")
    page.wait_for_selector("body[data-ready='1']")  # the control page, the checkpoint named
    assert page.get_attribute("#warm-starts li", "data-run") == serve.det
    page.fill("#episodes", "5")
    page.select_option("#trace", "episode")
    page.click("#start-run")
    page.wait_for_function("() => document.querySelector('#start-result').textContent.startsWith('queued job')")
    jobs = serve.wait(lambda jobs: all(j["state"] not in ("queued", "running") for j in jobs))
    assert [(j["kind"], j["state"]) for j in jobs] == [("play", "finished"), ("play", "finished"), ("run", "finished")]
    assert "warm start learner <- " + serve.det + "/learner" in jobs[2]["spec"]
    warm = (serve.runs / jobs[2]["run"] / "trace.jsonl").read_text()
    assert '"kind":"qtable.load"' in warm.replace(" ", "") and serve.det in warm

    page.fill("#episodes", "30000")
    page.click("#start-run")
    page.wait_for_selector("#queue tbody tr[data-job='4'] a[href^='/run/']", timeout=60_000)
    page.wait_for_timeout(1500)
    page.click("#queue tbody tr[data-job='4'] button.stop")
    page.wait_for_selector("#queue tbody tr[data-job='4'][data-state='stopped']", timeout=60_000)
    page.click("#queue tbody tr[data-job='4'] a[href^='/run/']")
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_selector("#resume:not([disabled])")
    page.click("#resume")
    page.wait_for_selector("#resume-result.ok")
    jobs = serve.wait(lambda jobs: jobs[-1]["state"] not in ("queued", "running"), timeout=180)
    assert (jobs[-1]["kind"], jobs[-1]["state"], jobs[-1]["run"]) == ("resume", "finished", jobs[3]["run"])
    assert errors == [] or all("400" in e for e in errors), errors  # the refused play is logged by chromium


def test_without_the_token_the_library_only_reads(browser, serve):
    context = browser.new_context()
    page = context.new_page()
    errors = _watch(page)
    page.goto(serve.url + "/library")
    page.wait_for_selector("body[data-ready='1']")
    assert page.is_visible("#read-only") and page.is_hidden("#play-controls")
    assert page.query_selector("button.play") is None and page.query_selector("a.warm-start") is None
    assert page.eval_on_selector_all("tr[data-key]", "rows => rows.length") == 4
    context.close()
    assert errors == []

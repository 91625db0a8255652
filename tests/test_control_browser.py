"""The control surface in a real browser (Debian's chromium via Playwright): a user opens the
URL ``bdi-rl serve`` printed, starts a 3-seed sweep, stops one run, and the others finish."""

from __future__ import annotations

import json

import pytest

from bdi_rl.store import read_sweeps
from tests.test_control import Serve

pytestmark = pytest.mark.slow  # a browser and whole runs


@pytest.fixture
def serve(tmp_path):
    server = Serve(tmp_path / "runs", jobs=1)
    yield server
    server.stop()


def _watch(page) -> list[str]:
    """Page errors and console errors (a CSP violation is one) collected as they happen."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    return errors


def test_start_a_sweep_stop_one_run_and_the_others_finish(browser, serve):
    page = browser.new_page()
    errors = _watch(page)
    page.goto(serve.page_url)
    page.wait_for_selector("body[data-ready='1']")
    assert "token" not in page.url  # kept in sessionStorage, out of the address bar
    assert page.is_hidden("#no-token")
    assert page.input_value("#spec-name") == "frozenlake-4x4"
    assert 'name = "frozenlake-4x4"' in page.input_value("#spec-text")
    page.fill("#seed", "20")
    page.fill("#episodes", "5000")  # a few seconds a run: long enough to be stopped
    page.select_option("#trace", "episode")
    page.fill("#sweep-size", "3")
    page.click("#start-sweep")
    # a function, not an expression: playwright evaluates a bare expression with eval, which the CSP refuses
    page.wait_for_function("() => document.querySelector('#start-result').textContent.startsWith('sweep ')")
    page.wait_for_selector("#queue tbody tr[data-job='3']")
    states = page.eval_on_selector_all("#queue tbody tr[data-job]", "rows => rows.map(r => r.dataset.state)")
    assert states == ["running", "queued", "queued"]
    sweep_link = page.get_attribute("#queue tbody tr[data-job='1'] a[href^='/compare?sweep=']", "href")
    page.wait_for_selector("#queue tbody tr[data-job='1'] a[href^='/run/']")  # its run dir exists
    page.click("#queue tbody tr[data-job='1'] button.stop")
    page.wait_for_selector("#queue tbody tr[data-job='1'][data-state='stopped']", timeout=60_000)
    for job in ("2", "3"):
        page.wait_for_selector(f"#queue tbody tr[data-job='{job}'][data-state='finished']", timeout=180_000)
    jobs = serve.jobs()
    assert [(j["state"], j["seed"]) for j in jobs] == [("stopped", 20), ("finished", 21), ("finished", 22)]
    stopped = json.loads((serve.runs / jobs[0]["run"] / "summary.json").read_text())
    assert stopped["interrupted"] is True
    (sweep,) = read_sweeps(serve.runs)
    assert sweep_link == f"/compare?sweep={sweep.id}"
    assert sweep.runs == [j["run"] for j in jobs]
    page.click(f"#queue tbody tr[data-job='2'] a[href='/run/{jobs[1]['run']}']")
    page.wait_for_selector("body[data-ready='1']")  # the viewer's run page
    assert errors == []


def test_a_page_without_the_token_is_refused(browser, serve):
    context = browser.new_context()  # its own sessionStorage: no token
    page = context.new_page()
    errors = _watch(page)
    page.goto(serve.url + "/control")
    page.wait_for_selector("body[data-ready='1']")
    assert page.is_visible("#no-token")
    page.click("#start-run")
    page.wait_for_selector("#start-result.error")
    assert "token" in page.text_content("#start-result")
    assert serve.jobs() == [] and list(serve.runs.iterdir()) == []
    context.close()
    assert [e for e in errors if "403" not in e] == []  # the refused POST is logged by chromium


def test_a_sweep_over_settings_and_my_plan_from_the_browser_is_grouped_by_configuration(browser, serve):
    """A user writes the axes of a sweep on the control page (2 learning rates x the shipped
    plan or their own file, uploaded), starts it, and reads its configurations on the sweep's
    page: the table bdi-rl sweep-report prints."""
    from tests.conftest import ASL

    mine = "// my copy of the learner, uploaded from the page\n" + (ASL / "learner.asl").read_text()
    page = browser.new_page()
    errors = _watch(page)
    page.goto(serve.page_url)
    page.wait_for_selector("body[data-ready='1']")
    page.fill("#seed", "3")
    page.fill("#episodes", "30")
    page.select_option("#trace", "episode")
    page.fill("#sweep-size", "1")
    page.fill("#sweep-axes", '"learning.alpha" = [0.05, 0.5]\n"agents.learner.asl" = ["learner.asl", "mine.asl"]')
    page.set_input_files(
        "#sweep-plans", files=[{"name": "mine.asl", "mimeType": "text/plain", "buffer": mine.encode()}]
    )
    page.click("#start-sweep")
    page.wait_for_function("() => document.querySelector('#start-result').textContent.startsWith('sweep ')")
    for job in ("1", "2", "3", "4"):
        page.wait_for_selector(f"#queue tbody tr[data-job='{job}'][data-state='finished']", timeout=180_000)
    (sweep,) = read_sweeps(serve.runs)
    assert sweep.axes == ["learning.alpha", "agents.learner.asl"] and sweep.configuration == [0, 1, 2, 3]
    kept = serve.runs / ".sweeps" / sweep.id / "plans" / "mine.asl"
    assert kept.read_text() == mine
    asl_of = {run: json.loads((serve.runs / run / "trace.jsonl").read_text().splitlines()[1])["data"]["asl"]
              for run in sweep.runs}  # fmt: skip
    assert sorted(asl_of.values()).count(str(kept)) == 2  # its two configurations ran the uploaded file
    page.goto(serve.page_url.split("/control")[0] + f"/compare?sweep={sweep.id}")
    page.wait_for_selector("body[data-ready='1']")
    labels = sorted(page.locator("#groups-table tbody tr td:first-child").all_inner_texts())
    assert labels == [
        "learning.alpha=0.05, agents.learner.asl=learner.asl",
        "learning.alpha=0.05, agents.learner.asl=mine.asl",
        "learning.alpha=0.5, agents.learner.asl=learner.asl",
        "learning.alpha=0.5, agents.learner.asl=mine.asl",
    ]
    assert page.locator("#groups-table tbody tr td:nth-child(2)").all_inner_texts() == ["1/1"] * 4
    assert errors == []

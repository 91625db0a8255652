"""Search in the run page, in a real browser (Debian's chromium, driven by Playwright): a
pattern typed, its hits listed, a hit clicked moves the Mind Inspector to that event."""

from __future__ import annotations

import pytest

from tests.conftest import run_named
from tests.test_viewer_browser import Viewer

pytestmark = pytest.mark.slow


@pytest.fixture
def viewer(runs):
    server = Viewer(runs)
    yield server
    server.stop()


def _search(page, pattern: str, agent: str) -> list[dict]:
    page.fill("#search-pattern", pattern)
    page.select_option("#search-agent", agent)
    page.click("#search button[type=submit]")
    page.wait_for_function("() => !['', 'searching…'].includes(document.getElementById('search-summary').textContent)")
    return page.eval_on_selector_all(
        "#search-hits tbody tr",
        "rows => rows.map(r => ({agent: r.dataset.agent, "
        "position: Number(r.dataset.position), "
        "cells: [...r.cells].map(c => c.textContent)}))",
    )


def _clicked(page, row: int, position: int) -> None:
    page.locator("#search-hits tbody tr").nth(row).click()
    page.wait_for_function(
        "p => document.getElementById('where').textContent.startsWith('event ' + p + ' ')", arg=position
    )


def test_find_a_told_belief_and_jump_to_it(browser, viewer, runs):
    run_dir = run_named(runs, "team")
    page = browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" and "400" not in m.text else None)
    page.goto(f"{viewer.url}/run/{run_dir.name}")
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_selector("#search-agent option[value='vlearner-2@localhost']", state="attached")

    hits = _search(page, "hazard(X, Y)", "vlearner-2@localhost")
    assert hits and all(h["agent"] == "vlearner-2@localhost" and h["cells"][0] == "vlearner-2" for h in hits)
    told = next(k for k, h in enumerate(hits) if h["cells"][3].startswith("vlearner-"))  # told by a teammate
    belief = hits[told]["cells"][2]
    _clicked(page, told, hits[told]["position"])
    assert page.input_value("#agent") == "vlearner-2@localhost"
    assert page.input_value("#position") == str(hits[told]["position"])
    assert belief in page.locator("#beliefs li.new code").all_text_contents()  # just added

    # another agent's removal: the inspector switches agent and lists the belief as removed
    hits = _search(page, "experience", "vlearner-3@localhost")
    k = next(k for k, h in enumerate(hits) if h["cells"][1] == "removed")
    _clicked(page, k, hits[k]["position"])
    assert page.input_value("#agent") == "vlearner-3@localhost"
    assert hits[k]["cells"][2] in page.locator("#removed li code").all_text_contents()

    page.fill("#search-pattern", "hazard(1")
    page.click("#search button[type=submit]")
    page.wait_for_function("() => document.getElementById('search-error').textContent.includes('unbalanced')")
    assert page.locator("#search-results").is_hidden()
    assert not problems, problems
    page.close()


def test_hostile_beliefs_are_listed_as_text(browser, viewer, runs):
    from tests.conftest import HOSTILE_NOTES
    from tests.fakeruns import literal

    page = browser.new_page()
    page.goto(f"{viewer.url}/run/{run_named(runs, 'hostile').name}")
    page.wait_for_selector("body[data-ready='1']")
    hits = _search(page, "note(_)", "")
    assert sorted(h["cells"][2] for h in hits) == sorted(literal("note", n) for n in HOSTILE_NOTES)
    assert page.evaluate("() => document.body.dataset.pwned") is None
    page.close()

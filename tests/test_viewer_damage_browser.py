"""A damaged run in chromium (issue 26): the runs list marks it with its first damaged line
and why; its page says so above what it shows (read around the damage); the sound run beside
it shows no mark."""

from __future__ import annotations

import shutil

from tests.conftest import run_named
from tests.test_damaged_traces import DAMAGE
from tests.test_viewer_browser import Viewer


def test_the_runs_list_and_the_run_page_say_which_line_is_damaged_and_why(browser, runs, tmp_path):
    source = run_named(runs, "tiny")
    where = tmp_path / "runs"
    sound = where / source.name
    shutil.copytree(source, sound)
    damaged = where / f"{source.name}-edited"
    shutil.copytree(source, damaged)
    lines, at = DAMAGE['a "return": "lots"'][0]((source / "trace.jsonl").read_bytes().splitlines(keepends=True))
    (damaged / "trace.jsonl").write_bytes(b"".join(lines))
    viewer = Viewer(where)
    try:
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(viewer.url + "/")
        page.wait_for_selector("#runs tbody tr .badge.damaged")
        rows = page.locator("#runs tbody tr")
        assert rows.count() == 2
        mark = page.locator(f"#runs tbody tr:has-text('{damaged.name}') .badge.damaged")
        assert mark.text_content() == f"damaged: line {at + 1}"
        assert f"trace.jsonl:{at + 1}: episode.end data: Expected `float | null`, got `str`" in mark.get_attribute(
            "title"
        )
        assert page.locator("#runs tbody tr .badge.damaged").count() == 1  # the sound run: none
        page.click(f"text={damaged.name}")
        page.wait_for_selector("body[data-ready='1']")
        notice = page.locator("#damaged")
        assert notice.is_visible()
        text = notice.text_content()
        assert text.startswith(f"damaged trace: trace.jsonl:{at + 1}: episode.end data:") and "read around" in text
        assert int(page.get_attribute("#chart-return", "data-points")) == 19  # the sound episodes
        page.goto(f"{viewer.url}/run/{sound.name}")
        page.wait_for_selector("body[data-ready='1']")
        assert not page.locator("#damaged").is_visible()
        assert int(page.get_attribute("#chart-return", "data-points")) == 20
        assert errors == []
    finally:
        viewer.stop()

"""The viewer in a real browser: Debian's chromium, driven by Playwright (no browser download)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bdi_rl.trace.kinds import CYCLE, INTENTIONS, OPTIONS
from bdi_rl.trace.reading import read_trace
from bdi_rl.xmpp.server import free_port
from tests.conftest import MINIMAL_SPEC, ROOT
from tests.conftest import beliefs_after as _beliefs_after
from tests.conftest import run_named as _run_named


class Viewer:
    """``bdi-rl view`` as a user starts it, in its own process."""

    def __init__(self, runs_dir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bdi_rl", "view", "--runs", str(runs_dir), "--port", str(self.port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise AssertionError("the viewer did not start")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # a loaded machine: the test's verdict is already in
            self.proc.kill()
            self.proc.wait(timeout=10)


@pytest.fixture
def viewer(runs):
    server = Viewer(runs)
    yield server
    server.stop()


def test_open_a_run_and_slide_through_its_mind(browser, viewer, runs):
    run_dir = _run_named(runs, "tiny")
    events = [e for e in read_trace(run_dir / "trace.jsonl") if e["agent"] == "learner@localhost"]
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(viewer.url + "/")
    page.wait_for_selector("#runs tbody tr")
    assert page.locator("#runs tbody tr").count() == 3
    page.click(f"text={run_dir.name}")
    page.wait_for_selector("body[data-ready='1']")
    assert page.text_content("#run-title") == run_dir.name
    assert int(page.get_attribute("#chart-return", "data-points")) == 20  # one point per episode
    page.wait_for_function("() => Number(document.getElementById('qtable-canvas').dataset.arrows) > 0")

    for position in (700, 701, 1234):
        page.fill("#position", str(position))
        page.dispatch_event("#position", "change")
        page.wait_for_function(
            "p => document.getElementById('where').textContent.startsWith('event ' + p + ' ')", arg=position
        )
        shown = page.locator("#beliefs li code").all_text_contents()
        assert sorted(shown) == sorted(_beliefs_after(events, position)), position
        event = events[position]
        assert page.text_content("#event").startswith(event["kind"])
    # "Why did it do that at step 2 of episode 5?": jump there; the actions that led to the
    # step are listed since the previous position.
    of_step = [i for i, e in enumerate(events) if e["episode"] == 5 and e["step"] == 2]
    expected = of_step[-1]
    page.fill("#jump-episode", "5")
    page.fill("#jump-step", "2")
    page.click("#jump button")
    page.wait_for_function(
        "p => document.getElementById('where').textContent.startsWith('event ' + p + ' ')", arg=expected
    )
    assert "episode 5, step 2" in page.text_content("#where")
    changes = page.locator("#changes li").all_text_contents()
    assert len(changes) == len(of_step)  # everything the agent did in that step
    assert any(c.startswith("action .rl_choose") for c in changes) and any(c.startswith("rl.step") for c in changes)
    # ... and the Q-learner panel says in words why it took that action
    step = events[expected]["data"]
    names = ["left", "down", "right", "up"]
    why = page.text_content("#why")
    assert why.startswith(names[step["a"]] + ":")
    assert ("exploring" in why) == (step["q"][step["a"]] < max(step["q"])), why
    assert page.locator(".qrow th").all_text_contents() == names
    page.fill("#jump-episode", "999")
    page.click("#jump button")
    page.wait_for_function("() => document.getElementById('jump-error').textContent.includes('episode 999')")
    # The slider moves the same way (keyboard: one event per key press).
    page.fill("#position", "1234")
    page.dispatch_event("#position", "change")
    page.wait_for_function("() => document.getElementById('where').textContent.startsWith('event 1234 ')")
    page.focus("#slider")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.getElementById('where').textContent.startsWith('event 1235 ')")
    assert sorted(page.locator("#beliefs li code").all_text_contents()) == sorted(_beliefs_after(events, 1235))
    assert not errors


def test_hostile_trace_text_is_shown_as_text(browser, viewer, runs):
    run_dir = _run_named(runs, "hostile")
    page = browser.new_page()
    page.goto(f"{viewer.url}/run/{run_dir.name}")
    page.wait_for_selector("body[data-ready='1']")
    last = len([e for e in read_trace(run_dir / "trace.jsonl") if e["agent"] == "learner@localhost"]) - 1
    page.fill("#position", str(last))
    page.dispatch_event("#position", "change")
    page.wait_for_function("() => document.querySelectorAll('#beliefs li').length > 3")
    texts = page.locator("#beliefs li code").all_text_contents()
    assert any("<script>" in t for t in texts) and any("onerror" in t for t in texts)
    assert page.evaluate("document.body.dataset.pwned") is None
    assert page.locator("#beliefs script, #beliefs img").count() == 0


#: Long enough (~15 s here) that the run is still going when the viewer has started and the page loaded.
LIVE_EPISODES = 60_000


def test_a_live_run_updates_the_page_without_reloading(browser, tmp_path):
    runs_dir = tmp_path / "runs"
    spec = tmp_path / "live.toml"
    spec.write_text(
        MINIMAL_SPEC.replace("episodes = 20", f"episodes = {LIVE_EPISODES}").replace('name = "tiny"', 'name = "live"')
    )
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bdi_rl",
            "run",
            str(spec),
            "--runs",
            str(runs_dir),
            "--no-progress",
            "--trace",
            "episode",
        ],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    server = None
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            traces = list(runs_dir.glob("*/trace.jsonl"))
            if traces and any("episode.end" in line for line in traces[0].read_text().splitlines()[:400]):
                break
            time.sleep(0.2)
        server = Viewer(runs_dir)
        page = browser.new_page()
        page.goto(f"{server.url}/run/{traces[0].parent.name}")
        page.wait_for_selector("body[data-ready='1']")
        assert page.is_visible("#live")
        # The agents table's episode count (the charts draw at most 1500 sampled points, so
        # their point count stops growing once the run is past that).
        cell = "#agents tbody tr td:nth-child(2)"
        first = int(page.text_content(cell))
        page.wait_for_function(
            "([sel, n]) => Number(document.querySelector(sel).textContent) > n", arg=[cell, first], timeout=30000
        )
        _, err = run.communicate(timeout=240)
        assert run.returncode == 0, err
        page.wait_for_function("() => document.getElementById('live').hidden", timeout=30000)
        summary = json.loads((traces[0].parent / "summary.json").read_text())
        assert summary["agents"]["learner"]["episodes"] == LIVE_EPISODES
    finally:
        if run.poll() is None:
            run.kill()
        if server is not None:
            server.stop()


def test_message_flow_draws_the_teams_conversation(browser, viewer, runs):
    run_dir = _run_named(runs, "team")
    page = browser.new_page()
    page.goto(f"{viewer.url}/run/{run_dir.name}")
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_function("() => Number(document.getElementById('sequence').dataset.arrows) > 0")
    rows = page.locator("#messages tbody tr").all_text_contents()
    assert rows and not any("experience(" in r for r in rows)  # hidden by default
    arrows = int(page.locator("#sequence").get_attribute("data-arrows"))
    total = page.locator("#message-total").text_content()
    # the diagram says when it draws fewer messages than the header counts
    assert arrows == min(len(rows), 80) and (("draws the last 80" in total) == (len(rows) > 80)), total
    page.uncheck("#hide-experience")
    page.wait_for_function(
        "() => [...document.querySelectorAll('#messages tbody tr')].some(r => r.textContent.includes('experience('))"
    )
    # experience messages are long: their labels are cut to their arrow, never past the canvas
    canvas = page.locator("#sequence")
    assert 0 < int(canvas.get_attribute("data-labels-right")) <= int(canvas.get_attribute("width"))
    page.goto(viewer.url + "/")  # `bdi-rl view` has no control surface: the runs list links none
    page.wait_for_selector("#runs tbody tr")
    page.wait_for_timeout(300)
    assert page.locator("#control-link").is_hidden()
    page.goto(f"{viewer.url}/run/{run_dir.name}")
    page.wait_for_selector("body[data-ready='1']")
    # the coordinator has no env: its position says so instead of "episode 0, step 0"
    coordinator = next(v for v in page.locator("#agent option").all_inner_texts() if "coord" in v)
    page.select_option("#agent", label=coordinator)
    page.wait_for_function("() => document.getElementById('where').textContent.includes('no env')")
    assert "episode 0, step 0" not in page.text_content("#where")


def _latest(events: list[dict], position: int, kind: str) -> dict | None:
    return next((e["data"] for e in reversed(events[: position + 1]) if e["kind"] == kind), None)


def test_the_mind_inspector_shows_jasons_view_of_a_cycle_level_trace(browser, cycle_run):
    """Intention stacks (innermost first, each at the file:line it runs next), the latest
    cycle's events and plan options, following the history slider."""
    events = [e for e in read_trace(cycle_run / "trace.jsonl") if e["agent"] == "learner@localhost"]
    position = [i for i, e in enumerate(events) if e["episode"] == 1 and e["step"] == 2][-1]
    stacks, options, cycle = (_latest(events, position, kind) for kind in (INTENTIONS, OPTIONS, CYCLE))
    assert stacks and options and cycle, "the trace has no cycle-level events"
    server = Viewer(cycle_run.parent)
    try:
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{server.url}/run/{cycle_run.name}")
        page.wait_for_selector("body[data-ready='1']")
        page.fill("#jump-episode", "1")
        page.fill("#jump-step", "2")
        page.click("#jump button")
        page.wait_for_function(
            "p => document.getElementById('where').textContent.startsWith('event ' + p + ' ')", arg=position
        )

        # Intentions: each one's stack of intended means, the top (about to run) first.
        assert page.is_visible("#stacks") and page.is_hidden("#running-plans")
        [stack] = stacks["intentions"]
        assert page.locator("#stacks .stack-head").all_text_contents() == [
            f"intention {stack['id']} {stack['state']} · {len(stack['means'])} intended means"
        ]
        rows = page.locator("#stacks .means li").all_text_contents()
        assert rows == [
            f"@{m['plan']} {m['trigger']} {Path(m['file']).name}:{m['line']}" for m in reversed(stack["means"])
        ]
        assert rows[0].startswith("@navigate +!navigate episode.asl:")  # navigate is in lib/episode.asl
        assert any(r.startswith("@episode +!episode episode.asl:") for r in rows)
        assert any(r.startswith("@train_steps +!train learner.asl:") for r in rows)
        title = page.get_attribute("#stacks .means li:first-child .where", "title")
        assert title == f"{stack['means'][-1]['file']}:{stack['means'][-1]['line']}"
        assert title.endswith(f"/asl/lib/episode.asl:{stack['means'][-1]['line']}")

        # Options: the latest selection, the selected plan highlighted.
        assert page.is_visible("#options-panel")
        assert page.text_content("#options-event") == options["event"] == "+!navigate"
        assert page.locator("#options-relevant .plan").all_text_contents() == ["@" + p for p in options["relevant"]]
        assert page.locator("#options-applicable .plan").all_text_contents() == ["@" + p for p in options["applicable"]]
        assert page.locator("#options-relevant .selected").all_text_contents() == ["@navigate"]
        assert page.locator("#options-applicable .selected").all_text_contents() == ["@navigate"]
        assert page.text_content("#options-selected") == "@navigate"

        # Events: those the latest cycle took, and those pending.
        assert page.is_visible("#reasoning-panel")
        assert page.text_content("#cycle-number") == f"(cycle {cycle['n']})"
        assert page.locator("#events-taken li").all_text_contents() == (cycle["events"] or ["none"])
        assert page.locator("#events-pending li").all_text_contents() == (cycle["pending"] or ["none"])

        # The new kinds read as one line each in the list of changes.
        changes = page.locator("#changes li").all_text_contents()
        assert page.get_attribute("#changes li:last-child", "value") == str(position)  # numbered as the slider
        assert any(
            c.startswith(OPTIONS + " +!navigate: relevant @navigate; applicable @navigate; selected @navigate")
            for c in changes
        ), changes
        assert any(c.startswith(INTENTIONS + f" #{stack['id']} ") and "@navigate ← @episode" in c for c in changes), (
            changes
        )

        # The history slider: before the first cycle-level event there is no stack, so the
        # plain list of running plans shows, and no options or events.
        first = next(i for i, e in enumerate(events) if e["kind"] in (INTENTIONS, OPTIONS, CYCLE))
        page.fill("#position", str(first - 1))
        page.dispatch_event("#position", "change")
        page.wait_for_function(
            "p => document.getElementById('where').textContent.startsWith('event ' + p + ' ')", arg=first - 1
        )
        assert page.is_hidden("#stacks") and page.is_hidden("#options-panel") and page.is_hidden("#reasoning-panel")
        # ... and back at the step, all of it again.
        page.fill("#position", str(position))
        page.dispatch_event("#position", "change")
        page.wait_for_function(
            "p => document.getElementById('where').textContent.startsWith('event ' + p + ' ')", arg=position
        )
        assert page.locator("#stacks .means li").all_text_contents() == rows
        assert page.is_visible("#options-panel") and page.is_visible("#reasoning-panel")
        assert not errors
    finally:
        server.stop()

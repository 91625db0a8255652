"""``bdi-rl dashboard``: the pyqtgraph window, rendered offscreen and read back as an image."""

from __future__ import annotations

import os

import numpy as np
from matplotlib.image import imread

from bdi_rl.store import RunWriter
from tests.conftest import run_main
from tests.conftest import run_named as _run_named


def test_dashboard_plots_the_runs_curves(runs, tmp_path):
    os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before the first QApplication
    out = tmp_path / "board.png"
    result = run_main("dashboard", _run_named(runs, "tiny").name, "--runs", str(runs), "--screenshot", str(out))
    assert result.returncode == 0, result.stderr
    image = (imread(out)[:, :, :3] * 255).astype(np.uint8)
    assert image.shape[0] > 500 and image.shape[1] > 900
    # A blue curve (the first agent's colour, #1f77b4) is drawn, not just axes on white.
    blue = np.all(np.abs(image.astype(int) - [0x1F, 0x77, 0xB4]) < 40, axis=2)
    assert blue.sum() > 300


def test_dashboard_of_a_run_without_episodes_draws_axes_only(runs, tmp_path):
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    out = tmp_path / "empty.png"
    result = run_main("dashboard", _run_named(runs, "hostile").name, "--runs", str(runs), "--screenshot", str(out))
    assert result.returncode == 0, result.stderr
    image = (imread(out)[:, :, :3] * 255).astype(np.uint8)
    blue = np.all(np.abs(image.astype(int) - [0x1F, 0x77, 0xB4]) < 40, axis=2)
    assert blue.sum() < 50


def test_dashboard_bad_screenshot_name(runs, tmp_path):
    result = run_main(
        "dashboard", _run_named(runs, "tiny").name, "--runs", str(runs), "--screenshot", str(tmp_path / "x.jpg")
    )
    assert result.returncode == 2 and "expected a .png file" in result.stderr


def test_dashboard_follows_a_growing_trace(runs, tmp_path):
    """What a live run looks like to the window: the trace grows between two refreshes."""
    import shutil

    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from bdi_rl.readers.dashboard import Dashboard

    source = _run_named(runs, "tiny")
    live = tmp_path / source.name
    live.mkdir()
    shutil.copy(source / "spec.toml", live / "spec.toml")
    lines = (source / "trace.jsonl").read_bytes().splitlines(keepends=True)
    ends = [i for i, line in enumerate(lines) if b'"kind":"episode.end"' in line]
    cut = ends[9] + 1  # the first ten episodes, and half a line of the next event
    (live / "trace.jsonl").write_bytes(b"".join(lines[:cut]) + lines[cut][:20])
    writer = RunWriter.acquire(live, "a test's stand-in for bdi-rl run")  # it is being written
    board = Dashboard(live)
    board.timer.start(1000)
    assert board.update() == 10 and board.timer.isActive()
    with open(live / "trace.jsonl", "ab") as f:
        f.write(lines[cut][20:] + b"".join(lines[cut + 1 :]))
    shutil.copy(source / "summary.json", live / "summary.json")
    writer.release()  # the run ended: its summary is written, nobody writes it any more
    assert board.update() == 20
    assert "finished" in board.window.windowTitle() and not board.timer.isActive()

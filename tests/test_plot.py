"""``bdi-rl plot``: figures read back as images."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.image import imread

from tests.conftest import MINIMAL_SPEC, run_main
from tests.conftest import run_named as _run_named
from tests.fakeruns import learner_run


def _distinct_colours(path) -> int:
    pixels = (imread(path)[:, :, :3] * 255).astype(np.uint8).reshape(-1, 3)
    return len(np.unique(pixels, axis=0))


def test_plot_a_run_with_its_q_heatmap(runs, tmp_path):
    out = tmp_path / "tiny.png"
    result = run_main("plot", _run_named(runs, "tiny").name, "--runs", str(runs), "-o", str(out))
    assert result.returncode == 0, result.stderr
    image = imread(out)
    assert image.shape[:2] == (935, 1320)
    assert _distinct_colours(out) > 200  # curves, a band and a colour-mapped grid, not a blank page
    # The heatmap quadrant (bottom right) is drawn: many colours, not the "cannot draw" note.
    quadrant = (image[470:, 660:, :3] * 255).astype(np.uint8).reshape(-1, 3)
    assert len(np.unique(quadrant, axis=0)) > 50


def test_plot_several_seeds_into_one_band(runs, tmp_path, write_spec):
    other = learner_run(tmp_path / "more", write_spec(MINIMAL_SPEC), seed=11, trace="episode")
    out = tmp_path / "seeds.svg"
    result = run_main("plot", str(_run_named(runs, "tiny")), str(other), "-o", str(out))
    assert result.returncode == 0, result.stderr
    svg = out.read_text()
    assert "2 runs" in svg and "across 2 learners" in svg


@pytest.mark.parametrize(
    "args, message",
    [
        (["nope", "-o", "x.png"], "nope: not a run directory"),
        (["RUN", "-o", "x.txt"], "expected a .png, .svg or .pdf file"),
        (["HOSTILE", "-o", "x.png"], "no episodes in these runs' traces"),
    ],
)
def test_plot_bad_input_is_one_line(runs, tmp_path, args, message, monkeypatch):
    args = [
        a.replace("RUN", _run_named(runs, "tiny").name).replace("HOSTILE", _run_named(runs, "hostile").name)
        for a in args
    ]
    monkeypatch.chdir(tmp_path)
    result = run_main("plot", *args, "--runs", str(runs))
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.glob("x.*"))

"""``bdi-rl render``: an episode drawn from the trace as a GIF or MP4 (readers/render.py),
one frame per position of the agent; bad inputs are one line, exit 2, and nothing written."""

from __future__ import annotations

from pathlib import Path

import imageio_ffmpeg
import pytest
from PIL import Image

from bdi_rl.trace.kinds import RL_STEP
from bdi_rl.trace.reading import read_trace
from tests.conftest import MINIMAL_SPEC, run_main, run_named
from tests.fakeruns import learner_run


@pytest.fixture(scope="module")
def coarse(tmp_path_factory) -> Path:
    """A run traced at level episode: no steps to draw."""
    base = tmp_path_factory.mktemp("coarse")
    (base / "spec.toml").write_text(MINIMAL_SPEC.replace("episodes = 20", "episodes = 3"))
    return learner_run(base / "runs", base / "spec.toml", trace="episode")


def _steps(run_dir: Path, episode: int) -> int:
    return sum(
        1
        for e in read_trace(run_dir / "trace.jsonl")
        if e["kind"] == RL_STEP and e["episode"] == episode and e["agent"] == "learner@localhost"
    )


def test_gif_has_a_frame_per_position(runs, tmp_path):
    run_dir = run_named(runs, "tiny")
    out = tmp_path / "ep.gif"
    result = run_main(
        "render",
        run_dir.name,
        "--runs",
        str(runs),
        "--agent",
        "learner",
        "--episode",
        "5",
        "-o",
        str(out),
        "--fps",
        "8",
    )
    assert result.returncode == 0, result.stderr
    steps = _steps(run_dir, 5)
    with Image.open(out) as gif:
        assert gif.format == "GIF" and gif.n_frames == steps + 1
        assert gif.info["duration"] == 120  # 1000 / 8 ms, in the centiseconds GIF keeps
    assert f"{steps + 1} frames" in result.stdout


def test_mp4_reads_back_with_the_same_frames(runs, tmp_path):
    run_dir = run_named(runs, "tiny")
    out = tmp_path / "ep.mp4"
    result = run_main("render", str(run_dir), "--agent", "learner", "--episode", "19", "-o", str(out))
    assert result.returncode == 0, result.stderr
    frames, _ = imageio_ffmpeg.count_frames_and_secs(str(out))
    assert frames == _steps(run_dir, 19) + 1
    reader = imageio_ffmpeg.read_frames(str(out))
    meta = next(reader)
    assert meta["size"][0] % 16 == 0 and sum(1 for _ in reader) == frames


@pytest.mark.parametrize(
    "args, message",
    [
        (["nosuchrun", "--agent", "learner", "--episode", "0"], "nosuchrun: not a run directory"),
        (["{tiny}", "--agent", "nobody", "--episode", "0"], "--agent nobody: no such agent"),
        (["{tiny}", "--agent", "learner", "--episode", "99"], "episode: episode 99 is not in the trace"),
        (["{team}", "--agent", "vcoord", "--episode", "0"], "agent: vcoord is not a learner"),
        (["{coarse}", "--agent", "learner", "--episode", "1"], "episode: the trace holds no steps"),
        (["{tiny}", "--agent", "learner", "--episode", "0", "--fps", "0"], "--fps"),
    ],
)
def test_bad_inputs_are_one_line_and_write_nothing(runs, coarse, tmp_path, args, message):
    paths = {"tiny": str(run_named(runs, "tiny")), "team": str(run_named(runs, "team")), "coarse": str(coarse)}
    out = tmp_path / "ep.gif"
    result = run_main("render", *[a.format(**paths) for a in args], "-o", str(out))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_an_unknown_extension_writes_nothing(runs, tmp_path):
    out = tmp_path / "ep.avi"
    result = run_main("render", str(run_named(runs, "tiny")), "--agent", "learner", "--episode", "0", "-o", str(out))
    assert (
        result.returncode == 2
        and result.stderr.strip() == "bdi-rl: error: output: unknown extension .avi (say .gif or .mp4)"
    )
    assert list(tmp_path.iterdir()) == []

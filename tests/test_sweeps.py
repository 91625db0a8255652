"""Sweeps over any spec setting (issue 30): ``bdi-rl run --set``, sweep files checked whole,
and ``bdi-rl sweep`` running every configuration x seed as real runs."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import gymnasium as gym
import msgspec
import pytest
from gymnasium.spaces import Discrete

from bdi_rl.readers.sweepreport import Group, RunResult
from bdi_rl.settings import apply_setting, parse_setting, parse_value, toml_literal
from bdi_rl.spec import SpecError
from bdi_rl.store import SWEEPS_DIR, Sweep
from bdi_rl.sweepfile import load_sweep
from tests.conftest import MINIMAL_SPEC, ROOT, run_cli

pytestmark = pytest.mark.timeout(300)


# -- settings by path --------------------------------------------------------------------------


def test_a_setting_reaches_nested_tables_and_agent_groups_by_name() -> None:
    table = tomllib.loads(MINIMAL_SPEC + '\n[[agents]]\nname = "other"\n')
    apply_setting(table, "learning.alpha", 0.3)
    apply_setting(table, "env.kwargs.is_slippery", True)
    apply_setting(table, "agents.other.asl", "team-learner.asl")
    assert table["learning"] == {"alpha": 0.3}
    assert table["env"]["kwargs"] == {"map_name": "4x4", "is_slippery": True}
    assert table["agents"][1]["asl"] == "team-learner.asl" and "asl" not in table["agents"][0]


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("agents.teacher.asl", "no agent group 'teacher' (groups: learner)"),
        ("agents.learner", "name a field of the group"),
        ("env.id.x", "env.id is a value, not a table"),
        ("learning..alpha", "not a spec path"),
    ],
)
def test_a_path_that_leads_nowhere_is_named(path: str, said: str) -> None:
    table = tomllib.loads(MINIMAL_SPEC)
    with pytest.raises(SpecError, match=said.replace("(", r"\(").replace(")", r"\)")):
        apply_setting(table, path, 1)


@pytest.mark.parametrize(
    "value", [0.1, 7, True, "learner.asl", 'a "quoted"\\ one', [1, 2.5], {"map_name": "8x8"}, 1e-7]
)
def test_a_value_goes_to_a_child_and_back_unchanged(value: object) -> None:
    assert parse_value(toml_literal(value), "test") == value
    assert parse_setting(f"learning.alpha={toml_literal(value)}") == ("learning.alpha", value)


def test_run_set_changes_the_run_and_its_recorded_spec(tmp_path: Path) -> None:
    spec = tmp_path / "tiny.toml"
    spec.write_text(MINIMAL_SPEC)
    done = run_cli("run", str(spec), "--set", "learning.alpha=0.35", "--set", "env.kwargs.is_slippery=true",
                   "--runs", str(tmp_path / "runs"), "--no-progress", "--trace", "episode")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    recorded = tomllib.loads((run_dir / "spec.toml").read_text())
    assert recorded["learning"]["alpha"] == 0.35 and recorded["env"]["kwargs"]["is_slippery"] is True


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ("learning.alpha=abc", "--set learning.alpha: 'abc' is not a TOML value"),
        ("learning.alpah=0.1", "learning.alpah: unknown key"),
        ('learning.alpha="high"', "learning.alpha: expected a number"),
        ('agents.teacher.asl="x.asl"', "no agent group 'teacher'"),
    ],
)
def test_a_bad_setting_is_one_line_and_nothing_is_created(tmp_path: Path, setting: str, said: str) -> None:
    spec = tmp_path / "tiny.toml"
    spec.write_text(MINIMAL_SPEC)
    done = run_cli("run", str(spec), "--set", setting, "--runs", str(tmp_path / "runs"), "--no-progress")
    assert done.returncode == 2
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


# -- sweep files ---------------------------------------------------------------------------------


def _sweep(tmp_path: Path, text: str) -> Path:
    (tmp_path / "tiny.toml").write_text(MINIMAL_SPEC)
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    return path


def test_a_grid_is_every_combination_times_every_seed(tmp_path: Path) -> None:
    plan = load_sweep(
        _sweep(
            tmp_path,
            'spec = "tiny.toml"\n[axes]\n"learning.alpha" = [0.1, 0.2, 0.4]\n'
            '"agents.learner.asl" = ["learner.asl", "team-learner.asl"]\nseed = { from = 0, count = 10 }\n',
        )
    )
    assert len(plan.configurations) == 6 and plan.seeds == list(range(10)) and len(plan.runs()) == 60
    assert plan.runs()[:6] == [(k, 0) for k in range(6)]  # every configuration's first seed first
    assert plan.configurations[1].label() == "alpha=0.1, asl=team-learner.asl"


def test_a_random_draw_is_repeatable_and_within_its_distributions(tmp_path: Path) -> None:
    text = (
        'spec = "tiny.toml"\nmethod = "random"\nsamples = 20\ndraw_seed = 4\n[axes]\n'
        '"learning.alpha" = { log_uniform = [0.01, 0.5] }\n"learning.gamma" = { uniform = [0.9, 0.99] }\n'
        '"learning.epsilon_decay_episodes" = { int_uniform = [5, 15] }\n"env.kwargs.is_slippery" = [true, false]\n'
    )
    first, again = load_sweep(_sweep(tmp_path, text)), load_sweep(tmp_path / "sweep.toml")
    assert first.configurations == again.configurations and len(first.configurations) == 20
    for c in first.configurations:
        s = c.settings
        assert 0.01 <= s["learning.alpha"] <= 0.5 and 0.9 <= s["learning.gamma"] <= 0.99
        assert isinstance(s["learning.epsilon_decay_episodes"], int) and 5 <= s["learning.epsilon_decay_episodes"] <= 15
    assert {c.settings["env.kwargs.is_slippery"] for c in first.configurations} == {True, False}


@pytest.mark.parametrize(
    ("axes", "said"),
    [
        ('"learning.alpah" = [0.1]', "axes.learning.alpah = 0.1: learning.alpah: unknown key"),
        ('"learning.alpha" = [0.1, "x"]', "axes.learning.alpha = x: learning.alpha: expected a number"),
        ('"agents.learner.asl" = ["nope.asl"]', "axes.agents.learner.asl = nope.asl:"),
        ('"learning.alpha" = { uniform = [0.1, 0.5] }', 'needs method = "random"'),
        ('"learning.alpha" = []', "axes.learning.alpha: no value to try"),
        ("seed = { from = 0, count = 0 }", "axes.seed: count must be at least 1"),
        ('"env.kwargs.map_name" = ["4x4"]\nseed = { from = 0, count = 20000 }', "a sweep has at most 10000"),
        ('"learning.alpha" = ' + "[" * 3000 + "]" * 3000, "not valid TOML: nested too deeply"),
    ],
)
def test_a_bad_axis_is_named_before_anything_runs(tmp_path: Path, axes: str, said: str) -> None:
    path = _sweep(tmp_path, f'spec = "tiny.toml"\n[axes]\n{axes}\n')
    with pytest.raises(SpecError, match=None) as caught:
        load_sweep(path)
    assert str(caught.value).startswith(f"{path}: ") and said in str(caught.value)
    done = run_cli("sweep", str(path), "--runs", str(tmp_path / "runs"))
    assert done.returncode == 2 and said in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_a_configuration_whose_env_cannot_be_made_is_refused_whole(tmp_path: Path) -> None:
    path = _sweep(tmp_path, 'spec = "tiny.toml"\n[axes]\n"env.kwargs.map_name" = ["4x4", "5x5"]\n')
    done = run_cli("sweep", str(path), "--runs", str(tmp_path / "runs"))
    assert done.returncode == 2, done.stderr
    assert "configuration (map_name=5x5)" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_a_sweep_runs_every_configuration_and_seed_and_records_which_is_which(tmp_path: Path) -> None:
    path = _sweep(
        tmp_path,
        'spec = "tiny.toml"\nname = "alphas"\n[axes]\n"learning.alpha" = [0.05, 0.5]\nseed = [3, 4]\n',
    )
    done = run_cli("sweep", str(path), "--runs", str(tmp_path / "runs"), "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert "2 configuration(s) x 2 seed(s) = 4 runs" in done.stderr and "4/4 done, 0 running, 0 failed" in done.stderr
    record_path = Path(done.stdout.strip().splitlines()[-1])
    assert record_path.parent.name == SWEEPS_DIR
    sweep = msgspec.json.decode(record_path.read_bytes(), type=Sweep)
    assert sweep.axes == ["learning.alpha"] and sweep.configurations == [
        {"learning.alpha": 0.05},
        {"learning.alpha": 0.5},
    ]
    assert sweep.configuration == [0, 1, 0, 1] and sweep.seeds == [3, 3, 4, 4] and sweep.failed == []
    for k, run in enumerate(sweep.runs):
        assert run is not None
        spec = tomllib.loads((tmp_path / "runs" / run / "spec.toml").read_text())
        assert spec["learning"]["alpha"] == sweep.configurations[sweep.configuration[k]]["learning.alpha"]
        assert spec["seed"] == sweep.seeds[k]
        summary = json.loads((tmp_path / "runs" / run / "summary.json").read_text())
        assert summary["agents"]["learner"]["episodes"] == 20

    report = run_cli(
        "sweep-report", str(record_path), "--window", "5", "--threshold", "0", "--csv", str(tmp_path / "groups.csv")
    )
    assert report.returncode == 0, report.stderr
    rows = list(csv.DictReader((tmp_path / "groups.csv").open()))
    assert sorted(r["configuration"] for r in rows) == ["learning.alpha=0.05", "learning.alpha=0.5"]
    for row in rows:
        k = sweep.configurations.index({"learning.alpha": float(row["configuration"].split("=")[1])})
        finals = [
            json.loads((tmp_path / "runs" / str(run) / "summary.json").read_text())["agents"]["learner"]["eval"][
                "success_rate"
            ]
            for i, run in enumerate(sweep.runs)
            if sweep.configuration[i] == k
        ]
        assert row["finished"] == "2" and row["reached"] == "2/2" and row["iqm"] == ""  # 2 runs: no IQM
        assert float(row["mean"]) == pytest.approx(sum(finals) / 2)
        assert float(row["episodes_to_threshold_median"]) == 5  # the first full window
    assert "learning.alpha=0.05" in report.stdout and "IQM [95 % CI]" in report.stdout


def test_a_group_gives_an_iqm_from_four_runs_and_counts_censored_runs_as_such() -> None:
    finals = [0.2, 0.6, 0.7, 0.75, 0.8, 1.0]
    group = Group("alpha=0.1", {"learning.alpha": 0.1}, runs=7, failed=1)
    group.results = [
        RunResult(f"r{k}", value, (100 * (k + 1), 1000.0 * (k + 1)) if value >= 0.7 else None, 500)
        for k, value in enumerate(finals)
    ]
    row = group.row(0.7)
    assert row["iqm"] == pytest.approx(sum([0.6, 0.7, 0.75, 0.8]) / 4)  # the middle half of 6
    assert row["iqm_ci_low"] <= row["iqm"] <= row["iqm_ci_high"]
    assert row["reached"] == "4/6" and row["censored"] == "r0 at 500, r1 at 500"
    assert row["episodes_to_threshold_median"] == 450.0  # of the 4 that reached it: 300, 400, 500, 600
    assert (row["runs"], row["finished"], row["failed"]) == (7, 6, 1)
    group.results = group.results[:3]
    assert group.row(0.7)["iqm"] is None  # 3 runs: the 25 % trim cuts nothing, the IQM is the mean


class Doomed(gym.Env[int, int]):
    """A one-cell env whose process dies at its first step when ``doomed`` (a worker killed)."""

    def __init__(self, doomed: bool = False) -> None:
        self.observation_space, self.action_space, self.doomed = Discrete(2), Discrete(2), doomed

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        super().reset(seed=seed)
        return 0, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
        if self.doomed:
            os._exit(9)
        return 1, 1.0, True, False, {}


@pytest.mark.slow  # whole sweeps of real runs
def test_a_worker_that_dies_takes_only_its_run_with_it(tmp_path: Path) -> None:
    """Runs share worker processes; one killed (here by its env) fails its run with what it
    said, and the sweep's other runs, before and after it, finish on the workers left."""
    spec = MINIMAL_SPEC.replace('id = "FrozenLake-v1"', 'id = "tests.test_sweeps:Doomed"').replace(
        'kwargs = { map_name = "4x4", is_slippery = false }', "kwargs = { doomed = false }"
    )
    (tmp_path / "doomed.toml").write_text(spec)
    path = tmp_path / "sweep.toml"
    path.write_text('spec = "doomed.toml"\n[axes]\n"env.kwargs.doomed" = [false, true, false]\nseed = [1, 2]\n')
    done = subprocess.run(
        [sys.executable, "-m", "bdi_rl", "sweep", str(path), "--runs", str(tmp_path / "runs"), "--workers", "1"],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PYTHONPATH": str(ROOT)},  # the workers import this module's env
    )
    assert done.returncode == 1, done.stderr
    sweep = msgspec.json.decode(Path(done.stdout.strip().splitlines()[-1]).read_bytes(), type=Sweep)
    assert sweep.failed == [1, 4]  # configuration 1 (doomed), at each seed
    assert all(run is not None for k, run in enumerate(sweep.runs) if k not in sweep.failed)
    assert done.stderr.count("its worker exited with status 9") == 2
    assert "4/6 done, 0 running, 2 failed" in done.stderr


@pytest.mark.slow  # whole sweeps of real runs
def test_a_stopped_sweep_is_continued_and_nothing_is_run_twice(tmp_path: Path) -> None:
    """Ctrl-C stops a sweep (the running run saves what it learned, the queued ones never
    start); --continue resumes the interrupted run from its checkpoints and starts the rest:
    every run finishes once, each agent's trace gapless, no event twice."""
    from bdi_rl.trace.reading import read_trace
    from tests.conftest import line_seqs

    path = _sweep(tmp_path, 'spec = "tiny.toml"\n[axes]\n"learning.alpha" = [0.1, 0.3]\nseed = [1, 2]\n')
    long_spec = MINIMAL_SPEC.replace("episodes = 20", 'episodes = 4000\ncheckpoint_every = 200\ntrace = "episode"')
    (tmp_path / "tiny.toml").write_text(long_spec)
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bdi_rl", "sweep", str(path), "--runs", str(runs), "--workers", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not any((d / "qtables").is_dir() for d in runs.glob("FrozenLake*")):  # a checkpoint is kept
            assert time.monotonic() < deadline and proc.poll() is None, "the first run never got going"
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "finish it with: bdi-rl sweep --continue sweep-" in err, err
    record = Path(out.strip().splitlines()[-1])
    stopped = msgspec.json.decode(record.read_bytes(), type=Sweep)
    assert stopped.runs[0] is not None and stopped.runs[1:] == [None, None, None]
    assert json.loads((runs / stopped.runs[0] / "summary.json").read_text())["interrupted"] is True

    done = run_cli("sweep", "--continue", str(record), "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert "1 run(s) finished already" not in done.stderr and "0 run(s) finished already, 4 to go" in done.stderr
    sweep = msgspec.json.decode(record.read_bytes(), type=Sweep)
    assert sweep.runs[0] == stopped.runs[0] and None not in sweep.runs and len(set(sweep.runs)) == 4
    assert sorted(p.name for p in runs.iterdir() if not p.name.startswith(".")) == sorted(sweep.runs)
    for k, run in enumerate(sweep.runs):
        summary = json.loads((runs / run / "summary.json").read_text())
        assert not summary.get("interrupted") and summary["agents"]["learner"]["episodes"] == 4000, run
        events = read_trace(runs / run / "trace.jsonl")
        for jid in {e["agent"] for e in events}:
            seqs = line_seqs(events, jid)
            assert seqs == list(range(len(seqs))), (run, jid)  # gapless, nothing twice
        spec = tomllib.loads((runs / run / "spec.toml").read_text())
        assert spec["learning"]["alpha"] == sweep.configurations[sweep.configuration[k]]["learning.alpha"]
    again = run_cli("sweep", "--continue", str(record))
    assert again.returncode == 0 and "4 run(s) finished already, 0 to go" in again.stderr


@pytest.mark.slow  # whole sweeps of real runs
def test_workers_are_replaced_after_their_runs_and_no_run_is_lost(tmp_path: Path) -> None:
    """A worker ends after BDI_RL_RUNS_PER_WORKER runs (a bound on what a long-lived process
    may gather) and says so with its last result: the queue gives it nothing more and starts a
    fresh one, so 5 runs on one worker slot of 2 runs each all finish."""
    path = _sweep(tmp_path, 'spec = "tiny.toml"\n[axes]\nseed = [1, 2, 3, 4, 5]\n')
    done = subprocess.run(
        [sys.executable, "-m", "bdi_rl", "sweep", str(path), "--runs", str(tmp_path / "runs"), "--workers", "1"],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "BDI_RL_RUNS_PER_WORKER": "2"},
    )
    assert done.returncode == 0, done.stderr
    sweep = msgspec.json.decode(Path(done.stdout.strip().splitlines()[-1]).read_bytes(), type=Sweep)
    assert None not in sweep.runs and sweep.failed == [] and "5/5 done" in done.stderr


_FROZEN_AFTER_EACH_RUN = """
import gc, sys
from bdi_rl.cli import main
from bdi_rl.xmpp import runner

run_experiment = runner.run_experiment
async def counted(*args, **kwargs):
    result = await run_experiment(*args, **kwargs)
    print("frozen", gc.get_freeze_count(), file=sys.stderr)
    return result
runner.run_experiment = counted
sys.exit(main(["sweep-worker"]))
"""


def test_a_worker_keeps_no_run_after_it_is_over(tmp_path: Path) -> None:
    """A worker's runs share one process, and what one run made is garbage once it is over:
    the heap kept out of the collector's way (``gc.freeze``) is the process's start-up and its
    first run's agents, frozen once. Frozen at every run, each run's agents stayed for good
    (a climbing run's ~2.8 MB; 40 runs took a worker from 81 to 179 MB)."""
    (tmp_path / "tiny.toml").write_text(MINIMAL_SPEC)
    requests = "".join(
        json.dumps({"spec": str(tmp_path / "tiny.toml"), "seed": seed, "runs": str(tmp_path / "runs")}) + "\n"
        for seed in range(4)
    )
    done = subprocess.run(
        [sys.executable, "-c", _FROZEN_AFTER_EACH_RUN],
        input=requests,
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count('"status": "finished"') == 4, done.stdout
    frozen = [int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("frozen ")]
    assert len(frozen) == 4 and frozen[0] > 0
    assert max(frozen[1:]) <= frozen[0], frozen  # what refcounting frees may leave it

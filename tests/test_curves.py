"""Learning curves and their aggregate (``readers.curves``) and the viewer's ``/api/curves``,
``/api/sweeps`` and charting-library routes, over runs written as runs write them."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from bdi_rl.readers import curves, vendor
from bdi_rl.readers.viewer import SECURITY_HEADERS, create_app
from bdi_rl.store import SWEEPS_DIR, Sweep, write_sweep
from tests.conftest import MINIMAL_SPEC

SWEEP = "sweep-20261123-210000"
SEEDS = 4
EPISODES = 40


@pytest.fixture(scope="module")
def sweep_runs(tmp_path_factory) -> tuple[Path, list[str]]:
    """Four runs of one spec, seeds 0-3 (tests/fakeruns.py, traced per episode), and the
    sweep record of five seeds whose last is still queued."""
    from tests.fakeruns import learner_run

    base = tmp_path_factory.mktemp("curves")
    spec = base / "tiny.toml"
    spec.write_text(MINIMAL_SPEC)
    runs = base / "runs"
    ids = [
        learner_run(runs, spec, rng_seed=11 + k, seed=k, episodes=EPISODES, trace="episode").name for k in range(SEEDS)
    ]
    write_sweep(
        runs, Sweep(id=SWEEP, spec="tiny", seeds=list(range(SEEDS + 1)), runs=[*ids, None], created=time.time())
    )
    return runs, ids


# -- statistics ----------------------------------------------------------------------------
def test_iqm_is_the_mean_of_the_middle_half():
    assert curves.iqm(np.arange(1, 9)) == pytest.approx(4.5)  # mean of 3, 4, 5, 6
    assert curves.iqm([1, 2, 3, 4, 100, -100, 5, 6]) == pytest.approx(3.5)  # outliers trimmed
    assert curves.iqm(np.array([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0], [4.0, 40.0]]), axis=0) == pytest.approx(
        [2.5, 25]
    )


def test_iqm_confidence_interval_contains_it_and_is_seeded():
    values = np.arange(1, 9, dtype=float)
    low, high = curves.iqm_ci(values)
    assert low[0] < 4.5 < high[0]
    assert 1 <= low[0] and high[0] <= 8
    again = curves.iqm_ci(values)
    assert (low, high) == (again[0], again[1])  # the same band on every refresh of a page
    other = curves.iqm_ci(values, seed=1)
    assert other[0][0] != low[0] or other[1][0] != high[0]
    # identical samples: an interval of width 0, no warning, no NaN
    flat_low, flat_high = curves.iqm_ci(np.ones(5))
    assert flat_low[0] == flat_high[0] == 1.0


def test_aggregate_per_column_with_missing_samples():
    grid = np.array([[1.0, 1.0, 1.0], [2.0, 2.0, np.nan], [3.0, 3.0, np.nan], [10.0, np.nan, np.nan]])
    out = curves.aggregate(grid)
    assert list(out["n"]) == [4, 3, 1]
    assert list(out["mean"]) == [4.0, 2.0, 1.0]
    assert list(out["min"]) == [1.0, 1.0, 1.0] and list(out["max"]) == [10.0, 3.0, 1.0]
    assert out["iqm"][0] == pytest.approx(2.5)
    assert np.isnan(out["iqm"][1])  # 3 samples: the 25 % trim cuts nothing, the IQM would be the mean
    assert np.isnan(out["iqm"][2]) and np.isnan(out["ci_low"][2])  # one sample: no IQM
    assert out["ci_low"][0] <= out["iqm"][0] <= out["ci_high"][0]


# -- smoothing and resampling -----------------------------------------------------------------
def test_smoothing_rolling_and_ema():
    values = np.array([0.0, 1.0, 0.0, 1.0, 1.0])
    assert list(curves.smooth(values, 0)) == list(values) == list(curves.smooth(values, 1))
    assert curves.smooth(values, 2) == pytest.approx([0.0, 0.5, 0.5, 0.5, 1.0])  # fewer at the start
    assert curves.smooth(values, 100) == pytest.approx(np.cumsum(values) / np.arange(1, 6))
    ema = curves.smooth(values, 3, "ema")  # alpha 0.5, starting at the first value
    assert ema == pytest.approx([0.0, 0.5, 0.25, 0.625, 0.8125])
    with pytest.raises(ValueError):
        curves.smooth(values, 3, "median")


def test_resampling_on_env_steps_and_wall_time():
    episodes = [
        {
            "return": float(k),
            "length": 10 * (k + 1),
            "outcome": "goal" if k % 2 else "hole",
            "epsilon": 1.0,
            "ts": 100.0 + 2 * k,
        }
        for k in range(4)
    ]
    evals = [{"after_episodes": 2, "mean_return": 0.5, "success_rate": 0.5, "ts": 103.5}]
    series = curves.agent_series("a@localhost", episodes, evals, started=99.0)
    assert list(series.episode_x["episodes"]) == [1, 2, 3, 4]
    assert list(series.episode_x["env_steps"]) == [10, 30, 60, 100]  # cumulative episode lengths
    assert list(series.episode_x["time"]) == [1, 3, 5, 7]  # seconds since the run's start
    assert list(series.train["success"]) == [0, 1, 0, 1]  # no stored success: the goal
    assert list(series.eval_x["env_steps"]) == [30] and list(series.eval_x["time"]) == [4.5]
    # a stored success wins over the outcome (one definition per env kind, in the index)
    stored = curves.agent_series("a", [{**episodes[0], "success": True}], [], 99.0)
    assert list(stored.train["success"]) == [1]

    other = (np.array([20.0, 40.0, 80.0]), np.array([0.0, 2.0, 4.0]))
    xs, grid = curves.resample([(series.episode_x["env_steps"], series.train["return"]), other], points=100)
    assert list(xs) == [10, 20, 30, 40, 60, 80, 100]  # every x of theirs
    assert grid[0] == pytest.approx([0, 0.5, 1, 4 / 3, 2, 2.5, 3])  # linear in between
    assert np.isnan(grid[1][0]) and np.isnan(grid[1][-1])  # not begun, not reached
    assert grid[1][1:6] == pytest.approx([0, 1, 2, 3, 4])
    xs, grid = curves.resample([(np.arange(1000.0), np.arange(1000.0))], points=50)
    assert len(xs) == 50 and xs[0] == 0 and xs[-1] == 999 and grid[0] == pytest.approx(xs)


def test_a_warm_started_learner_goes_on_from_the_episodes_behind_its_table():
    episodes = [{"return": 1.0, "length": 5, "ts": 11.0}, {"return": 0.0, "length": 5, "ts": 12.0}]
    evals = [{"after_episodes": 2, "mean_return": 0.5, "success_rate": 0.5, "ts": 13.0}]
    series = curves.agent_series("a", episodes, evals, 10.0, warm_episodes=1000)
    assert list(series.episode_x["episodes"]) == [1001, 1002] and list(series.eval_x["episodes"]) == [1002]
    assert list(series.episode_x["env_steps"]) == [5, 10]  # this run's own steps


def test_evaluations_align_by_the_episode_count_they_follow():
    """On env steps each run reaches its evaluation after 100 episodes at another x: they are
    aggregated as one column (at their mean x), not as points of one run each."""
    a = (np.array([100.0, 200.0]), np.array([950.0, 2000.0]), np.array([0.5, 0.7]))
    b = (np.array([100.0, 200.0]), np.array([1050.0, 2100.0]), np.array([0.3, 0.9]))
    c = (np.array([100.0]), np.array([1000.0]), np.array([0.4]))  # a live run, not yet at 200
    xs, grid = curves.align_evaluations([a, b, c])
    assert xs == pytest.approx([1000.0, 2050.0])
    assert grid[:, 0] == pytest.approx([0.5, 0.3, 0.4]) and np.isnan(grid[2, 1])
    out = curves.aggregate(grid)
    assert list(out["n"]) == [3, 2] and out["mean"][0] == pytest.approx(0.4)
    assert np.isnan(out["iqm"][0]) and np.isnan(out["iqm"][1])  # 3 runs: their IQM is their mean
    d = (np.array([100.0]), np.array([990.0]), np.array([0.6]))
    assert not np.isnan(curves.aggregate(curves.align_evaluations([a, b, c, d])[1])["iqm"][0])  # 4: an IQM


def test_runs_on_other_evaluation_schedules_are_read_between_their_own_points():
    """A run evaluated every 100 episodes beside one evaluated at 150: at 150 the first is read
    between its evaluations, so the mean there is of both runs, not of one (the aggregate was
    drawn as a line jumping from one run's points to the other's)."""
    a = (np.array([100.0, 200.0]), np.array([1000.0, 2000.0]), np.array([0.2, 0.6]))
    b = (np.array([150.0]), np.array([1400.0]), np.array([0.9]))
    xs, grid = curves.align_evaluations([a, b])
    assert grid[0] == pytest.approx([0.2, 0.4, 0.6])
    assert np.isnan(grid[1][0]) and grid[1][1] == pytest.approx(0.9) and np.isnan(grid[1][2])
    assert xs == pytest.approx([1000.0, (1500.0 + 1400.0) / 2, 2000.0])
    assert list(curves.aggregate(grid)["n"]) == [1, 2, 1]


def test_thinning_keeps_first_and_last():
    assert list(curves.thin(5, 10)) == [0, 1, 2, 3, 4]
    kept = curves.thin(10_000, 1000)
    assert len(kept) <= 1000 and kept[0] == 0 and kept[-1] == 9999


# -- the API ------------------------------------------------------------------------------
async def test_curves_of_chosen_runs(aiohttp_client, sweep_runs):
    runs, ids = sweep_runs
    client = await aiohttp_client(create_app(runs))
    response = await client.get(f"/api/curves?runs={','.join(ids)}&smooth=0")
    assert response.status == 200
    data = await response.json()
    assert [r["run"] for r in data["runs"]] == ids and not data["live"]
    [agent] = data["runs"][0]["agents"]
    assert agent["agent"] == "learner@localhost"
    train = agent["train"]
    assert train["x"] == list(range(1, EPISODES + 1))
    assert set(train["success"]) <= {0, 1} and len(train["return"]) == EPISODES
    assert agent["eval"]["x"] == [EPISODES] and len(agent["eval"]["return"]) == 1
    agg = data["aggregate"]
    assert agg["samples"] == SEEDS == 4  # an IQM from 4 runs
    ret = agg["metrics"]["return"]
    assert ret["x"] == train["x"] and set(ret["n"]) == {SEEDS}
    column = [r["agents"][0]["train"]["return"][-1] for r in data["runs"]]
    assert ret["mean"][-1] == pytest.approx(sum(column) / SEEDS, abs=1e-6)
    assert ret["min"][-1] == pytest.approx(min(column)) and ret["max"][-1] == pytest.approx(max(column))
    assert all(lo <= m <= hi for lo, m, hi in zip(ret["ci_low"], ret["iqm"], ret["ci_high"], strict=True))
    assert agg["metrics"]["eval_return"]["x"] == [EPISODES]
    on_steps = await (await client.get(f"/api/curves?runs={','.join(ids)}&x=env_steps")).json()
    evals = on_steps["aggregate"]["metrics"]["eval_success"]  # one column: the evaluations after 40 episodes
    at = [r["agents"][0]["eval"]["x"][0] for r in on_steps["runs"]]
    assert evals["n"] == [SEEDS] and evals["x"] == [pytest.approx(sum(at) / SEEDS)]

    # smoothing changes the values, not their x; env steps and wall time change the x
    smoothed = await (await client.get(f"/api/curves?runs={ids[0]}&smooth=10&method=ema")).json()
    s_train = smoothed["runs"][0]["agents"][0]["train"]
    assert s_train["x"] == train["x"] and s_train["return"] != train["return"]  # seed 0 reaches the goal
    steps = await (await client.get(f"/api/curves?runs={ids[0]}&x=env_steps")).json()
    x_steps = steps["runs"][0]["agents"][0]["train"]["x"]
    assert x_steps == sorted(x_steps) and x_steps[-1] > EPISODES
    assert steps["runs"][0]["agents"][0]["eval"]["x"] == [x_steps[-1]]  # after the last episode
    wall = await (await client.get(f"/api/curves?runs={ids[0]}&x=time")).json()
    x_time = wall["runs"][0]["agents"][0]["train"]["x"]
    assert x_time == sorted(x_time) and 0 <= x_time[0] and x_time[-1] < 60


async def test_curves_of_a_sweep_and_the_sweeps_list(aiohttp_client, sweep_runs):
    runs, ids = sweep_runs
    client = await aiohttp_client(create_app(runs))
    data = await (await client.get(f"/api/curves?sweep={SWEEP}")).json()
    assert [r["run"] for r in data["runs"]] == ids  # the queued seed has no run yet
    assert data["waiting"] == 1 and not data["live"]  # the page keeps following the sweep for it
    ret = data["aggregate"]["metrics"]["return"]
    assert data["aggregate"]["samples"] == SEEDS and all(v is not None for v in ret["iqm"])
    sweeps = await (await client.get("/api/sweeps")).json()
    assert sweeps["sweeps"] == [
        {
            "id": SWEEP,
            "spec": "tiny",
            "seeds": list(range(SEEDS + 1)),
            "runs": [*ids, None],
            "created": pytest.approx(time.time(), abs=600),
            "overrides": {},
            "cancelled": [],
            "axes": [],  # a seed sweep of the control page: no configurations
            "configurations": [],
            "configuration": [],
            "failed": [],
            "spec_file": None,
        }
    ]


async def test_a_sweeps_groups_as_json_and_csv(aiohttp_client, sweep_runs):
    """/api/sweeps/<id>/groups: the runs by configuration, as bdi-rl sweep-report gives them."""
    runs, ids = sweep_runs
    grouped = "sweep-20261124-130000"
    record = Sweep(id=grouped, spec="tiny", seeds=[0, 0, 1, 1], runs=ids, created=time.time(),
                   axes=["learning.alpha"], configurations=[{"learning.alpha": 0.1}, {"learning.alpha": 0.4}],
                   configuration=[0, 1, 0, 1])  # fmt: skip
    write_sweep(runs, record)
    try:
        client = await aiohttp_client(create_app(runs))
        data = await (await client.get(f"/api/sweeps/{grouped}/groups?window=5&threshold=0")).json()
        assert data["axes"] == ["learning.alpha"] and data["iqm_min_runs"] == 4
        assert sorted(r["configuration"] for r in data["rows"]) == ["learning.alpha=0.1", "learning.alpha=0.4"]
        assert all(r["finished"] == 2 and r["reached"] == "2/2" and r["iqm"] is None for r in data["rows"])
        response = await client.get(f"/api/sweeps/{grouped}/groups?format=csv")
        assert response.status == 200 and response.content_type == "text/csv"
        assert (await response.text()).splitlines()[0].startswith("configuration,runs,finished,failed,iqm")
        by = await (await client.get(f"/api/curves?sweep={grouped}&by=configuration&smooth=0")).json()
        assert [(g["label"], g["runs"], g["samples"]) for g in by["groups"]] == [
            ("learning.alpha=0.1", [0, 2], 2),
            ("learning.alpha=0.4", [1, 3], 2),
        ]
        first = by["groups"][0]["metrics"]["return"]
        column = [by["runs"][k]["agents"][0]["train"]["return"][-1] for k in (0, 2)]
        assert first["mean"][-1] == pytest.approx(sum(column) / 2, abs=1e-6)  # of its own runs only
        assert (await (await client.get(f"/api/curves?sweep={grouped}")).json())["groups"] == []  # not asked
        for bad, status in (("sweep-20261124-999999", 404), ("nosuch", 404), (f"{grouped}/groups?metric=speed", 400)):
            url = f"/api/sweeps/{bad}" + ("" if "?" in bad else "/groups")
            assert (await client.get(url)).status == status, bad
    finally:  # the fixture's runs directory is shared: its sweeps list stays as it was
        (runs / SWEEPS_DIR / f"{grouped}.json").unlink()


@pytest.mark.parametrize(
    "query",
    [
        "runs=nosuchrun",
        "runs={ok},nosuchrun",
        "runs=../{ok}",
        "runs=..",
        "runs={ok}/../{ok}",
        "sweep=sweep-20990101-000000",
        "sweep=../../etc",
        "sweep=.sweeps",
    ],
)
async def test_unknown_or_outside_names_are_404(aiohttp_client, sweep_runs, query):
    runs, ids = sweep_runs
    client = await aiohttp_client(create_app(runs))
    response = await client.get("/api/curves?" + query.format(ok=ids[0]))
    assert response.status == 404
    assert response.headers["Content-Security-Policy"] == SECURITY_HEADERS["Content-Security-Policy"]


@pytest.mark.parametrize(
    "query",
    [
        "",
        "runs=",
        "runs={ok}&x=hours",
        "runs={ok}&smooth=-1",
        "runs={ok}&smooth=x",
        "runs={ok}&method=median",
        "runs={ok}&across=everything",
    ],
)
async def test_bad_parameters_are_400(aiohttp_client, sweep_runs, query):
    runs, ids = sweep_runs
    client = await aiohttp_client(create_app(runs))
    assert (await client.get("/api/curves?" + query.format(ok=ids[0]))).status == 400


async def test_charting_library_is_served_locally(aiohttp_client, sweep_runs):
    runs, _ = sweep_runs
    client = await aiohttp_client(create_app(runs))
    js = await client.get("/static/vendor/plotly.min.js")
    assert js.status == 200 and "max-age" in js.headers["Cache-Control"]
    assert (await js.read()) == vendor.PLOTLY_JS.read_bytes()
    css = await client.get("/static/vendor/plotly.css")
    text = await css.text()
    assert css.content_type == "text/css" and ".js-plotly-plot .plotly .main-svg" in text and text.count("{") > 40
    prelude = await client.get("/static/vendor/plotly-csp.js")
    assert prelude.status == 200 and "createElement" in await prelude.text()
    for name in ("x.js", "..", "plotly.min.js.map"):
        assert (await client.get(f"/static/vendor/{name}")).status == 404
    page = await client.get("/compare?runs=x")
    assert page.status == 200 and "script-src 'self'" in page.headers["Content-Security-Policy"]
    static = Path(__file__).parent.parent / "bdi_rl" / "readers" / "static"
    for name in ("compare.html", "run.html"):
        html = (static / name).read_text()  # plotly's own stylesheet, so it injects none
        assert 'id="plotly.js-style-global" class="no-inline-styles"' in html and "https://" not in html
    scripts = "".join((static / name).read_text() for name in ("charts.js", "compare.js", "runs.js"))
    assert "innerHTML" not in scripts and "insertAdjacentHTML" not in scripts

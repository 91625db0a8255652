"""A hierarchy of plans with moves learned per sub-goal (issue 31): Taxi's state decoded as
percepts, each sub-goal's own Q-table (``.rl_choose_in``, ``.rl_update_in``), and the shipped
hierarchy solving Taxi."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

from bdi_rl.rl.checkpoint import CheckpointError, load_checkpoint
from bdi_rl.rl.envs import make_env
from bdi_rl.rl.families import taxi_decode
from bdi_rl.rl.qlearning import LearningConfig
from bdi_rl.rl.subtasks import SubtaskTables
from bdi_rl.trace.reading import read_trace
from tests.conftest import run_cli


def test_taxi_states_are_perceived_decoded() -> None:
    env = make_env("Taxi-v4", {})
    for s in (0, 252, 499):
        row, col, passenger, destination = taxi_decode(s)
        assert env.facts(s) == {"taxi": (row, col), "passenger": (passenger,), "destination": (destination,)}
    assert make_env("FrozenLake-v1", {"is_slippery": False}).facts(3) == {}


def test_a_sub_goal_table_learns_towards_the_reward_and_its_next_row_unless_reached() -> None:
    tables = SubtaskTables(4, LearningConfig(alpha=0.5, gamma=0.9), seed=0)
    tables.row("nav(0)", 7)[:] = [1.0, 4.0, 2.0, 0.0]
    assert tables.update("nav(0)", 3, 1, -1.0, 7, done=False) == (0.0, 0.5 * (-1.0 + 0.9 * 4.0))
    assert tables.update("nav(0)", 3, 2, -1.0, 7, done=True) == (0.0, -0.5)
    assert tables.update("nav(1)", 3, 1, -1.0, 7, done=False) == (0.0, -0.5)  # another sub-goal's own table
    assert set(tables.tables) == {"nav(0)", "nav(1)"} and np.all(tables.row("nav(1)", 7) == 0.0)
    assert tables.choose("nav(0)", 7, epsilon=0.0) == 1


@pytest.fixture(scope="module")
def hierarchy_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("taxi-hierarchy")
    result = run_cli("run", "taxi-hierarchy", "--runs", str(runs), "--no-progress")
    assert result.returncode == 0, result.stderr
    return Path(result.stdout.strip().splitlines()[-1])


def test_the_taxi_hierarchy_delivers_every_passenger_greedily(hierarchy_run: Path) -> None:
    """400 training episodes, then 100 greedy ones through the plans: every passenger
    delivered, at the optimal return's level (>= 7.9 on average)."""
    summary = json.loads((hierarchy_run / "summary.json").read_text())
    learner = summary["agents"]["learner"]
    assert learner["episodes"] == 400
    evaluation = learner["eval"]
    assert evaluation["episodes"] == 100 and evaluation["success_rate"] == 1.0
    assert evaluation["mean_return"] >= 7.9


def test_the_hierarchy_learns_on_fewer_env_steps_than_the_episodes_the_flat_learner_needs(hierarchy_run: Path) -> None:
    """Its 400 episodes took ~19k env steps: each navigation table has 25 states, not 500."""
    episodes = [e["data"] for e in read_trace(hierarchy_run / "trace.jsonl") if e["kind"] == "episode.end"]
    assert len(episodes) == 400
    late = episodes[-50:]
    assert all(e["outcome"] == "goal" for e in late) and sum(e["length"] for e in late) / 50 < 20


# -- the sub-goal tables are kept with the Q-table: warm-started and resumed ---------------------
def test_the_checkpoint_keeps_each_sub_goal_s_table(hierarchy_run: Path) -> None:
    """The four navigation tables, each over the taxi's cells (at most 25 states), a value per action."""
    tables = load_checkpoint(hierarchy_run / "qtables" / "learner.npz").subtask_tables
    assert set(tables) == {"nav(0)", "nav(1)", "nav(2)", "nav(3)"}
    assert all(0 < len(rows) <= 25 and all(len(row) == 6 for row in rows.values()) for rows in tables.values())


def test_a_warm_start_drives_on_the_navigation_it_learned(hierarchy_run: Path) -> None:
    """One training episode from the saved tables, then 100 greedy ones through the plans: every
    passenger delivered at the optimum's level (a cold start's one episode delivers few)."""
    warm = run_cli(
        "run",
        "taxi-hierarchy",
        "--episodes",
        "1",
        "--warm-start",
        str(hierarchy_run),
        "--runs",
        str(hierarchy_run.parent),
    )
    assert warm.returncode == 0, warm.stderr
    summary = json.loads((Path(warm.stdout.strip().splitlines()[-1]) / "summary.json").read_text())
    evaluation = summary["agents"]["learner"]["eval"]
    assert evaluation["success_rate"] == 1.0 and evaluation["mean_return"] >= 7.9


@pytest.mark.parametrize(
    "rows, said",
    [
        ({"x": [0.0] * 6}, "subtask_tables.nav(0).x: an abstract state must be a whole number"),
        ({"-1": [0.0] * 6}, "subtask_tables.nav(0).-1: an abstract state must be a whole number"),
        ({"3": [0.0] * 5}, "subtask_tables.nav(0).3: 5 action values, the table has 6 actions"),
        ({"3": [0.0] * 5 + ["far"]}, "subtask_tables"),
    ],
)
def test_a_checkpoint_whose_sub_goal_tables_do_not_fit_is_refused_naming_the_row(
    hierarchy_run: Path, tmp_path: Path, rows: dict, said: str
) -> None:
    with np.load(hierarchy_run / "qtables" / "learner.npz") as npz:
        q, meta = npz["q"], json.loads(npz["meta"].tobytes())
    meta["subtask_tables"] = {"nav(0)": rows}
    buffer = io.BytesIO()
    np.savez(buffer, q=q, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    path = tmp_path / "learner.npz"
    path.write_bytes(buffer.getvalue())
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path)
    assert str(path) in str(caught.value) and said in str(caught.value)


@pytest.mark.parametrize(
    "call, said",
    [
        (".rl_choose_in(nav(0), -1, A)", ".rl_choose_in: abstract state must be a whole number"),
        (".rl_update_in(nav(0), 0, 9, 1, true)", ".rl_update_in: action must be a whole number in 0..5"),
        (".rl_update_in(nav(0), 0, 1, 1, maybe)", ".rl_update_in: Done must be true or false, got maybe"),
    ],
)
def test_a_sub_goal_call_with_a_bad_argument_fails_saying_which(tmp_path: Path, call: str, said: str) -> None:
    (tmp_path / "bad.asl").write_text(
        f"!go.\n+!go <- .rl_reset; {call}; .rl_finish.\n-!go[error_msg(M)] <- .print(M); .rl_finish.\n"
    )
    spec = tmp_path / "bad.toml"
    spec.write_text(
        'name = "bad"\nepisodes = 1\neval_episodes = 0\n[env]\nid = "Taxi-v4"\n'
        '[[agents]]\nname = "learner"\nasl = "bad.asl"\n'
    )
    result = run_cli("run", str(spec), "--runs", str(tmp_path / "runs"), "--no-progress")
    assert said in result.stdout + result.stderr, result.stdout + result.stderr

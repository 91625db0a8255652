"""``bdi-rl serve``'s play, warm start and resume: checkpoints and runs are named by run id and
agent (never by path) and found under the runs directory; each request is checked as the CLI
checks it before anything is queued, a mismatch refused with the line ``--warm-start`` gives.

The fast tests drive the app with aiohttp's test client and a queue that starts nothing (its
jobs' commands are checked); the slow ones start a real ``bdi-rl serve`` whose children are
real runs, plays and resumes."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bdi_rl.control.app import create_control_app
from bdi_rl.control.jobs import JobQueue
from bdi_rl.store import read_sweep
from bdi_rl.xmpp.server import free_port
from tests.checkpoints import BAD_CHECKPOINTS, TRAINED_SPEC, fingerprint, trained_run
from tests.conftest import run_main
from tests.test_control import REFUSALS, Serve, _headers

TOKEN = "t0ken-for-tests"


@pytest.fixture(scope="module")
def source_runs(tmp_path_factory) -> Path:
    """A runs directory with a trained 4x4 learner and a trained 8x8 one."""
    runs = tmp_path_factory.mktemp("control-play") / "runs"
    trained_run(runs, name="det")
    trained_run(runs, name="eight", episodes=10, map_name="8x8")
    return runs


@pytest.fixture
async def control(source_runs, tmp_path):
    """The control app over a copy of ``source_runs``; its queue starts nothing (max 0)."""
    runs = tmp_path / "runs"
    shutil.copytree(source_runs, runs)
    port = free_port()
    queue = JobQueue(runs, max_running=0)
    client = TestClient(TestServer(create_control_app(runs, queue, TOKEN, "127.0.0.1"), host="127.0.0.1", port=port))
    await client.start_server()
    client.runs, client.queue, client.origin = runs.resolve(), queue, f"http://127.0.0.1:{port}"
    client.det = next(runs.glob("*__det__*")).name
    client.eight = next(runs.glob("*__eight__*")).name
    yield client
    await client.close()


async def _post(client, path, body):
    response = await client.post(path, json=body, headers=_headers(client))
    return response.status, await response.json()


def _warm_start_line(runs: Path, tmp_path: Path, run: str, map_name: str) -> str:
    """What ``bdi-rl run --warm-start`` says of the run's table on a run of ``map_name``, its
    runs directory said as ``runs/`` (as the page sees it)."""
    spec = tmp_path / "other.toml"
    spec.write_text(TRAINED_SPEC.format(name="other", episodes=5, map=map_name, agent="learner", trace="episode"))
    refused = run_main(
        "run", str(spec), "--warm-start", str(runs / run), "--runs", str(tmp_path / "x"), "--no-progress"
    )
    assert refused.returncode == 2
    return refused.stderr.strip().removeprefix("bdi-rl: error: ").replace(f"{runs}/", "runs/")


# -- play ------------------------------------------------------------------------------------
async def test_play_queues_bdi_rl_play_of_a_checkpoint_named_by_run_and_agent(control):
    before = fingerprint(control.runs)
    body = {
        "run": control.det,
        "agent": "learner",
        "episodes": 1000,
        "seed": 7,
        "goal": [3, 0],
        "is_slippery": False,
        "policy_only": True,
    }
    status, answer = await _post(control, "/api/control/play", body)
    assert status == 201, answer
    (job,) = answer["jobs"]
    assert job["kind"] == "play" and job["state"] == "queued" and job["episodes"] == 1000
    assert job["spec"] == f"play {control.det}/learner on is_slippery False, goal (3, 0)"
    command = control.queue.command(control.queue.jobs[job["id"]])
    assert command[4:] == [
        "play",
        str(control.runs / control.det),
        "--runs",
        str(control.runs),
        "--episodes",
        "1000",
        "--agent",
        "learner",
        "--seed",
        "7",
        "--goal",
        "3,0",
        "--env=is_slippery=false",
        "--policy-only",
        "--no-progress",
        "--announce-run-dir",
    ]
    assert fingerprint(control.runs) == before  # checked, queued: nothing written


async def test_a_play_on_a_map_of_another_size_is_refused_with_the_warm_start_line(control, tmp_path):
    expected = _warm_start_line(control.runs, tmp_path, control.det, "8x8")
    status, answer = await _post(control, "/api/control/play", {"run": control.det, "map_name": "8x8"})
    assert status == 400 and answer["error"] == expected
    assert "runs/" + control.det + "/qtables/learner.npz: made for another state space" in expected
    assert control.queue.jobs == {}


@pytest.mark.parametrize(
    "body, status, message",
    [
        ({"run": "nosuchrun"}, 404, "no such run"),
        ({"run": "../runs"}, 400, "$.run"),
        ({"run": "/etc"}, 400, "$.run"),
        ({"run": "{det}", "agent": "../learner"}, 400, "$.agent"),
        ({"run": "{det}", "agent": "Learner"}, 400, "$.agent"),
        ({"run": "{det}", "agent": "nobody"}, 400, "no checkpoint for nobody (has: learner)"),
        ({"run": "{det}", "goal": [1]}, 400, "$.goal"),
        ({"run": "{det}", "goal": [1, 1]}, 400, "env.goals[0]: (1, 1) is a hole"),
        ({"run": "{det}", "map_name": "16x16"}, 400, "$.map_name"),
        ({"run": "{det}", "episodes": 0}, 400, "$.episodes"),
        ({"run": "{det}", "env": {"render_mode": "human"}}, 400, "unknown field `env`"),
        ({"run": "{det}", "path": "/tmp"}, 400, "unknown field `path`"),
    ],
)
async def test_a_bad_play_request_is_refused_and_changes_nothing(control, body, status, message):
    before = fingerprint(control.runs)
    body = {k: v.format(det=control.det) if isinstance(v, str) else v for k, v in body.items()}
    got, answer = await _post(control, "/api/control/play", body)
    assert got == status and message in answer["error"] and "\n" not in answer["error"]
    assert control.queue.jobs == {} and fingerprint(control.runs) == before


@pytest.mark.parametrize("case", BAD_CHECKPOINTS)
async def test_a_bad_checkpoint_is_refused_by_play_and_warm_start(control, case):
    damage, expected = BAD_CHECKPOINTS[case]
    damage(control.runs / control.det / "qtables" / "learner.npz")
    before = fingerprint(control.runs)
    status, answer = await _post(control, "/api/control/play", {"run": control.det, "agent": "learner"})
    assert status == 400 and expected in answer["error"] and "\n" not in answer["error"], answer
    warm = {"spec": "frozenlake-4x4", "warm_start": [{"run": control.det, "agent": "learner"}]}
    status, answer = await _post(control, "/api/control/runs", warm)
    assert status == 400 and expected in answer["error"], answer
    assert control.queue.jobs == {} and fingerprint(control.runs) == before


# -- warm starts -----------------------------------------------------------------------------
async def test_a_run_warm_starts_from_a_checkpoint_named_by_run_and_agent(control):
    status, answer = await _post(
        control,
        "/api/control/runs",
        {"spec": "frozenlake-4x4", "episodes": 10, "warm_start": [{"run": control.det, "agent": "learner"}]},
    )
    assert status == 201, answer
    job = control.queue.jobs[answer["jobs"][0]["id"]]
    assert job.spec == f"frozenlake-4x4; warm start learner <- {control.det}/learner"
    assert job.spec_path.parent == control.runs / ".specs"
    saved = job.spec_path.read_text()
    assert f'warm_start = "{control.runs / control.det / "qtables" / "learner.npz"}"' in saved
    assert control.queue.command(job)[4:6] == ["run", str(job.spec_path)]


TWO_GROUPS = """
name = "pair"
episodes = 10
eval_episodes = 5
[env]
id = "FrozenLake-v1"
kwargs = { map_name = "4x4", is_slippery = false }
[[agents]]
name = "a"
[[agents]]
name = "b"
"""


async def test_a_sweep_warm_starts_each_group_from_its_own_checkpoint(control, tmp_path):
    other = trained_run(control.runs, name="det2", episodes=50).name
    refs = [{"group": "a", "run": control.det, "agent": "learner"}, {"group": "b", "run": other, "agent": "learner"}]
    status, answer = await _post(control, "/api/control/sweeps", {"toml": TWO_GROUPS, "seeds": 3, "warm_start": refs})
    assert status == 201, answer
    sweep = read_sweep(control.runs, answer["sweep"])
    assert sweep.overrides["warm_start"] == refs
    jobs = [control.queue.jobs[j["id"]] for j in answer["jobs"]]
    assert [j.seed for j in jobs] == [0, 1, 2] and len({j.spec_path for j in jobs}) == 1
    saved = jobs[0].spec_path.read_text()
    for run in (control.det, other):
        assert str(control.runs / run / "qtables" / "learner.npz") in saved


@pytest.mark.parametrize(
    "refs, message",
    [
        ([{"run": "nosuchrun", "agent": "learner"}], "warm_start: no run 'nosuchrun' in this runs directory"),
        ([{"run": "{det}", "agent": "nobody"}], "has no checkpoint of nobody (has: learner)"),
        ([{"run": "{det}", "agent": "learner", "group": "zzz"}], "the spec has no learner group 'zzz'"),
        ([{"run": "{det}"}, {"run": "{det}"}], "one entry per group"),
        ([{"run": "../{det}"}], "$.warm_start[0].run"),
        ([{"run": "{det}", "agent": "learner", "path": "/x"}], "unknown field `path`"),
    ],
)
async def test_a_bad_warm_start_is_refused_and_nothing_is_made(control, refs, message):
    before = fingerprint(control.runs)
    refs = [{k: v.format(det=control.det) for k, v in r.items()} for r in refs]
    for body in ({"spec": "frozenlake-4x4", "warm_start": refs}, {"toml": TWO_GROUPS, "warm_start": refs}):
        status, answer = await _post(control, "/api/control/runs", body)
        assert status == 400 and message in answer["error"], answer
    assert control.queue.jobs == {} and fingerprint(control.runs) == before  # no .specs either


async def test_a_warm_start_of_another_state_space_is_refused_with_the_warm_start_line(control, tmp_path):
    expected = _warm_start_line(control.runs, tmp_path, control.det, "8x8")
    for body in (
        {"spec": "frozenlake-8x8", "warm_start": [{"run": control.det, "agent": "learner"}]},
        {"spec": "frozenlake-8x8", "seeds": 2, "warm_start": [{"run": control.det}]},
    ):
        path = "/api/control/sweeps" if "seeds" in body else "/api/control/runs"
        status, answer = await _post(control, path, body)
        assert status == 400 and answer["error"] == expected, answer
    assert control.queue.jobs == {} and not (control.runs / ".specs").exists()


async def test_the_page_learns_each_shipped_specs_learner_groups(control):
    specs = await (await control.get("/api/control/specs")).json()
    groups = {s["name"]: s["learner_groups"] for s in specs["specs"]}
    assert groups["frozenlake-4x4"] == ["learner"] and groups["frozenlake-team"] == ["learner"]


# -- resume ----------------------------------------------------------------------------------
def _stopped(runs: Path, run: str, how: str) -> Path:
    run_dir = runs / run
    summary = json.loads((run_dir / "summary.json").read_text())
    if how == "interrupted":
        (run_dir / "summary.json").write_text(json.dumps({**summary, "interrupted": True}))
    else:  # abandoned: killed before its summary
        (run_dir / "summary.json").unlink()
    return run_dir


@pytest.mark.parametrize("how", ["interrupted", "abandoned"])
async def test_a_stopped_run_is_resumed_from_its_page(control, how):
    run_dir = _stopped(control.runs, control.det, how)
    before = fingerprint(control.runs)
    status, answer = await _post(control, f"/api/control/runs/{control.det}/resume", {})
    assert status == 201, answer
    (job,) = answer["jobs"]
    assert job["kind"] == "resume" and job["run"] == control.det and job["spec"] == f"resume {control.det}"
    command = control.queue.command(control.queue.jobs[job["id"]])
    assert command[4:] == ["run", "--resume", str(run_dir), "--no-progress", "--announce-run-dir"]
    status, answer = await _post(control, f"/api/control/runs/{control.det}/resume", {})
    assert status == 400 and f"job {job['id']} is resuming it already" in answer["error"]
    assert fingerprint(control.runs) == before


async def test_what_is_not_resumed(control, tmp_path):
    status, answer = await _post(control, f"/api/control/runs/{control.det}/resume", {})
    assert status == 400 and "finished (every agent finished): only an interrupted or abandoned run" in answer["error"]
    played = run_main(
        "play",
        str(control.runs / control.det),
        "--policy-only",
        "--episodes",
        "5",
        "--runs",
        str(control.runs),
        "--no-progress",
    )
    play = Path(played.stdout.strip().splitlines()[-1]).name
    _stopped(control.runs, play, "interrupted")
    status, answer = await _post(control, f"/api/control/runs/{play}/resume", {})
    assert status == 400 and "an evaluation (bdi-rl play) is not resumed" in answer["error"]
    for run in ("nosuchrun", "..", ".specs", "%2e%2e"):
        response = await control.post(f"/api/control/runs/{run}/resume", json={}, headers=_headers(control))
        assert response.status == 404
    assert control.queue.jobs == {}


@pytest.mark.parametrize("how", REFUSALS)
async def test_every_new_post_is_guarded(control, how):
    before = fingerprint(control.runs)
    _stopped(control.runs, control.det, "interrupted")
    for path, body in (
        ("/api/control/play", {"run": control.det}),
        (f"/api/control/runs/{control.det}/resume", {}),
        ("/api/control/runs", {"spec": "frozenlake-4x4", "warm_start": [{"run": control.det}]}),
    ):
        response = await control.post(path, json=body, headers=_headers(control, **REFUSALS[how]))
        assert response.status == 403 and set(await response.json()) == {"error"}
    assert control.queue.jobs == {}
    assert {k: v for k, v in fingerprint(control.runs).items() if "summary" not in k} == {
        k: v for k, v in before.items() if "summary" not in k
    }


# -- a real bdi-rl serve (slow) --------------------------------------------------------------
@pytest.mark.slow
def test_play_warm_start_and_resume_with_a_real_serve(source_runs, tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(source_runs, runs)
    det = next(runs.glob("*__det__*")).name
    serve = Serve(runs, jobs=2)
    try:
        status, answer = serve.post(
            "/api/control/play", {"run": det, "agent": "learner", "episodes": 300, "goal": [3, 0]}
        )
        assert status == 201, answer
        status, answer = serve.post(
            "/api/control/runs",
            {
                "spec": "frozenlake-4x4",
                "episodes": 5,
                "trace": "episode",
                "warm_start": [{"run": det, "agent": "learner"}],
            },
        )
        assert status == 201, answer
        jobs = serve.wait(lambda jobs: all(j["state"] not in ("queued", "running") for j in jobs))
        assert [(j["kind"], j["state"]) for j in jobs] == [("play", "finished"), ("run", "finished")], jobs
        play = json.loads((runs / jobs[0]["run"] / "summary.json").read_text())["evaluation"]["agents"]["learner"]
        assert play["episodes"] == 300 and play["success_rate"] == 0.0 and "(3,0) F->G" in play["task_change"]
        warm = runs / jobs[1]["run"]
        loads = [json.loads(line) for line in (warm / "trace.jsonl").read_text().splitlines()]
        load = next(e for e in loads if e["kind"] == "qtable.load")
        assert load["data"]["path"] == str(runs.resolve() / det / "qtables" / "learner.npz")

        status, answer = serve.post(
            "/api/control/runs", {"spec": "frozenlake-4x4", "episodes": 30_000, "trace": "episode", "seed": 9}
        )
        job = answer["jobs"][0]["id"]
        serve.wait(lambda jobs: jobs[-1]["run"] is not None)
        time.sleep(1.5)
        serve.post(f"/api/control/jobs/{job}/stop")
        jobs = serve.wait(lambda jobs: jobs[-1]["state"] == "stopped", timeout=60)
        stopped = jobs[-1]["run"]
        status, answer = serve.post(f"/api/control/runs/{stopped}/resume")
        assert status == 201, answer
        jobs = serve.wait(lambda jobs: jobs[-1]["state"] not in ("queued", "running"))
        assert (jobs[-1]["kind"], jobs[-1]["state"], jobs[-1]["run"]) == ("resume", "finished", stopped), jobs[-1]
        summary = json.loads((runs / stopped / "summary.json").read_text())
        assert not summary.get("interrupted") and summary["resumed"]["episodes"]["learner"] > 0
        assert summary["agents"]["learner"]["episodes"] == 30_000
    finally:
        serve.stop()

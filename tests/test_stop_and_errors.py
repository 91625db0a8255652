"""How every role stops and fails: SIGTERM does what Ctrl-C does, a refused login and an
unexpected exception are one line each, and nothing is created for a run that never starts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bdi_rl.cli import main as bdi_rl_main
from bdi_rl.crashlog import CRASH_LOG
from bdi_rl.readers.runstate import run_state
from bdi_rl.rl.checkpoint import load_checkpoint
from bdi_rl.trace.reading import check_trace, read_trace
from bdi_rl.xmpp.server import free_port
from tests.conftest import MINIMAL_SPEC, line_seqs

#: compose's grace period between SIGTERM and SIGKILL
GRACE = 10.0

LONG_SPEC = MINIMAL_SPEC.replace("episodes = 20", "episodes = 1000000")


def _start(*args: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "bdi_rl", *args],
        env=env or dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(path_glob: Path, pattern: str, timeout: float = 60) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [p for p in path_glob.glob(pattern) if p.stat().st_size > 0]
        if found:
            return found[0]
        time.sleep(0.2)
    raise AssertionError(f"nothing matching {pattern} under {path_glob} within {timeout} s")


def _terminate(proc: subprocess.Popen) -> tuple[str, str, float]:
    """SIGTERM ``proc``; (stdout, stderr, seconds it took to exit)."""
    began = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=GRACE)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"still running {GRACE} s after SIGTERM:\n{err[-2000:]}") from None
    return out, err, time.monotonic() - began


def _assert_interrupted_learner(run_dir: Path, name: str) -> None:
    """What Ctrl-C leaves: the learner's table saved, its trace flushed up to agent.stop."""
    assert (run_dir / "qtables" / f"{name}.npz").is_file()
    events = [e for e in read_trace(run_dir / "trace.jsonl") if e["agent"] == f"{name}@localhost"]
    seqs = line_seqs(events, f"{name}@localhost")
    assert seqs == list(range(len(seqs)))
    assert events[-1]["kind"] == "agent.stop" and events[-1]["data"]["reason"] == "interrupted"


def test_sigterm_stops_a_run_as_ctrl_c_does(tmp_path):
    (tmp_path / "spec.toml").write_text(LONG_SPEC)
    runs = tmp_path / "runs"
    proc = _start("run", str(tmp_path / "spec.toml"), "--runs", str(runs), "--no-progress")
    try:
        trace = _wait_for(runs, "*/trace.jsonl")
        time.sleep(1.0)
        out, err, seconds = _terminate(proc)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    run_dir = trace.parent
    assert out.strip().splitlines()[-1] == str(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["agents"]["learner"]["episodes"] > 0
    _assert_interrupted_learner(run_dir, "learner")


def _role_processes(ejabberd, tmp_path: Path, name: str) -> tuple[subprocess.Popen, subprocess.Popen, Path]:
    """A telemetry and a learner process of a long run; returns them and the runs dir."""
    spec = tmp_path / "spec.toml"
    spec.write_text(
        LONG_SPEC.replace('name = "learner"', f'name = "{name}"') + f'[telemetry]\nname = "telemetry-{name}"\n'
    )
    runs = tmp_path / "runs"
    env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "pw"}
    xmpp = ["--xmpp", f"localhost:{ejabberd.port}", "--runs", str(runs)]
    return (
        _start("telemetry", str(spec), *xmpp, env=env),
        _start("agent", str(spec), "--name", name, *xmpp, env=env),
        runs,
    )


def test_sigterm_stops_an_agent_process_as_ctrl_c_does(ejabberd, tmp_path):
    telemetry, agent, runs = _role_processes(ejabberd, tmp_path, "termed")
    try:
        trace = _wait_for(runs, "*/trace.jsonl")
        time.sleep(2.0)
        _, agent_err, _ = _terminate(agent)
        assert agent.returncode == 130, agent_err
        assert "Traceback" not in agent_err
        # telemetry saw the agent stop, so the run is over: it writes the summary and exits
        # with the run's status, as `bdi-rl run` does (`docker compose wait telemetry`)
        out, telemetry_err = telemetry.communicate(timeout=GRACE)
        assert telemetry.returncode == 130, telemetry_err
        assert "bdi-rl: agent termed failed: interrupted" in telemetry_err
    finally:
        for proc in (telemetry, agent):
            proc.kill()
    _assert_interrupted_learner(trace.parent, "termed")
    summary = json.loads((trace.parent / "summary.json").read_text())
    assert summary["agents"]["termed"]["episodes"] > 0
    # the telemetry role's summary says so, as bdi-rl run's does
    assert summary["interrupted"] is True and summary["agents"]["termed"]["failure"] == "interrupted"
    assert run_state(trace.parent).state == "interrupted"


def test_sigterm_stops_telemetry_then_agents_within_the_grace_period(ejabberd, tmp_path):
    """As ``docker compose down`` does: telemetry goes first (or at once), the agents still
    stop within the grace period, and keep their tables."""
    telemetry, agent, runs = _role_processes(ejabberd, tmp_path, "downed")
    try:
        trace = _wait_for(runs, "*/trace.jsonl")
        time.sleep(2.0)
        _, telemetry_err, _ = _terminate(telemetry)
        assert telemetry.returncode == 130, telemetry_err
        assert "Traceback" not in telemetry_err and "interrupted" in telemetry_err
        _, agent_err, _ = _terminate(agent)
        assert agent.returncode in (1, 130), agent_err
        assert "Traceback" not in agent_err
    finally:
        for proc in (telemetry, agent):
            proc.kill()
    assert (trace.parent / "qtables" / "downed.npz").is_file()
    summary = json.loads((trace.parent / "summary.json").read_text())  # telemetry stopped first
    assert summary["interrupted"] is True and summary["agents"]["downed"]["failure"] == "interrupted"


def test_telemetry_stopped_before_its_agents_started_leaves_a_summary(ejabberd, tmp_path):
    """SIGTERM to a telemetry process whose agents never came: the run directory still gets
    its summary, interrupted, naming each agent that never started."""
    spec = tmp_path / "spec.toml"
    spec.write_text(
        LONG_SPEC.replace('name = "learner"', 'name = "absent"') + '[telemetry]\nname = "telemetry-alone"\n'
    )
    runs = tmp_path / "runs"
    telemetry = _start(
        "telemetry",
        str(spec),
        "--xmpp",
        f"localhost:{ejabberd.port}",
        "--runs",
        str(runs),
        env={**os.environ, "BDI_RL_XMPP_PASSWORD": "pw"},
    )
    try:
        trace = _wait_for(runs, "*/trace.jsonl")  # run.start is written: it waits for its agents
        _, err, _ = _terminate(telemetry)
    finally:
        telemetry.kill()
    assert telemetry.returncode == 130 and "Traceback" not in err, err
    summary = json.loads((trace.parent / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert summary["agents"] == {"absent": {"episodes": 0, "env_steps": 0, "qtable": None, "failure": "never started"}}
    assert run_state(trace.parent).state == "interrupted"
    assert read_trace(trace)[-1]["kind"] == "run.stop"


def test_sigterm_stops_the_viewer(tmp_path):
    port = free_port()
    proc = _start("view", "--runs", str(tmp_path), "--port", str(port))
    try:
        assert proc.stdout.readline().startswith("bdi-rl viewer: http://")  # printed once it listens
        _, err, _ = _terminate(proc)
    finally:
        proc.kill()
    assert proc.returncode == 0 and "Traceback" not in err


def test_a_wrong_password_for_an_existing_account_is_one_line(ejabberd, tmp_path):
    """The account exists with another password: one line saying so, and no run directory."""
    ejabberd.ctl("register", "telemetry-locked", ejabberd.domain, "the-right-one")
    spec = tmp_path / "spec.toml"
    spec.write_text(MINIMAL_SPEC + '[telemetry]\nname = "telemetry-locked"\n')
    runs = tmp_path / "runs"
    env = {**os.environ, "BDI_RL_XMPP_PASSWORD": "a-wrong-one"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "bdi_rl",
            "telemetry",
            str(spec),
            "--xmpp",
            f"localhost:{ejabberd.port}",
            "--runs",
            str(runs),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "wrong password for an existing account" in lines[0], result.stderr
    assert not any(runs.glob("*")) if runs.exists() else True


def test_an_unexpected_exception_is_one_line_and_a_traceback_file(tmp_path, capsys, monkeypatch):
    """A bug (injected here) is not a traceback on the terminal: one line naming it and the
    file that keeps the traceback."""
    import bdi_rl.readers.qtables

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("injected fault\nsecond line")

    monkeypatch.setattr(bdi_rl.readers.qtables, "show", broken)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    status = bdi_rl_main(["qtable", "show", str(tmp_path / "any.npz")])
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and len(lines) == 1, lines
    assert lines[0].startswith("bdi-rl: error: qtable failed: RuntimeError: injected fault (traceback in ")
    log = Path(lines[0].rpartition("(traceback in ")[2].rstrip(")"))
    assert log.parent == tmp_path and "RuntimeError: injected fault" in log.read_text()
    assert "Traceback (most recent call last)" in log.read_text()


def test_a_crash_during_a_run_leaves_its_traceback_in_the_run(tmp_path, capsys, monkeypatch):
    import bdi_rl.xmpp.runner

    def broken(*_: object, **__: object) -> None:
        raise KeyError("injected fault")

    monkeypatch.setattr(bdi_rl.xmpp.runner, "agents_summary", broken)
    (tmp_path / "spec.toml").write_text(MINIMAL_SPEC)
    runs = tmp_path / "runs"
    status = bdi_rl_main(["run", str(tmp_path / "spec.toml"), "--runs", str(runs), "--no-progress"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and len(lines) == 1, lines
    (run_dir,) = runs.iterdir()
    assert lines[0].endswith(f"(traceback in {run_dir / CRASH_LOG})")
    assert "KeyError: 'injected fault'" in (run_dir / CRASH_LOG).read_text()


@pytest.mark.parametrize(
    "output, expected",
    [
        (["plot", "-o", "{tmp}/" + "p" * 300 + ".png"], "File name too long"),
        (["plot", "-o", "/proc/bdi-rl.png"], "/proc/bdi-rl.png: No such file or directory"),
        (["export", "--csv", "{tmp}"], "Is a directory"),
        (["export", "--tensorboard", "/proc/bdi-rl-tb"], "/proc/bdi-rl-tb: No such file or directory"),
    ],
)
def test_an_output_path_that_cannot_be_written_is_one_line(output, expected, runs, tmp_path, capsys):
    """The path named, not the temporary file it was being written as; exit status 2."""
    from tests.conftest import run_named

    command, *rest = output
    argv = [command, str(run_named(runs, "tiny"))] + [a.replace("{tmp}", str(tmp_path)) for a in rest]
    status = bdi_rl_main(argv)
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and expected in lines[0], lines
    assert ".tmp" not in lines[0] and "traceback" not in lines[0]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", [["run", "--help"], ["--help"]])
def test_help_still_exits_zero(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        bdi_rl_main(argv)
    assert exit_.value.code == 0 and "usage" in capsys.readouterr().out


def test_runs_on_an_external_server_reuse_its_accounts(ejabberd, tmp_path):
    """An external server keeps its accounts between runs: `bdi-rl run` takes the user's
    password, so a second run logs in where a random password used to be refused, and a
    wrong one is one line before any run directory exists."""
    spec = tmp_path / "spec.toml"
    spec.write_text(
        MINIMAL_SPEC.replace('name = "learner"', 'name = "external"')
        + f'[xmpp]\nserver = "localhost:{ejabberd.port}"\n[telemetry]\nname = "telemetry-external"\n'
    )
    runs = tmp_path / "runs"
    argv = [sys.executable, "-m", "bdi_rl", "run", str(spec), "--runs", str(runs), "--no-progress"]

    def run(**env: str) -> subprocess.CompletedProcess:
        clean = {k: v for k, v in os.environ.items() if k != "BDI_RL_XMPP_PASSWORD"}
        return subprocess.run(argv, env={**clean, **env}, capture_output=True, text=True, timeout=120)

    missing = run()
    assert missing.returncode == 2 and "BDI_RL_XMPP_PASSWORD" in missing.stderr and not runs.exists()
    for _ in range(2):
        result = run(BDI_RL_XMPP_PASSWORD="pw-external")
        assert result.returncode == 0, result.stderr
    assert len(list(runs.iterdir())) == 2
    wrong = run(BDI_RL_XMPP_PASSWORD="not-the-password")
    assert wrong.returncode == 2, wrong.stderr
    assert wrong.stderr.strip().splitlines() == [
        "bdi-rl: error: the XMPP server refused the agents' login: wrong password for an existing "
        "account ($BDI_RL_XMPP_PASSWORD or --password-file), or registration is not allowed"
    ]
    assert len(list(runs.iterdir())) == 2


def test_a_full_disk_stops_a_run_in_one_line_and_tears_nothing(tmp_path):
    """``--runs`` on a file system that fills up mid-run (a 2 MB tmpfs in a mount namespace of
    its own): the run stops at once with one line on stderr, exit status 1; the trace ends in
    a whole line, the summary says why, and the checkpoint on disk is whole. Checkpoints come
    every 100 episodes, so some are written before the disk fills (~600-900 episodes); the
    one the stop takes may find no room left, and then the one before stays (the default,
    every 1000, left none on a loaded machine: the stop's found the disk full)."""
    spec = tmp_path / "spec.toml"
    spec.write_text(LONG_SPEC.replace("seed = 3", 'seed = 3\ntrace = "step"\ncheckpoint_every = 100'))
    small, kept = tmp_path / "small", tmp_path / "kept"
    small.mkdir()
    script = (
        f"mount -t tmpfs -o size=2m tmpfs {small} && "
        f"{sys.executable} -m bdi_rl run {spec} --runs {small}/runs --no-progress; "
        f"status=$?; cp -a {small}/runs {kept}; exit $status"
    )
    done = subprocess.run(
        ["unshare", "--mount", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "No space left on device" in lines[0], done.stderr
    run_dir = next(kept.iterdir())
    trace = (run_dir / "trace.jsonl").read_bytes()
    assert trace.endswith(b"\n") and check_trace(run_dir / "trace.jsonl").torn is None  # every line whole
    summary = json.loads((run_dir / "summary.json").read_text())
    assert "No space left on device" in summary["agents"]["learner"]["failure"]
    assert run_state(run_dir).state == "failed"
    table = load_checkpoint(run_dir / "qtables" / "learner.npz")  # whole (it checks its checksum)
    assert table.header.episodes > 0


def test_a_command_that_inherited_an_ignored_sigint_still_stops_on_it(tmp_path):
    """A background job of a script inherits an ignored SIGINT, and so does every run `bdi-rl
    serve` then starts; serve's Stop is a SIGINT. A policy-only play (a plain loop, no event
    loop to catch signals) started so stops at SIGINT, as on Ctrl-C."""
    from tests.checkpoints import trained_run

    trained = trained_run(tmp_path / "trained")
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bdi_rl", "play", str(trained), "--policy-only", "--episodes", "10000000"]
        + ["--runs", str(runs), "--no-progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # as a shell's `&` does
    )
    try:
        _wait_for(runs, "*/trace.jsonl")
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err


_MIND_BUG = """
import sys
from bdi_rl.bdi import options
from bdi_rl.cli import main

def broken(self, *args):
    raise RuntimeError("injected: a bug under the mind")
options.LearnedOptions.choose = broken  # a plan's failure, then ...
options.LearnedOptions.failed = broken  # ... its handling raises, out of the reasoning cycle
sys.exit(main(sys.argv[1:]))
"""


def test_a_bug_under_the_mind_fails_its_agent_at_once_and_keeps_the_traceback(tmp_path: Path) -> None:
    """An exception out of the reasoning cycle (a fault injected into the runtime's learned
    plan choice) ended the agent's reasoning loop unseen while its intentions still looked
    alive: the run hung until Ctrl-C. Now the agent fails at once: one line, the traceback
    in the run's crash.log, the summary written."""
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", _MIND_BUG, "run", "routes", "--runs", str(tmp_path), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert time.monotonic() - started < 60
    (run,) = tmp_path.iterdir()
    line = "bdi-rl: agent learner@localhost failed: its mind crashed: RuntimeError: injected: a bug under the mind"
    assert f"{line} (traceback in {run / CRASH_LOG})" in result.stderr.splitlines()
    assert "Traceback" not in result.stderr
    assert "injected: a bug under the mind" in (run / CRASH_LOG).read_text()
    summary = json.loads((run / "summary.json").read_text())
    assert "its mind crashed" in summary["agents"]["learner"]["failure"]

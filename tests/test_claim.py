"""``bdi-rl agent --claim GROUP`` (compose ``--scale``): a group the spec lacks is refused at
once, and the throw-away account a claim asks from is removed from the server afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bdi_rl.xmpp.server import free_port
from tests.conftest import MINIMAL_SPEC

SPEC = MINIMAL_SPEC + '\n[telemetry]\nname = "telemetry-claim"\n'
ENV = {**os.environ, "BDI_RL_XMPP_PASSWORD": "pw"}


def _agent(spec: Path, *args: str, port: int, runs: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bdi_rl", "agent", str(spec), *args, "--xmpp",
                           f"localhost:{port}", "--runs", str(runs)],
                          env=ENV, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args, message", [
    (["--claim", "nosuch"], "--claim nosuch: no agent group 'nosuch' in the spec (its groups: learner)"),
    (["--name", "nosuch"], "--name nosuch: no such agent or group in the spec"),
])
def test_an_agent_or_group_the_spec_lacks_is_refused_before_connecting(tmp_path, write_spec, args, message):
    """Nothing listens on the port: a process that tried to connect would wait for a server."""
    started = time.monotonic()
    result = _agent(write_spec(SPEC), *args, port=free_port(), runs=tmp_path / "runs")
    assert result.returncode == 2, result.stderr
    assert result.stderr == f"bdi-rl: error: {message}\n"
    assert time.monotonic() - started < 30 and not (tmp_path / "runs").exists()


def _accounts(ejabberd) -> set[str]:
    listed = ejabberd.ctl("registered_users", ejabberd.domain)
    assert listed.returncode == 0, listed.stderr
    return set(listed.stdout.split())


def test_a_claim_leaves_no_account_behind(ejabberd, tmp_path, write_spec):
    spec = write_spec(SPEC)
    runs = tmp_path / "runs"
    before = _accounts(ejabberd)
    telemetry = subprocess.Popen([sys.executable, "-m", "bdi_rl", "telemetry", str(spec), "--xmpp",
                                  f"localhost:{ejabberd.port}", "--runs", str(runs)],
                                 env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        claimed = _agent(spec, "--claim", "learner", port=ejabberd.port, runs=runs, timeout=120)
        assert claimed.returncode == 0, claimed.stderr
        assert "could not remove" not in claimed.stderr
        _, err = telemetry.communicate(timeout=60)
        assert telemetry.returncode == 0, err
    finally:
        if telemetry.poll() is None:
            telemetry.kill()
    # Only the spec's own accounts, reused by name run after run; no throw-away claim-* one.
    assert _accounts(ejabberd) - before <= {"learner", "telemetry-claim"}
    assert not [user for user in _accounts(ejabberd) if user.startswith("claim-")]

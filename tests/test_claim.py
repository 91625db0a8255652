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
    return subprocess.run(
        [sys.executable, "-m", "bdi_rl", "agent", str(spec), *args, "--xmpp", f"localhost:{port}", "--runs", str(runs)],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--claim", "nosuch"], "--claim nosuch: no agent group 'nosuch' in the spec (its groups: learner)"),
        (["--name", "nosuch"], "--name nosuch: no such agent or group in the spec"),
    ],
)
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
    telemetry = subprocess.Popen(
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
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
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


#: ``bdi-rl agent --claim``'s claim (``roles.claim_name``), then the process lives on, as the
#: agent it claimed for would, while its event loop's clock runs 150 s ahead in 1.5 s:
#: whatever the claim's client left scheduled (SPADE's keepalive ping every 55 s, its 30 s
#: timeout, slixmpp's reconnection then) comes due, and what it does then comes to pass in
#: the real seconds that follow. A stopped client does nothing: no account comes back.
CLAIM_AND_LIVE_ON = """
import asyncio, sys
from bdi_rl.patches import apply_all
from bdi_rl.spec import load_spec
from bdi_rl.xmpp.roles import claim_name

apply_all()
loop = asyncio.SelectorEventLoop()  # not uvloop: this loop's clock can be moved on
skipped = 0.0
clock = loop.time
loop.time = lambda: clock() + skipped

async def main():
    global skipped
    name = await claim_name("learner", load_spec(sys.argv[1]), "localhost", int(sys.argv[2]), "pw", 60)
    print("CLAIMED", name, flush=True)
    for _ in range(15):
        skipped += 10
        await asyncio.sleep(0.1)
    await asyncio.sleep(3)  # a reconnection under way (registering takes ~0.5 s) ends

loop.run_until_complete(main())
"""


def test_a_claims_account_does_not_come_back_while_the_process_lives_on(ejabberd, tmp_path, write_spec):
    """The claim's client is gone once the account is removed: ~90 s later it used to log in
    again, registering the account anew (4 of 4 claims left one on ejabberd)."""
    spec = write_spec(SPEC.replace("telemetry-claim", "telemetry-claim2"))
    telemetry = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bdi_rl",
            "telemetry",
            str(spec),
            "--xmpp",
            f"localhost:{ejabberd.port}",
            "--runs",
            str(tmp_path / "runs"),
        ],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        claim = subprocess.run(
            [sys.executable, "-c", CLAIM_AND_LIVE_ON, str(spec), str(ejabberd.port)],
            env=ENV,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        telemetry.kill()  # it waits for the learner, which never comes
        telemetry.communicate()
    assert claim.returncode == 0, claim.stderr
    assert "CLAIMED learner" in claim.stdout
    assert not [user for user in _accounts(ejabberd) if user.startswith("claim-")]

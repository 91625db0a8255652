"""A private ejabberd (Debian's 23.01) for tests, configured by ``compose/ejabberd.yml`` itself.

Each instance gets its own config dir, spool, logs, Erlang node name and ports, all on
loopback, and is stopped afterwards. ``.ci/run`` installs ejabberd; a machine without it
fails these tests with a clear message rather than skipping them.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bdi_rl.xmpp.server import ensure_certificate, free_port

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "compose" / "ejabberd.yml"


class EjabberdUnavailable(RuntimeError):
    pass


@dataclass
class Ejabberd:
    domain: str
    port: int
    directory: Path
    node: str

    def ctl(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                "ejabberdctl",
                "--config-dir",
                str(self.directory),
                "--spool",
                str(self.directory / "spool"),
                "--logs",
                str(self.directory / "logs"),
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def start(self) -> None:
        started = self.ctl("start")
        if started.returncode != 0:
            raise EjabberdUnavailable(f"ejabberdctl start failed: {started.stderr or started.stdout}")
        ready = self.ctl("started", timeout=90)
        if ready.returncode != 0:
            raise EjabberdUnavailable(f"ejabberd did not start: {self.log_tail()}")

    def stop(self) -> None:
        self.ctl("stop")
        self.ctl("stopped", timeout=60)

    def log_tail(self, lines: int = 20) -> str:
        logs = []
        for name in ("error.log", "ejabberd.log"):
            path = self.directory / "logs" / name
            if path.is_file():
                logs.extend(path.read_text(errors="replace").splitlines()[-lines:])
        return "\n".join(logs)


#: Tries at a fresh port when the one picked was taken before ejabberd bound it.
PORT_TRIES = 3


def start_ejabberd(domain: str = "localhost", internal_nets: str = "['127.0.0.0/8', '::1/128']") -> Ejabberd:
    """Start a private ejabberd on a free loopback port with compose/ejabberd.yml;
    ``internal_nets``: where in-band registration is allowed from.

    The port is free when it is picked, but it is in the machine's ephemeral range: a client
    socket of a test running alongside may take it before ejabberd binds it (CI met
    ``eaddrinuse``). Then ejabberd is started again on another port."""
    if shutil.which("ejabberdctl") is None:
        raise EjabberdUnavailable("ejabberd is not installed (apt-get install ejabberd; .ci/run does)")
    for _ in range(PORT_TRIES - 1):
        try:
            return _start_on_a_free_port(domain, internal_nets)
        except PortTaken:
            continue
    return _start_on_a_free_port(domain, internal_nets)


class PortTaken(EjabberdUnavailable):
    """The listener's port was taken between picking it and ejabberd binding it."""


def _start_on_a_free_port(domain: str, internal_nets: str) -> Ejabberd:
    # Not under pytest's tmp dir: ejabberd runs as its own user and must reach the files.
    directory = Path(tempfile.mkdtemp(prefix="bdi-rl-ejabberd-"))
    directory.chmod(0o755)
    port = free_port()
    node = f"bdirl{os.getpid()}x{port}@localhost"
    cert, key = ensure_certificate(domain, directory / "certs")
    (directory / "ejabberd.yml").write_text(
        "define_macro:\n"
        f"  XMPP_DOMAIN: {domain}\n"
        f"  C2S_PORT: {port}\n"
        "  C2S_IP: 127.0.0.1\n"
        f"  CERTFILE: {cert}\n"
        f"  KEYFILE: {key}\n"
        f"  INTERNAL_NETS: {internal_nets}\n"
        f"include_config_file: {CONFIG}\n"
    )
    (directory / "ejabberdctl.cfg").write_text(
        # Erlang distribution and epmd on loopback only; a node name of our own.
        "ERL_EPMD_ADDRESS=127.0.0.1\n"
        "INET_DIST_INTERFACE=127.0.0.1\n"
        f"ERLANG_NODE={node}\n"
        f"EJABBERD_PID_PATH={directory}/ejabberd.pid\n"
        'ERL_OPTIONS="-env ERL_CRASH_DUMP_BYTES 0"\n'
    )
    shutil.copy("/etc/ejabberd/inetrc", directory / "inetrc")
    for sub in ("spool", "logs"):
        (directory / sub).mkdir()
    user = pwd.getpwnam("ejabberd")
    for path in [directory, *directory.rglob("*")]:
        os.chown(path, user.pw_uid, user.pw_gid)
    server = Ejabberd(domain, port, directory, node)
    try:
        server.start()
    except EjabberdUnavailable as exc:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)
        if "eaddrinuse" in str(exc):
            raise PortTaken(str(exc)) from None
        raise
    except BaseException:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return server


def start_ejabberd_cluster(n: int = 2, domain: str = "localhost") -> list[Ejabberd]:
    """``n`` private ejabberd nodes joined into one cluster: one XMPP domain, each node its
    own c2s port, config dir and Erlang node name, the same compose/ejabberd.yml. They share
    the ejabberd user's Erlang cookie and talk Erlang distribution (and epmd) on loopback
    only. The first node is the cluster's seed; ``join_cluster`` copies its database
    (accounts, rosters) to the others, so an agent registered on one logs in on any."""
    nodes: list[Ejabberd] = []
    try:
        for _ in range(n):
            nodes.append(start_ejabberd(domain))
        for node in nodes[1:]:
            joined = node.ctl("join_cluster", nodes[0].node, timeout=120)
            if joined.returncode != 0:
                raise EjabberdUnavailable(f"join_cluster failed: {joined.stderr or joined.stdout}")
            if node.ctl("started", timeout=90).returncode != 0:
                raise EjabberdUnavailable(f"ejabberd did not come back after join_cluster: {node.log_tail()}")
        members = set(nodes[0].ctl("list_cluster").stdout.split())
        if members != {node.node for node in nodes}:
            raise EjabberdUnavailable(f"the cluster holds {sorted(members)}, not every node started")
    except BaseException:
        for node in nodes:
            remove(node)
        raise
    return nodes


def remove(server: Ejabberd) -> None:
    server.stop()
    shutil.rmtree(server.directory, ignore_errors=True)

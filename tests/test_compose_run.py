"""docker compose, run for real, as the README's "With docker compose" section says.

A real engine (tests/dockerengine.py: the running one, or Debian's dockerd started here and
stopped afterwards with the host as it was) and the Compose v2 binary. Where the image
registry cannot be reached, the images the compose file names are local stand-ins built from
tests/compose/ (a debootstrap'ed Debian bookworm, Python and ejabberd from Debian). The bdi-rl
image is built from the wheels compose/download-wheels.sh fetches on the host (no network in
the build, nothing to trust there). Each project is a copy of this checkout's files, set up by
the README's commands: `cp .env.example .env` (a password, free ports), `mkdir -p runs`.

1. A team run (coordinator + 4 learners, a short spec written after the image was built: it
   comes from the mount) completes: every agent's `agent.stop`, no sequence gap, exit 0, the
   viewer lists it finished. Run as root: the run's files are root's.
2. A second copy (a normal user's: its runs/ is uid 4242's, and so are the run's files), beside
   the first with its own name, ports and subnet, runs the default team spec and is stopped
   mid-way with `docker compose stop`: agents first (exit 130), then telemetry (130, summary
   interrupted), every event an agent emitted is in the trace.
3. The world profile runs the climbing game (world agent + 2 players, no coordinator).
4. `down -v` leaves no container, network or volume behind (no anonymous volume either).

Measured (printed at the end, `pytest -s`): the time of each step, each agent container's
shutdown (SIGTERM to exit) and the module's wall time.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from bdi_rl.trace.reading import read_trace
from bdi_rl.xmpp.server import free_port
from tests.conftest import ROOT, line_seqs
from tests.dockerengine import Engine, EngineUnavailable, start_engine

pytestmark = pytest.mark.timeout(1500)

#: Where the Debian base (a debootstrap tarball) and the wheelhouse are kept between runs:
#: neither depends on anything but the Debian suite and pyproject.toml's dependencies.
CACHE = Path(os.environ.get("BDI_RL_COMPOSE_CACHE") or Path.home() / ".cache" / "bdi-rl-tests" / "compose")
STANDINS = ROOT / "tests" / "compose"
DEBIAN_BASE = "bdi-rl-test/debian:bookworm"
#: The images the compose file names, and their stand-ins' Dockerfiles.
BASE_IMAGES = {"python:3.11-slim": "python.Dockerfile", "ghcr.io/processone/ejabberd:23.01": "ejabberd.Dockerfile"}
NORMAL_USER = 4242
TAG = f"{os.getpid()}"
IMAGE = f"bdi-rl-test-{TAG}:local"

TIMINGS: dict[str, object] = {}

SHORT_TEAM = (
    (ROOT / "agents" / "frozenlake-team.toml")
    .read_text()
    .replace('name = "frozenlake-team"', 'name = "compose-team"')
    .replace("episodes = 2000", "episodes = 300")
    .replace("eval_episodes = 1000", "eval_episodes = 100")
)


class Timer:
    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> Timer:
        self.began = time.monotonic()
        return self

    def __exit__(self, *exc: object) -> None:
        TIMINGS[self.name] = round(time.monotonic() - self.began, 1)


# -- the engine and the images --------------------------------------------------------------
def _as_root(*args: str) -> list[str]:
    return list(args) if os.geteuid() == 0 else ["sudo", "-n", *args]


def _debian_base(engine: Engine) -> None:
    """Import a debootstrap'ed bookworm (minbase) as DEBIAN_BASE; the tarball is cached."""
    tarball = CACHE / f"bookworm-minbase-{platform.machine()}.tar"
    if not tarball.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        rootfs = Path(tempfile.mkdtemp(prefix="bdirl-debootstrap-"))
        try:
            done = subprocess.run(
                _as_root(
                    "debootstrap", "--variant=minbase", "bookworm", str(rootfs / "fs"), "http://deb.debian.org/debian"
                ),
                capture_output=True,
                text=True,
                timeout=900,
            )
            assert done.returncode == 0, f"debootstrap failed (apt-get install debootstrap):\n{done.stdout[-2000:]}"
            partial = tarball.with_suffix(".partial")
            with partial.open("wb") as out:
                subprocess.run(_as_root("tar", "-C", str(rootfs / "fs"), "-c", "."), stdout=out, check=True)
            partial.rename(tarball)
        finally:
            subprocess.run(_as_root("rm", "-rf", str(rootfs)), check=False)
    with tarball.open("rb") as data:
        done = subprocess.run(
            ["docker", "import", "-", DEBIAN_BASE],
            stdin=data,
            env=engine.env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert done.returncode == 0, done.stderr


def _base_images(engine: Engine) -> list[str]:
    """The images the compose file names: present, pulled, or else stand-ins built here
    (returned: the test removes them from an engine it did not start)."""
    missing = []
    for image in BASE_IMAGES:
        if engine.docker("image", "inspect", image, check=False).returncode == 0:
            continue
        if engine.docker("pull", "-q", image, check=False, timeout=600).returncode != 0:
            missing.append(image)
    if not missing:
        return []
    with Timer("debian_base_s"):
        _debian_base(engine)
    with Timer("standin_images_s"):
        builds = [
            subprocess.Popen(
                [
                    "docker",
                    "build",
                    "-q",
                    "--build-arg",
                    f"BASE={DEBIAN_BASE}",
                    "-t",
                    image,
                    "-f",
                    str(STANDINS / BASE_IMAGES[image]),
                    str(STANDINS),
                ],
                env=engine.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for image in missing
        ]
        for build, image in zip(builds, missing, strict=True):
            out, err = build.communicate(timeout=900)
            assert build.returncode == 0, f"stand-in {image}:\n{err[-3000:]}"
    return [*missing, DEBIAN_BASE]


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    began = time.monotonic()
    try:
        with Timer("engine_start_s"):
            engine = start_engine(tmp_path_factory.mktemp("engine"))
    except EngineUnavailable as exc:
        pytest.skip(f"no container engine can run here: {exc}")
    created: list[str] = []
    try:
        created = _base_images(engine)
        yield engine
    finally:
        if not engine.started_here:  # an engine of the user's: remove what the test made
            for image in [*created, IMAGE]:
                engine.docker("rmi", "-f", image, check=False)
        problems = engine.stop()
        TIMINGS["module_wall_s"] = round(time.monotonic() - began, 1)
        print(f"\ncompose test timings: {json.dumps(TIMINGS)}")
        assert not problems, f"the host was not put back as it was: {problems}"


# -- projects -------------------------------------------------------------------------------
class Project:
    """A copy of this checkout, set up as the README says, and compose in it."""

    def __init__(self, engine: Engine, directory: Path, settings: dict[str, str], owner: int) -> None:
        self.engine, self.dir, self.owner = engine, directory, owner
        files = (
            subprocess.run(
                ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                cwd=ROOT,
                capture_output=True,
                check=True,
            )
            .stdout.decode()
            .split("\0")
        )
        for name in filter(None, files):
            if (ROOT / name).is_file():
                (directory / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, directory / name)
        # cp .env.example .env, then set your own password (and the settings a copy needs)
        self.settings = {"BDI_RL_XMPP_PASSWORD": f"test-{os.urandom(6).hex()}", **settings}
        self.write_env()
        (directory / "runs").mkdir()  # mkdir -p runs
        if owner != os.geteuid():  # a normal user's checkout (the test runs as root)
            subprocess.run(["chown", "-R", f"{owner}:{owner}", str(directory)], check=True)

    @property
    def name(self) -> str:
        return self.settings["COMPOSE_PROJECT_NAME"]

    def write_env(self, **changes: str) -> None:
        self.settings.update(changes)
        lines, seen = [], set()
        for line in (self.dir / ".env.example").read_text().splitlines():
            key = line.partition("=")[0].strip("# ")
            if key in self.settings and "=" in line and " " not in key:
                if key not in seen:
                    lines.append(f"{key}={self.settings[key]}")
                    seen.add(key)
                continue
            lines.append(line)
        lines += [f"{key}={value}" for key, value in self.settings.items() if key not in seen]
        (self.dir / ".env").write_text("\n".join(lines) + "\n")

    def compose(self, *args: str, timeout: float = 900, check: bool = True) -> subprocess.CompletedProcess:
        return self.engine.docker("compose", *args, cwd=self.dir, timeout=timeout, check=check)

    def containers(self) -> dict[str, dict]:
        """Every container of the project, by name: its service, state and exit code."""
        out = self.compose("ps", "-a", "--format", "json").stdout.strip()
        rows = json.loads(out) if out.startswith("[") else [json.loads(line) for line in out.splitlines() if line]
        return {row["Name"]: row for row in rows}

    def wait_for_telemetry(self) -> int:
        """`docker compose wait telemetry` (the README's way to know a run ended): its exit
        status, which must be telemetry's."""
        waited = self.compose("wait", "telemetry", check=False, timeout=900)
        telemetry = [c for c in self.containers().values() if c["Service"] == "telemetry"]
        assert len(telemetry) == 1 and telemetry[0]["State"] == "exited", telemetry
        if "no containers" not in waited.stderr:  # (telemetry had ended before `wait` began)
            assert waited.returncode == telemetry[0]["ExitCode"], (waited.stdout, waited.stderr)
        return int(telemetry[0]["ExitCode"])

    def run_dirs(self) -> list[Path]:
        return sorted((p for p in (self.dir / "runs").iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)

    def logs(self) -> str:
        return self.compose("logs", "--no-color", check=False).stdout[-6000:]


def _free_subnet(engine: Engine, preferred: str, taken_too: tuple[str, ...] = ()) -> str:
    """``preferred`` unless a network of the engine (or ``taken_too``) overlaps it."""
    import ipaddress

    ids = engine.docker("network", "ls", "-q").stdout.split()
    taken = [ipaddress.ip_network(s) for s in taken_too]
    for info in json.loads(engine.docker("network", "inspect", *ids).stdout):
        for config in (info.get("IPAM") or {}).get("Config") or []:
            if config.get("Subnet"):
                taken.append(ipaddress.ip_network(config["Subnet"], strict=False))
    candidates = [preferred, *(f"172.{n}.0.0/16" for n in range(29, 32)), *(f"10.{n}.0.0/16" for n in range(210, 220))]
    for candidate in candidates:
        net = ipaddress.ip_network(candidate)
        if not any(net.overlaps(other) for other in taken if other.version == net.version):
            return candidate
    raise AssertionError("no free subnet for a compose network")


def _settings(engine: Engine, letter: str, subnet: str) -> dict[str, str]:
    return {
        "COMPOSE_PROJECT_NAME": f"bdirltest{TAG}{letter}",
        "BDI_RL_IMAGE": IMAGE,
        "BDI_RL_XMPP_PORT": str(free_port()),
        "BDI_RL_VIEW_PORT": str(free_port()),
        "BDI_RL_SUBNET": _free_subnet(engine, subnet),
    }


def _wheelhouse(project: Project) -> None:
    """compose/download-wheels.sh (cached by pyproject.toml's dependencies)."""
    pyproject = (ROOT / "pyproject.toml").read_bytes()
    key = hashlib.sha256(pyproject.split(b"[project.optional-dependencies]")[0]).hexdigest()[:16]
    cached = CACHE / f"wheels-{platform.machine()}-{key}"
    target = project.dir / "compose" / "wheels"
    if not cached.is_dir():
        done = subprocess.run(
            ["sh", "compose/download-wheels.sh"],
            cwd=project.dir,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHON": sys.executable},
            timeout=900,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        CACHE.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix="wheels-", dir=CACHE))
        for wheel in target.glob("*.whl"):
            shutil.copy2(wheel, partial)
        partial.rename(cached)
    else:
        for wheel in cached.glob("*.whl"):
            shutil.copy2(wheel, target)


def _trace_checks(run_dir: Path, agents: list[str]) -> list[dict]:
    """Every agent stopped in the trace, and every event it emitted is there once: its seqs
    are 0..emitted-1 without a gap (``emitted``: its own count, in its ``agent.stop``)."""
    events = read_trace(run_dir / "trace.jsonl")
    for name in agents:
        jid = f"{name}@xmpp"
        seqs = line_seqs(events, jid)
        assert seqs == list(range(len(seqs))), f"{jid}: a gap in its seqs"
        stops = [e for e in events if e["agent"] == jid and e["kind"] == "agent.stop"]
        assert len(stops) == 1, f"{jid}: {len(stops)} agent.stop events"
        emitted = stops[0]["data"]["emitted"]
        assert emitted == len(seqs), f"{jid}: emitted {emitted}, traced {len(seqs)}"
    return events


def _owners(run_dir: Path) -> set[int]:
    return {p.stat().st_uid for p in [run_dir, *run_dir.rglob("*")]}


def _viewer_runs(project: Project) -> dict[str, dict]:
    port = project.settings["BDI_RL_VIEW_PORT"]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/runs", timeout=10) as answer:
        return {row["run"]: row for row in json.loads(answer.read())["runs"]}


@pytest.fixture(scope="module")
def first(engine, tmp_path_factory):
    """The first copy, as root: built, then a short team run to its end."""
    volumes_before = set(engine.docker("volume", "ls", "-q").stdout.split())
    project = Project(
        engine, tmp_path_factory.mktemp("bdi-rl"), _settings(engine, "a", "172.28.0.0/16"), owner=os.geteuid()
    )
    project.volumes_before = volumes_before
    try:
        with Timer("wheelhouse_s"):
            _wheelhouse(project)
        with Timer("image_build_s"):
            project.compose("build")
        # A spec the image never saw: it reaches the containers through the read-only mount.
        (project.dir / "agents" / "compose-team.toml").write_text(SHORT_TEAM)
        project.write_env(SPEC="agents/compose-team.toml")
        with Timer("team_run_s"):
            project.compose("up", "-d", "--scale", "learner=4")
            project.telemetry_status = project.wait_for_telemetry()
        yield project
    finally:
        project.compose("down", "-v", "--remove-orphans", check=False)


def test_a_team_run_completes_and_the_viewer_lists_it(first):
    assert first.telemetry_status == 0, first.logs()
    containers = first.containers()
    agents = {c["Name"]: c for c in containers.values() if c["Service"] in ("coordinator", "learner")}
    assert len(agents) == 5 and all(c["ExitCode"] == 0 for c in agents.values()), agents
    [run_dir] = first.run_dirs()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert not summary.get("interrupted") and summary["experiment"] == "compose-team"
    learners = [f"learner-{i}" for i in range(1, 5)]
    assert set(summary["agents"]) == {"coordinator", *learners}
    for name in learners:
        entry = summary["agents"][name]
        assert "failure" not in entry and entry["episodes"] == 300 and entry["eval"]["episodes"] == 100
        assert (run_dir / "qtables" / f"{name}.npz").is_file()
    _trace_checks(run_dir, ["coordinator", *learners])
    assert _owners(run_dir) == {os.geteuid()}  # whoever made runs/ (root in CI) owns the run
    row = _viewer_runs(first)[run_dir.name]
    assert row["state"] == "finished" and not row["live"]
    running = {c["Service"] for c in containers.values() if c["State"] == "running"}
    assert running == {"xmpp", "viewer"}  # the rest have exited: the run is over


def test_a_second_copy_beside_it_is_stopped_midway_keeping_everything(engine, first, tmp_path_factory):
    """A normal user's copy (its runs/ is uid 4242's), its own name, ports and subnet, beside
    the first (whose server and viewer still run); `docker compose stop` mid-run."""
    assert {c["Service"] for c in first.containers().values() if c["State"] == "running"} == {"xmpp", "viewer"}
    owner = NORMAL_USER if os.geteuid() == 0 else os.geteuid()
    project = Project(engine, tmp_path_factory.mktemp("bdi-rl"), _settings(engine, "b", "172.29.0.0/16"), owner)
    try:
        project.compose("up", "-d")  # the default spec: the whole team, minutes of learning
        run_dir = _wait_for_every_agent(project, ["coordinator", *(f"learner-{i}" for i in range(1, 5))])
        events = subprocess.Popen(
            [
                "docker",
                "events",
                "--format",
                "{{json .}}",
                "--filter",
                "type=container",
                "--filter",
                f"label=com.docker.compose.project={project.name}",
            ],
            env=engine.env,
            stdout=subprocess.PIPE,
            text=True,
        )
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(events.stdout), daemon=True)
        reader.start()
        time.sleep(1)  # the events stream is attached
        with Timer("compose_stop_s"):
            project.compose("stop")
        events.terminate()
        events.wait(timeout=10)
        reader.join(timeout=10)
        containers = project.containers()
        by_service = {}
        for c in containers.values():
            by_service.setdefault(c["Service"], []).append(c["ExitCode"])
        assert by_service["telemetry"] == [130], project.logs()
        assert len(by_service["learner"]) == 4 and set(by_service["learner"] + by_service["coordinator"]) <= {0, 130}
        TIMINGS["agent_shutdown_s"] = _shutdown_times(lines)
        assert TIMINGS["agent_shutdown_s"], "no kill/die events seen"
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["interrupted"] is True
        assert {e.get("failure") for e in summary["agents"].values()} == {"interrupted"}
        _trace_checks(run_dir, list(summary["agents"]))
        assert _owners(run_dir) == {owner}  # a normal user's runs/: that user's files
        assert _viewer_runs(first)  # the first copy's viewer still answers beside it
    finally:
        project.compose("down", "-v", check=False)
    _assert_project_gone(engine, project)


def _wait_for_every_agent(project: Project, agents: list[str], timeout: float = 300) -> Path:
    """The run directory once each agent has traced a few lines (so the stop is mid-run)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = [run for run in project.run_dirs() if not (run / "summary.json").exists()]
        trace = runs[-1] / "trace.jsonl" if runs else None
        if trace is not None and trace.is_file():
            counts = {name: 0 for name in agents}
            with trace.open("rb") as f:
                for line in f:
                    if not line.endswith(b"\n"):  # the line telemetry is appending right now
                        break
                    agent = json.loads(line).get("agent", "").split("@", 1)[0]
                    if agent in counts:
                        counts[agent] += 1
            if min(counts.values()) >= 5:
                assert not (runs[-1] / "summary.json").exists(), "the run ended before it could be stopped"
                return runs[-1]
        time.sleep(1)
    raise AssertionError(f"not every agent traced within {timeout} s:\n{project.logs()}")


def _shutdown_times(lines: list[str]) -> dict[str, float]:
    """Seconds from SIGTERM (a `kill` event with signal 15) to exit (`die`), per container."""
    killed, died = {}, {}
    for line in lines:
        event = json.loads(line)
        name = event["Actor"]["Attributes"]["name"]
        if event["Action"] == "kill" and event["Actor"]["Attributes"].get("signal") == "15":
            killed.setdefault(name, event["timeNano"])
        elif event["Action"] == "die":
            died[name] = event["timeNano"]
    return {name: round((died[name] - killed[name]) / 1e9, 2) for name in sorted(killed) if name in died}


def test_the_world_profile_runs_the_climbing_game(first):
    first.write_env(
        SPEC="agents/climbing.toml", LEARNER_GROUP="player", LEARNERS="2", COORDINATORS="0", COMPOSE_PROFILES="world"
    )
    with Timer("world_run_s"):
        first.compose("up", "-d")
        status = first.wait_for_telemetry()
    assert status == 0, first.logs()
    run_dir = next(p for p in reversed(first.run_dirs()) if "__climbing__" in p.name)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert set(summary["agents"]) == {"world", "player-1", "player-2"}
    assert not any("failure" in entry for entry in summary["agents"].values()), summary
    _trace_checks(run_dir, ["world", "player-1", "player-2"])
    services = {c["Service"]: c["ExitCode"] for c in first.containers().values() if c["Service"] != "xmpp"}
    assert "coordinator" not in services and services["world"] == 0


def test_down_leaves_nothing_behind(engine, first):
    first.compose("down", "-v")
    _assert_project_gone(engine, first)
    assert set(engine.docker("volume", "ls", "-q").stdout.split()) <= first.volumes_before  # none anonymous


def _assert_project_gone(engine: Engine, project: Project) -> None:
    label = f"label=com.docker.compose.project={project.name}"
    for kind in (["ps", "-a", "-q"], ["network", "ls", "-q"], ["volume", "ls", "-q"]):
        assert not engine.docker(*kind, "--filter", label).stdout.split(), f"{kind[0]} left by {project.name}"

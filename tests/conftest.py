"""Shared fixtures: paths of the shipped specs and plans, and a runner of the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ROOT / "agents"
ASL = ROOT / "asl"


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``python -m bdi_rl ARGS`` as a user would (a real process, real servers)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-m", "bdi_rl", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def ejabberd():
    """A private Debian ejabberd configured by compose/ejabberd.yml (started once per session)."""
    from tests.ejabberd import remove, start_ejabberd

    server = start_ejabberd()
    yield server
    remove(server)


@pytest.fixture
def write_spec(tmp_path: Path):
    """Write a spec file from TOML text; returns its path."""

    def write(text: str, name: str = "spec.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


MINIMAL_SPEC = """
name = "tiny"
episodes = 20
eval_episodes = 10
seed = 3

[env]
id = "FrozenLake-v1"
kwargs = { map_name = "4x4", is_slippery = false }

[[agents]]
name = "learner"
"""

"""Bad input to ``bdi-rl run``: one line on stderr, exit status 2, nothing under runs/."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import MINIMAL_SPEC, run_cli

AGENT = '[[agents]]\nname = "learner"\n'


def _spec_with(text: str, agent: str = AGENT) -> str:
    return MINIMAL_SPEC.replace(AGENT, agent) + text


CASES = {
    "malformed asl": ("!start.\n+!start <- .rl_reset\n+!x <- true.\n", _spec_with("", AGENT + 'asl = "bad.asl"\n'), "bad.asl:3:"),
    "unknown internal action": ("!start.\n+!start <- .rl_teleport(3).\n", _spec_with("", AGENT + 'asl = "bad.asl"\n'), "unknown internal action"),
    "unknown env id": (None, MINIMAL_SPEC.replace('"FrozenLake-v1"', '"FrozenPond-v9"'), "FrozenPond-v9"),
    "non-Discrete env": (None, MINIMAL_SPEC.replace('"FrozenLake-v1"', '"CartPole-v1"').replace('kwargs = { map_name = "4x4", is_slippery = false }', ""), "Discrete"),
    "bad env kwargs": (None, MINIMAL_SPEC.replace("is_slippery = false", "slipperiness = 2"), "FrozenLake-v1"),
    "unknown spec key": (None, "episodez = 4\n" + MINIMAL_SPEC, "episodez: unknown key"),
    "wrong type": (None, MINIMAL_SPEC.replace("seed = 3", 'seed = "three"'), "seed: expected an integer"),
    "missing asl file": (None, _spec_with("", AGENT + 'asl = "nowhere.asl"\n'), "agents[0].asl: no such plan file"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_one_clear_line(tmp_path: Path, case: str):
    asl, spec_text, expected = CASES[case]
    if asl is not None:
        (tmp_path / "bad.asl").write_text(asl)
    spec = tmp_path / "spec.toml"
    spec.write_text(spec_text)
    runs = tmp_path / "runs"
    result = run_cli("run", str(spec), "--runs", str(runs))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bdi-rl: error:"), result.stderr
    assert expected in lines[0]
    assert "Traceback" not in result.stderr
    assert not runs.exists() or not any(runs.iterdir())


def test_missing_spec_file(tmp_path: Path):
    result = run_cli("run", str(tmp_path / "absent.toml"), "--runs", str(tmp_path / "runs"))
    assert result.returncode == 2
    assert result.stderr.strip() == f"bdi-rl: error: {tmp_path / 'absent.toml'}: no such spec file"
    assert not (tmp_path / "runs").exists()


def test_shipped_spec_by_name_and_module_entry(tmp_path: Path):
    """``python -m bdi_rl`` works like the script, and a shipped spec is found by name."""
    result = run_cli("run", "frozenlake-4x4", "--episodes", "5", "--runs", str(tmp_path / "runs"),
                     "--no-progress")
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip().splitlines()[-1]).parent == tmp_path / "runs"

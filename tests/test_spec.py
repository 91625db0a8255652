"""Spec loading: strict keys and types, errors that name the key, sane resolution."""

from __future__ import annotations

from pathlib import Path

import pytest

from bdi_rl.spec import SpecError, load_spec
from tests.conftest import AGENTS, MINIMAL_SPEC, run_main


def test_minimal_spec_gets_defaults(write_spec):
    spec = load_spec(write_spec(MINIMAL_SPEC))
    assert spec.episodes == 20 and spec.seed == 3 and spec.trace == "step"
    assert spec.xmpp.server == "embedded" and spec.viewer.host == "127.0.0.1"
    group = spec.agents[0]
    assert group.asl.endswith("asl/learner.asl") and group.mode == "step"
    assert spec.learning_for(group) == spec.learning


@pytest.mark.parametrize(
    "extra, key",
    [
        ("episodez = 3", "episodez: unknown key"),
        ('episodes = "many"', "episodes: expected an integer"),
        ("episodes = true", "episodes: expected an integer"),
        ('trace = "verbose"', "trace:"),
        ("episodes = 0", "episodes: expected an integer >= 1, got 0"),
        ("[learning]\ngamma = 1.5", "learning.gamma"),
        ('[learning]\nalpha = "fast"', "learning.alpha: expected a number"),
        ("[xmpp]\nserver = 'nowhere'", "xmpp.server"),
        ("[env.nope]\nx = 1", "env.nope: unknown key"),
    ],
)
def test_bad_values_name_the_key(write_spec, extra, key):
    if extra.startswith("["):  # a table goes after the top-level keys
        text = MINIMAL_SPEC + extra + "\n"
    else:  # a top-level key goes first, replacing the one it redefines
        key_name = extra.split("=")[0].strip()
        kept = [line for line in MINIMAL_SPEC.splitlines() if not line.startswith(key_name + " ")]
        text = extra + "\n" + "\n".join(kept) + "\n"
    with pytest.raises(SpecError) as err:
        load_spec(write_spec(text))
    message = str(err.value)
    assert key in message and "spec.toml" in message and "\n" not in message


@pytest.mark.parametrize(
    "group, key",
    [
        ('name = "learner"\nmode = "turbo"', "agents[0].mode: must be one of"),
        ('name = "learner"\ncount = 0', "agents[0].count"),
        ('name = "Learner"', "agents[0].name"),
        ('name = "learner"\nasl = "missing.asl"', "agents[0].asl: no such plan file"),
        ('name = "learner"\nlearning = { gamma = -1 }', "agents[0].learning.gamma"),
        ('name = "learner"\nlearning = { alpah = 0.1 }', "agents[0].learning.alpah: unknown key"),
        ('name = "learner"\ncolour = 1', "agents[0].colour: unknown key"),
        ('name = "learner"\nbeliefs = ["share_every(5"]', "agents[0].beliefs[0]: not an AgentSpeak literal"),
        ('name = "learner"\nbeliefs = ["ok", "n(X)"]', "agents[0].beliefs[1]: literal must be ground"),
        ('name = "learner"\nrole = "coordinator"', "at least one group needs role"),
    ],
)
def test_bad_groups_name_the_key(write_spec, group, key):
    text = MINIMAL_SPEC.replace('[[agents]]\nname = "learner"\n', f"[[agents]]\n{group}\n")
    with pytest.raises(SpecError, match=key.replace("[", r"\[").replace("]", r"\]")):
        load_spec(write_spec(text))


def test_duplicate_agent_names_are_refused(write_spec):
    text = MINIMAL_SPEC + '[[agents]]\nname = "learner"\n'
    with pytest.raises(SpecError, match="used twice"):
        load_spec(write_spec(text))


def test_group_names_expand_with_count(write_spec):
    text = MINIMAL_SPEC.replace('name = "learner"\n', 'name = "scout"\ncount = 3\n')
    spec = load_spec(write_spec(text))
    assert spec.agents[0].agent_names() == ["scout-1", "scout-2", "scout-3"]


def test_missing_and_invalid_files(tmp_path):
    with pytest.raises(SpecError, match="no such spec file"):
        load_spec(tmp_path / "absent.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("name = [unclosed")
    with pytest.raises(SpecError, match="broken.toml: not valid TOML"):
        load_spec(broken)


def test_cli_overrides_win(write_spec):
    spec = load_spec(write_spec(MINIMAL_SPEC), {"episodes": 7, "seed": None, "trace": "cycle"})
    assert spec.episodes == 7 and spec.seed == 3 and spec.trace == "cycle"


@pytest.mark.parametrize(
    "name", ["frozenlake-4x4", "frozenlake-8x8", "taxi", "cliffwalking", "frozenlake-team", "taxi-team"]
)
def test_shipped_specs_load(name):
    spec = load_spec(AGENTS / f"{name}.toml")
    assert spec.name == name
    assert spec.eval_episodes >= (1000 if "frozenlake" in name else 100)


def test_a_spec_name_that_is_not_shipped_lists_the_shipped_ones():
    """``bdi-rl run taxy``: one line naming every spec ``run`` takes by name, and nothing made."""
    result = run_main("run", "taxy", "--runs", "/nonexistent/runs")
    assert result.returncode == 2
    names = sorted(p.stem for p in AGENTS.glob("*.toml"))
    assert len(names) >= 5
    assert result.stderr.strip() == f"bdi-rl: error: taxy: no such spec file (shipped specs: {', '.join(names)})"


def test_version_is_the_installed_distributions():
    from importlib.metadata import version

    result = run_main("--version")
    assert result.returncode == 0 and result.stdout.startswith(f"bdi-rl {version('bdi-rl')} (runtime ")


def test_the_run_keeps_a_shipped_plan_by_its_name_and_finds_it_again(tmp_path, write_spec):
    """A run's spec.toml names a shipped plan file as ``learner.asl``, not by a path inside
    the installed package (which another install would not have); a user's own plan file
    keeps its absolute path. Both load back to the same files."""
    import tomli_w

    spec = load_spec(AGENTS / "frozenlake-4x4.toml")
    written = spec.to_dict()
    assert written["agents"][0]["asl"] == "learner.asl"
    shipped = Path(spec.agents[0].asl).parent
    own = tmp_path / "mine.asl"
    own.write_text((shipped / "learner.asl").read_text().replace('include("lib/', f'include("{shipped}/lib/'))
    mine = load_spec(write_spec(MINIMAL_SPEC.replace('name = "learner"', f'name = "learner"\nasl = "{own}"')))
    assert mine.to_dict()["agents"][0]["asl"] == str(own.resolve())
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "spec.toml").write_text(tomli_w.dumps(written))
    assert load_spec(run_dir / "spec.toml").agents[0].asl == spec.agents[0].asl

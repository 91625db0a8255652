"""Property-based tests (hypothesis) of the spec loader, as test_fuzz.py does for the decoders:
whatever a spec file holds, loading it gives a spec or one SpecError line naming the file
and the key, never another exception; and a spec that loads is one that can be planned."""

from __future__ import annotations

import tomllib
from pathlib import Path

import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bdi_rl.spec import ExperimentSpec, SpecError, load_spec, parse_spec
from tests.fuzzing import examples

FUZZ = settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])

VALID: dict = tomllib.loads("""
name = "fuzz"
episodes = 5
seed = 1
[env]
id = "FrozenLake-v1"
kwargs = { map_name = "4x4" }
[learning]
alpha = 0.2
[[agents]]
name = "learner"
count = 2
[xmpp]
port = 5222
[telemetry]
flush_seconds = 0.2
[viewer]
port = 8765
""")

#: every key a spec knows, and a few it does not
KEYS = [
    "name",
    "episodes",
    "seed",
    "trace",
    "eval_episodes",
    "checkpoint_every",
    "env",
    "id",
    "kwargs",
    "max_episode_steps",
    "goals",
    "goal_every",
    "agents",
    "count",
    "asl",
    "role",
    "mode",
    "learning",
    "beliefs",
    "warm_start",
    "warm_epsilon",
    "alpha",
    "alpha_min",
    "alpha_decay",
    "gamma",
    "epsilon_start",
    "epsilon_end",
    "epsilon_decay_episodes",
    "q_init",
    "xmpp",
    "server",
    "domain",
    "port",
    "trust",
    "telemetry",
    "flush_seconds",
    "viewer",
    "enabled",
    "host",
    "nope",
    "",
]

scalars = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.booleans(),
    st.text(max_size=30),
    st.sampled_from(
        [
            "learner",
            "step",
            "episode",
            "cycle",
            "coordinator",
            "embedded",
            "localhost:5222",
            "FrozenLake-v1",
            "léa",
            "x" * 300,
        ]
    ),
    st.dates(),
    st.datetimes(),
    st.times(),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
    max_leaves=12,
)


def _paths(table: dict, prefix: tuple = ()) -> list[tuple]:
    found = []
    for key, value in table.items():
        found.append(prefix + (key,))
        if isinstance(value, dict):
            found += _paths(value, prefix + (key,))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    found += _paths(item, prefix + (key, i))
    return found


def _answers(data: dict) -> None:
    try:
        spec = parse_spec(data)
    except SpecError as exc:
        message = str(exc)
        assert message and "\n" not in message
        return
    assert isinstance(spec, ExperimentSpec)
    assert 0 <= spec.seed and all(g.count >= 1 for g in spec.agents)


@FUZZ
@given(st.dictionaries(st.sampled_from(KEYS), values, max_size=8))
def test_any_table_is_a_spec_or_one_line(data):
    _answers(data)


@FUZZ
@given(st.data())
def test_a_valid_spec_with_one_value_changed_is_a_spec_or_one_line(data):
    spec = tomllib.loads(tomli_w.dumps(VALID))
    path = data.draw(st.sampled_from(_paths(spec)))
    *parents, last = path
    table = spec
    for step in parents:
        table = table[step]
    if data.draw(st.booleans()):
        table[last] = data.draw(values)
    else:
        del table[last]
    _answers(spec)


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    st.one_of(
        st.binary(max_size=400),
        st.text(max_size=400).map(str.encode),
        st.just(("x = " + "[" * 3000 + "]" * 3000).encode()),
    )
)
def test_any_file_is_a_spec_or_one_line(tmp_path, content):
    path = tmp_path / "spec.toml"
    path.write_bytes(content)
    try:
        load_spec(path)
    except SpecError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)


def test_the_valid_base_spec_loads(tmp_path):
    (tmp_path / "spec.toml").write_text(tomli_w.dumps(VALID))
    spec = load_spec(tmp_path / "spec.toml")
    assert spec.agents[0].agent_names() == ["learner-1", "learner-2"]
    assert Path(spec.agents[0].asl).name == "learner.asl"

"""The internal actions: the one bridge between plans and the Q-learner."""

from __future__ import annotations

import operator

import numpy as np
import pytest

from bdi_rl.bdi.actions import EXPERIENCE_CHARS, ActionArgError, RlBridge
from bdi_rl.bdi.checkpointing import CheckpointSchedule
from bdi_rl.bdi.episode import EpisodeSession, Percepts
from bdi_rl.bdi.mind import belief_texts, load_mind
from bdi_rl.bdi.policycache import PolicyCache
from bdi_rl.bdi.runtime import Actions
from bdi_rl.rl.envs import make_env
from bdi_rl.rl.qlearning import LearningConfig, QLearner
from bdi_rl.trace.kinds import TraceLevel
from bdi_rl.trace.reading import read_trace
from bdi_rl.trace.steps import expanded
from bdi_rl.trace.tracer import Tracer


def build_bridge(env, learner, tracer, qtable_path, *, episodes, eval_episodes, seed=0, on_finish=lambda: None):
    """A learner's actions as the runner builds them (no policy file, checkpoints written at once)."""
    session = EpisodeSession(
        env, learner, tracer, Percepts(), episodes=episodes, eval_episodes=eval_episodes, seed=seed
    )
    return RlBridge(
        session, CheckpointSchedule(session, qtable_path, {}), PolicyCache(session, None, None, "a"), on_finish
    )


def _run(mind, cycles=10_000):
    mind.run(max_cycles=cycles)


def test_rl_actions_drive_a_learner_from_plans(tmp_path):
    """The internal actions bridge plans and learner: percepts, choose/act, perceive again."""
    env = make_env("FrozenLake-v1", {"map_name": "4x4", "is_slippery": False})
    learner = QLearner(env.n_states, env.n_actions, LearningConfig(), seed=0)
    tracer = Tracer("run", "a@localhost", TraceLevel.STEP)
    finished = []
    bridge = build_bridge(
        env, learner, tracer, tmp_path / "q.npz", episodes=1, eval_episodes=5, on_finish=lambda: finished.append(1)
    )
    actions = Actions()
    bridge.register(actions)
    path = tmp_path / "plans.asl"
    path.write_text("""
!go.
@go +!go <- .rl_reset; -state(_)[source(percept)]; .rl_perceive;
            ?state(S); .rl_choose(S, A); .rl_act(A); .rl_evaluate; .rl_save_qtable; .rl_finish.
""")
    bridge.session.percepts.mind = mind = load_mind(path, actions, "a", tracer)
    _run(mind)
    assert not mind.host.failures and finished == [1]
    texts = belief_texts(mind)
    assert any(t.startswith("state(") for t in texts) and any(t.startswith("pos(") for t in texts)
    assert any(t.startswith("eval(") for t in texts)
    assert (tmp_path / "q.npz").is_file() and learner.env_steps == 1
    tracer.flush_record()
    kinds = [e["kind"] for e in expanded(tracer.pending)]
    assert {"rl.step", "eval", "qtable.save", "action"} <= set(kinds)
    assert {e["kind"] for e in tracer.pending} >= {"steps", "eval", "qtable.save"}  # format 2: step records


def _bridge(tmp_path, env_kwargs=None, seed=0, config=None):
    env = make_env("FrozenLake-v1", env_kwargs or {"map_name": "4x4", "is_slippery": True})
    learner = QLearner(env.n_states, env.n_actions, config or LearningConfig(), seed=seed)
    return build_bridge(
        env,
        learner,
        Tracer("run", f"a{seed}@localhost", TraceLevel.EPISODE),
        tmp_path / f"{seed}.npz",
        episodes=100,
        eval_episodes=1,
        seed=seed,
    )


class _Mind:
    """Stands in for the mind only as a sink for percepts (the bridge's one use of it)."""

    def replace_percept(self, functor, args):
        pass

    def drop_percepts(self, functor, arity):
        pass


def test_shared_experience_teaches_a_teammate_exactly_what_the_sharer_saw(tmp_path):
    """Replaying a teammate's transitions gives the same Q-updates as living them."""
    sharer, receiver, twin = _bridge(tmp_path, seed=1), _bridge(tmp_path, seed=2), _bridge(tmp_path, seed=3)
    for bridge in (sharer, receiver, twin):
        bridge.session.percepts.mind = _Mind()
    sharer.team.record_experience()
    seen = []
    for _ in range(300):
        sharer.session.run_episode()
    batches = sharer.team.take_experience()
    assert sharer.team.take_experience() == ()  # taken once
    assert all(len(b) <= EXPERIENCE_CHARS for b in batches) and len(batches) > 1
    for batch in batches:
        receiver.team.replay(batch)
        for item in batch.split(";"):
            s, a, r, s2, done = item.split(",")
            seen.append((int(s), int(a), float(r), int(s2), done == "1"))
    assert len(seen) == sharer.stats.env_steps == receiver.stats.replayed_steps
    assert receiver.session.learner.env_steps == 0 and receiver.stats.env_steps == 0
    for transition in seen:
        twin.session.learner.update(*transition)
    np.testing.assert_array_equal(receiver.session.learner.q, twin.session.learner.q)
    assert any(r == 1.0 for _, _, r, _, _ in seen)  # goals were reached and shared


@pytest.mark.parametrize(
    "text, message",
    [
        ("0,1,0", "malformed transition"),
        ("0,1,x,2,0", "malformed transition"),
        ("0,1,0,99,0", "outside this Q-table"),
        ("0,7,0,1,0", "outside this Q-table"),
    ],
)
def test_malformed_experience_is_refused_whole(tmp_path, text, message):
    bridge = _bridge(tmp_path)
    before = bridge.session.learner.q.copy()
    with pytest.raises(ValueError, match=message):
        bridge.team.replay("1,2,0,5,0;" + text)
    np.testing.assert_array_equal(bridge.session.learner.q, before)  # not half-applied


def test_a_hazard_caps_the_moves_that_may_land_on_it(tmp_path):
    """FrozenLake 4x4 has a hole at (1, 1); slippery moves reach it with probability 1/3."""
    bridge = _bridge(tmp_path, config=LearningConfig(q_init=1.0))
    q = bridge.session.learner.q
    bridge.team.hazard(1, 1)
    hole = bridge.session.env.state_at(1, 1)
    risky = {(s, a) for s, a, _ in bridge.session.env.arrivals(hole)}
    assert (1, 1) in risky and (4, 2) in risky and (0, 1) not in risky  # DOWN from (1,0), RIGHT from (0,1)
    for s in range(q.shape[0]):
        for a in range(q.shape[1]):
            expected = 2 / 3 if (s, a) in risky else 1.0
            assert q[s, a] == pytest.approx(expected), (s, a)
    with pytest.raises(ValueError, match="not a cell"):
        bridge.team.hazard(9, 9)


def test_a_goal_raises_the_floor_of_the_moves_that_may_reach_it(tmp_path):
    bridge = _bridge(tmp_path)  # q_init 0
    goal = bridge.session.env.state_at(3, 3)
    bridge.team.goal(3, 3, 1.0)
    arrivals = bridge.session.env.arrivals(goal)
    assert arrivals
    for s, a, p in arrivals:
        assert bridge.session.learner.q[s, a] == pytest.approx(p)
    assert bridge.session.learner.q.sum() == pytest.approx(sum(p for *_, p in arrivals))


# -- every action refuses an argument outside its range, and the plan fails saying where --------


def _plan_bridge(tmp_path):
    """A bridge on real FrozenLake 4x4 (16 states, 4 actions) with a real mind on ``plans.asl``."""
    bridge = _bridge(tmp_path)
    actions = Actions()
    bridge.register(actions)
    return bridge, actions


REFUSED = {  # the plan body after .rl_reset -> what the failure says
    ".rl_choose(99, A)": ".rl_choose: state must be a whole number in 0..15, got 99",
    ".rl_choose(-1, A)": ".rl_choose: state must be a whole number in 0..15, got -1",
    ".rl_choose(2.5, A)": ".rl_choose: state must be a whole number in 0..15, got 2.5",
    '.rl_choose("3", A)': '.rl_choose: state must be a whole number in 0..15, got "3"',
    ".rl_choose(start, A)": ".rl_choose: state must be a whole number in 0..15, got start",
    ".rl_choose([1], A)": ".rl_choose: state must be a whole number in 0..15, got [1]",
    ".rl_act(7)": ".rl_act: action must be a whole number in 0..3, got 7",
    ".rl_act(-1)": ".rl_act: action must be a whole number in 0..3, got -1",
    ".rl_act(1.5)": ".rl_act: action must be a whole number in 0..3, got 1.5",
    ".rl_act(true)": ".rl_act: action must be a whole number in 0..3, got true",
    ".rl_set_epsilon(1.5)": ".rl_set_epsilon: epsilon must be a number in [0, 1], got 1.5",
    ".rl_set_epsilon(-0.1)": ".rl_set_epsilon: epsilon must be a number in [0, 1], got -0.1",
    '.rl_set_epsilon("0.5")': '.rl_set_epsilon: epsilon must be a number in [0, 1], got "0.5"',
    ".rl_hazard(4, 0)": ".rl_hazard: (4, 0) is not a cell of this env's grid (x in 0..3, y in 0..3)",
    ".rl_hazard(-1, 0)": ".rl_hazard: (-1, 0) is not a cell",
    ".rl_hazard(1.5, 1)": ".rl_hazard: (1.5, 1) is not a cell",
    ".rl_goal(3, 3, big)": ".rl_goal: the reward must be a finite number, got big",
    ".rl_goal(0, 9, 1)": ".rl_goal: (0, 9) is not a cell",
    '.rl_follow("1,9")': ".rl_follow: action out of range 0..3 in '1,9'",
    '.rl_follow("1,-1")': ".rl_follow: not an action sequence: '1,-1'",
    '.rl_follow(" 1")': ".rl_follow: not an action sequence: ' 1'",
    ".rl_follow([1, 2])": ".rl_follow: the action sequence must be a string, got [1, 2]",
    '.rl_plan_confidence("a", C)': ".rl_plan_confidence: not an action sequence: 'a'",
    '.rl_cache_policy(3, 3, "1,2", 1.5)': ".rl_cache_policy: the confidence must be a number in [0, 1], got 1.5",
    '.rl_cache_policy(7, 7, "1,2", 1)': ".rl_cache_policy: (7, 7) is not a cell",
    '.rl_cache_policy(3, 3, "1,x", 1)': ".rl_cache_policy: not an action sequence: '1,x'",
    ".rl_drop_policy(-1, 0)": ".rl_drop_policy: (-1, 0) is not a cell",
    '.rl_replay("1,2,nan,5,0")': ".rl_replay: experience: malformed transition '1,2,nan,5,0'",
    '.rl_replay("1,2,1e999,5,0")': ".rl_replay: experience: malformed transition '1,2,1e999,5,0'",
    '.rl_replay("1,2,0,5,0;0,-1,0,1,0")': ".rl_replay: experience: malformed transition '0,-1,0,1,0'",
    '.rl_replay("1,2,0,5,0;0,1,0,16,1")': ".rl_replay: experience: transition '0,1,0,16,1' is outside this Q-table",
    '.rl_replay("1,2,1_0,5,0")': ".rl_replay: experience: malformed transition '1,2,1_0,5,0'",
    ".rl_replay(42)": ".rl_replay: the experience must be a string, got 42",
    '.rl_adopt_policy("1,2", N)': ".rl_adopt_policy: the policy must give one action per state (16), got 2",
    '.rl_adopt_policy("0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,4", N)': ".rl_adopt_policy: action out of range 0..3",
    ".rl_adopt_policy(policy(1), N)": ".rl_adopt_policy: the policy must be a string, got policy(1)",
}


@pytest.mark.parametrize("call", sorted(REFUSED))
def test_an_argument_out_of_range_fails_the_plan_naming_the_line_and_changes_nothing(tmp_path, call):
    """Never a Python index (-1 the last row, 99 an IndexError), never a silent int(2.5):
    the action fails, the plan fails with the plan file's line, no Q-value changes."""
    bridge, actions = _plan_bridge(tmp_path)
    tracer = bridge.session.tracer
    path = tmp_path / "plans.asl"
    path.write_text(f"!go.\n+!go <- .rl_reset;\n    {call};\n    .rl_finish.\n")
    bridge.session.percepts.mind = mind = load_mind(path, actions, "a", tracer)
    before, steps = bridge.session.learner.q.copy(), bridge.session.learner.env_steps
    _run(mind)
    failures = mind.host.failures
    assert len(failures) == 1 and "\n" not in failures[0]
    assert failures[0].startswith(f"{path}:3: ") and REFUSED[call] in failures[0], failures[0]
    fails = [e for e in tracer.pending if e["kind"] == "intention.fail"]
    assert fails and REFUSED[call] in fails[0]["data"]["error"]
    np.testing.assert_array_equal(bridge.session.learner.q, before)
    assert bridge.session.learner.env_steps == steps and not bridge.policy_cache.policies


def test_numbers_written_in_a_plan_are_whole_numbers_where_they_must_be(tmp_path):
    """A whole number is a state or an action, written ``3`` (an int) or ``3.0`` (a float), as
    are the ints of percepts. The same actions with arguments in range work."""
    bridge, actions = _plan_bridge(tmp_path)
    path = tmp_path / "plans.asl"
    path.write_text("""
!go.
+!go <- .rl_reset; ?state(S); .rl_choose(S, A); .rl_choose(15.0, B); .rl_act(2); .rl_set_epsilon(0);
        .rl_set_epsilon(1); .rl_hazard(3, 0); .rl_goal(3, 3, 1); .rl_replay("0,1,0,4,0;14,2,1,15,1");
        .rl_adopt_policy("0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,3", N); +changed(N); .rl_finish.
""")
    bridge.session.percepts.mind = mind = load_mind(path, actions, "a", bridge.session.tracer)
    _run(mind)
    assert not mind.host.failures and bridge.session.learner.env_steps == 1 and bridge.stats.replayed_steps == 2
    assert list(bridge.session.learner.q.argmax(axis=1)) == [0, 1, 2, 3] * 4


@pytest.mark.parametrize(
    "method, args, message",
    [
        ("session.choose", (16,), "state must be a whole number in 0..15, got 16"),
        ("session.choose", (np.int64(-1),), "0..15, got np.int64(-1)"),
        ("session.choose", (float("nan"),), "got NaN"),
        ("session.act", (4,), "action must be a whole number in 0..3, got 4"),
        ("session.set_epsilon", (float("nan"),), "epsilon must be a number in [0, 1], got NaN"),
        ("team.goal", (3, 3, float("inf")), "the reward must be a finite number, got Infinity"),
        ("team.hazard", (True, 0), "(true, 0) is not a cell"),
    ],
)
def test_python_callers_get_the_same_refusal(tmp_path, method, args, message):
    bridge = _bridge(tmp_path)
    bridge.session.percepts.mind = _Mind()
    bridge.session.reset()
    before = bridge.session.learner.q.copy()
    with pytest.raises(ActionArgError) as error:
        operator.attrgetter(method)(bridge)(*args)
    assert message in str(error.value) and isinstance(error.value, ValueError)
    np.testing.assert_array_equal(bridge.session.learner.q, before)


def test_a_plan_choosing_in_a_state_the_env_lacks_fails_the_run_in_one_line(tmp_path):
    """Through ``bdi-rl run``: the learner's plan fails at once, the run exits 1 with one line
    naming the plan file and line, as for any failing plan."""
    from tests.conftest import MINIMAL_SPEC, run_cli

    (tmp_path / "bad.asl").write_text("!start.\n+!start <- .rl_reset;\n    .rl_choose(99, A); .rl_act(A).\n")
    agent = '[[agents]]\nname = "learner"\n'
    (tmp_path / "spec.toml").write_text(MINIMAL_SPEC.replace(agent, agent + 'asl = "bad.asl"\n'))
    result = run_cli("run", str(tmp_path / "spec.toml"), "--runs", str(tmp_path / "runs"), "--no-progress", timeout=120)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad.asl:3:" in lines[0], result.stderr
    assert ".rl_choose: state must be a whole number in 0..15, got 99" in lines[0]


def test_a_plan_that_lowers_epsilon_at_an_episodes_end_sees_the_next_episodes_use_it(tmp_path):
    """The natural use of .rl_set_epsilon (issue 26): a reaction to an episode's end lowers
    epsilon, and the later episodes use it. Set as the first episode ends (its outcome,
    before .rl_end_episode: once undone at once), the schedule goes on from the value at
    its own pace (0.95 / 1000 an episode); set to 0 after episode 20 (at or below
    epsilon_end), it stays."""
    from tests.conftest import MINIMAL_SPEC, ROOT, run_cli

    (tmp_path / "calm.asl").write_text(f"""
!start.
{{ include("{ROOT}/asl/lib/lifecycle.asl") }}
+!train <- while (not training_done) {{ !episode }}.
{{ include("{ROOT}/asl/lib/episode.asl") }}
@calm +outcome(_) : episode(0) <- .rl_set_epsilon(0.5).
@still +episodes_done(20) <- .rl_set_epsilon(0).
""")
    agent = '[[agents]]\nname = "learner"\n'
    spec = MINIMAL_SPEC.replace("episodes = 20", "episodes = 30").replace(agent, agent + 'asl = "calm.asl"\n')
    (tmp_path / "spec.toml").write_text(spec)
    result = run_cli(
        "run",
        str(tmp_path / "spec.toml"),
        "--runs",
        str(tmp_path / "runs"),
        "--no-progress",
        "--trace",
        "episode",
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    used = [
        e["data"]["epsilon"]
        for e in read_trace(next((tmp_path / "runs").glob("*/trace.jsonl")))
        if e["kind"] == "episode.end"
    ]
    assert used[:20] == pytest.approx([0.5 - 0.95 / 1000 * k for k in range(20)])
    assert used[20:] == [0.0] * 10

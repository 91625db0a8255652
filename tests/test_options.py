"""Learned option selection (issue 31): plans whose label says ``learned(...)`` are chosen by
the value the agent learned for each in its abstract state (SMDP Q-learning over the env steps
each chosen plan ran), with every choice and every value learned in the trace. A program
without the annotation selects as it always did (the Jason corpus holds that too)."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

from bdi_rl.bdi.actions import EXPERIENCE_CHARS, ActionArgError, RlBridge
from bdi_rl.bdi.checkpointing import CheckpointSchedule
from bdi_rl.bdi.episode import EpisodeSession, Percepts
from bdi_rl.bdi.mind import AslError, load_mind
from bdi_rl.bdi.policycache import PolicyCache
from bdi_rl.bdi.runtime import Actions
from bdi_rl.readers.explain import explain_choice
from bdi_rl.readers.viewer import create_app
from bdi_rl.rl.checkpoint import load_checkpoint
from bdi_rl.rl.envs import make_env
from bdi_rl.rl.options import OptionValues, PlanOutcome
from bdi_rl.rl.qlearning import LearningConfig, QLearner
from bdi_rl.trace.batch import decode_batch
from bdi_rl.trace.kinds import PLAN_CHOICE, PLAN_VALUE, TraceLevel
from bdi_rl.trace.reading import read_trace
from bdi_rl.trace.tracer import Tracer
from tests.conftest import ASL, run_cli

ROUTES = (ASL / "routes.asl").read_text()
START = "pos(0, 3)"


def _learner(
    tmp_path: Path, text: str, episodes: int, cycle: str = "jason", eval_episodes: int = 0
) -> tuple[RlBridge, object, Tracer, list[str]]:
    """``text`` as an agent's plans on CliffWalking, to be trained ``episodes`` episodes in
    this process with the real .rl_* actions, traced at step level: its actions, its mind (not
    yet run), its tracer, and who finished."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "plans.asl").write_text(text)
    env = make_env("CliffWalking-v1", {}, max_episode_steps=300)
    config = LearningConfig(alpha=0.2, gamma=1.0, epsilon_start=1.0, epsilon_end=0.0, epsilon_decay_episodes=150)
    learner = QLearner(env.n_states, env.n_actions, config, seed=1)
    tracer = Tracer("run", "learner@localhost", TraceLevel.STEP)
    session = EpisodeSession(env, learner, tracer, Percepts(), episodes=episodes, eval_episodes=eval_episodes, seed=1)
    finished: list[str] = []
    bridge = RlBridge(
        session,
        CheckpointSchedule(session, tmp_path / "learner.npz", {}),
        PolicyCache(session, None, None, "learner"),
        lambda: finished.append("learner"),
    )
    actions = Actions()
    bridge.register(actions)
    mind = load_mind(
        tmp_path / "plans.asl", actions, "learner", tracer, prepare=lambda m: bridge.start(m, "step"), cycle=cycle
    )
    return bridge, mind, tracer, finished


def _run(
    tmp_path: Path, text: str, episodes: int, cycle: str = "jason", eval_episodes: int = 0
) -> tuple[list[dict], list[float], object]:
    """``text`` trained as :func:`_learner` makes it: its events (checked as telemetry checks
    them), its returns, and its mind."""
    bridge, mind, tracer, finished = _learner(tmp_path, text, episodes, cycle, eval_episodes)
    mind.run()  # type: ignore[attr-defined]
    assert finished == ["learner"]
    tracer.flush_record()
    events = []
    while tracer.pending:
        count, body = tracer.next_batch()
        events.extend(decode_batch(body).events)  # every line as telemetry checks it
        tracer.ack(tracer.pending[count - 1]["seq"] + 1 if count else tracer.seq)
    return events, bridge.session.stats.returns, mind


@pytest.mark.parametrize("cycle", ["jason", "fast"])
def test_the_agent_comes_to_choose_the_route_that_pays_more(tmp_path: Path, cycle: str) -> None:
    """Hugging the cliff's edge pays -13 from the start, the high road -17: explored at first
    (epsilon 1), then chosen greedily by the values learned, which are the routes' returns."""
    events, returns, _ = _run(tmp_path, ROUTES, 250, cycle)
    choices = [e["data"] for e in events if e["kind"] == PLAN_CHOICE]
    assert len(choices) == 250  # one choice an episode: each route goes all the way
    assert {c["goal"] for c in choices} == {"+!cross"} and {c["state"] for c in choices} == {START}
    early = collections.Counter(c["chosen"] for c in choices[:60])
    assert early["hug_edge"] and early["high_road"] and sum(c["exploring"] for c in choices[:60]) > 30
    last = choices[-20:]
    assert all(c["chosen"] == "hug_edge" and not c["exploring"] for c in last)
    assert last[-1]["options"] == ["hug_edge", "high_road"]
    edge, high = last[-1]["values"]
    assert edge == pytest.approx(-13, abs=0.1) and high == pytest.approx(-17, abs=0.5)
    assert returns[-20:] == [-13.0] * 20


def test_every_chosen_plan_is_learned_from_when_it_ends(tmp_path: Path) -> None:
    """Each choice is followed by its value learned: the route's steps and discounted reward,
    the state it ended in, its value before and after (gamma 1: the return itself)."""
    events, _, _ = _run(tmp_path, ROUTES, 30)
    kinds = [e["kind"] for e in events if e["kind"] in (PLAN_CHOICE, PLAN_VALUE)]
    assert kinds == [PLAN_CHOICE, PLAN_VALUE] * 30
    values = [e["data"] for e in events if e["kind"] == PLAN_VALUE]
    for value in values:
        steps = 13 if value["plan"] == "hug_edge" else 17
        assert (value["outcome"], value["steps"], value["reward"], value["next_state"]) == (
            "achieved",
            steps,
            -steps,
            "pos(11, 3)",
        )
        assert value["after"] == pytest.approx(value["before"] + 0.2 * (-steps - value["before"]))


def test_without_the_annotation_the_first_applicable_plan_is_taken_as_before(tmp_path: Path) -> None:
    events, returns, mind = _run(tmp_path, ROUTES.replace("[learned(pos)]", ""), 20)
    assert mind.options is None
    assert not [e for e in events if e["kind"] in (PLAN_CHOICE, PLAN_VALUE)]
    assert returns == [-13.0] * 20  # hug_edge, the first, every time


def test_a_plan_that_fails_is_an_outcome_learned_from(tmp_path: Path) -> None:
    """A route that walks into the wall and gives up fails: it is learned as failed, with the
    step it took and the state it failed in (the goal goes on from there: its failure plan
    chooses again), so it comes to be worth a step less than the best route, and is dropped."""
    text = (
        ROUTES.replace(
            "@hug_edge[learned(pos)]",
            "@give_up[learned(pos)]\n+!cross <- .rl_act(3); .fail.\n\n@hug_edge[learned(pos)]",
        )
        + "\n@try_again\n-!cross <- !cross.\n"
    )
    events, returns, _ = _run(tmp_path, text, 200)
    values = [e["data"] for e in events if e["kind"] == PLAN_VALUE]
    failed = [v for v in values if v["outcome"] == "failed"]
    assert failed and all(v["plan"] == "give_up" for v in failed)
    assert all((v["steps"], v["reward"], v["next_state"]) == (1, -1, START) for v in failed)
    assert all(v["outcome"] == "achieved" for v in values if v["plan"] != "give_up")
    last = [e["data"] for e in events if e["kind"] == PLAN_CHOICE][-10:]
    assert all(c["chosen"] == "hug_edge" for c in last)
    give_up, edge, _high = last[-1]["values"]
    assert edge == pytest.approx(-13, abs=0.1) and give_up < edge
    assert returns[-10:] == [-13.0] * 10


@pytest.mark.parametrize(
    "annotation",
    ["learned(pos(1))", "learned(1)", 'learned("pos")', "learned(pos, state)", "learned([pos, 2])"],
)
def test_a_learned_annotation_of_another_shape_is_refused_naming_its_line(tmp_path: Path, annotation: str) -> None:
    (tmp_path / "bad.asl").write_text(f"!go.\n\n@a[{annotation}]\n+!go <- true.\n")
    with pytest.raises(AslError) as caught:
        load_mind(tmp_path / "bad.asl", Actions(), "bad")
    assert "bad.asl:3" in str(caught.value) and "learned annotation" in str(caught.value)


def test_a_plan_value_moves_towards_the_reward_and_the_best_value_where_it_ended() -> None:
    values = OptionValues(alpha=0.5, gamma=0.9)
    values.choose("+!g", "s2", ["a", "b"], 0.0, __import__("random").Random(0))
    values.table["+!g"] = {"s2": {"a": 10.0, "b": 4.0}}
    assert values.learn(PlanOutcome("+!g", "s1", "b", reward=-2.0, steps=2, next_state="s2", done=False)) == (
        0.0,
        pytest.approx(0.5 * (-2.0 + 0.81 * 10.0)),
    )
    assert values.learn(PlanOutcome("+!g", "s1", "a", reward=5.0, steps=1, next_state="s2", done=True)) == (0.0, 2.5)


# -- shared by a team, as experience is --------------------------------------------------------
def test_a_teammate_told_my_plan_runs_learns_my_plan_values_exactly(tmp_path: Path) -> None:
    """A team learner keeps its chosen plans' runs with its transitions (.rl_record_experience);
    .rl_experience gives them as batches of their own, each fit for one message, and a
    teammate's .rl_replay of them makes the same SMDP updates: its values become mine."""
    sharer, mind, _, _ = _learner(tmp_path / "sharer", ROUTES, 60)
    sharer.team.record_experience()
    mind.run()  # type: ignore[attr-defined]
    batches = sharer.team.take_experience()
    runs = [b for b in batches if b.startswith("plans:")]
    assert runs and all(len(b) <= EXPERIENCE_CHARS for b in batches)
    assert sharer.team.take_experience() == ()  # taken once
    receiver, _, _, _ = _learner(tmp_path / "receiver", ROUTES, 1)
    for batch in runs:
        receiver.team.replay(batch)
    mine = sharer.session.options
    theirs = receiver.session.options
    assert mine is not None and theirs is not None
    assert theirs.values.snapshot() == mine.values.snapshot() != {}
    assert receiver.session.stats.env_steps == 0  # told, not lived


#: A teacher: routes.asl that records its experience, and once trained tells it all to its teammates.
_TEACHER = ROUTES.replace(
    "+!start <- !train; !evaluate; .rl_save_qtable; .rl_finish.",
    "+!start <- .rl_record_experience; !train; !teach; .rl_save_qtable; .rl_finish.\n\n"
    "+!teach : teammates(Ts) <-\n"
    "    .rl_experience(Bs); .length(Bs, N);\n"
    "    for (.member(E, Bs)) { .send(Ts, tell, experience(E)) };\n"
    "    .send(Ts, tell, taught(N)).",
)
#: A student: the same routes, no training of its own; it learns what it is told, then
#: evaluates through the plans.
_STUDENT = ROUTES.replace("!start.\n", "replayed(0).\n").replace(
    "@start\n+!start <- !train; !evaluate; .rl_save_qtable; .rl_finish.",
    "@replay[atomic]  // counted in the body: every told batch's context reads the count before any runs\n"
    "+experience(E)[source(P)] : trusted(P) <-\n"
    "    .rl_replay(E); ?replayed(K); -+replayed(K + 1); -experience(E)[source(P)].\n\n"
    "+taught(N)[source(P)] : trusted(P) <- !after(N).\n"
    "+!after(N) : replayed(K) & K >= N <- !evaluate; .rl_save_qtable; .rl_finish.\n"
    "+!after(N) <- .wait(20); !after(N).",
)


def test_a_student_that_never_explored_takes_the_best_route_from_what_its_teammate_told_it(
    tmp_path: Path, write_spec
) -> None:
    """Two agents of one run over the embedded XMPP server: the teacher learns the routes'
    values and tells its experience (plan runs included) as team-learner.asl does; the
    student trains no episode, replays what it was told, and its greedy evaluation through
    the plans hugs the cliff's edge (-13)."""
    assert _TEACHER != ROUTES and "@replay[atomic]" in _STUDENT
    (tmp_path / "teacher.asl").write_text(_TEACHER)
    (tmp_path / "student.asl").write_text(_STUDENT)
    spec = write_spec(
        (ASL.parent / "agents" / "routes.toml")
        .read_text()
        .replace('name = "learner"\nasl = "routes.asl"', f'name = "teacher"\nasl = "{tmp_path / "teacher.asl"}"')
        + f'\n[[agents]]\nname = "student"\nasl = "{tmp_path / "student.asl"}"\nmode = "step"\nepisodes = 1\n'
    )
    # ~3 s; a student left waiting for batches it never counted would wait for ever
    result = run_cli("run", str(spec), "--runs", str(tmp_path / "runs"), "--no-progress", timeout=90)
    assert result.returncode == 0, result.stderr
    run = Path(result.stdout.strip().splitlines()[-1])
    agents = json.loads((run / "summary.json").read_text())["agents"]
    student = agents["student"]
    assert student["env_steps"] == student["episodes"] == 0
    assert student["eval"]["mean_return"] == -13.0
    told = [
        e["data"]["content"]
        for e in read_trace(run / "trace.jsonl")
        if e["kind"] == "msg.recv" and e["agent"].startswith("student@")
    ]
    assert any(content.startswith('experience("plans:') for content in told)
    values = load_checkpoint(run / "qtables" / "student.npz").plan_values
    assert values["+!cross"][START]["hug_edge"] > values["+!cross"][START]["high_road"]


@pytest.mark.parametrize(
    "batch, said",
    [
        (
            'plans:[["+!cross","pos(0, 3)","hug_edge",-13.0,13,"",true],["+!cross"]]',
            "plan runs: Expected `array` of length 7",
        ),
        ('plans:[["+!cross","pos(0, 3)","hug_edge",1e999,13,"",true]]', "plan runs: Number out of range"),
        ('plans:[["+!cross","pos(0, 3)","hug_edge",-13.0,-1,"",true]]', "plan runs: Expected `int` >= 0"),
        ('plans:[["+!cross","pos(0, 3)","hug_edge",-13.0,13,"","yes"]]', "plan runs: Expected `bool`"),
        ("plans:[[", "plan runs: Input data was truncated"),
    ],
)
def test_malformed_plan_runs_are_refused_whole(tmp_path: Path, batch: str, said: str) -> None:
    receiver, _, _, _ = _learner(tmp_path, ROUTES, 1)
    with pytest.raises(ActionArgError) as caught:
        receiver.team.replay(batch)
    assert str(caught.value).startswith(f".rl_replay: {said}")
    options = receiver.session.options
    assert options is not None and options.values.snapshot() == {}  # not half-applied


# -- "why this plan?" from the run's files: inspect and the viewer ------------------------------
@pytest.fixture(scope="module")
def routes_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped routes spec, as `bdi-rl run` runs it (its agent over the embedded server)."""
    runs = tmp_path_factory.mktemp("routes")
    result = run_cli("run", "routes", "--episodes", "40", "--runs", str(runs), "--no-progress")
    assert result.returncode == 0, result.stderr
    return Path(result.stdout.strip().splitlines()[-1])


def test_inspect_says_why_the_running_plan_was_chosen(routes_run: Path) -> None:
    result = run_cli("inspect", str(routes_run), "--agent", "learner", "--episode", "39", "--step", "5")
    assert result.returncode == 0, result.stderr
    out = " ".join(result.stdout.split())
    assert "why these plans (learned choices)" in out
    (chosen,) = [
        e["data"] for e in read_trace(routes_run / "trace.jsonl") if e["kind"] == PLAN_CHOICE and e["episode"] == 39
    ]
    assert explain_choice(chosen) in out
    assert f"chose @{chosen['chosen']} for +!cross in pos(0, 3): value " in out


async def test_the_viewer_shows_the_choice_beside_the_intention_it_started(aiohttp_client, routes_run: Path) -> None:
    client = await aiohttp_client(create_app(routes_run.parent))
    run = await (await client.get(f"/api/runs/{routes_run.name}")).json()
    assert run["agents"]["learner@localhost"]["events"] > 0
    mind = await (await client.get(f"/api/runs/{routes_run.name}/agents/learner/mind?episode=39&step=5")).json()
    plans = [i["plan"] for i in mind["intentions"]]
    (why,) = mind["plan_choices"]
    assert why["chosen"] in plans and why["goal"] == "+!cross" and why["state"] == START
    assert why["why"].startswith(f"chose @{why['chosen']} for +!cross in {START}: value ")
    kinds = await (await client.get("/api/kinds")).json()
    assert kinds["kinds"][PLAN_CHOICE]["view"] == "plan-choice" and kinds["kinds"][PLAN_VALUE]["view"] == "plan-value"


# -- plan values are kept with the Q-table: resumed and warm-started ------------------------
def test_the_checkpoint_keeps_the_plan_values_and_a_warm_start_goes_on_from_them(routes_run: Path) -> None:
    checkpoint = load_checkpoint(routes_run / "qtables" / "learner.npz")
    choices = [e["data"] for e in read_trace(routes_run / "trace.jsonl") if e["kind"] == PLAN_CHOICE]
    values = [e["data"] for e in read_trace(routes_run / "trace.jsonl") if e["kind"] == PLAN_VALUE]
    saved = checkpoint.plan_values["+!cross"][START]
    assert set(saved) == set(choices[-1]["options"])
    last = {v["plan"]: v["after"] for v in values}  # each plan's latest value learned
    assert saved == pytest.approx(last)
    warm = run_cli(
        "run", "routes", "--episodes", "3", "--warm-start", str(routes_run), "--runs", str(routes_run.parent)
    )
    assert warm.returncode == 0, warm.stderr
    run = Path(warm.stdout.strip().splitlines()[-1])
    first = next(e["data"] for e in read_trace(run / "trace.jsonl") if e["kind"] == PLAN_CHOICE)
    assert dict(zip(first["options"], first["values"], strict=True)) == pytest.approx(saved)


@pytest.mark.parametrize(
    "bad, said", [("NaN", "plan_values"), ('"high"', "plan_values"), ("1e400", "plan_values"), ("[1]", "plan_values")]
)
def test_a_checkpoint_whose_plan_values_are_not_numbers_is_refused_naming_them(
    routes_run: Path, tmp_path: Path, bad: str, said: str
) -> None:
    import io
    import json

    import numpy as np

    from bdi_rl.rl.checkpoint import CheckpointError

    with np.load(routes_run / "qtables" / "learner.npz") as npz:
        q, meta = npz["q"], json.loads(npz["meta"].tobytes())
    meta["plan_values"] = {"+!cross": {START: {"hug_edge": "@BAD@"}}}
    text = json.dumps(meta).replace('"@BAD@"', bad)
    buffer = io.BytesIO()
    np.savez(buffer, q=q, meta=np.frombuffer(text.encode(), dtype=np.uint8))
    path = tmp_path / "learner.npz"
    path.write_bytes(buffer.getvalue())
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path)
    assert str(path) in str(caught.value) and said in str(caught.value)


def test_a_resumed_learner_goes_on_from_its_own_values_before_any_warm_start(routes_run: Path, tmp_path: Path) -> None:
    """``run --resume`` puts the run's own checkpoint in ``resumed``: its values win over the
    warm start the run began from (which the resumed table has long moved on from)."""
    import dataclasses

    import msgspec

    from bdi_rl.bdi.checkpointing import CheckpointSchedule

    own = load_checkpoint(routes_run / "qtables" / "learner.npz")
    stale = dataclasses.replace(own, header=msgspec.structs.replace(own.header, plan_values={"+!cross": {}}))
    env = make_env("CliffWalking-v1", {}, max_episode_steps=300)
    learner = QLearner(env.n_states, env.n_actions, LearningConfig(), seed=1)
    session = EpisodeSession(
        env, learner, Tracer("r", "a@x", TraceLevel.EPISODE), Percepts(), episodes=1, eval_episodes=0, seed=1
    )
    path = tmp_path / "learner.npz"
    assert own.plan_values and stale.plan_values != own.plan_values
    assert CheckpointSchedule(session, path, {}, warm_start=stale, resumed=own).plan_values() == own.plan_values
    assert CheckpointSchedule(session, path, {}, warm_start=own).plan_values() == own.plan_values
    assert CheckpointSchedule(session, path, {}).plan_values() == {}


# -- a greedy evaluation through the plans ------------------------------------------------------
def test_an_evaluation_through_the_plans_plays_their_greedy_choices_and_learns_nothing(tmp_path: Path) -> None:
    events, returns, mind = _run(tmp_path, ROUTES, 200, eval_episodes=10)  # routes.asl: !evaluate after !train
    session = mind.options  # the chooser: learning again after the evaluation
    assert session is not None and session.learning
    (evaluation,) = [e for e in events if e["kind"] == "eval"]
    assert evaluation["data"]["episodes"] == 10 and evaluation["data"]["mean_return"] == -13.0
    assert evaluation["data"]["success_rate"] == 1.0 and evaluation["data"]["after_episodes"] == 200
    assert len(returns) == 200  # the evaluation's episodes are not training episodes
    kinds = [e["kind"] for e in events]
    choices = [k for k, kind in enumerate(kinds) if kind == PLAN_CHOICE]
    during = choices[-10:]  # the evaluation's: greedy, and no value learned from them
    assert all(not events[k]["data"]["exploring"] and events[k]["data"]["epsilon"] == 0.0 for k in during)
    assert all(events[k]["data"]["chosen"] == "hug_edge" for k in during)
    last_value = max(k for k, kind in enumerate(kinds) if kind == PLAN_VALUE)
    assert last_value < during[0] and during[-1] < kinds.index("eval")


@pytest.mark.parametrize(
    "body, said",
    [
        (".rl_begin_eval; .rl_begin_eval", ".rl_begin_eval: already evaluating"),
        (".rl_end_eval", ".rl_end_eval without .rl_begin_eval"),
        (".rl_reset; .rl_begin_eval", ".rl_begin_eval in the middle of an episode"),
        (".rl_begin_eval; .rl_end_eval", ".rl_end_eval: no episode was played"),
    ],
)
def test_an_evaluation_bracketed_wrongly_fails_the_plan_saying_why(tmp_path: Path, body: str, said: str) -> None:
    text = f"!go.\n+!go <- {body}; .rl_finish.\n-!go[error_msg(M)] <- .print(M); .rl_finish.\n"
    printed: list[str] = []
    (tmp_path / "plans.asl").write_text(text)
    env = make_env("CliffWalking-v1", {}, max_episode_steps=300)
    learner = QLearner(env.n_states, env.n_actions, LearningConfig(), seed=1)
    tracer = Tracer("run", "learner@localhost", TraceLevel.EPISODE)
    session = EpisodeSession(env, learner, tracer, Percepts(), episodes=1, eval_episodes=1, seed=1)
    bridge = RlBridge(
        session, CheckpointSchedule(session, tmp_path / "l.npz", {}), PolicyCache(session, None, None, "l")
    )
    actions = Actions()
    bridge.register(actions)
    mind = load_mind(tmp_path / "plans.asl", actions, "l", prepare=lambda m: bridge.start(m, "step"))
    mind.host.print = lambda agent, line: printed.append(line)  # what .print says, kept
    mind.run()
    assert any(said in line for line in printed), printed


async def test_the_run_gives_the_plan_values_over_training(aiohttp_client, routes_run: Path) -> None:
    """Each option's value where it was chosen among, by episode: the run page's chart."""
    client = await aiohttp_client(create_app(routes_run.parent))
    run = await (await client.get(f"/api/runs/{routes_run.name}")).json()
    series = run["agents"]["learner@localhost"]["plan_values"]
    assert {(s["goal"], s["state"], s["plan"]) for s in series} == {
        ("+!cross", START, "hug_edge"),
        ("+!cross", START, "high_road"),
    }
    choices = [e for e in read_trace(routes_run / "trace.jsonl") if e["kind"] == PLAN_CHOICE]
    for s in series:
        assert s["episodes"] == sorted({c["episode"] for c in choices})  # one point an episode
        last = next(c["data"] for c in reversed(choices) if c["episode"] == s["episodes"][-1])
        assert s["values"][-1] == last["values"][last["options"].index(s["plan"])]


def test_the_run_page_draws_the_plan_values_and_says_why_in_a_browser(browser, routes_run: Path) -> None:
    from tests.test_viewer_browser import Viewer

    viewer = Viewer(routes_run.parent)
    try:
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(f"{viewer.url}/run/{routes_run.name}")
        page.wait_for_selector("body[data-ready='1']")
        page.wait_for_function("() => Number(document.getElementById('chart-plan-values').dataset.traces) === 2")
        assert page.is_visible("#plan-values")
        mind = f"/api/runs/{routes_run.name}/agents/learner/mind?episode=39&step=5"  # on the route chosen
        position = page.evaluate(f"async () => (await (await fetch('{mind}')).json()).position")
        page.select_option("#agent", "learner@localhost")
        page.fill("#position", str(position))
        page.dispatch_event("#position", "change")
        page.wait_for_function("() => document.getElementById('plan-why').textContent.includes('chose @')")
        assert "for +!cross in pos(0, 3): value" in page.text_content("#plan-why")
        assert errors == []
    finally:
        viewer.stop()


@pytest.fixture(scope="module")
def taxi_routes_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The shipped taxi-routes spec (learned route choice) and the same plans without the
    annotation (Jason's selection: the first applicable route in source order), each as
    `bdi-rl run` runs it, traced at step level, the same seed."""
    folder = tmp_path_factory.mktemp("taxi-routes")
    plans = folder / "source-order.asl"
    plans.write_text((ASL / "taxi-routes.asl").read_text().replace("[learned(taxi)]", ""))
    spec = folder / "source-order.toml"
    spec.write_text((ASL.parent / "agents" / "taxi-routes.toml").read_text().replace('"taxi-routes.asl"', f'"{plans}"'))
    runs = {}
    for name, target in (("learned", "taxi-routes"), ("source order", str(spec))):
        result = run_cli("run", target, "--trace", "step", "--runs", str(folder / "runs"), "--no-progress")
        assert result.returncode == 0, result.stderr
        runs[name] = Path(result.stdout.strip().splitlines()[-1])
    return runs


def _evaluation(run: Path) -> dict:
    return json.loads((run / "summary.json").read_text())["agents"]["learner"]["eval"]


def test_the_taxi_that_learns_its_routes_drives_shorter_than_source_order(taxi_routes_runs: dict[str, Path]) -> None:
    """The middle row is never blocked but often a detour: taking it always (source order)
    delivers every passenger, a step or so later than choosing the route by where the taxi
    is and where it goes (bench/bench_plan_choice.py: optimal from every start, ~25k env steps)."""
    learned, fixed = _evaluation(taxi_routes_runs["learned"]), _evaluation(taxi_routes_runs["source order"])
    assert learned["success_rate"] == fixed["success_rate"] == 1.0
    assert learned["mean_return"] > fixed["mean_return"] + 0.2


def test_which_route_is_best_depends_on_the_taxi_s_cell_and_a_wall_fails_the_route_it_blocks(
    taxi_routes_runs: dict[str, Path],
) -> None:
    """Only the top and bottom rows have walls: a route along one fails where a wall stops
    it and is learned as failed; late in training every route is the greedy choice somewhere
    (from some cell, for some station); without the annotation no choice is made at all."""
    events = read_trace(taxi_routes_runs["learned"] / "trace.jsonl")
    values = [e["data"] for e in events if e["kind"] == PLAN_VALUE]
    failed = collections.Counter(v["plan"] for v in values if v["outcome"] == "failed")
    assert set(failed) == {"via_top", "via_bottom"}
    late = [e["data"] for e in events if e["kind"] == PLAN_CHOICE and e["episode"] >= 1500]
    greedy = {c["chosen"] for c in late if not c["exploring"]}
    assert greedy == {"via_middle", "via_top", "via_bottom"}
    assert all(c["state"].startswith("taxi(") and c["goal"].startswith("+!navigate(") for c in late)
    fixed = read_trace(taxi_routes_runs["source order"] / "trace.jsonl")
    assert not [e for e in fixed if e["kind"] in (PLAN_CHOICE, PLAN_VALUE)]

"""Run directories written as a run writes them, without running one (no XMPP server, no
agents, no minds): what the fast tier's viewer, inspect, plot, export and dashboard tests read.

Every file comes from the package's own writers, so its format cannot drift from a real run's:
``spec.toml`` from the spec loader and ``ExperimentSpec.to_dict`` (as the runner writes it);
events numbered by each agent's ``Tracer``, shipped as batches (``next_batch`` /
``decode_batch``: every line checked against the event schema) and appended by telemetry's
``TraceLog``; Q-tables by ``save_checkpoint``; ``summary.json`` by ``summary_from_trace`` over
the TraceLog's stats (as the telemetry role writes it). What the agents do is scripted after
the shipped plans (learner.asl, team-learner.asl, coordinator.asl), on the real env, with a
plain Q-learner: the events a mind running those plans emits, in the order it emits them.
``tests/test_real_run.py`` (slow) holds a real CLI run to the same event shapes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import tomli_w

from bdi_rl.bdi.runtime.terms import Struct, atom
from bdi_rl.bdi.text import term_text
from bdi_rl.rl.checkpoint import save_checkpoint
from bdi_rl.rl.envs import make_env
from bdi_rl.spec import ExperimentSpec, load_spec
from bdi_rl.store import (
    QTABLE_DIR,
    SPEC_FILE,
    SUMMARY_FILE,
    TRACE_FILE,
    atomic_write_bytes,
    atomic_write_json,
    new_run_dir,
)
from bdi_rl.trace.batch import decode_batch
from bdi_rl.trace.kinds import MAX_TEXT_CHARS, TraceLevel, clip_text
from bdi_rl.trace.tracer import Tracer
from bdi_rl.xmpp.summary import summary_from_trace
from bdi_rl.xmpp.telemetry import TraceLog


def literal(functor: str, *args: Any) -> str:
    """A belief or message as the mind writes it (``pos(1, 2)``, ``env("FrozenLake-v1")``)."""
    terms = tuple(tuple(a) if isinstance(a, list) else a for a in args)
    return term_text(Struct(functor, terms)) if terms else functor


class Agent:
    """One agent's side of a run: its Tracer, and the percepts it holds (a percept that
    changes is traced as the mind traces it: the old one deleted, then the new one added)."""

    def __init__(self, run: Run, name: str, asl: str, level: TraceLevel) -> None:
        self.name = name
        self.jid = f"{name}@{run.spec.xmpp.domain}"
        self.asl = asl
        self.tracer = Tracer(run.name, self.jid, level)
        self.percepts: dict[str, str] = {}
        run.agents.append(self)

    def emit(self, kind: str, data: dict[str, Any]) -> None:
        self.tracer.emit(kind, data)

    def add(self, belief: str, source: str = "self") -> None:
        self.emit("belief.add", {"belief": clip_text(belief), "source": source})

    def delete(self, belief: str, source: str = "self") -> None:
        self.emit("belief.del", {"belief": clip_text(belief), "source": source})

    def perceive(self, functor: str, *args: Any) -> None:
        belief = literal(functor, *args)
        old = self.percepts.get(functor)
        if old != belief:
            if old is not None:
                self.delete(old, "percept")
            self.percepts[functor] = belief
            self.add(belief, "percept")

    def forget(self, functor: str) -> None:
        old = self.percepts.pop(functor, None)
        if old is not None:
            self.delete(old, "percept")

    def achieve(self, goal: str, plan: str, source: str = "self") -> None:
        """``!goal`` posted, and the plan chosen for it started."""
        self.emit("goal.add", {"goal": goal, "source": source})
        self.react(f"+!{goal}", plan, source)

    def react(self, trigger: str, plan: str, source: str = "self") -> None:
        self.emit("intention.start", {"trigger": trigger, "plan": plan, "source": source})

    def done(self, plan: str) -> None:
        self.emit("intention.end", {"plan": plan})

    def act(self, name: str, *args: Any, result: Any = None) -> None:
        data: dict[str, Any] = {"name": name, "args": list(args)}
        if result is not None:
            data["result"] = result
        self.emit("action", data)

    def send(self, to: Agent, performative: str, content: str) -> None:
        """``.send``: the sender's msg.send and the receiver's msg.recv."""
        body: dict[str, Any] = {"performative": performative, "content": clip_text(content)}
        if len(content) > MAX_TEXT_CHARS:
            body["content_chars"] = len(content)
        self.emit("msg.send", {"to": to.jid, **body})
        to.emit("msg.recv", {"from": self.jid, **body})

    def start(self, **data: Any) -> None:
        self.emit("agent.start", {"jid": self.jid, "asl": self.asl, **data})

    def stop(self, **data: Any) -> None:
        self.tracer.flush_record()  # numbered before agent.stop, as the runner does
        self.emit("agent.stop", {"reason": "finished", **data, "emitted": self.tracer.seq + 1})
        self.tracer.close()


class Learner(Agent):
    """A Q-learner on the spec's env, driven as the plans drive one through ``.rl_*``."""

    def __init__(self, run: Run, name: str, asl: str, seed: int, rng_seed: int | None = None) -> None:
        super().__init__(run, name, asl, run.level)
        self.run = run
        spec = run.spec
        self.env = make_env(spec.env.id, spec.env.kwargs, spec.env.max_episode_steps)
        self.s = self.env.reset(seed=seed)
        self.rng = random.Random(seed if rng_seed is None else rng_seed)
        self.config = spec.learning
        self.q = np.full((self.env.n_states, self.env.n_actions), self.config.q_init)
        self.episodes = self.env_steps = self.replayed = self.successes = self.failures = 0
        self.epsilon = self.config.epsilon_at(0)
        self.outcome: str | None = None
        self.last_return = 0.0
        self.transitions: list[tuple[int, int, float, int, bool]] = []
        self.training_started: float | None = None  # its first reset, for agent.stop's training span
        desc = self.env.task_signature().get("desc", [])
        self.goal = next(([x, y] for y, row in enumerate(desc) for x, c in enumerate(row) if c == "G"), None)

    def begin(self, mode: str, beliefs: list[tuple[str, str]]) -> None:
        """agent.start, the plan file's beliefs, then the percepts of the start."""
        world = self.env.world()
        self.start(env=self.env.env_id, actions=self.env.action_names, **({"world": world} if world else {}))
        for belief, source in beliefs:
            self.add(belief, source)
        if self.goal is not None:
            self.perceive("goal", *self.goal)
        spec = self.run.spec
        self.perceive("mode", atom(mode))  # an atom, as EpisodeSession perceives it: mode(episode)
        self.perceive("env", spec.env.id)
        self.perceive("episodes_target", spec.episodes)
        self.perceive("eval_episodes", spec.eval_episodes)

    def stop(self, **data: Any) -> None:
        """agent.stop with its training span, as a learner's says (``LearnerRole.stop_data``)."""
        if self.training_started is not None:
            data.setdefault("training", [self.training_started, time.time()])
        super().stop(**data)

    def choose(self, s: int) -> int:
        row = self.q[s]
        if self.rng.random() < self.epsilon:
            return self.rng.randrange(len(row))
        return self.rng.choice([a for a, v in enumerate(row) if v == row.max()])

    def reset(self) -> None:
        """``.rl_reset``: a new episode and its first percepts."""
        self.tracer.stamp(self.episodes, 0)
        self.forget("outcome")
        self.outcome, self.last_return = None, 0.0
        self.s = self.env.reset()
        self.perceive("episode", self.episodes)
        self.perceive_state()

    def perceive_state(self) -> None:
        self.perceive("state", self.s)
        pos = self.env.position(self.s)
        if pos is not None:
            self.perceive("pos", *pos)

    def step(self, a: int, perceive: bool = True) -> None:
        """One env step, its Q-update (rl.step) and the percepts after it (mode step; in
        mode episode the plans perceive only the end)."""
        if self.training_started is None:  # its training starts with its first step
            self.training_started = time.time()
        s = self.s
        s2, r, terminated, truncated = self.env.step(a)
        row = [float(v) for v in self.q[s]]
        target = r if terminated else r + self.config.gamma * float(self.q[s2].max())
        self.q[s, a] += self.config.alpha * (target - self.q[s, a])
        self.emit(
            "rl.step",
            {
                "s": s,
                "a": a,
                "r": r,
                "s2": s2,
                "done": terminated or truncated,
                "q_before": row[a],
                "q_after": float(self.q[s, a]),
                "epsilon": self.epsilon,
                "q": row,
            },
        )
        self.transitions.append((s, a, r, s2, terminated))
        self.tracer.stamp(self.tracer.episode, self.tracer.step + 1)
        self.env_steps += 1
        self.last_return += r
        self.s = s2
        self.outcome = self.env.outcome(r, terminated, truncated)
        if perceive:
            self.perceive_state()

    def end_episode(self) -> None:
        """``.rl_end_episode``'s bookkeeping: episode.end and the percepts after it."""
        data = {
            "return": self.last_return,
            "length": self.tracer.step,
            "outcome": self.outcome,
            "epsilon": self.epsilon,
            "success": self.env.success(self.outcome, self.last_return),
        }
        self.emit("episode.end", {**data, "goal": self.goal} if self.goal is not None else data)
        self.episodes += 1
        self.epsilon = self.config.epsilon_at(self.episodes)
        self.perceive("last_return", self.last_return)
        self.perceive("epsilon", self.epsilon)
        self.perceive("episodes_done", self.episodes)
        if self.episodes >= self.run.spec.episodes:
            self.perceive("training_done")

    def step_episode(self) -> None:
        """learner.asl's @episode, one @navigate per step (mode step)."""
        self.achieve("episode", "episode")
        self.reset()
        self.act(".rl_reset")
        while self.outcome is None:
            self.achieve("navigate", "navigate")
            a = self.choose(self.s)
            self.act(".rl_choose", self.s, result=a)
            self.step(a)
            if self.outcome is not None:
                self.perceive("outcome", self.outcome)
                plan = {"goal": "success", "timeout": "step_limit"}.get(self.outcome, "failure")
                self.react(f"+outcome({self.outcome})", plan, "percept")
            self.act(".rl_act", a)
            self.done("navigate")
        counter = "successes" if self.outcome == "goal" else "failures"
        count = getattr(self, counter)
        setattr(self, counter, count + 1)
        self.delete(literal(counter, count))
        self.add(literal(counter, count + 1))
        self.done(plan)
        self.end_episode()
        self.act(".rl_end_episode")
        self.done("episode")

    def run_episode(self) -> None:
        """``.rl_run_episode`` (mode episode): the steps in Python, the percepts at the end."""
        self.tracer.stamp(self.episodes, 0)
        self.s = self.env.reset()
        self.outcome, self.last_return = None, 0.0
        while self.outcome is None:
            self.step(self.choose(self.s), perceive=False)
        self.forget("outcome")
        self.perceive("episode", self.episodes)
        self.perceive_state()
        self.perceive("outcome", self.outcome)

    def evaluate(self) -> tuple[float, float]:
        """``.rl_evaluate``: greedy episodes that change nothing; the eval event and percept."""
        returns, lengths, wins, started = [], [], 0, time.perf_counter()
        for _ in range(self.run.spec.eval_episodes):
            s, total, length, over = self.env.reset(), 0.0, 0, False
            while not over:
                s, r, terminated, truncated = self.env.step(int(self.q[s].argmax()))
                total, length, over = total + r, length + 1, terminated or truncated
            returns.append(total)
            lengths.append(length)
            wins += self.env.success(self.env.outcome(r, terminated, truncated), total)
        mean = round(sum(returns) / len(returns), 4)
        success = round(wins / len(returns), 4)
        self.emit(
            "eval",
            {
                "episodes": len(returns),
                "mean_return": mean,
                "success_rate": success,
                "mean_length": round(sum(lengths) / len(lengths), 4),
                "after_episodes": self.episodes,
                "seconds": round(time.perf_counter() - started, 6),
            },
        )
        self.perceive("eval", mean, success)
        self.act(".rl_evaluate")
        return mean, success

    def save_qtable(self) -> None:
        """``.rl_save_qtable``: the checkpoint file and qtable.save."""
        path = Path(QTABLE_DIR) / f"{self.name}.npz"
        task = {**self.env.task_signature(), **({"goal": self.goal} if self.goal is not None else {})}
        save_checkpoint(
            self.run.dir / path,
            self.q,
            {
                "agent": self.name,
                "run": self.run.name,
                "env": self.env.state_space_signature(),
                "env_kwargs": self.env.kwargs,
                "max_episode_steps": self.env.max_episode_steps,
                "learning": dataclasses.asdict(self.config),
                "spec_hash": self.run.spec_hash,
                "warm_start": None,
                "task": task,
                "episodes": self.episodes,
                "total_episodes": self.episodes,
                "env_steps": self.env_steps,
                "epsilon": self.epsilon,
                "alpha": self.config.alpha,
            },
        )
        self.emit("qtable.save", {"path": str(path), "episodes": self.episodes})
        self.act(".rl_save_qtable")


class Run:
    """One run directory being written: its spec, agents, telemetry's TraceLog."""

    def __init__(self, runs: Path, spec: ExperimentSpec) -> None:
        self.spec = spec
        self.level = TraceLevel.parse(spec.trace)
        self.dir, self.writer = new_run_dir(runs, spec.env.id, spec.name, spec.seed, "tests.fakeruns")
        self.name = self.dir.name
        spec_text = tomli_w.dumps(spec.to_dict()).encode()
        atomic_write_bytes(self.dir / SPEC_FILE, spec_text)
        self.spec_hash = "sha256:" + hashlib.sha256(spec_text).hexdigest()
        self.log = TraceLog(self.dir / TRACE_FILE, self.name)
        self.agents: list[Agent] = []
        self.started = time.time()
        self.telemetry = Agent(self, spec.telemetry.name, "", TraceLevel.EPISODE)
        self.telemetry.emit(
            "run.start",
            {"spec": spec.name, "env": spec.env.id, "agents": [n for g in spec.agents for n in g.agent_names()]},
        )
        self.ship()

    def ship(self) -> None:
        """What each agent's shipper and telemetry's receiver do, minus XMPP: every event in
        batches, checked, appended in seq order, acknowledged."""
        for agent in self.agents:
            tracer = agent.tracer
            while tracer.pending:
                _, body = tracer.next_batch(compress=True)
                upto, gap = self.log.accept(decode_batch(body))
                assert not gap, f"{agent.jid}: events out of order"
                tracer.ack(upto)

    def finish(self) -> Path:
        self.ship()
        self.telemetry.emit("run.stop", {"failures": {}})
        self.ship()
        self.log.close()
        jids = [a.jid for a in self.agents if a is not self.telemetry]
        atomic_write_json(
            self.dir / SUMMARY_FILE,
            summary_from_trace(self.name, self.spec, self.log.stats, jids, time.time() - self.started),
        )
        self.writer.release()
        return self.dir


def learner_run(runs: Path, spec_path: Path, rng_seed: int | None = None, **overrides: Any) -> Path:
    """A run of one learner.asl learner, as ``bdi-rl run SPEC`` with ``overrides`` makes it
    (``rng_seed`` seeds the learner's choices instead of the spec's seed)."""
    spec = load_spec(spec_path, overrides)
    run = Run(runs, spec)
    group = spec.agents[0]
    learner = Learner(run, group.name, group.asl, spec.seed, rng_seed)
    learner.begin(group.mode, [("successes(0)", "self"), ("failures(0)", "self")])
    learner.perceive("teammates", [])
    learner.achieve("start", "start")
    learner.achieve("train", "train_steps")
    for _ in range(spec.episodes):
        learner.step_episode()
        run.ship()
    learner.done("train_steps")
    learner.achieve("evaluate", "evaluate")
    learner.evaluate()
    learner.save_qtable()
    learner.done("evaluate")
    learner.achieve("finish", "finish")
    learner.act(".rl_finish")
    learner.done("finish")
    learner.done("start")
    learner.stop()
    return run.finish()


def notes_run(runs: Path, spec_path: Path, notes: list[str], **overrides: Any) -> Path:
    """A learner whose plan only notes ``notes`` and finishes (conftest.HOSTILE_ASL)."""
    spec = load_spec(spec_path, overrides)
    run = Run(runs, spec)
    group = spec.agents[0]
    learner = Learner(run, group.name, group.asl, spec.seed)
    learner.begin(group.mode, [])
    learner.perceive("teammates", [])
    learner.achieve("start", "start")
    for note in notes:
        learner.add(literal("note", note))
    learner.act(".rl_finish")
    learner.done("start")
    learner.stop()
    return run.finish()


def team_run(runs: Path, spec_path: Path, **overrides: Any) -> Path:  # noqa: C901 (a whole run, event by event)
    """A coordinator and its team-learner.asl learners (mode episode), as ``bdi-rl run``
    makes them: they join, train and share (hazards, goals, experience every share_every
    episodes), report; the coordinator has the ones below the best adopt its policy."""
    spec = load_spec(spec_path, overrides)
    run = Run(runs, spec)
    (coord_group,) = [g for g in spec.agents if g.role == "coordinator"]
    (group,) = [g for g in spec.agents if g.role == "learner"]
    coord = Agent(run, coord_group.name, coord_group.asl, run.level)
    learners = [Learner(run, name, group.asl, spec.seed + i) for i, name in enumerate(group.agent_names())]
    share_every = int(next((b[len("share_every(") : -1] for b in group.beliefs if b.startswith("share_every(")), 10))

    coord.start()
    coord.add("adopt_margin(0)")
    for functor, value in (
        ("teammates", [x.jid for x in learners]),
        ("coordinator", coord.jid),
        ("learners", [x.jid for x in learners]),
        ("team_size", len(learners)),
    ):
        coord.perceive(functor, value)
    for x in learners:
        coord.add(literal("trusted", x.jid), "percept")
    for x in learners:
        x.begin("episode", [("share_every(10)", "self")])
        x.perceive("teammates", [y.jid for y in learners if y is not x])
        x.perceive("coordinator", coord.jid)
        for y in [coord, *learners]:
            if y is not x:
                x.add(literal("trusted", y.jid), "percept")
        x.delete("share_every(10)")
        x.add(literal("share_every", share_every))
        x.achieve("join", "join_team")
        x.act(".rl_record_experience")
        x.send(coord, "tell", "ready")
    for x in learners:  # the coordinator starts everyone at once
        coord.add("ready", x.jid)
        coord.react("+ready", "learner_ready", x.jid)
        coord.add(literal("ready_learner", x.jid))
    coord.react(f"+{literal('ready_learner', learners[-1].jid)}", "all_ready")
    coord.add("started")
    for x in learners:
        coord.send(x, "achieve", "train")
    coord.done("all_ready")
    for x in learners:
        coord.done("learner_ready")
        x.done("join_team")
        x.achieve("train", "train_on_request", coord.jid)
        x.add("training")
    run.ship()

    known: dict[str, set[tuple[int, int]]] = {x.name: set() for x in learners}
    for _ in range(spec.episodes):
        for x in learners:
            x.run_episode()
            found = x.env.position(x.s) if x.outcome in ("hole", "goal") else None
            finding = found is not None and tuple(found) not in known[x.name]
            plan = "found_hazard" if x.outcome == "hole" else "found_goal"
            if finding:  # a hole on the outcome, a goal once the episode is closed (team-learner.asl)
                trigger = "+outcome(hole)" if x.outcome == "hole" else f"+episodes_done({x.episodes + 1})"
                x.react(trigger, plan, "percept")
            x.end_episode()
            x.act(".rl_run_episode")
            due = share_every > 0 and x.episodes % share_every == 0
            x.achieve("share", "share_due" if due else "share_not_due")
            if finding:
                known[x.name].add(tuple(found))
                told = [*found] if x.outcome == "hole" else [*found, x.last_return]
                news = literal("hazard" if x.outcome == "hole" else "goal_at", *told)
                x.add(news)
                for y in learners:
                    if y is not x:
                        x.send(y, "tell", news)
                        y.add(news, x.jid)
                        y.react(f"+{news}", "told_hazard" if x.outcome == "hole" else "told_goal", x.jid)
                        y.act(".rl_hazard" if x.outcome == "hole" else ".rl_goal", *told)
                        known[y.name].add(tuple(found))
                        if x.outcome == "hole":  # a prior: moves that may land there look worse
                            for s, a, p in y.env.arrivals(x.s):
                                y.q[s, a] = min(y.q[s, a], -0.1 * p)
                        y.done("told_hazard" if x.outcome == "hole" else "told_goal")
                x.done(plan)
            if due:
                x.achieve("share_all", "share_all")
                batch = ";".join(f"{s},{a},{r:g},{s2},{int(t)}" for s, a, r, s2, t in x.transitions)
                x.transitions = []
                x.act(".rl_experience", result=[batch])
                for y in learners:
                    if y is not x:
                        experience = literal("experience", batch)
                        x.send(y, "tell", experience)
                        y.add(experience, x.jid)
                        learns = y.episodes < spec.episodes  # else @too_late_to_learn
                        y.react(f"+{experience}", "learn_from_peer" if learns else "too_late_to_learn", x.jid)
                        if learns:
                            y.act(".rl_replay", batch)
                            y.replayed += batch.count(";") + 1
                        y.delete(experience, x.jid)
                        y.done("learn_from_peer" if learns else "too_late_to_learn")
                x.done("share_all")
            x.done("share_due" if due else "share_not_due")
        run.ship()

    results = {}
    for x in learners:
        results[x.name] = x.evaluate()
        x.save_qtable()
        x.achieve("report", "report_to_coordinator")
        x.send(coord, "tell", literal("evaluated", *results[x.name]))
        x.done("report_to_coordinator")
        x.done("train_on_request")
    for x in learners:
        coord.add(literal("evaluated", *results[x.name]), x.jid)
        coord.react(f"+{literal('evaluated', *results[x.name])}", "learner_evaluated", x.jid)
        coord.add(literal("result", x.jid, *results[x.name]))
    coord.react(f"+{literal('result', learners[-1].jid, *results[learners[-1].name])}", "all_evaluated")
    best = max(learners, key=lambda x: results[x.name])
    coord.add("concluded")
    coord.add(literal("best", best.jid, *results[best.name]))
    adopters = [x for x in learners if results[x.name][0] < results[best.name][0]]
    for x in learners:
        verdict = "keep_best" if x is best else "adopt_better" if x in adopters else "keep_own"
        coord.achieve(literal("judge", x.jid, results[x.name][0]), verdict)
        if verdict == "adopt_better":
            coord.add(literal("adopting", x.jid))
        coord.done(verdict)
    for x in learners:
        if x is not best:
            coord.send(x, "achieve", literal("adopt_policy_of", best.jid) if x in adopters else "finish")
    coord.done("all_evaluated")
    for _ in learners:
        coord.done("learner_evaluated")
    run.ship()
    for x in learners:
        if x is not best and x not in adopters:
            x.achieve("finish", "finish_on_request", coord.jid)
            x.act(".rl_finish")
            x.done("finish_on_request")
            x.stop(**({"replayed_steps": x.replayed} if x.replayed else {}))
    for x in adopters:
        x.achieve(literal("adopt_policy_of", best.jid), "adopt_on_request", coord.jid)
        x.send(best, "askOne", "policy(P)[source(self)]")  # the answer goes to .send's 4th argument
        best.react("+?policy(P)", "offer_policy", x.jid)
        policy = [int(a) for a in best.q.argmax(axis=1)]
        best.act(".rl_policy", result=policy)
        best.send(x, "tell", literal("policy", policy))
        best.done("offer_policy")
        changed = sum(int(x.q[s].argmax()) != a for s, a in enumerate(policy))
        x.q = best.q.copy()
        x.act(".rl_adopt_policy", policy, result=changed)
        adopted = x.evaluate()
        x.save_qtable()
        x.send(coord, "tell", literal("adopted", *adopted, changed))
        x.act(".rl_finish")
        x.done("adopt_on_request")
        x.stop(**({"replayed_steps": x.replayed} if x.replayed else {}))
        coord.add(literal("adopted", *adopted, changed), x.jid)
        coord.react(f"+{literal('adopted', *adopted, changed)}", "learner_adopted", x.jid)
        coord.delete(literal("adopting", x.jid))
        last = x is adopters[-1]
        coord.react(f"-{literal('adopting', x.jid)}", "all_adopted" if last else "still_adopting")
        coord.done("all_adopted" if last else "still_adopting")
        coord.done("learner_adopted")
    coord.achieve("finish_team", "finish_team")
    coord.send(best, "achieve", "finish")
    coord.done("finish_team")
    coord.stop()
    best.achieve("finish", "finish_on_request", coord.jid)
    best.act(".rl_finish")
    best.done("finish_on_request")
    best.stop(**({"replayed_steps": best.replayed} if best.replayed else {}))
    return run.finish()

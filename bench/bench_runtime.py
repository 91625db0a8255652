"""bdi_rl.bdi.runtime against python-agentspeak on the same programs (issue 16), on both of
the runtime's reasoning cycles (issue 27): ``fast`` (an intention runs until it blocks) and
``jason`` (Jason's: one deed of one intention per cycle), with Jason's cycle's reasoning
cycles per second.

Each program runs to completion on every interpreter, interleaved A B C A B C; the figure is
the program's own unit of work per second (loop iterations, plan selections, env steps),
so the ratio is the speed-up on that program whatever each interpreter calls a cycle.
The clock starts once the plans are loaded (lark builds its parser once per process).
python-agentspeak runs as bdi-rl ran it before its own runtime (tests/asp_reference.py: the
fused instructions, fast percepts, no tracer); the runtime as bdi-rl's agents run it
(bdi.mind.load_mind, untraced).

    python bench/bench_runtime.py [--rounds 3] [--scale 1.0] [--clock cpu|wall]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import asp_reference

from bdi_rl.bdi.mind import load_mind
from bdi_rl.bdi.runtime import Actions, Host, load_agent
from bdi_rl.bdi.runtime.terms import atom

COUNTING = """
count(0).
!start.
+!start <- while (count(N) & N < {n}) {{ -count(N); +count(N + 1) }}.
"""

SELECTION = """
i(0).
!start.
+!start <- while (i(N) & N < {n}) {{ !pick(N mod 10); -i(N); +i(N + 1) }}.
+!pick(X) : X == 0 <- true.
+!pick(X) : X == 1 <- true.
+!pick(X) : X == 2 <- true.
+!pick(X) : X == 3 <- true.
+!pick(X) : X == 4 <- true.
+!pick(X) : X == 5 <- true.
+!pick(X) : X == 6 <- true.
+!pick(X) : X == 7 <- true.
+!pick(X) : X == 8 <- true.
+!pick(X) <- true.
"""

# learner.asl's step-mode shape with stub actions: only the interpreter's cost is measured
#: when the measured part of a run started (after parsing and loading the plans)
CLOCK = [0.0]
#: the reasoning cycles the last run of the runtime took
CYCLES = [0]
#: the clock: this process's CPU time by default (the machine is shared, and other work
#: on its two cores made wall-clock ratios swing 3-14x between rounds); --clock wall
now: Callable[[], float] = time.process_time

QLOOP = """
!train.
+!train <- while (not training_done) { !episode }.
+!episode <- .rl_reset; while (not outcome(_)) { !navigate }; .rl_end_episode.
+!navigate : state(S) <- .rl_choose(S, A); .rl_act(A).
"""


class StubEnv:
    """8 steps per episode, {episodes} episodes; percepts through the given callbacks."""

    def __init__(self, episodes: int, replace: Callable[[str, tuple], None], drop: Callable[[str, int], None]) -> None:
        self.episodes = episodes
        self.replace = replace
        self.drop = drop
        self.done = 0
        self.t = 0
        self.steps = 0

    def reset(self) -> None:
        self.t = 0
        self.drop("outcome", 1)
        self.replace("state", (0,))

    def choose(self, s: Any) -> int:
        return (int(s) + 1) % 4

    def act(self, a: Any) -> None:
        self.t += 1
        self.steps += 1
        self.replace("state", (self.t,))
        if self.t >= 8:
            self.replace("outcome", ("goal",))

    def end_episode(self) -> None:
        self.done += 1
        if self.done >= self.episodes:
            self.replace("training_done", ())


def _write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / f"{name}.asl"
    path.write_text(text)
    return path


def run_new(path: Path, stub: StubEnv | None = None, cycle: str = "fast") -> None:
    actions = Actions()
    holder: list[Any] = []
    if stub is not None:
        stub.replace = lambda f, args: holder[0].replace_percept(
            f, tuple(atom(a) if isinstance(a, str) else a for a in args)
        )
        stub.drop = lambda f, n: holder[0].drop_percepts(f, n)
        actions.add_procedure(".rl_reset", (), stub.reset)
        actions.add_function(".rl_choose", (None,), stub.choose)
        actions.add_procedure(".rl_act", (None,), stub.act)
        actions.add_procedure(".rl_end_episode", (), stub.end_episode)
    agent = load_agent(path, "bench", actions, Host(), cycle=cycle)
    holder.append(agent)
    CLOCK[0] = now()
    agent.run()
    CYCLES[0] = agent.cycles
    assert not agent.failures, agent.failures


def run_old(path: Path, stub: StubEnv | None = None) -> None:
    actions = asp_reference.actions()
    holder: list[Any] = []
    if stub is not None:
        stub.replace = lambda f, args: holder[0].replace_percept(
            f, tuple(atom(a) if isinstance(a, str) else a for a in args)
        )
        stub.drop = lambda f, n: holder[0].drop_percepts(f, n)
        actions.add_procedure(".rl_reset", (), stub.reset)
        actions.add_function(".rl_choose", (None,), stub.choose)
        actions.add_procedure(".rl_act", (None,), stub.act)
        actions.add_procedure(".rl_end_episode", (), stub.end_episode)
    mind = asp_reference.load(path, actions, "bench")
    holder.append(mind)
    CLOCK[0] = now()
    mind.run()
    assert not mind.failures, mind.failures


def learner_asl(kind: str, episodes: int, tmp: Path) -> Callable[[], int]:
    """asl/learner.asl, step mode, real FrozenLake 4x4 and Q-learning (the shipped loop)."""
    from test_runtime_learner import _bridge  # tests/: the same wiring as the test

    def run() -> int:
        finished: list[str] = []
        bridge, learner = _bridge(tmp, kind, episodes, finished)
        asl = Path(__file__).resolve().parent.parent / "asl" / "learner.asl"
        if kind in ("fast", "jason"):
            actions = Actions()
            bridge.register(actions)
            mind = load_mind(asl, actions, kind, prepare=lambda m: bridge.start(m, "step"), cycle=kind)
        else:
            old_actions = asp_reference.actions()
            bridge.register(old_actions)
            mind = asp_reference.load(asl, old_actions, "old", prepare=lambda m: bridge.start(m, "step"))
        CLOCK[0] = now()
        mind.run()
        CYCLES[0] = getattr(mind, "cycles", 0)
        assert finished
        return learner.env_steps

    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = parser.parse_args()
    global now
    now = time.process_time if args.clock == "cpu" else time.perf_counter
    tmp = Path(tempfile.mkdtemp(prefix="bench_runtime"))
    n_count = int(20_000 * args.scale)
    n_select = int(10_000 * args.scale)
    n_episodes = int(2_000 * args.scale)
    programs: list[tuple[str, str, Callable[[str], Callable[[], int]]]] = []

    def simple(name: str, text: str, units: int) -> Callable[[str], Callable[[], int]]:
        path = _write(tmp, name, text)

        def make(kind: str) -> Callable[[], int]:
            def run() -> int:
                if kind == "old":
                    run_old(path)
                else:
                    run_new(path, cycle=kind)
                return units

            return run

        return make

    def qloop(kind: str) -> Callable[[], int]:
        path = _write(tmp, "qloop", QLOOP)

        def run() -> int:
            stub = StubEnv(n_episodes, lambda f, a: None, lambda f, n: None)
            if kind == "old":
                run_old(path, stub)
            else:
                run_new(path, stub, cycle=kind)
            return stub.steps

        return run

    programs.append(("counting loop (iterations/s)", "count", simple("count", COUNTING.format(n=n_count), n_count)))
    programs.append(
        ("plan selection, 10 plans (goals/s)", "select", simple("select", SELECTION.format(n=n_select), n_select))
    )
    programs.append(("Q-loop shape, stub actions (steps/s)", "qloop", qloop))
    learner_episodes = int(1_000 * args.scale)
    programs.append(
        (
            "learner.asl step mode, FrozenLake (env steps/s)",
            "learner",
            lambda kind: (
                plain(learner_episodes)
                if kind == "plain"
                else bridge_only(learner_episodes, tmp)
                if kind == "bridge"
                else learner_asl(kind, learner_episodes, tmp)
            ),
        )
    )

    print(
        f"{'program':<48} {'python-agentspeak':>18} {'fast':>10} {'ratio':>7} {'jason':>10} {'ratio':>7}"
        f" {'jason cycles/s':>15}"
    )
    for title, name, make in programs:
        # the learner also runs the plain Python loop on the same env in each round: the
        # issue's step-mode target is a ratio to it
        kinds = ("old", "fast", "jason", "plain", "bridge") if name == "learner" else ("old", "fast", "jason")
        rates: dict[str, list[float]] = {kind: [] for kind in kinds}
        cycle_rates: list[float] = []
        for _ in range(args.rounds):
            for kind in kinds:  # interleaved: A B C A B C
                run = make(kind)
                units = run()
                seconds = now() - CLOCK[0]
                rates[kind].append(units / seconds)
                if kind == "jason":
                    cycle_rates.append(CYCLES[0] / seconds)
        fast = [n / o for n, o in zip(rates["fast"], rates["old"], strict=True)]
        jason = [n / o for n, o in zip(rates["jason"], rates["old"], strict=True)]
        print(
            f"{title:<48} {statistics.median(rates['old']):>18,.0f} {statistics.median(rates['fast']):>10,.0f} "
            f"{statistics.median(fast):>6.1f}x {statistics.median(rates['jason']):>10,.0f} "
            f"{statistics.median(jason):>6.1f}x {statistics.median(cycle_rates):>15,.0f}"
            f"  (fast rounds: {', '.join(f'{r:.1f}' for r in fast)})"
        )
        if "plain" in rates:
            to_plain = {
                kind: [r / p for r, p in zip(rates[kind], rates["plain"], strict=True)]
                for kind in ("old", "fast", "jason", "bridge")
            }
            print(
                f"{'  plain Python Q-loop, same env (env steps/s)':<48} {statistics.median(rates['plain']):>18,.0f}"
                f"  x plain: python-agentspeak {statistics.median(to_plain['old']):.2f}, "
                f"fast {statistics.median(to_plain['fast']):.2f} "
                f"(rounds: {', '.join(f'{r:.2f}' for r in to_plain['fast'])}), "
                f"jason {statistics.median(to_plain['jason']):.2f} "
                f"(rounds: {', '.join(f'{r:.2f}' for r in to_plain['jason'])}), "
                f"the bridge without plans {statistics.median(to_plain['bridge']):.2f} "
                f"(rounds: {', '.join(f'{r:.2f}' for r in to_plain['bridge'])})"
            )


def bridge_only(episodes: int, tmp: Path) -> Callable[[], int]:
    """learner.asl's step loop written in Python over the same bridge (the .rl_* actions'
    methods, percepts into a runtime agent's belief base): what any interpreter's run is
    bounded by, the plans' cost taken out."""
    from test_runtime_learner import _bridge

    def run() -> int:
        finished: list[str] = []
        bridge, learner = _bridge(tmp, "bridge", episodes, finished)
        actions = Actions()
        bridge.register(actions)
        asl = Path(__file__).resolve().parent.parent / "asl" / "learner.asl"
        mind = load_agent(asl, "bridge", actions, Host(), start=False)
        bridge.start(mind, "step")
        session, groups = bridge.session, mind.beliefs.groups
        CLOCK[0] = now()
        for _ in range(episodes):
            session.reset()
            while not groups.get(("outcome", 1)):
                [(state,)] = groups[("state", 1)]
                session.act(session.choose(state))
            session.end_episode()
        return learner.env_steps

    return run


def plain(episodes: int) -> Callable[[], int]:
    """The plain Python Q-learning loop (bench/tune_defaults.py, BENCHMARKS.md's reference)
    on the env learner.asl runs: FrozenLake 4x4, slippery."""
    from tune_defaults import plain_loop

    def run() -> int:
        CLOCK[0] = now()  # includes gym.make (~1 ms)
        steps, _ = plain_loop("FrozenLake-v1", {"map_name": "4x4", "is_slippery": True}, None, episodes, 0.99, 3)
        return steps

    return run


if __name__ == "__main__":
    main()

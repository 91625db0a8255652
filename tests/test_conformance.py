"""Conformance of bdi_rl.bdi.runtime with Jason's semantics (issue 16).

Each ``tests/conformance/*.asl`` program states what it must do in its header comments:

- ``// expect: TEXT``: the ``.print`` lines, in order (exactly these, nothing else);
- ``// belief: LITERAL`` / ``// absent: LITERAL``: in / not in the final belief base
  (``absent`` compares without annotations);
- ``// dropped: TRIGGER KIND``: an intention dropped for lack of a failure plan;
- ``// pyagentspeak: same`` (``same in any order``): python-agentspeak 0.2.2 runs it too and
  prints the same lines (in any order: its belief base is a set, so queries have no order).

Communication, trust and the host interface are tested below with a small in-process
host that routes messages between agents.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from bdi_rl.bdi.actions import register_signatures
from bdi_rl.bdi.runtime import Actions, Agent, Host, Listener, load_agent
from bdi_rl.bdi.runtime.errors import AslSyntaxError
from bdi_rl.bdi.runtime.parser import parse_file, parse_text
from bdi_rl.bdi.runtime.terms import term_str

HERE = Path(__file__).parent
PROGRAMS = sorted((HERE / "conformance").glob("*.asl"))
ASL = HERE.parent / "asl"


class Capture(Host):
    """Collects .print lines and dropped intentions."""

    def __init__(self) -> None:
        self.printed: list[str] = []
        self.dropped: list[dict] = []

    def print(self, agent: Agent, text: str) -> None:
        self.printed.append(text)

    def intention_failed(self, agent: Agent, report: dict) -> None:
        self.dropped.append(report)


def _header(path: Path, key: str) -> list[str]:
    prefix = f"// {key}:"
    return [line[len(prefix) :].strip() for line in path.read_text().splitlines() if line.startswith(prefix)]


def _strip_annots(text: str) -> str:
    return re.sub(r"\[[^\]]*\]$", "", text)


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program(path: Path) -> None:
    host = Capture()
    agent = load_agent(path, host=host)
    agent.run(max_cycles=100_000)
    assert host.printed == _header(path, "expect")
    beliefs = agent.belief_texts()
    for belief in _header(path, "belief"):
        assert belief in beliefs, beliefs
    for absent in _header(path, "absent"):
        assert absent not in [_strip_annots(b) for b in beliefs], beliefs
    expected_drops = _header(path, "dropped")
    assert [f"{d['trigger'].split('[')[0]} {d['error']}" for d in host.dropped] == expected_drops


SAME_IN_PYAGENTSPEAK = [p for p in PROGRAMS if _header(p, "pyagentspeak")]


@pytest.mark.parametrize("path", SAME_IN_PYAGENTSPEAK, ids=[p.stem for p in SAME_IN_PYAGENTSPEAK])
def test_python_agentspeak_agrees(path: Path) -> None:
    """The same program on python-agentspeak 0.2.2 prints the same lines (its ``.print``
    joins arguments with spaces; here both concatenate, as Jason does)."""
    import agentspeak
    import agentspeak.runtime
    import agentspeak.stdlib

    printed: list[str] = []
    actions = agentspeak.Actions(agentspeak.stdlib.actions)

    @actions.add(".print")
    def _print(agent: Any, term: Any, intention: Any):  # type: ignore[no-untyped-def]
        printed.append("".join(agentspeak.asl_str(agentspeak.freeze(t, intention.scope, {})) for t in term.args))
        yield

    env = agentspeak.runtime.Environment()
    with open(path) as source:
        env.build_agent(source, actions)
    env.run()
    host = Capture()
    load_agent(path, host=host).run()
    # python-agentspeak writes lists as [2, 3], Jason (and this runtime) as [2,3]
    theirs = [re.sub(r",\s+", ",", line) for line in printed]
    if _header(path, "pyagentspeak") == ["same in any order"]:  # its belief base is a set
        assert sorted(theirs) == sorted(host.printed)
    else:
        assert theirs == host.printed


# -- every shipped plan library ------------------------------------------------------------
SHIPPED = sorted(ASL.glob("*.asl"))


def _stub_actions() -> Actions:
    """Every internal action a shipped plan file may call, doing nothing: the .rl_* table's own
    signatures (bdi.actions), and what the world and coordinator roles add."""
    actions = Actions()
    register_signatures(actions)
    actions.add_procedure(".finish", lambda *args: None)
    actions.add_function(".world_info", lambda *args: 0)
    return actions


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_plans_parse_and_compile(path: Path) -> None:
    program = parse_file(path)
    assert program.plans
    Agent(path.stem, program, _stub_actions(), Capture(), start=False)


def test_unknown_internal_action_is_a_load_error() -> None:
    with pytest.raises(AslSyntaxError, match=r"<string>:1: unknown internal action \.nope"):
        Agent("a", parse_text("+!g <- .nope(1)."), Actions(), Capture())


def test_syntax_error_names_file_line_column(tmp_path: Path) -> None:
    bad = tmp_path / "bad.asl"
    bad.write_text('ok(1).\n+!g <- .print("x"\n')
    with pytest.raises(AslSyntaxError, match=r"bad\.asl:3:1: unexpected end of file|bad\.asl:2"):
        load_agent(bad, host=Capture())


@pytest.mark.parametrize(
    "files, message",
    [
        ({"lib/absent.asl": None}, "lib/absent.asl: no such plan file (included at {dir}/a.asl:1)"),
        ({"lib/loop.asl": '{ include("./loop.asl") }'}, "lib/./loop.asl: includes itself (included at "),
        ({"lib/odd.asl": "+!g <- .print(1). $"}, "lib/odd.asl:1:19: illegal character '$'"),
        ({"lib/bin.asl": b"\xff\xfe\x00"}, "lib/bin.asl: not a text file (included at {dir}/a.asl:1)"),
    ],
    ids=["missing", "cycle", "illegal character", "binary"],
)
def test_an_include_error_names_the_included_file_and_where(tmp_path: Path, files: dict, message: str) -> None:
    name = next(iter(files))
    (tmp_path / "a.asl").write_text(f'{{ include("{name}") }}\n!g.\n')
    (tmp_path / "lib").mkdir()
    for file, content in files.items():
        if isinstance(content, bytes):
            (tmp_path / file).write_bytes(content)
        elif content is not None:
            (tmp_path / file).write_text(content)
    with pytest.raises(AslSyntaxError) as err:
        parse_file(tmp_path / "a.asl")
    assert message.format(dir=tmp_path) in str(err.value)


# -- communication ---------------------------------------------------------------------------
class Society(Host):
    """Routes messages between in-process agents, after the receiver's trust predicate."""

    def __init__(self, trusted: dict[str, set[str]] | None = None) -> None:
        self.agents: dict[str, Agent] = {}
        self.printed: list[str] = []
        self.trusted = trusted
        self.clock = 0.0

    def add(self, name: str, text: str) -> Agent:
        agent = Agent(name, parse_text(text, f"{name}.asl"), Actions(), self)
        self.agents[name] = agent
        return agent

    def print(self, agent: Agent, text: str) -> None:
        self.printed.append(f"{agent.name}: {text}")

    def send(
        self,
        agent: Agent,
        receiver: Any,
        performative: str,
        content: Any,
        *,
        msg_id: str | None = None,
        in_reply_to: str | None = None,
    ) -> None:
        to = self.agents.get(receiver.functor if hasattr(receiver, "functor") else str(receiver))
        if to is not None:
            to.deliver(agent.name_term, performative, content, msg_id, in_reply_to)

    def accept(self, agent: Agent, sender: Any, performative: str, content: Any) -> bool:
        if self.trusted is None:
            return True
        return term_str(sender) in self.trusted.get(agent.name, set())

    def run(self, rounds: int = 200) -> None:
        for _ in range(rounds):
            busy = False
            for agent in list(self.agents.values()):
                busy |= agent.cycle()
            if not busy and not any(a.inbox or a.events for a in self.agents.values()):
                break

    def run_until(self, prefix: str, timeout: float) -> None:
        """Run, sleeping through timed waits, until a printed line starts with ``prefix``."""
        deadline = time.monotonic() + timeout
        while not any(line.startswith(prefix) for line in self.printed):
            assert time.monotonic() < deadline, f"no line {prefix!r} in {self.printed}"
            self.run()
            time.sleep(0.002)


def test_tell_untell_achieve_with_sources() -> None:
    society = Society()
    society.add(
        "alice",
        """
        !start.
        +!start <- .send(bob, tell, price(beer, 3)); .send(bob, achieve, greet("hi")).
        +!later <- .send(bob, untell, price(beer, 3)).
    """,
    )
    bob = society.add(
        "bob",
        """
        +price(I, P)[source(S)] <- .print(S, " says ", I, " costs ", P).
        -price(I, _)[source(S)] <- .print(S, " took back ", I).
        +!greet(T)[source(S)] <- .print("greeted by ", S, ": ", T).
    """,
    )
    society.run()
    assert bob.belief_texts() == ["price(beer,3)[source(alice)]"]
    society.agents["alice"].post_goal(parse_goal("later"))
    society.run()
    assert society.printed == ["bob: alice says beer costs 3", "bob: greeted by alice: hi", "bob: alice took back beer"]
    assert bob.belief_texts() == []


def parse_goal(text: str) -> Any:
    from bdi_rl.bdi.runtime import parse_value
    from bdi_rl.bdi.runtime.terms import ANNOTS_SELF, Struct

    value = parse_value(text)
    return Struct(value.functor, value.args, ANNOTS_SELF)


def test_synchronous_ask_one_from_beliefs_and_rules() -> None:
    society = Society()
    society.add(
        "alice",
        """
        !start.
        +!start <- .send(bob, askOne, price(beer, P), Answer); .print("beer: ", Answer);
                   .send(bob, askOne, cheap(W), Cheap); .print("cheap: ", Cheap);
                   .send(bob, askOne, price(gin, _), None); .print("gin: ", None);
                   .send(bob, askAll, price(_, _), All); .print("all: ", All).
    """,
    )
    society.add(
        "bob",
        """
        price(beer, 3).
        price(wine, 9).
        cheap(X) :- price(X, P) & P < 5.
    """,
    )
    society.run()
    assert society.printed == [
        "alice: beer: price(beer,3)[source(bob)]",
        "alice: cheap: cheap(beer)[source(bob)]",
        "alice: gin: false",
        "alice: all: [price(beer,3)[source(bob)],price(wine,9)[source(bob)]]",
    ]


def test_ask_one_no_belief_answers_runs_a_test_goal_plan() -> None:
    """Jason's kqmlPlans: an askOne no belief answers is ``?Content[source(Sender)]`` in a
    new intention of the receiver; its ``+?q`` plan's bindings are the answer (sent without
    source annotations), a failure of that intention (or no applicable plan) is ``untell``.
    Beliefs still answer first; askAll is answered from beliefs and rules only."""
    society = Society()
    society.add(
        "alice",
        """
        !start.
        +!start <- .send(bob, askOne, price(beer, P), Beer); .print("beer: ", Beer);
                   .send(bob, askOne, price(gin, G), Gin); .print("gin: ", Gin, " ", G);
                   .send(bob, askOne, price(rum, _), Rum); .print("rum: ", Rum);
                   .send(bob, askOne, price(tea, _), Tea); .print("tea: ", Tea);
                   .send(bob, askOne, stock(X), Stock, 1000); .print("stock: ", Stock);
                   .send(bob, askAll, price(_, _), All); .print("all: ", All).
    """,
    )
    society.add(
        "bob",
        """
        price(beer, 3).
        +?price(gin, P)[source(S)] <- .print("asked by ", S); !lookup(gin, P).
        +?price(rum, P) <- .fail.
        +?price(water, 0).
        +!lookup(_, P) <- .wait(5); P = 12.
        +?stock(N) : price(beer, P) <- N = P * 10.
    """,
    )
    society.run_until("alice: all: ", timeout=5)
    assert society.printed == [
        "alice: beer: price(beer,3)[source(bob)]",
        "bob: asked by alice",
        "alice: gin: price(gin,12)[source(bob)] 12",
        "alice: rum: false",
        "alice: tea: false",
        "alice: stock: stock(30)[source(bob)]",
        "alice: all: [price(beer,3)[source(bob)]]",
    ]
    bob = society.agents["bob"]
    [failed] = bob.failures  # the +?price(rum, P) plan's intention, dropped: answered untell
    assert failed["trigger"].startswith("+?price(rum,") and failed["trigger"].endswith("[source(alice)]")
    assert bob.belief_texts() == ["price(beer,3)[source(self)]"]


def test_ask_one_answered_by_a_plan_asynchronously_becomes_a_belief() -> None:
    society = Society()
    alice = society.add(
        "alice",
        """
        !start.
        +!start <- .send(bob, askOne, price(gin, _)).
        +price(I, P)[source(S)] <- .print(S, " answered ", I, " ", P).
    """,
    )
    society.add("bob", "+?price(gin, 12).")
    society.run()
    assert society.printed == ["alice: bob answered gin 12"]
    assert alice.belief_texts() == ["price(gin,12)[source(bob)]"]


def test_a_failure_plan_handles_an_ask_nobody_answers() -> None:
    """The team protocol's shape: ask with a timeout; a -!g plan when the answer does not
    unify (untell's false, or timeout), and the caller's intention goes on."""
    society = Society()
    society.add(
        "alice",
        """
        !start.
        +!start <- !fetch(bob); !fetch(carl); !fetch(nobody); .print("done").
        +!fetch(A) <- .send(A, askOne, policy(P), policy(P), 50); .print(A, " gave ", P).
        -!fetch(A)[error(E)] <- .print(A, " gave nothing: ", E).
    """,
    )
    society.add("bob", '+?policy("1,2").')
    society.add("carl", "")
    society.run_until("alice: done", timeout=5)
    assert society.printed == [
        "alice: bob gave 1,2",
        "alice: carl gave nothing: ask_failed",
        "alice: nobody gave nothing: ask_failed",
        "alice: done",
    ]


def test_ask_timeout_unifies_timeout() -> None:
    society = Society()
    alice = society.add(
        "alice",
        """
        !start.
        +!start <- .send(nobody, askOne, x, A, 10); .print("answer ", A).
    """,
    )
    alice.run()
    assert society.printed == ["alice: answer timeout"]


def test_asynchronous_ask_answer_becomes_a_belief() -> None:
    society = Society()
    alice = society.add(
        "alice",
        """
        !start.
        +!start <- .send(bob, askOne, price(beer, _)).
        +price(I, P)[source(S)] <- .print(S, " answered ", I, " ", P).
    """,
    )
    society.add("bob", "price(beer, 3).")
    society.run()
    assert society.printed == ["alice: bob answered beer 3"]
    assert alice.belief_texts() == ["price(beer,3)[source(bob)]"]


def test_trust_predicate_refuses_strangers() -> None:
    society = Society(trusted={"bob": {"alice"}})
    society.add("alice", "!s. +!s <- .send(bob, tell, fact(1)).")
    society.add("mallory", "!s. +!s <- .send(bob, tell, fact(2)); .send(bob, achieve, obey).")
    bob = society.add("bob", '+!obey <- .print("obeyed").')
    society.run()
    assert bob.belief_texts() == ["fact(1)[source(alice)]"]
    assert bob.refused == 2
    assert society.printed == []


def test_tell_how_ask_how_untell_how() -> None:
    society = Society()
    alice = society.add(
        "alice",
        """
        @hello +!hello(N) <- .print("hello ", N).
    """,
    )
    bob = society.add(
        "bob",
        """
        !start.
        +!start <- .send(alice, askHow, {+!hello(_)}, Plans); .print("got ", Plans);
                   .send(carl, tellHow, Plans).
    """,
    )
    carl = society.add("carl", "")
    society.run()
    # Jason's answer: plan terms, their label's source the teller (Jason renames X as _59)
    assert society.printed == [
        'bob: got [{ @hello[source(alice),url("file:alice.asl")] +!hello(N) <- .print("hello ",N) }]'
    ]
    carl.post_goal(parse_goal("hello(1)"))
    society.run()
    assert society.printed[-1] == "carl: hello 1"
    carl.deliver(bob.name_term, "untellHow", "hello")  # its one source (bob, the teller) goes, and the plan
    society.run()
    carl.post_goal(parse_goal("hello(2)"))
    society.run()
    assert carl.failures and carl.failures[-1]["error"] == "no_relevant"
    assert alice and bob


def test_unachieve_drops_the_intention() -> None:
    society = Society()
    bob = society.add("bob", '+!work <- .print("working"); .wait(50); .print("never").')
    bob.deliver("alice", "achieve", "work")
    society.run()
    bob.deliver("alice", "unachieve", "work")
    bob.run()
    assert society.printed == ["bob: working"]


# -- host hooks --------------------------------------------------------------------------------
class Recorder(Listener):
    def __init__(self) -> None:
        self.seen: list[tuple] = []

    def belief_added(self, agent: Any, belief: Any, source: Any) -> None:
        self.seen.append(("+", term_str(belief), term_str(source)))

    def belief_removed(self, agent: Any, belief: Any, source: Any) -> None:
        self.seen.append(("-", term_str(belief), term_str(source)))

    def goal_added(self, agent: Any, goal: Any, new_intention: bool) -> None:
        self.seen.append(("goal", term_str(goal), new_intention))

    def intention_started(self, agent: Any, plan: str, trigger: str, source: Any) -> None:
        self.seen.append(("start", plan, trigger))

    def intention_ended(self, agent: Any, plan: str) -> None:
        self.seen.append(("end", plan))

    def intention_failed(self, agent: Any, report: dict) -> None:
        self.seen.append(("fail", report["plan"], report["error"]))

    def action_executed(self, agent: Any, name: str, args: tuple, result: Any) -> None:
        self.seen.append(("action", name, args, result))


def test_listener_sees_beliefs_goals_plans_actions_and_failures() -> None:
    actions = Actions()
    actions.add_function(".double", (None,), lambda x: 2 * x)
    agent = Agent(
        "a",
        parse_text("""
        !start.
        @s +!start <- .double(2, X); +b(X); !sub; -b(X); !bad.
        @sub +!sub <- true.
        @bad +!bad <- .fail.
    """),
        actions,
        Capture(),
        start=False,
    )
    recorder = Recorder()
    agent.set_listener(recorder)
    agent.start()
    agent.run()
    assert recorder.seen == [
        ("goal", "start[source(self)]", True),
        ("start", "s", "+!start[source(self)]"),
        ("action", ".double", (2,), 4),
        ("+", "b(4)[source(self)]", "self"),
        ("goal", "sub[source(self)]", False),
        ("start", "sub", "+!sub[source(self)]"),
        ("end", "sub"),
        ("-", "b(4)[source(self)]", "self"),
        ("goal", "bad[source(self)]", False),
        ("start", "bad", "+!bad[source(self)]"),
        ("fail", "bad", "ia_failed"),
    ]
    agent.set_listener(None)
    assert "_bb_add" not in agent.__dict__


def test_a_listener_chooses_how_triggers_read_and_a_failure_reports_its_frames() -> None:
    class Bare(Recorder):
        def trigger_text(self, op: str, event: Any) -> str:
            return op + event.functor

    host = Capture()
    agent = Agent("a", parse_text("!a.\n@a +!a <- !b.\n@b +!b <- .fail."), Actions(), host, start=False)
    recorder = Bare()
    agent.set_listener(recorder)
    agent.start()
    agent.run()
    assert [s for s in recorder.seen if s[0] == "start"] == [("start", "a", "+!a"), ("start", "b", "+!b")]
    assert host.dropped[0]["frames"] == ["b", "a"]


def test_percepts_replace_and_drop() -> None:
    agent = Agent("a", parse_text('+state(S) <- .print("state ", S).'), Actions(), Capture())
    agent.replace_percept("state", (1,))
    agent.replace_percept("state", (2,))
    agent.run()
    assert agent.belief_texts() == ["state(2)[source(percept)]"]
    assert agent.host.printed == ["state 1", "state 2"]  # type: ignore[attr-defined]
    agent.drop_percepts("state", 1)
    assert agent.belief_texts() == []


def test_environment_action_through_the_host() -> None:
    class Env(Capture):
        def act(self, agent: Agent, action: Any) -> bool:
            self.printed.append("act " + term_str(action))
            return action.functor != "jump"

    host = Env()
    agent = Agent(
        "a",
        parse_text("""
        !start.
        +!start <- move(north); jump; .print("never").
        -!start[error(E)] <- .print("failed: ", E).
    """),
        Actions(),
        host,
    )
    agent.run()
    assert host.printed == ["act move(north)", "act jump", "failed: action_failed"]

"""BDI message bodies (bdi.wire): spade_bdi's wire format, read by the runtime's parser
(spade_bdi split bodies on commas: ``hello(7,"a, b")`` arrived with three arguments)."""

from __future__ import annotations

import pytest

from bdi_rl.bdi.runtime.terms import LVar, Struct, atom, is_ground
from bdi_rl.bdi.wire import KEYWORDS, MAX_BODY_CHARS, WireError, format_body, format_literal, parse_body, parse_literal

S = Struct

ROUND_TRIP = [
    S("hello", (7, "a, b")),
    S("hazard", (3, 5)),
    atom("noargs"),
    S("f", (S("g", (S("h", (1,)),)), (1, 2, (3,)), 'say "hi"', -2.5, atom("atom"))),
    S("nested", (S("a", (atom("b"), atom("c"))), (atom("x"), "s, (t)"))),
    S("unicode", ("café ✓",)),
    S("empty", ((), "")),
    S("adopt_policy_of", ("learner-3@localhost",)),  # peers travel as JID strings
    S("experience", ("0,1,0,4,0;4,2,1,15,1",)),
    S("neg", (-3, 0.5, 1e-7)),
    S("~strong", (1,)),
]


@pytest.mark.parametrize("term", ROUND_TRIP, ids=str)
def test_literals_round_trip(term):
    assert parse_literal(format_literal(term)) == term


def test_outside_client_body_keeps_its_arity():
    term = parse_literal('hello(7,"a, b")')
    assert term.functor == "hello" and term.args == (7, "a, b")
    assert format_literal(term) == 'hello(7, "a, b")'  # as bdi-rl's traces have always shown it


@pytest.mark.parametrize(
    "term", [S("adopt", (atom("learner-3@localhost"),)), atom("bad-name"), S("p", ((atom("Ok"),),))], ids=str
)
def test_terms_that_could_not_be_read_back_are_not_sent(term):
    """A JID as an atom would arrive as ``learner - 3 @ ...``: refuse it at the sender."""
    with pytest.raises(WireError, match="not an AgentSpeak atom; send it as a string"):
        format_literal(term)


@pytest.mark.parametrize("word", sorted(KEYWORDS))
def test_a_keyword_is_not_sent_as_an_atom(word):
    """``if``, ``div`` ... read back as the parser's keywords, not as the atom sent."""
    with pytest.raises(WireError, match=f"'{word}' is a keyword, not an atom; send it as a string"):
        format_literal(S("p", (atom(word),)))
    assert parse_literal(format_literal(S("p", (word,)))) == S("p", (word,))  # as a string it travels


def test_sender_cannot_forge_its_source():
    term = parse_literal("q(1)[source(coordinator), urgent]")
    assert term.annots == frozenset([atom("urgent")])
    assert parse_body("achieve", "go[source(coordinator)]").annots == frozenset()


def test_an_asks_source_is_part_of_its_query():
    """``policy(P)[source(self)]`` asks for the receiver's own belief, not one it was told:
    in an ask, ``source(...)`` claims nothing about the sender."""
    query = parse_body("askOne", "policy(P)[source(self)]")
    assert query.annots == frozenset([S("source", (atom("self"),))])


@pytest.mark.parametrize(
    "body, reason",
    [
        ("", "empty"),
        ("hello(", "not an AgentSpeak literal"),
        ("p(X)", "ground"),
        ("a. b", "exactly one literal"),
        ("+!x <- .rl_reset", "exactly one literal"),
        ("!go", "exactly one literal"),
        ('p(1) { include("/etc/passwd") }', "exactly one literal"),
        ("x" * (MAX_BODY_CHARS + 1), "exceeds"),
        ('"just a string"', "not an AgentSpeak literal"),
        ("[a, b]", "not an AgentSpeak literal"),
        ("p(\x01)", "illegal character"),
        ("a(" * 2000 + "1" + ")" * 2000, "nested too deeply"),
    ],
)
def test_bad_bodies_are_refused(body, reason):
    with pytest.raises(WireError, match=reason):
        parse_literal(body)


def test_an_ask_may_hold_variables_and_they_travel_by_name():
    query = parse_body("askOne", "value(X, _, X)")
    x, anon, x2 = query.args
    assert type(x) is LVar and x is x2 and type(anon) is LVar and not is_ground(query)
    assert format_body("askAll", query) == "value(X, _, X)"


def test_answers_are_any_term():
    assert parse_body("tell", "[a(1), a(2)]", reply=True) == (S("a", (1,)), S("a", (2,)))
    assert parse_body("untell", "value(X)", reply=True).functor == "value"
    assert format_body("tell", (S("a", (1,)), S("a", (2,)))) == "[a(1), a(2)]"


def test_plans_travel_as_their_source():
    plans = ("@a +!g(X) : b(X) <- .print(X).", "+!h <- true.")
    body = format_body("tellHow", plans)
    assert parse_body("tellHow", body) == plans
    assert parse_body("askHow", "+!g(_)") == "+!g(_)"
    assert parse_body("untellHow", "[a, b]") == (atom("a"), atom("b"))


@pytest.mark.parametrize(
    "performative, body, reason",
    [
        ("tellHow", "p(1).", "plans only"),
        ("tellHow", '{ include("lib/x.asl") }\n+!g <- true.', "no include"),
        ("tellHow", "+!g <- ", "not AgentSpeak plans"),
        ("askHow", "+!g <- true", "one trigger"),
        ("untellHow", "f(1)", "label"),
        ("askOne", "[X]", "not an AgentSpeak literal"),
        ("explode", "p(1)", "unknown ilf_type"),
    ],
)
def test_bodies_of_the_other_performatives_are_checked(performative, body, reason):
    with pytest.raises(WireError, match=reason):
        parse_body(performative, body)

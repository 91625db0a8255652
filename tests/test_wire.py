"""BDI message bodies round-trip through the AgentSpeak parser (spade_bdi's splitting does not)."""

from __future__ import annotations

import agentspeak as asp
import pytest
from spade_bdi.utils import parse_literal as spade_bdi_parse

from bdi_rl.bdi.wire import MAX_BODY_CHARS, WireError, format_literal, parse_literal

L = asp.Literal

ROUND_TRIP = [
    L("hello", (7, "a, b")),
    L("hazard", (3, 5)),
    L("noargs"),
    L("f", (L("g", (L("h", (1,)),)), (1, 2, (3,)), 'say "hi"', -2.5, L("atom"))),
    L("nested", (L("a", (L("b"), L("c"))), (L("x"), "s, (t)"))),
    L("unicode", ("café ✓",)),
    L("empty", ((), "")),
    L("adopt_policy_of", ("learner-3@localhost",)),  # peers travel as JID strings
    L("experience", ("0,1,0,4,0;4,2,1,15,1",)),
]


@pytest.mark.parametrize("term", ROUND_TRIP, ids=str)
def test_literals_round_trip(term):
    assert parse_literal(format_literal(term)) == term


def test_outside_client_body_keeps_its_arity():
    """The case seen here: spade_bdi made three arguments of this; the parser makes two."""
    functor, args = spade_bdi_parse('hello(7,"a, b")')
    assert len(args) == 3  # the upstream bug this module exists for
    term = parse_literal('hello(7,"a, b")')
    assert term.functor == "hello" and term.args == (7, "a, b")


@pytest.mark.parametrize("term", [L("adopt", (L("learner-3@localhost"),)), L("bad-name"),
                                  L("p", ((L("Ok"),),))], ids=str)
def test_terms_that_could_not_be_read_back_are_not_sent(term):
    """A JID as an atom would arrive as ``learner - 3 @ ...``: refuse it at the sender."""
    with pytest.raises(WireError, match="not an AgentSpeak atom; send it as a string"):
        format_literal(term)


def test_sender_cannot_forge_its_source():
    term = parse_literal("q(1)[source(coordinator), urgent]")
    assert term.annots == frozenset([L("urgent")])


@pytest.mark.parametrize(
    "body, reason",
    [
        ("", "empty"),
        ("hello(", "not an AgentSpeak literal"),
        ("p(X)", "ground"),
        ("a. b", "exactly one literal"),
        ("+!x <- .rl_reset", "exactly one literal"),
        ("!go", "exactly one literal"),
        ("x" * (MAX_BODY_CHARS + 1), "exceeds"),
        ('"just a string"', "not an AgentSpeak literal"),
    ],
)
def test_bad_bodies_are_refused(body, reason):
    with pytest.raises(WireError, match=reason):
        parse_literal(body)

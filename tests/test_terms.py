"""Terms as Jason 3.2 reads, orders and prints them (bdi_rl.bdi.runtime.terms, the parser).

The corpus (tests/jason/) holds whole programs with Jason's recorded output; these are the
rules underneath, each checked against values Jason itself printed: Java's ``Double.toString``,
the standard order of terms, annotations walked in order, and the parser's refusals at
Jason's line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bdi_rl.bdi.runtime.errors import AslSyntaxError
from bdi_rl.bdi.runtime.parser import parse_text
from bdi_rl.bdi.runtime.planterms import PlanTerm, plan_of, term_of
from bdi_rl.bdi.runtime.terms import (
    ORDER_KEY,
    LVar,
    Struct,
    atom,
    number_str,
    sorted_annots,
    term_str,
    unify,
)
from bdi_rl.bdi.runtime.triggers import ADD_ACH, trigger_of
from bdi_rl.bdi.text import term_text
from bdi_rl.bdi.wire import format_literal, parse_literal

S = Struct

# (value, what Jason 3.2.2 printed for it), from NumberTermImpl.toString on Java 17
JAVA_NUMBERS = [
    (3.0, "3"),
    (0.1, "0.1"),
    (1e-5, "1.0E-5"),
    (0.0001, "1.0E-4"),
    (0.001, "0.001"),
    (12345678.9, "1.23456789E7"),
    (1e7, "10000000"),
    (1.5e10, "15000000000"),
    (1.5e-10, "1.5E-10"),
    (1 / 3, "0.3333333333333333"),
    (0.1 * 3, "0.30000000000000004"),
    (-0.5, "-0.5"),
    (10**20, "1.0E20"),
    (2**64, "1.8446744073709552E19"),
    (9007199254740993, "9007199254740992"),
    (123456789012345678, "123456789012345680"),
    (float("inf"), "Infinity"),
    (float("-inf"), "-Infinity"),
    (float("nan"), "NaN"),
    (5e-324, "4.9E-324"),
    (2.0**63, "9223372036854775807"),
    (1000000.5, "1000000.5"),
]


@pytest.mark.parametrize("value, printed", JAVA_NUMBERS, ids=[p for _, p in JAVA_NUMBERS])
def test_numbers_print_as_jason_prints_its_doubles(value: float, printed: str) -> None:
    assert number_str(value) == printed
    assert term_str(S("f", (value,))) == f"f({printed})"
    assert term_text(S("f", (value,))) == f"f({printed})"  # the trace and the wire too


def test_the_standard_order_of_terms() -> None:
    """Jason's .sort: numbers, strings, lists, then atoms and structures (functor, then the
    arguments before the arity), ``~a`` after every ``a(...)``; as recorded in tests/jason/."""
    terms = [
        S("f", (2,)),
        S("f", (1,)),
        atom("g"),
        atom("a"),
        "s",
        3,
        (1,),
        S("a", (1, 1)),
        S("a", (3,)),
        atom("~a"),
        (),
        -1.5,
        "b s",
    ]
    ordered = sorted(terms, key=ORDER_KEY)
    assert term_str(tuple(ordered)) == '[-1.5,3,"b s","s",[],[1],a,a(1,1),a(3),~a,f(1),f(2),g]'


def test_annotations_are_sorted_whatever_the_hash_seed() -> None:
    """A set's order follows Python's string hashes; the printed form must not (Jason keeps
    annotations sorted). Three processes with other seeds print the same."""
    script = (
        "from bdi_rl.bdi.runtime.terms import Struct, atom, term_str\n"
        "a = [atom(n) for n in 'zebra apple mango kiwi'.split()] + [Struct('source', (atom('bob'),)), 10, 9]\n"
        "print(term_str(Struct('b', (1,), frozenset(a))))\n"
    )
    printed = set()
    for seed in ("1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
        printed.add(done.stdout.strip())
    assert printed == {"b(1)[9,10,apple,kiwi,mango,source(bob),zebra]"}


def test_an_annotation_variable_binds_the_first_annotation_in_order() -> None:
    """``b[source(S)]`` against ``b[source(zed), source(al)]``: S is al (Jason's walk)."""
    s_var = LVar("S")
    pattern = S("b", (), frozenset([S("source", (s_var,))]))
    target = S("b", (), frozenset([S("source", (atom("zed"),)), S("source", (atom("al"),)), atom("x")]))
    assert unify(pattern, target, []) and term_str(s_var) == "al"
    assert sorted_annots(target.annots)[0] == S("source", (atom("al"),))


@pytest.mark.parametrize(
    "source, line, says",
    [
        ("!start.\n+!start <- .print(a)\n  .print(b).\n", 3, "unexpected '.print', expected '.' or ';'"),
        ("!start.\n+!start\n  .print(a).\n", 3, "unexpected '.print'"),
        ("b(if).\n", 1, "unexpected 'if', expected a term"),
        ("!start.\n+!start <- X = a + 1.\n", 2, "the operand 'a' of '+' is not numeric or variable"),
        ("!start.\n+!start <- if (a \\= b) { .print(x) }.\n", 2, "Jason has no \\="),
        ("!start.\n+!start : .wait(10) <- .print(x).\n", 2, ".wait cannot be used in a plan's context"),
        ("!G.\n", 1, "unexpected 'G'"),
        ("@l(1) +!g <- .print(x).\n", 1, "unexpected '('"),
        ("b('it''s').\n", 1, "unexpected"),
        ("@l +!g <- .print(a).\n@l +!h <- .print(b).\n", 2, "there already is a plan with label l (p.asl:1)"),
    ],
    ids=[
        "missing-semicolon",
        "missing-arrow",
        "if-as-atom",
        "arith-on-atom",
        "backslash-eq",
        "wait-in-context",
        "variable-goal",
        "label-args",
        "quote-in-quote",
        "label-twice",
    ],
)
def test_what_jason_refuses_is_refused_at_its_line(source: str, line: int, says: str) -> None:
    with pytest.raises(AslSyntaxError) as refused:
        parse_text(source, "p.asl")
    message = str(refused.value)
    assert message.startswith(f"p.asl:{line}:") and says in message


@pytest.mark.parametrize(
    "source",
    [
        "b(true, false, begin, end, include).\n",
        "'Hello World'(1). c('x y').\n",
        "p([H|T]) :- q(H, T).\nlast([X], X).\n",
        "+!g : b[source(S)|R] <- .print(S, R).\n",
        "-!G[error(E)] <- .print(G, E).\n",
        "+!g <- P = {+!h(X) : X > 1 <- .print(X)}; T = {+!h(_)}; !G; X = .length([a]) + 1.\n",
        "{ begin namespace(ns) }\nb(1).\n{ end }\n+!g <- ?ns::b(X).\n",
        "+!g <- if (true) { .print(a) } .print(b).\n",
    ],
)
def test_what_jason_accepts_is_accepted(source: str) -> None:
    parse_text(source, "p.asl")


def test_strings_read_as_jason_reads_them_and_the_wire_reads_its_own() -> None:
    """In a plan file only ``\\n`` and ``\\"`` are escapes (Jason); a message body is bdi-rl's
    text, which escapes every backslash, so it reads back exactly."""
    program = parse_text('b("a\\tb", "q\\"d", "x\\\\y").\n', "p.asl")
    assert [a.value for a in program.beliefs[0].args] == ["a\\tb", 'q"d', "x\\\\y"]
    term = S("b", ("a\\tb", 'q"d', "line\nbreak\r", "back\\"))
    assert parse_literal(format_literal(term)) == term
    assert term_str(S("f", ('quote " inside',))) == 'f("quote " inside")'  # Jason prints no escapes


@pytest.mark.parametrize(
    "term",
    [
        S("&", (atom("a"), atom("b"))),
        S("not", (atom("a"),)),
        S("<", (1, 2)),
        atom("'Hello World'"),
        S("ns::b", (1,)),
        S("b", (1,), frozenset([atom("z"), atom("a"), S("m", (2,))])),
    ],
    ids=str,
)
def test_what_the_runtime_prints_reads_back_over_the_wire(term: Struct) -> None:
    assert parse_literal(format_literal(term)) == term


def test_operators_and_arithmetic_print_infix() -> None:
    y = LVar("Y")
    assert term_str(S("&", (atom("a"), S("|", (atom("b"), atom("c")))))) == "(a & (b | c))"
    assert term_str(S("not", (atom("a"),))) == "not (a)"
    assert term_str(S("+", (y, 1))) == "(Y+1)"  # arithmetic with an unbound operand stays a term
    y.ref = 2
    assert term_str(S("+", (y, 1))) == "3"  # and is evaluated once it has a value


def test_plan_terms_turn_into_plans_and_back() -> None:
    """What .add_plan, .relevant_plans and tellHow use (planterms)."""
    plan = plan_of('+!g(X) : X > 1 <- .print("big ", X).')
    term = term_of(plan)
    assert isinstance(term, PlanTerm)
    assert term_str(term) == '{ +!g(X) : (X > 1) <- .print("big ",X) }'
    assert plan_of(term) == plan
    assert term.source() == '+!g(X) : (X > 1) <- .print("big ",X).'
    ttype, literal = trigger_of("+!g(_)")
    assert ttype == ADD_ACH and literal.functor == "g" and len(literal.args) == 1


def test_nan_and_infinity_travel_over_the_wire() -> None:
    """They have no literal (Jason prints ``NaN``, which reads as a variable): a message
    carries the arithmetic that makes them."""
    sent = S("r", (float("nan"), float("inf"), -float("inf"), 1.5))
    assert format_literal(sent) == "r((0/0), (1/0), (-1/0), 1.5)"
    assert term_str(parse_literal(format_literal(sent))) == "r(NaN,Infinity,-Infinity,1.5)"

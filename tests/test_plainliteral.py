"""The fast reader of plain message bodies gives exactly the term the parser and the plan
compiler give, types included, and leaves everything else to them (issue 33: the climbing game
spent a quarter of its run parsing ``intends(498, 0, 1)``-like bodies with lark)."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bdi_rl.bdi.plainliteral import read_plain
from bdi_rl.bdi.runtime.terms import UNBOUND, Struct, resolve
from bdi_rl.bdi.runtime.unify import Scope, TermCompiler
from bdi_rl.bdi.wire import WireError, _parse_expr, parse_body
from tests.fuzzing import examples

FUZZ = settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])

atoms = st.from_regex(r"[a-z][A-Za-z0-9_]{0,6}", fullmatch=True)
numbers = st.one_of(
    st.integers(-(10**12), 10**12).map(str),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.4f}"),
    st.sampled_from(["007", "-0", "- 3", "1.50", "-0.0"]),
)
strings = st.text(st.characters(blacklist_characters='"\\\n\r', blacklist_categories=("Cs",)), max_size=8).map(
    lambda s: f'"{s}"'
)
blanks = st.sampled_from(["", " ", "  ", "\t"])
_KEYWORD = re.compile(r"\b(div|mod|not|if|elif|else|while|for|begin|end)\b")


def _literal(args: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    called = st.builds(
        lambda f, xs, b: f"{f}({b}{', '.join(xs)})", atoms, st.lists(args, min_size=1, max_size=4), blanks
    )
    return st.one_of(atoms, called)


terms = st.recursive(
    st.one_of(atoms, numbers, strings),
    lambda inner: st.one_of(
        _literal(inner),
        st.lists(inner, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
    ),
    max_leaves=12,
)
plain_bodies = _literal(terms)


@FUZZ
@given(plain_bodies)
def test_a_plain_body_reads_as_the_parser_reads_it(body):
    fast = read_plain(body)
    try:
        parsed = _parse_expr(body)
    except WireError:
        assert fast is None  # a keyword where a term goes (a(div)): the parser's to refuse
        return
    if _KEYWORD.search(body) is None:  # the subset: every such body is read without the parser
        assert fast is not None, body
    if fast is not None:
        assert _same(fast, _compiled(parsed))  # the term a message carries, either way


def _compiled(expr):
    """The term the plan compiler builds of ``expr`` (what parse_body gave before plain
    bodies were made directly)."""
    scope = Scope()
    return resolve(TermCompiler(scope, "<message>").term(expr).build([UNBOUND] * scope.size))


def _same(a, b) -> bool:
    """Equal and of the same types all the way down (``1 == 1.0`` and ``0.0 == -0.0`` are not
    the same term to a plan that prints or tests them)."""
    if type(a) is not type(b):
        return False
    if type(a) is Struct:
        return a.functor == b.functor and a.annots == b.annots and _same(a.args, b.args)
    if type(a) is tuple:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return repr(a) == repr(b)


def _reads_as_the_parser(body: str) -> bool:
    return _same(read_plain(body), _compiled(_parse_expr(body)))


def test_a_plain_body_is_the_term_compiling_it_builds():
    body = 'p(1, -2.5, 1.0, "s", a, [], [b, [2]], f(g(-0.0)))'
    term = parse_body("tell", body)
    assert term == _compiled(_parse_expr(body))
    assert [type(a) for a in term.args] == [int, float, float, str, Struct, tuple, tuple, Struct]


@FUZZ
@given(st.text(alphabet=st.sampled_from(list('ab(X)[]1.0-," \\e_:~/*|+&\n')), max_size=24))
def test_any_text_the_fast_reader_takes_reads_the_same_with_the_parser(body):
    """Random text, mostly no literal: whatever the fast reader accepts, the parser reads to
    the same AST."""
    fast = read_plain(body.strip())
    if fast is not None:
        assert _same(fast, _compiled(_parse_expr(body.strip())))


@pytest.mark.parametrize(
    "body",
    ["intends(498, 0, 1)", "accepted([0, 0], 11)", 'a("x", -1.5, b, [], f(g))', "tell", "p(- 3, 1.50, 007)"],
)
def test_what_agents_tell_each_other_is_read_without_the_parser(body):
    assert read_plain(body) is not None and _reads_as_the_parser(body)


@pytest.mark.parametrize(
    "body",
    ["a(X)", "a(1e5)", "a(div)", "a()", "a(1+2)", "a[s]", "~a", "ns::a(1)", "a('q')", "a.b", 'a("\\n")', "a(\n1)"],
)
def test_anything_else_goes_to_the_parser(body):
    assert read_plain(body) is None


def test_a_bad_body_is_still_refused_by_the_parser_with_its_reason():
    with pytest.raises(WireError, match="unexpected"):
        parse_body("tell", "a()")
    with pytest.raises(WireError, match="ground"):
        parse_body("tell", "a(X)")

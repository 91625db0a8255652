"""A fast reader for the plain literals agents tell each other, beside the full parser.

Most message bodies are one ground literal of atoms, numbers, strings and lists
(``intends(498, 0, 1)``, ``accepted([0, 0], 11)``); the climbing game's two players exchange
~1,000 of them a run, each different, and lark's LALR parser took ~1.3 ms apiece: a quarter of
the run (profiled). :func:`read_plain` reads that subset in a few microseconds and gives the
very term the parser and the plan compiler give (``tests/test_plainliteral.py`` holds the two
to each other over generated bodies, types included); anything outside it (variables,
operators, annotations, escapes, comments, exponents, quoted or dotted atoms, keywords, line
breaks) returns None and goes to the parser, which also says what is wrong with a body that
is no literal.

The body is split into tokens by one regular expression in C (``findall``; a character
outside every token is a token of its own kind, which makes the body not plain), and the
term is built from them directly: reading tokens one ``match`` at a time into the parser's AST, then the AST into a
term, took ~9 µs of a ~12 µs ``intends(498, 0, 1)``.
"""

from __future__ import annotations

import re
from typing import Any

from bdi_rl.bdi.runtime.terms import Struct, atom

_TOKENS = re.compile(
    r"[ \t]*(?:"
    r"([-(),\[\]])"  # punctuation
    r"|([a-z][A-Za-z0-9_]*)"  # an atom
    r"|([0-9][0-9.eE]*)"  # a number (checked below: no exponent, one point at most)
    r'|("[^"\\\n\r]*")'  # a string, quotes kept (so that "" is told from no string)
    r"|([\s\S])"  # anything else: not plain
    r")"
)
"""Each token's (punct, atom, number, string, other); the groups that did not match are
empty. Every character of a body is in some token, so one ``findall`` splits it whole."""
#: A number the parser reads as a float (an integer is all digits).
_FLOAT = re.compile(r"[0-9]+\.[0-9]+")
#: Words the grammar reserves (operators, control keywords) or reads otherwise as a term.
_KEYWORDS = frozenset({"div", "mod", "not", "if", "elif", "else", "while", "for", "begin", "end"})
#: Deeper nesting goes to the parser (which bounds recursion itself).
_MAX_DEPTH = 64

_Token = tuple[str, str, str, str, str]


class _NotPlain(Exception):
    """The body is outside the subset: the full parser reads it."""


def read_plain(text: str) -> Struct | None:
    """The term of ``text`` (one literal, stripped, without its final ``.``) as the parser and
    the plan compiler make it, if it is a plain literal; else None."""
    tokens: list[_Token] = _TOKENS.findall(text)
    try:
        literal, at = _literal(tokens, 0, 0)
    except (_NotPlain, IndexError):
        return None
    return literal if at == len(tokens) else None


def _literal(tokens: list[_Token], at: int, depth: int) -> tuple[Struct, int]:
    functor = tokens[at][1]
    if not functor or functor in _KEYWORDS or depth > _MAX_DEPTH:
        raise _NotPlain
    at += 1
    if at < len(tokens) and tokens[at][0] == "(":
        args, at = _items(tokens, at + 1, ")", depth)
        if not args:  # a() is a syntax error: the parser says so
            raise _NotPlain
        return Struct(functor, args), at
    return atom(functor), at


def _items(tokens: list[_Token], at: int, close: str, depth: int) -> tuple[tuple[Any, ...], int]:
    """Comma-separated terms up to ``close``; ``at`` is past the opening bracket."""
    items: list[Any] = []
    if tokens[at][0] == close:
        return (), at + 1
    while True:
        term, at = _term(tokens, at, depth + 1)
        items.append(term)
        punct = tokens[at][0]
        if punct == ",":
            at += 1
        elif punct == close:
            return tuple(items), at + 1
        else:
            raise _NotPlain


def _term(tokens: list[_Token], at: int, depth: int) -> tuple[Any, int]:
    punct, name, number, string, _ = tokens[at]
    if number:
        return _number(number), at + 1
    if string:
        return string[1:-1], at + 1
    if name:
        return _literal(tokens, at, depth)
    if punct == "-":  # a negative number, as the parser folds it
        number = tokens[at + 1][2]
        if not number:
            raise _NotPlain
        return -_number(number), at + 2
    if punct == "[":
        return _items(tokens, at + 1, "]", depth)
    raise _NotPlain


def _number(text: str) -> int | float:
    if text.isdigit():
        return int(text)
    if _FLOAT.fullmatch(text) is not None:
        return float(text)
    raise _NotPlain  # an exponent (1e5), 1.2.3, 1.: the parser's

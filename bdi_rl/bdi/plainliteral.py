"""A fast reader for the plain literals agents tell each other, beside the full parser.

Most message bodies are one ground literal of atoms, numbers, strings and lists
(``intends(498, 0, 1)``, ``accepted([0, 0], 11)``); the climbing game's two players exchange
~1,000 of them a run, each different, and lark's LALR parser took ~1.3 ms apiece: a quarter of
the run (profiled). :func:`read_plain` reads that subset in a few microseconds and gives the
very AST the parser gives (``tests/test_plainliteral.py`` holds the two to each other over
generated bodies); anything outside it (variables, operators, annotations, escapes, comments,
exponents, quoted or dotted atoms, keywords, line breaks) returns None and goes to the parser,
which also says what is wrong with a body that is no literal.
"""

from __future__ import annotations

import re

from bdi_rl.bdi.runtime.syntax import Const, Expr, ListExpr, Lit

#: One token of the subset: its kind is the name of the group that matched.
_TOKEN = re.compile(
    r"[ \t]*(?:"
    r"(?P<atom>[a-z][A-Za-z0-9_]*)"
    r"|(?P<float>[0-9]+\.[0-9]+)(?![eE0-9.])"
    r"|(?P<int>[0-9]+)(?![eE0-9.])"
    r'|"(?P<string>[^"\\\n\r]*)"'
    r"|(?P<punct>[-(),\[\]])"
    r")"
)
#: Words the grammar reserves (operators, control keywords) or reads otherwise as a term.
_KEYWORDS = frozenset({"div", "mod", "not", "if", "elif", "else", "while", "for", "begin", "end"})
#: Deeper nesting goes to the parser (which bounds recursion itself).
_MAX_DEPTH = 64


class _NotPlain(Exception):
    """The body is outside the subset: the full parser reads it."""


def read_plain(text: str) -> Lit | None:
    """The parser's AST of ``text`` (one literal, stripped, without its final ``.``) if it is a
    plain literal, else None."""
    tokens: list[tuple[str, str]] = []
    pos, end = 0, len(text)
    while pos < end:
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            return None
        kind = match.lastgroup or ""  # each alternative is a named group
        tokens.append((kind, match.group(kind)))
        pos = match.end()
    try:
        literal, at = _literal(tokens, 0, 0)
    except (_NotPlain, IndexError):
        return None
    return literal if at == len(tokens) else None


def _literal(tokens: list[tuple[str, str]], at: int, depth: int) -> tuple[Lit, int]:
    kind, value = tokens[at]
    if kind != "atom" or value in _KEYWORDS or depth > _MAX_DEPTH:
        raise _NotPlain
    at += 1
    if at < len(tokens) and tokens[at] == ("punct", "("):
        args, at = _items(tokens, at + 1, ")", depth)
        if not args:  # a() is a syntax error: the parser says so
            raise _NotPlain
        return Lit(value, args, line=1), at
    return Lit(value, line=1), at


def _items(tokens: list[tuple[str, str]], at: int, close: str, depth: int) -> tuple[tuple[Expr, ...], int]:
    """Comma-separated terms up to ``close``; ``at`` is past the opening bracket."""
    items: list[Expr] = []
    if tokens[at] == ("punct", close):
        return (), at + 1
    while True:
        term, at = _term(tokens, at, depth + 1)
        items.append(term)
        if tokens[at] == ("punct", ","):
            at += 1
        elif tokens[at] == ("punct", close):
            return tuple(items), at + 1
        else:
            raise _NotPlain


def _term(tokens: list[tuple[str, str]], at: int, depth: int) -> tuple[Expr, int]:
    kind, value = tokens[at]
    if kind == "int":
        return Const(int(value), line=1), at + 1
    if kind == "float":
        return Const(float(value), line=1), at + 1
    if kind == "string":
        return Const(value, line=1), at + 1
    if kind == "atom":
        return _literal(tokens, at, depth)
    if value == "-":  # a negative number, as the parser folds it
        kind, value = tokens[at + 1]
        if kind == "int":
            return Const(-int(value), line=1), at + 2
        if kind == "float":
            return Const(-float(value), line=1), at + 2
        raise _NotPlain
    if value == "[":
        items, at = _items(tokens, at + 1, "]", depth)
        return ListExpr(items, line=1), at
    raise _NotPlain

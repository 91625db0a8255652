"""Jason's string actions: ``.term2string .substring .upper_case .lower_case .replace``
(``.length``, ``.concat``, ``.reverse``, ``.delete``, ``.nth`` and ``.prefix``/``.suffix``
take strings too: stdlib_lists.py).

An argument that is not a string is read as its text (Jason's ``toString()``, the runtime's
one printer :func:`~bdi_rl.bdi.runtime.terms.term_str`); patterns are Java regular
expressions, as Jason's ``replaceAll`` reads them (:func:`replace_all`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import AslSyntaxError, AslTypeError, PlanFailure
from bdi_rl.bdi.runtime.parser import parse_expr
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.stdlib_core import action_error, is_free, java_error, standard, text_of, value
from bdi_rl.bdi.runtime.terms import UNBOUND, Trail, atom, term_str, undo
from bdi_rl.bdi.runtime.unify import Env, Scope, TermCompiler


def parse_term(text: str) -> Any:
    """``ASSyntax.parseTerm``: the term ``text`` reads as (its variables fresh), or, when it
    is no term, the atom of that text (as Jason's ``.term2string`` falls back)."""
    try:
        node = parse_expr(text)
        tc = TermCompiler(Scope(), "<term>")
        code = tc.term(node)
        return code.build([UNBOUND] * tc.scope.size)
    except (AslSyntaxError, AslTypeError, PlanFailure):  # no one term: an atom, as in Jason
        return atom(text)


@standard(".term2string", 2)
def _term2string(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.term2string(T, S)``: S the text of T, or T the term S reads as."""
    term, text = tc.term(node.args[0]), tc.term(node.args[1])

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        if not is_free(term, env):
            t = value(term, env)
            if is_free(text, env):
                return text.match(term_str(t), env, trail)
            written = value(text, env)
            if type(written) is str:
                return term_str(t) == written
            raise action_error("invalid case of term2string")
        written = value(text, env)
        return term.match(parse_term(text_of(written)), env, trail)

    return Query(first)


def _java_substring(text: str, start: int, end: int) -> str:
    if not 0 <= start <= end <= len(text):
        raise java_error()  # StringIndexOutOfBoundsException
    return text[start:end]


@standard(".substring", 2, 3, 4)
def _substring(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.substring(S, T)``: S occurs in T. ``.substring(S, T, P[, E])``: every position P
    where it occurs (E its last character's), or with P a number and S (or T) free, the
    part of T (or S) from P to E (the end)."""
    codes = [tc.term(a) for a in node.args]
    n = len(codes)

    def solve(ag: Any, env: Env, trail: Trail) -> Iterator[Any]:
        part, whole = text_of(value(codes[0], env)), text_of(value(codes[1], env))
        if n == 2:
            if part in whole:
                yield True
            return
        pos = None if is_free(codes[2], env) else value(codes[2], env)
        numeric = type(pos) is int or type(pos) is float
        for k, other in ((0, whole), (1, part)):
            if numeric and is_free(codes[k], env):
                start, end = int(pos), len(other)  # type: ignore[arg-type]
                if n == 4 and not is_free(codes[3], env):
                    last = value(codes[3], env)
                    if type(last) is int or type(last) is float:
                        end = int(last)
                mark = len(trail)
                if codes[k].match(_java_substring(other, start, end), env, trail):
                    yield True
                undo(trail, mark)
                return
        at = 0
        while at < len(whole):
            found = whole.find(part, at)
            if found < 0:
                return
            at = found + 1
            mark = len(trail)
            if codes[2].match(found, env, trail) and (n == 3 or codes[3].match(found - 1 + len(part), env, trail)):
                yield True
            undo(trail, mark)

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        for _ in solve(ag, env, trail):
            return True
        return False

    return Query(first, solve)


def _case(change: Callable[[str], str]) -> Callable[[QueryCompiler, s.Lit, TermCompiler], Query]:
    def compile_(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
        arg = tc.term(node.args[0])
        out = tc.term(node.args[1]).match
        return Query(lambda ag, env, trail: out(change(text_of(value(arg, env))), env, trail))

    return compile_


standard(".upper_case", 2)(_case(str.upper))
standard(".lower_case", 2)(_case(str.lower))


@standard(".replace", 4)
def _replace(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.replace(S, Pattern, With, R)``: Java's ``S.replaceAll(Pattern, With)``."""
    codes = [tc.term(a) for a in node.args]

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        text = text_of(value(codes[0], env))
        pattern, replacement = value(codes[1], env), value(codes[2], env)
        if type(pattern) is not str or type(replacement) is not str:
            raise java_error()  # ClassCastException: Jason casts both to strings
        return codes[3].match(replace_all(text, pattern, replacement), env, trail)

    return Query(first)


def replace_all(text: str, pattern: str, replacement: str) -> str:
    """Java's ``String.replaceAll``: ``pattern`` a regular expression, ``$1``/``${name}`` in
    ``replacement`` a group, ``\\x`` the character x. A pattern or replacement Java
    refuses is the action's Java exception."""
    try:
        regex = re.compile(pattern)
    except re.error:
        raise java_error() from None
    pieces = _replacement(replacement, regex.groups, set(regex.groupindex))

    def expand(match: re.Match[str]) -> str:
        return "".join(p if type(p) is str else (match.group(p[0]) or "") for p in pieces)

    return regex.sub(expand, text)


def _replacement(text: str, groups: int, names: set[str]) -> list[str | tuple[int | str]]:
    """Java's replacement string as literal pieces and group references (``(group,)``)."""
    pieces: list[str | tuple[int | str]] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            if i + 1 >= len(text):
                raise java_error()  # "character to be escaped is missing"
            pieces.append(text[i + 1])
            i += 2
        elif c == "$":
            i += 1
            if i < len(text) and text[i] == "{":
                close = text.find("}", i)
                name = text[i + 1 : close] if close > 0 else ""
                if close < 0 or name not in names:
                    raise java_error()
                pieces.append((name,))
                i = close + 1
                continue
            if i >= len(text) or not text[i].isdigit():
                raise java_error()  # "Illegal group reference"
            number = int(text[i])
            i += 1
            while i < len(text) and text[i].isdigit() and number * 10 + int(text[i]) <= groups:
                number = number * 10 + int(text[i])
                i += 1
            if number > groups:
                raise java_error()  # "No group n"
            pieces.append((number,))
        else:
            pieces.append(c)
            i += 1
    return pieces

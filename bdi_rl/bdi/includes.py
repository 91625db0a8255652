"""Plan files that include others: ``{ include("lib/episode.asl") }``.

python-agentspeak 0.2.2 resolves an include beside the including file
(``os.path.join(os.path.dirname(including), name)``) and parses it in place: its beliefs,
rules, goals and plans are appended where the directive stands, and its plans keep their
labels and their own ``file:line``. It reports a missing included file, and a parse error in
one, naming that file; not the rest: an illegal character in an included file raises
``AttributeError`` (its lexer gets no log), a directory or a file that is not text is blamed
on the including file, and a cycle through ``./`` recurses up to Python's recursion limit.
:func:`include_problem` finds those first, resolving every include as the parser does, so
that :func:`bdi_rl.bdi.mind.load_mind` names the file that is wrong.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import agentspeak as asp
import agentspeak.lexer

#: Includes nested deeper than this are refused.
MAX_DEPTH = 16


class _FirstLexerError:
    """The one part of ``agentspeak.Log`` the lexer uses: keeps its first error, as one line."""

    def __init__(self) -> None:
        self.first: str | None = None

    def error(self, message: str, *args: Any, loc: Any = None, **_: Any) -> None:
        if self.first is None:
            text = message % args
            self.first = f"{loc.filename}:{loc.lineno}:{loc.startcol + 1}: {text}" if loc else text


def _scan(path: str) -> tuple[list[tuple[str, str]], str | None]:
    """The files ``path`` includes (resolved as the parser resolves them, each with where it is
    included) and the file's first lexer error. OSError and UnicodeDecodeError propagate."""
    log = _FirstLexerError()
    with open(path) as source:  # as the parser opens it (the locale's encoding)
        tokens = list(agentspeak.lexer.tokenize(source, log))
    return list(_includes(path, tokens)), log.first


def _includes(path: str, tokens: list[Any]) -> Iterator[tuple[str, str]]:
    for i in range(len(tokens) - 3):
        brace, keyword, paren, name = tokens[i : i + 4]
        if brace.lexeme == "{" and keyword.lexeme == "include" and paren.lexeme == "(" and name.token.string:
            included = os.path.join(os.path.dirname(path), asp.parse_string(name.lexeme))
            yield included, f"{name.loc.filename}:{name.loc.lineno}"


def include_problem(path: str | Path) -> str | None:
    """Why a file that ``path`` includes (directly or not) cannot be used, in one line that
    names it and where it is included; None if every one can. ``path`` itself is not judged:
    its loader reports its own errors as it does for a file without includes."""

    def check(current: str, chain: tuple[str, ...]) -> str | None:
        try:
            includes, lexer_error = _scan(current)
        except (OSError, UnicodeDecodeError):
            return None  # only ``path`` itself: an included file was opened by _problem
        if lexer_error is not None and len(chain) > 1:
            return lexer_error
        for included, where in includes:
            key = os.path.normpath(included)
            problem = _problem(included, where, key in chain, len(chain))
            if problem is None:
                problem = check(included, (*chain, key))
            if problem is not None:
                return problem
        return None

    path = str(path)
    return check(path, (os.path.normpath(path),))


def _problem(name: str, where: str, cycle: bool, depth: int) -> str | None:
    """What is wrong with one included file itself (not with what it includes)."""
    where = f"(included at {where})"
    if cycle:
        return f"{name}: includes itself {where}"
    if depth > MAX_DEPTH:
        return f"{name}: includes nested more than {MAX_DEPTH} deep {where}"
    try:
        with open(name) as source:
            source.read()
    except FileNotFoundError:
        return f"{name}: no such plan file {where}"
    except IsADirectoryError:
        return f"{name}: is a directory, not a plan file {where}"
    except UnicodeDecodeError:
        return f"{name}: not a text file {where}"
    except OSError as exc:
        return f"{name}: cannot read: {exc.strerror} {where}"
    return None

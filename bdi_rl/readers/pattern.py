"""Belief patterns for search (``readers.search``): an AgentSpeak literal matched on the belief
texts the trace holds, without the agent runtime (readers never import ``bdi_rl.bdi``).

The language, in full:

- ``hazard`` (a bare functor) matches every ``hazard`` belief, whatever its arity;
- ``hazard(3, Y)`` matches ``hazard`` beliefs of exactly that arity whose top-level arguments
  match one by one: ``_`` or a variable (upper-case initial, or ``_X``) matches any one
  argument, the same variable twice must match the same text; any other argument must equal
  the belief's (spaces outside strings do not count, numbers compare by value: ``2.0`` is
  ``2``; strings are double-quoted, lists ``[a, b]``);
- a strongly negated literal starts with ``~``.

Variables match whole arguments only (``pos([X, 1])`` is refused), annotations are not matched
(each hit names its source), and a belief clipped in the trace (``... (N characters)``) matches
on the arguments it still holds: those cut off match only ``_`` or a variable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Longest pattern accepted.
MAX_PATTERN_CHARS = 1000

_FUNCTOR = re.compile(r"~?[a-z][A-Za-z0-9_]*")
#: What splitting looks at: a whole string (escapes kept inside it), or a bracket or a comma.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[()\[\]{},]')
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_VARIABLE = re.compile(r"[A-Z_][A-Za-z0-9_]*")
_NAMES = re.compile(r'"(?:[^"\\]|\\.)*"|(?<![A-Za-z0-9_])[A-Z_][A-Za-z0-9_]*')
_CLOSE = {")": "(", "]": "[", "}": "{"}


class PatternError(ValueError):
    """A pattern that is not one (one line, naming what is wrong)."""


@dataclass(frozen=True)
class Split:
    """A literal's text cut at its top-level commas."""

    functor: str
    args: list[str]
    """the complete top-level arguments, as written"""
    complete: bool
    """False when the text ends inside its arguments (clipped, or unbalanced)"""
    rest: str = ""
    """what follows the closing parenthesis (a pattern's annotations)"""


def split_literal(text: str) -> Split:
    """``functor(arg, ...)`` cut into its functor and top-level arguments, respecting
    brackets and double-quoted strings."""
    open_at = text.find("(")
    if open_at < 0:
        return Split(text.strip(), [], True)
    functor = text[:open_at].strip()
    args: list[str] = []
    depth: list[str] = []
    start = open_at + 1
    for token in _TOKEN.finditer(text, open_at + 1):
        t = token.group()
        if t[0] == '"':
            if len(t) == 1 or not t.endswith('"') or t.endswith('\\"') and _escaped_end(t):
                return Split(functor, args, False)  # a string that does not end
        elif t in "([{":
            depth.append(t)
        elif t == "," and not depth:
            args.append(text[start : token.start()])
            start = token.end()
        elif t in _CLOSE:
            if not depth:
                if t != ")":
                    return Split(functor, args, False)
                args.append(text[start : token.start()])
                return Split(functor, args, True, text[token.end() :])
            if depth.pop() != _CLOSE[t]:
                return Split(functor, args, False)
    return Split(functor, args, False)


def _escaped_end(token: str) -> bool:
    """A string token ending in ``\\"`` whose quote is escaped (an odd run of backslashes)."""
    run = len(token) - 1 - len(token[:-1].rstrip("\\"))
    return run % 2 == 1


def canonical(arg: str) -> str:
    """An argument compared as text: spaces outside strings dropped, numbers by value."""
    arg = arg.strip()
    if _NUMBER.fullmatch(arg):
        return repr(float(arg))
    return "".join(part if part.startswith('"') else "".join(part.split()) for part in _strings_apart(arg))


def _strings_apart(text: str) -> list[str]:
    parts, at = [], 0
    for string in re.finditer(r'"(?:[^"\\]|\\.)*"', text):
        parts += [text[at : string.start()], string.group()]
        at = string.end()
    return parts + [text[at:]]


@dataclass(frozen=True)
class Pattern:
    """A parsed pattern; :meth:`matches` says whether a belief text is one it finds."""

    text: str
    functor: str
    args: tuple[str, ...] | None
    """per argument: ``""`` for ``_``, ``"?Name"`` for a variable, else its canonical text;
    None for a bare functor (every arity)"""

    def matches(self, belief: str) -> bool:
        if not belief.startswith(self.functor):
            return False
        rest = belief[len(self.functor) : len(self.functor) + 1]
        if rest not in ("", "("):
            return False
        if self.args is None:
            return True
        split = split_literal(belief)
        if split.functor != self.functor:
            return False
        if split.complete and len(split.args) != len(self.args):
            return False
        if not split.complete and len(split.args) > len(self.args):
            return False
        bound: dict[str, str] = {}
        for k, want in enumerate(self.args):
            if k >= len(split.args):  # clipped away: only a variable can stand for it
                if want and not want.startswith("?"):
                    return False
                continue
            if not want:
                continue
            have = canonical(split.args[k])
            if want.startswith("?"):
                if bound.setdefault(want, have) != have:
                    return False
            elif want != have:
                return False
        return True


def parse_pattern(text: str) -> Pattern:
    """The pattern ``text`` stands for; PatternError saying what is wrong otherwise."""
    text = text.strip()
    if not text:
        raise PatternError("empty pattern: write a functor (hazard) or a literal (hazard(_, _))")
    if len(text) > MAX_PATTERN_CHARS:
        raise PatternError(f"pattern longer than {MAX_PATTERN_CHARS} characters")
    split = split_literal(text)
    if not _FUNCTOR.fullmatch(split.functor):
        raise PatternError(
            f"{_short(split.functor or text)!r}: a pattern starts with a functor "
            "(lower-case initial), e.g. hazard(X, Y)"
        )
    if "(" not in text:
        return Pattern(text, split.functor, None)
    if not split.complete:
        raise PatternError(f"{_short(text)!r}: unbalanced brackets or quotes")
    if split.rest.strip():
        if split.rest.strip().startswith("["):
            raise PatternError("annotations are not matched: each hit names its source")
        raise PatternError(f"{_short(split.rest.strip())!r} after the closing parenthesis")
    if len(split.args) == 1 and not split.args[0].strip():
        raise PatternError(f"{split.functor}(): no arguments; write {split.functor} to match every arity")
    args = []
    for arg in split.args:
        arg = arg.strip()
        if not arg:
            raise PatternError(f"{_short(text)!r}: an empty argument")
        if arg == "_":
            args.append("")
        elif _VARIABLE.fullmatch(arg):
            args.append("?" + arg if not arg.startswith("_") else "")
        else:
            nested = [n.group() for n in _NAMES.finditer(arg) if not n.group().startswith('"')]
            if nested:
                raise PatternError(f"{_short(arg)!r}: variables match whole arguments only ({nested[0]} inside one)")
            args.append(canonical(arg))
    return Pattern(text, split.functor, tuple(args))


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."

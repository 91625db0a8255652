"""Runtime terms as bdi-rl writes them: traces, message bodies, error messages.

The text is AgentSpeak that the runtime's parser reads back, laid out as bdi-rl's traces
have always shown it (``pos(1, 2)``, ``[1, 2]``: a space after each comma; the runtime's own
``term_str`` writes Jason's ``pos(1,2)``). Otherwise it is Jason's printing: numbers as
Java's doubles (``2.0`` as ``2``, ``1.0E-5``), annotations in Jason's order, operators infix
(``(a & b)``, ``(X > 1)``), unbound variables by name; strings are quoted with escapes
(``"a\"b"``), so that a message reads back exactly (``parse_text(wire=True)``).
"""

from __future__ import annotations

import functools
from typing import Any

from bdi_rl.bdi.runtime.terms import (
    INFIX,
    UNBOUND,
    LVar,
    PartialList,
    Struct,
    deref,
    number_str,
    resolve,
    sorted_annots,
    string_literal,
    term_str,
)


def term_text(value: Any, annots: bool = True) -> str:
    """``value`` as AgentSpeak source; ``annots`` False leaves a literal's annotations out."""
    kind = type(value)
    if kind is LVar:
        value = deref(value)
        kind = type(value)
        if kind is LVar:
            return _variable_name(value.name)
    if kind is Struct:
        args = value.args
        if args:
            functor = value.functor
            if functor in INFIX and len(args) == 2 or len(args) == 1 and functor in ("not", "-"):
                text = _operator_text(value)
            else:
                try:
                    text = _literal_text(functor, args)
                except TypeError:  # an argument that is not hashable (no Python value a plan holds)
                    text = f"{functor}({', '.join(map(term_text, args))})"
        else:
            text = value.functor
        if annots and value.annots:
            text += "[" + ", ".join(map(term_text, sorted_annots(value.annots))) + "]"
        return text
    if kind is tuple:
        return "[" + ", ".join(map(term_text, value)) + "]"
    if kind is PartialList:
        return term_text(resolve(value)) if type(resolve(value)) is tuple else term_str(value)
    if kind is str:
        return string_literal(value)
    if kind is int or kind is float:
        return number_str(value)
    if kind is bool:
        return "true" if value else "false"
    if value is UNBOUND:
        return "_"
    return repr(value)


def _operator_text(value: Struct) -> str:
    """``(a & b)``, ``not (a)``, ``(X+1)`` (arithmetic evaluated once it can be), as Jason."""
    args = value.args
    if len(args) == 1:
        if value.functor == "not":
            return f"not ({term_text(args[0])})"
        text = term_str(value)  # evaluated when it can be
        return text if not text.startswith("(-") else f"(-{term_text(args[0])})"
    text = term_str(value)
    if not text.startswith("("):  # arithmetic that has a value now
        return text
    return f"({term_text(args[0])}{INFIX[value.functor]}{term_text(args[1])})"


@functools.lru_cache(maxsize=1 << 16)
def _literal_text(functor: str, args: tuple[Any, ...]) -> str:
    # Percepts repeat (state(5), pos(1, 2) ...): their text is made once.
    return f"{functor}({', '.join(map(term_text, args))})"


def _variable_name(name: str) -> str:
    """A variable as the text names it: an anonymous one (``_`` and ``_Y``, numbered by the
    parser ``_1``, ``_2_Y``) as written, so a message or trace reads as the plan does."""
    if name[:1] == "_" and name[1:2].isdigit():
        rest = name[1:].lstrip("0123456789")
        return "_" + rest.lstrip("_") if rest.startswith("_") else "_" + rest
    return name


def source_text(who: Any) -> str:
    """A ``source(...)`` as the trace names it: ``self``, ``percept``, or the sender's JID."""
    if type(who) is str:
        return who
    if type(who) is Struct and not who.args:
        return who.functor
    return term_text(who)


def shown(value: Any) -> str:
    """An argument as the plan would write it, short (for error messages)."""
    if type(value) is LVar and type(deref(value)) is LVar or value is UNBOUND:
        return "an unbound variable"
    text = term_text(value)
    return text if len(text) <= 40 else text[:37] + "..."

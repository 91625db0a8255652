"""Runtime terms as bdi-rl writes them: traces, message bodies, error messages.

The text is AgentSpeak that the runtime's parser reads back, laid out as bdi-rl's traces
have always shown it (``pos(1, 2)``, ``[1, 2]``: a space after each comma; the runtime's own
``term_str`` writes Jason's ``pos(1,2)``). Strings are quoted, numbers written as Jason
writes them (``2.0`` as ``2``), unbound variables by name.
"""

from __future__ import annotations

import functools
from typing import Any

from bdi_rl.bdi.runtime.terms import UNBOUND, LVar, Struct, deref, number_str, string_literal


def term_text(value: Any, annots: bool = True) -> str:
    """``value`` as AgentSpeak source; ``annots`` False leaves a literal's annotations out."""
    kind = type(value)
    if kind is LVar:
        value = deref(value)
        kind = type(value)
        if kind is LVar:
            return _variable_name(value.name)
    if kind is Struct:
        if value.args:
            try:
                text = _literal_text(value.functor, value.args)
            except TypeError:  # an argument that is not hashable (no Python value a plan holds)
                text = f"{value.functor}({', '.join(map(term_text, value.args))})"
        else:
            text = value.functor
        if annots and value.annots:
            text += "[" + ", ".join(sorted(map(term_text, value.annots))) + "]"
        return text
    if kind is tuple:
        return "[" + ", ".join(map(term_text, value)) + "]"
    if kind is str:
        return string_literal(value)
    if kind is int or kind is float:
        return number_str(value)
    if kind is bool:
        return "true" if value else "false"
    if value is UNBOUND:
        return "_"
    return repr(value)


@functools.lru_cache(maxsize=1 << 16)
def _literal_text(functor: str, args: tuple) -> str:
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

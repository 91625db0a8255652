"""BDI message bodies: spade_bdi's wire format, read with the runtime's AgentSpeak parser.

A BDI message is an XMPP message with metadata ``performative=BDI`` and ``ilf_type`` (the
KQML performative); its body is AgentSpeak text. Any XMPP client can send one:

==============================  ===========================================================
``ilf_type``                    body
==============================  ===========================================================
tell, untell, achieve,          one ground literal, ``hello(7, "a, b")`` (spade_bdi split
unachieve                       bodies on commas, upstream issue #3: here they are parsed)
askOne, askAll                  one literal, variables allowed: ``value(X)``
tellHow                         plan source, one or more plans
untellHow                       a plan label, or a list of labels
askHow                          a trigger, ``+!g(_)``
==============================  ===========================================================

An ask carries metadata ``reply_with`` (its id); the answer carries ``in_reply_to`` with
that id, and its body is any one term (a literal, a list of literals, or for askHow plan
source). A ``source(...)`` annotation in a body is dropped (the sender is the message's),
except in an ask, where it is part of the query: ``policy(P)[source(self)]`` asks for the
receiver's own belief, not one it was told.
"""

from __future__ import annotations

import math
import re
from typing import Any

from bdi_rl.bdi.plainliteral import read_plain
from bdi_rl.bdi.runtime.errors import AslSyntaxError
from bdi_rl.bdi.runtime.parser import parse_text
from bdi_rl.bdi.runtime.planterms import PlanTerm
from bdi_rl.bdi.runtime.syntax import Expr
from bdi_rl.bdi.runtime.terms import INFIX, UNBOUND, LVar, Struct, atom, is_ground, resolve
from bdi_rl.bdi.runtime.unify import Scope, TermCompiler
from bdi_rl.bdi.text import term_text

#: Bodies larger than this are refused unread.
MAX_BODY_CHARS = 16_384
#: Longest message id (``reply_with``, ``in_reply_to``) taken.
MAX_ID_CHARS = 200

#: Performatives whose body is one literal (variables only in an ask).
LITERAL_BODIES = frozenset({"tell", "untell", "achieve", "unachieve", "askOne", "askAll"})
#: Every performative of the wire.
PERFORMATIVES = LITERAL_BODIES | {"tellHow", "untellHow", "askHow"}
#: Performatives that ask for an answer (they carry ``reply_with``).
ASKS = frozenset({"askOne", "askAll", "askHow"})

#: What the AgentSpeak parser reads as an atom (a functor), strong negation included.
_ATOM = re.compile(r"~?(?:[a-z][A-Za-z0-9_]*::)?(?:[a-z][A-Za-z0-9_]*|'[^']*')")
#: Words the parser reads as keywords, never as atoms (Jason's).
KEYWORDS = frozenset({"not", "div", "mod", "if", "else", "elif", "while", "for"})
#: An include directive: a told plan must not make the receiver read its files.
_INCLUDE = re.compile(r"\{\s*include\b")


def _is_operator(term: Struct) -> bool:
    """``(a & b)``, ``not (a)``, ``(X > 1)``: written infix, read back as the same term."""
    return term.functor in INFIX and len(term.args) == 2 or term.functor in ("not", "-") and len(term.args) == 1


class WireError(ValueError):
    """A message body that is not what its performative carries."""


# -- writing -------------------------------------------------------------------------------
def format_body(performative: str, content: Any) -> str:
    """The body for ``content`` sent as ``performative``; WireError for a term that could
    not be read back (an atom such as a JID, ``bob@localhost``: peers travel as strings)."""
    if performative not in PERFORMATIVES:
        raise WireError(f"unknown performative {performative!r}")
    if performative == "tellHow":
        texts = content if type(content) is tuple else (content,)
        texts = tuple(t.source() if type(t) is PlanTerm else t for t in texts)  # {+!g <- ...}
        if not all(type(t) is str for t in texts):
            raise WireError("tellHow carries plan source (a string, or a list of strings)")
        return "\n".join(texts)
    if performative == "askHow" and type(content) is str:
        return content
    content = resolve(content)
    if _check_writable(content):
        content = _finite(content)
    return term_text(content)


#: NaN and the infinities have no literal (Jason prints NaN, which reads as a variable): they
#: travel as the arithmetic that makes them, evaluated when read.
_NON_FINITE = {"nan": atom("(0/0)"), "inf": atom("(1/0)"), "-inf": atom("(-1/0)")}


def _finite(term: Any) -> Any:
    """``term`` with each NaN or infinity replaced by a stand-in that prints as its arithmetic."""
    kind = type(term)
    if kind is float and not math.isfinite(term):
        return _NON_FINITE[repr(term)]
    if kind is Struct and term.args:
        args = tuple(_finite(a) for a in term.args)
        annots = frozenset(_finite(a) for a in term.annots)
        return term if args == term.args and annots == term.annots else Struct(term.functor, args, annots)
    if kind is tuple:
        return tuple(_finite(a) for a in term)
    return term


def format_literal(term: Struct) -> str:
    """A literal's body (tell, achieve ...)."""
    return format_body("tell", term)


def _check_writable(term: Any) -> bool:
    """WireError for a functor that would not read back as one; True when ``term`` holds a
    NaN or an infinity (to be written as :func:`_finite` says)."""
    kind = type(term)
    if kind is Struct:
        if not _ATOM.fullmatch(term.functor) and not _is_operator(term):
            raise WireError(f"{term.functor!r} is not an AgentSpeak atom; send it as a string")
        if term.functor in KEYWORDS and not _is_operator(term):
            raise WireError(f"'{term.functor}' is a keyword, not an atom; send it as a string")
        non_finite = False
        for arg in term.args:
            non_finite = _check_writable(arg) or non_finite
        for annot in term.annots:
            non_finite = _check_writable(annot) or non_finite
        return non_finite
    if kind is tuple:
        non_finite = False
        for item in term:
            non_finite = _check_writable(item) or non_finite
        return non_finite
    return kind is float and not math.isfinite(term)


# -- reading -------------------------------------------------------------------------------
def parse_body(performative: str, body: str, reply: bool = False) -> Any:
    """The content of a message; ``reply``: the answer to an ask of ours (any one term).
    WireError for anything else, saying why."""
    if performative not in PERFORMATIVES:
        raise WireError(f"unknown ilf_type {performative!r}")
    _check_length(body)
    if performative == "tellHow":
        return _plans(body) if body.strip() or not reply else ()  # an askHow no plan answers
    if reply:
        return _term(body, ground=False)
    if performative == "askHow":
        return _trigger(body)
    if performative == "untellHow":
        labels = _term(body, ground=True)
        if not all(type(x) is Struct and not x.args for x in (labels if type(labels) is tuple else (labels,))):
            raise WireError("untellHow carries a plan label, or a list of labels")
        return labels
    return _literal(performative, body)


def parse_literal(body: str) -> Struct:
    """One ground literal (a tell's body, a spec's belief); source annotations dropped."""
    _check_length(body)
    return _literal("tell", body)


def _check_length(body: str) -> None:
    if len(body) > MAX_BODY_CHARS:
        raise WireError(f"body of {len(body)} characters exceeds {MAX_BODY_CHARS}")


def _literal(performative: str, body: str) -> Struct:
    """The literal a tell, untell, achieve or ask carries (an ask's is a query, kept whole)."""
    term = _term(body, ground=performative not in ASKS)
    if type(term) is not Struct:
        raise WireError("not an AgentSpeak literal (a string, number or list)")
    if performative in ASKS:
        return term  # a query: source(...) says whose belief is asked for (source(self): the receiver's own)
    annots = frozenset(a for a in term.annots if not (type(a) is Struct and a.functor == "source"))
    return term if annots == term.annots else Struct(term.functor, term.args, annots)


def _text(body: str) -> str:
    text = body.strip()
    if text.endswith("."):
        text = text[:-1].rstrip()
    if not text:
        raise WireError("empty body")
    return text


def _parse_expr(text: str) -> Expr:
    if _INCLUDE.search(text):
        raise WireError(_NOT_ONE)
    try:
        program = parse_text(f"term__({text}\n).", "<message>", wire=True)
    except AslSyntaxError as exc:
        if _is_program(text):  # "a. b", "+!x <- .rl_reset", "!go": AgentSpeak, not one literal
            raise WireError(_NOT_ONE) from None
        raise WireError(f"not an AgentSpeak literal: {_reason(exc)}") from None
    except RecursionError:
        raise WireError("not an AgentSpeak literal: nested too deeply") from None
    # a term with variables reads as a fact with variables (a rule without conditions)
    heads = program.beliefs + [rule.head for rule in program.rules if rule.fact]
    if program.plans or program.goals or len(heads) != 1 or len(program.rules) > 1 - len(program.beliefs):
        raise WireError(_NOT_ONE)
    belief = heads[0]
    if belief.functor != "term__" or len(belief.args) != 1:
        raise WireError(_NOT_ONE)
    return belief.args[0]


_NOT_ONE = "body must be exactly one literal (no rules, plans, goals or lists of beliefs)"


def _is_program(text: str) -> bool:
    """Whether ``text`` parses as plan-file clauses (checked for includes before)."""
    try:
        parse_text(text + ".", "<message>", wire=True)
    except (AslSyntaxError, RecursionError):
        return False
    return True


def _term(body: str, ground: bool) -> Any:
    """The one term of ``body``: a plain literal (``bdi_rl.bdi.plainliteral``) made at once,
    anything else parsed and compiled as a plan's term is."""
    text = _text(body)
    plain = read_plain(text)
    if plain is not None:
        return plain
    expr = _parse_expr(text)
    scope = Scope()
    try:
        code = TermCompiler(scope, "<message>").term(expr)
        value = resolve(code.build([UNBOUND] * scope.size))
    except AslSyntaxError as exc:
        raise WireError(f"not an AgentSpeak literal: {_reason(exc)}") from None
    except RecursionError:
        raise WireError("not an AgentSpeak literal: nested too deeply") from None
    except Exception as exc:  # noqa: BLE001 - arithmetic in a body (1/0): not a term
        raise WireError(f"not an AgentSpeak literal: {exc}") from None
    if type(value) is LVar:
        raise WireError("body must be a literal, not a variable")
    if ground and not is_ground(value):
        raise WireError("literal must be ground: it has unbound variables")
    return value


def _plans(body: str) -> tuple[str, ...]:
    if _INCLUDE.search(body):
        raise WireError("tellHow: plans only (no include)")
    try:
        program = parse_text(body, "<tellHow>")
    except AslSyntaxError as exc:
        raise WireError(f"tellHow: not AgentSpeak plans: {_reason(exc)}") from None
    except RecursionError:
        raise WireError("tellHow: nested too deeply") from None
    if program.rules or program.goals or program.beliefs or not program.plans:
        raise WireError("tellHow carries plans only (no beliefs, rules or goals)")
    return tuple(plan.text for plan in program.plans)


def _trigger(body: str) -> str:
    text = _text(body).strip("{} \t\n")
    try:
        program = parse_text(text + ".", "<askHow>")
    except AslSyntaxError as exc:
        raise WireError(f"askHow: not a trigger: {_reason(exc)}") from None
    except RecursionError:
        raise WireError("askHow: nested too deeply") from None
    if len(program.plans) != 1 or program.beliefs or program.rules or program.goals:
        raise WireError("askHow carries one trigger, such as +!g(_)")
    plan = program.plans[0]
    if plan.context is not None or plan.body or plan.label is not None:
        raise WireError("askHow carries one trigger, such as +!g(_)")
    return text


def _reason(exc: AslSyntaxError) -> str:
    """The parser's message without its ``<message>:line:col:`` prefix."""
    text = str(exc)
    return text.split(": ", 1)[1] if text.startswith("<") and ": " in text else text

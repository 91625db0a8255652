"""BDI message bodies: AgentSpeak literals, parsed by the AgentSpeak parser itself.

spade_bdi splits bodies on commas and parentheses (upstream issue #3): ``hello(7,"a, b")``
from an outside client arrived as three arguments and no plan fired. Here the body is read
by python-agentspeak's own lexer and parser, so strings, lists, nested and multi-argument
literals round-trip exactly, and anything that is not one ground literal is refused.
"""

from __future__ import annotations

import io
import logging
import re

import agentspeak as asp
import agentspeak.lexer
import agentspeak.parser
import agentspeak.runtime as asp_runtime

#: What the AgentSpeak lexer reads as one atom (a functor).
_ATOM = re.compile(r"[a-z][A-Za-z0-9_]*")

#: Bodies larger than this are refused unread (a BDI message carries one literal).
MAX_BODY_CHARS = 16_384


class WireError(ValueError):
    """A message body that is not exactly one ground AgentSpeak literal."""


class _FirstError(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.message: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.message is None and record.levelno >= logging.WARNING:
            self.message = record.getMessage()


_logger = logging.getLogger("bdi_rl.bdi.wire.parser")
_logger.propagate = False


def format_literal(term: asp.Literal) -> str:
    """The body for ``term``: AgentSpeak source that :func:`parse_literal` reads back.

    Raises WireError for a term that could not be read back: an atom such as a JID
    (``bob@localhost``) is not AgentSpeak; peers travel as strings (as in ``source(...)``)."""
    _check_writable(term)
    return asp.asl_repr(term)


def _check_writable(term: object) -> None:
    if isinstance(term, asp.Literal):
        if not _ATOM.fullmatch(term.functor):
            raise WireError(f"{term.functor!r} is not an AgentSpeak atom; send it as a string")
        for arg in term.args:
            _check_writable(arg)
        for annot in term.annots:
            _check_writable(annot)
    elif isinstance(term, tuple):
        for item in term:
            _check_writable(item)


def parse_literal(body: str) -> asp.Literal:
    """Read one ground literal; annotations other than ``source`` are kept."""
    if len(body) > MAX_BODY_CHARS:
        raise WireError(f"body of {len(body)} characters exceeds {MAX_BODY_CHARS}")
    text = body.strip().rstrip(".")
    if not text:
        raise WireError("empty body")
    source = io.StringIO(text + ".")
    source.name = "<message>"
    errors = _FirstError()
    _logger.addHandler(errors)
    log = asp.Log(_logger, 1)
    try:
        ast = agentspeak.parser.parse(source.name, agentspeak.lexer.TokenStream(source, log), log)
        log.throw()
    except asp.AggregatedError:
        raise WireError(f"not an AgentSpeak literal: {errors.message or 'syntax error'}") from None
    except RecursionError:  # the parser recurses ~10 frames per level: ~90 levels at most
        raise WireError("not an AgentSpeak literal: nested too deeply") from None
    except Exception as exc:  # noqa: BLE001 - the parser raises bare errors on odd input
        raise WireError(f"not an AgentSpeak literal: {exc}") from None
    finally:
        _logger.removeHandler(errors)
    if ast.rules or ast.plans or ast.goals or len(ast.beliefs) != 1:
        raise WireError("body must be exactly one literal (no rules, plans, goals or lists of beliefs)")
    if errors.message is not None:  # e.g. "implicit rule with unbound variables"
        raise WireError(f"literal must be ground: {errors.message}")
    try:
        term = ast.beliefs[0].accept(asp_runtime.BuildTermVisitor({}))
    except Exception as exc:  # noqa: BLE001
        raise WireError(f"not an AgentSpeak literal: {exc}") from None
    if not isinstance(term, asp.Literal):
        raise WireError("body must be a literal")
    annots = frozenset(a for a in term.annots if getattr(a, "functor", None) != "source")
    return asp.Literal(term.functor, term.args, annots)

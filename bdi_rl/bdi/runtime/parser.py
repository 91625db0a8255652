"""Source text -> :mod:`~bdi_rl.bdi.runtime.syntax` AST, with lark (LALR, contextual lexer).

The grammar is ``agentspeak.lark`` next to this module. ``{ include("f.asl") }`` is
resolved here, relative to the including file, so the compiler sees one program.
"""

from __future__ import annotations

import functools
import hashlib
import io
import logging
import os
import sys
from pathlib import Path
from typing import Any

import lark
from lark import Token, Transformer, v_args

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import AslSyntaxError
from bdi_rl.store import atomic_write_bytes, cache_root, private_dir

_GRAMMAR = Path(__file__).with_name("agentspeak.lark")


log = logging.getLogger("bdi_rl.bdi.runtime")


@functools.lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    """The grammar's LALR parser. Building it takes ~0.15 s, most of the runtime's share of a
    process's start-up, so the built tables are kept in the user's cache directory and loaded
    in ~0.02 s by the next process (keyed by the grammar and the lark and Python versions)."""
    grammar = _GRAMMAR.read_text()
    cached = _cached_parser_file(grammar)
    if cached is not None:
        try:
            with open(cached, "rb") as f:
                return lark.Lark.load(f)
        except FileNotFoundError:
            pass
        except Exception as exc:  # noqa: BLE001 - a damaged cache is rebuilt, whatever broke
            log.debug("rebuilding the grammar cache %s: %s", cached, exc)
    parser = lark.Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=False)
    if cached is not None:
        buffer = io.BytesIO()
        parser.save(buffer)
        try:
            atomic_write_bytes(cached, buffer.getvalue())
        except OSError as exc:  # a read-only home: every process builds its own
            log.debug("cannot keep the grammar cache %s: %s", cached, exc)
    return parser


def _cached_parser_file(grammar: str) -> Path | None:
    """Where the built parser is kept: a pickle, so only in a directory no one else can write."""
    directory = private_dir(cache_root() / "grammar")
    if directory is None:
        return None
    key = hashlib.sha256(f"{grammar}{lark.__version__}{sys.version_info[:2]}".encode()).hexdigest()[:24]
    return directory / f"agentspeak-{key}.lark"


def _unquote(text: str) -> str:
    body = text[1:-1]
    if "\\" not in body:
        return body
    out = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append({"n": "\n", "t": "\t", "r": "\r"}.get(nxt, nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _number(text: str) -> int | float:
    if "." in text or "e" in text or "E" in text:
        return float(text)
    return int(text)


def _line(meta: Any) -> int:
    return getattr(meta, "line", 0) or 0


def _fold(children: list, line: int) -> Any:
    """``a op b op c`` -> left-nested BinOps; a lone child is itself."""
    node = children[0]
    for i in range(1, len(children), 2):
        node = s.BinOp(str(children[i]), node, children[i + 1], line)
    return node


@v_args(meta=True)
class _ToAst(Transformer):
    def __init__(self, text: str, file: str) -> None:
        super().__init__()
        self.text = text
        self.file = file

    # -- terms --------------------------------------------------------------------------
    def var(self, meta, children):
        return s.Var(str(children[0]), _line(meta))

    def number(self, meta, children):
        return s.Const(_number(str(children[0])), _line(meta))

    def string(self, meta, children):
        return s.Const(_unquote(str(children[0])), _line(meta))

    def neg(self, meta, children):
        operand = children[0]
        if isinstance(operand, s.Const) and not isinstance(operand.value, str):
            return s.Const(-operand.value, _line(meta))
        return s.UnOp("-", operand, _line(meta))

    def literal(self, meta, children):
        negated = False
        if isinstance(children[0], Token) and children[0].type == "NEG":
            negated = True
            children = children[1:]
        functor = str(children[0])
        args: tuple = ()
        annots: tuple = ()
        for child in children[1:]:
            if isinstance(child, tuple) and child and child[0] == "args":
                args = child[1]
            elif isinstance(child, tuple) and child and child[0] == "annots":
                annots = child[1]
        return s.Lit(functor, args, annots, negated, _line(meta))

    def args(self, meta, children):
        return ("args", tuple(children))

    def annots(self, meta, children):
        return ("annots", tuple(children))

    def list(self, meta, children):
        tail = None
        if children and isinstance(children[-1], tuple) and children[-1][0] == "tail":
            tail = children[-1][1]
            children = children[:-1]
        return s.ListExpr(tuple(children), tail, _line(meta))

    def list_tail(self, meta, children):
        return ("tail", children[0])

    def trigger_term(self, meta, children):
        return children[0]

    # -- operators ----------------------------------------------------------------------
    def or_expr(self, meta, children):
        node = children[0]
        for child in children[1:]:
            node = s.BinOp("|", node, child, _line(meta))
        return node

    def and_expr(self, meta, children):
        node = children[0]
        for child in children[1:]:
            node = s.BinOp("&", node, child, _line(meta))
        return node

    def not_expr(self, meta, children):
        return s.UnOp("not", children[0], _line(meta))

    def rel_expr(self, meta, children):
        return _fold(children, _line(meta))

    def arith(self, meta, children):
        return _fold(children, _line(meta))

    def term(self, meta, children):
        return _fold(children, _line(meta))

    def power(self, meta, children):
        if len(children) == 1:
            return children[0]
        return s.BinOp("**", children[0], children[1], _line(meta))

    def rel_op(self, meta, children):
        return str(children[0])

    add_op = rel_op
    mul_op = rel_op

    # -- triggers, statements -----------------------------------------------------------
    def trig_op(self, meta, children):
        return str(children[0])

    trig_kind = trig_op

    def trigger(self, meta, children):
        op = children[0]
        kind = children[1] if len(children) == 3 else ""
        return s.TriggerExpr(op, kind, children[-1], _line(meta))

    def _make_stmt(self, op: str, meta: Any, children: Any) -> s.Stmt:
        return s.Stmt(op, children[0], _line(meta))

    def achieve(self, meta, children):
        return self._make_stmt("!", meta, children)

    def achieve_new(self, meta, children):
        return self._make_stmt("!!", meta, children)

    def test(self, meta, children):
        return self._make_stmt("?", meta, children)

    def add_bel(self, meta, children):
        return self._make_stmt("+", meta, children)

    def add_bel_new(self, meta, children):
        return self._make_stmt("++", meta, children)

    def del_bel_new(self, meta, children):
        return self._make_stmt("--", meta, children)

    def add_bel_end(self, meta, children):
        return self._make_stmt("+>", meta, children)

    def del_bel(self, meta, children):
        return self._make_stmt("-", meta, children)

    def del_add_bel(self, meta, children):
        return self._make_stmt("-+", meta, children)

    def expr_stmt(self, meta, children):
        return self._make_stmt("expr", meta, children)

    def body(self, meta, children):
        return tuple(children)

    def block(self, meta, children):
        return children[0] if children else ()

    def elif_(self, meta, children):
        return (children[0], children[1])

    def else_part(self, meta, children):
        return ("else", children[0])

    def if_stmt(self, meta, children):
        branches = [(children[0], children[1])]
        otherwise = None
        for child in children[2:]:
            if isinstance(child, tuple) and len(child) == 2 and child[0] == "else":
                otherwise = child[1]
            else:
                branches.append(child)
        return s.If(tuple(branches), otherwise, _line(meta))

    def while_stmt(self, meta, children):
        return s.While(children[0], children[1], _line(meta))

    def for_stmt(self, meta, children):
        return s.For(children[0], children[1], _line(meta))

    # -- clauses ------------------------------------------------------------------------
    def include(self, meta, children):
        return ("include", _unquote(str(children[0])), _line(meta))

    def belief_or_rule(self, meta, children):
        head = children[0]
        if len(children) == 1:
            return ("belief", head)
        return s.Rule(head, children[1], self.file, _line(meta))

    def initial_goal(self, meta, children):
        return ("goal", children[0])

    def label(self, meta, children):
        return ("label", children[0])

    def context(self, meta, children):
        return ("context", children[0])

    def body_part(self, meta, children):
        return ("body", children[0])

    def plan(self, meta, children):
        label = None
        trigger = None
        context = None
        body: tuple = ()
        for child in children:
            if isinstance(child, s.TriggerExpr):
                trigger = child
            elif child[0] == "label":
                label = child[1]
            elif child[0] == "context":
                context = child[1]
            elif child[0] == "body":
                body = child[1]
        assert trigger is not None
        text = self.text[meta.start_pos : meta.end_pos] if hasattr(meta, "start_pos") else ""
        return s.Plan(trigger, context, body, label, self.file, _line(meta), text)

    def start(self, meta, children):
        return children


# lark names the rule ``elif``; a Python method cannot be called that
setattr(_ToAst, "elif", _ToAst.elif_)


def parse_text(text: str, file: str = "<string>", _seen: frozenset[str] = frozenset()) -> s.Program:
    """Parse a plan library; ``{ include("f") }`` is read relative to ``file``."""
    try:
        tree = _parser().parse(text)
    except lark.exceptions.UnexpectedInput as exc:
        raise AslSyntaxError(f"{file}:{exc.line}:{exc.column}: {_describe(exc)}") from None
    clauses = _ToAst(text, file).transform(tree)
    program = s.Program()
    for clause in clauses:
        if isinstance(clause, s.Plan):
            program.plans.append(clause)
        elif isinstance(clause, s.Rule):
            program.rules.append(clause)
        elif clause[0] == "belief":
            program.beliefs.append(clause[1])
        elif clause[0] == "goal":
            program.goals.append(clause[1])
        elif clause[0] == "include":
            inner = _include(file, clause[1], clause[2], _seen)
            program.beliefs += inner.beliefs
            program.rules += inner.rules
            program.goals += inner.goals
            program.plans += inner.plans
            program.included += inner.included
    return program


#: Includes nested deeper than this are refused.
MAX_INCLUDE_DEPTH = 16


def _include(file: str, name: str, line: int, seen: frozenset[str]) -> s.Program:
    """The program of ``{ include(name) }`` at ``file:line``; an error names the included
    file as written (beside ``file``) and where it is included."""
    base = os.path.dirname(file) if file != "<string>" else "."
    shown = os.path.join(base, name)
    resolved = str(Path(shown).resolve())
    where = f"(included at {file}:{line})"
    if resolved in seen:
        raise AslSyntaxError(f"{shown}: includes itself {where}")
    if len(seen) > MAX_INCLUDE_DEPTH:
        raise AslSyntaxError(f"{shown}: includes nested more than {MAX_INCLUDE_DEPTH} deep {where}")
    text = _read_plan_file(Path(resolved), shown, f" {where}")
    inner = parse_text(text, os.path.normpath(shown), seen | {resolved})
    inner.included.insert(0, (resolved, text))
    return inner


def _read_plan_file(path: Path, shown: str, where: str = "") -> str:
    """The text of a plan file, or AslSyntaxError naming it as ``shown`` (``where``: where it
    is included) and what is wrong in one line."""
    try:
        return path.read_text()
    except FileNotFoundError:
        raise AslSyntaxError(f"{shown}: no such plan file{where}") from None
    except IsADirectoryError:
        raise AslSyntaxError(f"{shown}: is a directory, not a plan file{where}") from None
    except UnicodeDecodeError:
        raise AslSyntaxError(f"{shown}: not a text file{where}") from None
    except OSError as exc:
        raise AslSyntaxError(f"{shown}: cannot read: {exc.strerror}{where}") from None


def parse_file(path: str | Path) -> s.Program:
    path = Path(path)
    text = _read_plan_file(path, str(path))
    return parse_text(text, str(path), frozenset({str(path.resolve())}))


def _describe(exc: lark.exceptions.UnexpectedInput) -> str:
    if isinstance(exc, lark.exceptions.UnexpectedToken):
        token = exc.token
        if token.type == "$END":
            return "unexpected end of file"
        return f"unexpected {str(token)!r}"
    if isinstance(exc, lark.exceptions.UnexpectedCharacters):
        return f"illegal character {exc.char!r}"
    return "syntax error"


def parse_expr(text: str) -> s.Expr:
    """One term or formula (message contents, tellHow triggers, tests)."""
    program = parse_text(f"term__({text}).", "<term>")
    if len(program.beliefs) != 1 or len(program.beliefs[0].args) != 1:
        raise AslSyntaxError(f"not one term: {text!r}")
    return program.beliefs[0].args[0]

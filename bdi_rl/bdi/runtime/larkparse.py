"""AgentSpeak source text -> clauses of the :mod:`~bdi_rl.bdi.runtime.syntax` AST, with lark
(LALR, contextual lexer): the grammar (``agentspeak.lark`` next to this module, its built tables
kept in the user's cache), one Transformer method per grammar rule, and parse errors said as
Jason says them. Imported by :mod:`~bdi_rl.bdi.runtime.parser` on the first text it has to
parse: a plan file parsed before is read from the program cache, and lark (with ``regex``) is
then never imported.
"""

from __future__ import annotations

import functools
import hashlib
import io
import logging
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeAlias

import lark
from lark import Token, Transformer, v_args
from lark.tree import Meta

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import AslSyntaxError
from bdi_rl.bdi.runtime.functions import is_function
from bdi_rl.bdi.runtime.sourcetext import expr_text
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
    parser = lark.Lark(grammar, parser="lalr", lexer="basic", propagate_positions=True, maybe_placeholders=False)
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
    """A string literal's value as Jason reads it: only ``\n`` (a line break) and ``\"``
    (a quote) are escapes; every other backslash stays (``"\t"`` is a backslash and a t)."""
    return text[1:-1].replace("\\n", "\n").replace('\\"', '"')


def _unescape(text: str) -> str:
    """A string literal's value as bdi-rl's wire writes it (:func:`~bdi_rl.bdi.runtime.terms.
    string_literal`): every backslash escapes the next character, ``\n`` ``\t`` ``\r``."""
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


#: A double holds every integer up to this; Jason's numbers are doubles.
_EXACT = 2**53


def _number(text: str) -> int | float:
    if "." in text or "e" in text or "E" in text:
        return float(text)
    value = int(text)
    if value > _EXACT:  # the double Jason reads it as
        try:
            return int(float(text))
        except OverflowError:  # past the doubles: Jason's Infinity, kept as written here
            return value
    return value


def _line(meta: Any) -> int:
    return getattr(meta, "line", 0) or 0


def _fold(children: list[Any], line: int) -> s.Expr:
    """``a op b op c`` -> left-nested BinOps; a lone child is itself."""
    node: s.Expr = children[0]
    for i in range(1, len(children), 2):
        node = s.BinOp(str(children[i]), node, children[i + 1], line)
    return node


#: Arithmetic operators: their operands must be numbers, variables, arithmetic or functions.
_ARITH_OPS = frozenset({"+", "-", "*", "/", "div", "mod", "**"})


def _is_numeric(node: Any) -> bool:
    """Whether ``node`` can be an operand of arithmetic (Jason's NumberTerm)."""
    if isinstance(node, s.Const):
        return not isinstance(node.value, str)
    if isinstance(node, s.Var):
        return True
    if isinstance(node, s.BinOp):
        return node.op in _ARITH_OPS
    if isinstance(node, s.UnOp):
        return node.op == "-"
    if isinstance(node, s.Lit):  # a function, or .count(F) (of the beliefs: queries.py counts it)
        functional = is_function(node.functor, len(node.args)) or node.functor == ".count" and len(node.args) == 1
        return functional and not node.negated
    return False


Children: TypeAlias = list[Any]
"""What lark hands a rule's method: the rule's children, each already transformed (a token,
an AST node, or a tagged tuple such as ``("args", ...)``), so of many types."""


@v_args(meta=True)
class _ToAst(Transformer[Token, Any]):
    def __init__(self, text: str, file: str, wire: bool = False) -> None:
        super().__init__()
        self.text = text
        self.file = file
        self.unquote = _unescape if wire else _unquote
        self.unnamed = 0
        """anonymous variables met so far: Jason numbers them in the order it reads them"""
        self.beliefs = 0
        """initial beliefs met so far (a rule's position among them)"""

    def error(self, meta: Meta, message: str) -> AslSyntaxError:
        return AslSyntaxError(f"{self.file}:{_line(meta)}: {message}")

    # -- terms --------------------------------------------------------------------------
    def var(self, meta: Meta, children: Children) -> s.Var:
        name = str(children[0])
        if name.startswith("_") and not name[1:2].isdigit():
            self.unnamed += 1  # Jason's UnnamedVar: _ is _7, _Y is _8_Y
            return s.Var(f"_{self.unnamed}{name if name != '_' else ''}", _line(meta), anonymous=True)
        return s.Var(name, _line(meta))

    def var_literal(self, meta: Meta, children: Children) -> s.Var | s.VarLit:
        if isinstance(children[0], Token) and children[0].type == "NEG":
            raise self.error(meta, "a variable standing for a literal cannot be negated here")
        var = self.var(meta, [children[0]])
        for child in children[1:]:
            if isinstance(child, tuple) and child[0] == "annots":
                return s.VarLit("", (), child[1], False, _line(meta), child[2], var)
        return var

    def number(self, meta: Meta, children: Children) -> s.Const:
        return s.Const(_number(str(children[0])), _line(meta))

    def string(self, meta: Meta, children: Children) -> s.Const:
        return s.Const(self.unquote(str(children[0])), _line(meta))

    def group(self, meta: Meta, children: Children) -> s.Expr:
        inner: s.Expr = children[0]
        return inner

    def neg(self, meta: Meta, children: Children) -> s.Expr:
        operand = children[0]
        if isinstance(operand, s.Const) and not isinstance(operand.value, str):
            return s.Const(-operand.value, _line(meta))
        if not _is_numeric(operand):
            raise self.error(meta, f"the argument '{expr_text(operand)}' of operator '-' is not numeric or variable")
        return s.UnOp("-", operand, _line(meta))

    def pos(self, meta: Meta, children: Children) -> s.Expr:
        operand: s.Expr = children[0]
        if not _is_numeric(operand):
            raise self.error(meta, f"the argument '{expr_text(operand)}' of operator '+' is not numeric or variable")
        return operand

    def functor(self, meta: Meta, children: Children) -> str:
        return str(children[0])

    def literal(self, meta: Meta, children: Children) -> s.Lit:
        namespace = None
        if len(children) > 1 and isinstance(children[0], Token) and children[0].type == "ATOM":
            namespace = str(children[0])
            children = children[1:]
        negated = False
        if isinstance(children[0], Token) and children[0].type == "NEG":
            negated = True
            children = children[1:]
        functor = children[0]
        args: tuple[s.Expr, ...] = ()
        annots: tuple[s.Expr, ...] = ()
        tail = None
        for child in children[1:]:
            if isinstance(child, tuple) and child and child[0] == "args":
                args = child[1]
            elif isinstance(child, tuple) and child and child[0] == "annots":
                annots, tail = child[1], child[2]
        if namespace is not None and namespace != "default":
            functor = f"{namespace}::{functor}"
        if functor.startswith(".") or "." in functor and functor[0] != "'":
            if annots or tail is not None:
                raise self.error(meta, f"internal actions cannot have annotations: {functor}")
            if negated:
                raise self.error(meta, f"internal actions cannot be negated: {functor}")
        return s.Lit(functor, args, annots, negated, _line(meta), tail)

    def args(self, meta: Meta, children: Children) -> tuple[str, tuple[s.Expr, ...]]:
        return ("args", tuple(children))

    def annots(self, meta: Meta, children: Children) -> tuple[str, tuple[s.Expr, ...], s.Expr | None]:
        items, tail = _split_tail(children)
        return ("annots", items, tail)

    def list(self, meta: Meta, children: Children) -> s.ListExpr:
        items, tail = _split_tail(children)
        return s.ListExpr(items, tail, _line(meta))

    def list_tail(self, meta: Meta, children: Children) -> tuple[str, s.Expr]:
        return ("tail", children[0] if not isinstance(children[0], Token) else self.var(meta, children))

    def plan_term(self, meta: Meta, children: Children) -> s.TriggerExpr | s.PlanTermExpr:
        label, trigger, context, body = self._plan_parts(children)
        assert trigger is not None
        if label is None and context is None and body is None:
            return trigger
        text = self.text[meta.start_pos : meta.end_pos] if hasattr(meta, "start_pos") else ""
        plan = s.Plan(trigger, context, body or (), label, self.file, _line(meta), text[1:-1].strip())
        return s.PlanTermExpr(plan, _line(meta))

    # -- operators ----------------------------------------------------------------------
    def or_expr(self, meta: Meta, children: Children) -> s.Expr:
        if len(children) == 1:
            alone: s.Expr = children[0]
            return alone
        return s.BinOp("|", children[0], children[1], _line(meta))

    def and_expr(self, meta: Meta, children: Children) -> s.Expr:
        if len(children) == 1:
            alone: s.Expr = children[0]
            return alone
        return s.BinOp("&", children[0], children[1], _line(meta))

    def not_expr(self, meta: Meta, children: Children) -> s.UnOp:
        return s.UnOp("not", children[-1], _line(meta))

    def rel_expr(self, meta: Meta, children: Children) -> s.Expr:
        return _fold(children, _line(meta))

    def arith(self, meta: Meta, children: Children) -> s.Expr:
        return self._arith(meta, children)

    def term(self, meta: Meta, children: Children) -> s.Expr:
        return self._arith(meta, children)

    def power(self, meta: Meta, children: Children) -> s.Expr:
        if len(children) == 1:
            alone: s.Expr = children[0]
            return alone
        return self._arith(meta, [children[0], "**", children[1]])

    def _arith(self, meta: Meta, children: Children) -> s.Expr:
        """Left-nested arithmetic; Jason refuses an operand that is no number, variable,
        arithmetic expression or function call (``a + 1``, ``"s" * 2``) at parse time."""
        if len(children) > 1 and not _is_numeric(children[0]):
            raise self.error(
                meta, f"the operand '{expr_text(children[0])}' of '{children[1]}' is not numeric or variable"
            )
        for i in range(1, len(children), 2):
            if not _is_numeric(children[i + 1]):
                raise self.error(
                    meta, f"the operand '{expr_text(children[i + 1])}' of '{children[i]}' is not numeric or variable"
                )
        return _fold(children, _line(meta))

    def rel_op(self, meta: Meta, children: Children) -> str:
        return str(children[0])

    add_op = rel_op
    mul_op = rel_op

    # -- triggers, statements -----------------------------------------------------------
    def trig_op(self, meta: Meta, children: Children) -> str:
        return str(children[0])

    trig_kind = trig_op

    def trigger(self, meta: Meta, children: Children) -> s.TriggerExpr:
        op = children[0]
        kind = children[1] if len(children) == 3 else ""
        literal = children[-1]
        if isinstance(literal, s.Var):
            literal = s.VarLit("", (), (), False, literal.line, None, literal)
        return s.TriggerExpr(op, kind, literal, _line(meta))

    def _make_stmt(self, op: str, meta: Meta, children: Children) -> s.Stmt:
        if isinstance(children[0], s.VarLit):
            raise self.error(meta, "annotations on a variable in a plan body are not supported")
        return s.Stmt(op, children[0], _line(meta))

    def achieve(self, meta: Meta, children: Children) -> s.Stmt:
        return self._make_stmt("!", meta, children)

    def achieve_new(self, meta: Meta, children: Children) -> s.Stmt:
        return self._make_stmt("!!", meta, children)

    def test(self, meta: Meta, children: Children) -> s.Stmt:
        return self._make_stmt("?", meta, children)

    def add_bel(self, meta: Meta, children: Children) -> s.Stmt:
        return self._make_stmt("+", meta, children)

    def add_bel_new_focus(self, meta: Meta, children: Children) -> s.Stmt:
        return self._make_stmt("++", meta, children)

    def add_bel_end(self, meta: Meta, children: Children) -> s.Stmt:
        return self._make_stmt("+>", meta, children)

    def del_bel(self, meta: Meta, children: Children) -> s.Stmt:
        return self._make_stmt("-", meta, children)

    def del_bel_new_focus(self, meta: Meta, children: Children) -> s.Stmt:
        return self._make_stmt("--", meta, children)

    def del_add_bel(self, meta: Meta, children: Children) -> s.Stmt:
        return self._make_stmt("-+", meta, children)

    def expr_stmt(self, meta: Meta, children: Children) -> s.Stmt:
        return self._make_stmt("expr", meta, children)

    def body(self, meta: Meta, children: Children) -> tuple[s.Statement, ...]:
        return tuple(c for c in children if not isinstance(c, Token))

    def block(self, meta: Meta, children: Children) -> tuple[s.Statement, ...]:
        return children[0] if children else ()

    def elif_(self, meta: Meta, children: Children) -> tuple[s.Expr, tuple[s.Statement, ...]]:
        return (children[1], children[2])

    def else_part(self, meta: Meta, children: Children) -> tuple[str, tuple[s.Statement, ...]]:
        return ("else", children[1])

    def if_stmt(self, meta: Meta, children: Children) -> s.If:
        children = children[1:]  # the keyword
        branches = [(children[0], children[1])]
        otherwise = None
        for child in children[2:]:
            if isinstance(child, tuple) and len(child) == 2 and child[0] == "else":
                otherwise = child[1]
            else:
                branches.append(child)
        return s.If(tuple(branches), otherwise, _line(meta))

    def while_stmt(self, meta: Meta, children: Children) -> s.While:
        return s.While(children[1], children[2], _line(meta))

    def for_stmt(self, meta: Meta, children: Children) -> s.For:
        return s.For(children[1], children[2], _line(meta))

    # -- clauses ------------------------------------------------------------------------
    def directive(self, meta: Meta, children: Children) -> tuple[str, str, int]:
        name = str(children[0])
        args: tuple[s.Expr, ...] = children[1][1] if len(children) > 1 else ()
        if name == "include":
            if len(args) != 1 or not isinstance(args[0], s.Const) or not isinstance(args[0].value, str):
                raise self.error(meta, 'include takes one file name: { include("lib/x.asl") }')
            return ("include", args[0].value, _line(meta))
        raise self.error(meta, f"the directive {name} is not supported (only include and begin namespace)")

    def ns_block(self, meta: Meta, children: Children) -> tuple[str, str, Children]:
        header = children[1]
        if header.functor != "namespace" or len(header.args) not in (1, 2) or not isinstance(header.args[0], s.Lit):
            raise self.error(meta, f"the directive begin {header.functor} is not supported (only namespace(ns))")
        if len(header.args) == 2:
            raise self.error(meta, "local namespaces (namespace(ns, local)) are not supported")
        ns = header.args[0].functor
        clauses = [c for c in children[2:] if not isinstance(c, Token)]
        return ("namespace", ns, [_in_namespace(c, ns) for c in clauses])

    def belief_or_rule(self, meta: Meta, children: Children) -> s.Rule | tuple[str, s.Lit]:
        head = children[0]
        if len(children) == 1:
            if _has_variables(head):  # last([X], X). answers as a rule with no conditions
                return s.Rule(head, s.Lit("true", line=_line(meta)), self.file, _line(meta), self.beliefs, fact=True)
            self.beliefs += 1
            return ("belief", head)
        return s.Rule(head, children[1], self.file, _line(meta), self.beliefs)

    def initial_goal(self, meta: Meta, children: Children) -> tuple[str, s.Lit]:
        return ("goal", children[0])

    def label(self, meta: Meta, children: Children) -> tuple[str, s.Lit]:
        annots = children[1][1] if len(children) > 1 else ()
        return ("label", s.Lit(children[0], (), annots, False, _line(meta)))

    def label_name(self, meta: Meta, children: Children) -> str:
        return str(children[0])

    def label_anonymous(self, meta: Meta, children: Children) -> tuple[str, s.Lit]:
        name = f"l__{_line(meta)}_{getattr(meta, 'column', 0)}"
        return ("label", s.Lit(name, (), children[0][1], False, _line(meta)))

    def context(self, meta: Meta, children: Children) -> tuple[str, s.Expr]:
        return ("context", children[0])

    def body_part(self, meta: Meta, children: Children) -> tuple[str, tuple[s.Statement, ...]]:
        return ("body", children[0])

    def _plan_parts(
        self, children: Children
    ) -> tuple[s.Lit | None, s.TriggerExpr | None, s.Expr | None, tuple[s.Statement, ...] | None]:
        label = trigger = context = body = None
        for child in children:
            if isinstance(child, s.TriggerExpr):
                trigger = child
            elif child[0] == "label":
                label = child[1]
            elif child[0] == "context":
                context = child[1]
            elif child[0] == "body":
                body = child[1]
        return label, trigger, context, body

    def plan(self, meta: Meta, children: Children) -> s.Plan:
        label, trigger, context, body = self._plan_parts(children)
        assert trigger is not None
        if context is not None:
            _check_context(context, self.file)
        text = self.text[meta.start_pos : meta.end_pos] if hasattr(meta, "start_pos") else ""
        return s.Plan(trigger, context, body or (), label, self.file, _line(meta), text)

    def start(self, meta: Meta, children: Children) -> Children:
        return children


# lark names the rule ``elif``; a Python method cannot be called that
setattr(_ToAst, "elif", _ToAst.elif_)


#: Internal actions Jason refuses in a plan's context (they act; a context only tests).
_NOT_IN_CONTEXT = frozenset({".wait", ".send", ".broadcast", ".stopMAS", ".fork", ".join"})


def _check_context(node: Any, file: str) -> None:
    """Jason's parser refuses a context that runs an action it cannot run there."""
    if isinstance(node, s.BinOp) and node.op in ("&", "|"):
        _check_context(node.left, file)
        _check_context(node.right, file)
    elif isinstance(node, s.UnOp) and node.op == "not":
        _check_context(node.operand, file)
    elif isinstance(node, s.Lit) and node.functor in _NOT_IN_CONTEXT:
        raise AslSyntaxError(
            f"{file}:{node.line}: the internal action {node.functor} cannot be used in a plan's context"
        )


def _has_variables(node: Any) -> bool:
    if isinstance(node, s.Var):
        return True
    if isinstance(node, s.Lit):
        return node.tail is not None or any(_has_variables(a) for a in node.args + node.annots)
    if isinstance(node, s.ListExpr):
        return node.tail is not None or any(_has_variables(a) for a in node.items)
    if isinstance(node, s.BinOp):
        return _has_variables(node.left) or _has_variables(node.right)
    if isinstance(node, s.UnOp):
        return _has_variables(node.operand)
    return False


def _split_tail(children: list[Any]) -> tuple[tuple[s.Expr, ...], s.Expr | None]:
    """The items of ``[a, b | T]`` and its tail (None without one)."""
    if children and isinstance(children[-1], tuple) and children[-1][0] == "tail":
        return tuple(children[:-1]), children[-1][1]
    return tuple(children), None


def _in_namespace(clause: Any, ns: str) -> Any:
    """A clause of a ``{ begin namespace(ns) }`` block: its literals without a namespace of
    their own are in ``ns`` (not the arguments of a literal or a relation: terms)."""
    if isinstance(clause, s.Plan):
        trigger = replace(clause.trigger, literal=_ns_literal(clause.trigger.literal, ns))
        context = _ns_formula(clause.context, ns) if clause.context is not None else None
        return replace(clause, trigger=trigger, context=context, body=_ns_body(clause.body, ns))
    if isinstance(clause, s.Rule):
        return replace(clause, head=_ns_literal(clause.head, ns), body=_ns_formula(clause.body, ns))
    if isinstance(clause, tuple) and clause[0] in ("belief", "goal"):
        return (clause[0], _ns_literal(clause[1], ns))
    if isinstance(clause, tuple) and clause[0] == "namespace":
        return clause
    return clause


def _ns_literal(node: Any, ns: str) -> Any:
    if not isinstance(node, s.Lit) or isinstance(node, s.VarLit):
        return node
    if "::" in node.functor or node.functor.startswith("."):
        return node
    if node.functor in ("true", "false") and not node.args:
        return node
    return replace(node, functor=f"{ns}::{node.functor}")


def _ns_formula(node: Any, ns: str) -> Any:
    if isinstance(node, s.BinOp) and node.op in ("&", "|"):
        return replace(node, left=_ns_formula(node.left, ns), right=_ns_formula(node.right, ns))
    if isinstance(node, s.UnOp) and node.op == "not":
        return replace(node, operand=_ns_formula(node.operand, ns))
    return _ns_literal(node, ns)


def _ns_body(body: tuple[s.Statement, ...], ns: str) -> tuple[s.Statement, ...]:
    out: list[s.Statement] = []
    for stmt in body:
        if isinstance(stmt, s.Stmt):
            expr = _ns_formula(stmt.expr, ns) if stmt.op == "expr" else _ns_literal(stmt.expr, ns)
            out.append(replace(stmt, expr=expr))
        elif isinstance(stmt, s.If):
            branches = tuple((_ns_formula(c, ns), _ns_body(b, ns)) for c, b in stmt.branches)
            otherwise = _ns_body(stmt.otherwise, ns) if stmt.otherwise is not None else None
            out.append(replace(stmt, branches=branches, otherwise=otherwise))
        elif isinstance(stmt, (s.While, s.For)):
            out.append(replace(stmt, cond=_ns_formula(stmt.cond, ns), body=_ns_body(stmt.body, ns)))
        else:
            out.append(stmt)
    return tuple(out)


#: How an error names the terminals that are not a fixed text.
_TERMINAL_NAMES = {
    "ATOM": "an atom",
    "VAR": "a variable",
    "UNNAMEDVAR": "_",
    "NUMBER": "a number",
    "STRING": "a string",
    "$END": "the end of the file",
}


_SEPARATORS = {"';'", "'.'", "')'", "']'", "'}'", "','", "'<-'", "':'", "':-'"}


def _describe(exc: lark.exceptions.UnexpectedInput, text: str) -> str:
    """The parse error and what was expected there: ``unexpected '.print', expected ';' or
    '.'``."""
    if isinstance(exc, lark.exceptions.UnexpectedToken):
        token = exc.token
        found = "unexpected end of file" if token.type == "$END" else f"unexpected {str(token)!r}"
        expected = exc.expected
        if exc.interactive_parser is not None:  # what the parser takes there (LALR merges states)
            accepts: Callable[[], set[str]] = exc.interactive_parser.accepts  # lark leaves it unannotated
            try:
                expected = accepts()
            except lark.exceptions.LarkError:  # the message without it
                pass
        return found + _expected(expected)
    if isinstance(exc, lark.exceptions.UnexpectedCharacters):
        at = exc.pos_in_stream or 0
        following = text[at : at + 3]
        if following.startswith("\\=") and following != "\\==":
            return "illegal character '\\': Jason has no \\= (write not (A = B), or A \\== B)"
        return f"illegal character {exc.char!r}" + _expected(exc.allowed or set())
    return "syntax error"


def _expected(names: set[str]) -> str:
    patterns = {t.name: t.pattern for t in _parser().terminals}
    shown = set()
    for name in names:
        pattern = patterns.get(name)
        if name in _TERMINAL_NAMES:
            shown.add(_TERMINAL_NAMES[name])
        elif pattern is not None and pattern.type == "str":
            shown.add(repr(pattern.value))
    if len(shown) > 8:  # in the middle of a formula: the separators, or "a term"
        term = "an atom" in shown and "a variable" in shown
        shown &= _SEPARATORS
        if term:
            shown.add("a term")
    if not shown:
        return ""
    ordered = sorted(shown)
    return ", expected " + (ordered[0] if len(ordered) == 1 else ", ".join(ordered[:-1]) + " or " + ordered[-1])


def clauses(text: str, file: str, wire: bool = False) -> Children:
    """The clauses of ``text`` (plans, rules, beliefs, goals, includes and namespaces as the
    Transformer gives them), or AslSyntaxError naming ``file:line:column`` and what is wrong."""
    try:
        tree = _parser().parse(text)
    except lark.exceptions.UnexpectedInput as exc:
        raise AslSyntaxError(f"{file}:{exc.line}:{exc.column}: {_describe(exc, text)}") from None
    try:
        found: Children = _ToAst(text, file, wire).transform(tree)
    except lark.exceptions.VisitError as exc:
        if isinstance(exc.orig_exc, AslSyntaxError):
            raise exc.orig_exc from None
        raise
    return found

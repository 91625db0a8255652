"""The program's formulas and statements as text, for messages.

Two spellings: bdi-rl's own (:func:`expr_text`, :func:`lit_text`: load errors and a
formula's failure, ``X > 5 failed``) and Jason's (:func:`jason_text`, :func:`jason_stmt`:
the ``code(...)`` and ``error_msg`` of a failure event, as Jason prints them). The parser
and the compilers below the agent both use them, so they live apart from both.
"""

from __future__ import annotations

from typing import Any

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.terms import term_str


def lit_text(lit: s.Lit) -> str:
    text = lit.name
    if lit.args:
        text += "(" + ",".join(expr_text(a) for a in lit.args) + ")"
    if lit.annots:
        text += "[" + ",".join(expr_text(a) for a in lit.annots) + "]"
    return text


def expr_text(node: Any) -> str:
    if isinstance(node, s.Var):
        return node.name
    if isinstance(node, s.Const):
        return term_str(node.value)
    if isinstance(node, s.Lit):
        return lit_text(node)
    if isinstance(node, s.ListExpr):
        inner = ",".join(expr_text(a) for a in node.items)
        if node.tail is not None:
            inner += "|" + expr_text(node.tail)
        return "[" + inner + "]"
    if isinstance(node, s.BinOp):
        return f"{expr_text(node.left)} {node.op} {expr_text(node.right)}"
    if isinstance(node, s.UnOp):
        return f"{node.op} {expr_text(node.operand)}" if node.op == "not" else f"-{expr_text(node.operand)}"
    if isinstance(node, s.TriggerExpr):
        return "{" + node.op + node.kind + lit_text(node.literal) + "}"
    return "?"


# -- statements as Jason prints them (its error messages) --------------------------------------
_ARITH_OPS = frozenset(("+", "-", "*", "/", "div", "mod", "**"))
_STMT_PREFIX = {"expr": "", "+<": "+<"}


def jason_text(node: Any) -> str:
    """A formula or term of the source as Jason prints it: relations and connectives in
    parentheses with spaces (``(X > 5)``, ``(a & b)``), arithmetic without (``(N+1)``),
    ``not (a)``, strings in plain quotes."""
    if isinstance(node, s.Var):
        return node.name
    if isinstance(node, s.Const):
        value = node.value
        return '"' + value + '"' if type(value) is str else term_str(value)
    if isinstance(node, s.Lit):
        text = node.name
        if node.args:
            text += "(" + ",".join(jason_text(a) for a in node.args) + ")"
        if node.annots:
            text += "[" + ",".join(jason_text(a) for a in node.annots) + "]"
        return text
    if isinstance(node, s.ListExpr):
        inner = ",".join(jason_text(a) for a in node.items)
        if node.tail is not None:
            inner += "|" + jason_text(node.tail)
        return "[" + inner + "]"
    if isinstance(node, s.BinOp):
        if node.op in _ARITH_OPS:
            op = node.op if node.op not in ("div", "mod") else f" {node.op} "
            return f"({jason_text(node.left)}{op}{jason_text(node.right)})"
        return f"({jason_text(node.left)} {node.op} {jason_text(node.right)})"
    if isinstance(node, s.UnOp):
        return f"not ({jason_text(node.operand)})" if node.op == "not" else f"(-{jason_text(node.operand)})"
    if isinstance(node, s.TriggerExpr):
        return "{ " + node.op + node.kind + jason_text(node.literal) + " }"
    return "?"


def jason_stmt(stmt: Any) -> str:
    """A body statement as Jason prints a plan body's formula (``!g(X)``, ``.print("a")``)."""
    if isinstance(stmt, s.Stmt):
        return _STMT_PREFIX.get(stmt.op, stmt.op) + jason_text(stmt.expr)
    if isinstance(stmt, s.If):
        cond, body = stmt.branches[0]
        return f"if ({jason_text(cond)}) {{ {'; '.join(jason_stmt(b) for b in body)} }}"
    if isinstance(stmt, s.While):
        return f"while ({jason_text(stmt.cond)}) {{ {'; '.join(jason_stmt(b) for b in stmt.body)} }}"
    if isinstance(stmt, s.For):
        return f"for ({jason_text(stmt.cond)}) {{ {'; '.join(jason_stmt(b) for b in stmt.body)} }}"
    return "?"

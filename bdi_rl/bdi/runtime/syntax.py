"""The AST the parser builds and the compiler reads: small frozen records, with lines.

Kept apart from lark's parse tree so the compiler depends on nothing of the parsing
library, and programs built in Python (tests, tellHow) go through the same compiler.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Var:
    """A variable. One whose name starts with ``_`` and no digit (``_``, ``_Y``) is anonymous:
    every occurrence is a new variable, named by the parser as Jason numbers them (``_1``,
    ``_2_Y``: the first character then the number, see :func:`is_anonymous`)."""

    name: str
    line: int = 0
    anonymous: bool = False


@dataclass(frozen=True)
class Const:
    value: Any  # int, float or str
    line: int = 0


@dataclass(frozen=True)
class Lit:
    """``~functor(args)[annots|tail]``; a functor starting with ``.`` is an internal action,
    one with a namespace is written ``ns::b`` (the default namespace is no prefix)."""

    functor: str
    args: tuple[Expr, ...] = ()
    annots: tuple[Expr, ...] = ()
    negated: bool = False
    line: int = 0
    tail: Expr | None = None
    """the variable after ``|`` in ``b[a|R]``: the annotations no other pattern took"""

    @property
    def name(self) -> str:
        return ("~" if self.negated else "") + self.functor


@dataclass(frozen=True)
class ListExpr:
    items: tuple[Expr, ...]
    tail: Expr | None = None
    line: int = 0


@dataclass(frozen=True)
class BinOp:
    """Arithmetic (``+ - * / div mod **``), relational (``< <= > >= == \\==``),
    unification (``=``), ``=..``, and the logical ``&`` and ``|``."""

    op: str
    left: Expr
    right: Expr
    line: int = 0


@dataclass(frozen=True)
class UnOp:
    op: str  # "-" or "not"
    operand: Expr
    line: int = 0


@dataclass(frozen=True)
class TriggerExpr:
    """``+b``, ``-!g``, ``+?q`` (a plan's trigger, or ``{+b}`` as a term for ``.wait``)."""

    op: str  # "+" or "-"
    kind: str  # "" belief, "!" achieve, "?" test
    literal: Lit
    line: int = 0


@dataclass(frozen=True)
class VarLit(Lit):
    """A variable standing for a literal, with annotation patterns: the trigger
    ``-!G[error(E)]`` (relevant to every goal of its kind). Its functor is empty."""

    var: Var = Var("_")


@dataclass(frozen=True)
class PlanTermExpr:
    """``{@l +!g(X) : c <- body}``: a plan written as a term (``.add_plan``, tellHow)."""

    plan: Plan
    line: int = 0


Expr = Var | Const | Lit | ListExpr | BinOp | UnOp | TriggerExpr | PlanTermExpr


# -- body statements ------------------------------------------------------------------------
@dataclass(frozen=True)
class Stmt:
    """``op`` one of ``!`` ``!!`` ``?`` ``+`` ``++`` ``+>`` ``-`` ``--`` ``-+`` (on ``expr``,
    a Lit, or a Var bound to one when the program runs) or ``expr`` (an action, internal
    action or formula). ``+<b`` parses as ``+b``; ``++b`` and ``--b`` raise their events as
    new intentions (Jason's new focus)."""

    op: str
    expr: Expr
    line: int = 0


@dataclass(frozen=True)
class If:
    branches: tuple[tuple[Expr, tuple[Statement, ...]], ...]
    otherwise: tuple[Statement, ...] | None
    line: int = 0


@dataclass(frozen=True)
class While:
    cond: Expr
    body: tuple[Statement, ...]
    line: int = 0


@dataclass(frozen=True)
class For:
    cond: Expr
    body: tuple[Statement, ...]
    line: int = 0


Statement = Stmt | If | While | For


# -- clauses --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    trigger: TriggerExpr
    context: Expr | None
    body: tuple[Statement, ...]
    label: Lit | None = None
    file: str = ""
    line: int = 0
    text: str = ""  # the plan's source, for askHow and tracing


@dataclass(frozen=True)
class Rule:
    head: Lit
    body: Expr
    file: str = ""
    line: int = 0
    position: int = 0
    """how many of the program's beliefs come before it: facts and rules of one predicate
    answer in source order (Jason keeps both in its belief base)"""
    fact: bool = False
    """a fact with variables (``last([X], X).``), kept as a rule without conditions"""


@dataclass
class Program:
    beliefs: list[Lit] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    goals: list[Lit] = field(default_factory=list)
    plans: list[Plan] = field(default_factory=list)
    included: list[tuple[str, str]] = field(default_factory=list)
    """(resolved path, text) of every file included, directly or not: what a cached parse
    depends on besides the main file"""

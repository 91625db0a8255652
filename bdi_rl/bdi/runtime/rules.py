"""Rules: compiled clauses and their backtracking solutions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator

from bdi_rl.bdi.runtime.terms import ANNOTS_SELF, UNBOUND, undo
from bdi_rl.bdi.runtime.unify import Code, Env

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.queries import Query


class CompiledRule:
    __slots__ = ("head", "body", "size", "file", "line", "annots")

    def __init__(
        self, head: list[Code], body: Query, size: int, file: str, line: int, annots: frozenset = ANNOTS_SELF
    ) -> None:
        self.head = head
        self.body = body
        self.size = size
        self.annots = annots
        """the annotations its answers carry: a rule is a belief of the agent's (Jason)"""
        self.file = file
        self.line = line


def solve_rules(ag: Any, rules: Iterable[CompiledRule], values: list[Any], trail: list) -> Iterator[Any]:
    for rule in rules:
        renv: Env = [UNBOUND] * rule.size
        mark = len(trail)
        ok = True
        for code, value in zip(rule.head, values, strict=False):
            if not code.match(value, renv, trail):
                ok = False
                break
        if ok:
            for _ in rule.body.solve(ag, renv, trail):
                yield True
        undo(trail, mark)

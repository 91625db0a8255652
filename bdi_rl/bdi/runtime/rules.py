"""Rules: compiled clauses and their backtracking solutions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from bdi_rl.bdi.runtime.terms import UNBOUND, undo
from bdi_rl.bdi.runtime.unify import Code, Env

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.queries import Query


class CompiledRule:
    __slots__ = ("head", "body", "size", "file", "line")

    def __init__(self, head: list[Code], body: Query, size: int, file: str, line: int) -> None:
        self.head = head
        self.body = body
        self.size = size
        self.file = file
        self.line = line


def solve_rules(ag: Any, rules: list[CompiledRule], values: list[Any], trail: list) -> Iterator[Any]:
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

"""The belief base: functor/arity -> {argument tuple: annotations}.

A query on ground arguments is one dict lookup; otherwise it scans one group, newest
first as in Jason. Annotations of one belief merge (``b[source(a)]`` and ``b[source(b)]``
are one belief with two sources); a belief goes when its last source does (Jason).

Jason keeps rules in the belief base with the facts, so a predicate with both answers in
their order: ``p(1). p(X) :- X = 2. p(4).`` gives 1, 2, 4. For a predicate that has rules
(and only then) :attr:`BeliefBase.order` keeps that order: its facts' argument tuples and
its rules, first answer first; a fact added later goes first (``+>b``: last), as in Jason.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bdi_rl.bdi.runtime.terms import Annots, Struct, Terms, has_source

Key = tuple[str, int]
Group = dict[Terms, Annots]
"""A predicate's facts: argument tuple -> annotations."""


class BeliefBase:
    __slots__ = ("groups", "order")

    def __init__(self) -> None:
        self.groups: dict[Key, Group] = {}
        self.order: dict[Key, list[Any]] = {}
        """for each predicate with rules: its facts (argument tuples) and rules, in the order
        queries answer them"""

    def add(self, key: Key, args: Terms, annots: Annots) -> Annots | None:
        """Add ``annots`` to the belief; returns the annotations that are new (the event's),
        or None when nothing changed."""
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = {}
        old = group.get(args)
        if old is None:
            group[args] = annots
            if self.order:
                order = self.order.get(key)
                if order is not None:
                    order.insert(0, args)
            return annots
        if annots <= old:
            return None
        group[args] = old | annots
        return annots - old

    def add_rule(self, key: Key, rule: Any, at_end: bool = False) -> None:
        """Put a rule first among its predicate's facts and rules (``at_end``: last)."""
        order = self.order.get(key)
        if order is None:
            group = self.groups.get(key) or {}
            order = self.order[key] = list(reversed(group))
        if at_end:
            order.append(rule)
        else:
            order.insert(0, rule)

    def remove(self, key: Key, args: Terms, annots: Annots) -> Annots | None:
        """Remove ``annots`` from the belief (all of it when it has no source left); returns
        the annotations removed, or None when it held none of them."""
        group = self.groups.get(key)
        if not group:
            return None
        old = group.get(args)
        if old is None:
            return None
        removed = old & annots
        if not removed:
            return None
        left = old - removed
        if left and has_source(left):
            group[args] = left
        else:
            del group[args]
            self._unorder(key, args)
            removed = old
        return removed

    def drop(self, key: Key, args: Terms) -> Annots | None:
        group = self.groups.get(key)
        if not group:
            return None
        dropped = group.pop(args, None)
        if dropped is not None:
            self._unorder(key, args)
        return dropped

    def _unorder(self, key: Key, args: Terms) -> None:
        if self.order:
            order = self.order.get(key)
            if order is not None:
                order.remove(args)

    def move_to_end(self, key: Key, args: Terms) -> None:
        """Make the belief the oldest of its group (queries scan newest first)."""
        group = self.groups[key]
        annots = group.pop(args)
        self.groups[key] = {args: annots, **group}
        if self.order:
            order = self.order.get(key)
            if order is not None:
                order.remove(args)
                order.append(args)

    def get(self, key: Key) -> Group | None:
        return self.groups.get(key)

    def __iter__(self) -> Iterator[Struct]:
        for (functor, _), group in self.groups.items():
            for args, annots in group.items():
                yield Struct(functor, args, annots)

    def count(self) -> int:
        return sum(len(g) for g in self.groups.values())

    def snapshot(self) -> list[Any]:
        return list(self)

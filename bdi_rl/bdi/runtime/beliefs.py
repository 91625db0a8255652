"""The belief base: functor/arity -> {argument tuple: annotations}.

A query on ground arguments is one dict lookup; otherwise it scans one group, newest
first as in Jason. Annotations of one belief merge (``b[source(a)]`` and ``b[source(b)]``
are one belief with two sources); a belief goes when its last source does (Jason).
"""

from __future__ import annotations

from typing import Any, Iterator

from bdi_rl.bdi.runtime.terms import Struct, has_source

Key = tuple[str, int]


class BeliefBase:
    __slots__ = ("groups",)

    def __init__(self) -> None:
        self.groups: dict[Key, dict[tuple, frozenset]] = {}

    def add(self, key: Key, args: tuple, annots: frozenset) -> frozenset | None:
        """Add ``annots`` to the belief; returns the annotations that are new (the event's),
        or None when nothing changed."""
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = {}
        old = group.get(args)
        if old is None:
            group[args] = annots
            return annots
        if annots <= old:
            return None
        group[args] = old | annots
        return annots - old

    def remove(self, key: Key, args: tuple, annots: frozenset) -> frozenset | None:
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
            removed = old
        return removed

    def drop(self, key: Key, args: tuple) -> frozenset | None:
        group = self.groups.get(key)
        if not group:
            return None
        return group.pop(args, None)

    def move_to_end(self, key: Key, args: tuple) -> None:
        """Make the belief the oldest of its group (queries scan newest first)."""
        group = self.groups[key]
        annots = group.pop(args)
        self.groups[key] = {args: annots, **group}

    def get(self, key: Key) -> dict[tuple, frozenset] | None:
        return self.groups.get(key)

    def __iter__(self) -> Iterator[Struct]:
        for (functor, _), group in self.groups.items():
            for args, annots in group.items():
                yield Struct(functor, args, annots)

    def count(self) -> int:
        return sum(len(g) for g in self.groups.values())

    def snapshot(self) -> list[Any]:
        return list(self)

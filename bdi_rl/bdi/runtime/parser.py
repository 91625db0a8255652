"""Source text -> :mod:`~bdi_rl.bdi.runtime.syntax` AST: a plan library, its includes and one
term. ``{ include("f.asl") }`` is resolved here, relative to the including file, so the
compiler sees one program. The text itself is parsed by :mod:`~bdi_rl.bdi.runtime.larkparse`
(lark), imported on first use: :func:`parse_file` reads a file parsed before, whose text and
includes have not changed, from the program cache (:mod:`~bdi_rl.bdi.runtime.programcache`),
so a run's start imports no parser at all.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeAlias

from bdi_rl.bdi.runtime import programcache
from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.errors import AslSyntaxError

Children: TypeAlias = list[Any]


def parse_text(
    text: str, file: str = "<string>", _seen: frozenset[str] = frozenset(), *, wire: bool = False
) -> s.Program:
    """Parse a plan library; ``{ include("f") }`` is read relative to ``file``. ``wire``:
    strings as bdi-rl's messages write them (every backslash an escape), not as Jason reads
    them in a plan file."""
    from bdi_rl.bdi.runtime.larkparse import clauses

    program = s.Program()
    _add_clauses(program, clauses(text, file, wire), file, _seen)
    if not _seen or len(_seen) == 1:  # the whole program, includes and all
        _check_labels(program)
    return program


def _check_labels(program: s.Program) -> None:
    """Jason refuses an agent with two plans of one label."""
    seen: dict[str, s.Plan] = {}
    for plan in program.plans:
        if plan.label is None:
            continue
        first = seen.setdefault(plan.label.functor, plan)
        if first is not plan:
            raise AslSyntaxError(
                f"{plan.file}:{plan.line}: there already is a plan with label {plan.label.functor} "
                f"({first.file}:{first.line})"
            )


def _add_clauses(program: s.Program, clauses: Children, file: str, seen: frozenset[str]) -> None:
    for clause in clauses:
        if isinstance(clause, s.Plan):
            program.plans.append(clause)
        elif isinstance(clause, s.Rule):
            program.rules.append(replace(clause, position=len(program.beliefs)))
        elif clause[0] == "belief":
            program.beliefs.append(clause[1])
        elif clause[0] == "goal":
            program.goals.append(clause[1])
        elif clause[0] == "namespace":
            _add_clauses(program, clause[2], file, seen)
        elif clause[0] == "include":
            inner = _include(file, clause[1], clause[2], seen)
            offset = len(program.beliefs)
            program.beliefs += inner.beliefs
            program.rules += [replace(r, position=r.position + offset) for r in inner.rules]
            program.goals += inner.goals
            program.plans += inner.plans
            program.included += inner.included


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
    """The program of a plan file: from the program cache when this text (and every file it
    includes) was parsed before, else parsed and kept there."""
    path = Path(path)
    return parse_file_text(path, _read_plan_file(path, str(path)))


def parse_file_text(path: Path, text: str) -> s.Program:
    """:func:`parse_file` of ``text``, read from ``path`` by the caller."""
    cached = programcache.load(path, text)
    if cached is not None:
        return cached
    program = parse_text(text, str(path), frozenset({str(path.resolve())}))
    programcache.store(path, text, program)
    return program


def parse_expr(text: str) -> s.Expr:
    """One term or formula (message contents, tellHow triggers, tests)."""
    program = parse_text(f"term__({text}).", "<term>")
    heads = program.beliefs + [rule.head for rule in program.rules if rule.fact]  # with variables
    if len(heads) != 1 or len(program.rules) + len(program.beliefs) != 1 or len(heads[0].args) != 1:
        raise AslSyntaxError(f"not one term: {text!r}")
    return heads[0].args[0]

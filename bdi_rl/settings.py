"""A spec's settings by path (``learning.alpha``, ``agents.learner.asl``,
``env.kwargs.is_slippery``): what ``bdi-rl run --set`` and sweeps change in a spec.

A path names keys of the spec's TOML table, dot by dot, except that ``agents.NAME`` is the
agent group named NAME (``[[agents]]`` is a list). A setting changes the table before the spec
is checked, so a bad one is refused by the very check a spec file gets (the spec loader
names the key); a path that leads nowhere is refused here, naming what the spec has.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from typing import Any

from bdi_rl.spec import SpecError

_KEY = re.compile(r"[A-Za-z0-9_-]+")


def parse_value(text: str, where: str) -> Any:
    """A TOML value (``0.2``, ``true``, ``"learner.asl"``, ``[1, 2]``, ``{ map_name = "8x8" }``)."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        raise SpecError(f'{where}: {text!r} is not a TOML value (a string is quoted: "{text}")') from None


def toml_literal(value: Any) -> str:
    """``value`` as a TOML literal that :func:`parse_value` reads back (``--set`` a child takes)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return (
            "nan"
            if value != value
            else ("inf" if value == float("inf") else "-inf" if value == float("-inf") else repr(value))
        )
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # JSON's string escapes are TOML's
    if isinstance(value, list):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_literal(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML literal for {type(value).__name__}")


def parse_setting(text: str) -> tuple[str, Any]:
    """``PATH=VALUE`` (as ``--set`` takes it) -> (path, value)."""
    path, equals, value = text.partition("=")
    path = path.strip()
    if not equals or not path:
        raise SpecError(f"--set {text!r}: write PATH=VALUE (learning.alpha=0.2)")
    check_path(path, f"--set {path}")
    return path, parse_value(value.strip(), f"--set {path}")


def check_path(path: str, where: str) -> list[str]:
    keys = path.split(".")
    if not all(_KEY.fullmatch(key) for key in keys):
        raise SpecError(f"{where}: not a spec path (keys joined by dots: learning.alpha, agents.learner.asl)")
    return keys


def _group(table: dict[str, Any], name: str, where: str) -> dict[str, Any]:
    groups = table.get("agents")
    found = [g for g in groups if isinstance(g, dict) and g.get("name") == name] if isinstance(groups, list) else []
    if not found:
        names = [g.get("name") for g in groups if isinstance(g, dict)] if isinstance(groups, list) else []
        raise SpecError(
            f"{where}: the spec has no agent group {name!r} (groups: {', '.join(map(str, names)) or 'none'})"
        )
    return found[0]


def apply_setting(table: dict[str, Any], path: str, value: Any, where: str | None = None) -> None:
    """Set ``path`` in a spec's TOML ``table`` to ``value`` (tables on the way are made)."""
    where = where or path
    keys = check_path(path, where)
    node = table
    i = 0
    while i < len(keys) - 1:
        key = keys[i]
        if node is table and key == "agents":
            node = _group(table, keys[i + 1], where)
            i += 2
            continue
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise SpecError(f"{where}: {'.'.join(keys[: i + 1])} is a value, not a table")
        node = child
        i += 1
    if i == len(keys):  # agents.NAME alone: a whole group is not one setting
        raise SpecError(f"{where}: name a field of the group (agents.{keys[-1]}.asl, ...)")
    node[keys[-1]] = value


def apply_settings(table: dict[str, Any], settings: Mapping[str, Any], where: str = "--set") -> None:
    for path, value in settings.items():
        apply_setting(table, path, value, f"{where} {path}")

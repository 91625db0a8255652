"""Jason 3.2.2's standard library by name, and why bdi-rl refuses the actions it does not
implement.

:data:`JASON_ACTIONS` is every internal action of ``jason.stdlib`` at tag v3.2.2 (its
package's classes, ``map.*``/``set.*``/``queue.*`` included). An action of it that is not
among the standard ones (stdlib.py) is refused when a plan file is loaded, naming the
file, the line, the action and :data:`REFUSED`'s reason. A name in no library at all is
refused too (Jason would fail it when it runs, ``error(action_failed)``): a typo is
caught before a run, and the message names the closest action there is.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: Every action of Jason 3.2.2's ``jason.stdlib``, by what it works on (docs/AGENTSPEAK.md's table).
JASON_ACTIONS: dict[str, tuple[str, ...]] = {
    "communication": (".send", ".broadcast", ".my_name", ".all_names"),
    "the MAS": (".create_agent", ".kill_agent", ".stopMAS", ".clone", ".save_agent"),
    "directory facilitator": (".df_register", ".df_deregister", ".df_search", ".df_subscribe"),
    "lists and sets": (
        ".member",
        ".length",
        ".empty",
        ".nth",
        ".concat",
        ".delete",
        ".reverse",
        ".sort",
        ".max",
        ".min",
        ".shuffle",
        ".range",
        ".prefix",
        ".suffix",
        ".sublist",
        ".union",
        ".intersection",
        ".difference",
    ),
    "strings": (".term2string", ".substring", ".upper_case", ".lower_case", ".replace"),
    "terms": (
        ".atom",
        ".literal",
        ".structure",
        ".number",
        ".string",
        ".list",
        ".ground",
        ".type",
        ".copy_term",
        ".rename_apart",
        ".eval",
        ".add_annot",
        ".add_nested_source",
        ".remove_source_annot",
        ".internal_action",
    ),
    "beliefs": (
        ".findall",
        ".setof",
        ".count",
        ".belief",
        ".abolish",
        ".asserta",
        ".assertz",
        ".namespace",
        ".relevant_rules",
        ".list_rules",
    ),
    "printing": (".print", ".println", ".printf", ".puts", ".log", ".print_unifier", ".verbose"),
    "system": (".random", ".set_random_seed", ".date", ".time", ".nano_time", ".version", ".list_files"),
    "control": (".wait", ".fail", ".at", ".signal", ".perceive", ".include", ".get_src_info"),
    "statement forms": (".foreach", ".loop", ".if_then_else", ".fork", ".join"),
    "goals and intentions": (
        ".current_intention",
        ".intention",
        ".desire",
        ".intend",
        ".drop_desire",
        ".drop_all_desires",
        ".drop_intention",
        ".drop_all_intentions",
        ".drop_future_intention",
        ".drop_event",
        ".drop_all_events",
        ".succeed_goal",
        ".fail_goal",
        ".done",
        ".suspend",
        ".resume",
        ".suspended",
    ),
    "plans": (".add_plan", ".remove_plan", ".plan_label", ".relevant_plans", ".relevant_plan", ".list_plans"),
    "Java collections": (
        *(f".map.{n}" for n in ("create", "put", "get", "key", "value", "remove", "clear", "copy")),
        *(
            f".set.{n}"
            for n in (
                "create",
                "add",
                "add_all",
                "remove",
                "union",
                "intersection",
                "difference",
                "clear",
                "copy",
                "to_list",
            )
        ),
        *(f".queue.{n}" for n in ("create", "add", "add_all", "head", "remove", "clear", "copy", "to_list")),
    ),
}

#: the goal, intention and plan management actions of management.py and planlibrary.py
MANAGED = frozenset(
    {
        ".intention",
        ".desire",
        ".intend",
        ".drop_desire",
        ".drop_all_desires",
        ".drop_intention",
        ".drop_all_intentions",
        ".drop_event",
        ".succeed_goal",
        ".fail_goal",
        ".suspend",
        ".resume",
        ".suspended",
        ".current_intention",
        ".add_plan",
        ".remove_plan",
        ".plan_label",
        ".relevant_plans",
    }
)
_REST = "not implemented in bdi-rl yet (the other goal, intention and plan management actions are)"
_DF = "no directory facilitator in bdi-rl: .all_names and the spec's team percepts name the agents"
_COLLECTIONS = "Java's mutable sets, maps and queues have no term in bdi-rl: use lists (.union, .difference, .nth ...)"
_FORMS = "a statement form of Jason's parser: write for/while/if (plan bodies are not terms in bdi-rl)"

#: Why each Jason action bdi-rl does not implement is refused at load.
REFUSED: dict[str, str] = {
    ".clone": "copies a running agent's mind: bdi-rl creates agents from plan files (.create_agent)",
    ".save_agent": "writes the mind back as AgentSpeak source: bdi-rl's trace records the mind (bdi-rl inspect)",
    ".df_register": _DF,
    ".df_deregister": _DF,
    ".df_search": _DF,
    ".df_subscribe": _DF,
    ".internal_action": "internal actions are not terms in bdi-rl",
    ".namespace": "no namespaces in bdi-rl",
    ".relevant_rules": "rules are not terms in bdi-rl",
    ".list_rules": "rules are not terms in bdi-rl",
    ".print_unifier": "prints Jason's internal unifier (a debugging aid in Java's hash order)",
    ".verbose": "sets Jason's log level: bdi-rl's trace level is the spec's trace setting",
    ".list_files": "plans do not read the file system in bdi-rl",
    ".at": "timed events are not in bdi-rl: .wait(Milliseconds) then the goal",
    ".perceive": "percepts arrive with each environment action (.rl_*): there is no perception step to force",
    ".get_src_info": "an internal of Jason's unit-test library",
    ".foreach": _FORMS,
    ".loop": _FORMS,
    ".if_then_else": _FORMS,
    ".fork": "concurrent plan bodies (|&|, |||) are not in bdi-rl",
    ".join": "concurrent plan bodies (|&|, |||) are not in bdi-rl",
    **{name: _REST for name in JASON_ACTIONS["goals and intentions"] + JASON_ACTIONS["plans"] if name not in MANAGED},
    **{name: _COLLECTIONS for name in JASON_ACTIONS["Java collections"]},
}


def every_action() -> list[str]:
    return [name for names in JASON_ACTIONS.values() for name in names]


def unknown_action(name: str, known: Iterable[str]) -> str:
    """The load error for ``name``, which no action table holds: Jason's reason to refuse it,
    or that it is unknown and the closest name there is."""
    reason = REFUSED.get(name)
    if reason is not None:
        return f"{name} is a Jason action bdi-rl does not implement: {reason}"
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown internal action {name}{hint}"

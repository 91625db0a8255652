"""``bdi-rl inspect``: the Mind Inspector's content, in the terminal.

What one agent believed, intended and did at one point of a run: the same content as the web
viewer's inspector (:mod:`bdi_rl.readers.viewer`), from the same index (:mod:`bdi_rl.readers.runindex`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from bdi_rl.readers.explain import choices_behind, explain_step
from bdi_rl.readers.indexcache import default_cache_dir, open_index
from bdi_rl.readers.mindnotes import mind_notes
from bdi_rl.readers.runindex import OnDamage, RunIndex
from bdi_rl.store import TRACE_FILE
from bdi_rl.trace.kinds import MSG_SEND, WORLD_STEP


class InspectError(ValueError):
    """A run, agent or position that is not in the trace (one line, for the CLI)."""


def find_run(run: str, runs_dir: Path) -> Path:
    """A run directory given as a path or as a run id under ``runs_dir``."""
    for candidate in (Path(run), runs_dir / run):
        if (candidate / TRACE_FILE).is_file():
            return candidate
    raise InspectError(f"{run}: not a run directory (no {TRACE_FILE} there or under {runs_dir})")


def resolve_agent(index: RunIndex, name: str) -> str:
    for jid in index.agents:
        if name in (jid, jid.split("@", 1)[0]):
            return jid
    known = ", ".join(sorted(j.split("@", 1)[0] for j in index.agents)) or "none"
    raise InspectError(f"--agent {name}: no such agent in this run (agents: {known})")


def inspect_mind(
    run_dir: Path,
    agent: str,
    event: int | None,
    episode: int | None,
    step: int | None,
    on_damage: OnDamage = None,
) -> dict[str, Any]:
    """The inspector's content at one position, as plain data (a damaged trace is refused,
    or read around when ``on_damage`` says so, and the notes say so too)."""
    index = open_index(run_dir, default_cache_dir(), on_damage)
    jid = resolve_agent(index, agent)
    total = index.agents[jid].events
    if episode is not None:
        try:
            position = index.span_of(jid, episode, step)[1]
        except KeyError as exc:
            raise InspectError(f"--episode/--step: {exc.args[0]}") from None
    elif event is not None:
        if not 0 <= event < total:
            raise InspectError(f"--event {event}: {jid} has events 0..{total - 1}")
        position = event
    else:
        position = total - 1
    state, current = index.mind_at(jid, position)
    messages = [m for m in index.agents[jid].messages if m["position"] <= position][-10:]
    return {
        "agent": jid,
        "position": position,
        "events": total,
        "event": current[0],
        "beliefs": state.beliefs,
        "intentions": state.intentions,
        "stacks": state.stacks,
        "options": state.options,
        "cycle": state.cycle,
        "rl": state.rl,
        "choice": explain_step(state.rl, index.agents[jid].action_names) if state.rl else None,
        "plan_choices": choices_behind(index.agents[jid].choices, state.intentions, position),
        "messages": messages,
        "notes": _damage_notes(index) + mind_notes(index.trace_level, state.beliefs, current[0]),
    }


def _damage_notes(index: RunIndex) -> list[str]:
    notice = index.damage_notice()
    return [] if notice is None else [f"DAMAGED TRACE, read around: {notice}"]


def _tidy(value: Any) -> Any:
    """Floats with their binary noise trimmed for display (epsilon 0.7150000000000001 prints
    as 0.715); 12 significant digits are kept."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: _tidy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tidy(v) for v in value]
    return value


def print_mind(view: dict[str, Any], file: Any = None) -> None:
    console = Console(file=file or sys.stdout, width=120, highlight=False)
    event = view["event"]
    head = (
        f"{view['agent']}  event {view['position']} of {view['events']}  "
        f"episode {event.get('episode')}, step {event.get('step')}"
    )
    if event["kind"] == WORLD_STEP:
        parts: list[Any] = [_joint_step_panel(event["data"])]
    else:
        parts = [Panel(escape(f"{event['kind']} {json.dumps(_tidy(event['data']))}"), title="event")]
    if view.get("stacks") is not None:
        parts.append(_stacks_panel(view["stacks"]))
    else:
        intentions = Table(show_header=True, box=None)
        for column in ("plan", "trigger", "asked by"):
            intentions.add_column(column)
        for i in view["intentions"]:
            intentions.add_row(escape(f"@{i['plan']}"), escape(str(i["trigger"])), escape(str(i["source"])))
        parts.append(Panel(intentions, title=f"intentions ({len(view['intentions'])})"))
    if view.get("plan_choices"):
        why = [escape(c["why"]) for c in view["plan_choices"]]
        parts.append(Panel("\n".join(why), title="why these plans (learned choices)"))
    if view.get("cycle") is not None:
        parts.append(_cycle_panel(view["cycle"]))
    if view.get("options") is not None:
        parts.append(_options_panel(view["options"]))
    beliefs = Table(show_header=True, box=None)
    beliefs.add_column("belief")
    beliefs.add_column("source")
    for text, sources in sorted(view["beliefs"].items()):
        beliefs.add_row(escape(text), escape(", ".join(sources)))
    parts.append(Panel(beliefs, title=f"beliefs ({len(view['beliefs'])})"))
    parts.extend(Panel(escape(note), title="note") for note in view["notes"])
    rl = view["rl"]
    if rl is not None:
        line = (
            f"state {rl.get('s')} -> action {rl.get('a')} -> state {rl.get('s2')}, reward "
            f"{rl.get('r')}; Q(s,a) {rl.get('q_before')} -> {rl.get('q_after')}; "
            f"epsilon {rl.get('epsilon')}"
        )
        choice = view["choice"]
        if choice["labels"]:
            row = zip(choice["labels"], rl["q"], strict=False)  # a trace from elsewhere may differ
            line += "\nQ[s]: " + ", ".join(f"{label} {value:.4g}" for label, value in row)
        if choice["why"]:
            line += f"\nwhy {choice['action']}? {choice['why']}"
        parts.append(Panel(escape(line), title="last Q-learning step"))
    if view["messages"]:
        lines = [
            ("-> " + str(m.get("to")) if m["kind"] == MSG_SEND else "<- " + str(m.get("from")))
            + f" {m.get('performative')} {str(m.get('content'))[:200]}"
            for m in view["messages"]
        ]
        parts.append(Panel(escape("\n".join(lines)), title="last messages"))
    console.print(Panel(Group(*parts), title=escape(head)))


# -- cycle level: Jason's view of the mind ---------------------------------------------------
def _stacks_panel(stacks: list[dict[str, Any]]) -> Panel:
    """Every intention's stack of intended means, the innermost (about to run) first, each at
    the ``file:line`` of its next instruction (the file's name; the viewer shows its path)."""
    table = Table(show_header=True, box=None)
    for column in ("intention", "plan", "trigger", "next instruction"):
        table.add_column(column)
    for stack in stacks:
        means = list(reversed(stack.get("means") or []))
        head = escape(f"#{stack.get('id')} {stack.get('state')}")
        if not means:
            table.add_row(head, "", "", "")
        for k, m in enumerate(means):
            table.add_row(
                head if k == 0 else "",
                escape(f"@{m.get('plan')}"),
                escape(str(m.get("trigger"))),
                escape(f"{_base_name(m.get('file'))}:{m.get('line')}"),
            )
    if not stacks:
        return Panel("no intentions", title="intentions (stacks)")
    return Panel(table, title=f"intentions (stacks): {len(stacks)}")


def _base_name(path: Any) -> str:
    return str(path).replace("\\", "/").rsplit("/", 1)[-1]


def _cycle_panel(cycle: dict[str, Any]) -> Panel:
    """The latest reasoning cycle: what it ran, the events it took and those still waiting."""
    if cycle.get("plan"):
        line = "" if cycle.get("line") is None else f" at line {cycle['line']}"
        ran = f"running @{cycle['plan']}{line}, stack depth {cycle.get('depth')}"
    else:
        ran = "no current intention"
    count = cycle.get("intentions")
    lines = [f"{ran} · {count} intention{'' if count == 1 else 's'}"]
    for name, key in (("taken", "events"), ("pending", "pending")):
        triggers = cycle.get(key)
        lines.append(f"{name}: " + ("not recorded" if triggers is None else ", ".join(map(str, triggers)) or "none"))
    return Panel(escape("\n".join(lines)), title=f"events (cycle {cycle.get('n')})")


def _options_panel(options: dict[str, Any]) -> Panel:
    """The latest plan selection: relevant and applicable plans, the selected one in bold."""
    selected = options.get("selected")

    def plans(labels: list[Any]) -> str:
        marked = [f"[bold reverse]{escape(f'@{p}')}[/]" if p == selected else escape(f"@{p}") for p in labels]
        return " ".join(marked) or "none"

    chosen = "none (no applicable plan)" if selected is None else f"[bold reverse]{escape(f'@{selected}')}[/]"
    text = (
        f"event {escape(str(options.get('event')))}\n"
        f"relevant: {plans(options.get('relevant') or [])}\n"
        f"applicable: {plans(options.get('applicable') or [])}\n"
        f"selected: {chosen}"
    )
    return Panel(text, title="options (latest plan selection)")


# -- a shared world's joint step --------------------------------------------------------------
def joint_step_line(data: dict[str, Any]) -> str:
    """One line for a ``world.step``: every agent's action and reward, who defaulted."""
    late = set(data.get("defaulted") or ())
    acted = ", ".join(
        f"{agent} a{a}{' (default)' if agent in late else ''} -> {_tidy(r)}"
        for agent, a, r in zip(data["agents"], data["actions"], data["rewards"], strict=False)
    )
    return f"episode {data['episode']} step {data['step']}: {acted}" + (" · done" if data["done"] else "")


def _joint_step_panel(data: dict[str, Any]) -> Panel:
    """A ``world.step`` as a table: one row per agent, and the food left on a grid world."""
    table = Table(show_header=True, box=None)
    positions = data.get("positions")
    columns = ["agent", "state", "action", "reward"] + (["at (x, y)"] if positions else []) + ["defaulted"]
    for column in columns:
        table.add_column(column)
    late = set(data.get("defaulted") or ())
    for i, agent in enumerate(data["agents"]):
        row = [escape(str(agent)), str(data["states"][i]), f"a{data['actions'][i]}", str(_tidy(data["rewards"][i]))]
        if positions:
            row.append(str(tuple(positions[i])) if i < len(positions) else "-")
        table.add_row(*row, "yes" if agent in late else "")
    lines: list[Any] = [escape(joint_step_line(data)), table]
    items = data.get("items")
    if items is not None:
        food = ", ".join(f"({x}, {y}) level {level}" for x, y, level in items) or "none left"
        lines.append(escape(f"food: {food}"))
    return Panel(Group(*lines), title=f"event: {WORLD_STEP} (a joint step)")

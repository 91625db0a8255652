"""Why an agent took the action it took at one Q-learning step, in words.

Answers the inspector's central question ("why did it go left at step 40?") from an
``rl.step`` event alone: its Q row for the state (before the update), the action taken and
epsilon. Epsilon-greedy either takes the highest-valued action or, with probability epsilon,
a random one; an action below the row's maximum can only have come from exploring.
"""

from __future__ import annotations

from typing import Any


def action_label(a: int, names: list[str] | None) -> str:
    return names[a] if names and 0 <= a < len(names) else f"a{a}"


def explain_step(rl: dict[str, Any], names: list[str] | None) -> dict[str, Any]:
    """``{"action", "labels", "greedy", "explored", "why"}``; ``explored`` and ``greedy`` are
    None when the event has no Q row (traces written before rows were recorded)."""
    a = int(rl.get("a", -1))
    q = rl.get("q")
    labels = [action_label(i, names) for i in range(len(q))] if isinstance(q, list) else None
    action = action_label(a, names)
    result: dict[str, Any] = {"action": action, "labels": labels, "greedy": None, "explored": None, "why": None}
    if not isinstance(q, list) or not labels or not 0 <= a < len(q):
        return result
    best = max(q)
    greedy = [labels[i] for i, value in enumerate(q) if value == best]
    epsilon = rl.get("epsilon")
    chance = f"{epsilon:.0%}" if isinstance(epsilon, (int, float)) else "?"
    result["greedy"] = greedy
    result["explored"] = q[a] != best
    if q[a] != best:
        result["why"] = (
            f"{action}: an exploring move (epsilon {chance}); the greedy choice in "
            f"state {rl.get('s')} was {' or '.join(greedy)} with Q {best:.4g}, "
            f"{action} had {q[a]:.4g}"
        )
    elif len(greedy) > 1:
        result["why"] = (
            f"{action}: tied for the highest Q ({best:.4g}) with "
            f"{', '.join(g for g in greedy if g != action)}; ties break at random "
            f"(epsilon {chance} of moves are random)"
        )
    else:
        result["why"] = (
            f"{action}: the greedy choice, the highest Q in state {rl.get('s')} "
            f"({best:.4g}; next best {_second(q):.4g}); epsilon {chance} of moves are random"
        )
    return result


def _second(q: list[float]) -> float:
    ordered = sorted(q, reverse=True)
    return ordered[1] if len(ordered) > 1 else ordered[0]


def explain_choice(choice: dict[str, Any]) -> str:
    """A learned plan choice (a ``plan.choice`` event's data) in words: "chose @hug_edge for
    +!cross in pos(0, 3): value -13 against @high_road -17 (greedy)"."""
    options, values, chosen = choice["options"], choice["values"], choice["chosen"]
    mine = values[options.index(chosen)] if chosen in options else None
    others = ", ".join(f"@{o} {v:.4g}" for o, v in zip(options, values, strict=False) if o != chosen)
    state = choice["state"] or "no state"
    how = f"exploring, epsilon {choice['epsilon']:.2g}" if choice["exploring"] else "greedy"
    value = "" if mine is None else f": value {mine:.4g}"
    against = f" against {others}" if others else " (its only option)"
    return f"chose @{chosen} for {choice['goal']} in {state}{value}{against} ({how})"


def choices_behind(
    choices: list[dict[str, Any]], intentions: list[dict[str, Any]], position: int
) -> list[dict[str, Any]]:
    """Why each running plan that was chosen by learned value runs: the latest choice of it
    up to ``position``, with its sentence (``why``), in the intentions' order."""
    made = [c for c in choices if c["position"] <= position]
    found = []
    for intention in intentions:
        plan = intention.get("plan")
        latest = next((c for c in reversed(made) if c["chosen"] == plan), None)
        if latest is not None:
            found.append({**latest, "why": explain_choice(latest)})
    return found

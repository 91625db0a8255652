"""Communication: sending, synchronous asks and their answers, and the KQML performatives
received (tell, untell, achieve, unachieve, askOne, askAll, tellHow, untellHow, askHow).

The functions taking ``ag`` (typed ``state.AgentState``) are :class:`~bdi_rl.bdi.runtime.agent.Agent`'s
methods (bound in agent.py); they call each other through ``ag`` so that a listener's
wrappers see every call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bdi_rl.bdi.runtime.errors import NoPlan, PlanFailure
from bdi_rl.bdi.runtime.intention import Frame, Intention
from bdi_rl.bdi.runtime.management import drop_desire
from bdi_rl.bdi.runtime.planlibrary import (
    add_plans,
    answered_plan,
    plan_program,
    plan_term,
    relevant_plans,
    remove_plans,
)
from bdi_rl.bdi.runtime.queries import solve_value
from bdi_rl.bdi.runtime.terms import FALSE, SELF, Struct, Trail, atom, is_ground, resolve, source, term_str, undo, unify
from bdi_rl.bdi.runtime.triggers import ADD_TEST, trigger_of
from bdi_rl.bdi.runtime.unify import Match

if TYPE_CHECKING:
    from bdi_rl.bdi.runtime.state import AgentState


def send(ag: AgentState, receiver: Any, performative: str, content: Any, msg_id: str | None = None) -> None:
    if performative in ("askOne", "askAll", "askHow") and msg_id is None:
        msg_id = f"{ag.name}#{next(ag._seq)}"
    receivers = receiver if type(receiver) is tuple else (receiver,)
    for to in receivers:
        ag.host.send(ag, to, performative, content, msg_id=msg_id)


def ask(
    ag: AgentState,
    it: Intention,
    frame: Frame,
    receiver: Any,
    performative: str,
    content: Any,
    answer: Match,
    timeout_ms: Any,
) -> None:
    msg_id = f"{ag.name}#{next(ag._seq)}"
    entry: list[Any] = [it, frame, answer, performative, None]
    ag.pending_asks[msg_id] = tuple(entry)
    it.wait_for(_WAITING_ASK, msg_id, next(ag._seq))  # Jason's pending intention, by the ask's id
    if it.atomic:
        ag.atomic = it
    if timeout_ms is not None:
        ag._timer(timeout_ms, lambda: ag._ask_timeout(msg_id))
    ag.send(receiver, performative, content, msg_id)


def _ask_timeout(ag: AgentState, msg_id: str) -> None:
    entry = ag.pending_asks.pop(msg_id, None)
    if entry is None:
        return
    ag.expired_asks.add(msg_id)
    it, frame, answer = entry[:3]
    if not it.dropped:
        ag._resume_ask(it, frame, answer, atom("timeout"))


def _process_messages(ag: AgentState) -> None:
    """Every message delivered (the fast cycle; Jason's takes one per cycle)."""
    inbox, ag.inbox = ag.inbox, []
    for message in inbox:
        ag._process_message(*message)


def _process_message(
    ag: AgentState, sender: Any, performative: str, content: Any, msg_id: Any, in_reply_to: Any
) -> None:
    """One message: an answer resumes its asker; anything else the trust predicate accepts
    is handled by its performative."""
    if sender == ag.name or sender == ag.name_term:
        sender = SELF
    if in_reply_to is not None:
        if in_reply_to in ag.pending_asks:
            ag._answer_arrived(sender, performative, content, in_reply_to)
            return
        if in_reply_to in ag.expired_asks:
            return
    if not ag.host.accept(ag, sender, performative, content):
        ag.refused += 1
        return
    handler = _PERFORMATIVES.get(performative)
    if handler is not None:
        handler(ag, sender, content, msg_id)


def _answer_arrived(ag: AgentState, sender: Any, performative: str, content: Any, msg_id: str) -> None:
    it, frame, answer, asked = ag.pending_asks.pop(msg_id)[:4]
    if it.dropped:
        return
    if asked == "askOne":
        value = FALSE if performative == "untell" else _with_source(content, sender)
    elif asked == "askAll" and type(content) is tuple:
        value = tuple(_with_source(c, sender) for c in content)
    elif asked == "askHow" and type(content) is tuple:
        value = tuple(answered_plan(c, sender) for c in content)
    else:
        value = content
    ag._resume_ask(it, frame, answer, value)


def _resume_ask(ag: AgentState, it: Intention, frame: Frame, answer: Match, value: Any) -> None:
    """The asker goes on with the answer (or ``timeout``) unified with ``.send``'s 4th
    argument; when it does not unify, the ``.send`` fails with ``ask_failed`` (Jason)."""
    it.reason = None
    if answer(value, frame.env, None):
        ag._resume_now(it)
    else:
        ag._fail(
            it,
            frame,
            frame.pc - 1,
            PlanFailure(
                "ask_failed",
                f"reply of an ask message ('{term_str(value)}') does not unify with the fourth argument of .send",
            ),
        )


def _on_tell(ag: AgentState, sender: Any, content: Any, msg_id: Any) -> None:
    for item in content if type(content) is tuple else (content,):
        if type(item) is Struct and is_ground(item):
            item = _with_source(item, sender)
            ag._bb_add(item.functor, item.args, item.annots)


def _on_untell(ag: AgentState, sender: Any, content: Any, msg_id: Any) -> None:
    for item in content if type(content) is tuple else (content,):
        if type(item) is not Struct:
            continue
        group = ag.beliefs.groups.get((item.functor, len(item.args)))
        for bargs in list(group or ()):
            trail: Trail = []
            if all(unify(a, b, trail) for a, b in zip(item.args, bargs, strict=False)):
                ag._bb_remove(item.functor, bargs, frozenset((source(sender),)))
            undo(trail, 0)


def _on_achieve(ag: AgentState, sender: Any, content: Any, msg_id: Any) -> None:
    if type(content) is Struct:
        ag.post_goal(_with_source(content, sender))


def _on_unachieve(ag: AgentState, sender: Any, content: Any, msg_id: Any) -> None:
    """Drop the desire (Jason's kqmlPlans: ``.drop_desire(Content)``): the intentions with
    the goal and its events."""
    if type(content) is Struct:
        drop_desire(ag, Struct(content.functor, content.args))


def _on_ask(ag: AgentState, sender: Any, content: Any, msg_id: Any, every: bool = False) -> None:
    trail: Trail = []
    answers = []
    for found in solve_value(ag, content, trail):
        answer = resolve(content)
        answer = Struct(answer.functor, answer.args, frozenset(a for a in found.annots if a != source(SELF)))
        answers.append(answer)
        if not every:
            break
    undo(trail, 0)
    if every:
        ag.host.send(ag, sender, "tell", tuple(answers), in_reply_to=msg_id)
    elif answers:
        ag.host.send(ag, sender, "tell", answers[0], in_reply_to=msg_id)
    elif not ag._ask_test_goal(sender, content, msg_id):
        ag.host.send(ag, sender, "untell", content, in_reply_to=msg_id)


def _ask_test_goal(ag: AgentState, sender: Any, content: Any, msg_id: Any) -> bool:
    """An askOne no belief answers: Jason's ``?Content[source(Sender)]`` (kqmlPlans.asl) in a
    new intention, whose ``+?q`` plan's bindings are the answer (:func:`_answer_ask`). False
    when no plan is relevant or applicable: the ask is answered ``untell`` at once."""
    content = resolve(content)
    if type(content) is not Struct or (ADD_TEST, content.functor, len(content.args)) not in ag.plans:
        return False
    # the asker as the goal's one source (a source the query named was for beliefs only)
    annots = frozenset(a for a in content.annots if not _is_source(a))
    query = Struct(content.functor, content.args, annots | {source(sender)})
    try:
        plan, env = ag._select(ADD_TEST, query)
    except NoPlan:
        return False
    it = ag._new_intention()
    it.reply = (sender, msg_id, query)
    ag._push(it, plan, env, ADD_TEST, query, 0)
    ag._resume_now(it)
    return True


def _answer_ask(ag: AgentState, it: Intention, answered: bool) -> None:
    """The ``+?q`` intention of an ask ended: reply with the query as its plans bound it
    (without source annotations), or ``untell`` when it was dropped (Jason's kqmlPlans)."""
    assert it.reply is not None
    sender, msg_id, query = it.reply
    it.reply = None
    value = resolve(query)
    value = Struct(value.functor, value.args, frozenset(a for a in value.annots if not _is_source(a)))
    ag.host.send(ag, sender, "tell" if answered else "untell", value, in_reply_to=msg_id)


def _on_tell_how(ag: AgentState, sender: Any, content: Any, msg_id: Any) -> None:
    """Jason's kqmlPlans: ``.add_plan(Content, Sender)`` (a plan, or a list of them)."""
    for item in content if type(content) is tuple else (content,):
        try:
            add_plans(ag, plan_program(item), sender, False)
        except PlanFailure:
            ag.refused += 1  # Jason prints the error; the plan is not added


def _on_untell_how(ag: AgentState, sender: Any, content: Any, msg_id: Any) -> None:
    """Jason's kqmlPlans: ``.remove_plan(Content, Sender)`` (a label, or a list of them)."""
    remove_plans(ag, list(content) if type(content) is tuple else [content], sender)


def _on_ask_how(ag: AgentState, sender: Any, content: Any, msg_id: Any) -> None:
    """Jason's kqmlPlans: the plans relevant to the trigger, told back."""
    try:
        ttype, value = trigger_of(content)
    except PlanFailure:
        ag.refused += 1
        return
    plans = tuple(plan_term(p) for p in relevant_plans(ag, ttype, value))
    ag.host.send(ag, sender, "tellHow", plans, in_reply_to=msg_id)


_PERFORMATIVES: dict[str, Callable[..., None]] = {
    "tell": _on_tell,
    "untell": _on_untell,
    "achieve": _on_achieve,
    "unachieve": _on_unachieve,
    "askOne": _on_ask,
    "askAll": lambda ag, sender, content, msg_id: ag._on_ask(sender, content, msg_id, every=True),
    "tellHow": _on_tell_how,
    "untellHow": _on_untell_how,
    "askHow": _on_ask_how,
}


_WAITING_ASK = atom("waiting_ask")


def _is_source(annot: Any) -> bool:
    return type(annot) is Struct and annot.functor == "source"


def _with_source(value: Any, sender: Any) -> Any:
    """``value`` from ``sender``: its sources nested in ``source(sender)`` (Jason's
    ``.add_nested_source``: bob's answer ``fact(1)[source(alice)]`` reaches its asker as
    ``fact(1)[source(bob)[source(alice)]]``)."""
    value = resolve(value)
    if type(value) is not Struct:
        return value
    inner = frozenset(a for a in value.annots if _is_source(a))
    if not inner:
        return Struct(value.functor, value.args, value.annots | {source(sender)})
    nested = Struct("source", (sender,), inner)
    return Struct(value.functor, value.args, (value.annots - inner) | {nested})

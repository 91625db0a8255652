"""Jason's actions on the multi-agent system: ``.my_name .all_names .broadcast .stopMAS
.create_agent .kill_agent``.

The MAS is the host's (:class:`~bdi_rl.bdi.runtime.host.Host`: ``agent_names``,
``broadcast``, ``stop_mas``, ``create_agent``, ``kill_agent``): in ``bdi-rl run`` the
experiment's agents (bdi_rl/xmpp/society.py), in one process alone the agent itself.
``.broadcast`` and ``.stopMAS`` act only as plan statements (Jason: false in a formula).
"""

from __future__ import annotations

from typing import Any

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.bdi.runtime.instructions import SUSPENDED, Instruction
from bdi_rl.bdi.runtime.queries import Query, QueryCompiler
from bdi_rl.bdi.runtime.stdlib_core import is_free, standard, value, wrong_argument
from bdi_rl.bdi.runtime.terms import Struct, Trail, deref, resolve, term_str
from bdi_rl.bdi.runtime.unify import Env, TermCompiler


@standard(".my_name", 1)
def _my_name(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    out = tc.term(node.args[0]).match
    return Query(lambda ag, env, trail: out(ag.name_term, env, trail))


@standard(".all_names", 1)
def _all_names(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.all_names(L)``: every agent of the MAS, this one included."""
    out = tc.term(node.args[0]).match
    return Query(lambda ag, env, trail: out(tuple(ag.host.agent_names(ag)), env, trail))


@standard(".broadcast", 2, context=False)
def _broadcast(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.broadcast(Performative, Content)``: the message to every other agent."""
    performative = tc.term(node.args[0]).build
    content = tc.term(node.args[1]).build

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        perf = deref(performative(env))
        if type(perf) is not Struct or perf.args or perf.annots:
            raise wrong_argument(".broadcast", "illocutionary force argument must be an atom")
        ag.host.broadcast(ag, perf.functor, resolve(content(env)))
        return True

    return Query(first)


@standard(".stopMAS", 0, 1, 2, context=False)
def _stop_mas(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.stopMAS[(Deadline[, ExitValue])]``: the MAS ends (its arguments are Jason's JVM's:
    a delay and an exit status, not kept here)."""

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        ag.host.stop_mas(ag)
        return True

    return Query(first)


def _name(code: Any, node: Any, env: Env) -> str:
    """An agent's name argument: a string's characters, a term's text; a free variable's own
    name with a lower-case first letter (Jason's ``create_agent``)."""
    if is_free(code, env):
        written = node.name if hasattr(node, "name") else "agent"
        return written[:1].lower() + written[1:]
    v = value(code, env)
    return v if type(v) is str else term_str(v)


@standard(".create_agent", 1, 2, 3)
def _create_agent(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.create_agent(Name[, Source[, Options]])``: a new agent of the MAS running the plan
    file ``Source`` (a string, beside this agent's file when relative); a free ``Name`` gets
    the name given (a string: ``bob``, or ``bob_1`` when taken). The options (Jason's agent
    and architecture classes) are checked, not used. A host that starts the agent in the
    background holds the intention (``Agent.hold``) until it runs: the plan goes on once the
    new agent can be spoken to, as in Jason. Only a plan statement creates an agent."""
    codes = [tc.term(a) for a in node.args]

    def create(ag: Any, env: Env, trail: Trail) -> bool:
        source = None
        if len(codes) > 1:
            source = value(codes[1], env)
            if type(source) is not str:
                raise wrong_argument(".create_agent", "second argument must be a string")
        if len(codes) == 3 and type(value(codes[2], env)) is not tuple:
            raise wrong_argument(".create_agent", "third argument must be a list")
        free = is_free(codes[0], env)
        given = ag.host.create_agent(ag, _name(codes[0], node.args[0], env), source)
        return codes[0].match(given, env, trail) if free else True

    def make(pc: int, labels: dict[int, int]) -> Instruction:
        nxt = pc + 1

        def run(ag: Any, it: Any, frame: Any) -> int:
            create(ag, frame.env, [])
            if it.id in ag.held:  # the host starts it in the background
                frame.pc = nxt
                return SUSPENDED
            return nxt

        return run

    return Query(_never, body=make)


def _never(ag: Any, env: Env, trail: Trail) -> bool:
    return False


@standard(".kill_agent", 1, 2, context=False)
def _kill_agent(compiler: QueryCompiler, node: s.Lit, tc: TermCompiler) -> Query:
    """``.kill_agent(Name[, Deadline])``: that agent stops for good (false when there is no
    such agent). The deadline (Jason's grace time) is not kept."""
    name = tc.term(node.args[0])

    def first(ag: Any, env: Env, trail: Trail) -> bool:
        v = value(name, env)
        return bool(ag.host.kill_agent(ag, v if type(v) is str else term_str(v)))

    return Query(first)

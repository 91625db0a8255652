"""bdi-rl's own AgentSpeak runtime: Jason's semantics, plans compiled to Python closures.

A host builds an :class:`~bdi_rl.bdi.runtime.agent.Agent` from source
(:func:`~bdi_rl.bdi.runtime.agent.load_agent`), registers its internal actions in an
:class:`~bdi_rl.bdi.runtime.stdlib.Actions` table, delivers messages and percepts, and runs
reasoning cycles; a :class:`~bdi_rl.bdi.runtime.listener.Listener` sees what the mind does.
docs/AGENTSPEAK.md lists every known difference from Jason.
"""

from bdi_rl.bdi.runtime.agent import Agent, load_agent
from bdi_rl.bdi.runtime.errors import AslSyntaxError, PlanFailure
from bdi_rl.bdi.runtime.host import parse_value
from bdi_rl.bdi.runtime.listener import Listener
from bdi_rl.bdi.runtime.state import Host
from bdi_rl.bdi.runtime.stdlib import Actions
from bdi_rl.bdi.runtime.terms import Struct, atom

__all__ = [
    "Agent",
    "Host",
    "load_agent",
    "AslSyntaxError",
    "PlanFailure",
    "Listener",
    "Actions",
    "Struct",
    "atom",
    "parse_value",
]

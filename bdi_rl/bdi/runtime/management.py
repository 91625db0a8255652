"""Goal, intention and plan management: Jason's internal actions that act on the agent's
desires, intentions and plan library."""

from __future__ import annotations

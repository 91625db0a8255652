"""Agents on XMPP: the SPADE agents, the telemetry agent, one role per process, the
experiment runner, the embedded server and the patches to slixmpp/SPADE. The only layer
that imports spade.
"""

from bdi_rl.xmpp.spadeimport import import_spade

import_spade()  # before any module of this layer imports SPADE: see xmpp.spadeimport

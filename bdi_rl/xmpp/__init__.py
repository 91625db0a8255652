"""Agents on XMPP: the SPADE agents, the telemetry agent, one role per process, the
experiment runner, the embedded server and the patches to slixmpp/SPADE. The only layer
that imports spade.
"""

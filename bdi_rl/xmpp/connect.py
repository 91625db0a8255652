"""Reaching an XMPP server that runs on its own (ejabberd, a container): waiting until it
accepts connections, and logging in once to find a wrong password before anything exists."""

from __future__ import annotations

import asyncio
import logging

log = logging.getLogger("bdi_rl.xmpp.connect")


async def wait_for_server(host: str, port: int, first_delay: float = 0.5, longest: float = 10.0) -> None:
    """Return once the XMPP server accepts connections, trying again with growing pauses and
    a log line for each: a container may start before its server, or while it restarts.
    Without this SPADE waits on a refused connection forever, silently."""
    delay, waited = first_delay, 0.0
    while True:
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 5)
        except (OSError, TimeoutError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "no answer"
            log.warning("waiting for the XMPP server at %s:%d (%s); trying again in %g s", host, port, reason, delay)
            await asyncio.sleep(delay)
            waited += delay
            delay = min(delay * 2, longest)
            continue
        writer.close()
        if waited:
            log.warning("the XMPP server at %s:%d answered after %.0f s", host, port, waited)
        return


async def check_login(jid: str, password: str, port: int) -> None:
    """Log in as ``jid`` once and leave (registering it if it has no account yet): spade's
    AuthenticationFailure for a wrong password, before anything of the run is created."""
    from spade.agent import Agent

    probe = Agent(jid, password, port=port, verify_security=False)
    try:
        await probe.start(auto_register=True)
    finally:
        await probe.stop()
        probe.container.unregister(str(probe.jid))

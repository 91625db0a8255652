"""Log lines stay bounded: SPADE logs a message no behaviour takes with its whole body (a
bounced ~190 KB trace batch was 17.6 MB of stderr over two outages); bdi_rl clips them."""

from __future__ import annotations

import logging

import bdi_rl.xmpp.agent  # noqa: F401 - applies bdi_rl.xmpp.patches
from bdi_rl.xmpp.patches import MAX_LOG_CHARS


def test_spade_records_are_clipped(caplog):
    text = "No behaviour matched for message: <message>KLUv/" + "A" * 200_000 + "</message>"
    with caplog.at_level(logging.WARNING, logger="spade.Agent"):
        logging.getLogger("spade.Agent").warning(text)
        logging.getLogger("spade.Agent").warning("short: %s", "kept whole")
    clipped, short = (record.getMessage() for record in caplog.records)
    assert clipped.startswith("No behaviour matched for message: <message>KLUv/AAA")
    assert len(clipped) < MAX_LOG_CHARS + 40 and clipped.endswith(f"... ({len(text)} characters)")
    assert short == "short: kept whole"

"""The compose file's `init` service: the XMPP server's configuration directory, made before
ejabberd starts (docker-compose.yml mounts it as the ejabberd image's /opt/ejabberd/conf).

It holds a self-signed certificate for the domain (kept while it is valid), the agents'
ejabberd configuration (compose/ejabberd.yml, copied: edits apply at the next `up`) and the
file that defines its macros. In-band registration is allowed from the compose network only,
whose subnet comes from .env (BDI_RL_SUBNET), so the macros are written here rather than kept
in a file. Bad input is one line on stderr and exit status 2, before anything is written.
"""

from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path

from bdi_rl.store import atomic_write_bytes
from bdi_rl.xmpp.server import ensure_certificate

CONF = Path("/xmpp-conf")  # the xmpp-conf volume, as this service mounts it
AGENTS_CONFIG = Path("/app/compose/ejabberd.yml")
#: Where the ejabberd image finds them (the volume is its /opt/ejabberd/conf).
EJABBERD_CONF = "/opt/ejabberd/conf"
#: The ejabberd image's user (ghcr.io/processone/ejabberd): it must read the key.
EJABBERD_UID = 9000
#: The agents' JID domain: the service's name, which agents connect to (xmpp:5222).
DOMAIN = "xmpp"
C2S_PORT = 5222


def macros(subnet: str) -> str:
    """ejabberd.yml: the macros compose/ejabberd.yml uses, then that file."""
    return (
        "# Written by compose/xmpp-init.py at each `docker compose up`: edit .env or compose/ejabberd.yml.\n"
        "define_macro:\n"
        f"  XMPP_DOMAIN: {DOMAIN}\n"
        f"  C2S_PORT: {C2S_PORT}\n"
        '  C2S_IP: "0.0.0.0"  # inside the container; the host publishes it on 127.0.0.1 only\n'
        f"  CERTFILE: {EJABBERD_CONF}/{DOMAIN}_cert.pem\n"
        f"  KEYFILE: {EJABBERD_CONF}/{DOMAIN}_key.pem\n"
        f"  INTERNAL_NETS: ['{subnet}', '127.0.0.0/8', '::1/128']\n"
        f"include_config_file: {EJABBERD_CONF}/agents.yml\n"
    )


def main() -> int:
    text = os.environ.get("BDI_RL_SUBNET", "")
    try:
        subnet = ipaddress.ip_network(text)
    except ValueError as exc:
        print(f"bdi-rl init: error: .env: BDI_RL_SUBNET={text!r}: not a network ({exc})", file=sys.stderr)
        return 2
    ensure_certificate(DOMAIN, CONF)
    atomic_write_bytes(CONF / "agents.yml", AGENTS_CONFIG.read_bytes())  # ejabberd may be reading it
    atomic_write_bytes(CONF / "ejabberd.yml", macros(str(subnet)).encode())
    for path in CONF.iterdir():
        os.chown(path, EJABBERD_UID, EJABBERD_UID)
        path.chmod(0o600 if path.name.endswith("_key.pem") else 0o644)
    return 0


if __name__ == "__main__":
    sys.exit(main())

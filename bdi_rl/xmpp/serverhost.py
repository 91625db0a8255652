"""What the embedded XMPP server (:mod:`bdi_rl.xmpp.server`) needs of this machine before it
starts: a free loopback port, a domain that resolves to loopback only, a self-signed
certificate."""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bdi_rl.store import atomic_write_bytes, cache_root, private_dir


class XmppServerError(RuntimeError):
    """The embedded XMPP server cannot start; the message is meant for the user."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it; another process may race us)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def loopback_hosts() -> list[str]:
    """127.0.0.1, plus ::1 when the machine has it: "localhost" may resolve to either first."""
    hosts = ["127.0.0.1"]
    if socket.has_ipv6:
        try:
            with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
                sock.bind(("::1", 0))
            hosts.append("::1")
        except OSError:
            pass
    return hosts


def check_domain(host: str) -> str:
    """Agents connect to their JID's domain, so it must resolve to this machine's loopback only."""
    domain = host.strip().lower()
    try:
        infos = socket.getaddrinfo(domain, None, type=socket.SOCK_STREAM)
    except socket.gaierror:
        raise XmppServerError(f"XMPP domain {host!r} does not resolve; use 'localhost'") from None
    addresses = {str(info[4][0]).split("%")[0] for info in infos}
    if not all(ipaddress.ip_address(a).is_loopback for a in addresses):
        raise XmppServerError(
            f"XMPP domain {host!r} resolves to {sorted(addresses)}, not loopback only; use 'localhost'"
        )
    return domain


#: A certificate is made for this long, and made anew once it is older than its reuse age.
CERTIFICATE_DAYS = 365
CERTIFICATE_REUSE_DAYS = 300


def _self_signed(domain: str) -> tuple[bytes, bytes]:
    """(certificate PEM, key PEM): a self-signed EC certificate for ``domain`` and loopback."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.now(UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, domain)])
    try:
        alt_names: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address(domain))]
    except ValueError:
        alt_names = [x509.DNSName(domain)]
    alt_names += [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.IPAddress(ipaddress.ip_address("::1"))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=CERTIFICATE_DAYS))
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_bytes = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_bytes


def ensure_certificate(domain: str, directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate and its key for ``domain`` in ``directory``, as two files (what
    ejabberd's configuration names); made anew when missing, unreadable or near its end."""
    from cryptography import x509

    cert_path, key_path = directory / f"{domain}_cert.pem", directory / f"{domain}_key.pem"
    if cert_path.is_file() and key_path.is_file():
        try:
            cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
            if cert.not_valid_after_utc > datetime.now(UTC) + timedelta(days=1):
                return cert_path, key_path
        except ValueError:
            pass  # unreadable: regenerate below
    cert_bytes, key_bytes = _self_signed(domain)
    atomic_write_bytes(key_path, key_bytes, private=True)
    atomic_write_bytes(cert_path, cert_bytes)
    return cert_path, key_path


def certificate_dir(fallback: Path) -> Path:
    """Where the embedded server keeps its certificate: ``xmpp`` in bdi-rl's cache directory
    (``store.cache_root``), made once for every run of the machine, or ``fallback`` when that
    is not a directory only this user can write (a key is read back from there)."""
    return private_dir(cache_root() / "xmpp") or fallback


def server_tls_context(domain: str, directory: Path) -> ssl.SSLContext:
    """The embedded server's TLS context, from ``directory/<domain>.pem`` (certificate and key in
    one file, so that runs starting at once never pair one's key with another's certificate).

    The file is reused while younger than :data:`CERTIFICATE_REUSE_DAYS`, without reading it
    (so a run's start imports no X.509 library); one that is older, missing or that TLS cannot
    load is made anew, atomically."""
    path = directory / f"{domain}.pem"
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        if time.time() - path.stat().st_mtime < CERTIFICATE_REUSE_DAYS * 86400:
            context.load_cert_chain(path)
            return context
    except (OSError, ssl.SSLError):
        pass  # missing or damaged: made below
    cert_bytes, key_bytes = _self_signed(domain)
    atomic_write_bytes(path, cert_bytes + key_bytes, private=True)
    context.load_cert_chain(path)
    return context

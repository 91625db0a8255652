"""What the embedded XMPP server (:mod:`bdi_rl.xmpp.server`) needs of this machine and of
pyjabber's modules before it starts: a free loopback port, a domain that resolves to loopback
only, a self-signed certificate, pyjabber imported without the directory one of its modules
leaves, and pyjabber's loguru logger quietened."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

LOG_LEVELS = {"TRACE": 5, "DEBUG": 10, "INFO": 20, "SUCCESS": 25, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}


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


def ensure_certificate(domain: str, directory: Path) -> tuple[Path, Path]:
    """A self-signed EC certificate for ``domain`` in ``directory`` (clients use verify_security=False)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    cert_path, key_path = directory / f"{domain}_cert.pem", directory / f"{domain}_key.pem"
    now = datetime.now(UTC)
    if cert_path.is_file() and key_path.is_file():
        try:
            cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
            if cert.not_valid_after_utc > now + timedelta(days=1):
                return cert_path, key_path
        except ValueError:
            pass  # unreadable: regenerate below

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
        .not_valid_after(now + timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    key_bytes = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key_bytes)
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


class QuietLogger:
    """Stands in for loguru's ``logger`` inside pyjabber modules: drops records below a level.

    Loguru has no per-module levels outside handler filters, and the handlers belong to the
    user; swapping pyjabber's module-global ``logger`` silences only pyjabber.
    """

    def __init__(self, real: Any, level: str) -> None:
        self._real = real
        self._min = LOG_LEVELS[level.upper()]

    def _emit(self, level: str, message: Any, args: tuple[Any, ...], kwargs: dict[str, Any], exc: bool = False) -> None:
        if LOG_LEVELS.get(level, 0) >= self._min:
            self._real.opt(depth=2, exception=exc or None).log(level, message, *args, **kwargs)

    def trace(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self._emit("TRACE", message, args, kwargs)

    def debug(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self._emit("DEBUG", message, args, kwargs)

    def info(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self._emit("INFO", message, args, kwargs)

    def success(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self._emit("SUCCESS", message, args, kwargs)

    def warning(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self._emit("WARNING", message, args, kwargs)

    def error(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self._emit("ERROR", message, args, kwargs)

    def critical(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self._emit("CRITICAL", message, args, kwargs)

    def exception(self, message: Any, *args: Any, **kwargs: Any) -> None:
        self._emit("ERROR", message, args, kwargs, exc=True)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def import_pyjabber() -> None:
    """Import every pyjabber module that logs, without the directory one of them leaves.

    pyjabber's HTTP upload module (``plugins/xep_0363/upload_server.py``, imported by its
    plugin manager) makes a ``pyjabber_xep0363_*`` directory in the temp dir as it is imported
    and never removes it: one per process that ran a server. We serve no uploads: it goes.
    """
    import pyjabber.server  # noqa: F401
    from pyjabber.plugins.xep_0363 import upload_server

    with contextlib.suppress(OSError):  # gone already (a server ran before in this process)
        os.rmdir(upload_server.TEMP_DIR)

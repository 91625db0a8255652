"""What the command line's error boundary (:func:`bdi_rl.cli.main`) says and returns for an
exception: bad input is one line and exit status 2, a full disk exit status 1, anything else a
crash log."""

from __future__ import annotations

import errno
import sys

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class BadInput(Exception):
    """Any user error: reported as one line, exit status 2."""


#: Exceptions that mean bad input (one line, exit status 2), by module and name: the boundary
#: imports none of them (importing SPADE, the AgentSpeak runtime and gymnasium just to name their errors
#: cost ~0.8 s on every command); a class whose module was never imported was never raised.
USER_ERRORS = (
    ("bdi_rl.spec", "SpecError"),
    ("bdi_rl.bdi.mind", "AslError"),
    ("bdi_rl.rl.envs", "EnvError"),
    ("bdi_rl.readers.inspector", "InspectError"),
    ("bdi_rl.readers.plots", "PlotError"),
    ("bdi_rl.readers.export", "ExportError"),
    ("bdi_rl.readers.dashboard", "DashboardError"),
    ("bdi_rl.rl.checkpoint", "CheckpointError"),
    ("bdi_rl.rl.exchange", "ExchangeError"),
    ("bdi_rl.xmpp.play", "PlayError"),
    ("bdi_rl.rl.policyfile", "PolicyFileError"),
    ("bdi_rl.readers.qgrid", "QGridError"),
    ("bdi_rl.readers.world", "WorldError"),
    ("bdi_rl.readers.sweepreport", "SweepReportError"),
    ("bdi_rl.store", "RunsDirError"),
    ("bdi_rl.store", "RunBusyError"),
    ("bdi_rl.trace.errors", "TraceFormatError"),
    ("bdi_rl.xmpp.server", "XmppServerError"),
    ("spade.agent", "AuthenticationFailure"),
)


def is_a(exc: BaseException, module: str, name: str) -> bool:
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(exc, getattr(loaded, name))


def is_user_error(exc: BaseException) -> bool:
    return isinstance(exc, BadInput) or any(is_a(exc, module, name) for module, name in USER_ERRORS)


def short_path(name: object, limit: int = 120) -> str:
    text = str(name)
    return text if len(text) <= limit else text[: limit // 2] + "..." + text[-limit // 2 :]


def say_user_error(exc: BaseException) -> str:
    if is_a(exc, "spade.agent", "AuthenticationFailure"):
        return (
            "the XMPP server refused the agents' login: wrong password for an existing "
            "account ($BDI_RL_XMPP_PASSWORD or --password-file), or registration is not allowed"
        )
    if is_a(exc, "bdi_rl.readers.runindex", "DamagedTrace"):  # a reader's refusal
        return f"{exc} (--skip-damaged reads around damaged lines)"
    return " ".join(str(exc).split()) or type(exc).__name__


#: A file system that takes no more: a failure of the machine, not bad input.
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})

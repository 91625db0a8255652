"""What a command that runs agents does to its process: quieter libraries, the library
patches, and signals (SIGTERM stops a role the way Ctrl-C does)."""

from __future__ import annotations

import contextlib
import logging
import signal
from collections.abc import Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")


def quiet_libraries() -> None:
    """SPADE and slixmpp chatter at INFO; users want the bar and the summary."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # A refused login also raises AuthenticationFailure, which main reports as one line.
    logging.getLogger("slixmpp.features.feature_mechanisms.mechanisms").setLevel(logging.CRITICAL)


def prepare_agent_process() -> None:
    """What the commands that run agents do to the process first (benchmarks that run agents
    without the CLI call it too): quieter libraries, then every library patch applied
    (bdi_rl/patches.py), before any plan is compiled or agent built."""
    quiet_libraries()
    patch_libraries()


def patch_libraries() -> None:
    from bdi_rl.patches import apply_all

    apply_all()


def terminate_like_interrupt() -> None:
    """SIGINT and SIGTERM raise KeyboardInterrupt: every role stops the same way, cleanly.
    SIGINT too, whatever the process inherited: a command started as a background job of a
    script inherits an ignored SIGINT (and so does every run ``bdi-rl serve`` then starts),
    and serve's Stop is a SIGINT (found when CI ran in the background: a stopped run went on
    until its SIGKILL)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)


def until_signalled(loop: asyncio.AbstractEventLoop, work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` on ``loop``; Ctrl-C or SIGTERM cancels it, so it can stop cleanly (the
    learners flush their traces and save their tables). KeyboardInterrupt if the work ended
    by being cancelled rather than by handling it."""
    import asyncio  # here: the commands that read runs never need it (~30 ms of their start)

    task = loop.create_task(work)
    stops = (signal.SIGINT, signal.SIGTERM)
    for sig in stops:
        loop.add_signal_handler(sig, task.cancel)
    try:
        return loop.run_until_complete(task)
    except asyncio.CancelledError:
        raise KeyboardInterrupt from None
    finally:
        for sig in stops:
            loop.remove_signal_handler(sig)
        terminate_like_interrupt()  # asyncio leaves SIGTERM at its default (die at once)


@contextlib.contextmanager
def stop_asked() -> Iterator[Callable[[], bool]]:
    """For work that runs no event loop (``play --policy-only``'s plain loop): SIGINT and
    SIGTERM set a flag the work reads between its steps, as :func:`until_signalled` cancels a
    task, instead of a KeyboardInterrupt raised wherever the loop is (once between numbering
    a trace event and counting it, so the next event took the same seq)."""
    asked: list[int] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, _frame: asked.append(signum))
    try:
        yield lambda: bool(asked)
    finally:
        terminate_like_interrupt()

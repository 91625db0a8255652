"""Parsed plan files kept between processes, so a plan library is parsed once, not at every
start (issue 33: a run's start spent ~0.1 s importing lark and parsing its plans).

An entry is the :class:`~bdi_rl.bdi.runtime.syntax.Program` of one plan file, keyed by the
file's name as given, its resolved path, its text and the parser's own code (so an edit to
the grammar or the parser, or another Python, misses). It is used only while every file it
included still has the text it had: the program keeps each include's text
(``Program.included``), and each is read and compared. Entries live in ``programs`` under
bdi-rl's cache directory (``store.cache_root``) when that is a directory only this user can
write: they are unpickled, so they are trusted as the user's own files, as the built grammar
is. Nothing here is needed: a cache that cannot be read or written is parsed around.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import pickle
import sys
from pathlib import Path

from bdi_rl.bdi.runtime import syntax as s
from bdi_rl.store import atomic_write_bytes, cache_root, private_dir

log = logging.getLogger("bdi_rl.bdi.runtime")

#: The modules whose code makes a program from text: a change to any of them misses.
_PARSER_SOURCES = ("parser.py", "larkparse.py", "syntax.py", "agentspeak.lark")
#: Entries kept; past this, the least recently written half goes.
MAX_ENTRIES = 256


@functools.cache
def _parser_version() -> str:
    here = Path(__file__).parent
    digest = hashlib.sha256(repr(sys.version_info[:2]).encode())
    for name in _PARSER_SOURCES:
        digest.update((here / name).read_bytes())
    return digest.hexdigest()


def _directory() -> Path | None:
    return private_dir(cache_root() / "programs")


def _entry(path: Path, text: str) -> Path | None:
    directory = _directory()
    if directory is None:
        return None
    key = hashlib.sha256(f"{_parser_version()}\0{path}\0{path.resolve()}\0{text}".encode()).hexdigest()[:32]
    return directory / f"{key}.program"


def _text_unchanged(resolved: str, text: str) -> bool:
    try:
        return Path(resolved).read_text() == text
    except (OSError, UnicodeDecodeError):
        return False


def load(path: Path, text: str) -> s.Program | None:
    """The program parsed from ``text`` at ``path`` before, if its includes are unchanged."""
    entry = _entry(path, text)
    if entry is None:
        return None
    try:
        data = entry.read_bytes()
    except OSError:
        return None
    try:
        program = pickle.loads(data)
    except Exception as exc:  # noqa: BLE001 - a damaged entry is parsed anew, whatever broke
        log.debug("ignoring the damaged program cache entry %s: %s", entry, exc)
        return None
    if not isinstance(program, s.Program):
        return None
    if not all(_text_unchanged(resolved, included) for resolved, included in program.included):
        return None
    return program


def store(path: Path, text: str, program: s.Program) -> None:
    """Keep ``program`` for the next process (best effort)."""
    entry = _entry(path, text)
    if entry is None:
        return
    try:
        atomic_write_bytes(entry, pickle.dumps(program, protocol=pickle.HIGHEST_PROTOCOL), private=True)
        _trim(entry.parent)
    except OSError as exc:
        log.debug("cannot keep the program cache entry %s: %s", entry, exc)


def _trim(directory: Path) -> None:
    entries = list(directory.glob("*.program"))
    if len(entries) <= MAX_ENTRIES:
        return
    by_age = sorted(entries, key=lambda p: p.stat().st_mtime)
    for old in by_age[: len(entries) // 2]:
        try:
            os.unlink(old)
        except FileNotFoundError:
            pass

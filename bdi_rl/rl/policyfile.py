"""The file of a learner's policy cache, ``policies/<agent>.json``: its one schema and its
bounded reader. What the sequences mean (confidence, following one) is the agent's side,
:mod:`bdi_rl.bdi.policycache`; here is only what any reader (a warm start, the checkpoint
library, an import) needs to tell a cache file from anything else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from bdi_rl.rl.checkpoint import field_error

FORMAT = 1
POLICY_DIR = "policies"
#: Largest policy cache read (10,000 goals of 200-step sequences are ~5 MB): a bigger file is
#: not one, and is not read whole.
MAX_POLICY_BYTES = 64 << 20


class PolicyFileError(ValueError):
    """A policy cache file that cannot be used (one line, naming the file)."""


class PolicyEntry(msgspec.Struct, frozen=True):
    goal: Annotated[list[Annotated[int, msgspec.Meta(ge=0)]], msgspec.Meta(min_length=2, max_length=2)]
    actions: str
    confidence: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]


class PolicyFile(msgspec.Struct, frozen=True):
    """``policies/<agent>.json``, as ``bdi.policycache.save_policies`` writes it."""

    format: Literal[1]
    env: dict[str, Any]
    """the state-space signature the sequences were made for"""
    policies: list[PolicyEntry]
    agent: str = ""


def policy_file(run_dir: Path, agent: str) -> Path:
    return run_dir / POLICY_DIR / f"{agent}.json"


def read_policy_file(path: Path) -> PolicyFile:
    """The file, checked against the schema (not yet against an env); PolicyFileError."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_POLICY_BYTES + 1)
    except OSError as exc:
        raise PolicyFileError(f"{path}: not a readable policy cache ({type(exc).__name__})") from None
    if len(data) > MAX_POLICY_BYTES:
        raise PolicyFileError(f"{path}: larger than {MAX_POLICY_BYTES >> 20} MB: not a policy cache")
    try:
        return msgspec.json.decode(data, type=PolicyFile)
    except msgspec.ValidationError as exc:
        raise PolicyFileError(f"{path}: {field_error(str(exc), 'policy cache')}") from None
    except (msgspec.DecodeError, RecursionError) as exc:
        raise PolicyFileError(f"{path}: not a readable policy cache ({type(exc).__name__})") from None

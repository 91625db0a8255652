"""A new run directory for a spec: made, locked and holding its ``spec.toml`` before any
agent starts (``bdi-rl run``, ``bdi-rl telemetry``, ``bdi-rl play --policy-only``)."""

from __future__ import annotations

from pathlib import Path

import tomli_w

from bdi_rl.crashlog import note_run_dir
from bdi_rl.spec import ExperimentSpec
from bdi_rl.store import SPEC_FILE, RunWriter, atomic_write_bytes, new_run_dir


def new_spec_run_dir(runs: Path, spec: ExperimentSpec, command: str) -> tuple[Path, RunWriter]:
    """Every check passed: a fresh run directory under ``runs`` with the spec it runs, its
    writer lock held as ``command``, named in a crash log from now on."""
    run_dir, writer = new_run_dir(runs, spec.env.id, spec.name, spec.seed, command)
    atomic_write_bytes(run_dir / SPEC_FILE, tomli_w.dumps(spec.to_dict()).encode())
    note_run_dir(run_dir)
    return run_dir, writer

"""What the play, library, exchange and control tests share: a trained run written as a run
writes one (tests/fakeruns.py), a fingerprint of a directory, and the corpus of bad and
mismatched checkpoints every entry point must refuse in one line."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bdi_rl.rl.checkpoint import save_checkpoint, table_checksum
from bdi_rl.rl.envs import make_env

#: A deterministic 4x4 FrozenLake learner that solves its map in 300 episodes (~0.4 s to write).
TRAINED_SPEC = """
name = "{name}"
episodes = {episodes}
eval_episodes = 50
seed = 5
trace = "{trace}"

[env]
id = "FrozenLake-v1"
kwargs = {{ map_name = "{map}", is_slippery = false }}

[learning]
epsilon_decay_episodes = 150

[[agents]]
name = "{agent}"
"""


def trained_run(
    runs: Path,
    name: str = "det",
    episodes: int = 300,
    map_name: str = "4x4",
    agent: str = "learner",
    trace: str = "episode",
) -> Path:
    """A finished run of one learner with its checkpoint (fakeruns: the package's writers)."""
    from tests.fakeruns import learner_run

    spec = runs.parent / f"{name}.toml"
    spec.write_text(TRAINED_SPEC.format(name=name, episodes=episodes, map=map_name, agent=agent, trace=trace))
    return learner_run(runs, spec)


def fingerprint(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (hidden ones too) by its SHA-256: what must not change."""
    if not folder.exists():
        return {}
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _rewrite(path: Path, q: np.ndarray | None = None, meta: dict | None = None, drop: tuple[str, ...] = ()) -> None:
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files if k not in drop}
    if q is not None:
        arrays["q"] = q
    if meta is not None:
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    path.write_bytes(buffer.getvalue())


def _meta(path: Path) -> dict:
    with np.load(path) as data:
        return json.loads(data["meta"].tobytes())


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0xFF
    path.write_bytes(bytes(data))


def _many_members(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for i in range(5000):
            archive.writestr(f"m{i}.npy", b"")


def _other_state_space(path: Path) -> None:
    env = make_env("FrozenLake-v1", {"map_name": "8x8"})
    save_checkpoint(
        path,
        np.zeros((64, 4)),
        {
            "agent": "learner",
            "env": env.state_space_signature(),
            "episodes": 3,
            "env_kwargs": {"map_name": "8x8", "is_slippery": False},
        },
    )


def _nan_table(path: Path) -> None:
    q = np.full((16, 4), np.nan)
    _rewrite(path, q=q, meta={**_meta(path), "checksum": table_checksum(q)})


def _pickled(path: Path) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, q=np.array([object()], dtype=object), meta=np.frombuffer(b"{}", dtype=np.uint8))
    path.write_bytes(buffer.getvalue())


#: Each bad checkpoint: how to make it from a good one in place, and what its one line says
#: (a sound table with no env, or of another state space, is refused only where it meets an
#: env: play, warm start, import).
BAD_CHECKPOINTS: dict[str, tuple[Callable[[Path], None], str]] = {
    "truncated": (lambda p: p.write_bytes(p.read_bytes()[:300]), "not a readable checkpoint"),
    "flipped byte": (_flip, "learner.npz: "),
    "not a zip": (lambda p: p.write_bytes(b"hello, not a checkpoint" * 10), "not a readable checkpoint"),
    "empty": (lambda p: p.write_bytes(b""), "not a readable checkpoint"),
    "pickled table": (_pickled, "learner.npz: "),
    "NaN table": (_nan_table, "the table holds NaN or infinite values"),
    "checksum mismatch": (lambda p: _rewrite(p, q=np.ones((16, 4))), "corrupt table (checksum mismatch)"),
    "format 99": (lambda p: _rewrite(p, meta={**_meta(p), "format": 99}), "checkpoint format 99"),
    "episodes a string": (
        lambda p: _rewrite(p, meta={**_meta(p), "episodes": "many"}),
        "metadata field episodes: expected int, got str",
    ),
    "no env": (
        lambda p: _rewrite(p, meta={k: v for k, v in _meta(p).items() if k != "env"}),
        "does not say which env it is for",
    ),
    "no meta": (lambda p: _rewrite(p, drop=("meta",)), "not a bdi-rl Q-table checkpoint"),
    "5000 members": (_many_members, "an archive of 5000 members"),
    "another state space": (
        _other_state_space,
        "made for another state space than this run's env (checkpoint vs run: table 64x4 vs 16x4 (states x actions)",
    ),
}

#: The corpus without the sound tables (no env, another state space): what every reader refuses.
DAMAGED = {name: case for name, case in BAD_CHECKPOINTS.items() if name not in ("another state space", "no env")}
